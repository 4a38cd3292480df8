/**
 * The database limits (src/store/db.ts, README "Configuration"): a connection that never answers,
 * a lock held too long, a statement running too long, a transaction left idle, a backend killed
 * while its connection is checked out. Each ends in a 503 with Retry-After (or a clean error for
 * internal callers), never in a hung request or a dead process.
 */
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import { buildApp } from '../../src/app.ts'
import { ConfigError, DEFAULT_DATABASE_TIMEOUTS, DEFAULT_HTTP_TIMEOUTS, loadConfig } from '../../src/config.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openDatabase, type Database, type DatabaseTimeouts } from '../../src/store/db.ts'
import { migrate } from '../../src/store/migrate.ts'
import { lockSettings } from '../../src/store/settingsRepo.ts'
import { isDatabaseUnavailable, withTransaction } from '../../src/store/transaction.ts'
import { T0 } from '../helpers/testApp.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const appOn = (db: Database) =>
  buildApp({
    pool: db.pool,
    databaseKind: db.kind,
    clock: manualClock(T0),
    random: createRandom(3),
    maxBatchItems: 100,
    bodyLimitBytes: 1 << 20,
    loopbackOnly: true,
    authCacheMs: 0,
  })

describe('limits in the configuration', () => {
  it('every limit has a default, can be set, and nonsense is refused with every problem named', () => {
    const defaults = loadConfig({})
    assert.deepEqual(
      [
        defaults.databaseConnectTimeoutMs,
        defaults.databaseStatementTimeoutMs,
        defaults.databaseLockTimeoutMs,
        defaults.databaseIdleInTransactionTimeoutMs,
      ],
      [
        DEFAULT_DATABASE_TIMEOUTS.connectMs,
        DEFAULT_DATABASE_TIMEOUTS.statementMs,
        DEFAULT_DATABASE_TIMEOUTS.lockMs,
        DEFAULT_DATABASE_TIMEOUTS.idleInTransactionMs,
      ],
    )
    assert.deepEqual(
      [defaults.httpRequestTimeoutMs, defaults.httpHeadersTimeoutMs, defaults.httpKeepAliveTimeoutMs],
      [DEFAULT_HTTP_TIMEOUTS.requestMs, DEFAULT_HTTP_TIMEOUTS.headersMs, DEFAULT_HTTP_TIMEOUTS.keepAliveMs],
    )
    assert.ok(defaults.databaseStartWaitSeconds > 0)
    assert.ok(defaults.httpHeadersTimeoutMs <= defaults.httpRequestTimeoutMs)

    const set = loadConfig({
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      DATABASE_LOCK_TIMEOUT_MS: '250',
      DATABASE_START_WAIT_SECONDS: '0',
      HTTP_REQUEST_TIMEOUT_MS: '5000',
      HTTP_HEADERS_TIMEOUT_MS: '5000',
    })
    assert.deepEqual(
      [
        set.databaseStatementTimeoutMs,
        set.databaseLockTimeoutMs,
        set.databaseStartWaitSeconds,
        set.httpRequestTimeoutMs,
        set.httpHeadersTimeoutMs,
      ],
      [0, 250, 0, 5000, 5000],
    )

    assert.throws(
      () =>
        loadConfig({
          DATABASE_CONNECT_TIMEOUT_MS: 'soon',
          HTTP_REQUEST_TIMEOUT_MS: '5',
          DATABASE_LOCK_TIMEOUT_MS: '-1',
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError)
        assert.deepEqual(err.problems.map((p) => p.split(':')[0]).sort(), [
          'DATABASE_CONNECT_TIMEOUT_MS',
          'DATABASE_LOCK_TIMEOUT_MS',
          'HTTP_REQUEST_TIMEOUT_MS',
        ])
        return true
      },
    )
    assert.throws(
      () => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' }),
      /HTTP_HEADERS_TIMEOUT_MS \(40000\) must not exceed HTTP_REQUEST_TIMEOUT_MS \(30000\)/,
    )
  })
})

describe('connect timeout', () => {
  let server: Server
  const sockets = new Set<Socket>()
  before(async () => {
    // Accepts connections and never says a word, like a database behind a cut network.
    server = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    for (const s of sockets) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  })

  it('a database that accepts but never answers gives 503 with Retry-After after DATABASE_CONNECT_TIMEOUT_MS', async () => {
    const { port } = server.address() as { port: number }
    const connectMs = 600
    const db = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/silent`,
      dataDir: null,
      poolSize: 2,
      timeouts: { connectMs, statementMs: 5_000, lockMs: 1_000, idleInTransactionMs: 5_000 },
    })
    const app = await appOn(db)
    try {
      for (const [method, url] of [
        ['GET', '/v1/settings'],
        ['GET', '/readyz'],
        ['PUT', '/v1/pages'],
      ] as const) {
        const started = performance.now()
        const res = await app.inject({
          method,
          url,
          ...(method === 'PUT' ? { payload: { pages: [{ url: 'https://a.example/' }] } } : {}),
        })
        const elapsedMs = performance.now() - started
        assert.equal(res.statusCode, 503, `${method} ${url}: ${res.body}`)
        assert.equal(res.headers['retry-after'], '5')
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
        // It waited for the connect timeout, not for ever (generous upper bound for a loaded machine).
        assert.ok(
          elapsedMs >= connectMs * 0.9 && elapsedMs < connectMs + 10_000,
          `${url} answered after ${elapsedMs} ms`,
        )
      }
    } finally {
      await app.close()
      await db.close()
    }
  })
})

const adminUrl = process.env.DATABASE_URL
describe(
  'Postgres session limits',
  { skip: adminUrl ? false : 'needs a Postgres server: runs with DATABASE_URL set (the Postgres run of npm test)' },
  () => {
    const name = `recrawl_test_${randomBytes(6).toString('hex')}`
    let url: string
    let admin: pg.Client
    const open: Database[] = []
    const openWith = async (timeouts: DatabaseTimeouts) => {
      const db = await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 4, timeouts })
      open.push(db)
      return db
    }

    before(async () => {
      admin = new pg.Client({ connectionString: adminUrl })
      await admin.connect()
      await admin.query(`CREATE DATABASE ${name}`)
      const u = new URL(adminUrl!)
      u.pathname = `/${name}`
      url = u.toString()
      const db = await openWith({ connectMs: 5_000, statementMs: 0, lockMs: 0, idleInTransactionMs: 0 })
      await migrate(db.pool)
    })
    after(async () => {
      for (const db of open) await db.close().catch(() => {})
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    })

    /**
     * Holds the settings as a settings change does (`update`) or as an ingest batch does (`share`), on a connection
     * of its own until the returned function is called.
     */
    async function holdSettingsLock(kind: 'update' | 'share' = 'update'): Promise<() => Promise<void>> {
      const holder = new pg.Client({ connectionString: url })
      await holder.connect()
      await holder.query('BEGIN')
      await lockSettings(holder, kind)
      return async () => {
        await holder.query('ROLLBACK')
        await holder.end()
      }
    }

    it('every session carries the configured limits', async () => {
      const db = await openWith({ connectMs: 5_000, statementMs: 1_500, lockMs: 700, idleInTransactionMs: 2_500 })
      const { rows } = await db.pool.query(
        "SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l, current_setting('idle_in_transaction_session_timeout') AS i",
      )
      assert.deepEqual(rows[0], { s: '1500ms', l: '700ms', i: '2500ms' })
    })

    it('a lock held longer than DATABASE_LOCK_TIMEOUT_MS gives 503 with Retry-After and changes nothing', async () => {
      const db = await openWith({ connectMs: 5_000, statementMs: 10_000, lockMs: 300, idleInTransactionMs: 10_000 })
      const app = await appOn(db)
      const pages = async () => (await db.pool.query('SELECT count(*)::int AS n FROM pages')).rows[0].n as number
      const settingsBefore = (await app.inject({ method: 'GET', url: '/v1/settings' })).json()
      const pagesBefore = await pages()
      const release = await holdSettingsLock()
      try {
        const patch = await app.inject({
          method: 'PATCH',
          url: '/v1/settings',
          payload: { budgetCrawlsPerDay: settingsBefore.budgetCrawlsPerDay + 1 },
        })
        assert.equal(patch.statusCode, 503, patch.body)
        assert.equal(patch.headers['retry-after'], '5')
        assert.match(patch.json().detail, /DATABASE_LOCK_TIMEOUT_MS/)
        // Ingest holds the settings shared, which waits for the same lock.
        const ingest = await app.inject({
          method: 'POST',
          url: '/v1/observations',
          payload: {
            observations: [
              { url: 'https://lock.example/a', crawledAt: new Date(T0 - 1000).toISOString(), changed: true },
            ],
          },
        })
        assert.equal(ingest.statusCode, 503, ingest.body)
      } finally {
        await release()
      }
      const settings = await app.inject({ method: 'GET', url: '/v1/settings' })
      assert.equal(settings.statusCode, 200)
      assert.deepEqual(settings.json(), settingsBefore)
      assert.equal(await pages(), pagesBefore)
      await app.close()
    })

    it('a settings change waits for a transaction that holds the settings shared; other holders do not', async () => {
      const db = await openWith({ connectMs: 5_000, statementMs: 10_000, lockMs: 300, idleInTransactionMs: 10_000 })
      const app = await appOn(db)
      const settingsBefore = (await app.inject({ method: 'GET', url: '/v1/settings' })).json()
      const release = await holdSettingsLock('share')
      try {
        const ingest = await app.inject({
          method: 'POST',
          url: '/v1/observations',
          payload: {
            observations: [
              { url: 'https://shared.example/a', crawledAt: new Date(T0 - 1000).toISOString(), changed: true },
            ],
          },
        })
        assert.equal(ingest.statusCode, 200, ingest.body)
        const patch = await app.inject({
          method: 'PATCH',
          url: '/v1/settings',
          payload: { budgetCrawlsPerDay: settingsBefore.budgetCrawlsPerDay + 1 },
        })
        assert.equal(patch.statusCode, 503, patch.body)
        assert.match(patch.json().detail, /DATABASE_LOCK_TIMEOUT_MS/)
      } finally {
        await release()
      }
      const patch = await app.inject({
        method: 'PATCH',
        url: '/v1/settings',
        payload: { budgetCrawlsPerDay: settingsBefore.budgetCrawlsPerDay + 1 },
      })
      assert.equal(patch.statusCode, 200, patch.body)
      await app.close()
    })

    it('a statement running longer than DATABASE_STATEMENT_TIMEOUT_MS gives 503 with Retry-After', async () => {
      const db = await openWith({ connectMs: 5_000, statementMs: 400, lockMs: 0, idleInTransactionMs: 10_000 })
      const app = await appOn(db)
      const release = await holdSettingsLock()
      try {
        const patch = await app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 456 } })
        assert.equal(patch.statusCode, 503, patch.body)
        assert.equal(patch.headers['retry-after'], '5')
        assert.match(patch.json().detail, /DATABASE_STATEMENT_TIMEOUT_MS/)
      } finally {
        await release()
      }
      // The session survived the cancelled statement and serves the next request.
      assert.equal(
        (await app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 456 } })).statusCode,
        200,
      )
      await app.close()
    })

    it('a transaction idle longer than DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS is ended by the server; the pool carries on', async () => {
      const db = await openWith({ connectMs: 5_000, statementMs: 10_000, lockMs: 1_000, idleInTransactionMs: 300 })
      let attempts = 0
      await assert.rejects(
        withTransaction(db.pool, async (client) => {
          attempts++
          await client.query('SELECT 1')
          await sleep(1_200)
          await client.query('SELECT 1')
        }),
        (err: unknown) => isDatabaseUnavailable(err),
      )
      assert.equal(attempts, 1, 'not run again: it would only be ended again')
      // The broken connection was discarded, not returned to the pool.
      for (let i = 0; i < 6; i++) assert.equal((await db.pool.query('SELECT 1 AS one')).rows[0].one, 1)
    })

    it('a backend killed while its connection is checked out: the transaction runs again on a fresh connection', async () => {
      const db = await openWith({ connectMs: 5_000, statementMs: 10_000, lockMs: 1_000, idleInTransactionMs: 10_000 })
      let attempts = 0
      const pids = new Set<number>()
      const value = await withTransaction(db.pool, async (client) => {
        attempts++
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        pids.add(rows[0]!.pid)
        await client.query("INSERT INTO hosts (host, max_crawls_per_day) VALUES ('killed.example', $1)", [attempts])
        if (attempts === 1) {
          await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
          await sleep(100)
        }
        await client.query('SELECT 1')
        return attempts
      })
      assert.equal(value, 2)
      assert.equal(pids.size, 2, 'the second attempt ran on another connection')
      // The first attempt's write died with its session; only the second one's is stored.
      const { rows } = await db.pool.query("SELECT max_crawls_per_day AS m FROM hosts WHERE host = 'killed.example'")
      assert.deepEqual(rows, [{ m: 2 }])
    })

    it('a network cut (packets dropped, sockets left open) gives 503 within statement + connect timeout, and service resumes when it heals', async () => {
      // A TCP relay to the database that can stop forwarding, like a cut cable: nobody is told.
      const target = new URL(url)
      let cut = false
      const relaySockets = new Set<Socket>()
      const relay = createServer((downstream) => {
        const upstream = connect(Number(target.port || 5432), target.hostname)
        for (const s of [downstream, upstream]) {
          relaySockets.add(s)
          s.on('error', () => {})
          s.on('close', () => {
            downstream.destroy()
            upstream.destroy()
          })
        }
        downstream.on('data', (d) => cut || upstream.write(d))
        upstream.on('data', (d) => cut || downstream.write(d))
      })
      await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
      const relayed = new URL(url)
      relayed.port = String((relay.address() as { port: number }).port)
      relayed.hostname = '127.0.0.1'
      const timeouts = { connectMs: 500, statementMs: 800, lockMs: 500, idleInTransactionMs: 5_000 }
      const cutDb = await openDatabase({ databaseUrl: relayed.toString(), dataDir: null, poolSize: 3, timeouts })
      open.push(cutDb)
      const app = await appOn(cutDb)
      try {
        // Warm the pool: idle connections through the relay.
        await Promise.all([1, 2, 3].map(() => app.inject({ method: 'GET', url: '/v1/settings' })))
        cut = true
        for (const route of ['/v1/settings', '/v1/pages', '/readyz', '/v1/settings']) {
          const started = performance.now()
          const res = await app.inject({ method: 'GET', url: route })
          const elapsedMs = performance.now() - started
          assert.equal(res.statusCode, 503, `${route}: ${res.body}`)
          assert.equal(res.headers['retry-after'], '5')
          assert.ok(
            elapsedMs < timeouts.statementMs + timeouts.connectMs + 10_000,
            `${route} answered after ${elapsedMs} ms`,
          )
        }
        cut = false
        let healed = false
        for (let i = 0; i < 40 && !healed; i++) {
          healed = (await app.inject({ method: 'GET', url: '/v1/settings' })).statusCode === 200
          if (!healed) await sleep(100)
        }
        assert.ok(healed, 'requests succeed again once the network is back')
      } finally {
        await app.close()
        for (const s of relaySockets) s.destroy()
        await new Promise((resolve) => relay.close(resolve))
      }
    })
  },
)
