/**
 * Column-wise page data shared by the solvers, and the subsets (all pages, or one host's) they solve.
 */

export interface PageColumns {
  /** Δ_i, changes per day. */
  changesPerDay: Float64Array
  /** μ_i. */
  importance: Float64Array
  /** l_i, crawls per day. */
  lowerCrawlsPerDay: Float64Array
  /**
   * The effective upper bound, crawls per day: u_i, lowered to the page's capped rate when its host
   * cap binds (docs/math.md 3.2), and equal to l_i when μ_i = 0 or Δ_i = 0 (such pages stay at l_i).
   */
  upperCrawlsPerDay: Float64Array
  /** β_i of the gamma-mixed age law (+Infinity: Poisson), for `freshness-renewal` only. */
  ageShape?: Float64Array
}

/** Pages `indices[0..count)`, or pages `0..count)` when `indices` is null. */
export interface PageSet {
  indices: Int32Array | null
  count: number
}

/**
 * About `size` pages of the set, one from each of `size` equal strides at a pseudo-random position in
 * it (so that no regular pattern in the page order aliases with the stride), as page indices. The
 * sequence is fixed, so solves stay deterministic. The whole set when it has at most `size` pages.
 */
export function strideSample(set: PageSet, size: number): Int32Array {
  const { indices, count } = set
  const stride = Math.max(1, Math.floor(count / size))
  const length = Math.floor(count / stride)
  const sample = new Int32Array(length)
  let state = 0x9e3779b9
  for (let j = 0; j < length; j++) {
    // xorshift32
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    const k = j * stride + ((state >>> 0) % stride)
    sample[j] = indices === null ? k : indices[k]!
  }
  return sample
}
