/**
 * docs/math.md 1.4: which estimators are consistent under which crawl schedule. Poisson changes with
 * known Δ; every figure is the mean over 20 seeded runs of 2000 crawls.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import { currentEstimates, type EstimatorName } from '../../../src/math/estimators/index.ts'
import {
  applyAll,
  assertClose,
  mean,
  periodicCrawling,
  poissonCrawling,
  SETTINGS,
  simulateCrawls,
  type IntervalSampler,
} from './estimatorsHelpers.ts'

const RUNS = 20
const CRAWLS = 2000

function meanEstimates(changesPerDay: number, sampler: IntervalSampler, seed: number): Record<EstimatorName, number> {
  const sums: Partial<Record<EstimatorName, number[]>> = {}
  for (let run = 0; run < RUNS; run++) {
    const observations = simulateCrawls(createRandom(seed + run), changesPerDay, sampler, CRAWLS)
    const estimates = currentEstimates(applyAll(observations), SETTINGS)
    for (const [name, value] of Object.entries(estimates) as [EstimatorName, number | null][]) {
      assert.ok(value !== null && Number.isFinite(value), name)
      ;(sums[name] ??= []).push(value)
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, mean(v)])) as Record<EstimatorName, number>
}

/** Fixed point of LLN and SA under periodic crawling with interval τ: (e^{Δτ} − 1)/τ. */
const periodicFixedPoint = (changesPerDay: number, intervalDays: number) =>
  Math.expm1(changesPerDay * intervalDays) / intervalDays

test('Poisson crawling, Δ = 1, p = 1: lln, sa, mle, momentMatching, lastModified within 5 %; naive → Δp/(Δ+p) (20 runs × 2000 crawls)', () => {
  const m = meanEstimates(1, poissonCrawling(1), 1000)
  for (const name of ['lln', 'sa', 'mle', 'momentMatching', 'lastModified'] as const)
    assertClose(m[name], 1, 0.05, name)
  assertClose(m.naive, 0.5, 0.05, 'naive')
  // choGm assumes regular intervals: under Poisson crawling it tends to p·ln(1 + Δ/p).
  assertClose(m.choGm, Math.log(2), 0.05, 'choGm')
})

test('Poisson crawling, Δ = 5, p = 3: lln, sa, mle, momentMatching within 5 % (20 runs × 2000 crawls)', () => {
  const m = meanEstimates(5, poissonCrawling(3), 2000)
  for (const name of ['lln', 'sa', 'mle', 'momentMatching', 'lastModified'] as const)
    assertClose(m[name], 5, 0.05, name)
})

test('periodic crawling, Δ = 1, p = 1: lln and sa → e − 1 ≈ 1.72 (within 4 %); mle, momentMatching, choGm → 1 within 5 % (20 runs × 2000 crawls)', () => {
  const m = meanEstimates(1, periodicCrawling(1), 3000)
  const biased = periodicFixedPoint(1, 1)
  assertClose(m.lln, biased, 0.04, 'lln')
  assertClose(m.sa, biased, 0.04, 'sa')
  for (const name of ['mle', 'momentMatching', 'choGm', 'lastModified'] as const) assertClose(m[name], 1, 0.05, name)
  // Naive under periodic crawling: X/T → p·(1 − e^{−Δ/p}).
  assertClose(m.naive, 1 - Math.exp(-1), 0.03, 'naive')
  assert.ok(m.lln > 1.6 && m.sa > 1.6, 'the periodic-schedule trap must show')
})

test('periodic crawling, Δ = 5, p = 3: lln and sa → 12.9 (within 5 %); mle, momentMatching, choGm → 5 within 5 % (20 runs × 2000 crawls)', () => {
  const m = meanEstimates(5, periodicCrawling(3), 4000)
  const biased = periodicFixedPoint(5, 1 / 3)
  assertClose(m.lln, biased, 0.05, 'lln')
  assertClose(m.sa, biased, 0.05, 'sa')
  for (const name of ['mle', 'momentMatching', 'choGm', 'lastModified'] as const) assertClose(m[name], 5, 0.05, name)
  assertClose(m.naive, 3 * (1 - Math.exp(-5 / 3)), 0.03, 'naive')
})

test('periodic crawling, Δ = 3, p = 0.5: interval-aware estimators stay within 5 % while lln is far off (20 runs × 2000 crawls)', () => {
  const m = meanEstimates(3, periodicCrawling(0.5), 5000)
  for (const name of ['mle', 'momentMatching', 'choGm', 'lastModified'] as const) assertClose(m[name], 3, 0.05, name)
  assert.ok(m.lln > 100, `lln ${m.lln}`)
  assert.ok(m.naive < 0.55, `naive ${m.naive}`)
})
