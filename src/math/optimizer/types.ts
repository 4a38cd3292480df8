/**
 * Shapes of the crawl-rate optimisation (docs/math.md section 3): maximise Σ μ_i f(ρ_i) subject to
 * Σ ρ_i ≤ R, l_i ≤ ρ_i ≤ u_i and per-host caps Σ_{i∈h} ρ_i ≤ C_h.
 */

/**
 * Per-page utility f(ρ):
 * - `freshness`: Poisson crawling, f = ρ/(ρ+Δ) (docs/math.md 3.1);
 * - `freshness-periodic`: crawls every 1/ρ days, f = (ρ/Δ)(1 − e^{−Δ/ρ}) (docs/math.md 3.3);
 * - `harmonic`: f = ln(ρ/(ρ+Δ)), no page starves (docs/math.md 3.4);
 * - `freshness-renewal`: crawls every 1/ρ days of a page whose age law is gamma-mixed Poisson with rate Δ
 *   and shape β (RateProblem.ageShape), f = ρ ∫_0^{1/ρ} (1 + Δa/β)^{−β} da (docs/math.md 3.5); β = ∞ is
 *   `freshness-periodic`.
 */
export type Objective = 'freshness' | 'freshness-periodic' | 'harmonic' | 'freshness-renewal'

/** One optimisation instance; page i is entry i of every per-page array. */
export interface RateProblem {
  /** Δ_i ≥ 0, changes per day. */
  changesPerDay: Float64Array
  /** μ_i ≥ 0, dimensionless weight. */
  importance: Float64Array
  /** l_i ≥ 0, finite. */
  minCrawlsPerDay: Float64Array
  /** u_i ≥ l_i, may be +Infinity. */
  maxCrawlsPerDay: Float64Array
  /** Host of page i (index into hostMaxCrawlsPerDay), or −1 for none. */
  hostIndex?: Int32Array
  /** C_h ≥ 0 per host (+Infinity = uncapped). */
  hostMaxCrawlsPerDay?: Float64Array
  /**
   * β_i > 0 of each page's gamma-mixed age law, or +Infinity for Poisson changes; read by
   * `freshness-renewal` only (absent: every page Poisson).
   */
  ageShape?: Float64Array
  /** R ≥ 0, finite. */
  budgetCrawlsPerDay: number
  objective: Objective
  /**
   * A multiplier near the solution (e.g. the previous solve's λ), where the search on the whole page set
   * starts instead of a sample's λ. It changes how many passes the search takes, never the solution.
   */
  lambdaHint?: number
}

export interface RateSolution {
  crawlsPerDay: Float64Array
  /**
   * Global multiplier λ (marginal utility of one more crawl per day, importance × days). 0 when the
   * budget does not bind; clipped to Number.MAX_VALUE when it is unbounded (harmonic pages held at l = 0).
   */
  lambda: number
  /** λ_h per host: max(λ, the multiplier at which the host's pages fill C_h) (docs/math.md 3.2). */
  hostLambda: Float64Array
  totalCrawlsPerDay: number
  /** Σ μ f(ρ) / Σ μ (1 when Σ μ = 0); the harmonic objective reports Poisson freshness ρ/(ρ+Δ). */
  expectedFreshness: number
  /** Pages with ρ_i > l_i. */
  pagesCrawled: number
}

/**
 * The minimum rates alone exceed the budget (Σ l_i > R), or a host's minimum rates exceed its cap
 * (Σ_{i∈h} l_i > C_h, then `hostIndex` names it). docs/math.md 3.1: reported, never rescaled.
 */
export class InfeasibleBudgetError extends Error {
  readonly requiredCrawlsPerDay: number
  readonly budgetCrawlsPerDay: number
  /** The host whose cap is too small, or null when the global budget is. */
  readonly hostIndex: number | null

  constructor(options: { requiredCrawlsPerDay: number; budgetCrawlsPerDay: number; hostIndex?: number | null }) {
    const hostIndex = options.hostIndex ?? null
    super(
      hostIndex === null
        ? `infeasible crawl budget: the minimum crawl rates need ${options.requiredCrawlsPerDay} crawls per day but the budget is ${options.budgetCrawlsPerDay}`
        : `infeasible host cap: host ${hostIndex} needs ${options.requiredCrawlsPerDay} crawls per day for its pages' minimum rates but its cap is ${options.budgetCrawlsPerDay}`,
    )
    this.name = 'InfeasibleBudgetError'
    this.requiredCrawlsPerDay = options.requiredCrawlsPerDay
    this.budgetCrawlsPerDay = options.budgetCrawlsPerDay
    this.hostIndex = hostIndex
  }
}
