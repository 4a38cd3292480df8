// Signals benchmark: a 50,000-entry sitemap posted to POST /v1/sitemaps, and signals per second through
// POST /v1/signals, against a service on Postgres.
//
//   node --import tsx bench/signals.ts [--pages 100000] [--sitemaps 5] [--seconds 10] [--concurrency 2] [--batch 5000]
//
// A fresh database recrawl_bench_<random> is created on BENCH_ADMIN_URL (default
// postgres://postgres@127.0.0.1:5432/postgres) and dropped at the end. `pages` pages on two hosts are pre-registered
// with one baseline crawl each, so every signal is new (not stale) and is stored, judged pending and counted. The
// service runs as a child process (`src/cli.ts start`, default settings).
// - Sitemap: `--sitemaps` times, a gzip sitemap of the 50,000 pages of host h0 whose lastmods differ per entry and
//   per round (every entry a new signal); the time from sending to the answer. The rounds start once the service's
//   first optimiser run (five seconds after start, over every page) has ended, so that none of them shares the
//   machine with it; the first round, on a service that has not run this code yet, is reported apart.
// - Signals: `--concurrency` clients post batches of `--batch` signals (bare pings with distinct receivedAt) for
//   `--seconds`; signals per second and per hour.
import { gzipSync } from 'node:zlib'
import pg from 'pg'
import { Pool as HttpPool } from 'undici'
import { seedPages } from './ingest.ts'
import {
  argNumber,
  cleanupOnSignal,
  createBenchDatabase,
  fmt,
  machineDescription,
  median,
  startService,
  waitForOptimizerRun,
} from './support.ts'

const PAGES = argNumber('--pages', 100_000)
const SITEMAPS = argNumber('--sitemaps', 5)
const SECONDS = argNumber('--seconds', 10)
const CONCURRENCY = argNumber('--concurrency', 2)
const BATCH = argNumber('--batch', 5000)
const SITEMAP_ENTRIES = 50_000

async function main(): Promise<void> {
  const db = await createBenchDatabase()
  cleanupOnSignal(db.drop)
  let service: Awaited<ReturnType<typeof startService>> | null = null
  try {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 })
    await seedPages(pool, { pages: PAGES, hosts: 2, baseline: true })
    await pool.end()
    service = await startService(db.url)
    const base = service.baseUrl
    const http = new HttpPool(base, { connections: 1 })
    await waitForOptimizerRun(http)
    await http.close()
    // Baselines are 30 days old (bench/ingest.ts): every lastmod of the last 29 days is newer.
    const nowMs = Date.now()

    const sitemapMs: number[] = []
    let bytes = 0
    for (let round = 0; round < SITEMAPS; round++) {
      const entries: string[] = []
      for (let k = 0; k < SITEMAP_ENTRIES; k++) {
        const lastmod = new Date(nowMs - 29 * 86_400_000 + round * 3_600_000 + k * 1000).toISOString()
        entries.push(`<url><loc>https://h0.example/p/${2 * k}</loc><lastmod>${lastmod}</lastmod></url>`)
      }
      const body = gzipSync(
        `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries.join('')}</urlset>`,
      )
      bytes = body.length
      const started = performance.now()
      const res = await fetch(`${base}/v1/sitemaps?url=${encodeURIComponent('https://h0.example/sitemap.xml.gz')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/gzip' },
        body,
      })
      const receipt = (await res.json()) as { entries: number; signals: { accepted: number } }
      sitemapMs.push(performance.now() - started)
      if (!res.ok || receipt.signals.accepted !== SITEMAP_ENTRIES)
        throw new Error(`sitemap round ${round}: ${res.status} ${JSON.stringify(receipt).slice(0, 300)}`)
    }

    let sent = 0
    let next = 0
    const deadline = performance.now() + SECONDS * 1000
    const started = performance.now()
    const client = async () => {
      while (performance.now() < deadline) {
        const signals = []
        for (let j = 0; j < BATCH; j++, next++) {
          signals.push({
            url: `https://h${next % 2}.example/p/${next % PAGES}`,
            source: 'ping',
            receivedAt: new Date(nowMs - 28 * 86_400_000 + next).toISOString(),
          })
        }
        const res = await fetch(`${base}/v1/signals`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ signals }),
        })
        const receipt = (await res.json()) as { accepted: number }
        if (!res.ok) throw new Error(`signals: ${res.status} ${JSON.stringify(receipt).slice(0, 300)}`)
        sent += receipt.accepted
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, client))
    const perSecond = sent / ((performance.now() - started) / 1000)

    console.log(`machine: ${await machineDescription()}`)
    console.log(`pages: ${PAGES} (two hosts), each with a baseline crawl`)
    console.log(
      `sitemap of ${SITEMAP_ENTRIES} entries (${fmt(bytes / 1024, 0)} KiB gzip): first ${fmt(sitemapMs[0]! / 1000, 2)} s, then ${sitemapMs
        .slice(1)
        .map((ms) => fmt(ms / 1000, 2))
        .join(' / ')} s, median of those ${fmt(median(sitemapMs.slice(1)) / 1000, 2)} s`,
    )
    console.log(
      `signals: ${sent} accepted in ${SECONDS} s by ${CONCURRENCY} clients, batches of ${BATCH}: ${fmt(perSecond, 0)} /s = ${fmt((perSecond * 3600) / 1e6, 2)} million an hour`,
    )
  } finally {
    await service?.stop()
    await db.drop()
  }
}

await main()
