import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { buildApp, type AppDeps } from '../../src/app.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openDatabase, type Database } from '../../src/store/db.ts'
import { migrate } from '../../src/store/migrate.ts'

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

/** The whole service over a fresh database with a manual clock starting at T0. */
export async function startTestApp(overrides: Partial<AppDeps> = {}): Promise<TestApp> {
  const db = await openTestDatabase()
  const clock = manualClock(T0)
  const app = await buildApp({
    pool: db.pool,
    databaseKind: db.kind,
    clock,
    random: createRandom(42),
    maxBatchItems: 5000,
    bodyLimitBytes: 16 * 1024 * 1024,
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
      await db.close()
    },
  }
}

export const iso = (ms: number): string => new Date(ms).toISOString()
export const DAY_MS = 86_400_000
