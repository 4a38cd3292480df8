/**
 * End-to-end freshness run against a live service started with SIMULATED_CLOCK=true: this process
 * plays the crawler fleet over HTTP, the service schedules. Simulated time starts at SIM_START and
 * moves in steps through `PUT /v1/clock`; at each step the fleet takes every due page
 * (`POST /v1/leases`), "crawls" it against the known change times, and reports the result with the
 * lease id (`POST /v1/observations`); `POST /v1/optimize` runs every reoptimize period. Freshness is
 * scored exactly as in the in-process engine and compared with the in-process oracle, loop and Nutch
 * on the same universe and budget. Every call goes through the typed client (@recrawl/client, packages/client). Loopback
 * only, bounded in steps and wall time.
 */
import { createRecrawlClient, ok } from '@recrawl/client'
import { FreshnessTracker, runPolicy } from './engine.ts'
import {
  buildUniverse,
  createPolicy,
  DEFAULT_LOOP_POLICY,
  DEFAULT_SIM_OPTIONS,
  type SimOptions,
  type Workload,
} from './runner.ts'
import type { ImportanceKind } from './universe.ts'
import { HOURS_PER_DAY, MS_PER_DAY } from '../math/units.ts'
import { isLoopbackHost } from '../loopback.ts'

interface EndToEndOptions {
  url: string
  workload: Workload
  importance: ImportanceKind
  pageCount: number
  horizonDays: number
  warmupDays: number
  seed: number
  crawlsPerPagePerDay: number
  reoptimizeDays: number
  /** Simulated days between two clock steps of the fleet. */
  stepDays: number
  /** The fleet fetches each page this long after it could first have (the later of its due time and the previous step). */
  fleetLagDays: number
  /** The run is abandoned after this much wall time. */
  maxWallSeconds: number
  /** Share of hosts whose pages report Last-Modified (SimOptions.lastModifiedShare; 0: the crawler reports none). */
  lastModifiedShare: number
  /** Where the replay workloads' histories are (SimOptions.replayDir). */
  replayDir: string
  log: (line: string) => void
}

export const DEFAULT_E2E_OPTIONS: Omit<EndToEndOptions, 'url' | 'log'> = {
  workload: 'poisson',
  importance: 'equal',
  pageCount: 200,
  horizonDays: 30,
  warmupDays: 10,
  seed: 1,
  crawlsPerPagePerDay: 1,
  reoptimizeDays: 1,
  stepDays: 1 / 48,
  fleetLagDays: 0,
  maxWallSeconds: 900,
  lastModifiedShare: DEFAULT_SIM_OPTIONS.lastModifiedShare,
  replayDir: DEFAULT_SIM_OPTIONS.replayDir,
}

/** Simulated time 0 (the service's simulated clock starts at the epoch and is moved here first). */
const SIM_START_MS = Date.UTC(2026, 0, 1)
/** Most pages per lease and per observation batch (the lease endpoint's own limit). */
const BATCH = 1000

interface EndToEndReport {
  options: Omit<EndToEndOptions, 'log'>
  budgetCrawlsPerDay: number
  service: { freshness: number; crawls: number; crawlsUsed: number; requests: number; wallSeconds: number }
  inProcess: { policy: string; freshness: number; crawlsUsed: number }[]
  /** Service freshness / in-process oracle-periodic freshness (the Poisson-model oracle). */
  ratioToOracle: number
  /** Service freshness / in-process oracle-renewal freshness (the distribution-aware oracle). */
  ratioToRenewalOracle: number
  /**
   * Crawls reported per simulated day / budgetCrawlsPerDay, for each whole day after the warm-up
   * (day k is [warmupDays + k, warmupDays + k + 1)): how much of the budget the fleet used.
   */
  budgetUsePerDay: number[]
  /** Pages handed out per whole day after the warm-up / budget, and per hour / the budget's hourly share. */
  handOutsPerDay: number[]
  handOutsPerHour: number[]
  text: string
}

export async function runEndToEnd(options: EndToEndOptions): Promise<EndToEndReport> {
  const base = new URL(options.url)
  if (!isLoopbackHost(base.hostname)) throw new Error(`--e2e only drives a service on loopback, not ${base.hostname}`)
  const started = Date.now()
  let requests = 0
  const api = createRecrawlClient({
    baseUrl: base.origin,
    timeoutMs: 60_000,
    fetch: (request, init) => {
      if ((Date.now() - started) / 1000 > options.maxWallSeconds)
        throw new Error(`e2e run exceeded ${options.maxWallSeconds} s of wall time`)
      requests++
      return fetch(request, init)
    },
  })

  const simOptions: SimOptions = {
    ...DEFAULT_SIM_OPTIONS,
    pageCount: options.pageCount,
    horizonDays: options.horizonDays,
    warmupDays: options.warmupDays,
    seed: options.seed,
    crawlsPerPagePerDay: options.crawlsPerPagePerDay,
    reoptimizeDays: options.reoptimizeDays,
    lastModifiedShare: options.lastModifiedShare,
    replayDir: options.replayDir,
  }
  // The universe the in-process policies are scored on too (synthetic, or replayed histories).
  const universe = await buildUniverse(options.workload, options.importance, simOptions)
  const n = universe.pageCount
  // Pages of one simulated host (a replay's directory) share a host name: host-<index>.example.
  const urlOf = (i: number) => `https://host-${universe.hostOfPage?.[i] ?? 0}.example/page/${i}`
  const indexOf = new Map<string, number>()
  for (let i = 0; i < n; i++) indexOf.set(urlOf(i), i)

  // Preconditions: a simulated clock, and no pages of anyone else spending the budget.
  try {
    await ok(api.GET('/v1/clock'))
  } catch (err) {
    throw new Error(
      `the service has no simulated clock (start it with SIMULATED_CLOCK=true): ${err instanceof Error ? err.message : err}`,
      { cause: err },
    )
  }
  const existing = await ok(api.GET('/v1/pages', { params: { query: { limit: 1 } } }))
  if (existing.pages.length > 0)
    throw new Error('the service already has pages: start it on an empty database (e.g. a fresh DATA_DIR)')

  const isoAt = (days: number) => new Date(SIM_START_MS + Math.round(days * MS_PER_DAY)).toISOString()
  await ok(api.PUT('/v1/clock', { body: { now: isoAt(0) } }))
  await ok(
    api.PATCH('/v1/settings', { body: { budgetCrawlsPerDay: universe.budgetCrawlsPerDay, reoptimizeSeconds: 86_400 } }),
  )
  for (let from = 0; from < n; from += BATCH) {
    const pages = []
    for (let i = from; i < Math.min(n, from + BATCH); i++)
      pages.push({ url: urlOf(i), importance: universe.importance[i]! })
    await ok(api.PUT('/v1/pages', { body: { pages } }))
  }
  options.log(
    `e2e: registered ${n} pages, budget ${universe.budgetCrawlsPerDay.toFixed(1)} crawls/day, horizon ${options.horizonDays} days`,
  )

  const tracker = new FreshnessTracker(universe)
  let crawls = 0
  // Leased pages the fleet has not reported yet, and the latest fetch time given to each page.
  const pending: { i: number; crawlDays: number; url: string; leaseId: string }[] = []
  const fetchedDays = new Array<number>(n).fill(-1)
  const leaseSeconds = Math.min(
    86_400,
    Math.max(3600, Math.ceil((options.fleetLagDays + 2 * options.stepDays) * 86_400)),
  )
  /** Reports the fetches made by `nowDays`, in fetch order, in batches. */
  const report = async (nowDays: number) => {
    pending.sort((a, b) => a.crawlDays - b.crawlDays)
    let done = pending.findIndex((p) => p.crawlDays > nowDays + 1e-12)
    if (done === -1) done = pending.length
    const fetched = pending.splice(0, done)
    for (let from = 0; from < fetched.length; from += BATCH) {
      const items = fetched.slice(from, from + BATCH).map(({ i, crawlDays, url, leaseId }) => {
        const finding = tracker.crawl(i, crawlDays)
        crawls++
        const day = Math.floor(crawlDays - options.warmupDays)
        if (day >= 0 && day < wholeDaysAfterWarmup) crawlsPerDayAfterWarmup[day]!++
        return {
          url,
          crawledAt: isoAt(crawlDays),
          changed: finding.changed,
          ...(finding.ageDays === null ? {} : { lastModified: isoAt(crawlDays - finding.ageDays) }),
          leaseId,
        }
      })
      await ok(api.POST('/v1/observations', { body: { observations: items } }))
    }
  }
  const wholeDaysAfterWarmup = Math.max(0, Math.floor(options.horizonDays - options.warmupDays + 1e-9))
  const crawlsPerDayAfterWarmup = new Array<number>(wholeDaysAfterWarmup).fill(0)
  // Pages handed out per hour after the warm-up (a lease at a step ending hour h counts in hour h).
  const handedOutPerHourAfterWarmup = new Array<number>(wholeDaysAfterWarmup * HOURS_PER_DAY).fill(0)
  let previousStepDays = 0
  let nextOptimizeDays = 0
  const steps = Math.ceil(options.horizonDays / options.stepDays)
  let lastLog = Date.now()
  for (let k = 0; k <= steps; k++) {
    const nowDays = Math.min(options.horizonDays, k * options.stepDays)
    await ok(api.PUT('/v1/clock', { body: { now: isoAt(nowDays) } }))
    await report(nowDays)
    for (;;) {
      const lease = await ok(api.POST('/v1/leases', { body: { worker: 'simulate-e2e', limit: BATCH, leaseSeconds } }))
      const hour = Math.floor((nowDays - options.warmupDays) * HOURS_PER_DAY - 1e-9)
      if (hour >= 0 && hour < handedOutPerHourAfterWarmup.length)
        handedOutPerHourAfterWarmup[hour]! += lease.pages.length
      for (const page of lease.pages) {
        const i = indexOf.get(page.url)
        if (i === undefined) continue
        // Fetched when due, but not before the previous step (the fleet looks once per step) and not after now
        // (a page handed out before its due time is fetched at once), plus the fleet's lag.
        const dueDays = (Date.parse(page.dueAt) - SIM_START_MS) / MS_PER_DAY
        const last = Math.max(tracker.lastCrawlDays(i) ?? -1, fetchedDays[i]!)
        const fetchDays =
          Math.max(Math.min(dueDays, nowDays), previousStepDays, last + 1 / MS_PER_DAY) + options.fleetLagDays
        const crawlDays = Math.round(fetchDays * MS_PER_DAY) / MS_PER_DAY
        fetchedDays[i] = crawlDays
        pending.push({ i, crawlDays, url: page.url, leaseId: lease.leaseId })
      }
      if (lease.pages.length < BATCH) break
    }
    await report(nowDays)
    // The optimiser runs after the step's crawls: pages it makes due at once are leased at the next step and
    // fetched from now on, not before (fetch times are never before the previous step).
    if (nowDays >= nextOptimizeDays) {
      await ok(api.POST('/v1/optimize'))
      nextOptimizeDays += options.reoptimizeDays
    }
    previousStepDays = nowDays
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now()
      options.log(`e2e: day ${nowDays.toFixed(2)} of ${options.horizonDays}, ${crawls} crawls, ${requests} requests`)
    }
  }
  const { freshness } = tracker.finish()
  const budgetCrawls = universe.budgetCrawlsPerDay * options.horizonDays
  const wallSeconds = (Date.now() - started) / 1000

  const inProcess = ['oracle-periodic', 'oracle-renewal', DEFAULT_LOOP_POLICY, 'nutch', 'proportional', 'uniform'].map(
    (policy) => {
      const r = runPolicy(
        universe,
        createPolicy(policy, universe, simOptions, [options.workload, options.importance]),
        { mode: 'fleet' },
      )
      return { policy, freshness: r.freshness, crawlsUsed: r.crawls / r.budgetCrawls }
    },
  )
  const oracle = inProcess[0]!.freshness
  const renewalOracle = inProcess[1]!.freshness
  const ratio = (f: number, to: number) => (to > 0 ? f / to : 0)
  const ratioToOracle = ratio(freshness, oracle)
  const ratioToRenewalOracle = ratio(freshness, renewalOracle)
  const budgetUsePerDay = crawlsPerDayAfterWarmup.map((c) => c / universe.budgetCrawlsPerDay)
  const handOutsPerHour = handedOutPerHourAfterWarmup.map((c) => c / (universe.budgetCrawlsPerDay / HOURS_PER_DAY))
  const handOutsPerDay = Array.from(
    { length: wholeDaysAfterWarmup },
    (_, d) =>
      handedOutPerHourAfterWarmup.slice(d * HOURS_PER_DAY, (d + 1) * HOURS_PER_DAY).reduce((a, b) => a + b, 0) /
      universe.budgetCrawlsPerDay,
  )
  const lines = [
    `end-to-end: ${options.workload}, ${options.importance} importance, ${n} pages, ${options.horizonDays} simulated days from ${isoAt(0)}, ` +
      `warm-up ${options.warmupDays} days, budget ${universe.budgetCrawlsPerDay.toFixed(1)} crawls/day, fleet step ${(options.stepDays * 1440).toFixed(0)} min, fleet lag ${(options.fleetLagDays * 1440).toFixed(0)} min, ` +
      `optimize every ${options.reoptimizeDays} day(s)`,
    `  service over HTTP     F ${freshness.toFixed(4)}  F/oracle-periodic ${ratioToOracle.toFixed(3)}  F/oracle-renewal ${ratioToRenewalOracle.toFixed(3)}  ` +
      `crawls/budget ${(crawls / budgetCrawls).toFixed(3)}  (${requests} requests, ${wallSeconds.toFixed(0)} s)`,
    ...inProcess.map(
      (r) =>
        `  in-process ${r.policy.padEnd(22)} F ${r.freshness.toFixed(4)}  F/oracle-periodic ${ratio(r.freshness, oracle).toFixed(3)}  ` +
        `F/oracle-renewal ${ratio(r.freshness, renewalOracle).toFixed(3)}  crawls/budget ${r.crawlsUsed.toFixed(3)}`,
    ),
    budgetUsePerDay.length === 0
      ? '  budget use per day after warm-up: no whole day after the warm-up'
      : `  budget use per day after warm-up (crawls reported / budget, ${budgetUsePerDay.length} days): ` +
        `mean ${mean(budgetUsePerDay).toFixed(3)}  min ${Math.min(...budgetUsePerDay).toFixed(3)}  max ${Math.max(...budgetUsePerDay).toFixed(3)}`,
    handOutsPerDay.length === 0
      ? '  hand-outs after warm-up: no whole day after the warm-up'
      : `  handed out per day / budget: min ${Math.min(...handOutsPerDay).toFixed(3)}  max ${Math.max(...handOutsPerDay).toFixed(3)}; ` +
        `per hour / hourly share: min ${Math.min(...handOutsPerHour).toFixed(2)}  max ${Math.max(...handOutsPerHour).toFixed(2)}`,
  ]
  const { log: _log, ...reportedOptions } = options
  return {
    options: reportedOptions,
    budgetCrawlsPerDay: universe.budgetCrawlsPerDay,
    service: { freshness, crawls, crawlsUsed: crawls / budgetCrawls, requests, wallSeconds },
    inProcess,
    ratioToOracle,
    ratioToRenewalOracle,
    budgetUsePerDay,
    handOutsPerDay,
    handOutsPerHour,
    text: lines.join('\n'),
  }
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}
