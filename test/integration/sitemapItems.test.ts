/**
 * Sitemaps as scheduled items (docs/api.md "Sitemaps as scheduled items"): registered with kind sitemap, leased with
 * kind sitemap, crawled by posting the document to POST /v1/sitemaps (the page step of an observation: the lease
 * completes, the change rate is learned from the document's hash), an index registering its children on its own
 * host, failed fetches reported as observations, a URL never both a page and a sitemap, and sitemaps counted apart
 * from pages in GET /v1/stats.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { createRecrawlClient } from '@recrawl/client'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { listenOnLoopback } from '../helpers/listen.ts'
import { html, TestSite } from '../helpers/testSite.ts'
import { Crawler, DEFAULT_CRAWLER_OPTIONS } from '../../examples/crawler/worker.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

const urlset = (locs: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs
    .map((loc) => `<url><loc>${loc}</loc></url>`)
    .join('')}</urlset>`

const sitemapIndex = (locs: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs
    .map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`)
    .join('')}</sitemapindex>`

interface LeasedItem {
  id: string
  url: string
  kind: 'page' | 'sitemap'
  contentHash: string | null
}

async function sitemapApp(ctx: Parameters<typeof testAppFor>[0]) {
  const t = await testAppFor(ctx)
  const res = await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 10_000_000 } })
  assert.equal(res.statusCode, 200, res.body)
  return t
}

function register(t: TestApp, pages: Record<string, unknown>[]) {
  return t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
}

async function lease(t: TestApp, limit = 100): Promise<{ leaseId: string; pages: LeasedItem[] }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/leases',
    payload: { worker: 'w', limit, leaseSeconds: 3600 },
  })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

function postSitemap(
  t: TestApp,
  url: string,
  body: string | Buffer,
  options: { receivedAtMs?: number; leaseId?: string; contentType?: string } = {},
) {
  const query = new URLSearchParams({ url })
  if (options.receivedAtMs !== undefined) query.set('receivedAt', iso(options.receivedAtMs))
  if (options.leaseId !== undefined) query.set('leaseId', options.leaseId)
  return t.app.inject({
    method: 'POST',
    url: `/v1/sitemaps?${query}`,
    headers: { 'content-type': options.contentType ?? 'application/xml' },
    payload: body,
  })
}

async function pageByUrl(t: TestApp, url: string) {
  const res = await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })
  return res.statusCode === 404 ? null : res.json()
}

async function leaseHeld(t: TestApp, id: string): Promise<string | null> {
  const { rows } = await t.db.pool.query<{ lease_id: string | null }>(
    'SELECT lease_id::text FROM page_schedule WHERE page_id = $1::bigint',
    [id],
  )
  return rows[0]!.lease_id
}

describe('sitemap items', () => {
  it('are registered with kind sitemap, leased with their kind, and a posted document is their crawl', async (ctx) => {
    const t = await sitemapApp(ctx)
    const sitemapUrl = 'https://s.example/sitemap.xml'
    const res = await register(t, [{ url: sitemapUrl, kind: 'sitemap', importance: 2 }, { url: 'https://s.example/a' }])
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { created: 2, updated: 0 })
    const item = await pageByUrl(t, sitemapUrl)
    assert.equal(item.kind, 'sitemap')
    assert.equal(item.host, 's.example')
    assert.equal(item.importance, 2)
    assert.equal((await pageByUrl(t, 'https://s.example/a')).kind, 'page')

    const schedule = (await t.app.inject({ method: 'GET', url: '/v1/schedule' })).json()
    assert.deepEqual(schedule.items.map((i: { url: string; kind: string }) => [i.url, i.kind]).sort(), [
      ['https://s.example/a', 'page'],
      [sitemapUrl, 'sitemap'],
    ])
    const grant = await lease(t)
    const byUrl = new Map(grant.pages.map((p) => [p.url, p]))
    assert.equal(byUrl.get(sitemapUrl)?.kind, 'sitemap')
    assert.equal(byUrl.get('https://s.example/a')?.kind, 'page')

    const doc = urlset(['https://s.example/a'])
    const posted = await postSitemap(t, sitemapUrl, gzipSync(doc), {
      receivedAtMs: T0,
      leaseId: grant.leaseId,
      contentType: 'application/gzip',
    })
    assert.equal(posted.statusCode, 200, posted.body)
    const crawl = posted.json().crawl
    assert.deepEqual(crawl, {
      id: item.id,
      outcome: 'accepted',
      changed: false,
      leaseCompleted: true,
      sitemapsRegistered: 0,
    })
    assert.equal(await leaseHeld(t, item.id), null, 'the post completed the lease on the item')
    const counters = (await t.app.inject({ method: 'GET', url: '/v1/stats' })).json().counters
    assert.equal(counters.observations.accepted, 1, 'the crawl counts in the metrics like a reported one')
    assert.notEqual(await leaseHeld(t, byUrl.get('https://s.example/a')!.id), null, 'the page keeps its lease')
    const crawled = await pageByUrl(t, sitemapUrl)
    assert.equal(crawled.crawls, 1)
    assert.equal(crawled.lastCrawledAt, iso(T0))
    assert.ok(Date.parse(crawled.dueAt) > T0, 'a crawled sitemap is due again only later')

    // The same receivedAt again: a duplicate crawl, nothing counted twice.
    const repeat = await postSitemap(t, sitemapUrl, doc, { receivedAtMs: T0 })
    assert.equal(repeat.json().crawl.outcome, 'duplicate')
    assert.equal((await pageByUrl(t, sitemapUrl)).crawls, 1)
  })

  it('learn their own change rate from the document’s content over several posts', async (ctx) => {
    const t = await sitemapApp(ctx)
    const sitemapUrl = 'https://rate.example/sitemap.xml'
    assert.equal((await register(t, [{ url: sitemapUrl, kind: 'sitemap' }])).statusCode, 200)
    // Daily fetches: the document changes on days 2 and 4 only (the same bytes otherwise, gzip or not).
    const documents = [
      urlset(['https://rate.example/1']),
      urlset(['https://rate.example/1']),
      urlset(['https://rate.example/1', 'https://rate.example/2']),
      urlset(['https://rate.example/1', 'https://rate.example/2']),
      urlset(['https://rate.example/3']),
      urlset(['https://rate.example/3']),
    ]
    const changed: boolean[] = []
    for (const [day, doc] of documents.entries()) {
      const atMs = T0 + day * MS_PER_DAY
      t.clock.setMs(atMs + MS_PER_HOUR)
      const body = day % 2 === 0 ? doc : gzipSync(doc)
      const res = await postSitemap(t, sitemapUrl, body, {
        receivedAtMs: atMs,
        contentType: day % 2 === 0 ? 'text/xml' : 'application/gzip',
      })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().crawl.outcome, 'accepted')
      changed.push(res.json().crawl.changed)
    }
    assert.deepEqual(changed, [false, false, true, false, true, false])
    const item = await pageByUrl(t, sitemapUrl)
    assert.equal(item.crawls, documents.length)
    assert.equal(item.intervals, documents.length - 1)
    assert.equal(item.changes, 2)
    assert.equal(item.lastChangedAt, iso(T0 + 4 * MS_PER_DAY))
    assert.ok(item.changesPerDay !== null && item.changesPerDay > 0, `a learned rate, not ${item.changesPerDay}`)

    // A sitemap that never changes learns a lower rate than the one that changed twice.
    const still = 'https://still.example/sitemap.xml'
    assert.equal((await register(t, [{ url: still, kind: 'sitemap' }])).statusCode, 200)
    for (let day = 0; day < documents.length; day++) {
      const res = await postSitemap(t, still, documents[0]!, { receivedAtMs: T0 + day * MS_PER_DAY })
      assert.equal(res.json().crawl.changed, false)
    }
    const unchanged = await pageByUrl(t, still)
    assert.equal(unchanged.changes, 0)
    assert.ok(unchanged.changesPerDay < item.changesPerDay, `${unchanged.changesPerDay} < ${item.changesPerDay}`)
  })

  it('an index registers the sitemaps it lists on its own host as sitemap items, and no other host’s', async (ctx) => {
    const t = await sitemapApp(ctx)
    const indexUrl = 'https://idx.example/sitemap_index.xml'
    const res = await register(t, [
      { url: indexUrl, kind: 'sitemap', importance: 3 },
      { url: 'https://idx.example/page-listed-as-sitemap.xml' },
    ])
    assert.equal(res.statusCode, 200, res.body)
    const posted = await postSitemap(
      t,
      indexUrl,
      sitemapIndex([
        'https://idx.example/s1.xml',
        'https://idx.example/s2.xml.gz',
        'https://other.example/s3.xml',
        'https://idx.example/page-listed-as-sitemap.xml',
      ]),
      { receivedAtMs: T0 },
    )
    assert.equal(posted.statusCode, 200, posted.body)
    const receipt = posted.json()
    assert.equal(receipt.kind, 'sitemapindex')
    assert.equal(receipt.crossHost, 1)
    assert.equal(receipt.crawl.sitemapsRegistered, 2)
    for (const url of ['https://idx.example/s1.xml', 'https://idx.example/s2.xml.gz']) {
      const child = await pageByUrl(t, url)
      assert.equal(child?.kind, 'sitemap', url)
      assert.equal(child.host, 'idx.example')
      assert.equal(child.importance, 3, 'a child sitemap has the index’s importance')
    }
    assert.equal(await pageByUrl(t, 'https://other.example/s3.xml'), null, 'no item on another host')
    assert.equal((await pageByUrl(t, 'https://idx.example/page-listed-as-sitemap.xml')).kind, 'page')

    // An index that is no registered item lists its sitemaps and registers nothing, as before.
    const loose = await postSitemap(t, 'https://loose.example/index.xml', sitemapIndex(['https://loose.example/x.xml']))
    assert.equal(loose.statusCode, 200, loose.body)
    assert.equal(loose.json().crawl, null)
    assert.deepEqual(
      loose.json().sitemaps.map((s: { url: string }) => s.url),
      ['https://loose.example/x.xml'],
    )
    assert.equal(await pageByUrl(t, 'https://loose.example/x.xml'), null)
  })

  it('a failed fetch of a sitemap is reported as an observation: the failure counts and the lease completes', async (ctx) => {
    const t = await sitemapApp(ctx)
    const sitemapUrl = 'https://fail.example/sitemap.xml'
    assert.equal((await register(t, [{ url: sitemapUrl, kind: 'sitemap' }])).statusCode, 200)
    const grant = await lease(t)
    const [item] = grant.pages
    assert.equal(item?.kind, 'sitemap')
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: {
        observations: [{ url: sitemapUrl, crawledAt: iso(T0), httpStatus: 503, leaseId: grant.leaseId }],
      },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().accepted, 1)
    assert.deepEqual(res.json().leaseNotCompleted, [])
    const failed = await pageByUrl(t, sitemapUrl)
    assert.equal(failed.kind, 'sitemap')
    assert.equal(failed.status, 'failing')
    assert.equal(failed.consecutiveFailures, 1)
    assert.equal(failed.lastHttpStatus, 503)
    assert.equal(await leaseHeld(t, item!.id), null)

    // The next document posted is a success again.
    t.clock.setMs(T0 + MS_PER_DAY)
    const ok = await postSitemap(t, sitemapUrl, urlset(['https://fail.example/a']), { receivedAtMs: T0 + MS_PER_DAY })
    assert.equal(ok.json().crawl.outcome, 'accepted')
    const recovered = await pageByUrl(t, sitemapUrl)
    assert.equal(recovered.status, 'active')
    assert.equal(recovered.consecutiveFailures, 0)
  })

  it('a document dated in the future is refused whole with a problem, and changes nothing', async (ctx) => {
    const t = await sitemapApp(ctx)
    const sitemapUrl = 'https://early.example/sitemap.xml'
    assert.equal((await register(t, [{ url: sitemapUrl, kind: 'sitemap' }])).statusCode, 200)
    const before = await pageByUrl(t, sitemapUrl)
    for (const url of [sitemapUrl, 'https://unregistered.example/sitemap.xml']) {
      const res = await postSitemap(t, url, urlset([new URL('/a', url).href]), {
        receivedAtMs: t.clock.nowMs() + 3_600_000,
      })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.match(res.json().detail, /receivedAt is more than 5 minutes after the service clock/)
    }
    assert.deepEqual(await pageByUrl(t, sitemapUrl), before)
    // Within the clock-skew allowance it is the item's crawl.
    const skewed = await postSitemap(t, sitemapUrl, urlset(['https://early.example/a']), {
      receivedAtMs: t.clock.nowMs() + 60_000,
    })
    assert.equal(skewed.statusCode, 200, skewed.body)
    assert.equal(skewed.json().crawl.outcome, 'accepted')
  })

  it('a URL is a page or a sitemap, never both: a batch that gives it the other kind is refused whole', async (ctx) => {
    const t = await sitemapApp(ctx)
    assert.equal(
      (
        await register(t, [
          { url: 'https://both.example/sitemap.xml', kind: 'sitemap' },
          { url: 'https://both.example/page' },
        ])
      ).statusCode,
      200,
    )
    const countRows = async () =>
      (await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pages')).rows[0]!.n
    const before = await countRows()

    // The sitemap given again as a page (kind absent means page), in a batch with a new page.
    const asPage = await register(t, [
      { url: 'https://both.example/new' },
      { url: 'https://both.example/sitemap.xml', importance: 5 },
    ])
    assert.equal(asPage.statusCode, 409, asPage.body)
    assert.match(asPage.headers['content-type'] as string, /application\/problem\+json/)
    assert.match(asPage.json().detail, /both\.example\/sitemap\.xml is registered as a sitemap/)
    // The page given as a sitemap.
    const asSitemap = await register(t, [{ url: 'https://both.example/page', kind: 'sitemap' }])
    assert.equal(asSitemap.statusCode, 409, asSitemap.body)
    assert.match(asSitemap.json().detail, /both\.example\/page is registered as a page/)

    assert.equal(await countRows(), before, 'nothing of a refused batch is written')
    assert.equal(await pageByUrl(t, 'https://both.example/new'), null)
    const item = await pageByUrl(t, 'https://both.example/sitemap.xml')
    assert.equal(item.kind, 'sitemap')
    assert.equal(item.importance, 1)
    // The same kind again is an update, as for pages.
    const update = await register(t, [{ url: 'https://both.example/sitemap.xml', kind: 'sitemap', importance: 4 }])
    assert.deepEqual(update.json(), { created: 0, updated: 1 })
    assert.equal((await pageByUrl(t, 'https://both.example/sitemap.xml')).importance, 4)
  })

  it('a page URL posted as a sitemap gives signals only, and stats count sitemaps apart from pages', async (ctx) => {
    const t = await sitemapApp(ctx)
    assert.equal(
      (
        await register(t, [
          { url: 'https://st.example/sitemap.xml', kind: 'sitemap' },
          { url: 'https://st.example/other-sitemap.xml', kind: 'sitemap' },
          { url: 'https://st.example/a' },
          { url: 'https://st.example/listing.xml' },
        ])
      ).statusCode,
      200,
    )
    const asPage = await postSitemap(t, 'https://st.example/listing.xml', urlset(['https://st.example/a']))
    assert.equal(asPage.statusCode, 200, asPage.body)
    assert.equal(asPage.json().crawl, null)
    assert.equal((await pageByUrl(t, 'https://st.example/listing.xml')).crawls, 0)

    const listed = async (query: string) =>
      (await t.app.inject({ method: 'GET', url: `/v1/pages?${query}` }))
        .json()
        .pages.map((p: { url: string }) => p.url)
        .sort()
    assert.deepEqual(await listed('kind=sitemap'), [
      'https://st.example/other-sitemap.xml',
      'https://st.example/sitemap.xml',
    ])
    assert.deepEqual(await listed('kind=page&host=st.example'), [
      'https://st.example/a',
      'https://st.example/listing.xml',
    ])
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/pages?kind=feed' })).statusCode, 400)
    const counted = await t.app.inject({
      method: 'POST',
      url: '/v1/pages/bulk',
      payload: { filter: { kind: 'sitemap' }, action: 'count' },
    })
    assert.equal(counted.statusCode, 200, counted.body)
    assert.equal(counted.json().matched, 2)

    const stats = (await t.app.inject({ method: 'GET', url: '/v1/stats' })).json()
    assert.equal(stats.pages, 2)
    assert.equal(stats.pagesByStatus.active, 2)
    assert.equal(stats.sitemaps.items, 2)
    assert.equal(stats.sitemaps.overdue + stats.pagesOverdue, 4)
  })

  it('the example crawler posts a leased sitemap’s document to /v1/sitemaps and reports its pages as observations', async (ctx) => {
    const t = await sitemapApp(ctx)
    const site = new TestSite(() => t.clock.nowMs())
    ctx.after(() => site.close())
    let served = 0
    const host = await site.addHost((req, res, h) => {
      if (req.url === '/sitemap.xml.gz') {
        served++
        res.writeHead(200, { 'content-type': 'application/gzip' })
        return void res.end(gzipSync(urlset([`${h.origin}/a`, `${h.origin}/b`])))
      }
      if (req.url === '/broken.xml') {
        res.writeHead(200, { 'content-type': 'application/xml' })
        return void res.end('<urlset><url><loc>')
      }
      if (req.url === '/missing.xml') return html(res, 404, 'gone')
      html(res, 200, `<p>${req.url}</p>`)
    })
    const baseUrl = await listenOnLoopback(t.app)
    const sitemapUrl = `${host.origin}/sitemap.xml.gz`
    const res = await register(t, [
      { url: sitemapUrl, kind: 'sitemap' },
      { url: `${host.origin}/broken.xml`, kind: 'sitemap' },
      { url: `${host.origin}/missing.xml`, kind: 'sitemap' },
      { url: `${host.origin}/a` },
    ])
    assert.equal(res.statusCode, 200, res.body)
    const logs: string[] = []
    const crawler = new Crawler({
      ...DEFAULT_CRAWLER_OPTIONS,
      api: createRecrawlClient({ baseUrl }),
      worker: 'example',
      hostDelayMs: 0,
      now: () => t.clock.nowMs(),
      log: (line) => logs.push(line),
    })
    const totals = await crawler.run({ rounds: 1, pollSeconds: 0.05 })
    assert.equal(totals.leased, 4)
    assert.equal(totals.reported, 4)
    assert.equal(served, 1)

    const item = await pageByUrl(t, sitemapUrl)
    assert.equal(item.crawls, 1, 'the posted document is the item’s crawl')
    assert.equal(item.lease, null, 'and completed its lease')
    const signals = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM signals')
    assert.equal(signals.rows[0]!.n, 0, 'entries without lastmod are no signals')
    // The malformed document was refused by the service, and reported as a fetch instead.
    const broken = await pageByUrl(t, `${host.origin}/broken.xml`)
    assert.equal(broken.crawls, 1)
    assert.equal(broken.lease, null)
    assert.ok(
      logs.some((l) => l.includes('broken.xml refused')),
      logs.join('\n'),
    )
    const missing = await pageByUrl(t, `${host.origin}/missing.xml`)
    assert.equal(missing.status, 'failing')
    assert.equal(missing.lastHttpStatus, 404)
    assert.equal((await pageByUrl(t, `${host.origin}/a`)).crawls, 1)
  })

  it('give the change-rate priors no evidence: the fleet prior is fitted to pages only', async (ctx) => {
    const t = await sitemapApp(ctx)
    const pages = ['https://prior.example/1', 'https://prior.example/2', 'https://prior.example/3']
    const sitemaps = ['https://prior.example/s1.xml', 'https://prior.example/s2.xml']
    const res = await register(t, [
      ...pages.map((url) => ({ url })),
      ...sitemaps.map((url) => ({ url, kind: 'sitemap' })),
    ])
    assert.equal(res.statusCode, 200, res.body)
    for (let day = 0; day < 3; day++) {
      const atMs = T0 + day * MS_PER_DAY
      t.clock.setMs(atMs + MS_PER_HOUR)
      const obs = await t.app.inject({
        method: 'POST',
        url: '/v1/observations',
        payload: { observations: pages.map((url) => ({ url, crawledAt: iso(atMs), contentHash: `v${day}` })) },
      })
      assert.equal(obs.json().accepted, pages.length)
      for (const url of sitemaps) {
        const posted = await postSitemap(t, url, urlset([`https://prior.example/${day}`]), { receivedAtMs: atMs })
        assert.equal(posted.json().crawl.outcome, 'accepted')
      }
    }
    for (const url of sitemaps) assert.equal((await pageByUrl(t, url)).intervals, 2, 'the sitemaps have evidence')
    const run = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
    assert.equal(run.statusCode, 200, run.body)
    const { rows } = await t.db.pool.query<{ priors: { fittedPages?: number } | null }>(
      'SELECT rate_priors AS priors FROM optimizer_state',
    )
    assert.equal(rows[0]?.priors?.fittedPages, pages.length)
  })
})
