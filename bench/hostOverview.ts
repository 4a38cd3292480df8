// Host overview benchmark: latency of one GET /v1/host-overview page (src/domain/hosts.ts listHostOverview:
// the ranking from host_rollup, then the numbers of the page's hosts) with many hosts in Postgres, and the
// cost of recomputing the ranking (refreshHostRanking, after every optimiser run).
//
//   node --import tsx bench/hostOverview.ts [--pages 1000000] [--hosts 100000] [--crawls 500000] [--runs 5]
//
// A fresh database recrawl_bench_<random> (dropped at the end) gets `pages` pages over `hosts` hosts
// (bench/ingest.ts seedPages) and `crawls` observations spread over the last day, one in ten a failure
// (5xx, a timeout or a DNS error). The ranking is refreshed `runs` times (median shown), then per sort
// column: the median over `runs` calls of the first 50 hosts, and of the 50 hosts at offset hosts − 50 (the
// last page a cursor reaches).
import pg from 'pg'
import { seedPages } from './ingest.ts'
import { argNumber, cleanupOnSignal, createBenchDatabase, fmt, median } from './support.ts'
import { HOST_OVERVIEW_SORTS, type HostOverviewSort } from '../src/store/hostsRepo.ts'
import { listHostOverview, refreshHostRanking } from '../src/domain/hosts.ts'
import { systemClock } from '../src/domain/clock.ts'

const pages = argNumber('--pages', 1_000_000)
const hosts = argNumber('--hosts', 100_000)
const crawls = argNumber('--crawls', 500_000)
const runs = argNumber('--runs', 5)

const db = await createBenchDatabase()
cleanupOnSignal(db.drop)
const pool = new pg.Pool({ connectionString: db.url, max: 2 })
try {
  await seedPages(pool, { pages, hosts, baseline: false })
  await pool.query(
    `INSERT INTO observations (page_id, crawled_at, applied, http_status, fetch_error)
     SELECT 1 + (i::bigint * 7919) % $1, now() - (i % 86400) * interval '1 second', false,
            CASE WHEN i % 10 = 3 THEN 503 WHEN i % 10 IN (5, 7) THEN NULL ELSE 200 END,
            CASE WHEN i % 10 = 5 THEN 'timeout' WHEN i % 10 = 7 THEN 'dns' END
     FROM generate_series(1, $2::int) AS i`,
    [pages, crawls],
  )
  await pool.query('VACUUM ANALYZE observations')
  const deps = { pool, clock: systemClock }
  console.log(
    `${pages.toLocaleString('en')} pages, ${hosts.toLocaleString('en')} hosts, ${crawls.toLocaleString('en')} crawls in the last day; median of ${runs}`,
  )
  const refreshTimes: number[] = []
  for (let r = 0; r < runs; r++) {
    const t = performance.now()
    if (!(await refreshHostRanking(deps))) throw new Error('the ranking refresh did not run')
    refreshTimes.push(performance.now() - t)
  }
  await pool.query('VACUUM ANALYZE host_rollup')
  console.log(`ranking refresh: ${fmt(median(refreshTimes))} ms`)
  for (const sort of Object.keys(HOST_OVERVIEW_SORTS) as HostOverviewSort[]) {
    for (const offset of [0, hosts - 50]) {
      const times: number[] = []
      let total = 0
      for (let r = 0; r < runs; r++) {
        const t = performance.now()
        const page = await listHostOverview(deps, {
          sort,
          order: sort === 'host' ? 'asc' : 'desc',
          limit: 50,
          ...(offset > 0 ? { cursor: String(offset) } : {}),
        })
        times.push(performance.now() - t)
        total = page.total
        if (page.hosts.length !== 50) throw new Error(`${page.hosts.length} hosts instead of 50`)
      }
      console.log(`sort=${sort} offset=${offset}: ${fmt(median(times))} ms (total ${total})`)
    }
  }
} finally {
  await pool.end()
  await db.drop()
}
