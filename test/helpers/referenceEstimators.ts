/**
 * The online estimators of docs/math.md section 1, restated from the document with the API's
 * conventions (α_k = 1/k, γ, y_0) and sharing no code with src/math: the one reference the HTTP tests
 * compare the service's estimates with.
 */

/** One crawl interval: its length in days and whether the page changed during it. */
export interface Interval {
  days: number
  changed: boolean
}

/**
 * docs/math.md 1.1 (naive X/T), 1.2 (LLN with α_k = 1/k, p̂ = n/T), 1.3 (SA: k = intervals already
 * applied, η_k = 1/(k+1)^γ, p = n/T including the interval, starting at y_0) and 1.7 (Cho–Garcia-Molina).
 */
export function referenceEstimates(
  intervals: readonly Interval[],
  gamma: number,
  y0: number,
): { naive: number; lln: number; sa: number; choGm: number } {
  let n = 0
  let x = 0
  let total = 0
  let y = y0
  for (const iv of intervals) {
    const k = n
    n += 1
    total += iv.days
    if (iv.changed) x += 1
    const p = n / total
    const eta = 1 / (k + 1) ** gamma
    y += eta * ((iv.changed ? 1 : 0) * (y + p) - y)
  }
  const pHat = n / total
  const iHat = x / n
  const choGm = -Math.log((n - x + 0.5) / (n + 0.5)) / (total / n)
  return { naive: x / total, lln: (pHat * iHat) / (1 - iHat + 1 / n), sa: y, choGm }
}

/**
 * docs/math.md 1.5: the root of Σ_changed τ/(e^{Δτ}−1) = Σ_unchanged τ, by bisection on ln Δ; smoothed
 * with one pseudo interval of each kind (of the mean length) only when X = 0 or X = n.
 */
export function referenceExactMle(intervals: readonly Interval[]): number {
  let list = intervals
  const x = intervals.filter((i) => i.changed).length
  if (x === 0 || x === intervals.length) {
    const mean = intervals.reduce((s, i) => s + i.days, 0) / intervals.length
    list = [...intervals, { days: mean, changed: true }, { days: mean, changed: false }]
  }
  const right = list.filter((i) => !i.changed).reduce((s, i) => s + i.days, 0)
  const left = (d: number) => list.filter((i) => i.changed).reduce((s, i) => s + i.days / Math.expm1(d * i.days), 0)
  let lo = Math.log(1e-9)
  let hi = Math.log(1e9)
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2
    if (left(Math.exp(mid)) > right) lo = mid
    else hi = mid
  }
  return Math.exp((lo + hi) / 2)
}
