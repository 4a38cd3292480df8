/**
 * The service killed with SIGKILL under concurrent ingest, three times, then restarted: every
 * acknowledged report is stored, every batch is all or nothing, and every page's counters match
 * its stored history (a 200 from POST /v1/observations means committed, docs/api.md).
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { openDatabase } from '../../src/store/db.ts'
import { faultTestsSkip, requirePostgresBinDir } from './support/gate.ts'
import { checkHistory, startIngestLoad, type HistoryCheck, type IngestLoad } from './support/load.ts'
import { startPrivatePostgres } from './support/postgres.ts'
import { spawnService, type ServiceProcess } from './support/service.ts'

const KILLS = 3
const WRITERS = 8
const URLS = Array.from({ length: 240 }, (_, i) => `https://k${i % 12}.sigkill.example/page-${i}`)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Waits until `more` further batches were acknowledged (the service is up and taking writes). */
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

/** Runs the load against a service that is killed KILLS times and restarted each time; returns the last service. */
async function killRepeatedly(
  env: Record<string, string>,
): Promise<{ load: IngestLoad; service: ServiceProcess; restarts: number }> {
  let service = await spawnService(env)
  const load = startIngestLoad({
    target: () => (service.alive() ? service.url : null),
    writers: WRITERS,
    urls: URLS,
    batchSize: 20,
    seed: 7,
  })
  try {
    for (let k = 0; k < KILLS; k++) {
      await untilAcked(load, 20, 30_000)
      // Vary the moment inside the write stream a little between kills.
      await sleep(50 + 70 * k)
      const inFlight = load.batches.length
      const exit = await service.kill('SIGKILL')
      assert.equal(exit.signal, 'SIGKILL')
      assert.ok(inFlight > 0)
      service = await spawnService(env)
    }
    await untilAcked(load, 20, 30_000)
  } finally {
    await load.stop()
  }
  return { load, service, restarts: KILLS }
}

function summary(check: HistoryCheck, load: IngestLoad): string {
  const unacked = load.batches.filter((b) => !b.acked).length
  return JSON.stringify({
    ackedReports: check.ackedItems,
    stored: check.storedObservations,
    unackedBatches: unacked,
    answers: Object.fromEntries(load.statuses),
  })
}

function assertNothingLost(check: HistoryCheck, load: IngestLoad): void {
  assert.deepEqual(load.anomalies, [], 'every answer was a 200 taking every item, or a 503 problem')
  assert.ok(check.ackedItems >= (KILLS + 1) * 20 * 20, `enough acknowledged reports (${check.ackedItems})`)
  assert.deepEqual(check.missing.slice(0, 10), [], `${check.missing.length} acknowledged reports missing`)
  assert.equal(check.partialBatches, 0, 'a batch was stored in part')
  assert.deepEqual(check.phantoms.slice(0, 10), [], `${check.phantoms.length} stored reports nobody sent`)
  assert.deepEqual(
    check.counterMismatches.slice(0, 10),
    [],
    `${check.counterMismatches.length} pages whose counters disagree with their history`,
  )
}

const skip = faultTestsSkip('test/fault/sigkill.test.ts')

describe('SIGKILL under concurrent ingest loses nothing acknowledged', () => {
  it(`on Postgres: ${KILLS} kills under ${WRITERS} writers`, { skip, timeout: 600_000 }, async (t) => {
    const cluster = await startPrivatePostgres(await requirePostgresBinDir())
    let service: ServiceProcess | null = null
    try {
      const url = await cluster.createDatabase('recrawl')
      const run = await killRepeatedly({ DATABASE_URL: url })
      service = run.service
      const pool = new pg.Pool({ connectionString: url, max: 2 })
      try {
        const check = await checkHistory(pool, run.load.batches)
        t.diagnostic(summary(check, run.load))
        assertNothingLost(check, run.load)
      } finally {
        await pool.end()
      }
      // The last restart serves reads of what was written.
      const ready = await fetch(`${service.url}/readyz`)
      assert.equal(ready.status, 200)
    } finally {
      await service?.kill('SIGKILL')
      await cluster.destroy()
    }
  })

  it(`on the embedded database: ${KILLS} kills under ${WRITERS} writers`, { skip, timeout: 600_000 }, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'recrawl-embedded-'))
    let service: ServiceProcess | null = null
    try {
      const dataDir = join(dir, 'data')
      const run = await killRepeatedly({ DATA_DIR: dataDir })
      service = run.service
      assert.equal((await fetch(`${service.url}/readyz`)).status, 200)
      // PGlite has one owner: stop the service cleanly, then read its files here.
      const exit = await service.kill('SIGTERM')
      assert.equal(exit.code, 0, 'a clean shutdown after the kills')
      const db = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1 })
      try {
        const check = await checkHistory(db.pool, run.load.batches)
        t.diagnostic(summary(check, run.load))
        assertNothingLost(check, run.load)
      } finally {
        await db.close()
      }
    } finally {
      await service?.kill('SIGKILL')
      await rm(dir, { recursive: true, force: true })
    }
  })
})
