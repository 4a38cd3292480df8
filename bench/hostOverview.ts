// Host overview benchmark: latency of one GET /v1/host-overview page (its SQL, src/store/hostsRepo.ts
// readHostOverview) with many hosts in Postgres.
//
//   node --import tsx bench/hostOverview.ts [--pages 1000000] [--hosts 100000] [--crawls 500000] [--runs 5]
//
// A fresh database recrawl_bench_<random> (dropped at the end) gets `pages` pages over `hosts` hosts
// (bench/ingest.ts seedPages) and `crawls` observations spread over the last day, one in ten a failure
// (5xx, a timeout or a DNS error). Per sort: the median over `runs` calls of the first 50 hosts, and of
// the 50 hosts at offset hosts − 50 (the last page a cursor reaches).
import pg from 'pg'
import { seedPages } from './ingest.ts'
import { argNumber, cleanupOnSignal, createBenchDatabase, fmt, median } from './support.ts'
import { readHostOverview, type HostOverviewSort } from '../src/store/hostsRepo.ts'

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
  const sorts: HostOverviewSort[] = ['crawlsLastDay', 'host', 'failuresLastDay', 'expectedFreshness']
  console.log(
    `${pages.toLocaleString('en')} pages, ${hosts.toLocaleString('en')} hosts, ${crawls.toLocaleString('en')} crawls in the last day; median of ${runs}`,
  )
  for (const sort of sorts) {
    for (const offset of [0, hosts - 50]) {
      const times: number[] = []
      let total = 0
      for (let r = 0; r < runs; r++) {
        const t = performance.now()
        const rows = await readHostOverview(pool, {
          nowMs: Date.now(),
          spacing: 'periodic',
          defaultChangesPerDay: 1,
          hostPrefix: null,
          sort,
          descending: sort !== 'host',
          offset,
          limit: 50,
        })
        times.push(performance.now() - t)
        total = rows[0]?.total ?? 0
      }
      console.log(`sort=${sort} offset=${offset}: ${fmt(median(times))} ms (total ${total})`)
    }
  }
} finally {
  await pool.end()
  await db.drop()
}
