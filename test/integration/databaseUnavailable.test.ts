/**
 * "Cannot reach or use the database" is 503 problem+json with Retry-After on /readyz and every /v1 route
 * (docs/api.md "Errors"), never 500: a refused connection, a database that was dropped, and a database
 * whose administrator closed it (connections terminated, new ones refused). The last two need Postgres:
 * they run when DATABASE_URL names a server, on a database of their own that they create and drop.
 */
import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import pg from 'pg'
import { buildApp } from '../../src/app.ts'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_MAX_BATCH_ITEMS } from '../../src/config.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openDatabase, type Database } from '../../src/store/db.ts'
import { migrate } from '../../src/store/migrate.ts'
import { T0, iso } from '../helpers/testApp.ts'

const TIMEOUTS = { connectMs: 2_000, statementMs: 10_000, lockMs: 5_000, idleInTransactionMs: 10_000 }

/** What a crawler, a dashboard and a load balancer call. */
const PROBES: { method: 'GET' | 'POST'; url: string; payload?: unknown }[] = [
  { method: 'GET', url: '/readyz' },
  { method: 'GET', url: '/v1/settings' },
  { method: 'GET', url: '/v1/pages?limit=5' },
  { method: 'GET', url: '/v1/stats' },
  { method: 'GET', url: '/v1/hosts' },
  { method: 'GET', url: '/v1/schedule' },
  { method: 'POST', url: '/v1/leases', payload: { worker: 'w' } },
  {
    method: 'POST',
    url: '/v1/observations',
    payload: { observations: [{ url: 'https://down.example/a', crawledAt: iso(T0) }] },
  },
]

async function appOn(db: Database) {
  return buildApp({
    pool: db.pool,
    databaseKind: 'postgres',
    clock: manualClock(T0),
    random: createRandom(1),
    maxBatchItems: DEFAULT_MAX_BATCH_ITEMS,
    bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
    loopbackOnly: true,
    authCacheMs: 0,
  })
}

type App = Awaited<ReturnType<typeof appOn>>

/** Every probe's answer; with `expect503`, each must be a 503 problem with Retry-After. */
async function probe(app: App, expect503: boolean): Promise<number[]> {
  const statuses: number[] = []
  for (const p of PROBES) {
    const res = await app.inject({ method: p.method, url: p.url, ...(p.payload ? { payload: p.payload } : {}) })
    statuses.push(res.statusCode)
    assert.notEqual(res.statusCode, 500, `${p.method} ${p.url} → ${res.body}`)
    if (res.statusCode === 503 || expect503) {
      assert.equal(res.statusCode, 503, `${p.method} ${p.url} → ${res.body}`)
      assert.ok(Number(res.headers['retry-after']) > 0, `${p.method} ${p.url}: Retry-After`)
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
      assert.equal(res.json().status, 503)
    }
  }
  return statuses
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

describe('the database cannot be reached or used: 503 with Retry-After', () => {
  it('a refused connection', async () => {
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/recrawl`
    const db = await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 2, timeouts: TIMEOUTS })
    const app = await appOn(db)
    try {
      await probe(app, true)
    } finally {
      await app.close()
      await db.close()
    }
  })

  const adminUrl = process.env.DATABASE_URL
  it(
    'a database closed by its administrator (connections terminated, then refused), and a dropped one',
    { skip: adminUrl ? false : 'needs Postgres: set DATABASE_URL' },
    async () => {
      const name = `recrawl_unavailable_${randomBytes(5).toString('hex')}`
      const admin = new pg.Client({ connectionString: adminUrl })
      await admin.connect()
      after(async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
        await admin.end()
      })
      await admin.query(`CREATE DATABASE ${name}`)
      const url = new URL(adminUrl!)
      url.pathname = `/${name}`
      const db = await openDatabase({ databaseUrl: url.toString(), dataDir: null, poolSize: 4, timeouts: TIMEOUTS })
      await migrate(db.pool)
      const app = await appOn(db)
      const terminate = () =>
        admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name])
      try {
        assert.deepEqual(await probe(app, false), [200, 200, 200, 200, 200, 200, 200, 200])

        // Administrator shutdown of the sessions (57P01): the pooled connections die under the service. A
        // request either runs again on a new connection or is answered 503; never 500.
        await terminate()
        await probe(app, false)
        // The database refuses new connections (55000) and its sessions are terminated: every answer is 503.
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
        await terminate()
        await probe(app, true)
        // Opened again: the service recovers by itself.
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
        assert.deepEqual(await probe(app, false), [200, 200, 200, 200, 200, 200, 200, 200])

        // Dropped under the service (3D000 for every new connection).
        await admin.query(`DROP DATABASE ${name} WITH (FORCE)`)
        await probe(app, true)
      } finally {
        await app.close()
        await db.close()
      }
    },
  )
})
