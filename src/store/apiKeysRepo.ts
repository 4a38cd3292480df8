import type { Queryable } from './transaction.ts'

export type Role = 'crawler' | 'reader' | 'admin'

/** NOTIFY channel of every change to api_keys: each replica empties its key caches on it. */
export const API_KEYS_CHANNEL = 'recrawl_api_keys'

/** Tells every listening replica, when the surrounding transaction commits, that keys changed. */
export async function notifyApiKeysChanged(q: Queryable): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [API_KEYS_CHANNEL, ''])
}

export async function insertApiKey(
  q: Queryable,
  key: { name: string; role: Role; keySha256: string },
): Promise<{ id: string; createdAt: Date }> {
  const { rows } = await q.query<{ id: string; createdAt: Date }>(
    `INSERT INTO api_keys (name, role, key_sha256) VALUES ($1, $2, $3)
     RETURNING id::text AS id, created_at AS "createdAt"`,
    [key.name, key.role, key.keySha256],
  )
  return rows[0]!
}

export async function findActiveKeyRole(q: Queryable, keySha256: string): Promise<Role | null> {
  const { rows } = await q.query<{ role: Role }>(
    'SELECT role FROM api_keys WHERE key_sha256 = $1 AND revoked_at IS NULL',
    [keySha256],
  )
  return rows[0]?.role ?? null
}

export async function countActiveKeys(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL')
  return rows[0]?.n ?? 0
}

export async function listApiKeys(
  q: Queryable,
): Promise<{ id: string; name: string; role: Role; createdAt: Date; revokedAt: Date | null }[]> {
  const { rows } = await q.query(
    `SELECT id::text AS id, name, role, created_at AS "createdAt", revoked_at AS "revokedAt"
     FROM api_keys ORDER BY created_at`,
  )
  return rows
}

export async function revokeApiKey(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query(
    'UPDATE api_keys SET revoked_at = now() WHERE id = $1::uuid AND revoked_at IS NULL',
    [id],
  )
  return (rowCount ?? 0) > 0
}
