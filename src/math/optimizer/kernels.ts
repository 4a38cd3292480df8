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
  /** Pages near a kink, in the order of the set: `near[0..nearCount)`. */
  readonly near: Int32Array
  nearCount = 0
  /** More pages were near a kink than `near` holds; the rest went into the Taylor sums. */
  overflow = false
  /** Σρ and its first three derivatives in y over the modelled (not listed) pages. */
  farSum = 0
  farSlope = 0
  farCurvature = 0
  farThird = 0

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
   * Rates at `next` = λe^h into `out`, from the rates `from` of the pass at λ that filled `model`
   * (which must not have overflowed): listed pages exactly, the others by their third-order Taylor
   * expansion in h. Valid when |h| is far inside the model's window, where no unlisted page meets a
   * kink. Returns their (compensated) sum.
   */
  advance(lambda: number, next: number, set: PageSet, from: Float64Array, model: PassModel, out: Float64Array): number
  /**
   * Over the pages of the set that can move (u > l): the least λ at or below which a page sits at
   * its upper bound (0 when a bound is infinite), and the greatest λ at or above which a page sits at
   * its lower bound (may be +Infinity). Every page is at u below the first and at l above the second.
   */
  multiplierRange(set: PageSet): readonly [number, number]
  /** Call after `columns.upperCrawlsPerDay[i]` changed. */
  upperChanged(i: number): void
}

/** ρ'', ρ''' (in y = ln λ) written by the derivative helpers below; ρ' is their return value. */
const higher = new Float64Array(2)

/**
 * Harmonic: ρ(ρ + Δ) = μΔ/λ and s = 2ρ + Δ give ρ' = −ρ(ρ + Δ)/s, ρ'' = −ρ' − 2ρ'²/s,
 * ρ''' = −ρ'' − 4ρ'ρ''/s + 4ρ'³/s².
 */
function harmonicDerivatives(rate: number, delta: number): number {
  const inverseS = 1 / (2 * rate + delta)
  const first = -rate * (rate + delta) * inverseS
  const second = -first - 2 * first * first * inverseS
  higher[0] = second
  higher[1] = -second - 4 * first * second * inverseS + 4 * first * first * first * inverseS * inverseS
  return first
}

/**
 * Periodic: ρ = Δ/x with g(x) = c = λΔ/μ. With a = c/(1 − c) (da/dy = a(1 + a)) and r = 1/x, using
 * e^{−x} = (1 − c)/(1 + x) at the root: x' = c/g'(x) = a(1 + r), x'' = (1 + a)x' − a x' r²,
 * x''' = (1 + a)(a x' + x'') − a(1 + a)x' r² − a x'' r² + 2a x'² r³; then ρ' = −ρ x' r,
 * ρ'' = ρ(2x'² r² − x'' r), ρ''' = ρ(−x''' r + 6x' x'' r² − 6x'³ r³).
 */
function periodicDerivatives(rate: number, c: number, x: number): number {
  const a = c / (1 - c)
  const r = 1 / x
  const r2 = r * r
  const dx = a * (1 + r)
  const ddx = (1 + a) * dx - a * dx * r2
  const dddx = (1 + a) * (a * dx + ddx) - a * (1 + a) * dx * r2 - a * ddx * r2 + 2 * a * dx * dx * r2 * r
  higher[0] = rate * (2 * dx * dx * r2 - ddx * r)
  higher[1] = rate * (-dddx * r + 6 * dx * ddx * r2 - 6 * dx * dx * dx * r2 * r)
  return -rate * dx * r
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
          dRate = -(rate * (rate + d)) / (2 * rate + d)
          slope += dRate
        }
        if (model !== null) {
          let listed = false
          if ((free >= l * shrink && free <= l * grow) || (free >= u * shrink && free <= u * grow)) {
            if (nearCount < capacity) {
              near![nearCount++] = i
              nearSum += rate
              nearSlope += dRate
              listed = true
            } else overflow = true
          }
          if (!listed && dRate !== 0) {
            harmonicDerivatives(rate, d)
            curvature += higher[0]!
            third += higher[1]!
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
    if (model !== null) fillModel(model, nearCount, overflow, total - nearSum, slope - nearSlope, curvature, third)
    return total
  }

  advance(lambda: number, next: number, set: PageSet, from: Float64Array, model: PassModel, out: Float64Array): number {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const product = this.importanceTimesDelta
    const { indices, count } = set
    const { near, nearCount } = model
    const h = Math.log(next / lambda)
    let listed = 0
    let sum = 0
    let compensation = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      const l = lower[i]!
      const u = upper[i]!
      let rate = from[i]!
      if (listed < nearCount && near[listed] === i) {
        listed++
        rate = u > l ? clamp(harmonicRate(product[i]!, next, delta[i]!), l, u) : l
      } else if (rate > l && rate < u) {
        const first = harmonicDerivatives(rate, delta[i]!)
        rate = clamp(rate + h * (first + h * (0.5 * higher[0]! + h * (higher[1]! / 6))), l, u)
      }
      out[i] = rate
      const nextSum = sum + rate
      compensation += sum >= rate ? sum - nextSum + rate : rate - nextSum + sum
      sum = nextSum
    }
    return sum + compensation
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
        if (c >= atLower) rate = l
        else if (c <= atUpper) rate = u
        else {
          x = inverseErlangCdf(c)
          rate = delta[i]! / x
          if (rate <= l) rate = l
          else if (rate >= u) rate = u
          else {
            // dρ/dy = −ρ x'/x with x' = c/g'(x) = c/(x e^{−x}) and e^{−x} = (1 − c)/(1 + x) at the root.
            dRate = -(rate * c * (1 + x)) / (x * x * (1 - c))
            slope += dRate
          }
        }
        if (model !== null) {
          let listed = false
          if ((c >= atLower * shrink && c <= atLower * grow) || (c >= atUpper * shrink && c <= atUpper * grow)) {
            if (nearCount < capacity) {
              near![nearCount++] = i
              nearSum += rate
              nearSlope += dRate
              listed = true
            } else overflow = true
          }
          if (!listed && dRate !== 0) {
            periodicDerivatives(rate, c, x)
            curvature += higher[0]!
            third += higher[1]!
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
    if (model !== null) fillModel(model, nearCount, overflow, total - nearSum, slope - nearSlope, curvature, third)
    return total
  }

  advance(lambda: number, next: number, set: PageSet, from: Float64Array, model: PassModel, out: Float64Array): number {
    const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = this.columns
    const { deltaOverImportance: ratio, cAtLower, cAtUpper } = this
    const { indices, count } = set
    const { near, nearCount } = model
    const h = Math.log(next / lambda)
    let listed = 0
    let sum = 0
    let compensation = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      const l = lower[i]!
      const u = upper[i]!
      let rate = from[i]!
      if (listed < nearCount && near[listed] === i) {
        listed++
        rate = l
        if (u > l) {
          const c = next * ratio[i]!
          if (c >= cAtLower[i]!) rate = l
          else if (c <= cAtUpper[i]!) rate = u
          else rate = clamp(delta[i]! / inverseErlangCdf(c), l, u)
        }
      } else if (rate > l && rate < u) {
        // Δ/ρ returns the root x of the pass at λ to an ulp.
        const first = periodicDerivatives(rate, lambda * ratio[i]!, delta[i]! / rate)
        rate = clamp(rate + h * (first + h * (0.5 * higher[0]! + h * (higher[1]! / 6))), l, u)
      }
      out[i] = rate
      const nextSum = sum + rate
      compensation += sum >= rate ? sum - nextSum + rate : rate - nextSum + sum
      sum = nextSum
    }
    return sum + compensation
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

function fillModel(
  model: PassModel,
  nearCount: number,
  overflow: boolean,
  farSum: number,
  farSlope: number,
  farCurvature: number,
  farThird: number,
): void {
  model.nearCount = nearCount
  model.overflow = overflow
  model.farSum = farSum
  model.farSlope = farSlope
  model.farCurvature = farCurvature
  model.farThird = farThird
}

function clamp(value: number, low: number, high: number): number {
  return value < low ? low : value > high ? high : value
}
