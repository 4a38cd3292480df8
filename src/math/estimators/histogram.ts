import { MINUTES_PER_DAY } from '../units.ts'
/**
 * Log-spaced interval histograms: the O(1)-storage summary behind the online MLE (docs/math.md 1.5)
 * and the online moment matching (docs/math.md 1.6).
 *
 * Each bucket keeps count, Σ τ and Σ τ² (τ in days). A sum Σ g(τ_k) over the bucket is evaluated
 * at two points m ± s (m the bucket mean, s the bucket standard deviation), each carrying half the
 * count. That matches the bucket's first two moments, so it is the second-order correction
 * c·(g(m) + ½ g''(m) s²) up to terms of order s⁴, but stays positive and well-behaved where g is
 * exponential (Δτ ≫ 1), where a truncated Taylor series is poor.
 */

/** Lower edge of the first bucket: one minute, in days. Shorter intervals go to bucket 0. */
const HISTOGRAM_MIN_DAYS = 1 / MINUTES_PER_DAY
/** Upper edge of the last bucket: two years, in days. Longer intervals go to the last bucket. */
const HISTOGRAM_MAX_DAYS = 730
/** 48 buckets: each spans a factor (730 · 1440)^(1/48) ≈ 1.34 of interval length. */
const HISTOGRAM_BUCKETS = 48

const LOG_MIN = Math.log(HISTOGRAM_MIN_DAYS)
const LOG_SPAN = Math.log(HISTOGRAM_MAX_DAYS) - LOG_MIN

/** One non-empty bucket: [bucket index, count, Σ intervalDays, Σ intervalDays²]. */
export type HistogramBin = [bucket: number, count: number, sumDays: number, sumSquaresDays: number]

/** A point of a weighted sum Σ weight · g(intervalDays). */
export interface WeightedInterval {
  intervalDays: number
  weight: number
}

function bucketOf(intervalDays: number): number {
  if (!(intervalDays > HISTOGRAM_MIN_DAYS)) return 0
  const index = Math.floor((HISTOGRAM_BUCKETS * (Math.log(intervalDays) - LOG_MIN)) / LOG_SPAN)
  return Math.min(HISTOGRAM_BUCKETS - 1, Math.max(0, index))
}

/** A new sparse histogram (sorted by bucket) with one interval added; the input is not modified. */
export function addToHistogram(bins: readonly HistogramBin[], intervalDays: number): HistogramBin[] {
  const bucket = bucketOf(intervalDays)
  const out: HistogramBin[] = []
  let inserted = false
  for (const bin of bins) {
    if (!inserted && bin[0] === bucket) {
      out.push([bucket, bin[1] + 1, bin[2] + intervalDays, bin[3] + intervalDays * intervalDays])
      inserted = true
    } else {
      if (!inserted && bin[0] > bucket) {
        out.push([bucket, 1, intervalDays, intervalDays * intervalDays])
        inserted = true
      }
      out.push([bin[0], bin[1], bin[2], bin[3]])
    }
  }
  if (!inserted) out.push([bucket, 1, intervalDays, intervalDays * intervalDays])
  return out
}

/**
 * The two-point (mean ± standard deviation) representation of every bucket, appended to `out`.
 * The lower point is kept ≥ 0 (a bucket whose spread exceeds its mean, possible only in the two
 * open-ended buckets, is represented by 0 and 2m).
 */
export function histogramPoints(bins: readonly HistogramBin[], out: WeightedInterval[] = []): WeightedInterval[] {
  for (const [, count, sumDays, sumSquaresDays] of bins) {
    if (!(count > 0)) continue
    const mean = sumDays / count
    const variance = Math.max(0, sumSquaresDays / count - mean * mean)
    const spread = Math.min(mean, Math.sqrt(variance))
    // Below ~1e-7 relative spread the variance is rounding noise from Σ τ² − (Σ τ)²/c.
    if (spread <= mean * 1e-7) {
      out.push({ intervalDays: mean, weight: count })
    } else {
      out.push({ intervalDays: mean - spread, weight: count / 2 })
      out.push({ intervalDays: mean + spread, weight: count / 2 })
    }
  }
  return out
}

/**
 * The mean of the lowest non-empty bucket: the shortest interval length the histogram can tell,
 * within the bucket's factor of 1.34; null when empty.
 */
export function shortestBucketMeanDays(bins: readonly HistogramBin[]): number | null {
  for (const [, count, sumDays] of bins) if (count > 0) return sumDays / count
  return null
}
