import type pg from 'pg'
import type { Logger } from 'pino'
import type { Clock } from '../domain/clock.ts'
import { settingsFromStored } from '../domain/settings.ts'
import { recentOptimizerRuns } from '../store/optimizerRepo.ts'
import { readOptimizerState, readSettingsDocument } from '../store/settingsRepo.ts'
import {
  insertStatsSample,
  readCrawlActivity,
  readRateHistograms,
  readStatsSeries,
  readStatsSnapshot,
  readTopOverdueHosts,
  type CrawlActivityRow,
  type HistogramBins,
} from '../store/statsRepo.ts'

/** What the gauges and the top of GET /v1/stats show: one consistent snapshot. */
export interface StatsSnapshot {
  /** The injected clock's time when the snapshot was taken (RFC 3339). */
  takenAt: string
  pages: number
  /** Pages under an unexpired lease. */
  pagesLeased: number
  /** Due (dueAt ≤ now) and not under an unexpired lease. */
  pagesOverdue: number
  /** now − the earliest due time among overdue pages; 0 when none is overdue. */
  oldestOverdueAgeSeconds: number
  /** Σ importance·f(ρ) / Σ importance under the running schedule; null when no page has importance. */
  expectedFreshness: number | null
  schedule: 'periodic' | 'poisson'
  budgetCrawlsPerDay: number
  /** Σ crawlsPerDay: the budget the current rates spend. */
  plannedCrawlsPerDay: number
  /** Observations with crawledAt in the last hour, × 24. */
  crawlsPerDayLastHour: number
}

export interface RateHistogram {
  /** bins + 1 log-spaced edges, per day; bin i counts rates in [edges[i], edges[i+1]). */
  edgesPerDay: number[]
  counts: number[]
  /** Rates below the first edge (zeros included). */
  below: number
  /** Rates at or above the last edge. */
  above: number
  /** Pages without the rate (no estimate yet / never scheduled). */
  unknown: number
}

export interface StatsDetails {
  windowHours: number
  optimizer: { lambda: number | null; solvedAt: string | null }
  changeRateHistogram: RateHistogram
  crawlRateHistogram: RateHistogram
  optimizerRuns: {
    id: string
    startedAt: string
    durationMs: number
    trigger: string
    objective: string
    lambda: number | null
    pages: number
    pagesCrawled: number
    budgetCrawlsPerDay: number
    expectedFreshness: number | null
    pagesRetimed: number
  }[]
  topOverdueHosts: { host: string; pagesOverdue: number; oldestOverdueAgeSeconds: number }[]
  /** Stored snapshots (one per minute at most), averaged into at most SERIES_POINTS buckets. */
  series: {
    bucketSeconds: number
    points: {
      at: string
      pages: number
      pagesOverdue: number
      oldestOverdueAgeSeconds: number
      expectedFreshness: number | null
      budgetCrawlsPerDay: number
      plannedCrawlsPerDay: number
      crawlsPerDayLastHour: number
    }[]
  }
  /** Crawls reported per hour (by crawl time) and changes among them, from the observation history. */
  crawlActivity: { hourStart: string; crawls: number; changes: number }[]
}

export interface Stats {
  /** The cached snapshot: refreshed at most every `cacheMs` (one query in flight at a time). */
  snapshot(): Promise<StatsSnapshot>
  /** Histograms, runs, hosts and time series for the dashboard, cached like the snapshot. */
  details(options: { windowHours: number }): Promise<StatsDetails>
}

export interface StatsDeps {
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
export const RATE_BINS: HistogramBins = { minLog10: -3, maxLog10: 3, bins: 24 }
/** At most this many points in the time series of GET /v1/stats. */
export const SERIES_POINTS = 300
/** Samples older than this are pruned. */
export const SAMPLE_RETENTION_DAYS = 30
const OPTIMIZER_RUNS_SHOWN = 20
const OVERDUE_HOSTS_SHOWN = 10
const MS_PER_DAY = 86_400_000

const finiteOr = (v: number, fallback: number): number => (Number.isFinite(v) ? v : fallback)

function histogram(row: { counts: number[]; below: number; above: number; unknown: number }, bins: HistogramBins): RateHistogram {
  const edgesPerDay = Array.from({ length: bins.bins + 1 }, (_, i) => 10 ** (bins.minLog10 + ((bins.maxLog10 - bins.minLog10) * i) / bins.bins))
  return { edgesPerDay, counts: row.counts, below: row.below, above: row.above, unknown: row.unknown }
}

/** Every hour of (fromMs, toMs], with zeros for hours without crawls (a chart must not bridge them). */
function hourlyActivity(rows: readonly CrawlActivityRow[], fromMs: number, toMs: number): StatsDetails['crawlActivity'] {
  const byHour = new Map(rows.map((r) => [r.hourStart.getTime(), r]))
  const out: StatsDetails['crawlActivity'] = []
  for (let h = Math.floor(fromMs / 3_600_000) * 3_600_000; h <= toMs; h += 3_600_000) {
    const r = byHour.get(h)
    out.push({ hourStart: new Date(h).toISOString(), crawls: r?.crawls ?? 0, changes: r?.changes ?? 0 })
  }
  return out
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

  async function record(s: StatsSnapshot): Promise<void> {
    const atMs = Date.parse(s.takenAt)
    const minute = Math.floor(atMs / 60_000)
    if (minute === lastSampleMinute) return
    try {
      await insertStatsSample(
        deps.pool,
        {
          sampledAt: new Date(atMs),
          pages: s.pages,
          pagesOverdue: s.pagesOverdue,
          oldestOverdueAgeSeconds: s.oldestOverdueAgeSeconds,
          expectedFreshness: s.expectedFreshness,
          budgetCrawlsPerDay: s.budgetCrawlsPerDay,
          plannedCrawlsPerDay: s.plannedCrawlsPerDay,
          crawlsPerDayLastHour: s.crawlsPerDayLastHour,
        },
        new Date(atMs - SAMPLE_RETENTION_DAYS * MS_PER_DAY),
      )
      lastSampleMinute = minute
    } catch (err) {
      deps.logger?.warn({ err }, 'could not record a stats sample')
    }
  }

  const snapshot = cached(deps.cacheMs, async (): Promise<StatsSnapshot> => {
    const nowMs = deps.clock.nowMs()
    const settings = settingsFromStored(await readSettingsDocument(deps.pool))
    const row = await readStatsSnapshot(deps.pool, {
      now: new Date(nowMs),
      schedule: settings.schedule,
      defaultChangesPerDay: settings.defaultChangesPerDay,
    })
    const freshness = row.importanceTotal > 0 ? row.weightedFreshness / row.importanceTotal : null
    const s: StatsSnapshot = {
      takenAt: new Date(nowMs).toISOString(),
      pages: row.pages,
      pagesLeased: row.pagesLeased,
      pagesOverdue: row.pagesOverdue,
      oldestOverdueAgeSeconds: row.oldestOverdueAt === null ? 0 : Math.max(0, (nowMs - row.oldestOverdueAt.getTime()) / 1000),
      expectedFreshness: freshness === null ? null : Math.min(1, Math.max(0, finiteOr(freshness, 0))),
      schedule: settings.schedule,
      budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
      plannedCrawlsPerDay: finiteOr(row.plannedCrawlsPerDay, 0),
      crawlsPerDayLastHour: row.crawlsLastHour * 24,
    }
    await record(s)
    return s
  })

  const detailsByWindow = new Map<number, () => Promise<StatsDetails>>()
  const loadDetails = async (windowHours: number): Promise<StatsDetails> => {
    const nowMs = deps.clock.nowMs()
    const now = new Date(nowMs)
    const from = new Date(nowMs - windowHours * 3_600_000)
    const bucketSeconds = Math.max(60, Math.ceil((windowHours * 3600) / SERIES_POINTS / 60) * 60)
    const state = await readOptimizerState(deps.pool)
    const histograms = await readRateHistograms(deps.pool, RATE_BINS)
    const runs = await recentOptimizerRuns(deps.pool, OPTIMIZER_RUNS_SHOWN)
    const hosts = await readTopOverdueHosts(deps.pool, now, OVERDUE_HOSTS_SHOWN)
    const series = await readStatsSeries(deps.pool, { from, to: now, bucketSeconds })
    const activity = await readCrawlActivity(deps.pool, { from, to: now })
    return {
      windowHours,
      optimizer: { lambda: state.lambda, solvedAt: state.solvedAt?.toISOString() ?? null },
      changeRateHistogram: histogram(histograms.changesPerDay, RATE_BINS),
      crawlRateHistogram: histogram(histograms.crawlsPerDay, RATE_BINS),
      optimizerRuns: runs.map((r) => ({ ...r, startedAt: r.startedAt.toISOString() })),
      topOverdueHosts: hosts.map((h) => ({
        host: h.host,
        pagesOverdue: h.pagesOverdue,
        oldestOverdueAgeSeconds: Math.max(0, (nowMs - h.oldestOverdueAt.getTime()) / 1000),
      })),
      series: {
        bucketSeconds,
        points: series.map(({ sampledAt, ...p }) => ({ at: sampledAt.toISOString(), ...p })),
      },
      crawlActivity: hourlyActivity(activity, from.getTime(), nowMs),
    }
  }

  return {
    snapshot,
    details({ windowHours }) {
      let get = detailsByWindow.get(windowHours)
      if (!get) {
        if (detailsByWindow.size > 32) detailsByWindow.clear()
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
export function startStatsSampler(stats: Stats, options: { intervalMs: number; logger?: Logger | undefined }): { stop(): void } {
  const timer = setInterval(() => {
    stats.snapshot().catch((err: unknown) => options.logger?.warn({ err }, 'stats snapshot failed'))
  }, options.intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
