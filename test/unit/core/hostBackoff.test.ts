/**
 * Host backoff (src/core/fetchOutcomes.ts, nextHostBlock and nextThrottleDelaySeconds): incidents block a host
 * for 60 s doubling up to a day, with jitter, forgiven after 30 quiet minutes past the block's end.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  addHostSignal,
  BLOCK_FIRST_SECONDS,
  BLOCK_FORGIVE_SECONDS,
  BLOCK_MAX_SECONDS,
  emptyHostBlockState,
  emptyHostSignals,
  nextHostBlock,
  nextAdaptivePace,
  type AdaptivePace,
  nextThrottleDelaySeconds,
  pacingAfterIncident,
  TIMEOUT_RUN,
  type FetchError,
  type HostSignals,
} from '../../../src/core/fetchOutcomes.ts'

function signalsOf(
  reports: { httpStatus?: number; fetchError?: FetchError; retryAfterSeconds?: number }[],
): HostSignals {
  const signals = emptyHostSignals()
  for (const r of reports)
    addHostSignal(signals, {
      httpStatus: r.httpStatus ?? null,
      fetchError: r.fetchError ?? null,
      retryAfterSeconds: r.retryAfterSeconds ?? null,
      robotsCrawlDelaySeconds: null,
    })
  return signals
}

test('each incident doubles the block, from 60 s up to a day, within the jitter', () => {
  let state = emptyHostBlockState()
  let nowMs = 0
  for (let k = 1; k <= 14; k++) {
    const random01 = (k * 0.37) % 1
    const { state: next, blockUntilMs } = nextHostBlock(state, signalsOf([{ httpStatus: 503 }]), nowMs, random01)
    assert.equal(next.incidents, k)
    const seconds = (blockUntilMs! - nowMs) / 1000
    const base = Math.min(BLOCK_MAX_SECONDS, BLOCK_FIRST_SECONDS * 2 ** (k - 1))
    assert.ok(seconds >= 0.8 * base - 1e-9 && seconds < 1.2 * base, `k=${k}: ${seconds} s against ${base} s`)
    assert.ok(Math.abs(seconds - base * (0.8 + 0.4 * random01)) < 1e-6)
    // The crawler retries soon after the block ends: still within the quiet time, so no forgiveness.
    nowMs = blockUntilMs! + 5 * 60_000
    state = next
  }
})

test('incidents are forgiven after 30 quiet minutes past the end of the block, not before', () => {
  const blocked = nextHostBlock(
    { incidents: 5, blockedUntilMs: 0, timeoutsInARow: 0 },
    signalsOf([{ httpStatus: 429 }]),
    (BLOCK_FORGIVE_SECONDS - 1) * 1000,
    0.5,
  )
  assert.equal(blocked.state.incidents, 6)
  const forgiven = nextHostBlock(
    { incidents: 5, blockedUntilMs: 0, timeoutsInARow: 0 },
    signalsOf([{ httpStatus: 429 }]),
    BLOCK_FORGIVE_SECONDS * 1000,
    0.5,
  )
  assert.equal(forgiven.state.incidents, 1)
  assert.equal(forgiven.blockUntilMs, BLOCK_FORGIVE_SECONDS * 1000 + BLOCK_FIRST_SECONDS * 1000)
})

test('a 503 with Retry-After, a 500 and normal answers are no incident; a run of timeouts is one', () => {
  const none = emptyHostBlockState()
  for (const reports of [[{ httpStatus: 503, retryAfterSeconds: 120 }], [{ httpStatus: 500 }], [{ httpStatus: 200 }]])
    assert.equal(nextHostBlock(none, signalsOf(reports), 0, 0.5).blockUntilMs, null)
  let state = none
  for (let i = 1; i < TIMEOUT_RUN; i++) {
    const step = nextHostBlock(state, signalsOf([{ fetchError: 'timeout' }]), i, 0.5)
    assert.equal(step.blockUntilMs, null)
    state = step.state
  }
  // An answer between timeouts breaks the run.
  const broken = nextHostBlock(state, signalsOf([{ httpStatus: 200 }]), 10, 0.5)
  assert.equal(broken.state.timeoutsInARow, 0)
  const run = nextHostBlock(state, signalsOf([{ fetchError: 'timeout' }]), 10, 0.5)
  assert.notEqual(run.blockUntilMs, null)
  assert.equal(run.state.incidents, 1)
  assert.equal(run.state.timeoutsInARow, 0)
})

test("a Retry-After sets the host's pace, at most 600 s", () => {
  assert.equal(nextThrottleDelaySeconds(null, signalsOf([{ httpStatus: 429, retryAfterSeconds: 30 }])), 30)
  assert.equal(nextThrottleDelaySeconds(null, signalsOf([{ httpStatus: 503, retryAfterSeconds: 3600 }])), 600)
  assert.equal(nextThrottleDelaySeconds(null, signalsOf([{ httpStatus: 429 }])), 1)
})

test('an incident paces the host: at least the first block, doubling from the pace before, at most 600 s', () => {
  assert.equal(pacingAfterIncident(null, 1), BLOCK_FIRST_SECONDS)
  assert.equal(pacingAfterIncident(100, 200), 200)
  assert.equal(pacingAfterIncident(100, null), 200)
  assert.equal(pacingAfterIncident(500, 600), 600)
  // What the host's answers asked for wins when it is longer.
  assert.equal(pacingAfterIncident(null, 900), 900)
})

test('a push-back teaches the spacing the host refused: the time since its request before, when longer than the delay', () => {
  const signals = emptyHostSignals()
  for (const [httpStatus, crawledAtMs] of [
    [200, 1_000],
    [429, 5_000],
    [503, 3_000],
    [429, 9_000],
  ] as const)
    addHostSignal(signals, {
      httpStatus,
      fetchError: null,
      retryAfterSeconds: null,
      robotsCrawlDelaySeconds: null,
      crawledAtMs,
    })
  assert.equal(signals.pushbackAtMs, 3_000, 'the first push-back of the batch')
  // Pages that fell due in a bunch: the delay was 100 s, but the host refused a request 400 s after the one before.
  const refused = nextAdaptivePace(
    { delaySeconds: 100, pushbackSeconds: null },
    signalsOf([{ httpStatus: 429 }]),
    true,
    400,
  )
  assert.equal(refused.pushbackSeconds, 600)
  assert.equal(refused.delaySeconds, 600)
  // A spacing shorter than the delay teaches the delay, as without one; one past the ceiling counts as the ceiling.
  const short = nextAdaptivePace(
    { delaySeconds: 100, pushbackSeconds: null },
    signalsOf([{ httpStatus: 429 }]),
    true,
    30,
  )
  assert.equal(short.pushbackSeconds, 150)
  const long = nextAdaptivePace(
    { delaySeconds: 100, pushbackSeconds: null },
    signalsOf([{ httpStatus: 429 }]),
    true,
    5_000,
  )
  assert.equal(long.pushbackSeconds, 900)
  // Successful answers teach nothing, whatever their spacing.
  const ok = nextAdaptivePace(
    { delaySeconds: 100, pushbackSeconds: null },
    signalsOf([{ httpStatus: 200 }]),
    false,
    400,
  )
  assert.equal(ok.pushbackSeconds, null)
})

test('a push-back is remembered: the pace does not recover below 1.5 times the pace that drew it, which relaxes slowly', () => {
  const ok = (n: number) => signalsOf(Array.from({ length: n }, () => ({ httpStatus: 200 })))
  // A 429 at a pace of 400 s: the incident doubles it to 600, and 600 (1.5 × 400) is remembered.
  const hit = nextAdaptivePace({ delaySeconds: 400, pushbackSeconds: null }, signalsOf([{ httpStatus: 429 }]), true)
  assert.deepEqual(hit, { delaySeconds: 600, pushbackSeconds: 600 })
  // Successful answers shrink the delay by 0.8 each, but not below the remembered pace, which relaxes by 1 % each.
  const after10 = nextAdaptivePace(hit, ok(10), false)
  assert.ok(Math.abs(after10.pushbackSeconds! - 600 * 0.99 ** 10) < 1e-9)
  assert.equal(after10.delaySeconds, after10.pushbackSeconds)
  const without = nextThrottleDelaySeconds(600, ok(10))!
  assert.ok(without < 100, `without the memory the delay would be ${without} s`)
  // A later push-back at a lower pace never lowers what is remembered.
  const again = nextAdaptivePace({ delaySeconds: 100, pushbackSeconds: 500 }, signalsOf([{ httpStatus: 429 }]), true)
  assert.equal(again.pushbackSeconds, 500)
  // A host that stops pushing back is eventually unpaced.
  let pace: AdaptivePace = { ...hit }
  let answers = 0
  while (pace.delaySeconds !== null && answers < 10_000) {
    pace = nextAdaptivePace(pace, ok(1), false)
    answers++
  }
  assert.deepEqual(pace, { delaySeconds: null, pushbackSeconds: null })
  assert.ok(answers > 500 && answers < 1000, `unpaced after ${answers} answers`)
  // Errors (5xx) slow the host down but teach no pace.
  const errors = nextAdaptivePace(
    { delaySeconds: 10, pushbackSeconds: null },
    signalsOf([{ httpStatus: 500 }, { httpStatus: 500 }]),
    false,
  )
  assert.equal(errors.pushbackSeconds, null)
  assert.equal(errors.delaySeconds, 20)
})
