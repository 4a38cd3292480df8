/**
 * Discrete-event crawl simulation (docs/math.md section 4). Events are crawls, taken from a priority
 * queue of per-page due times; between two crawls of a page its freshness is known exactly from the
 * change times: the copy taken at t is fresh until the page's first change after t.
 *
 * Two ways to spend the budget:
 * - `scheduled`: every page is crawled exactly at its due time. For policies whose rates sum to R;
 *   the crawls are counted and reported next to the budget R × horizon.
 * - `fleet`: a crawler fleet that completes R crawls per day: each crawl occupies it for 1/R days,
 *   and when free it crawls the most overdue due page (as the service's leases hand them out), or, when
 *   none is due, the page due next once it is within half its interval of its due time (the service's
 *   early hand-outs, src/core/handOut.ts; the service picks among all such pages, this fleet looks at the
 *   next one only).
 *   Crawls can never exceed R × horizon. Needed by policies
 *   without a budget of their own (Nutch); the benchmark runs every policy this way by default.
 */
import { median } from '../math/numbers.ts'
import { earlyHandOutFrom } from '../core/handOut.ts'
import { DueQueue } from './dueQueue.ts'
import { fewCrawlsEstimation, type FewCrawlsEstimation } from './fewCrawls.ts'
import type { ChangeInterval } from '../math/estimators/index.ts'
import type { Universe } from './universe.ts'

/** What one crawl finds, as the crawler sees it (src/core/pageStep.ts has its own CrawlOutcome: what the step made of a report). */
export interface CrawlFinding {
  /** The page changed since this policy's previous crawl (or since time 0 on the first crawl). */
  changed: boolean
  /**
   * Crawl time − Last-Modified (time of the latest change at or before the crawl), or null if none yet or the
   * page's host sends no usable Last-Modified (Universe.sendsLastModified).
   */
  ageDays: number | null
  /** This is the policy's first crawl of the page. */
  first: boolean
}

export interface PolicyContext {
  readonly universe: Universe
  /** Moves a page's due time (days; +Infinity = never). */
  setDue(page: number, dueDays: number): void
  dueDays(page: number): number
  /** Last crawl time of the page by this policy, or null. */
  lastCrawlDays(page: number): number | null
}

export interface SimPolicy {
  readonly name: string
  readonly mode: 'scheduled' | 'fleet'
  /** Sets every page's first due time through ctx.setDue. */
  start(ctx: PolicyContext): void
  /** Called after each crawl; returns the page's next due time (days; +Infinity = never). */
  onCrawl(page: number, nowDays: number, finding: CrawlFinding, ctx: PolicyContext): number
  /** When set, onTick runs at 0, tickDays, 2·tickDays, … before the crawls due at the same time. */
  readonly tickDays?: number
  onTick?(nowDays: number, ctx: PolicyContext): void
  /**
   * When set, the time (days; +Infinity = none) of the policy's next outside event (a change signal), which
   * onEvent handles at that time, before the crawls due then (after a solve due then).
   */
  nextEventDays?(): number
  onEvent?(nowDays: number, ctx: PolicyContext): void
  /** Current change-rate estimates (changes per day, NaN = none), for estimating policies. */
  estimates?(): Float64Array
  /** Crawl intervals each page's estimate rests on (with `estimates`). */
  intervalCounts?(): Int32Array
  /** Every interval between two content crawls of each page, in crawl order (with `estimates`). */
  histories?(): readonly (readonly ChangeInterval[])[]
}

export interface RunResult {
  /** Σ μ · fresh time / (Σ μ · window), window = [warmup, horizon]. */
  freshness: number
  /** Same with every μ = 1. */
  unweightedFreshness: number
  crawls: number
  /** R × horizon. */
  budgetCrawls: number
  /** Crawls inside the scoring window, and R × window. */
  windowCrawls: number
  windowBudgetCrawls: number
  /** Median over pages with Δ > 0 of |Δ̂ − Δ|/Δ at the end of the run (no estimate counts as 1); null for non-estimating policies. */
  medianRelativeError: number | null
  /** Median of Δ̂/Δ (bias direction); null for non-estimating policies. */
  medianEstimateRatio: number | null
  /**
   * Median of Δ̂/Δ over pages with at least WELL_OBSERVED_INTERVALS intervals: the estimator's bias
   * where it has data (docs/math.md 1.4), apart from pages it starved. Null when no such page.
   */
  medianEstimateRatioWellObserved: number | null
  /**
   * |Δ̂ − Δ|/Δ over pages with 1 to FEW_CRAWLS_INTERVALS intervals at the end of the run: how many, the median and
   * the 90th percentile. Null for non-estimating policies.
   */
  fewCrawlsRelativeError: { pages: number; median: number | null; p90: number | null } | null
  /**
   * Pages whose whole history has 1 to FEW_CRAWLS_INTERVALS intervals: the scheduling estimate, the page's own MLE
   * and the bound of a prior that knows the fleet's true rates, on the same histories (src/sim/fewCrawls.ts).
   */
  fewCrawlsEstimation: FewCrawlsEstimation | null
  /** Fresh days of each page inside the window (for diagnostics and tests). */
  pageFreshDays: Float64Array
  /** Crawls of each whole simulated day of the scoring window, divided by the budget R (budget use per day). */
  dailyBudgetUse: number[]
}

interface RunOptions {
  /** Called now and then with the fraction of simulated time done. */
  onProgress?: (fraction: number) => void
  /** Overrides the policy's own mode, e.g. to put every policy on the budget-limited fleet. */
  mode?: 'scheduled' | 'fleet'
}

/** Pages with at least this many intervals count as well observed. */
export const WELL_OBSERVED_INTERVALS = 20
/** Pages with at most this many intervals count as few-crawled (the estimation column of the few-crawls table). */
const FEW_CRAWLS_INTERVALS = 8
/** The few-crawls goal: the scheduling estimate's median relative error at most this times the MLE's. */
const FEW_CRAWLS_TARGET_RATIO = 0.6

/** Two crawls of one page are at least this far apart (about 0.09 s), so no policy can stall time. */
const MIN_GAP_DAYS = 1e-6

/** Index of the first entry of a[from..to) greater than x (a ascending). */
function firstAfter(a: Float64Array, from: number, to: number, x: number): number {
  // Gallop: crawls usually skip few changes.
  let step = 1
  let lo = from
  let hi = from
  while (hi < to && a[hi]! <= x) {
    lo = hi + 1
    hi += step
    step *= 2
  }
  if (hi > to) hi = to
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (a[mid]! <= x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Exact freshness bookkeeping for one policy over one universe: each page's copy is fresh from its
 * last crawl until the page's next change; only time inside [warmup, horizon] counts.
 */
export class FreshnessTracker {
  private readonly lastCrawl: Float64Array
  private readonly crawled: Uint8Array
  private readonly nextChange: Int32Array
  readonly freshDays: Float64Array

  constructor(private readonly universe: Universe) {
    const n = universe.pageCount
    this.lastCrawl = new Float64Array(n) // the copy at time 0 is in sync
    this.crawled = new Uint8Array(n)
    this.nextChange = Int32Array.from(universe.changeOffsets.subarray(0, n))
    this.freshDays = new Float64Array(n)
  }

  lastCrawlDays(page: number): number | null {
    return this.crawled[page] ? this.lastCrawl[page]! : null
  }

  private addFresh(page: number, from: number, to: number): void {
    const { warmupDays, horizonDays } = this.universe
    const a = from > warmupDays ? from : warmupDays
    const b = to < horizonDays ? to : horizonDays
    if (b > a) this.freshDays[page] = this.freshDays[page]! + (b - a)
  }

  /** Records a crawl of `page` at `nowDays` (not before its previous crawl) and returns what it saw. */
  crawl(page: number, nowDays: number): CrawlFinding {
    const { changeDays, changeOffsets } = this.universe
    const end = changeOffsets[page + 1]!
    const ptr = this.nextChange[page]!
    const firstChange = ptr < end ? changeDays[ptr]! : Number.POSITIVE_INFINITY
    this.addFresh(page, this.lastCrawl[page]!, firstChange < nowDays ? firstChange : nowDays)
    const changed = firstChange <= nowDays
    const after = changed ? firstAfter(changeDays, ptr, end, nowDays) : ptr
    this.nextChange[page] = after
    // A host that sends no usable Last-Modified leaves the crawler without the age.
    const ageDays =
      after > changeOffsets[page]! && this.universe.sendsLastModified?.[page] !== 0
        ? nowDays - changeDays[after - 1]!
        : null
    const first = this.crawled[page] === 0
    this.lastCrawl[page] = nowDays
    this.crawled[page] = 1
    return { changed, ageDays, first }
  }

  /** Closes every page's last fresh spell at the horizon; returns weighted and unweighted F. */
  finish(): { freshness: number; unweightedFreshness: number } {
    const { pageCount: n, changeDays, changeOffsets, importance, horizonDays, warmupDays } = this.universe
    let weightedFresh = 0
    let weightSum = 0
    let fresh = 0
    for (let i = 0; i < n; i++) {
      const end = changeOffsets[i + 1]!
      const ptr = this.nextChange[i]!
      this.addFresh(i, this.lastCrawl[i]!, ptr < end ? changeDays[ptr]! : Number.POSITIVE_INFINITY)
      weightedFresh += importance[i]! * this.freshDays[i]!
      weightSum += importance[i]!
      fresh += this.freshDays[i]!
    }
    const windowDays = horizonDays - warmupDays
    return {
      freshness: weightSum > 0 ? weightedFresh / (weightSum * windowDays) : 1,
      unweightedFreshness: n > 0 ? fresh / (n * windowDays) : 1,
    }
  }
}

export function runPolicy(universe: Universe, policy: SimPolicy, options: RunOptions = {}): RunResult {
  const { pageCount: n, horizonDays: horizon, warmupDays: warmup } = universe
  const queue = new DueQueue(n)
  const tracker = new FreshnessTracker(universe)
  const ctx: PolicyContext = {
    universe,
    setDue: (page, dueDays) => queue.set(page, dueDays),
    dueDays: (page) => queue.dueDays[page]!,
    lastCrawlDays: (page) => tracker.lastCrawlDays(page),
  }

  let crawls = 0
  let windowCrawls = 0
  const firstDay = Math.ceil(warmup)
  const daily = new Float64Array(Math.max(0, Math.floor(horizon) - firstDay))
  const crawl = (page: number, t: number) => {
    const finding = tracker.crawl(page, t)
    crawls++
    if (t >= warmup) windowCrawls++
    const day = Math.floor(t) - firstDay
    if (day >= 0 && day < daily.length) daily[day]!++
    const next = policy.onCrawl(page, t, finding, ctx)
    queue.set(page, next >= t + MIN_GAP_DAYS ? next : t + MIN_GAP_DAYS)
  }

  policy.start(ctx)
  const tickDays = policy.onTick && policy.tickDays && policy.tickDays > 0 ? policy.tickDays : Number.POSITIVE_INFINITY
  let nextTick = tickDays < Number.POSITIVE_INFINITY ? 0 : Number.POSITIVE_INFINITY
  let tickCount = 0
  const progressEvery = Math.max(1, horizon / 50)
  let nextProgress = progressEvery

  // 'fleet': each crawl occupies the fleet for 1/R days and, when free, it takes the most overdue due
  // page, so at most R × horizon crawls happen. 'scheduled': every page is crawled at its due time.
  // Either way a re-timed page may be due in the past (periodic: last crawl + 1/ρ < now): it is
  // crawled as soon as it can be.
  const fleet = (options.mode ?? policy.mode) !== 'scheduled'
  const crawlDays = fleet ? 1 / universe.budgetCrawlsPerDay : 0
  const maxCrawls = fleet ? Math.floor(universe.budgetCrawlsPerDay * horizon) : Number.POSITIVE_INFINITY
  let free = 0
  let clock = 0
  while (crawls < maxCrawls) {
    const due = queue.peekDueDays()
    let t = due > free ? due : free
    if (fleet && due > free && due < Number.POSITIVE_INFINITY) {
      // Early hand-out, as the service's leases (core/handOut.ts): a free fleet takes the page due next once it
      // is within half its interval of its due time (a page never crawled at once), so the budget is not left idle.
      const last = tracker.lastCrawlDays(queue.peek())
      const eligible = last === null ? free : earlyHandOutFrom(last, due)
      t = eligible > free ? (eligible < due ? eligible : due) : free
    }
    if (t < clock) t = clock
    if (nextTick <= t && nextTick <= horizon) {
      clock = nextTick
      policy.onTick!(nextTick, ctx)
      tickCount++
      nextTick = tickCount * tickDays
      continue
    }
    const nextEvent = policy.nextEventDays?.() ?? Number.POSITIVE_INFINITY
    if (nextEvent <= t && nextEvent <= horizon && nextEvent < nextTick) {
      if (nextEvent > clock) clock = nextEvent
      policy.onEvent!(clock, ctx)
      continue
    }
    if (t > horizon) break
    if (t >= nextProgress) {
      options.onProgress?.(t / horizon)
      nextProgress += progressEvery
    }
    clock = t
    crawl(queue.peek(), t)
    free = t + crawlDays
  }

  const { freshness, unweightedFreshness } = tracker.finish()
  const estimates = policy.estimates?.() ?? null
  const estimateStats = estimates ? estimateErrors(estimates, universe.trueChangesPerDay) : null
  let wellObserved: number | null = null
  const counts = policy.intervalCounts?.() ?? null
  if (estimates && counts) {
    const subset = Float64Array.from(estimates, (e, i) => (counts[i]! >= WELL_OBSERVED_INTERVALS ? e : Number.NaN))
    const truth = Float64Array.from(universe.trueChangesPerDay, (d, i) =>
      counts[i]! >= WELL_OBSERVED_INTERVALS ? d : 0,
    )
    wellObserved = estimateErrors(subset, truth).medianRatio
  }
  let fewCrawls: RunResult['fewCrawlsRelativeError'] = null
  if (estimates && counts) {
    const errors: number[] = []
    for (let i = 0; i < estimates.length; i++) {
      const delta = universe.trueChangesPerDay[i]!
      if (counts[i]! < 1 || counts[i]! > FEW_CRAWLS_INTERVALS || !(delta > 0)) continue
      const est = Number.isFinite(estimates[i]!) ? estimates[i]! : 0
      errors.push(Math.abs(est - delta) / delta)
    }
    errors.sort((a, b) => a - b)
    fewCrawls = {
      pages: errors.length,
      median: medianOrNull(errors),
      p90: errors.length === 0 ? null : errors[Math.min(errors.length - 1, Math.floor(0.9 * errors.length))]!,
    }
  }
  const histories = policy.histories?.() ?? null
  const sameHistories =
    estimates && histories
      ? fewCrawlsEstimation(
          histories,
          estimates,
          universe.trueChangesPerDay,
          universe.hostOfPage ?? null,
          FEW_CRAWLS_INTERVALS,
          FEW_CRAWLS_TARGET_RATIO,
        )
      : null
  options.onProgress?.(1)
  return {
    freshness,
    unweightedFreshness,
    crawls,
    budgetCrawls: universe.budgetCrawlsPerDay * horizon,
    windowCrawls,
    windowBudgetCrawls: universe.budgetCrawlsPerDay * (horizon - warmup),
    medianRelativeError: estimateStats?.medianRelativeError ?? null,
    medianEstimateRatio: estimateStats?.medianRatio ?? null,
    medianEstimateRatioWellObserved: wellObserved,
    fewCrawlsRelativeError: fewCrawls,
    fewCrawlsEstimation: sameHistories,
    pageFreshDays: tracker.freshDays,
    dailyBudgetUse: Array.from(daily, (n) => n / universe.budgetCrawlsPerDay),
  }
}

/** |Δ̂ − Δ|/Δ and Δ̂/Δ over pages with Δ > 0; a page without an estimate counts as Δ̂ = 0. */
export function estimateErrors(
  estimates: Float64Array,
  truth: Float64Array,
): { medianRelativeError: number | null; medianRatio: number | null } {
  const errors: number[] = []
  const ratios: number[] = []
  for (let i = 0; i < truth.length; i++) {
    const delta = truth[i]!
    if (!(delta > 0)) continue
    const est = estimates[i]!
    const value = Number.isFinite(est) ? est : 0
    errors.push(Math.abs(value - delta) / delta)
    ratios.push(value / delta)
  }
  return { medianRelativeError: medianOrNull(errors), medianRatio: medianOrNull(ratios) }
}

function medianOrNull(values: readonly number[]): number | null {
  return values.length === 0 ? null : median(values)
}
