import type { Queryable } from './transaction.ts'

export interface HostRow {
  host: string
  maxCrawlsPerDay: number | null
  minDelaySeconds: number | null
  pages: number
}

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
  const { rows } = await q.query<HostRow>(
    `SELECT h.host, h.max_crawls_per_day AS "maxCrawlsPerDay", h.min_delay_seconds AS "minDelaySeconds",
       (SELECT count(*)::int FROM pages p WHERE p.host = h.host) AS pages
     FROM hosts h ORDER BY h.host`,
  )
  return rows
}

export async function getHost(q: Queryable, host: string): Promise<HostRow | null> {
  const { rows } = await q.query<HostRow>(
    `SELECT h.host, h.max_crawls_per_day AS "maxCrawlsPerDay", h.min_delay_seconds AS "minDelaySeconds",
       (SELECT count(*)::int FROM pages p WHERE p.host = h.host) AS pages
     FROM hosts h WHERE h.host = $1`,
    [host],
  )
  return rows[0] ?? null
}

/** Per-host crawl caps (only hosts that have one). */
export async function hostCaps(q: Queryable): Promise<Map<string, number>> {
  const { rows } = await q.query<{ host: string; cap: number }>(
    'SELECT host, max_crawls_per_day AS cap FROM hosts WHERE max_crawls_per_day IS NOT NULL',
  )
  return new Map(rows.map((r) => [r.host, r.cap]))
}
