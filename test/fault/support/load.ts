import type pg from 'pg'

/** One crawl report as sent: its page's URL and crawl time (ms). */
interface SentItem {
  url: string
  crawledAtMs: number
}

/** A POST /v1/observations as sent; `acked` once a 200 said every item was accepted or late. */
export interface SentBatch {
  items: SentItem[]
  acked: boolean
}

/** Answers seen by the load besides 200, by status (0 = no HTTP answer: refused, reset, aborted). */
type StatusCounts = Map<number, number>

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Crawl times unique across the whole test process, increasing, never in the future: every item
 * is a new crawl of its page (no duplicates), and a page's reports from different writers may
 * arrive out of order (stored as late).
 */
export function crawlClock(): () => number {
  let last = 0
  return () => {
    last = Math.max(Date.now() - 60_000, last + 1)
    return last
  }
}

interface HttpAnswer {
  status: number
  headers: Headers
  body: unknown
}

/** A fetch that never throws: status 0 when no HTTP answer came (connection refused, reset, timeout). */
export async function request(
  url: string,
  init: { method: string; body?: unknown; timeoutMs?: number; headers?: Record<string, string> },
): Promise<HttpAnswer> {
  try {
    const res = await fetch(url, {
      method: init.method,
      headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
    })
    const text = await res.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON (e.g. /metrics)
    }
    return { status: res.status, headers: res.headers, body }
  } catch {
    return { status: 0, headers: new Headers(), body: null }
  }
}

export interface IngestLoad {
  batches: SentBatch[]
  statuses: StatusCounts
  /** Answers that break the contract: a non-problem error body, an item rejected, a 5xx other than 503. */
  anomalies: string[]
  ackedBatches(): number
  stop(): Promise<void>
}

/**
 * `writers` concurrent crawlers, each posting batches of `batchSize` reports for pages drawn from
 * `urls` (shared by all writers, so batches contend for the same rows) to whatever `target()`
 * names at the time (null: pause). A batch counts as acknowledged only on a 200 whose
 * accepted + late covers every item.
 */
export function startIngestLoad(options: {
  target: () => string | null
  writers: number
  urls: readonly string[]
  batchSize: number
  seed?: number
}): IngestLoad {
  const batches: SentBatch[] = []
  const statuses: StatusCounts = new Map()
  const anomalies: string[] = []
  const nextCrawlMs = crawlClock()
  let stopped = false
  let draw = (options.seed ?? 1) >>> 0
  const random = () => {
    // xorshift32: a fixed sequence, independent of the service's generator
    draw ^= draw << 13
    draw >>>= 0
    draw ^= draw >>> 17
    draw ^= draw << 5
    draw >>>= 0
    return draw / 4294967296
  }

  const writer = async () => {
    while (!stopped) {
      const base = options.target()
      if (base === null) {
        await sleep(20)
        continue
      }
      const chosen = new Set<string>()
      while (chosen.size < Math.min(options.batchSize, options.urls.length))
        chosen.add(options.urls[Math.floor(random() * options.urls.length)]!)
      const items = [...chosen].map((url) => ({ url, crawledAtMs: nextCrawlMs() }))
      const batch: SentBatch = { items, acked: false }
      batches.push(batch)
      const res = await request(`${base}/v1/observations`, {
        method: 'POST',
        body: {
          observations: items.map((it) => ({
            url: it.url,
            crawledAt: new Date(it.crawledAtMs).toISOString(),
            changed: random() < 0.4,
            httpStatus: 200,
          })),
        },
      })
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (res.status === 200) {
        const body = res.body as { accepted: number; late: number; duplicates: number; rejected: unknown[] }
        if (body.rejected.length > 0 || body.duplicates > 0 || body.accepted + body.late !== items.length) {
          anomalies.push(`200 that did not take every item: ${JSON.stringify(body).slice(0, 300)}`)
        } else {
          batch.acked = true
        }
      } else if (res.status === 0) {
        await sleep(20)
      } else {
        const problemJson = res.headers.get('content-type')?.startsWith('application/problem+json')
        if (res.status !== 503 || !problemJson || !res.headers.get('retry-after')) {
          anomalies.push(
            `${res.status} ${res.headers.get('content-type')} retry-after=${res.headers.get('retry-after')}: ${JSON.stringify(res.body).slice(0, 300)}`,
          )
        }
        await sleep(20)
      }
    }
  }
  const running = Array.from({ length: options.writers }, () => writer())
  return {
    batches,
    statuses,
    anomalies,
    ackedBatches: () => batches.filter((b) => b.acked).length,
    async stop() {
      stopped = true
      await Promise.all(running)
    },
  }
}

export interface HistoryCheck {
  ackedItems: number
  storedObservations: number
  /** Acknowledged reports that are not stored. */
  missing: string[]
  /** Unacknowledged batches of which some but not all items are stored (a batch is one transaction). */
  partialBatches: number
  /** Stored reports nobody sent. */
  phantoms: string[]
  /** Pages whose counters (crawls, intervals, changes, first/last crawl) disagree with their stored history. */
  counterMismatches: string[]
}

/**
 * Compares what the load sent with what the database holds: every acknowledged report is stored,
 * every batch is all or nothing, nothing else is stored, and every page's counters are those its
 * stored history implies (src/domain/ingest.ts): crawls = stored observations, intervals = applied
 * ones, changes = applied changes, last crawl = latest in-order crawl, first crawl = earliest stored.
 */
export async function checkHistory(pool: pg.Pool, batches: readonly SentBatch[]): Promise<HistoryCheck> {
  const { rows } = await pool.query<{ url: string; ms: string }>(
    `SELECT p.url, (extract(epoch FROM o.crawled_at) * 1000)::bigint::text AS ms FROM observations o JOIN pages p ON p.id = o.page_id`,
  )
  const stored = new Set(rows.map((r) => `${r.url}|${r.ms}`))
  const sent = new Set<string>()
  const missing: string[] = []
  let partialBatches = 0
  let ackedItems = 0
  for (const b of batches) {
    let present = 0
    for (const it of b.items) {
      const key = `${it.url}|${it.crawledAtMs}`
      sent.add(key)
      if (stored.has(key)) present++
      else if (b.acked) missing.push(key)
    }
    if (b.acked) ackedItems += b.items.length
    else if (present > 0 && present < b.items.length) partialBatches++
  }
  const phantoms = [...stored].filter((k) => !sent.has(k))
  const mismatches = await pool.query<{ url: string; detail: string }>(
    `SELECT p.url, concat_ws(' ', 'crawls', p.crawls, h.crawls, 'intervals', p.intervals, h.intervals, 'changes', p.changes, h.changes,
                             'last', p.last_crawled_at, h.last_in_order, 'first', p.first_crawled_at, h.first) AS detail
       FROM pages p
       LEFT JOIN LATERAL (
         SELECT count(*)::int AS crawls,
                count(*) FILTER (WHERE o.applied)::int AS intervals,
                count(*) FILTER (WHERE o.applied AND o.changed)::int AS changes,
                max(o.crawled_at) FILTER (WHERE NOT o.late) AS last_in_order,
                min(o.crawled_at) AS first
           FROM observations o WHERE o.page_id = p.id
       ) h ON true
      WHERE p.crawls <> h.crawls OR p.intervals <> h.intervals OR p.changes <> h.changes
         OR p.last_crawled_at IS DISTINCT FROM h.last_in_order OR p.first_crawled_at IS DISTINCT FROM h.first`,
  )
  return {
    ackedItems,
    storedObservations: stored.size,
    missing,
    partialBatches,
    phantoms,
    counterMismatches: mismatches.rows.map((r) => `${r.url}: ${r.detail}`),
  }
}
