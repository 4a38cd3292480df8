/**
 * Canonical URLs through HTTP (docs/api.md "Conventions"): every place a URL or a host enters uses the
 * canonical form of the URL rules in force, a page is found under any of its spellings, and a change of
 * the rules renames stored pages and host limits, or is refused when it would merge two of them.
 * Each test starts its own service on an empty database with the default settings.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type pg from 'pg'
import { ConflictError } from '../../src/core/errors.ts'
import { ingestObservations } from '../../src/domain/ingest.ts'
import { putPages } from '../../src/domain/pages.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { getSettings, patchSettings } from '../../src/domain/settingsService.ts'
import { DEFAULT_URL_RULES } from '../../src/core/url.ts'
import { createRandom } from '../../src/math/random.ts'
import { migrate } from '../../src/store/migrate.ts'
import { T0, iso, openDatabaseBefore, testAppFor, type TestApp } from '../helpers/testApp.ts'

type Page = { id: string; url: string; host: string; crawls: number }

const api = (t: TestApp) => ({
  putPages: (pages: unknown[]) => t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } }),
  report: (observations: unknown[]) =>
    t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } }),
  byUrl: (url: string) => t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` }),
  list: (query = '') => t.app.inject({ method: 'GET', url: `/v1/pages${query}` }),
  lease: (body: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', ...body } }),
  patchUrls: (urls: Record<string, unknown>) =>
    t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { urls } }),
  putHost: (host: string, limits: Record<string, unknown>) =>
    t.app.inject({ method: 'PUT', url: `/v1/hosts/${encodeURIComponent(host)}`, payload: limits }),
  hosts: async () =>
    (await t.app.inject({ method: 'GET', url: '/v1/hosts' })).json().hosts as {
      host: string
      minDelaySeconds: number | null
      pages: number
    }[],
  pageCount: async () => (await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pages')).rows[0]!.n,
})

const SPELLINGS = [
  'https://example.com/~user/page?a=1&b=2',
  'https://example.com/~user/page?b=2&a=1',
  'https://example.com/~user/page?a=1&utm_source=news&b=2&utm_medium=mail',
  'https://example.com/%7Euser/page?a=1&b=2',
  'https://example.com./~user/page?a=1&b=2',
  'HTTPS://EXAMPLE.COM:443/%7euser/page?b=2&a=1&gclid=xyz&fbclid=1#reviews',
]
const CANONICAL = 'https://example.com/~user/page?a=1&b=2'

describe('canonical URLs over HTTP', () => {
  it('PUT /v1/pages registers the canonical URL, and GET /v1/pages/by-url finds it under every spelling', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const res = await a.putPages([{ url: SPELLINGS[5]! }])
    assert.deepEqual(res.json(), { created: 1, updated: 0 })
    for (const spelling of SPELLINGS) {
      const page = await a.byUrl(spelling)
      assert.equal(page.statusCode, 200, spelling)
      assert.equal(page.json().url, CANONICAL)
      assert.equal(page.json().host, 'example.com')
    }
    // Another spelling in a later batch updates the same page.
    assert.deepEqual((await a.putPages([{ url: SPELLINGS[2]!, importance: 3 }])).json(), { created: 0, updated: 1 })
    assert.equal((await a.byUrl(CANONICAL)).json().importance, 3)
    assert.equal(await a.pageCount(), 1)
    // Spellings that the default rules keep apart stay apart.
    assert.equal((await a.byUrl('https://example.com/~User/page?a=1&b=2')).statusCode, 404)
    assert.equal((await a.byUrl('https://www.example.com/~user/page?a=1&b=2')).statusCode, 404)
  })

  it('two spellings of one page in one PUT batch are refused, naming the canonical URL', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const res = await a.putPages([{ url: SPELLINGS[0]! }, { url: SPELLINGS[1]! }])
    assert.equal(res.statusCode, 400)
    assert.deepEqual(res.json().errors, [
      { path: '/body/pages/1/url', message: `same page as /body/pages/0/url (${CANONICAL})` },
    ])
    assert.equal(await a.pageCount(), 0)
  })

  it('POST /v1/observations files every spelling under one page and registers unknown pages canonically', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const res = await a.report(
      SPELLINGS.map((url, i) => ({
        url,
        crawledAt: iso(T0 - (SPELLINGS.length - i) * 3_600_000),
        contentHash: `h${i % 2}`,
      })),
    )
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().accepted, SPELLINGS.length)
    const page = (await a.byUrl(SPELLINGS[4]!)).json() as Page
    assert.deepEqual([page.url, page.host, page.crawls], [CANONICAL, 'example.com', SPELLINGS.length])
    assert.equal(await a.pageCount(), 1)
  })

  it('host filters of page lists and leases, and host limits, take any spelling of a host', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    await a.putPages([
      { url: 'https://Shop.Example./a' },
      { url: 'https://shop.example/b' },
      { url: 'https://other.example/c' },
    ])
    const listed = (await a.list('?host=SHOP.example.')).json().pages as Page[]
    assert.deepEqual(listed.map((p) => p.url).sort(), ['https://shop.example/a', 'https://shop.example/b'])
    assert.ok(listed.every((p) => p.host === 'shop.example'))

    const grant = (await a.lease({ limit: 10, hosts: ['shop.EXAMPLE.', 'shop.example'] })).json()
    assert.deepEqual(
      grant.pages.map((p: Page) => p.host),
      ['shop.example', 'shop.example'],
    )
    const bad = await a.lease({ limit: 10, hosts: ['shop.example', 'not a/host'] })
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.json().errors[0].path, '/body/hosts/1')

    const put = await a.putHost('Shop.Example.', { minDelaySeconds: 30 })
    assert.equal(put.statusCode, 200, put.body)
    assert.deepEqual(await a.hosts(), [
      {
        host: 'shop.example',
        maxCrawlsPerDay: null,
        minDelaySeconds: 30,
        crawlDelaySeconds: null,
        throttleDelaySeconds: null,
        paceSeconds: 30,
        pages: 2,
      },
    ])
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/hosts/SHOP.example.' })).statusCode, 204)
    assert.deepEqual(await a.hosts(), [])
  })

  it('the rules are settings: shown with their defaults, validated, merged key by key', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const settings = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    assert.deepEqual(settings.urls, DEFAULT_URL_RULES)
    const bad = await a.patchUrls({ dropQueryParameters: ['utm_*', 'a=b'] })
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.json().errors[0].path, '/body/urls/dropQueryParameters/1')
    const unknown = await a.patchUrls({ dropWWW: true })
    assert.equal(unknown.statusCode, 400)
    const ok = await a.patchUrls({ dropQueryParameters: ['utm_*', 'ref'], dropTrailingSlash: true })
    assert.equal(ok.statusCode, 200, ok.body)
    assert.deepEqual(ok.json().urls, {
      ...DEFAULT_URL_RULES,
      dropQueryParameters: ['utm_*', 'ref'],
      dropTrailingSlash: true,
    })
    // The new rules apply to every new write and lookup.
    await a.putPages([{ url: 'https://e.example/a/?ref=x&utm_id=1' }])
    assert.equal((await a.byUrl('https://e.example/a')).json().url, 'https://e.example/a')
    const noSort = await a.patchUrls({ sortQueryParameters: false })
    assert.equal(noSort.json().urls.dropTrailingSlash, true)
  })
})

describe('changing the URL rules', () => {
  it('renames stored pages and host limits to their new canonical names, keeping ids, history and politeness', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    await a.putPages([
      { url: 'https://www.site.example/a/' },
      { url: 'https://www.site.example/b' },
      { url: 'https://keep.example/c/' },
    ])
    await a.putPages([{ url: 'https://plain.example/1' }, { url: 'https://plain.example/2' }])
    await a.report([{ url: 'https://www.site.example/a/', crawledAt: iso(T0), contentHash: 'x' }])
    assert.equal((await a.putHost('www.site.example', { minDelaySeconds: 60 })).statusCode, 200)
    assert.equal((await a.putHost('www.plain.example', { maxCrawlsPerDay: 10, minDelaySeconds: 60 })).statusCode, 200)
    const before = (await a.byUrl('https://www.site.example/a/')).json() as Page

    const res = await a.patchUrls({ dropWww: true, dropTrailingSlash: true })
    assert.equal(res.statusCode, 200, res.body)
    const after = (await a.byUrl('https://www.site.example/a/')).json() as Page
    assert.deepEqual(
      [after.id, after.url, after.host, after.crawls],
      [before.id, 'https://site.example/a', 'site.example', 1],
    )
    assert.equal((await a.byUrl('https://keep.example/c/')).json().url, 'https://keep.example/c')
    const history = await t.app.inject({ method: 'GET', url: `/v1/pages/${after.id}/observations` })
    assert.equal(history.json().observations.length, 1)
    assert.deepEqual(await a.hosts(), [
      {
        host: 'plain.example',
        maxCrawlsPerDay: 10,
        minDelaySeconds: 60,
        crawlDelaySeconds: null,
        throttleDelaySeconds: null,
        paceSeconds: 60,
        pages: 2,
      },
      {
        host: 'site.example',
        maxCrawlsPerDay: null,
        minDelaySeconds: 60,
        crawlDelaySeconds: null,
        throttleDelaySeconds: null,
        paceSeconds: 60,
        pages: 2,
      },
    ])

    // Both hosts are polite now: the renamed pages, and the pages already there that the renamed limits now cover.
    const grant = (await a.lease({ limit: 10 })).json()
    const count = (pages: Page[], host: string) => pages.filter((p) => p.host === host).length
    assert.deepEqual([count(grant.pages, 'site.example'), count(grant.pages, 'plain.example')], [1, 1])
    const next = (await a.lease({ limit: 10 })).json()
    assert.deepEqual([count(next.pages, 'site.example'), count(next.pages, 'plain.example')], [0, 0])
  })

  it('a crawler that reports the URL it was leased before the change completes the lease on the same page', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    await a.putPages([{ url: 'https://news.example/story?id=7&ref=home' }])
    const grant = (await a.lease({ limit: 1 })).json()
    assert.equal(grant.pages[0].url, 'https://news.example/story?id=7&ref=home')
    assert.equal(
      (await a.patchUrls({ dropQueryParameters: [...DEFAULT_URL_RULES.dropQueryParameters, 'ref'] })).statusCode,
      200,
    )
    const res = await a.report([
      { url: grant.pages[0].url, crawledAt: iso(T0), contentHash: 'x', leaseId: grant.leaseId },
    ])
    assert.equal(res.json().accepted, 1)
    assert.deepEqual(res.json().leaseNotCompleted, [])
    const page = (await a.byUrl('https://news.example/story?id=7')).json()
    assert.deepEqual([page.id, page.crawls, page.lease], [grant.pages[0].id, 1, null])
  })

  it('is refused when it would merge two stored pages, and then changes nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    await a.putPages([
      { url: 'https://m.example/p?ref=1' },
      { url: 'https://m.example/p' },
      { url: 'https://m.example/q?ref=2' },
    ])
    const res = await a.patchUrls({ dropQueryParameters: ['ref'], lowercasePath: true })
    assert.equal(res.statusCode, 422, res.body)
    assert.match(res.json().detail, /would be https:\/\/m\.example\/p, the URL of page/)
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/settings' })).json().urls, DEFAULT_URL_RULES)
    const urls = ((await a.list()).json().pages as Page[]).map((p) => p.url).sort()
    assert.deepEqual(urls, ['https://m.example/p', 'https://m.example/p?ref=1', 'https://m.example/q?ref=2'])
  })

  it('is refused when it would merge two host limits', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    await a.putHost('www.h.example', { minDelaySeconds: 5 })
    await a.putHost('h.example', { minDelaySeconds: 10 })
    const res = await a.patchUrls({ dropWww: true })
    assert.equal(res.statusCode, 422, res.body)
    assert.match(res.json().detail, /hosts www\.h\.example and h\.example/)
    assert.deepEqual(
      (await a.hosts()).map((h) => h.host),
      ['h.example', 'www.h.example'],
    )
  })

  it('a batch canonicalised under rules that changed before its transaction is refused whole (409)', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.patchUrls({ sortQueryParameters: false })).statusCode, 200)
    // A pool whose plain reads see the settings as they were before the change; transactions see them as they are.
    const stale = new Proxy(t.db.pool, {
      get(target, key, receiver) {
        if (key === 'query') return async () => ({ rows: [{ value: {} }] })
        const value = Reflect.get(target, key, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      },
    }) as pg.Pool
    const deps = { pool: stale, clock: t.clock, random: createRandom(1) }
    await assert.rejects(
      ingestObservations(deps, [{ url: 'https://r.example/?b=1&a=2', crawledAt: iso(T0) }]),
      ConflictError,
    )
    await assert.rejects(putPages(deps, [{ url: 'https://r.example/?b=1&a=2' }]), ConflictError)
    assert.equal(await a.pageCount(), 0)
  })
})

describe('migration 0011: stored names keep the rules they were made under', () => {
  it('a database with pages or host limits keeps every rule off until they are switched on; one without takes the defaults', async () => {
    const older = await openDatabaseBefore('0011')
    const { db } = older
    try {
      await migrate(db.pool)
      assert.deepEqual((await getSettings(db)).urls, DEFAULT_URL_RULES, 'no pages: the defaults')

      // The same upgrade over a database that holds a page.
      await db.pool.query("DELETE FROM schema_migrations WHERE version = '0011'")
      await db.pool.query(
        `WITH page AS (INSERT INTO pages (url, host) VALUES ('https://example.com./a?b=1&a=2', 'example.com.') RETURNING id, host)
         INSERT INTO page_schedule (page_id, host, change_epoch) SELECT id, host, 0 FROM page`,
      )
      await migrate(db.pool)
      const { urls } = await getSettings(db)
      assert.ok(
        Object.entries(urls).every(([k, v]) =>
          k === 'dropQueryParameters' ? Array.isArray(v) && v.length === 0 : v === false,
        ),
        JSON.stringify(urls),
      )
      // Switched on, the rules rename the stored page.
      const changed = await patchSettings(
        { pool: db.pool, clock: manualClock(T0), random: createRandom(1) },
        { urls: DEFAULT_URL_RULES },
      )
      assert.deepEqual([changed.pagesRenamed, changed.hostsRenamed], [1, 0])
      const { rows } = await db.pool.query('SELECT url, host FROM pages')
      assert.deepEqual(rows, [{ url: 'https://example.com/a?a=2&b=1', host: 'example.com' }])
    } finally {
      await older.close()
    }
  })
})
