/**
 * Multiplier search for objectives whose Σρ(λ) has no closed-form inverse (docs/math.md 3.3, 3.4).
 *
 * Safeguarded model steps on y = ln λ: Σρ is decreasing in y. Each pass over the pages also returns a
 * local model of Σρ(y + h) (PassModel): pages with a kink within a window of y (a bound, or the
 * periodic edge) are listed and re-evaluated exactly, the others enter through a third-order Taylor
 * expansion. The next y is the root of that model, found on the listed pages alone. On a large set
 * the kinks are dense: plain Newton, which sees only the slope of the pages that are free right now,
 * then gains only a factor of 20–40 per pass, while the model step gains several orders of magnitude
 * (10^6 periodic pages: 2 passes and an `advance` after a sampled start, instead of 7–8 passes).
 * When the root lies outside the window, the step is Newton on ln Σρ (Σρ is close to a power of λ
 * far from the bounds). When the model's step is tiny next to its window, the rates at the new λ come
 * from the same model, page by page (the listed pages exactly, the others by their Taylor expansion,
 * with no root of g): `advance` replaces the last pass over the pages with a cheaper one. Steps fall
 * back to bisection when they leave the bracket or the bracket stops halving. The search stops when
 * Σρ hits the target to SUM_TOLERANCE or the bracket is a few ulps wide.
 *
 * The finish handles the trap of docs/math.md 3.3: near λ = μ/Δ a periodic page's rate falls like
 * Δ/ln(1/(1 − λΔ/μ)), so in double precision it jumps from about Δ/37 to 0 between two adjacent
 * multipliers, and no λ meets the budget. The two bracket ends are both optimal for their own budgets
 * (Σρ_lo ≥ target ≥ Σρ_hi); their convex combination with weight θ = (target − Σρ_hi)/(Σρ_lo − Σρ_hi)
 * spends exactly the target. Pages whose rates are smooth in λ barely move (the bracket is ulps wide);
 * the leftover goes to the pages at the edge, in proportion to the rates they jump by.
 */
import type { PassModel } from './kernels.ts'
import { type RateKernel } from './kernels.ts'
import { strideSample, type PageColumns, type PageSet } from './pageSet.ts'

/** Relative budget error at which an evaluated λ is accepted as is (far below the 1e-9 contract). */
const SUM_TOLERANCE = 1e-13
/** Bracket width in y, relative to max(1, |y|), at which ln λ is resolved to a few ulps. */
const BRACKET_TOLERANCE = 8e-16
/** ln λ is kept in [−700, 700], where e^y is a normal double. */
const MAX_ABS_LN_LAMBDA = 700
/** Bisection from a 1400-wide bracket to 1 ulp takes < 60 halvings; Newton steps come between them. */
const MAX_EVALUATIONS = 300
/** Window of the pass model in ln λ: a few times the last step, within these limits. */
const MAX_WINDOW = 0.1
const MIN_WINDOW = 1e-9
const WINDOW_PER_STEP = 4
/**
 * Sets of at least SAMPLE_ABOVE pages start from the multiplier of a sample of about SAMPLE_PAGES of
 * them (one page drawn from each stride, budget scaled by the sampled fraction). The sample's λ is
 * within a few percent on the instances measured, which puts the first full pass inside the model's
 * window; the Poisson guess is often off by a factor of two. The first window then covers the
 * sampling error.
 */
const SAMPLE_ABOVE = 100_000
const SAMPLE_PAGES = 16_384
const WINDOW_AFTER_SAMPLE = 0.05
/**
 * Root finding on the model: at most this many iterations, and at most MODEL_WORK_PER_PASS times
 * the set's size in listed-page evaluations (a shared periodic edge can fill the list and make the
 * model's root hard to find); the relative accuracy that ends them.
 */
const MAX_MODEL_ITERATIONS = 40
const MODEL_WORK_PER_PASS = 0.5
const MODEL_TOLERANCE = 1e-15
/**
 * A model step at most this share of its window is taken by `advance`: every unlisted page's kink is
 * at least a window away, so the Taylor remainder is of order (step/window)^4 ≤ 1e-16 relative.
 */
const ADVANCE_SHARE = 1e-4

export class MultiplierSearchError extends Error {
  override name = 'MultiplierSearchError'
}

/**
 * Writes the rates of `set` into `out` so that they sum to `targetCrawlsPerDay` and returns λ.
 * Precondition: Σ l < target < Σ u over the set. `scratch` holds two page-indexed buffers; `model`
 * is reused across calls (its capacity caps how many pages are re-evaluated exactly per model step).
 */
export function solveMultiplierSet(options: {
  kernel: RateKernel
  columns: PageColumns
  set: PageSet
  targetCrawlsPerDay: number
  out: Float64Array
  scratch: readonly [Float64Array, Float64Array]
  model: PassModel
  /** Where to start (RateProblem.lambdaHint); absent or not positive: a sample's λ, or the Poisson guess. */
  startLambda?: number
}): number {
  const { kernel, columns, set, targetCrawlsPerDay: target, out } = options
  const { lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const { indices, count } = set

  // Known ends: below min λ^u every page is at u, above max λ^l every page is at l.
  const [minLambdaAtUpper, maxLambdaAtLower] = kernel.multiplierRange(set)
  let sumLower = 0
  let sumUpper = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    sumLower += lower[i]!
    sumUpper += upper[i]!
  }

  let current = out
  let atLow = options.scratch[0] // rates at yLow (Σ ≥ target)
  let atHigh = options.scratch[1] // rates at yHigh (Σ ≤ target)
  // An end found from the bounds holds u (or l) on every page; it is copied in only if it is used.
  let lowIsUpper = false
  let highIsLower = false
  let yLow = Number.NEGATIVE_INFINITY
  let sumAtLow = Number.POSITIVE_INFINITY
  let yHigh = Number.POSITIVE_INFINITY
  let sumAtHigh = Number.NEGATIVE_INFINITY
  const lnMinUpper = Math.log(minLambdaAtUpper)
  if (lnMinUpper > -MAX_ABS_LN_LAMBDA && lnMinUpper < MAX_ABS_LN_LAMBDA) {
    yLow = lnMinUpper
    sumAtLow = sumUpper
    lowIsUpper = true
  }
  const lnMaxLower = Math.log(maxLambdaAtLower)
  if (lnMaxLower > -MAX_ABS_LN_LAMBDA && lnMaxLower < MAX_ABS_LN_LAMBDA && lnMaxLower > yLow) {
    yHigh = lnMaxLower
    sumAtHigh = sumLower
    highIsLower = true
  }

  // Start from a sample's λ on large sets, else where the Poisson objective would put λ if every
  // page were free (docs/math.md 3.1).
  const hinted = options.startLambda !== undefined && options.startLambda > 0 && Number.isFinite(options.startLambda)
  const sampled = hinted ? options.startLambda! : count >= SAMPLE_ABOVE ? sampleLambda(options, sumLower) : Number.NaN
  let y = clampY(sampled > 0 ? Math.log(sampled) : poissonGuess(columns, set, target), yLow, yHigh)
  const model = options.model
  let expansion = 1
  let previousResidual = Number.POSITIVE_INFINITY
  let stepBefore = Number.POSITIVE_INFINITY
  let lastStep = sampled > 0 ? WINDOW_AFTER_SAMPLE / WINDOW_PER_STEP : Number.POSITIVE_INFINITY
  let hit: Float64Array | null = null
  let yHit = Number.NaN
  for (let evaluation = 0; ; evaluation++) {
    if (evaluation >= MAX_EVALUATIONS)
      throw new MultiplierSearchError(`multiplier search did not converge in ${MAX_EVALUATIONS} evaluations`)
    model.window = Math.min(MAX_WINDOW, Math.max(MIN_WINDOW, WINDOW_PER_STEP * Math.abs(lastStep)))
    const sum = kernel.evaluate(Math.exp(y), set, current, model)
    const slope = kernel.slope
    if (sum >= target) {
      ;[atLow, current] = [current, atLow]
      yLow = y
      sumAtLow = sum
      lowIsUpper = false
    } else {
      ;[atHigh, current] = [current, atHigh]
      yHigh = y
      sumAtHigh = sum
      highIsLower = false
    }
    if (Math.abs(sum - target) <= SUM_TOLERANCE * target) {
      hit = sum >= target ? atLow : atHigh
      yHit = y
      break
    }
    const bracketed = yLow > Number.NEGATIVE_INFINITY && yHigh < Number.POSITIVE_INFINITY
    if (bracketed && yHigh - yLow <= BRACKET_TOLERANCE * Math.max(1, Math.abs(y))) break
    // Unbracketed, a step that did not halve the residual is followed by a forced, doubling one.
    const residual = Math.abs(sum - target)
    const stalled = residual > 0.5 * previousResidual
    previousResidual = residual

    // Newton on ln Σρ (on Σρ itself when Σρ = 0), then the model root when it lies in the window.
    let newton = Number.NaN
    if (slope < 0)
      newton = sum > 0 ? y - (Math.log1p((sum - target) / target) * sum) / slope : y - (sum - target) / slope
    // `current` now holds rates no end needs: scratch for the listed pages.
    const iterations = Math.min(
      MAX_MODEL_ITERATIONS,
      Math.max(4, Math.floor((MODEL_WORK_PER_PASS * count) / Math.max(1, model.nearCount))),
    )
    const step = modelStep(kernel, model, y, target, current, newton - y, iterations)
    if (!Number.isNaN(step)) {
      newton = y + step
      if (Math.abs(step) <= ADVANCE_SHARE * model.window) {
        const lambdaNext = Math.exp(newton)
        const advanced = kernel.advance(Math.exp(y), lambdaNext, set, sum >= target ? atLow : atHigh, model, current)
        if (Math.abs(advanced - target) <= SUM_TOLERANCE * target) {
          hit = current
          yHit = newton
          break
        }
      }
    }
    let next: number
    if (bracketed) {
      const useNewton = newton > yLow && newton < yHigh && Math.abs(newton - y) <= 0.5 * Math.abs(stepBefore)
      next = useNewton ? newton : 0.5 * (yLow + yHigh)
      if (!(next > yLow && next < yHigh)) break // the bracket holds no double strictly inside
      // Near y = 0, y resolves far finer than λ = e^y: a step to an end's λ becomes a bisection, and
      // the search stops when that too lands on an end (the bracket is an ulp or two of λ).
      if (sameLambda(next, yLow, yHigh)) {
        next = 0.5 * (yLow + yHigh)
        if (sameLambda(next, yLow, yHigh)) break
      }
    } else if (sum > target) {
      // Σ too large: λ must grow. After a stall, step at least `expansion`, doubling, until the
      // budget is bracketed.
      const newtonStep = newton - y
      next = y + (newtonStep > 0 && !stalled ? newtonStep : newtonStep > expansion ? newtonStep : expansion)
      if (stalled || !(newtonStep > 0)) expansion *= 2
      if (y >= MAX_ABS_LN_LAMBDA) {
        // λ = e^700 still spends more than the target: only pages at l = 0 with a vanishing rate are
        // left (harmonic); λ → ∞ puts them at l.
        yHigh = MAX_ABS_LN_LAMBDA
        sumAtHigh = sumLower
        highIsLower = true
        break
      }
      next = Math.min(next, MAX_ABS_LN_LAMBDA)
    } else {
      const newtonStep = y - newton
      next = y - (newtonStep > 0 && !stalled ? newtonStep : newtonStep > expansion ? newtonStep : expansion)
      if (stalled || !(newtonStep > 0)) expansion *= 2
      if (y <= -MAX_ABS_LN_LAMBDA) {
        throw new MultiplierSearchError(
          'the budget needs a multiplier below e^−700; rescale importance or change rates',
        )
      }
      next = Math.max(next, -MAX_ABS_LN_LAMBDA)
    }
    stepBefore = lastStep
    lastStep = next - y
    y = next
  }

  if (lowIsUpper) copySet(set, upper, atLow)
  if (highIsLower) copySet(set, lower, atHigh)
  if (hit !== null) {
    if (hit !== out) copySet(set, hit, out)
    return Math.exp(yHit)
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

/**
 * The step h, |h| ≤ model.window, at which the pass model spends the target:
 * farSum + farSlope·h + farCurvature·h²/2 + farThird·h³/6 + Σ_near ρ_i(y + h) = target, by
 * safeguarded Newton on h that evaluates only the listed pages (their rates go to `scratch`). NaN
 * when the root lies outside the window or the list overflowed. `start` is a first guess (may be NaN).
 */
function modelStep(
  kernel: RateKernel,
  model: PassModel,
  y: number,
  target: number,
  scratch: Float64Array,
  start: number,
  maxIterations: number,
): number {
  // Kinks in the Taylor sums make the model no better than Newton (and at a shared periodic edge,
  // whose derivatives blow up, much worse).
  if (model.overflow) return Number.NaN
  const window = model.window
  const { farSum, farSlope } = model
  // The Taylor part must stay decreasing across the window; drop higher terms where it would not.
  let curvature = model.farCurvature
  let third = model.farThird
  if (!(Math.abs(curvature) * window + 0.5 * Math.abs(third) * window * window < -farSlope)) {
    third = 0
    if (!(Math.abs(curvature) * window < -farSlope)) curvature = 0
  }
  const near: PageSet = { indices: model.near, count: model.nearCount }
  let low = -window // model(low) ≥ target once `aboveSeen`
  let high = window // model(high) ≤ target once `belowSeen`
  let aboveSeen = false
  let belowSeen = false
  let h = start > low && start < high ? start : start >= high ? high : low
  // Once bracketed, a Newton step must be at most half the step before last (kinks of the listed
  // pages can make Newton bounce between two points); otherwise bisect.
  let stepBefore = Number.POSITIVE_INFINITY
  let lastStep = Number.POSITIVE_INFINITY
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const nearSum = near.count > 0 ? kernel.evaluate(Math.exp(y + h), near, scratch) : 0
    const nearSlope = near.count > 0 ? kernel.slope : 0
    const value = farSum + h * (farSlope + h * (0.5 * curvature + h * (third / 6))) + nearSum
    const derivative = farSlope + h * (curvature + 0.5 * h * third) + nearSlope
    if (value >= target) {
      low = h
      aboveSeen = true
    } else {
      high = h
      belowSeen = true
    }
    if (Math.abs(value - target) <= MODEL_TOLERANCE * target) return h
    if (!belowSeen && h >= window) return Number.NaN // the root is beyond the window
    if (!aboveSeen && h <= -window) return Number.NaN
    let next = derivative < 0 ? h - (value - target) / derivative : Number.NaN
    if (aboveSeen && belowSeen && !(Math.abs(next - h) <= 0.5 * Math.abs(stepBefore))) next = Number.NaN
    if (!(next > low && next < high)) {
      if (!belowSeen) next = high
      else if (!aboveSeen) next = low
      else next = 0.5 * (low + high)
    }
    if (next === h || !(high - low > 4 * Number.EPSILON * Math.max(1, Math.abs(y)))) return h
    stepBefore = lastStep
    lastStep = next - h
    h = next
  }
  return h
}

/**
 * λ solving a strided sample of the set whose budget above its Σl is the set's, scaled by the
 * sampled fraction; NaN when that budget reaches the sample's Σu.
 */
function sampleLambda(options: Parameters<typeof solveMultiplierSet>[0], sumLower: number): number {
  const { columns, set, targetCrawlsPerDay: target } = options
  const sample = strideSample(set, SAMPLE_PAGES)
  let sampleLower = 0
  let sampleUpper = 0
  for (const i of sample) {
    sampleLower += columns.lowerCrawlsPerDay[i]!
    sampleUpper += columns.upperCrawlsPerDay[i]!
  }
  const sampleTarget = sampleLower + (target - sumLower) * (sample.length / set.count)
  if (!(sampleTarget > sampleLower && sampleTarget < sampleUpper)) return Number.NaN
  return solveMultiplierSet({
    ...options,
    set: { indices: sample, count: sample.length },
    targetCrawlsPerDay: sampleTarget,
  })
}

/** ln λ of the Poisson objective with every page that can move free: (Σ√(μΔ)/(R + ΣΔ))². */
function poissonGuess(columns: PageColumns, set: PageSet, target: number): number {
  const { changesPerDay: delta, importance, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const { indices, count } = set
  let sumWeight = 0
  let sumDelta = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    if (!(upper[i]! > lower[i]!)) continue
    sumWeight += Math.sqrt(importance[i]! * delta[i]!)
    sumDelta += delta[i]!
  }
  return 2 * Math.log(sumWeight / (target + sumDelta))
}

function sameLambda(y: number, yLow: number, yHigh: number): boolean {
  const lambda = Math.exp(y)
  return lambda === Math.exp(yLow) || lambda === Math.exp(yHigh)
}

function clampY(y: number, low: number, high: number): number {
  const bounded = Math.min(MAX_ABS_LN_LAMBDA, Math.max(-MAX_ABS_LN_LAMBDA, Number.isFinite(y) ? y : 0))
  if (bounded <= low)
    return low < Number.POSITIVE_INFINITY && high < Number.POSITIVE_INFINITY ? 0.5 * (low + high) : low + 1
  if (bounded >= high) return low > Number.NEGATIVE_INFINITY ? 0.5 * (low + high) : high - 1
  return bounded
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
