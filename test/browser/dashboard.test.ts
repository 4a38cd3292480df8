import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { createRandom } from '../../src/math/random.ts'
import { DAY_MS, T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'

/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the service
 * on a real port, after a simulated week of crawling: crawlers take leases every two hours and
 * report what they saw, with true change rates from 0.05 to 20 per day; the optimiser runs daily.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
const HOUR_MS = 3_600_000
const STEP_MS = 2 * HOUR_MS
const DAYS = 7
const PAGES = 48

let t: TestApp
let baseUrl = ''
let drillUrl = ''

async function seedWeek(): Promise<void> {
  const random = createRandom(2024)
  const start = T0 - DAYS * DAY_MS
  t.clock.setMs(start)
  const pages = Array.from({ length: PAGES }, (_, i) => ({
    url: `https://site${i % 6}.example/article/${i}`,
    importance: 1 + (i % 4),
    changesPerDay: 0.05 * 400 ** (i / (PAGES - 1)), // 0.05 … 20 per day
  }))
  const byUrl = new Map(pages.map((p) => [p.url, p]))
  const put = await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: pages.map(({ url, importance }) => ({ url, importance })) } })
  assert.equal(put.statusCode, 200, put.body)
  assert.equal((await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 120, minCrawlsPerDay: 0.2 } })).statusCode, 200)

  const lastCrawlMs = new Map<string, number>()
  for (let now = start; now <= T0; now += STEP_MS) {
    t.clock.setMs(now)
    const lease = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'sim', limit: 200, leaseSeconds: 3600 } })
    assert.equal(lease.statusCode, 200, lease.body)
    const grant = lease.json() as { leaseId: string; pages: { url: string }[] }
    const observations = grant.pages.map((p, k) => {
      const crawledAtMs = now - k * 1000
      const previous = lastCrawlMs.get(p.url)
      lastCrawlMs.set(p.url, crawledAtMs)
      const item: Record<string, unknown> = { url: p.url, crawledAt: iso(crawledAtMs), leaseId: grant.leaseId, httpStatus: 200 }
      if (previous !== undefined) {
        const days = (crawledAtMs - previous) / DAY_MS
        item.changed = random.next() < 1 - Math.exp(-byUrl.get(p.url)!.changesPerDay * days)
      }
      return item
    })
    if (observations.length > 0) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
      assert.equal(res.statusCode, 200, res.body)
    }
    if ((now - start) % DAY_MS === 0 || now + STEP_MS > T0) {
      const run = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
      assert.equal(run.statusCode, 200, run.body)
    }
    // Taking a snapshot records a sample of the time series (once per minute of the clock at most).
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/stats' })).statusCode, 200)
  }
  const counts = [...lastCrawlMs.keys()].map(async (url) => {
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })).json()
    return { url, crawls: page.crawls as number }
  })
  const ranked = (await Promise.all(counts)).sort((a, b) => b.crawls - a.crawls)
  drillUrl = ranked[0]!.url
  assert.ok(ranked[0]!.crawls >= 10, `the busiest page has ${ranked[0]!.crawls} crawls`)
}

before(async () => {
  if (!existsSync(CHROMIUM)) return
  t = await startTestApp({ statsCacheMs: 0 })
  await seedWeek()
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
})
after(async () => {
  await t?.close()
})

describe('dashboard in chromium', () => {
  it('renders every chart with data, the runs table, and a page drill-down', async (ctx) => {
    if (!existsSync(CHROMIUM)) {
      const message = `SKIPPED: no chromium at ${CHROMIUM} (install it: apt-get install -y chromium, or set CHROMIUM_PATH); the dashboard was NOT tested in a browser`
      console.warn(`\n*** ${message} ***\n`)
      ctx.skip(message)
      return
    }
    const { chromium } = await import('playwright-core')
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
      const consoleErrors: string[] = []
      page.on('pageerror', (err) => consoleErrors.push(String(err)))
      page.on('console', (msg) => {
        if (msg.type() === 'error') consoleErrors.push(msg.text())
      })
      await page.goto(`${baseUrl}/`)
      await page.waitForFunction(() => (globalThis as any).recrawlDashboard?.ready === true, null, { timeout: 15_000 })

      const charts = (await page.evaluate(() => (globalThis as any).recrawlDashboard.charts)) as Record<string, { points: number }>
      for (const id of ['chart-freshness', 'chart-budget', 'chart-overdue', 'chart-change-rates', 'chart-crawl-rates']) {
        assert.ok((charts[id]?.points ?? 0) > 0, `${id} has no data: ${JSON.stringify(charts[id])}`)
        assert.equal(await page.locator(`#${id} canvas`).count(), 1, `${id} drew no canvas`)
        assert.equal(await page.locator(`#${id}`).getAttribute('data-points'), String(charts[id]!.points))
      }
      // The default 48 h window: a sample every two hours of clock time (24) plus the runs in it.
      assert.ok(charts['chart-freshness']!.points >= 24, `freshness points ${charts['chart-freshness']!.points}`)
      // The whole week: 85 samples.
      const refreshes = (await page.evaluate(() => (globalThis as any).recrawlDashboard.refreshes)) as number
      await page.selectOption('#window-hours', '168')
      await page.waitForFunction((n) => (globalThis as any).recrawlDashboard.refreshes > n, refreshes, { timeout: 10_000 })
      const week = (await page.evaluate(() => (globalThis as any).recrawlDashboard.charts)) as Record<string, { points: number }>
      assert.ok(week['chart-freshness']!.points >= 7 * 12, `freshness points over the week ${week['chart-freshness']!.points}`)
      const runRows = await page.locator('#runs-table tbody tr').count()
      assert.equal(runRows, 8)
      assert.ok((await page.locator('#hosts-table tbody tr').count()) >= 0)
      assert.match((await page.locator('#tiles').innerText()).replace(/\s+/g, ' '), new RegExp(`${PAGES} pages`))

      // Drill-down by URL.
      await page.fill('#page-url', drillUrl)
      await page.click('#page-form button[type=submit]')
      await page.waitForFunction(() => (globalThis as any).recrawlDashboard?.page !== null, null, { timeout: 10_000 })
      const drilled = (await page.evaluate(() => (globalThis as any).recrawlDashboard.page)) as { url: string; observations: number; estimators: number }
      assert.equal(drilled.url, drillUrl)
      assert.ok(drilled.observations >= 10)
      assert.equal(await page.locator('#observations-table tbody tr').count(), Math.min(200, drilled.observations))
      const estimatorNames = await page.locator('#estimators-table tbody tr td:first-child').allInnerTexts()
      for (const name of ['naive', 'lln', 'sa', 'mle', 'mleExact']) assert.ok(estimatorNames.includes(name), `estimator ${name} missing: ${estimatorNames.join(', ')}`)
      const after = (await page.evaluate(() => (globalThis as any).recrawlDashboard.charts)) as Record<string, { points: number }>
      assert.equal(after['chart-timeline']!.points, drilled.observations)
      assert.equal(await page.locator('#chart-timeline canvas').count(), 1)
      const estimates = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(drillUrl)}` })).json()
      const dist = (await t.app.inject({ method: 'GET', url: `/v1/pages/${estimates.id}/estimates` })).json().updateDistribution
      if (dist !== null) {
        assert.ok(after['chart-distribution']!.points >= dist.points.length, 'the update-interval distribution is drawn')
        assert.match(await page.locator('#distribution-method').innerText(), new RegExp(dist.method))
      }

      await mkdir(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('dashboard.png', ARTIFACTS).pathname, fullPage: true })
      assert.deepEqual(consoleErrors, [])
    } finally {
      await browser.close()
    }
  })
})
