import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { openDatabase } from '../../src/store/db.ts'
import { runCli, startService, type CliResult } from './processes.ts'

// create-key, list-keys and revoke-key against a service that runs in its own process: on the
// embedded database (the CLI reaches it through the service) or, with DATABASE_URL, on a fresh
// Postgres database (the service hears of the change by LISTEN/NOTIFY).

const POSTGRES_URL = process.env.DATABASE_URL

interface Target {
  env: Record<string, string>
  /** Opens the database the service uses (the embedded one through the service, as a CLI command does). */
  open(): ReturnType<typeof openDatabase>
  drop(): Promise<void>
}

async function makeTarget(): Promise<Target> {
  if (!POSTGRES_URL) {
    const dir = mkdtempSync(join(tmpdir(), 'recrawl-keys-'))
    return {
      env: { DATA_DIR: dir },
      open: () => openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1 }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    }
  }
  const name = `recrawl_cli_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${name}`
  return {
    env: { DATABASE_URL: url.toString() },
    open: () => openDatabase({ databaseUrl: url.toString(), dataDir: null, poolSize: 2 }),
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

function ok(result: CliResult, what: string): string {
  assert.equal(result.code, 0, `${what} exited ${result.code}: ${result.stderr}`)
  return result.stdout
}

/**
 * The embedded database empties the service's caches before the CLI's COMMIT returns: the answer
 * must be right on the first request. Postgres delivers the notice a moment later on the service's
 * listening connection, so there the answer is awaited (bounded).
 */
async function answer(request: () => Promise<Response>, expected: number): Promise<number> {
  let status = (await request()).status
  for (let i = 0; POSTGRES_URL && status !== expected && i < 200; i++) {
    await new Promise((r) => setTimeout(r, 25))
    status = (await request()).status
  }
  return status
}

describe(`API keys while the service runs (${POSTGRES_URL ? 'postgres' : 'embedded'})`, () => {
  it('create-key, list-keys, revoke-key and migrate take effect at once; nothing crashes and no report is lost', async () => {
    const target = await makeTarget()
    const service = await startService(target.env)
    try {
      const settings = (key?: string) =>
        fetch(`${service.baseUrl}/v1/settings`, key ? { headers: { authorization: `Bearer ${key}` } } : {})
      assert.equal((await settings()).status, 200, 'no key yet: open loopback access')

      const crawlerRun = await runCli(['create-key', '--role', 'crawler', '--name', 'fleet'], target.env)
      const crawler = JSON.parse(ok(crawlerRun, 'create-key').trim()) as { id: string; key: string; role: string }
      assert.equal(crawler.role, 'crawler')
      assert.match(crawlerRun.stderr, /open loopback access has ended/)
      assert.match(crawlerRun.stderr, /create-key --role admin/)
      assert.equal(await answer(() => settings(), 401), 401, 'the first key ends open loopback access')

      // A crawler reports large batches the whole time the commands below run.
      let reporting = true
      let sent = 0
      let accepted = 0
      const failures: string[] = []
      const crawledAtMs = Date.now() - 3_600_000
      const reporter = (async () => {
        for (let batch = 0; reporting || batch < 2; batch++) {
          const observations = Array.from({ length: 500 }, (_, i) => ({
            url: `https://h${i % 50}.keys.example/${'segment/'.repeat(12)}${i}`,
            crawledAt: new Date(crawledAtMs + batch * 1000).toISOString(),
            contentHash: `${batch % 3}`,
          }))
          const res = await fetch(`${service.baseUrl}/v1/observations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${crawler.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ observations }),
          })
          sent += observations.length
          if (res.status !== 200) failures.push(`${res.status} ${await res.text()}`)
          else accepted += ((await res.json()) as { accepted: number }).accepted
        }
      })()

      const adminRun = await runCli(['create-key', '--role', 'admin', '--name', 'ops'], target.env)
      const admin = JSON.parse(ok(adminRun, 'create-key').trim()) as { id: string; key: string }
      assert.doesNotMatch(adminRun.stderr, /first API key/)
      assert.equal((await settings(admin.key)).status, 200, 'a new key authenticates at once')
      assert.equal((await settings(admin.key)).status, 200)

      const reader = JSON.parse(
        ok(await runCli(['create-key', '--role', 'reader', '--name', 'dash'], target.env), 'create-key').trim(),
      )
      const listed = JSON.parse(ok(await runCli(['list-keys'], target.env), 'list-keys')) as {
        id: string
        name: string
        revokedAt: string | null
      }[]
      assert.deepEqual(
        listed.map((k) => k.name),
        ['fleet', 'ops', 'dash'],
      )
      assert.ok(
        listed.every((k) => k.revokedAt === null && !JSON.stringify(k).includes('rk_')),
        'never the keys themselves',
      )

      const revoked = JSON.parse(ok(await runCli(['revoke-key', '--id', admin.id], target.env), 'revoke-key').trim())
      assert.deepEqual(revoked, { id: admin.id, revoked: true, activeKeys: 2 })
      assert.equal(await answer(() => settings(admin.key), 401), 401, 'a revoked key is refused at once')
      assert.equal((await settings(reader.key)).status, 200)

      assert.match(ok(await runCli(['migrate'], target.env), 'migrate'), /database schema is up to date/)
      const unknown = await runCli(['revoke-key', '--id', '00000000-0000-4000-8000-000000000000'], target.env)
      assert.equal(unknown.code, 1)
      assert.equal(unknown.stderr.trim().split('\n').length, 1, unknown.stderr)
      assert.match(unknown.stderr, /no active key with id/)

      reporting = false
      await reporter
      assert.deepEqual(failures, [])
      assert.equal(accepted, sent)
      assert.doesNotMatch(service.logs(), /"level":50|RuntimeError|Aborted/)

      // Read back through the running service's database (the embedded one through its socket).
      const db = await target.open()
      try {
        const stored = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM observations')
        assert.equal(stored.rows[0]!.n, sent, 'every accepted report is stored')
        const keys = await db.pool.query<{ name: string; revoked: boolean }>(
          'SELECT name, revoked_at IS NOT NULL AS revoked FROM api_keys ORDER BY created_at',
        )
        assert.deepEqual(keys.rows, [
          { name: 'fleet', revoked: false },
          { name: 'ops', revoked: true },
          { name: 'dash', revoked: false },
        ])
      } finally {
        await db.close()
      }
      assert.equal(await service.stop(), 0)
    } finally {
      await service.stop('SIGKILL')
      await target.drop()
    }
  })

  it(
    'a second service refuses a directory in use; after a crash the CLI takes the directory over',
    { skip: POSTGRES_URL !== undefined },
    async () => {
      const target = await makeTarget()
      const service = await startService(target.env)
      try {
        const second = await runCli(['start'], { ...target.env, HOST: '127.0.0.1', PORT: '0' })
        assert.equal(second.code, 1)
        assert.match(second.stderr, new RegExp(`in use by another recrawl service \\(pid ${service.child.pid}\\)`))
        assert.equal(
          second.stderr
            .trim()
            .split('\n')
            .filter((l) => !l.startsWith('{')).length,
          1,
          'one line besides the logs',
        )

        ok(await runCli(['create-key', '--role', 'admin', '--name', 'ops'], target.env), 'create-key')
        await service.stop('SIGKILL')
        const listed = JSON.parse(ok(await runCli(['list-keys'], target.env), 'list-keys after a crash'))
        assert.deepEqual(
          listed.map((k: { name: string }) => k.name),
          ['ops'],
        )
      } finally {
        await service.stop('SIGKILL')
        await target.drop()
      }
    },
  )
})
