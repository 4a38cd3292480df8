/**
 * The database fails under a running service: its backends are terminated, it crashes
 * (pg_ctl stop -m immediate) under load and while idle, and it is down when the service starts.
 * The service process stays up throughout, answers 503 problem+json with Retry-After while the
 * database is away (within the connect timeout), recovers by itself, and loses nothing acknowledged.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { faultTestsSkip, requirePostgresBinDir } from './support/gate.ts'
import { checkHistory, request, startIngestLoad, type IngestLoad } from './support/load.ts'
import { startPrivatePostgres, type PrivatePostgres } from './support/postgres.ts'
import { spawnService, type ServiceProcess } from './support/service.ts'

const CONNECT_TIMEOUT_MS = 2_000
const URLS = Array.from({ length: 200 }, (_, i) => `https://r${i % 10}.restart.example/page-${i}`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function untilAcked(load: IngestLoad, more: number, timeoutMs: number): Promise<void> {
  const goal = load.ackedBatches() + more
  const deadline = Date.now() + timeoutMs
  while (load.ackedBatches() < goal) {
    if (Date.now() > deadline)
      throw new Error(
        `only ${load.ackedBatches()} batches acknowledged, expected ${goal}; answers: ${JSON.stringify([...load.statuses])}`,
      )
    await sleep(25)
  }
}

/** Routes a client or orchestrator would call while the database is away, and what each must answer. */
const PROBES: { path: string; status: number }[] = [
  { path: '/v1/settings', status: 503 },
  { path: '/v1/pages?limit=5', status: 503 },
  { path: '/v1/stats', status: 503 },
  { path: '/readyz', status: 503 },
  { path: '/healthz', status: 200 },
  { path: '/metrics', status: 200 },
]

/** Probes every route once while the database is down; returns the slowest answer in ms. */
async function probeOutage(service: ServiceProcess): Promise<number> {
  let slowestMs = 0
  for (const probe of PROBES) {
    const started = performance.now()
    const res = await request(`${service.url}${probe.path}`, { method: 'GET', timeoutMs: 30_000 })
    slowestMs = Math.max(slowestMs, performance.now() - started)
    assert.equal(res.status, probe.status, `${probe.path} while the database is down: ${JSON.stringify(res.body)}`)
    if (probe.status === 503) {
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, probe.path)
      assert.ok(Number(res.headers.get('retry-after')) > 0, `${probe.path}: Retry-After`)
      assert.equal((res.body as { status: number }).status, 503)
    }
  }
  return slowestMs
}

/** Waits until the service answers 200 on a database route; returns how long that took. */
async function untilRecovered(service: ServiceProcess, timeoutMs: number): Promise<number> {
  const started = performance.now()
  for (;;) {
    const res = await request(`${service.url}/v1/settings`, { method: 'GET', timeoutMs: 10_000 })
    if (res.status === 200 && (await request(`${service.url}/readyz`, { method: 'GET' })).status === 200)
      return performance.now() - started
    assert.notEqual(res.status, 0, 'the service stopped answering')
    if (performance.now() - started > timeoutMs)
      throw new Error(`no recovery within ${timeoutMs} ms: last answer ${res.status}`)
    await sleep(50)
  }
}

const skip = faultTestsSkip('test/fault/databaseRestart.test.ts')

describe('a database that fails under the service', () => {
  it(
    'terminated backends and crashes under load and while idle: the process stays up, answers 503, recovers, loses nothing',
    { skip, timeout: 600_000 },
    async (t) => {
      const cluster = await startPrivatePostgres(await requirePostgresBinDir())
      let service: ServiceProcess | null = null
      try {
        const url = await cluster.createDatabase('recrawl')
        service = await spawnService({ DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) })
        const s = service
        const load = startIngestLoad({ target: () => s.url, writers: 8, urls: URLS, batchSize: 20, seed: 11 })
        const timings: Record<string, number> = {}
        try {
          await untilAcked(load, 20, 30_000)

          // 1. Backends killed under the service's feet while it writes (the reproduction of the crash).
          for (let i = 0; i < 3; i++) {
            const killed = await terminate(cluster)
            assert.ok(killed > 0, 'the service had backends to terminate')
            await untilAcked(load, 5, 20_000)
          }
          assert.ok(s.alive(), 'alive after terminated backends')

          // 2. The database crashes under load, stays down for a while, and comes back.
          await cluster.stop('immediate')
          const outageStarted = performance.now()
          let probes = 0
          let slowestMs = 0
          while (performance.now() - outageStarted < 3_000) {
            slowestMs = Math.max(slowestMs, await probeOutage(s))
            probes++
          }
          timings.slowest503UnderLoadMs = Math.round(slowestMs)
          assert.ok(probes >= 2)
          assert.ok(slowestMs < CONNECT_TIMEOUT_MS + 3_000, `503 within the connect timeout (slowest ${slowestMs} ms)`)
          assert.ok(s.alive(), 'alive while the database is down under load')
          await cluster.start()
          timings.recoveryUnderLoadMs = Math.round(await untilRecovered(s, 30_000))
          await untilAcked(load, 20, 30_000)
        } finally {
          await load.stop()
        }

        // 3. The database crashes while the service is idle (its pool holds idle connections).
        await sleep(200)
        await cluster.stop('immediate')
        await sleep(1_000)
        assert.ok(s.alive(), 'alive after an idle crash')
        timings.slowest503IdleMs = Math.round(await probeOutage(s))
        await cluster.start()
        timings.recoveryIdleMs = Math.round(await untilRecovered(s, 30_000))

        assert.ok(s.alive(), 'never exited')
        assert.deepEqual(
          load.anomalies,
          [],
          'every answer was a 200 taking every item, or a 503 problem with Retry-After',
        )
        assert.equal(load.statuses.get(0) ?? 0, 0, 'every request got an HTTP answer')
        assert.ok((load.statuses.get(503) ?? 0) > 0, 'writes during the outage were refused with 503')

        const pool = new pg.Pool({ connectionString: url, max: 2 })
        try {
          const check = await checkHistory(pool, load.batches)
          t.diagnostic(
            JSON.stringify({
              ...timings,
              ackedReports: check.ackedItems,
              stored: check.storedObservations,
              answers: Object.fromEntries(load.statuses),
            }),
          )
          assert.ok(check.ackedItems > 0)
          assert.deepEqual(check.missing.slice(0, 10), [], `${check.missing.length} acknowledged reports missing`)
          assert.equal(check.partialBatches, 0)
          assert.deepEqual(check.phantoms.slice(0, 10), [])
          assert.deepEqual(check.counterMismatches.slice(0, 10), [])
        } finally {
          await pool.end()
        }
        const logged = s.logs.filter((l) => /closing after an error|second error/.test(String(l.msg)))
        assert.deepEqual(logged, [], 'no uncaught error reached the process handlers')
      } finally {
        await service?.kill('SIGKILL')
        await cluster.destroy()
      }
    },
  )

  it(
    'starting while the database is down waits with a log line and starts when it is back; the wait is bounded',
    { skip, timeout: 600_000 },
    async () => {
      const cluster = await startPrivatePostgres(await requirePostgresBinDir())
      const services: ServiceProcess[] = []
      try {
        const url = await cluster.createDatabase('recrawl')
        await cluster.stop('fast')

        const waiting = await spawnService(
          { DATABASE_URL: url, DATABASE_START_WAIT_SECONDS: '90' },
          { waitForListen: false },
        )
        services.push(waiting)
        const line = await waiting.waitForLog((l) => /^waiting for the database/.test(String(l.msg)), 60_000)
        assert.match(String(line.msg), /unreachable \(ECONNREFUSED\).*retrying in .* s.*DATABASE_START_WAIT_SECONDS/)
        await waiting.waitForLog((l) => Number(l.attempt) >= 2, 60_000)
        assert.ok(waiting.alive(), 'still waiting, not exited')
        await cluster.start()
        const listening = await waiting.waitForLog(
          (l) => String(l.msg).startsWith('Server listening at http://127.0.0.1:'),
          60_000,
        )
        const base = String(listening.msg).slice('Server listening at '.length)
        assert.equal((await request(`${base}/readyz`, { method: 'GET' })).status, 200)

        await cluster.stop('fast')
        const givesUp = await spawnService(
          { DATABASE_URL: url, DATABASE_START_WAIT_SECONDS: '2' },
          { waitForListen: false },
        )
        services.push(givesUp)
        const exit = await givesUp.exited
        assert.equal(exit.code, 1)
        assert.ok(
          givesUp.logs.some((l) =>
            /still unreachable \(ECONNREFUSED\) after 2 s \(DATABASE_START_WAIT_SECONDS\)/.test(JSON.stringify(l)),
          ),
          'says why it gives up',
        )
      } finally {
        for (const s of services) await s.kill('SIGKILL')
        await cluster.destroy()
      }
    },
  )
})

async function terminate(cluster: PrivatePostgres): Promise<number> {
  return cluster.terminateBackends('recrawl')
}
