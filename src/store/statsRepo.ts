import type { Queryable } from './transaction.ts'
import type { CrawlSpacing } from '../core/settings.ts'

/** The fleet-wide numbers behind the gauges, from one pass over the pages and their schedules, and one time-window count. */
interface StatsSnapshotRow {
  pages: number
  pagesLeased: number
  pagesOverdue: number
  /** Earliest due time among the overdue pages, or null when none is overdue. */
  oldestOverdueAt: Date | null
  importanceTotal: number
  /** Σ importance·f(ρ) over every page, sitemap items apart (f per schedule, see readStatsSnapshot). */
  weightedFreshness: number
  plannedCrawlsPerDay: number
  crawlsLastHour: number
  /** Pages by fetch status (docs/api.md "Fetch outcomes"), and pages flagged noisy. */
  pagesFailing: number
  pagesGone: number
  pagesRedirected: number
  pagesNoisy: number
  /** Sitemap items (docs/api.md "Sitemaps as scheduled items"): counted apart from the pages above. */
  sitemaps: { items: number; leased: number; overdue: number; notActive: number; plannedCrawlsPerDay: number }
}

/**
 * A page's expected freshness f(ρ) in SQL (ρ = crawls_per_day, Δ = changes_per_day or the prior):
 * periodic crawling (ρ/Δ)(1 − e^{−Δ/ρ}) (docs/math.md 3.3), Poisson crawling ρ/(ρ+Δ) (docs/math.md 3.1).
 * Δ = 0 → 1, ρ = 0 or unset → 0. For small x = Δ/ρ the periodic form uses its series
 * 1 − x/2 + x²/6 (1 − e^{−x} loses every digit as x → 0), and 1 below x = 1e-100.
 *
 * Postgres raises an error when a float8 result underflows to 0, so no step may produce one: ρ and Δ
 * are clamped to [1e-150, 1e150] (rates far outside any crawl; the clamp changes no result within
 * it), e^{−x} is cut at x = 700, and the weight μ·f takes f at least 1e-100 and μ only above 1e-200.
 */
const RATE_CLAMP = (column: string): string => `least(greatest(${column}, 1e-150::float8), 1e150::float8)`

function freshnessSql(spacing: CrawlSpacing): string {
  const rhoRaw = 'coalesce(crawls_per_day, 0)'
  const deltaRaw = 'coalesce(changes_per_day, $2::float8)'
  const rho = RATE_CLAMP(rhoRaw)
  const delta = RATE_CLAMP(deltaRaw)
  const x = `(${delta} / ${rho})`
  const f =
    spacing === 'periodic'
      ? `CASE WHEN ${x} < 1e-100 THEN 1 WHEN ${x} < 1e-4 THEN 1 - ${x} / 2 + ${x} * ${x} / 6 ELSE (1 - exp(-least(${x}, 700))) / ${x} END`
      : `${rho} / (${rho} + ${delta})`
  return `CASE WHEN ${deltaRaw} <= 0 THEN 1 WHEN ${rhoRaw} <= 0 THEN 0 ELSE ${f} END`
}

/** μ·f(ρ) without an underflowing product (see freshnessSql). */
export function weightedFreshnessSql(spacing: CrawlSpacing): string {
  return `CASE WHEN importance <= 1e-200 THEN 0 ELSE importance * greatest(${freshnessSql(spacing)}, 1e-100) END`
}

/**
 * Overdue: due (next_crawl_at ≤ now) and not held by an unexpired lease (an expired lease is returned
 * to the pool by the next lease call, so its pages count as waiting).
 */
const OVERDUE = 'next_crawl_at <= $1 AND (lease_id IS NULL OR lease_expires_at <= $1)'
/** Held by an unexpired lease. */
const LEASED = 'lease_id IS NOT NULL AND lease_expires_at > $1'
/** A page, not a sitemap item (migrations/0025): the page counts and freshness figures are of pages only. */
const PAGE = "p.kind = 'page'"

export async function readStatsSnapshot(
  q: Queryable,
  options: { nowMs: number; spacing: CrawlSpacing; defaultChangesPerDay: number },
): Promise<StatsSnapshotRow> {
  const pages = await q.query<{
    pages: number
    leased: number
    overdue: number
    oldest: Date | null
    importance: number | null
    weighted: number | null
    planned: number | null
    failing: number
    gone: number
    redirected: number
    noisy: number
    sitemaps: number
    sitemapsLeased: number
    sitemapsOverdue: number
    sitemapsFailing: number
    sitemapCrawlsPerDay: number | null
  }>(
    `SELECT count(*) FILTER (WHERE ${PAGE})::int AS pages,
       count(*) FILTER (WHERE ${PAGE} AND ${LEASED})::int AS leased,
       count(*) FILTER (WHERE ${PAGE} AND ${OVERDUE})::int AS overdue,
       min(next_crawl_at) FILTER (WHERE ${PAGE} AND ${OVERDUE}) AS oldest,
       sum(importance) FILTER (WHERE ${PAGE}) AS importance,
       sum(${weightedFreshnessSql(options.spacing)}) FILTER (WHERE ${PAGE}) AS weighted,
       sum(crawls_per_day) AS planned,
       count(*) FILTER (WHERE ${PAGE} AND status = 'failing')::int AS failing,
       count(*) FILTER (WHERE ${PAGE} AND status = 'gone')::int AS gone,
       count(*) FILTER (WHERE ${PAGE} AND status = 'redirected')::int AS redirected,
       count(*) FILTER (WHERE ${PAGE} AND noisy)::int AS noisy,
       count(*) FILTER (WHERE NOT ${PAGE})::int AS sitemaps,
       count(*) FILTER (WHERE NOT ${PAGE} AND ${LEASED})::int AS "sitemapsLeased",
       count(*) FILTER (WHERE NOT ${PAGE} AND ${OVERDUE})::int AS "sitemapsOverdue",
       count(*) FILTER (WHERE NOT ${PAGE} AND status <> 'active')::int AS "sitemapsFailing",
       sum(crawls_per_day) FILTER (WHERE NOT ${PAGE}) AS "sitemapCrawlsPerDay"
     FROM pages p JOIN page_schedule s ON s.page_id = p.id`,
    [new Date(options.nowMs), options.defaultChangesPerDay],
  )
  const crawls = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM observations WHERE crawled_at > $1::timestamptz - interval '1 hour' AND crawled_at <= $1`,
    [new Date(options.nowMs)],
  )
  const r = pages.rows[0]!
  return {
    pages: r.pages,
    pagesLeased: r.leased,
    pagesOverdue: r.overdue,
    oldestOverdueAt: r.oldest,
    importanceTotal: r.importance ?? 0,
    weightedFreshness: r.weighted ?? 0,
    plannedCrawlsPerDay: r.planned ?? 0,
    crawlsLastHour: crawls.rows[0]?.n ?? 0,
    pagesFailing: r.failing,
    pagesGone: r.gone,
    pagesRedirected: r.redirected,
    pagesNoisy: r.noisy,
    sitemaps: {
      items: r.sitemaps,
      leased: r.sitemapsLeased,
      overdue: r.sitemapsOverdue,
      notActive: r.sitemapsFailing,
      plannedCrawlsPerDay: r.sitemapCrawlsPerDay ?? 0,
    },
  }
}

/** Counts of a rate column over log10-spaced bins; rows outside [10^minLog10, 10^maxLog10) and zeros go to below/above. */
interface RateHistogramRow {
  counts: number[]
  below: number
  above: number
  unknown: number
}

export interface HistogramBins {
  minLog10: number
  maxLog10: number
  bins: number
}

/** width_bucket over log10(rate) for `changes_per_day` and `crawls_per_day` in one scan. */
export async function readRateHistograms(
  q: Queryable,
  bins: HistogramBins,
): Promise<{ changesPerDay: RateHistogramRow; crawlsPerDay: RateHistogramRow }> {
  const { rows } = await q.query<{ kind: 'changes' | 'crawls'; bucket: number | null; n: number }>(
    `SELECT c.kind, CASE WHEN c.rate IS NULL THEN NULL WHEN c.rate <= 0 THEN 0
                           ELSE width_bucket(log(c.rate), $1::float8, $2::float8, $3::int) END AS bucket,
            count(*)::int AS n
     FROM pages p JOIN page_schedule s ON s.page_id = p.id
     CROSS JOIN LATERAL (VALUES ('changes', p.changes_per_day), ('crawls', s.crawls_per_day)) AS c(kind, rate)
     GROUP BY 1, 2`,
    [bins.minLog10, bins.maxLog10, bins.bins],
  )
  const empty = (): RateHistogramRow => ({
    counts: new Array<number>(bins.bins).fill(0),
    below: 0,
    above: 0,
    unknown: 0,
  })
  const out = { changesPerDay: empty(), crawlsPerDay: empty() }
  for (const r of rows) {
    const h = r.kind === 'changes' ? out.changesPerDay : out.crawlsPerDay
    if (r.bucket === null) h.unknown += r.n
    else if (r.bucket <= 0) h.below += r.n
    else if (r.bucket > bins.bins) h.above += r.n
    else h.counts[r.bucket - 1]! += r.n
  }
  return out
}

interface OverdueHostRow {
  host: string
  pagesOverdue: number
  oldestOverdueAt: Date
}

/** Hosts with the most overdue pages (ties: oldest due first). */
export async function readTopOverdueHosts(q: Queryable, nowMs: number, limit: number): Promise<OverdueHostRow[]> {
  const { rows } = await q.query<OverdueHostRow>(
    `SELECT host, count(*)::int AS "pagesOverdue", min(next_crawl_at) AS "oldestOverdueAt"
     FROM page_schedule WHERE ${OVERDUE}
     GROUP BY host ORDER BY count(*) DESC, min(next_crawl_at), host LIMIT $2`,
    [new Date(nowMs), limit],
  )
  return rows
}

interface StatsSampleRow {
  sampledAt: Date
  pages: number
  pagesOverdue: number
  oldestOverdueAgeSeconds: number
  expectedFreshness: number | null
  budgetCrawlsPerDay: number
  plannedCrawlsPerDay: number
  crawlsPerDayLastHour: number
}

/** A sample to record: the row, its time in epoch ms. */
type StatsSample = Omit<StatsSampleRow, 'sampledAt'> & { sampledAtMs: number }

/**
 * Records a sample under its minute (a second sample in the same minute, from this or another
 * replica, is dropped) and prunes samples older than `retainSinceMs`. Returns whether it was stored.
 */
export async function insertStatsSample(q: Queryable, s: StatsSample, retainSinceMs: number): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO stats_samples (sampled_at, pages, pages_overdue, oldest_overdue_age_seconds, expected_freshness,
       budget_crawls_per_day, planned_crawls_per_day, crawls_per_day_last_hour)
     VALUES (date_trunc('minute', $1::timestamptz), $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (sampled_at) DO NOTHING`,
    [
      new Date(s.sampledAtMs),
      s.pages,
      s.pagesOverdue,
      s.oldestOverdueAgeSeconds,
      s.expectedFreshness,
      s.budgetCrawlsPerDay,
      s.plannedCrawlsPerDay,
      s.crawlsPerDayLastHour,
    ],
  )
  const stored = (rowCount ?? 0) > 0
  if (stored) await q.query('DELETE FROM stats_samples WHERE sampled_at < $1', [new Date(retainSinceMs)])
  return stored
}

/** Samples in (from, to], averaged over buckets of `bucketSeconds` (a bucket is named by its start). */
export async function readStatsSeries(
  q: Queryable,
  options: { fromMs: number; toMs: number; bucketSeconds: number },
): Promise<StatsSampleRow[]> {
  const { rows } = await q.query<StatsSampleRow>(
    `SELECT to_timestamp(floor(extract(epoch FROM sampled_at) / $3) * $3) AS "sampledAt",
       round(avg(pages))::int AS pages, round(avg(pages_overdue))::int AS "pagesOverdue",
       avg(oldest_overdue_age_seconds) AS "oldestOverdueAgeSeconds", avg(expected_freshness) AS "expectedFreshness",
       avg(budget_crawls_per_day) AS "budgetCrawlsPerDay", avg(planned_crawls_per_day) AS "plannedCrawlsPerDay",
       avg(crawls_per_day_last_hour) AS "crawlsPerDayLastHour"
     FROM stats_samples WHERE sampled_at > $1 AND sampled_at <= $2
     GROUP BY 1 ORDER BY 1`,
    [new Date(options.fromMs), new Date(options.toMs), options.bucketSeconds],
  )
  return rows
}

export interface CrawlActivityRow {
  hourStart: Date
  /** The status reported with these crawls (null: none). */
  httpStatus: number | null
  /** The fetchError reported with these crawls (null: none). */
  fetchError: string | null
  crawls: number
  changes: number
}

/**
 * The start of the hour a timestamptz falls in, as SQL: whole UTC hours whatever the session's time zone (hours
 * counted from the Unix epoch). `date_bin` is immutable, as Citus requires of a function in a distributed
 * statement's RETURNING; `extract(epoch FROM …)` of a timestamptz is only stable.
 */
export const utcHourStart = (t: string): string => `date_bin('1 hour', ${t}, timestamptz '1970-01-01 00:00:00+00')`

/**
 * Crawls (observations by crawl time) and detected changes per hour and reported HTTP status in
 * (from, to]: one scan of the window (observations_crawled_at_brin), a few rows per hour.
 */
export async function readCrawlActivity(
  q: Queryable,
  options: { fromMs: number; toMs: number },
): Promise<CrawlActivityRow[]> {
  const { rows } = await q.query<CrawlActivityRow>(
    `SELECT ${utcHourStart('crawled_at')} AS "hourStart",
       http_status::int AS "httpStatus", fetch_error AS "fetchError",
       count(*)::int AS crawls, count(*) FILTER (WHERE changed)::int AS changes
     FROM observations WHERE crawled_at > $1 AND crawled_at <= $2
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    [new Date(options.fromMs), new Date(options.toMs)],
  )
  return rows
}

interface FetchFailureRow {
  host: string
  /** The failed status; null for a fetch without an HTTP answer (then fetchError says why). */
  httpStatus: number | null
  /** timeout, dns, connection, tls or other: the fetch got no HTTP answer; null with a status. */
  fetchError: string | null
  /** Failed crawls with this status on this host in the window. */
  fetches: number
  /** Distinct pages among them. */
  pages: number
  lastCrawledAt: Date
}

/**
 * Failed fetches in (from, to] by host and status or fetch error, most first (ties: latest first, then
 * host, status, error). Failed: a reported status outside 200…399, or no HTTP answer at all (a
 * fetchError), no content seen; observations_failed_fetches (migration 0018) indexes exactly these
 * rows, so the query reads the window's failures only.
 */
export async function readFetchFailures(
  q: Queryable,
  options: { fromMs: number; toMs: number; limit: number },
): Promise<FetchFailureRow[]> {
  const { rows } = await q.query<FetchFailureRow>(
    `SELECT p.host, o.http_status::int AS "httpStatus", o.fetch_error AS "fetchError", count(*)::int AS fetches,
       count(DISTINCT o.page_id)::int AS pages, max(o.crawled_at) AS "lastCrawledAt"
     FROM observations o JOIN pages p ON p.id = o.page_id
     WHERE o.crawled_at > $1 AND o.crawled_at <= $2
       AND (o.http_status < 200 OR o.http_status >= 400 OR o.fetch_error IS NOT NULL)
     GROUP BY 1, 2, 3 ORDER BY count(*) DESC, max(o.crawled_at) DESC, 1, 2, 3 LIMIT $3`,
    [new Date(options.fromMs), new Date(options.toMs), options.limit],
  )
  return rows
}
