/**
 * The MLE of MATH.md 1.5 over the current segment of a page's history: the intervals since the
 * last detected change of its rate (`mleAdaptive`).
 *
 * A page's rate can jump (MATH.md 2.1): the MLE over the whole history then follows only as fast
 * as new intervals outweigh old ones, so a page that became ten times faster keeps its old rate
 * for weeks, and a page that slowed down is given up on its old one. Two one-sided CUSUM tests
 * (Page 1954) watch every interval for a rate `CHANGE_FACTOR` times above or below the segment's
 * estimate; the log-likelihood ratio of one interval of length τ against Δ̂ is
 *   changed:    ln((1 − e^{−cΔ̂τ}) / (1 − e^{−Δ̂τ})),   unchanged:   −(c − 1)Δ̂τ.
 * When either sum passes its threshold the segment restarts with the interval that raised the alarm.
 *
 * The threshold grows with the segment: h(n) = THRESHOLD_BASE + THRESHOLD_GROWTH · ln(1 + n/THRESHOLD_SCALE).
 * A false restart at segment length n has probability of order e^{−h(n)} ∝ n^{−2}, a summable
 * series, so a page whose rate does not change restarts finitely often (Borel–Cantelli) and the
 * estimate is the consistent MLE of 1.5 over an ever longer segment; a real tenfold jump is still
 * found within a few intervals. Storage and time per interval are O(1), as for the online MLE.
 */
import { addToHistogram, shortestBucketMeanDays, type HistogramBin } from './histogram.ts'
import { histogramMle } from './mle.ts'

/** The alternative rates the tests watch for: c·Δ̂ and Δ̂/c. */
export const CHANGE_FACTOR = 4
/** h(0): the CUSUM threshold, in nats, of a new segment. */
export const THRESHOLD_BASE = 3
/** h grows by this many nats per e-fold of segment length (2: false restarts ∝ n^{−2}). */
export const THRESHOLD_GROWTH = 2
/** Segment length, in intervals, at which the growth starts to count. */
export const THRESHOLD_SCALE = 10
/** A segment is tested only once it has this many intervals (before that its estimate is too rough). */
export const MIN_SEGMENT_INTERVALS = 3

export interface SegmentState {
  /** n, X, T and Σ unchanged days of the segment (as for the whole history, see state.ts). */
  intervals: number
  changes: number
  observedDays: number
  unchangedDays: number
  changedHistogram: HistogramBin[]
  /** CUSUM sums (nats) for a rate CHANGE_FACTOR times higher / lower than the estimate. */
  cusumUp: number
  cusumDown: number
  /** The segment's MLE (unclipped), null while empty. */
  changesPerDay: number | null
  /** Segments started after a detected change, over the page's life. */
  restarts: number
}

export function emptySegment(restarts = 0): SegmentState {
  return {
    intervals: 0,
    changes: 0,
    observedDays: 0,
    unchangedDays: 0,
    changedHistogram: [],
    cusumUp: 0,
    cusumDown: 0,
    changesPerDay: null,
    restarts,
  }
}

/** The CUSUM threshold for a segment of n intervals, in nats. */
export function restartThreshold(intervals: number): number {
  return THRESHOLD_BASE + THRESHOLD_GROWTH * Math.log1p(intervals / THRESHOLD_SCALE)
}

/** Log-likelihood ratio of one interval: rate `alternative` against `rate` (both > 0). */
export function intervalLogLikelihoodRatio(rate: number, alternative: number, intervalDays: number, changed: boolean): number {
  if (!changed) return -(alternative - rate) * intervalDays
  const p0 = -Math.expm1(-rate * intervalDays)
  const p1 = -Math.expm1(-alternative * intervalDays)
  if (!(p0 > 0)) return p1 > 0 ? Infinity : 0
  return Math.log(p1 / p0)
}


/**
 * Applies one interval (length ≥ 0 days, sanitised by the caller): first the change tests against
 * the segment's current estimate, then the interval joins the segment (a new one after an alarm).
 * Returns a new state.
 */
export function stepSegment(segment: SegmentState, intervalDays: number, changed: boolean): SegmentState {
  let s = segment
  let up = s.cusumUp
  let down = s.cusumDown
  const rate = s.changesPerDay
  if (s.intervals >= MIN_SEGMENT_INTERVALS && rate !== null && rate > 0) {
    up = Math.max(0, up + intervalLogLikelihoodRatio(rate, rate * CHANGE_FACTOR, intervalDays, changed))
    down = Math.max(0, down + intervalLogLikelihoodRatio(rate, rate / CHANGE_FACTOR, intervalDays, changed))
    const threshold = restartThreshold(s.intervals)
    if (up > threshold || down > threshold) {
      s = emptySegment(s.restarts + 1)
      up = 0
      down = 0
    }
  }
  const next: SegmentState = {
    intervals: s.intervals + 1,
    changes: s.changes + (changed ? 1 : 0),
    observedDays: s.observedDays + intervalDays,
    unchangedDays: s.unchangedDays + (changed ? 0 : intervalDays),
    changedHistogram: changed ? addToHistogram(s.changedHistogram, intervalDays) : s.changedHistogram,
    cusumUp: up,
    cusumDown: down,
    changesPerDay: null,
    restarts: s.restarts,
  }
  next.changesPerDay = histogramMle(next).changesPerDay
  return next
}

/** The shortest changed interval of the segment (its bucket mean), in days; null before one. */
export function segmentShortestChangedIntervalDays(segment: SegmentState): number | null {
  return shortestBucketMeanDays(segment.changedHistogram)
}
