/**
 * The fleet's change-rate priors (docs/math.md 1.12). At every solve, the optimiser run and the simulator's loop
 * refit them from what pages store (each page's scheduling evidence) and take every page's posterior as the
 * estimate the solve uses; a crawl report takes the posterior under the stored priors (pageStep.ts). One set of
 * functions for both.
 */
import {
  fitFleetPriors,
  priorChangesPerDay,
  readEstimatorState,
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

/** What a page's stored estimator state says about its rate, for the priors; null when nothing (or no prior applies). */
export function pageRateEvidence(estimator: EstimatorState | null, settings: Settings): RateEvidence | null {
  if (estimator === null || !PRIOR_ESTIMATORS.includes(settings.estimator)) return null
  const state = readEstimatorState(estimator)
  if (state.intervals === 0) return null
  return schedulingEvidence(state, settings.estimator)
}

/**
 * Fits the fleet-wide and per-host priors to the pages' evidence, starting from the previous fit (or a vague
 * prior around settings.defaultChangesPerDay). Null when the scheduling estimator takes no prior.
 */
export function refitRatePriors(
  pages: readonly { host: string; evidence: RateEvidence | null }[],
  settings: Settings,
  previous: FleetPriors | null,
): FleetPriors | null {
  if (!settings.fleetPrior || !PRIOR_ESTIMATORS.includes(settings.estimator)) return null
  // In a canonical order, so the fit's sums (and so every estimate) do not depend on the order pages are read in.
  const withEvidence = pages
    .filter((p): p is { host: string; evidence: RateEvidence } => p.evidence !== null)
    .sort(compareEvidence)
  const stride = Math.max(1, Math.ceil(withEvidence.length / MAX_FIT_PAGES))
  const sample = stride === 1 ? withEvidence : withEvidence.filter((_, k) => k % stride === 0)
  const vague = vaguePrior(settings.defaultChangesPerDay)
  return fitFleetPriors(sample, previous?.fleet ?? vague, vague)
}

/**
 * The change rate a solve uses for a page: its stored estimate (the posterior its latest crawl took under the
 * priors then stored, pageStep.ts); without one, its host's prior mean under the new priors, else the default.
 * The stored estimate is kept, not re-derived, so that the rates a solve reports are optimal for the estimates
 * it reports.
 */
export function solveChangesPerDay(
  page: { host: string; storedChangesPerDay: number | null },
  settings: Settings,
  priors: FleetPriors | null,
): number {
  return page.storedChangesPerDay ?? priorChangesPerDay(priors, page.host, settings.defaultChangesPerDay)
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
