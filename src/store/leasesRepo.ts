import type { Queryable } from './transaction.ts'

/** Returns the pages of expired leases to the pool (skipping rows another transaction holds). Returns how many. */
export async function expireLeases(q: Queryable, now: Date): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE pages p SET lease_id = NULL, leased_by = NULL, lease_expires_at = NULL
     WHERE p.id IN (SELECT id FROM pages WHERE lease_id IS NOT NULL AND lease_expires_at <= $1
                    ORDER BY id FOR UPDATE SKIP LOCKED)`,
    [now],
  )
  return rowCount ?? 0
}

export interface DueCandidate {
  id: string
  url: string
  host: string
  nextCrawlAt: Date
}

/**
 * Locks up to `limit` due, unleased pages, most overdue first (then higher importance), skipping
 * rows other lease takers hold: concurrent callers never see the same page.
 */
export async function lockDuePages(
  q: Queryable,
  options: { now: Date; limit: number; hosts: readonly string[] | null },
): Promise<DueCandidate[]> {
  const { rows } = await q.query<DueCandidate>(
    `SELECT p.id::text AS id, p.url, p.host, p.next_crawl_at AS "nextCrawlAt"
     FROM pages p
     WHERE p.lease_id IS NULL AND p.next_crawl_at <= $1
       AND ($3::text[] IS NULL OR p.host = ANY($3::text[]))
       -- hosts still inside their politeness delay cannot be served: do not let them take candidate slots
       AND NOT EXISTS (SELECT 1 FROM hosts h WHERE h.host = p.host AND h.next_lease_at > $1)
     ORDER BY p.next_crawl_at, p.importance DESC, p.id
     LIMIT $2
     FOR UPDATE SKIP LOCKED`,
    [options.now, options.limit, options.hosts],
  )
  return rows
}

export interface HostSpacing {
  host: string
  minDelaySeconds: number
  nextLeaseAt: Date | null
}

/**
 * Locks the politeness rows of these hosts that have a minimum delay, skipping hosts another lease
 * taker is handing out right now (their pages wait for the next call).
 */
export async function lockHostSpacing(q: Queryable, hosts: readonly string[]): Promise<{ locked: HostSpacing[]; busy: Set<string> }> {
  if (hosts.length === 0) return { locked: [], busy: new Set() }
  const { rows } = await q.query<HostSpacing & { locked: boolean }>(
    `SELECT host, min_delay_seconds AS "minDelaySeconds", next_lease_at AS "nextLeaseAt"
     FROM hosts WHERE host = ANY($1::text[]) AND min_delay_seconds > 0
     ORDER BY host FOR UPDATE SKIP LOCKED`,
    [hosts],
  )
  const all = await q.query<{ host: string }>(
    'SELECT host FROM hosts WHERE host = ANY($1::text[]) AND min_delay_seconds > 0',
    [hosts],
  )
  const lockedNames = new Set(rows.map((r) => r.host))
  return { locked: rows, busy: new Set(all.rows.map((r) => r.host).filter((h) => !lockedNames.has(h))) }
}

export async function setHostNextLeaseAt(q: Queryable, updates: readonly { host: string; nextLeaseAt: string }[]): Promise<void> {
  if (updates.length === 0) return
  await q.query(
    `UPDATE hosts h SET next_lease_at = u."nextLeaseAt"
     FROM jsonb_to_recordset($1::jsonb) AS u("host" text, "nextLeaseAt" timestamptz) WHERE h.host = u."host"`,
    [JSON.stringify(updates)],
  )
}

export async function grantLease(
  q: Queryable,
  options: { ids: readonly string[]; leaseId: string; worker: string; expiresAt: Date },
): Promise<void> {
  if (options.ids.length === 0) return
  await q.query(
    `UPDATE pages SET lease_id = $2::uuid, leased_by = $3, lease_expires_at = $4 WHERE id = ANY($1::bigint[])`,
    [options.ids, options.leaseId, options.worker, options.expiresAt],
  )
}

/** Releases every page still held by the lease; returns how many. */
export async function releaseLease(q: Queryable, leaseId: string): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE pages SET lease_id = NULL, leased_by = NULL, lease_expires_at = NULL WHERE lease_id = $1::uuid`,
    [leaseId],
  )
  return rowCount ?? 0
}

export interface ScheduleRow {
  id: string
  url: string
  host: string
  dueAt: Date
  crawlsPerDay: number | null
}

/** Upcoming unleased crawls in due order, up to `until` when given. */
export async function upcomingCrawls(q: Queryable, options: { until: Date | null; limit: number }): Promise<ScheduleRow[]> {
  const { rows } = await q.query<ScheduleRow>(
    `SELECT p.id::text AS id, p.url, p.host, p.next_crawl_at AS "dueAt", p.crawls_per_day AS "crawlsPerDay"
     FROM pages p WHERE p.lease_id IS NULL AND p.next_crawl_at IS NOT NULL
       AND ($1::timestamptz IS NULL OR p.next_crawl_at <= $1)
     ORDER BY p.next_crawl_at, p.id LIMIT $2`,
    [options.until, options.limit],
  )
  return rows
}
