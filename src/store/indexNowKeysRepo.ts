import type { Queryable } from './transaction.ts'

/** The IndexNow keys the operator registered per host (migrations/0024). */

interface IndexNowKeyRow {
  key: string
  createdAt: Date
}

/** Registers a key for a host; registering it again keeps its first registration time. */
export async function insertIndexNowKey(q: Queryable, host: string, key: string): Promise<void> {
  await q.query('INSERT INTO indexnow_keys (host, key) VALUES ($1, $2) ON CONFLICT (host, key) DO NOTHING', [host, key])
}

export async function deleteIndexNowKey(q: Queryable, host: string, key: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM indexnow_keys WHERE host = $1 AND key = $2', [host, key])
  return (rowCount ?? 0) > 0
}

/** A host's keys, oldest first. */
export async function listIndexNowKeys(q: Queryable, host: string): Promise<IndexNowKeyRow[]> {
  const { rows } = await q.query<IndexNowKeyRow>(
    'SELECT key, created_at AS "createdAt" FROM indexnow_keys WHERE host = $1 ORDER BY created_at, key',
    [host],
  )
  return rows
}

/** Whether `key` is registered for `host`. */
export async function isIndexNowKeyOf(q: Queryable, host: string, key: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM indexnow_keys WHERE host = $1 AND key = $2', [host, key])
  return rows.length > 0
}

/** Every host that has keys, locked until the transaction ends. */
export async function lockIndexNowKeyHosts(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{ host: string }>('SELECT host FROM indexnow_keys ORDER BY host, key FOR UPDATE')
  return [...new Set(rows.map((r) => r.host))]
}

/**
 * Moves the keys of hosts to their new names after a change of the URL rules. Two names that become one keep
 * the keys of both: a key set has nothing to merge but itself.
 */
export async function renameIndexNowKeyHosts(
  q: Queryable,
  renames: readonly { from: string; to: string }[],
): Promise<void> {
  if (renames.length === 0) return
  const from = renames.map((r) => r.from)
  const to = renames.map((r) => r.to)
  await q.query(
    `INSERT INTO indexnow_keys (host, key, created_at)
     SELECT r.to_host, k.key, min(k.created_at)
     FROM indexnow_keys k JOIN unnest($1::text[], $2::text[]) AS r(from_host, to_host) ON k.host = r.from_host
     GROUP BY r.to_host, k.key
     ON CONFLICT (host, key) DO UPDATE SET created_at = least(indexnow_keys.created_at, excluded.created_at)`,
    [from, to],
  )
  await q.query('DELETE FROM indexnow_keys WHERE host = ANY($1::text[])', [from])
}
