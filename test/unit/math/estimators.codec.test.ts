/**
 * The stored form of estimator states (src/math/estimators/codec.ts): bytes that read back to the
 * same state and the same estimates, and that never yield NaN when short or malformed.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  currentEstimates,
  decodeEstimatorState,
  encodeEstimatorState,
  readEstimatorState,
} from '../../../src/math/estimators/index.ts'
import { createRandom } from '../../../src/math/random.ts'
import { jumpingHistory, SETTINGS } from './estimatorsHelpers.ts'

test('encode → decode gives the same state and the same estimates, bit for bit (200 histories, 0–120 crawls)', () => {
  let restarted = 0
  for (let seed = 1; seed <= 200; seed++) {
    const state = jumpingHistory(seed, (seed * 7) % 121)
    const decoded = decodeEstimatorState(encodeEstimatorState(state))
    assert.ok(decoded)
    assert.deepEqual(decoded, readEstimatorState(state))
    assert.deepEqual(currentEstimates(decoded, SETTINGS), currentEstimates(state, SETTINGS))
    if (readEstimatorState(state).segment.restarts > 0) restarted++
  }
  assert.ok(restarted > 10, `only ${restarted} histories restarted a segment`)
})

test('the bytes are smaller than the JSON the state used to be stored as', () => {
  const state = jumpingHistory(3, 40)
  assert.ok(encodeEstimatorState(state).length < JSON.stringify(state).length * 0.9)
})

test('no bytes, too few bytes or another layout version read as no state', () => {
  assert.equal(decodeEstimatorState(null), null)
  assert.equal(decodeEstimatorState(new Uint8Array(0)), null)
  assert.equal(decodeEstimatorState(new Uint8Array(5)), null)
  const bytes = encodeEstimatorState(jumpingHistory(4, 10))
  new DataView(bytes.buffer).setFloat64(0, 4, false)
  assert.equal(decodeEstimatorState(bytes), null)
})

test('layout 1, stored before shape fits and run statistics, still decodes: the same estimates, Poisson, fitted when next due', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const state = readEstimatorState(jumpingHistory(seed, 10 + seed))
    // Layout 1 is layout 2 without its tail (shape fields, age histogram, block statistics), version 1.
    const full = encodeEstimatorState(state)
    const view = new DataView(full.buffer)
    let slot = 1 + 8 + 1 + view.getFloat64(8 * 9, false) + 8 // header, Last-Modified, classes, segment
    for (let h = 0; h < 3; h++) slot += 1 + 4 * view.getFloat64(8 * slot, false)
    const v1 = full.slice(0, 8 * slot)
    new DataView(v1.buffer).setFloat64(0, 1, false)
    const decoded = decodeEstimatorState(v1)
    assert.ok(decoded)
    assert.deepEqual(currentEstimates(decoded, SETTINGS), currentEstimates(state, SETTINGS))
    assert.equal(decoded.ageShape, null)
    assert.equal(decoded.ageShapeFitIntervals, 0)
    assert.deepEqual(decoded.ageHistogram, [])
  }
})

test('layout 2, stored before the blind shape fit, still decodes: the same estimates and shape, no blind evidence yet', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const state = readEstimatorState(jumpingHistory(seed, 10 + seed))
    // Layout 2 is layout 3 without its tail (quietDays, windowDays, the blind histogram), version 2.
    const full = encodeEstimatorState(state)
    const v2 = full.slice(0, full.length - 8 * (3 + 6 * state.blindHistogram.length))
    new DataView(v2.buffer).setFloat64(0, 2, false)
    const decoded = decodeEstimatorState(v2)
    assert.ok(decoded)
    assert.deepEqual(currentEstimates(decoded, SETTINGS), currentEstimates(state, SETTINGS))
    assert.equal(decoded.ageShape, state.ageShape)
    assert.deepEqual(decoded.ageHistogram, state.ageHistogram)
    assert.deepEqual(decoded.blindHistogram, [])
    assert.equal(decoded.windowDays, null)
    assert.ok(state.blindHistogram.length > 0)
  }
})

test('truncated or corrupted bytes give a well-formed state: every estimate finite or null', () => {
  const bytes = encodeEstimatorState(jumpingHistory(5, 30))
  const random = createRandom(9)
  for (let trial = 0; trial < 200; trial++) {
    const copy = bytes.slice(0, 8 + Math.floor(random.next() * (bytes.length - 8)))
    const view = new DataView(copy.buffer)
    if (trial % 2 === 0 && copy.length >= 16) {
      const slot = 1 + Math.floor(random.next() * (Math.floor(copy.length / 8) - 1))
      view.setFloat64(8 * slot, [Number.NaN, -1, 1e300, Number.POSITIVE_INFINITY][trial % 4]!, false)
    }
    const decoded = decodeEstimatorState(copy)
    assert.ok(decoded)
    for (const [name, value] of Object.entries(currentEstimates(decoded, SETTINGS))) {
      assert.ok(value === null || Number.isFinite(value), `${name} = ${value} (trial ${trial})`)
    }
  }
})
