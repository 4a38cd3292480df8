/**
 * Due times (src/core/crawlTiming.ts): the rate's schedule, exploration of pages crawled once, probes
 * of pages whose every interval saw a change, the payback after a probe, and re-timing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  earlyCrawlIntervalDays,
  explorationIntervalDays,
  nextCrawlAtMs,
  probePaybackDays,
  PROBE_MIN_INTERVAL_DAYS,
  retimedCrawlAtMs,
  scheduledCrawlAt,
} from '../../../src/core/crawlTiming.ts'
import { DEFAULT_SETTINGS } from '../../../src/core/settings.ts'
import { createRandom } from '../../../src/math/random.ts'
import { MS_PER_DAY } from '../../../src/math/units.ts'

const T0 = Date.UTC(2026, 10, 1)
const page = (over: Partial<Parameters<typeof earlyCrawlIntervalDays>[0]> = {}) => ({
  intervals: 5,
  changes: 5,
  shortestChangedIntervalDays: 1,
  crawlsPerDay: 0.5,
  minCrawlsPerDay: 0.01,
  maxCrawlsPerDay: Number.POSITIVE_INFINITY,
  explorationIntervalDays: 1,
  ...over,
})

test('a page crawled once is explored after pages/budget days when its rate would wait longer', () => {
  assert.equal(
    earlyCrawlIntervalDays(page({ intervals: 0, changes: 0, crawlsPerDay: 0.01, explorationIntervalDays: 12 })),
    12,
  )
  // Its rate already brings it back sooner, or no optimiser run has said how many pages share the budget.
  assert.equal(
    earlyCrawlIntervalDays(page({ intervals: 0, changes: 0, crawlsPerDay: 0.2, explorationIntervalDays: 12 })),
    null,
  )
  assert.equal(
    earlyCrawlIntervalDays(page({ intervals: 0, changes: 0, crawlsPerDay: 0.01, explorationIntervalDays: null })),
    null,
  )
  assert.equal(
    earlyCrawlIntervalDays(
      page({ intervals: 0, changes: 0, crawlsPerDay: 0.01, maxCrawlsPerDay: 1 / 20, explorationIntervalDays: 12 }),
    ),
    20,
    'never sooner than the page cap allows',
  )
  assert.equal(explorationIntervalDays(2000, { ...DEFAULT_SETTINGS, budgetCrawlsPerDay: 500 }), 4)
  assert.equal(explorationIntervalDays(null, DEFAULT_SETTINGS), null)
})

test('a page whose every interval changed is probed after half its shortest interval, above its floor only', () => {
  assert.equal(earlyCrawlIntervalDays(page({ shortestChangedIntervalDays: 0.8 })), 0.4)
  assert.equal(
    earlyCrawlIntervalDays(page({ changes: 4 })),
    null,
    'an unchanged interval gives the MLE a root: no probe',
  )
  assert.equal(
    earlyCrawlIntervalDays(page({ intervals: 1, changes: 1 })),
    null,
    'one changed interval is too little to probe',
  )
  assert.equal(
    earlyCrawlIntervalDays(page({ crawlsPerDay: 0.01 })),
    null,
    'a page at its floor was given up: not worth probes',
  )
  assert.equal(
    earlyCrawlIntervalDays(page({ crawlsPerDay: 4 })),
    null,
    'its period (0.25 d) is already shorter than the probe (0.5 d)',
  )
  assert.equal(
    earlyCrawlIntervalDays(page({ shortestChangedIntervalDays: 1.5 * PROBE_MIN_INTERVAL_DAYS })),
    null,
    'below one minute',
  )
  assert.equal(
    earlyCrawlIntervalDays(page({ shortestChangedIntervalDays: 2 * PROBE_MIN_INTERVAL_DAYS })),
    PROBE_MIN_INTERVAL_DAYS,
  )
})

test('periodic due times: 1/ρ, an early crawl when shorter, and after a probe the time it saved', () => {
  const base = {
    lastCrawledAtMs: T0,
    crawlsPerDay: 0.5,
    spacing: 'periodic' as const,
    nowMs: T0,
    random: createRandom(1),
  }
  assert.equal(nextCrawlAtMs(base), T0 + 2 * MS_PER_DAY)
  assert.equal(nextCrawlAtMs({ ...base, earlyIntervalDays: 0.25 }), T0 + 0.25 * MS_PER_DAY)
  assert.equal(nextCrawlAtMs({ ...base, earlyIntervalDays: 3 }), T0 + 2 * MS_PER_DAY)
  // A probe closed a 0.25-day interval of a 2-day period: the next one waits 2 + 1.75 days, so two
  // crawls take 4 days as at the page's rate, and the payback comes before any further probe.
  const payback = probePaybackDays({
    wasProbing: true,
    closedIntervalDays: 0.25,
    crawlsPerDay: 0.5,
    minCrawlsPerDay: 0.01,
  })
  assert.equal(payback, 1.75)
  assert.equal(nextCrawlAtMs({ ...base, earlyIntervalDays: 0.125, paybackDays: payback }), T0 + 3.75 * MS_PER_DAY)
  assert.equal(
    probePaybackDays({ wasProbing: false, closedIntervalDays: 0.25, crawlsPerDay: 0.5, minCrawlsPerDay: 0.01 }),
    0,
  )
  assert.equal(
    probePaybackDays({ wasProbing: true, closedIntervalDays: 3, crawlsPerDay: 0.5, minCrawlsPerDay: 0.01 }),
    0,
  )
  assert.equal(
    probePaybackDays({ wasProbing: true, closedIntervalDays: 0.25, crawlsPerDay: 0.01, minCrawlsPerDay: 0.01 }),
    0,
    'given up',
  )
  assert.equal(nextCrawlAtMs({ ...base, crawlsPerDay: 0 }), null)
  assert.equal(nextCrawlAtMs({ ...base, lastCrawledAtMs: null }), T0, 'never crawled: due now')
})

test('Poisson due times: an exponential draw, cut short by an early crawl', () => {
  const draws: number[] = []
  for (let i = 0; i < 4000; i++) {
    const next = nextCrawlAtMs({
      lastCrawledAtMs: T0,
      crawlsPerDay: 2,
      spacing: 'poisson',
      nowMs: T0,
      random: createRandom(100 + i),
      earlyIntervalDays: 0.5,
    })!
    draws.push((next - T0) / MS_PER_DAY)
  }
  assert.ok(draws.every((d) => d > 0 && d <= 0.5))
  // min(Exp(2), 0.5) has mean (1 − e^{−1})/2 = 0.316; 4,000 draws: σ of the mean ≈ 0.003.
  const mean = draws.reduce((a, b) => a + b, 0) / draws.length
  assert.ok(Math.abs(mean - (1 - Math.exp(-1)) / 2) < 0.015, `mean ${mean}`)
})

test("re-timing moves a page to its new period, keeps a late crawl's catch-up as a share of it, and keeps a due time set on purpose (exploration, probe, payback)", () => {
  // Rate 0.5 → 1 per day, last crawl at T0. A due time that is the old rate's own (T0 + 2 d) moves.
  const base = {
    lastCrawledAtMs: T0,
    previousCrawlsPerDay: 0.5,
    crawlsPerDay: 1,
    spacing: 'periodic' as const,
    nowMs: T0 + 0.1 * MS_PER_DAY,
    random: createRandom(2),
  }
  assert.equal(retimedCrawlAtMs({ ...base, nextCrawlAtMs: T0 + 2 * MS_PER_DAY }), T0 + MS_PER_DAY)
  // A late crawl took back a quarter of the old period (due at 1.5 d): a quarter of the new one is kept.
  assert.equal(retimedCrawlAtMs({ ...base, nextCrawlAtMs: T0 + 1.5 * MS_PER_DAY }), T0 + 0.75 * MS_PER_DAY)
  // A probe (0.2 d) was set on purpose and lies within two new periods: kept.
  assert.equal(retimedCrawlAtMs({ ...base, nextCrawlAtMs: T0 + 0.2 * MS_PER_DAY }), T0 + 0.2 * MS_PER_DAY)
  // A payback (2.5 d, beyond the old period) within two new periods (rate 0.6: 3.3 d) is kept too.
  assert.equal(
    retimedCrawlAtMs({ ...base, crawlsPerDay: 0.6, nextCrawlAtMs: T0 + 2.5 * MS_PER_DAY }),
    T0 + 2.5 * MS_PER_DAY,
  )
  // Beyond two periods (a page given up at its floor whose rate rose again): re-timed.
  assert.equal(
    retimedCrawlAtMs({ ...base, previousCrawlsPerDay: 0.01, nextCrawlAtMs: T0 + 150 * MS_PER_DAY }),
    T0 + MS_PER_DAY,
  )
  // A page the new rate makes overdue is due now, not days in the past.
  assert.equal(
    retimedCrawlAtMs({ ...base, crawlsPerDay: 4, nowMs: T0 + 3 * MS_PER_DAY, nextCrawlAtMs: T0 + 4 * MS_PER_DAY }),
    T0 + 3 * MS_PER_DAY,
  )
  // A page already overdue (due at 2 d, now 3 d) keeps its place in the due order, whether its new rate is
  // faster (4 a day: 0.25 d) or a little slower (0.6 a day: 1.67 d); not moved to now behind the pages whose
  // rate did not move. A rate slow enough to make it due after now moves it there (0.2 a day: 5 d).
  const overdue = { ...base, nowMs: T0 + 3 * MS_PER_DAY, nextCrawlAtMs: T0 + 2 * MS_PER_DAY }
  assert.equal(retimedCrawlAtMs({ ...overdue, crawlsPerDay: 4 }), T0 + 2 * MS_PER_DAY)
  assert.equal(retimedCrawlAtMs({ ...overdue, crawlsPerDay: 0.6 }), T0 + 2 * MS_PER_DAY)
  assert.equal(retimedCrawlAtMs({ ...overdue, crawlsPerDay: 0.2 }), T0 + 5 * MS_PER_DAY)
  assert.equal(
    retimedCrawlAtMs({ ...base, lastCrawledAtMs: null, nextCrawlAtMs: null }),
    base.nowMs,
    'never crawled: due now',
  )
  assert.equal(
    retimedCrawlAtMs({ ...base, crawlsPerDay: 0, nextCrawlAtMs: T0 + 2 * MS_PER_DAY }),
    null,
    'rate 0: never',
  )
})

test('nextCrawlAt shown to clients is the rate schedule; the due time may differ while exploring or probing', () => {
  const last = T0
  const due = T0 + 0.3 * MS_PER_DAY
  assert.equal(
    scheduledCrawlAt({ lastCrawledAtMs: last, crawlsPerDay: 0.5, spacing: 'periodic', dueAtMs: due }),
    T0 + 2 * MS_PER_DAY,
  )
  assert.equal(scheduledCrawlAt({ lastCrawledAtMs: last, crawlsPerDay: 0, spacing: 'periodic', dueAtMs: due }), null)
  assert.equal(scheduledCrawlAt({ lastCrawledAtMs: last, crawlsPerDay: 0.5, spacing: 'poisson', dueAtMs: due }), due)
  assert.equal(scheduledCrawlAt({ lastCrawledAtMs: null, crawlsPerDay: 0.5, spacing: 'periodic', dueAtMs: due }), due)
})
