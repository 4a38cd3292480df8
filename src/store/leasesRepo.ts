import type { PageKind } from '../core/pageFields.ts'
import { isoTimestampOrNull } from '../core/timestamps.ts'
import type { Queryable } from './transaction.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'
import { utcHourStart } from './statsRepo.ts'
import { CURRENT_CHANGE_EPOCH } from './changeEpoch.ts'

interface ClaimOptions {
  nowMs: number
  limit: number
  /** Only pages of these hosts; null = every host. */
  hosts: readonly string[] | null
  leaseId: string
  worker: string
  expiresAtMs: number
  /**
   * Also hand out pages due up to `untilMs` (after `nowMs`): an early hand-out, which spends budget the due
   * pages leave unused. Only active, non-noisy pages whose due time is at most `shareOfPeriod` of their
   * period away qualify, and not sooner after their last crawl than their own cap, else `maxCrawlsPerDay`,
   * allows (the hand-out policy, core/handOut.ts). Absent: only due pages.
   */
  early?: { untilMs: number; shareOfPeriod: number; maxCrawlsPerDay: number | null }
}

interface TakenPage {
  id: string
  url: string
  host: string
  /** A page, or a sitemap whose document goes to POST /v1/sitemaps. */
  kind: PageKind
  nextCrawlAt: Date
  /** Validators of the page's latest successful fetch, for a conditional request. */
  etag: string | null
  serverLastModified: Date | null
  lastContentHash: string | null
}

/**
 * Adds to the lease history (lease_history, one row an hour) in the same statement as the change it counts:
 * `counted` is a CTE that returns one row per page with its `hour_start`, `column` the count it adds to. Hours
 * are written in order, so concurrent statements take the hour rows' locks in one order and never deadlock.
 */
const countInHistory = (column: 'pages_expired' | 'pages_given_back', counted: string) =>
  `INSERT INTO lease_history (hour_start, ${column})
   SELECT hour_start, count(*) FROM ${counted} GROUP BY hour_start ORDER BY hour_start
   ON CONFLICT (hour_start) DO UPDATE SET ${column} = lease_history.${column} + excluded.${column}`

/**
 * Returns pages of expired leases to the pool, the oldest expiry first, at most `batch` per call (the next
 * calls do the rest): a page whose lease ran out is offered again like any other due page. Rows another
 * caller holds are skipped. Each returned page counts as expired in the lease history, in the hour its lease
 * expired. Returns how many pages it returned.
 */
export async function returnExpiredLeases(q: Queryable, nowMs: number, batch: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>({
    name: 'leases-return-expired',
    text: `WITH returned AS (
             UPDATE page_schedule s SET lease_id = NULL, leased_by = NULL, lease_expires_at = NULL, leased_at = NULL
             FROM (SELECT page_id, lease_expires_at FROM page_schedule WHERE lease_id IS NOT NULL AND lease_expires_at <= $1
                   ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) e
             WHERE s.page_id = e.page_id
             RETURNING ${utcHourStart('e.lease_expires_at')} AS hour_start
           ),
           counted AS (${countInHistory('pages_expired', 'returned')})
           SELECT count(*)::int AS n FROM returned`,
    values: [new Date(nowMs), batch],
  })
  return rows[0]!.n
}

/**
 * The claim, one statement (so one round trip, and it never waits for a row lock: every lock is taken with
 * SKIP LOCKED and it updates only rows it locked itself, so it cannot deadlock). In order:
 *
 * 1. Candidates.
 *    - walk: the first `limit` due, unleased pages of the global due order (page_schedule_due_order: pages of hosts
 *      without a delay), locked; concurrent callers skip each other's rows, so they never see the same page.
 *    - polite_first: for each paced host (hosts.pace_seconds > 0: the operator's minDelaySeconds, a robots.txt
 *      Crawl-delay, or an adaptive delay after 429s) whose delay has passed, its most
 *      overdue page (page_schedule_polite_due), locked. Hosts whose best page would rank after every walked page are
 *      skipped (horizon).
 * 2. Politeness.
 *    - gate: the rows of the polite hosts to serve, locked with SKIP LOCKED and rechecked on their latest
 *      committed version: a host that another caller is serving, or has just served, is left out. At most one
 *      page per polite host.
 *    - strays: walked pages whose host has a delay but that are not marked polite yet (a concurrent change of
 *      the host; migrations/0008 marks pages on write). They are not handed out but marked, while their host
 *      row is held FOR SHARE (marking), so that a concurrent change of the host (which clears marks: hostsRepo.ts)
 *      waits for this statement and then sees them.
 * 3. Grant: the best `limit` candidates, most overdue first, higher importance first when tied; their lease
 *    columns are set, and each served polite host's next_lease_at moves to now + its pace.
 *
 * Returns the granted pages in lease order. The limit is a bound parameter, so every call uses one prepared
 * statement (two: with and without a host filter) and Postgres settles on a generic plan.
 */
function claimSql(byHost: boolean): string {
  // $6 is the latest due time handed out ($1 = now, or later for an early hand-out), $7 whether this is an
  // early hand-out, $8 the share of its period a page may go out before its due time, $9 the settings' cap
  // (maxCrawlsPerDay, null = none); with a host filter the hosts are $10.
  const only = (column: string) => (byHost ? `AND ${column} = ANY($10::text[])` : '')
  // A page handed out before its due time: active, not noisy (its crawl state, in pages), due within the
  // share of its period (a page without a rate yet, never crawled, any time), and not sooner after its last
  // crawl than its cap (its own, else the settings') allows.
  const earlyOk = (s: string) =>
    `(NOT $7::boolean OR ((${s}.crawls_per_day IS NULL OR ` +
    `(${s}.crawls_per_day > 0 AND ${s}.next_crawl_at - $1::timestamptz <= interval '1 day' * ($8::float8 / ${s}.crawls_per_day))) ` +
    `AND EXISTS (SELECT 1 FROM pages e WHERE e.id = ${s}.page_id AND e.status = 'active' AND NOT e.noisy ` +
    `AND (e.last_crawled_at IS NULL OR coalesce(e.max_crawls_per_day, $9::float8) IS NULL ` +
    `OR extract(epoch FROM $1::timestamptz - e.last_crawled_at) * coalesce(e.max_crawls_per_day, $9::float8) >= ${SECONDS_PER_DAY}))))`
  return `
WITH polite_hosts AS MATERIALIZED (
  SELECT host, next_lease_at FROM hosts WHERE pace_seconds > 0
),
walk AS MATERIALIZED (
  SELECT s.page_id AS id, s.host, s.next_crawl_at, s.importance, s.host IN (SELECT host FROM polite_hosts) AS stray
  FROM page_schedule s
  WHERE s.lease_id IS NULL AND NOT s.polite AND s.next_crawl_at <= $6 AND ${earlyOk('s')} ${only('s.host')}
  ORDER BY s.next_crawl_at, s.importance DESC, s.page_id
  LIMIT $5
  FOR UPDATE OF s SKIP LOCKED
),
horizon AS (
  -- the latest due time that can still make the cut
  SELECT CASE WHEN count(*) < $5 THEN $6 ELSE max(next_crawl_at) END AS due FROM walk
),
polite_first AS MATERIALIZED (
  SELECT c.id, h.host, c.next_crawl_at, c.importance
  FROM polite_hosts h
  CROSS JOIN LATERAL (
    SELECT q.page_id AS id, q.next_crawl_at, q.importance
    FROM page_schedule q
    WHERE q.host = h.host AND q.lease_id IS NULL AND q.polite AND q.next_crawl_at <= (SELECT due FROM horizon) AND ${earlyOk('q')}
    ORDER BY q.next_crawl_at, q.importance DESC, q.page_id
    LIMIT 1
    FOR UPDATE OF q SKIP LOCKED
  ) c
  WHERE (h.next_lease_at IS NULL OR h.next_lease_at <= $1) ${only('h.host')}
),
gate AS MATERIALIZED (
  SELECT h.host FROM hosts h
  WHERE h.host IN (SELECT host FROM polite_first) AND h.pace_seconds > 0
    AND (h.next_lease_at IS NULL OR h.next_lease_at <= $1)
  FOR UPDATE SKIP LOCKED
),
marking AS MATERIALIZED (
  SELECT h.host FROM hosts h
  WHERE h.host IN (SELECT host FROM walk WHERE stray) AND h.pace_seconds > 0
  FOR SHARE SKIP LOCKED
),
chosen AS (
  SELECT id, host, false AS polite, next_crawl_at, importance FROM walk WHERE NOT stray
  UNION ALL
  SELECT id, host, true, next_crawl_at, importance FROM polite_first WHERE host IN (SELECT host FROM gate)
  ORDER BY next_crawl_at, importance DESC, id
  LIMIT $5
),
leased AS (
  UPDATE page_schedule s SET lease_id = $2::uuid, leased_by = $3::text, lease_expires_at = $4::timestamptz, leased_at = $1
  FROM chosen c
  WHERE s.page_id = c.id
  RETURNING s.page_id AS id, s.host, s.next_crawl_at, s.importance
),
marked AS (
  UPDATE page_schedule s SET polite = true
  FROM walk w
  WHERE s.page_id = w.id AND w.stray AND w.host IN (SELECT host FROM marking)
),
spaced AS (
  UPDATE hosts h SET next_lease_at = $1 + h.pace_seconds * interval '1 second'
  WHERE h.host IN (SELECT host FROM chosen WHERE polite)
)
SELECT l.id::text AS id, p.url, l.host, p.kind, l.next_crawl_at AS "nextCrawlAt", p.etag, p.server_last_modified AS "serverLastModified",
       p.last_content_hash AS "lastContentHash"
FROM leased l JOIN pages p ON p.id = l.id
ORDER BY l.next_crawl_at, l.importance DESC, l.id`
}

const CLAIM_SQL = claimSql(false)
const CLAIM_BY_HOST_SQL = claimSql(true)

/** Leases up to `limit` due pages (docs/api.md "Schedule") in one statement (see claimSql). */
export async function claimDuePages(q: Queryable, options: ClaimOptions): Promise<TakenPage[]> {
  const { limit } = options
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`lease limit must be a positive integer, not ${limit}`)
  const early = options.early !== undefined && options.early.untilMs > options.nowMs ? options.early : null
  const values: unknown[] = [
    new Date(options.nowMs),
    options.leaseId,
    options.worker,
    new Date(options.expiresAtMs),
    limit,
    new Date(early ? early.untilMs : options.nowMs),
    early !== null,
    early ? early.shareOfPeriod : 0,
    early ? early.maxCrawlsPerDay : null,
  ]
  const query =
    options.hosts === null
      ? { name: 'leases-claim', text: CLAIM_SQL, values }
      : { name: 'leases-claim-hosts', text: CLAIM_BY_HOST_SQL, values: [...values, options.hosts] }
  const { rows } = await q.query<TakenPage>(query)
  return rows
}

/**
 * The fleet-wide hand-out allowance (lease_budget), a token bucket: it fills at `perDay` tokens per day, holds at
 * most `capacity`, and a new one holds `initial`. The numbers are the hand-out policy's (core/handOut.ts).
 */
interface HandOutBudget {
  nowMs: number
  perDay: number
  capacity: number
  initial: number
}

/** The tokens of lease_budget at `now`: refilled at `perDay` since updated_at, at most `capacity`; `initial` when new. */
function availableTokensSql(p: { now: string; perDay: string; capacity: string; initial: string }): string {
  return `least(${p.capacity}::float8, CASE WHEN tokens IS NULL OR updated_at IS NULL THEN ${p.initial}::float8
            ELSE tokens + ${p.perDay}::float8 * greatest(0, extract(epoch FROM (${p.now}::timestamptz - updated_at))) / ${SECONDS_PER_DAY} END)`
}

/**
 * Takes up to `wanted` tokens from the fleet-wide hand-out allowance. Returns how many were taken (whole
 * tokens) and how many there were before (fractional).
 */
export async function takeHandOutTokens(
  q: Queryable,
  options: HandOutBudget & { wanted: number },
): Promise<{ taken: number; available: number }> {
  const available = availableTokensSql({ now: '$1', perDay: '$3', capacity: '$4', initial: '$5' })
  const { rows } = await q.query<{ taken: number; available: number }>({
    name: 'lease-budget-take',
    text: `UPDATE lease_budget b SET tokens = a.available - least($2::float8, floor(a.available)), updated_at = $1
           FROM (SELECT ${available} AS available FROM lease_budget WHERE id FOR UPDATE) a
           WHERE b.id
           RETURNING least($2::float8, floor(a.available))::float8 AS taken, a.available::float8 AS available`,
    values: [new Date(options.nowMs), options.wanted, options.perDay, options.capacity, options.initial],
  })
  return rows[0] ?? { taken: 0, available: 0 }
}

/** The hand-out allowance available now (as takeHandOutTokens would see it), without taking any. */
export async function availableHandOutTokens(q: Queryable, options: HandOutBudget): Promise<number> {
  const available = availableTokensSql({ now: '$1', perDay: '$2', capacity: '$3', initial: '$4' })
  const { rows } = await q.query<{ available: number }>({
    name: 'lease-budget-read',
    text: `SELECT ${available} AS available FROM lease_budget WHERE id`,
    values: [new Date(options.nowMs), options.perDay, options.capacity, options.initial],
  })
  return rows[0]?.available ?? Math.min(options.initial, options.capacity)
}

/** Gives back tokens a lease took but did not use. */
export async function returnHandOutTokens(q: Queryable, tokens: number, capacity: number): Promise<void> {
  if (!(tokens > 0)) return
  await q.query({
    name: 'lease-budget-return',
    text: 'UPDATE lease_budget SET tokens = least($2::float8, coalesce(tokens, $2::float8) + $1::float8) WHERE id',
    values: [tokens, capacity],
  })
}

/** Extends the pages a lease still holds (unexpired) to `expiresAtMs`; returns how many. */
export async function extendLease(q: Queryable, leaseId: string, nowMs: number, expiresAtMs: number): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE page_schedule SET lease_expires_at = $3 WHERE lease_id = $1::uuid AND lease_expires_at > $2`,
    [leaseId, new Date(nowMs), new Date(expiresAtMs)],
  )
  return rowCount ?? 0
}

/** The pages among `ids` that the lease still holds (unexpired), locked, in id order. */
export async function lockLeasedPages(
  q: Queryable,
  leaseId: string,
  ids: readonly string[],
  nowMs: number,
): Promise<{ id: string; crawlsPerDay: number | null; nextCrawlAtMs: number | null }[]> {
  const { rows } = await q.query<{ id: string; crawlsPerDay: number | null; nextCrawlAtMs: number | null }>(
    `SELECT page_id::text AS id, crawls_per_day AS "crawlsPerDay", floor(extract(epoch FROM next_crawl_at) * 1000)::float8 AS "nextCrawlAtMs"
     FROM page_schedule WHERE lease_id = $1::uuid AND lease_expires_at > $2 AND page_id = ANY($3::bigint[])
     ORDER BY page_id FOR UPDATE`,
    [leaseId, new Date(nowMs), ids],
  )
  return rows
}

/** Ends the lease on these pages, each with its new due time; they count as given back in the lease history. */
export async function releasePages(
  q: Queryable,
  pages: readonly { id: string; nextCrawlAtMs: number | null }[],
  nowMs: number,
): Promise<void> {
  if (pages.length === 0) return
  await q.query(
    `WITH released AS (
       UPDATE page_schedule s SET lease_id = NULL, leased_by = NULL, lease_expires_at = NULL, leased_at = NULL,
         next_crawl_at = u.next, version = s.version + 1, change_epoch = ${CURRENT_CHANGE_EPOCH}
       FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, next) WHERE s.page_id = u.id
       RETURNING ${utcHourStart('$3::timestamptz')} AS hour_start
     )
     ${countInHistory('pages_given_back', 'released')}`,
    [pages.map((p) => p.id), pages.map((p) => isoTimestampOrNull(p.nextCrawlAtMs)), new Date(nowMs)],
  )
}

/**
 * Releases the pages the lease still holds, if it has not expired (an expired lease's pages are
 * returned by the next lease call); they count as given back in the lease history. Returns how many.
 */
export async function releaseLease(q: Queryable, leaseId: string, nowMs: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH released AS (
       UPDATE page_schedule SET lease_id = NULL, leased_by = NULL, lease_expires_at = NULL, leased_at = NULL
       WHERE lease_id = $1::uuid AND lease_expires_at > $2
       RETURNING ${utcHourStart('$2::timestamptz')} AS hour_start
     ),
     counted AS (${countInHistory('pages_given_back', 'released')})
     SELECT count(*)::int AS n FROM released`,
    [leaseId, new Date(nowMs)],
  )
  return rows[0]!.n
}

interface UpcomingCrawlRow {
  id: string
  url: string
  host: string
  kind: PageKind
  dueAt: Date
  crawlsPerDay: number | null
}

/**
 * Upcoming unleased crawls in lease order (due time, then importance), up to `until` when given:
 * the global due order merged with each host's polite pages (page_schedule.polite).
 */
export async function upcomingCrawls(
  q: Queryable,
  options: { untilMs: number | null; limit: number },
): Promise<UpcomingCrawlRow[]> {
  const { rows } = await q.query<UpcomingCrawlRow>(
    `SELECT u.page_id::text AS id, p.url, u.host, p.kind, u.next_crawl_at AS "dueAt", u.crawls_per_day AS "crawlsPerDay"
     FROM (
       (SELECT s.page_id, s.host, s.next_crawl_at, s.importance, s.crawls_per_day
        FROM page_schedule s WHERE s.lease_id IS NULL AND NOT s.polite AND s.next_crawl_at IS NOT NULL
          AND ($1::timestamptz IS NULL OR s.next_crawl_at <= $1)
        ORDER BY s.next_crawl_at, s.importance DESC, s.page_id LIMIT $2)
       UNION ALL
       SELECT c.* FROM hosts h CROSS JOIN LATERAL (
         SELECT s.page_id, s.host, s.next_crawl_at, s.importance, s.crawls_per_day
         FROM page_schedule s WHERE s.host = h.host AND s.lease_id IS NULL AND s.polite AND s.next_crawl_at IS NOT NULL
           AND ($1::timestamptz IS NULL OR s.next_crawl_at <= $1)
         ORDER BY s.next_crawl_at, s.importance DESC, s.page_id LIMIT $2) c
     ) u
     JOIN pages p ON p.id = u.page_id
     ORDER BY u.next_crawl_at, u.importance DESC, u.page_id LIMIT $2`,
    [options.untilMs === null ? null : new Date(options.untilMs), options.limit],
  )
  return rows
}

/** A paced host that holds due pages back: its pace, and when it may next hand out a page. */
interface HeldHost {
  host: string
  paceSeconds: number
  nextLeaseAt: Date
}

/**
 * Why a lease came back short, as the pool stands after it (of `hosts` only, when given): when the next unleased
 * page may be handed out (a page's due time, or for a paced host the later of that and the host's next turn;
 * null when there is no page to hand out at all), and the paced hosts whose due pages wait for their turn (at
 * most 100, the soonest first). Three indexed lookups; only asked after a short lease.
 */
export async function leaseShortfall(
  q: Queryable,
  options: { now: Date; hosts: readonly string[] | null },
): Promise<{ nextLeasableAt: Date | null; heldHosts: HeldHost[] }> {
  const hostFilter = (column: string, param: string) =>
    options.hosts === null ? '' : `AND ${column} = ANY(${param}::text[])`
  const { rows } = await q.query<{ next: Date | null }>({
    text: `SELECT least(
             (SELECT s.next_crawl_at FROM page_schedule s
               WHERE s.lease_id IS NULL AND NOT s.polite AND s.next_crawl_at IS NOT NULL ${hostFilter('s.host', '$1')}
               ORDER BY s.next_crawl_at LIMIT 1),
             (SELECT min(greatest(f.next_crawl_at, coalesce(h.next_lease_at, f.next_crawl_at)))
                FROM hosts h CROSS JOIN LATERAL (
                  SELECT s.next_crawl_at FROM page_schedule s
                   WHERE s.host = h.host AND s.lease_id IS NULL AND s.polite AND s.next_crawl_at IS NOT NULL
                   ORDER BY s.next_crawl_at LIMIT 1) f
               WHERE h.pace_seconds > 0 ${hostFilter('h.host', '$1')})
           ) AS next`,
    values: options.hosts === null ? [] : [options.hosts],
  })
  const held = await q.query<HeldHost>({
    text: `SELECT h.host, h.pace_seconds AS "paceSeconds", h.next_lease_at AS "nextLeaseAt" FROM hosts h
            WHERE h.pace_seconds > 0 AND h.next_lease_at > $1 ${hostFilter('h.host', '$2')}
              AND EXISTS (SELECT 1 FROM page_schedule s
                           WHERE s.host = h.host AND s.lease_id IS NULL AND s.polite AND s.next_crawl_at <= $1)
            ORDER BY h.next_lease_at, h.host LIMIT 100`,
    values: options.hosts === null ? [options.now] : [options.now, options.hosts],
  })
  return { nextLeasableAt: rows[0]?.next ?? null, heldHosts: held.rows }
}

/** One worker's leases as the schedule holds them (GET /v1/lease-overview). */
interface WorkerLeasesRow {
  worker: string | null
  leases: number
  pages: number
  /** Pages whose lease has run out but that no lease call has returned to the pool yet. */
  pagesPastExpiry: number
  earliestExpiresAt: Date
  latestExpiresAt: Date
  /** When the oldest of its leases was taken; null when every one predates migrations/0019. */
  oldestLeasedAt: Date | null
  /** Workers with a lease, on every row. */
  total: number
}

/**
 * Leased pages by worker: leases, pages, those past their expiry, and the expiry range; the workers holding
 * pages past expiry first, then the most pages. Reads page_schedule_lease (only leased rows).
 */
export async function readLeasesByWorker(q: Queryable, nowMs: number, limit: number): Promise<WorkerLeasesRow[]> {
  const { rows } = await q.query<WorkerLeasesRow>(
    `SELECT leased_by AS worker, count(DISTINCT lease_id)::int AS leases, count(*)::int AS pages,
       count(*) FILTER (WHERE lease_expires_at <= $1)::int AS "pagesPastExpiry",
       min(lease_expires_at) AS "earliestExpiresAt", max(lease_expires_at) AS "latestExpiresAt",
       min(leased_at) AS "oldestLeasedAt", count(*) OVER ()::int AS total
     FROM page_schedule WHERE lease_id IS NOT NULL
     GROUP BY leased_by
     ORDER BY "pagesPastExpiry" DESC, pages DESC, leased_by NULLS LAST
     LIMIT $2`,
    [new Date(nowMs), limit],
  )
  return rows
}

interface LeaseHistoryRow {
  hourStart: Date
  pagesExpired: number
  pagesGivenBack: number
}

/** The lease history's hours in [fromMs, toMs] that counted anything, oldest first (one row an hour at most). */
export async function readLeaseHistory(
  q: Queryable,
  options: { fromMs: number; toMs: number },
): Promise<LeaseHistoryRow[]> {
  const { rows } = await q.query<LeaseHistoryRow>(
    `SELECT hour_start AS "hourStart", pages_expired::float8 AS "pagesExpired", pages_given_back::float8 AS "pagesGivenBack"
     FROM lease_history WHERE hour_start >= $1 AND hour_start <= $2 ORDER BY hour_start`,
    [new Date(options.fromMs), new Date(options.toMs)],
  )
  return rows
}
