/**
 * Multiplier search for objectives whose Σρ(λ) has no closed-form inverse (MATH.md 3.3, 3.4).
 *
 * Safeguarded Newton on y = ln λ: Σρ is decreasing in y; Newton steps use dΣρ/dy from the kernel and
 * fall back to bisection when they leave the bracket or the bracket stops halving. The search stops
 * when Σρ hits the target to SUM_TOLERANCE or the bracket is a few ulps wide.
 *
 * The finish handles the trap of MATH.md 3.3: near λ = μ/Δ a periodic page's rate falls like
 * Δ/ln(1/(1 − λΔ/μ)), so in double precision it jumps from about Δ/37 to 0 between two adjacent
 * multipliers, and no λ meets the budget. The two bracket ends are both optimal for their own budgets
 * (Σρ_lo ≥ target ≥ Σρ_hi); their convex combination with weight θ = (target − Σρ_hi)/(Σρ_lo − Σρ_hi)
 * spends exactly the target. Pages whose rates are smooth in λ barely move (the bracket is ulps wide);
 * the leftover goes to the pages at the edge, in proportion to the rates they jump by.
 */
import type { RateKernel } from './kernels.ts'
import type { PageColumns, PageSet } from './pageSet.ts'

/** Relative budget error at which an evaluated λ is accepted as is (far below the 1e-9 contract). */
const SUM_TOLERANCE = 1e-13
/** Bracket width in y, relative to max(1, |y|), at which ln λ is resolved to a few ulps. */
const BRACKET_TOLERANCE = 8e-16
/** ln λ is kept in [−700, 700], where e^y is a normal double. */
const MAX_ABS_LN_LAMBDA = 700
/** Bisection from a 1400-wide bracket to 1 ulp takes < 60 halvings; Newton steps come between them. */
const MAX_EVALUATIONS = 300

export class MultiplierSearchError extends Error {
  override name = 'MultiplierSearchError'
}

/**
 * Writes the rates of `set` into `out` so that they sum to `targetCrawlsPerDay` and returns λ.
 * Precondition: Σ l < target < Σ u over the set. `scratch` holds two page-indexed buffers.
 */
export function solveMultiplierSet(options: {
  kernel: RateKernel
  columns: PageColumns
  set: PageSet
  targetCrawlsPerDay: number
  out: Float64Array
  scratch: readonly [Float64Array, Float64Array]
}): number {
  const { kernel, columns, set, targetCrawlsPerDay: target, out } = options
  const { changesPerDay: delta, importance, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const { indices, count } = set

  // Known ends: below min λ^u every page is at u, above max λ^l every page is at l.
  let minLambdaAtUpper = Number.POSITIVE_INFINITY
  let maxLambdaAtLower = 0
  let sumLower = 0
  let sumUpper = 0
  let sumWeight = 0
  let sumDelta = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    const l = lower[i]!
    const u = upper[i]!
    sumLower += l
    sumUpper += u
    if (!(u > l)) continue
    minLambdaAtUpper = Math.min(minLambdaAtUpper, kernel.lambdaAtUpper(i))
    maxLambdaAtLower = Math.max(maxLambdaAtLower, kernel.lambdaAtLower(i))
    sumWeight += Math.sqrt(importance[i]! * delta[i]!)
    sumDelta += delta[i]!
  }

  let current = out
  let atLow = options.scratch[0] // rates at yLow (Σ ≥ target)
  let atHigh = options.scratch[1] // rates at yHigh (Σ ≤ target)
  let yLow = Number.NEGATIVE_INFINITY
  let sumAtLow = Number.POSITIVE_INFINITY
  let yHigh = Number.POSITIVE_INFINITY
  let sumAtHigh = Number.NEGATIVE_INFINITY
  const lnMinUpper = Math.log(minLambdaAtUpper)
  if (lnMinUpper > -MAX_ABS_LN_LAMBDA && lnMinUpper < MAX_ABS_LN_LAMBDA) {
    yLow = lnMinUpper
    sumAtLow = sumUpper
    fillBound(set, upper, atLow)
  }
  const lnMaxLower = Math.log(maxLambdaAtLower)
  if (lnMaxLower > -MAX_ABS_LN_LAMBDA && lnMaxLower < MAX_ABS_LN_LAMBDA && lnMaxLower > yLow) {
    yHigh = lnMaxLower
    sumAtHigh = sumLower
    fillBound(set, lower, atHigh)
  }

  // Start where the Poisson objective would put λ if every page were free (MATH.md 3.1).
  const guess = sumWeight / (target + sumDelta)
  let y = clampY(2 * Math.log(guess), yLow, yHigh)
  let expansion = 1
  let stepBefore = Number.POSITIVE_INFINITY
  let lastStep = Number.POSITIVE_INFINITY
  let hit: Float64Array | null = null
  for (let evaluation = 0; ; evaluation++) {
    if (evaluation >= MAX_EVALUATIONS) throw new MultiplierSearchError(`multiplier search did not converge in ${MAX_EVALUATIONS} evaluations`)
    const sum = kernel.evaluate(Math.exp(y), set, current)
    const slope = kernel.slope
    if (sum >= target) {
      ;[atLow, current] = [current, atLow]
      yLow = y
      sumAtLow = sum
    } else {
      ;[atHigh, current] = [current, atHigh]
      yHigh = y
      sumAtHigh = sum
    }
    if (Math.abs(sum - target) <= SUM_TOLERANCE * target) {
      hit = sum >= target ? atLow : atHigh
      break
    }
    const bracketed = yLow > Number.NEGATIVE_INFINITY && yHigh < Number.POSITIVE_INFINITY
    if (bracketed && yHigh - yLow <= BRACKET_TOLERANCE * Math.max(1, Math.abs(y))) break

    const newton = slope < 0 ? y - (sum - target) / slope : Number.NaN
    let next: number
    if (bracketed) {
      const useNewton = newton > yLow && newton < yHigh && Math.abs(newton - y) <= 0.5 * Math.abs(stepBefore)
      next = useNewton ? newton : 0.5 * (yLow + yHigh)
      if (!(next > yLow && next < yHigh)) break // the bracket holds no double strictly inside
    } else if (sum > target) {
      // Σ too large: λ must grow. Step at least `expansion`, doubling, until the budget is bracketed.
      const newtonStep = newton - y
      next = y + (newtonStep > expansion ? newtonStep : expansion)
      expansion *= 2
      if (y >= MAX_ABS_LN_LAMBDA) {
        // λ = e^700 still spends more than the target: only pages at l = 0 with a vanishing rate are
        // left (harmonic); λ → ∞ puts them at l.
        yHigh = MAX_ABS_LN_LAMBDA
        sumAtHigh = sumLower
        fillBound(set, lower, atHigh)
        break
      }
      next = Math.min(next, MAX_ABS_LN_LAMBDA)
    } else {
      const newtonStep = y - newton
      next = y - (newtonStep > expansion ? newtonStep : expansion)
      expansion *= 2
      if (y <= -MAX_ABS_LN_LAMBDA) {
        throw new MultiplierSearchError('the budget needs a multiplier below e^−700; rescale importance or change rates')
      }
      next = Math.max(next, -MAX_ABS_LN_LAMBDA)
    }
    stepBefore = lastStep
    lastStep = next - y
    y = next
  }

  if (hit !== null) {
    if (hit !== out) copySet(set, hit, out)
    return Math.exp(hit === atLow ? yLow : yHigh)
  }
  // Convex combination of the two end solutions (see the module comment).
  const theta = (target - sumAtHigh) / (sumAtLow - sumAtHigh)
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    const high = atHigh[i]!
    out[i] = high + theta * (atLow[i]! - high)
  }
  return Math.exp(yHigh + theta * (yLow - yHigh))
}

function clampY(y: number, low: number, high: number): number {
  const bounded = Math.min(MAX_ABS_LN_LAMBDA, Math.max(-MAX_ABS_LN_LAMBDA, Number.isFinite(y) ? y : 0))
  if (bounded <= low) return low < Number.POSITIVE_INFINITY && high < Number.POSITIVE_INFINITY ? 0.5 * (low + high) : low + 1
  if (bounded >= high) return low > Number.NEGATIVE_INFINITY ? 0.5 * (low + high) : high - 1
  return bounded
}

function fillBound(set: PageSet, bound: Float64Array, out: Float64Array): void {
  copySet(set, bound, out)
}

function copySet(set: PageSet, from: Float64Array, to: Float64Array): void {
  const { indices, count } = set
  if (indices === null) {
    to.set(from.subarray(0, count))
    return
  }
  for (let k = 0; k < count; k++) {
    const i = indices[k]!
    to[i] = from[i]!
  }
}
