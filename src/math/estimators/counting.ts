/**
 * Estimators that need only n, X and T (docs/math.md 1.1, 1.2, 1.3, 1.7). They return raw rates
 * (possibly 0 or +∞ in degenerate cases); callers clip.
 */
import { rateRatio } from './numbers.ts'

/** α_k of the LLN estimator: a schedule in k, or a constant α > 0. */
export type LlnAlpha = '1/k' | '1/sqrt(k)' | number

/** Largest value the SA iterate y may take in the state (JSON has no ∞). */
const SA_MAX_CHANGES_PER_DAY = 1e12

/** Naive estimator X / T (docs/math.md 1.1); biased low because changes between crawls are hidden. */
export function naiveChangesPerDay(changes: number, totalDays: number): number {
  return rateRatio(changes, totalDays)
}

function llnAlphaValue(alpha: LlnAlpha, k: number): number {
  if (alpha === '1/k') return 1 / k
  if (alpha === '1/sqrt(k)') return 1 / Math.sqrt(k)
  return alpha
}

/**
 * LLN estimator (docs/math.md 1.2): p̂ · Î / (1 − Î + α_k) with Î = X/n, k = n, and the empirical crawl
 * rate p̂ = n/T in place of the paper's known constant p (equal to it when p is constant).
 */
export function llnChangesPerDay(intervals: number, changes: number, totalDays: number, alpha: LlnAlpha): number {
  const fractionChanged = changes / intervals
  const denominator = 1 - fractionChanged + llnAlphaValue(alpha, intervals)
  return rateRatio(intervals * fractionChanged, totalDays * denominator)
}

/**
 * One SA step (docs/math.md 1.3): y ← y + η_k·(I·(y + p) − y), η_k = 1/(k+1)^γ, k = intervals applied
 * before this one, p = n/T including this interval. The result is kept in [0, 1e12] so the state
 * stays finite even when T = 0.
 */
export function saStep(
  y: number,
  intervalsBefore: number,
  changed: boolean,
  intervalsAfter: number,
  totalDaysAfter: number,
  gamma: number,
): number {
  const stepSize = 1 / Math.pow(intervalsBefore + 1, gamma)
  const crawlsPerDay = rateRatio(intervalsAfter, totalDaysAfter)
  const next = y + stepSize * ((changed ? y + crawlsPerDay : 0) - y)
  if (Number.isNaN(next)) return y
  return Math.min(SA_MAX_CHANGES_PER_DAY, Math.max(0, next))
}

/**
 * Bias-reduced estimator for regular intervals (docs/math.md 1.7): r = −ln((n − X + 0.5)/(n + 0.5)),
 * Δ = r / (T/n).
 */
export function choGmChangesPerDay(intervals: number, changes: number, totalDays: number): number {
  const r = -Math.log((intervals - changes + 0.5) / (intervals + 0.5))
  return rateRatio(r * intervals, totalDays)
}
