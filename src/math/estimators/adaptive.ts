/**
 * The MLE of docs/math.md 1.5 over the current segment of a page's history: the intervals since the
 * last detected change of its rate (`mleAdaptive`).
 *
 * A page's rate can jump (docs/math.md 2.1): the MLE over the whole history then follows only as fast
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
const THRESHOLD_GROWTH = 2
/** Segment length, in intervals, at which the growth starts to count. */
const THRESHOLD_SCALE = 10
/** A segment is tested only once it has this many intervals (before that its estimate is too rough). */
const MIN_SEGMENT_INTERVALS = 3
/**
 * One interval adds at most this share of the threshold to a CUSUM sum, and an interval whose evidence
 * is capped cannot raise the alarm itself (cusumStep): under Poisson changes one long unchanged
 * interval is overwhelming evidence of a lower rate (its log-likelihood ratio grows with its length),
 * but bursty pages have such gaps as a matter of course, and one of them should move the estimate by
 * what the whole segment's likelihood says, not replace the segment.
 */
const MAX_INTERVAL_SHARE = 0.5
/** Consecutive intervals per block of the dispersion estimate. */
const DISPERSION_BLOCK_INTERVALS = 8
/** Pseudo-blocks that pull the dispersion estimate towards 1 (independent intervals) on short segments. */
const DISPERSION_PRIOR_BLOCKS = 3

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
  /** The open block: its intervals, changes, and Σ p and Σ p(1 − p) of its intervals. */
  blockIntervals: number
  blockChanges: number
  blockExpected: number
  blockVariance: number
  /** Complete blocks of the segment, Σ (X_b − E_b)² and Σ V_b over them (see blockDispersion). */
  blocks: number
  squaredResiduals: number
  variances: number
  /** The dispersion each test divides its evidence by, as of the last time its sum was 0 (≥ 1). */
  dispersionUp: number
  dispersionDown: number
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
    blockIntervals: 0,
    blockChanges: 0,
    blockExpected: 0,
    blockVariance: 0,
    blocks: 0,
    squaredResiduals: 0,
    variances: 0,
    dispersionUp: 1,
    dispersionDown: 1,
  }
}

/**
 * How much more the number of changes in a block of DISPERSION_BLOCK_INTERVALS consecutive intervals
 * varies than independent intervals would make it vary, as a ratio ≥ 1. A bursty page's changes cluster,
 * so each interval carries less evidence about the rate than an independent one, and the tests divide
 * their evidence by this index of dispersion: Σ_b (X_b − E_b)² / Σ_b V_b over the segment's complete
 * blocks, with E_b = Σ p and V_b = Σ p(1 − p) from each interval's change probability p at the estimate
 * of the time, and DISPERSION_PRIOR_BLOCKS blocks of ratio 1 added. On Poisson pages it stays near 1.
 */
function blockDispersion(segment: Pick<SegmentState, 'squaredResiduals' | 'variances' | 'blocks'>): number {
  const prior = (DISPERSION_PRIOR_BLOCKS * segment.variances) / Math.max(1, segment.blocks)
  if (!(prior > 0)) return 1
  return Math.max(1, (segment.squaredResiduals + prior) / (segment.variances + prior))
}

/**
 * One CUSUM step: the sum plus the interval's evidence, floored at 0. Evidence above `cap` is an
 * outlier (one interval that alone would carry the test most of the way): it counts only up to the cap
 * and cannot raise the alarm itself, so the sum stays at most at the threshold, and only a further
 * interval that agrees with it can restart the segment.
 */
function cusumStep(sum: number, evidence: number, cap: number, threshold: number): number {
  if (evidence > cap) return Math.min(threshold, Math.max(0, sum + cap))
  return Math.max(0, sum + evidence)
}

type BlockStatistics = Pick<
  SegmentState,
  'blockIntervals' | 'blockChanges' | 'blockExpected' | 'blockVariance' | 'blocks' | 'squaredResiduals' | 'variances'
>

function pick(s: SegmentState): BlockStatistics {
  const { blockIntervals, blockChanges, blockExpected, blockVariance, blocks, squaredResiduals, variances } = s
  return { blockIntervals, blockChanges, blockExpected, blockVariance, blocks, squaredResiduals, variances }
}

/** The CUSUM threshold for a segment of n intervals, in nats. */
export function restartThreshold(intervals: number): number {
  return THRESHOLD_BASE + THRESHOLD_GROWTH * Math.log1p(intervals / THRESHOLD_SCALE)
}

/** Log-likelihood ratio of one interval: rate `alternative` against `rate` (both > 0). */
export function intervalLogLikelihoodRatio(
  rate: number,
  alternative: number,
  intervalDays: number,
  changed: boolean,
): number {
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
  // Each test's dispersion is frozen while its sum is above 0: the clustered outcomes of a real change of
  // rate are the evidence of that change, not burstiness.
  const current = blockDispersion(s)
  let dispersionUp = up === 0 ? current : s.dispersionUp
  let dispersionDown = down === 0 ? current : s.dispersionDown
  const blocks = { ...pick(s) }
  if (rate !== null && rate > 0) {
    const p = -Math.expm1(-rate * intervalDays)
    blocks.blockIntervals++
    blocks.blockChanges += changed ? 1 : 0
    blocks.blockExpected += p
    blocks.blockVariance += p * (1 - p)
    if (blocks.blockIntervals >= DISPERSION_BLOCK_INTERVALS) {
      const residual = blocks.blockChanges - blocks.blockExpected
      blocks.blocks++
      blocks.squaredResiduals += residual * residual
      blocks.variances += blocks.blockVariance
      blocks.blockIntervals = 0
      blocks.blockChanges = 0
      blocks.blockExpected = 0
      blocks.blockVariance = 0
    }
  }
  if (s.intervals >= MIN_SEGMENT_INTERVALS && rate !== null && rate > 0) {
    const threshold = restartThreshold(s.intervals)
    const cap = MAX_INTERVAL_SHARE * threshold
    up = cusumStep(
      up,
      intervalLogLikelihoodRatio(rate, rate * CHANGE_FACTOR, intervalDays, changed) / dispersionUp,
      cap,
      threshold,
    )
    down = cusumStep(
      down,
      intervalLogLikelihoodRatio(rate, rate / CHANGE_FACTOR, intervalDays, changed) / dispersionDown,
      cap,
      threshold,
    )
    if (up > threshold || down > threshold) {
      s = emptySegment(s.restarts + 1)
      up = 0
      down = 0
      dispersionUp = 1
      dispersionDown = 1
      Object.assign(blocks, pick(s))
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
    ...blocks,
    dispersionUp,
    dispersionDown,
  }
  next.changesPerDay = histogramMle(next).changesPerDay
  return next
}

/** The shortest changed interval of the segment (its bucket mean), in days; null before one. */
export function segmentShortestChangedIntervalDays(segment: SegmentState): number | null {
  return shortestBucketMeanDays(segment.changedHistogram)
}
