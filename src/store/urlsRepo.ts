import type { Queryable } from './transaction.ts'
import { moveHostRollupRows } from './hostsRepo.ts'
import { CURRENT_CHANGE_EPOCH } from './changeEpoch.ts'

/**
 * Statements that rename stored pages and host limits to their canonical names after the URL rules
 * change (src/domain/urlRules.ts). They run in the transaction that holds the settings row FOR UPDATE.
 */

/** Keyset paging by id over page URLs only. */
export async function pageUrlsAfter(
  q: Queryable,
  afterId: string | null,
  limit: number,
): Promise<{ id: string; url: string }[]> {
  const { rows } = await q.query<{ id: string; url: string }>(
    'SELECT id::text AS id, url FROM pages WHERE ($1::bigint IS NULL OR id > $1::bigint) ORDER BY id LIMIT $2',
    [afterId, limit],
  )
  return rows
}

/** The pages that have one of these URLs. */
export async function pagesWithUrls(q: Queryable, urls: readonly string[]): Promise<{ id: string; url: string }[]> {
  if (urls.length === 0) return []
  const { rows } = await q.query<{ id: string; url: string }>(
    'SELECT id::text AS id, url FROM pages WHERE url = ANY($1::text[])',
    [urls],
  )
  return rows
}

/**
 * Gives pages new URLs and hosts. A page whose host changes takes it to its schedule row in the same
 * statement (the foreign key checks the pair at its end), marked polite when its new host is paced, with its
 * version moved, so an optimiser run that read it before does not write it back (migrations/0015, 0026). The
 * host overview's list of hosts follows (migrations/0022).
 */
export async function renamePages(
  q: Queryable,
  renames: readonly { id: string; url: string; host: string }[],
  nowMs: number,
): Promise<void> {
  if (renames.length === 0) return
  const { rows } = await q.query<{ fromHost: string; toHost: string }>(
    `WITH page AS (
       UPDATE pages p SET url = r.url, host = r.host, updated_at = $4::timestamptz
       FROM unnest($1::bigint[], $2::text[], $3::text[]) AS r(id, url, host),
         (SELECT id, host FROM pages WHERE id = ANY($1::bigint[])) AS before
       WHERE p.id = r.id AND before.id = r.id
       RETURNING p.id, before.host AS from_host, p.host AS to_host
     ),
     schedule AS (
       UPDATE page_schedule s SET host = page.to_host, version = s.version + 1, change_epoch = ${CURRENT_CHANGE_EPOCH},
         polite = EXISTS (SELECT 1 FROM hosts h WHERE h.host = page.to_host AND h.pace_seconds > 0)
       FROM page WHERE s.page_id = page.id AND page.from_host <> page.to_host
     )
     SELECT from_host AS "fromHost", to_host AS "toHost" FROM page`,
    [renames.map((r) => r.id), renames.map((r) => r.url), renames.map((r) => r.host), new Date(nowMs)],
  )
  const moved = rows.filter((r) => r.fromHost !== r.toHost)
  await moveHostRollupRows(q, { gained: moved.map((r) => r.toHost), lost: moved.map((r) => r.fromHost) })
}

/** Every host with limits, locked until the transaction ends. */
export async function lockHostNames(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ host: string }>('SELECT host FROM hosts ORDER BY host FOR UPDATE')
  return rows.map((r) => r.host)
}

/** Renames host limit rows; the pages of the new names are re-marked polite or not. */
export async function renameHosts(
  q: Queryable,
  renames: readonly { from: string; to: string }[],
  nowMs: number,
): Promise<void> {
  if (renames.length === 0) return
  await q.query(
    `UPDATE hosts h SET host = r.to_host, updated_at = $3::timestamptz
     FROM unnest($1::text[], $2::text[]) AS r(from_host, to_host)
     WHERE h.host = r.from_host`,
    [renames.map((r) => r.from), renames.map((r) => r.to), new Date(nowMs)],
  )
  await q.query(
    `UPDATE page_schedule s SET polite = NOT s.polite
     FROM pages p
     WHERE p.host = ANY($1::text[]) AND s.page_id = p.id
       AND s.polite <> EXISTS (SELECT 1 FROM hosts h WHERE h.host = s.host AND h.pace_seconds > 0)`,
    [renames.map((r) => r.to)],
  )
}
