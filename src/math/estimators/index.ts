/**
 * Online change-rate estimators (docs/math.md section 1): one O(1) step per crawl interval, and every
 * estimate derived from the stored sufficient statistics.
 */
import { segmentShortestChangedIntervalDays, stepSegment } from './adaptive.ts'
import { classProbabilities, stepClassLogProbabilities } from './classes.ts'
import { choGmChangesPerDay, llnChangesPerDay, naiveChangesPerDay, saStep, type LlnAlpha } from './counting.ts'
import { addBlindInterval } from './blindHistogram.ts'
import { addToHistogram, histogramPoints, shortestBucketMeanDays } from './histogram.ts'
import { lastModifiedChangesPerDay, stepLastModified } from './lastModified.ts'
import { histogramMle, solveMomentMatching, type MleResult } from './mle.ts'
import { clipRate, logOneMinusExpMinus, sanitizeDays } from './numbers.ts'
import { fitShape, shapeFitDue } from './renewalFit.ts'
import { readEstimatorState, wellFormed, type EstimatorState } from './state.ts'
import { histogramEvidence, priorForHost, ratePosterior, type FleetPriors, type RateEvidence } from './prior.ts'
import { SOLVER_MAX_CHANGES_PER_DAY } from './solve.ts'
export { decodeEstimatorState, encodeEstimatorState } from './codec.ts'

export { exactMle, exactMomentMatching, type ChangeInterval } from './mle.ts'
export {
  emptyEstimatorState,
  intervalCount,
  changeCount,
  observedDays,
  readEstimatorState,
  type EstimatorState,
} from './state.ts'
export { SOLVER_MAX_CHANGES_PER_DAY } from './solve.ts'
export { SHAPE_MIN_INTERVALS } from './renewalFit.ts'
export {
  fitFleetPriors,
  priorForHost,
  ratePosterior,
  vaguePrior,
  type FleetPriors,
  type GammaPrior,
  type RateEvidence,
} from './prior.ts'

/**
 * Every online estimator by name, with the docs/math.md section that defines it: the one list of
 * estimator names. EstimatorName, ESTIMATOR_NAMES, the settings enum and the API derive from it.
 */
export const ESTIMATOR_SECTIONS = Object.freeze({
  naive: '1.1',
  lln: '1.2',
  sa: '1.3',
  mle: '1.5',
  mleAdaptive: '1.5, 2',
  momentMatching: '1.6',
  choGm: '1.7',
  lastModified: '1.8',
} as const)

export type EstimatorName = keyof typeof ESTIMATOR_SECTIONS

export const ESTIMATOR_NAMES: readonly EstimatorName[] = Object.freeze(
  Object.keys(ESTIMATOR_SECTIONS) as EstimatorName[],
)

export interface EstimatorSettings {
  /** α_k of the LLN estimator (docs/math.md 1.2). */
  llnAlpha: LlnAlpha
  /** γ of the SA step size η_k = 1/(k+1)^γ (docs/math.md 1.3). */
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

type Estimates = Record<EstimatorName, number | null>

/**
 * Applies one interval to every estimator; returns a new state (the input is not modified).
 * Cost and state size do not grow with the history. Negative lengths count as 0 and lengths above
 * MAX_INTERVAL_DAYS as that cap; a NaN length leaves the state unchanged. The Last-Modified
 * statistics move only when ageDays is a number (negative ages count as 0).
 */
export function stepEstimators(
  state: EstimatorState,
  obs: IntervalObservation,
  settings: EstimatorSettings,
): EstimatorState {
  const s = readEstimatorState(state)
  if (Number.isNaN(obs.intervalDays)) return s
  const days = sanitizeDays(obs.intervalDays)
  const changed = obs.changed === true
  const intervals = s.intervals + 1
  const observed = s.observedDays + days
  const y0 = s.saChangesPerDay ?? settings.defaultChangesPerDay
  const age = obs.ageDays
  const knownAge = typeof age === 'number' && !Number.isNaN(age) ? sanitizeDays(age) : null
  const next: EstimatorState = {
    v: 1,
    intervals,
    changes: s.changes + (changed ? 1 : 0),
    observedDays: observed,
    saChangesPerDay: saStep(y0, s.intervals, changed, intervals, observed, settings.saGamma),
    unchangedDays: s.unchangedDays + (changed ? 0 : days),
    changedHistogram: changed ? addToHistogram(s.changedHistogram, days) : s.changedHistogram,
    unchangedHistogram: changed ? s.unchangedHistogram : addToHistogram(s.unchangedHistogram, days),
    lastModified: knownAge === null ? s.lastModified : stepLastModified(s.lastModified, days, knownAge),
    classLogProbabilities: stepClassLogProbabilities(s.classLogProbabilities, days, changed),
    segment: stepSegment(s.segment, days, changed),
    ageHistogram: knownAge === null ? s.ageHistogram : addToHistogram(s.ageHistogram, knownAge),
    ageShape: s.ageShape,
    ageShapeRateRatio: s.ageShapeRateRatio,
    ageShapeFitIntervals: s.ageShapeFitIntervals,
    quietDays: changed ? 0 : s.quietDays + days,
    windowDays: changed ? days : s.windowDays,
    blindHistogram: addBlindInterval(s.blindHistogram, {
      quietDays: s.quietDays,
      windowDays: s.windowDays,
      intervalDays: days,
      changed,
    }),
  }
  if (shapeFitDue(intervals, s.ageShapeFitIntervals)) {
    const mle = histogramMle(next).changesPerDay ?? settings.defaultChangesPerDay
    const fit = fitShape(
      {
        intervals,
        changes: next.changes,
        ageHistogram: next.ageHistogram,
        blindHistogram: next.blindHistogram,
        agedCrawls: next.lastModified.crawls,
      },
      mle,
    )
    const poisson = fit.shape === Number.POSITIVE_INFINITY
    next.ageShape = poisson ? null : fit.shape
    next.ageShapeRateRatio = poisson ? 1 : fit.changesPerDay / mle
    next.ageShapeFitIntervals = intervals
  }
  return wellFormed(next)
}

/**
 * The page's age law for the distribution-aware objective (docs/math.md 3.5; renewalFit.ts): the fitted
 * shape β, and the fitted law's rate scaled by how far the scheduling estimate `changesPerDay` has moved
 * since the fit relative to the online MLE then (a page whose rate jumps keeps its shape and follows
 * the estimate). Poisson (β = ∞, Δ = changesPerDay) until a fit finds evidence of another shape.
 */
export function renewalParameters(
  state: EstimatorState | null,
  changesPerDay: number,
): { ageShape: number; changesPerDay: number } {
  const s = state === null ? null : readEstimatorState(state)
  if (s === null || s.ageShape === null) return { ageShape: Number.POSITIVE_INFINITY, changesPerDay }
  return {
    ageShape: s.ageShape,
    changesPerDay: Math.min(SOLVER_MAX_CHANGES_PER_DAY, changesPerDay * s.ageShapeRateRatio),
  }
}

/** The online MLE of docs/math.md 1.5 (histogram of changed intervals), unclipped, with its smoothing flag. */
export function onlineMle(state: EstimatorState): MleResult {
  return histogramMle(readEstimatorState(state))
}

/** The online moment-matching estimate of docs/math.md 1.6 (histograms of all intervals), unclipped. */
export function onlineMomentMatching(state: EstimatorState): number | null {
  const s = readEstimatorState(state)
  return solveMomentMatching({
    intervals: s.intervals,
    changes: s.changes,
    totalDays: s.observedDays,
    allIntervals: histogramPoints(s.unchangedHistogram, histogramPoints(s.changedHistogram)),
  })
}

/** One estimator's raw value (unclipped); null before the first interval (lastModified: before the first known age). */
function rawEstimate(s: EstimatorState, name: EstimatorName, settings: EstimatorSettings): number | null {
  if (name === 'lastModified') return lastModifiedChangesPerDay(s.lastModified)
  if (s.intervals === 0) return null
  const { intervals: n, changes: x, observedDays: t } = s
  switch (name) {
    case 'naive':
      return naiveChangesPerDay(x, t)
    case 'lln':
      return llnChangesPerDay(n, x, t, settings.llnAlpha)
    case 'sa':
      return s.saChangesPerDay
    case 'mle':
      return onlineMle(s).changesPerDay
    case 'mleAdaptive':
      return s.segment.changesPerDay ?? onlineMle(s).changesPerDay
    case 'momentMatching':
      return onlineMomentMatching(s)
    case 'choGm':
      return choGmChangesPerDay(n, x, t)
  }
}

/**
 * One estimator's current value in changes per day, clipped to [minChangesPerDay, maxChangesPerDay];
 * null before the first interval (lastModified: before the first known age). What a crawl report
 * computes: only the estimator that drives scheduling (the others are derived when a page is read).
 */
export function estimateOf(state: EstimatorState, name: EstimatorName, settings: EstimatorSettings): number | null {
  const value = rawEstimate(readEstimatorState(state), name, settings)
  return value === null ? null : clipRate(value, settings.minChangesPerDay, settings.maxChangesPerDay)
}

/**
 * Every estimator's current value (estimateOf each). lln uses the empirical crawl rate p̂ = n/T in
 * place of the paper's known p (docs/math.md 1.2).
 */
export function currentEstimates(state: EstimatorState, settings: EstimatorSettings): Estimates {
  const s = readEstimatorState(state)
  const out = {} as Estimates
  for (const name of ESTIMATOR_NAMES) out[name] = estimateOf(s, name, settings)
  return out
}

/**
 * The history the scheduling estimator rests on, for the early crawls of src/core/crawlTiming.ts:
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
    return {
      intervals: s.segment.intervals,
      changes: s.segment.changes,
      shortestChangedIntervalDays: segmentShortestChangedIntervalDays(s.segment),
    }
  }
  return {
    intervals: s.intervals,
    changes: s.changes,
    shortestChangedIntervalDays: shortestBucketMeanDays(s.changedHistogram),
  }
}

/**
 * Evidence that a page whose every interval saw a change changes faster than `maxChangesPerDay`
 * (docs/math.md 1.11): −ln Π_i (1 − e^{−λ_max τ_i}) over the intervals of the scheduling history (the
 * current segment for mleAdaptive), in nats; 0 when some interval saw no change. e^{−evidence} bounds the
 * chance that a Poisson page with any rate up to λ_max saw a change in every one of these intervals,
 * whatever rule chose their lengths from the outcomes before them.
 */
export function allChangedEvidenceNats(
  state: EstimatorState,
  estimator: EstimatorName,
  maxChangesPerDay: number,
): number {
  const s = readEstimatorState(state)
  // A page that changed in every interval of its life has all of them as evidence, whatever segment
  // mleAdaptive is in; otherwise only the current segment's intervals can all have changed.
  const history = estimator === 'mleAdaptive' && s.changes < s.intervals ? s.segment : s
  if (history.intervals === 0 || history.changes < history.intervals) return 0
  let nats = 0
  for (const { intervalDays, weight } of histogramPoints(history.changedHistogram)) {
    nats -= weight * logOneMinusExpMinus(maxChangesPerDay * intervalDays)
  }
  return nats
}

/** Restarts of the mleAdaptive segment (detected changes of rate) over the page's life. */
export function rateChangesDetected(state: EstimatorState): number {
  return readEstimatorState(state).segment.restarts
}

/** Posterior probability of each change class (docs/math.md 1.9) under a uniform prior. */
export function changeClassProbabilities(
  state: EstimatorState,
): { name: string; changesPerDay: number; probability: number }[] {
  return classProbabilities(readEstimatorState(state).classLogProbabilities)
}

/** Estimators whose scheduling estimate becomes the posterior under a fleet prior (docs/math.md 1.12). */
const POSTERIOR_ESTIMATORS: readonly EstimatorName[] = ['mle', 'mleAdaptive']

/**
 * What the scheduling estimator's history says about the page's rate (docs/math.md 1.12): mleAdaptive's
 * current segment, every other estimator's whole history.
 */
export function schedulingEvidence(state: EstimatorState, estimator: EstimatorName): RateEvidence {
  const s = readEstimatorState(state)
  return estimator === 'mleAdaptive'
    ? histogramEvidence(s.segment.unchangedDays, s.segment.changedHistogram)
    : histogramEvidence(s.unchangedDays, s.changedHistogram)
}

/**
 * The scheduling estimate: under fleet priors (and an MLE estimator), the posterior mean of the page's rate
 * given its host's prior and its own intervals (docs/math.md 1.12), clipped as estimateOf clips; otherwise
 * estimateOf. Null before the first interval.
 */
export function schedulingEstimate(
  state: EstimatorState,
  name: EstimatorName,
  settings: EstimatorSettings,
  priors: FleetPriors | null | undefined,
  host: string,
): number | null {
  if (!priors || !POSTERIOR_ESTIMATORS.includes(name)) return estimateOf(state, name, settings)
  const s = readEstimatorState(state)
  if (s.intervals === 0) return null
  return schedulingEstimateFromEvidence(schedulingEvidence(s, name), settings, priors, host)
}

/**
 * How far above its own evidence (ln(n + 2)/τ̄) the prior may lift a page whose every interval changed
 * (docs/math.md 1.12): while no page of a host or of the fleet has an unchanged interval, nothing bounds the
 * prior from above, and the harmonic mean would follow its fit to the edge of the hyperprior.
 */
export const ALL_CHANGED_PRIOR_REACH = 4

/**
 * The scheduling estimate from a page's evidence and its host's prior (docs/math.md 1.12), clipped as estimateOf
 * clips: the posterior mean; for a page whose every interval changed, the posterior's harmonic mean, held between
 * ln(n + 2)/τ̄ and ALL_CHANGED_PRIOR_REACH times that, and never above the mean.
 */
export function schedulingEstimateFromEvidence(
  evidence: RateEvidence,
  settings: Pick<EstimatorSettings, 'minChangesPerDay' | 'maxChangesPerDay'>,
  priors: FleetPriors,
  host: string,
): number {
  const posterior = ratePosterior(evidence, priorForHost(priors, host))
  let estimate = posterior.changesPerDay
  if (evidence.unchangedDays === 0) {
    const ownEvidence = allChangedBound(evidence)
    const held = Math.min(Math.max(posterior.harmonicChangesPerDay, ownEvidence), ALL_CHANGED_PRIOR_REACH * ownEvidence)
    estimate = Math.min(posterior.changesPerDay, held)
  }
  return clipRate(estimate, settings.minChangesPerDay, settings.maxChangesPerDay) ?? estimate
}

/**
 * A page whose every interval saw a change has no upper bound on its rate in its own evidence: its posterior
 * mean is then the prior's upper tail, which can put it far above any rate worth crawling and starve it. Such a
 * page is faster than its crawls, where freshness is about ρ/Δ, linear in 1/Δ: the rate whose freshness is the
 * posterior's expected freshness is the harmonic mean 1/E[1/Δ] (docs/math.md 1.12). Returned here: what the
 * smoothed MLE of docs/math.md 1.5 says for X = n, about ln(n + 2)/τ̄, the page's own evidence, which holds the
 * harmonic mean from below and, times ALL_CHANGED_PRIOR_REACH, from above.
 */
function allChangedBound(evidence: RateEvidence): number {
  let n = 0
  let days = 0
  for (const { intervalDays, weight } of evidence.changed) {
    n += weight
    days += weight * intervalDays
  }
  return n > 0 && days > 0 ? Math.log(n + 2) / (days / n) : Number.POSITIVE_INFINITY
}

/** The rate a page without an estimate is scheduled with: its host's prior mean, else `fallback`. */
export function priorChangesPerDay(priors: FleetPriors | null | undefined, host: string, fallback: number): number {
  if (!priors) return fallback
  const prior = priorForHost(priors, host)
  return prior.shape / prior.rateDays
}
