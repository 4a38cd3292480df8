import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { createApiKey } from '../../src/domain/apiKeys.ts'
import { T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'
import { launchChromium } from '../helpers/browser.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

/**
 * The dashboard's "Change signals" panel in a real browser (Debian's chromium through playwright-core) against the
 * service on a real port. Two sources are seeded over the API and judged by the crawls that follow: `cms`, whose
 * signals are right, on NEWS_HOSTS hosts, and `sitemap` on one host whose sitemap carries its build time as every
 * lastmod. The panel must show each source's counts and trust as the API has them, the build-time flag, and a
 * source's hosts paged and filtered; it reads with the reader key typed into the header, and says where signals
 * come from while there are none.
 */
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
/** More hosts than one view page (25) of a source's hosts. */
const NEWS_HOSTS = 30
const PER_VIEW = 25
const STATIC_PAGES = 8

interface Posterior {
  mean: number
  lower: number
  evidence: number
}

interface SourceTrust {
  signalsReceived: number
  signalsPulled: number
  signalsStale: number
  signalsJudged: number
  signalsConfirmed: number
  buildTimeDocuments: number
  precision: Posterior
  recall: Posterior
  changeProbability: number
  informativeShare: number
}

interface SignalsWindow {
  recrawlDashboard?: { ready?: boolean; signalSourceLoads?: number; signalHostLoads?: number }
}

const newsHost = (i: number) => `news${String(i).padStart(2, '0')}.example`
const newsPages = Array.from({ length: NEWS_HOSTS }, (_, i) => [`https://${newsHost(i)}/`, `https://${newsHost(i)}/a`])
  .flat()
  .map((url) => ({ url }))
const staticPages = Array.from({ length: STATIC_PAGES }, (_, i) => ({ url: `https://static.example/p${i}` }))

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }) })
  assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`)
  return res.json()
}

/**
 * DAYS daily crawls of every page, on a budget of half a crawl per page a day (so a page's next crawl is a day or
 * more away). Every CHANGE_EVERY_DAYS days each news page has changed: `cms` says so an hour before the crawl,
 * rightly, and static.example's sitemap, rebuilt, stamps every entry with its build time though none of its
 * pages ever changes. Once `cms` is trusted its signals bring their pages forward. On the last day `cms` also
 * claims a change older than a page's last crawl (stale).
 */
const DAYS = 9
const CHANGE_EVERY_DAYS = 3
const ROUNDS = DAYS / CHANGE_EVERY_DAYS

async function seed(t: TestApp): Promise<void> {
  await call(t, 'PUT', '/v1/pages', { pages: [...newsPages, ...staticPages] })
  await call(t, 'PUT', '/v1/signal-sources/cms', { discover: true, discoverImportance: 0.5 })
  const patch = await t.app.inject({
    method: 'PATCH',
    url: '/v1/settings',
    payload: { budgetCrawlsPerDay: (newsPages.length + staticPages.length) / 2 },
  })
  assert.equal(patch.statusCode, 200, patch.body)
  const crawl = async (atMs: number, pages: { url: string }[], hash: string) => {
    const res = await call(t, 'POST', '/v1/observations', {
      observations: pages.map(({ url }) => ({ url, crawledAt: iso(atMs), httpStatus: 200, contentHash: hash })),
    })
    assert.deepEqual(res.rejected, [])
  }
  for (let day = 0; day <= DAYS; day++) {
    const at = T0 - (DAYS + 1 - day) * MS_PER_DAY
    const round = Math.floor(day / CHANGE_EVERY_DAYS)
    if (day > 0 && day % CHANGE_EVERY_DAYS === 0) {
      t.clock.setMs(at - MS_PER_HOUR)
      const signals = newsPages.map(({ url }) => ({ url, source: 'cms', changedAt: iso(at - 2 * MS_PER_HOUR) }))
      if (day === DAYS) signals.push({ url: newsPages[0]!.url, source: 'cms', changedAt: iso(T0 - 30 * MS_PER_DAY) })
      const receipt = await call(t, 'POST', '/v1/signals', { signals })
      assert.equal(receipt.accepted, signals.length, JSON.stringify(receipt))
      const doc = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${staticPages
        .map((p) => `<url><loc>${p.url}</loc><lastmod>${iso(at - MS_PER_HOUR)}</lastmod></url>`)
        .join('')}</urlset>`
      const sitemap = await t.app.inject({
        method: 'POST',
        url: `/v1/sitemaps?url=${encodeURIComponent('https://static.example/sitemap.xml')}`,
        headers: { 'content-type': 'application/xml' },
        payload: doc,
      })
      assert.equal(sitemap.statusCode, 200, sitemap.body)
      assert.equal(sitemap.json().lastmodIsBuildTime, true)
    }
    t.clock.setMs(at)
    await crawl(at, newsPages, `v${round}`)
    await crawl(at, staticPages, 'v0')
    await call(t, 'POST', '/v1/optimize')
  }
  t.clock.setMs(T0)
}

/** The rows of a table's body, as the cells' text. */
async function rows(page: Page, table: string): Promise<string[][]> {
  return (await page.locator(`#${table} tbody tr`).allInnerTexts()).map((r) => r.split('\t').map((c) => c.trim()))
}

/** What the panel must show for a source's (or a host's) trust, from the API's numbers: received … build time. */
function expectedTrustCells(s: SourceTrust): string[] {
  const share = (v: number) => v.toFixed(2)
  const posterior = (p: Posterior) => `${share(p.mean)} (${share(p.lower)}) · ${p.evidence.toLocaleString('en')}`
  return [
    String(s.signalsReceived),
    String(s.signalsPulled),
    String(s.signalsStale),
    String(s.signalsJudged),
    String(s.signalsConfirmed),
    posterior(s.precision),
    posterior(s.recall),
    s.changeProbability > 0 ? share(s.informativeShare) : 'untrusted',
    s.buildTimeDocuments > 0 ? `${s.buildTimeDocuments} lastmod = build time` : String(s.buildTimeDocuments),
  ]
}

/** Runs `action` and waits until the dashboard has counted one more load of `counter`. */
async function after(page: Page, counter: 'signalSourceLoads' | 'signalHostLoads', action: () => Promise<void>) {
  const before = (await page.evaluate(
    (c) => (globalThis as SignalsWindow).recrawlDashboard?.[c] ?? 0,
    counter,
  )) as number
  await action()
  await page.waitForFunction(
    ([c, n]) => ((globalThis as SignalsWindow).recrawlDashboard?.[c as typeof counter] ?? 0) > (n as number),
    [counter, before] as const,
    { timeout: 10_000 },
  )
}

async function open(browser: Browser, baseUrl: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(String(err)))
  await page.goto(`${baseUrl}/`)
  await page.waitForFunction(() => (globalThis as SignalsWindow).recrawlDashboard?.ready === true, null, {
    timeout: 15_000,
  })
  return { page, errors }
}

describe('change signals panel in chromium', () => {
  it('says where signals come from while none has been received', async (ctx) => {
    const browser = await launchChromium(ctx, 'the signals panel')
    if (!browser) return
    const t = await startTestApp({ statsCacheMs: 0 })
    try {
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      const { page, errors } = await open(browser, `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`)
      assert.equal(await page.locator('#signal-view h2').innerText(), 'Change signals')
      assert.equal(await page.locator('#signal-sources-table tbody tr').count(), 0)
      const note = await page.locator('#signal-sources-note').innerText()
      assert.match(note, /^No change signals have been received yet/)
      assert.match(note, /docs\/api\.md#signals/)
      assert.equal(await page.isHidden('#signal-hosts'), true, 'no source, no host list')
      assert.deepEqual(errors, [])
    } finally {
      await browser.close()
      await t.close()
    }
  })

  it('shows each source’s counts and trust, flags the build-time sitemap, and drills into a source’s hosts', async (ctx) => {
    const browser = await launchChromium(ctx, 'the signals panel')
    if (!browser) return
    const t = await startTestApp({ statsCacheMs: 0 })
    try {
      await seed(t)
      const api = (await call(t, 'GET', '/v1/signal-sources')).sources as (SourceTrust & {
        source: string
        hosts: number
      })[]
      // The seed did what it says: these are the facts the panel is checked against.
      const cms = api.find((s) => s.source === 'cms')!
      const sitemap = api.find((s) => s.source === 'sitemap')!
      assert.equal(cms.signalsReceived, ROUNDS * newsPages.length + 1)
      assert.equal(cms.signalsStale, 1)
      assert.ok(cms.signalsPulled > 0, 'once trusted, its signals pull pages forward')
      assert.ok(cms.changeProbability > 0.9, JSON.stringify(cms))
      assert.equal(sitemap.buildTimeDocuments, ROUNDS)
      assert.equal(sitemap.signalsConfirmed, 0)
      assert.equal(sitemap.changeProbability, 0)

      const staticHost = (await call(t, 'GET', '/v1/signal-sources/sitemap/hosts')).hosts[0] as SourceTrust
      const news00 = (await call(t, 'GET', `/v1/signal-sources/cms/hosts?host=${newsHost(0)}`)).hosts[0] as SourceTrust

      // The first key ends open loopback access: the dashboard needs the reader key from now on.
      const reader = await createApiKey(t.db, { name: 'dashboard', role: 'reader' })
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      const { page, errors } = await open(browser, `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`)
      assert.match(await page.locator('#signal-sources-note').innerText(), /^401/)
      assert.equal(await page.locator('#signal-sources-table tbody tr').count(), 0)
      await page.fill('#api-key', reader.key)
      await after(page, 'signalSourceLoads', () => page.click('#key-form button[type="submit"]'))

      const sources = await rows(page, 'signal-sources-table')
      assert.deepEqual(
        sources.map((r) => r[0]),
        ['cms', 'sitemap'],
      )
      const [cmsRow, sitemapRow] = sources as [string[], string[]]
      assert.deepEqual(cmsRow, ['cms', String(NEWS_HOSTS), ...expectedTrustCells(cms), 'yes (importance 0.5)'])
      assert.deepEqual(sitemapRow, ['sitemap', '1', ...expectedTrustCells(sitemap), 'no'])
      // Read back as numbers: the right source is trusted, the build-time one is not.
      const precisionMean = (row: string[]) => Number(/^([\d.]+) /.exec(row[7]!)![1])
      assert.ok(precisionMean(cmsRow) > 0.9 && precisionMean(sitemapRow) < 0.1, `${cmsRow[7]} / ${sitemapRow[7]}`)
      assert.equal(sitemapRow[9], 'untrusted')
      assert.match(sitemapRow[10]!, /^3 lastmod = build time$/)
      assert.doesNotMatch(cmsRow[10]!, /build time/)
      assert.equal(await page.locator('#signal-sources-note').innerText(), '', 'no empty-state sentence')
      assert.equal(await page.isHidden('#signal-hosts'), true)

      // The build-time source's one host, flagged.
      await after(page, 'signalHostLoads', () => page.click('#signal-sources-table tr[data-source="sitemap"] button'))
      assert.equal(await page.locator('#signal-hosts-title').innerText(), 'Hosts of sitemap')
      assert.equal(
        await page.getAttribute('#signal-sources-table tr[data-source="sitemap"] button', 'aria-pressed'),
        'true',
      )
      assert.deepEqual(await rows(page, 'signal-hosts-table'), [['static.example', ...expectedTrustCells(staticHost)]])
      assert.equal(await page.locator('#signal-hosts-table tr[data-build-time="true"]').count(), 1)

      // The accurate source's hosts: one view page at a time, then filtered by a prefix.
      await after(page, 'signalHostLoads', () =>
        page.click('#signal-sources-table tr[data-source="cms"] td:nth-child(2)'),
      )
      assert.equal(await page.locator('#signal-hosts-title').innerText(), 'Hosts of cms')
      assert.equal(
        await page.getAttribute('#signal-sources-table tr[data-source="sitemap"] button', 'aria-pressed'),
        'false',
      )
      let hosts = await rows(page, 'signal-hosts-table')
      assert.deepEqual(
        hosts.map((r) => r[0]),
        Array.from({ length: PER_VIEW }, (_, i) => newsHost(i)),
      )
      assert.equal(await page.locator('#signal-hosts-range').innerText(), `hosts 1–${PER_VIEW}`)
      assert.equal(await page.locator('#signal-hosts-table tr[data-build-time]').count(), 0)
      assert.deepEqual(hosts[0], [newsHost(0), ...expectedTrustCells(news00)])
      assert.equal(hosts[0]![3], '1', 'the stale signal is news00’s')
      assert.equal(await page.isDisabled('#signal-hosts-prev'), true)

      await after(page, 'signalHostLoads', () => page.click('#signal-hosts-next'))
      hosts = await rows(page, 'signal-hosts-table')
      assert.deepEqual(
        hosts.map((r) => r[0]),
        Array.from({ length: NEWS_HOSTS - PER_VIEW }, (_, i) => newsHost(PER_VIEW + i)),
      )
      assert.equal(await page.isDisabled('#signal-hosts-next'), true)
      assert.equal(await page.locator('#signal-hosts-range').innerText(), `hosts 26–${NEWS_HOSTS} (the last)`)
      await after(page, 'signalHostLoads', () => page.click('#signal-hosts-prev'))
      assert.equal((await rows(page, 'signal-hosts-table'))[0]![0], newsHost(0))

      await page.fill('#signal-host-prefix', 'news1')
      await after(page, 'signalHostLoads', () => page.click('#signal-hosts-form button[type="submit"]'))
      assert.deepEqual(
        (await rows(page, 'signal-hosts-table')).map((r) => r[0]),
        Array.from({ length: 10 }, (_, i) => newsHost(10 + i)),
      )
      await page.fill('#signal-host-prefix', 'nowhere')
      await after(page, 'signalHostLoads', () => page.click('#signal-hosts-form button[type="submit"]'))
      assert.equal(await page.locator('#signal-hosts-table tbody tr').count(), 0)
      assert.equal(await page.locator('#signal-hosts-range').innerText(), 'no host matches')

      // Every heading of both tables is a column heading; the panel fits its width.
      const headings = (await page.evaluate(`Array.from(document.querySelectorAll('#signal-view th'))
        .map((th) => th.getAttribute('scope'))`)) as (string | null)[]
      assert.ok(headings.length >= 20 && headings.every((s) => s === 'col'))
      assert.deepEqual(
        await page.evaluate(
          `(() => { const p = document.getElementById('signal-view'); return p.scrollWidth <= p.clientWidth + 1 })()`,
        ),
        true,
      )

      await page.fill('#signal-host-prefix', '')
      await after(page, 'signalHostLoads', () => page.click('#signal-hosts-form button[type="submit"]'))
      await mkdir(ARTIFACTS, { recursive: true })
      await page.locator('#signal-view').screenshot({ path: new URL('signals.png', ARTIFACTS).pathname })
      assert.deepEqual(errors, [])
      await page.close()
    } finally {
      await browser.close()
      await t.close()
    }
  })
})
