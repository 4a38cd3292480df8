/**
 * The gamma-mixed Poisson age law (docs/math.md 3.5): the content of a page is older than a with
 * probability
 *
 *     1 − G(a) = (1 + Δa/β)^{−β},
 *
 * the chance that a Poisson process whose rate is drawn from a gamma law with mean Δ and shape β shows
 * no change in a. As a renewal process (docs/math.md 2.2) it has rate Δ = g_U(0) and Lomax (Pareto type
 * II) inter-update times, 1 − F_U(u) = (1 + Δu/β)^{−(β+1)}: a heavy tail of exponent β + 1, with an
 * infinite variance for β ≤ 1. As β → ∞ it becomes Poisson, 1 − G(a) = e^{−Δa}, with the same Δ.
 *
 * Periodic crawling at ρ = Δ/x (x the expected number of changes per crawl interval) gives freshness
 * f = F(x)/x and marginal utility μ f′(ρ) = (μ/Δ) h(x), with
 *
 *     F(x) = ∫_0^x (1 + s/β)^{−β} ds = βL · (e^{(1−β)L} − 1)/((1 − β)L),     L = ln(1 + x/β),
 *     h(x) = ∫_0^x s (1 + s/β)^{−β−1} ds = β/(β − 1) · (1 − (1 + x)(1 + x/β)^{−β}),
 *
 * h′(x) = x(1 + x/β)^{−β−1}, h″(x) = (1 − x)(1 + x/β)^{−β−2}, h‴(x) = (β + 1)(x − 2)(1 + x/β)^{−β−3}/β.
 * h rises from 0 to β/(β − 1) when β > 1 (a page whose λΔ/μ exceeds it gets no crawls, as in 3.3), and
 * without bound when β ≤ 1 (every page gets some). The Poisson limits are F = 1 − e^{−x} and the Erlang
 * function g of erlang.ts.
 *
 * Numerics: h is written as −βq·E(D) with D = ln(1 + x) − βL, q = D/(β − 1) and E(t) = (e^t − 1)/t,
 * so neither the removable singularity at β = 1 nor the cancellation of both terms for small x costs
 * precision: q is summed from its series for small x, rewritten without the division by β − 1 when β
 * is within 0.5 of 1, and taken from its definition otherwise (relative error about 1e-13 or better).
 */
import { erlangCdf } from '../optimizer/erlang.ts'

/** Below this x (and x/β), q is summed from its series: the two logarithms of D cancel to first order. */
const SERIES_BELOW = 0.1
/** Within this distance of β = 1, q is computed without dividing by β − 1. */
const NEAR_ONE = 0.5
/** Starting points of the inverse are kept within e^{±MAX_LN_X}. */
const MAX_LN_X = 40

/** (e^t − 1)/t, 1 at t = 0. */
function expm1OverT(t: number): number {
  if (Math.abs(t) < 1e-5) return 1 + t * (0.5 + t / 6)
  return Math.expm1(t) / t
}

/**
 * q = (ln(1 + x) − β ln(1 + x/β))/(β − 1) = −Σ_{k≥2} (−1)^k (x^k/k) Σ_{j=1}^{k−1} β^{−j}, which has no
 * singularity at β = 1. Always ≤ 0.
 */
function qOf(x: number, beta: number, L: number): number {
  if (x < SERIES_BELOW && x < SERIES_BELOW * beta) {
    const inverse = 1 / beta
    let power = x // x^{k−1}
    let inner = 0 // Σ_{j=1}^{k−1} β^{−j}
    let betaPower = 1
    let sum = 0
    for (let k = 2; k < 60; k++) {
      power *= x
      betaPower *= inverse
      inner += betaPower
      const term = (power / k) * inner
      sum += k % 2 === 0 ? -term : term
      if (term <= Math.abs(sum) * 1e-17) break
    }
    return sum
  }
  if (Math.abs(beta - 1) < NEAR_ONE) {
    // With w = −x(β − 1)/(β(1 + x)), ln(1 + x/β) = ln(1 + x) + ln(1 + w) exactly, so
    // q = x/(1 + x) · ln(1 + w)/w − ln(1 + x): no division by β − 1.
    const w = (-x * (beta - 1)) / (beta * (1 + x))
    const logOverW = Math.abs(w) < 1e-8 ? 1 - 0.5 * w : Math.log1p(w) / w
    return (x / (1 + x)) * logOverW - Math.log1p(x)
  }
  return (Math.log1p(x) - beta * L) / (beta - 1)
}

/** 1 − G at x = Δa: (1 + x/β)^{−β}; e^{−x} for β = ∞. */
export function gammaMixedSurvival(x: number, beta: number): number {
  if (beta === Number.POSITIVE_INFINITY) return Math.exp(-x)
  return Math.exp(-beta * Math.log1p(x / beta))
}

/** F(x) = Δ ∫_0^{x/Δ} (1 − G(a)) da: the expected fresh time of a crawl interval of x/Δ days, times Δ. */
export function gammaMixedFresh(x: number, beta: number): number {
  if (beta === Number.POSITIVE_INFINITY) return -Math.expm1(-x)
  if (x === Number.POSITIVE_INFINITY) return beta > 1 ? beta / (beta - 1) : Number.POSITIVE_INFINITY
  const L = Math.log1p(x / beta)
  return beta * L * expm1OverT((1 - beta) * L)
}

/** h(x) = Δ m(x/Δ), m(τ) = ∫_0^τ a dG(a): the marginal utility of periodic crawling, in units of μ/Δ. */
export function gammaMixedMarginal(x: number, beta: number): number {
  if (beta === Number.POSITIVE_INFINITY) return erlangCdf(x)
  if (x === Number.POSITIVE_INFINITY) return gammaMixedMarginalLimit(beta)
  if (!(x > 0)) return 0
  const L = Math.log1p(x / beta)
  const q = qOf(x, beta, L)
  return -beta * q * expm1OverT((beta - 1) * q)
}

/** h(∞) = β/(β − 1) for β > 1 (1 for β = ∞), +∞ for β ≤ 1. */
export function gammaMixedMarginalLimit(beta: number): number {
  if (beta === Number.POSITIVE_INFINITY) return 1
  return beta > 1 ? beta / (beta - 1) : Number.POSITIVE_INFINITY
}

/** h′(x) = x(1 + x/β)^{−β−1}. */
export function gammaMixedMarginalSlope(x: number, beta: number): number {
  if (beta === Number.POSITIVE_INFINITY) return x * Math.exp(-x)
  return x * Math.exp(-(beta + 1) * Math.log1p(x / beta))
}

/**
 * x > 0 with h(x) = c (0 for c ≤ 0, +∞ for c ≥ h(∞)), to a relative 1e-14: Halley steps on ln h against
 * ln x inside a bracket that shrinks with every step (a step that leaves it bisects). `guess` (> 0) is a
 * starting point, such as the root at a nearby c; without one, √(2c) (h ≈ x²/2 for small x) or the
 * large-x asymptote. Typically 1–2 steps from a nearby root, 3–5 from none.
 */
export function inverseGammaMixedMarginal(c: number, beta: number, guess = Number.NaN): number {
  if (!(c > 0)) return 0
  if (!(c < gammaMixedMarginalLimit(beta))) return Number.POSITIVE_INFINITY
  const target = Math.log(c)
  let t: number
  if (guess > 0 && Number.isFinite(guess)) t = Math.log(guess)
  else if (c < 0.5) t = 0.5 * Math.log(2 * c)
  else if (beta < 0.9)
    t = Math.log((c * (1 - beta)) / Math.pow(beta, beta)) / (1 - beta) // h ≈ β^β x^{1−β}/(1 − β)
  else t = Math.log(2 + 2 * c)
  t = Math.min(MAX_LN_X, Math.max(-MAX_LN_X, t))
  const poisson = beta === Number.POSITIVE_INFINITY
  // Where the closed form of h loses no digits, it shares its power of V = 1 + x/β with h′ and h″.
  const closedForm = !poisson && Math.abs(beta - 1) >= NEAR_ONE
  let low = Number.NEGATIVE_INFINITY
  let high = Number.POSITIVE_INFINITY
  for (let iteration = 0; iteration < 100; iteration++) {
    const x = Math.exp(t)
    let value: number
    let slope: number // h′(x)
    let curve: number // h″(x)
    if (poisson) {
      const e = Math.exp(-x)
      value = erlangCdf(x)
      slope = x * e
      curve = (1 - x) * e
    } else {
      const inverseV = 1 / (1 + x / beta)
      const power = Math.exp(-beta * Math.log1p(x / beta)) // V^{−β}
      value =
        closedForm && x >= SERIES_BELOW ? (beta / (beta - 1)) * (1 - (1 + x) * power) : gammaMixedMarginal(x, beta)
      slope = x * power * inverseV
      curve = (1 - x) * power * inverseV * inverseV
    }
    const phi = Math.log(value) - target
    if (phi > 0) high = t
    else low = t
    if (Math.abs(phi) <= 1e-15 || high - low <= 1e-15 * Math.max(1, Math.abs(t))) return x
    // φ′ = x h′/h, φ″ = φ′ + x² h″/h − φ′².
    const d1 = (x * slope) / value
    const d2 = d1 + (x * x * curve) / value - d1 * d1
    let next = t - (2 * phi * d1) / (2 * d1 * d1 - phi * d2)
    // Halley's error cubes with each step: from |φ| < 1e-6 with a step that small, one more is exact to rounding.
    if (Math.abs(phi) < 1e-6 && Math.abs(next - t) < 1e-6 && next > low && next < high) return Math.exp(next)
    if (!(next > low && next < high)) {
      next = t - phi / d1 // Newton
      if (!(next > low && next < high)) {
        if (low > Number.NEGATIVE_INFINITY && high < Number.POSITIVE_INFINITY) next = 0.5 * (low + high)
        else next = phi > 0 ? t - 1 : t + 1
      }
    }
    t = next
  }
  return Math.exp(t)
}
