/**
 * Exact multiplier for the Poisson freshness objective (docs/math.md 3.1).
 *
 * In t = λ^{−1/2} every rate is w_i t − Δ_i clamped to [l_i, u_i] (w_i = √(μ_i Δ_i)), so Σρ(t) is
 * continuous, non-decreasing and piecewise linear, with breakpoints (l_i + Δ_i)/w_i (page leaves l)
 * and (u_i + Δ_i)/w_i (page reaches u). Between two consecutive breakpoints Σρ = s·t − d + b
 * (s = Σ_free w, d = Σ_free Δ, b = Σ of bound rates), so t = (target − b + d)/s in closed form.
 *
 * The segment holding the target is found by a breakpoint search that does not sort all 2n
 * breakpoints: a bracket [tLow, tHigh] with Σρ(tLow) ≤ target < Σρ(tHigh) shrinks to a breakpoint
 * pivot each round, and pages with no breakpoint left inside the bracket are folded into s, d, b and
 * dropped. Pivots are medians of a small strided sample of the remaining breakpoints (expected O(n)
 * total work, like a selection algorithm); after LOG_ROUNDS_BEFORE_EXACT_MEDIAN·log2 n rounds the pivot
 * becomes the exact median (a sort of what is left), which bounds the worst case by O(n log n).
 * When no breakpoint is left inside, the bracket is one segment and the closed form applies.
 */
import { additionError } from './compensatedSum.ts'
import type { PageColumns, PageSet } from './pageSet.ts'
import { clamp } from '../numbers.ts'

/** Pages sampled per round for the pivot (up to two breakpoints each). */
const PIVOT_SAMPLE_PAGES = 32
/** Rounds (× log2 of the set size) before pivots switch to exact medians. */
const LOG_ROUNDS_BEFORE_EXACT_MEDIAN = 3

/**
 * Writes the rates of `set` into `out` (indexed by page) so that they sum to `targetCrawlsPerDay`,
 * and returns λ. Precondition: Σ l < target < Σ u over the set. `weight[i]` = √(μ_i Δ_i);
 * `breakpoints` is scratch with room for 2·set.count entries.
 */
export function solveFreshnessSet(options: {
  columns: PageColumns
  weight: Float64Array
  set: PageSet
  targetCrawlsPerDay: number
  out: Float64Array
  breakpoints: Float64Array
}): number {
  const { columns, weight, set, targetCrawlsPerDay: target, out } = options
  const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const { indices, count } = set

  // Pages that can move; the others are constant at l.
  const active = new Int32Array(count)
  let activeCount = 0
  let fixedWeight = 0
  let fixedDelta = 0
  let fixedBound = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    if (upper[i]! > lower[i]!) active[activeCount++] = i
    else fixedBound += lower[i]!
  }

  let tLow = 0 // Σρ(0) = Σ l ≤ target
  let tHigh = Number.POSITIVE_INFINITY
  const sample = new Float64Array(2 * (PIVOT_SAMPLE_PAGES + 1))
  const exactAfterRounds = LOG_ROUNDS_BEFORE_EXACT_MEDIAN * Math.ceil(Math.log2(count + 2)) + 8
  for (let round = 0; ; round++) {
    // Fold pages whose state is fixed across the bracket.
    let kept = 0
    for (let k = 0; k < activeCount; k++) {
      const i = active[k]!
      const w = weight[i]!
      const d = delta[i]!
      const l = lower[i]!
      const u = upper[i]!
      const tAtLower = (l + d) / w
      const tAtUpper = (u + d) / w
      if (tAtUpper <= tLow) fixedBound += u
      else if (tAtLower >= tHigh) fixedBound += l
      else if (tAtLower <= tLow && tAtUpper >= tHigh) {
        fixedWeight += w
        fixedDelta += d
      } else active[kept++] = i
    }
    activeCount = kept
    if (activeCount === 0) break

    // Pivot: a breakpoint strictly inside the bracket (every kept page has one).
    let pivot: number
    if (round < exactAfterRounds) {
      const stride = Math.max(1, Math.floor(activeCount / PIVOT_SAMPLE_PAGES))
      let m = 0
      for (let k = 0; k < activeCount && m + 2 <= sample.length; k += stride) {
        m = pushInside(sample, m, active[k]!, columns, weight, tLow, tHigh)
      }
      pivot = sample.subarray(0, m).sort()[m >> 1]!
    } else {
      let m = 0
      for (let k = 0; k < activeCount; k++)
        m = pushInside(options.breakpoints, m, active[k]!, columns, weight, tLow, tHigh)
      pivot = options.breakpoints.subarray(0, m).sort()[m >> 1]!
    }

    let sum = fixedWeight * pivot - fixedDelta + fixedBound
    for (let k = 0; k < activeCount; k++) {
      const i = active[k]!
      const rate = weight[i]! * pivot - delta[i]!
      const l = lower[i]!
      const u = upper[i]!
      sum += rate < l ? l : rate > u ? u : rate
    }
    if (sum <= target) tLow = pivot
    else tHigh = pivot
  }

  // One segment left: Σρ = fixedWeight·t − fixedDelta + fixedBound on [tLow, tHigh].
  let t = tLow
  if (fixedWeight > 0) {
    t = clamp((target - fixedBound + fixedDelta) / fixedWeight, tLow, tHigh)
    // One Newton step on the exact (compensated) sum removes the rounding of the folded sums;
    // Σρ is linear in t inside the segment, so one step is the exact correction.
    t = clamp(t + (target - sumRates(columns, weight, set, t)) / fixedWeight, tLow, tHigh)
  }

  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    const rate = weight[i]! * t - delta[i]!
    const l = lower[i]!
    const u = upper[i]!
    out[i] = rate < l ? l : rate > u ? u : rate
  }
  const lambda = 1 / (t * t)
  return lambda > 0 ? lambda : Number.MIN_VALUE
}

/** Appends page i's breakpoints that lie strictly inside (tLow, tHigh); returns the new length. */
function pushInside(
  into: Float64Array,
  length: number,
  i: number,
  columns: PageColumns,
  weight: Float64Array,
  tLow: number,
  tHigh: number,
): number {
  const w = weight[i]!
  const d = columns.changesPerDay[i]!
  const tAtLower = (columns.lowerCrawlsPerDay[i]! + d) / w
  const tAtUpper = (columns.upperCrawlsPerDay[i]! + d) / w
  let m = length
  if (tAtLower > tLow && tAtLower < tHigh) into[m++] = tAtLower
  if (tAtUpper > tLow && tAtUpper < tHigh) into[m++] = tAtUpper
  return m
}

/** Σ clamp(w t − Δ, l, u) over the set, compensated. */
function sumRates(columns: PageColumns, weight: Float64Array, set: PageSet, t: number): number {
  const { changesPerDay: delta, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const { indices, count } = set
  let sum = 0
  let compensation = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    let rate = weight[i]! * t - delta[i]!
    const l = lower[i]!
    const u = upper[i]!
    rate = rate < l ? l : rate > u ? u : rate
    compensation += additionError(sum, rate)
    sum += rate
  }
  return sum + compensation
}
