/**
 * The engine scores freshness exactly from known change times (docs/math.md 4). Single Poisson pages with
 * known Δ, crawled periodically or at Poisson times, must match the closed forms of docs/math.md 3.3 and 3.1.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom, type Random } from '../../../src/math/random.ts'
import { runPolicy, estimateErrors, FreshnessTracker } from '../../../src/sim/engine.ts'
import { fixedRatePolicy } from '../../../src/sim/policies.ts'
import { DueQueue } from '../../../src/sim/dueQueue.ts'
import type { Universe } from '../../../src/sim/universe.ts'
import { poissonAgeLaw } from '../../../src/math/renewal/ageLaws.ts'

/** n independent Poisson pages with the same Δ (pages average out the noise of one long run). */
function poissonPages(n: number, changesPerDay: number, horizonDays: number, random: Random, warmupDays = 0): Universe {
  const times: number[] = []
  const offsets = new Int32Array(n + 1)
  for (let i = 0; i < n; i++) {
    offsets[i] = times.length
    for (let t = random.exponential(changesPerDay); t <= horizonDays; t += random.exponential(changesPerDay))
      times.push(t)
  }
  offsets[n] = times.length
  return {
    workload: 'test',
    importanceKind: 'equal',
    pageCount: n,
    horizonDays,
    warmupDays,
    changeDays: Float64Array.from(times),
    changeOffsets: offsets,
    trueChangesPerDay: new Float64Array(n).fill(changesPerDay),
    ageLaws: Array.from({ length: n }, () => poissonAgeLaw(changesPerDay)),
    importance: new Float64Array(n).fill(1),
    budgetCrawlsPerDay: n,
    timeScale: null,
  }
}

test('periodic crawling of Poisson pages: F = (ρ/Δ)(1 − e^{−Δ/ρ}) within 0.01 (50 pages × 2000 days, ~10^5 crawls per case)', () => {
  for (const [changesPerDay, crawlsPerDay] of [
    [1, 1],
    [3, 0.5],
    [0.2, 2],
  ] as const) {
    const u = poissonPages(50, changesPerDay, 2000, createRandom(11), 10)
    const result = runPolicy(
      u,
      fixedRatePolicy('p', new Float64Array(50).fill(crawlsPerDay), 'periodic', createRandom(12)),
    )
    const x = changesPerDay / crawlsPerDay
    const expected = -Math.expm1(-x) / x
    assert.ok(
      Math.abs(result.freshness - expected) < 0.01,
      `Δ=${changesPerDay} ρ=${crawlsPerDay}: ${result.freshness} vs ${expected}`,
    )
    assert.equal(result.freshness, result.unweightedFreshness)
  }
})

test('Poisson crawling of Poisson pages: F = ρ/(ρ+Δ) within 0.01, and below the periodic value (50 pages × 2000 days)', () => {
  for (const [changesPerDay, crawlsPerDay] of [
    [1, 1],
    [3, 0.5],
  ] as const) {
    const u = poissonPages(50, changesPerDay, 2000, createRandom(21), 10)
    const result = runPolicy(
      u,
      fixedRatePolicy('p', new Float64Array(50).fill(crawlsPerDay), 'poisson', createRandom(22)),
    )
    const expected = crawlsPerDay / (crawlsPerDay + changesPerDay)
    assert.ok(
      Math.abs(result.freshness - expected) < 0.01,
      `Δ=${changesPerDay} ρ=${crawlsPerDay}: ${result.freshness} vs ${expected}`,
    )
    const x = changesPerDay / crawlsPerDay
    assert.ok(result.freshness < -Math.expm1(-x) / x)
  }
})

test('freshness bookkeeping on a hand-made page: changes at 1, 2.5; crawls at 2 and 3; window [0, 4]', () => {
  const u: Universe = {
    workload: 'hand',
    importanceKind: 'equal',
    pageCount: 1,
    horizonDays: 4,
    warmupDays: 0,
    changeDays: Float64Array.from([1, 2.5]),
    changeOffsets: Int32Array.from([0, 2]),
    trueChangesPerDay: Float64Array.from([0.5]),
    ageLaws: [poissonAgeLaw(0.5)],
    importance: Float64Array.from([1]),
    budgetCrawlsPerDay: 1,
    timeScale: null,
  }
  const tracker = new FreshnessTracker(u)
  // Copy in sync at 0, stale from 1. Crawl at 2 saw the change (age 1); fresh until 2.5.
  assert.deepEqual(tracker.crawl(0, 2), { changed: true, ageDays: 1, first: true })
  // Crawl at 3 saw the change at 2.5 (age 0.5); fresh from 3 to 4.
  assert.deepEqual(tracker.crawl(0, 3), { changed: true, ageDays: 0.5, first: false })
  const { freshness } = tracker.finish()
  // Fresh: [0,1) + [2,2.5) + [3,4) = 2.5 of 4 days.
  assert.equal(freshness, 2.5 / 4)
})

test('the fleet never exceeds R crawls per day, even when every page asks for more', () => {
  const u = poissonPages(20, 5, 30, createRandom(31))
  u.budgetCrawlsPerDay = 10
  const greedy = fixedRatePolicy('greedy', new Float64Array(20).fill(50), 'periodic', createRandom(32))
  const result = runPolicy(u, greedy, { mode: 'fleet' })
  assert.ok(result.crawls <= 10 * 30, `${result.crawls}`)
  assert.ok(result.crawls >= 10 * 30 - 2, `the fleet idles only when nothing is due: ${result.crawls}`)
})

test('due queue: pops in time order, ties by page index, and re-keys in both directions', () => {
  const q = new DueQueue(5)
  const times = [3, 1, 4, 1, 5]
  times.forEach((t, i) => q.set(i, t))
  q.set(4, 0.5)
  q.set(1, 10)
  const order: number[] = []
  for (let k = 0; k < 5; k++) {
    const page = q.peek()
    order.push(page)
    q.set(page, Number.POSITIVE_INFINITY)
  }
  assert.deepEqual(order, [4, 3, 0, 2, 1])
})

test('estimate errors: median |Δ̂−Δ|/Δ and Δ̂/Δ; a page without an estimate counts as Δ̂ = 0', () => {
  const truth = Float64Array.from([1, 2, 4, 0])
  const estimates = Float64Array.from([1.5, Number.NaN, 4, 7])
  // errors: 0.5, 1, 0 → median 0.5; ratios 1.5, 0, 1 → median 1; the Δ = 0 page is skipped.
  assert.deepEqual(estimateErrors(estimates, truth), { medianRelativeError: 0.5, medianRatio: 1 })
})
