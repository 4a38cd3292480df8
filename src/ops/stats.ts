import type pg from 'pg'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { Clock } from '../domain/clock.ts'
import {
  HOURS_PER_DAY,
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  SECONDS_PER_HOUR,
  SECONDS_PER_MINUTE,
} from '../math/units.ts'
import { crawlSpacingSchema } from '../core/settings.ts'
import { pagesByStatusSchema } from '../core/pageFields.ts'
import { handOutAllowance } from '../core/handOut.ts'
import { availableHandOutTokens } from '../store/leasesRepo.ts'
import { recentOptimizerRuns } from '../store/optimizerRepo.ts'
import { loadSettings, readOptimizerState } from '../store/settingsRepo.ts'
import {
  insertStatsSample,
  readCrawlActivity,
  readFetchFailures,
  readRateHistograms,
  readStatsSeries,
  readStatsSnapshot,
  readTopOverdueHosts,
  type CrawlActivityRow,
  type HistogramBins,
} from '../store/statsRepo.ts'
import { FETCH_ERRORS, type FetchError } from '../core/fetchOutcomes.ts'
import { statusClassCountsSchema, statusClassOf, zeroStatusClassCounts } from './fetchStatus.ts'

const rateHistogramSchema = z
  .object({
    edgesPerDay: z
      .array(z.number())
      .describe('bins + 1 log-spaced bin edges, per day; bin i counts rates in [edges[i], edges[i+1]).'),
    counts: z.array(z.number().int()),
    below: z.number().int().describe('Pages with a rate below the first edge (zeros included).'),
    above: z.number().int().describe('Pages with a rate at or above the last edge.'),
    unknown: z.number().int().describe('Pages without the rate.'),
  })
  .meta({ id: 'RateHistogram' })

type RateHistogram = z.infer<typeof rateHistogramSchema>

/** What the gauges and the top of GET /v1/stats show: one consistent snapshot. */
export const statsSnapshotSchema = z.object({
  takenAt: z.string().describe('When the snapshot was taken (RFC 3339); snapshots are cached for a few seconds.'),
  pages: z.number().int(),
  pagesLeased: z.number().int().describe('Pages under an unexpired lease.'),
  pagesByStatus: pagesByStatusSchema,
  pagesOverdue: z.number().int().describe('Due (dueAt ≤ now) and not under an unexpired lease.'),
  oldestOverdueAgeSeconds: z.number().describe('How long the most overdue page has been due; 0 when none is.'),
  expectedFreshness: z
    .number()
    .nullable()
    .describe(
      'Σμ·f(ρ)/Σμ of the current rates under the running schedule (docs/math.md 3.1 Poisson, 3.3 periodic); null without weighted pages.',
    ),
  sitemaps: z
    .object({
      items: z.number().int().describe('Sitemap items registered.'),
      leased: z.number().int().describe('Sitemap items under an unexpired lease.'),
      overdue: z.number().int().describe('Due and not under an unexpired lease.'),
      notActive: z.number().int().describe('Failing, gone or redirected sitemap items.'),
      plannedCrawlsPerDay: z.number().describe('Σ crawlsPerDay of the sitemap items: their share of the budget.'),
    })
    .meta({
      id: 'SitemapItemCounts',
      description:
        'Sitemap items (docs/api.md "Sitemaps as scheduled items"): scheduled like pages but counted apart; the page counts and expectedFreshness above leave them out.',
    }),
  schedule: crawlSpacingSchema,
  budgetCrawlsPerDay: z.number().describe('Budget R from the settings.'),
  plannedCrawlsPerDay: z
    .number()
    .describe('Σ crawlsPerDay: what the current rates spend of the budget (sitemap items included).'),
  crawlsPerDayLastHour: z.number().describe('Crawls reported with crawledAt in the last hour × 24.'),
  handOutAllowance: z
    .object({
      tokens: z.number().describe('Pages leases may hand out now before the allowance runs dry.'),
      capacity: z.number().describe('Most tokens the allowance holds: budgetCrawlsPerDay × handOutBurstHours / 24.'),
      reserve: z.number().describe('Tokens early hand-outs leave for pages that fall due.'),
      perDay: z.number().describe('Refill rate: budgetCrawlsPerDay.'),
      limiting: z
        .boolean()
        .describe(
          'Whether the allowance holds the fleet back: fewer whole tokens than overdue pages, so a lease now could not take them all (it would say limitedBy budgetAllowance).',
        ),
    })
    .meta({
      id: 'HandOutAllowance',
      description: 'The fleet-wide hand-out allowance (docs/api.md "Never more than the budget").',
    }),
})

export type StatsSnapshot = z.infer<typeof statsSnapshotSchema>

/** The rest of GET /v1/stats: histograms, optimiser runs, overdue hosts, time series, activity and failures. */
export const statsDetailsSchema = z.object({
  windowHours: z.number(),
  windowStart: z
    .string()
    .describe('Start of the window (exclusive, RFC 3339): windowEnd − windowHours, on the service clock.'),
  windowEnd: z
    .string()
    .describe('End of the window (inclusive, RFC 3339): the service clock when the details were computed.'),
  optimizer: z
    .object({ lambda: z.number().nullable(), solvedAt: z.string().nullable() })
    .meta({ id: 'OptimizerState', description: 'The stored multiplier λ and when it was solved.' }),
  changeRateHistogram: rateHistogramSchema.describe('Pages by estimated changesPerDay (log10 bins, 4 per decade).'),
  crawlRateHistogram: rateHistogramSchema.describe('Pages by crawlsPerDay (log10 bins, 4 per decade).'),
  optimizerRuns: z
    .array(
      z
        .object({
          id: z.string(),
          startedAt: z.string(),
          durationMs: z.number(),
          trigger: z.string(),
          objective: z.string(),
          lambda: z.number().nullable(),
          pages: z.number().int(),
          pagesCrawled: z.number().int(),
          budgetCrawlsPerDay: z.number(),
          expectedFreshness: z.number().nullable(),
          pagesRetimed: z.number().int(),
        })
        .meta({ id: 'OptimizerRunSummary' }),
    )
    .describe('The latest optimiser runs, newest first.'),
  topOverdueHosts: z
    .array(
      z
        .object({ host: z.string(), pagesOverdue: z.number().int(), oldestOverdueAgeSeconds: z.number() })
        .meta({ id: 'OverdueHost' }),
    )
    .describe('Hosts with the most overdue pages.'),
  series: z
    .object({
      bucketSeconds: z.number().int(),
      points: z.array(
        z
          .object({
            at: z.string(),
            pages: z.number().int(),
            pagesOverdue: z.number().int(),
            oldestOverdueAgeSeconds: z.number(),
            expectedFreshness: z.number().nullable(),
            budgetCrawlsPerDay: z.number(),
            plannedCrawlsPerDay: z.number(),
            crawlsPerDayLastHour: z.number(),
          })
          .meta({ id: 'StatsSeriesPoint' }),
      ),
    })
    .meta({
      id: 'StatsSeries',
      description:
        'Snapshots stored at most once a minute (whenever one is taken, and every minute by the service), averaged into at most 300 buckets over the window.',
    }),
  crawlActivity: z
    .array(
      z
        .object({
          hourStart: z.string(),
          crawls: z.number().int(),
          changes: z.number().int(),
          fetchesByStatusClass: statusClassCountsSchema,
        })
        .meta({ id: 'CrawlActivityHour' }),
    )
    .describe(
      'Every hour of the window by crawl time: crawls stored, changes detected among them and the crawls by reported HTTP status class, from the observation history (0 for hours without crawls). The first hour starts at or before windowStart and counts only crawls after it.',
    ),
  fetchFailures: z
    .array(
      z
        .object({
          host: z.string(),
          httpStatus: z
            .number()
            .int()
            .nullable()
            .describe('The failed status; null for a fetch without an HTTP answer.'),
          fetchError: z
            .enum(FETCH_ERRORS)
            .nullable()
            .describe('Why the fetch got no HTTP answer; null when it got a status.'),
          fetches: z
            .number()
            .int()
            .describe('Stored crawls of the host with this status or fetch error in the window.'),
          pages: z.number().int().describe('Distinct pages among them.'),
          lastCrawledAt: z.string(),
        })
        .meta({ id: 'FetchFailure' }),
    )
    .describe(
      'Failed fetches (a reported status outside 200…399, or a fetchError: no HTTP answer) in the window by host and status or fetch error, most first (at most 20 rows).',
    ),
})

type StatsDetails = z.infer<typeof statsDetailsSchema>

export interface Stats {
  /** The cached snapshot: refreshed at most every `cacheMs` (one query in flight at a time). */
  snapshot(): Promise<StatsSnapshot>
  /** Histograms, runs, hosts and time series for the dashboard, cached like the snapshot. */
  details(options: { windowHours: number }): Promise<StatsDetails>
  /** Calls `listener` with every snapshot taken from now on (the metrics that follow the fleet over time). */
  onSnapshot(listener: (s: StatsSnapshot) => void): void
}

interface StatsDeps {
  pool: pg.Pool
  clock: Clock
  logger?: Logger | undefined
  /**
   * Wall-clock lifetime of a snapshot. Wall time, not the injected clock: the point is to bound the
   * database load of scrapes, which arrive in real time whatever the simulated time is.
   */
  cacheMs: number
}

/** Log-spaced bins of the rate histograms: 10^-3 … 10^3 per day, 4 per decade. */
const RATE_BINS: HistogramBins = { minLog10: -3, maxLog10: 3, bins: 24 }
/** At most this many points in the time series of GET /v1/stats. */
const SERIES_POINTS = 300
/** Lifetime of the cached snapshot and details when the app is not given one (AppDeps.statsCacheMs). */
export const DEFAULT_STATS_CACHE_MS = 5_000
/** Most `hours` windows whose details are cached at once; beyond it the cache starts over. */
const DETAIL_WINDOWS_CACHED = 32
/** Samples older than this are pruned. */
const SAMPLE_RETENTION_DAYS = 30
const OPTIMIZER_RUNS_SHOWN = 20
const OVERDUE_HOSTS_SHOWN = 10
const FETCH_FAILURES_SHOWN = 20

const finiteOr = (v: number, fallback: number): number => (Number.isFinite(v) ? v : fallback)

function histogram(
  row: { counts: number[]; below: number; above: number; unknown: number },
  bins: HistogramBins,
): RateHistogram {
  const edgesPerDay = Array.from(
    { length: bins.bins + 1 },
    (_, i) => 10 ** (bins.minLog10 + ((bins.maxLog10 - bins.minLog10) * i) / bins.bins),
  )
  return { edgesPerDay, counts: row.counts, below: row.below, above: row.above, unknown: row.unknown }
}

/**
 * Every hour of (fromMs, toMs], with zeros for hours without crawls (a chart must not bridge them);
 * the first hour starts at or before fromMs and counts only its crawls after fromMs.
 */
function hourlyActivity(
  rows: readonly CrawlActivityRow[],
  fromMs: number,
  toMs: number,
): StatsDetails['crawlActivity'] {
  const byHour = new Map<number, StatsDetails['crawlActivity'][number]>()
  for (let h = Math.floor(fromMs / MS_PER_HOUR) * MS_PER_HOUR; h <= toMs; h += MS_PER_HOUR) {
    byHour.set(h, {
      hourStart: new Date(h).toISOString(),
      crawls: 0,
      changes: 0,
      fetchesByStatusClass: zeroStatusClassCounts(),
    })
  }
  for (const r of rows) {
    const hour = byHour.get(r.hourStart.getTime())
    if (!hour) continue
    hour.crawls += r.crawls
    hour.changes += r.changes
    hour.fetchesByStatusClass[statusClassOf(r.httpStatus, r.fetchError)] += r.crawls
  }
  return [...byHour.values()]
}

/** A small cache whose entries expire after `ttlMs` of wall time; a pending load is shared by every caller. */
function cached<T>(ttlMs: number, load: () => Promise<T>): () => Promise<T> {
  let entry: { atMs: number; value: Promise<T>; settled: boolean } | null = null
  return () => {
    const nowMs = performance.now()
    if (entry && (!entry.settled || nowMs - entry.atMs < ttlMs)) return entry.value
    const e: { atMs: number; value: Promise<T>; settled: boolean } = { atMs: nowMs, value: load(), settled: false }
    entry = e
    e.value.then(
      () => {
        e.settled = true
        e.atMs = performance.now()
      },
      () => {
        // A failed load is not cached: the next caller retries.
        if (entry === e) entry = null
      },
    )
    return e.value
  }
}

export function createStats(deps: StatsDeps): Stats {
  let lastSampleMinute: number | null = null
  const listeners: ((s: StatsSnapshot) => void)[] = []

  async function record(s: StatsSnapshot): Promise<void> {
    const atMs = Date.parse(s.takenAt)
    const minute = Math.floor(atMs / MS_PER_MINUTE)
    if (minute === lastSampleMinute) return
    try {
      await insertStatsSample(
        deps.pool,
        {
          sampledAtMs: atMs,
          pages: s.pages,
          pagesOverdue: s.pagesOverdue,
          oldestOverdueAgeSeconds: s.oldestOverdueAgeSeconds,
          expectedFreshness: s.expectedFreshness,
          budgetCrawlsPerDay: s.budgetCrawlsPerDay,
          plannedCrawlsPerDay: s.plannedCrawlsPerDay,
          crawlsPerDayLastHour: s.crawlsPerDayLastHour,
        },
        atMs - SAMPLE_RETENTION_DAYS * MS_PER_DAY,
      )
      lastSampleMinute = minute
    } catch (err) {
      deps.logger?.warn({ err }, 'could not record a stats sample')
    }
  }

  const snapshot = cached(deps.cacheMs, async (): Promise<StatsSnapshot> => {
    const nowMs = deps.clock.nowMs()
    const settings = await loadSettings(deps.pool)
    const row = await readStatsSnapshot(deps.pool, {
      nowMs,
      spacing: settings.schedule,
      defaultChangesPerDay: settings.defaultChangesPerDay,
    })
    const allowance = handOutAllowance(settings)
    const tokens = await availableHandOutTokens(deps.pool, { nowMs, ...allowance })
    const freshness = row.importanceTotal > 0 ? row.weightedFreshness / row.importanceTotal : null
    const s: StatsSnapshot = {
      takenAt: new Date(nowMs).toISOString(),
      pages: row.pages,
      pagesLeased: row.pagesLeased,
      pagesByStatus: {
        active: row.pages - row.pagesFailing - row.pagesGone - row.pagesRedirected,
        failing: row.pagesFailing,
        gone: row.pagesGone,
        redirected: row.pagesRedirected,
        noisy: row.pagesNoisy,
      },
      pagesOverdue: row.pagesOverdue,
      oldestOverdueAgeSeconds:
        row.oldestOverdueAt === null ? 0 : Math.max(0, (nowMs - row.oldestOverdueAt.getTime()) / MS_PER_SECOND),
      expectedFreshness: freshness === null ? null : Math.min(1, Math.max(0, finiteOr(freshness, 0))),
      sitemaps: { ...row.sitemaps, plannedCrawlsPerDay: finiteOr(row.sitemaps.plannedCrawlsPerDay, 0) },
      schedule: settings.schedule,
      budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
      plannedCrawlsPerDay: finiteOr(row.plannedCrawlsPerDay, 0),
      crawlsPerDayLastHour: row.crawlsLastHour * HOURS_PER_DAY,
      handOutAllowance: {
        tokens,
        capacity: allowance.capacity,
        reserve: allowance.reserve,
        perDay: allowance.perDay,
        limiting:
          row.pagesOverdue + row.sitemaps.overdue > 0 && Math.floor(tokens) < row.pagesOverdue + row.sitemaps.overdue,
      },
    }
    await record(s)
    for (const listener of listeners) listener(s)
    return s
  })

  const detailsByWindow = new Map<number, () => Promise<StatsDetails>>()
  const loadDetails = async (windowHours: number): Promise<StatsDetails> => {
    const nowMs = deps.clock.nowMs()
    const fromMs = nowMs - windowHours * MS_PER_HOUR
    const bucketSeconds = Math.max(
      SECONDS_PER_MINUTE,
      Math.ceil((windowHours * SECONDS_PER_HOUR) / SERIES_POINTS / SECONDS_PER_MINUTE) * SECONDS_PER_MINUTE,
    )
    const state = await readOptimizerState(deps.pool)
    const histograms = await readRateHistograms(deps.pool, RATE_BINS)
    const runs = await recentOptimizerRuns(deps.pool, OPTIMIZER_RUNS_SHOWN)
    const hosts = await readTopOverdueHosts(deps.pool, nowMs, OVERDUE_HOSTS_SHOWN)
    const series = await readStatsSeries(deps.pool, { fromMs, toMs: nowMs, bucketSeconds })
    const activity = await readCrawlActivity(deps.pool, { fromMs, toMs: nowMs })
    const failures = await readFetchFailures(deps.pool, { fromMs, toMs: nowMs, limit: FETCH_FAILURES_SHOWN })
    return {
      windowHours,
      windowStart: new Date(fromMs).toISOString(),
      windowEnd: new Date(nowMs).toISOString(),
      optimizer: { lambda: state.lambda, solvedAt: state.solvedAt?.toISOString() ?? null },
      changeRateHistogram: histogram(histograms.changesPerDay, RATE_BINS),
      crawlRateHistogram: histogram(histograms.crawlsPerDay, RATE_BINS),
      optimizerRuns: runs.map((r) => ({ ...r, startedAt: r.startedAt.toISOString() })),
      topOverdueHosts: hosts.map((h) => ({
        host: h.host,
        pagesOverdue: h.pagesOverdue,
        oldestOverdueAgeSeconds: Math.max(0, (nowMs - h.oldestOverdueAt.getTime()) / MS_PER_SECOND),
      })),
      series: {
        bucketSeconds,
        points: series.map(({ sampledAt, ...p }) => ({ at: sampledAt.toISOString(), ...p })),
      },
      crawlActivity: hourlyActivity(activity, fromMs, nowMs),
      fetchFailures: failures.map((f) => ({
        ...f,
        fetchError: f.fetchError as FetchError | null,
        lastCrawledAt: f.lastCrawledAt.toISOString(),
      })),
    }
  }

  return {
    snapshot,
    onSnapshot: (listener) => void listeners.push(listener),
    details({ windowHours }) {
      let get = detailsByWindow.get(windowHours)
      if (!get) {
        if (detailsByWindow.size > DETAIL_WINDOWS_CACHED) detailsByWindow.clear()
        get = cached(deps.cacheMs, () => loadDetails(windowHours))
        detailsByWindow.set(windowHours, get)
      }
      return get()
    },
  }
}

/**
 * Refreshes the snapshot every `intervalMs` so the time series gets a sample per minute even when
 * nobody is looking at the dashboard or scraping. Failures are logged and retried at the next tick.
 */
export function startStatsSampler(
  stats: Stats,
  options: { intervalMs: number; logger?: Logger | undefined },
): { stop(): void } {
  const timer = setInterval(() => {
    stats.snapshot().catch((err: unknown) => options.logger?.warn({ err }, 'stats snapshot failed'))
  }, options.intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
