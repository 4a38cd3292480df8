/**
 * The page step's fetch outcomes (docs/api.md "Fetch outcomes"): what 404, 410, 5xx, timeouts, 429, 301 and 304
 * do to a page's status, schedule and estimates, noise, and a late crawl keeping its page's phase.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import { MS_PER_DAY, MS_PER_MINUTE, MS_PER_SECOND } from '../../../src/math/units.ts'
import {
  applyCrawl,
  newPageState,
  releasedDueAtMs,
  retimePage,
  stepContext,
  type CrawlReport,
  type PageState,
} from '../../../src/core/pageStep.ts'
import { DEFAULT_SETTINGS, type Settings } from '../../../src/core/settings.ts'
import { FAILING_OUT_AFTER_FAILURES } from '../../../src/core/fetchOutcomes.ts'

const T0 = Date.UTC(2026, 10, 1)

function context(nowMs: number, settings: Partial<Settings> = {}, lambda: number | null = null) {
  return stepContext(
    { ...DEFAULT_SETTINGS, ...settings },
    { lambda, hostLambdas: {}, pages: 100 },
    nowMs,
    createRandom(1),
  )
}

function report(atMs: number, fields: Partial<CrawlReport> = {}): CrawlReport {
  return {
    crawledAtMs: atMs,
    changed: null,
    contentHash: null,
    lastModifiedMs: null,
    httpStatus: 200,
    etag: null,
    fetchError: null,
    retryAfterSeconds: null,
    redirectTo: null,
    ...fields,
  }
}

/** A page with a baseline and a few daily unchanged/changed intervals (a rate of its own). */
function establishedPage(): PageState {
  let page = newPageState({ host: 'a.example' }, T0)
  for (let k = 0; k <= 6; k++)
    page = applyCrawl(page, report(T0 + k * MS_PER_DAY, { changed: k % 2 === 0 }), context(T0 + k * MS_PER_DAY)).page
  return page
}

const run = (page: PageState, fields: Partial<CrawlReport>, atMs: number, settings: Partial<Settings> = {}) =>
  applyCrawl(page, report(atMs, fields), context(atMs, settings))

test('404s back off steeply and end as gone after goneAfterNotFound; gone pages are out of the budget and rechecked at the floor', () => {
  let page = establishedPage()
  const estimate = page.changesPerDay
  const start = page.lastCrawledAtMs! + MS_PER_DAY
  const waits: number[] = []
  let at = start
  for (let k = 1; k <= 3; k++) {
    const step = run(page, { httpStatus: 404 }, at)
    assert.equal(step.outcome.kind, 'inOrder')
    assert.equal(step.outcome.kind === 'inOrder' && step.outcome.applied, false, 'a failure judges no interval')
    page = step.page
    assert.equal(page.consecutiveFailures, k)
    assert.equal(page.changesPerDay, estimate, 'never change information')
    waits.push(page.nextCrawlAtMs === null ? Infinity : page.nextCrawlAtMs - at)
    at = page.nextCrawlAtMs ?? at + MS_PER_DAY
    if (k < 3) assert.equal(page.status, 'failing')
  }
  assert.ok(waits[1]! >= 4 * waits[0]! * 0.999, `steep: ${waits}`)
  assert.equal(page.status, 'gone')
  assert.equal(page.crawlsPerDay, 0)
  assert.equal(page.nextCrawlAtMs! - page.lastCrawledAtMs!, DEFAULT_SETTINGS.outcomes.goneRecheckDays * MS_PER_DAY)
  // A solve or a settings change leaves a gone page alone.
  assert.deepEqual(retimePage(page, context(at, {}, 0.01)), {
    changesPerDay: page.changesPerDay,
    crawlsPerDay: 0,
    nextCrawlAtMs: page.nextCrawlAtMs,
  })
  // Another 404 keeps it gone; a 200 brings it back, with its estimates and interval bookkeeping intact.
  const again = run(page, { httpStatus: 404 }, page.nextCrawlAtMs!).page
  assert.equal(again.status, 'gone')
  const back = run(again, { httpStatus: 200, changed: true }, again.nextCrawlAtMs!).page
  assert.equal(back.status, 'active')
  assert.equal(back.consecutiveFailures, 0)
  assert.equal(back.intervals, page.intervals + 1, 'the interval since the last success is judged')
  assert.ok(back.crawlsPerDay! > 0 && back.nextCrawlAtMs! > back.lastCrawledAtMs!)
})

test('a 410 is gone at once by default; goneRecheckDays 0 never fetches it again', () => {
  const page = establishedPage()
  const at = page.lastCrawledAtMs! + MS_PER_DAY
  assert.equal(run(page, { httpStatus: 410 }, at).page.status, 'gone')
  assert.equal(
    run(page, { httpStatus: 410 }, at, { outcomes: { ...DEFAULT_SETTINGS.outcomes, goneRecheckDays: 0 } }).page
      .nextCrawlAtMs,
    null,
  )
  assert.equal(
    run(page, { httpStatus: 410 }, at, { outcomes: { ...DEFAULT_SETTINGS.outcomes, goneAfterGone: 2 } }).page.status,
    'failing',
  )
})

test('a gone page that answers a temporary redirect on its recheck stays gone and is rechecked after twice the wait', () => {
  const page = establishedPage()
  const gone = run(page, { httpStatus: 410 }, page.lastCrawledAtMs! + MS_PER_DAY).page
  const recheckDays = DEFAULT_SETTINGS.outcomes.goneRecheckDays
  assert.equal(gone.nextCrawlAtMs! - gone.lastCrawledAtMs!, recheckDays * MS_PER_DAY)
  const recheck = run(gone, { httpStatus: 302 }, gone.nextCrawlAtMs!).page
  assert.equal(recheck.status, 'gone')
  assert.equal(recheck.crawlsPerDay, 0)
  assert.equal(recheck.nextCrawlAtMs! - recheck.lastCrawledAtMs!, 2 * recheckDays * MS_PER_DAY)
  const never = run(page, { httpStatus: 410 }, page.lastCrawledAtMs! + MS_PER_DAY, {
    outcomes: { ...DEFAULT_SETTINGS.outcomes, goneRecheckDays: 0 },
  }).page
  assert.equal(never.nextCrawlAtMs, null, 'goneRecheckDays 0: never again')
})

test('5xx, timeouts and network errors retry with a doubling wait, capped; a success resets them', () => {
  let page = establishedPage()
  let at = page.lastCrawledAtMs! + MS_PER_DAY
  const waits: number[] = []
  for (let k = 0; k < FAILING_OUT_AFTER_FAILURES - 1; k++) {
    page = run(page, k % 2 === 0 ? { httpStatus: 503 } : { httpStatus: null, fetchError: 'timeout' }, at).page
    waits.push(page.nextCrawlAtMs! - at)
    at = page.nextCrawlAtMs!
  }
  const first = DEFAULT_SETTINGS.outcomes.retryAfterErrorSeconds * MS_PER_SECOND
  assert.equal(waits[0], first)
  assert.equal(waits[1], 2 * first)
  assert.equal(waits[2], 4 * first)
  const cap = Math.max(DEFAULT_SETTINGS.outcomes.maxRetryIntervalDays, 1 / page.crawlsPerDay!) * MS_PER_DAY
  assert.ok(Math.abs(waits.at(-1)! - cap) < 1, `capped at ${cap}: ${waits.at(-1)}`)
  assert.equal(page.status, 'failing')
  assert.equal(page.consecutiveFailures, FAILING_OUT_AFTER_FAILURES - 1)
  assert.ok(page.crawlsPerDay! > 0, 'still in the budget')
  // A Retry-After longer than the backoff wins.
  const withRetryAfter = run(page, { httpStatus: 503, retryAfterSeconds: 10 * 86_400 }, at).page
  assert.equal(withRetryAfter.nextCrawlAtMs! - at, 10 * MS_PER_DAY)
  const ok = run(page, { httpStatus: 200, changed: false }, at).page
  assert.equal(ok.status, 'active')
  assert.equal(ok.consecutiveFailures, 0)
  assert.equal(ok.lastSuccessAtMs, at)
  // The retry time of a failing page is the backoff's: a solve does not move it.
  assert.equal(retimePage(page, context(at, {}, 0.5)).nextCrawlAtMs, page.nextCrawlAtMs)
  // One more failure takes it out of the budget; the wait doubles on past the cap, up to a year.
  const out = run(page, { httpStatus: null, fetchError: 'dns' }, at).page
  assert.equal(out.status, 'failing')
  assert.equal(out.crawlsPerDay, 0)
  assert.equal(out.nextCrawlAtMs! - at, first * 2 ** (FAILING_OUT_AFTER_FAILURES - 1))
  assert.equal(retimePage(out, context(at, {}, 0.5)).crawlsPerDay, 0, 'a solve leaves it out')
  const back = run(out, { httpStatus: 200, changed: false }, out.nextCrawlAtMs!).page
  assert.equal(back.status, 'active')
  assert.ok(back.crawlsPerDay! > 0)
})

test('429 waits for its Retry-After and is no failure of the page', () => {
  const page = establishedPage()
  const at = page.lastCrawledAtMs! + MS_PER_DAY
  const throttled = run(page, { httpStatus: 429, retryAfterSeconds: 120 }, at).page
  assert.equal(throttled.status, 'active')
  assert.equal(throttled.consecutiveFailures, 0)
  assert.equal(throttled.nextCrawlAtMs! - at, 120 * MS_PER_SECOND)
  assert.equal(throttled.lastHttpStatus, 429)
})

test('301 with redirectTo: the page is redirected, rechecked only after goneRecheckDays, and names its target; without redirectTo it says nothing', () => {
  const page = establishedPage()
  const at = page.lastCrawledAtMs! + MS_PER_DAY
  const moved = run(page, { httpStatus: 301, redirectTo: 'https://b.example/new' }, at)
  assert.equal(moved.page.status, 'redirected')
  assert.equal(moved.page.redirectTo, 'https://b.example/new')
  assert.equal(moved.page.nextCrawlAtMs, at + DEFAULT_SETTINGS.outcomes.goneRecheckDays * MS_PER_DAY)
  assert.equal(moved.page.crawlsPerDay, 0)
  assert.ok(moved.outcome.kind === 'inOrder' && moved.outcome.redirectTo === 'https://b.example/new')
  const notFollowed = run(page, { httpStatus: 301, redirectTo: 'https://b.example/new' }, at, {
    outcomes: { ...DEFAULT_SETTINGS.outcomes, followRedirects: false },
  })
  assert.ok(
    notFollowed.outcome.kind === 'inOrder' && notFollowed.outcome.redirectTo === null,
    'the target is not registered',
  )
  const bare = run(page, { httpStatus: 301 }, at).page
  assert.equal(bare.status, 'active')
  assert.ok(bare.nextCrawlAtMs! > at)
})

test('304 is unchanged and keeps the validators; a 200 stores new ones', () => {
  let page = establishedPage()
  let at = page.lastCrawledAtMs! + MS_PER_DAY
  page = run(page, { httpStatus: 200, contentHash: 'h1', etag: '"v1"', lastModifiedMs: at - MS_PER_DAY }, at).page
  assert.equal(page.etag, '"v1"')
  at += MS_PER_DAY
  const step = run(page, { httpStatus: 304 }, at)
  assert.ok(step.outcome.kind === 'inOrder' && step.outcome.changed === false && step.outcome.applied)
  assert.equal(step.page.etag, '"v1"')
  assert.equal(step.page.serverLastModifiedMs, page.serverLastModifiedMs)
  assert.equal(step.page.lastContentHash, 'h1', 'a hash-only report later still compares with the last hash')
  const changed = run(step.page, { httpStatus: 200, contentHash: 'h2' }, at + MS_PER_DAY).page
  assert.equal(changed.changes, step.page.changes + 1)
  assert.equal(changed.etag, null, 'a 200 without an ETag has none')
})

test('a hash that changes even at the shortest probe interval marks the page noisy; an unchanged fetch clears it', () => {
  let page = newPageState({ host: 'a.example' }, T0)
  let at = T0
  // Every fetch changes: probes halve the interval until the shortest one.
  for (let k = 0; k < 40 && !page.noisy; k++) {
    page = run(page, { contentHash: `h${k}` }, at, {}).page
    at = page.nextCrawlAtMs!
  }
  assert.equal(page.noisy, true)
  assert.equal(page.crawlsPerDay, DEFAULT_SETTINGS.minCrawlsPerDay, 'kept at its floor')
  assert.equal(retimePage(page, context(at, {}, 1e-6), {}).crawlsPerDay, DEFAULT_SETTINGS.minCrawlsPerDay)
  const fixed = run(page, { contentHash: page.lastContentHash! }, at + MS_PER_DAY).page
  assert.equal(fixed.noisy, false)
})

test('at an hourly cadence a hash that changes on every fetch is flagged within about ten crawls (a few more under the default hourly cap); a page changing 8 times a day is not', () => {
  const HOUR_MS = 60 * MS_PER_MINUTE
  const random = createRandom(7)
  // A fleet that leases every hour crawls a page at the first lease after its due time, within ten minutes.
  const nextLease = (dueMs: number) =>
    T0 + Math.ceil((dueMs - T0) / HOUR_MS) * HOUR_MS + random.next() * 10 * MS_PER_MINUTE
  const crawlHourly = (
    changedAt: (fromMs: number, toMs: number) => boolean,
    crawls: number,
    settings: Partial<Settings> = {},
  ) => {
    let page = newPageState({ host: 'a.example' }, T0)
    let at = T0
    let flaggedAfter: number | null = null
    for (let k = 0; k < crawls; k++) {
      const from = page.lastCrawledAtMs
      const fields = from === null ? { contentHash: 'first' } : { changed: changedAt(from, at) }
      page = applyCrawl(page, report(at, fields), context(at, settings, 1e-3)).page
      if (page.noisy && flaggedAfter === null) flaggedAfter = k + 1
      at = Math.max(nextLease(page.nextCrawlAtMs!), at + HOUR_MS / 2)
    }
    return { page, flaggedAfter }
  }
  const noise = crawlHourly(() => true, 40, { maxCrawlsPerDay: null })
  assert.ok(noise.flaggedAfter !== null && noise.flaggedAfter <= 15, `flagged after ${noise.flaggedAfter} crawls`)
  assert.equal(noise.page.crawlsPerDay, DEFAULT_SETTINGS.minCrawlsPerDay, 'kept at its floor')
  // Under the default cap (hourly, the fleet's own cadence) exploration waits for the cap: a few crawls more.
  const capped = crawlHourly(() => true, 40)
  assert.ok(capped.flaggedAfter !== null && capped.flaggedAfter <= 20, `capped: flagged after ${capped.flaggedAfter}`)
  // Poisson at 8 changes a day: an hourly interval sees no change with probability e^{−1/3} ≈ 0.72.
  let flagged = 0
  for (let p = 0; p < 20; p++) {
    const fast = crawlHourly((from, to) => random.next() > Math.exp((-8 * (to - from)) / MS_PER_DAY), 60, {
      maxCrawlsPerDay: p % 2 === 0 ? null : DEFAULT_SETTINGS.maxCrawlsPerDay,
    })
    if (fast.flaggedAfter !== null) flagged++
  }
  assert.equal(flagged, 0)
})

test('a late crawl keeps its page phase while leases have budget left, at most half a period, never otherwise', () => {
  const page = establishedPage()
  const periodMs = MS_PER_DAY / page.crawlsPerDay!
  const due = page.nextCrawlAtMs!
  const lateMs = 0.2 * periodMs
  const ctx = context(due + lateMs)
  const plain = applyCrawl(page, report(due + lateMs, { changed: false }), ctx).page
  ctx.catchUpLateness = true
  const caughtUp = applyCrawl(page, report(due + lateMs, { changed: false }), ctx).page
  const plainGap = plain.nextCrawlAtMs! - (due + lateMs)
  assert.ok(
    Math.abs(plainGap - (caughtUp.nextCrawlAtMs! - (due + lateMs)) - lateMs) < 1,
    'the lag is taken back from the next interval',
  )
  const veryLate = applyCrawl(page, report(due + 3 * periodMs, { changed: false }), ctx).page
  const halfPeriod = MS_PER_DAY / veryLate.crawlsPerDay! / 2
  assert.ok(
    Math.abs(veryLate.nextCrawlAtMs! - (due + 3 * periodMs) - halfPeriod) < 1,
    'never less than half a period after the crawl',
  )
  ctx.catchUpLateness = false
  assert.equal(applyCrawl(page, report(due + lateMs, { changed: false }), ctx).page.nextCrawlAtMs, plain.nextCrawlAtMs)
})

test('released pages: retry stays due or waits its retryAfter; skip waits one period', () => {
  const page = { crawlsPerDay: 2, nextCrawlAtMs: T0 - MS_PER_MINUTE }
  assert.equal(releasedDueAtMs(page, { reason: 'retry', retryAfterSeconds: null }, T0), T0 - MS_PER_MINUTE)
  assert.equal(releasedDueAtMs(page, { reason: 'retry', retryAfterSeconds: 600 }, T0), T0 + 600_000)
  assert.equal(releasedDueAtMs(page, { reason: 'skip', retryAfterSeconds: null }, T0), T0 + MS_PER_DAY / 2)
  assert.equal(
    releasedDueAtMs({ crawlsPerDay: 0, nextCrawlAtMs: null }, { reason: 'skip', retryAfterSeconds: null }, T0),
    null,
  )
})
