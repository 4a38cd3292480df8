/**
 * Age laws: the distribution G of the age of a page's content at a random time (docs/math.md 2.2), seen
 * through the two integrals that periodic crawling needs (docs/math.md 3.5). A page crawled every τ days
 * at a phase that does not depend on its changes is fresh at a random time with probability
 * E[min(A, τ)]/τ (A the age), so with ρ = 1/τ
 *
 *     f(ρ) = ρ ∫_0^{1/ρ} (1 − G(a)) da = ρ · freshDays(1/ρ),
 *     f′(ρ) = ∫_0^{1/ρ} a dG(a) = marginal(1/ρ),
 *
 * and f is concave because marginal(τ) grows with τ. For a renewal process with inter-update law F_U and
 * rate μ = 1/E[U], G(x) = μ ∫_0^x (1 − F_U(y)) dy (Li, Cline & Loguinov 2017), so dG(a) = μ(1 − F_U(a)) da.
 */
import { countAtMost, countBelow } from '../numbers.ts'
import { erlangCdf } from '../optimizer/erlang.ts'
import { gammaMixedFresh, gammaMixedMarginal, gammaMixedMarginalLimit } from './gammaMixed.ts'
import { gamma, lowerRegularizedGamma, upperRegularizedGamma } from './gamma.ts'

export interface AgeLaw {
  /** E[min(A, τ)] = ∫_0^τ (1 − G(a)) da, days: the expected fresh time of a crawl interval of τ days. */
  freshDays(intervalDays: number): number
  /** m(τ) = E[A; A ≤ τ] = ∫_0^τ a dG(a), days: f′(ρ) at ρ = 1/τ. Non-decreasing in τ. */
  marginal(intervalDays: number): number
  /** m(∞), days (may be +∞): a page whose λ/μ is at least this gets no crawls. */
  readonly marginalLimit: number
  /** P(A = ∞): the share of time the content never changed (0 for a stationary process). */
  readonly neverShare: number
}

/** f(ρ) = ρ · freshDays(1/ρ): 1 at ρ = ∞, and at ρ = 0 the share of time the content never changed. */
export function periodicFreshness(law: AgeLaw, crawlsPerDay: number): number {
  if (crawlsPerDay === Number.POSITIVE_INFINITY) return 1
  if (!(crawlsPerDay > 0)) return law.neverShare
  return crawlsPerDay * law.freshDays(1 / crawlsPerDay)
}

/** Poisson changes at Δ per day: 1 − G(a) = e^{−Δa} (docs/math.md 3.3). */
export function poissonAgeLaw(changesPerDay: number): AgeLaw {
  const d = changesPerDay
  if (!(d > 0)) return neverChanges
  return {
    freshDays: (tau) => -Math.expm1(-d * tau) / d,
    marginal: (tau) => erlangCdf(d * tau) / d,
    marginalLimit: 1 / d,
    neverShare: 0,
  }
}

/** Content that never changes: always fresh, no use in crawling. */
const neverChanges: AgeLaw = { freshDays: (tau) => tau, marginal: () => 0, marginalLimit: 0, neverShare: 1 }

/** The gamma-mixed Poisson law of gammaMixed.ts with rate Δ and shape β (β = ∞: Poisson). */
export function gammaMixedAgeLaw(changesPerDay: number, shape: number): AgeLaw {
  const d = changesPerDay
  if (!(d > 0)) return neverChanges
  return {
    freshDays: (tau) => gammaMixedFresh(d * tau, shape) / d,
    marginal: (tau) => gammaMixedMarginal(d * tau, shape) / d,
    marginalLimit: gammaMixedMarginalLimit(shape) / d,
    neverShare: 0,
  }
}

/**
 * Pareto (type I) inter-update times with shape α > 1 and mean `meanDays`: 1 − F_U(u) = (x_m/u)^α above
 * x_m = mean·(α − 1)/α. Then dG(a)/da = 1/mean below x_m and (x_m/a)^α/mean above, and
 * 1 − G(a) = 1 − a/mean below x_m, (x_m/a)^{α−1}/α above. m(∞) is finite only for α > 2.
 */
export function paretoAgeLaw(shape: number, meanDays: number): AgeLaw {
  const alpha = shape
  const mean = meanDays
  if (!(alpha > 1) || !(mean > 0))
    throw new RangeError(`paretoAgeLaw needs α > 1 and a positive mean, got ${alpha}, ${mean}`)
  const xm = (mean * (alpha - 1)) / alpha
  /** ∫_1^v w^{p} dw. */
  const powerIntegral = (v: number, p: number) => (p === -1 ? Math.log(v) : (Math.pow(v, p + 1) - 1) / (p + 1))
  const freshBelow = xm - (xm * xm) / (2 * mean)
  const marginalBelow = (xm * xm) / (2 * mean)
  return {
    freshDays(tau) {
      if (tau <= xm) return tau - (tau * tau) / (2 * mean)
      return freshBelow + (xm / alpha) * powerIntegral(tau / xm, 1 - alpha)
    },
    marginal(tau) {
      if (tau <= xm) return (tau * tau) / (2 * mean)
      return marginalBelow + ((xm * xm) / mean) * powerIntegral(tau / xm, 1 - alpha)
    },
    marginalLimit: alpha > 2 ? marginalBelow + (xm * xm) / (mean * (alpha - 2)) : Number.POSITIVE_INFINITY,
    neverShare: 0,
  }
}

/**
 * Weibull inter-update times with shape k and mean `meanDays`: 1 − F_U(u) = e^{−(u/θ)^k},
 * θ = mean/Γ(1 + 1/k). Then 1 − G(a) = Q(1/k, (a/θ)^k) and m(τ) = θ²Γ(2/k)/(k·mean) · P(2/k, (τ/θ)^k),
 * with P and Q the regularised incomplete gamma functions; E[min(A, τ)] = τ(1 − G(τ)) + m(τ).
 */
export function weibullAgeLaw(shape: number, meanDays: number): AgeLaw {
  const k = shape
  const mean = meanDays
  if (!(k > 0) || !(mean > 0)) throw new RangeError(`weibullAgeLaw needs k > 0 and a positive mean, got ${k}, ${mean}`)
  const theta = mean / gamma(1 + 1 / k)
  const limit = (theta * theta * gamma(2 / k)) / (k * mean)
  const marginal = (tau: number) => limit * lowerRegularizedGamma(2 / k, Math.pow(tau / theta, k))
  return {
    freshDays: (tau) =>
      tau === Number.POSITIVE_INFINITY
        ? tau
        : tau * upperRegularizedGamma(1 / k, Math.pow(tau / theta, k)) + marginal(tau),
    marginal,
    marginalLimit: limit,
    neverShare: 0,
  }
}

/**
 * The age law of one page's actual change times over the window [fromDays, toDays]: the age at s is s
 * minus the last change at or before s (changes before the window count), or +∞ when there was none
 * since time 0. Between two changes the age grows linearly, so the law is a mixture of uniform laws,
 * one per stretch between changes, plus an atom at +∞. Both integrals are sums over the stretches,
 * evaluated in O(log stretches) from the stretches' age ranges sorted, with prefix sums.
 */
export function empiricalAgeLaw(changeDays: ArrayLike<number>, fromDays: number, toDays: number): AgeLaw {
  const window = toDays - fromDays
  if (!(window > 0)) throw new RangeError(`empiricalAgeLaw needs fromDays < toDays, got ${fromDays}, ${toDays}`)
  const lows: number[] = []
  const highs: number[] = []
  let neverDays = 0
  let last = Number.NEGATIVE_INFINITY
  let start = fromDays
  const close = (end: number) => {
    if (end <= start) return
    if (last === Number.NEGATIVE_INFINITY) neverDays += end - start
    else {
      lows.push(start - last)
      highs.push(end - last)
    }
  }
  for (let j = 0; j < changeDays.length; j++) {
    const t = changeDays[j]!
    if (t > toDays) break
    if (t > fromDays) {
      close(t)
      start = t
    }
    last = t
  }
  close(toDays)
  const low = sortedWithPrefixSums(lows)
  const high = sortedWithPrefixSums(highs)
  const neverShare = neverDays / window
  /** E[A; A < ∞] = Σ_j (hi_j² − lo_j²)/(2 · window). */
  const meanAge = (high.squares[high.values.length]! - low.squares[low.values.length]!) / (2 * window)
  /** Σ_b Φ(b) with Φ(b) = ∫_0^b min(a, τ) da = b²/2 (b ≤ τ), τb − τ²/2 (b > τ). */
  const sumPhi = (s: SortedSums, tau: number) => {
    const below = countAtMost(s.values, tau)
    const aboveCount = s.values.length - below
    return 0.5 * s.squares[below]! + tau * (s.sums[s.values.length]! - s.sums[below]!) - 0.5 * tau * tau * aboveCount
  }
  /** Σ_{b < τ} (τ² − b²)/2. */
  const sumBelow = (s: SortedSums, tau: number) => {
    const below = countBelow(s.values, tau)
    return 0.5 * (tau * tau * below - s.squares[below]!)
  }
  return {
    freshDays(tau) {
      if (tau === Number.POSITIVE_INFINITY) return neverShare > 0 ? tau : meanAge
      return (sumPhi(high, tau) - sumPhi(low, tau)) / window + neverShare * tau
    },
    marginal(tau) {
      // Σ_j ∫_{lo_j}^{min(hi_j, τ)} a da = Σ_{lo < τ} (τ² − lo²)/2 − Σ_{hi < τ} (τ² − hi²)/2.
      if (tau === Number.POSITIVE_INFINITY) return meanAge
      return (sumBelow(low, tau) - sumBelow(high, tau)) / window
    },
    marginalLimit: meanAge,
    neverShare,
  }
}

interface SortedSums {
  values: Float64Array
  /** sums[j] = Σ_{i<j} values[i]; squares[j] = Σ_{i<j} values[i]². */
  sums: Float64Array
  squares: Float64Array
}

function sortedWithPrefixSums(list: number[]): SortedSums {
  const values = Float64Array.from(list).sort()
  const sums = new Float64Array(values.length + 1)
  const squares = new Float64Array(values.length + 1)
  for (let j = 0; j < values.length; j++) {
    sums[j + 1] = sums[j]! + values[j]!
    squares[j + 1] = squares[j]! + values[j]! * values[j]!
  }
  return { values, sums, squares }
}
