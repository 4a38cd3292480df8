/**
 * The per-page utilities of the crawl-rate objectives (docs/math.md 3.1–3.5) and their marginals, restated
 * from the document and sharing no code with src/math: the one reference the optimiser tests compare with.
 * ρ is the crawl rate, Δ the change rate, μ the importance, β the shape of a renewal page's age law
 * (∞: Poisson).
 */
import type { Objective } from '../../src/math/optimizer/index.ts'

/**
 * g(x) = 1 − (1 + x)e^{−x}, the periodic objective's marginal in x = Δ/ρ: from its series below 0.05
 * (g(x)/x² = Σ_{k≥2} (−1)^k (k − 1)/k! · x^{k−2}, terms to x^9, summed from the small end), from
 * expm1/exp above; a few ulps everywhere.
 */
export function erlangG(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return 1
  if (x < 0.05) {
    let sum = 0
    for (let k = 11; k >= 2; k--) {
      let factorial = 1
      for (let j = 2; j <= k; j++) factorial *= j
      sum += (k % 2 === 0 ? 1 : -1) * ((k - 1) / factorial) * x ** (k - 2)
    }
    return x * x * sum
  }
  return -Math.expm1(-x) - x * Math.exp(-x)
}

/**
 * The renewal marginal h(x) = ∫_0^x s(1 + s/β)^{−β−1} ds: its power series below x = 0.1, else
 * β/(β − 1)·(1 − (1 + x)(1 + x/β)^{−β}) (β away from 1); g for β = ∞.
 */
function renewalH(x: number, beta: number): number {
  if (beta === Number.POSITIVE_INFINITY) return erlangG(x)
  if (x === Number.POSITIVE_INFINITY) return beta > 1 ? beta / (beta - 1) : Number.POSITIVE_INFINITY
  if (x < 0.1) {
    let sum = 0
    let coefficient = 1 // Π_{j≤k} (β + j)/β / k!
    for (let k = 0; k < 60; k++) {
      const term = (coefficient * x ** (k + 2)) / (k + 2)
      sum += k % 2 === 0 ? term : -term
      coefficient *= (beta + k + 1) / (beta * (k + 1))
      if (term < 1e-18 * sum) break
    }
    return sum
  }
  return (beta / (beta - 1)) * (1 - (1 + x) * Math.exp(-beta * Math.log1p(x / beta)))
}

/** μ f(ρ): the page's term of the objective. */
export function referenceUtility(
  objective: Objective,
  rho: number,
  delta: number,
  mu: number,
  beta = Number.POSITIVE_INFINITY,
): number {
  if (mu === 0 || delta === 0) return 0
  if (objective === 'freshness') return (mu * rho) / (rho + delta)
  if (objective === 'freshness-periodic' || (objective === 'freshness-renewal' && beta === Number.POSITIVE_INFINITY)) {
    return rho === 0 ? 0 : (mu * -Math.expm1(-delta / rho)) / (delta / rho)
  }
  if (objective === 'freshness-renewal') {
    // (ρ/Δ) ∫_0^{Δ/ρ} (1 + s/β)^{−β} ds = (ρ/Δ) β (e^{(1−β)L} − 1)/(1 − β), L = ln(1 + x/β)
    if (rho === 0) return 0
    const x = delta / rho
    return (mu * beta * Math.expm1((1 - beta) * Math.log1p(x / beta))) / ((1 - beta) * x)
  }
  return rho === 0 ? Number.NEGATIVE_INFINITY : -mu * Math.log1p(delta / rho)
}

/** d(μ f)/dρ. */
export function referenceMarginal(
  objective: Objective,
  rho: number,
  delta: number,
  mu: number,
  beta = Number.POSITIVE_INFINITY,
): number {
  if (mu === 0 || delta === 0) return 0
  if (objective === 'freshness') return (mu * delta) / ((rho + delta) * (rho + delta))
  if (objective === 'freshness-periodic') return rho === 0 ? mu / delta : (mu / delta) * erlangG(delta / rho)
  if (objective === 'freshness-renewal')
    return (mu / delta) * renewalH(rho === 0 ? Number.POSITIVE_INFINITY : delta / rho, beta)
  return rho === 0 ? Number.POSITIVE_INFINITY : (mu * delta) / (rho * (rho + delta))
}
