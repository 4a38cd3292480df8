import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { createRandom } from '../../src/math/random.ts'
import { statusClassOf, type StatusClass } from '../../src/ops/fetchStatus.ts'
import { T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'
import { launchChromium } from '../helpers/browser.ts'
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../../src/math/units.ts'
import type { components } from '@recrawl/client'

type Stats = components['schemas']['Stats']

/** What web/app.js puts on `window.recrawlDashboard` for tests and curious operators. */
interface DashboardWindow {
  recrawlDashboard?: {
    ready?: boolean
    refreshes: number
    stats: Stats
    charts: Record<string, unknown>
    page: unknown
  }
}

/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the service
 * on a real port, on a manual clock. Every time-series chart must span the selected window (ending
 * at the service's clock, not the browser's), the page timeline its own data, and every chart must
 * hold points inside its axes and have drawn them (pixels of the series' colours on its canvas).
 */
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
const TIME_CHARTS = ['chart-freshness', 'chart-budget', 'chart-overdue', 'chart-fetches'] as const
const ALL_CHARTS = [...TIME_CHARTS, 'chart-change-rates', 'chart-crawl-rates'] as const

interface SeriesReading {
  label: string
  /** [x, y] of the values inside the chart's x and y ranges. */
  visible: [number, number][]
  /** Values outside them (x or y). */
  outside: number
  /** Null values: gaps uPlot breaks the line at. */
  nulls: number
  /** Whether uPlot draws a marker on every point of the series. */
  markers: boolean
  /** Opaque canvas pixels within a small distance of the series' colour. */
  pixels: number
}

interface ChartReading {
  xMin: number
  xMax: number
  series: SeriesReading[]
}

/**
 * Reads scales, data and canvas pixels of the uPlot instances straight from the page. Plain
 * JavaScript in a string: the test's own TypeScript transform would add helpers the page lacks.
 */
const READ_CHARTS = `(chartIds) => {
  const plots = globalThis.recrawlDashboard.plots
  const rgb = (color) => {
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color)
    return m ? [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)] : null
  }
  const out = {}
  for (const id of chartIds) {
    const u = plots[id]
    if (!u) {
      out[id] = null
      continue
    }
    const xs = u.data[0]
    const xMin = u.scales.x.min
    const xMax = u.scales.x.max
    const pixels = u.ctx.getImageData(0, 0, u.ctx.canvas.width, u.ctx.canvas.height).data
    out[id] = {
      xMin,
      xMax,
      series: u.series.slice(1).map((s, k) => {
        const i = k + 1
        const scale = u.scales[s.scale]
        const visible = []
        let outside = 0
        u.data[i].forEach((y, j) => {
          if (y === null || y === undefined || !Number.isFinite(y)) return
          if (xs[j] >= xMin && xs[j] <= xMax && y >= scale.min && y <= scale.max) visible.push([xs[j], y])
          else outside++
        })
        const color = rgb(String(s._stroke))
        let near = 0
        if (color) {
          for (let p = 0; p < pixels.length; p += 4) {
            if (pixels[p + 3] > 200 && Math.abs(pixels[p] - color[0]) <= 24 && Math.abs(pixels[p + 1] - color[1]) <= 24 && Math.abs(pixels[p + 2] - color[2]) <= 24) near++
          }
        }
        const nulls = u.data[i].filter((y) => y === null).length
        return { label: String(s.label), visible, outside, nulls, markers: Boolean(s.points.show(u, i)), pixels: near }
      }),
    }
  }
  return out
}`

async function readCharts(page: Page, ids: readonly string[]): Promise<Record<string, ChartReading | null>> {
  return (await page.evaluate(`(${READ_CHARTS})(${JSON.stringify(ids)})`)) as Record<string, ChartReading | null>
}

const series = (chart: ChartReading, label: string): SeriesReading => {
  const s = chart.series.find((x) => x.label === label)
  assert.ok(s, `no series "${label}" in ${chart.series.map((x) => x.label).join(', ')}`)
  return s
}
const sumY = (s: SeriesReading) => s.visible.reduce((n, [, y]) => n + y, 0)
const secs = (ms: number) => ms / 1000

/** Opens the dashboard and waits for its first refresh; collects console errors. */
async function openDashboard(browser: Browser, baseUrl: string, hash = ''): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(String(err)))
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text())
  })
  await page.goto(`${baseUrl}/${hash}`)
  await page.waitForFunction(() => (globalThis as unknown as DashboardWindow).recrawlDashboard?.ready === true, null, {
    timeout: 15_000,
  })
  return { page, errors }
}

async function selectWindow(page: Page, hours: number): Promise<void> {
  const refreshes = (await page.evaluate(
    () => (globalThis as unknown as DashboardWindow).recrawlDashboard!.refreshes,
  )) as number
  await page.selectOption('#window-hours', String(hours))
  await page.waitForFunction(
    (n) => (globalThis as unknown as DashboardWindow).recrawlDashboard!.refreshes > n,
    refreshes,
    { timeout: 10_000 },
  )
}

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
}

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true })
}

// ---------------------------------------------------------------- a few days of history

const DAYS = 4
const PAGES = 36
const CRAWL_EVERY_MS = 2 * MS_PER_HOUR
/** Stats samples are taken every 10 minutes of the last 6 hours, except for an hour the service was down. */
const SAMPLE_EVERY_MS = 10 * MS_PER_MINUTE
const SAMPLES_FROM_MS = T0 - 6 * MS_PER_HOUR
const DOWN = { fromMs: T0 - 4 * MS_PER_HOUR, toMs: T0 - 3 * MS_PER_HOUR }
/** site3 answers 503 for ten hours; one page of site1 has been gone (404) for the last three days. */
const OUTAGE = { host: 'site3.example', fromMs: T0 - 30 * MS_PER_HOUR, toMs: T0 - 20 * MS_PER_HOUR }
const GONE = { url: 'https://site1.example/article/7', fromMs: T0 - 3 * MS_PER_DAY }
const RUNS_AT_MS = [T0 - 3 * MS_PER_DAY, T0 - 5 * MS_PER_HOUR]

interface History {
  crawls: { url: string; atMs: number; httpStatus: number }[]
  samplesAtMs: number[]
}

/**
 * Crawlers take a lease every two hours for four days and report what they saw (true change rates
 * 0.05 to 20 per day; a 304 for an unchanged page of every fifth page, a 503 during site3's outage,
 * a 404 for the gone page); the optimiser runs twice; stats samples cover only the last six hours.
 */
async function seedHistory(t: TestApp): Promise<History> {
  const random = createRandom(2024)
  const start = T0 - DAYS * MS_PER_DAY
  t.clock.setMs(start)
  const pages = Array.from({ length: PAGES }, (_, i) => ({
    url: `https://site${i % 6}.example/article/${i}`,
    importance: 1 + (i % 4),
    changesPerDay: 0.05 * 400 ** (i / (PAGES - 1)),
    notModified: i % 5 === 0,
  }))
  const byUrl = new Map(pages.map((p) => [p.url, p]))
  const put = await t.app.inject({
    method: 'PUT',
    url: '/v1/pages',
    payload: { pages: pages.map(({ url, importance }) => ({ url, importance })) },
  })
  assert.equal(put.statusCode, 200, put.body)
  const patch = await t.app.inject({
    method: 'PATCH',
    url: '/v1/settings',
    payload: { budgetCrawlsPerDay: 120, minCrawlsPerDay: 0.2 },
  })
  assert.equal(patch.statusCode, 200, patch.body)

  const history: History = { crawls: [], samplesAtMs: [] }
  const lastGoodCrawlMs = new Map<string, number>()
  for (let now = start; now <= T0; now += SAMPLE_EVERY_MS) {
    t.clock.setMs(now)
    if ((now - start) % CRAWL_EVERY_MS === 0) {
      const lease = await t.app.inject({
        method: 'POST',
        url: '/v1/leases',
        payload: { worker: 'sim', limit: 200, leaseSeconds: 3600 },
      })
      assert.equal(lease.statusCode, 200, lease.body)
      const grant = lease.json() as { leaseId: string; pages: { url: string }[] }
      const observations = grant.pages.map((p, k) => {
        const atMs = now - k * 1000
        const host = new URL(p.url).host
        const item: Record<string, unknown> = { url: p.url, crawledAt: iso(atMs), leaseId: grant.leaseId }
        const previous = lastGoodCrawlMs.get(p.url)
        let httpStatus = 200
        if (host === OUTAGE.host && atMs > OUTAGE.fromMs && atMs <= OUTAGE.toMs) httpStatus = 503
        else if (p.url === GONE.url && atMs > GONE.fromMs) httpStatus = 404
        else {
          lastGoodCrawlMs.set(p.url, atMs)
          if (previous !== undefined) {
            const changed =
              random.next() < 1 - Math.exp(-byUrl.get(p.url)!.changesPerDay * ((atMs - previous) / MS_PER_DAY))
            item.changed = changed
            if (!changed && byUrl.get(p.url)!.notModified) httpStatus = 304
          }
        }
        item.httpStatus = httpStatus
        history.crawls.push({ url: p.url, atMs, httpStatus })
        return item
      })
      if (observations.length > 0) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
        assert.equal(res.statusCode, 200, res.body)
        assert.deepEqual(res.json().rejected, [])
      }
    }
    if (RUNS_AT_MS.includes(now)) {
      const run = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
      assert.equal(run.statusCode, 200, run.body)
    }
    // Taking a snapshot records a sample of the time series (once per minute of the clock at most).
    if (now >= SAMPLES_FROM_MS && !(now > DOWN.fromMs && now < DOWN.toMs)) {
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/stats' })).statusCode, 200)
      history.samplesAtMs.push(now)
    }
  }
  return history
}

/** Crawls in (fromMs, toMs] by status class. */
function classCounts(history: History, fromMs: number, toMs: number): Map<StatusClass, number> {
  const counts = new Map<StatusClass, number>()
  for (const c of history.crawls) {
    if (c.atMs > fromMs && c.atMs <= toMs)
      counts.set(statusClassOf(c.httpStatus), (counts.get(statusClassOf(c.httpStatus)) ?? 0) + 1)
  }
  return counts
}

/** The rows of the failures table: [host, status, crawls, pages] of the failed crawls in (fromMs, toMs], most first. */
function expectedFailures(history: History, fromMs: number, toMs: number): string[][] {
  const groups = new Map<string, { host: string; status: number; n: number; urls: Set<string>; lastMs: number }>()
  for (const c of history.crawls) {
    if (c.httpStatus < 400 || c.atMs <= fromMs || c.atMs > toMs) continue
    const host = new URL(c.url).host
    const g = groups.get(`${host} ${c.httpStatus}`) ?? {
      host,
      status: c.httpStatus,
      n: 0,
      urls: new Set<string>(),
      lastMs: 0,
    }
    g.n++
    g.urls.add(c.url)
    g.lastMs = Math.max(g.lastMs, c.atMs)
    groups.set(`${host} ${c.httpStatus}`, g)
  }
  return [...groups.values()]
    .sort((a, b) => b.n - a.n || b.lastMs - a.lastMs)
    .map((g) => [g.host, String(g.status), String(g.n), String(g.urls.size)])
}

describe('dashboard in chromium', () => {
  it('with a few days of history: charts span the selected window, show every sample, the failures and a page drill-down', async (ctx) => {
    const browser = await launchChromium(ctx, 'the dashboard')
    if (!browser) return
    const t = await startTestApp({ statsCacheMs: 0 })
    try {
      const history = await seedHistory(t)
      assert.equal(t.clock.nowMs(), T0)
      const baseUrl = await listen(t)
      const { page, errors } = await openDashboard(browser, baseUrl)

      for (const hours of [48, 6, 168]) {
        if (hours !== 48) await selectWindow(page, hours)
        const stats = (await page.evaluate(
          () => (globalThis as unknown as DashboardWindow).recrawlDashboard!.stats,
        )) as Stats
        assert.equal(stats.windowHours, hours)
        assert.equal(stats.windowEnd, iso(T0), 'the window ends at the service clock')
        const fromMs = T0 - hours * MS_PER_HOUR
        const charts = await readCharts(page, ALL_CHARTS)

        // Every time-series chart spans exactly the window: not the hours the samples cover, not the browser's now.
        for (const id of TIME_CHARTS) {
          const c = charts[id]
          assert.ok(c, `${id} was not drawn (${hours} h)`)
          assert.deepEqual([c.xMin, c.xMax], [secs(fromMs), secs(T0)], `${id} x range (${hours} h)`)
          assert.ok(
            c.series.some((s) => s.visible.length > 0 && s.pixels > 0),
            `${id} drew nothing (${hours} h): ${JSON.stringify(c.series.map((s) => [s.label, s.visible.length, s.pixels]))}`,
          )
        }

        // Every stored sample in the window is a point of the freshness line (bucketed as the API says).
        const bucketMs = stats.series.bucketSeconds * 1000
        const buckets = new Set(history.samplesAtMs.filter((ms) => ms > fromMs).map((ms) => Math.floor(ms / bucketMs)))
        const freshness = charts['chart-freshness']!
        assert.equal(series(freshness, 'sampled').visible.length, buckets.size, `samples in the ${hours} h window`)
        assert.equal(series(freshness, 'sampled').outside, 0)
        assert.equal(
          series(freshness, 'optimiser run').visible.length,
          RUNS_AT_MS.filter((ms) => ms > fromMs).length,
          `runs in the ${hours} h window`,
        )
        for (const label of ['budget', 'planned Σρ', 'crawled (last hour × 24)']) {
          assert.equal(series(charts['chart-budget']!, label).visible.length, buckets.size, `${label} (${hours} h)`)
        }
        for (const label of ['overdue pages', 'oldest overdue (h)']) {
          assert.equal(series(charts['chart-overdue']!, label).visible.length, buckets.size, `${label} (${hours} h)`)
        }
        if (hours === 48) {
          // The hour without samples breaks the lines: a null between the samples around it.
          assert.equal(series(freshness, 'sampled').nulls, 1)
          assert.ok(series(freshness, 'sampled').markers, '32 samples get point markers')
        }

        // Crawls per hour by status class: every crawl of the window, in its class. The window ends on the hour, so
        // the current hour holds only the crawls at its very start: drawn apart, dashed, as a rate over a minute
        // (its elapsed time, at least a minute), not as a full hour that would read as a drop.
        const expected = classCounts(history, fromMs, T0)
        const current = classCounts(history, T0 - 1, T0)
        const fetches = charts['chart-fetches']!
        for (const [cls, label] of [
          ['2xx', '2xx'],
          ['3xx', '3xx'],
          ['4xx', '4xx'],
          ['5xx', '5xx'],
        ] as const) {
          const n = expected.get(cls) ?? 0
          if (n === 0 && cls !== '2xx') {
            assert.ok(
              !fetches.series.some((s) => s.label === label),
              `${label} is shown only when reported (${hours} h)`,
            )
            continue
          }
          const now = current.get(cls) ?? 0
          assert.equal(
            sumY(series(fetches, label)),
            n - now,
            `${label} crawls in the full hours of the ${hours} h window`,
          )
          assert.deepEqual(
            series(fetches, `${label}: current hour so far (partial, per elapsed time)`).visible,
            [[secs(T0), (now * 3600) / 60]],
            `${label}: the current hour (${hours} h)`,
          )
          assert.equal(series(fetches, label).outside, 0)
          if (n > 0) assert.ok(series(fetches, label).pixels > 0, `${label} drawn (${hours} h)`)
        }
        // The failures table names the hosts, statuses and counts of the window.
        const rows = (await page.locator('#failures-table tbody tr').allInnerTexts()).map((r) =>
          r.split('\t').slice(0, 4),
        )
        assert.deepEqual(rows, expectedFailures(history, fromMs, T0), `failures table (${hours} h)`)
        if (hours >= 48)
          assert.ok(
            ['404', '503'].every((status) => rows.some((r) => r[1] === status)),
            'the seeded failures are in the window',
          )
        const failed = history.crawls.filter((c) => c.httpStatus >= 400 && c.atMs > fromMs).length
        if (hours === 48) {
          assert.ok(
            (await page.locator('#tiles').innerText()).includes(`${failed.toLocaleString('en')} · `),
            `the tile counts ${failed} failed fetches`,
          )
          await screenshot(page, 'dashboard.png')
        }
      }

      // Histograms, tables and tiles.
      const charts = (await page.evaluate(
        () => (globalThis as unknown as DashboardWindow).recrawlDashboard!.charts,
      )) as Record<string, { points: number }>
      for (const id of ['chart-change-rates', 'chart-crawl-rates'])
        assert.ok((charts[id]?.points ?? 0) > 0, `${id} has no data`)
      assert.equal(await page.locator('#runs-table tbody tr').count(), RUNS_AT_MS.length)
      assert.match((await page.locator('#tiles').innerText()).replace(/\s+/g, ' '), new RegExp(`${PAGES} pages`))

      // Drill-down into the most crawled page of the host that had the outage: its own time range.
      const ofHost = history.crawls.filter((c) => new URL(c.url).host === OUTAGE.host)
      const perUrl = new Map<string, number>()
      for (const c of ofHost) perUrl.set(c.url, (perUrl.get(c.url) ?? 0) + 1)
      const url = [...perUrl].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0]
      const crawls = history.crawls.filter((c) => c.url === url)
      await page.fill('#page-url', url)
      await page.click('#page-form button[type=submit]')
      await page.waitForFunction(
        () => (globalThis as unknown as DashboardWindow).recrawlDashboard?.page !== null,
        null,
        { timeout: 10_000 },
      )
      const drilled = (await page.evaluate(
        () => (globalThis as unknown as DashboardWindow).recrawlDashboard!.page,
      )) as {
        url: string
        observations: number
        estimators: number
      }
      assert.equal(drilled.url, url)
      assert.equal(drilled.observations, crawls.length)
      const timeline = (await readCharts(page, ['chart-timeline']))['chart-timeline']!
      const firstS = secs(crawls[0]!.atMs)
      const lastS = secs(crawls.at(-1)!.atMs)
      const pad = Math.max(3600, (lastS - firstS) * 0.03)
      assert.deepEqual(
        [timeline.xMin, timeline.xMax],
        [firstS - pad, lastS + pad],
        'the timeline spans its observations',
      )
      assert.equal(
        timeline.series.reduce((n, s) => n + s.visible.length + s.outside, 0),
        crawls.length,
      )
      assert.equal(
        timeline.series.reduce((n, s) => n + s.outside, 0),
        0,
      )
      assert.equal(series(timeline, 'failed fetch').visible.length, crawls.filter((c) => c.httpStatus === 503).length)
      assert.ok(series(timeline, 'failed fetch').pixels > 0)
      const statuses = await page.locator('#observations-table tbody tr td:nth-child(3)').allInnerTexts()
      assert.ok(statuses.includes('503'), 'the 503s are listed with the page')
      const estimatorNames = await page.locator('#estimators-table tbody tr td:first-child').allInnerTexts()
      for (const name of ['naive', 'lln', 'sa', 'mle', 'mleExact'])
        assert.ok(estimatorNames.includes(name), `estimator ${name} missing: ${estimatorNames.join(', ')}`)
      // Its update distribution: the age CDF G_U drawn, and the Poisson verdict in words.
      const estimates = (
        await t.app.inject({
          method: 'GET',
          url: `/v1/pages/${(await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })).json().id}/estimates`,
        })
      ).json()
      if (estimates.updateDistribution !== null) {
        const distribution = (await readCharts(page, ['chart-distribution']))['chart-distribution']!
        const ages = distribution.series.find((s) => s.label.startsWith('age G_U'))!
        assert.equal(ages.visible.length, estimates.updateDistribution.ageCdf.length)
        assert.ok(ages.pixels > 0, 'G_U drawn')
        assert.match(await page.locator('#distribution-note').innerText(), /Poisson/)
      }

      await screenshot(page, 'dashboard-page.png')
      assert.deepEqual(errors, [])
    } finally {
      await browser.close()
      await t.close()
    }
  })

  it('with a single sample: every chart shows it on an axis of the window, and a single crawl on an axis around it', async (ctx) => {
    const browser = await launchChromium(ctx, 'the dashboard')
    if (!browser) return
    const t = await startTestApp({ statsCacheMs: 0 })
    try {
      // Two pages registered three hours ago; one crawl of one of them, which failed (503).
      t.clock.setMs(T0 - 3 * MS_PER_HOUR)
      const put = await t.app.inject({
        method: 'PUT',
        url: '/v1/pages',
        payload: { pages: [{ url: 'https://one.example/a' }, { url: 'https://one.example/b' }] },
      })
      assert.equal(put.statusCode, 200, put.body)
      assert.equal(
        (await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 50 } })).statusCode,
        200,
      )
      const crawledAtMs = T0 - 2 * MS_PER_HOUR
      t.clock.setMs(crawledAtMs)
      const report = await t.app.inject({
        method: 'POST',
        url: '/v1/observations',
        payload: { observations: [{ url: 'https://one.example/a', crawledAt: iso(crawledAtMs), httpStatus: 503 }] },
      })
      assert.equal(report.json().accepted, 1, report.body)
      t.clock.setMs(T0)
      const baseUrl = await listen(t)
      const { page, errors } = await openDashboard(
        browser,
        baseUrl,
        `#page=${encodeURIComponent('https://one.example/a')}`,
      )
      await page.waitForFunction(
        () => (globalThis as unknown as DashboardWindow).recrawlDashboard?.page !== null,
        null,
        { timeout: 10_000 },
      )
      const stats = (await page.evaluate(
        () => (globalThis as unknown as DashboardWindow).recrawlDashboard!.stats,
      )) as Stats
      assert.equal(stats.series.points.length, 1, 'one sample: the one the dashboard took')

      const charts = await readCharts(page, [...TIME_CHARTS, 'chart-timeline'])
      for (const id of TIME_CHARTS) {
        const c = charts[id]
        assert.ok(c, `${id} was not drawn`)
        assert.deepEqual([c.xMin, c.xMax], [secs(T0 - 48 * MS_PER_HOUR), secs(T0)], `${id} spans the 48 h window`)
      }
      // Each sampled series: its one point inside the axes, with a marker, drawn in its colour.
      for (const [id, labels] of [
        ['chart-freshness', ['sampled']],
        ['chart-budget', ['budget', 'planned Σρ', 'crawled (last hour × 24)']],
        ['chart-overdue', ['overdue pages', 'oldest overdue (h)']],
      ] as const) {
        for (const label of labels) {
          const s = series(charts[id]!, label)
          assert.deepEqual(
            s.visible.map(([x]) => x),
            [secs(T0)],
            `${id} ${label}`,
          )
          assert.ok(s.markers, `${id} ${label} has a marker`)
          assert.ok(s.pixels >= 3, `${id} ${label} drew ${s.pixels} pixels`)
        }
      }
      assert.equal(series(charts['chart-budget']!, 'budget').visible[0]![1], 50)
      assert.equal(sumY(series(charts['chart-budget']!, 'crawled per hour × 24')), 24)
      // The 503 is in the hourly chart and in the failures table.
      assert.equal(sumY(series(charts['chart-fetches']!, '5xx')), 1)
      assert.equal(sumY(series(charts['chart-fetches']!, '2xx')), 0)
      assert.ok(series(charts['chart-fetches']!, '5xx').pixels > 0)
      assert.deepEqual(
        (await page.locator('#failures-table tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(0, 4)),
        [['one.example', '503', '1', '1']],
      )
      // The page timeline: one crawl, an axis of an hour either side of it (not years).
      const timeline = charts['chart-timeline']!
      assert.deepEqual([timeline.xMin, timeline.xMax], [secs(crawledAtMs) - 3600, secs(crawledAtMs) + 3600])
      assert.deepEqual(series(timeline, 'failed fetch').visible, [[secs(crawledAtMs), 0.5]])
      assert.ok(series(timeline, 'failed fetch').pixels >= 3)

      await screenshot(page, 'dashboard-single-sample.png')
      assert.deepEqual(errors, [])
    } finally {
      await browser.close()
      await t.close()
    }
  })
})
