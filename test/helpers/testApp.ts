import { randomBytes } from 'node:crypto'
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { buildApp, type AppDeps } from '../../src/app.ts'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_MAX_BATCH_ITEMS } from '../../src/config.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openDatabase, type Database } from '../../src/store/db.ts'
import { MIGRATIONS_DIR, migrate } from '../../src/store/migrate.ts'
import { withTransaction } from '../../src/store/transaction.ts'

/**
 * A test database migrated up to, not including, migration `version` (e.g. '0015'), for a test of that
 * migration over data stored before it. `applyNext` applies `version` alone and returns what it applied.
 */
export async function openDatabaseBefore(version: string, poolSize = 2) {
  const dir = await mkdtemp(join(tmpdir(), 'recrawl-migrations-'))
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql'))
  for (const file of files) if (file < version) await copyFile(join(MIGRATIONS_DIR, file), join(dir, file))
  const db = await openTestDatabase(poolSize, dir)
  return {
    db,
    applyNext: async (): Promise<string[]> => {
      const file = files.find((f) => f.startsWith(`${version}_`))
      if (file === undefined) throw new Error(`no migration ${version}`)
      await copyFile(join(MIGRATIONS_DIR, file), join(dir, file))
      return migrate(db.pool, { dir })
    },
    close: async (): Promise<void> => {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A fresh, migrated database for one test file: a new database on the Postgres named by
 * DATABASE_URL when it is set (dropped afterwards), else an in-memory embedded one.
 * `migrationsDir` migrates with the files of another directory (e.g. only the older ones).
 */
export async function openTestDatabase(poolSize = 8, migrationsDir?: string): Promise<Database & { label: string }> {
  const adminUrl = process.env.DATABASE_URL
  if (!adminUrl) {
    const db = await openDatabase({ databaseUrl: undefined, dataDir: null, poolSize: 1 })
    await migrate(db.pool, migrationsDir === undefined ? {} : { dir: migrationsDir })
    return { ...db, label: 'embedded' }
  }
  const name = `recrawl_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir: null, poolSize })
  await migrate(db.pool, migrationsDir === undefined ? {} : { dir: migrationsDir })
  return {
    ...db,
    label: 'postgres',
    async close() {
      await db.close()
      const c = new pg.Client({ connectionString: adminUrl })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

export const T0 = Date.parse('2026-11-22T00:00:00Z')

export interface TestApp {
  app: FastifyInstance
  db: Database & { label: string }
  clock: ReturnType<typeof manualClock>
  close(): Promise<void>
}

/**
 * The tables of a just-migrated database and the rows the migrations put in them, for resetDatabase.
 * schema_migrations is left alone: it never changes after the migration.
 */
interface PristineTables {
  names: string[]
  seeds: { table: string; columns: string[]; rows: unknown[] }[]
}

async function pristineTables(pool: pg.Pool): Promise<PristineTables> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations' ORDER BY 1`,
  )
  const names = tables.map((t) => t.name)
  const seeds: PristineTables['seeds'] = []
  for (const table of names) {
    const id = pg.escapeIdentifier(table)
    const { rows } = await pool.query<{ rows: unknown[] }>(
      `SELECT coalesce(json_agg(t), '[]'::json) AS rows FROM ${id} t`,
    )
    if (rows[0]!.rows.length === 0) continue
    // Generated columns are computed again on insert.
    const { rows: columns } = await pool.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
      [table],
    )
    seeds.push({ table, columns: columns.map((c) => c.name), rows: rows[0]!.rows })
  }
  return { names, seeds }
}

/**
 * Empties every table (identities restart) and puts back what the migrations had put in, except that the
 * page-deletion counter moves on (a reset deletes every page), so an optimiser's kept page set from an earlier
 * test on the same pool is never taken for current (src/store/optimizerPages.ts).
 */
async function resetDatabase(pool: pg.Pool, pristine: PristineTables): Promise<void> {
  await withTransaction(pool, async (c) => {
    const { rows: counter } = await c.query<{ n: string }>('SELECT statements::text AS n FROM page_deletion_count')
    await c.query(`TRUNCATE ${pristine.names.map((n) => pg.escapeIdentifier(n)).join(', ')} RESTART IDENTITY CASCADE`)
    for (const seed of pristine.seeds) {
      const table = pg.escapeIdentifier(seed.table)
      const columns = seed.columns.map((n) => pg.escapeIdentifier(n)).join(', ')
      await c.query(
        `INSERT INTO ${table} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM json_populate_recordset(NULL::${table}, $1::json)`,
        [JSON.stringify(seed.rows)],
      )
    }
    await c.query('UPDATE page_deletion_count SET statements = $1::bigint + 1', [counter[0]!.n])
  })
}

/**
 * The database every app of this test file runs on (node --test runs each file in its own process):
 * created and migrated on the first startTestApp, closed (and, on a server, dropped) after the file.
 */
let fileDatabase: Promise<{ db: Database & { label: string }; pristine: PristineTables }> | null = null
let appOpen = false
after(async () => {
  if (fileDatabase !== null) await (await fileDatabase).db.close()
})

/**
 * The whole service with a manual clock at T0 and a seeded random source, on the file's database reset
 * to its just-migrated content: every test that starts its own app starts from the same state,
 * whatever ran before it. One app at a time (the next one resets the database under it); close it.
 */
export async function startTestApp(overrides: Partial<AppDeps> = {}): Promise<TestApp> {
  if (appOpen)
    throw new Error('startTestApp: the previous test app is still open; close it first (a new app resets the database)')
  appOpen = true
  try {
    fileDatabase ??= openTestDatabase().then(async (db) => ({ db, pristine: await pristineTables(db.pool) }))
    const { db, pristine } = await fileDatabase
    await resetDatabase(db.pool, pristine)
    const clock = manualClock(T0)
    const app = await buildApp({
      pool: db.pool,
      databaseKind: db.kind,
      clock,
      random: createRandom(42),
      maxBatchItems: DEFAULT_MAX_BATCH_ITEMS,
      bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
      loopbackOnly: true,
      authCacheMs: 0,
      ...overrides,
    })
    return {
      app,
      db,
      clock,
      async close() {
        await app.close()
        appOpen = false
      },
    }
  } catch (err) {
    appOpen = false
    throw err
  }
}

/** Runs `work` on a new test app (startTestApp) and closes the app afterwards, whatever happens. */
export async function withTestApp(
  work: (t: TestApp) => Promise<void>,
  overrides: Partial<AppDeps> = {},
): Promise<void> {
  const t = await startTestApp(overrides)
  try {
    await work(t)
  } finally {
    await t.close()
  }
}

/** startTestApp for one test: the app is closed when the test ends, passed or failed. */
export async function testAppFor(
  test: { after(fn: () => Promise<void>): void },
  overrides: Partial<AppDeps> = {},
): Promise<TestApp> {
  const t = await startTestApp(overrides)
  test.after(() => t.close())
  return t
}

export const iso = (ms: number): string => new Date(ms).toISOString()
