// Where an optimiser run at 10^6 pages spends its time, against what Postgres needs at the least for the
// same work on this machine:
//
//   node --import tsx bench/optimizerBounds.ts [--pages 1000000] [--runs 3] [--vacuum]
//
// A fresh database (dropped afterwards) seeded as bench/growth.ts does (one baseline crawl per page, change
// rates log-uniform on [0.01, 10] per day, importance 1–7, budget pages/2 per day). In process, no HTTP:
// - run: runOptimizer (src/domain/optimize.ts) end to end: the first run re-times every page, the later runs
//   find nothing that moved (with --vacuum, after a VACUUM ANALYZE that clears the first run's dead rows);
// - read: the optimiser's own chunked read (readOptimizerChunk) of every page, without the solve;
// - scan: one sequential scan counting the pages stamped with the current change epoch or later (what a run
//   reads to find the pages that changed since the previous run, without an index);
// - update: one SQL statement moving every page's rate and due time (no data from the client): the least a
//   run that re-times every page has to write.
import pg from 'pg'
import { runOptimizer } from '../src/domain/optimize.ts'
import { manualClock } from '../src/domain/clock.ts'
import { createRandom } from '../src/math/random.ts'
import { readOptimizerChunk } from '../src/store/optimizerRepo.ts'
import {
  argNumber,
  cleanupOnSignal,
  createBenchDatabase,
  fmt,
  hasFlag,
  machineDescription,
  median,
  type BenchDatabase,
} from './support.ts'
import { seedPages } from './ingest.ts'

async function timeMs(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await work()
  return performance.now() - start
}

async function main(): Promise<void> {
  const pages = argNumber('--pages', 1_000_000)
  const runs = argNumber('--runs', 3)
  const vacuum = hasFlag('--vacuum')
  let db: BenchDatabase | null = null
  let pool: pg.Pool | null = null
  const cleanup = async () => {
    await pool?.end().catch(() => {})
    await db?.drop()
  }
  cleanupOnSignal(cleanup)
  try {
    db = await createBenchDatabase()
    pool = new pg.Pool({ connectionString: db.url, max: 4 })
    const hosts = Math.max(10, Math.round(pages / 1000))
    await seedPages(pool, { pages, hosts, baseline: true })
    await pool.query(`UPDATE pages SET changes_per_day = power(10, -2 + 3 * ((id * 7907) % 10007) / 10007.0)`)
    await pool.query(`UPDATE page_schedule SET importance = 1 + (page_id % 7)`)
    await pool
      .query(`UPDATE settings SET value = jsonb_set(value, '{budgetCrawlsPerDay}', to_jsonb($1::float8))`, [pages / 2])
      .catch(async () => {
        throw new Error('could not set the budget: the settings table changed, update this benchmark')
      })
    await pool.query('VACUUM ANALYZE pages, page_schedule')
    const deps = { pool, clock: manualClock(Date.now()), random: createRandom(1) }

    const runMs: number[] = []
    const retimed: number[] = []
    for (let i = 0; i < runs; i++) {
      // --vacuum: the re-runs find the table as autovacuum leaves it, not with the first run's dead rows.
      if (i === 1 && vacuum) await pool.query('VACUUM ANALYZE pages, page_schedule')
      let result: Awaited<ReturnType<typeof runOptimizer>> = null
      runMs.push(await timeMs(async () => (result = await runOptimizer(deps, { trigger: 'api', wait: true }))))
      retimed.push((result as { pagesRetimed: number } | null)?.pagesRetimed ?? -1)
    }
    console.error(`runs: ${runMs.map((t) => fmt(t, 0)).join(', ')} ms; pages re-timed ${retimed.join(', ')}`)

    const readMs: number[] = []
    for (let i = 0; i < runs; i++) {
      readMs.push(
        await timeMs(async () => {
          let after: string | null = null
          for (;;) {
            const chunk = await readOptimizerChunk(pool!, after, 20_000)
            if (chunk.id.length === 0) break
            after = chunk.id.at(-1)!
          }
        }),
      )
    }
    const { rows } = await pool.query<{ epoch: string }>('SELECT epoch::text AS epoch FROM change_epoch WHERE id')
    const scanMs: number[] = []
    for (let i = 0; i < runs; i++) {
      scanMs.push(
        await timeMs(() =>
          pool!.query('SELECT count(*) FROM page_schedule WHERE change_epoch >= $1::bigint', [rows[0]!.epoch]),
        ),
      )
    }
    const updateMs: number[] = []
    for (let i = 0; i < runs; i++) {
      updateMs.push(
        await timeMs(() =>
          pool!.query(
            `UPDATE page_schedule SET crawls_per_day = coalesce(crawls_per_day, 1) * 1.001, next_crawl_at = next_crawl_at + interval '1 second', version = version + 1`,
          ),
        ),
      )
    }

    console.log(
      `# optimiser bounds, ${pages} pages, ${new Date().toISOString().slice(0, 10)}, ${await machineDescription()}`,
    )
    console.log('| step | ms (runs) | median ms |')
    console.log('|---|---:|---:|')
    console.log(`| runOptimizer, first run (re-times ${retimed[0]} pages) | ${fmt(runMs[0]!, 0)} | – |`)
    console.log(
      `| runOptimizer, re-runs${vacuum ? ' after VACUUM' : ''} (re-time ${retimed.slice(1).join(', ')}) | ${runMs
        .slice(1)
        .map((t) => fmt(t, 0))
        .join(', ')} | ${fmt(median(runMs.slice(1)), 0)} |`,
    )
    console.log(
      `| read every page as the optimiser does (chunks of 20,000) | ${readMs.map((t) => fmt(t, 0)).join(', ')} | ${fmt(median(readMs), 0)} |`,
    )
    console.log(
      `| sequential scan for pages stamped since a change epoch | ${scanMs.map((t) => fmt(t, 0)).join(', ')} | ${fmt(median(scanMs), 0)} |`,
    )
    console.log(
      `| one UPDATE moving every page's rate and due time | ${updateMs.map((t) => fmt(t, 0)).join(', ')} | ${fmt(median(updateMs), 0)} |`,
    )
  } finally {
    await cleanup()
  }
}

await main()
