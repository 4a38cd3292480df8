/**
 * Maximum likelihood for irregular crawl intervals (docs/math.md 1.5) and moment matching (docs/math.md 1.6).
 *
 * Both equations are solved in u = ln Δ from sums over weighted intervals, so the same code serves
 * the exact versions (one point per interval) and the online versions (two points per histogram
 * bucket, see histogram.ts).
 */
import { histogramPoints, type HistogramBin, type WeightedInterval } from './histogram.ts'
import { sanitizeDays } from './numbers.ts'
import { solveDecreasingInLogRate, SOLVER_MAX_CHANGES_PER_DAY, SOLVER_MIN_CHANGES_PER_DAY } from './solve.ts'

/** Pseudo-interval length used for smoothing when no time has been observed (docs/math.md 1.5). */
const SMOOTHING_DAYS_WITHOUT_HISTORY = 0.5
/** z-value of a two-sided 95 % normal interval. */
const Z_95 = 1.959963984540054

/** One crawl interval with its outcome. */
export interface ChangeInterval {
  intervalDays: number
  changed: boolean
}

export interface MleResult {
  /** Δ̂ in changes per day, in [SOLVER_MIN, SOLVER_MAX]; null when there is no interval. */
  changesPerDay: number | null
  /** Whether the pseudo-observations of docs/math.md 1.5 were added (X = 0 or X = n). */
  smoothed: boolean
  /** 95 % interval from the observed Fisher information on the log scale; null when smoothed or no data. */
  ci95: [number, number] | null
}

/** Sufficient statistics the MLE needs: counts, total days, the changed intervals and Σ unchanged days. */
interface MleInput {
  intervals: number
  changes: number
  totalDays: number
  changedIntervals: WeightedInterval[]
  unchangedDays: number
}

/** ln(e^x − 1) for x > 0 without overflow. */
function logExpm1(x: number): number {
  return x > 36 ? x + Math.log1p(-Math.exp(-x)) : Math.log(Math.expm1(x))
}

/** x / (1 − e^{−x}), continuous at x = 0 (value 1). */
function xOverOneMinusExpMinus(x: number): number {
  return x === 0 ? 1 : x / -Math.expm1(-x)
}

/** The smoothing length: the mean interval T/n, or half a day when no time was observed. */
function pseudoIntervalDays(intervals: number, totalDays: number): number {
  const mean = intervals > 0 ? totalDays / intervals : 0
  return mean > 0 && Number.isFinite(mean) ? mean : SMOOTHING_DAYS_WITHOUT_HISTORY
}

/**
 * ln Σ_changed w·τ/(e^{Δτ} − 1) − ln(unchangedDays) and its derivative in u = ln Δ.
 * A zero-length changed interval contributes its limit 1/Δ.
 */
function mleEquation(changed: readonly WeightedInterval[], unchangedDays: number) {
  const logRight = Math.log(unchangedDays)
  const logTerms = new Float64Array(changed.length)
  const slopes = new Float64Array(changed.length)
  return (logRate: number): { value: number; slope: number } => {
    const rate = Math.exp(logRate)
    let maxLog = -Infinity
    for (let i = 0; i < changed.length; i++) {
      const { intervalDays, weight } = changed[i]!
      const x = rate * intervalDays
      // ln f = ln τ − ln(e^{x} − 1); as τ → 0 it tends to −ln Δ.
      const logF = x === 0 ? -logRate : Math.log(intervalDays) - logExpm1(x)
      const logTerm = Math.log(weight) + logF
      logTerms[i] = logTerm
      slopes[i] = -xOverOneMinusExpMinus(x)
      if (logTerm > maxLog) maxLog = logTerm
    }
    let sum = 0
    let slopeSum = 0
    for (let i = 0; i < changed.length; i++) {
      const share = Math.exp(logTerms[i]! - maxLog)
      sum += share
      slopeSum += share * slopes[i]!
    }
    return { value: maxLog + Math.log(sum) - logRight, slope: slopeSum / sum }
  }
}

/** Observed Fisher information −ℓ''(Δ) = Σ_changed τ² e^{Δτ}/(e^{Δτ} − 1)², in days². */
function observedInformation(changed: readonly WeightedInterval[], rate: number): number {
  let information = 0
  for (const { intervalDays, weight } of changed) {
    const x = rate * intervalDays
    if (x === 0) {
      information += weight / (rate * rate)
    } else if (x < 700) {
      const f = intervalDays / Math.expm1(x)
      information += (weight * f * intervalDays) / -Math.expm1(-x)
    }
  }
  return information
}

/**
 * MLE from sufficient statistics, with the smoothing rule of docs/math.md 1.5: one changed and one
 * unchanged pseudo-interval of length T/n are added when X = 0 or X = n, and only then. (Also when
 * every unchanged interval has zero length, the degenerate case where the equation has no root
 * although 0 < X < n.)
 */
function solveMle(input: MleInput, withInterval: boolean): MleResult {
  if (!(input.intervals > 0)) return { changesPerDay: null, smoothed: false, ci95: null }
  const smoothed = input.changes <= 0 || input.changes >= input.intervals || !(input.unchangedDays > 0)
  let changed = input.changedIntervals
  let unchangedDays = input.unchangedDays
  if (smoothed) {
    const pseudoDays = pseudoIntervalDays(input.intervals, input.totalDays)
    changed = [...changed, { intervalDays: pseudoDays, weight: 1 }]
    unchangedDays = Math.max(0, unchangedDays) + pseudoDays
  }
  const changes = input.changes + (smoothed ? 1 : 0)
  const guess = choGmGuess(input.intervals + (smoothed ? 2 : 0), changes, input.totalDays)
  const rate = solveDecreasingInLogRate(mleEquation(changed, unchangedDays), guess)
  if (!withInterval || smoothed) return { changesPerDay: rate, smoothed, ci95: null }
  const information = observedInformation(changed, rate)
  if (!(information > 0) || !Number.isFinite(information)) return { changesPerDay: rate, smoothed, ci95: null }
  const halfWidth = Z_95 / (rate * Math.sqrt(information))
  const clipToSolverRange = (v: number) => Math.min(SOLVER_MAX_CHANGES_PER_DAY, Math.max(SOLVER_MIN_CHANGES_PER_DAY, v))
  return {
    changesPerDay: rate,
    smoothed,
    ci95: [clipToSolverRange(rate * Math.exp(-halfWidth)), clipToSolverRange(rate * Math.exp(halfWidth))],
  }
}

/** A starting point for Newton: the estimator of docs/math.md 1.7 (finite for any X ≤ n). */
function choGmGuess(intervals: number, changes: number, totalDays: number): number {
  const meanDays = totalDays / intervals
  const r = -Math.log((intervals - changes + 0.5) / (intervals + 0.5))
  return meanDays > 0 ? r / meanDays : 1
}

/** Sufficient statistics of a run of intervals, with changed intervals kept in a histogram (state.ts). */
interface HistogramStatistics {
  intervals: number
  changes: number
  observedDays: number
  unchangedDays: number
  changedHistogram: readonly HistogramBin[]
}

/** The online MLE of docs/math.md 1.5 from such statistics, unclipped, with its smoothing flag. */
export function histogramMle(s: HistogramStatistics): MleResult {
  return solveMle(
    {
      intervals: s.intervals,
      changes: s.changes,
      totalDays: s.observedDays,
      changedIntervals: histogramPoints(s.changedHistogram),
      unchangedDays: s.unchangedDays,
    },
    false,
  )
}

/**
 * Exact MLE of docs/math.md 1.5 over a full interval list, with the same smoothing rule as the online
 * estimator. The rate lies in [1e-12, 1e12] changes per day; ci95 is Δ̂·exp(±1.96/(Δ̂·√I)) with I
 * the observed Fisher information, null when smoothed or without data.
 */
export function exactMle(intervals: readonly ChangeInterval[]): MleResult {
  const changedIntervals: WeightedInterval[] = []
  let unchangedDays = 0
  let totalDays = 0
  for (const interval of intervals) {
    const days = sanitizeDays(interval.intervalDays)
    totalDays += days
    if (interval.changed) changedIntervals.push({ intervalDays: days, weight: 1 })
    else unchangedDays += days
  }
  return solveMle(
    { intervals: intervals.length, changes: changedIntervals.length, totalDays, changedIntervals, unchangedDays },
    true,
  )
}

/** Sufficient statistics for moment matching: counts, total days and all intervals. */
interface MomentInput {
  intervals: number
  changes: number
  totalDays: number
  allIntervals: WeightedInterval[]
}

/** ln Σ w·e^{−Δτ} − ln(target) and its derivative in u = ln Δ. */
function momentEquation(all: readonly WeightedInterval[], target: number) {
  const logTarget = Math.log(target)
  const exponents = new Float64Array(all.length)
  return (logRate: number): { value: number; slope: number } => {
    const rate = Math.exp(logRate)
    let maxLog = -Infinity
    for (let i = 0; i < all.length; i++) {
      const { intervalDays, weight } = all[i]!
      const logTerm = Math.log(weight) - rate * intervalDays
      exponents[i] = logTerm
      if (logTerm > maxLog) maxLog = logTerm
    }
    let sum = 0
    let slopeSum = 0
    for (let i = 0; i < all.length; i++) {
      const share = Math.exp(exponents[i]! - maxLog)
      sum += share
      slopeSum += share * -rate * all[i]!.intervalDays
    }
    return { value: maxLog + Math.log(sum) - logTarget, slope: slopeSum / sum }
  }
}

/**
 * Moment matching of docs/math.md 1.6: Δ̂ solves Σ_k e^{−Δτ_k} = n − X.
 * X = 0 → 0 (the root; callers clip it). X = n has no root (Δ̂ → ∞), so, as for the MLE, one changed
 * and one unchanged pseudo-interval of length T/n are added: Σ e^{−Δτ} over n + 2 intervals = 1.
 * The result is null without intervals, else in {0} ∪ [1e-12, 1e12] changes per day.
 */
export function solveMomentMatching(input: MomentInput): number | null {
  if (!(input.intervals > 0)) return null
  if (input.changes <= 0) return 0
  let all = input.allIntervals
  let intervals = input.intervals
  let changes = input.changes
  if (changes >= intervals) {
    const pseudoDays = pseudoIntervalDays(intervals, input.totalDays)
    all = [...all, { intervalDays: pseudoDays, weight: 2 }]
    intervals += 2
    changes += 1
  }
  const guess = choGmGuess(intervals, changes, input.totalDays)
  return solveDecreasingInLogRate(momentEquation(all, intervals - changes), guess)
}

/** Exact moment matching (docs/math.md 1.6) over a full interval list; see solveMomentMatching. */
export function exactMomentMatching(intervals: readonly ChangeInterval[]): number | null {
  const allIntervals: WeightedInterval[] = []
  let totalDays = 0
  let changes = 0
  for (const interval of intervals) {
    const days = sanitizeDays(interval.intervalDays)
    totalDays += days
    if (interval.changed) changes++
    allIntervals.push({ intervalDays: days, weight: 1 })
  }
  return solveMomentMatching({ intervals: intervals.length, changes, totalDays, allIntervals })
}
