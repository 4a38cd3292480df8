// Lease safety under concurrency (docs/api.md "Schedule"): concurrent workers through HTTP, on the
// embedded database (one connection) and on Postgres (DATABASE_URL, a pool of 8 connections, where
// each test also checks that its run caused no deadlock).
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'

type Leased = { leaseId: string; expiresAt: string; pages: { id: string; url: string; host: string; dueAt: string }[] }

/**
 * Deadlocks Postgres has counted in the test database so far; null on the embedded database (one
 * connection, no deadlock possible). Backends publish their counters at most once a second: wait, then
 * make every pooled connection finish a transaction so it flushes, then read the counter.
 */
async function deadlocks(t: TestApp): Promise<number | null> {
  if (t.db.kind === 'embedded') return null
  await new Promise((r) => setTimeout(r, 1100))
  await Promise.all(Array.from({ length: 8 }, () => t.db.pool.query('SELECT pg_sleep(0.05)')))
  const client = await t.db.pool.connect()
  try {
    await client.query('SELECT pg_stat_clear_snapshot()')
    const { rows } = await client.query(
      'SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()',
    )
    return rows[0].n as number
  } finally {
    client.release()
  }
}

/**
 * A service for one test, with a budget that covers every registration of these tests within the hour
 * (so their pages are due at once) and leaves the hand-out allowance far above what they take; when the
 * test ends, no deadlock may have happened during it.
 */
async function concurrencyApp(ctx: Parameters<typeof testAppFor>[0]) {
  const t = await testAppFor(ctx)
  const res = await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 10_000_000 } })
  assert.equal(res.statusCode, 200, res.body)
  const deadlocksBefore = await deadlocks(t)

  async function lease(body: Record<string, unknown>): Promise<Leased> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: body })
    assert.equal(res.statusCode, 200, res.body)
    return res.json() as Leased
  }

  async function register(urls: string[], importance?: (i: number) => number): Promise<void> {
    for (let i = 0; i < urls.length; i += 5000) {
      const pages = urls
        .slice(i, i + 5000)
        .map((url, j) => (importance ? { url, importance: importance(i + j) } : { url }))
      const res = await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
      assert.equal(res.statusCode, 200, res.body)
    }
  }

  async function politeHost(host: string, minDelaySeconds: number): Promise<void> {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/v1/hosts/${host}`,
      payload: { maxCrawlsPerDay: null, minDelaySeconds },
    })
    assert.equal(res.statusCode, 200, res.body)
  }

  async function complete(grant: Leased, crawledAtMs: number): Promise<void> {
    if (grant.pages.length === 0) return
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: {
        observations: grant.pages.map((p) => ({
          url: p.url,
          crawledAt: iso(crawledAtMs),
          contentHash: 'v1',
          leaseId: grant.leaseId,
        })),
      },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().accepted, grant.pages.length)
  }

  async function assertNoDeadlock(): Promise<void> {
    assert.equal(await deadlocks(t), deadlocksBefore, 'deadlocks detected during the test')
  }

  return { t, lease, register, politeHost, complete, assertNoDeadlock }
}

/** `workers` concurrent loops of `step` until every one of them gets an empty lease. */
async function drain(workers: number, step: (w: number) => Promise<Leased>): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (;;) if ((await step(w)).pages.length === 0) return
    }),
  )
}

const count = (values: Iterable<string>) => {
  const n = new Map<string, number>()
  for (const v of values) n.set(v, (n.get(v) ?? 0) + 1)
  return n
}

describe('leases under concurrency', () => {
  it('8 workers holding leases never share a page; expiry re-offers each page exactly once; completion ends it', async (ctx) => {
    const { t, lease, register, complete, assertNoDeadlock } = await concurrencyApp(ctx)
    const urls = Array.from({ length: 1200 }, (_, i) => `https://h${i % 24}.held.example/p${i}`)
    await register(urls)
    const hosts = [...new Set(urls.map((u) => new URL(u).host))]
    t.clock.setMs(T0 + 1000)

    // Round 1: nobody completes, so every lease is still held when the next worker asks.
    const round1: string[] = []
    await drain(8, async (w) => {
      const g = await lease({ worker: `held-${w}`, limit: 15, leaseSeconds: 120, hosts })
      round1.push(...g.pages.map((p) => p.url))
      return g
    })
    assert.equal(round1.length, urls.length, 'every due page handed out')
    assert.equal(count(round1).size, urls.length, 'a page was handed out twice while leased')
    const held = await t.db.pool.query(
      'SELECT count(*)::int AS n FROM page_schedule WHERE lease_id IS NOT NULL AND host = ANY($1)',
      [hosts],
    )
    assert.equal(held.rows[0].n, urls.length)

    // Round 2: every lease has expired; each page comes back exactly once, to a new lease.
    t.clock.advanceMs(121_000)
    const round2: string[] = []
    const round2Leases = new Set<string>()
    await drain(8, async (w) => {
      const g = await lease({ worker: `again-${w}`, limit: 25, leaseSeconds: 120, hosts })
      round2.push(...g.pages.map((p) => p.url))
      if (g.pages.length > 0) round2Leases.add(g.leaseId)
      return g
    })
    assert.equal(round2.length, urls.length, 'expired leases re-offer every page')
    assert.equal(count(round2).size, urls.length, 'a re-offered page was handed out twice')
    const owners = await t.db.pool.query(
      'SELECT DISTINCT lease_id::text AS id FROM page_schedule WHERE host = ANY($1)',
      [hosts],
    )
    assert.ok(
      owners.rows.every((r: { id: string }) => round2Leases.has(r.id)),
      'every page is held by a lease of round 2',
    )

    // Round 3: expired again; workers complete what they take, so the pages leave the pool.
    t.clock.advanceMs(121_000)
    const crawledAt = t.clock.nowMs()
    const round3: string[] = []
    await drain(8, async (w) => {
      const g = await lease({ worker: `done-${w}`, limit: 20, leaseSeconds: 120, hosts })
      round3.push(...g.pages.map((p) => p.url))
      await complete(g, crawledAt)
      return g
    })
    assert.equal(round3.length, urls.length)
    assert.equal(count(round3).size, urls.length)
    const left = await t.db.pool.query(
      'SELECT count(*) FILTER (WHERE lease_id IS NOT NULL)::int AS leased, count(*) FILTER (WHERE next_crawl_at <= $2)::int AS due FROM page_schedule WHERE host = ANY($1)',
      [hosts, new Date(t.clock.nowMs())],
    )
    assert.deepEqual(left.rows[0], { leased: 0, due: 0 })
    await assertNoDeadlock()
  })

  it('16 workers with an advancing clock never hand out two pages of a polite host closer than its delay', async (ctx) => {
    const { t, lease, register, politeHost, assertNoDeadlock } = await concurrencyApp(ctx)
    const polite = ['p0.spacing.example', 'p1.spacing.example', 'p2.spacing.example']
    for (const h of polite) await politeHost(h, 5)
    const urls = [
      ...polite.flatMap((h) => Array.from({ length: 40 }, (_, i) => `https://${h}/${i}`)),
      ...Array.from({ length: 600 }, (_, i) => `https://n${i % 12}.spacing.example/${i}`),
    ]
    t.clock.setMs(T0 + 1_000_000)
    await register(urls)
    const hosts = [...new Set(urls.map((u) => new URL(u).host))]
    const start = t.clock.nowMs()
    const end = start + 30_000
    const grants: { host: string; atMs: number; leaseId: string }[] = []
    const normal: string[] = []
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        while (t.clock.nowMs() < end) {
          const g = await lease({ worker: `s${w}`, limit: 10, leaseSeconds: 600, hosts })
          const atMs = Date.parse(g.expiresAt) - 600_000
          for (const p of g.pages) {
            if (polite.includes(p.host)) grants.push({ host: p.host, atMs, leaseId: g.leaseId })
            else normal.push(p.url)
          }
          t.clock.advanceMs(50)
        }
      }),
    )
    assert.equal(count(normal).size, normal.length, 'a page was handed out twice')
    assert.equal(normal.length, 600, 'the polite hosts did not hold back the others')
    for (const h of polite) {
      const times = grants
        .filter((g) => g.host === h)
        .map((g) => g.atMs)
        .sort((a, b) => a - b)
      // Due the whole time: one page every 5 s over 30 s (6 or 7, depending on where the calls fall).
      assert.ok(times.length >= 5 && times.length <= 7, `${h}: ${times.length} pages in 30 s`)
      for (let i = 1; i < times.length; i++)
        assert.ok(times[i]! - times[i - 1]! >= 5000, `${h}: ${times[i]! - times[i - 1]!} ms apart`)
    }
    assert.equal(
      count(grants.map((g) => `${g.leaseId} ${g.host}`)).size,
      grants.length,
      'two pages of a polite host in one lease',
    )
    await assertNoDeadlock()
  })

  it('a polite host with a large backlog takes one slot per delay and does not crowd out other hosts', async (ctx) => {
    const { t, lease, register, politeHost, assertNoDeadlock } = await concurrencyApp(ctx)
    // The polite host's 2,000 pages are the most overdue; the other hosts' 300 pages are due 1 s later.
    const polite = 'backlog.hol.example'
    await politeHost(polite, 60)
    t.clock.setMs(T0 + 2_000_000)
    await register(Array.from({ length: 2000 }, (_, i) => `https://${polite}/${i}`))
    t.clock.advanceMs(1000)
    await register(Array.from({ length: 300 }, (_, i) => `https://o${i % 3}.hol.example/${i}`))
    t.clock.advanceMs(1000)
    const hosts = [polite, 'o0.hol.example', 'o1.hol.example', 'o2.hol.example']
    const fromPolite = (g: Leased) => g.pages.filter((p) => p.host === polite).length

    const first = await lease({ worker: 'a', limit: 100, hosts })
    assert.equal(first.pages.length, 100, 'a full lease despite the backlog')
    assert.equal(fromPolite(first), 1)
    assert.equal(first.pages[0]!.host, polite, 'the polite page is the most overdue, so it comes first')
    const second = await lease({ worker: 'b', limit: 100, hosts })
    assert.equal(second.pages.length, 100)
    assert.equal(fromPolite(second), 0, 'the polite host is inside its delay')
    t.clock.advanceMs(60_000)
    const third = await lease({ worker: 'c', limit: 100, hosts })
    assert.equal(third.pages.length, 100)
    assert.equal(fromPolite(third), 1)
    const fourth = await lease({ worker: 'd', limit: 100, hosts })
    assert.equal(fourth.pages.length, 2, 'the rest of the other hosts’ pages')
    assert.equal(fromPolite(fourth), 0)
    await assertNoDeadlock()
  })

  it('hands out the most overdue pages first, higher importance first among equally overdue ones', async (ctx) => {
    const { t, lease, register, assertNoDeadlock } = await concurrencyApp(ctx)
    t.clock.setMs(T0 + 3_000_000)
    const importance = [1, 5, 3, 0, 4, 2]
    await register(
      importance.map((_, i) => `https://order.example/a${i}`),
      (i) => importance[i]!,
    )
    t.clock.advanceMs(1000)
    await register(['https://order.example/late1', 'https://order.example/late2'], () => 100)
    t.clock.advanceMs(1000)
    const g = await lease({ worker: 'o', limit: 4, hosts: ['order.example'] })
    assert.deepEqual(
      g.pages.map((p) => p.url),
      ['https://order.example/a1', 'https://order.example/a4', 'https://order.example/a2', 'https://order.example/a5'],
    )
    const rest = await lease({ worker: 'o', limit: 10, hosts: ['order.example'] })
    assert.deepEqual(
      rest.pages.map((p) => p.url),
      [
        'https://order.example/a0',
        'https://order.example/a3',
        'https://order.example/late1',
        'https://order.example/late2',
      ],
    )
    await assertNoDeadlock()
  })

  it('an expired lease of a polite host returns its page without breaking the host’s delay', async (ctx) => {
    const { t, lease, register, politeHost, assertNoDeadlock } = await concurrencyApp(ctx)
    const host = 'expiry.polite.example'
    await politeHost(host, 60)
    t.clock.setMs(T0 + 4_000_000)
    await register(Array.from({ length: 3 }, (_, i) => `https://${host}/${i}`))
    const first = await lease({ worker: 'x', limit: 10, leaseSeconds: 30, hosts: [host] })
    assert.equal(first.pages.length, 1)
    t.clock.advanceMs(31_000)
    assert.equal(
      (await lease({ worker: 'y', limit: 10, hosts: [host] })).pages.length,
      0,
      'expired, but the host waits 60 s',
    )
    t.clock.advanceMs(30_000)
    const again = await lease({ worker: 'y', limit: 10, hosts: [host] })
    assert.deepEqual(
      again.pages.map((p) => p.url),
      first.pages.map((p) => p.url),
      'the expired page is the most overdue one',
    )
    // The old lease no longer holds it: completing with the old leaseId leaves the new lease in place.
    await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: {
        observations: [
          { url: first.pages[0]!.url, crawledAt: iso(t.clock.nowMs()), contentHash: 'v1', leaseId: first.leaseId },
        ],
      },
    })
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/${again.pages[0]!.id}` })).json()
    assert.equal(page.lease?.leaseId, again.leaseId)
    await assertNoDeadlock()
  })
})
