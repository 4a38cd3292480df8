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
