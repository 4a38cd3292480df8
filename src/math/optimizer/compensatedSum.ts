/**
 * Neumaier's compensated summation: the rounding error of every addition is carried in a second sum and
 * added back at the end, so a sum of n terms is accurate to about one rounding of the result instead of
 * n of them. The budget test of every solve (Σρ = R to 1e-13 relative) needs it at 10^7 pages.
 *
 * In a loop:
 *
 *     compensation += additionError(sum, value)
 *     sum += value
 *     …
 *     return sum + compensation
 *
 * (a function of two numbers rather than an accumulator object: the solver's per-page loops inline
 * everything they call, and this keeps their inlined code small enough to fit the compiler's budget.)
 */

/** The rounding error of fl(a + b): a + b = fl(a + b) + additionError(a, b) exactly (Neumaier 1974). */
export function additionError(a: number, b: number): number {
  const s = a + b
  return Math.abs(a) >= Math.abs(b) ? a - s + b : b - s + a
}

/** The compensated sum of `values[0..count)`. */
export function compensatedSum(values: ArrayLike<number>, count = values.length): number {
  let sum = 0
  let compensation = 0
  for (let i = 0; i < count; i++) {
    const value = values[i]!
    compensation += additionError(sum, value)
    sum += value
  }
  return sum + compensation
}
