// Ingest benchmark: observations per second through HTTP into Postgres, next to the raw SQL
// ceiling measured in the same run (the same statements without HTTP, validation or estimators).
//
//   node --import tsx bench/ingest.ts [--pages 100000] [--concurrency 4,8,16] [--seconds 8] [--runs 3]
//                                     [--batch 500] [--pool 10] [--json]
//
// A fresh database recrawl_bench_<random> is created on BENCH_ADMIN_URL (default
// postgres://postgres@127.0.0.1:5432/postgres) and dropped at the end. Its pages are pre-registered
// with one baseline crawl each, so every measured observation closes a real estimator interval.
// The service runs as a child process (`src/cli.ts start`, default settings and log level).
// Each batch holds `batch` distinct pages, walking the universe round-robin; every round moves the
// crawl time forward by one hour; half the items report `changed`, half a `contentHash`.
// Each run measures, for every concurrency, the service for --seconds and then the ceiling for
// --seconds with the same number of clients; the table shows medians over the runs.
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { Pool as HttpPool } from 'undici'
import { emptyEstimatorState, encodeEstimatorState, estimateOf, stepEstimators } from '../src/math/estimators/index.ts'
import { DEFAULT_SETTINGS, estimatorSettingsOf } from '../src/core/settings.ts'
import { insertMissingPages, lockPagesByUrl, writeCrawledPages, type CrawledPageWrite } from '../src/store/pagesRepo.ts'
import { insertObservations, type ObservationInsert } from '../src/store/observationsRepo.ts'
import { loadSettings, readOptimizerState } from '../src/store/settingsRepo.ts'
import { withTransaction } from '../src/store/transaction.ts'
import {
  argNumber,
  argNumbers,
  cleanupOnSignal,
  createBenchDatabase,
  fmt,
  hasFlag,
  machineDescription,
  median,
  percentile,
  startService,
  waitForOptimizerRun,
} from './support.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../src/math/units.ts'

/** Crawl time of the seeded baseline; rounds follow one hour apart (room for 700 rounds before "now"). */
const T0_MS = Date.now() - 30 * MS_PER_DAY

export const pageUrl = (i: number, hosts: number): string => `https://h${i % hosts}.example/p/${i}`
export const pageHost = (i: number, hosts: number): string => `h${i % hosts}.example`

/**
 * Inserts `pages` pages straight into the table (generate_series), each with one baseline crawl at
 * T0 and due times spread over ±1 day around now. Rows are inserted in id order of page index.
 */
export async function seedPages(
  pool: pg.Pool,
  options: { pages: number; hosts: number; baseline: boolean },
): Promise<void> {
  const chunk = 250_000
  for (let from = 0; from < options.pages; from += chunk) {
    const to = Math.min(options.pages, from + chunk) - 1
    await pool.query(
      `WITH page AS (
         INSERT INTO pages (url, host, crawls, first_crawled_at, last_crawled_at, interval_start_at, last_content_hash)
         SELECT 'https://h' || (i % $3) || '.example/p/' || i, 'h' || (i % $3) || '.example',
                $4::int, $5::timestamptz, $5::timestamptz, $5::timestamptz, CASE WHEN $6 THEN 'v0' END
         FROM generate_series($1::int, $2::int) AS i ORDER BY i
         RETURNING id, host
       )
       INSERT INTO page_schedule (page_id, host, importance, next_crawl_at, change_epoch)
       SELECT id, host, 1 + ((id - 1) % 7), now() - interval '1 day' + ((((id - 1) * 7919) % 172800) * interval '1 second'), 0
       FROM page`,
      [from, to, options.hosts, options.baseline ? 1 : 0, options.baseline ? new Date(T0_MS) : null, options.baseline],
    )
  }
  await pool.query('VACUUM ANALYZE pages')
  await pool.query('VACUUM ANALYZE page_schedule')
}

interface BatchItem {
  url: string
  crawledAt: string
  httpStatus: number
  changed?: boolean
  contentHash?: string
}

/** Deterministic per (page, round) pseudo-random number in [0, 1). */
function unit(page: number, round: number): number {
  let h = Math.imul(page ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(round + 1, 0xc2b2ae35)
  h ^= h >>> 15
  h = Math.imul(h, 0x27d4eb2f)
  h ^= h >>> 13
  return (h >>> 0) / 4294967296
}

/** Hands out batches in order: batch k covers pages [k·size, (k+1)·size) mod pages, round = ⌊k·size/pages⌋. */
export class BatchSource {
  private next = 0
  constructor(
    readonly pages: number,
    readonly hosts: number,
    readonly size: number,
  ) {}

  take(): { index: number[]; round: number[] } {
    const start = this.next * this.size
    this.next++
    const index: number[] = []
    const round: number[] = []
    for (let j = 0; j < this.size; j++) {
      const global = start + j
      index.push(global % this.pages)
      round.push(Math.floor(global / this.pages) + 1)
    }
    if ((round[round.length - 1]! + 1) * MS_PER_HOUR > 29 * MS_PER_DAY)
      throw new Error('ran out of crawl-time rounds; use more pages or fewer seconds')
    return { index, round }
  }

  items(batch: { index: number[]; round: number[] }): BatchItem[] {
    return batch.index.map((i, j) => {
      const r = batch.round[j]!
      const crawledAt = new Date(T0_MS + r * MS_PER_HOUR + (i % 3_600) * 1000).toISOString()
      const u = unit(i, r)
      // Half the pages report `changed`, half a content hash whose version moves with probability 0.3.
      if (i % 2 === 0) return { url: pageUrl(i, this.hosts), crawledAt, httpStatus: 200, changed: u < 0.3 }
      return { url: pageUrl(i, this.hosts), crawledAt, httpStatus: 200, contentHash: `v${u < 0.3 ? r : r - 1}` }
    })
  }
}

interface Measurement {
  observationsPerSecond: number
  batches: number
  observations: number
  p50Ms: number
  p99Ms: number
  /** Items the service did not accept as in-order crawls (late, duplicates, rejected): expected 0. */
  notAccepted: number
}

/** Runs `concurrency` loops of `send` until `seconds` have passed; throughput counts completed batches only. */
export async function drive(
  concurrency: number,
  seconds: number,
  maxBatches: number,
  send: () => Promise<{ items: number; notAccepted: number }>,
): Promise<Measurement> {
  const latencies: number[] = []
  let observations = 0
  let notAccepted = 0
  let started = 0
  const t0 = performance.now()
  const endAt = t0 + seconds * 1000
  const worker = async () => {
    while (performance.now() < endAt && started < maxBatches) {
      started++
      const s = performance.now()
      const r = await send()
      latencies.push(performance.now() - s)
      observations += r.items
      notAccepted += r.notAccepted
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const elapsedS = (performance.now() - t0) / 1000
  return {
    observationsPerSecond: observations / elapsedS,
    batches: latencies.length,
    observations,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    notAccepted,
  }
}

/** The service path: POST /v1/observations. */
export function serviceSender(http: HttpPool, source: BatchSource) {
  return async () => {
    const items = source.items(source.take())
    const res = await http.request({
      method: 'POST',
      path: '/v1/observations',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ observations: items }),
    })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`POST /v1/observations → ${res.statusCode}: ${text.slice(0, 500)}`)
    const body = JSON.parse(text) as { accepted: number }
    return { items: items.length, notAccepted: items.length - body.accepted }
  }
}

/** A realistic estimator state (a page with a few intervals), written by the ceiling for every page. */
function templateState(): { stateBytes: Uint8Array; changesPerDay: number | null } {
  const settings = estimatorSettingsOf(DEFAULT_SETTINGS)
  let state = emptyEstimatorState()
  for (let k = 0; k < 6; k++)
    state = stepEstimators(state, { intervalDays: 1 / 24, changed: k % 3 === 0, ageDays: null }, settings)
  return {
    stateBytes: encodeEstimatorState(state),
    changesPerDay: estimateOf(state, DEFAULT_SETTINGS.estimator, settings),
  }
}

/**
 * The ceiling: the statements the service issues for one batch, in the same transaction shape
 * (settings FOR SHARE, optimiser state, registration, lock by URL in id order, observation insert
 * with RETURNING, bulk page update), with the store functions the service uses, but no HTTP, no
 * validation and no estimator arithmetic (a fixed, realistic estimator state is written instead).
 */
function ceilingSender(pool: pg.Pool, source: BatchSource) {
  const template = templateState()
  return async () => {
    const batch = source.take()
    const items = source.items(batch)
    const nowMs = Date.now()
    const inserted = await withTransaction(pool, async (client) => {
      await loadSettings(client, 'share')
      await readOptimizerState(client)
      await insertMissingPages(
        client,
        batch.index.map((i) => ({ url: pageUrl(i, source.hosts), host: pageHost(i, source.hosts) })),
        nowMs,
      )
      const rows = await lockPagesByUrl(
        client,
        items.map((it) => it.url),
      )
      const itemByUrl = new Map(items.map((it) => [it.url, it]))
      const inserts: ObservationInsert[] = []
      const updates: CrawledPageWrite[] = []
      for (const row of rows) {
        const item = itemByUrl.get(row.url)!
        const crawledMs = Date.parse(item.crawledAt)
        const intervalSeconds = row.intervalStartAtMs !== null ? (crawledMs - row.intervalStartAtMs) / 1000 : null
        const changed = item.changed ?? item.contentHash !== row.lastContentHash
        inserts.push({
          pageId: row.id,
          crawledAtMs: crawledMs,
          changed,
          reportedChanged: item.changed ?? null,
          contentHash: item.contentHash ?? null,
          lastModifiedMs: null,
          httpStatus: item.httpStatus,
          etag: null,
          fetchError: null,
          redirectTo: null,
          retryAfterSeconds: null,
          applied: true,
          late: false,
          intervalSeconds,
        })
        updates.push({
          id: row.id,
          crawls: row.crawls + 1,
          intervals: row.intervals + 1,
          changes: row.changes + (changed ? 1 : 0),
          firstCrawledAtMs: row.firstCrawledAtMs ?? crawledMs,
          lastCrawledAtMs: crawledMs,
          intervalStartAtMs: crawledMs,
          lastChangedAtMs: changed ? crawledMs : row.lastChangedAtMs,
          lastContentHash: item.contentHash ?? null,
          estimatorState: template.stateBytes,
          changesPerDay: template.changesPerDay,
          crawlsPerDay: 1,
          nextCrawlAtMs: crawledMs + MS_PER_DAY,
          status: 'active',
          consecutiveFailures: 0,
          lastHttpStatus: item.httpStatus,
          lastSuccessAtMs: crawledMs,
          redirectTo: null,
          etag: null,
          serverLastModifiedMs: null,
          noisy: false,
          ageShape: null,
          ageShapeRateRatio: null,
          completedLeaseId: null,
        })
      }
      const ins = await insertObservations(client, inserts)
      await writeCrawledPages(client, updates, Date.now())
      return ins.size
    })
    return { items: items.length, notAccepted: items.length - inserted }
  }
}

export interface IngestRow {
  concurrency: number
  service: Measurement[]
  ceiling: Measurement[]
}

export interface IngestOptions {
  pages: number
  hosts: number
  concurrency: number[]
  seconds: number
  runs: number
  batch: number
  servicePoolSize: number
  /** Skip the raw-SQL ceiling (growth runs). */
  serviceOnly?: boolean
  log?: (line: string) => void
}

/** Seeds a fresh database, starts the service, and measures; always drops the database and stops the service. */
export async function runIngestBenchmark(options: IngestOptions): Promise<IngestRow[]> {
  const log = options.log ?? (() => {})
  const db = await createBenchDatabase()
  let service: Awaited<ReturnType<typeof startService>> | null = null
  let http: HttpPool | null = null
  const pool = new pg.Pool({ connectionString: db.url, max: Math.max(...options.concurrency, options.servicePoolSize) })
  const cleanup = async () => {
    await http?.destroy().catch(() => {})
    await service?.stop().catch(() => {})
    await pool.end().catch(() => {})
    await db.drop()
  }
  cleanupOnSignal(cleanup)
  try {
    log(`database ${db.name}: seeding ${options.pages} pages`)
    await seedPages(pool, { pages: options.pages, hosts: options.hosts, baseline: true })
    // The service's periodic optimiser runs 5 s after start and then every reoptimizeSeconds; its
    // first run re-times every page. Measure ingest after that run, with the next one a day away, so
    // that neither the service nor the ceiling shares the database with a bulk rewrite.
    await pool.query(`UPDATE settings SET value = value || '{"reoptimizeSeconds": 86400}'::jsonb WHERE id`)
    service = await startService(db.url, { DATABASE_POOL_SIZE: String(options.servicePoolSize) })
    http = new HttpPool(service.baseUrl, { connections: Math.max(...options.concurrency), pipelining: 1 })
    const optimizerSeconds = await waitForOptimizerRun(http)
    await pool.query('VACUUM ANALYZE pages, page_schedule')
    log(`first optimiser run done ${fmt(optimizerSeconds)} s after the service was ready; vacuumed`)
    const source = new BatchSource(options.pages, options.hosts, options.batch)
    const maxBatches = Number.MAX_SAFE_INTEGER
    // Warm-up, not measured: JIT, connection pools, and one full round over the universe, so that
    // every page row has been rewritten once (the first rewrite after seeding costs more).
    await drive(8, 60, Math.ceil(options.pages / options.batch), serviceSender(http, source))
    if (!options.serviceOnly) {
      const warmPool = new pg.Pool({ connectionString: db.url, max: 4 })
      await drive(4, 2, maxBatches, ceilingSender(warmPool, source))
      await warmPool.end()
    }
    const rows: IngestRow[] = options.concurrency.map((c) => ({ concurrency: c, service: [], ceiling: [] }))
    for (let run = 1; run <= options.runs; run++) {
      for (const row of rows) {
        const s = await drive(row.concurrency, options.seconds, maxBatches, serviceSender(http, source))
        row.service.push(s)
        log(
          `run ${run} c=${row.concurrency} service: ${fmt(s.observationsPerSecond, 0)} obs/s, p50 ${fmt(s.p50Ms)} ms, p99 ${fmt(s.p99Ms)} ms`,
        )
        if (options.serviceOnly) continue
        // Same number of database connections as the service has (its pool), one client per loop.
        const ceilingPool = new pg.Pool({
          connectionString: db.url,
          max: Math.min(row.concurrency, options.servicePoolSize),
        })
        const c = await drive(row.concurrency, options.seconds, maxBatches, ceilingSender(ceilingPool, source))
        await ceilingPool.end()
        row.ceiling.push(c)
        log(
          `run ${run} c=${row.concurrency} ceiling: ${fmt(c.observationsPerSecond, 0)} obs/s, p50 ${fmt(c.p50Ms)} ms, p99 ${fmt(c.p99Ms)} ms`,
        )
      }
    }
    return rows
  } finally {
    await cleanup()
  }
}

export function summarize(ms: Measurement[]) {
  return {
    observationsPerSecond: median(ms.map((m) => m.observationsPerSecond)),
    p50Ms: median(ms.map((m) => m.p50Ms)),
    p99Ms: median(ms.map((m) => m.p99Ms)),
    notAccepted: ms.reduce((a, m) => a + m.notAccepted, 0),
    batches: ms.reduce((a, m) => a + m.batches, 0),
  }
}

async function main(): Promise<void> {
  const options: IngestOptions = {
    pages: argNumber('--pages', 100_000),
    hosts: argNumber('--hosts', 200),
    concurrency: argNumbers('--concurrency', [4, 8, 16]),
    seconds: argNumber('--seconds', 8),
    runs: argNumber('--runs', 3),
    batch: argNumber('--batch', 500),
    servicePoolSize: argNumber('--pool', 10),
    log: hasFlag('--json') ? () => {} : (line) => console.error(line),
  }
  const machine = await machineDescription()
  const rows = await runIngestBenchmark(options)
  const summary = rows.map((r) => {
    const s = summarize(r.service)
    const c = summarize(r.ceiling)
    return {
      concurrency: r.concurrency,
      service: s,
      ceiling: c,
      ratio: c.observationsPerSecond > 0 ? s.observationsPerSecond / c.observationsPerSecond : 0,
    }
  })
  if (hasFlag('--json')) {
    console.log(JSON.stringify({ machine, options: { ...options, log: undefined }, summary, rows }, null, 2))
    return
  }
  console.log(`\n${machine}`)
  console.log(
    `${options.pages} pages, ${options.hosts} hosts, batches of ${options.batch}, ${options.seconds} s per measurement, medians of ${options.runs} runs, service pool ${options.servicePoolSize}\n`,
  )
  console.log('| clients | service obs/s | p50 ms | p99 ms | ceiling obs/s | p50 ms | p99 ms | service / ceiling |')
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const r of summary) {
    console.log(
      `| ${r.concurrency} | ${fmt(r.service.observationsPerSecond, 0)} | ${fmt(r.service.p50Ms)} | ${fmt(r.service.p99Ms)} | ` +
        `${fmt(r.ceiling.observationsPerSecond, 0)} | ${fmt(r.ceiling.p50Ms)} | ${fmt(r.ceiling.p99Ms)} | ${fmt(r.ratio, 2)} |`,
    )
  }
  const off = summary.reduce((a, r) => a + r.service.notAccepted + r.ceiling.notAccepted, 0)
  if (off > 0)
    console.log(`\nnote: ${off} items were not accepted as new in-order crawls (late, duplicate or rejected)`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
