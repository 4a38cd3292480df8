// The README's dashboard pictures (docs/img/dashboard.png, docs/img/host-view.png) from a scripted run:
//
//   node --import tsx scripts/screenshots.ts [--out docs/img] [--hours 47]
//
// The service runs in this process on an in-memory embedded database and a clock the script moves. A fleet of
// 120 hosts with heavy-tailed page counts (about 1,900 pages) is crawled for `hours` hours: every 10 minutes
// three workers lease the due pages and report them; each page changes at a rate drawn around its host's, and
// some hosts misbehave (5xx answers, timeouts, DNS errors, 429s that back them off, pages that turn 404). One
// host is capped and one paced. The optimiser runs every 3 hours, and every step takes a stats sample. Then
// chromium (CHROMIUM_PATH, default /usr/bin/chromium, through playwright-core) opens the dashboard: the main
// page as the browser first shows it, and the host view sorted by failures in the last 24 hours. Then
// SIGNAL_HOURS more hours with change signals (docs/img/signals.png): the news hosts' CMS signals each change as
// it happens, the docs hosts' sitemaps carry each page's last change, and the shop hosts' sitemaps, rebuilt every
// 6 hours, stamp every entry with the build time; the picture is the Change signals panel with the sitemap
// source's hosts. Seeded: two runs draw the same pictures.
import { existsSync } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { buildApp } from '../src/app.ts'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_MAX_BATCH_ITEMS } from '../src/config.ts'
import { manualClock } from '../src/domain/clock.ts'
import { createRandom } from '../src/math/random.ts'
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../src/math/units.ts'
import { openDatabase } from '../src/store/db.ts'
import { migrate } from '../src/store/migrate.ts'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

const OUT_DIR = resolve(arg('--out', 'docs/img'))
const HOURS = Number(arg('--hours', '47'))
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const START_MS = Date.parse('2026-11-24T15:00:00Z')
const STEP_MS = 10 * MS_PER_MINUTE
const OPTIMIZE_EVERY_MS = 3 * MS_PER_HOUR
const HOST_COUNT = 120
const WORKERS = ['crawler-1', 'crawler-2', 'crawler-3']
const SIGNAL_HOURS = 24
const SITEMAP_EVERY_MS = 2 * MS_PER_HOUR
const BUILD_EVERY_MS = 6 * MS_PER_HOUR

if (!existsSync(CHROMIUM))
  throw new Error(`no chromium at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH`)

const random = createRandom(2026)
const WORDS = ['news', 'shop', 'docs', 'forum', 'wiki', 'blog', 'store', 'jobs', 'travel', 'recipes']
const TLDS = ['example', 'example.org', 'example.net']

/** How a host answers: the share of fetches of each failure, and whether it pushes back with 429s. */
interface HostProfile {
  name: string
  pages: number
  changesPerDay: number
  http5xx: number
  timeout: number
  dns: number
  http429: number
  gone: number
}

const hosts: HostProfile[] = Array.from({ length: HOST_COUNT }, (_, rank) => {
  const word = WORDS[rank % WORDS.length]!
  const name =
    rank < WORDS.length ? `${word}.example` : `${word}${Math.floor(rank / WORDS.length)}.${TLDS[rank % TLDS.length]}`
  return {
    name,
    pages: Math.round(300 / (rank + 1) ** 1.05) + 4,
    changesPerDay: Math.exp(Math.log(0.05) + random.next() * Math.log(24 / 0.05)),
    http5xx: rank === 3 ? 0.25 : rank % 17 === 5 ? 0.05 : rank % 6 === 1 ? 0.004 : 0,
    timeout: rank === 7 ? 0.3 : rank % 23 === 11 ? 0.04 : rank % 8 === 3 ? 0.003 : 0,
    dns: rank === 12 ? 0.5 : 0,
    http429: rank === 2 ? 0.08 : 0,
    gone: rank % 9 === 4 ? 0.03 : 0.002,
  }
})

interface PageState {
  host: HostProfile
  changesPerDay: number
  version: number
  gone: boolean
  /** When it last changed, for pages whose changes are drawn as they happen (the signalled hosts). */
  changedAtMs: number | null
}

/** How a host's changes are signalled in the last SIGNAL_HOURS: a CMS, a true sitemap, or a build-time one. */
const signalling = (host: HostProfile): 'cms' | 'sitemap' | 'build-time' | null =>
  host.name.startsWith('news')
    ? 'cms'
    : host.name.startsWith('docs')
      ? 'sitemap'
      : host.name.startsWith('shop')
        ? 'build-time'
        : null

const pages = new Map<string, PageState>()
for (const host of hosts) {
  for (let j = 0; j < host.pages; j++) {
    const url = j === 0 ? `https://${host.name}/` : `https://${host.name}/${j < 3 ? 'section' : 'item'}/${j}`
    // Around the host's rate, a factor of 4 either way; the front page changes most.
    const spread = Math.exp((random.next() * 2 - 1) * Math.log(4))
    pages.set(url, {
      host,
      changesPerDay: host.changesPerDay * spread * (j === 0 ? 3 : 1),
      version: 0,
      gone: random.next() < host.gone,
      changedAtMs: null,
    })
  }
}

const db = await openDatabase({ databaseUrl: undefined, dataDir: null, poolSize: 1 })
await migrate(db.pool)
const clock = manualClock(START_MS)
const app = await buildApp({
  pool: db.pool,
  databaseKind: db.kind,
  clock,
  random: createRandom(7),
  maxBatchItems: DEFAULT_MAX_BATCH_ITEMS,
  bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
  loopbackOnly: true,
  authCacheMs: 0,
  statsCacheMs: 0,
})

async function call(method: 'GET' | 'PUT' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

try {
  await call('PATCH', '/v1/settings', { budgetCrawlsPerDay: 3 * pages.size })
  const urls = [...pages.keys()]
  for (let i = 0; i < urls.length; i += 1000) {
    await call('PUT', '/v1/pages', {
      pages: urls.slice(i, i + 1000).map((url) => ({ url, importance: url.endsWith('/') ? 5 : 1 })),
    })
  }
  await call('PUT', `/v1/hosts/${hosts[1]!.name}`, { maxCrawlsPerDay: 200 })
  await call('PUT', `/v1/hosts/${hosts[4]!.name}`, { minDelaySeconds: 120 })

  const lastCrawlMs = new Map<string, number>()
  let nextOptimizeMs = START_MS
  let crawls = 0
  /**
   * Ten minutes of the fleet. With `signals`, the signalled hosts' pages change as it happens (not when crawled):
   * a news page's change is signalled at once, and the sitemaps are posted every so often.
   */
  const step = async (now: number, signals: boolean) => {
    clock.setMs(now)
    if (signals) await sendSignals(now)
    if (now >= nextOptimizeMs) {
      await call('POST', '/v1/optimize')
      nextOptimizeMs += OPTIMIZE_EVERY_MS
    }
    // Each worker takes what is due; it fetches during the next five minutes and then reports.
    const leases: { leaseId: string; pages: { url: string }[] }[] = []
    for (const worker of WORKERS) {
      leases.push(await call('POST', '/v1/leases', { worker, limit: 500, leaseSeconds: 900 }))
    }
    clock.setMs(now + 5 * MS_PER_MINUTE)
    for (const lease of leases) {
      const observations = lease.pages.map(({ url }) => {
        const page = pages.get(url)!
        const crawledAtMs = now + Math.floor(random.next() * 5 * MS_PER_MINUTE) + 1
        const item: Record<string, unknown> = {
          url,
          crawledAt: new Date(crawledAtMs).toISOString(),
          leaseId: lease.leaseId,
        }
        const draw = random.next()
        const { host } = page
        if (draw < host.dns) return { ...item, fetchError: 'dns' }
        if (draw < host.dns + host.timeout) return { ...item, fetchError: 'timeout' }
        if (draw < host.dns + host.timeout + host.http5xx) return { ...item, httpStatus: 503 }
        if (draw < host.dns + host.timeout + host.http5xx + host.http429) return { ...item, httpStatus: 429 }
        if (page.gone) return { ...item, httpStatus: 404 }
        const sinceDays = (crawledAtMs - (lastCrawlMs.get(url) ?? crawledAtMs - MS_PER_DAY)) / MS_PER_DAY
        const drawnAhead = signals && signalling(host) !== null && signalling(host) !== 'build-time'
        if (!drawnAhead && random.next() < 1 - Math.exp(-page.changesPerDay * sinceDays)) page.version++
        lastCrawlMs.set(url, crawledAtMs)
        return { ...item, httpStatus: 200, contentHash: `${url}#${page.version}` }
      })
      if (observations.length === 0) continue
      crawls += observations.length
      await call('POST', '/v1/observations', { observations })
    }
    clock.setMs(now + STEP_MS)
    // A snapshot records a sample of the dashboard's time series.
    await call('GET', '/v1/stats')
  }

  const urlset = (entries: { url: string; lastmodMs: number }[]) =>
    `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries
      .map((e) => `<url><loc>${e.url}</loc><lastmod>${new Date(e.lastmodMs).toISOString()}</lastmod></url>`)
      .join('')}</urlset>`
  const postSitemap = async (host: string, body: string) => {
    const res = await app.inject({
      method: 'POST',
      url: `/v1/sitemaps?url=${encodeURIComponent(`https://${host}/sitemap.xml`)}`,
      headers: { 'content-type': 'application/xml' },
      payload: body,
    })
    if (res.statusCode !== 200) throw new Error(`POST /v1/sitemaps for ${host}: ${res.statusCode} ${res.body}`)
  }
  const signalsStartMs = START_MS + HOURS * MS_PER_HOUR
  const sendSignals = async (now: number) => {
    const cms: { url: string; source: string; changedAt: string }[] = []
    for (const [url, page] of pages) {
      const how = signalling(page.host)
      if (how !== 'cms' && how !== 'sitemap') continue
      if (page.gone || random.next() >= 1 - Math.exp((-page.changesPerDay * STEP_MS) / MS_PER_DAY)) continue
      // It changes as the step begins, before this step's crawls: a crawl never saw it unchanged after the change.
      page.version++
      page.changedAtMs = now
      if (how === 'cms') cms.push({ url, source: 'cms', changedAt: new Date(page.changedAtMs).toISOString() })
    }
    if (cms.length > 0) await call('POST', '/v1/signals', { signals: cms })
    const sinceStart = now - signalsStartMs
    for (const host of hosts) {
      const hostPages = [...pages].filter(([, p]) => p.host === host)
      if (signalling(host) === 'sitemap' && sinceStart % SITEMAP_EVERY_MS === 0) {
        const dated = hostPages.filter(([, p]) => p.changedAtMs !== null)
        if (dated.length > 0)
          await postSitemap(host.name, urlset(dated.map(([url, p]) => ({ url, lastmodMs: p.changedAtMs! }))))
      }
      if (signalling(host) === 'build-time' && sinceStart % BUILD_EVERY_MS === 0)
        await postSitemap(host.name, urlset(hostPages.map(([url]) => ({ url, lastmodMs: now }))))
    }
  }

  for (let now = START_MS; now < signalsStartMs; now += STEP_MS) await step(now, false)
  console.log(`${pages.size} pages on ${hosts.length} hosts, ${crawls} crawls in ${HOURS} h`)

  await app.listen({ host: '127.0.0.1', port: 0 })
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(String(err)))
    await page.goto(`${baseUrl}/`)
    type Dashboard = { recrawlDashboard?: { ready?: boolean; hostLoads?: number; signalHostLoads?: number } }
    await page.waitForFunction(() => (globalThis as Dashboard).recrawlDashboard?.ready === true, null, {
      timeout: 30_000,
    })
    await mkdir(OUT_DIR, { recursive: true })
    const main = resolve(OUT_DIR, 'dashboard.png')
    await page.screenshot({ path: main, fullPage: false })
    const loads = (await page.evaluate(() => (globalThis as Dashboard).recrawlDashboard!.hostLoads ?? 0)) as number
    await page.click('#host-overview-table th[data-sort="failuresLastDay"]')
    await page.waitForFunction((n) => ((globalThis as Dashboard).recrawlDashboard!.hostLoads ?? 0) > n, loads, {
      timeout: 30_000,
    })
    const hostView = resolve(OUT_DIR, 'host-view.png')
    await page.locator('#host-view').screenshot({ path: hostView })
    await page.close()

    const before = crawls
    for (let now = signalsStartMs; now < signalsStartMs + SIGNAL_HOURS * MS_PER_HOUR; now += STEP_MS)
      await step(now, true)
    console.log(`${crawls - before} crawls in ${SIGNAL_HOURS} h with change signals`)
    const later = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    later.on('pageerror', (err) => errors.push(String(err)))
    await later.goto(`${baseUrl}/`)
    await later.waitForFunction(() => (globalThis as Dashboard).recrawlDashboard?.ready === true, null, {
      timeout: 30_000,
    })
    await later.click('#signal-sources-table tr[data-source="sitemap"] button')
    await later.waitForFunction(() => (globalThis as Dashboard).recrawlDashboard?.signalHostLoads === 1, null, {
      timeout: 30_000,
    })
    const signalView = resolve(OUT_DIR, 'signals.png')
    await later.locator('#signal-view').screenshot({ path: signalView })
    if (errors.length > 0) throw new Error(`the dashboard reported errors: ${errors.join('; ')}`)
    for (const file of [main, hostView, signalView])
      console.log(`${file}: ${Math.round((await stat(file)).size / 1024)} KiB`)
  } finally {
    await browser.close()
  }
} finally {
  await app.close()
  await db.close()
}
