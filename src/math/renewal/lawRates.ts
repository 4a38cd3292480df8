/**
 * Periodic crawl rates for pages with arbitrary age laws (docs/math.md 3.5): maximise Σ μ_i f_i(ρ_i)
 * subject to Σ ρ_i = R, ρ_i ≥ 0, with f_i(ρ) = ρ ∫_0^{1/ρ} (1 − G_i(a)) da.
 *
 * Each f_i is concave with f_i′(ρ) = m_i(1/ρ) (ageLaws.ts), so one multiplier λ decides every rate:
 * ρ_i(λ) = 1/τ with m_i(τ) = λ/μ_i, or 0 when λ/μ_i ≥ m_i(∞). This is the simulator's distribution-aware
 * oracle, where the laws are each page's true ones: a slow, plain solver (bisection on ln λ, each rate by
 * bisection on ln τ) that any law can use, for a few thousand pages. Laws with flat stretches (empirical
 * ones) make Σρ(λ) jump; then the two ends of the final bracket are combined to spend R exactly, as in
 * docs/math.md 3.3.
 */
import type { AgeLaw } from './ageLaws.ts'

/** Relative width at which the bisections stop. */
const TOLERANCE = 1e-14
const MAX_BISECTIONS = 200

/** The rate at which μ m(1/ρ) = λ: the least τ with m(τ) ≥ λ/μ, as 1/τ (0 when none). */
export function rateAtMultiplier(law: AgeLaw, importance: number, lambda: number): number {
  if (!(importance > 0)) return 0
  const c = lambda / importance
  if (!(c < law.marginalLimit)) return 0
  if (!(c > 0)) return Number.POSITIVE_INFINITY
  // Bracket ln τ: m(e^low) < c ≤ m(e^high).
  let low = 0
  let high = 0
  if (law.marginal(1) >= c) {
    low = -1
    while (law.marginal(Math.exp(low)) >= c) {
      high = low
      low -= 1 + Math.abs(low)
      if (low < -700) return Number.POSITIVE_INFINITY
    }
  } else {
    high = 1
    while (law.marginal(Math.exp(high)) < c) {
      low = high
      high += 1 + high
      if (high > 700) return 0
    }
  }
  for (let k = 0; k < MAX_BISECTIONS && high - low > TOLERANCE * Math.max(1, Math.abs(high)); k++) {
    const mid = 0.5 * (low + high)
    if (law.marginal(Math.exp(mid)) >= c) high = mid
    else low = mid
  }
  return Math.exp(-high)
}

interface LawRates {
  crawlsPerDay: Float64Array
  /** The multiplier λ (0 when every page's optimum costs less than R: cannot happen with ρ ≥ 0 unbounded). */
  lambda: number
}

/** The rates that maximise Σ μ_i f_i(ρ_i) with Σ ρ_i = R (see the module comment). */
export function periodicRatesForAgeLaws(
  laws: readonly AgeLaw[],
  importance: ArrayLike<number>,
  budgetCrawlsPerDay: number,
): LawRates {
  const n = laws.length
  if (importance.length !== n) throw new RangeError(`${n} laws but ${importance.length} importances`)
  if (!(budgetCrawlsPerDay > 0) || !Number.isFinite(budgetCrawlsPerDay))
    throw new RangeError(`budget must be positive and finite, got ${budgetCrawlsPerDay}`)
  const ratesAt = (lambda: number, into: Float64Array) => {
    let sum = 0
    for (let i = 0; i < n; i++) {
      into[i] = rateAtMultiplier(laws[i]!, importance[i]!, lambda)
      sum += into[i]!
    }
    return sum
  }
  const atLow = new Float64Array(n) // Σ ≥ R
  const atHigh = new Float64Array(n) // Σ ≤ R
  if (!laws.some((law, i) => law.marginalLimit > 0 && importance[i]! > 0)) return { crawlsPerDay: atHigh, lambda: 0 }
  let yLow = 0
  let yHigh = 0
  let sumLow: number
  let sumHigh: number
  const sum0 = ratesAt(1, atLow)
  if (sum0 >= budgetCrawlsPerDay) {
    sumLow = sum0
    yHigh = 1
    while ((sumHigh = ratesAt(Math.exp(yHigh), atHigh)) > budgetCrawlsPerDay) {
      yLow = yHigh
      sumLow = sumHigh
      atLow.set(atHigh)
      yHigh += 1 + yHigh
    }
  } else {
    atHigh.set(atLow)
    sumHigh = sum0
    yLow = -1
    while ((sumLow = ratesAt(Math.exp(yLow), atLow)) < budgetCrawlsPerDay) {
      yHigh = yLow
      sumHigh = sumLow
      atHigh.set(atLow)
      yLow -= 1 - yLow
      if (yLow < -700) throw new RangeError('the budget needs a multiplier below e^−700')
    }
  }
  const scratch = new Float64Array(n)
  for (let k = 0; k < MAX_BISECTIONS && yHigh - yLow > TOLERANCE * Math.max(1, Math.abs(yHigh)); k++) {
    const mid = 0.5 * (yLow + yHigh)
    const sum = ratesAt(Math.exp(mid), scratch)
    if (sum >= budgetCrawlsPerDay) {
      yLow = mid
      sumLow = sum
      atLow.set(scratch)
    } else {
      yHigh = mid
      sumHigh = sum
      atHigh.set(scratch)
    }
    if (sum === budgetCrawlsPerDay) break
  }
  const theta = sumLow > sumHigh ? (budgetCrawlsPerDay - sumHigh) / (sumLow - sumHigh) : 1
  const crawlsPerDay = new Float64Array(n)
  for (let i = 0; i < n; i++) crawlsPerDay[i] = atHigh[i]! + theta * (atLow[i]! - atHigh[i]!)
  return { crawlsPerDay, lambda: Math.exp(yHigh + theta * (yLow - yHigh)) }
}
