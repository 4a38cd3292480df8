/**
 * The host overview ranks hosts from host_rollup (migrations/0022) and computes the numbers of the hosts it
 * returns from their own pages and crawls (docs/design.md "Host overview"). Through ingest, leases, single
 * and bulk deletes, a URL-rule rename that moves pages to another host and pages turning failing or gone,
 * every host with pages is listed exactly once with the numbers a from-scratch aggregate of the tables gives,
 * and after an optimiser run the ranking is the order of those numbers. The migration back-fills the hosts of
 * pages stored before it.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, openDatabaseBefore, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../src/math/units.ts'

interface Overview {
  host: string
  pages: number
  pagesByStatus: { active: number; failing: number; gone: number; redirected: number; noisy: number }
  pagesOverdue: number
  plannedCrawlsPerDay: number
  expectedFreshness: number | null
  crawlsLastDay: number
  failuresLastDay: { total: number }
}

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.body === '' ? null : res.json()
}

/** Every host of the overview in the given order, followed through nextCursor three hosts at a time. */
async function overview(t: TestApp, sort = 'host', order = 'asc'): Promise<{ hosts: Overview[]; total: number }> {
  const hosts: Overview[] = []
  let cursor: string | null = null
  let total: number
  do {
    const body: { hosts: Overview[]; total: number; nextCursor: string | null } = await call(
      t,
      'GET',
      `/v1/host-overview?sort=${sort}&order=${order}&limit=3${cursor === null ? '' : `&cursor=${cursor}`}`,
    )
    hosts.push(...body.hosts)
    total = body.total
    cursor = body.nextCursor
  } while (cursor !== null)
  return { hosts, total }
}

/** The per-host numbers straight from the tables, as of the test clock. */
async function fromScratch(t: TestApp): Promise<Map<string, Omit<Overview, 'host' | 'expectedFreshness'>>> {
  const now = new Date(t.clock.nowMs())
  const pages = await t.db.pool.query<{
    host: string
    pages: number
    active: number
    failing: number
    gone: number
    redirected: number
    noisy: number
    overdue: number
    planned: number
  }>(
    `SELECT p.host, count(*)::int AS pages, count(*) FILTER (WHERE status = 'active')::int AS active,
       count(*) FILTER (WHERE status = 'failing')::int AS failing, count(*) FILTER (WHERE status = 'gone')::int AS gone,
       count(*) FILTER (WHERE status = 'redirected')::int AS redirected, count(*) FILTER (WHERE noisy)::int AS noisy,
       count(*) FILTER (WHERE s.next_crawl_at <= $1 AND NOT coalesce(s.lease_expires_at > $1, false))::int AS overdue,
       coalesce(sum(s.crawls_per_day), 0)::float8 AS planned
     FROM pages p JOIN page_schedule s ON s.page_id = p.id GROUP BY p.host`,
    [now],
  )
  const crawls = await t.db.pool.query<{ host: string; crawls: number; failures: number }>(
    `SELECT p.host, count(*)::int AS crawls,
       count(*) FILTER (WHERE NOT coalesce(o.http_status BETWEEN 200 AND 399, false))::int AS failures
     FROM observations o JOIN pages p ON p.id = o.page_id
     WHERE o.crawled_at > $1::timestamptz - interval '24 hours' AND o.crawled_at <= $1 GROUP BY p.host`,
    [now],
  )
  const byHost = new Map(crawls.rows.map((r) => [r.host, r]))
  return new Map(
    pages.rows.map((r) => [
      r.host,
      {
        pages: r.pages,
        pagesByStatus: { active: r.active, failing: r.failing, gone: r.gone, redirected: r.redirected, noisy: r.noisy },
        pagesOverdue: r.overdue,
        plannedCrawlsPerDay: r.planned,
        crawlsLastDay: byHost.get(r.host)?.crawls ?? 0,
        failuresLastDay: { total: byHost.get(r.host)?.failures ?? 0 },
      },
    ]),
  )
}

/** The overview lists every host with pages once, with the numbers of the from-scratch aggregate. */
async function assertMatchesScratch(t: TestApp, when: string): Promise<Overview[]> {
  const { hosts, total } = await overview(t)
  const scratch = await fromScratch(t)
  assert.deepEqual(
    hosts.map((h) => h.host),
    [...scratch.keys()].sort(),
    `${when}: the hosts listed are the hosts with pages`,
  )
  assert.equal(total, scratch.size, `${when}: total`)
  for (const h of hosts) {
    const expected = scratch.get(h.host)!
    assert.deepEqual(
      {
        pages: h.pages,
        pagesByStatus: h.pagesByStatus,
        pagesOverdue: h.pagesOverdue,
        plannedCrawlsPerDay: h.plannedCrawlsPerDay,
        crawlsLastDay: h.crawlsLastDay,
        failuresLastDay: { total: h.failuresLastDay.total },
      },
      { ...expected, plannedCrawlsPerDay: h.plannedCrawlsPerDay === 0 ? 0 : expected.plannedCrawlsPerDay },
      `${when}: ${h.host}`,
    )
    assert.ok(
      Math.abs(h.plannedCrawlsPerDay - expected.plannedCrawlsPerDay) <= 1e-9 * (1 + expected.plannedCrawlsPerDay),
    )
  }
  return hosts
}

const SORT_VALUES: Record<string, (h: Overview) => number | null> = {
  pages: (h) => h.pages,
  pagesFailing: (h) => h.pagesByStatus.failing,
  pagesOverdue: (h) => h.pagesOverdue,
  plannedCrawlsPerDay: (h) => h.plannedCrawlsPerDay,
  crawlsLastDay: (h) => h.crawlsLastDay,
  failuresLastDay: (h) => h.failuresLastDay.total,
  expectedFreshness: (h) => h.expectedFreshness,
}

/** Right after a refresh of the ranking, every sort is the order of the numbers shown, ties by host. */
async function assertRankedByNumbers(t: TestApp): Promise<void> {
  for (const [sort, value] of Object.entries(SORT_VALUES)) {
    for (const order of ['asc', 'desc'] as const) {
      const { hosts } = await overview(t, sort, order)
      const expected = [...hosts].sort((a, b) => {
        const va = value(a)
        const vb = value(b)
        if (va === null || vb === null) return va === vb ? (a.host < b.host ? -1 : 1) : va === null ? 1 : -1
        if (va !== vb) return order === 'asc' ? va - vb : vb - va
        return a.host < b.host ? -1 : 1
      })
      assert.deepEqual(
        hosts.map((h) => h.host),
        expected.map((h) => h.host),
        `sort=${sort}&order=${order}`,
      )
    }
  }
}

const PAGES = [
  'https://a.example/1',
  'https://a.example/2',
  'https://a.example/3',
  'https://b.example/1',
  'https://b.example/2',
  'https://c.example/1',
  'https://www.d.example/1',
  'https://www.d.example/2',
]

describe('the host overview’s rollup', () => {
  it('stays exact through ingest, leases, deletes, a rename between hosts and pages turning failing or gone', () =>
    withTestApp(async (t) => {
      await call(t, 'PUT', '/v1/pages', { pages: PAGES.map((url) => ({ url })) })
      await assertMatchesScratch(t, 'registered')
      await call(t, 'POST', '/v1/observations', {
        observations: PAGES.map((url, i) => ({ url, crawledAt: iso(T0), contentHash: `h${i}`, httpStatus: 200 })),
      })
      await assertMatchesScratch(t, 'first crawls')
      // a.example/3 answers 404 (failing, then gone), b.example/1 times out, c.example/1 changes.
      for (let i = 1; i <= 4; i++) {
        t.clock.advanceMs(10 * MS_PER_MINUTE)
        const at = iso(T0 + i * 10 * MS_PER_MINUTE)
        await call(t, 'POST', '/v1/observations', {
          observations: [
            { url: 'https://a.example/3', crawledAt: at, httpStatus: 404 },
            { url: 'https://b.example/1', crawledAt: at, fetchError: 'timeout' },
            { url: 'https://c.example/1', crawledAt: at, httpStatus: 200, contentHash: `c${i}` },
          ],
        })
        await assertMatchesScratch(t, `ingest round ${i}`)
      }
      const statuses = (await overview(t)).hosts.find((h) => h.host === 'a.example')!.pagesByStatus
      assert.ok(statuses.failing + statuses.gone >= 1, 'a page of a.example failed')
      await call(t, 'POST', '/v1/optimize')
      t.clock.advanceMs(2 * MS_PER_HOUR)
      const leased = await call(t, 'POST', '/v1/leases', { worker: 'w', limit: 3, leaseSeconds: 600 })
      assert.ok(leased.pages.length > 0, 'pages are due')
      await assertMatchesScratch(t, 'leased')

      await call(t, 'PUT', '/v1/pages', { pages: [{ url: 'https://e.example/1' }] })
      await assertMatchesScratch(t, 'a new host')
      const c = await call(t, 'GET', `/v1/pages/by-url?url=${encodeURIComponent('https://c.example/1')}`)
      await call(t, 'DELETE', `/v1/pages/${c.id}`)
      await assertMatchesScratch(t, 'the only page of c.example deleted')
      const bulk = await call(t, 'POST', '/v1/pages/bulk', { filter: { host: 'b.example' }, action: 'delete' })
      assert.equal(bulk.applied, 2)
      const a1 = await call(t, 'POST', '/v1/pages/bulk', {
        filter: { urlPrefix: 'https://a.example/1' },
        action: 'delete',
      })
      assert.equal(a1.applied, 1)
      const afterDeletes = await assertMatchesScratch(t, 'bulk deletes')
      assert.deepEqual(
        afterDeletes.map((h) => h.host),
        ['a.example', 'e.example', 'www.d.example'],
      )
      await call(t, 'PATCH', '/v1/settings', { urls: { dropWww: true } })
      const renamed = await assertMatchesScratch(t, 'www.d.example renamed to d.example')
      assert.deepEqual(
        renamed.map((h) => h.host),
        ['a.example', 'd.example', 'e.example'],
      )
      await call(t, 'POST', '/v1/optimize')
      await assertRankedByNumbers(t)
    }))

  it('ranks by the numbers as of the last refresh, and a refresh after an optimiser run catches up', () =>
    withTestApp(async (t) => {
      await call(t, 'PUT', '/v1/pages', { pages: PAGES.map((url) => ({ url })) })
      await call(t, 'POST', '/v1/optimize')
      const before = (await overview(t, 'pages', 'desc')).hosts.map((h) => h.host)
      assert.equal(before[0], 'a.example')
      // z.example gets more pages than any host: listed at once, ranked by its pages after the next run.
      await call(t, 'PUT', '/v1/pages', {
        pages: [1, 2, 3, 4, 5].map((i) => ({ url: `https://z.example/${i}` })),
      })
      const stale = await overview(t, 'pages', 'desc')
      assert.equal(stale.total, before.length + 1)
      assert.deepEqual(
        stale.hosts.map((h) => h.host),
        [...before, 'z.example'],
        'a host that got its first pages since the refresh ranks with zeros',
      )
      assert.equal(stale.hosts.at(-1)!.pages, 5, 'its numbers are current')
      await call(t, 'POST', '/v1/optimize')
      assert.equal((await overview(t, 'pages', 'desc')).hosts[0]!.host, 'z.example')
      await assertRankedByNumbers(t)
    }))
})

describe('migration 0022: the rollup of pages stored before it', () => {
  it('lists every host that has pages, with its page counts', async () => {
    const older = await openDatabaseBefore('0022')
    try {
      const { pool } = older.db
      await pool.query(
        `WITH p AS (INSERT INTO pages (url, host, status)
           SELECT 'https://h' || (i % 3) || '.example/' || i, 'h' || (i % 3) || '.example', CASE WHEN i % 4 = 0 THEN 'failing' ELSE 'active' END
           FROM generate_series(1, 10) AS i RETURNING id, host)
         INSERT INTO page_schedule (page_id, host, crawls_per_day) SELECT id, host, 0.5 FROM p`,
      )
      assert.deepEqual(await older.applyNext(), ['0022'])
      const { rows } = await pool.query(
        `SELECT host, pages, pages_failing AS failing, planned_crawls_per_day AS planned FROM host_rollup ORDER BY host`,
      )
      assert.deepEqual(rows, [
        { host: 'h0.example', pages: 3, failing: 0, planned: 1.5 },
        { host: 'h1.example', pages: 4, failing: 1, planned: 2 },
        { host: 'h2.example', pages: 3, failing: 1, planned: 1.5 },
      ])
    } finally {
      await older.close()
    }
  })
})
