import { test } from 'node:test'
import assert from 'node:assert/strict'
import { goldenSectionMax } from '../../../src/math/numbers.ts'

test('goldenSectionMax finds the peak of unimodal functions, narrowing its bracket by the golden ratio per step', () => {
  for (const peak of [-3.2, 0, 0.7, 4.9]) {
    const f = (x: number) => -((x - peak) ** 2) + 5
    const found = goldenSectionMax(f, -5, 5, 60)
    // Comparing f values near a quadratic peak resolves x to about √ε of the scale, not to ε.
    assert.ok(Math.abs(found.x - peak) < 1e-7, `${found.x} vs ${peak}`)
    assert.ok(Math.abs(found.value - 5) < 1e-12)
    assert.ok(found.low <= found.x && found.x <= found.high)
    // 60 steps shrink a width of 10 by 0.618^60.
    assert.ok(found.high - found.low <= 10 * ((Math.sqrt(5) - 1) / 2) ** 60 * 1.01)
  }
  // A peak at the edge: the bracket closes on it. A tolerance stops early.
  const edge = goldenSectionMax((x) => x, 0, 1, 80)
  assert.ok(1 - edge.x < 1e-12, `${edge.x}`)
  let calls = 0
  const early = goldenSectionMax(
    (x) => {
      calls++
      return -Math.abs(x - 0.3)
    },
    0,
    1,
    100,
    1e-3,
  )
  assert.ok(early.high - early.low <= 1e-3 && Math.abs(early.x - 0.3) <= 1e-3)
  assert.ok(calls < 20, `${calls} evaluations`)
})
