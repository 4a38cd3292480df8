/**
 * The function behind periodic crawling (docs/math.md 3.3): g(x) = 1 − (1 + x)e^{−x}, x = Δ/ρ.
 * (g is the Erlang-2 distribution function.) The marginal utility of a periodically crawled page is
 * (μ/Δ)·g(Δ/ρ), so its rate at multiplier λ solves g(x) = c with c = λΔ/μ.
 */

/** Below this x, g is summed from its Taylor series: the closed form cancels (both terms ≈ x). */
const SERIES_BELOW_X = 0.1

/**
 * g(x) for x ≥ 0, accurate to a few ulps relative for every x (series for small x). One
 * exponential: the series below 0.1, 1 − e^{−x}(1 + x) from expm1 up to 1, and 1 − (1 + x)e^{−x}
 * above 1, where the subtracted term is below 0.74 and its rounding stays small next to g ≥ 0.26.
 */
export function erlangCdf(x: number): number {
  if (x < SERIES_BELOW_X) return x * x * seriesFactor(x)
  if (x <= 1) {
    const em1 = Math.expm1(-x)
    return -em1 - x * (1 + em1)
  }
  if (x === Number.POSITIVE_INFINITY) return 1
  return 1 - (1 + x) * Math.exp(-x)
}

/** ln g(x) for x > 0 without cancellation at either end. */
export function lnErlangCdf(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return 0
  if (x < SERIES_BELOW_X) return 2 * Math.log(x) + Math.log(seriesFactor(x))
  if (x > 1) return Math.log1p(-(1 + x) * Math.exp(-x))
  return Math.log(erlangCdf(x))
}

/** g(x)/x² = Σ_{k≥2} (−1)^k (k−1)/k! x^{k−2}; terms to x^10 give full precision for x < 0.1. */
function seriesFactor(x: number): number {
  let sum = 1 / 43545600
  sum = -1 / 3991680 + x * sum
  sum = 1 / 403200 + x * sum
  sum = -1 / 45360 + x * sum
  sum = 1 / 5760 + x * sum
  sum = -1 / 840 + x * sum
  sum = 1 / 144 + x * sum
  sum = -1 / 30 + x * sum
  sum = 1 / 8 + x * sum
  sum = -1 / 3 + x * sum
  return 1 / 2 + x * sum
}

// ---- Inverse of g ----
//
// x(c) is read off a table to about 1e-9 relative and then polished by one Halley step, which
// triples the number of correct digits, so the root costs one square root or logarithm, a table
// lookup and one exponential. Two tables, each a smooth function of a cheap variable:
// - c ≤ SPLIT_C: q(s) = x/s in s = √c (x ≈ √2·s + (2/3)s² near 0, so q is smooth down to s = 0 and
//   the guess is relatively accurate even for the smallest c);
// - c > SPLIT_C: p(L) = x − L in L = −ln(1 − c), where x − ln(1 + x) = L, so p = ln(1 + x) is smooth
//   and slowly varying up to the largest L a double below 1 allows (−ln 2^-53 ≈ 36.7). 1 − c is exact
//   here (Sterbenz), which keeps the root accurate as c → 1, where the rate Δ/x falls off only
//   logarithmically (the docs/math.md 3.3 trap).
// Each table holds one cubic (Hermite, from values and derivatives at the cell ends) per cell.

const SPLIT_C = 0.9
const SMALL_CELLS = 512
const SMALL_STEP = Math.sqrt(SPLIT_C) / SMALL_CELLS
const LARGE_START = -Math.log(1 - SPLIT_C)
const LARGE_END = 37.5
const LARGE_CELLS = 256
const LARGE_STEP = (LARGE_END - LARGE_START) / LARGE_CELLS

/** One Halley step towards g(x) = c from x > 0 (c ≤ SPLIT_C side). */
function halleyStepSmall(c: number, x: number): number {
  const em1 = Math.expm1(-x)
  const e = 1 + em1
  const g = x < SERIES_BELOW_X ? x * x * seriesFactor(x) : -em1 - x * e
  // Newton step t = (g − c)/g', g' = x e^{−x}; Halley divides by 1 − t g''/(2g'), g''/g' = (1 − x)/x.
  const t = (g - c) / (x * e)
  return x - t / (1 - (t * (1 - x)) / (2 * x))
}

/** One Halley step towards (1 + x)e^{−x} = m (= 1 − c, c > SPLIT_C side). */
function halleyStepLarge(m: number, x: number): number {
  const e = Math.exp(-x)
  // h(x) = (1 + x)e^{−x} − m, h' = −x e^{−x}, h''/h' = (1 − x)/x.
  const t = ((1 + x) * e - m) / (-x * e)
  return x - t / (1 - (t * (1 - x)) / (2 * x))
}

/** Cubic coefficients (in t ∈ [0, 1]) of the Hermite interpolant from values y and slopes dy·step. */
function hermiteCell(into: Float64Array, cell: number, y0: number, d0: number, y1: number, d1: number): void {
  const o = 4 * cell
  into[o] = y0
  into[o + 1] = d0
  into[o + 2] = 3 * (y1 - y0) - 2 * d0 - d1
  into[o + 3] = 2 * (y0 - y1) + d0 + d1
}

/** Cells of q(s) = x(s²)/s; one extra cell past √SPLIT_C absorbs rounding of s/step at the seam. */
const SMALL_TABLE = ((): Float64Array => {
  const nodes = SMALL_CELLS + 2
  const q = new Float64Array(nodes)
  const dq = new Float64Array(nodes) // dq/ds
  q[0] = Math.SQRT2
  dq[0] = 2 / 3
  let x = 0
  for (let j = 1; j < nodes; j++) {
    const s = j * SMALL_STEP
    const c = s * s
    x = j === 1 ? Math.SQRT2 * s : (x * s) / ((j - 1) * SMALL_STEP)
    for (let k = 0; k < 20; k++) {
      const next = halleyStepSmall(c, x)
      const done = Math.abs(next - x) <= 1e-16 * x
      x = next
      if (done) break
    }
    q[j] = x / s
    // dx/ds = 2s·dx/dc = 2s(1 + x)/(x(1 − c)), using e^{−x} = (1 − c)/(1 + x) at the root.
    dq[j] = ((2 * s * (1 + x)) / (x * (1 - c)) - q[j]!) / s
  }
  const table = new Float64Array(4 * (nodes - 1))
  for (let j = 0; j + 1 < nodes; j++)
    hermiteCell(table, j, q[j]!, dq[j]! * SMALL_STEP, q[j + 1]!, dq[j + 1]! * SMALL_STEP)
  return table
})()

/** Cells of p(L) = x − L with x − ln(1 + x) = L. */
const LARGE_TABLE = ((): Float64Array => {
  const nodes = LARGE_CELLS + 1
  const p = new Float64Array(nodes)
  const dp = new Float64Array(nodes) // dp/dL = 1/x
  let x = LARGE_START + Math.log1p(LARGE_START + Math.log1p(LARGE_START))
  for (let k = 0; k < nodes; k++) {
    const L = LARGE_START + k * LARGE_STEP
    if (k > 0) x += LARGE_STEP * (1 + 1 / x)
    for (let step = 0; step < 20; step++) {
      const dx = ((x - Math.log1p(x) - L) * (1 + x)) / x
      x -= dx
      if (Math.abs(dx) <= 1e-16 * x) break
    }
    p[k] = x - L
    dp[k] = 1 / x
  }
  const table = new Float64Array(4 * (nodes - 1))
  for (let k = 0; k + 1 < nodes; k++)
    hermiteCell(table, k, p[k]!, dp[k]! * LARGE_STEP, p[k + 1]!, dp[k + 1]! * LARGE_STEP)
  return table
})()

/**
 * x > 0 with g(x) = c, for 0 < c < 1, to within a few ulps (0 when c ≤ 0, +Infinity when c ≥ 1).
 * Costs one table lookup and one exponential; see the tables above. (The two sides are separate
 * functions so that the common one stays small enough to be inlined into the solver's loops.)
 */
export function inverseErlangCdf(c: number): number {
  if (c <= SPLIT_C) return c > 0 ? inverseBelowSplit(c) : 0
  return c < 1 ? inverseAboveSplit(c) : Number.POSITIVE_INFINITY
}

function inverseBelowSplit(c: number): number {
  const s = Math.sqrt(c)
  const u = s * (1 / SMALL_STEP)
  const cell = u | 0
  const t = u - cell
  const o = 4 * cell
  const table = SMALL_TABLE
  const q = table[o]! + t * (table[o + 1]! + t * (table[o + 2]! + t * table[o + 3]!))
  return halleyStepSmall(c, s * q)
}

function inverseAboveSplit(c: number): number {
  const m = 1 - c
  const L = -Math.log(m)
  const u = (L - LARGE_START) * (1 / LARGE_STEP)
  const cell = u < LARGE_CELLS ? u | 0 : LARGE_CELLS - 1 // L < 36.8 always; a guard only
  const t = u - cell
  const o = 4 * cell
  const table = LARGE_TABLE
  const p = table[o]! + t * (table[o + 1]! + t * (table[o + 2]! + t * table[o + 3]!))
  return halleyStepLarge(m, L + p)
}
