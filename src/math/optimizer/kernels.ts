/**
 * Bulk per-page rates at a multiplier λ for the objectives without a closed-form multiplier:
 * periodic freshness (MATH.md 3.3) and harmonic staleness (MATH.md 3.4). Each kernel also returns
 * dΣρ/d ln λ, and, when asked, splits the pages for the multiplier search's local model (see
 * PassModel and multiplierSearch.ts).
 */
import { erlangCdf, inverseErlangCdf } from './erlang.ts'
import { harmonicRate } from './pageRate.ts'
import type { PageColumns, PageSet } from './pageSet.ts'

/**
 * Σρ near the current y = ln λ, split in two. Pages with a kink within `window` of y in ln λ (a
 * bound they reach or leave, or the periodic edge λ = μ/Δ where the rate falls to 0 with a vertical
 * tangent) are listed in `near`, to be re-evaluated exactly; every other page is smooth there and is
 * summed into a third-order Taylor model in y. The kinks are what make Σρ(y) rough at the scale of a
 * Newton step on a large set, so a model that treats them exactly converges much faster.
 */
export class PassModel {
  /** Half-width in ln λ of the window; set by the caller before the pass. */
  window = 0
  /** Pages near a kink: `near[0..nearCount)`. */
  readonly near: Int32Array
  nearCount = 0
  /** More pages were near a kink than `near` holds; the rest went into the Taylor sums. */
  overflow = false
  /** Σρ and its first three derivatives in y over the modelled (not listed) pages. */
  farSum = 0
  farSlope = 0
  farCurvature = 0
  farThird = 0
  /** d²Σρ/dy² and d³Σρ/dy³ over all pages (the listed ones at their current side of the kink). */
  curvature = 0
  third = 0

  constructor(capacity: number) {
    this.near = new Int32Array(capacity)
  }
}

export interface RateKernel {
  /**
   * Writes clamp(ρ_i(λ), l_i, u_i) for the set into `out` and returns their (compensated) sum.
   * With `model`, also fills it (its `window` is read, the rest written).
   */
  evaluate(lambda: number, set: PageSet, out: Float64Array, model?: PassModel | null): number
  /** dΣρ/d ln λ at the last `evaluate` (≤ 0). */
  readonly slope: number
  /**
   * Over the pages of the set that can move (u > l): the least λ at or below which a page sits at
   * its upper bound (0 when a bound is infinite), and the greatest λ at or above which a page sits at
   * its lower bound (may be +Infinity). Every page is at u below the first and at l above the second.
   */
  multiplierRange(set: PageSet): readonly [number, number]
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

  evaluate(lambda: number, set: PageSet, out: Float64Array, model: PassModel | null = null): number {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const product = this.importanceTimesDelta
    const { indices, count } = set
    // The rate's elasticity in λ is between 1/2 and 1, so a kink within e^{±w} of λ is within e^{±w}
    // of the unclamped rate.
    const grow = model === null ? 1 : Math.exp(model.window)
    const shrink = 1 / grow
    const near = model?.near
    const capacity = near?.length ?? 0
    let nearCount = 0
    let overflow = false
    let nearSum = 0
    let nearSlope = 0
    let nearCurvature = 0
    let nearThird = 0
    let curvature = 0
    let third = 0
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
        const free = harmonicRate(product[i]!, lambda, d)
        let dRate = 0
        if (free <= l) rate = l
        else if (free >= u) rate = u
        else {
          rate = free
          // ρ(ρ + Δ) = μΔ/λ and s = 2ρ + Δ give, in y = ln λ: ρ' = −ρ(ρ + Δ)/s,
          // ρ'' = −ρ' − 2ρ'²/s, ρ''' = −ρ'' − 4ρ'ρ''/s + 4ρ'³/s².
          dRate = -(rate * (rate + d)) / (2 * rate + d)
          slope += dRate
        }
        if (model !== null) {
          let second = 0
          let thirdHere = 0
          if (dRate !== 0) {
            const inverseS = 1 / (2 * rate + d)
            second = -dRate - 2 * dRate * dRate * inverseS
            thirdHere = -second - 4 * dRate * second * inverseS + 4 * dRate * dRate * dRate * inverseS * inverseS
            curvature += second
            third += thirdHere
          }
          if ((free >= l * shrink && free <= l * grow) || (free >= u * shrink && free <= u * grow)) {
            if (nearCount < capacity) {
              near![nearCount++] = i
              nearSum += rate
              nearSlope += dRate
              nearCurvature += second
              nearThird += thirdHere
            } else overflow = true
          }
        }
      }
      out[i] = rate
      const next = sum + rate
      compensation += sum >= rate ? sum - next + rate : rate - next + sum
      sum = next
    }
    this.slope = slope
    const total = sum + compensation
    if (model !== null) {
      model.nearCount = nearCount
      model.overflow = overflow
      model.farSum = total - nearSum
      model.farSlope = slope - nearSlope
      model.farCurvature = curvature - nearCurvature
      model.farThird = third - nearThird
      model.curvature = curvature
      model.third = third
    }
    return total
  }

  multiplierRange(set: PageSet): readonly [number, number] {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const product = this.importanceTimesDelta
    const { indices, count } = set
    let lowest = Number.POSITIVE_INFINITY
    let highest = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      const l = lower[i]!
      const u = upper[i]!
      if (!(u > l)) continue
      const atUpper = u === Number.POSITIVE_INFINITY ? 0 : product[i]! / (u * (u + delta[i]!))
      const atLower = product[i]! / (l * (l + delta[i]!))
      if (atUpper < lowest) lowest = atUpper
      if (atLower > highest) highest = atLower
    }
    return [lowest, highest]
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

  evaluate(lambda: number, set: PageSet, out: Float64Array, model: PassModel | null = null): number {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const { deltaOverImportance: ratio, cAtLower, cAtUpper } = this
    const { indices, count } = set
    // c = λΔ/μ moves with λ, so a kink within e^{±w} of λ is one whose c threshold is within e^{±w}
    // of c; the edge of a page with l = 0 is its threshold c = 1.
    const grow = model === null ? 1 : Math.exp(model.window)
    const shrink = 1 / grow
    const near = model?.near
    const capacity = near?.length ?? 0
    let nearCount = 0
    let overflow = false
    let nearSum = 0
    let nearSlope = 0
    let nearCurvature = 0
    let nearThird = 0
    let curvature = 0
    let third = 0
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
        const atLower = cAtLower[i]!
        const atUpper = cAtUpper[i]!
        let dRate = 0
        let x = 0
        let dx = 0
        if (c >= atLower) rate = l
        else if (c <= atUpper) rate = u
        else {
          x = inverseErlangCdf(c)
          rate = delta[i]! / x
          if (rate <= l) rate = l
          else if (rate >= u) rate = u
          else {
            // dx/dy = c/g'(x) = c/(x e^{−x}) with e^{−x} = (1 − c)/(1 + x) at the root; ρ = Δ/x.
            dx = (c * (1 + x)) / (x * (1 - c))
            dRate = (-rate * dx) / x
            slope += dRate
          }
        }
        if (model !== null) {
          let second = 0
          let thirdHere = 0
          if (dRate !== 0) {
            // With a = c/(1 − c) (da/dy = a(1 + a)) and r = 1/x: x' = a(1 + r),
            // x'' = (1 + a)x' − a x' r², x''' = (1 + a)(a x' + x'') − a(1 + a)x' r² − a x'' r² + 2a x'² r³;
            // ρ = Δr: ρ'' = ρ(2x'² r² − x'' r), ρ''' = ρ(−x''' r + 6x' x'' r² − 6x'³ r³).
            const a = c / (1 - c)
            const r = 1 / x
            const r2 = r * r
            const ddx = (1 + a) * dx - a * dx * r2
            const dddx = (1 + a) * (a * dx + ddx) - a * (1 + a) * dx * r2 - a * ddx * r2 + 2 * a * dx * dx * r2 * r
            second = rate * (2 * dx * dx * r2 - ddx * r)
            thirdHere = rate * (-dddx * r + 6 * dx * ddx * r2 - 6 * dx * dx * dx * r2 * r)
            curvature += second
            third += thirdHere
          }
          if ((c >= atLower * shrink && c <= atLower * grow) || (c >= atUpper * shrink && c <= atUpper * grow)) {
            if (nearCount < capacity) {
              near![nearCount++] = i
              nearSum += rate
              nearSlope += dRate
              nearCurvature += second
              nearThird += thirdHere
            } else overflow = true
          }
        }
      }
      out[i] = rate
      const next = sum + rate
      compensation += sum >= rate ? sum - next + rate : rate - next + sum
      sum = next
    }
    this.slope = slope
    const total = sum + compensation
    if (model !== null) {
      model.nearCount = nearCount
      model.overflow = overflow
      model.farSum = total - nearSum
      model.farSlope = slope - nearSlope
      model.farCurvature = curvature - nearCurvature
      model.farThird = third - nearThird
      model.curvature = curvature
      model.third = third
    }
    return total
  }

  multiplierRange(set: PageSet): readonly [number, number] {
    const { lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const { deltaOverImportance: ratio, cAtLower, cAtUpper } = this
    const { indices, count } = set
    let lowest = Number.POSITIVE_INFINITY
    let highest = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      if (!(upper[i]! > lower[i]!)) continue
      // Pages that can move have Δ, μ > 0, so the ratio is positive.
      const r = ratio[i]!
      const atUpper = cAtUpper[i]! / r
      const atLower = cAtLower[i]! / r
      if (atUpper < lowest) lowest = atUpper
      if (atLower > highest) highest = atLower
    }
    return [lowest, highest]
  }

  upperChanged(i: number): void {
    const u = this.columns.upperCrawlsPerDay[i]!
    const d = this.columns.changesPerDay[i]!
    this.cAtUpper[i] = u === Number.POSITIVE_INFINITY ? 0 : erlangCdf(d / u)
  }
}
