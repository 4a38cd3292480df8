/**
 * Safeguarded Newton on a log scale, shared by the MLE (docs/math.md 1.5) and moment matching (1.6).
 */

/** Smallest rate the solvers return, in changes per day (about one change in 3·10⁹ years). */
export const SOLVER_MIN_CHANGES_PER_DAY = 1e-12
/** Largest rate the solvers return, in changes per day (about ten million changes per second). */
export const SOLVER_MAX_CHANGES_PER_DAY = 1e12
/** Stop when a Newton or bisection step moves ln Δ by less than this (relative precision of Δ). */
const LOG_RATE_TOLERANCE = 1e-12
/** Bisection halves the bracket (width ln 10²⁴ ≈ 55) below the tolerance in ~46 steps; Newton needs far fewer. */
const MAX_ITERATIONS = 200

const LOG_MIN = Math.log(SOLVER_MIN_CHANGES_PER_DAY)
const LOG_MAX = Math.log(SOLVER_MAX_CHANGES_PER_DAY)

/** Value and derivative of a function of u = ln Δ. */
interface LogRateEquation {
  (logRate: number): { value: number; slope: number }
}

/**
 * The root in Δ of an equation that decreases in u = ln Δ, found by Newton steps kept inside a
 * shrinking bracket (a step leaving the bracket, or a non-negative slope, becomes a bisection).
 * Without a root in [SOLVER_MIN, SOLVER_MAX] the nearer bound is returned, so the result is
 * always finite and positive.
 */
export function solveDecreasingInLogRate(equation: LogRateEquation, guessChangesPerDay: number): number {
  let lo = LOG_MIN
  let hi = LOG_MAX
  const atLo = equation(lo).value
  if (!(atLo > 0)) return SOLVER_MIN_CHANGES_PER_DAY
  const atHi = equation(hi).value
  if (!(atHi < 0)) return SOLVER_MAX_CHANGES_PER_DAY

  let u = Number.isFinite(guessChangesPerDay) && guessChangesPerDay > 0 ? Math.log(guessChangesPerDay) : 0
  u = Math.min(LOG_MAX - 1, Math.max(LOG_MIN + 1, u))
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    const { value, slope } = equation(u)
    if (value === 0) return Math.exp(u)
    if (value > 0) lo = u
    else hi = u
    let next = slope < 0 && Number.isFinite(value) ? u - value / slope : Number.NaN
    if (!(next > lo && next < hi)) next = (lo + hi) / 2
    if (Math.abs(next - u) < LOG_RATE_TOLERANCE || hi - lo < LOG_RATE_TOLERANCE) return Math.exp(next)
    u = next
  }
  return Math.exp((lo + hi) / 2)
}
