/**
 * The per-page estimator state: O(1) sufficient statistics for every estimator of docs/math.md 1,
 * stored as bytes (codec.ts). Every number in it is finite.
 */
import { emptySegment, type SegmentState } from './adaptive.ts'
import { uniformClassLogProbabilities } from './classes.ts'
import type { BlindBin } from './blindHistogram.ts'
import type { HistogramBin } from './histogram.ts'

export type EstimatorState = {
  /** Layout version. */
  v: 1
  /** n: intervals applied. */
  intervals: number
  /** X: intervals that saw a change. */
  changes: number
  /** T: Σ intervalDays. */
  observedDays: number
  /** SA iterate y (docs/math.md 1.3), unclipped; null before the first interval (y_0 comes from the settings). */
  saChangesPerDay: number | null
  /** Σ intervalDays of unchanged intervals: the right side of the MLE equation (docs/math.md 1.5). */
  unchangedDays: number
  /** Sparse log-bucket histogram of changed intervals (see histogram.ts). */
  changedHistogram: HistogramBin[]
  /** Sparse log-bucket histogram of unchanged intervals; with the changed one it covers all intervals (docs/math.md 1.6). */
  unchangedHistogram: HistogramBin[]
  /** Last-Modified statistics N, X, S (docs/math.md 1.8), from observations with a known age only. */
  lastModified: { crawls: number; changes: number; exposureDays: number }
  /** Log-probabilities of CHANGE_CLASSES (docs/math.md 1.9), unnormalised, largest 0. */
  classLogProbabilities: number[]
  /** The intervals since the last detected change of rate, for mleAdaptive (adaptive.ts). */
  segment: SegmentState
  /** Ages (crawl time − Last-Modified) at every crawl with a known one, for the shape fit (renewalFit.ts). */
  ageHistogram: HistogramBin[]
  /** β of the page's fitted gamma-mixed age law (docs/math.md 3.5); null = Poisson. */
  ageShape: number | null
  /** Δ of the fitted law over the online MLE at the fit (1 for Poisson): see renewalParameters. */
  ageShapeRateRatio: number
  /** n at the last shape fit (0 before one). */
  ageShapeFitIntervals: number
  /** L: days since the latest interval that saw a change ended (since the first crawl before any change). */
  quietDays: number
  /** c: the length of the latest interval that saw a change, days; null before the first change. */
  windowDays: number | null
  /** Every interval with L and c at its start, for the shape fit without Last-Modified (blindHistogram.ts). */
  blindHistogram: BlindBin[]
}

/**
 * States this module built or already checked. They are never modified after they are made (every
 * step returns a new state), so reading one again needs no copy: the estimators read a state
 * several times per observation.
 */
const WELL_FORMED = new WeakSet<object>()

/** Marks a state built from well-formed parts (see WELL_FORMED) and returns it. */
export function wellFormed(state: EstimatorState): EstimatorState {
  WELL_FORMED.add(state)
  return state
}

export function emptyEstimatorState(): EstimatorState {
  return wellFormed({
    v: 1,
    intervals: 0,
    changes: 0,
    observedDays: 0,
    saChangesPerDay: null,
    unchangedDays: 0,
    changedHistogram: [],
    unchangedHistogram: [],
    lastModified: { crawls: 0, changes: 0, exposureDays: 0 },
    classLogProbabilities: uniformClassLogProbabilities(),
    segment: emptySegment(),
    ageHistogram: [],
    ageShape: null,
    ageShapeRateRatio: 1,
    ageShapeFitIntervals: 0,
    quietDays: 0,
    windowDays: null,
    blindHistogram: [],
  })
}

/** Change classes of docs/math.md 1.9, one log-probability each. */
const CLASS_COUNT = uniformClassLogProbabilities().length

const finiteOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback
const nonNegative = (value: unknown): number => Math.max(0, finiteOr(value, 0))

function readHistogram(value: unknown): HistogramBin[] {
  if (!Array.isArray(value)) return []
  const bins: HistogramBin[] = []
  for (const bin of value) {
    if (!Array.isArray(bin) || bin.length < 4) continue
    const [bucket, count, sumDays, sumSquaresDays] = bin.map((x: unknown) => nonNegative(x)) as HistogramBin
    if (count > 0) bins.push([Math.floor(bucket), count, sumDays, sumSquaresDays])
  }
  return bins.sort((a, b) => a[0] - b[0])
}

/**
 * A well-formed copy of a stored state. States come back from storage (codec.ts), so missing or malformed
 * fields are replaced by their empty values instead of turning into NaN further on.
 */
export function readEstimatorState(state: unknown): EstimatorState {
  if (typeof state !== 'object' || state === null) return emptyEstimatorState()
  if (WELL_FORMED.has(state)) return state as EstimatorState
  const s = state as Partial<Record<keyof EstimatorState, unknown>>
  const lm = (typeof s.lastModified === 'object' && s.lastModified !== null ? s.lastModified : {}) as Record<
    string,
    unknown
  >
  const logs = Array.isArray(s.classLogProbabilities) ? s.classLogProbabilities : []
  const intervals = nonNegative(s.intervals)
  const changes = Math.min(intervals, nonNegative(s.changes))
  const observed = nonNegative(s.observedDays)
  const unchanged = nonNegative(s.unchangedDays)
  const changedHistogram = readHistogram(s.changedHistogram)
  const shape = s.ageShape
  return wellFormed({
    v: 1,
    intervals,
    changes,
    observedDays: observed,
    saChangesPerDay:
      typeof s.saChangesPerDay === 'number' && Number.isFinite(s.saChangesPerDay) ? s.saChangesPerDay : null,
    unchangedDays: unchanged,
    changedHistogram,
    unchangedHistogram: readHistogram(s.unchangedHistogram),
    lastModified: {
      crawls: nonNegative(lm.crawls),
      changes: nonNegative(lm.changes),
      exposureDays: nonNegative(lm.exposureDays),
    },
    classLogProbabilities: Array.from({ length: CLASS_COUNT }, (_, i) => Math.min(0, finiteOr(logs[i], 0))),
    // A state stored before segments existed: the whole history is the first segment.
    segment:
      typeof s.segment === 'object' && s.segment !== null
        ? readSegment(s.segment as Record<string, unknown>)
        : {
            ...emptySegment(),
            intervals,
            changes,
            observedDays: observed,
            unchangedDays: unchanged,
            changedHistogram,
            changesPerDay: null,
          },
    // States stored before shape fits: Poisson, fitted when next due.
    ageHistogram: readHistogram(s.ageHistogram),
    ageShape: typeof shape === 'number' && shape > 0 && shape < Number.POSITIVE_INFINITY ? shape : null,
    ageShapeRateRatio: finiteOr(s.ageShapeRateRatio, 1) > 0 ? finiteOr(s.ageShapeRateRatio, 1) : 1,
    ageShapeFitIntervals: nonNegative(s.ageShapeFitIntervals),
    // States stored before the blind fit: its evidence starts with the next interval.
    quietDays: nonNegative(s.quietDays),
    windowDays:
      typeof s.windowDays === 'number' && s.windowDays > 0 && Number.isFinite(s.windowDays) ? s.windowDays : null,
    blindHistogram: readBlindHistogram(s.blindHistogram),
  })
}

function readBlindHistogram(value: unknown): BlindBin[] {
  if (!Array.isArray(value)) return []
  const bins: BlindBin[] = []
  for (const bin of value) {
    if (!Array.isArray(bin) || bin.length < 6) continue
    const [key, unchanged, changed, quiet, window, interval] = bin.map((x: unknown) => nonNegative(x)) as BlindBin
    if (unchanged + changed > 0) bins.push([Math.floor(key), unchanged, changed, quiet, window, interval])
  }
  return bins.sort((a, b) => a[0] - b[0])
}

function readSegment(g: Record<string, unknown>): SegmentState {
  const intervals = nonNegative(g.intervals)
  const rate = g.changesPerDay
  return {
    intervals,
    changes: Math.min(intervals, nonNegative(g.changes)),
    observedDays: nonNegative(g.observedDays),
    unchangedDays: nonNegative(g.unchangedDays),
    changedHistogram: readHistogram(g.changedHistogram),
    cusumUp: nonNegative(g.cusumUp),
    cusumDown: nonNegative(g.cusumDown),
    changesPerDay: typeof rate === 'number' && Number.isFinite(rate) && rate > 0 ? rate : null,
    restarts: nonNegative(g.restarts),
    // Segments stored before the run statistics: no runs counted yet.
    blockIntervals: nonNegative(g.blockIntervals),
    blockChanges: nonNegative(g.blockChanges),
    blockExpected: nonNegative(g.blockExpected),
    blockVariance: nonNegative(g.blockVariance),
    blocks: nonNegative(g.blocks),
    squaredResiduals: nonNegative(g.squaredResiduals),
    variances: nonNegative(g.variances),
    dispersionUp: Math.max(1, finiteOr(g.dispersionUp, 1)),
    dispersionDown: Math.max(1, finiteOr(g.dispersionDown, 1)),
  }
}

/** n: intervals applied. */
export function intervalCount(state: EstimatorState): number {
  return readEstimatorState(state).intervals
}

/** X: intervals that saw a change. */
export function changeCount(state: EstimatorState): number {
  return readEstimatorState(state).changes
}

/** T: total observed days. */
export function observedDays(state: EstimatorState): number {
  return readEstimatorState(state).observedDays
}
