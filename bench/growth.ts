// Growth benchmark: how ingest, lease and optimise costs grow with the number of pages in Postgres.
//
//   node --import tsx bench/growth.ts [--sizes 10000,100000,1000000] [--ingest-seconds 6] [--lease-calls 100]
//                                     [--optimize-runs 3] [--ingest-clients 8] [--json]
//
// For each size: a fresh database (dropped afterwards) with that many pages, each with one baseline
// crawl and an estimated change rate, due times spread over ±1 day; the service as a child process.
// Measured through HTTP, in this order: POST /v1/optimize end to end (stream every page, solve,
// write back changed rates), median of `optimize-runs` runs: the first run re-times every page, the
// later ones only pages whose rate moved (see domain/optimize.ts); `lease-calls` sequential
// POST /v1/leases with limit 100 (p50/p99); ingest with 8 clients, batches of 500 (obs/s, p50/p99
// batch latency); then the bytes on disk per page and per stored observation.
// The in-memory optimiser alone up to 10^7 pages is bench/optimizer.ts.
import pg from 'pg'
import { Pool as HttpPool } from 'undici'
import { BatchSource, drive, seedPages, serviceSender } from './ingest.ts'
import { leaseLoop } from './leases.ts'
import {
  argNumber,
  argNumbers,
  cleanupOnSignal,
  createBenchDatabase,
  fmt,
  hasFlag,
  machineDescription,
  median,
  startService,
  type BenchDatabase,
  type ServiceProcess,
} from './support.ts'

interface GrowthRow {
  pages: number
  seedSeconds: number
  ingestObservationsPerSecond: number
  ingestP50Ms: number
  ingestP99Ms: number
  leaseP50Ms: number
  leaseP99Ms: number
  pagesPerLease: number
  optimizeFirstMs: number
  optimizeMedianMs: number
  optimizeServerMs: number
  pagesRetimedFirst: number
  /** Bytes on disk (tables, their indexes and TOAST) per page: pages, schedule, hosts and the host overview. */
  bytesPerPage: number
  /** Bytes on disk of the observations table and its indexes per stored observation. */
  bytesPerObservation: number
  observations: number
}

async function measureSize(
  pages: number,
  options: { ingestSeconds: number; ingestClients: number; leaseCalls: number; optimizeRuns: number },
  log: (l: string) => void,
): Promise<GrowthRow> {
  let db: BenchDatabase | null = null
  let service: ServiceProcess | null = null
  let http: HttpPool | null = null
  let pool: pg.Pool | null = null
  const cleanup = async () => {
    await http?.destroy().catch(() => {})
    await service?.stop().catch(() => {})
    await pool?.end().catch(() => {})
    await db?.drop()
  }
  cleanupOnSignal(cleanup)
  try {
    db = await createBenchDatabase()
    pool = new pg.Pool({ connectionString: db.url, max: 2 })
    const seedStart = performance.now()
    const hosts = Math.max(10, Math.round(pages / 1000))
    await seedPages(pool, { pages, hosts, baseline: true })
    // Estimated change rates log-uniform over [0.01, 10] per day, as after some crawling.
    await pool.query(`UPDATE pages SET changes_per_day = power(10, -2 + 3 * ((id * 7907) % 10007) / 10007.0)`)
    await pool.query(`UPDATE page_schedule SET importance = 1 + (page_id % 7)`)
    await pool.query('VACUUM ANALYZE pages, page_schedule')
    const seedSeconds = (performance.now() - seedStart) / 1000
    service = await startService(db.url)
    http = new HttpPool(service.baseUrl, { connections: 8 })
    // Budget: half a crawl per page per day on average.
    await http
      .request({
        method: 'PATCH',
        path: '/v1/settings',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ budgetCrawlsPerDay: pages / 2 }),
      })
      .then(async (r) => {
        const text = await r.body.text()
        if (r.statusCode !== 200) throw new Error(`PATCH /v1/settings → ${r.statusCode}: ${text.slice(0, 300)}`)
      })

    const optimizeTimes: number[] = []
    const serverTimes: number[] = []
    let pagesRetimedFirst = 0
    for (let i = 0; i < options.optimizeRuns; i++) {
      const s = performance.now()
      const res = await http.request({ method: 'POST', path: '/v1/optimize' })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`POST /v1/optimize → ${res.statusCode}: ${text.slice(0, 300)}`)
      optimizeTimes.push(performance.now() - s)
      const body = JSON.parse(text) as { durationMs: number; pagesRetimed: number }
      serverTimes.push(body.durationMs)
      if (i === 0) pagesRetimedFirst = body.pagesRetimed
    }
    log(`${pages}: optimise ${optimizeTimes.map((t) => fmt(t, 0)).join(', ')} ms`)

    // Leases hand out at most the budget (a fleet-wide allowance, docs/api.md "Schedule"): with pages/2 crawls a
    // day, only the first few of 100 back-to-back leases would get pages. The lease statement is measured with
    // the largest budget, set in the table so that no page is re-timed (a PATCH would re-time every page).
    await pool.query(
      `UPDATE settings SET value = value || jsonb_build_object('budgetCrawlsPerDay', 1e9::float8) WHERE id`,
    )
    await leaseLoop(http, 1, 10, false) // warm-up
    const lease = await leaseLoop(http, 1, options.leaseCalls, false)
    log(
      `${pages}: lease p50 ${fmt(lease.p50Ms)} ms, p99 ${fmt(lease.p99Ms)} ms, ${fmt(lease.pagesLeased / lease.calls)} pages per lease`,
    )

    const source = new BatchSource(pages, hosts, Math.min(500, pages))
    await drive(4, 2, Number.MAX_SAFE_INTEGER, serviceSender(http, source)) // warm-up
    const ingest = await drive(
      options.ingestClients,
      options.ingestSeconds,
      Number.MAX_SAFE_INTEGER,
      serviceSender(http, source),
    )
    log(`${pages}: ingest ${fmt(ingest.observationsPerSecond, 0)} obs/s`)
    const disk = await diskUse(pool)
    log(`${pages}: ${fmt(disk.bytesPerPage, 0)} bytes per page, ${fmt(disk.bytesPerObservation, 0)} per observation`)

    return {
      pages,
      seedSeconds,
      ingestObservationsPerSecond: ingest.observationsPerSecond,
      ingestP50Ms: ingest.p50Ms,
      ingestP99Ms: ingest.p99Ms,
      leaseP50Ms: lease.p50Ms,
      leaseP99Ms: lease.p99Ms,
      pagesPerLease: lease.pagesLeased / lease.calls,
      optimizeFirstMs: optimizeTimes[0]!,
      optimizeMedianMs: median(optimizeTimes.slice(1).length > 0 ? optimizeTimes.slice(1) : optimizeTimes),
      optimizeServerMs: median(serverTimes),
      pagesRetimedFirst,
      ...disk,
    }
  } finally {
    await cleanup()
  }
}

/**
 * What the state takes on disk, tables with their indexes and TOAST, as it is after the run (updates leave space
 * that later writes reuse; nothing is vacuumed full): per page, the per-page and per-host tables; per observation,
 * the observations table.
 */
async function diskUse(
  pool: pg.Pool,
): Promise<{ bytesPerPage: number; bytesPerObservation: number; observations: number }> {
  const { rows } = await pool.query<{
    pageBytes: string
    observationBytes: string
    pages: string
    observations: string
  }>(
    `SELECT pg_total_relation_size('pages') + pg_total_relation_size('page_schedule') + pg_total_relation_size('hosts')
              + pg_total_relation_size('host_rollup') AS "pageBytes",
            pg_total_relation_size('observations') AS "observationBytes",
            (SELECT count(*) FROM pages) AS pages, (SELECT count(*) FROM observations) AS observations`,
  )
  const row = rows[0]!
  const observations = Number(row.observations)
  return {
    bytesPerPage: Number(row.pageBytes) / Math.max(1, Number(row.pages)),
    bytesPerObservation: Number(row.observationBytes) / Math.max(1, observations),
    observations,
  }
}

async function main(): Promise<void> {
  const sizes = argNumbers('--sizes', [10_000, 100_000, 1_000_000])
  const options = {
    ingestSeconds: argNumber('--ingest-seconds', 6),
    ingestClients: argNumber('--ingest-clients', 8),
    leaseCalls: argNumber('--lease-calls', 100),
    optimizeRuns: argNumber('--optimize-runs', 3),
  }
  const log = hasFlag('--json') ? () => {} : (line: string) => console.error(line)
  const machine = await machineDescription()
  const rows: GrowthRow[] = []
  for (const pages of sizes) rows.push(await measureSize(pages, options, log))
  if (hasFlag('--json')) {
    console.log(JSON.stringify({ machine, options, rows }, null, 2))
    return
  }
  console.log(`\n${machine}\n`)
  console.log(
    `| pages | ingest obs/s (${options.ingestClients} clients) | ingest p50 / p99 ms | lease p50 / p99 ms (pages per lease) | optimise first run ms | optimise re-run ms (median) | seed s | bytes per page | bytes per observation (observations) |`,
  )
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    console.log(
      `| ${r.pages} | ${fmt(r.ingestObservationsPerSecond, 0)} | ${fmt(r.ingestP50Ms)} / ${fmt(r.ingestP99Ms)} | ${fmt(r.leaseP50Ms)} / ${fmt(r.leaseP99Ms)} (${fmt(r.pagesPerLease, 0)}) | ` +
        `${fmt(r.optimizeFirstMs, 0)} (${r.pagesRetimedFirst} re-timed) | ${fmt(r.optimizeMedianMs, 0)} | ${fmt(r.seedSeconds)} | ` +
        `${fmt(r.bytesPerPage, 0)} | ${fmt(r.bytesPerObservation, 0)} (${r.observations}) |`,
    )
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
