import type { Queryable } from './transaction.ts'

export interface ObservationInsert {
  pageId: string
  crawledAtMs: number
  changed: boolean | null
  /** The change flag as the crawler reported it (null: not reported). */
  reportedChanged: boolean | null
  contentHash: string | null
  lastModifiedMs: number | null
  httpStatus: number | null
  etag: string | null
  fetchError: string | null
  redirectTo: string | null
  retryAfterSeconds: number | null
  applied: boolean
  late: boolean
  /** Length of the estimator interval this crawl closed, in seconds (null when not applied). */
  intervalSeconds: number | null
}

/** Which of these (page, crawl time) pairs are stored already, as `${pageId}|${epochMs}` (crawlKey). */
export async function storedCrawls(
  q: Queryable,
  pageIds: readonly string[],
  crawledAtMs: readonly number[],
): Promise<Set<string>> {
  if (pageIds.length === 0) return new Set()
  const { rows } = await q.query<{ key: string }>(
    `SELECT o.page_id::text || '|' || floor(extract(epoch FROM o.crawled_at) * 1000)::bigint::text AS key
     FROM unnest($1::bigint[], $2::float8[]) AS u(page_id, ms)
     JOIN observations o ON o.page_id = u.page_id AND o.crawled_at = to_timestamp(u.ms / 1000.0)`,
    [pageIds, crawledAtMs],
  )
  return new Set(rows.map((r) => r.key))
}

/** The key of one stored crawl in the sets returned by storedCrawls and insertObservations. */
export function crawlKey(pageId: string, crawledAtMs: number): string {
  return `${pageId}|${crawledAtMs}`
}

/**
 * Appends observations; a (page, crawledAt) already stored is left alone. Returns the keys (crawlKey)
 * that were new.
 */
export async function insertObservations(q: Queryable, rows: readonly ObservationInsert[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set()
  const result = await q.query<{ pageId: string; crawledAtMs: string }>(
    `INSERT INTO observations AS o
       (page_id, crawled_at, changed, reported_changed, content_hash, last_modified, http_status, etag, fetch_error, redirect_to,
        retry_after_seconds, applied, late, interval_seconds)
     SELECT u."pageId", u."crawledAt", u."changed", u."reportedChanged", u."contentHash", u."lastModified", u."httpStatus",
            u."etag", u."fetchError", u."redirectTo", u."retryAfterSeconds", u."applied", u."late", u."intervalSeconds"
     FROM jsonb_to_recordset($1::jsonb) AS u("pageId" bigint, "crawledAt" timestamptz, "changed" boolean, "reportedChanged" boolean,
       "contentHash" text, "lastModified" timestamptz, "httpStatus" smallint, "etag" text, "fetchError" text,
       "redirectTo" text, "retryAfterSeconds" double precision, "applied" boolean, "late" boolean,
       "intervalSeconds" double precision)
     ON CONFLICT (page_id, crawled_at) DO NOTHING
     RETURNING o.page_id::text AS "pageId",
       floor(extract(epoch FROM o.crawled_at) * 1000)::bigint::text AS "crawledAtMs"`,
    [
      JSON.stringify(
        rows.map((r) => ({
          pageId: r.pageId,
          crawledAt: new Date(r.crawledAtMs).toISOString(),
          changed: r.changed,
          reportedChanged: r.reportedChanged,
          contentHash: r.contentHash,
          lastModified: r.lastModifiedMs === null ? null : new Date(r.lastModifiedMs).toISOString(),
          httpStatus: r.httpStatus,
          etag: r.etag,
          fetchError: r.fetchError,
          redirectTo: r.redirectTo,
          retryAfterSeconds: r.retryAfterSeconds,
          applied: r.applied,
          late: r.late,
          intervalSeconds: r.intervalSeconds,
        })),
      ),
    ],
  )
  return new Set(result.rows.map((r) => crawlKey(r.pageId, Number(r.crawledAtMs))))
}

export interface ObservationRow {
  crawledAt: Date
  changed: boolean | null
  contentHash: string | null
  lastModified: Date | null
  httpStatus: number | null
  applied: boolean
  late: boolean
  intervalSeconds: number | null
  receivedAt: Date
}

const OBSERVATION_COLUMNS = `crawled_at AS "crawledAt", changed, content_hash AS "contentHash",
  last_modified AS "lastModified", http_status AS "httpStatus", applied, late,
  interval_seconds AS "intervalSeconds", received_at AS "receivedAt"`

/** Newest first, strictly before `beforeMs` when given. */
export async function listObservations(
  q: Queryable,
  pageId: string,
  options: { beforeMs: number | null; limit: number },
): Promise<ObservationRow[]> {
  const { rows } = await q.query<ObservationRow>(
    `SELECT ${OBSERVATION_COLUMNS} FROM observations
     WHERE page_id = $1::bigint AND ($2::timestamptz IS NULL OR crawled_at < $2::timestamptz)
     ORDER BY crawled_at DESC LIMIT $3`,
    [pageId, options.beforeMs === null ? null : new Date(options.beforeMs), options.limit],
  )
  return rows
}

/** The most recent `limit` observations of a page, oldest first (for the history-based estimators). */
export async function recentHistory(q: Queryable, pageId: string, limit: number): Promise<ObservationRow[]> {
  const { rows } = await q.query<ObservationRow>(
    `SELECT * FROM (SELECT ${OBSERVATION_COLUMNS} FROM observations WHERE page_id = $1::bigint
       ORDER BY crawled_at DESC LIMIT $2) h ORDER BY "crawledAt"`,
    [pageId, limit],
  )
  return rows
}

/** A stored crawl as the crawler reported it, for replaying a page's history (times in epoch ms). */
type ReportedCrawlRow = Pick<
  ObservationInsert,
  | 'crawledAtMs'
  | 'reportedChanged'
  | 'contentHash'
  | 'lastModifiedMs'
  | 'httpStatus'
  | 'etag'
  | 'fetchError'
  | 'retryAfterSeconds'
  | 'redirectTo'
>

/** Every stored crawl of a page, oldest first, as reported. */
export async function reportedHistory(q: Queryable, pageId: string): Promise<ReportedCrawlRow[]> {
  const { rows } = await q.query<ReportedCrawlRow>(
    `SELECT floor(extract(epoch FROM crawled_at) * 1000)::float8 AS "crawledAtMs", reported_changed AS "reportedChanged",
       content_hash AS "contentHash", floor(extract(epoch FROM last_modified) * 1000)::float8 AS "lastModifiedMs",
       http_status AS "httpStatus", etag, fetch_error AS "fetchError", retry_after_seconds AS "retryAfterSeconds",
       redirect_to AS "redirectTo"
     FROM observations WHERE page_id = $1::bigint ORDER BY crawled_at`,
    [pageId],
  )
  return rows
}

/** What a replay made of each stored crawl of a page (the derived columns), written back in one statement. */
export async function rewriteCrawlOutcomes(
  q: Queryable,
  pageId: string,
  outcomes: readonly {
    crawledAtMs: number
    changed: boolean | null
    applied: boolean
    intervalSeconds: number | null
  }[],
): Promise<void> {
  if (outcomes.length === 0) return
  await q.query(
    `UPDATE observations o SET changed = u.changed, applied = u.applied, interval_seconds = u.interval
     FROM unnest($2::timestamptz[], $3::boolean[], $4::boolean[], $5::float8[]) AS u(at, changed, applied, interval)
     WHERE o.page_id = $1::bigint AND o.crawled_at = u.at`,
    [
      pageId,
      outcomes.map((o) => new Date(o.crawledAtMs).toISOString()),
      outcomes.map((o) => o.changed),
      outcomes.map((o) => o.applied),
      outcomes.map((o) => o.intervalSeconds),
    ],
  )
}
