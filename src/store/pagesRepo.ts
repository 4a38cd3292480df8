import { isoTimestampOrNull } from '../core/timestamps.ts'
import type { Queryable } from './transaction.ts'

/**
 * A page as stored. Ids are bigint in SQL and strings here (node-postgres returns int8 as text); times
 * are epoch milliseconds (floored, as a JS Date would hold them): parsing text timestamps into Dates was a
 * visible share of ingest CPU.
 */
export interface PageRow {
  id: string
  url: string
  host: string
  importance: number
  minCrawlsPerDay: number | null
  maxCrawlsPerDay: number | null
  crawls: number
  intervals: number
  changes: number
  firstCrawledAtMs: number | null
  lastCrawledAtMs: number | null
  intervalStartAtMs: number | null
  lastChangedAtMs: number | null
  lastContentHash: string | null
  /** The estimator state as stored (src/math/estimators/codec.ts); null before a page's first interval. */
  estimatorState: Uint8Array | null
  changesPerDay: number | null
  crawlsPerDay: number | null
  nextCrawlAtMs: number | null
  leaseId: string | null
  leasedBy: string | null
  leaseExpiresAtMs: number | null
  /** Bumped by every write of the page's state or attributes (migrations/0007). */
  version: number
  status: 'active' | 'failing' | 'gone' | 'redirected'
  consecutiveFailures: number
  lastHttpStatus: number | null
  lastSuccessAtMs: number | null
  redirectTo: string | null
  etag: string | null
  serverLastModifiedMs: number | null
  noisy: boolean
}

const epochMs = (column: string, alias: string): string =>
  `floor(extract(epoch FROM ${column}) * 1000)::float8 AS "${alias}"`

/** A page row: `p` is its pages row, `s` its page_schedule row (migrations/0015). */
const PAGE_COLUMNS = `
  p.id::text AS "id", p.url, p.host, s.importance,
  p.min_crawls_per_day AS "minCrawlsPerDay", p.max_crawls_per_day AS "maxCrawlsPerDay",
  p.crawls, p.intervals, p.changes,
  ${epochMs('p.first_crawled_at', 'firstCrawledAtMs')}, ${epochMs('p.last_crawled_at', 'lastCrawledAtMs')},
  ${epochMs('p.interval_start_at', 'intervalStartAtMs')}, ${epochMs('p.last_changed_at', 'lastChangedAtMs')},
  p.last_content_hash AS "lastContentHash", p.estimator_state AS "estimatorState",
  p.changes_per_day AS "changesPerDay", s.crawls_per_day AS "crawlsPerDay",
  ${epochMs('s.next_crawl_at', 'nextCrawlAtMs')},
  s.lease_id::text AS "leaseId", s.leased_by AS "leasedBy", ${epochMs('s.lease_expires_at', 'leaseExpiresAtMs')},
  s.version::float8 AS "version",
  p.status, p.consecutive_failures AS "consecutiveFailures", p.last_http_status AS "lastHttpStatus",
  ${epochMs('p.last_success_at', 'lastSuccessAtMs')}, p.redirect_to AS "redirectTo", p.etag,
  ${epochMs('p.server_last_modified', 'serverLastModifiedMs')}, p.noisy`

const PAGES = 'pages p JOIN page_schedule s ON s.page_id = p.id'

/**
 * Registers the URLs that are not pages yet (importance 1 unless given, due at `nextCrawlAt`); returns how
 * many were new. Inserts in URL order so two concurrent batches that register overlapping URLs wait for each
 * other instead of deadlocking.
 */
export async function insertMissingPages(
  q: Queryable,
  pages: readonly { url: string; host: string; importance?: number }[],
  nextCrawlAt: Date,
): Promise<number> {
  if (pages.length === 0) return 0
  const sorted = [...pages].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
  const { rowCount } = await q.query(
    `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS u(url, host, importance, ord)
     ),
     inserted AS (
       INSERT INTO pages (url, host) SELECT u.url, u.host FROM u ORDER BY u.ord ON CONFLICT (url) DO NOTHING RETURNING id, url, host
     )
     INSERT INTO page_schedule (page_id, host, importance, next_crawl_at)
     SELECT i.id, i.host, u.importance, $4::timestamptz FROM inserted i JOIN u ON u.url = i.url`,
    [sorted.map((p) => p.url), sorted.map((p) => p.host), sorted.map((p) => p.importance ?? 1), nextCrawlAt],
  )
  return rowCount ?? 0
}

/** Locks the pages with these URLs, in id order (every writer locks in id order: no deadlocks). */
export async function lockPagesByUrl(q: Queryable, urls: readonly string[]): Promise<PageRow[]> {
  if (urls.length === 0) return []
  const { rows } = await q.query<PageRow>(
    `SELECT ${PAGE_COLUMNS} FROM ${PAGES} WHERE p.url = ANY($1::text[]) ORDER BY p.id FOR UPDATE`,
    [urls],
  )
  return rows
}

/** A page's crawl state after a batch of observations, written back in one statement. */
export type CrawledPageWrite = Pick<
  PageRow,
  | 'id'
  | 'crawls'
  | 'intervals'
  | 'changes'
  | 'firstCrawledAtMs'
  | 'lastCrawledAtMs'
  | 'intervalStartAtMs'
  | 'lastChangedAtMs'
  | 'lastContentHash'
  | 'estimatorState'
  | 'changesPerDay'
  | 'crawlsPerDay'
  | 'nextCrawlAtMs'
  | 'status'
  | 'consecutiveFailures'
  | 'lastHttpStatus'
  | 'lastSuccessAtMs'
  | 'redirectTo'
  | 'etag'
  | 'serverLastModifiedMs'
  | 'noisy'
> & {
  /** β of the fitted age law (null: Poisson) and its rate ratio (migrations/0012; docs/math.md 3.5). */
  ageShape: number | null
  ageShapeRateRatio: number | null
  /** The lease this batch completed on the page, if any: cleared only while it still holds. */
  completedLeaseId: string | null
}

export async function writeCrawledPages(q: Queryable, updates: readonly CrawledPageWrite[]): Promise<void> {
  if (updates.length === 0) return
  await q.query(
    `WITH u AS MATERIALIZED (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS u(
         "id" bigint, "crawls" int, "intervals" int, "changes" int,
         "firstCrawledAt" timestamptz, "lastCrawledAt" timestamptz, "intervalStartAt" timestamptz,
         "lastChangedAt" timestamptz, "lastContentHash" text, "estimatorState" text,
         "changesPerDay" double precision, "crawlsPerDay" double precision, "nextCrawlAt" timestamptz,
         "status" text, "consecutiveFailures" int, "lastHttpStatus" smallint, "lastSuccessAt" timestamptz,
         "redirectTo" text, "etag" text, "serverLastModified" timestamptz, "noisy" boolean,
         "ageShape" double precision, "ageShapeRateRatio" double precision,
         "completedLeaseId" uuid)
     ),
     crawl_state AS (
       UPDATE pages p SET
         crawls = u."crawls", intervals = u."intervals", changes = u."changes",
         first_crawled_at = u."firstCrawledAt", last_crawled_at = u."lastCrawledAt",
         interval_start_at = u."intervalStartAt", last_changed_at = u."lastChangedAt",
         last_content_hash = u."lastContentHash",
         estimator_state = decode(u."estimatorState", 'base64'),
         changes_per_day = u."changesPerDay",
         status = u."status", consecutive_failures = u."consecutiveFailures", last_http_status = u."lastHttpStatus",
         last_success_at = u."lastSuccessAt", redirect_to = u."redirectTo", etag = u."etag",
         server_last_modified = u."serverLastModified", noisy = u."noisy",
         age_shape = u."ageShape", age_shape_rate_ratio = u."ageShapeRateRatio",
         updated_at = now()
       FROM u WHERE p.id = u."id"
     )
     UPDATE page_schedule s SET
       crawls_per_day = u."crawlsPerDay", next_crawl_at = u."nextCrawlAt",
       lease_id = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.lease_id END,
       leased_by = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.leased_by END,
       lease_expires_at = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.lease_expires_at END,
       version = s.version + 1
     FROM u WHERE s.page_id = u."id"`,
    // The state travels as base64 inside the JSON batch.
    [
      JSON.stringify(
        updates.map((u) => ({
          id: u.id,
          crawls: u.crawls,
          intervals: u.intervals,
          changes: u.changes,
          firstCrawledAt: isoTimestampOrNull(u.firstCrawledAtMs),
          lastCrawledAt: isoTimestampOrNull(u.lastCrawledAtMs),
          intervalStartAt: isoTimestampOrNull(u.intervalStartAtMs),
          lastChangedAt: isoTimestampOrNull(u.lastChangedAtMs),
          lastContentHash: u.lastContentHash,
          estimatorState: u.estimatorState === null ? null : toBase64(u.estimatorState),
          changesPerDay: u.changesPerDay,
          crawlsPerDay: u.crawlsPerDay,
          nextCrawlAt: isoTimestampOrNull(u.nextCrawlAtMs),
          status: u.status,
          consecutiveFailures: u.consecutiveFailures,
          lastHttpStatus: u.lastHttpStatus,
          lastSuccessAt: isoTimestampOrNull(u.lastSuccessAtMs),
          redirectTo: u.redirectTo,
          etag: u.etag,
          serverLastModified: isoTimestampOrNull(u.serverLastModifiedMs),
          noisy: u.noisy,
          ageShape: u.ageShape,
          ageShapeRateRatio: u.ageShapeRateRatio,
          completedLeaseId: u.completedLeaseId,
        })),
      ),
    ],
  )
}

const toBase64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')

export interface PageUpsert {
  url: string
  host: string
  importance: number
  minCrawlsPerDay: number | null
  maxCrawlsPerDay: number | null
}

/**
 * Bulk upsert (PUT semantics: the given attributes replace the stored ones). URL order, as for
 * registration. New pages are due at `nextCrawlAt`. Returns every touched row and whether it was new.
 */
export async function upsertPages(
  q: Queryable,
  pages: readonly PageUpsert[],
  nextCrawlAt: Date,
): Promise<{ row: PageRow; created: boolean }[]> {
  if (pages.length === 0) return []
  const sorted = [...pages].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
  const { rows } = await q.query<PageRow & { created: boolean }>(
    `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::float8[])
         WITH ORDINALITY AS u(url, host, importance, min, max, ord)
     ),
     page AS (
       INSERT INTO pages AS p (url, host, min_crawls_per_day, max_crawls_per_day)
       SELECT u.url, u.host, u.min, u.max FROM u ORDER BY u.ord
       ON CONFLICT (url) DO UPDATE SET
         min_crawls_per_day = excluded.min_crawls_per_day,
         max_crawls_per_day = excluded.max_crawls_per_day,
         updated_at = now()
       RETURNING p.*, (xmax = 0) AS created
     ),
     schedule AS (
       INSERT INTO page_schedule AS s (page_id, host, importance, next_crawl_at)
       SELECT page.id, page.host, u.importance, $6::timestamptz FROM page JOIN u ON u.url = page.url ORDER BY u.ord
       ON CONFLICT (page_id) DO UPDATE SET importance = excluded.importance, version = s.version + 1
       RETURNING s.*
     )
     SELECT ${PAGE_COLUMNS}, p.created FROM page p JOIN schedule s ON s.page_id = p.id`,
    [
      sorted.map((p) => p.url),
      sorted.map((p) => p.host),
      sorted.map((p) => p.importance),
      sorted.map((p) => p.minCrawlsPerDay),
      sorted.map((p) => p.maxCrawlsPerDay),
      nextCrawlAt,
    ],
  )
  return rows.map(({ created, ...row }) => ({ row, created }))
}

/** One page's new scheduling estimate, rate and due time. */
interface PageSchedule {
  id: string
  changesPerDay: number | null
  crawlsPerDay: number | null
  nextCrawlAtMs: number | null
}

/** Writes new estimates, rates and due times in one statement (after an upsert or a settings change). */
export async function writeSchedules(q: Queryable, schedules: readonly PageSchedule[]): Promise<void> {
  if (schedules.length === 0) return
  await q.query(
    `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($1::bigint[], $2::float8[], $3::float8[], $4::timestamptz[]) AS u(id, changes, rate, next)
     ),
     estimate AS (
       UPDATE pages p SET changes_per_day = u.changes, updated_at = now() FROM u WHERE p.id = u.id
     )
     UPDATE page_schedule s SET crawls_per_day = u.rate, next_crawl_at = u.next, version = s.version + 1
     FROM u WHERE s.page_id = u.id`,
    [
      schedules.map((s) => s.id),
      schedules.map((s) => s.changesPerDay),
      schedules.map((s) => s.crawlsPerDay),
      schedules.map((s) => isoTimestampOrNull(s.nextCrawlAtMs)),
    ],
  )
}

export async function getPageById(q: Queryable, id: string): Promise<PageRow | null> {
  const { rows } = await q.query<PageRow>(`SELECT ${PAGE_COLUMNS} FROM ${PAGES} WHERE p.id = $1::bigint`, [id])
  return rows[0] ?? null
}

export async function getPageByUrl(q: Queryable, url: string): Promise<PageRow | null> {
  const { rows } = await q.query<PageRow>(`SELECT ${PAGE_COLUMNS} FROM ${PAGES} WHERE p.url = $1`, [url])
  return rows[0] ?? null
}

/** Keyset paging by id; `afterId` is the last id of the previous page. */
export async function listPages(
  q: Queryable,
  options: { host: string | null; afterId: string | null; limit: number },
): Promise<PageRow[]> {
  const { rows } = await q.query<PageRow>(
    `SELECT ${PAGE_COLUMNS} FROM ${PAGES}
     WHERE ($1::text IS NULL OR p.host = $1) AND p.id > $2::bigint AND s.page_id > $2::bigint
     ORDER BY p.id LIMIT $3`,
    // The bound on both tables keeps a merge join from reading the schedule from its first row (ids start at 1).
    [options.host, options.afterId ?? '0', options.limit],
  )
  return rows
}

/** Deletes a page and (by cascade) its history. Returns whether it existed. */
export async function deletePage(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM pages WHERE id = $1::bigint', [id])
  return (rowCount ?? 0) > 0
}
