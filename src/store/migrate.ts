import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import { withTransaction } from './transaction.ts'

/** Arbitrary constant shared by every replica: only one of them migrates at a time. */
const MIGRATION_LOCK_KEY = 7_242_019_001

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url))

interface Migration {
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
 * The database records migrations this code does not have: it was migrated by a newer release.
 * Running older code against a newer schema could write rows the newer code misreads, so the
 * service refuses to start (and `migrate` refuses to run) until a release that knows them is deployed.
 */
export class SchemaNewerThanCodeError extends Error {
  constructor(readonly unknownMigrations: string[]) {
    super(
      `the database schema is newer than this code: it records migration${unknownMigrations.length > 1 ? 's' : ''} ` +
        `${unknownMigrations.join(', ')} that this release does not have. Deploy a release that includes ` +
        `${unknownMigrations.length > 1 ? 'them' : 'it'} (or point DATABASE_URL at a database of this release); nothing was changed`,
    )
    this.name = 'SchemaNewerThanCodeError'
  }
}

/**
 * A migration statement with no client-side time limit (setTimeout's maximum): node-postgres reads
 * `query_timeout` per query as well as per connection, which @types/pg does not declare.
 */
function unlimited(text: string, values?: unknown[]): pg.QueryConfig {
  return { text, ...(values ? { values } : {}), query_timeout: 2_147_483_647 } as pg.QueryConfig
}

/**
 * Applies the pending migrations in order, all in one transaction under an advisory lock, and
 * records each in schema_migrations. Concurrent callers (replicas starting together) wait for the
 * lock and then find nothing to do. Refuses, changing nothing, when the database records a
 * migration this code does not have (SchemaNewerThanCodeError) or records one of its versions
 * under another name. Returns the versions it applied.
 */
export async function migrate(
  pool: pg.Pool,
  options: { dir?: string; onApplied?: (m: Migration, durationMs: number) => void } = {},
): Promise<string[]> {
  const migrations = await loadMigrations(options.dir)
  return withTransaction(pool, async (client) => {
    // A migration may rewrite big tables and other replicas wait for it: the session limits meant for
    // requests (src/store/db.ts) do not apply to this transaction.
    await client.query('SET LOCAL statement_timeout = 0')
    await client.query('SET LOCAL lock_timeout = 0')
    await client.query(unlimited('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY]))
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await client.query<{ version: string; name: string }>(
      'SELECT version, name FROM schema_migrations ORDER BY version',
    )
    const known = new Map(migrations.map((m) => [m.version, m.name]))
    const unknown = rows.filter((r) => !known.has(r.version)).map((r) => `${r.version}_${r.name}`)
    if (unknown.length > 0) throw new SchemaNewerThanCodeError(unknown)
    for (const r of rows) {
      if (known.get(r.version) !== r.name) {
        throw new Error(
          `migration ${r.version} is recorded as "${r.name}" in the database but is "${known.get(r.version)}" in this code: ` +
            'the database was migrated by a different line of releases; nothing was changed',
        )
      }
    }
    const done = new Set(rows.map((r) => r.version))
    const applied: string[] = []
    for (const m of migrations) {
      if (done.has(m.version)) continue
      const started = performance.now()
      await client.query(unlimited(m.sql))
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
