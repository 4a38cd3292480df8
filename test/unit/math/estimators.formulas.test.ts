import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  changeClassProbabilities,
  changeCount,
  currentEstimates,
  emptyEstimatorState,
  ESTIMATOR_NAMES,
  exactMle,
  exactMomentMatching,
  intervalCount,
  observedDays,
  stepEstimators,
  type IntervalObservation,
} from '../../../src/math/estimators/index.ts'
import { applyAll, assertClose, SETTINGS } from './estimatorsHelpers.ts'

// n = 3, X = 2, T = 3.5 days.
const HISTORY: IntervalObservation[] = [
  { intervalDays: 1, changed: true, ageDays: null },
  { intervalDays: 2, changed: false, ageDays: null },
  { intervalDays: 0.5, changed: true, ageDays: null },
]
const TOLERANCE = 1e-12

test('counters: n, X and T', () => {
  const state = applyAll(HISTORY)
  assert.equal(intervalCount(state), 3)
  assert.equal(changeCount(state), 2)
  assert.equal(observedDays(state), 3.5)
})

test('every estimate is null before the first interval', () => {
  const estimates = currentEstimates(emptyEstimatorState(), SETTINGS)
  assert.deepEqual(Object.keys(estimates).sort(), [...ESTIMATOR_NAMES].sort())
  for (const name of ESTIMATOR_NAMES) assert.equal(estimates[name], null, name)
})

test('naive = X / T', () => {
  assertClose(currentEstimates(applyAll(HISTORY), SETTINGS).naive, 2 / 3.5, TOLERANCE)
})

test('lln with alpha = 1/k equals p̂·X/(n − X + 1)', () => {
  // p̂ = 3/3.5; p̂·2/(3 − 2 + 1) = 6/7.
  assertClose(currentEstimates(applyAll(HISTORY), SETTINGS).lln, 6 / 7, TOLERANCE)
})

test('lln with alpha = 1/sqrt(k) and a constant alpha', () => {
  const state = applyAll(HISTORY)
  // (6/7)·(2/3)/(1/3 + 1/√3)
  assertClose(currentEstimates(state, { ...SETTINGS, llnAlpha: '1/sqrt(k)' }).lln, 0.6274721207733233, 1e-12)
  // (6/7)·(2/3)/(1/3 + 1/2) = 24/35
  assertClose(currentEstimates(state, { ...SETTINGS, llnAlpha: 0.5 }).lln, 24 / 35, TOLERANCE)
})

test('sa: three steps by hand (gamma 0.75, y0 = 2)', () => {
  const settings = { ...SETTINGS, defaultChangesPerDay: 2 }
  let state = stepEstimators(emptyEstimatorState(), HISTORY[0]!, settings)
  // k = 0, η = 1, p = 1/1, I = 1: y = 2 + (2 + 1 − 2) = 3
  assertClose(currentEstimates(state, settings).sa, 3, TOLERANCE)
  state = stepEstimators(state, HISTORY[1]!, settings)
  // k = 1, η = 2^−0.75, I = 0: y = 3·(1 − 2^−0.75)
  assertClose(currentEstimates(state, settings).sa, 3 * (1 - Math.pow(2, -0.75)), TOLERANCE)
  assertClose(currentEstimates(state, settings).sa, 1.2161893274959183, 1e-12)
  state = stepEstimators(state, HISTORY[2]!, settings)
  // k = 2, η = 3^−0.75, p = 3/3.5, I = 1: y += η·p
  assertClose(currentEstimates(state, settings).sa, 1.5922104740537735, 1e-12)
})

test('sa uses the settings passed to each step', () => {
  const first = stepEstimators(emptyEstimatorState(), HISTORY[0]!, { ...SETTINGS, defaultChangesPerDay: 2 })
  // y0 only matters at the first step; a later gamma of 1 gives η_1 = 1/2.
  const second = stepEstimators(first, HISTORY[1]!, { ...SETTINGS, saGamma: 1, defaultChangesPerDay: 50 })
  assertClose(currentEstimates(second, SETTINGS).sa, 1.5, TOLERANCE)
})

test('reported sa is clipped but the stored iterate is not', () => {
  const settings = { ...SETTINGS, maxChangesPerDay: 2 }
  const state = stepEstimators(emptyEstimatorState(), HISTORY[0]!, { ...settings, defaultChangesPerDay: 2 })
  assert.equal(currentEstimates(state, settings).sa, 2)
  assert.equal(state.saChangesPerDay, 3)
})

test('choGm = −ln((n − X + 0.5)/(n + 0.5)) / (T/n)', () => {
  // ln(3.5/1.5)·3/3.5
  assertClose(currentEstimates(applyAll(HISTORY), SETTINGS).choGm, 0.7262553089033175, 1e-12)
})

test('moment matching with a constant interval is −ln(1 − X/n)/τ', () => {
  const intervals = Array.from({ length: 10 }, (_, i) => ({ intervalDays: 2, changed: i < 4 }))
  const expected = -Math.log(0.6) / 2
  assertClose(exactMomentMatching(intervals), expected, 1e-10)
  const state = applyAll(intervals.map((x) => ({ ...x, ageDays: null })))
  assertClose(currentEstimates(state, SETTINGS).momentMatching, expected, 1e-10)
})

test('moment matching solves (1/n) Σ e^{−Δτ} = (n − X)/n on irregular intervals', () => {
  const intervals = [
    { intervalDays: 0.1, changed: false },
    { intervalDays: 1, changed: true },
    { intervalDays: 3, changed: false },
    { intervalDays: 7, changed: true },
  ]
  const rate = exactMomentMatching(intervals)!
  const lhs = intervals.reduce((s, x) => s + Math.exp(-rate * x.intervalDays), 0) / 4
  assert.ok(Math.abs(lhs - 0.5) < 1e-12, `residual ${lhs - 0.5}`)
})

test('moment matching edge cases: X = 0 gives 0 (reported as the minimum), X = n is smoothed', () => {
  const none = [1, 2, 3].map((d) => ({ intervalDays: d, changed: false }))
  assert.equal(exactMomentMatching(none), 0)
  assert.equal(currentEstimates(applyAll(none.map((x) => ({ ...x, ageDays: null }))), SETTINGS).momentMatching, 1e-6)
  // All changed, τ = 1: smoothed system Σ over {1, 1, 1, 1 (pseudo), 1 (pseudo)} = 1 → Δ = ln 5.
  const all = [1, 1, 1].map((d) => ({ intervalDays: d, changed: true }))
  assertClose(exactMomentMatching(all), Math.log(5), 1e-10)
  assert.equal(exactMomentMatching([]), null)
})

test('exactMle with a constant interval is −ln(1 − X/n)/τ, with the Fisher interval', () => {
  const n = 20
  const x = 5
  const tau = 0.5
  const intervals = Array.from({ length: n }, (_, i) => ({ intervalDays: tau, changed: i < x }))
  const result = exactMle(intervals)
  const rate = -Math.log(1 - x / n) / tau
  assertClose(result.changesPerDay, rate, 1e-10)
  assert.equal(result.smoothed, false)
  // I = n·τ²·(1 − q)/q with q = X/n.
  const information = (n * tau * tau * (1 - x / n)) / (x / n)
  const halfWidth = 1.959963984540054 / (rate * Math.sqrt(information))
  assert.ok(result.ci95)
  assertClose(result.ci95[0], rate * Math.exp(-halfWidth), 1e-8)
  assertClose(result.ci95[1], rate * Math.exp(halfWidth), 1e-8)
})

test('exactMle: the MLE equation residual is ≈ 0 at the root', () => {
  const intervals = [
    { intervalDays: 0.01, changed: true },
    { intervalDays: 0.3, changed: false },
    { intervalDays: 1.7, changed: true },
    { intervalDays: 4, changed: false },
    { intervalDays: 40, changed: true },
    { intervalDays: 0.9, changed: false },
  ]
  const { changesPerDay } = exactMle(intervals)
  assert.ok(changesPerDay !== null)
  let left = 0
  let right = 0
  for (const { intervalDays, changed } of intervals) {
    if (changed) left += intervalDays / Math.expm1(changesPerDay * intervalDays)
    else right += intervalDays
  }
  assert.ok(Math.abs(left - right) < 1e-10 * right, `left ${left} right ${right}`)
})

test('exactMle smooths only when X = 0 or X = n', () => {
  const none = exactMle([1, 2, 3].map((d) => ({ intervalDays: d, changed: false })))
  assert.equal(none.smoothed, true)
  assert.equal(none.ci95, null)
  // One pseudo change of length T/n = 2 against 6 + 2 unchanged days: 2/(e^{2Δ} − 1) = 8 → Δ = ln(1.25)/2.
  assertClose(none.changesPerDay, Math.log(1.25) / 2, 1e-10)
  const all = exactMle([1, 1].map((d) => ({ intervalDays: d, changed: true })))
  assert.equal(all.smoothed, true)
  // 3 changes of 1 day against 1 unchanged day: 3/(e^Δ − 1) = 1 → Δ = ln 4.
  assertClose(all.changesPerDay, Math.log(4), 1e-10)
  assert.equal(
    exactMle([
      { intervalDays: 1, changed: true },
      { intervalDays: 1, changed: false },
    ]).smoothed,
    false,
  )
  assert.deepEqual(exactMle([]), { changesPerDay: null, smoothed: false, ci95: null })
})

test('lastModified: hand-computed X′/S', () => {
  const observations: IntervalObservation[] = [
    { intervalDays: 1, changed: true, ageDays: 0.25 },
    { intervalDays: 1, changed: false, ageDays: 3 },
    { intervalDays: 2, changed: true, ageDays: 0.5 },
    // No age: ignored by this estimator.
    { intervalDays: 5, changed: true, ageDays: null },
  ]
  // N = 3, X = 2, S = 1.75; X′ = 1 − 2/(3·ln(1/3)).
  const expected = (1 + 2 / (3 * Math.log(3))) / 1.75
  assertClose(currentEstimates(applyAll(observations), SETTINGS).lastModified, expected, 1e-12)
  assert.equal(currentEstimates(applyAll([observations[3]!]), SETTINGS).lastModified, null)
})

test('lastModified: X = N uses the half-count smoothing X′ = X − 1 + X/(N·ln(2N + 1))', () => {
  const observations: IntervalObservation[] = [
    { intervalDays: 1, changed: true, ageDays: 0.5 },
    { intervalDays: 1, changed: true, ageDays: 0.25 },
  ]
  assertClose(currentEstimates(applyAll(observations), SETTINGS).lastModified, (1 + 1 / Math.log(5)) / 0.75, 1e-12)
})

test('class probabilities after one unchanged day are ∝ e^{−λ_c}', () => {
  const state = applyAll([{ intervalDays: 1, changed: false, ageDays: null }])
  const probabilities = changeClassProbabilities(state)
  const weights = [24, 1, 1 / 7, 1 / 30, 1 / 365].map((rate) => Math.exp(-rate))
  const total = weights.reduce((a, b) => a + b, 0)
  assert.deepEqual(
    probabilities.map((p) => p.name),
    ['hourly', 'daily', 'weekly', 'monthly', 'yearly'],
  )
  probabilities.forEach((p, i) => assertClose(p.probability, weights[i]! / total, 1e-12, p.name))
})

test('stepEstimators is pure and the state survives a JSON round trip', () => {
  const before = applyAll(HISTORY)
  const snapshot = JSON.stringify(before)
  const after = stepEstimators(before, { intervalDays: 3, changed: true, ageDays: 1 }, SETTINGS)
  assert.equal(JSON.stringify(before), snapshot)
  assert.notEqual(after, before)
  const restored = JSON.parse(JSON.stringify(after))
  assert.deepEqual(restored, after)
  assert.equal(restored.v, 1)
  assert.deepEqual(currentEstimates(restored, SETTINGS), currentEstimates(after, SETTINGS))
})
