/**
 * The budget is spent evenly (docs/api.md "Never more than the budget"): a lease-driven fleet on a simulated
 * clock, fetching each page some time after it was handed out (the fleet lag), gets the budget's hourly share
 * every hour, from right after a bulk registration on and across optimiser runs, and reports crawls worth the
 * budget every day, without crawling a page twice in quick succession.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../../src/math/units.ts'

interface FleetRun {
  handedOutPerHour: number[]
  crawledPerDay: number[]
  budgetCrawlsPerDay: number
  /** Shortest time between two crawls of one page, in minutes. */
  shortestGapMinutes: number
}

/**
 * `pages` pages with change rates log-uniform over [0.05, 5] a day, registered at once at T0 with a budget of
 * one crawl per page per day; the fleet asks for work every `stepMinutes` and fetches each page `lagMs()` after
 * it got it, reporting the crawl with its lease. The optimiser runs every 6 hours.
 */
async function runFleet(
  t: TestApp,
  options: { pages: number; days: number; stepMinutes: number; lagMs: () => number; seed: number },
): Promise<FleetRun> {
  const random = createRandom(options.seed)
  const n = options.pages
  const budgetCrawlsPerDay = n
  const urls = Array.from({ length: n }, (_, i) => `https://budget-${i % 40}.example/p/${i}`)
  const changesPerDay = urls.map(() => 0.05 * Math.exp(random.next() * Math.log(100)))
  t.clock.setMs(T0)
  const settings = await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay } })
  assert.equal(settings.statusCode, 200, settings.body)
  for (let from = 0; from < n; from += 1000) {
    const put = await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: urls.slice(from, from + 1000).map((url) => ({ url })) },
    })
    assert.equal(put.statusCode, 200, put.body)
  }
  const index = new Map(urls.map((u, i) => [u, i]))
  const lastCrawlMs = new Array<number | null>(n).fill(null)
  let shortestGapMs = Infinity
  const pending: { atMs: number; i: number; leaseId: string }[] = []
  const hours = Math.round(options.days * 24)
  const handedOutPerHour = new Array<number>(hours).fill(0)
  const crawledPerDay = new Array<number>(Math.ceil(options.days)).fill(0)
  const endMs = T0 + options.days * MS_PER_DAY
  let nextOptimizeMs = T0
  for (let nowMs = T0; nowMs < endMs; nowMs += options.stepMinutes * MS_PER_MINUTE) {
    t.clock.setMs(nowMs)
    if (nowMs >= nextOptimizeMs) {
      const run = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
      assert.equal(run.statusCode, 200, run.body)
      nextOptimizeMs += 6 * MS_PER_HOUR
    }
    // Report what has been fetched by now, in crawl order.
    pending.sort((a, b) => a.atMs - b.atMs)
    const notYet = pending.findIndex((p) => p.atMs > nowMs)
    const due = pending.splice(0, notYet === -1 ? pending.length : notYet)
    if (due.length > 0) {
      const observations = due.map(({ atMs, i, leaseId }) => {
        const last = lastCrawlMs[i] ?? null
        if (last !== null) shortestGapMs = Math.min(shortestGapMs, atMs - last)
        const changed =
          last === null ? true : random.next() < 1 - Math.exp((-changesPerDay[i]! * (atMs - last)) / MS_PER_DAY)
        lastCrawlMs[i] = atMs
        crawledPerDay[Math.floor((atMs - T0) / MS_PER_DAY)]!++
        return { url: urls[i]!, crawledAt: iso(atMs), changed, leaseId }
      })
      const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().accepted, observations.length)
    }
    for (;;) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/leases',
        payload: { worker: 'fleet', limit: 1000, leaseSeconds: 6 * 3600 },
      })
      assert.equal(res.statusCode, 200, res.body)
      const lease = res.json() as { leaseId: string; pages: { url: string }[] }
      for (const p of lease.pages) {
        const lagMs = Math.max(0, options.lagMs())
        const atMs = Math.min(nowMs + lagMs, endMs - 1)
        pending.push({ atMs, i: index.get(p.url)!, leaseId: lease.leaseId })
      }
      handedOutPerHour[Math.floor((nowMs - T0) / MS_PER_HOUR)]! += lease.pages.length
      if (lease.pages.length < 1000) break
    }
  }
  return { handedOutPerHour, crawledPerDay, budgetCrawlsPerDay, shortestGapMinutes: shortestGapMs / MS_PER_MINUTE }
}

const LAGS: [string, (random: () => number) => number][] = [
  ['no lag', () => 0],
  ['a quarter hour', () => 15 * MS_PER_MINUTE],
  ['an hour', () => MS_PER_HOUR],
  ['0 to 3 hours', (r) => r() * 3 * MS_PER_HOUR],
]

describe('budget use under fleet lag', () => {
  for (const [name, lag] of LAGS) {
    it(`lag ${name}: every hour hands out the budget's hourly share ±10 %, every day uses 0.97–1.02 of the budget`, async (ctx) => {
      const t = await testAppFor(ctx)
      const lagRandom = createRandom(7)
      const run = await runFleet(t, {
        pages: 1200,
        days: 3,
        stepMinutes: 5,
        lagMs: () => lag(() => lagRandom.next()),
        seed: 11,
      })
      const hourlyShare = run.budgetCrawlsPerDay / 24
      const perHour = run.handedOutPerHour.map((c) => c / hourlyShare)
      for (const [h, use] of perHour.entries())
        assert.ok(use >= 0.9 && use <= 1.1, `hour ${h}: ${use.toFixed(3)} of the hourly share`)
      // Day 0 loses the lag itself (crawls handed out in its last hours are fetched on day 1).
      for (const [d, crawls] of run.crawledPerDay.entries()) {
        if (d === 0) continue
        const use = crawls / run.budgetCrawlsPerDay
        assert.ok(use >= 0.97 && use <= 1.02, `day ${d}: ${use.toFixed(3)} of the budget`)
      }
    })
  }
})
