/**
 * The age-law shape fit (src/math/estimators/renewalFit.ts, docs/math.md 3.5) and mleAdaptive on bursty
 * pages (adaptive.ts, docs/math.md 1.5): seeded simulations of Poisson, Pareto and Weibull updates.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SLOW } from '../../helpers/slow.ts'
import {
  allChangedEvidenceNats,
  emptyEstimatorState,
  estimateOf,
  rateChangesDetected,
  readEstimatorState,
  renewalParameters,
  stepEstimators,
  type EstimatorState,
} from '../../../src/math/estimators/index.ts'
import { gamma } from '../../../src/math/renewal/gamma.ts'
import { createRandom, type Random } from '../../../src/math/random.ts'
import { SETTINGS } from './estimatorsHelpers.ts'

type Family = { kind: 'poisson' } | { kind: 'pareto'; alpha: number } | { kind: 'weibull'; k: number }

/** Inter-update times with mean 1 day. */
function gaps(family: Family, random: Random): () => number {
  if (family.kind === 'poisson') return () => random.exponential(1)
  if (family.kind === 'pareto') {
    const xm = (family.alpha - 1) / family.alpha
    return () => xm * Math.pow(1 - random.next(), -1 / family.alpha)
  }
  const theta = 1 / gamma(1 + 1 / family.k)
  return () => theta * Math.pow(-Math.log1p(-random.next()), 1 / family.k)
}

/**
 * One page crawled `crawls` times every `intervalDays` (× a uniform jitter of ±`jitter`), its changes a
 * renewal process in equilibrium; Last-Modified reported when `ages`.
 */
function crawlPage(
  family: Family,
  random: Random,
  options: { crawls: number; intervalDays: number; jitter?: number; ages?: boolean },
): EstimatorState {
  const gap = gaps(family, random)
  let next = -200
  while (next < 0) next += gap()
  let last = Number.NEGATIVE_INFINITY
  let state = emptyEstimatorState()
  let t = 0
  for (let k = 0; k < options.crawls; k++) {
    const days = options.intervalDays * (1 + (options.jitter ?? 0) * (2 * random.next() - 1))
    t += days
    let changed = false
    while (next <= t) {
      changed = true
      last = next
      next += gap()
    }
    const ageDays = options.ages && last > Number.NEGATIVE_INFINITY ? t - last : null
    state = stepEstimators(state, { intervalDays: days, changed, ageDays }, SETTINGS)
  }
  return state
}

const shapeOf = (state: EstimatorState) => readEstimatorState(state).ageShape

test('shape fit: Poisson pages stay Poisson: 0 of 200 with Last-Modified, at most 2 % without, at constant and varying intervals', (t) => {
  const random = createRandom(21)
  const shaped = { ages: 0, blind: 0 }
  for (let page = 0; page < 400; page++) {
    const ages = page % 4 < 2
    const state = crawlPage({ kind: 'poisson' }, random, {
      crawls: 200,
      intervalDays: [0.3, 1, 2.5][page % 3]!,
      jitter: page % 2 === 0 ? 0 : 0.6,
      ages,
    })
    if (shapeOf(state) !== null) shaped[ages ? 'ages' : 'blind']++
  }
  t.diagnostic(`Poisson pages given a shape: ${shaped.ages} of 200 with Last-Modified, ${shaped.blind} of 200 without`)
  assert.equal(shaped.ages, 0)
  assert.ok(shaped.blind <= 4, `${shaped.blind} of 200`)
})

test('shape fit without Last-Modified, at one constant interval: most Pareto (α = 1.5) and Weibull (k = 0.5) pages get a heavy-tailed shape from 280 daily crawls', (t) => {
  const random = createRandom(22)
  for (const family of [
    { kind: 'pareto', alpha: 1.5 },
    { kind: 'weibull', k: 0.5 },
  ] as const) {
    let heavy = 0
    let shaped = 0
    for (let page = 0; page < 60; page++) {
      const shape = shapeOf(crawlPage(family, random, { crawls: 280, intervalDays: 1 }))
      if (shape !== null) shaped++
      if (shape !== null && shape <= 2) heavy++
    }
    t.diagnostic(`${JSON.stringify(family)}: ${shaped} of 60 shaped, ${heavy} with β ≤ 2`)
    assert.ok(heavy >= 45, `${JSON.stringify(family)}: ${heavy} of 60`)
  }
})

test('shape fit: with Last-Modified, most Pareto (α = 1.5) pages get a heavy-tailed shape (β ≤ 2)', () => {
  const random = createRandom(23)
  let heavy = 0
  for (let page = 0; page < 100; page++) {
    const shape = shapeOf(
      crawlPage({ kind: 'pareto', alpha: 1.5 }, random, { crawls: 300, intervalDays: 1, ages: true }),
    )
    if (shape !== null && shape <= 2) heavy++
  }
  assert.ok(heavy >= 75, `${heavy} of 100`)
})

test('renewalParameters: Poisson pages keep their rate; a shaped page scales it by the fit, and follows the estimate', () => {
  const poisson = crawlPage({ kind: 'poisson' }, createRandom(24), { crawls: 100, intervalDays: 1, ages: true })
  assert.deepEqual(renewalParameters(poisson, 0.7), { ageShape: Number.POSITIVE_INFINITY, changesPerDay: 0.7 })
  assert.deepEqual(renewalParameters(null, 0.7), { ageShape: Number.POSITIVE_INFINITY, changesPerDay: 0.7 })
  const random = createRandom(25)
  let state = crawlPage({ kind: 'pareto', alpha: 1.5 }, random, { crawls: 300, intervalDays: 1, ages: true })
  for (let k = 0; shapeOf(state) === null && k < 20; k++)
    state = crawlPage({ kind: 'pareto', alpha: 1.5 }, random, { crawls: 300, intervalDays: 1, ages: true })
  const s = readEstimatorState(state)
  assert.ok(s.ageShape !== null)
  const a = renewalParameters(state, 0.5)
  const b = renewalParameters(state, 1)
  assert.equal(a.ageShape, s.ageShape)
  assert.ok(Math.abs(b.changesPerDay / a.changesPerDay - 2) < 1e-12)
  assert.ok(Math.abs(a.changesPerDay - 0.5 * s.ageShapeRateRatio) < 1e-12)
})

test('mleAdaptive: one long unchanged gap moves the estimate to the whole-history MLE, not to a new segment of one interval', () => {
  // 100 daily crawls of a page changing about 0.78 times a day (the segment's estimate), then 60 days unchanged.
  let state = emptyEstimatorState()
  const random = createRandom(26)
  for (let k = 0; k < 100; k++)
    state = stepEstimators(state, { intervalDays: 1, changed: random.next() < 0.54, ageDays: null }, SETTINGS)
  const before = estimateOf(state, 'mleAdaptive', SETTINGS)!
  state = stepEstimators(state, { intervalDays: 60, changed: false, ageDays: null }, SETTINGS)
  const after = estimateOf(state, 'mleAdaptive', SETTINGS)!
  const whole = estimateOf(state, 'mle', SETTINGS)!
  assert.equal(rateChangesDetected(state), 0)
  assert.ok(Math.abs(after / whole - 1) < 1e-9, `mleAdaptive ${after} vs whole-history MLE ${whole}`)
  assert.ok(after > before / 3, `${before} → ${after}`)
})

/** Median and 90th percentile of |Δ̂ − 1| (mean interval 1 day) over pages, for both estimators, and restarts per page. */
function errors(
  family: Family,
  intervalDays: number,
  seed: number,
): { mle: [number, number]; adaptive: [number, number]; restarts: number } {
  const random = createRandom(seed)
  const mle: number[] = []
  const adaptive: number[] = []
  let restarts = 0
  const pages = 150
  for (let page = 0; page < pages; page++) {
    const state = crawlPage(family, random, { crawls: 200, intervalDays })
    mle.push(Math.abs(estimateOf(state, 'mle', SETTINGS)! - 1))
    adaptive.push(Math.abs(estimateOf(state, 'mleAdaptive', SETTINGS)! - 1))
    restarts += rateChangesDetected(state)
  }
  const quantiles = (v: number[]): [number, number] => {
    v.sort((a, b) => a - b)
    return [v[Math.floor(0.5 * v.length)]!, v[Math.floor(0.9 * v.length)]!]
  }
  return { mle: quantiles(mle), adaptive: quantiles(adaptive), restarts: restarts / pages }
}

test(
  'mleAdaptive on renewal pages with a moderate tail (Pareto α = 3, Weibull k = 0.65, 0.8): median and p90 errors within 10 % of the whole-history MLE',
  SLOW,
  (t) => {
    const families: Family[] = [
      { kind: 'pareto', alpha: 3 },
      { kind: 'weibull', k: 0.65 },
      { kind: 'weibull', k: 0.8 },
    ]
    let seed = 100
    for (const family of families) {
      for (const intervalDays of [0.2, 0.5, 1, 2, 3]) {
        const e = errors(family, intervalDays, seed++)
        const label = `${JSON.stringify(family)} τ=${intervalDays}`
        assert.ok(e.adaptive[0] <= e.mle[0] * 1.1 + 0.01, `${label}: median ${e.adaptive[0]} vs MLE ${e.mle[0]}`)
        assert.ok(e.adaptive[1] <= e.mle[1] * 1.1 + 0.01, `${label}: p90 ${e.adaptive[1]} vs MLE ${e.mle[1]}`)
        t.diagnostic(
          `${label}: MLE ${e.mle.map((x) => x.toFixed(3)).join('/')}, mleAdaptive ${e.adaptive.map((x) => x.toFixed(3)).join('/')}, restarts/page ${e.restarts.toFixed(2)}`,
        )
      }
    }
  },
)

test('noise evidence: −Σ ln(1 − e^{−λτ}) while every interval changed, 0 after one that did not; it bounds the false positives of Poisson pages at λ', () => {
  const intervals = [1 / 24, 0.5, 2, 1 / 24, 1 / 12]
  let state = emptyEstimatorState()
  for (const days of intervals)
    state = stepEstimators(state, { intervalDays: days, changed: true, ageDays: null }, SETTINGS)
  const expected = intervals.reduce((s, days) => s - Math.log(-Math.expm1(-24 * days)), 0)
  for (const name of ['mle', 'mleAdaptive'] as const)
    assert.ok(Math.abs(allChangedEvidenceNats(state, name, 24) - expected) < 1e-9 * expected, name)
  const quiet = stepEstimators(state, { intervalDays: 1 / 24, changed: false, ageDays: null }, SETTINGS)
  assert.equal(allChangedEvidenceNats(quiet, 'mle', 24), 0)
  // Eight 3-hour intervals, then probes of six minutes, all changed: mleAdaptive starts a new segment at the
  // probes, and the page keeps the evidence of its whole life, as it changed at every crawl of it.
  const probed = [...Array(8).fill(1 / 8), ...Array(8).fill(0.004)] as number[]
  let probedState = emptyEstimatorState()
  for (const days of probed)
    probedState = stepEstimators(probedState, { intervalDays: days, changed: true, ageDays: null }, SETTINGS)
  assert.ok(rateChangesDetected(probedState) >= 1)
  const whole = probed.reduce((s, days) => s - Math.log(-Math.expm1(-24 * days)), 0)
  assert.ok(Math.abs(allChangedEvidenceNats(probedState, 'mleAdaptive', 24) - whole) < 1e-9 * whole)
  // Poisson pages at exactly λ, their next interval halved after every change down to an hour (as probes do):
  // the share whose evidence ever reaches ln 20 is at most 1/20.
  const random = createRandom(11)
  const pages = 4000
  let flagged = 0
  for (let p = 0; p < pages; p++) {
    let s = emptyEstimatorState()
    let days = 2
    for (let k = 0; k < 40; k++) {
      const changed = random.next() < -Math.expm1(-24 * days)
      s = stepEstimators(s, { intervalDays: days, changed, ageDays: null }, SETTINGS)
      if (!changed) break
      if (allChangedEvidenceNats(s, 'mle', 24) >= Math.log(20)) {
        flagged++
        break
      }
      days = Math.max(1 / 24, days / 2)
    }
  }
  // Binomial(4000, ≤ 0.05): the bound plus three standard deviations.
  assert.ok(flagged / pages <= 0.05 + 3 * Math.sqrt((0.05 * 0.95) / pages), `${flagged} of ${pages}`)
  assert.ok(flagged > 0, 'the bound is approached at λ itself')
})
