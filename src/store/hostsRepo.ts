import type { Queryable } from './transaction.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'
import type { HostBlockState } from '../core/fetchOutcomes.ts'

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

export async function upsertHost(
  q: Queryable,
  host: { host: string; maxCrawlsPerDay: number | null; minDelaySeconds: number | null },
): Promise<void> {
  await q.query(
    `INSERT INTO hosts (host, max_crawls_per_day, min_delay_seconds) VALUES ($1, $2, $3)
     ON CONFLICT (host) DO UPDATE SET max_crawls_per_day = excluded.max_crawls_per_day,
       min_delay_seconds = excluded.min_delay_seconds, updated_at = now()`,
    [host.host, host.maxCrawlsPerDay, host.minDelaySeconds],
  )
}

export async function deleteHost(q: Queryable, host: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM hosts WHERE host = $1', [host])
  return (rowCount ?? 0) > 0
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
}

/** Hosts whose adaptive delay is running (a small set: the hosts that pushed back lately). */
export async function throttledHosts(q: Queryable): Promise<HostPacingRow[]> {
  const { rows } = await q.query<HostPacingRow>(
    'SELECT host, throttle_delay_seconds AS "throttleDelaySeconds" FROM hosts WHERE throttle_delay_seconds > 0',
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

export interface HostPacingUpdate {
  host: string
  /** The host's backoff state after the batch. */
  block: HostBlockState
  throttleDelaySeconds: number | null
  /** No page of the host before this (a Retry-After); null = unchanged. */
  pauseUntilMs: number | null
  /** The robots.txt Crawl-delay; undefined = unchanged, null = cleared. */
  crawlDelaySeconds?: number | null
}

/**
 * Writes hosts' adaptive pacing, in host order (creating the row of a host that has no limits yet). A host
 * whose pace becomes positive gets its pages marked polite by the hosts triggers (migrations/0009).
 */
export async function writeHostPacing(q: Queryable, updates: readonly HostPacingUpdate[]): Promise<void> {
  if (updates.length === 0) return
  const sorted = [...updates].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
  await q.query(
    `INSERT INTO hosts AS h (host, throttle_delay_seconds, next_lease_at, block_incidents, blocked_until, timeouts_in_a_row)
     SELECT u.host, u.throttle, u.pause_until, u.incidents, u.blocked_until, u.timeouts
     FROM unnest($1::text[], $2::float8[], $3::timestamptz[], $4::int[], $5::timestamptz[], $6::int[])
       WITH ORDINALITY AS u(host, throttle, pause_until, incidents, blocked_until, timeouts, ord)
     ORDER BY u.ord
     ON CONFLICT (host) DO UPDATE SET
       throttle_delay_seconds = excluded.throttle_delay_seconds,
       next_lease_at = greatest(h.next_lease_at, excluded.next_lease_at),
       block_incidents = excluded.block_incidents,
       blocked_until = excluded.blocked_until,
       timeouts_in_a_row = excluded.timeouts_in_a_row,
       updated_at = now()`,
    [
      sorted.map((u) => u.host),
      sorted.map((u) => u.throttleDelaySeconds),
      sorted.map((u) => (u.pauseUntilMs === null ? null : new Date(u.pauseUntilMs))),
      sorted.map((u) => u.block.incidents),
      sorted.map((u) => (u.block.blockedUntilMs === null ? null : new Date(u.block.blockedUntilMs))),
      sorted.map((u) => u.block.timeoutsInARow),
    ],
  )
  const delays = sorted.filter((u) => u.crawlDelaySeconds !== undefined)
  if (delays.length === 0) return
  await q.query(
    `UPDATE hosts h SET crawl_delay_seconds = u.delay, updated_at = now()
     FROM unnest($1::text[], $2::float8[]) AS u(host, delay)
     WHERE h.host = u.host`,
    [
      delays.map((u) => u.host),
      delays.map((u) => (u.crawlDelaySeconds !== null && u.crawlDelaySeconds! > 0 ? u.crawlDelaySeconds : null)),
    ],
  )
}
