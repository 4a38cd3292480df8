/**
 * The blind shape fit's evidence in O(1) space (src/math/renewal/blindShape.ts): every interval with the
 * change window it started after, binned by the three lengths on a log₂ grid from one minute (quiet days L,
 * window days c, interval days τ; c = ∞ before the first change gets a bin of its own). A bin keeps how many of
 * its intervals saw no change and a change, and the sums of L, c and τ, so the fit evaluates each bin at its
 * mean lengths. The histogram holds at most MAX_BINS bins, so the state stays O(1) however varied the
 * intervals are.
 */
import type { BlindIntervals } from '../renewal/blindShape.ts'
import { MINUTES_PER_DAY } from '../units.ts'

/** [key, unchanged, changed, Σ quietDays, Σ windowDays (0 for c = ∞), Σ intervalDays]. */
export type BlindBin = [
  key: number,
  unchanged: number,
  changed: number,
  quiet: number,
  window: number,
  interval: number,
]

const MIN_DAYS = 1 / MINUTES_PER_DAY
/** log₂ buckets 0 … 20 (one minute to about two years); 21 = c = ∞. */
const BUCKETS = 21
const NO_WINDOW = BUCKETS
/** The most bins kept (about 1.5 kB stored): a page crawled at a steady rate needs about a dozen. */
const MAX_BINS = 32

function bucketOf(days: number): number {
  if (!(days > MIN_DAYS)) return 0
  return Math.min(BUCKETS - 1, Math.floor(Math.log2(days / MIN_DAYS)))
}

/** The three bucket indices of a key: quiet, window (NO_WINDOW for c = ∞), interval. */
function coordinates(key: number): [number, number, number] {
  return [Math.floor(key / (BUCKETS * (BUCKETS + 1))), Math.floor(key / BUCKETS) % (BUCKETS + 1), key % BUCKETS]
}

/**
 * The bin of `key`, or once the histogram holds MAX_BINS bins and has none for it, the nearest bin (fewest
 * buckets apart over the three lengths, before-any-change bins only among themselves when there is one).
 */
function targetKey(bins: readonly BlindBin[], key: number): number {
  if (bins.length < MAX_BINS || bins.some((bin) => bin[0] === key)) return key
  const [q, w, t] = coordinates(key)
  let best = key
  let bestDistance = Number.POSITIVE_INFINITY
  for (const [other] of bins) {
    const [oq, ow, ot] = coordinates(other)
    const windowDistance = (w === NO_WINDOW) !== (ow === NO_WINDOW) ? 2 * BUCKETS : Math.abs(w - ow)
    const distance = Math.abs(q - oq) + windowDistance + Math.abs(t - ot)
    if (distance < bestDistance) {
      bestDistance = distance
      best = other
    }
  }
  return best
}

/**
 * A new sparse histogram (sorted by key) with one interval added; the input is not modified. At most
 * MAX_BINS bins: past that, an interval joins the nearest bin, whose sums keep its mean lengths exact.
 */
export function addBlindInterval(
  bins: readonly BlindBin[],
  interval: { quietDays: number; windowDays: number | null; intervalDays: number; changed: boolean },
): BlindBin[] {
  const windowBucket = interval.windowDays === null ? NO_WINDOW : bucketOf(interval.windowDays)
  const key = targetKey(
    bins,
    (bucketOf(interval.quietDays) * (BUCKETS + 1) + windowBucket) * BUCKETS + bucketOf(interval.intervalDays),
  )
  const window = interval.windowDays ?? 0
  const out: BlindBin[] = []
  let inserted = false
  for (const bin of bins) {
    if (!inserted && bin[0] >= key) {
      if (bin[0] === key) {
        out.push([
          key,
          bin[1] + (interval.changed ? 0 : 1),
          bin[2] + (interval.changed ? 1 : 0),
          bin[3] + interval.quietDays,
          bin[4] + window,
          bin[5] + interval.intervalDays,
        ])
        inserted = true
        continue
      }
      out.push(newBin(key, interval.changed, interval.quietDays, window, interval.intervalDays))
      inserted = true
    }
    out.push([...bin])
  }
  if (!inserted) out.push(newBin(key, interval.changed, interval.quietDays, window, interval.intervalDays))
  return out
}

function newBin(key: number, changed: boolean, quiet: number, window: number, interval: number): BlindBin {
  return [key, changed ? 0 : 1, changed ? 1 : 0, quiet, window, interval]
}

/** Each bin at its mean lengths, for the fit. */
export function blindPoints(bins: readonly BlindBin[]): BlindIntervals[] {
  const points: BlindIntervals[] = []
  for (const [key, unchanged, changed, quiet, window, interval] of bins) {
    const count = unchanged + changed
    if (!(count > 0)) continue
    const noWindow = coordinates(key)[1] === NO_WINDOW
    points.push({
      quietDays: quiet / count,
      windowDays: noWindow ? Number.POSITIVE_INFINITY : window / count,
      intervalDays: interval / count,
      unchanged,
      changed,
    })
  }
  return points
}
