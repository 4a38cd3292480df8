/**
 * One page at a time: its freshness, its marginal utility and its rate at a given multiplier.
 * These are the O(1) formulas of MATH.md 3.1, 3.3 and 3.4; the solver uses the same ones in bulk.
 */
import { erlangCdf, inverseErlangCdf } from './erlang.ts'
import type { Objective } from './types.ts'

export interface PageRateInputs {
  changesPerDay: number
  importance: number
  minCrawlsPerDay: number
  maxCrawlsPerDay: number
}

/**
 * Expected freshness of one page crawled at ρ (crawls per day) when it changes at Δ (changes per day):
 * `freshness` and `harmonic` → ρ/(ρ+Δ) (Poisson crawling, MATH.md 3.1); `freshness-periodic` →
 * (ρ/Δ)(1 − e^{−Δ/ρ}) (MATH.md 3.3). 1 when Δ = 0; 0 when ρ = 0 < Δ. Throws RangeError on negative
 * or NaN input.
 */
export function pageFreshness(objective: Objective, crawlsPerDay: number, changesPerDay: number): number {
  if (!(crawlsPerDay >= 0) || !(changesPerDay >= 0)) {
    throw new RangeError(`pageFreshness needs crawlsPerDay ≥ 0 and changesPerDay ≥ 0, got ${crawlsPerDay}, ${changesPerDay}`)
  }
  if (changesPerDay === 0 || crawlsPerDay === Number.POSITIVE_INFINITY) return 1
  if (crawlsPerDay === 0 || changesPerDay === Number.POSITIVE_INFINITY) return 0
  if (objective === 'freshness-periodic') {
    const x = changesPerDay / crawlsPerDay
    return -Math.expm1(-x) / x
  }
  return crawlsPerDay / (crawlsPerDay + changesPerDay)
}

/**
 * μ f'(ρ), the utility of one more crawl per day for this page: the quantity that equals λ_h on every
 * page strictly between its bounds at the optimum. freshness: μΔ/(ρ+Δ)²; periodic: (μ/Δ) g(Δ/ρ)
 * (μ/Δ at ρ = 0); harmonic: μΔ/(ρ(ρ+Δ)) (Number.MAX_VALUE at ρ = 0). 0 when μ = 0 or Δ = 0.
 */
export function marginalUtility(objective: Objective, crawlsPerDay: number, changesPerDay: number, importance: number): number {
  if (importance === 0 || changesPerDay === 0) return 0
  const rho = crawlsPerDay
  const delta = changesPerDay
  if (objective === 'freshness') return (importance * delta) / ((rho + delta) * (rho + delta))
  if (objective === 'freshness-periodic') {
    if (rho === 0) return importance / delta
    return (importance / delta) * erlangCdf(delta / rho)
  }
  if (rho === 0) return Number.MAX_VALUE
  return (importance * delta) / (rho * (rho + delta))
}

/**
 * The rate of one page at multiplier λ (MATH.md 3.1 "λ is the only global quantity"): the maximiser of
 * μ f(ρ) − λρ clamped to [l, u], using the page's host multiplier λ_h when its host is capped.
 * - freshness: √(μΔ/λ) − Δ; periodic: Δ/x with g(x) = λΔ/μ (0 when λΔ/μ ≥ 1);
 *   harmonic: (−Δ + √(Δ² + 4μΔ/λ))/2.
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
  if (!(lambda >= 0) || !(delta >= 0) || !(importance >= 0) || !(lower >= 0) || !(upper >= lower) || lower === Number.POSITIVE_INFINITY) {
    throw new RangeError(
      `rateForPage needs λ, Δ, μ ≥ 0 and 0 ≤ l ≤ u with l finite, got λ=${lambda} Δ=${delta} μ=${importance} l=${lower} u=${upper}`,
    )
  }
  if (importance === 0 || delta === 0) return lower
  if (lambda === 0) return upper === Number.POSITIVE_INFINITY ? lower : upper
  const rate = clamp(unclampedRate(objective, lambda, delta, importance), lower, upper)
  // Only a λ near the smallest doubles can push √(μΔ/λ) past the largest double.
  return rate === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : rate
}

/** The stationary point of μ f(ρ) − λρ for λ > 0, μ > 0, Δ > 0 (may be 0 or +Infinity). */
function unclampedRate(objective: Objective, lambda: number, delta: number, importance: number): number {
  if (objective === 'freshness') return Math.sqrt((importance * delta) / lambda) - delta
  if (objective === 'freshness-periodic') {
    const c = lambda * (delta / importance)
    if (!(c < 1)) return 0
    return delta / inverseErlangCdf(c)
  }
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

function clamp(value: number, lower: number, upper: number): number {
  return value < lower ? lower : value > upper ? upper : value
}
