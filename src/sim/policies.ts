/**
 * Crawl policies compared at the same budget R (MATH.md section 4): fixed-rate baselines, Nutch's
 * AdaptiveFetchSchedule, the Azar oracle with the true change rates, and recrawl's own loop, which
 * runs the production estimator, optimiser and scheduling modules unchanged.
 */
import {
  currentEstimates,
  emptyEstimatorState,
  schedulingHistory,
  stepEstimators,
  type EstimatorName,
  type EstimatorSettings,
  type EstimatorState,
} from '../math/estimators/index.ts'
import { solveRates, type Objective } from '../math/optimizer/index.ts'
import type { Random } from '../math/random.ts'
import {
  allIntervalsChanged,
  crawlsPerDayFor,
  earlyCrawlIntervalDays,
  nextCrawlAtMs,
  pageBounds,
  probePaybackDays,
  retimedCrawlAtMs,
} from '../domain/schedule.ts'
import { DEFAULT_SETTINGS, type Settings } from '../domain/settings.ts'
import type { CrawlOutcome, PolicyContext, SimPolicy } from './engine.ts'
import type { Universe } from './universe.ts'

export type CrawlSchedule = 'periodic' | 'poisson'
const MS_PER_DAY = 86_400_000

/**
 * A page with a fixed rate ρ: periodic (first crawl at a uniform phase in [0, 1/ρ), then every 1/ρ)
 * or Poisson (exponential gaps with rate ρ). ρ = 0: never crawled.
 */
export function fixedRatePolicy(name: string, crawlsPerDay: Float64Array, schedule: CrawlSchedule, random: Random): SimPolicy {
  const gap = (page: number): number => {
    const rate = crawlsPerDay[page]!
    if (!(rate > 0)) return Number.POSITIVE_INFINITY
    return schedule === 'periodic' ? 1 / rate : random.exponential(rate)
  }
  return {
    name,
    mode: 'scheduled',
    start(ctx) {
      for (let i = 0; i < crawlsPerDay.length; i++) ctx.setDue(i, schedule === 'periodic' ? random.next() * gap(i) : gap(i))
    },
    onCrawl: (page, nowDays) => nowDays + gap(page),
  }
}

/** R/n for every page. */
export function uniformRates(universe: Universe): Float64Array {
  return new Float64Array(universe.pageCount).fill(universe.budgetCrawlsPerDay / universe.pageCount)
}

/** R μ_i / Σ μ. */
export function proportionalRates(universe: Universe): Float64Array {
  let sum = 0
  for (const mu of universe.importance) sum += mu
  return Float64Array.from(universe.importance, (mu) => (sum > 0 ? (universe.budgetCrawlsPerDay * mu) / sum : 0))
}

/**
 * Azar et al. with the true Δ (the oracle): the optimal rates for the schedule that runs
 * (periodic → `freshness-periodic`, MATH.md 3.3; Poisson → `freshness`, MATH.md 3.1), no floor.
 */
export function oracleRates(universe: Universe, schedule: CrawlSchedule): Float64Array {
  const n = universe.pageCount
  return solveRates({
    changesPerDay: universe.trueChangesPerDay,
    importance: universe.importance,
    minCrawlsPerDay: new Float64Array(n),
    maxCrawlsPerDay: new Float64Array(n).fill(Number.POSITIVE_INFINITY),
    budgetCrawlsPerDay: universe.budgetCrawlsPerDay,
    objective: schedule === 'periodic' ? 'freshness-periodic' : 'freshness',
  }).crawlsPerDay
}

/** Nutch AdaptiveFetchSchedule constants: interval × (1 − 0.2) after a change, × (1 + 0.2) after none. */
export const NUTCH_DECREASE_FACTOR = 0.8
export const NUTCH_INCREASE_FACTOR = 1.2
export const NUTCH_MIN_INTERVAL_DAYS = 1 / 1440
export const NUTCH_MAX_INTERVAL_DAYS = 365

/** Nutch's interval update for one fetch. */
export function nutchNextIntervalDays(intervalDays: number, changed: boolean): number {
  const next = intervalDays * (changed ? NUTCH_DECREASE_FACTOR : NUTCH_INCREASE_FACTOR)
  return Math.min(NUTCH_MAX_INTERVAL_DAYS, Math.max(NUTCH_MIN_INTERVAL_DAYS, next))
}

/**
 * Nutch AdaptiveFetchSchedule: every page starts at the uniform interval n/R days (first fetch at a
 * uniform phase), the interval adapts after each fetch, and the next fetch is due one interval later.
 * Nutch has no budget of its own, so it runs on the fleet: R crawls per day, most overdue first.
 */
export function nutchPolicy(universe: Universe, random: Random): SimPolicy & { intervalDays: Float64Array } {
  const startDays = universe.pageCount / universe.budgetCrawlsPerDay
  const intervalDays = new Float64Array(universe.pageCount).fill(startDays)
  return {
    name: 'nutch',
    mode: 'fleet',
    intervalDays,
    start(ctx) {
      for (let i = 0; i < universe.pageCount; i++) ctx.setDue(i, random.next() * startDays)
    },
    onCrawl(page, nowDays, outcome) {
      // The first fetch has no previous fetch of its own to compare with: the interval stays.
      if (!outcome.first) intervalDays[page] = nutchNextIntervalDays(intervalDays[page]!, outcome.changed)
      return nowDays + intervalDays[page]!
    },
  }
}

export interface RecrawlLoopOptions {
  estimator: EstimatorName
  schedule: CrawlSchedule
  /** Simulated days between two solves (the service's reoptimizeSeconds). */
  reoptimizeDays: number
  random: Random
  /** Overrides of the production defaults (DEFAULT_SETTINGS), e.g. to study the floor or the prior. */
  settings?: Partial<Settings>
  /**
   * Diagnostic: feed the loop these change rates instead of its estimates (estimators still run for
   * the error column). Separates the cost of estimation from that of the loop itself (floor, solve
   * period, schedule).
   */
  knownChangesPerDay?: Float64Array
  /**
   * Diagnostic: false turns off the early crawls of src/domain/schedule.ts (exploration of pages
   * crawled once, probes of pages whose every interval changed), to measure what they buy.
   */
  earlyCrawls?: boolean
}

/** The objective that is exact for a schedule: periodic → freshness-periodic, Poisson → freshness. */
export function objectiveFor(schedule: CrawlSchedule): Objective {
  return schedule === 'periodic' ? 'freshness-periodic' : 'freshness'
}

/**
 * recrawl's loop as the service runs it, with the production modules:
 * - each crawl steps the page's estimators (`stepEstimators`; the first crawl is the baseline),
 *   takes the configured estimator from `currentEstimates`, sets the page's rate from the stored λ
 *   (`crawlsPerDayFor` → `rateForPage`, O(1)) and its next due time (`nextCrawlAtMs`, with the
 *   exploration and probe crawls of `earlyCrawlIntervalDays` and `probePaybackDays`, as ingest does);
 * - every `reoptimizeDays` the whole budget is re-solved (`solveRates`) and pages whose rate moved are
 *   re-timed (`retimedCrawlAtMs`, which keeps an exploration, probe or payback due time), as the
 *   optimiser run does;
 * - pages are registered at time 0 and their first crawls spread over n/R days, as a fleet working
 *   through the registration backlog at the budget would.
 * Settings: DEFAULT_SETTINGS with the given estimator and schedule, the objective exact for that
 * schedule, and budget R.
 */
export function recrawlPolicy(universe: Universe, options: RecrawlLoopOptions): SimPolicy {
  const n = universe.pageCount
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    ...options.settings,
    estimator: options.estimator,
    schedule: options.schedule,
    objective: options.settings?.objective ?? objectiveFor(options.schedule),
    budgetCrawlsPerDay: universe.budgetCrawlsPerDay,
  }
  const estimatorSettings: EstimatorSettings = {
    llnAlpha: settings.lln.alpha,
    saGamma: settings.sa.gamma,
    defaultChangesPerDay: settings.defaultChangesPerDay,
    minChangesPerDay: settings.minChangesPerDay,
    maxChangesPerDay: settings.maxChangesPerDay,
  }
  const { random } = options
  const states: EstimatorState[] = Array.from({ length: n }, () => emptyEstimatorState())
  const estimate = new Float64Array(n).fill(Number.NaN)
  const known = options.knownChangesPerDay
  /** The rate that drives scheduling: the estimate, or the known rate in the diagnostic variant. */
  const drivingEstimate = known ? new Float64Array(n).fill(Number.NaN) : estimate
  const rate = new Float64Array(n).fill(Number.NaN)
  const intervalStart = new Float64Array(n).fill(Number.NaN)
  const intervals = new Int32Array(n)
  let lambda: number | null = null
  const bounds = pageBounds({ changesPerDay: null, importance: 1, minCrawlsPerDay: null, maxCrawlsPerDay: null }, settings)
  const pageInputs = (page: number) => ({
    changesPerDay: Number.isNaN(drivingEstimate[page]!) ? null : drivingEstimate[page]!,
    importance: universe.importance[page]!,
    minCrawlsPerDay: null,
    maxCrawlsPerDay: null,
  })
  const toDays = (ms: number | null): number => (ms === null ? Number.POSITIVE_INFINITY : ms / MS_PER_DAY)

  return {
    name: `recrawl-${known ? 'known' : options.estimator}-${options.schedule}`,
    mode: 'scheduled',
    tickDays: options.reoptimizeDays,
    start(ctx) {
      const backlogDays = n / universe.budgetCrawlsPerDay
      for (let i = 0; i < n; i++) ctx.setDue(i, random.next() * backlogDays)
    },
    onCrawl(page: number, nowDays: number, outcome: CrawlOutcome): number {
      const start = intervalStart[page]!
      let lastIntervalDays: number | null = null
      const wasProbing = allIntervalsChanged(schedulingHistory(states[page]!, settings.estimator))
      if (!outcome.first && !Number.isNaN(start)) {
        lastIntervalDays = nowDays - start
        states[page] = stepEstimators(states[page]!, { intervalDays: lastIntervalDays, changed: outcome.changed, ageDays: outcome.ageDays }, estimatorSettings)
        const value = currentEstimates(states[page]!, estimatorSettings)[settings.estimator]
        estimate[page] = value ?? Number.NaN
        intervals[page] = intervals[page]! + 1
        if (known) drivingEstimate[page] = known[page]!
      }
      intervalStart[page] = nowDays
      const crawlsPerDay = crawlsPerDayFor(pageInputs(page), settings, lambda)
      rate[page] = crawlsPerDay
      const nowMs = nowDays * MS_PER_DAY
      const early = options.earlyCrawls !== false && !known
      const probe = !early
        ? null
        : earlyCrawlIntervalDays({
            ...schedulingHistory(states[page]!, settings.estimator),
            crawlsPerDay,
            minCrawlsPerDay: bounds.minCrawlsPerDay,
            explorationIntervalDays: n / universe.budgetCrawlsPerDay,
          })
      return toDays(
        nextCrawlAtMs({
          lastCrawledAtMs: nowMs,
          crawlsPerDay,
          schedule: settings.schedule,
          nowMs,
          random,
          earlyIntervalDays: probe,
          paybackDays: early
            ? probePaybackDays({ wasProbing, closedIntervalDays: lastIntervalDays, crawlsPerDay, minCrawlsPerDay: bounds.minCrawlsPerDay })
            : 0,
        }),
      )
    },
    onTick(nowDays: number, ctx: PolicyContext) {
      const changesPerDay = Float64Array.from(drivingEstimate, (e) => (Number.isNaN(e) ? settings.defaultChangesPerDay : e))
      const solution = solveRates({
        changesPerDay,
        importance: universe.importance,
        minCrawlsPerDay: new Float64Array(n).fill(bounds.minCrawlsPerDay),
        maxCrawlsPerDay: new Float64Array(n).fill(bounds.maxCrawlsPerDay),
        budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
        objective: settings.objective,
      })
      lambda = solution.lambda
      const nowMs = nowDays * MS_PER_DAY
      const early = options.earlyCrawls !== false && !known
      for (let i = 0; i < n; i++) {
        const next = solution.crawlsPerDay[i]!
        const old = rate[i]!
        if (!Number.isNaN(old) && Math.abs(next - old) <= RETIME_RELATIVE_CHANGE * Math.max(Math.abs(old), 1e-12)) continue
        rate[i] = next
        const last = ctx.lastCrawlDays(i)
        const due = ctx.dueDays(i)
        const retimed = retimedCrawlAtMs({
          lastCrawledAtMs: last === null ? null : last * MS_PER_DAY,
          nextCrawlAtMs: Number.isFinite(due) ? due * MS_PER_DAY : null,
          previousCrawlsPerDay: Number.isNaN(old) ? null : old,
          crawlsPerDay: next,
          schedule: settings.schedule,
          nowMs,
          random,
          explorationIntervalDays: early && intervals[i] === 0 ? n / universe.budgetCrawlsPerDay : null,
        })
        ctx.setDue(i, toDays(retimed))
      }
    },
    estimates: () => estimate,
    intervalCounts: () => intervals,
  }
}

/** The optimiser run rewrites a page only when its rate moved by more than this fraction (as src/domain/optimize.ts). */
const RETIME_RELATIVE_CHANGE = 1e-9
