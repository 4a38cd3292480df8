/**
 * Crawl policies compared at the same budget R (docs/math.md section 4): fixed-rate baselines, Nutch's
 * AdaptiveFetchSchedule, two oracles (the Azar et al. rates for Poisson changes at the true change rates,
 * and the distribution-aware rates for each page's true age law), and recrawl's own loop, which runs the
 * production page step (src/core/pageStep.ts) and optimiser unchanged.
 */
import {
  renewalParameters,
  type ChangeInterval,
  type EstimatorName,
  type FleetPriors,
} from '../math/estimators/index.ts'
import { pageRateEvidence, refitRatePriors, solveEstimates } from '../core/ratePriors.ts'
import { solveRates, type Objective } from '../math/optimizer/index.ts'
import { periodicRatesForAgeLaws } from '../math/renewal/lawRates.ts'
import type { Random } from '../math/random.ts'
import {
  addTrustCounts,
  signalInformativeShare,
  emptyTrustCounts,
  hostSignalCover,
  judgeSignals,
  trustOf,
  type PendingSignal,
  type TrustCounts,
} from '../core/signals.ts'
import {
  applyCrawl,
  applySignal,
  newPageState,
  rateMoved,
  registrationDueAtMs,
  retimePage,
  stepContext,
  type PageState,
} from '../core/pageStep.ts'
import { pageBounds } from '../core/crawlTiming.ts'
import { DEFAULT_SETTINGS, type CrawlSpacing, type Settings } from '../core/settings.ts'
import type { CrawlFinding, PolicyContext, SimPolicy } from './engine.ts'
import type { Universe } from './universe.ts'
import { NO_SIGNAL_COVER, solveRatesWithSignals, type SignalCover, type SignalCovers } from '../math/signalRates.ts'
import { SIM_SIGNAL_SOURCE, type SignalEvents } from './signalSources.ts'
import { MINUTES_PER_DAY, MS_PER_DAY } from '../math/units.ts'

/**
 * A page with a fixed rate ρ: periodic (first crawl at a uniform phase in [0, 1/ρ), then every 1/ρ)
 * or Poisson (exponential gaps with rate ρ). ρ = 0: never crawled.
 */
export function fixedRatePolicy(
  name: string,
  crawlsPerDay: Float64Array,
  spacing: CrawlSpacing,
  random: Random,
): SimPolicy {
  const gap = (page: number): number => {
    const rate = crawlsPerDay[page]!
    if (!(rate > 0)) return Number.POSITIVE_INFINITY
    return spacing === 'periodic' ? 1 / rate : random.exponential(rate)
  }
  return {
    name,
    mode: 'scheduled',
    start(ctx) {
      for (let i = 0; i < crawlsPerDay.length; i++)
        ctx.setDue(i, spacing === 'periodic' ? random.next() * gap(i) : gap(i))
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
 * (periodic → `freshness-periodic`, docs/math.md 3.3; Poisson → `freshness`, docs/math.md 3.1), no floor.
 */
export function oracleRates(universe: Universe, spacing: CrawlSpacing): Float64Array {
  const n = universe.pageCount
  return solveRates({
    changesPerDay: universe.trueChangesPerDay,
    importance: universe.importance,
    minCrawlsPerDay: new Float64Array(n),
    maxCrawlsPerDay: new Float64Array(n).fill(Number.POSITIVE_INFINITY),
    budgetCrawlsPerDay: universe.budgetCrawlsPerDay,
    objective: spacing === 'periodic' ? 'freshness-periodic' : 'freshness',
  }).crawlsPerDay
}

/**
 * The distribution-aware oracle (docs/math.md 3.5): periodic rates that maximise Σ μ_i f_i(ρ_i) with
 * f_i(ρ) = ρ ∫_0^{1/ρ} (1 − G_i(a)) da for each page's true age law G_i (Universe.ageLaws), no floor. On
 * Poisson pages it is the periodic oracle above.
 */
export function renewalOracleRates(universe: Universe): Float64Array {
  return periodicRatesForAgeLaws(universe.ageLaws, universe.importance, universe.budgetCrawlsPerDay).crawlsPerDay
}

/** Nutch AdaptiveFetchSchedule constants: interval × (1 − 0.2) after a change, × (1 + 0.2) after none. */
const NUTCH_DECREASE_FACTOR = 0.8
const NUTCH_INCREASE_FACTOR = 1.2
export const NUTCH_MIN_INTERVAL_DAYS = 1 / MINUTES_PER_DAY
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
    onCrawl(page, nowDays, finding) {
      // The first fetch has no previous fetch of its own to compare with: the interval stays.
      if (!finding.first) intervalDays[page] = nutchNextIntervalDays(intervalDays[page]!, finding.changed)
      return nowDays + intervalDays[page]!
    },
  }
}

interface RecrawlLoopOptions {
  estimator: EstimatorName
  spacing: CrawlSpacing
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
   * Diagnostic: at every solve, feed the loop each page's rate from every change up to that moment, seen by a
   * crawl or not (pastChangesPerDay). What a learner that knew the whole past, and nothing of the future, could
   * give: knownChangesPerDay knows the future too, as a replayed page's mean rate counts changes still to come.
   */
  knownPastChanges?: { minChanges: number }
  /**
   * Diagnostic: false turns off the early crawls of src/core/crawlTiming.ts (exploration of pages
   * crawled once, probes of pages whose every interval changed), to measure what they buy.
   */
  earlyCrawls?: boolean
  /**
   * A late crawl keeps its page's phase (StepContext.catchUpLateness). The service does this while leases have
   * budget left; the simulator's fleet is late only when it is busy, which is the case where it must not.
   */
  catchUpLateness?: boolean
  /**
   * The order the pages are sent in one registration (PUT /v1/pages), before the service puts the important ones
   * first; default the universe's order. The benchmark passes a random order: a replay's pages are in file-path
   * order, files of one directory change together, and that order must not decide which pages share a due time.
   */
  registrationOrder?: readonly number[]
  /**
   * Every page's copy at time 0 is a crawl the service already made (the baseline), so the loop's first crawl of
   * a page, at its registration slot, closes an interval of random length (default false: the first crawl is the
   * baseline and the next one comes a whole period later).
   */
  baselineAtStart?: boolean
  /**
   * Fit the fleet's change-rate priors at every solve and schedule with each page's posterior, as the service
   * does with settings.fleetPrior (default: the setting's default, off).
   */
  fleetPrior?: boolean
  /**
   * Change signals the service receives (src/sim/signalSources.ts), in order of receipt. `learned`: each goes
   * through applySignal with the trust its source has earned on the host (as POST /v1/signals does); `blind`:
   * every signal is trusted outright (P(changed | signal) = 1). Crawls judge them either way (trust is learned).
   */
  signals?: { events: SignalEvents; trust: 'learned' | 'blind' }
}

/** What the loop learned of a host's signal source: the counts behind its trust, and its trust. */
interface LearnedSignalTrust {
  host: string
  counts: TrustCounts
  precisionMean: number
  recallMean: number
}

/** The objective that is exact for a crawl spacing: periodic → freshness-periodic, Poisson → freshness. */
function objectiveFor(spacing: CrawlSpacing): Extract<Objective, 'freshness-periodic' | 'freshness'> {
  return spacing === 'periodic' ? 'freshness-periodic' : 'freshness'
}

/** The host of a page of a universe without hosts (the simulator has no host caps). */
const SIM_HOST = 'sim.example'

/** The crawl at time 0 that makes every page's copy in sync: content, no change information. */
const baselineReport = {
  crawledAtMs: 0,
  changed: null,
  contentHash: null,
  lastModifiedMs: null,
  httpStatus: null,
  etag: null,
  fetchError: null,
  retryAfterSeconds: null,
  redirectTo: null,
}

/**
 * recrawl's loop as the service runs it: each page is a PageState, and the production page step
 * (src/core/pageStep.ts) decides everything about it:
 * - each crawl is reported to `applyCrawl` (change flag and Last-Modified as a crawler would report them;
 *   the first crawl is the baseline), which steps the estimators, takes the scheduling estimate, derives
 *   the rate from the stored λ and sets the due time (with exploration, probes and paybacks);
 * - every `reoptimizeDays` the whole budget is solved again (`solveRates`, as the optimiser run does) and
 *   every page whose rate moved is re-timed by `retimePage`;
 * - pages are registered at time 0 (in `registrationOrder`, important pages first, as the service sorts them)
 *   with the registration's spread of first due times (registrationDueAtMs).
 * Crawl times are whole milliseconds, as the service stores them. Settings: DEFAULT_SETTINGS without the default
 * page cap, with the given estimator and schedule, the objective exact for that schedule, and budget R.
 */
export function recrawlPolicy(
  universe: Universe,
  options: RecrawlLoopOptions,
): SimPolicy & { pages(): readonly PageState[]; signalTrust(): LearnedSignalTrust[] } {
  const n = universe.pageCount
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    // The service's default page cap keeps a first run off a small site; the policies the simulator compares
    // with (the oracles, uniform, proportional) know no cap, so neither does the loop unless it is given one.
    maxCrawlsPerDay: null,
    ...options.settings,
    estimator: options.estimator,
    schedule: options.spacing,
    objective: options.settings?.objective ?? objectiveFor(options.spacing),
    budgetCrawlsPerDay: universe.budgetCrawlsPerDay,
    fleetPrior: options.fleetPrior ?? options.settings?.fleetPrior ?? DEFAULT_SETTINGS.fleetPrior,
  }
  const { random } = options
  const knownPast = options.knownPastChanges
  const known =
    options.knownChangesPerDay ?? (knownPast ? pastChangesPerDay(universe, 0, knownPast.minChanges) : undefined)
  const pages: PageState[] = Array.from({ length: n }, (_, i) =>
    newPageState(
      { host: universe.hostNames?.[universe.hostOfPage?.[i] ?? 0] ?? SIM_HOST, importance: universe.importance[i]! },
      0,
    ),
  )
  let optimizer: {
    lambda: number | null
    hostLambdas: Record<string, number>
    pages: number | null
    priors: FleetPriors | null
    signalCover: SignalCovers | null
  } = {
    lambda: null,
    hostLambdas: {},
    pages: null,
    priors: null,
    signalCover: null,
  }
  const fleetPrior = settings.fleetPrior && !known
  const context = (nowMs: number, page: number) => {
    const ctx = stepContext(settings, optimizer, nowMs, random)
    ctx.catchUpLateness = options.catchUpLateness === true
    if (options.earlyCrawls === false || known) ctx.earlyCrawls = false
    if (known && pages[page]!.intervals > 0) ctx.knownChangesPerDay = known[page]!
    return ctx
  }
  // Signals, as the service keeps them (src/domain/signals.ts): the earliest pending signal per page (one source),
  // the trust counts per host and for the source, and the hosts the source has signalled on.
  const signals = options.signals
  const pendingSignals: (PendingSignal[] | undefined)[] = new Array(n)
  const hostTrust = new Map<string, TrustCounts>()
  const sourceTrust = emptyTrustCounts()
  const hostSources = new Set<string>()
  let nextSignal = 0
  const hostCounts = (host: string): TrustCounts => {
    let c = hostTrust.get(host)
    if (!c) hostTrust.set(host, (c = emptyTrustCounts()))
    return c
  }
  /** What the crawl of a page that just closed (changed true or false) or started (null) an interval judges. */
  const judgeCrawl = (page: number, crawledAtMs: number, changed: boolean | null) => {
    const pending = pendingSignals[page]
    const host = pages[page]!.host
    if (changed === null) {
      if (pending) pendingSignals[page] = pending.filter((p) => p.signalledAtMs > crawledAtMs)
      return
    }
    if (!pending && !hostSources.has(host)) return
    const verdict = judgeSignals(pending ?? [], crawledAtMs, changed, hostSources.has(host) ? [SIM_SIGNAL_SOURCE] : [])
    pendingSignals[page] = verdict.stillPending.length > 0 ? verdict.stillPending : undefined
    for (const counts of verdict.increments.values()) {
      addTrustCounts(hostCounts(host), counts)
      addTrustCounts(sourceTrust, counts)
    }
  }
  // Every interval between two content crawls of each page, for the estimation columns (src/sim/fewCrawls.ts).
  const histories: ChangeInterval[][] = Array.from({ length: n }, () => [])
  const lastContentMs = new Float64Array(n).fill(Number.NaN)
  const toDays = (ms: number | null): number => (ms === null ? Number.POSITIVE_INFINITY : ms / MS_PER_DAY)
  /** Due times as the service stores them: whole milliseconds. */
  const stored = (page: PageState): PageState =>
    page.nextCrawlAtMs === null ? page : { ...page, nextCrawlAtMs: Math.floor(page.nextCrawlAtMs) }

  return {
    name: `recrawl-${knownPast ? 'known-past' : known ? 'known' : options.estimator}-${settings.objective === 'freshness-renewal' ? 'renewal' : options.spacing}`,
    mode: 'scheduled',
    tickDays: options.reoptimizeDays,
    pages: () => pages,
    start(ctx) {
      // Registered at time 0, as PUT /v1/pages registers them: in the order given, the important pages first.
      const registration = stepContext(settings, optimizer, 0, random)
      const order = options.registrationOrder
        ? Array.from(options.registrationOrder)
        : Array.from({ length: n }, (_, i) => i)
      order.sort((a, b) => universe.importance[b]! - universe.importance[a]!)
      for (let k = 0; k < n; k++) {
        const i = order[k]!
        if (options.baselineAtStart) {
          pages[i] = applyCrawl(pages[i]!, baselineReport, registration).page
          lastContentMs[i] = 0
        }
        const due = registrationDueAtMs(registration, k, n)
        pages[i] = stored({ ...pages[i]!, nextCrawlAtMs: due })
        ctx.setDue(i, toDays(pages[i]!.nextCrawlAtMs))
      }
    },
    onCrawl(page: number, nowDays: number, finding: CrawlFinding): number {
      const nowMs = Math.round(nowDays * MS_PER_DAY)
      const report = {
        crawledAtMs: nowMs,
        changed: finding.changed,
        contentHash: null,
        lastModifiedMs: finding.ageDays === null ? null : nowMs - Math.round(finding.ageDays * MS_PER_DAY),
        httpStatus: null,
        etag: null,
        fetchError: null,
        retryAfterSeconds: null,
        redirectTo: null,
      }
      const step = applyCrawl(pages[page]!, report, context(nowMs, page))
      pages[page] = stored(step.page)
      if (step.outcome.kind === 'inOrder' && step.outcome.fetch === 'content') {
        if (signals) judgeCrawl(page, nowMs, step.outcome.changed)
        if (!Number.isNaN(lastContentMs[page]!) && step.outcome.changed !== null)
          histories[page]!.push({
            intervalDays: (nowMs - lastContentMs[page]!) / MS_PER_DAY,
            changed: step.outcome.changed,
          })
        lastContentMs[page] = nowMs
      }
      return toDays(pages[page]!.nextCrawlAtMs)
    },
    nextEventDays: () =>
      signals && nextSignal < signals.events.page.length
        ? signals.events.receivedDays[nextSignal]!
        : Number.POSITIVE_INFINITY,
    onEvent(nowDays: number, ctx: PolicyContext) {
      const { events, trust } = signals!
      const k = nextSignal++
      const i = events.page[k]!
      const page = pages[i]!
      const nowMs = Math.round(nowDays * MS_PER_DAY)
      const changed = events.changedDays[k]!
      const signalledAtMs = Number.isNaN(changed) ? nowMs : Math.round(changed * MS_PER_DAY)
      hostSources.add(page.host)
      const informativeShare =
        trust === 'blind' ? 1 : signalInformativeShare(trustOf(hostCounts(page.host), sourceTrust))
      const step = applySignal(page, { signalledAtMs, pageLeased: false }, informativeShare, context(nowMs, i))
      if (step.effect !== 'stale') {
        // One pending signal per page and source: the earliest.
        const pending = pendingSignals[i]
        if (!pending) pendingSignals[i] = [{ source: SIM_SIGNAL_SOURCE, signalledAtMs }]
        else if (signalledAtMs < pending[0]!.signalledAtMs) pending[0] = { source: SIM_SIGNAL_SOURCE, signalledAtMs }
      }
      if (step.effect === 'pulled') {
        pages[i] = { ...page, nextCrawlAtMs: step.nextCrawlAtMs }
        ctx.setDue(i, toDays(step.nextCrawlAtMs))
      }
    },
    signalTrust: () =>
      [...hostTrust].map(([host, counts]) => {
        const t = trustOf(counts, sourceTrust)
        return { host, counts: { ...counts }, precisionMean: t.precision.mean, recallMean: t.recall.mean }
      }),
    onTick(nowDays: number, ctx: PolicyContext) {
      if (knownPast && known) known.set(pastChangesPerDay(universe, nowDays, knownPast.minChanges))
      const bounds = pageBounds({ minCrawlsPerDay: null, maxCrawlsPerDay: null }, settings)
      // As the optimiser run: the priors are refitted first, and a page without an estimate takes its host's.
      const evidence = pages.map((p) => ({
        host: p.host,
        evidence: fleetPrior ? pageRateEvidence(p.estimator, settings, p.noisy) : null,
        intervals: p.intervals,
        storedChangesPerDay: p.changesPerDay,
      }))
      const priors = fleetPrior
        ? refitRatePriors(evidence, settings, optimizer.priors, Math.round(nowDays * MS_PER_DAY))
        : null
      const solved = solveEstimates(evidence, settings, priors)
      const laws = pages.map((p, i) => {
        const changesPerDay = known?.[i] ?? solved.changesPerDay[i]!
        const estimate = known === undefined && solved.store[i] === 1 ? changesPerDay : null
        const law =
          settings.objective === 'freshness-renewal'
            ? renewalParameters(p.estimator, changesPerDay)
            : { changesPerDay, ageShape: Number.POSITIVE_INFINITY }
        return { ...law, estimate }
      })
      // As the optimiser run: where the hosts' trusted signals take pages over, their blind crawls are solved for
      // the changes left uncovered, under the budget the signals' crawls leave (docs/math.md 5.4). Blind trust
      // keeps the schedule.
      const hostCovers: Record<string, SignalCover> = {}
      if (signals?.trust === 'learned')
        for (const [host, counts] of hostTrust) {
          const cover = hostSignalCover([trustOf(counts, sourceTrust)])
          if (cover.share > 0) hostCovers[host] = cover
        }
      const problem = {
        changesPerDay: Float64Array.from(laws, (law) => law.changesPerDay),
        ageShape: Float64Array.from(laws, (law) => law.ageShape),
        importance: universe.importance,
        minCrawlsPerDay: new Float64Array(n).fill(bounds.minCrawlsPerDay),
        maxCrawlsPerDay: new Float64Array(n).fill(bounds.maxCrawlsPerDay),
        budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
        objective: settings.objective,
        // As the optimiser run: the search starts from the previous solve's multiplier.
        ...(optimizer.lambda === null ? {} : { lambdaHint: optimizer.lambda }),
      }
      const withSignals =
        Object.keys(hostCovers).length > 0
          ? solveRatesWithSignals(
              problem,
              pages.map((p) => hostCovers[p.host] ?? NO_SIGNAL_COVER),
            )
          : null
      const solution = withSignals?.solution ?? solveRates(problem)
      const signalCover: SignalCovers | null = withSignals
        ? { plainLambda: withSignals.plainLambda, hosts: hostCovers }
        : null
      optimizer = { lambda: solution.lambda, hostLambdas: {}, pages: n, priors, signalCover }
      const nowMs = Math.round(nowDays * MS_PER_DAY)
      for (let i = 0; i < n; i++) {
        const rate = solution.crawlsPerDay[i]!
        // As the optimiser run: an estimate the new priors moved is stored with the page.
        const estimate = laws[i]!.estimate
        const page = estimate === null ? pages[i]! : { ...pages[i]!, changesPerDay: estimate }
        if (!rateMoved(page.crawlsPerDay, rate) && estimate === null) continue
        pages[i] = stored({ ...page, ...retimePage(page, context(nowMs, i), { solvedCrawlsPerDay: rate }) })
        ctx.setDue(i, toDays(pages[i]!.nextCrawlAtMs))
      }
    },
    estimates: () => Float64Array.from(pages, (p) => p.changesPerDay ?? Number.NaN),
    intervalCounts: () => Int32Array.from(pages, (p) => p.intervals),
    histories: () => histories,
  }
}

/**
 * Each page's rate from every change up to `nowDays`: max(k, minChanges) / max(nowDays, 1 day), k its changes
 * in (0, nowDays]. minChanges > 0 keeps a page that has not changed yet from a rate of 0 (the smoothing a learner
 * needs; BENCHMARKS.md measures several).
 */
export function pastChangesPerDay(universe: Universe, nowDays: number, minChanges: number): Float64Array {
  const { changeDays, changeOffsets } = universe
  const days = Math.max(nowDays, 1)
  return Float64Array.from({ length: universe.pageCount }, (_, i) => {
    // Changes of page i are ascending: the first index past nowDays, by bisection.
    let lo = changeOffsets[i]!
    let hi = changeOffsets[i + 1]!
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (changeDays[mid]! <= nowDays) lo = mid + 1
      else hi = mid
    }
    return Math.max(lo - changeOffsets[i]!, minChanges) / days
  })
}
