/**
 * Online (histogram) MLE and moment matching against the exact versions, and robustness of every
 * estimator on adversarial inputs.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom, type Random } from '../../../src/math/random.ts'
import {
  changeClassProbabilities,
  currentEstimates,
  emptyEstimatorState,
  ESTIMATOR_NAMES,
  exactMle,
  exactMomentMatching,
  onlineMle,
  onlineMomentMatching,
  stepEstimators,
  type IntervalObservation,
} from '../../../src/math/estimators/index.ts'
import {
  applyAll,
  numbersIn,
  periodicCrawling,
  poissonCrawling,
  SETTINGS,
  simulateCrawls,
  type IntervalSampler,
} from './estimatorsHelpers.ts'

/** Half the intervals of 1–10 minutes, half of about a month (exponential, mean 30 days). */
const minutesAndMonths: IntervalSampler = (random: Random) =>
  random.next() < 0.5 ? (1 + 9 * random.next()) / 1440 : random.exponential(1 / 30)
/** Pareto intervals (tail index 0.8, from 15 minutes): lengths spread over many orders of magnitude. */
const pareto: IntervalSampler = (random: Random) => (15 / 1440) * Math.pow(1 - random.next(), -1 / 0.8)

const SCHEDULES: [string, IntervalSampler][] = [
  ['Poisson', poissonCrawling(1)],
  ['periodic', periodicCrawling(1)],
  ['minutes and months', minutesAndMonths],
  ['Pareto', pareto],
]

for (const [name, sampler] of SCHEDULES) {
  test(`online MLE and moment matching within 0.5 % of exact: ${name} crawling, Δ from 0.01 to 100, 10 runs × 400 crawls checked every 20`, (t) => {
    let worstMle = 0
    let worstMoment = 0
    for (const changesPerDay of [0.01, 0.3, 1, 10, 100]) {
      for (let run = 0; run < 10; run++) {
        const observations = simulateCrawls(createRandom(run + 7919 * changesPerDay), changesPerDay, sampler, 400)
        let state = emptyEstimatorState()
        observations.forEach((obs, k) => {
          state = stepEstimators(state, obs, SETTINGS)
          if (k % 20 !== 19) return
          const history = observations.slice(0, k + 1)
          const exact = exactMle(history)
          const online = onlineMle(state)
          assert.equal(online.smoothed, exact.smoothed)
          worstMle = Math.max(worstMle, Math.abs(online.changesPerDay! / exact.changesPerDay! - 1))
          const exactMoment = exactMomentMatching(history)!
          if (exactMoment > 0)
            worstMoment = Math.max(worstMoment, Math.abs(onlineMomentMatching(state)! / exactMoment - 1))
        })
      }
    }
    t.diagnostic(`max relative gap: MLE ${worstMle.toExponential(2)}, moment matching ${worstMoment.toExponential(2)}`)
    assert.ok(worstMle < 0.005, `MLE gap ${worstMle}`)
    assert.ok(worstMoment < 0.005, `moment matching gap ${worstMoment}`)
  })
}

test('the MLE is consistent under heavy-tailed intervals: minutes and months, Δ = 1, 20 runs × 2000 crawls within 5 %', () => {
  const estimates: number[] = []
  for (let run = 0; run < 20; run++) {
    const state = applyAll(simulateCrawls(createRandom(500 + run), 1, minutesAndMonths, 2000))
    estimates.push(currentEstimates(state, SETTINGS).mle!)
  }
  const average = estimates.reduce((a, b) => a + b, 0) / estimates.length
  assert.ok(Math.abs(average - 1) < 0.05, `mean ${average}`)
})

test('the state keeps O(1) size: at most 2 × 48 histogram bins and 32 blind-fit bins after 20 000 intervals', () => {
  const state = applyAll(simulateCrawls(createRandom(3), 1, pareto, 20_000))
  assert.ok(state.changedHistogram.length + state.unchangedHistogram.length <= 96)
  assert.ok(state.blindHistogram.length <= 32)
  assert.ok(JSON.stringify(state).length < 12_000)
})

function assertSane(observations: IntervalObservation[], label: string): void {
  const settings = SETTINGS
  let state = emptyEstimatorState()
  for (const obs of observations) {
    state = stepEstimators(state, obs, settings)
    for (const value of numbersIn(state)) assert.ok(Number.isFinite(value), `${label}: state holds ${value}`)
    const roundTrip = JSON.parse(JSON.stringify(state))
    assert.deepEqual(roundTrip, state, `${label}: JSON round trip`)
    const estimates = currentEstimates(state, settings)
    for (const name of ESTIMATOR_NAMES) {
      const value = estimates[name]
      if (value === null) continue
      assert.ok(
        Number.isFinite(value) && value >= settings.minChangesPerDay && value <= settings.maxChangesPerDay,
        `${label}: ${name} = ${value}`,
      )
    }
    for (const { probability } of changeClassProbabilities(state)) assert.ok(Number.isFinite(probability), label)
  }
}

test('adversarial inputs never produce NaN or Infinity', () => {
  const repeat = (n: number, obs: IntervalObservation) => Array.from({ length: n }, () => obs)
  assertSane(repeat(30, { intervalDays: 1, changed: true, ageDays: 0 }), 'all changed, age 0')
  assertSane(repeat(30, { intervalDays: 1, changed: false, ageDays: 1e9 }), 'none changed')
  assertSane(repeat(30, { intervalDays: 0, changed: true, ageDays: 0 }), 'zero-length changed')
  assertSane(repeat(30, { intervalDays: 0, changed: false, ageDays: null }), 'zero-length unchanged')
  assertSane(
    [
      { intervalDays: 0, changed: false, ageDays: null },
      { intervalDays: 0, changed: true, ageDays: null },
      { intervalDays: 1e-12, changed: true, ageDays: 1e-13 },
    ],
    'zero and tiny lengths mixed',
  )
  assertSane(repeat(30, { intervalDays: 1e300, changed: true, ageDays: 1e300 }), 'huge intervals, changed')
  assertSane(repeat(30, { intervalDays: Infinity, changed: false, ageDays: Infinity }), 'infinite intervals')
  assertSane(
    [
      { intervalDays: 1e6, changed: false, ageDays: null },
      { intervalDays: 1e-9, changed: true, ageDays: null },
      { intervalDays: 1e6, changed: true, ageDays: 5e5 },
    ],
    'huge and tiny mixed',
  )
  assertSane(
    [
      { intervalDays: -3, changed: true, ageDays: -1 },
      { intervalDays: Number.NaN, changed: true, ageDays: Number.NaN },
      { intervalDays: 1, changed: false, ageDays: Number.NaN },
    ],
    'negative and NaN',
  )
  for (const result of [
    exactMle([{ intervalDays: 0, changed: true }]),
    exactMle([{ intervalDays: 0, changed: false }]),
    exactMle([
      { intervalDays: 1e300, changed: true },
      { intervalDays: 1e-300, changed: false },
    ]),
    exactMle([
      { intervalDays: 1e-300, changed: true },
      { intervalDays: 1e300, changed: false },
    ]),
  ]) {
    assert.ok(result.changesPerDay !== null && Number.isFinite(result.changesPerDay) && result.changesPerDay > 0)
    for (const bound of result.ci95 ?? []) assert.ok(Number.isFinite(bound))
  }
  for (const value of [
    exactMomentMatching([{ intervalDays: 0, changed: true }]),
    exactMomentMatching([{ intervalDays: 1e300, changed: true }]),
    exactMomentMatching([
      { intervalDays: 0, changed: false },
      { intervalDays: 1, changed: true },
    ]),
  ]) {
    assert.ok(value !== null && Number.isFinite(value))
  }
})

test('a malformed stored state is read as empty instead of producing NaN', () => {
  const broken = { v: 1, intervals: 'x', changedHistogram: [[1, 2]], classLogProbabilities: [null] } as never
  const estimates = currentEstimates(broken, SETTINGS)
  for (const name of ESTIMATOR_NAMES) assert.equal(estimates[name], null)
  const stepped = stepEstimators(broken, { intervalDays: 1, changed: true, ageDays: null }, SETTINGS)
  assert.equal(stepped.intervals, 1)
})
