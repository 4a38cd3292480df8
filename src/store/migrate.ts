import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import { withTransaction } from './transaction.ts'

/** Arbitrary constant shared by every replica: only one of them migrates at a time. */
const MIGRATION_LOCK_KEY = 7_242_019_001

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url))

export interface Migration {
  version: string
  name: string
  sql: string
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/

export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort()
  const migrations: Migration[] = []
  for (const file of files) {
    const match = FILE_NAME.exec(file)
    if (!match) throw new Error(`migration file name must look like 0001_name.sql: ${file}`)
    migrations.push({ version: match[1]!, name: match[2]!, sql: await readFile(join(dir, file), 'utf8') })
  }
  return migrations
}

/**
 * Applies the pending migrations in order, all in one transaction under an advisory lock, and
 * records each in schema_migrations. Concurrent callers wait for the lock and then find nothing to do.
 * Returns the versions it applied.
 */
export async function migrate(
  pool: pg.Pool,
  options: { dir?: string; onApplied?: (m: Migration, durationMs: number) => void } = {},
): Promise<string[]> {
  const migrations = await loadMigrations(options.dir)
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY])
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await client.query<{ version: string }>('SELECT version FROM schema_migrations')
    const done = new Set(rows.map((r) => r.version))
    const applied: string[] = []
    for (const m of migrations) {
      if (done.has(m.version)) continue
      const started = performance.now()
      await client.query(m.sql)
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
      options.onApplied?.(m, performance.now() - started)
      applied.push(m.version)
    }
    return applied
  })
}

/** Versions known to the code but not recorded in the database (empty = up to date). */
export async function pendingMigrations(pool: pg.Pool, dir?: string): Promise<string[]> {
  const migrations = await loadMigrations(dir)
  const exists = await pool.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  )
  if (!exists.rows[0]?.present) return migrations.map((m) => m.version)
  const { rows } = await pool.query<{ version: string }>('SELECT version FROM schema_migrations')
  const done = new Set(rows.map((r) => r.version))
  return migrations.filter((m) => !done.has(m.version)).map((m) => m.version)
}
