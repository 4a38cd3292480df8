/**
 * One page at a time: its freshness, its marginal utility and its rate at a given multiplier.
 * These are the O(1) formulas of docs/math.md 3.1, 3.3, 3.4 and 3.5; the solver uses the same ones in bulk.
 * `ageShape` is the page's β for `freshness-renewal` (+Infinity, the default, is Poisson); the other
 * objectives ignore it.
 */
import { gammaMixedFresh, gammaMixedMarginal, inverseGammaMixedMarginal } from '../renewal/gammaMixed.ts'
import { erlangCdf, inverseErlangCdf } from './erlang.ts'
import type { Objective } from './types.ts'
import { clamp } from '../numbers.ts'

interface PageRateInputs {
  changesPerDay: number
  importance: number
  minCrawlsPerDay: number
  maxCrawlsPerDay: number
  /** β of the page's gamma-mixed age law (`freshness-renewal`); absent or +Infinity = Poisson. */
  ageShape?: number
}

/**
 * Expected freshness of one page crawled at ρ (crawls per day) when it changes at Δ (changes per day):
 * `freshness` and `harmonic` → ρ/(ρ+Δ) (Poisson crawling, docs/math.md 3.1); `freshness-periodic` →
 * (ρ/Δ)(1 − e^{−Δ/ρ}) (docs/math.md 3.3); `freshness-renewal` → F_β(Δ/ρ)·ρ/Δ (docs/math.md 3.5). 1 when
 * Δ = 0; 0 when ρ = 0 < Δ. Throws RangeError on negative or NaN input.
 */
export function pageFreshness(
  objective: Objective,
  crawlsPerDay: number,
  changesPerDay: number,
  ageShape = Number.POSITIVE_INFINITY,
): number {
  if (!(crawlsPerDay >= 0) || !(changesPerDay >= 0)) {
    throw new RangeError(
      `pageFreshness needs crawlsPerDay ≥ 0 and changesPerDay ≥ 0, got ${crawlsPerDay}, ${changesPerDay}`,
    )
  }
  if (changesPerDay === 0 || crawlsPerDay === Number.POSITIVE_INFINITY) return 1
  if (crawlsPerDay === 0 || changesPerDay === Number.POSITIVE_INFINITY) return 0
  if (objective === 'freshness-periodic' || objective === 'freshness-renewal') {
    // Δ/ρ underflows to 0 for a subnormal change rate (f → 1 as Δ/ρ → 0), or overflows to ∞ (f → 0).
    const x = changesPerDay / crawlsPerDay
    if (x === 0) return 1
    if (x === Number.POSITIVE_INFINITY) return 0
    return objective === 'freshness-periodic' ? -Math.expm1(-x) / x : gammaMixedFresh(x, ageShape) / x
  }
  return crawlsPerDay / (crawlsPerDay + changesPerDay)
}

/**
 * μ f'(ρ), the utility of one more crawl per day for this page: the quantity that equals λ_h on every
 * page strictly between its bounds at the optimum. freshness: μΔ/(ρ+Δ)²; periodic: (μ/Δ) g(Δ/ρ)
 * (μ/Δ at ρ = 0); harmonic: μΔ/(ρ(ρ+Δ)) (Number.MAX_VALUE at ρ = 0); renewal: (μ/Δ) h_β(Δ/ρ) (its limit
 * at ρ = 0, clipped to Number.MAX_VALUE). 0 when μ = 0 or Δ = 0.
 */
export function marginalUtility(
  objective: Objective,
  crawlsPerDay: number,
  changesPerDay: number,
  importance: number,
  ageShape = Number.POSITIVE_INFINITY,
): number {
  if (importance === 0 || changesPerDay === 0) return 0
  const rho = crawlsPerDay
  const delta = changesPerDay
  if (objective === 'freshness') return (importance * delta) / ((rho + delta) * (rho + delta))
  if (objective === 'freshness-periodic') {
    if (rho === 0) return importance / delta
    return (importance / delta) * erlangCdf(delta / rho)
  }
  if (objective === 'freshness-renewal') {
    const x = rho === 0 ? Number.POSITIVE_INFINITY : delta / rho
    return Math.min(Number.MAX_VALUE, (importance / delta) * gammaMixedMarginal(x, ageShape))
  }
  if (rho === 0) return Number.MAX_VALUE
  return (importance * delta) / (rho * (rho + delta))
}

/**
 * The rate of one page at multiplier λ (docs/math.md 3.1 "λ is the only global quantity"): the maximiser of
 * μ f(ρ) − λρ clamped to [l, u], using the page's host multiplier λ_h when its host is capped.
 * - freshness: √(μΔ/λ) − Δ; periodic: Δ/x with g(x) = λΔ/μ (0 when λΔ/μ ≥ 1);
 *   harmonic: (−Δ + √(Δ² + 4μΔ/λ))/2; renewal: Δ/x with h_β(x) = λΔ/μ (0 when λΔ/μ ≥ h_β(∞)).
 * - μ = 0 or Δ = 0 → l (crawling gains nothing).
 * - λ = 0 (budget not binding) → u when finite, else l: a page with an unbounded rate cannot be
 *   served by an unbinding budget, so it is kept at its floor rather than given an infinite rate.
 * Never +Infinity (clipped to Number.MAX_VALUE). Throws RangeError on NaN or negative inputs, or u < l.
 */
export function rateForPage(page: PageRateInputs, lambda: number, objective: Objective): number {
  const delta = page.changesPerDay
  const importance = page.importance
  const lower = page.minCrawlsPerDay
  const upper = page.maxCrawlsPerDay
  const shape = page.ageShape ?? Number.POSITIVE_INFINITY
  if (
    !(lambda >= 0) ||
    !(delta >= 0) ||
    !(importance >= 0) ||
    !(lower >= 0) ||
    !(upper >= lower) ||
    lower === Number.POSITIVE_INFINITY ||
    !(shape > 0)
  ) {
    throw new RangeError(
      `rateForPage needs λ, Δ, μ ≥ 0, 0 ≤ l ≤ u with l finite and β > 0, got λ=${lambda} Δ=${delta} μ=${importance} l=${lower} u=${upper} β=${shape}`,
    )
  }
  if (importance === 0 || delta === 0) return lower
  if (lambda === 0) return upper === Number.POSITIVE_INFINITY ? lower : upper
  const rate = clamp(
    unclampedRate(objective, lambda, delta, importance, page.ageShape ?? Number.POSITIVE_INFINITY),
    lower,
    upper,
  )
  // Only a λ near the smallest doubles can push √(μΔ/λ) past the largest double.
  return rate === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : rate
}

/** The stationary point of μ f(ρ) − λρ for λ > 0, μ > 0, Δ > 0 (may be 0 or +Infinity). */
function unclampedRate(
  objective: Objective,
  lambda: number,
  delta: number,
  importance: number,
  ageShape: number,
): number {
  if (objective === 'freshness') return Math.sqrt((importance * delta) / lambda) - delta
  if (
    objective === 'freshness-periodic' ||
    (objective === 'freshness-renewal' && ageShape === Number.POSITIVE_INFINITY)
  ) {
    const c = lambda * (delta / importance)
    if (!(c < 1)) return 0
    return delta / inverseErlangCdf(c)
  }
  if (objective === 'freshness-renewal')
    return delta / inverseGammaMixedMarginal(lambda * (delta / importance), ageShape)
  return harmonicRate(importance * delta, lambda, delta)
}

/**
 * Root of ρ(ρ + Δ) = q with q = μΔ/λ, written as 2q/(Δ + √(Δ² + 4q)) to avoid the cancellation of
 * (−Δ + √(Δ² + 4q))/2 when q ≪ Δ².
 */
export function harmonicRate(importanceTimesDelta: number, lambda: number, delta: number): number {
  const q = importanceTimesDelta / lambda
  if (q === Number.POSITIVE_INFINITY) return q
  return (2 * q) / (delta + Math.sqrt(delta * delta + 4 * q))
}
