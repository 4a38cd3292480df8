/**
 * Bayesian categorisation into change classes (docs/math.md 1.9), uniform prior, in log space.
 */

/** Candidate classes with their rates in changes per day. */
const CHANGE_CLASSES: readonly { name: string; changesPerDay: number }[] = Object.freeze([
  Object.freeze({ name: 'hourly', changesPerDay: 24 }),
  Object.freeze({ name: 'daily', changesPerDay: 1 }),
  Object.freeze({ name: 'weekly', changesPerDay: 1 / 7 }),
  Object.freeze({ name: 'monthly', changesPerDay: 1 / 30 }),
  Object.freeze({ name: 'yearly', changesPerDay: 1 / 365 }),
])

/**
 * Floor of the stored log-probabilities (after subtracting the maximum). e^{−1000} is zero for any
 * use, and the floor keeps the numbers bounded on long histories.
 */
const CLASS_LOG_PROBABILITY_FLOOR = -1000
/**
 * A changed interval of zero length is impossible under every class; its likelihood ratio tends to
 * λ_c/λ_c', which evaluating at this length (days, ~0.1 ms) reproduces while staying finite.
 */
const MIN_CLASS_INTERVAL_DAYS = 1e-9

/** Log-probabilities of the uniform prior (unnormalised: all zero). */
export function uniformClassLogProbabilities(): number[] {
  return CHANGE_CLASSES.map(() => 0)
}

/** P(c) ∝ P(c)·(1 − e^{−λ_c τ})^I·(e^{−λ_c τ})^{1−I}, renormalised so that the largest entry is 0. */
export function stepClassLogProbabilities(
  logProbabilities: readonly number[],
  intervalDays: number,
  changed: boolean,
): number[] {
  const days = Math.max(intervalDays, changed ? MIN_CLASS_INTERVAL_DAYS : 0)
  const updated = CHANGE_CLASSES.map(({ changesPerDay }, i) => {
    const prior = logProbabilities[i] ?? 0
    const exponent = changesPerDay * days
    return prior + (changed ? Math.log(-Math.expm1(-exponent)) : -exponent)
  })
  const max = Math.max(...updated)
  if (!Number.isFinite(max)) return uniformClassLogProbabilities()
  return updated.map((v) =>
    Number.isFinite(v) ? Math.max(CLASS_LOG_PROBABILITY_FLOOR, v - max) : CLASS_LOG_PROBABILITY_FLOOR,
  )
}

/** Normalised class probabilities from stored log-probabilities. */
export function classProbabilities(
  logProbabilities: readonly number[],
): { name: string; changesPerDay: number; probability: number }[] {
  const logs = CHANGE_CLASSES.map((_, i) => {
    const v = logProbabilities[i]
    return typeof v === 'number' && Number.isFinite(v) ? v : 0
  })
  const max = Math.max(...logs)
  const weights = logs.map((v) => Math.exp(v - max))
  const total = weights.reduce((a, b) => a + b, 0)
  return CHANGE_CLASSES.map(({ name, changesPerDay }, i) => ({ name, changesPerDay, probability: weights[i]! / total }))
}
