/** Small numeric guards shared by the estimators. */

/**
 * Longest interval the estimators accept, in days (~2.7 million years). Longer (or infinite)
 * inputs are capped so that every running sum in the JSON state stays finite.
 */
const MAX_INTERVAL_DAYS = 1e9

/** An interval length made safe: negative or NaN → 0, above MAX_INTERVAL_DAYS → that cap. */
export function sanitizeDays(days: number): number {
  if (!(days > 0)) return 0
  return Math.min(days, MAX_INTERVAL_DAYS)
}

/** A rate clipped to [min, max]; null when it is NaN (e.g. from invalid settings). */
export function clipRate(changesPerDay: number, minChangesPerDay: number, maxChangesPerDay: number): number | null {
  const clipped = Math.min(maxChangesPerDay, Math.max(minChangesPerDay, changesPerDay))
  return Number.isFinite(clipped) ? clipped : null
}

/**
 * numerator / denominator for non-negative inputs, with the limits a rate takes when no time
 * was observed: 0/0 → 0 and x/0 → +∞ (callers clip).
 */
export function rateRatio(numerator: number, denominator: number): number {
  if (denominator > 0) return numerator / denominator
  return numerator > 0 ? Infinity : 0
}

/** ln(1 − e^{−s}) for s ≥ 0 (−∞ at 0), accurate at both ends. */
export function logOneMinusExpMinus(s: number): number {
  return s > 0.693 ? Math.log1p(-Math.exp(-s)) : Math.log(-Math.expm1(-s))
}
