// Lease benchmark: latency of POST /v1/leases (limit 100) with a large page table in Postgres.
//
//   node --import tsx bench/leases.ts [--pages 1000000] [--hosts 100] [--delay-hosts 10] [--calls 300]
//                                     [--workers 4,8] [--worker-calls 100] [--runs 3] [--backlog 0] [--json]
//
// A fresh database recrawl_bench_<random> (dropped at the end) gets `pages` pages straight from
// generate_series, due times spread evenly over ±1 day around now (about half are due), over
// `hosts` hosts, plus `delay-hosts` small hosts (50 pages each) with minDelaySeconds = 1. The service runs as a child process.
// `--backlog N` adds one more host with minDelaySeconds = 1 and N pages, all due before every other
// page (a polite host that fell behind: the head-of-line case of BENCHMARKS.md "Leases").
// Per run: `calls` sequential leases (one worker), then for each worker count that many concurrent
// workers, each taking a lease and completing it by reporting a crawl of every page with its
// leaseId (POST /v1/observations), `worker-calls` times. Lease latency is measured on the lease call
// alone. Medians over the runs. Measuring starts after the service's first periodic optimiser run
// (which rewrites every page row) and a VACUUM, with reoptimizeSeconds set to a day so that no run
// overlaps.
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { Pool as HttpPool } from 'undici'
import { seedPages } from './ingest.ts'
import {
  argNumber,
  argNumbers,
  argValue,
  cleanupOnSignal,
  createBenchDatabase,
  fmt,
  hasFlag,
  machineDescription,
  median,
  percentile,
  startService,
  waitForOptimizerRun,
  type ServiceProcess,
} from './support.ts'

/** Pages of each host with minDelaySeconds. */
const DELAY_HOST_PAGES = 50

interface LeaseResponse {
  leaseId: string
  pages: { id: string; url: string; host: string; dueAt: string }[]
}

async function post<T>(http: HttpPool, path: string, body: unknown): Promise<T> {
  const res = await http.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`POST ${path} → ${res.statusCode}: ${text.slice(0, 500)}`)
  return JSON.parse(text) as T
}

export interface LeaseMeasurement {
  workers: number
  calls: number
  pagesLeased: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  /** Latency of the completing POST /v1/observations (0 when not completing). */
  reportP50Ms: number
  reportP99Ms: number
  /** Lease calls per second of wall time (including the time of the completing reports, when made). */
  leasesPerSecond: number
}

/** `workers` loops of lease (+ optional completion); latency of the lease call only. */
export async function leaseLoop(
  http: HttpPool,
  workers: number,
  callsPerWorker: number,
  complete: boolean,
): Promise<LeaseMeasurement> {
  const latencies: number[] = []
  const reportLatencies: number[] = []
  let pagesLeased = 0
  const crawledAt = new Date().toISOString()
  const t0 = performance.now()
  const worker = async (w: number) => {
    for (let i = 0; i < callsPerWorker; i++) {
      const s = performance.now()
      const grant = await post<LeaseResponse>(http, '/v1/leases', {
        worker: `bench-${w}`,
        limit: 100,
        leaseSeconds: 600,
      })
      latencies.push(performance.now() - s)
      pagesLeased += grant.pages.length
      if (complete && grant.pages.length > 0) {
        const r = performance.now()
        await post(http, '/v1/observations', {
          observations: grant.pages.map((p) => ({
            url: p.url,
            crawledAt,
            httpStatus: 200,
            contentHash: 'v1',
            leaseId: grant.leaseId,
          })),
        })
        reportLatencies.push(performance.now() - r)
      }
    }
  }
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)))
  const elapsedS = (performance.now() - t0) / 1000
  return {
    workers,
    calls: latencies.length,
    pagesLeased,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: Math.max(...latencies),
    leasesPerSecond: latencies.length / elapsedS,
    reportP50Ms: percentile(reportLatencies, 0.5),
    reportP99Ms: percentile(reportLatencies, 0.99),
  }
}

export interface LeaseOptions {
  pages: number
  hosts: number
  delayHosts: number
  /** Pages of one extra polite host, due before all others (0 = none). */
  backlog: number
  calls: number
  workers: number[]
  workerCalls: number
  runs: number
  log?: (line: string) => void
}

export interface LeaseResult {
  sequential: LeaseMeasurement[]
  concurrent: { workers: number; runs: LeaseMeasurement[] }[]
  /** Time to seed the pages and hosts. */
  seedSeconds: number
}

export async function runLeaseBenchmark(options: LeaseOptions): Promise<LeaseResult> {
  const log = options.log ?? (() => {})
  const db = await createBenchDatabase()
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  let service: ServiceProcess | null = null
  let http: HttpPool | null = null
  const cleanup = async () => {
    await http?.destroy().catch(() => {})
    await service?.stop().catch(() => {})
    await pool.end().catch(() => {})
    await db.drop()
  }
  cleanupOnSignal(cleanup)
  try {
    const seedStart = performance.now()
    log(`database ${db.name}: seeding ${options.pages} pages`)
    await seedPages(pool, { pages: options.pages, hosts: options.hosts, baseline: false })
    // Polite hosts of DELAY_HOST_PAGES pages each; --backlog adds one whose backlog outgrows its delay.
    // A page's host and its schedule row's copy move in one statement (the foreign key is checked at its end), and
    // the paced hosts' pages are marked polite, as the service's own statements do (migrations/0026).
    await pool.query(
      `WITH moved AS (
         UPDATE pages SET url = 'https://slow' || (id % $1::int) || '.example/p/' || id, host = 'slow' || (id % $1::int) || '.example'
         WHERE id <= $1::int * $2::int RETURNING id, host
       )
       UPDATE page_schedule s SET host = m.host, polite = true FROM moved m WHERE s.page_id = m.id`,
      [options.delayHosts, DELAY_HOST_PAGES],
    )
    await pool.query(
      `INSERT INTO hosts (host, min_delay_seconds, pages_polite)
       SELECT 'slow' || i || '.example', 1, true FROM generate_series(0, $1::int - 1) AS i`,
      [options.delayHosts],
    )
    if (options.backlog > 0) {
      await pool.query(
        `WITH page AS (
           INSERT INTO pages (url, host) SELECT 'https://backlog.example/p/' || i, 'backlog.example' FROM generate_series(1, $1::int) AS i
           RETURNING id, url, host
         )
         INSERT INTO page_schedule (page_id, host, next_crawl_at, change_epoch)
         SELECT id, host, now() - interval '2 days' + substring(url FROM '[0-9]+$')::int * interval '1 ms', 0 FROM page`,
        [options.backlog],
      )
      await pool.query(`INSERT INTO hosts (host, min_delay_seconds) VALUES ('backlog.example', 1)`)
    }
    await pool.query('VACUUM ANALYZE pages, page_schedule')
    // The service's periodic optimiser runs 5 s after start and then every reoptimizeSeconds; its
    // first run re-times the whole table. Measure leases after that run, with the next one a day away.
    // Leases hand out at most the budget (a fleet-wide allowance, docs/api.md "Schedule"): this benchmark
    // measures the lease statement with 100 pages per call, thousands of calls a minute, so the budget is
    // the largest allowed and never the limit. (The default, 10,000 crawls/day, would allow a lease of 100
    // pages about every 14 minutes.)
    const budgetCrawlsPerDay = 1e9
    await pool.query(
      `UPDATE settings SET value = value || jsonb_build_object('reoptimizeSeconds', 86400, 'budgetCrawlsPerDay', $1::float8) WHERE id`,
      [budgetCrawlsPerDay],
    )
    const seedSeconds = (performance.now() - seedStart) / 1000
    service = await startService(db.url)
    http = new HttpPool(service.baseUrl, { connections: Math.max(8, ...options.workers) })
    const optimizerSeconds = await waitForOptimizerRun(http)
    // That run rewrote every row: vacuum now rather than have autovacuum run during the measurement.
    await pool.query('VACUUM ANALYZE pages, page_schedule')
    log(`first optimiser run done ${fmt(optimizerSeconds)} s after the service was ready; vacuumed`)
    await leaseLoop(http, 1, 20, false) // warm-up
    const result: LeaseResult = {
      sequential: [],
      concurrent: options.workers.map((w) => ({ workers: w, runs: [] })),
      seedSeconds,
    }
    for (let run = 1; run <= options.runs; run++) {
      const s = await leaseLoop(http, 1, options.calls, false)
      result.sequential.push(s)
      log(`run ${run} sequential: p50 ${fmt(s.p50Ms)} ms, p99 ${fmt(s.p99Ms)} ms, ${s.pagesLeased} pages`)
      for (const c of result.concurrent) {
        const m = await leaseLoop(http, c.workers, options.workerCalls, true)
        c.runs.push(m)
        log(
          `run ${run} ${c.workers} workers: p50 ${fmt(m.p50Ms)} ms, p99 ${fmt(m.p99Ms)} ms, ${fmt(m.leasesPerSecond)} leases/s`,
        )
      }
    }
    return result
  } finally {
    await cleanup()
  }
}

export function summarizeLeases(ms: LeaseMeasurement[]) {
  return {
    p50Ms: median(ms.map((m) => m.p50Ms)),
    p99Ms: median(ms.map((m) => m.p99Ms)),
    leasesPerSecond: median(ms.map((m) => m.leasesPerSecond)),
    reportP50Ms: median(ms.map((m) => m.reportP50Ms)),
    reportP99Ms: median(ms.map((m) => m.reportP99Ms)),
    pagesPerLease:
      ms.reduce((a, m) => a + m.pagesLeased, 0) /
      Math.max(
        1,
        ms.reduce((a, m) => a + m.calls, 0),
      ),
  }
}

async function main(): Promise<void> {
  const options: LeaseOptions = {
    pages: argNumber('--pages', 1_000_000),
    hosts: argNumber('--hosts', 100),
    delayHosts: argNumber('--delay-hosts', 10),
    backlog: argValue('--backlog') === undefined ? 0 : argNumber('--backlog', 0),
    calls: argNumber('--calls', 300),
    workers: argNumbers('--workers', [4, 8]),
    workerCalls: argNumber('--worker-calls', 100),
    runs: argNumber('--runs', 3),
    log: hasFlag('--json') ? () => {} : (line) => console.error(line),
  }
  const machine = await machineDescription()
  const result = await runLeaseBenchmark(options)
  const rows = [
    { label: '1 (lease only)', ...summarizeLeases(result.sequential) },
    ...result.concurrent.map((c) => ({ label: `${c.workers} (lease + report)`, ...summarizeLeases(c.runs) })),
  ]
  if (hasFlag('--json')) {
    console.log(JSON.stringify({ machine, options: { ...options, log: undefined }, summary: rows, result }, null, 2))
    return
  }
  console.log(`\n${machine}`)
  console.log(
    `${options.pages} pages (about half due), ${options.hosts} hosts + ${options.delayHosts} hosts of ${DELAY_HOST_PAGES} pages with minDelaySeconds 1, ` +
      (options.backlog > 0 ? `1 polite host with a backlog of ${options.backlog} pages due first, ` : '') +
      `limit 100, ` +
      `seeded in ${fmt(result.seedSeconds)} s; medians of ${options.runs} runs\n`,
  )
  console.log('| workers | lease p50 ms | lease p99 ms | report p50 ms | report p99 ms | leases/s | pages per lease |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    const report = r.reportP50Ms > 0 ? `${fmt(r.reportP50Ms)} | ${fmt(r.reportP99Ms)}` : '– | –'
    console.log(
      `| ${r.label} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${report} | ${fmt(r.leasesPerSecond)} | ${fmt(r.pagesPerLease)} |`,
    )
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
