/**
 * The shape of a page's age law from its change/no-change history alone (docs/math.md 3.5, "Blind
 * crawls"): no Last-Modified, only crawl times and whether each interval saw a change.
 *
 * The family is the gamma-mixed Poisson one of gammaMixed.ts, a renewal process whose age law is
 * S(a) = 1 − G(a) = (1 + Δa/β)^{−β}. For a stationary renewal process the age A_t at a time t has law G
 * (Li, Cline & Loguinov 2017), and no change in (t, t + τ] is A_{t+τ} > τ + A_t, so
 *
 *     P(no change in (t, t + τ] | A_t ∈ [L, L + c]) = (S(L + τ) − S(L + c + τ)) / (S(L) − S(L + c)),
 *
 * since the density of A_t is Δ(1 − F_U(a)) and the chance of no renewal in τ from age a is
 * (1 − F_U(a + τ))/(1 − F_U(a)). What the crawls say about A_t at the start of an interval: if the latest
 * interval that saw a change had length c and ended L days earlier (L the length of the unchanged
 * intervals since), the last change fell in it, so A_t ∈ [L, L + c]; before any change, A_t ≥ L with L the
 * time since the first crawl (c = ∞: S(L + τ)/S(L)); the first interval has L = 0, c = ∞: S(τ).
 *
 * Each interval is conditioned on the latest change window only, with the age law at the start of that
 * window taken to be the stationary one (the standard blind approximation: what happened before the
 * window is forgotten). For Poisson changes every factor is e^{−Δτ} whatever L and c, so the likelihood is
 * that of docs/math.md 1.5 and the test against Poisson is exact; for a bursty page the chance of a change
 * right after a window that saw one is higher, and after long quiet stretches lower, which is what tells the
 * shape even when every interval has the same length (where the unconditioned likelihood of the intervals
 * identifies only G(τ) at that length).
 *
 * The likelihood is profiled over a grid of shapes, each maximised over Δ by a golden-section search on
 * ln Δ; a shape is kept only when it beats Poisson by `evidenceNats`. Profiles add across pages that share
 * a shape but not a rate (a host, the fleet): `pooledShape` decides from the sum.
 */
import { goldenSectionMax } from '../numbers.ts'

/** The shapes the fit chooses among, besides Poisson (β = ∞), smallest first. */
export const BLIND_SHAPE_GRID: readonly number[] = Object.freeze([0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 8, 13, 20])

/**
 * Intervals with the same change window and length, summarised: quietDays L, windowDays c (∞ before the
 * first change), intervalDays τ, and how many of them saw no change and a change.
 */
export interface BlindIntervals {
  quietDays: number
  windowDays: number
  intervalDays: number
  unchanged: number
  changed: number
}

/** ln S(a) = −β ln(1 + Δa/β); −Δa for β = ∞. */
function logSurvival(x: number, beta: number): number {
  if (x === Number.POSITIVE_INFINITY) return Number.NEGATIVE_INFINITY
  return beta === Number.POSITIVE_INFINITY ? -x : -beta * Math.log1p(x / beta)
}

/** ln(S(a) − S(b)) for a < b, from ln S(a) and ln S(b). */
function logDifference(logA: number, logB: number): number {
  if (logB === Number.NEGATIVE_INFINITY) return logA
  return logA + Math.log(-Math.expm1(logB - logA))
}

/** ln(1 − e^{v}) for v ≤ 0, accurate at both ends. */
function log1mExp(v: number): number {
  return v < -0.693 ? Math.log1p(-Math.exp(v)) : Math.log(-Math.expm1(v))
}

/** Log-likelihood of the intervals at rate Δ (changes per day) and shape β (∞ = Poisson). */
export function blindLogLikelihood(points: readonly BlindIntervals[], changesPerDay: number, beta: number): number {
  const d = changesPerDay
  let total = 0
  for (const p of points) {
    let logQuiet: number
    if (beta === Number.POSITIVE_INFINITY) logQuiet = -d * p.intervalDays
    else {
      const l = d * p.quietDays
      const c = d * p.windowDays
      const t = d * p.intervalDays
      const top = logDifference(logSurvival(l + t, beta), logSurvival(l + c + t, beta))
      const bottom = logDifference(logSurvival(l, beta), logSurvival(l + c, beta))
      logQuiet = Math.min(0, top - bottom)
    }
    if (p.unchanged > 0) total += p.unchanged * logQuiet
    if (p.changed > 0) total += p.changed * (logQuiet === 0 ? -745 : log1mExp(logQuiet))
  }
  return total
}

/** max over u = ln Δ in [low, high] of the log-likelihood at shape β, by golden-section search. */
function profileRate(
  points: readonly BlindIntervals[],
  beta: number,
  low: number,
  high: number,
): { value: number; u: number } {
  const f = (u: number) => blindLogLikelihood(points, Math.exp(u), beta)
  // A coarse scan first: the likelihood in u need not be unimodal far from its peak.
  const steps = 24
  let bestU = low
  let bestValue = Number.NEGATIVE_INFINITY
  for (let k = 0; k <= steps; k++) {
    const u = low + ((high - low) * k) / steps
    const value = f(u)
    if (value > bestValue) {
      bestValue = value
      bestU = u
    }
  }
  const peak = goldenSectionMax(
    f,
    Math.max(low, bestU - (high - low) / steps),
    Math.min(high, bestU + (high - low) / steps),
    40,
    1e-7,
  )
  return peak.value >= bestValue ? { value: peak.value, u: peak.x } : { value: bestValue, u: bestU }
}

interface BlindShapeProfile {
  /** The best log-likelihood at each shape of BLIND_SHAPE_GRID, minus Poisson's (nats; ≥ about 0 near Poisson). */
  gainNats: number[]
  /** The rate (changes per day) that attains it, per shape; and Poisson's. */
  changesPerDay: number[]
  poissonChangesPerDay: number
}

/**
 * The profile of the blind likelihood over BLIND_SHAPE_GRID, each shape maximised over Δ within a factor
 * e^{±7} of `startChangesPerDay` (the page's Poisson MLE, or any rough rate). Null without both a changed
 * and an unchanged interval (no shape and no finite rate can be told apart then).
 */
export function blindShapeProfile(
  points: readonly BlindIntervals[],
  startChangesPerDay: number,
): BlindShapeProfile | null {
  let changed = 0
  let unchanged = 0
  for (const p of points) {
    changed += p.changed
    unchanged += p.unchanged
  }
  if (changed === 0 || unchanged === 0) return null
  const u0 = Math.log(startChangesPerDay > 0 && Number.isFinite(startChangesPerDay) ? startChangesPerDay : 1)
  const poisson = profileRate(points, Number.POSITIVE_INFINITY, u0 - 7, u0 + 7)
  const gainNats: number[] = []
  const rates: number[] = []
  for (const beta of BLIND_SHAPE_GRID) {
    // Bursty laws reach the same change share with a higher Δ: search above Poisson's rate more widely.
    const fit = profileRate(points, beta, poisson.u - 3, poisson.u + 7)
    gainNats.push(fit.value - poisson.value)
    rates.push(Math.exp(fit.u))
  }
  return { gainNats, changesPerDay: rates, poissonChangesPerDay: Math.exp(poisson.u) }
}

/**
 * The shape a profile (one page's, or the sum of a group's) supports: the grid shape with the largest gain if
 * it reaches `evidenceNats`, else Poisson (β = ∞, "not enough evidence").
 */
export function shapeFromProfile(
  gainNats: readonly number[],
  evidenceNats: number,
): { shape: number; index: number; evidenceNats: number } {
  let index = -1
  let best = 0
  for (let k = 0; k < gainNats.length; k++) {
    if (gainNats[k]! > best) {
      best = gainNats[k]!
      index = k
    }
  }
  if (index < 0 || !(best >= evidenceNats)) return { shape: Number.POSITIVE_INFINITY, index: -1, evidenceNats: best }
  return { shape: BLIND_SHAPE_GRID[index]!, index, evidenceNats: best }
}
