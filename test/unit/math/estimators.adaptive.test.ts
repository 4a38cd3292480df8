/**
 * mleAdaptive (src/math/estimators/adaptive.ts): the MLE of docs/math.md 1.5 over the intervals since the
 * last detected change of rate. Checked against formulas, against the exact MLE of the segment, and
 * in simulations with known truth: a tenfold jump is found within a few intervals, a page whose rate
 * does not change rarely restarts and converges like the MLE.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  CHANGE_FACTOR,
  emptySegment,
  intervalLogLikelihoodRatio,
  restartThreshold,
  stepSegment,
  THRESHOLD_BASE,
  type SegmentState,
} from '../../../src/math/estimators/adaptive.ts'
import {
  currentEstimates,
  emptyEstimatorState,
  exactMle,
  readEstimatorState,
  schedulingHistory,
  stepEstimators,
} from '../../../src/math/estimators/index.ts'
import { createRandom, type Random } from '../../../src/math/random.ts'

const SETTINGS = {
  llnAlpha: '1/k' as const,
  saGamma: 0.75,
  defaultChangesPerDay: 1,
  minChangesPerDay: 0,
  maxChangesPerDay: 1e5,
}

/** One periodic crawl interval of a Poisson page: changed with probability 1 − e^{−Δτ}. */
const crawl = (random: Random, changesPerDay: number, intervalDays: number) =>
  random.next() < -Math.expm1(-changesPerDay * intervalDays)

test('log-likelihood ratio of one interval, by hand', () => {
  // Δ = 1, c·Δ = 4, τ = 0.5: changed → ln((1 − e^{−2})/(1 − e^{−0.5})); unchanged → −(4 − 1)·0.5.
  assert.ok(
    Math.abs(intervalLogLikelihoodRatio(1, 4, 0.5, true) - Math.log((1 - Math.exp(-2)) / (1 - Math.exp(-0.5)))) < 1e-12,
  )
  assert.equal(intervalLogLikelihoodRatio(1, 4, 0.5, false), -1.5)
  assert.equal(intervalLogLikelihoodRatio(1, 0.25, 2, false), 1.5)
  assert.equal(restartThreshold(0), THRESHOLD_BASE)
  assert.ok(Math.abs(restartThreshold(10) - (THRESHOLD_BASE + 2 * Math.log(2))) < 1e-12)
})

test('without an alarm the segment is the whole history: its estimate is the online MLE, within 2 % of the exact MLE', () => {
  const random = createRandom(3)
  let state = emptyEstimatorState()
  const intervals: { intervalDays: number; changed: boolean }[] = []
  for (let k = 0; k < 60; k++) {
    const intervalDays = 0.2 + random.next()
    const changed = crawl(random, 1, intervalDays)
    intervals.push({ intervalDays, changed })
    state = stepEstimators(state, { intervalDays, changed, ageDays: null }, SETTINGS)
  }
  const s = readEstimatorState(state)
  assert.equal(s.segment.restarts, 0)
  assert.equal(s.segment.intervals, 60)
  const e = currentEstimates(state, SETTINGS)
  assert.equal(e.mleAdaptive, e.mle)
  assert.ok(Math.abs(e.mleAdaptive! / exactMle(intervals).changesPerDay! - 1) < 0.02)
})

test('a tenfold jump up or down is detected within a few intervals and the estimate follows (500 pages each way)', () => {
  const random = createRandom(11)
  for (const [before, after] of [
    [0.5, 5],
    [5, 0.5],
  ] as const) {
    const delays: number[] = []
    const ratios: number[] = []
    for (let page = 0; page < 500; page++) {
      // Crawled every 0.5 days: 60 intervals at `before`, then 60 at `after`.
      let s: SegmentState = emptySegment()
      let detectedAt = -1
      for (let k = 0; k < 120; k++) {
        const rate = k < 60 ? before : after
        const restarts = s.restarts
        s = stepSegment(s, 0.5, crawl(random, rate, 0.5))
        if (k >= 60 && detectedAt < 0 && s.restarts > restarts) detectedAt = k - 60
      }
      delays.push(detectedAt < 0 ? Infinity : detectedAt)
      ratios.push(s.changesPerDay! / after)
    }
    delays.sort((a, b) => a - b)
    ratios.sort((a, b) => a - b)
    const median = (xs: number[]) => xs[xs.length >> 1]!
    const found = delays.filter(Number.isFinite).length / delays.length
    // Measured: 100 % (up) and 99.8 % (down) found, median delay 7 intervals up and 5 down; the
    // final estimate's median is within 4 % of the new rate.
    assert.ok(found > 0.95, `${before} → ${after}: found ${found}`)
    assert.ok(median(delays) <= 10, `${before} → ${after}: median delay ${median(delays)} intervals`)
    assert.ok(Math.abs(median(ratios) - 1) < 0.1, `${before} → ${after}: median Δ̂/Δ ${median(ratios)}`)
  }
})

test('a page whose rate does not change restarts rarely, and its estimate converges (1000 pages × 300 intervals, Δτ = 1)', () => {
  const random = createRandom(5)
  let restarted = 0
  const ratios: number[] = []
  for (let page = 0; page < 1000; page++) {
    let s: SegmentState = emptySegment()
    for (let k = 0; k < 300; k++) s = stepSegment(s, 1, crawl(random, 1, 1))
    if (s.restarts > 0) restarted++
    ratios.push(s.changesPerDay!)
  }
  ratios.sort((a, b) => a - b)
  // The threshold grows like 2 ln n, so false restarts concentrate in short segments and stop; the
  // measured share of pages with any restart is 11 %; median Δ̂ 1.003, 10–90 % range 0.91–1.11.
  assert.ok(restarted / 1000 < 0.2, `${restarted} of 1000 pages restarted`)
  assert.ok(Math.abs(ratios[500]! - 1) < 0.05, `median Δ̂ ${ratios[500]}`)
  assert.ok(ratios[100]! > 0.8 && ratios[900]! < 1.25, `10–90 % range ${ratios[100]}–${ratios[900]}`)
})

test('an alarm restarts the segment with the interval that raised it; the probe history follows the segment', () => {
  let state = emptyEstimatorState()
  // A slow page (20 unchanged daily intervals), then changes at every crawl.
  for (let k = 0; k < 20; k++)
    state = stepEstimators(state, { intervalDays: 1, changed: k === 7, ageDays: null }, SETTINGS)
  let steps = 0
  while (readEstimatorState(state).segment.restarts === 0 && steps < 20) {
    state = stepEstimators(state, { intervalDays: 1, changed: true, ageDays: null }, SETTINGS)
    steps++
  }
  const s = readEstimatorState(state)
  assert.equal(s.segment.restarts, 1, `no restart after ${steps} changed intervals`)
  assert.equal(s.segment.intervals, 1)
  assert.equal(s.segment.changes, 1)
  assert.equal(s.intervals, 20 + steps, 'the whole history still counts every interval')
  assert.deepEqual(schedulingHistory(state, 'mleAdaptive'), {
    intervals: 1,
    changes: 1,
    shortestChangedIntervalDays: 1,
  })
  assert.equal(schedulingHistory(state, 'mle').intervals, 20 + steps)
  // Now far above the whole-history MLE, which still remembers the slow weeks.
  const e = currentEstimates(state, SETTINGS)
  assert.ok(e.mleAdaptive! > 2 * e.mle!, `${e.mleAdaptive} vs ${e.mle}`)
  assert.equal(CHANGE_FACTOR, 4)
})

test('a state stored before segments existed reads as one segment holding the whole history', () => {
  let state = emptyEstimatorState()
  for (let k = 0; k < 10; k++)
    state = stepEstimators(state, { intervalDays: 1, changed: k % 3 === 0, ageDays: null }, SETTINGS)
  const { segment: _segment, ...legacy } = state
  const read = readEstimatorState(legacy)
  assert.equal(read.segment.intervals, 10)
  assert.equal(read.segment.changes, 4)
  const e = currentEstimates(legacy as typeof state, SETTINGS)
  assert.equal(e.mleAdaptive, e.mle)
})
