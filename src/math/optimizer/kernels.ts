/**
 * Bulk per-page rates at a multiplier λ for the objectives without a closed-form multiplier:
 * periodic freshness (docs/math.md 3.3), harmonic staleness (docs/math.md 3.4) and distribution-aware
 * periodic freshness (docs/math.md 3.5). Each kernel also returns
 * dΣρ/d ln λ, and, when asked, splits the pages for the multiplier search's local model (see
 * PassModel and multiplierSearch.ts).
 */
import { gammaMixedMarginal, gammaMixedMarginalSlope, inverseGammaMixedMarginal } from '../renewal/gammaMixed.ts'
import { additionError } from './compensatedSum.ts'
import { erlangCdf, inverseErlangCdf } from './erlang.ts'
import { harmonicRate } from './pageRate.ts'
import type { PageColumns, PageSet } from './pageSet.ts'
import { clamp } from '../numbers.ts'

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

/**
 * The pass over a set that every kernel shares: the rates, their compensated sum and slope, and, when
 * asked, the pass model. A kernel says only what one page does: its clamped rate at λ (`pageRate`), the
 * derivatives of a free page's rate in y = ln λ (`derivatives`), and where its kinks are: each page has
 * a position that `pageRate` leaves in `position` (a quantity that moves with λ by at most the same
 * factor, such as c = λΔ/μ), and two thresholds of it, `kinkLow[i]` ≤ `kinkHigh[i]`, where the page
 * reaches or leaves a bound or its rate falls to 0. A kink within e^{±w} of λ then lies within e^{±w}
 * of the position.
 *
 * The per-page methods are small on purpose: the compiler inlines them (and the root of g they call)
 * into these loops only while their bytecode fits its inlining budget, and a call per page costs about
 * a tenth of the solve.
 */
abstract class MultiplierKernel implements RateKernel {
  slope = 0
  /** dρ/dy of the page of the last `pageRate` call: 0 when it sits at a bound. */
  protected first = 0
  /** The position of the page of the last `pageRate` call. */
  protected position = 0
  /** ρ'' and ρ''' in y of the page of the last `derivatives` call. */
  protected second = 0
  protected third = 0

  /** The columns' arrays, held directly: the per-page methods read them on every call. */
  protected readonly delta: Float64Array
  protected readonly lower: Float64Array
  protected readonly upper: Float64Array
  /** The two thresholds of each page's position (see above). */
  protected abstract readonly kinkLow: Float64Array
  protected abstract readonly kinkHigh: Float64Array

  constructor(columns: PageColumns) {
    this.delta = columns.changesPerDay
    this.lower = columns.lowerCrawlsPerDay
    this.upper = columns.upperCrawlsPerDay
  }

  /** ρ_i(λ) clamped to [l_i, u_i] for a page that can move (u_i > l_i); sets `first` and `position`. */
  protected abstract pageRate(i: number, lambda: number): number
  /** ρ' (returned), ρ'' and ρ''' (into `second` and `third`) in y = ln λ of a free page whose rate at λ is `rate`. */
  protected abstract derivatives(i: number, lambda: number, rate: number): number
  abstract multiplierRange(set: PageSet): readonly [number, number]

  upperChanged(_i: number): void {}

  evaluate(lambda: number, set: PageSet, out: Float64Array, model: PassModel | null = null): number {
    const { lower, upper, kinkLow, kinkHigh } = this
    const { indices, count } = set
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
    let slope = 0
    let sum = 0
    let compensation = 0
    for (let k = 0; k < count; k++) {
      const i = indices === null ? k : indices[k]!
      const l = lower[i]!
      let rate = l
      if (upper[i]! > l) {
        rate = this.pageRate(i, lambda)
        const dRate = this.first
        slope += dRate
        if (model !== null) {
          let listed = false
          const q = this.position
          const low = kinkLow[i]!
          const high = kinkHigh[i]!
          if ((q >= low * shrink && q <= low * grow) || (q >= high * shrink && q <= high * grow)) {
            if (nearCount < capacity) {
              near![nearCount++] = i
              nearSum += rate
              nearSlope += dRate
              listed = true
            } else overflow = true
          }
          if (!listed && dRate !== 0) {
            this.derivatives(i, lambda, rate)
            curvature += this.second
            third += this.third
          }
        }
      }
      out[i] = rate
      compensation += additionError(sum, rate)
      sum += rate
    }
    this.slope = slope
    const total = sum + compensation
    if (model !== null) {
      model.nearCount = nearCount
      model.overflow = overflow
      model.farSum = total - nearSum
      model.farSlope = slope - nearSlope
      model.farCurvature = curvature
      model.farThird = third
    }
    return total
  }

  advance(lambda: number, next: number, set: PageSet, from: Float64Array, model: PassModel, out: Float64Array): number {
    const { lower, upper } = this
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
        rate = u > l ? this.pageRate(i, next) : l
      } else if (rate > l && rate < u) {
        const first = this.derivatives(i, lambda, rate)
        rate = clamp(rate + h * (first + h * (0.5 * this.second + h * (this.third / 6))), l, u)
      }
      out[i] = rate
      compensation += additionError(sum, rate)
      sum += rate
    }
    return sum + compensation
  }
}

/** Harmonic staleness: ρ(ρ + Δ) = μΔ/λ (docs/math.md 3.4). */
export class HarmonicKernel extends MultiplierKernel {
  private readonly importanceTimesDelta: Float64Array
  /** Position: the unclamped rate, whose elasticity in λ is between 1/2 and 1; its kinks are the bounds. */
  protected readonly kinkLow: Float64Array
  protected readonly kinkHigh: Float64Array

  constructor(columns: PageColumns) {
    super(columns)
    this.kinkLow = this.lower
    this.kinkHigh = this.upper
    const { changesPerDay, importance } = columns
    this.importanceTimesDelta = new Float64Array(changesPerDay.length)
    for (let i = 0; i < changesPerDay.length; i++) this.importanceTimesDelta[i] = importance[i]! * changesPerDay[i]!
  }

  protected pageRate(i: number, lambda: number): number {
    const d = this.delta[i]!
    const free = harmonicRate(this.importanceTimesDelta[i]!, lambda, d)
    this.position = free
    this.first = 0
    const l = this.lower[i]!
    if (free <= l) return l
    const u = this.upper[i]!
    if (free >= u) return u
    this.first = -(free * (free + d)) / (2 * free + d)
    return free
  }

  /**
   * ρ(ρ + Δ) = μΔ/λ and s = 2ρ + Δ give ρ' = −ρ(ρ + Δ)/s, ρ'' = −ρ' − 2ρ'²/s,
   * ρ''' = −ρ'' − 4ρ'ρ''/s + 4ρ'³/s².
   */
  protected derivatives(i: number, _lambda: number, rate: number): number {
    const delta = this.delta[i]!
    const inverseS = 1 / (2 * rate + delta)
    const first = -rate * (rate + delta) * inverseS
    const second = -first - 2 * first * first * inverseS
    this.second = second
    this.third = -second - 4 * first * second * inverseS + 4 * first * first * first * inverseS * inverseS
    return first
  }

  multiplierRange(set: PageSet): readonly [number, number] {
    const { delta, lower, upper } = this
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
}

/**
 * The multipliers between which the pages of `set` that can move leave their bounds, for kernels whose page
 * sits at its upper bound while λ·Δ/μ ≤ kinkLow and at its lower bound from kinkHigh on (periodic, renewal).
 */
function kinkMultiplierRange(
  set: PageSet,
  lower: Float64Array,
  upper: Float64Array,
  deltaOverImportance: Float64Array,
  kinkLow: Float64Array,
  kinkHigh: Float64Array,
): readonly [number, number] {
  const { indices, count } = set
  let lowest = Number.POSITIVE_INFINITY
  let highest = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    if (!(upper[i]! > lower[i]!)) continue
    // Pages that can move have Δ, μ > 0, so the ratio is positive.
    const r = deltaOverImportance[i]!
    const atUpper = kinkLow[i]! / r
    const atLower = kinkHigh[i]! / r
    if (atUpper < lowest) lowest = atUpper
    if (atLower > highest) highest = atLower
  }
  return [lowest, highest]
}

/**
 * Periodic freshness: g(Δ/ρ) = λΔ/μ with g(x) = 1 − (1 + x)e^{−x} (docs/math.md 3.3). Bounds are tested
 * on c = λΔ/μ against g(Δ/l) and g(Δ/u), so pages at a bound cost no root solve; a free page costs one
 * table-guided root of g (one exponential, see erlang.ts) and no other transcendental.
 */
export class PeriodicKernel extends MultiplierKernel {
  /** Δ/μ: c = λ · ratio. */
  private readonly deltaOverImportance: Float64Array
  /**
   * Position: c, which moves with λ. g(Δ/l): at or above it the page sits at l (1 when l = 0, the edge
   * where its rate reaches 0). g(Δ/u): at or below it the page sits at u (0 when u = ∞).
   */
  protected readonly kinkLow: Float64Array
  protected readonly kinkHigh: Float64Array

  constructor(columns: PageColumns) {
    super(columns)
    const { changesPerDay, importance, lowerCrawlsPerDay } = columns
    const n = changesPerDay.length
    this.deltaOverImportance = new Float64Array(n)
    this.kinkLow = new Float64Array(n) // c at which the page sits at u
    this.kinkHigh = new Float64Array(n) // c at which it sits at l
    for (let i = 0; i < n; i++) {
      const d = changesPerDay[i]!
      const mu = importance[i]!
      if (!(d > 0 && mu > 0)) continue
      this.deltaOverImportance[i] = d / mu
      const l = lowerCrawlsPerDay[i]!
      this.kinkHigh[i] = l > 0 ? erlangCdf(d / l) : 1
      this.upperChanged(i)
    }
  }

  protected pageRate(i: number, lambda: number): number {
    const c = lambda * this.deltaOverImportance[i]!
    this.position = c
    this.first = 0
    if (c >= this.kinkHigh[i]!) return this.lower[i]!
    if (c <= this.kinkLow[i]!) return this.upper[i]!
    const x = inverseErlangCdf(c)
    const rate = this.delta[i]! / x
    const l = this.lower[i]!
    if (rate <= l) return l
    const u = this.upper[i]!
    if (rate >= u) return u
    // dρ/dy = −ρ x'/x with x' = c/g'(x) = c/(x e^{−x}) and e^{−x} = (1 − c)/(1 + x) at the root.
    this.first = -(rate * c * (1 + x)) / (x * x * (1 - c))
    return rate
  }

  /**
   * ρ = Δ/x with g(x) = c = λΔ/μ. With a = c/(1 − c) (da/dy = a(1 + a)) and r = 1/x = ρ/Δ, using
   * e^{−x} = (1 − c)/(1 + x) at the root: x' = c/g'(x) = a(1 + r), x'' = x'(1 + a − a r²),
   * x''' = (1 + a)(a x' + x'') − a r²((1 + a)x' + x'' − 2x'² r); then ρ' = −ρ r x',
   * ρ'' = ρ r(2x'² r − x''), ρ''' = ρ r(6x' r(x'' − x'² r) − x''').
   */
  protected derivatives(i: number, lambda: number, rate: number): number {
    const c = lambda * this.deltaOverImportance[i]!
    const a = c / (1 - c)
    const r = rate / this.delta[i]!
    const ar2 = a * r * r
    const d1 = a * (1 + r)
    const d2 = d1 * (1 + a - ar2)
    const d3 = (1 + a) * (a * d1 + d2) - ar2 * ((1 + a) * d1 + d2 - 2 * d1 * d1 * r)
    const pr = rate * r
    this.second = pr * (2 * d1 * d1 * r - d2)
    this.third = pr * (6 * d1 * r * (d2 - d1 * d1 * r) - d3)
    return -pr * d1
  }

  multiplierRange(set: PageSet): readonly [number, number] {
    return kinkMultiplierRange(set, this.lower, this.upper, this.deltaOverImportance, this.kinkLow, this.kinkHigh)
  }

  override upperChanged(i: number): void {
    const u = this.upper[i]!
    const d = this.delta[i]!
    this.kinkLow[i] = u === Number.POSITIVE_INFINITY ? 0 : erlangCdf(d / u)
  }
}

/**
 * Distribution-aware periodic freshness (docs/math.md 3.5): each page's age law is gamma-mixed Poisson
 * with rate Δ and shape β (src/math/renewal/gammaMixed.ts), and its rate at λ is Δ/x with
 * h_β(x) = c = λΔ/μ, clamped. Pages with β = ∞ are Poisson and take the periodic kernel's table root;
 * the others take Halley steps on ln h started from their root of the previous pass (the multiplier
 * search evaluates nearby multipliers, so after the first pass one or two steps suffice). Bounds are
 * tested on c against h_β(Δ/l) and h_β(Δ/u), so pages at a bound cost no root.
 */
export class RenewalKernel extends MultiplierKernel {
  /** Δ/μ: c = λ · ratio. */
  private readonly deltaOverImportance: Float64Array
  private readonly shape: Float64Array
  /** Position: c. h_β(Δ/u): at or below it the page sits at u. h_β(Δ/l): at or above it at l (h_β(∞) when l = 0). */
  protected readonly kinkLow: Float64Array
  protected readonly kinkHigh: Float64Array
  /** The root x of each non-Poisson page's last evaluation (NaN before one): the next one's start. */
  private readonly lastRoot: Float64Array

  constructor(columns: PageColumns) {
    super(columns)
    const { changesPerDay, importance, lowerCrawlsPerDay } = columns
    const n = changesPerDay.length
    this.shape = columns.ageShape ?? new Float64Array(n).fill(Number.POSITIVE_INFINITY)
    this.deltaOverImportance = new Float64Array(n)
    this.kinkLow = new Float64Array(n)
    this.kinkHigh = new Float64Array(n)
    this.lastRoot = new Float64Array(n).fill(Number.NaN)
    for (let i = 0; i < n; i++) {
      const d = changesPerDay[i]!
      const mu = importance[i]!
      if (!(d > 0 && mu > 0)) continue
      this.deltaOverImportance[i] = d / mu
      const l = lowerCrawlsPerDay[i]!
      this.kinkHigh[i] = gammaMixedMarginal(l > 0 ? d / l : Number.POSITIVE_INFINITY, this.shape[i]!)
      this.upperChanged(i)
    }
  }

  protected pageRate(i: number, lambda: number): number {
    const c = lambda * this.deltaOverImportance[i]!
    this.position = c
    this.first = 0
    if (c >= this.kinkHigh[i]!) return this.lower[i]!
    if (c <= this.kinkLow[i]!) return this.upper[i]!
    const beta = this.shape[i]!
    let x: number
    let slope: number // h′(x)
    if (beta === Number.POSITIVE_INFINITY) {
      x = inverseErlangCdf(c)
      // h′ = x e^{−x} = x(1 − c)/(1 + x) at the root.
      slope = (x * (1 - c)) / (1 + x)
    } else {
      x = inverseGammaMixedMarginal(c, beta, this.lastRoot[i]!)
      this.lastRoot[i] = x
      slope = gammaMixedMarginalSlope(x, beta)
    }
    const rate = this.delta[i]! / x
    const l = this.lower[i]!
    if (rate <= l) return l
    const u = this.upper[i]!
    if (rate >= u) return u
    // dρ/dy = −ρ x′/x with x′ = c/h′(x).
    this.first = -(rate * c) / (x * slope)
    return rate
  }

  /**
   * With x′ = c/h′, x″ = (c − h″x′²)/h′, x‴ = (c − h‴x′³ − 3h″x′x″)/h′ (from h(x(y)) = c e^{y − y₀}),
   * ρ′ = −ρx′/x, ρ″ = ρ(2x′²/x² − x″/x), ρ‴ = ρ(6x′x″/x² − 6x′³/x³ − x‴/x).
   */
  protected derivatives(i: number, lambda: number, rate: number): number {
    const c = lambda * this.deltaOverImportance[i]!
    const x = this.delta[i]! / rate
    const beta = this.shape[i]!
    let h1: number
    let h2: number
    let h3: number
    if (beta === Number.POSITIVE_INFINITY) {
      const e = Math.exp(-x)
      h1 = x * e
      h2 = (1 - x) * e
      h3 = (x - 2) * e
    } else {
      const inverseV = 1 / (1 + x / beta)
      h1 = gammaMixedMarginalSlope(x, beta)
      h2 = ((1 - x) * h1 * inverseV) / x
      h3 = ((beta + 1) * (x - 2) * h1 * inverseV * inverseV) / (beta * x)
    }
    const d1 = c / h1
    const d2 = (c - h2 * d1 * d1) / h1
    const d3 = (c - h3 * d1 * d1 * d1 - 3 * h2 * d1 * d2) / h1
    const r = 1 / x
    this.second = rate * r * (2 * d1 * d1 * r - d2)
    this.third = rate * r * (6 * d1 * r * (d2 - d1 * d1 * r) - d3)
    return -rate * d1 * r
  }

  multiplierRange(set: PageSet): readonly [number, number] {
    return kinkMultiplierRange(set, this.lower, this.upper, this.deltaOverImportance, this.kinkLow, this.kinkHigh)
  }

  override upperChanged(i: number): void {
    const u = this.upper[i]!
    this.kinkLow[i] = u === Number.POSITIVE_INFINITY ? 0 : gammaMixedMarginal(this.delta[i]! / u, this.shape[i]!)
  }
}
