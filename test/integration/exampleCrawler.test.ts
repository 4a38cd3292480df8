import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRecrawlClient, ok } from '@recrawl/client'
import { createApiKey } from '../../src/domain/apiKeys.ts'
import { simulatedClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { Crawler, DEFAULT_CRAWLER_OPTIONS } from '../../examples/crawler/worker.ts'
import { startTestApp } from '../helpers/testApp.ts'
import { listenOnLoopback } from '../helpers/listen.ts'
import { html, httpDate, TestSite, type SiteRequest } from '../helpers/testSite.ts'

const REPO_DIR = fileURLToPath(new URL('../..', import.meta.url))
const HOUR_MS = 3_600_000
const MINUTE_MS = 60_000
const START_MS = Date.UTC(2026, 0, 5)

/** Change times of a page with Poisson changes at `changesPerDay`, over [START_MS, START_MS + days]. */
function poissonChanges(seed: number, changesPerDay: number, days: number): number[] {
  const random = createRandom(seed)
  const times: number[] = []
  for (
    let t = START_MS + random.exponential(changesPerDay) * MS_PER_DAY;
    t <= START_MS + days * MS_PER_DAY;
    t += random.exponential(changesPerDay) * MS_PER_DAY
  ) {
    times.push(Math.round(t))
  }
  return times
}

/** How many changes happened by `atMs`: the page's version. */
function versionAt(changes: readonly number[], atMs: number): number {
  let n = 0
  while (n < changes.length && changes[n]! <= atMs) n++
  return n
}

/**
 * Fraction of [fromMs, toMs] during which a copy fetched at the latest of `crawlsMs` before each instant was
 * up to date: after a fetch, until the page's next change.
 */
function freshness(changes: readonly number[], crawlsMs: readonly number[], fromMs: number, toMs: number): number {
  const crawls = [...crawlsMs].sort((a, b) => a - b)
  let fresh = 0
  for (let i = 0; i < crawls.length; i++) {
    const start = Math.max(crawls[i]!, fromMs)
    const end = Math.min(crawls[i + 1] ?? toMs, toMs)
    if (end <= start) continue
    const nextChange = changes.find((c) => c > crawls[i]!) ?? Number.POSITIVE_INFINITY
    fresh += Math.max(0, Math.min(end, nextChange) - start)
  }
  return fresh / (toMs - fromMs)
}

interface TrackedPage {
  url: string
  importance: number
  changes: number[]
}

/** Importance-weighted freshness of the pages crawled at the given times. */
function weightedFreshness(
  pages: readonly TrackedPage[],
  crawlsOf: (p: TrackedPage) => number[],
  fromMs: number,
  toMs: number,
): number {
  const total = pages.reduce((s, p) => s + p.importance, 0)
  return pages.reduce((s, p) => s + p.importance * freshness(p.changes, crawlsOf(p), fromMs, toMs), 0) / total
}

/** The same number of crawls spread evenly over the pages and the window, averaged over phases. */
function uniformFreshness(pages: readonly TrackedPage[], crawls: number, fromMs: number, toMs: number): number {
  const intervalMs = ((toMs - fromMs) * pages.length) / crawls
  const phases = 24
  let sum = 0
  for (let k = 0; k < phases; k++) {
    sum += weightedFreshness(
      pages,
      (p) => {
        const offset = ((pages.indexOf(p) / pages.length + k / phases) % 1) * intervalMs
        const times: number[] = []
        for (let t = fromMs + offset - intervalMs; t < toMs; t += intervalMs) times.push(t)
        return times
      },
      fromMs,
      toMs,
    )
  }
  return sum / phases
}

const okFetches = (requests: SiteRequest[]) => requests.filter((r) => r.status === 200 || r.status === 304)

describe('the example crawler (examples/crawler)', () => {
  it('teaches the service a changing site: dead pages, a redirect, a throttling host, a noisy page, and crawls where the changes are', async () => {
    const HORIZON_DAYS = 5
    const WARMUP_DAYS = 2
    const END_MS = START_MS + HORIZON_DAYS * MS_PER_DAY
    const sim = { nowMs: START_MS }
    const site = new TestSite(() => sim.nowMs)
    const t = await startTestApp({ clock: simulatedClock(0) })
    try {
      const api = createRecrawlClient({ baseUrl: await listenOnLoopback(t.app) })

      // Host A: pages with known change times (ETag or Last-Modified, so conditional requests get 304s), random
      // tokens outside the main content on every page (the crawler's hashing must ignore them), a page that dies,
      // a page that moved, and a page whose main content carries a random token (noise).
      const tracked = new Map<string, TrackedPage>()
      const hostA = await site.addHost((req, res, host) => {
        const path = req.url ?? '/'
        const now = sim.nowMs
        const chrome = (main: string) =>
          `<!doctype html><html><head><title>${path}</title><script>var session = "${randomUUID()}"</script><style>p{color:red}</style></head>` +
          `<body><nav>menu · visitor ${randomUUID()}</nav><main>${main}</main><footer>served at ${new Date(now).toISOString()}</footer></body></html>`
        const page = tracked.get(host.origin + path)
        if (page) {
          const version = versionAt(page.changes, now)
          if (path.startsWith('/fast/')) {
            const etag = `"${path}-v${version}"`
            if (req.headers['if-none-match'] === etag) return void notModified(res)
            return html(res, 200, chrome(`<h1>${path}</h1><p>  version\n ${version}</p>`), { etag })
          }
          const lastChangeMs = version === 0 ? START_MS : page.changes[version - 1]!
          const since = Date.parse(String(req.headers['if-modified-since'] ?? ''))
          if (Math.floor(lastChangeMs / 1000) <= Math.floor(since / 1000)) return void notModified(res)
          return html(res, 200, chrome(`<h1>${path}</h1><p>version ${version} &amp; more</p>`), {
            'last-modified': new Date(lastChangeMs).toUTCString(),
          })
        }
        if (path === '/dying') {
          const day = (now - START_MS) / MS_PER_DAY
          // A news item updated every 4 hours, then taken down: 404 for a day, then 410.
          if (day < 0.5) return html(res, 200, chrome(`update ${Math.floor(day * 6)}`))
          return html(res, day < 1.5 ? 404 : 410, chrome('not here'))
        }
        if (path === '/moved') return html(res, 301, chrome('moved'), { location: '/new-home' })
        if (path === '/new-home') return html(res, 200, chrome('the new home'))
        if (path === '/noisy') return html(res, 200, chrome(`<p>today's token: ${randomUUID()}</p>`))
        return html(res, 404, chrome('no such page'))
      })
      // Host B: answers 429 with Retry-After to a request less than 2 hours after its last normal answer.
      let hostBLastOkMs: number | null = null
      const RETRY_AFTER_SECONDS = 3600
      const hostB = await site.addHost((req, res, host) => {
        const path = req.url ?? '/'
        const now = sim.nowMs
        if (hostBLastOkMs !== null && now - hostBLastOkMs < 2 * HOUR_MS) {
          return html(res, 429, 'slow down', { 'retry-after': String(RETRY_AFTER_SECONDS) })
        }
        hostBLastOkMs = now
        const page = tracked.get(host.origin + path)
        if (!page) return html(res, 404, 'no such page')
        const etag = `"b${versionAt(page.changes, now)}"`
        if (req.headers['if-none-match'] === etag) return void notModified(res)
        return html(
          res,
          200,
          `<html><body><main>${path} version ${versionAt(page.changes, now)}</main></body></html>`,
          { etag },
        )
      })

      const fast = [0, 1, 2].map((i) => ({
        url: `${hostA.origin}/fast/${i}`,
        importance: 2,
        changes: poissonChanges(100 + i, 6, HORIZON_DAYS),
      }))
      const slow = [0, 1, 2].map((i) => ({
        url: `${hostA.origin}/slow/${i}`,
        importance: 1,
        changes: poissonChanges(200 + i, 0.1, HORIZON_DAYS),
      }))
      const throttled = [0, 1, 2].map((i) => ({
        url: `${hostB.origin}/b/${i}`,
        importance: 1,
        changes: poissonChanges(300 + i, 1, HORIZON_DAYS),
      }))
      for (const p of [...fast, ...slow, ...throttled]) tracked.set(p.url, p)
      const special = (path: string) => `${hostA.origin}${path}`

      // An important page crawled at most every 3 hours: the optimiser keeps crawling it while probes shorten its interval.
      const noisyPage = { url: special('/noisy'), importance: 200, maxCrawlsPerDay: 8 }
      const setClock = async (ms: number) => {
        sim.nowMs = ms
        await ok(api.PUT('/v1/clock', { body: { now: new Date(ms).toISOString() } }))
      }
      await setClock(START_MS)
      // A budget the pages compete for; the hand-out allowance holds a week of it, so leases follow the due times.
      await ok(
        api.PATCH('/v1/settings', {
          body: { budgetCrawlsPerDay: 24, handOutBurstHours: 168, reoptimizeSeconds: 86_400 },
        }),
      )
      const registered = [...fast, ...slow, ...throttled].map(({ url, importance }) => ({ url, importance }))
      registered.push({ url: special('/dying'), importance: 2 }, { url: special('/moved'), importance: 1 })
      await ok(api.PUT('/v1/pages', { body: { pages: [...registered, noisyPage] } }))

      const crawler = new Crawler({
        ...DEFAULT_CRAWLER_OPTIONS,
        api,
        worker: 'test-crawler',
        concurrency: 4,
        hostDelayMs: 0,
        leaseSeconds: 3600,
        now: () => sim.nowMs,
      })
      // Simulated time moves to the next due page, so every crawl happens when the service asked for it.
      let throttleSeen = 0
      let nextOptimizeMs = START_MS
      let stalled = 0
      while (sim.nowMs < END_MS) {
        if (sim.nowMs >= nextOptimizeMs) {
          await ok(api.POST('/v1/optimize'))
          nextOptimizeMs += 12 * HOUR_MS
        }
        const round = await crawler.runOnce()
        if (round.statuses['429'] && throttleSeen === 0) {
          const hosts = await ok(api.GET('/v1/hosts'))
          throttleSeen = Math.max(
            throttleSeen,
            hosts.hosts.find((h) => h.host === hostB.host)?.throttleDelaySeconds ?? 0,
          )
        }
        if (round.leased > 0) stalled = 0
        // Then to the next due time. Pages due already but held back (a paused or paced host) are tried again
        // after a growing wait.
        const schedule = await ok(api.GET('/v1/schedule', { params: { query: { limit: 100 } } }))
        const dues = schedule.items.map((i) => Date.parse(i.dueAt))
        if (round.leased > 0 && dues.some((d) => d <= sim.nowMs)) continue
        const future = Math.min(...dues.filter((d) => d > sim.nowMs), END_MS, nextOptimizeMs)
        const waitMs = dues.some((d) => d <= sim.nowMs)
          ? Math.min(MINUTE_MS * 2 ** stalled++, HOUR_MS)
          : Number.POSITIVE_INFINITY
        await setClock(Math.min(future, sim.nowMs + waitMs))
      }
      await ok(api.POST('/v1/optimize'))
      const pageOf = (url: string) => ok(api.GET('/v1/pages/by-url', { params: { query: { url } } }))

      // The dead page: gone at its first 410 (or third 404 in a row), and never fetched again.
      const dying = await pageOf(special('/dying'))
      assert.equal(dying.status, 'gone')
      assert.equal(dying.crawlsPerDay, 0)
      const dyingRequests = site.requestsFor(special('/dying'))
      let notFoundInARow = 0
      const goneAt = dyingRequests.findIndex((r) =>
        r.status === 404 ? ++notFoundInARow >= 3 : ((notFoundInARow = 0), r.status === 410),
      )
      assert.ok(goneAt >= 0, JSON.stringify(dyingRequests))
      assert.equal(dyingRequests.length, goneAt + 1, 'no fetch after the page was gone')

      // The redirect: the source is not scheduled any more, the target is a page of its own, with the source's importance.
      const moved = await pageOf(special('/moved'))
      assert.equal(moved.status, 'redirected')
      assert.equal(moved.redirectTo, special('/new-home'))
      assert.equal(site.requestsFor(special('/moved')).length, 1)
      const target = await pageOf(special('/new-home'))
      assert.equal(target.importance, moved.importance)
      assert.ok(okFetches(site.requestsFor(special('/new-home'))).length >= 1)

      // The throttling host: its adaptive delay grew, and nobody asked it anything during a Retry-After.
      assert.ok(throttleSeen > 0, 'host B got a throttle delay')
      const hostBRequests = site.requests.filter((r) => r.origin === hostB.origin)
      const refusals = hostBRequests.filter((r) => r.status === 429)
      assert.ok(refusals.length > 0)
      for (const refusal of refusals) {
        const during = hostBRequests.filter(
          (r) => r.atMs > refusal.atMs && r.atMs < refusal.atMs + RETRY_AFTER_SECONDS * 1000,
        )
        assert.deepEqual(
          during,
          [],
          `request to host B during the Retry-After of ${new Date(refusal.atMs).toISOString()}`,
        )
      }

      // The noisy page is flagged; pages with random tokens only outside their main content are not.
      assert.equal((await pageOf(special('/noisy'))).noisy, true)
      for (const p of [...fast, ...slow]) assert.equal((await pageOf(p.url)).noisy, false, p.url)

      // Where the changes are: after the warm-up, the fast (and more important) pages got more crawls than the
      // slow ones, and the crawls bought more freshness than the same number spread uniformly.
      const fromMs = START_MS + WARMUP_DAYS * MS_PER_DAY
      const crawlsOf = (p: TrackedPage) => okFetches(site.requestsFor(p.url)).map((r) => r.atMs)
      const inWindow = (p: TrackedPage) => crawlsOf(p).filter((ms) => ms >= fromMs).length
      const fastCrawls = fast.reduce((s, p) => s + inWindow(p), 0)
      const slowCrawls = slow.reduce((s, p) => s + inWindow(p), 0)
      assert.ok(fastCrawls > 2 * slowCrawls, `fast ${fastCrawls} vs slow ${slowCrawls}`)
      const pages = [...fast, ...slow]
      const service = weightedFreshness(pages, crawlsOf, fromMs, END_MS)
      const uniform = uniformFreshness(pages, fastCrawls + slowCrawls, fromMs, END_MS)
      assert.ok(
        service > uniform,
        `service freshness ${service.toFixed(3)} vs uniform ${uniform.toFixed(3)} with ${fastCrawls + slowCrawls} crawls`,
      )

      // Nothing is left leased, and conditional requests were answered 304 and reported as such.
      assert.equal(crawler.totals.released + crawler.totals.reported, crawler.totals.leased)
      assert.ok((crawler.totals.statuses['304'] ?? 0) > 0)
    } finally {
      await t.close()
      await site.close()
    }
  })

  it('passes HTTP through as received: relative redirects, HTTP dates, 429 and 503 with and without Retry-After, paced hosts', async () => {
    const DAYS = 2
    const END_MS = START_MS + DAYS * MS_PER_DAY
    const sim = { nowMs: START_MS }
    const site = new TestSite(() => sim.nowMs)
    const t = await startTestApp({ clock: simulatedClock(0) })
    try {
      const baseUrl = await listenOnLoopback(t.app)
      const admin = createRecrawlClient({
        baseUrl,
        apiKey: (await createApiKey({ pool: t.db.pool }, { name: 'ops', role: 'admin' })).key,
      })
      const crawlerKey = (await createApiKey({ pool: t.db.pool }, { name: 'fleet', role: 'crawler' })).key
      const page = (path: string, version: number) =>
        `<html><body><nav>${randomUUID()}</nav><main>${path} version ${version}</main></body></html>`

      // Host R: a permanent redirect with a relative Location, and pages that send Last-Modified as an HTTP date
      // and answer If-Modified-Since (each changes every 6 hours).
      const DATED_PERIOD_MS = 6 * HOUR_MS
      const lastChangeMs = (now: number) => START_MS + Math.floor((now - START_MS) / DATED_PERIOD_MS) * DATED_PERIOD_MS
      const hostR = await site.addHost((req, res) => {
        const path = req.url ?? '/'
        const now = sim.nowMs
        if (path === '/a/old') return html(res, 301, 'moved', { location: '../b/new' })
        if (path === '/b/new') return html(res, 200, page(path, 0))
        if (path.startsWith('/dated/')) {
          const changedMs = lastChangeMs(now)
          const since = Date.parse(String(req.headers['if-modified-since'] ?? ''))
          if (since >= changedMs) return void notModified(res)
          return html(res, 200, page(path, changedMs), { 'last-modified': httpDate(changedMs) })
        }
        return html(res, 404, 'no such page')
      })
      // Host N: takes one request per 30 minutes and answers 429 without Retry-After to any other.
      let hostNLastOkMs = Number.NEGATIVE_INFINITY
      const hostN = await site.addHost((req, res) => {
        if (sim.nowMs - hostNLastOkMs < 30 * MINUTE_MS) return html(res, 429, 'too many requests')
        hostNLastOkMs = sim.nowMs
        return html(res, 200, page(req.url ?? '/', Math.floor(sim.nowMs / HOUR_MS)))
      })
      // Host Q: after a normal answer, 429 for two hours with Retry-After as an HTTP date (the end of those hours).
      let hostQLastOkMs = Number.NEGATIVE_INFINITY
      const hostQ = await site.addHost((req, res) => {
        if (sim.nowMs - hostQLastOkMs < 2 * HOUR_MS)
          return html(res, 429, 'slow down', { 'retry-after': httpDate(hostQLastOkMs + 2 * HOUR_MS) })
        hostQLastOkMs = sim.nowMs
        return html(res, 200, page(req.url ?? '/', Math.floor(sim.nowMs / HOUR_MS)))
      })
      // Host D: down for 12 hours from day 1 (503 without Retry-After); host E: down for 6 hours from day 0.5 (503
      // with Retry-After: 1800). Their pages change every hour.
      const D_OUTAGE = [START_MS + MS_PER_DAY, START_MS + 1.5 * MS_PER_DAY] as const
      const E_OUTAGE = [START_MS + 0.5 * MS_PER_DAY, START_MS + 0.75 * MS_PER_DAY] as const
      const E_RETRY_AFTER_SECONDS = 1800
      const during = (window: readonly [number, number], ms: number) => ms >= window[0] && ms < window[1]
      const hostD = await site.addHost((req, res) => {
        if (during(D_OUTAGE, sim.nowMs)) return html(res, 503, 'down')
        return html(res, 200, page(req.url ?? '/', Math.floor(sim.nowMs / HOUR_MS)))
      })
      const hostE = await site.addHost((req, res) => {
        if (during(E_OUTAGE, sim.nowMs))
          return html(res, 503, 'maintenance', { 'retry-after': String(E_RETRY_AFTER_SECONDS) })
        return html(res, 200, page(req.url ?? '/', Math.floor(sim.nowMs / HOUR_MS)))
      })
      // Host P: paced by its operator at one request per 30 minutes; its pages change every hour.
      const P_DELAY_SECONDS = 1800
      const hostP = await site.addHost((req, res) =>
        html(res, 200, page(req.url ?? '/', Math.floor(sim.nowMs / HOUR_MS))),
      )

      const setClock = async (ms: number) => {
        sim.nowMs = ms
        await ok(admin.PUT('/v1/clock', { body: { now: new Date(ms).toISOString() } }))
      }
      await setClock(START_MS)
      await ok(
        admin.PATCH('/v1/settings', {
          body: { budgetCrawlsPerDay: 400, handOutBurstHours: 168, reoptimizeSeconds: 86_400 },
        }),
      )
      await ok(
        admin.PUT('/v1/hosts/{host}', {
          params: { path: { host: hostP.host } },
          body: { minDelaySeconds: P_DELAY_SECONDS },
        }),
      )
      const urls = (origin: string, prefix: string, n: number) =>
        Array.from({ length: n }, (_, i) => `${origin}${prefix}${i}`)
      const dated = urls(hostR.origin, '/dated/', 2)
      const registered = [
        `${hostR.origin}/a/old`,
        ...dated,
        ...urls(hostN.origin, '/n/', 4),
        ...urls(hostQ.origin, '/q/', 3),
        ...urls(hostD.origin, '/d/', 4),
        ...urls(hostE.origin, '/e/', 4),
        ...urls(hostP.origin, '/p/', 6),
      ]
      await ok(admin.PUT('/v1/pages', { body: { pages: registered.map((url) => ({ url, importance: 1 })) } }))

      // The crawler with a crawler key: nothing in its loop needs more. Simulated time moves as the leases say
      // (their retryAfterSeconds), as the crawler's own run() waits.
      const crawler = new Crawler({
        ...DEFAULT_CRAWLER_OPTIONS,
        api: createRecrawlClient({ baseUrl, apiKey: crawlerKey }),
        worker: 'http-as-received',
        concurrency: 4,
        hostDelayMs: 0,
        leaseSeconds: 3600,
        now: () => sim.nowMs,
      })
      const limitedBySeen = new Set<string>()
      const pacedSeen = new Map<string, number>()
      let nextOptimizeMs = START_MS
      let rounds = 0
      while (sim.nowMs < END_MS) {
        assert.ok(++rounds < 20_000, 'the simulated run ends')
        if (sim.nowMs >= nextOptimizeMs) {
          await ok(admin.POST('/v1/optimize'))
          nextOptimizeMs += 6 * HOUR_MS
        }
        const round = await crawler.runOnce()
        for (const reason of round.limitedBy) limitedBySeen.add(reason)
        for (const paced of round.pacedHosts) pacedSeen.set(paced.host, paced.paceSeconds)
        if (round.retryAfterSeconds === 0) continue
        await setClock(Math.min(sim.nowMs + (round.retryAfterSeconds ?? 3600) * 1000, nextOptimizeMs, END_MS))
      }
      const pageOf = (url: string) => ok(admin.GET('/v1/pages/by-url', { params: { query: { url } } }))
      const requestsTo = (origin: string) => site.requests.filter((r) => r.origin === origin)

      // Every report was stored, and every lease ended with its pages reported or given back.
      assert.equal(crawler.totals.rejected, 0)
      assert.equal(crawler.totals.released + crawler.totals.reported, crawler.totals.leased)

      // The relative Location was resolved against the page: /a/old moved to /b/new, which is crawled now.
      const moved = await pageOf(`${hostR.origin}/a/old`)
      assert.equal(moved.status, 'redirected')
      assert.equal(moved.redirectTo, `${hostR.origin}/b/new`)
      assert.equal(site.requestsFor(`${hostR.origin}/a/old`).length, 1)
      assert.ok(okFetches(site.requestsFor(`${hostR.origin}/b/new`)).length >= 1)

      // Last-Modified sent as an HTTP date was stored, and came back in the lease as If-Modified-Since, sent as is.
      for (const url of dated) {
        const stored = await pageOf(url)
        const requests = site.requestsFor(url)
        const lastOk = requests.filter((r) => r.status === 200).at(-1)!
        assert.equal(stored.lastModified, new Date(lastChangeMs(lastOk.atMs)).toISOString(), url)
        for (const [i, request] of requests.entries()) {
          if (i === 0) continue
          const previousOk = requests
            .slice(0, i)
            .filter((r) => r.status === 200)
            .at(-1)!
          assert.equal(request.headers['if-modified-since'], httpDate(lastChangeMs(previousOk.atMs)), url)
        }
        assert.ok(
          requests.some((r) => r.status === 304),
          `${url} was answered 304`,
        )
      }

      // 429 without Retry-After: each one blocks the host longer, so after the first day a handful a day at most, and
      // the host is still crawled every day. (Measured: 11 on the first day, 1 on the second, 8 normal answers.)
      const requestsN = requestsTo(hostN.origin)
      for (let day = 0; day < DAYS; day++) {
        const from = START_MS + day * MS_PER_DAY
        const ofDay = requestsN.filter((r) => r.atMs >= from && r.atMs < from + MS_PER_DAY)
        const refused = ofDay.filter((r) => r.status === 429).length
        assert.ok(refused <= (day === 0 ? 15 : 5), `host N answered ${refused} 429s on day ${day}`)
        assert.ok(
          ofDay.some((r) => r.status === 200),
          `host N was crawled on day ${day}`,
        )
      }
      assert.ok(
        requestsN.some((r) => r.status === 429),
        'host N refused some requests',
      )

      // 429 with Retry-After as an HTTP date, and 503 with Retry-After in seconds: nothing asked before it passed.
      for (const [origin, pauseMs] of [
        [hostQ.origin, (r: SiteRequest) => Date.parse(httpDate(hostQLastOkBefore(r.atMs) + 2 * HOUR_MS)) - r.atMs],
        [hostE.origin, () => E_RETRY_AFTER_SECONDS * 1000],
      ] as const) {
        const requests = requestsTo(origin)
        const refusals = requests.filter((r) => r.status === 429 || r.status === 503)
        assert.ok(refusals.length >= 1, `${origin} refused some requests`)
        for (const refusal of refusals) {
          const until = refusal.atMs + pauseMs(refusal)
          const early = requests.filter((r) => r.atMs > refusal.atMs && r.atMs < until)
          assert.deepEqual(early, [], `requests to ${origin} during a Retry-After`)
        }
      }

      // 503 without Retry-After: the host got fewer requests during its 12-hour outage than in the 12 hours before.
      const inWindow = (origin: string, from: number, to: number) =>
        requestsTo(origin).filter((r) => r.atMs >= from && r.atMs < to).length
      const normal = inWindow(hostD.origin, D_OUTAGE[0] - 12 * HOUR_MS, D_OUTAGE[0])
      const outage = inWindow(hostD.origin, ...D_OUTAGE)
      assert.ok(outage < normal, `host D: ${outage} requests during its outage, ${normal} in the 12 hours before`)
      assert.ok(inWindow(hostD.origin, D_OUTAGE[1], END_MS) > 0, 'host D is crawled again after its outage')
      assert.ok(limitedBySeen.has('hostBackoff'), [...limitedBySeen].join(', '))

      // The paced host: its pace reached the crawler with the leases, its requests kept it, and its pages were crawled.
      assert.ok(limitedBySeen.has('pacedHosts'), [...limitedBySeen].join(', '))
      assert.equal(pacedSeen.get(hostP.host), P_DELAY_SECONDS)
      const paced = requestsTo(hostP.origin).map((r) => r.atMs)
      for (let i = 1; i < paced.length; i++)
        assert.ok(paced[i]! - paced[i - 1]! >= P_DELAY_SECONDS * 1000, `host P asked twice within its pace`)
      assert.ok(paced.length >= 24 * DAYS, `host P: ${paced.length} requests`)

      function hostQLastOkBefore(ms: number): number {
        return requestsTo(hostQ.origin)
          .filter((r) => r.status === 200 && r.atMs <= ms)
          .at(-1)!.atMs
      }
    } finally {
      await t.close()
      await site.close()
    }
  })

  it('asks for the next lease when the last one says (its retryAfterSeconds), or after the poll time when there is no page at all', async () => {
    // A service stub: every lease is empty, with the retryAfterSeconds the test sets.
    const leaseCallsMs: number[] = []
    let retryAfterSeconds: number | null = 1
    const server = createServer((req, res) => {
      if (req.method !== 'POST' || req.url !== '/v1/leases') {
        res.writeHead(404)
        return void res.end()
      }
      leaseCallsMs.push(Date.now())
      req.resume()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          leaseId: 'lease-1',
          expiresAt: new Date().toISOString(),
          pages: [],
          limitedBy: retryAfterSeconds === null ? ['nothingDue'] : ['budgetAllowance'],
          retryAfterSeconds,
          nextDueAt: null,
          pacedHosts: [],
        }),
      )
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const crawler = new Crawler({
        ...DEFAULT_CRAWLER_OPTIONS,
        api: createRecrawlClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
        worker: 'polling',
      })
      const gaps = () => leaseCallsMs.slice(1).map((ms, i) => ms - leaseCallsMs[i]!)

      await crawler.run({ rounds: 3, pollSeconds: 0.05 })
      assert.equal(leaseCallsMs.length, 3)
      for (const gap of gaps()) assert.ok(gap >= 950, `asked again after ${gap} ms, not the lease's 1 s`)

      leaseCallsMs.length = 0
      retryAfterSeconds = null
      await crawler.run({ rounds: 3, pollSeconds: 0.2 })
      assert.equal(leaseCallsMs.length, 3)
      // The crawler waits from the moment it sent its last lease call, and the server stamps arrivals: a call that
      // took long to arrive makes the next gap short by as much, so the bound has the same 50 ms slack as above.
      for (const gap of gaps()) assert.ok(gap >= 150 && gap < 900, `asked again after ${gap} ms, not the poll's 200`)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('runs from the command line: sends heartbeats while a fetch hangs, and on SIGTERM reports what it fetched and gives the rest back', async () => {
    const site = new TestSite(() => Date.now())
    const hanging: ServerResponse[] = []
    const host = await site.addHost((req, res) => {
      if (req.url === '/quick') return html(res, 200, '<main>quick</main>')
      hanging.push(res) // never answered
    })
    const t = await startTestApp()
    t.clock.setMs(Date.now())
    let child: ReturnType<typeof spawn> | null = null
    try {
      const baseUrl = await listenOnLoopback(t.app)
      const admin = createRecrawlClient({
        baseUrl,
        apiKey: (await createApiKey({ pool: t.db.pool }, { name: 'ops', role: 'admin' })).key,
      })
      const crawlerKey = (await createApiKey({ pool: t.db.pool }, { name: 'fleet', role: 'crawler' })).key
      const urls = ['/quick', '/hang/1', '/hang/2'].map((p) => `${host.origin}${p}`)
      await ok(admin.PUT('/v1/pages', { body: { pages: urls.map((url, i) => ({ url, importance: 3 - i })) } }))

      const args = [
        '--url',
        baseUrl,
        '--key',
        crawlerKey,
        '--lease-seconds',
        '30',
        '--heartbeat-seconds',
        '0.2',
        '--host-delay-ms',
        '0',
        '--poll-seconds',
        '1',
      ]
      child = spawn(process.execPath, ['--import', 'tsx', 'examples/crawler/crawler.ts', ...args], {
        cwd: REPO_DIR,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)))

      await waitFor(
        () => site.requestsFor(urls[1]!).length > 0,
        30_000,
        () => `the crawler never fetched ${urls[1]}: ${stderr}`,
      )
      const pageOf = (url: string) => ok(admin.GET('/v1/pages/by-url', { params: { query: { url } } }))
      const leased = await pageOf(urls[1]!)
      assert.ok(leased.lease, 'the hanging page is leased')
      // Time passes on the service; the heartbeats keep the lease ahead of it.
      t.clock.advanceMs(20_000)
      await waitFor(
        async () => Date.parse((await pageOf(urls[1]!)).lease?.expiresAt ?? '0') >= t.clock.nowMs() + 29_000,
        10_000,
        () => `no heartbeat moved the lease: ${stderr}`,
      )

      child.kill('SIGTERM')
      assert.equal(await withTimeout(exited, 15_000), 0, stderr)
      assert.match(stderr, /gave back 2 unfetched page/)
      const [quick, hang1, hang2] = await Promise.all(urls.map(pageOf))
      assert.equal(quick!.crawls, 1, 'the fetched page was reported')
      assert.equal(quick!.lastHttpStatus, 200)
      for (const page of [quick!, hang1!, hang2!]) assert.equal(page.lease, null, page.url)
      for (const page of [hang1!, hang2!]) {
        assert.equal(page.crawls, 0, page.url)
        assert.ok(Date.parse(page.dueAt!) <= t.clock.nowMs(), `${page.url} is due again at once`)
      }
      assert.equal(site.requestsFor(urls[2]!).length, 0, 'one request at a time per host')
    } finally {
      child?.kill('SIGKILL')
      for (const res of hanging) res.destroy()
      await t.close()
      await site.close()
    }
  })
})

function notModified(res: ServerResponse): void {
  res.writeHead(304)
  res.end()
}

async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  message: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(message())
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref()),
  ])
}
