import { renewalParameters, type EstimatorState } from '../math/estimators/index.ts'
import { rateForPage, pageFreshness } from '../math/optimizer/index.ts'
import type { Random } from '../math/random.ts'
import type { CrawlSpacing, Settings } from './settings.ts'
import { MINUTES_PER_DAY, MS_PER_DAY } from '../math/units.ts'

/** What the rate of one page depends on. */
interface RateInputs {
  changesPerDay: number | null
  importance: number
  minCrawlsPerDay: number | null
  maxCrawlsPerDay: number | null
  /** The estimator state, whose fitted age-law shape `freshness-renewal` reads (docs/math.md 3.5). */
  estimator?: EstimatorState | null
}

/** A page's effective bounds: its own, else the settings-level ones (docs/math.md 3.6: the floor keeps every page learnable). */
export function pageBounds(
  page: Pick<RateInputs, 'minCrawlsPerDay' | 'maxCrawlsPerDay'>,
  settings: Settings,
): { minCrawlsPerDay: number; maxCrawlsPerDay: number } {
  const minCrawlsPerDay = page.minCrawlsPerDay ?? settings.minCrawlsPerDay
  const maxCrawlsPerDay = page.maxCrawlsPerDay ?? settings.maxCrawlsPerDay ?? Number.POSITIVE_INFINITY
  return { minCrawlsPerDay, maxCrawlsPerDay: Math.max(maxCrawlsPerDay, minCrawlsPerDay) }
}

/** The change rate scheduling uses: the page's estimate, or the prior for pages without one. */
function schedulingChangesPerDay(page: RateInputs, settings: Settings, priorChangesPerDay: number | null): number {
  return page.changesPerDay ?? priorChangesPerDay ?? settings.defaultChangesPerDay
}

/** The multiplier that applies to a host's pages: its own when its cap binds (docs/math.md 3.2), else the global one. */
export function lambdaForHost(
  state: { lambda: number | null; hostLambdas: Record<string, number> },
  host: string,
): number | null {
  // λ = 0: the last solve left budget unused (every page at its upper bound). It says nothing about
  // a page added since, which is then timed from its own change rate until the next solve.
  if (state.lambda === null || !(state.lambda > 0)) return null
  return state.hostLambdas[host] ?? state.lambda
}

/**
 * The page's crawl rate from the stored global multiplier λ (docs/math.md 3.1, O(1)). Before the first
 * optimisation (λ unknown) a page is crawled at its change rate, within its bounds. A page without an estimate
 * is scheduled at `priorChangesPerDay` (its host's prior mean, docs/math.md 1.12), else the settings' default.
 */
export function crawlsPerDayFor(
  page: RateInputs,
  settings: Settings,
  lambda: number | null,
  priorChangesPerDay: number | null = null,
): number {
  const bounds = pageBounds(page, settings)
  const changesPerDay = schedulingChangesPerDay(page, settings, priorChangesPerDay)
  if (lambda === null) {
    return Math.min(bounds.maxCrawlsPerDay, Math.max(bounds.minCrawlsPerDay, changesPerDay))
  }
  const law =
    settings.objective === 'freshness-renewal'
      ? renewalParameters(page.estimator ?? null, changesPerDay)
      : { changesPerDay }
  return rateForPage({ ...law, importance: page.importance, ...bounds }, lambda, settings.objective)
}

/**
 * Probing a page whose every interval saw a change (docs/math.md 1.5 and 3.6).
 *
 * While X = n no estimator can tell how fast a page changes: the smoothed MLE grows only like
 * ln(n + 2)/τ̄, so a page that changes far faster than it is crawled looks like a moderately fast
 * page, stays below the rate at which the optimiser would give it up, and keeps a share of the
 * budget that buys it almost no freshness. A probe crawls such a page again after half its
 * shortest interval so far; after about log2(Δ·τ) probes one interval sees no change and from then
 * on the MLE has a root (and the optimiser gives the page up if it changes too fast to be worth
 * crawling). Probing starts after PROBE_AFTER_INTERVALS all-changed intervals, runs only while the
 * optimiser crawls the page above its floor (a page given up is not worth the crawls), and stops
 * below PROBE_MIN_INTERVAL_DAYS. Under the periodic schedule a probe and the interval that pays it
 * back (probePaybackDays) alternate, so probing does not raise the page's crawl rate.
 */
const PROBE_AFTER_INTERVALS = 2
/** The shortest probe interval: one minute, the resolution of the MLE's interval histogram. */
export const PROBE_MIN_INTERVAL_DAYS = 1 / MINUTES_PER_DAY

/** Every interval of the page saw a change, and there are enough of them to probe. */
export function allIntervalsChanged(page: { intervals: number; changes: number }): boolean {
  return page.intervals >= PROBE_AFTER_INTERVALS && page.changes >= page.intervals
}

/** pages / budget, in days: the interval an even split of the budget gives every page; null before the first optimiser run. */
export function explorationIntervalDays(pages: number | null, settings: Settings): number | null {
  return pages !== null && pages > 0 ? pages / settings.budgetCrawlsPerDay : null
}

/**
 * How soon a page should be crawled again when that is sooner than its rate says, in days; null
 * when its rate decides. Two cases (docs/math.md 3.6, exploration):
 * - a page crawled once (no interval yet) has only the prior for an estimate, and the optimiser may
 *   have set it to its floor on that prior alone; it is crawled again after at most
 *   `explorationIntervalDays` (the interval an even split of the budget gives every page), so every
 *   page gets an estimate of its own;
 * - a page whose every interval saw a change is probed after half its shortest interval (see above).
 * Exploration never comes sooner than the page's cap allows (1 / maxCrawlsPerDay days). A probe may: it
 * shortens one interval and its payback lengthens the next, so the page's rate stays within its bounds, and
 * only short probes tell a page that changes on every fetch (noise) from a fast one.
 */
export function earlyCrawlIntervalDays(page: {
  intervals: number
  changes: number
  /** The shortest interval that saw a change (estimators' shortestChangedIntervalDays). */
  shortestChangedIntervalDays: number | null
  crawlsPerDay: number
  minCrawlsPerDay: number
  /** The page's cap (pageBounds; +∞ without one). */
  maxCrawlsPerDay: number
  /** Pages / budget, in days; null when unknown (no optimiser run yet). */
  explorationIntervalDays: number | null
}): number | null {
  const periodDays = page.crawlsPerDay > 0 ? 1 / page.crawlsPerDay : Infinity
  const capDays = page.maxCrawlsPerDay > 0 ? 1 / page.maxCrawlsPerDay : Infinity
  if (page.intervals === 0) {
    if (page.explorationIntervalDays === null || !(page.explorationIntervalDays > 0)) return null
    const explore = Math.max(page.explorationIntervalDays, capDays)
    return explore < periodDays ? explore : null
  }
  if (!allIntervalsChanged(page) || page.shortestChangedIntervalDays === null) return null
  if (!(page.crawlsPerDay > page.minCrawlsPerDay)) return null
  const half = page.shortestChangedIntervalDays / 2
  return half >= PROBE_MIN_INTERVAL_DAYS && half < periodDays ? half : null
}

/**
 * What probing left unspent: a page that was probing (every interval changed before this crawl)
 * and is still crawled above its floor waits, after an interval shorter than its period, the
 * difference on top of the period, so probing does not raise its crawl rate. Probes and paybacks
 * alternate. 0 otherwise (a page given up waits its floor period as it is).
 */
export function probePaybackDays(page: {
  /** allIntervalsChanged before this crawl's interval was applied. */
  wasProbing: boolean
  closedIntervalDays: number | null
  crawlsPerDay: number
  minCrawlsPerDay: number
}): number {
  if (!page.wasProbing || page.closedIntervalDays === null || !(page.crawlsPerDay > page.minCrawlsPerDay)) return 0
  return Math.max(0, 1 / page.crawlsPerDay - page.closedIntervalDays)
}

/**
 * When the page is due next: never crawled → `nowMs`; ρ = 0 → never (null). Periodic: last crawl +
 * 1/ρ days, plus a probe's payback (probePaybackDays), or + an early crawl's interval
 * (earlyCrawlIntervalDays) when that is shorter. Poisson: last crawl + an exponential draw with
 * rate ρ, or + the early crawl's interval when that is shorter.
 *
 * A periodic crawl made `lateDays` after its due time keeps the page's phase: the next one is due a period
 * after the due time, but never less than half a period after the crawl. A fleet that fetches pages some
 * time after they fall due thus still spends the whole budget, and no page is crawled twice in quick
 * succession (MAX_LATE_SHARE_OF_PERIOD).
 */
export function nextCrawlAtMs(options: {
  lastCrawledAtMs: number | null
  crawlsPerDay: number
  spacing: CrawlSpacing
  nowMs: number
  random: Random
  earlyIntervalDays?: number | null
  paybackDays?: number
  /** How late the crawl was against the page's due time, in days (0 when on time). */
  lateDays?: number
}): number | null {
  const { lastCrawledAtMs, crawlsPerDay } = options
  if (lastCrawledAtMs === null) return options.nowMs
  if (!(crawlsPerDay > 0)) return null
  const early = options.earlyIntervalDays ?? Infinity
  if (options.spacing === 'poisson') {
    return lastCrawledAtMs + Math.min(options.random.exponential(crawlsPerDay), early) * MS_PER_DAY
  }
  const periodDays = 1 / crawlsPerDay
  const payback = options.paybackDays ?? 0
  const caughtUp = Math.min(options.lateDays ?? 0, periodDays * MAX_LATE_SHARE_OF_PERIOD)
  const gapDays = payback > 0 ? periodDays + payback : early < periodDays ? early : periodDays - caughtUp
  return lastCrawledAtMs + gapDays * MS_PER_DAY
}

/** The most of a period a late crawl takes back from the next interval. */
const MAX_LATE_SHARE_OF_PERIOD = 0.5

/**
 * The crawl time the page's rate alone gives (API nextCrawlAt): periodic, last crawl + 1/ρ; else,
 * and before the first crawl, the stored due time (a Poisson draw is stored, not derivable). It
 * differs from the due time only while the page explores, probes or pays a probe back.
 */
export function scheduledCrawlAt(page: {
  lastCrawledAtMs: number | null
  crawlsPerDay: number | null
  spacing: CrawlSpacing
  dueAtMs: number | null
}): number | null {
  if (page.spacing !== 'periodic' || page.lastCrawledAtMs === null || page.crawlsPerDay === null) return page.dueAtMs
  if (!(page.crawlsPerDay > 0)) return null
  return page.lastCrawledAtMs + MS_PER_DAY / page.crawlsPerDay
}

/**
 * Expected freshness of one page at its rate under the schedule that runs: periodic crawling
 * gives (ρ/Δ)(1 − e^{−Δ/ρ}) (docs/math.md 3.3), Poisson crawling ρ/(ρ+Δ) (docs/math.md 3.1).
 */
export function expectedPageFreshness(
  page: RateInputs,
  settings: Settings,
  crawlsPerDay: number | null,
): number | null {
  if (crawlsPerDay === null) return null
  const objective = settings.schedule === 'periodic' ? 'freshness-periodic' : 'freshness'
  return pageFreshness(objective, crawlsPerDay, schedulingChangesPerDay(page, settings, null))
}

/**
 * A page's due time after its rate changed between crawls. Periodic: last crawl + 1/ρ (may be in
 * the past: due now, or at its current due time if it was already overdue), or + `explorationIntervalDays` when that is shorter (a page without an
 * interval yet, see earlyCrawlIntervalDays); but a due time that is not the one the previous rate
 * gave (an exploration, a probe or a probe's payback set it on purpose) is kept when it lies within
 * two new periods of the last crawl, and the page's next crawl re-times it. Poisson: memoryless, so
 * the rest of the wait is a fresh draw from now, unless the page is already due. Never crawled:
 * unchanged (due since registration).
 */
export function retimedCrawlAtMs(options: {
  lastCrawledAtMs: number | null
  nextCrawlAtMs: number | null
  /** The rate the page had, which set its current due time unless something else did. */
  previousCrawlsPerDay: number | null
  crawlsPerDay: number
  spacing: CrawlSpacing
  nowMs: number
  random: Random
  /** For a page without an interval yet: pages / budget days (explorationIntervalDays); else null. */
  explorationIntervalDays?: number | null
}): number | null {
  const { lastCrawledAtMs, nextCrawlAtMs, crawlsPerDay } = options
  if (lastCrawledAtMs === null) return nextCrawlAtMs ?? options.nowMs
  if (!(crawlsPerDay > 0)) return null
  const periodMs = MS_PER_DAY / crawlsPerDay
  if (options.spacing === 'periodic') {
    const previous = options.previousCrawlsPerDay
    const previousMs = previous !== null && previous > 0 ? MS_PER_DAY / previous : null
    // The share of the period a late crawl took back (nextCrawlAtMs, lateDays), kept in the new period.
    const caughtUp =
      nextCrawlAtMs !== null && previousMs !== null
        ? (lastCrawledAtMs + previousMs - nextCrawlAtMs) / previousMs
        : Number.NaN
    const rateSet =
      caughtUp >= -RATE_DUE_TOLERANCE_MS / (previousMs ?? 1) && caughtUp <= MAX_LATE_SHARE_OF_PERIOD + 1e-9
    if (!rateSet && nextCrawlAtMs !== null && previousMs !== null && nextCrawlAtMs <= lastCrawledAtMs + 2 * periodMs)
      return nextCrawlAtMs
    const share = rateSet ? Math.max(0, caughtUp) : 0
    const due =
      lastCrawledAtMs + Math.min(periodMs * (1 - share), (options.explorationIntervalDays ?? Infinity) * MS_PER_DAY)
    // A page the new rate makes overdue is due now, not as overdue as the new period says (it would jump
    // ahead of every page that is due on time). A page that was already overdue keeps its place in the due
    // order: moving it to now would put it behind every overdue page whose rate did not move (pages at their
    // bounds), and a solve moves most rates a little every time, so the fleet's backlog would be served in
    // an arbitrary order instead of the most overdue first (BENCHMARKS.md, replay-tldr).
    const floor = nextCrawlAtMs !== null && nextCrawlAtMs < options.nowMs ? nextCrawlAtMs : options.nowMs
    return Math.max(due, floor)
  }
  if (nextCrawlAtMs !== null && nextCrawlAtMs <= options.nowMs) return nextCrawlAtMs
  return options.nowMs + options.random.exponential(crawlsPerDay) * MS_PER_DAY
}

/** A due time within this of last crawl + 1/ρ is the rate's own (timestamps are stored to the microsecond). */
const RATE_DUE_TOLERANCE_MS = 2
