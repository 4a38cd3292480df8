/** Small helpers on numbers and ascending arrays: one of each, shared by the numerics and the simulator. */

/** `value` moved into [low, high]. */
export function clamp(value: number, low: number, high: number): number {
  return value < low ? low : value > high ? high : value
}

/** The number of values ≤ x in an ascending array (binary search). */
export function countAtMost(sorted: ArrayLike<number>, x: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! <= x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The number of values < x in an ascending array (binary search). */
export function countBelow(sorted: ArrayLike<number>, x: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The median of a sample (the mean of the two middle values for an even count); NaN for an empty one. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >>> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * Golden-section search for the maximum of a unimodal f on [low, high]: at most `iterations` steps, stopping
 * once the bracket is narrower than `tolerance`. Returns the final bracket and the better of its two interior
 * points (on a tie, the lower one: the bracket then shrinks from above).
 */
export function goldenSectionMax(
  f: (x: number) => number,
  low: number,
  high: number,
  iterations: number,
  tolerance = 0,
): { x: number; value: number; low: number; high: number } {
  const r = (Math.sqrt(5) - 1) / 2
  let a = low
  let b = high
  let x1 = b - r * (b - a)
  let x2 = a + r * (b - a)
  let f1 = f(x1)
  let f2 = f(x2)
  for (let k = 0; k < iterations && b - a > tolerance; k++) {
    if (f1 >= f2) {
      b = x2
      x2 = x1
      f2 = f1
      x1 = b - r * (b - a)
      f1 = f(x1)
    } else {
      a = x1
      x1 = x2
      f1 = f2
      x2 = a + r * (b - a)
      f2 = f(x2)
    }
  }
  return f1 >= f2 ? { x: x1, value: f1, low: a, high: b } : { x: x2, value: f2, low: a, high: b }
}
