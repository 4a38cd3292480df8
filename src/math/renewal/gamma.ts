/**
 * The gamma function and the regularised incomplete gamma functions, for the Weibull age law
 * (ageLaws.ts): P(s, x) = γ(s, x)/Γ(s) and Q(s, x) = 1 − P(s, x).
 *
 * ln Γ is Lanczos's approximation (g = 7, nine terms; relative error about 1e-15 for s > 0). P is summed
 * from its power series below x = s + 1, and Q from its continued fraction above (evaluated by the
 * modified Lentz method), where each converges quickly; both to about 1e-15.
 */

const LANCZOS_G = 7
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
]
const HALF_LN_TWO_PI = 0.5 * Math.log(2 * Math.PI)
const MAX_TERMS = 500
const EPSILON = 1e-16
const TINY = 1e-300

/** ln Γ(s) for s > 0. */
export function lnGamma(s: number): number {
  if (!(s > 0)) throw new RangeError(`lnGamma needs s > 0, got ${s}`)
  // Γ(s) = Γ(s + 1)/s keeps the approximation on s ≥ 1, where it is most accurate.
  if (s < 1) return lnGamma(s + 1) - Math.log(s)
  const z = s - 1
  let sum = LANCZOS[0]!
  for (let k = 1; k < LANCZOS.length; k++) sum += LANCZOS[k]! / (z + k)
  const t = z + LANCZOS_G + 0.5
  return HALF_LN_TWO_PI + (z + 0.5) * Math.log(t) - t + Math.log(sum)
}

/** Γ(s) for s > 0 (may overflow to +Infinity above s ≈ 171). */
export function gamma(s: number): number {
  return Math.exp(lnGamma(s))
}

/** ln of the common factor x^s e^{−x} / Γ(s) of both expansions. */
function lnPrefactor(s: number, x: number): number {
  return s * Math.log(x) - x - lnGamma(s)
}

/** P(s, x) by its series Σ x^n / (s (s + 1) … (s + n)) · x^s e^{−x}/Γ(s); for x < s + 1. */
function lowerSeries(s: number, x: number): number {
  let term = 1 / s
  let sum = term
  for (let n = 1; n < MAX_TERMS; n++) {
    term *= x / (s + n)
    sum += term
    if (term < sum * EPSILON) break
  }
  return sum * Math.exp(lnPrefactor(s, x))
}

/** Q(s, x) by its continued fraction 1/(x + 1 − s − 1·(1 − s)/(x + 3 − s − …)); for x ≥ s + 1. */
function upperFraction(s: number, x: number): number {
  let b = x + 1 - s
  let c = 1 / TINY
  let d = 1 / b
  let fraction = d
  for (let n = 1; n < MAX_TERMS; n++) {
    const a = -n * (n - s)
    b += 2
    d = a * d + b
    if (Math.abs(d) < TINY) d = TINY
    c = b + a / c
    if (Math.abs(c) < TINY) c = TINY
    d = 1 / d
    const step = d * c
    fraction *= step
    if (Math.abs(step - 1) < EPSILON) break
  }
  return fraction * Math.exp(lnPrefactor(s, x))
}

/** The regularised lower incomplete gamma function P(s, x) = γ(s, x)/Γ(s), s > 0, x ≥ 0. */
export function lowerRegularizedGamma(s: number, x: number): number {
  if (!(s > 0) || !(x >= 0)) throw new RangeError(`P(s, x) needs s > 0 and x ≥ 0, got ${s}, ${x}`)
  if (x === 0) return 0
  if (x === Number.POSITIVE_INFINITY) return 1
  return x < s + 1 ? lowerSeries(s, x) : 1 - upperFraction(s, x)
}

/** The regularised upper incomplete gamma function Q(s, x) = 1 − P(s, x), without cancellation for large x. */
export function upperRegularizedGamma(s: number, x: number): number {
  if (!(s > 0) || !(x >= 0)) throw new RangeError(`Q(s, x) needs s > 0 and x ≥ 0, got ${s}, ${x}`)
  if (x === 0) return 1
  if (x === Number.POSITIVE_INFINITY) return 0
  return x < s + 1 ? 1 - lowerSeries(s, x) : upperFraction(s, x)
}
