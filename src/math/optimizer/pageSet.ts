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
   * cap binds (MATH.md 3.2), and equal to l_i when μ_i = 0 or Δ_i = 0 (such pages stay at l_i).
   */
  upperCrawlsPerDay: Float64Array
}

/** Pages `indices[0..count)`, or pages `0..count)` when `indices` is null. */
export interface PageSet {
  indices: Int32Array | null
  count: number
}

