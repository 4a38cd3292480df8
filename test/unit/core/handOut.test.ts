/**
 * The hand-out policy (src/core/handOut.ts) against the numbers docs/api.md "Schedule" states: the allowance
 * fills at the budget and holds handOutBurstHours of it, starts at the reserve of three minutes of the budget
 * (at least one crawl), and early hand-outs leave the reserve and take pages from half their period before
 * their due time, within a day.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  allowanceLeft,
  earlyHandOutFrom,
  earlyHandOutLimit,
  earlyHandOutWindow,
  explainShortLease,
  handOutAllowance,
} from '../../../src/core/handOut.ts'
import { createRandom } from '../../../src/math/random.ts'
import { MS_PER_DAY } from '../../../src/math/units.ts'

test('the allowance fills at the budget, holds handOutBurstHours of it, and starts at three minutes of it', () => {
  assert.deepEqual(handOutAllowance({ budgetCrawlsPerDay: 48_000, handOutBurstHours: 2 }), {
    perDay: 48_000,
    capacity: 4_000,
    initial: 100,
    reserve: 100,
  })
  // A small budget: at least one crawl of each, and the reserve never above the capacity.
  assert.deepEqual(handOutAllowance({ budgetCrawlsPerDay: 48, handOutBurstHours: 2 }), {
    perDay: 48,
    capacity: 4,
    initial: 1,
    reserve: 1,
  })
  assert.deepEqual(handOutAllowance({ budgetCrawlsPerDay: 1, handOutBurstHours: 0.01 }), {
    perDay: 1,
    capacity: 1,
    initial: 1,
    reserve: 1,
  })
  assert.equal(handOutAllowance({ budgetCrawlsPerDay: 10_000, handOutBurstHours: 0.01 }).reserve, 10_000 / 2400)
})

test('early hand-outs take what the due pages left of the tokens taken, and never the reserve', () => {
  assert.equal(earlyHandOutLimit({ taken: 100, available: 500, duePages: 30, reserve: 10, hostFilter: false }), 70)
  assert.equal(earlyHandOutLimit({ taken: 100, available: 100, duePages: 30, reserve: 10, hostFilter: false }), 60)
  assert.equal(earlyHandOutLimit({ taken: 40, available: 40.9, duePages: 30, reserve: 10, hostFilter: false }), 0)
  assert.equal(earlyHandOutLimit({ taken: 100, available: 100, duePages: 100, reserve: 10, hostFilter: false }), -10)
  // A lease with a host filter takes no early hand-outs: the fleet's unused allowance is not those hosts' alone.
  assert.equal(earlyHandOutLimit({ taken: 100, available: 500, duePages: 30, reserve: 10, hostFilter: true }), 0)
})

test('an early hand-out takes pages due within a day, from half their period before their due time', () => {
  const nowMs = Date.UTC(2026, 0, 1)
  assert.deepEqual(earlyHandOutWindow(nowMs, { maxCrawlsPerDay: 24 }), {
    untilMs: nowMs + MS_PER_DAY,
    shareOfPeriod: 0.5,
    maxCrawlsPerDay: 24,
  })
  assert.equal(earlyHandOutFrom(10, 14), 12)
  // The simulator's fleet used 0.5 · (last + due): the same doubles.
  const random = createRandom(7)
  for (let i = 0; i < 10_000; i++) {
    const last = random.next() * 1000
    const due = last + random.exponential(0.1)
    assert.equal(earlyHandOutFrom(last, due), 0.5 * (last + due))
  }
})

test('the allowance counts as left while it holds a whole token', () => {
  assert.equal(allowanceLeft(1), true)
  assert.equal(allowanceLeft(0.999), false)
})

test('a short lease says why and when to ask again', () => {
  const nowMs = 1_000_000_000
  const base = { nowMs, taken: 10, limit: 10, tokensLeft: 5, perDay: 86_400, heldHosts: [] }
  // Nothing due: the next due time, in whole seconds, at least 1.
  assert.deepEqual(explainShortLease({ ...base, nextLeasableAtMs: nowMs + 90_500 }), {
    limitedBy: ['nothingDue'],
    retryAfterSeconds: 91,
  })
  assert.deepEqual(explainShortLease({ ...base, nextLeasableAtMs: null }), {
    limitedBy: ['nothingDue'],
    retryAfterSeconds: null,
  })
  // Pages are leasable but the allowance gave 2 of 10 and holds 0.25 now: one token every second at this budget.
  assert.deepEqual(explainShortLease({ ...base, taken: 2, tokensLeft: 0.25, nextLeasableAtMs: nowMs - 5_000 }), {
    limitedBy: ['budgetAllowance'],
    retryAfterSeconds: 1,
  })
  assert.deepEqual(
    explainShortLease({ ...base, taken: 2, tokensLeft: 0.25, perDay: 864, nextLeasableAtMs: nowMs - 5_000 }),
    { limitedBy: ['budgetAllowance'], retryAfterSeconds: 75 },
  )
  // A host in its pace and one paused beyond it (a Retry-After): both named, the soonest page decides.
  assert.deepEqual(
    explainShortLease({
      ...base,
      nextLeasableAtMs: nowMs + 30_000,
      heldHosts: [
        { paceSeconds: 60, nextLeaseAtMs: nowMs + 30_000 },
        { paceSeconds: 1, nextLeaseAtMs: nowMs + 3_600_000 },
      ],
    }),
    { limitedBy: ['pacedHosts', 'hostBackoff'], retryAfterSeconds: 30 },
  )
})
