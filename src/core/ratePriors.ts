/**
 * The fleet's change-rate priors (docs/math.md 1.12). At every solve, the optimiser run and the simulator's loop
 * refit them from what pages store (each page's scheduling evidence) and take every page's posterior as the
 * estimate the solve uses; a crawl report takes the posterior under the stored priors (pageStep.ts). One set of
 * functions for both.
 */
import {
  SHAPE_MIN_INTERVALS,
  fitFleetPriors,
  priorChangesPerDay,
  priorForHost,
  ratePosterior,
  readEstimatorState,
  schedulingHistory,
  schedulingEstimateFromEvidence,
  schedulingEvidence,
  vaguePrior,
  type EstimatorState,
  type FleetPriors,
  type RateEvidence,
} from '../math/estimators/index.ts'
import type { Settings } from './settings.ts'

/** Estimators whose estimate the priors replace by a posterior (the others ignore priors). */
const PRIOR_ESTIMATORS: readonly Settings['estimator'][] = ['mle', 'mleAdaptive']

/** The fit reads at most this many pages (an even sample of them): enough for a host's few parameters. */
const MAX_FIT_PAGES = 20_000

/** What a page's stored estimator state says about its rate, for the priors; null when nothing (or no prior applies, or the page is noisy). */
export function pageRateEvidence(
  estimator: EstimatorState | null,
  settings: Settings,
  noisy: boolean,
): RateEvidence | null {
  // A noisy page's "changes" are noise (docs/math.md 1.11): it says nothing about its host's rates.
  if (noisy || estimator === null || !PRIOR_ESTIMATORS.includes(settings.estimator)) return null
  const state = readEstimatorState(estimator)
  if (state.intervals === 0) return null
  return schedulingEvidence(state, settings.estimator)
}

/**
 * The priors are refitted at most this often: they move slowly (they summarise thousands of pages), and a refit
 * of a fleet of many hosts takes seconds (BENCHMARKS.md), where re-deriving the posteriors under them does not.
 */
export const PRIOR_REFIT_MS = 60 * 60 * 1000
/** ...unless the pages with evidence have grown by more than this factor since (a young fleet's first crawls). */
const PRIOR_REFIT_GROWTH = 1.1

/**
 * Fits the fleet-wide and per-host priors to the pages' evidence, starting from the previous fit (or a vague
 * prior around settings.defaultChangesPerDay); returns the previous fit unchanged when it is younger than
 * PRIOR_REFIT_MS and the pages with evidence have not grown by PRIOR_REFIT_GROWTH since. Null when the scheduling estimator takes no prior.
 */
export function refitRatePriors(
  pages: readonly { host: string; evidence: RateEvidence | null }[],
  settings: Settings,
  previous: FleetPriors | null,
  nowMs: number,
): FleetPriors | null {
  if (!settings.fleetPrior || !PRIOR_ESTIMATORS.includes(settings.estimator)) return null
  const withEvidence = pages.filter((p): p is { host: string; evidence: RateEvidence } => p.evidence !== null)
  const young =
    previous?.fittedAtMs !== undefined && nowMs >= previous.fittedAtMs && nowMs - previous.fittedAtMs < PRIOR_REFIT_MS
  const grown = withEvidence.length > PRIOR_REFIT_GROWTH * (previous?.fittedPages ?? 0)
  if (young && !grown) return previous
  // In a canonical order, so the fit's sums (and so every estimate) do not depend on the order pages are read in.
  withEvidence.sort(compareEvidence)
  const stride = Math.max(1, Math.ceil(withEvidence.length / MAX_FIT_PAGES))
  const sample = stride === 1 ? withEvidence : withEvidence.filter((_, k) => k % stride === 0)
  const vague = vaguePrior(settings.defaultChangesPerDay)
  return {
    ...fitFleetPriors(sample, previous?.fleet ?? vague, vague),
    fittedAtMs: nowMs,
    fittedPages: withEvidence.length,
  }
}

/**
 * A page's estimate is re-stored by a solve only when the posterior under the new priors moved by more than this
 * share of the stored value: below it the solve keeps the stored estimate, so the estimate a page reports is always
 * the one the latest solve (or its latest crawl) used.
 */
const ESTIMATE_RELATIVE_CHANGE = 1e-3

/**
 * The prior's weight in a posterior fades as a page's intervals accumulate: a solve re-derives the estimates of
 * pages with at most this many intervals (the others keep the posterior their latest crawl took).
 */
const REDERIVE_MAX_INTERVALS = 32
/** A solve re-derives at most this many estimates (those of the pages with the fewest intervals first). */
const REDERIVE_MAX_PAGES = 5_000

/** A page as a solve sees it: its host, its evidence (pageRateEvidence), its interval count and stored estimate. */
export interface SolvePage {
  host: string
  evidence: RateEvidence | null
  intervals: number
  storedChangesPerDay: number | null
}

/**
 * The change rates a solve uses (docs/math.md 1.12):
 * - with priors, a page with evidence and few intervals (REDERIVE_MAX_INTERVALS, at most REDERIVE_MAX_PAGES of
 *   them, the fewest intervals first) gets its posterior mean under the priors just fitted: a page crawled a few
 *   times keeps learning from the fleet between its crawls (a posterior taken under the first, vague priors
 *   would otherwise stay until the page's next crawl, days or weeks later). The stored estimate is kept when the
 *   posterior is within ESTIMATE_RELATIVE_CHANGE of it;
 * - every other page its stored estimate, else (no evidence yet) its host's prior mean, else the default.
 * `store[i]` = 1: the caller must store changesPerDay[i] with page i, so the estimates the API reports are the
 * ones the solve used.
 */
export function solveEstimates(
  pages: readonly SolvePage[],
  settings: Settings,
  priors: FleetPriors | null,
): { changesPerDay: Float64Array; store: Uint8Array } {
  const n = pages.length
  const changesPerDay = Float64Array.from(
    pages,
    (page) => page.storedChangesPerDay ?? priorChangesPerDay(priors, page.host, settings.defaultChangesPerDay),
  )
  const store = new Uint8Array(n)
  if (priors === null) return { changesPerDay, store }
  // The candidates by interval count (a counting sort), fewest first, up to the cap.
  const byIntervals: number[][] = Array.from({ length: REDERIVE_MAX_INTERVALS + 1 }, () => [])
  for (let i = 0; i < n; i++) {
    const page = pages[i]!
    if (page.evidence !== null && page.intervals <= REDERIVE_MAX_INTERVALS) byIntervals[page.intervals]!.push(i)
  }
  let budget = REDERIVE_MAX_PAGES
  for (const bucket of byIntervals) {
    for (const i of bucket) {
      if (budget-- <= 0) return { changesPerDay, store }
      const page = pages[i]!
      const posterior = schedulingEstimateFromEvidence(page.evidence!, settings, priors, page.host)
      if (estimateMoved(page.storedChangesPerDay, posterior)) {
        changesPerDay[i] = posterior
        store[i] = 1
      }
    }
  }
  return { changesPerDay, store }
}

/** Whether a solve's estimate for a page differs from its stored one (ESTIMATE_RELATIVE_CHANGE). */
function estimateMoved(storedChangesPerDay: number | null, changesPerDay: number): boolean {
  return (
    storedChangesPerDay === null ||
    Math.abs(changesPerDay - storedChangesPerDay) > ESTIMATE_RELATIVE_CHANGE * Math.max(storedChangesPerDay, 1e-12)
  )
}

/** A total order on (host, evidence): equal keys have equal contributions to the fit. */
function compareEvidence(
  a: { host: string; evidence: RateEvidence },
  b: { host: string; evidence: RateEvidence },
): number {
  if (a.host !== b.host) return a.host < b.host ? -1 : 1
  if (a.evidence.unchangedDays !== b.evidence.unchangedDays) return a.evidence.unchangedDays - b.evidence.unchangedDays
  const x = a.evidence.changed
  const y = b.evidence.changed
  if (x.length !== y.length) return x.length - y.length
  for (let k = 0; k < x.length; k++) {
    if (x[k]!.intervalDays !== y[k]!.intervalDays) return x[k]!.intervalDays - y[k]!.intervalDays
    if (x[k]!.weight !== y[k]!.weight) return x[k]!.weight - y[k]!.weight
  }
  return 0
}

/** What a page learns from (docs/math.md 1.12 and 3.5), as GET /v1/pages/{id}/estimates shows it. */
interface PageLearning {
  /** The gamma prior the page borrows from; null when settings.fleetPrior is off or no optimiser run has fitted one. */
  prior: { scope: 'host' | 'fleet'; shape: number; meanChangesPerDay: number } | null
  /** The page's posterior under that prior; null without a prior (or for an estimator that takes none). */
  /** `intervals`: those the estimate rests on (mleAdaptive: since the last detected change of rate). */
  posterior: {
    changesPerDay: number
    meanChangesPerDay: number
    ci90: [number, number]
    intervals: number
  } | null
  /** The age law's shape the distribution-aware objective uses. */
  shape: { model: 'poisson' | 'gamma-mixed'; ageShape: number | null; fittedAtIntervals: number; note: string }
}

/** The learning view of a page: its prior, its posterior with a 90 % interval, and its fitted shape. */
export function pageLearning(
  estimator: EstimatorState | null,
  host: string,
  settings: Settings,
  priors: FleetPriors | null,
): PageLearning {
  const usesPrior = settings.fleetPrior && PRIOR_ESTIMATORS.includes(settings.estimator) && priors !== null
  const prior = usesPrior ? priorForHost(priors, host) : null
  const evidence = estimator === null ? null : pageRateEvidence(estimator, settings, false)
  const posterior = prior === null ? null : ratePosterior(evidence ?? { unchangedDays: 0, changed: [] }, prior)
  const state = estimator === null ? null : readEstimatorState(estimator)
  const intervals = state?.intervals ?? 0
  const fittedAt = state?.ageShapeFitIntervals ?? 0
  const ageShape = state?.ageShape ?? null
  const note =
    ageShape !== null
      ? `gamma-mixed Poisson with shape β = ${ageShape}, fitted at ${fittedAt} intervals`
      : fittedAt > 0
        ? `Poisson: the fit at ${fittedAt} intervals found no shape that beats it`
        : `Poisson: not enough evidence (the first fit comes at ${SHAPE_MIN_INTERVALS} intervals; the page has ${intervals})`
  return {
    prior:
      prior === null
        ? null
        : {
            scope: priors!.hosts[host] ? 'host' : 'fleet',
            shape: prior.shape,
            meanChangesPerDay: prior.shape / prior.rateDays,
          },
    posterior:
      posterior === null
        ? null
        : {
            changesPerDay: schedulingEstimateFromEvidence(
              evidence ?? { unchangedDays: 0, changed: [] },
              settings,
              priors!,
              host,
            ),
            meanChangesPerDay: posterior.changesPerDay,
            ci90: posterior.ci90,
            intervals: evidence === null || state === null ? 0 : schedulingHistory(state, settings.estimator).intervals,
          },
    shape: { model: ageShape === null ? 'poisson' : 'gamma-mixed', ageShape, fittedAtIntervals: fittedAt, note },
  }
}
