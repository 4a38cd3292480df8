import type { Queryable } from './transaction.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'
import type { HostBlockState } from '../core/fetchOutcomes.ts'
import type { CrawlSpacing } from '../core/settings.ts'
import { weightedFreshnessSql } from './statsRepo.ts'
import { likePrefix } from './likePatterns.ts'

export interface HostRow {
  host: string
  maxCrawlsPerDay: number | null
  minDelaySeconds: number | null
  crawlDelaySeconds: number | null
  throttleDelaySeconds: number | null
  paceSeconds: number
  pages: number
}

const HOST_COLUMNS = `h.host, h.max_crawls_per_day AS "maxCrawlsPerDay", h.min_delay_seconds AS "minDelaySeconds",
  h.crawl_delay_seconds AS "crawlDelaySeconds", h.throttle_delay_seconds AS "throttleDelaySeconds", h.pace_seconds AS "paceSeconds",
  (SELECT count(*)::int FROM pages p WHERE p.host = h.host) AS pages`

/**
 * Marks or unmarks the pages of these hosts, whose rows this transaction has written (and so holds locked),
 * when the sign of a host's pace no longer matches how its pages are marked (hosts.pages_polite, migrations/0026).
 * Pages of a paced host are kept out of the global due order and served one per host and per pace (leasesRepo.ts).
 */
async function syncPoliteMarks(q: Queryable, hosts: readonly string[]): Promise<void> {
  if (hosts.length === 0) return
  const { rows } = await q.query<{ host: string; polite: boolean }>(
    `UPDATE hosts h SET pages_polite = h.pace_seconds > 0
     WHERE h.host = ANY($1::text[]) AND h.pages_polite <> (h.pace_seconds > 0)
     RETURNING h.host, h.pages_polite AS polite`,
    [hosts],
  )
  await markPages(q, rows)
}

/**
 * Sets the politeness mark of every page of these hosts, found through pages (host, id); the join names the
 * host on both sides, as Citus needs to join the two tables where they live when both are distributed by host.
 */
async function markPages(q: Queryable, hosts: readonly { host: string; polite: boolean }[]): Promise<void> {
  if (hosts.length === 0) return
  await q.query(
    `UPDATE page_schedule s SET polite = m.polite
     FROM unnest($1::text[], $2::boolean[]) AS m(host, polite), pages p
     WHERE p.host = m.host AND s.host = p.host AND s.page_id = p.id AND s.polite <> m.polite`,
    [hosts.map((h) => h.host), hosts.map((h) => h.polite)],
  )
}

export async function upsertHost(
  q: Queryable,
  host: { host: string; maxCrawlsPerDay: number | null; minDelaySeconds: number | null },
  nowMs: number,
): Promise<void> {
  await q.query(
    `INSERT INTO hosts (host, max_crawls_per_day, min_delay_seconds, updated_at) VALUES ($1, $2, $3, $4::timestamptz)
     ON CONFLICT (host) DO UPDATE SET max_crawls_per_day = excluded.max_crawls_per_day,
       min_delay_seconds = excluded.min_delay_seconds, updated_at = excluded.updated_at`,
    [host.host, host.maxCrawlsPerDay, host.minDelaySeconds, new Date(nowMs)],
  )
  await syncPoliteMarks(q, [host.host])
}

/** Deletes a host's row; its pages, if marked polite, return to the global due order. */
export async function deleteHost(q: Queryable, host: string): Promise<boolean> {
  const { rows } = await q.query<{ polite: boolean }>(
    'DELETE FROM hosts WHERE host = $1 RETURNING pages_polite AS polite',
    [host],
  )
  if (rows[0]?.polite === true) await markPages(q, [{ host, polite: false }])
  return rows.length > 0
}

/** Hosts with configured limits, with their page counts. */
export async function listHosts(q: Queryable): Promise<HostRow[]> {
  const { rows } = await q.query<HostRow>(`SELECT ${HOST_COLUMNS} FROM hosts h ORDER BY h.host`)
  return rows
}

export async function getHost(q: Queryable, host: string): Promise<HostRow | null> {
  const { rows } = await q.query<HostRow>(`SELECT ${HOST_COLUMNS} FROM hosts h WHERE h.host = $1`, [host])
  return rows[0] ?? null
}

/**
 * Per-host crawl caps (only hosts that have one): the operator's maxCrawlsPerDay, and a paced host's
 * 86,400 / pace crawls per day (one page per pace), whichever is smaller.
 */
export async function hostCaps(q: Queryable): Promise<Map<string, number>> {
  const { rows } = await q.query<{ host: string; cap: number }>(
    `SELECT host, least(max_crawls_per_day, CASE WHEN pace_seconds > 0 THEN ${SECONDS_PER_DAY} / pace_seconds END) AS cap
     FROM hosts WHERE max_crawls_per_day IS NOT NULL OR pace_seconds > 0`,
  )
  return new Map(rows.map((r) => [r.host, r.cap]))
}

/** A host's adaptive pacing state, for the hosts that have one or got signals. */
export interface HostPacingRow {
  host: string
  throttleDelaySeconds: number | null
  /** The pace the delay does not recover below, learned from the host's last push-back (fetchOutcomes.ts). */
  pushbackSeconds: number | null
}

/** Hosts whose adaptive delay is running (a small set: the hosts that pushed back lately). */
export async function throttledHosts(q: Queryable): Promise<HostPacingRow[]> {
  const { rows } = await q.query<HostPacingRow>(
    `SELECT host, throttle_delay_seconds AS "throttleDelaySeconds", pushback_pace_seconds AS "pushbackSeconds"
     FROM hosts WHERE throttle_delay_seconds > 0`,
  )
  return rows
}

/** The backoff state of the given hosts that have a row (docs/api.md, "Host backoff"). */
export async function hostBlockStates(q: Queryable, hosts: readonly string[]): Promise<Map<string, HostBlockState>> {
  if (hosts.length === 0) return new Map()
  const { rows } = await q.query<{ host: string; incidents: number; blockedUntil: Date | null; timeouts: number }>(
    `SELECT host, block_incidents AS incidents, blocked_until AS "blockedUntil", timeouts_in_a_row AS timeouts
     FROM hosts WHERE host = ANY($1::text[])`,
    [hosts],
  )
  return new Map(
    rows.map((r) => [
      r.host,
      {
        incidents: r.incidents,
        blockedUntilMs: r.blockedUntil === null ? null : r.blockedUntil.getTime(),
        timeoutsInARow: r.timeouts,
      },
    ]),
  )
}

/**
 * When the host was last crawled before `beforeMs` (epoch ms), from its pages' latest crawls; null when never.
 * Read for a host that pushed back, to learn the spacing it refused (fetchOutcomes.ts, nextAdaptivePace).
 */
export async function hostCrawledBefore(q: Queryable, host: string, beforeMs: number): Promise<number | null> {
  const { rows } = await q.query<{ at: Date | null }>(
    `SELECT max(last_crawled_at) AS at FROM pages WHERE host = $1 AND last_crawled_at < $2`,
    [host, new Date(beforeMs)],
  )
  return rows[0]?.at ? rows[0].at.getTime() : null
}

export interface HostPacingUpdate {
  host: string
  /** The host's backoff state after the batch. */
  block: HostBlockState
  throttleDelaySeconds: number | null
  pushbackSeconds: number | null
  /** No page of the host before this (a Retry-After); null = unchanged. */
  pauseUntilMs: number | null
  /** The robots.txt Crawl-delay; undefined = unchanged, null = cleared. */
  crawlDelaySeconds?: number | null
}

/**
 * Writes hosts' adaptive pacing, in host order (creating the row of a host that has no limits yet). A host
 * whose pace becomes positive gets its pages marked polite, one whose pace falls to 0 unmarked (migrations/0026).
 * The time is the clock's, carried in the inserted rows (see upsertPages in pagesRepo.ts for why).
 */
export async function writeHostPacing(
  q: Queryable,
  updates: readonly HostPacingUpdate[],
  nowMs: number,
): Promise<void> {
  if (updates.length === 0) return
  const sorted = [...updates].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
  await q.query(
    `INSERT INTO hosts AS h (host, throttle_delay_seconds, next_lease_at, block_incidents, blocked_until, timeouts_in_a_row,
       pushback_pace_seconds, updated_at)
     SELECT u.host, u.throttle, u.pause_until, u.incidents, u.blocked_until, u.timeouts, u.pushback, $8::timestamptz
     FROM unnest($1::text[], $2::float8[], $3::timestamptz[], $4::int[], $5::timestamptz[], $6::int[], $7::float8[])
       WITH ORDINALITY AS u(host, throttle, pause_until, incidents, blocked_until, timeouts, pushback, ord)
     ORDER BY u.ord
     ON CONFLICT (host) DO UPDATE SET
       throttle_delay_seconds = excluded.throttle_delay_seconds,
       pushback_pace_seconds = excluded.pushback_pace_seconds,
       next_lease_at = greatest(h.next_lease_at, excluded.next_lease_at),
       block_incidents = excluded.block_incidents,
       blocked_until = excluded.blocked_until,
       timeouts_in_a_row = excluded.timeouts_in_a_row,
       updated_at = excluded.updated_at`,
    [
      sorted.map((u) => u.host),
      sorted.map((u) => u.throttleDelaySeconds),
      sorted.map((u) => (u.pauseUntilMs === null ? null : new Date(u.pauseUntilMs))),
      sorted.map((u) => u.block.incidents),
      sorted.map((u) => (u.block.blockedUntilMs === null ? null : new Date(u.block.blockedUntilMs))),
      sorted.map((u) => u.block.timeoutsInARow),
      sorted.map((u) => u.pushbackSeconds),
      new Date(nowMs),
    ],
  )
  const delays = sorted.filter((u) => u.crawlDelaySeconds !== undefined)
  if (delays.length > 0) await writeCrawlDelays(q, delays, nowMs)
  await syncPoliteMarks(
    q,
    sorted.map((u) => u.host),
  )
}

async function writeCrawlDelays(q: Queryable, delays: readonly HostPacingUpdate[], nowMs: number): Promise<void> {
  await q.query(
    `UPDATE hosts h SET crawl_delay_seconds = u.delay, updated_at = $3::timestamptz
     FROM unnest($1::text[], $2::float8[]) AS u(host, delay)
     WHERE h.host = u.host`,
    [
      delays.map((u) => u.host),
      delays.map((u) => (u.crawlDelaySeconds !== null && u.crawlDelaySeconds! > 0 ? u.crawlDelaySeconds : null)),
      new Date(nowMs),
    ],
  )
}

/** The columns GET /v1/host-overview sorts by, each a column of host_rollup (migrations/0022). */
export const HOST_OVERVIEW_SORTS = {
  host: 'r.host',
  pages: 'r.pages',
  plannedCrawlsPerDay: 'r.planned_crawls_per_day',
  crawlsLastDay: 'r.crawls_last_day',
  failuresLastDay: 'r.failures_last_day',
  pagesOverdue: 'r.pages_overdue',
  pagesFailing: 'r.pages_failing',
  expectedFreshness: 'r.expected_freshness',
} as const

export type HostOverviewSort = keyof typeof HOST_OVERVIEW_SORTS

export interface HostOverviewRow {
  host: string
  pages: number
  pagesActive: number
  pagesFailing: number
  pagesGone: number
  pagesRedirected: number
  pagesNoisy: number
  pagesOverdue: number
  plannedCrawlsPerDay: number
  importanceTotal: number
  weightedFreshness: number
  maxCrawlsPerDay: number | null
  paceSeconds: number | null
  throttleDelaySeconds: number | null
  blockIncidents: number | null
  blockedUntil: Date | null
  crawlsLastDay: number
  failuresLastDay: number
  http4xx: number
  http429: number
  http5xx: number
  httpOther: number
  timeouts: number
  dns: number
  connection: number
  tls: number
  otherErrors: number
}

/** How the overview's numbers are computed: as of nowMs, under the schedule's spacing. */
export interface HostOverviewClock {
  nowMs: number
  spacing: CrawlSpacing
  defaultChangesPerDay: number
}

/**
 * Per-host numbers of GET /v1/host-overview (docs/api.md "Host overview") for the hosts that `filter`
 * selects: pages by status, overdue pages, planned crawls and Σ importance·f(ρ) from the pages and their
 * schedules; crawls and failures by kind in the day before nowMs from the observations; limits, pace and
 * backoff from the hosts table. Hosts with no page are left out. Parameters $1 (now) and $2 (the default
 * change rate) are the overview's, `filter` may use $3.
 */
function hostNumbersSql(spacing: CrawlSpacing, filter: string): string {
  return `WITH a AS (
       SELECT p.host, count(*)::int AS pages,
         count(*) FILTER (WHERE p.status = 'active')::int AS active,
         count(*) FILTER (WHERE p.status = 'failing')::int AS failing,
         count(*) FILTER (WHERE p.status = 'gone')::int AS gone,
         count(*) FILTER (WHERE p.status = 'redirected')::int AS redirected,
         count(*) FILTER (WHERE p.noisy)::int AS noisy,
         count(*) FILTER (WHERE s.next_crawl_at <= $1 AND (s.lease_id IS NULL OR s.lease_expires_at <= $1))::int AS overdue,
         coalesce(sum(s.crawls_per_day), 0)::float8 AS planned,
         coalesce(sum(s.importance), 0)::float8 AS importance,
         coalesce(sum(${weightedFreshnessSql(spacing)}), 0)::float8 AS weighted
       FROM pages p JOIN page_schedule s ON s.page_id = p.id
       WHERE ${filter}
       GROUP BY p.host
     ), f AS (
       SELECT p.host, count(*)::int AS crawls,
         count(*) FILTER (WHERE o.fetch_error IS NOT NULL OR o.http_status < 200 OR o.http_status >= 400)::int AS failures,
         count(*) FILTER (WHERE o.http_status >= 400 AND o.http_status < 500 AND o.http_status <> 429)::int AS http4xx,
         count(*) FILTER (WHERE o.http_status = 429)::int AS http429,
         count(*) FILTER (WHERE o.http_status >= 500)::int AS http5xx,
         count(*) FILTER (WHERE o.http_status < 200)::int AS http_other,
         count(*) FILTER (WHERE o.fetch_error = 'timeout')::int AS timeouts,
         count(*) FILTER (WHERE o.fetch_error = 'dns')::int AS dns,
         count(*) FILTER (WHERE o.fetch_error = 'connection')::int AS connection,
         count(*) FILTER (WHERE o.fetch_error = 'tls')::int AS tls,
         count(*) FILTER (WHERE o.fetch_error = 'other')::int AS other_errors
       FROM observations o JOIN pages p ON p.id = o.page_id
       WHERE o.crawled_at > $1::timestamptz - interval '1 day' AND o.crawled_at <= $1 AND ${filter}
       GROUP BY p.host
     ), n AS (
       SELECT a.host, a.pages, a.active AS "pagesActive", a.failing AS "pagesFailing", a.gone AS "pagesGone",
         a.redirected AS "pagesRedirected", a.noisy AS "pagesNoisy", a.overdue AS "pagesOverdue",
         a.planned AS "plannedCrawlsPerDay", a.importance AS "importanceTotal", a.weighted AS "weightedFreshness",
         h.max_crawls_per_day AS "maxCrawlsPerDay", h.pace_seconds AS "paceSeconds",
         h.throttle_delay_seconds AS "throttleDelaySeconds", h.block_incidents AS "blockIncidents",
         h.blocked_until AS "blockedUntil",
         coalesce(f.crawls, 0) AS "crawlsLastDay", coalesce(f.failures, 0) AS "failuresLastDay",
         coalesce(f.http4xx, 0) AS http4xx, coalesce(f.http429, 0) AS http429, coalesce(f.http5xx, 0) AS http5xx,
         coalesce(f.http_other, 0) AS "httpOther", coalesce(f.timeouts, 0) AS timeouts, coalesce(f.dns, 0) AS dns,
         coalesce(f.connection, 0) AS connection, coalesce(f.tls, 0) AS tls, coalesce(f.other_errors, 0) AS "otherErrors"
       FROM a LEFT JOIN f ON f.host = a.host LEFT JOIN hosts h ON h.host = a.host
     )`
}

/**
 * The overview's numbers of the given hosts, computed from their pages and crawls as of clock.nowMs (through
 * the (host, id) index of pages: the cost grows with these hosts' pages and crawls, not with the table).
 */
export async function readHostNumbers(
  q: Queryable,
  clock: HostOverviewClock,
  hosts: readonly string[],
): Promise<HostOverviewRow[]> {
  if (hosts.length === 0) return []
  const { rows } = await q.query<HostOverviewRow>(
    `${hostNumbersSql(clock.spacing, 'p.host = ANY($3::text[])')} SELECT * FROM n ORDER BY host`,
    [new Date(clock.nowMs), clock.defaultChangesPerDay, hosts],
  )
  return rows
}

/** When host_rollup's sort values were last computed (null: never). */
export async function hostRollupRefreshedAt(q: Queryable): Promise<Date | null> {
  const { rows } = await q.query<{ at: Date | null }>('SELECT refreshed_at AS at FROM host_rollup_state')
  return rows[0]?.at ?? null
}

/** Set apart from the optimiser's (optimizerRepo.ts): one refresh of host_rollup at a time. */
const HOST_ROLLUP_LOCK_KEY = 7242019022

/**
 * Recomputes every sort value of host_rollup from scratch as of clock.nowMs, in one transaction of `q`
 * (the caller's), unless another refresh holds the lock (then false, nothing done). Hosts with pages get
 * their row; rows of hosts without pages are dropped (the triggers of migrations/0022 keep both true
 * between refreshes; a refresh also repairs what concurrent statements left behind).
 */
export async function refreshHostRollup(q: Queryable, clock: HostOverviewClock): Promise<boolean> {
  const { rows } = await q.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [HOST_ROLLUP_LOCK_KEY])
  if (rows[0]?.ok !== true) return false
  // Rather than wait for a statement that deletes pages (and holds host rows), this refresh gives up and
  // leaves its values to the next one: it never becomes the other side of a deadlock.
  await q.query(`SET LOCAL lock_timeout = '500ms'`)
  await q.query(
    `${hostNumbersSql(clock.spacing, 'true')},
     up AS (
       INSERT INTO host_rollup AS r (host, pages, pages_failing, pages_overdue, planned_crawls_per_day,
         expected_freshness, crawls_last_day, failures_last_day)
       SELECT host, pages, "pagesFailing", "pagesOverdue", "plannedCrawlsPerDay",
         CASE WHEN "importanceTotal" > 0 THEN "weightedFreshness" / "importanceTotal" END, "crawlsLastDay", "failuresLastDay"
       FROM n ORDER BY host
       ON CONFLICT (host) DO UPDATE SET pages = excluded.pages, pages_failing = excluded.pages_failing,
         pages_overdue = excluded.pages_overdue, planned_crawls_per_day = excluded.planned_crawls_per_day,
         expected_freshness = excluded.expected_freshness, crawls_last_day = excluded.crawls_last_day,
         failures_last_day = excluded.failures_last_day
       RETURNING r.host
     ), gone AS (
       DELETE FROM host_rollup r WHERE NOT EXISTS (SELECT 1 FROM up WHERE up.host = r.host)
     )
     UPDATE host_rollup_state SET refreshed_at = $1`,
    [new Date(clock.nowMs), clock.defaultChangesPerDay],
  )
  return true
}

/**
 * Lists the given hosts in host_rollup (those that got their first page) and drops the rows of the given
 * hosts that have no page left: for statements that add, delete or move pages (migrations/0022, 0026).
 */
export async function moveHostRollupRows(
  q: Queryable,
  hosts: { gained: readonly string[]; lost: readonly string[] },
): Promise<void> {
  if (hosts.gained.length > 0) {
    await q.query(
      `INSERT INTO host_rollup (host) SELECT DISTINCT h FROM unnest($1::text[]) AS h ORDER BY h ON CONFLICT (host) DO NOTHING`,
      [hosts.gained],
    )
  }
  if (hosts.lost.length > 0) {
    // The rows are locked in host order first, as the refresh writes them, so that two statements never wait
    // for each other's rows in opposite orders.
    await q.query(
      `WITH locked AS (SELECT r.host FROM host_rollup r WHERE r.host = ANY($1::text[]) ORDER BY r.host FOR UPDATE)
       DELETE FROM host_rollup r USING locked l
       WHERE r.host = l.host AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.host = r.host)`,
      [hosts.lost],
    )
  }
}

/**
 * One page of hosts of the overview, in host_rollup's order as of its last refresh (`sort`, ties by host;
 * hosts without a value last), with the number of hosts matching the prefix.
 */
export async function rankHosts(
  q: Queryable,
  options: { hostPrefix: string | null; sort: HostOverviewSort; descending: boolean; offset: number; limit: number },
): Promise<{ hosts: string[]; total: number }> {
  const direction = options.descending ? 'DESC NULLS LAST' : 'ASC NULLS LAST'
  const prefix = options.hostPrefix === null ? null : likePrefix(options.hostPrefix)
  const page = await q.query<{ host: string }>(
    `SELECT r.host FROM host_rollup r WHERE $1::text IS NULL OR r.host LIKE $1
     ORDER BY ${HOST_OVERVIEW_SORTS[options.sort]} ${direction}, r.host
     LIMIT $2 OFFSET $3`,
    [prefix, options.limit, options.offset],
  )
  const count = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM host_rollup r WHERE $1::text IS NULL OR r.host LIKE $1',
    [prefix],
  )
  return { hosts: page.rows.map((r) => r.host), total: count.rows[0]?.n ?? 0 }
}
