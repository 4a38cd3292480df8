import type { Queryable } from './transaction.ts'

export interface TakeLeaseOptions {
  now: Date
  limit: number
  /** Only pages of these hosts; null = every host. */
  hosts: readonly string[] | null
  leaseId: string
  worker: string
  expiresAt: Date
  /**
   * Most pages of expired leases returned to the pool, and most pages of polite hosts moved out of
   * the global due order, by one call (the next calls do the rest).
   */
  sweepBatch: number
}

export interface TakenPage {
  id: string
  url: string
  host: string
  nextCrawlAt: Date
}

/**
 * One statement, so one round trip and no explicit transaction. It never waits for a row lock (every
 * lock is taken with SKIP LOCKED, and it updates only rows it locked itself), so it cannot deadlock.
 *
 * - polite_hosts: hosts with minDelaySeconds. Their pages are "polite": kept out of the global due
 *   order (pages.polite, migrations/0003) and served one per host.
 * - expired: leased pages whose lease has run out (oldest expiry first, at most `sweepBatch`),
 *   locked. Each is either leased again below or returned to the pool.
 * - walk: the first `limit` due, unleased pages of the global due order, locked; concurrent callers
 *   skip each other's rows, so they never see the same page. Pages of polite hosts in it ("strays":
 *   not marked yet, being new or of a host that just gained its delay) are flagged.
 * - more, strays: only when the walk met strays. `more` fills the lease with pages of other hosts;
 *   `strays` takes further strays among the first `limit + sweepBatch` rows of the due order up to
 *   the last due time that can make the cut (`horizon`). Strays are candidates, and are marked below
 *   so that later calls do not meet them again. Without strays a lease reads the due order once.
 * - polite_first: for each polite host whose delay has passed, its most overdue marked page
 *   (pages_polite_due), locked. Hosts whose best page would rank after every walked page are skipped.
 * - gate: the politeness rows of the candidates' polite hosts, locked with SKIP LOCKED and rechecked
 *   on the latest committed version: a host that another caller is serving, or has just served, is
 *   left out. At most one page per polite host (nth = 1).
 * - marking: the polite hosts of strays and expired pages, held FOR SHARE while their pages are
 *   marked, so that a concurrent change of the host (whose trigger clears the marks) waits for this
 *   statement and then sees its marks.
 * - chosen: the best `limit` of all candidates, most overdue first, higher importance first when tied.
 * - leased / spaced: grant the chosen pages, clear the expired ones not chosen, mark strays, and push
 *   each served polite host's next_lease_at to now + minDelaySeconds.
 *
 * Every returned row is either granted, or an expired lease returned to the pool (`expired`), or
 * a stray that was only marked.
 *
 * The limits are written into the text (one named statement per limit): with them as literals
 * Postgres settles on a generic plan after a few calls, so later calls skip planning (about 1 ms).
 * Calls with a host filter are planned each time, for the hosts they name.
 */
function takeLeaseSql(limit: number, sweepBatch: number, byHost: boolean): string {
  // With a host filter the hosts are $5.
  const only = (column: string) => (byHost ? `AND ${column} = ANY($5::text[])` : '')
  return `
WITH polite_hosts AS MATERIALIZED (
  SELECT host, next_lease_at FROM hosts WHERE min_delay_seconds > 0
),
expired AS MATERIALIZED (
  SELECT p.id, p.host, p.next_crawl_at, p.importance
  FROM pages p
  WHERE p.lease_id IS NOT NULL AND p.lease_expires_at <= $1
  ORDER BY p.lease_expires_at
  LIMIT ${sweepBatch}
  FOR UPDATE OF p SKIP LOCKED
),
walk AS MATERIALIZED (
  SELECT p.id, p.host, p.next_crawl_at, p.importance, p.host IN (SELECT host FROM polite_hosts) AS stray
  FROM pages p
  WHERE p.lease_id IS NULL AND NOT p.polite AND p.next_crawl_at <= $1
    ${only('p.host')}
  ORDER BY p.next_crawl_at, p.importance DESC, p.id
  LIMIT ${limit}
  FOR UPDATE OF p SKIP LOCKED
),
more AS MATERIALIZED (
  SELECT p.id, p.host, p.next_crawl_at, p.importance
  FROM pages p
  WHERE p.lease_id IS NULL AND NOT p.polite AND p.next_crawl_at <= $1
    ${only('p.host')}
    AND p.host NOT IN (SELECT host FROM polite_hosts)
    AND p.id NOT IN (SELECT id FROM walk)
    AND (SELECT bool_or(stray) FROM walk)
  ORDER BY p.next_crawl_at, p.importance DESC, p.id
  LIMIT ${limit}
  FOR UPDATE OF p SKIP LOCKED
),
horizon AS (
  -- the latest due time that can still make the cut
  SELECT CASE WHEN count(*) < ${limit} THEN $1 ELSE max(next_crawl_at) END AS due
  FROM (SELECT next_crawl_at FROM walk WHERE NOT stray UNION ALL SELECT next_crawl_at FROM more) AS others
),
strays AS MATERIALIZED (
  -- read in index order up to the horizon, whatever the planner guesses of it
  SELECT p.id, p.host, p.next_crawl_at, p.importance
  FROM pages p
  WHERE p.id IN (
      SELECT w.id FROM (
        SELECT q.id, q.host FROM pages q
        WHERE q.lease_id IS NULL AND NOT q.polite AND q.next_crawl_at <= (SELECT due FROM horizon)
          ${only('q.host')}
        ORDER BY q.next_crawl_at, q.importance DESC, q.id
        LIMIT ${limit + sweepBatch}
      ) w
      WHERE w.host IN (SELECT host FROM polite_hosts)
    )
    AND p.id NOT IN (SELECT id FROM walk)
    AND p.lease_id IS NULL AND NOT p.polite
    AND (SELECT bool_or(stray) FROM walk)
  FOR UPDATE OF p SKIP LOCKED
),
all_strays AS (
  SELECT id, host FROM walk WHERE stray
  UNION ALL
  SELECT id, host FROM strays
),
polite_first AS MATERIALIZED (
  SELECT c.id, h.host, c.next_crawl_at, c.importance
  FROM polite_hosts h
  CROSS JOIN LATERAL (
    SELECT q.id, q.next_crawl_at, q.importance
    FROM pages q
    WHERE q.host = h.host AND q.lease_id IS NULL AND q.polite AND q.next_crawl_at <= (SELECT due FROM horizon)
    ORDER BY q.next_crawl_at, q.importance DESC, q.id
    LIMIT 1
    FOR UPDATE OF q SKIP LOCKED
  ) c
  WHERE (h.next_lease_at IS NULL OR h.next_lease_at <= $1)
    ${only('h.host')}
),
candidates AS (
  SELECT id, host, next_crawl_at, importance FROM walk
  UNION ALL
  SELECT * FROM more
  UNION ALL
  SELECT * FROM strays
  UNION ALL
  SELECT * FROM polite_first
  UNION ALL
  SELECT * FROM expired WHERE next_crawl_at <= $1 ${only('host')}
),
gate AS MATERIALIZED (
  SELECT h.host FROM hosts h
  WHERE h.host IN (SELECT host FROM candidates) AND h.min_delay_seconds > 0
    AND (h.next_lease_at IS NULL OR h.next_lease_at <= $1)
  FOR UPDATE SKIP LOCKED
),
marking AS MATERIALIZED (
  SELECT h.host FROM hosts h
  WHERE h.host IN (SELECT host FROM all_strays UNION ALL SELECT host FROM expired) AND h.min_delay_seconds > 0
  FOR SHARE SKIP LOCKED
),
ranked AS (
  SELECT c.*, g.host IS NOT NULL AS polite,
         row_number() OVER (PARTITION BY c.host ORDER BY c.next_crawl_at, c.importance DESC, c.id) AS nth
  FROM candidates c LEFT JOIN gate g ON g.host = c.host
  WHERE g.host IS NOT NULL OR c.host NOT IN (SELECT host FROM polite_hosts)
),
chosen AS (
  SELECT id, host, polite FROM ranked
  WHERE NOT polite OR nth = 1
  ORDER BY next_crawl_at, importance DESC, id
  LIMIT ${limit}
),
touched AS (
  SELECT c.id, true AS granted, c.id IN (SELECT id FROM expired) AS expired FROM chosen c
  UNION ALL
  SELECT e.id, false, true FROM expired e WHERE e.id NOT IN (SELECT id FROM chosen)
  UNION ALL
  SELECT s.id, false, false FROM all_strays s
  WHERE s.id NOT IN (SELECT id FROM chosen) AND s.host IN (SELECT host FROM marking)
),
leased AS (
  UPDATE pages p SET
    lease_id = CASE WHEN t.granted THEN $2::uuid END,
    leased_by = CASE WHEN t.granted THEN $3::text END,
    lease_expires_at = CASE WHEN t.granted THEN $4::timestamptz END,
    polite = p.polite OR p.host IN (SELECT host FROM marking)
  FROM touched t
  WHERE p.id = t.id
  RETURNING p.id, p.url, p.host, p.next_crawl_at, p.importance, t.granted, t.expired
),
spaced AS (
  UPDATE hosts h SET next_lease_at = $1 + h.min_delay_seconds * interval '1 second'
  WHERE h.host IN (SELECT host FROM chosen WHERE polite)
)
SELECT id::text AS id, url, host, next_crawl_at AS "nextCrawlAt", granted, expired
FROM leased
ORDER BY next_crawl_at, importance DESC, leased.id`
}

/**
 * Leases up to `limit` due pages (API.md "Schedule") and returns expired leases to the pool, in one
 * statement (see takeLeaseSql). Returns the granted pages in lease order and how many pages of
 * expired leases it found (granted again or returned).
 */
export async function takeLeasedPages(q: Queryable, options: TakeLeaseOptions): Promise<{ pages: TakenPage[]; expired: number }> {
  const { limit, sweepBatch } = options
  if (!Number.isSafeInteger(limit) || limit < 1 || !Number.isSafeInteger(sweepBatch) || sweepBatch < 1) {
    throw new RangeError(`lease limits must be positive integers (limit ${limit}, sweepBatch ${sweepBatch})`)
  }
  const values: unknown[] = [options.now, options.leaseId, options.worker, options.expiresAt]
  const query =
    options.hosts === null
      ? // The hot path: a named statement, so its plan is cached on the connection.
        { name: `leases-take-${limit}-${sweepBatch}`, text: takeLeaseSql(limit, sweepBatch, false), values }
      : // Planned on each call, for the hosts it names.
        { text: takeLeaseSql(limit, sweepBatch, true), values: [...values, options.hosts] }
  const { rows } = await q.query<TakenPage & { granted: boolean; expired: boolean }>(query)
  const pages: TakenPage[] = []
  let expired = 0
  for (const r of rows) {
    if (r.expired) expired++
    if (r.granted) pages.push({ id: r.id, url: r.url, host: r.host, nextCrawlAt: r.nextCrawlAt })
  }
  return { pages, expired }
}

/**
 * Releases the pages the lease still holds, if it has not expired (an expired lease's pages are
 * returned by the next lease call); returns how many.
 */
export async function releaseLease(q: Queryable, leaseId: string, now: Date): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE pages SET lease_id = NULL, leased_by = NULL, lease_expires_at = NULL
     WHERE lease_id = $1::uuid AND lease_expires_at > $2`,
    [leaseId, now],
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

/**
 * Upcoming unleased crawls in lease order (due time, then importance), up to `until` when given:
 * the global due order merged with each host's polite pages (pages.polite).
 */
export async function upcomingCrawls(q: Queryable, options: { until: Date | null; limit: number }): Promise<ScheduleRow[]> {
  const { rows } = await q.query<ScheduleRow>(
    `SELECT u.id::text AS id, u.url, u.host, u.next_crawl_at AS "dueAt", u.crawls_per_day AS "crawlsPerDay"
     FROM (
       (SELECT p.id, p.url, p.host, p.next_crawl_at, p.importance, p.crawls_per_day
        FROM pages p WHERE p.lease_id IS NULL AND NOT p.polite AND p.next_crawl_at IS NOT NULL
          AND ($1::timestamptz IS NULL OR p.next_crawl_at <= $1)
        ORDER BY p.next_crawl_at, p.importance DESC, p.id LIMIT $2)
       UNION ALL
       SELECT c.* FROM hosts h CROSS JOIN LATERAL (
         SELECT p.id, p.url, p.host, p.next_crawl_at, p.importance, p.crawls_per_day
         FROM pages p WHERE p.host = h.host AND p.lease_id IS NULL AND p.polite AND p.next_crawl_at IS NOT NULL
           AND ($1::timestamptz IS NULL OR p.next_crawl_at <= $1)
         ORDER BY p.next_crawl_at, p.importance DESC, p.id LIMIT $2) c
     ) u
     ORDER BY u.next_crawl_at, u.importance DESC, u.id LIMIT $2`,
    [options.until, options.limit],
  )
  return rows
}
