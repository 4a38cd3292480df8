/**
 * What a fetch's outcome means for a page (docs/api.md, "Fetch outcomes"). Pure: the page step
 * (pageStep.ts) asks these functions how to classify a report and how long to wait after a failure.
 */
import { MS_PER_DAY, MS_PER_SECOND, SECONDS_PER_DAY } from '../math/units.ts'
import type { Settings } from './settings.ts'

/** How a crawler says a fetch failed without an HTTP status. */
export const FETCH_ERRORS = ['timeout', 'dns', 'connection', 'tls', 'other'] as const
export type FetchError = (typeof FETCH_ERRORS)[number]

/**
 * - `content`: the page answered with content (2xx, or no status reported): change information as reported;
 * - `notModified`: 304, unchanged;
 * - `neutral`: a temporary redirect or 1xx the crawler did not follow: says nothing, the schedule goes on;
 * - `movedPermanently`: 301 or 308 with the target in redirectTo (without one it is `neutral`);
 * - `notFound` (404) and `gone` (410): the page may be dead;
 * - `throttled`: 429, the host asks to slow down;
 * - `error`: a 5xx, 408, another 4xx, a timeout or a network error: retried with backoff.
 */
export type FetchKind =
  'content' | 'notModified' | 'neutral' | 'movedPermanently' | 'notFound' | 'gone' | 'throttled' | 'error'

export function fetchKindOf(
  httpStatus: number | null,
  fetchError: FetchError | null,
  redirectTo: string | null = null,
): FetchKind {
  if (httpStatus === null) return fetchError === null ? 'content' : 'error'
  if (httpStatus >= 200 && httpStatus < 300) return 'content'
  if (httpStatus === 304) return 'notModified'
  if ((httpStatus === 301 || httpStatus === 308) && redirectTo !== null) return 'movedPermanently'
  if (httpStatus < 200 || (httpStatus >= 300 && httpStatus < 400)) return 'neutral'
  if (httpStatus === 404) return 'notFound'
  if (httpStatus === 410) return 'gone'
  if (httpStatus === 429) return 'throttled'
  return 'error'
}

/** A status that answers for the host's load: 429, or 503 with Retry-After (the host adapts its pace). */
function isThrottleSignal(httpStatus: number | null, retryAfterSeconds: number | null): boolean {
  return httpStatus === 429 || (httpStatus === 503 && retryAfterSeconds !== null)
}

/**
 * How long to wait after the k-th consecutive failure (k ≥ 1), in days.
 * - 404 and 410 (until the page is gone): steeply, the page's period (at most maxRetryIntervalDays) × 4^(k−1)
 *   (at least the first retry);
 * - errors: retryAfterErrorSeconds × 2^(k−1), growing until the larger of maxRetryIntervalDays and the period;
 * - a Retry-After the server sent is always respected (after a 429 it is the wait).
 */
export function failureWaitDays(options: {
  kind: 'notFound' | 'gone' | 'error' | 'throttled'
  failures: number
  /** The page's period at its rate, in days (Infinity at rate 0). */
  periodDays: number
  retryAfterSeconds: number | null
  outcomes: Settings['outcomes']
  /** The page is out of the budget (isOutOfBudget): an error's wait grows on, up to RECHECK_MAX_DAYS. */
  outOfBudget?: boolean
}): number {
  const { outcomes } = options
  const first = outcomes.retryAfterErrorSeconds / SECONDS_PER_DAY
  const k = Math.max(1, options.failures)
  let wait: number
  if (options.kind === 'notFound' || options.kind === 'gone') {
    // From at most maxRetryIntervalDays: a page the optimiser crawls rarely (at its floor, a period of 100 days)
    // must still confirm a 404 soon, or it is never found gone.
    const base = Math.min(options.periodDays, Math.max(outcomes.maxRetryIntervalDays, first))
    wait = Math.min(
      Math.max(base, first) * 4 ** (k - 1),
      outcomes.goneRecheckDays > 0 ? outcomes.goneRecheckDays : Infinity,
    )
  } else if (options.kind === 'throttled') {
    // The host said when: that is the wait. Without a Retry-After, the first retry wait (at most a period).
    if (options.retryAfterSeconds !== null) return options.retryAfterSeconds / SECONDS_PER_DAY
    wait = Math.min(options.periodDays, first)
  } else {
    const capDays = options.outOfBudget
      ? RECHECK_MAX_DAYS
      : Math.max(outcomes.maxRetryIntervalDays, Number.isFinite(options.periodDays) ? options.periodDays : 0)
    wait = Math.min(first * 2 ** (k - 1), capDays)
  }
  const retryAfter = options.retryAfterSeconds === null ? 0 : options.retryAfterSeconds / SECONDS_PER_DAY
  return Math.max(wait, retryAfter)
}

/** The longest wait between two rechecks of a page out of the budget, in days (unless goneRecheckDays is longer). */
const RECHECK_MAX_DAYS = 365

/**
 * A page whose fetches failed this many times in a row (5xx, timeouts, DNS and other network errors) leaves the
 * budget. With the default retry waits (300 s doubling, up to a day for a page crawled daily or more often) that
 * is about five days of failures; a page crawled more rarely, whose waits grow up to its period, takes longer.
 */
export const FAILING_OUT_AFTER_FAILURES = 12

/**
 * Is the page out of the budget (the optimiser gives it rate 0, it is only rechecked)? Gone and redirected
 * pages, and failing pages after FAILING_OUT_AFTER_FAILURES failures in a row. The optimiser's SQL
 * (store/optimizerRepo.ts, minimumCrawlsPerDayNeeded) says the same.
 */
export function isOutOfBudget(page: { status: string; consecutiveFailures: number }): boolean {
  return (
    page.status === 'gone' ||
    page.status === 'redirected' ||
    (page.status === 'failing' && page.consecutiveFailures >= FAILING_OUT_AFTER_FAILURES)
  )
}

/**
 * When a page out of the budget (gone or redirected) is fetched again (epoch ms), or null when such pages are
 * never fetched again (goneRecheckDays 0). The first recheck comes goneRecheckDays after the crawl that took
 * the page out (`previousCrawledAtMs` null); each recheck that finds it still out, whatever it answered, waits
 * twice as long as the time since the crawl before, up to the larger of RECHECK_MAX_DAYS and goneRecheckDays:
 * a page that stays dead costs a handful of fetches a year, and one that was taken out by mistake is found
 * again within goneRecheckDays.
 */
export function recheckAtMs(
  crawledAtMs: number,
  previousCrawledAtMs: number | null,
  outcomes: Settings['outcomes'],
): number | null {
  const first = outcomes.goneRecheckDays
  if (first <= 0) return null
  const sinceDays = previousCrawledAtMs === null ? 0 : Math.max(0, crawledAtMs - previousCrawledAtMs) / MS_PER_DAY
  const waitDays = Math.min(Math.max(first, 2 * sinceDays), Math.max(RECHECK_MAX_DAYS, first))
  return crawledAtMs + waitDays * MS_PER_DAY
}

/** What one batch of reports says about one host. */
export interface HostSignals {
  /** 429s, and 503s with Retry-After. */
  throttled: number
  /** Incidents that block the host (docs/api.md, "Host backoff"): 429s, and 503s without Retry-After. */
  blocking: number
  /** Timeouts, in report order, and whether the batch ended with one (a run still going). */
  timeouts: number
  /** Other 5xx, 408, timeouts and network errors. */
  errors: number
  /** Answers with content or 304. */
  successes: number
  /** The longest Retry-After among them, in seconds; null when none was sent. */
  retryAfterSeconds: number | null
  /** The robots.txt Crawl-delay a crawler reported last in the batch (0 = none); null when none reported. */
  robotsCrawlDelaySeconds: number | null
  /** When the batch's first push-back (a 429, or a 503) was crawled (epoch ms); null when none was. */
  pushbackAtMs: number | null
}

export function emptyHostSignals(): HostSignals {
  return {
    pushbackAtMs: null,
    throttled: 0,
    blocking: 0,
    timeouts: 0,
    errors: 0,
    successes: 0,
    retryAfterSeconds: null,
    robotsCrawlDelaySeconds: null,
  }
}

/** Adds one report's outcome to its host's signals. */
export function addHostSignal(
  signals: HostSignals,
  report: {
    httpStatus: number | null
    fetchError: FetchError | null
    retryAfterSeconds: number | null
    robotsCrawlDelaySeconds: number | null
    crawledAtMs?: number
  },
): void {
  const kind = fetchKindOf(report.httpStatus, report.fetchError)
  if ((report.httpStatus === 429 || report.httpStatus === 503) && report.crawledAtMs !== undefined)
    signals.pushbackAtMs = Math.min(signals.pushbackAtMs ?? Number.POSITIVE_INFINITY, report.crawledAtMs)
  if (report.httpStatus === 429 || (report.httpStatus === 503 && report.retryAfterSeconds === null)) signals.blocking++
  if (report.httpStatus === null && report.fetchError === 'timeout') signals.timeouts++
  if (isThrottleSignal(report.httpStatus, report.retryAfterSeconds)) signals.throttled++
  else if (kind === 'error') signals.errors++
  else if (kind === 'content' || kind === 'notModified') signals.successes++
  if (report.retryAfterSeconds !== null)
    signals.retryAfterSeconds = Math.max(signals.retryAfterSeconds ?? 0, report.retryAfterSeconds)
  if (report.robotsCrawlDelaySeconds !== null) signals.robotsCrawlDelaySeconds = report.robotsCrawlDelaySeconds
}

/** The adaptive delay starts here when a host first pushes back, in seconds. */
const THROTTLE_MIN_SECONDS = 1
/** It stops doubling here: at most one page of the host every 10 minutes. */
const THROTTLE_MAX_SECONDS = 600
/** Each successful answer multiplies the delay by this; below THROTTLE_MIN_SECONDS / 2 it ends. */
const THROTTLE_RECOVERY_FACTOR = 0.8

/**
 * A host's adaptive delay after a batch (seconds; null = none), multiplicative increase, multiplicative
 * decrease: it doubles (from THROTTLE_MIN_SECONDS) when the host answered 429 or 503 with Retry-After, or
 * when most of its answers were errors, and shrinks by THROTTLE_RECOVERY_FACTOR per successful answer until
 * it ends. The host's pace is the largest of this, its robots.txt Crawl-delay and the operator's
 * minDelaySeconds; its pages then go out one per pace, and the optimiser caps the host at 86,400 / pace
 * crawls per day.
 */
export function nextThrottleDelaySeconds(current: number | null, signals: HostSignals): number | null {
  const pushedBack = signals.throttled > 0 || (signals.errors >= 2 && signals.errors > signals.successes)
  if (pushedBack) {
    // A Retry-After after a 429 or 503 sets the pace too: one page per Retry-After, at most THROTTLE_MAX_SECONDS.
    const asked = signals.throttled > 0 && signals.retryAfterSeconds !== null ? signals.retryAfterSeconds : 0
    return Math.min(THROTTLE_MAX_SECONDS, Math.max(THROTTLE_MIN_SECONDS, 2 * (current ?? 0), asked))
  }
  if (current === null || signals.successes === 0) return current
  const next = current * THROTTLE_RECOVERY_FACTOR ** signals.successes
  return next < THROTTLE_MIN_SECONDS / 2 ? null : next
}

/**
 * The host's pace after an incident that blocks it (seconds): at least BLOCK_FIRST_SECONDS and twice the pace
 * before, at most THROTTLE_MAX_SECONDS, and never below what the batch's answers asked for (`adapted`). It then
 * shrinks by THROTTLE_RECOVERY_FACTOR per successful answer, as any adaptive delay does.
 */
export function pacingAfterIncident(before: number | null, adapted: number | null): number {
  const doubled = Math.min(THROTTLE_MAX_SECONDS, Math.max(BLOCK_FIRST_SECONDS, 2 * (before ?? 0)))
  return Math.max(adapted ?? 0, doubled)
}

/**
 * A host that pushed back (429, or 503) at a pace remembers it: its pace does not recover below
 * PUSHBACK_MARGIN times the spacing that drew the push-back. Without this memory the pace recovers by
 * THROTTLE_RECOVERY_FACTOR per answer below what the host allows within a few answers, each time a new
 * incident, and incidents that come back before they are forgiven block the host longer and longer.
 */
const PUSHBACK_MARGIN = 1.5
/**
 * Each successful answer relaxes the remembered push-back pace by this, so a host that now allows more is
 * found again: the pace comes back to the one that drew the push-back after ln(1.5) / ln(1 / 0.99) ≈ 40
 * successful answers, which costs one 429 per about 40 fetches of a host that allows no more than before.
 */
const PUSHBACK_RELAX_FACTOR = 0.99

/** A host's adaptive pace (hosts.throttle_delay_seconds, pushback_pace_seconds), seconds; null = none. */
export interface AdaptivePace {
  /** The adaptive delay between two pages of the host. */
  delaySeconds: number | null
  /** The pace below which the delay does not recover, learned from the host's last push-back. */
  pushbackSeconds: number | null
}

/**
 * A host's adaptive pace after a batch of its reports: the adaptive delay (nextThrottleDelaySeconds), raised
 * after an incident that blocks the host (`blocked`, pacingAfterIncident), and kept at or above the pace learned
 * from the host's last push-back. A 429 or 503 sets that pace to PUSHBACK_MARGIN times the spacing that drew it:
 * the larger of the delay and `spacingSeconds`, the time from the host's request before the push-back to the
 * push-back (the host saw that spacing and refused it, however much longer than the delay it was, as when the
 * host's pages fall due in bunches); never lower than before, and the spacing counted at most
 * THROTTLE_MAX_SECONDS, so a host that pushes back even at the adaptive delay's ceiling is paced at up to
 * PUSHBACK_MARGIN times it. Each successful answer relaxes it by PUSHBACK_RELAX_FACTOR, and below
 * THROTTLE_MIN_SECONDS / 2 it ends.
 */
export function nextAdaptivePace(
  before: AdaptivePace,
  signals: HostSignals,
  blocked: boolean,
  spacingSeconds: number | null = null,
): AdaptivePace {
  let delay = nextThrottleDelaySeconds(before.delaySeconds, signals)
  if (blocked) delay = pacingAfterIncident(before.delaySeconds, delay)
  let pushback = before.pushbackSeconds
  if (signals.throttled > 0 || signals.blocking > 0) {
    const spacing = Math.max(before.delaySeconds ?? 0, spacingSeconds ?? 0)
    const drawn = PUSHBACK_MARGIN * Math.min(THROTTLE_MAX_SECONDS, spacing)
    pushback = Math.max(pushback ?? 0, drawn)
  } else if (pushback !== null && signals.successes > 0) {
    pushback *= PUSHBACK_RELAX_FACTOR ** signals.successes
  }
  if (pushback !== null && pushback < THROTTLE_MIN_SECONDS / 2) pushback = null
  if (pushback !== null) delay = Math.max(delay ?? 0, pushback)
  return { delaySeconds: delay, pushbackSeconds: pushback }
}

/** The first block of a host in trouble, in seconds; it doubles per incident. */
export const BLOCK_FIRST_SECONDS = 60
/** The longest block: a day. */
export const BLOCK_MAX_SECONDS = 86_400
/** Incidents are forgiven once the host has been open this long without a new one. */
export const BLOCK_FORGIVE_SECONDS = 30 * 60
/** This many timeouts in a row, without an answer in between, count as one incident. */
export const TIMEOUT_RUN = 3

/** A host's backoff state (hosts.block_incidents, blocked_until, timeouts_in_a_row). */
export interface HostBlockState {
  /** Incidents since the host was last forgiven. */
  incidents: number
  /** When the latest block ends (epoch ms); null = never blocked or forgiven. */
  blockedUntilMs: number | null
  /** Timeouts reported in a row since the last answer. */
  timeoutsInARow: number
}

export function emptyHostBlockState(): HostBlockState {
  return { incidents: 0, blockedUntilMs: null, timeoutsInARow: 0 }
}

/**
 * A host's backoff after a batch of its reports (docs/api.md, "Host backoff"). An incident is a 429, a 503
 * without Retry-After, or a run of TIMEOUT_RUN timeouts; the k-th incident since the host was forgiven blocks it
 * (no page of it handed out) for min(BLOCK_MAX_SECONDS, BLOCK_FIRST_SECONDS · 2^(k−1)) seconds times a jitter
 * in [0.8, 1.2) (`random01` in [0, 1)). Incidents are forgiven once the host has been open (its block over)
 * for BLOCK_FORGIVE_SECONDS without a new one: the quiet time counts from the block's end, not from the
 * incident, or else every block longer than half an hour would forgive itself. A Retry-After sets the pause
 * (the caller's pauseUntilMs) and is no incident here: the host said when to come back.
 * Returns the new state and, when the batch blocks the host, until when.
 */
export function nextHostBlock(
  before: HostBlockState,
  signals: HostSignals,
  nowMs: number,
  random01: number,
): { state: HostBlockState; blockUntilMs: number | null } {
  const forgiven =
    before.blockedUntilMs !== null && nowMs - before.blockedUntilMs >= BLOCK_FORGIVE_SECONDS * MS_PER_SECOND
  let incidents = forgiven ? 0 : before.incidents
  const answered = signals.successes + signals.errors + signals.throttled - signals.timeouts > 0
  let timeoutsInARow = answered && signals.timeouts === 0 ? 0 : before.timeoutsInARow + signals.timeouts
  let incident = signals.blocking > 0
  if (timeoutsInARow >= TIMEOUT_RUN) {
    incident = true
    timeoutsInARow = 0
  }
  if (!incident) {
    const state = { incidents, blockedUntilMs: forgiven ? null : before.blockedUntilMs, timeoutsInARow }
    return { state, blockUntilMs: null }
  }
  incidents++
  const seconds = Math.min(BLOCK_MAX_SECONDS, BLOCK_FIRST_SECONDS * 2 ** (incidents - 1)) * (0.8 + 0.4 * random01)
  const blockUntilMs = nowMs + seconds * MS_PER_SECOND
  return { state: { incidents, blockedUntilMs: blockUntilMs, timeoutsInARow }, blockUntilMs }
}
