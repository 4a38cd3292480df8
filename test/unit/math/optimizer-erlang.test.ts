// The root of g(x) = 1 − (1 + x)e^{−x} = c used for every free page of the periodic objective
// (docs/math.md 3.3): a tabulated guess polished by one Halley step. Checked here against roots found by
// bisection on a direct evaluation of g (test/helpers/referenceFreshness.ts), independent of the solver.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { erlangCdf, inverseErlangCdf } from '../../../src/math/optimizer/erlang.ts'
import { createRandom } from '../../../src/math/random.ts'
import { erlangG } from '../../helpers/referenceFreshness.ts'

/** 1 − g(x) = (1 + x)e^{−x}, decreasing. */
function survival(x: number): number {
  return (1 + x) * Math.exp(-x)
}

/** Root by bisection on ln x: on g for c ≤ 1/2, on 1 − g = 1 − c otherwise (1 − c exact there). */
function rootByBisection(c: number): number {
  let low = 1e-160
  let high = 60
  const above = c <= 0.5 ? (x: number) => erlangG(x) > c : (x: number) => survival(x) < 1 - c
  for (let k = 0; k < 400; k++) {
    const mid = Math.sqrt(low * high)
    if (!(mid > low && mid < high)) break
    if (above(mid)) high = mid
    else low = mid
  }
  return Math.sqrt(low * high)
}

test('inverseErlangCdf matches bisection on g to 1e-14 across (0, 1), dense near 0, near 1 and at the table seams', () => {
  const cs: number[] = []
  for (let e = -300; e <= -1; e += 0.61) cs.push(10 ** e) // c → 0: x ≈ √(2c)
  for (let k = 1; k < 2000; k++) cs.push(k / 2000)
  for (let e = -2; e > -16; e -= 0.23) cs.push(1 - 10 ** e) // c → 1: x ≈ ln(1/(1 − c)), the 3.3 edge
  cs.push(1 - 2 ** -52, 1 - 2 ** -53)
  // The two tables meet at c = 0.9; the first switches from series to closed form near c ≈ 0.0047.
  for (const seam of [0.9, erlangCdf(0.1)]) for (let k = -20; k <= 20; k++) cs.push(seam * (1 + k * 2 ** -52))
  const random = createRandom(5)
  for (let k = 0; k < 2000; k++) cs.push(random.next())
  for (const c of cs) {
    const x = inverseErlangCdf(c)
    const expected = rootByBisection(c)
    const error = Math.abs(x / expected - 1)
    assert.ok(error < 1e-14, `c=${c}: x=${x}, bisection ${expected}, relative error ${error}`)
  }
})

test('inverseErlangCdf increases with c: steps of 1e-12 relative are never reversed by rounding', () => {
  const random = createRandom(11)
  for (let k = 0; k < 20_000; k++) {
    const c = k < 10_000 ? random.next() : 1 - 10 ** (-1 - 14 * random.next())
    const next = c * (1 + 1e-12)
    if (!(next < 1)) continue
    assert.ok(inverseErlangCdf(next) > inverseErlangCdf(c), `c=${c}`)
  }
})

test('inverseErlangCdf at the ends of its domain: 0 for c ≤ 0, +∞ for c ≥ 1, tiny c gives √(2c)', () => {
  assert.equal(inverseErlangCdf(0), 0)
  assert.equal(inverseErlangCdf(-1), 0)
  assert.equal(inverseErlangCdf(1), Number.POSITIVE_INFINITY)
  assert.equal(inverseErlangCdf(2), Number.POSITIVE_INFINITY)
  for (const c of [1e-300, 1e-200, 1e-40, 1e-20]) assert.ok(Math.abs(inverseErlangCdf(c) / Math.sqrt(2 * c) - 1) < 1e-9)
})

test('erlangCdf agrees with the direct form across its three branches', () => {
  for (let e = -8; e <= 1.6; e += 0.001) {
    const x = 10 ** e
    assert.ok(Math.abs(erlangCdf(x) / erlangG(x) - 1) < 1e-14, `x=${x}`)
  }
  for (const x of [0.1, 1, 1 + 2 ** -52, 40, 700]) assert.ok(Math.abs(erlangCdf(x) / erlangG(x) - 1) < 1e-14, `x=${x}`)
})
