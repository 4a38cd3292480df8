import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { IngestResult, ObservationReport } from '../domain/ingest.ts'
import type { LeaseGrant } from '../domain/leases.ts'
import type { OptimizeResult } from '../domain/optimize.ts'
import { PAGE_STATUSES } from '../core/pageFields.ts'
import { LEASE_LIMITS } from '../core/handOut.ts'
import {
  STATUS_CLASSES,
  statusClassCountsSchema,
  statusClassOf,
  zeroStatusClassCounts,
  type StatusClassCounts,
} from './fetchStatus.ts'
import type { Stats, StatsSnapshot } from './stats.ts'
import { MS_PER_SECOND } from '../math/units.ts'

/** Counter totals of this process (GET /v1/stats repeats them next to the snapshot). */
export const counterTotalsSchema = z
  .object({
    observations: z
      .object({ accepted: z.number(), duplicate: z.number(), late: z.number(), rejected: z.number() })
      .meta({ id: 'ObservationCounts' }),
    fetchesByStatusClass: statusClassCountsSchema.describe(
      'recrawl_fetches_total: reports not rejected (accepted, late or duplicate) by reported status class.',
    ),
    changesDetected: z.number(),
    leasesGranted: z.number(),
    leasesExpired: z.number(),
    optimizerRuns: z.number(),
  })
  .meta({ id: 'CounterTotals', description: 'Totals of the counters of /metrics since this replica started.' })

type CounterTotals = z.infer<typeof counterTotalsSchema>

export interface Metrics {
  registry: Registry
  contentType: string
  /** The Prometheus text exposition of every metric (gauges read the cached stats snapshot). */
  render(): Promise<string>
  /** Counts one committed batch: `items` is the batch as posted, `result` what ingest made of it. */
  onIngested(result: IngestResult, items: readonly ObservationReport[]): void
  onLease(grant: LeaseGrant): void
  onOptimized(result: OptimizeResult): void
  observeHttp(labels: { route: string; method: string; status: number }, seconds: number): void
  counterTotals(): Promise<CounterTotals>
}

interface MetricsOptions {
  stats: Stats
  logger?: Logger | undefined
  /** Node process metrics (CPU, memory, event loop, GC) from prom-client; default true. */
  processMetrics?: boolean
}

const HTTP_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const OPTIMIZER_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
const OBSERVATION_RESULTS = ['accepted', 'duplicate', 'late', 'rejected'] as const
/** Hosts exported one by one in recrawl_host_crawls_total: the most crawled since this replica started. */
export const TOP_HOSTS = 20
/** Hosts counted at most; beyond, the less crawled half is forgotten (such a host counts from 0 again). */
const HOSTS_COUNTED = 10_000
/**
 * The longest gap between two stats snapshots that counts towards recrawl_budget_limited_seconds_total: the
 * sampler takes one a minute, so a longer gap is time nobody watched (the service was down or paused).
 */
const LIMITED_GAP_MAX_SECONDS = 120

/**
 * One prom-client registry per app instance (never the global one, so apps in one process, as in
 * tests, count independently). Counters are updated by the use-case hooks; the gauges that need SQL
 * read one cached snapshot (src/ops/stats.ts), so a scrape costs at most one refresh per cache period.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry()
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry })
  const registers = [registry]

  const observations = new Counter({
    name: 'recrawl_observations_total',
    help: 'Reported crawls by outcome: accepted (stored and applied), duplicate (ignored), late (stored, not applied), rejected (not stored).',
    labelNames: ['result'] as const,
    registers,
  })
  for (const result of OBSERVATION_RESULTS) observations.labels(result).inc(0)
  const fetches = new Counter({
    name: 'recrawl_fetches_total',
    help: 'Reported crawls that were not rejected (accepted, late or duplicate), by the class of the httpStatus the crawler reported (1xx … 5xx; error: a fetchError, no HTTP answer (timeout, DNS, connection, TLS); none: reported with neither). Failures: 1xx, 4xx, 5xx and error.',
    labelNames: ['status_class'] as const,
    registers,
  })
  for (const c of STATUS_CLASSES) fetches.labels(c).inc(0)
  const crawlsByPageStatus = new Counter({
    name: 'recrawl_crawls_by_page_status_total',
    help: 'In-order crawls by what the page was when it was crawled: active, failing, gone (a recheck), redirected, or noisy (its hash is noise). The crawls spent on dead, failing and noisy pages.',
    labelNames: ['page_status'] as const,
    registers,
  })
  for (const status of [...PAGE_STATUSES, 'noisy'] as const) crawlsByPageStatus.labels(status).inc(0)
  const changes = new Counter({
    name: 'recrawl_changes_detected_total',
    help: 'Accepted crawl intervals that saw a change.',
    registers,
  })
  const pagesRegistered = new Counter({
    name: 'recrawl_pages_registered_total',
    help: 'Pages registered by observations of unknown URLs.',
    registers,
  })
  const leasesGranted = new Counter({
    name: 'recrawl_leases_granted_total',
    help: 'Pages handed out in leases.',
    registers,
  })
  const leasesExpired = new Counter({
    name: 'recrawl_leases_expired_total',
    help: 'Leased pages whose lease expired unfinished and that returned to the pool.',
    registers,
  })
  const shortLeases = new Counter({
    name: 'recrawl_leases_short_total',
    help: 'Leases that handed out fewer pages than asked, by reason (limitedBy): nothingDue, budgetAllowance (the budget held them back), pacedHosts, hostBackoff. A lease short for two reasons counts under both.',
    labelNames: ['limited_by'] as const,
    registers,
  })
  for (const reason of LEASE_LIMITS) shortLeases.labels(reason).inc(0)
  const allowanceTokens = new Gauge({
    name: 'recrawl_handout_allowance_tokens',
    help: 'Pages the fleet-wide hand-out allowance (a token bucket filling at the budget) could still hand out, after the latest lease this replica served.',
    registers,
  })
  const allowanceCapacity = new Gauge({
    name: 'recrawl_handout_allowance_capacity_tokens',
    help: 'Capacity of the fleet-wide hand-out allowance (the most it holds), as of the latest lease this replica served.',
    registers,
  })
  const hostBackoffs = new Counter({
    name: 'recrawl_host_backoffs_total',
    help: 'Hosts paused by a backoff incident (a 429, a 503 without Retry-After, a run of timeouts) in reported batches.',
    registers,
  })
  const optimizerRuns = new Counter({
    name: 'recrawl_optimizer_runs_total',
    help: 'Completed optimiser runs (API and periodic).',
    registers,
  })
  const optimizerDuration = new Histogram({
    name: 'recrawl_optimizer_duration_seconds',
    help: 'Wall time of completed optimiser runs.',
    buckets: OPTIMIZER_BUCKETS_SECONDS,
    registers,
  })
  const optimizerFreshness = new Gauge({
    name: 'recrawl_optimizer_expected_freshness',
    help: 'Σμ·f(ρ)/Σμ reported by the latest optimiser run of this process (objective of the run).',
    registers,
  })
  const http = new Histogram({
    name: 'recrawl_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: HTTP_BUCKETS_SECONDS,
    registers,
  })

  const crawlsByHost = new Map<string, number>()
  new Counter({
    name: 'recrawl_host_crawls_total',
    help: `Crawls stored (in order or late) by the host of their page, for the ${TOP_HOSTS} hosts with the most crawls reported to this replica since it started (a bounded label: other hosts have no series; recrawl_fetches_total counts them all).`,
    labelNames: ['host'] as const,
    registers,
    collect() {
      this.reset()
      const top = [...crawlsByHost].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, TOP_HOSTS)
      for (const [host, n] of top) this.labels(host).inc(n)
    },
  })
  const countHostCrawls = (byHost: ReadonlyMap<string, number>) => {
    for (const [host, n] of byHost) crawlsByHost.set(host, (crawlsByHost.get(host) ?? 0) + n)
    if (crawlsByHost.size <= HOSTS_COUNTED) return
    const kept = [...crawlsByHost].sort((a, b) => b[1] - a[1]).slice(0, HOSTS_COUNTED / 2)
    crawlsByHost.clear()
    for (const [host, n] of kept) crawlsByHost.set(host, n)
  }

  const statsErrors = new Counter({
    name: 'recrawl_stats_errors_total',
    help: 'Failed refreshes of the stats snapshot (the gauges keep their previous values).',
    registers,
  })
  // The gauges of one scrape are collected together: they share one snapshot read (and one error).
  let inflight: Promise<StatsSnapshot | null> | null = null
  const current = (): Promise<StatsSnapshot | null> => {
    if (inflight === null) {
      const read = options.stats.snapshot().catch((err: unknown) => {
        statsErrors.inc()
        options.logger?.warn({ err }, 'stats snapshot for the metrics failed')
        return null
      })
      inflight = read
      void read.then(() =>
        setImmediate(() => {
          if (inflight === read) inflight = null
        }),
      )
    }
    return inflight
  }
  const budgetLimited = new Counter({
    name: 'recrawl_budget_limited_seconds_total',
    help: `Time (service clock) during which the hand-out allowance held the fleet back: fewer whole tokens than overdue pages, so leases were short of pages because of the budget. Sampled at every stats snapshot (at least once a minute; gaps over ${LIMITED_GAP_MAX_SECONDS} s do not count). Every replica watches the same fleet: take max, not sum, across replicas.`,
    registers,
    // Read after this scrape's snapshot, whose listener (below) has counted the time up to it.
    async collect() {
      await current()
    },
  })
  let lastSnapshot: { atMs: number; limiting: boolean } | null = null
  options.stats.onSnapshot((s) => {
    const atMs = Date.parse(s.takenAt)
    if (lastSnapshot !== null && lastSnapshot.limiting && atMs > lastSnapshot.atMs) {
      const seconds = (atMs - lastSnapshot.atMs) / MS_PER_SECOND
      if (seconds <= LIMITED_GAP_MAX_SECONDS) budgetLimited.inc(seconds)
    }
    if (lastSnapshot === null || atMs >= lastSnapshot.atMs)
      lastSnapshot = { atMs, limiting: s.handOutAllowance.limiting }
  })

  const snapshotGauge = (name: string, help: string, value: (s: StatsSnapshot) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const s = await current()
        if (s === null) return
        const v = value(s)
        if (v !== null && Number.isFinite(v)) this.set(v)
      },
    })
  snapshotGauge('recrawl_pages', 'Registered pages.', (s) => s.pages)
  snapshotGauge('recrawl_pages_leased', 'Pages under an unexpired lease.', (s) => s.pagesLeased)
  new Gauge({
    name: 'recrawl_pages_by_status',
    help: 'Pages by fetch status (active, failing, gone, redirected), and pages flagged noisy (status="noisy").',
    labelNames: ['status'],
    registers,
    async collect() {
      const s = await current()
      if (s === null) return
      for (const [status, n] of Object.entries(s.pagesByStatus)) this.labels(status).set(n)
    },
  })
  snapshotGauge('recrawl_pages_overdue', 'Pages due now (dueAt ≤ now) and not leased.', (s) => s.pagesOverdue)
  snapshotGauge(
    'recrawl_oldest_overdue_age_seconds',
    'How long the most overdue page has been due; 0 when none is.',
    (s) => s.oldestOverdueAgeSeconds,
  )
  snapshotGauge(
    'recrawl_expected_freshness',
    'Expected importance-weighted freshness Σμ·f(ρ)/Σμ of the current rates under the running schedule (0…1; 0 while no page has importance).',
    (s) => s.expectedFreshness,
  )
  snapshotGauge(
    'recrawl_budget_crawls_per_day',
    'Crawl budget R from the settings, crawls per day.',
    (s) => s.budgetCrawlsPerDay,
  )
  snapshotGauge(
    'recrawl_planned_crawls_per_day',
    'Σ crawlsPerDay of every page: the budget the current rates spend.',
    (s) => s.plannedCrawlsPerDay,
  )
  snapshotGauge(
    'recrawl_handout_allowance_limiting',
    'Whether the hand-out allowance holds the fleet back now (1) or not (0): fewer whole tokens than overdue pages.',
    (s) => (s.handOutAllowance.limiting ? 1 : 0),
  )
  snapshotGauge(
    'recrawl_crawls_per_day_last_hour',
    'Crawls actually reported with crawledAt in the last hour, times 24 (crawls per day).',
    (s) => s.crawlsPerDayLastHour,
  )

  const value = async (c: Counter<string>, labels?: Record<string, string>): Promise<number> => {
    const m = await c.get()
    const hit = m.values.find((v) => !labels || Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    return hit?.value ?? 0
  }

  const classTotals = async (): Promise<StatusClassCounts> => {
    const out = zeroStatusClassCounts()
    for (const c of STATUS_CLASSES) out[c] = await value(fetches, { status_class: c })
    return out
  }

  return {
    registry,
    contentType: registry.contentType,
    // prom-client spells NaN "Nan" (e.g. event-loop lag before its first sample); write the canonical "NaN".
    render: async () => (await registry.metrics()).replace(/ Nan$/gm, ' NaN'),
    onIngested(result, items) {
      const rejected = new Set(result.rejected.map((r) => r.index))
      const byClass = zeroStatusClassCounts()
      items.forEach((item, index) => {
        if (!rejected.has(index)) byClass[statusClassOf(item.httpStatus, item.fetchError)]++
      })
      for (const c of STATUS_CLASSES) fetches.labels(c).inc(byClass[c])
      observations.labels('accepted').inc(result.accepted)
      observations.labels('duplicate').inc(result.duplicates)
      observations.labels('late').inc(result.late)
      observations.labels('rejected').inc(result.rejected.length)
      changes.inc(result.changesDetected)
      pagesRegistered.inc(result.pagesRegistered)
      hostBackoffs.inc(result.hostsBackedOff)
      for (const [status, n] of Object.entries(result.crawlsByPageStatus)) crawlsByPageStatus.labels(status).inc(n)
      countHostCrawls(result.crawlsByHost)
    },
    onLease(grant) {
      leasesGranted.inc(grant.pages.length)
      leasesExpired.inc(grant.expiredReturned)
      for (const reason of grant.limitedBy) shortLeases.labels(reason).inc()
      allowanceTokens.set(grant.allowance.tokensLeft)
      allowanceCapacity.set(grant.allowance.capacity)
    },
    onOptimized(result) {
      optimizerRuns.inc()
      optimizerDuration.observe(Math.max(0, result.durationMs) / MS_PER_SECOND)
      if (Number.isFinite(result.expectedFreshness)) optimizerFreshness.set(result.expectedFreshness)
    },
    observeHttp(labels, seconds) {
      http.labels(labels.route, labels.method, String(labels.status)).observe(Math.max(0, seconds))
    },
    async counterTotals() {
      return {
        observations: {
          accepted: await value(observations, { result: 'accepted' }),
          duplicate: await value(observations, { result: 'duplicate' }),
          late: await value(observations, { result: 'late' }),
          rejected: await value(observations, { result: 'rejected' }),
        },
        fetchesByStatusClass: await classTotals(),
        changesDetected: await value(changes),
        leasesGranted: await value(leasesGranted),
        leasesExpired: await value(leasesExpired),
        optimizerRuns: await value(optimizerRuns),
      }
    },
  }
}
