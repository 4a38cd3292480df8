import {
  compileRecord,
  fieldNamesWhere,
  fieldsWrittenBy,
  PAGE_FIELDS,
  type FieldValues,
  type PageFieldName,
  type PageKind,
  type PageRow,
  type PageTable,
} from '../core/pageFields.ts'
import { recordColumns, selectList, sentFields, setList, wireConverter, wireType, wireValue } from './pageColumns.ts'
import type { Queryable } from './transaction.ts'
import { likePrefix } from './likePatterns.ts'
import { moveHostRollupRows } from './hostsRepo.ts'
import { CURRENT_CHANGE_EPOCH } from './changeEpoch.ts'
import { numberArrayLiteral, textArrayLiteral } from './arrayLiterals.ts'

/** A page row: `p` is its pages row, `s` its page_schedule row (migrations/0015). */
const PAGE_COLUMNS = selectList(fieldNamesWhere((f) => f.read))

const PAGES = 'pages p JOIN page_schedule s ON s.page_id = p.id'

/** A new schedule row's politeness mark: its host is paced (migrations/0026; the lease claim marks stragglers). */
const politeOf = (host: string) => `EXISTS (SELECT 1 FROM hosts h WHERE h.host = ${host} AND h.pace_seconds > 0)`

/**
 * Registers the URLs that are not pages yet (importance 1 and kind `page` unless given, due at `nextCrawlAtMs`); a URL
 * stored already keeps its kind. Returns how
 * many were new. Inserts in URL order so two concurrent batches that register overlapping URLs wait for each
 * other instead of deadlocking. Hosts that got their first page join the host overview's list.
 */
export async function insertMissingPages(
  q: Queryable,
  pages: readonly { url: string; host: string; importance?: number; kind?: PageKind }[],
  nextCrawlAtMs: number,
): Promise<number> {
  if (pages.length === 0) return 0
  const sorted = [...pages].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
  const { rows } = await q.query<{ host: string }>(
    `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $5::text[]) WITH ORDINALITY AS u(url, host, importance, kind, ord)
     ),
     inserted AS (
       INSERT INTO pages (url, host, kind) SELECT u.url, u.host, u.kind FROM u ORDER BY u.ord ON CONFLICT (url) DO NOTHING RETURNING id, url, host
     )
     INSERT INTO page_schedule (page_id, host, importance, next_crawl_at, polite, change_epoch)
     SELECT i.id, i.host, u.importance, $4::timestamptz, ${politeOf('i.host')}, ${CURRENT_CHANGE_EPOCH}
     FROM inserted i JOIN u ON u.url = i.url
     RETURNING host`,
    [
      sorted.map((p) => p.url),
      sorted.map((p) => p.host),
      sorted.map((p) => p.importance ?? 1),
      new Date(nextCrawlAtMs),
      sorted.map((p) => p.kind ?? 'page'),
    ],
  )
  await moveHostRollupRows(q, { gained: rows.map((r) => r.host), lost: [] })
  return rows.length
}

/** Locks the pages with these URLs, in id order (every writer locks in id order: no deadlocks). */
export async function lockPagesByUrl(q: Queryable, urls: readonly string[]): Promise<PageRow[]> {
  if (urls.length === 0) return []
  const { rows } = await q.query<PageRow>(
    `SELECT ${PAGE_COLUMNS} FROM ${PAGES} WHERE p.url = ANY($1::text[]) ORDER BY p.id FOR UPDATE`,
    [textArrayLiteral(urls)],
  )
  return rows
}

/**
 * Locks the pages with these URLs as lockPagesByUrl does, reading only their id, URL, lease and `fields`: a
 * sitemap's tens of thousands of signalled pages need a handful of columns, not the whole row.
 */
export async function lockPageFieldsByUrl<K extends keyof PageRow & PageFieldName>(
  q: Queryable,
  urls: readonly string[],
  fields: readonly K[],
): Promise<Pick<PageRow, K | 'id' | 'url' | 'leaseId'>[]> {
  if (urls.length === 0) return []
  const columns = selectList([...new Set<PageFieldName>(['id', 'url', 'leaseId', ...fields])])
  const { rows } = await q.query<Pick<PageRow, K | 'id' | 'url' | 'leaseId'>>(
    `SELECT ${columns} FROM ${PAGES} WHERE p.url = ANY($1::text[]) ORDER BY p.id FOR UPDATE`,
    [textArrayLiteral(urls)],
  )
  return rows
}

/** The fields a reported crawl writes, and those it sends (the version moves by itself). */
const CRAWL_FIELDS = fieldsWrittenBy('crawl')
const CRAWL_SENT = sentFields(CRAWL_FIELDS)

/** A page's crawl state after a batch of observations, written back in one statement. */
export type CrawledPageWrite = Pick<PageRow, 'id'> &
  FieldValues<(typeof CRAWL_SENT)[number]> & {
    /** The lease this batch completed on the page, if any: cleared only while it still holds. */
    completedLeaseId: string | null
  }

const CRAWL_WRITE = `WITH u AS MATERIALIZED (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS u("id" bigint, ${recordColumns(CRAWL_SENT)}, "completedLeaseId" uuid)
     ),
     crawl_state AS (
       UPDATE pages p SET ${setList(CRAWL_FIELDS, 'pages')}, updated_at = $2::timestamptz
       FROM u WHERE p.id = u."id"
     )
     UPDATE page_schedule s SET ${setList(CRAWL_FIELDS, 'page_schedule')}, change_epoch = ${CURRENT_CHANGE_EPOCH},
       lease_id = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.lease_id END,
       leased_by = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.leased_by END,
       lease_expires_at = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.lease_expires_at END,
       leased_at = CASE WHEN s.lease_id = u."completedLeaseId" THEN NULL ELSE s.leased_at END
     FROM u WHERE s.page_id = u."id"`

/** A crawl write as its JSON record travels (times as RFC 3339, the estimator state as base64). */
const crawlRecord = compileRecord<CrawledPageWrite, object>([
  { from: 'id', to: 'id' },
  ...CRAWL_SENT.map((k) => ({ from: k, to: k, via: wireConverter(PAGE_FIELDS[k]) })),
  { from: 'completedLeaseId', to: 'completedLeaseId' },
])

/** Writes the pages' crawl state; `nowMs` is the clock's time, stored as the rows' updated_at. */
export async function writeCrawledPages(
  q: Queryable,
  updates: readonly CrawledPageWrite[],
  nowMs: number,
): Promise<void> {
  if (updates.length === 0) return
  await q.query(CRAWL_WRITE, [JSON.stringify(updates.map(crawlRecord)), new Date(nowMs)])
}

/** The fields an upsert sets: given for every page, they replace the stored ones. */
const UPSERT_FIELDS = fieldsWrittenBy('upsert')
const UPSERT_SENT = sentFields(UPSERT_FIELDS)

export type PageUpsert = Pick<PageRow, 'url' | 'host'> & FieldValues<(typeof UPSERT_SENT)[number]>

const upsertColumns = (table: PageTable) => UPSERT_SENT.filter((k) => PAGE_FIELDS[k].table === table)
const UPSERT_PAGE_COLUMNS = upsertColumns('pages')
const UPSERT_SCHEDULE_COLUMNS = upsertColumns('page_schedule')
const columnsOf = (names: readonly PageFieldName[], prefix: string) =>
  names.map((k) => `, ${prefix}${PAGE_FIELDS[k].column}`).join('')
const valuesOf = (names: readonly PageFieldName[]) => names.map((k) => `, u."${k}"`).join('')
const excludedOf = (names: readonly PageFieldName[]) =>
  names.map((k) => `${PAGE_FIELDS[k].column} = excluded.${PAGE_FIELDS[k].column}, `).join('')

const UPSERT = `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($1::text[], $2::text[]${UPSERT_SENT.map((k, i) => `, $${i + 3}::${wireType(PAGE_FIELDS[k])}[]`).join('')})
         WITH ORDINALITY AS u(url, host${UPSERT_SENT.map((k) => `, "${k}"`).join('')}, ord)
     ),
     page AS (
       INSERT INTO pages AS p (url, host${columnsOf(UPSERT_PAGE_COLUMNS, '')}, updated_at)
       SELECT u.url, u.host${valuesOf(UPSERT_PAGE_COLUMNS)}, $${UPSERT_SENT.length + 4}::timestamptz FROM u ORDER BY u.ord
       ON CONFLICT (url) DO UPDATE SET ${excludedOf(UPSERT_PAGE_COLUMNS)}updated_at = excluded.updated_at
       WHERE p.kind = excluded.kind
       RETURNING p.*, (xmax = 0) AS created
     ),
     schedule AS (
       INSERT INTO page_schedule AS s (page_id, host${columnsOf(UPSERT_SCHEDULE_COLUMNS, '')}, next_crawl_at, polite, change_epoch)
       SELECT page.id, page.host${valuesOf(UPSERT_SCHEDULE_COLUMNS)}, $${UPSERT_SENT.length + 3}::timestamptz, ${politeOf('page.host')},
         ${CURRENT_CHANGE_EPOCH}
       FROM page JOIN u ON u.url = page.url ORDER BY u.ord
       ON CONFLICT (page_id) DO UPDATE SET ${excludedOf(UPSERT_SCHEDULE_COLUMNS)}version = s.version + 1,
         change_epoch = excluded.change_epoch
       RETURNING s.*
     )
     SELECT ${PAGE_COLUMNS}, p.created FROM page p JOIN schedule s ON s.page_id = p.id`

/**
 * Bulk upsert (PUT semantics: the given attributes replace the stored ones). URL order, as for
 * registration. New pages are due at `nextCrawlAtMs`; every written page's updated_at becomes `nowMs`, the
 * clock's time. It travels in the inserted row (excluded.updated_at): Citus refuses functions such as now() in
 * ON CONFLICT ... DO UPDATE, and fails on a parameter there when the rows come from a SELECT.
 * Returns every touched row and whether it was new; hosts that got their first page join the host overview's list.
 * A URL stored with another kind (a page given as a sitemap, or the reverse) is left as it is and not
 * returned: the caller refuses the batch (its kind never changes).
 */
export async function upsertPages(
  q: Queryable,
  pages: readonly PageUpsert[],
  nextCrawlAtMs: number,
  nowMs: number,
): Promise<{ row: PageRow; created: boolean }[]> {
  if (pages.length === 0) return []
  const sorted = [...pages].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
  const { rows } = await q.query<PageRow & { created: boolean }>(UPSERT, [
    sorted.map((p) => p.url),
    sorted.map((p) => p.host),
    ...UPSERT_SENT.map((k) => sorted.map((p) => wireValue(PAGE_FIELDS[k], p[k]))),
    new Date(nextCrawlAtMs),
    new Date(nowMs),
  ])
  await moveHostRollupRows(q, { gained: rows.filter((r) => r.created).map((r) => r.host), lost: [] })
  return rows.map(({ created, ...row }) => ({ row, created }))
}

/** The fields a re-time writes (a new estimate, rate and due time), and those it sends. */
const RETIME_FIELDS = fieldsWrittenBy('retime')
const RETIME_SENT = sentFields(RETIME_FIELDS)

/** One page's new scheduling estimate, rate and due time. */
type PageSchedule = Pick<PageRow, 'id'> & FieldValues<(typeof RETIME_SENT)[number]>

const RETIME = `WITH u AS MATERIALIZED (
       SELECT * FROM unnest($1::bigint[]${RETIME_SENT.map((k, i) => `, $${i + 2}::${wireType(PAGE_FIELDS[k])}[]`).join('')})
         AS u(id${RETIME_SENT.map((k) => `, "${k}"`).join('')})
     ),
     estimate AS (
       UPDATE pages p SET ${setList(RETIME_FIELDS, 'pages')}, updated_at = $${RETIME_SENT.length + 2}::timestamptz
       FROM u WHERE p.id = u.id
     )
     UPDATE page_schedule s SET ${setList(RETIME_FIELDS, 'page_schedule')}, change_epoch = ${CURRENT_CHANGE_EPOCH}
     FROM u WHERE s.page_id = u.id`

/**
 * Writes new estimates, rates and due times in one statement (after an upsert or a settings change); the
 * pages' updated_at becomes `nowMs`, the clock's time.
 */
export async function writeSchedules(q: Queryable, schedules: readonly PageSchedule[], nowMs: number): Promise<void> {
  if (schedules.length === 0) return
  await q.query(RETIME, [
    schedules.map((s) => s.id),
    ...RETIME_SENT.map((k) => schedules.map((s) => wireValue(PAGE_FIELDS[k], s[k]))),
    new Date(nowMs),
  ])
}

export async function getPageById(q: Queryable, id: string): Promise<PageRow | null> {
  const { rows } = await q.query<PageRow>(`SELECT ${PAGE_COLUMNS} FROM ${PAGES} WHERE p.id = $1::bigint`, [id])
  return rows[0] ?? null
}

export async function getPageByUrl(q: Queryable, url: string): Promise<PageRow | null> {
  const { rows } = await q.query<PageRow>(`SELECT ${PAGE_COLUMNS} FROM ${PAGES} WHERE p.url = $1`, [url])
  return rows[0] ?? null
}

/** Which pages a listing or a bulk action takes; null = any. */
export interface PageFilter {
  host: string | null
  /** The start of the canonical URL, matched literally. */
  urlPrefix: string | null
  status: string | null
  noisy: boolean | null
  /** Pages or sitemap items (migrations/0025). */
  kind: PageKind | null
}

/** The filter as SQL over pages p, its values numbered from $`first`. */
function filterSql(filter: PageFilter, first: number): { sql: string; values: unknown[] } {
  return {
    sql: `($${first}::text IS NULL OR p.host = $${first}) AND ($${first + 1}::text IS NULL OR p.url LIKE $${first + 1})
      AND ($${first + 2}::text IS NULL OR p.status = $${first + 2}) AND ($${first + 3}::boolean IS NULL OR p.noisy = $${first + 3})
      AND ($${first + 4}::text IS NULL OR p.kind = $${first + 4})`,
    values: [
      filter.host,
      filter.urlPrefix === null ? null : likePrefix(filter.urlPrefix),
      filter.status,
      filter.noisy,
      filter.kind,
    ],
  }
}

/** Keyset paging by id; `afterId` is the last id of the previous page. */
export async function listPages(
  q: Queryable,
  options: { filter: PageFilter; afterId: string | null; limit: number },
): Promise<PageRow[]> {
  const where = filterSql(options.filter, 3)
  const { rows } = await q.query<PageRow>(
    `SELECT ${PAGE_COLUMNS} FROM ${PAGES}
     WHERE ${where.sql} AND p.id > $1::bigint AND s.page_id > $1::bigint
     ORDER BY p.id LIMIT $2`,
    // The bound on both tables keeps a merge join from reading the schedule from its first row (ids start at 1).
    [options.afterId ?? '0', options.limit, ...where.values],
  )
  return rows
}

/** How many pages the filter takes. */
export async function countPages(q: Queryable, filter: PageFilter): Promise<number> {
  const where = filterSql(filter, 1)
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pages p WHERE ${where.sql}`,
    where.values,
  )
  return rows[0]?.n ?? 0
}

/**
 * Deletes the pages over p that `where` takes (by cascade their schedule and history, then by statement their
 * signals). In the same transaction, when it deleted any, the page-deletion counter moves, so the optimiser's kept
 * page set is read again once the deletion is visible (optimizerPages.ts), and hosts that lost their last page
 * leave the host overview's list (migrations/0026). Returns how many pages it deleted.
 */
async function deletePagesOf(q: Queryable, where: string, values: unknown[]): Promise<number> {
  const { rows } = await q.query<{ id: string; host: string }>(
    `DELETE FROM pages p WHERE ${where} RETURNING p.id::text AS id, p.host`,
    values,
  )
  if (rows.length === 0) return 0
  // A statement of its own, after the pages' deletion: its snapshot sees the signals of a transaction that held one
  // of these pages while the deletion waited for it (migrations/0029).
  const ids = numberArrayLiteral(rows.map((r) => r.id))
  await q.query('DELETE FROM pending_signals WHERE page_id = ANY($1::bigint[])', [ids])
  await q.query('DELETE FROM signals WHERE page_id = ANY($1::bigint[])', [ids])
  await q.query('UPDATE page_deletion_count SET statements = statements + 1 WHERE id')
  await moveHostRollupRows(q, { gained: [], lost: [...new Set(rows.map((r) => r.host))] })
  return rows.length
}

/** Deletes the pages the filter takes (and by cascade their history), in one statement. Returns how many. */
export async function deletePagesWhere(q: Queryable, filter: PageFilter): Promise<number> {
  const where = filterSql(filter, 1)
  return deletePagesOf(q, where.sql, where.values)
}

/** Deletes a page and (by cascade) its history. Returns whether it existed. */
export async function deletePage(q: Queryable, id: string): Promise<boolean> {
  return (await deletePagesOf(q, 'p.id = $1::bigint', [id])) > 0
}
