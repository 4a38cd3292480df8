/**
 * The benchmark matrix: workloads × importance × policies, each run a seeded, independent task, so
 * the same options give the same numbers whether the tasks run in one thread or several.
 */
import { ESTIMATOR_NAMES, type EstimatorName } from '../math/estimators/index.ts'
import { createRandom } from '../math/random.ts'
import { runPolicy, type RunResult, type SimPolicy } from './engine.ts'
import {
  fixedRatePolicy,
  nutchPolicy,
  oracleRates,
  proportionalRates,
  recrawlPolicy,
  renewalOracleRates,
  uniformRates,
} from './policies.ts'
import {
  DEFAULT_REPLAY_DIR,
  readReplayFile,
  REPLAY_FILES,
  replayUniverse,
  type ReplayData,
  type ReplayWorkload,
} from './replay.ts'
import {
  DEFAULT_LAST_MODIFIED_SHARE,
  deriveSeed,
  syntheticUniverse,
  type ImportanceKind,
  type SyntheticWorkload,
  type Universe,
} from './universe.ts'
import { join } from 'node:path'
import {
  hostSignalProfiles,
  signalEvents,
  type SignalProfile,
  type SignalSetup,
  type SignalTruth,
} from './signalSources.ts'
import { crawlSpacingSchema, type CrawlSpacing } from '../core/settings.ts'

export const WORKLOADS = ['poisson', 'pareto', 'weibull', 'drift', 'replay-git', 'replay-tldr', 'replay-peps'] as const
export type Workload = (typeof WORKLOADS)[number]
export const IMPORTANCE_KINDS: readonly ImportanceKind[] = ['zipf', 'equal']
const SPACINGS: readonly CrawlSpacing[] = crawlSpacingSchema.options

/** The production default (DEFAULT_SETTINGS: estimator mle, schedule periodic). */
export const DEFAULT_LOOP_POLICY = 'recrawl-mleAdaptive-periodic'
/** The Poisson-model oracle: periodic crawling at the rates of docs/math.md 3.3 for the true change rates. */
export const ORACLE_POLICY = 'oracle-periodic'
/** The distribution-aware oracle: periodic crawling at the rates of docs/math.md 3.5 for the true age laws. */
export const RENEWAL_ORACLE_POLICY = 'oracle-renewal'

/**
 * Diagnostic: recrawl's default loop fed each page's true mean change rate instead of its estimate (Poisson
 * objective): the upper bound of what learning the rates can give that loop.
 */
const KNOWN_RATE_POLICY = 'known-mean-rate'
/**
 * Diagnostic: the same loop fed at each solve each page's rate from every change so far, seen or not (pastChangesPerDay,
 * at least KNOWN_PAST_MIN_CHANGES; `known-past-rate-<k>` sets k): the upper bound of learning from the past alone.
 */
const KNOWN_PAST_POLICY = 'known-past-rate'
const KNOWN_PAST_MIN_CHANGES = 1
const KNOWN_PAST_VARIANT = /^known-past-rate(?:-(\d+(?:\.\d+)?))?$/

const BASELINE_POLICIES = [
  'uniform',
  'proportional',
  'nutch',
  'oracle-periodic',
  'oracle-renewal',
  'oracle-poisson',
  KNOWN_RATE_POLICY,
  KNOWN_PAST_POLICY,
] as const

/**
 * Loops with the distribution-aware objective (docs/math.md 3.5): `recrawl-<estimator>-renewal` is the
 * periodic schedule with `objective: "freshness-renewal"`, for the estimators that can drive scheduling.
 */
const RENEWAL_LOOP_ESTIMATORS: readonly EstimatorName[] = ['mle', 'mleAdaptive']

/** Every policy name, baselines first, then recrawl-<estimator>-<schedule>, then the renewal loops. */
export const POLICIES: readonly string[] = [
  ...BASELINE_POLICIES,
  ...SPACINGS.flatMap((spacing) => ESTIMATOR_NAMES.map((estimator) => `recrawl-${estimator}-${spacing}`)),
  ...RENEWAL_LOOP_ESTIMATORS.map((estimator) => `recrawl-${estimator}-renewal`),
  // Without the fleet's priors (settings.fleetPrior false, docs/math.md 1.12): each page learns from its own crawls.
  `${DEFAULT_LOOP_POLICY}-alone`,
  'recrawl-mleAdaptive-renewal-alone',
  // With --signals: the default loop that ignores the signals, and one that trusts every signal outright.
  `${DEFAULT_LOOP_POLICY}-ignore-signals`,
  `${DEFAULT_LOOP_POLICY}-blind-signals`,
]

export interface SimOptions {
  pageCount: number
  horizonDays: number
  warmupDays: number
  seed: number
  /** Every workload: R = this × pages. */
  crawlsPerPagePerDay: number
  /** Replay workloads, when set: R = this × Σ Δ instead (the older way to give a replay's budget). */
  replayCrawlsPerChange: number | null
  /** Share of hosts that send a usable Last-Modified. */
  lastModifiedShare: number
  /**
   * Each page's first crawl by recrawl's loop closes an interval that began with an in-sync copy at time 0
   * (true, as a service that fetched every page at registration and spread the first recrawls), or is a
   * baseline one whole interval before the next (false, the older setup).
   */
  baselineAtStart: boolean
  reoptimizeDays: number
  replayDir: string
  /**
   * 'fleet' (default): every policy is served by a crawler fleet that completes R crawls per day,
   * most overdue page first, as the service's leases hand pages out, so no policy can exceed the
   * budget. 'scheduled': each policy crawls at its own due times (Nutch stays on the fleet).
   */
  engineMode: 'fleet' | 'scheduled'
  /**
   * The hosts' change-signal sources (src/sim/signalSources.ts): one profile for every host, or the realistic
   * mix; null: no signals. recrawl's loops use them with learned trust, unless the policy ignores them
   * (-ignore-signals) or trusts them blindly (-blind-signals).
   */
  signals: SignalSetup | null
}

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  pageCount: 2000,
  horizonDays: 60,
  warmupDays: 20,
  seed: 1,
  crawlsPerPagePerDay: 1,
  replayCrawlsPerChange: null,
  lastModifiedShare: DEFAULT_LAST_MODIFIED_SHARE,
  baselineAtStart: true,
  reoptimizeDays: 1,
  replayDir: DEFAULT_REPLAY_DIR,
  engineMode: 'fleet',
  signals: null,
}

export interface SimTask {
  workload: Workload
  importance: ImportanceKind
  policy: string
}

/** A host's signal source: its profile, what it truly did, and the trust recrawl's loop learned of it. */
interface SignalHostResult {
  host: string
  profile: SignalProfile
  /** Signals judged by a crawl, and the learned precision (posterior mean) against the truth (share of true signals). */
  signalsJudged: number
  precisionLearned: number
  precisionTruth: number | null
  /** Changes crawls saw, and the learned recall against the truth (share of the changes signalled). */
  changesSeen: number
  recallLearned: number
  recallTruth: number | null
}

export interface TaskResult extends SimTask {
  result: Omit<RunResult, 'pageFreshDays'>
  /** Per host with a signal source, for the loops that learn trust (SimOptions.signals set). */
  signalHosts?: SignalHostResult[]
  budgetCrawlsPerDay: number
  timeScale: string | null
  elapsedMs: number
}

/** Tasks grouped by universe (workload, importance), so a worker reuses the universe it built. */
export function planTasks(
  workloads: readonly Workload[],
  importance: readonly ImportanceKind[],
  policies: readonly string[],
): SimTask[] {
  const tasks: SimTask[] = []
  for (const workload of workloads)
    for (const kind of importance) for (const policy of policies) tasks.push({ workload, importance: kind, policy })
  return tasks
}

/** Keeps both oracles in every selection (every ratio is to them) and preserves the canonical order. */
export function selectPolicies(filters: readonly string[] | null): string[] {
  if (filters === null || filters.length === 0) return [...POLICIES]
  const chosen = POLICIES.filter(
    (p) =>
      p === ORACLE_POLICY ||
      p === RENEWAL_ORACLE_POLICY ||
      filters.some((f) => p === f || p.startsWith(`${f}-`) || p.startsWith(f)),
  )
  // known-past-rate-<k>: the past-rate bound with another smoothing (KNOWN_PAST_POLICY).
  const pastVariants = filters.filter((f) => KNOWN_PAST_VARIANT.test(f) && !chosen.includes(f))
  const unknown = filters.filter((f) => !POLICIES.some((p) => p === f || p.startsWith(f)) && !pastVariants.includes(f))
  if (unknown.length > 0) throw new Error(`unknown policy ${unknown.join(', ')}; known: ${POLICIES.join(', ')}`)
  return [...chosen, ...pastVariants]
}

/** Cache of replay files per thread (they are read once). */
const replayCache = new Map<string, Promise<ReplayData>>()

export async function buildUniverse(
  workload: Workload,
  importance: ImportanceKind,
  options: SimOptions,
): Promise<Universe> {
  const random = createRandom(deriveSeed(options.seed, 'changes', workload))
  const importanceRandom = createRandom(deriveSeed(options.seed, 'importance', workload, importance))
  const lastModifiedRandom = createRandom(deriveSeed(options.seed, 'last-modified', workload))
  const lastModifiedShare = options.lastModifiedShare
  if (workload in REPLAY_FILES) {
    const path = join(options.replayDir, REPLAY_FILES[workload as ReplayWorkload])
    let data = replayCache.get(path)
    if (!data) {
      data = readReplayFile(path)
      replayCache.set(path, data)
    }
    return replayUniverse({
      workload,
      data: await data,
      importanceKind: importance,
      pageCount: options.pageCount,
      horizonDays: options.horizonDays,
      warmupDays: options.warmupDays,
      crawlsPerPagePerDay: options.crawlsPerPagePerDay,
      crawlsPerChange: options.replayCrawlsPerChange,
      random,
      importanceRandom,
      lastModifiedShare,
      lastModifiedRandom,
    })
  }
  return syntheticUniverse({
    workload: workload as SyntheticWorkload,
    importanceKind: importance,
    pageCount: options.pageCount,
    horizonDays: options.horizonDays,
    warmupDays: options.warmupDays,
    crawlsPerPagePerDay: options.crawlsPerPagePerDay,
    random,
    importanceRandom,
    hostRandom: createRandom(deriveSeed(options.seed, 'hosts', workload)),
    lastModifiedShare,
    lastModifiedRandom,
  })
}

export function createPolicy(
  name: string,
  universe: Universe,
  options: SimOptions,
  seedLabels: string[],
  signals: ReturnType<typeof signalEvents> | null = universeSignals(universe, options),
): SimPolicy {
  // Both oracles draw the same phases, so where their rates agree (Poisson pages) so does their freshness. A loop
  // that ignores or blindly trusts the signals draws what the loop that learns them draws (common random numbers),
  // so the difference between them is the signals', not the seed's.
  const seedName = name === RENEWAL_ORACLE_POLICY ? ORACLE_POLICY : name.replace(/-(ignore|blind)-signals$/, '')
  const random = createRandom(deriveSeed(options.seed, 'policy', seedName, ...seedLabels))
  switch (name) {
    case 'uniform':
      return fixedRatePolicy(name, uniformRates(universe), 'periodic', random)
    case 'proportional':
      return fixedRatePolicy(name, proportionalRates(universe), 'periodic', random)
    case 'nutch':
      return nutchPolicy(universe, random)
    case 'oracle-periodic':
      return fixedRatePolicy(name, oracleRates(universe, 'periodic'), 'periodic', random)
    case 'oracle-renewal':
      return fixedRatePolicy(name, renewalOracleRates(universe), 'periodic', random)
    case 'oracle-poisson':
      return fixedRatePolicy(name, oracleRates(universe, 'poisson'), 'poisson', random)
  }
  const knownPast = KNOWN_PAST_VARIANT.exec(name)
  const match = /^recrawl-(\w+)-(periodic|poisson|renewal)(-alone)?(-ignore-signals|-blind-signals)?$/.exec(
    name === KNOWN_RATE_POLICY || knownPast ? DEFAULT_LOOP_POLICY : name,
  )
  const estimator = match?.[1] as EstimatorName | undefined
  if (!match || estimator === undefined || !ESTIMATOR_NAMES.includes(estimator))
    throw new Error(`unknown policy ${name}`)
  const renewal = match[2] === 'renewal'
  // A random registration order: the universe's own order (a replay's file paths) says nothing a client would know.
  const registrationRandom = createRandom(deriveSeed(options.seed, 'registration', ...seedLabels))
  const registrationOrder = Array.from({ length: universe.pageCount }, (_, i) => i)
  for (let i = registrationOrder.length - 1; i > 0; i--) {
    const j = registrationRandom.int(i + 1)
    ;[registrationOrder[i], registrationOrder[j]] = [registrationOrder[j]!, registrationOrder[i]!]
  }
  return recrawlPolicy(universe, {
    estimator,
    registrationOrder,
    spacing: renewal ? 'periodic' : (match[2] as CrawlSpacing),
    ...(renewal ? { settings: { objective: 'freshness-renewal' as const } } : {}),
    reoptimizeDays: options.reoptimizeDays,
    random,
    baselineAtStart: options.baselineAtStart,
    fleetPrior: match[3] === undefined,
    ...(name === KNOWN_RATE_POLICY ? { knownChangesPerDay: universe.trueChangesPerDay } : {}),
    ...(knownPast ? { knownPastChanges: { minChanges: Number(knownPast[1] ?? KNOWN_PAST_MIN_CHANGES) } } : {}),
    ...(signals && match[4] !== '-ignore-signals'
      ? { signals: { events: signals.events, trust: match[4] === '-blind-signals' ? 'blind' : 'learned' } }
      : {}),
  })
}

/** The signals of a universe under SimOptions.signals: the same for every policy of the universe. */
function universeSignals(universe: Universe, options: SimOptions): ReturnType<typeof signalEvents> | null {
  if (options.signals === null) return null
  const random = createRandom(deriveSeed(options.seed, 'signals', universe.workload))
  const profiles = hostSignalProfiles(options.signals, universe.hostNames?.length ?? 1, random)
  return signalEvents(universe, profiles, random)
}

function signalHostResults(
  policy: SimPolicy,
  universe: Universe,
  truth: readonly SignalTruth[],
): SignalHostResult[] | undefined {
  if (!('signalTrust' in policy)) return undefined
  const learned = (policy as ReturnType<typeof recrawlPolicy>).signalTrust()
  const hostIndex = new Map((universe.hostNames ?? []).map((h, i) => [h, i]))
  return learned.map((l) => {
    const t = truth[hostIndex.get(l.host) ?? 0]!
    return {
      host: l.host,
      profile: t.profile,
      signalsJudged: l.counts.signalsJudged,
      precisionLearned: l.precisionMean,
      precisionTruth: t.signals > 0 ? t.truthfulSignals / t.signals : null,
      changesSeen: l.counts.changesSeen,
      recallLearned: l.recallMean,
      recallTruth: t.changes > 0 ? t.changesSignalled / t.changes : null,
    }
  })
}

/** Runs one task. `universe` may be passed when the caller already built it. */
export async function runTask(
  task: SimTask,
  options: SimOptions,
  onProgress?: (fraction: number) => void,
  universe?: Universe,
): Promise<TaskResult> {
  const u = universe ?? (await buildUniverse(task.workload, task.importance, options))
  const started = performance.now()
  const signals = universeSignals(u, options)
  const policy = createPolicy(task.policy, u, options, [task.workload, task.importance], signals)
  const mode = options.engineMode === 'fleet' ? 'fleet' : policy.mode
  const { pageFreshDays: _perPage, ...result } = runPolicy(u, policy, onProgress ? { onProgress, mode } : { mode })
  const signalHosts = signals ? signalHostResults(policy, u, signals.truth) : undefined
  return {
    ...task,
    result,
    ...(signalHosts ? { signalHosts } : {}),
    budgetCrawlsPerDay: u.budgetCrawlsPerDay,
    timeScale: u.timeScale,
    elapsedMs: performance.now() - started,
  }
}
