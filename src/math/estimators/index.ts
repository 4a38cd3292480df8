/**
 * Online change-rate estimators (MATH.md section 1): one O(1) step per crawl interval, and every
 * estimate derived from the stored sufficient statistics.
 */
import { segmentShortestChangedIntervalDays, stepSegment } from './adaptive.ts'
import { classProbabilities, stepClassLogProbabilities } from './classes.ts'
import { choGmChangesPerDay, llnChangesPerDay, naiveChangesPerDay, saStep, type LlnAlpha } from './counting.ts'
import { addToHistogram, histogramPoints, shortestBucketMeanDays } from './histogram.ts'
import { lastModifiedChangesPerDay, stepLastModified } from './lastModified.ts'
import { histogramMle, solveMomentMatching, type MleResult } from './mle.ts'
import { clipRate, sanitizeDays } from './numbers.ts'
import { readEstimatorState, wellFormed, type EstimatorState } from './state.ts'
export { decodeEstimatorState, encodeEstimatorState } from './codec.ts'

export { CHANGE_CLASSES } from './classes.ts'
export { CHANGE_FACTOR, restartThreshold } from './adaptive.ts'
export { exactMle, exactMomentMatching, type ChangeInterval, type MleResult } from './mle.ts'
export { correctedChangeCount } from './lastModified.ts'
export { emptyEstimatorState, intervalCount, changeCount, observedDays, readEstimatorState, type EstimatorState } from './state.ts'
export { HISTOGRAM_BUCKETS, HISTOGRAM_MAX_DAYS, HISTOGRAM_MIN_DAYS, type HistogramBin } from './histogram.ts'
export { SOLVER_MAX_CHANGES_PER_DAY, SOLVER_MIN_CHANGES_PER_DAY } from './solve.ts'
export { MAX_INTERVAL_DAYS } from './numbers.ts'
export type { LlnAlpha }

export type EstimatorName = 'naive' | 'lln' | 'sa' | 'mle' | 'mleAdaptive' | 'momentMatching' | 'choGm' | 'lastModified'

export const ESTIMATOR_NAMES: readonly EstimatorName[] = Object.freeze([
  'naive',
  'lln',
  'sa',
  'mle',
  'mleAdaptive',
  'momentMatching',
  'choGm',
  'lastModified',
] as const)

export interface EstimatorSettings {
  /** α_k of the LLN estimator (MATH.md 1.2). */
  llnAlpha: LlnAlpha
  /** γ of the SA step size η_k = 1/(k+1)^γ (MATH.md 1.3). */
  saGamma: number
  /** y_0 of the SA estimator, in changes per day. */
  defaultChangesPerDay: number
  /** Every reported estimate is clipped to [minChangesPerDay, maxChangesPerDay]. */
  minChangesPerDay: number
  maxChangesPerDay: number
}

/** One crawl interval: its length, whether it saw a change, and crawl time − Last-Modified when known. */
export interface IntervalObservation {
  intervalDays: number
  changed: boolean
  ageDays: number | null
}

export type Estimates = Record<EstimatorName, number | null>

/**
 * Applies one interval to every estimator; returns a new state (the input is not modified).
 * Cost and state size do not grow with the history. Negative lengths count as 0 and lengths above
 * MAX_INTERVAL_DAYS as that cap; a NaN length leaves the state unchanged. The Last-Modified
 * statistics move only when ageDays is a number (negative ages count as 0).
 */
export function stepEstimators(state: EstimatorState, obs: IntervalObservation, settings: EstimatorSettings): EstimatorState {
  const s = readEstimatorState(state)
  if (Number.isNaN(obs.intervalDays)) return s
  const days = sanitizeDays(obs.intervalDays)
  const changed = obs.changed === true
  const intervals = s.intervals + 1
  const observed = s.observedDays + days
  const y0 = s.saChangesPerDay ?? settings.defaultChangesPerDay
  const age = obs.ageDays
  return wellFormed({
    v: 1,
    intervals,
    changes: s.changes + (changed ? 1 : 0),
    observedDays: observed,
    saChangesPerDay: saStep(y0, s.intervals, changed, intervals, observed, settings.saGamma),
    unchangedDays: s.unchangedDays + (changed ? 0 : days),
    changedHistogram: changed ? addToHistogram(s.changedHistogram, days) : s.changedHistogram,
    unchangedHistogram: changed ? s.unchangedHistogram : addToHistogram(s.unchangedHistogram, days),
    lastModified:
      typeof age === 'number' && !Number.isNaN(age) ? stepLastModified(s.lastModified, days, sanitizeDays(age)) : s.lastModified,
    classLogProbabilities: stepClassLogProbabilities(s.classLogProbabilities, days, changed),
    segment: stepSegment(s.segment, days, changed),
  })
}

/** The online MLE of MATH.md 1.5 (histogram of changed intervals), unclipped, with its smoothing flag. */
export function onlineMle(state: EstimatorState): MleResult {
  return histogramMle(readEstimatorState(state))
}

/** The online moment-matching estimate of MATH.md 1.6 (histograms of all intervals), unclipped. */
export function onlineMomentMatching(state: EstimatorState): number | null {
  const s = readEstimatorState(state)
  return solveMomentMatching({
    intervals: s.intervals,
    changes: s.changes,
    totalDays: s.observedDays,
    allIntervals: histogramPoints(s.unchangedHistogram, histogramPoints(s.changedHistogram)),
  })
}

/**
 * Every estimator's current value in changes per day, clipped to [minChangesPerDay,
 * maxChangesPerDay]; null before the first interval (lastModified: before the first known age).
 * lln uses the empirical crawl rate p̂ = n/T in place of the paper's known p (MATH.md 1.2).
 */
export function currentEstimates(state: EstimatorState, settings: EstimatorSettings): Estimates {
  const s = readEstimatorState(state)
  const { minChangesPerDay: min, maxChangesPerDay: max } = settings
  const clip = (v: number | null): number | null => (v === null ? null : clipRate(v, min, max))
  const lastModified = clip(lastModifiedChangesPerDay(s.lastModified))
  if (s.intervals === 0) {
    return { naive: null, lln: null, sa: null, mle: null, mleAdaptive: null, momentMatching: null, choGm: null, lastModified }
  }
  const { intervals: n, changes: x, observedDays: t } = s
  return {
    naive: clip(naiveChangesPerDay(x, t)),
    lln: clip(llnChangesPerDay(n, x, t, settings.llnAlpha)),
    sa: clip(s.saChangesPerDay),
    mle: clip(onlineMle(s).changesPerDay),
    mleAdaptive: clip(s.segment.changesPerDay ?? onlineMle(s).changesPerDay),
    momentMatching: clip(onlineMomentMatching(s)),
    choGm: clip(choGmChangesPerDay(n, x, t)),
    lastModified,
  }
}

/**
 * The history the scheduling estimator rests on, for the early crawls of src/domain/schedule.ts:
 * intervals, changes and the shortest changed interval (its histogram bucket's mean, within a
 * factor 1.34; null before one). mleAdaptive rests on its current segment, every other estimator on
 * the whole history.
 */
export function schedulingHistory(
  state: EstimatorState,
  estimator: EstimatorName,
): { intervals: number; changes: number; shortestChangedIntervalDays: number | null } {
  const s = readEstimatorState(state)
  if (estimator === 'mleAdaptive') {
    return { intervals: s.segment.intervals, changes: s.segment.changes, shortestChangedIntervalDays: segmentShortestChangedIntervalDays(s.segment) }
  }
  return { intervals: s.intervals, changes: s.changes, shortestChangedIntervalDays: shortestBucketMeanDays(s.changedHistogram) }
}

/** Restarts of the mleAdaptive segment (detected changes of rate) over the page's life. */
export function rateChangesDetected(state: EstimatorState): number {
  return readEstimatorState(state).segment.restarts
}

/** Posterior probability of each change class (MATH.md 1.9) under a uniform prior. */
export function changeClassProbabilities(state: EstimatorState): { name: string; changesPerDay: number; probability: number }[] {
  return classProbabilities(readEstimatorState(state).classLogProbabilities)
}
