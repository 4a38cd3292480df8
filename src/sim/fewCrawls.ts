/**
 * How well a page's mean change rate can be known from a few crawls: the estimation columns of the few-crawls
 * table, all computed from the same histories (the crawls the loop made), so that estimators are compared on equal
 * evidence rather than on the different histories their own schedules produce.
 *
 * - `scheduling`: the estimate the loop scheduled with at the end of the run (the posterior by default).
 * - `mle`: the page's own smoothed MLE over its whole history (docs/math.md 1.5, `exactMle`).
 * - `truthBound`: what the best possible use of a prior could reach. Its prior knows the true mean rates of the
 *   other pages of the page's host (leave-one-out; the whole fleet's when the host has fewer than
 *   HOST_PRIOR_MIN_PAGES other pages), its likelihood is the Poisson one of docs/math.md 1.5, and for a target
 *   relative error ε it picks, for each page, the rate that holds the most posterior mass within ε of the truth:
 *   the Bayes rule for the loss 1{|d − Δ|/Δ > ε}. No estimator that sees only the page's history and knows its
 *   host no better than this prior gets more pages within ε in expectation, so when `withinShare` is below 1/2,
 *   no such estimator has a median relative error of ε (as far as the Poisson likelihood describes the pages).
 *   ε is `targetRatio` times the MLE's median (the few-crawls issue's goal: 0.6).
 */
import { exactMle, type ChangeInterval } from '../math/estimators/index.ts'

/** Median and 90th percentile of relative errors |Δ̂ − Δ|/Δ (a missing estimate counts as an error of 1). */
interface ErrorSummary {
  median: number | null
  p90: number | null
}

export interface FewCrawlsEstimation {
  /** Pages with 1 to maxIntervals intervals in their history and a true rate above 0. */
  pages: number
  scheduling: ErrorSummary
  mle: ErrorSummary
  truthBound: ErrorSummary & {
    /** ε: the target relative error, targetRatio × the MLE's median. */
    targetRelativeError: number | null
    /** Share of the pages the bound's estimate puts within ε of their true rate. */
    withinShare: number | null
  }
}

/** A host prior of the bound needs at least this many other pages of the host; else the fleet's rates. */
const HOST_PRIOR_MIN_PAGES = 5

function summarize(errors: number[]): ErrorSummary {
  if (errors.length === 0) return { median: null, p90: null }
  errors.sort((a, b) => a - b)
  const mid = errors.length >> 1
  return {
    median: errors.length % 2 === 1 ? errors[mid]! : (errors[mid - 1]! + errors[mid]!) / 2,
    p90: errors[Math.min(errors.length - 1, Math.floor(0.9 * errors.length))]!,
  }
}

function relativeError(estimate: number | null, truth: number): number {
  return estimate === null || !Number.isFinite(estimate) ? 1 : Math.abs(estimate - truth) / truth
}

/** ln P(history | Δ) under Poisson changes: unchanged intervals e^{−Δτ}, changed ones 1 − e^{−Δτ}. */
function logLikelihood(history: readonly ChangeInterval[], changesPerDay: number): number {
  let sum = 0
  for (const { intervalDays, changed } of history) {
    const x = changesPerDay * intervalDays
    sum += changed ? Math.log(-Math.expm1(-x)) : -x
  }
  return sum
}

/** First index of the ascending `values` whose value is ≥ x (values.length if none). */
function lowerBound(values: Float64Array, x: number): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (values[mid]! < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The rate d that maximises P(|d − Δ|/Δ ≤ ε | history) when Δ takes one of `sortedRates` (ascending, equally
 * likely a priori): Δ lies within ε of d exactly when d/(1 + ε) ≤ Δ ≤ d/(1 − ε). Candidates are the prior's rates.
 */
export function mostProbableWithin(
  sortedRates: Float64Array,
  history: readonly ChangeInterval[],
  relativeErrorTarget: number,
): number {
  const m = sortedRates.length
  const logWeights = new Float64Array(m)
  let maxLog = Number.NEGATIVE_INFINITY
  for (let j = 0; j < m; j++) {
    const w = logLikelihood(history, sortedRates[j]!)
    logWeights[j] = w
    if (w > maxLog) maxLog = w
  }
  const cumulative = new Float64Array(m + 1)
  for (let j = 0; j < m; j++) cumulative[j + 1] = cumulative[j]! + Math.exp(logWeights[j]! - maxLog)
  const upperFactor = relativeErrorTarget < 1 ? 1 / (1 - relativeErrorTarget) : Number.POSITIVE_INFINITY
  let best = sortedRates[0]!
  let bestMass = -1
  for (let j = 0; j < m; j++) {
    const d = sortedRates[j]!
    const from = lowerBound(sortedRates, d / (1 + relativeErrorTarget))
    const to = upperFactor === Number.POSITIVE_INFINITY ? m : lowerBound(sortedRates, d * upperFactor * (1 + 1e-12))
    const mass = cumulative[to]! - cumulative[from]!
    if (mass > bestMass) {
      bestMass = mass
      best = d
    }
  }
  return best
}

/**
 * The estimation columns over pages whose history has 1 to `maxIntervals` intervals. `schedulingEstimates` holds
 * the loop's estimates (NaN = none), `trueChangesPerDay` each page's true mean rate, `hostOfPage` its host (null:
 * one host).
 */
export function fewCrawlsEstimation(
  histories: readonly (readonly ChangeInterval[])[],
  schedulingEstimates: Float64Array,
  trueChangesPerDay: Float64Array,
  hostOfPage: Int32Array | null,
  maxIntervals: number,
  targetRatio: number,
): FewCrawlsEstimation {
  const fleetRates = Float64Array.from(trueChangesPerDay.filter((d) => d > 0)).sort()
  const hostPages = new Map<number, number[]>()
  for (let i = 0; i < trueChangesPerDay.length; i++) {
    if (!(trueChangesPerDay[i]! > 0)) continue
    const host = hostOfPage?.[i] ?? 0
    let list = hostPages.get(host)
    if (!list) hostPages.set(host, (list = []))
    list.push(i)
  }
  const chosen: number[] = []
  const scheduling: number[] = []
  const mle: number[] = []
  for (let i = 0; i < histories.length; i++) {
    const history = histories[i]!
    const truth = trueChangesPerDay[i]!
    if (history.length < 1 || history.length > maxIntervals || !(truth > 0)) continue
    chosen.push(i)
    const estimate = schedulingEstimates[i]!
    scheduling.push(relativeError(Number.isNaN(estimate) ? null : estimate, truth))
    mle.push(relativeError(exactMle(history).changesPerDay, truth))
  }
  const mleSummary = summarize([...mle])
  const target = mleSummary.median === null ? null : targetRatio * mleSummary.median
  const bound: number[] = []
  let within = 0
  if (target !== null)
    for (const i of chosen) {
      const others = hostPages.get(hostOfPage?.[i] ?? 0)!.filter((j) => j !== i)
      const prior =
        others.length >= HOST_PRIOR_MIN_PAGES
          ? Float64Array.from(others, (j) => trueChangesPerDay[j]!).sort()
          : fleetRates
      const truth = trueChangesPerDay[i]!
      const error = relativeError(mostProbableWithin(prior, histories[i]!, target), truth)
      bound.push(error)
      if (error <= target) within++
    }
  return {
    pages: chosen.length,
    scheduling: summarize(scheduling),
    mle: mleSummary,
    truthBound: {
      ...summarize(bound),
      targetRelativeError: target,
      withinShare: target === null || chosen.length === 0 ? null : within / chosen.length,
    },
  }
}
