/**
 * Bulk per-page rates at a multiplier λ for the objectives without a closed-form multiplier:
 * periodic freshness (MATH.md 3.3) and harmonic staleness (MATH.md 3.4). Each kernel also returns
 * dΣρ/d ln λ, which the multiplier search uses for Newton steps.
 */
import { erlangCdf, inverseErlangCdf } from './erlang.ts'
import { harmonicRate } from './pageRate.ts'
import type { PageColumns, PageSet } from './pageSet.ts'

export interface RateKernel {
  /** Writes clamp(ρ_i(λ), l_i, u_i) for the set into `out` and returns their (compensated) sum. */
  evaluate(lambda: number, set: PageSet, out: Float64Array): number
  /** dΣρ/d ln λ at the last `evaluate` (≤ 0). */
  readonly slope: number
  /** λ at or below which page i sits at its upper bound (0 when that bound is infinite). */
  lambdaAtUpper(i: number): number
  /** λ at or above which page i sits at its lower bound (may be +Infinity). */
  lambdaAtLower(i: number): number
  /** Call after `columns.upperCrawlsPerDay[i]` changed. */
  upperChanged(i: number): void
}

/** Harmonic staleness: ρ(ρ + Δ) = μΔ/λ (MATH.md 3.4). */
export class HarmonicKernel implements RateKernel {
  slope = 0
  private readonly importanceTimesDelta: Float64Array

  constructor(private readonly columns: PageColumns) {
    const { changesPerDay, importance } = columns
    this.importanceTimesDelta = new Float64Array(changesPerDay.length)
    for (let i = 0; i < changesPerDay.length; i++) this.importanceTimesDelta[i] = importance[i]! * changesPerDay[i]!
  }

  evaluate(lambda: number, set: PageSet, out: Float64Array): number {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const product = this.importanceTimesDelta
    const { indices, count } = set
    let sum = 0
    let compensation = 0
    let slope = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      const l = lower[i]!
      const u = upper[i]!
      let rate = l
      if (u > l) {
        const d = delta[i]!
        rate = harmonicRate(product[i]!, lambda, d)
        if (rate <= l) rate = l
        else if (rate >= u) rate = u
        else slope -= (rate * (rate + d)) / (2 * rate + d)
      }
      out[i] = rate
      const next = sum + rate
      compensation += sum >= rate ? sum - next + rate : rate - next + sum
      sum = next
    }
    this.slope = slope
    return sum + compensation
  }

  lambdaAtUpper(i: number): number {
    const u = this.columns.upperCrawlsPerDay[i]!
    if (u === Number.POSITIVE_INFINITY) return 0
    return this.importanceTimesDelta[i]! / (u * (u + this.columns.changesPerDay[i]!))
  }

  lambdaAtLower(i: number): number {
    const l = this.columns.lowerCrawlsPerDay[i]!
    return this.importanceTimesDelta[i]! / (l * (l + this.columns.changesPerDay[i]!))
  }

  upperChanged(): void {}
}

/**
 * Periodic freshness: g(Δ/ρ) = λΔ/μ with g(x) = 1 − (1 + x)e^{−x} (MATH.md 3.3). Bounds are tested
 * on c = λΔ/μ against g(Δ/l) and g(Δ/u), so pages at a bound cost no root solve; a free page costs one
 * table-guided root of g (one exponential, see erlang.ts) and no other transcendental.
 */
export class PeriodicKernel implements RateKernel {
  slope = 0
  /** Δ/μ: c = λ · ratio. */
  private readonly deltaOverImportance: Float64Array
  /** g(Δ/l): at or above it the page sits at l (1 when l = 0, reached only as ρ → 0). */
  private readonly cAtLower: Float64Array
  /** g(Δ/u): at or below it the page sits at u (0 when u = ∞). */
  private readonly cAtUpper: Float64Array

  constructor(private readonly columns: PageColumns) {
    const { changesPerDay, importance, lowerCrawlsPerDay } = columns
    const n = changesPerDay.length
    this.deltaOverImportance = new Float64Array(n)
    this.cAtLower = new Float64Array(n)
    this.cAtUpper = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      const d = changesPerDay[i]!
      const mu = importance[i]!
      if (!(d > 0 && mu > 0)) continue
      this.deltaOverImportance[i] = d / mu
      const l = lowerCrawlsPerDay[i]!
      this.cAtLower[i] = l > 0 ? erlangCdf(d / l) : 1
      this.upperChanged(i)
    }
  }

  evaluate(lambda: number, set: PageSet, out: Float64Array): number {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const { deltaOverImportance: ratio, cAtLower, cAtUpper } = this
    const { indices, count } = set
    let sum = 0
    let compensation = 0
    let slope = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      const l = lower[i]!
      const u = upper[i]!
      let rate = l
      if (u > l) {
        const c = lambda * ratio[i]!
        if (c >= cAtLower[i]!) rate = l
        else if (c <= cAtUpper[i]!) rate = u
        else {
          const x = inverseErlangCdf(c)
          rate = delta[i]! / x
          if (rate <= l) rate = l
          else if (rate >= u) rate = u
          // dρ/d ln λ = −(Δ/x²)·dx/d ln c, dx/d ln c = c/g'(x) = c/(x e^{−x}), and at the root
          // e^{−x} = (1 − c)/(1 + x).
          else slope -= (rate * c * (1 + x)) / (x * x * (1 - c))
        }
      }
      out[i] = rate
      const next = sum + rate
      compensation += sum >= rate ? sum - next + rate : rate - next + sum
      sum = next
    }
    this.slope = slope
    return sum + compensation
  }

  lambdaAtUpper(i: number): number {
    const ratio = this.deltaOverImportance[i]!
    return ratio > 0 ? this.cAtUpper[i]! / ratio : 0
  }

  lambdaAtLower(i: number): number {
    const ratio = this.deltaOverImportance[i]!
    return ratio > 0 ? this.cAtLower[i]! / ratio : Number.POSITIVE_INFINITY
  }

  upperChanged(i: number): void {
    const u = this.columns.upperCrawlsPerDay[i]!
    const d = this.columns.changesPerDay[i]!
    this.cAtUpper[i] = u === Number.POSITIVE_INFINITY ? 0 : erlangCdf(d / u)
  }
}
