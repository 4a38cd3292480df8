/**
 * What happens to a page when a crawl is reported, and when its rate is solved again: the one place
 * that decides a page's estimates, crawl rate and due time.
 *
 * - `applyCrawl` takes a page's state and one reported crawl and returns the page's new state (counters,
 *   estimator state, scheduling estimate, rate and due time) and what to store for the crawl.
 * - `retimePage` gives a page a new rate (from the stored multiplier λ, or the rate a solve found) and the
 *   due time that goes with it.
 *
 * Ingest, page upserts, settings changes, the optimiser run and the simulator call these two functions
 * and nothing else to decide a page's estimates, rate and due time, so a benchmark of the simulator
 * measures the code that ships. Pure: no I/O and no clock (the time comes in the context), randomness
 * only from the context's source (the Poisson schedule's draws).
 */
import {
  allChangedEvidenceNats,
  emptyEstimatorState,
  priorChangesPerDay,
  priorForHost,
  schedulingEstimate,
  schedulingHistory,
  stepEstimators,
  type EstimatorSettings,
  type EstimatorState,
  type FleetPriors,
} from '../math/estimators/index.ts'
import type { Random } from '../math/random.ts'
import { MS_PER_DAY, MS_PER_SECOND } from '../math/units.ts'
import {
  changedProbabilityGivenSignal,
  coversPage,
  NO_SIGNAL_COVER,
  periodicMarginalCrawlValue,
  signalPullNetWorth,
  signalPullNetWorthUnderPrior,
  unsignalledChangesPerDay,
  type SignalCover,
  type SignalCovers,
} from '../math/signalRates.ts'
import {
  failureWaitDays,
  fetchKindOf,
  isOutOfBudget,
  recheckAtMs,
  type FetchError,
  type FetchKind,
} from './fetchOutcomes.ts'
import {
  PROBE_MIN_INTERVAL_DAYS,
  allIntervalsChanged,
  crawlsPerDayFor,
  earlyCrawlIntervalDays,
  explorationIntervalDays,
  lambdaForHost,
  nextCrawlAtMs,
  pageBounds,
  probePaybackDays,
  retimedCrawlAtMs,
} from './crawlTiming.ts'
import { estimatorSettingsOf, type Settings } from './settings.ts'
import { initialStateFields, type FieldValues, type StateFieldName } from './pageFields.ts'

/**
 * A page as the step sees it: its attributes, counters, estimator state and schedule, as declared in
 * pageFields.ts, with the estimator state decoded. Times are epoch ms.
 */
export type PageState = FieldValues<StateFieldName> & {
  /** Sufficient statistics of every estimator; null before the first interval. */
  estimator: EstimatorState | null
}

/** A page that was just registered: never crawled (every field at its initial value), due at `nowMs`. */
export function newPageState(
  page: { host: string; importance?: number; minCrawlsPerDay?: number | null; maxCrawlsPerDay?: number | null },
  nowMs: number,
): PageState {
  return {
    ...(initialStateFields() as Omit<PageState, 'estimator'>),
    host: page.host,
    importance: page.importance ?? 1,
    minCrawlsPerDay: page.minCrawlsPerDay ?? null,
    maxCrawlsPerDay: page.maxCrawlsPerDay ?? null,
    estimator: null,
    nextCrawlAtMs: nowMs,
  }
}

/** One reported crawl, already checked for shape (docs/api.md, Observations). */
export interface CrawlReport {
  crawledAtMs: number
  /** Did the page change since the previous crawl? null = not said. */
  changed: boolean | null
  contentHash: string | null
  /** HTTP Last-Modified, epoch ms. */
  lastModifiedMs: number | null
  httpStatus: number | null
  /** HTTP ETag of the response. */
  etag: string | null
  /** A fetch that got no HTTP answer. */
  fetchError: FetchError | null
  /** Retry-After of a 429 or 503, in seconds. */
  retryAfterSeconds: number | null
  /** The target of a 301 or 308, canonical. */
  redirectTo: string | null
}

/** What the step needs besides the page: settings, the stored multipliers, the time and a random source. */
export interface StepContext {
  settings: Settings
  estimatorSettings: EstimatorSettings
  /**
   * The stored solve: global λ, per-host λ_h of hosts whose cap binds, and the change-rate priors the optimiser
   * run fitted (docs/math.md 1.12; absent or null: each page's estimate is its own).
   */
  optimizer: {
    lambda: number | null
    hostLambdas: Readonly<Record<string, number>>
    priors?: FleetPriors | null
    /**
     * What each host's trusted signals cover of its changes, and the multiplier of the solve without signals
     * (docs/math.md 5.4): the blind crawls of a page its signals take over are timed for the changes left
     * uncovered. Absent or null: no cover.
     */
    signalCover?: SignalCovers | null
  }
  /** pages / budget days: how soon a page crawled once is crawled again; null before the first solve. */
  explorationIntervalDays: number | null
  nowMs: number
  random: Random
  /**
   * The fleet is behind its own polling, not behind the budget: leases had budget left to hand out. A crawl
   * made late then keeps the page's phase (crawlTiming.ts, nextCrawlAtMs lateDays), so the lag does not eat the
   * budget. When the budget is what holds pages back (the hand-out allowance is used up, or the simulator's
   * fleet is busy), lateness is the queue's, and catching it up would only push the queue further towards
   * short-period pages.
   */
  catchUpLateness?: boolean
  /**
   * Diagnostics for the simulator, never set by the service: `earlyCrawls: false` turns off exploration
   * and probes (crawlTiming.ts); `knownChangesPerDay` schedules with that rate instead of the estimate, to
   * separate the cost of estimation from that of the loop.
   */
  earlyCrawls?: boolean
  knownChangesPerDay?: number
}

/** The context for one batch of work (one transaction, one simulator event). */
export function stepContext(
  settings: Settings,
  optimizer: {
    lambda: number | null
    hostLambdas: Readonly<Record<string, number>>
    pages: number | null
    priors?: FleetPriors | null
    signalCover?: SignalCovers | null
  },
  nowMs: number,
  random: Random,
): StepContext {
  return {
    settings,
    estimatorSettings: estimatorSettingsOf(settings),
    // Priors fitted while fleetPrior was on are not used once it is off.
    optimizer: settings.fleetPrior ? optimizer : { ...optimizer, priors: null },
    explorationIntervalDays: explorationIntervalDays(optimizer.pages, settings),
    nowMs,
    random,
  }
}

/** What a reported crawl becomes. */
export type CrawlOutcome =
  /** Not stored: the report cannot be judged (it says nothing about change after the baseline). */
  | { kind: 'rejected'; reason: string }
  /** The same crawl time as the page's latest crawl: nothing to do. */
  | { kind: 'duplicate' }
  /** Older than the page's latest crawl: stored for the history, not fed to the estimators (their order matters). */
  | { kind: 'late'; changed: boolean | null }
  /**
   * Newer than every stored crawl. `changed`: what the crawl says about the interval it closes (null for
   * a baseline or a failed fetch); `applied`: it stepped the estimators; `intervalSeconds`: the length of
   * that interval.
   */
  | {
      kind: 'inOrder'
      changed: boolean | null
      applied: boolean
      intervalSeconds: number | null
      /** What the fetch was (fetchOutcomes.ts). */
      fetch: FetchKind
      /** A 301 or 308 whose target should be registered (settings.outcomes.followRedirects). */
      redirectTo: string | null
    }

interface CrawlStep {
  page: PageState
  outcome: CrawlOutcome
}

/** A probe interval this short that still saw a change means the content hash changes on every fetch. */
const NOISE_INTERVAL_DAYS = 2 * PROBE_MIN_INTERVAL_DAYS
/**
 * Noise at the fleet's cadence (docs/math.md 1.11): a page is flagged when a change in every interval so far
 * would have had a chance below NOISE_FALSE_POSITIVE_RATE for a Poisson page changing NOISE_MAX_CHANGES_PER_DAY
 * times a day (or less). With hourly crawls that is about 10 intervals; intervals of a day or more add almost
 * nothing, so the probes of crawlTiming.ts, which shorten the intervals of such a page, supply the evidence.
 */
const NOISE_MAX_CHANGES_PER_DAY = 24
const NOISE_FALSE_POSITIVE_RATE = 0.01
const NOISE_EVIDENCE_NATS = -Math.log(NOISE_FALSE_POSITIVE_RATE)

const CHANGE_INFORMATION_REQUIRED = 'changed or contentHash is required after the first crawl of a page'
const LATE_WITHOUT_CHANGE_INFORMATION =
  'changed or contentHash is required after the first crawl of a page, late crawls included (this one is older than the page’s latest crawl)'

/**
 * Applies one reported crawl to a page (docs/api.md, Observations and Fetch outcomes; docs/math.md 1 and 3.6).
 *
 * Content (2xx, or no status) and 304:
 * - the first crawl whose content is known is the baseline: no change information;
 * - `changed` is taken as given; else a `contentHash` is compared with the previous crawl's hash; else
 *   HTTP 304 means unchanged;
 * - a hash with no previous hash to compare starts a new baseline (the interval cannot be judged);
 * - a crawl reported unchanged without a hash keeps the previous hash (the content is the same), so a later
 *   hash-only report still compares with it; a change without a hash forgets it;
 * - otherwise a report without change information after the baseline is rejected.
 * Such a crawl steps the estimators, takes the scheduling estimate, derives the page's rate from the stored λ
 * (docs/math.md 3.1–3.4, O(1)) and sets the next due time from the crawl (src/core/crawlTiming.ts: the rate's
 * period, less what a late crawl lost (at most half a period), exploration of a page crawled once, probes of a
 * page whose every interval changed and their paybacks). The page is active again.
 *
 * Failures judge no interval (the open interval continues to the next success) and are never change
 * information: 404 and 410 back off steeply and end as gone (rechecked rarely, recheckAtMs); 5xx,
 * timeouts and network errors retry with a doubling wait; 429 waits for its Retry-After. A 301 or 308 marks
 * the page redirected (rechecked as a gone page is) and names the target to register. A late crawl changes the counters
 * only (the ingest replays the page's history to fold it in), and is rejected, as it would be in order, when it
 * is content without change information after the page's first crawl. Returns a new state; the input is not modified.
 */
export function applyCrawl(page: PageState, crawl: CrawlReport, ctx: StepContext): CrawlStep {
  const last = page.lastCrawledAtMs
  if (last !== null && crawl.crawledAtMs === last) return { page, outcome: { kind: 'duplicate' } }
  if (last !== null && crawl.crawledAtMs < last) {
    const first = page.firstCrawledAtMs
    // As in order (below): after the page's first crawl, content without change information judges nothing.
    if (
      first !== null &&
      crawl.crawledAtMs > first &&
      crawl.changed === null &&
      crawl.contentHash === null &&
      fetchKindOf(crawl.httpStatus, crawl.fetchError, crawl.redirectTo) === 'content'
    ) {
      return { page, outcome: { kind: 'rejected', reason: LATE_WITHOUT_CHANGE_INFORMATION } }
    }
    return {
      page: {
        ...page,
        crawls: page.crawls + 1,
        firstCrawledAtMs: first === null || crawl.crawledAtMs < first ? crawl.crawledAtMs : first,
      },
      outcome: { kind: 'late', changed: crawl.changed },
    }
  }

  const fetch = fetchKindOf(crawl.httpStatus, crawl.fetchError, crawl.redirectTo)
  const hasContent = fetch === 'content' || fetch === 'notModified'
  let changed = crawl.changed
  if (
    hasContent &&
    changed === null &&
    crawl.contentHash !== null &&
    page.lastContentHash !== null &&
    page.intervalStartAtMs !== null
  ) {
    changed = crawl.contentHash !== page.lastContentHash
  }
  if (changed === null && fetch === 'notModified') changed = false
  const hasBaseline = page.intervalStartAtMs !== null
  if (fetch === 'content' && hasBaseline && changed === null && crawl.contentHash === null) {
    return { page, outcome: { kind: 'rejected', reason: CHANGE_INFORMATION_REQUIRED } }
  }

  const next: PageState = {
    ...page,
    crawls: page.crawls + 1,
    firstCrawledAtMs: page.firstCrawledAtMs ?? crawl.crawledAtMs,
    lastCrawledAtMs: crawl.crawledAtMs,
    lastHttpStatus: crawl.httpStatus ?? page.lastHttpStatus,
  }
  const { settings } = ctx
  if (!hasContent)
    return {
      page: failedOrElsewhere(next, page, crawl, fetch, ctx),
      outcome: {
        kind: 'inOrder',
        changed: null,
        applied: false,
        intervalSeconds: null,
        fetch,
        redirectTo: fetch === 'movedPermanently' && settings.outcomes.followRedirects ? crawl.redirectTo : null,
      },
    }

  next.status = 'active'
  next.consecutiveFailures = 0
  next.lastSuccessAtMs = crawl.crawledAtMs
  next.redirectTo = null
  next.etag = crawl.etag ?? (fetch === 'notModified' ? page.etag : null)
  next.serverLastModifiedMs = crawl.lastModifiedMs ?? (fetch === 'notModified' ? page.serverLastModifiedMs : null)
  let outcome: CrawlOutcome
  /** The interval this crawl closed, in days, and whether the page was probing before it (for the payback). */
  let closedIntervalDays: number | null = null
  let wasProbing = false
  if (hasBaseline && changed !== null) {
    const intervalMs = crawl.crawledAtMs - page.intervalStartAtMs!
    const state = page.estimator ?? emptyEstimatorState()
    const ageDays =
      crawl.lastModifiedMs === null ? null : Math.max(0, crawl.crawledAtMs - crawl.lastModifiedMs) / MS_PER_DAY
    closedIntervalDays = intervalMs / MS_PER_DAY
    wasProbing = allIntervalsChanged(schedulingHistory(state, settings.estimator))
    next.estimator = stepEstimators(
      state,
      { intervalDays: closedIntervalDays, changed, ageDays },
      ctx.estimatorSettings,
    )
    next.changesPerDay =
      ctx.knownChangesPerDay ??
      schedulingEstimate(next.estimator, settings.estimator, ctx.estimatorSettings, ctx.optimizer.priors, page.host)
    next.intervals = page.intervals + 1
    if (changed) {
      next.changes = page.changes + 1
      // Last-Modified inside the interval dates the change more precisely than the crawl does.
      const lm = crawl.lastModifiedMs
      next.lastChangedAtMs =
        lm !== null && lm > page.intervalStartAtMs! && lm <= crawl.crawledAtMs ? lm : crawl.crawledAtMs
    }
    // Noise: every interval saw a change, and either even the shortest probe did, or their lengths make that
    // improbable for any page changing at most NOISE_MAX_CHANGES_PER_DAY.
    next.noisy = changed
      ? page.noisy ||
        (wasProbing && closedIntervalDays <= NOISE_INTERVAL_DAYS) ||
        allChangedEvidenceNats(next.estimator, settings.estimator, NOISE_MAX_CHANGES_PER_DAY) >= NOISE_EVIDENCE_NATS
      : false
    next.intervalStartAtMs = crawl.crawledAtMs
    next.lastContentHash = crawl.contentHash ?? (changed ? null : page.lastContentHash)
    outcome = {
      kind: 'inOrder',
      changed,
      applied: true,
      intervalSeconds: intervalMs / MS_PER_SECOND,
      fetch,
      redirectTo: null,
    }
  } else {
    // A baseline (or a new one): no change information.
    next.intervalStartAtMs = crawl.crawledAtMs
    next.lastContentHash = crawl.contentHash
    outcome = { kind: 'inOrder', changed: null, applied: false, intervalSeconds: null, fetch, redirectTo: null }
  }

  const crawlsPerDay = pageRate(next, ctx)
  const { minCrawlsPerDay, maxCrawlsPerDay } = pageBounds(next, settings)
  const early = ctx.earlyCrawls !== false && !next.noisy
  next.crawlsPerDay = crawlsPerDay
  next.nextCrawlAtMs = nextCrawlAtMs({
    lastCrawledAtMs: crawl.crawledAtMs,
    crawlsPerDay,
    spacing: settings.schedule,
    nowMs: ctx.nowMs,
    random: ctx.random,
    lateDays:
      ctx.catchUpLateness && page.nextCrawlAtMs !== null && page.status === 'active'
        ? Math.max(0, crawl.crawledAtMs - page.nextCrawlAtMs) / MS_PER_DAY
        : 0,
    earlyIntervalDays: early
      ? earlyCrawlIntervalDays({
          ...schedulingHistory(next.estimator ?? emptyEstimatorState(), settings.estimator),
          crawlsPerDay,
          minCrawlsPerDay,
          maxCrawlsPerDay,
          explorationIntervalDays: ctx.explorationIntervalDays,
        })
      : null,
    paybackDays: early ? probePaybackDays({ wasProbing, closedIntervalDays, crawlsPerDay, minCrawlsPerDay }) : 0,
  })
  return { page: next, outcome }
}

/**
 * The page's rate from the stored λ (docs/math.md 3.1, O(1)): 0 for a page out of the budget (gone, redirected,
 * or failing for long, isOutOfBudget), the floor for a noisy one.
 */
function pageRate(page: PageState, ctx: StepContext): number {
  if (isOutOfBudget(page)) return 0
  if (page.noisy) return pageBounds(page, ctx.settings).minCrawlsPerDay
  return blindCrawlsPerDay(page, ctx)
}

/** The rate a page of `host` without an estimate is scheduled with (docs/math.md 1.12). */
function priorRateFor(ctx: StepContext, host: string): number {
  return priorChangesPerDay(ctx.optimizer.priors, host, ctx.settings.defaultChangesPerDay)
}

/**
 * What a page's signals cover of its changes (docs/math.md 5.4): its host's cover when they take the page over
 * (coversPage: their crawls cost no more than the page's rate without signals, from the stored multiplier of the
 * solve without them), else none. The same rule as the solve's (solveRatesWithSignals).
 */
function signalCoverFor(page: { host: string } & Parameters<typeof crawlsPerDayFor>[0], ctx: StepContext): SignalCover {
  const covers = ctx.optimizer.signalCover
  const cover = covers?.hosts[page.host]
  if (!covers || !cover) return NO_SIGNAL_COVER
  const prior = priorRateFor(ctx, page.host)
  const plain = crawlsPerDayFor(page, ctx.settings, covers.plainLambda > 0 ? covers.plainLambda : null, prior)
  return coversPage(page.changesPerDay ?? prior, cover, plain) ? cover : NO_SIGNAL_COVER
}

/**
 * The page's rate from the stored λ for the changes its signals leave uncovered (docs/math.md 3.1 and 5.4): the
 * same rule the solve applies to every page at once.
 */
function blindCrawlsPerDay(page: Parameters<typeof crawlsPerDayFor>[0] & { host: string }, ctx: StepContext): number {
  const cover = signalCoverFor(page, ctx)
  return crawlsPerDayFor(
    {
      ...page,
      changesPerDay: page.changesPerDay === null ? null : unsignalledChangesPerDay(page.changesPerDay, cover),
    },
    ctx.settings,
    lambdaForHost(ctx.optimizer, page.host),
    unsignalledChangesPerDay(priorRateFor(ctx, page.host), cover),
  )
}

/** A fetch without content: a failure (backoff, maybe gone), a permanent redirect, or a neutral answer. */
function failedOrElsewhere(
  next: PageState,
  page: PageState,
  crawl: CrawlReport,
  fetch: FetchKind,
  ctx: StepContext,
): PageState {
  const { outcomes } = ctx.settings
  // A page out of the budget (gone or redirected) stays out whatever its recheck answers, a temporary redirect
  // (a common soft 404), a 5xx or a timeout included, and is rechecked with a wait that grows per recheck; only
  // a 2xx or 304 brings it back.
  const wasOut = page.status === 'gone' || page.status === 'redirected'
  const recheckAt = recheckAtMs(crawl.crawledAtMs, wasOut ? page.lastCrawledAtMs : null, outcomes)
  if (fetch === 'movedPermanently') {
    return {
      ...next,
      status: 'redirected',
      redirectTo: crawl.redirectTo,
      consecutiveFailures: 0,
      crawlsPerDay: 0,
      nextCrawlAtMs: recheckAt,
    }
  }
  if (wasOut && fetch !== 'throttled' && fetch !== 'notFound' && fetch !== 'gone') {
    return {
      ...next,
      consecutiveFailures: fetch === 'error' ? page.consecutiveFailures + 1 : page.consecutiveFailures,
      crawlsPerDay: 0,
      nextCrawlAtMs: recheckAt,
    }
  }
  const rate = pageRate(page, ctx)
  const periodDays = rate > 0 ? 1 / rate : Infinity
  if (isOutOfBudget(page) && (fetch === 'neutral' || fetch === 'throttled')) {
    // A page failing for long that answers a temporary redirect or a 429 stays out: due again after its
    // current backoff (or the Retry-After, if longer).
    const waitDays = failureWaitDays({
      kind: 'error',
      failures: page.consecutiveFailures,
      periodDays,
      retryAfterSeconds: crawl.retryAfterSeconds,
      outcomes,
      outOfBudget: true,
    })
    return { ...next, crawlsPerDay: 0, nextCrawlAtMs: crawl.crawledAtMs + waitDays * MS_PER_DAY }
  }
  if (fetch === 'neutral') {
    return {
      ...next,
      crawlsPerDay: rate,
      nextCrawlAtMs: Number.isFinite(periodDays) ? crawl.crawledAtMs + periodDays * MS_PER_DAY : null,
    }
  }
  if (fetch === 'throttled') {
    // The host asks to slow down: no failure of the page. Wait for Retry-After (the host's pace adapts too).
    const waitDays = failureWaitDays({
      kind: 'throttled',
      failures: 1,
      periodDays,
      retryAfterSeconds: crawl.retryAfterSeconds,
      outcomes,
    })
    return { ...next, crawlsPerDay: rate, nextCrawlAtMs: crawl.crawledAtMs + waitDays * MS_PER_DAY }
  }
  const failures = page.consecutiveFailures + 1
  const dead =
    (fetch === 'notFound' && failures >= outcomes.goneAfterNotFound) ||
    (fetch === 'gone' && failures >= outcomes.goneAfterGone)
  if (dead || wasOut) {
    // A gone (or redirected) page that answers 404 or 410 is gone: only a 2xx or 304 brings it back.
    return {
      ...next,
      status: 'gone',
      redirectTo: null,
      consecutiveFailures: failures,
      crawlsPerDay: 0,
      nextCrawlAtMs: recheckAt,
    }
  }
  const kind = fetch === 'notFound' || fetch === 'gone' ? fetch : 'error'
  // Failing for long (5xx, timeouts, DNS): out of the budget, rechecked with a wait that keeps doubling.
  const out = isOutOfBudget({ status: 'failing', consecutiveFailures: failures })
  const waitDays = failureWaitDays({
    kind,
    failures,
    periodDays,
    retryAfterSeconds: crawl.retryAfterSeconds,
    outcomes,
    outOfBudget: out,
  })
  return {
    ...next,
    status: 'failing',
    consecutiveFailures: failures,
    crawlsPerDay: out ? 0 : rate,
    nextCrawlAtMs: crawl.crawledAtMs + waitDays * MS_PER_DAY,
  }
}

/** What retimePage reads of a page. */
export type RetimeInput = Pick<
  PageState,
  | 'status'
  | 'consecutiveFailures'
  | 'noisy'
  | 'host'
  | 'importance'
  | 'minCrawlsPerDay'
  | 'maxCrawlsPerDay'
  | 'intervals'
  | 'lastCrawledAtMs'
  | 'estimator'
  | 'changesPerDay'
  | 'crawlsPerDay'
  | 'nextCrawlAtMs'
>

interface RetimeOptions {
  /** The rate a solve found for the page; absent = the rate the stored λ gives (docs/math.md 3.1, O(1)). */
  solvedCrawlsPerDay?: number
  /** Derive the scheduling estimate again from the estimator state (after a change of estimator or bounds). */
  reestimate?: boolean
}

/** A page's new estimate, rate and due time. */
type Retimed = Pick<PageState, 'changesPerDay' | 'crawlsPerDay' | 'nextCrawlAtMs'>

/**
 * Re-times a page whose rate may have changed between crawls: after a solve, an upsert of its importance or
 * bounds, or a settings change. The due time follows the new rate from the last crawl; an early due time
 * (exploration, probe or payback) set on purpose is kept while it lies within two new periods; a Poisson
 * schedule redraws the rest of the wait (src/core/crawlTiming.ts, retimedCrawlAtMs).
 */
export function retimePage(page: RetimeInput, ctx: StepContext, options: RetimeOptions = {}): Retimed {
  const { settings } = ctx
  // A page out of the budget keeps rate 0, and a failing page's retry time is the backoff's.
  if (isOutOfBudget(page))
    return { changesPerDay: page.changesPerDay, crawlsPerDay: 0, nextCrawlAtMs: page.nextCrawlAtMs }
  const changesPerDay =
    options.reestimate && page.estimator !== null
      ? schedulingEstimate(page.estimator, settings.estimator, ctx.estimatorSettings, ctx.optimizer.priors, page.host)
      : page.changesPerDay
  const crawlsPerDay =
    options.solvedCrawlsPerDay ??
    (page.noisy ? pageBounds(page, settings).minCrawlsPerDay : blindCrawlsPerDay({ ...page, changesPerDay }, ctx))
  if (page.status === 'failing') return { changesPerDay, crawlsPerDay, nextCrawlAtMs: page.nextCrawlAtMs }
  const nextMs = retimedCrawlAtMs({
    lastCrawledAtMs: page.lastCrawledAtMs,
    nextCrawlAtMs: page.nextCrawlAtMs,
    previousCrawlsPerDay: page.crawlsPerDay,
    crawlsPerDay,
    spacing: settings.schedule,
    nowMs: ctx.nowMs,
    random: ctx.random,
    explorationIntervalDays: page.intervals === 0 && ctx.earlyCrawls !== false ? ctx.explorationIntervalDays : null,
  })
  return { changesPerDay, crawlsPerDay, nextCrawlAtMs: nextMs }
}

/**
 * A page's stored rate and due time are rewritten after a solve only when its new rate differs by more
 * than this fraction. It is tiny on purpose: the API reports the exact solution (a client re-solving from
 * the reported estimates must find the same rates), so only pages the solve left unchanged (at their
 * bounds, or untouched by a small budget change) are skipped.
 */
const RETIME_RELATIVE_CHANGE = 1e-9

/** Whether a solved rate differs from the stored one enough to re-time the page (RETIME_RELATIVE_CHANGE). */
export function rateMoved(oldCrawlsPerDay: number | null, newCrawlsPerDay: number): boolean {
  return (
    oldCrawlsPerDay === null ||
    Math.abs(newCrawlsPerDay - oldCrawlsPerDay) > RETIME_RELATIVE_CHANGE * Math.max(Math.abs(oldCrawlsPerDay), 1e-12)
  )
}

/**
 * A leased page a crawler gives back without crawling it (POST /v1/leases/{leaseId}/release):
 * - `retry`: it stays due (its due time is kept) or, with retryAfterSeconds, is due again after that;
 * - `skip`: this round is skipped: it is due again one period (at its rate) from now.
 * Returns the new due time.
 */
export function releasedDueAtMs(
  page: Pick<PageState, 'crawlsPerDay' | 'nextCrawlAtMs'>,
  release: { reason: 'retry' | 'skip'; retryAfterSeconds: number | null },
  nowMs: number,
): number | null {
  if (release.reason === 'retry') {
    return release.retryAfterSeconds === null
      ? (page.nextCrawlAtMs ?? nowMs)
      : nowMs + release.retryAfterSeconds * MS_PER_SECOND
  }
  return page.crawlsPerDay !== null && page.crawlsPerDay > 0 ? nowMs + MS_PER_DAY / page.crawlsPerDay : null
}

/**
 * A registration larger than the budget covers in this long is spread out (registrationDueAtMs); a smaller
 * one is due at once.
 */
const REGISTRATION_BURST_DAYS = 1 / 24

/**
 * When the k-th (0-based) of `newPages` pages registered together is first due. A registration the budget
 * covers within REGISTRATION_BURST_DAYS is due at once. A larger one is spread over the time the whole budget
 * needs to crawl it once (newPages / budgetCrawlsPerDay days), one stratum per page in registration order
 * (callers put important pages first): the fleet works through a bulk registration at the budget's pace,
 * between the pages already due, and pages registered together do not all fall due together again one period
 * later.
 */
export function registrationDueAtMs(ctx: StepContext, k: number, newPages: number): number {
  const spreadDays = newPages / ctx.settings.budgetCrawlsPerDay
  if (spreadDays <= REGISTRATION_BURST_DAYS) return ctx.nowMs
  return ctx.nowMs + ((k + ctx.random.next()) / newPages) * spreadDays * MS_PER_DAY
}

/** What a replay made of one stored crawl (the derived columns of its observation). */
interface ReplayedCrawl {
  crawledAtMs: number
  changed: boolean | null
  applied: boolean
  intervalSeconds: number | null
}

/**
 * A page's state from its whole stored history, replayed through applyCrawl in crawl-time order: how a crawl
 * that arrives after a newer one (a late crawl) is folded into the estimates. Each report's change flag then
 * applies to the interval that ends at its crawl in time order, and hashes are compared with the crawl just
 * before in time, whatever order they were reported in. The page's attributes (host, importance, bounds) are
 * kept; its counters, estimator state, status and validators come from the replay, and its rate and due time
 * from the last crawl with the context's λ and time. A stored crawl that says nothing about change (a former
 * baseline that an earlier late crawl now precedes, or a late report without `changed` or a hash) counts as a
 * crawl and starts a new baseline.
 */
export function replayHistory(
  page: Pick<PageState, 'host' | 'importance' | 'minCrawlsPerDay' | 'maxCrawlsPerDay'>,
  history: readonly CrawlReport[],
  ctx: StepContext,
): { page: PageState; crawls: ReplayedCrawl[] } {
  const replayCtx: StepContext = { ...ctx, catchUpLateness: false }
  let state = newPageState(page, ctx.nowMs)
  const crawls: ReplayedCrawl[] = []
  for (const report of [...history].sort((a, b) => a.crawledAtMs - b.crawledAtMs)) {
    const step = applyCrawl(state, report, replayCtx)
    if (step.outcome.kind === 'inOrder') {
      state = step.page
      crawls.push({
        crawledAtMs: report.crawledAtMs,
        changed: step.outcome.changed,
        applied: step.outcome.applied,
        intervalSeconds: step.outcome.intervalSeconds,
      })
    } else if (step.outcome.kind === 'rejected') {
      // It was stored as a baseline or a late crawl: the content it saw is unrelated to the one before, so it
      // starts a new baseline.
      state = {
        ...state,
        crawls: state.crawls + 1,
        firstCrawledAtMs: state.firstCrawledAtMs ?? report.crawledAtMs,
        lastCrawledAtMs: report.crawledAtMs,
        intervalStartAtMs: report.crawledAtMs,
        lastContentHash: report.contentHash,
      }
      crawls.push({ crawledAtMs: report.crawledAtMs, changed: null, applied: false, intervalSeconds: null })
    }
  }
  return { page: state, crawls }
}

/** What a change signal did to its page's schedule (docs/math.md 5.3). */
export type SignalEffect =
  /** The page is due now: the signal makes it at least as likely changed as its own schedule would find it. */
  | 'pulled'
  /** The claimed change is no newer than the content last seen: nothing to learn or do. */
  | 'stale'
  /** The source is not trusted enough for this page: the schedule is unchanged (the next crawl still judges it). */
  | 'notWorth'
  /** The page is due already, leased (its crawl is under way), or never crawled yet. */
  | 'alreadyDue'
  /** The page is not active (failing, gone, redirected): its retry or recheck time stands. */
  | 'notActive'

/** What applySignal reads of a page: all a signal's transaction reads of the pages it signals. */
export const SIGNAL_INPUT_FIELDS = [
  'status',
  'host',
  'importance',
  'minCrawlsPerDay',
  'maxCrawlsPerDay',
  'intervalStartAtMs',
  'lastCrawledAtMs',
  'changesPerDay',
  'crawlsPerDay',
  'nextCrawlAtMs',
] as const satisfies readonly StateFieldName[]
type SignalInput = Pick<PageState, (typeof SIGNAL_INPUT_FIELDS)[number]>

/**
 * The chance that a page has changed by its next scheduled crawl without a trusted signal saying so, as its own
 * schedule sees it: one period of its crawl rate at the rate of the changes its host's signals leave uncovered,
 * 1 − exp(−changesPerDay·(1 − r) / crawlsPerDay) (docs/math.md 5.3 and 5.4; r = 0 without a cover).
 */
export function scheduledChangeProbability(
  page: Pick<
    PageState,
    'host' | 'importance' | 'minCrawlsPerDay' | 'maxCrawlsPerDay' | 'changesPerDay' | 'crawlsPerDay'
  >,
  ctx: StepContext,
): number {
  const crawlsPerDay = page.crawlsPerDay
  if (crawlsPerDay === null || !(crawlsPerDay > 0)) return 1
  const changesPerDay = unsignalledChangesPerDay(
    page.changesPerDay ?? priorRateFor(ctx, page.host),
    signalCoverFor(page, ctx),
  )
  return 1 - Math.exp(-changesPerDay / crawlsPerDay)
}

/**
 * One change signal applied to its page (docs/math.md 5.3). `informativeShare` is κ, the share of the source's
 * signals on the page's host that report a real change (src/core/signals.ts, signalInformativeShare; 1 for a signal
 * trusted outright, 0 for an untrusted source or one that tells nothing). The page's chance of a change since its
 * content was last seen is κ + (1 − κ)·(1 − e^{−Δ'·age}), its own chance where the signal tells nothing (Δ' the
 * changes its host's cover leaves to the schedule, 5.4). The page is due now when crawling it now instead of at
 * its due time is worth more than the crawls that costs (signalPullNetWorth), each valued at the budget's marginal
 * crawl: the host's multiplier λ of the stored solve, or the page's own marginal value μ f′(ρ) when no multiplier
 * binds (before the first solve, a budget left unspent) or the objective is not freshness (harmonic). Its rate is
 * not touched: the crawl comes out of the same budget and hand-out allowance as every other (leases), and the
 * crawl that follows sets the next due time from the rate as usual. Returns the effect and the page's due time.
 */
export function applySignal(
  page: SignalInput,
  signal: { signalledAtMs: number; pageLeased: boolean },
  informativeShare: number,
  ctx: StepContext,
): { effect: SignalEffect; nextCrawlAtMs: number | null } {
  const keep = (effect: SignalEffect) => ({ effect, nextCrawlAtMs: page.nextCrawlAtMs })
  if (page.status !== 'active') return keep('notActive')
  if (page.intervalStartAtMs !== null && signal.signalledAtMs <= page.intervalStartAtMs) return keep('stale')
  if (
    signal.pageLeased ||
    page.lastCrawledAtMs === null ||
    (page.nextCrawlAtMs !== null && page.nextCrawlAtMs <= ctx.nowMs)
  )
    return keep('alreadyDue')
  return signalPullNetWorthFor(page, informativeShare, ctx) > 0
    ? { effect: 'pulled', nextCrawlAtMs: ctx.nowMs }
    : keep('notWorth')
}

/**
 * What pulling an active, crawled page that is not yet due to now is worth, net of its cost, in importance × days
 * (applySignal, docs/math.md 5.3); −∞ for a page its schedule does not crawl (rate 0) or a signal that moves nothing.
 */
export function signalPullNetWorthFor(
  page: Omit<SignalInput, 'status'>,
  informativeShare: number,
  ctx: StepContext,
): number {
  const crawlsPerDay = page.crawlsPerDay
  if (!(informativeShare > 0) || crawlsPerDay === null || !(crawlsPerDay > 0) || page.nextCrawlAtMs === null)
    return Number.NEGATIVE_INFINITY
  const changesPerDay = unsignalledChangesPerDay(
    page.changesPerDay ?? priorRateFor(ctx, page.host),
    signalCoverFor(page, ctx),
  )
  const seenAtMs = page.intervalStartAtMs ?? page.lastCrawledAtMs ?? ctx.nowMs
  const changedProbability = changedProbabilityGivenSignal(
    changesPerDay,
    Math.max(0, ctx.nowMs - seenAtMs) / MS_PER_DAY,
    informativeShare,
  )
  const lambda = ctx.settings.objective === 'harmonic' ? null : lambdaForHost(ctx.optimizer, page.host)
  const cover = signalCoverFor(page, ctx)
  const priors = ctx.optimizer.priors ?? null
  if (page.changesPerDay === null && priors !== null && ctx.settings.schedule === 'periodic' && cover.share < 1) {
    // No interval of its own yet: the worth averaged over the host's prior (the uncovered changes' rate is the
    // prior's scaled by 1 − r, a gamma with its rate parameter divided by 1 − r).
    const prior = priorForHost(priors, page.host)
    return signalPullNetWorthUnderPrior({
      importance: page.importance,
      prior: { shape: prior.shape, rateDays: prior.rateDays / (1 - cover.share) },
      crawlsPerDay,
      daysUntilDue: Math.max(0, page.nextCrawlAtMs - ctx.nowMs) / MS_PER_DAY,
      daysSinceSeen: Math.max(0, ctx.nowMs - seenAtMs) / MS_PER_DAY,
      informativeShare,
      marginalCrawlValue: lambda ?? periodicMarginalCrawlValue(page.importance, changesPerDay, crawlsPerDay),
    })
  }
  return signalPullNetWorth({
    importance: page.importance,
    changesPerDay,
    crawlsPerDay,
    daysUntilDue: Math.max(0, page.nextCrawlAtMs - ctx.nowMs) / MS_PER_DAY,
    changedProbability,
    marginalCrawlValue: lambda ?? periodicMarginalCrawlValue(page.importance, changesPerDay, crawlsPerDay),
    spacing: ctx.settings.schedule,
  })
}
