import type { Queryable } from './transaction.ts'

export interface ObservationInsert {
  pageId: string
  crawledAt: string
  changed: boolean | null
  contentHash: string | null
  lastModified: string | null
  httpStatus: number | null
  applied: boolean
  late: boolean
  /** Length of the estimator interval this crawl closed, in seconds (null when not applied). */
  intervalSeconds: number | null
}

/**
 * Appends observations; a (page, crawledAt) already stored is left alone. Returns the keys that
 * were new, as `${pageId}|${epochMs}`.
 */
export async function insertObservations(q: Queryable, rows: readonly ObservationInsert[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set()
  const result = await q.query<{ pageId: string; crawledAtMs: string }>(
    `INSERT INTO observations AS o
       (page_id, crawled_at, changed, content_hash, last_modified, http_status, applied, late, interval_seconds)
     SELECT u."pageId", u."crawledAt", u."changed", u."contentHash", u."lastModified", u."httpStatus",
            u."applied", u."late", u."intervalSeconds"
     FROM jsonb_to_recordset($1::jsonb) AS u("pageId" bigint, "crawledAt" timestamptz, "changed" boolean,
       "contentHash" text, "lastModified" timestamptz, "httpStatus" smallint, "applied" boolean,
       "late" boolean, "intervalSeconds" double precision)
     ON CONFLICT (page_id, crawled_at) DO NOTHING
     RETURNING o.page_id::text AS "pageId",
       (extract(epoch FROM o.crawled_at) * 1000)::bigint::text AS "crawledAtMs"`,
    [JSON.stringify(rows)],
  )
  return new Set(result.rows.map((r) => `${r.pageId}|${r.crawledAtMs}`))
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

/** Newest first, strictly before `before` when given. */
export async function listObservations(
  q: Queryable,
  pageId: string,
  options: { before: Date | null; limit: number },
): Promise<ObservationRow[]> {
  const { rows } = await q.query<ObservationRow>(
    `SELECT ${OBSERVATION_COLUMNS} FROM observations
     WHERE page_id = $1::bigint AND ($2::timestamptz IS NULL OR crawled_at < $2::timestamptz)
     ORDER BY crawled_at DESC LIMIT $3`,
    [pageId, options.before, options.limit],
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
