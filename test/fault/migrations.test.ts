/**
 * Migrations (src/store/migrate.ts): applying them twice changes nothing, concurrent callers (pools
 * or processes) apply each exactly once under the advisory lock, and code older than the database's
 * schema refuses to run against it with a clear message.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { openDatabase, type Database } from '../../src/store/db.ts'
import { loadMigrations, migrate, MIGRATIONS_DIR, SchemaNewerThanCodeError } from '../../src/store/migrate.ts'
import { spawnService } from './support/service.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const adminUrl = process.env.DATABASE_URL

/**
 * A new, empty database: on the Postgres of DATABASE_URL when set, else an embedded one, in memory
 * (opened once) or, with `onDisk`, in a temp directory a spawned service can open too.
 */
async function emptyDatabase(
  options: { onDisk?: boolean } = {},
): Promise<{ env: Record<string, string>; open(): Promise<Database>; drop(): Promise<void> }> {
  if (adminUrl) {
    const name = `recrawl_test_${randomBytes(6).toString('hex')}`
    const admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    const u = new URL(adminUrl)
    u.pathname = `/${name}`
    const url = u.toString()
    return {
      env: { DATABASE_URL: url },
      open: () => openDatabase({ databaseUrl: url, dataDir: null, poolSize: 2 }),
      async drop() {
        const c = new pg.Client({ connectionString: adminUrl })
        await c.connect()
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await c.end()
      },
    }
  }
  if (!options.onDisk) {
    return {
      env: {},
      open: () => openDatabase({ databaseUrl: undefined, dataDir: null, poolSize: 1 }),
      drop: async () => {},
    }
  }
  const dir = await mkdtemp(join(tmpdir(), 'recrawl-migrate-'))
  const dataDir = join(dir, 'data')
  return {
    env: { DATA_DIR: dataDir },
    open: () => openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1 }),
    drop: () => rm(dir, { recursive: true, force: true }),
  }
}

/** This release's migrations plus `extra` (file name → SQL), in a directory of their own. */
async function migrationsWith(extra: Record<string, string>): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'recrawl-migrations-'))
  for (const f of await readdir(MIGRATIONS_DIR))
    if (f.endsWith('.sql')) await copyFile(join(MIGRATIONS_DIR, f), join(dir, f))
  for (const [f, sql] of Object.entries(extra)) await writeFile(join(dir, f), sql)
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

const recorded = async (db: Database) =>
  (await db.pool.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map(
    (r) => r.version,
  )

describe('migrations', () => {
  it('migrating twice applies every migration once; the second run finds nothing to do', async () => {
    const fresh = await emptyDatabase()
    const db = await fresh.open()
    try {
      const all = (await loadMigrations()).map((m) => m.version)
      assert.deepEqual(await migrate(db.pool), all)
      assert.deepEqual(await migrate(db.pool), [])
      assert.deepEqual(await recorded(db), all)
    } finally {
      await db.close()
      await fresh.drop()
    }
  })

  it('concurrent migrations apply each version exactly once, whoever gets the lock first', async () => {
    const fresh = await emptyDatabase()
    // Separate pools are separate sessions on Postgres; the embedded database has one owner, so its callers share one pool.
    const dbs = adminUrl ? await Promise.all(Array.from({ length: 4 }, () => fresh.open())) : [await fresh.open()]
    try {
      const callers = Array.from({ length: 4 }, (_, i) => dbs[i % dbs.length]!)
      const results = await Promise.all(callers.map((db) => migrate(db.pool)))
      const all = (await loadMigrations()).map((m) => m.version)
      assert.deepEqual(
        results.filter((r) => r.length > 0),
        [all],
        'one caller applied everything, the others nothing',
      )
      assert.deepEqual(await recorded(dbs[0]!), all)
    } finally {
      for (const db of dbs) await db.close()
      await fresh.drop()
    }
  })

  it(
    'several `migrate` processes started together apply each version once',
    { skip: adminUrl ? false : 'needs a Postgres server (DATABASE_URL): the embedded database belongs to one process' },
    async () => {
      const fresh = await emptyDatabase()
      try {
        const run = promisify(execFile)
        const outputs = await Promise.all(
          Array.from({ length: 3 }, () =>
            run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
              cwd: ROOT,
              env: { PATH: process.env.PATH ?? '', ...fresh.env, LOG_LEVEL: 'info' },
            }),
          ),
        )
        const applied = outputs.flatMap((o) =>
          o.stderr
            .split('\n')
            .filter((l) => l.includes('"migration applied"'))
            .map((l) => JSON.parse(l).migration as string),
        )
        const all = (await loadMigrations()).map((m) => m.version)
        assert.deepEqual([...applied].sort(), all, 'every migration applied exactly once across the processes')
        const db = await fresh.open()
        try {
          assert.deepEqual(await recorded(db), all)
        } finally {
          await db.close()
        }
      } finally {
        await fresh.drop()
      }
    },
  )

  it(
    'code older than the database schema refuses to migrate and the service refuses to start, saying why',
    { timeout: 600_000 },
    async () => {
      const fresh = await emptyDatabase({ onDisk: true })
      const newer = await migrationsWith({
        '9999_from_a_newer_release.sql': 'CREATE TABLE from_a_newer_release (id int);',
      })
      try {
        const db = await fresh.open()
        try {
          await migrate(db.pool, { dir: newer.dir })
          await assert.rejects(migrate(db.pool), (err: unknown) => {
            assert.ok(err instanceof SchemaNewerThanCodeError)
            assert.deepEqual(err.unknownMigrations, ['9999_from_a_newer_release'])
            assert.match(err.message, /schema is newer than this code.*9999_from_a_newer_release/)
            return true
          })
          assert.equal((await recorded(db)).at(-1), '9999')
        } finally {
          await db.close()
        }
        const service = await spawnService(fresh.env, { waitForListen: false })
        const exit = await service.exited
        assert.equal(exit.code, 1, 'the service exits instead of serving')
        assert.ok(
          service.logs.some(
            (l) => l.level === 60 && /schema is newer than this code.*9999_from_a_newer_release/.test(String(l.msg)),
          ),
          `a fatal log line names the unknown migration:\n${service.logs.map((l) => JSON.stringify(l).slice(0, 300)).join('\n')}`,
        )
        assert.ok(!service.logs.some((l) => String(l.msg).startsWith('Server listening')))
      } finally {
        await newer.remove()
        await fresh.drop()
      }
    },
  )

  it('a version recorded under another name is refused and nothing is applied', async () => {
    const fresh = await emptyDatabase()
    const all = await loadMigrations()
    const first = all[0]!
    const renamed = await migrationsWith({})
    try {
      await rm(join(renamed.dir, `${first.version}_${first.name}.sql`))
      await writeFile(join(renamed.dir, `${first.version}_another_name.sql`), first.sql)
      const db = await fresh.open()
      try {
        await migrate(db.pool, { dir: renamed.dir })
        await db.pool.query('DELETE FROM schema_migrations WHERE version = $1', [all.at(-1)!.version])
        await assert.rejects(migrate(db.pool), /migration 0001 is recorded as "another_name".*nothing was changed/)
        assert.ok(!(await recorded(db)).includes(all.at(-1)!.version), 'the pending migration was not applied')
      } finally {
        await db.close()
      }
    } finally {
      await renamed.remove()
      await fresh.drop()
    }
  })
})
