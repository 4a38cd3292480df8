/**
 * The function behind periodic crawling (MATH.md 3.3): g(x) = 1 − (1 + x)e^{−x}, x = Δ/ρ.
 * (g is the Erlang-2 distribution function.) The marginal utility of a periodically crawled page is
 * (μ/Δ)·g(Δ/ρ), so its rate at multiplier λ solves g(x) = c with c = λΔ/μ.
 */

/** Below this x, g is summed from its Taylor series: the closed form cancels (both terms ≈ x). */
const SERIES_BELOW_X = 0.1

/** g(x) for x ≥ 0, accurate to a few ulps relative for every x (series for small x). */
export function erlangCdf(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return 1
  if (x < SERIES_BELOW_X) return x * x * seriesFactor(x)
  return -Math.expm1(-x) - x * Math.exp(-x)
}

/** ln g(x) for x > 0 without cancellation at either end. */
export function lnErlangCdf(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return 0
  if (x < SERIES_BELOW_X) return 2 * Math.log(x) + Math.log(seriesFactor(x))
  if (x > 1) return Math.log1p(-(1 + x) * Math.exp(-x))
  return Math.log(-Math.expm1(-x) - x * Math.exp(-x))
}

/** g(x)/x² = Σ_{k≥2} (−1)^k (k−1)/k! x^{k−2}; terms to x^10 give full precision for x < 0.1. */
function seriesFactor(x: number): number {
  let sum = 1 / 43545600
  sum = -1 / 3991680 + x * sum
  sum = 1 / 403200 + x * sum
  sum = -1 / 45360 + x * sum
  sum = 1 / 5760 + x * sum
  sum = -1 / 840 + x * sum
  sum = 1 / 144 + x * sum
  sum = -1 / 30 + x * sum
  sum = 1 / 8 + x * sum
  sum = -1 / 3 + x * sum
  return 1 / 2 + x * sum
}

/** Newton stops once a step is this small; quadratic convergence leaves an error ≈ step² ≪ 1 ulp. */
const NEWTON_STEP_TOLERANCE = 1e-8
/** Newton converges monotonically here (see below); this cap only guards against a logic error. */
const MAX_NEWTON_STEPS = 60

/**
 * x > 0 with g(x) = c, for 0 < c < 1. `guess` (> 0, optional) warm-starts Newton, e.g. with the
 * previous root when c moved a little.
 *
 * c ≤ 1/2: Newton on ln(g(e^z)/c) = 0 in z = ln x. ln g(e^z) is concave in z (g is the distribution
 * function of a log-concave law, and so is that of ln X), so Newton converges monotonically from any
 * start after its first step. The ratio g(x)/c is formed directly (x·(x/c)·g(x)/x² for small x), not
 * as ln g − ln c, which would lose |ln c|·ulp of absolute precision when c is tiny.
 * c > 1/2: Newton on x − ln(1 + x) = −ln(1 − c), convex and increasing, same monotone convergence.
 * Here 1 − c is exact (Sterbenz), which keeps the root accurate as c → 1, where
 * x ≈ ln(1/(1 − c)) + ln(1 + x) and the rate Δ/x falls off only logarithmically (the 3.3 trap).
 */
export function inverseErlangCdf(c: number, guess = 0): number {
  if (c <= 0.5) {
    let x = guess > 0 && guess < 2 ? guess : smallRootGuess(c)
    for (let step = 0; step < MAX_NEWTON_STEPS; step++) {
      let ratio: number
      let slope: number // d ln g / d ln x = x g'(x)/g(x), g'(x) = x e^{−x}
      if (x < SERIES_BELOW_X) {
        const factor = seriesFactor(x)
        ratio = x * (x / c) * factor
        slope = Math.exp(-x) / factor
      } else {
        const g = -Math.expm1(-x) - x * Math.exp(-x)
        ratio = g / c
        slope = (x * x * Math.exp(-x)) / g
      }
      const dz = Math.log(ratio) / slope
      x *= Math.exp(-dz)
      if (Math.abs(dz) <= NEWTON_STEP_TOLERANCE) break
    }
    return x
  }
  const m = -Math.log(1 - c)
  let x = guess >= 1 ? guess : m + Math.log1p(m + Math.log1p(m))
  for (let step = 0; step < MAX_NEWTON_STEPS; step++) {
    const dx = ((x - Math.log1p(x) - m) * (1 + x)) / x
    x -= dx
    if (Math.abs(dx) <= NEWTON_STEP_TOLERANCE * x) break
  }
  return x
}

/** From g(x) ≈ x²/2 − x³/3: x ≈ s(1 + s/3) with s = √(2c). */
function smallRootGuess(c: number): number {
  const s = Math.sqrt(2 * c)
  return s * (1 + s / 3)
}
