import { describe, it, test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, startTestApp, testAppFor } from '../helpers/testApp.ts'

/**
 * A service for one test, with a budget that covers every registration of these tests within the hour
 * (so their pages are due at once) and leaves the hand-out allowance far above what they take.
 */
async function leaseApp(ctx: Parameters<typeof testAppFor>[0]) {
  const t = await testAppFor(ctx)
  const res = await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 10_000_000 } })
  assert.equal(res.statusCode, 200, res.body)
  return {
    t,
    lease: (body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/v1/leases', payload: body }),
  }
}
type Leased = { leaseId: string; expiresAt: string; pages: { id: string; url: string; host: string; dueAt: string }[] }

describe('leases', () => {
  it('16 concurrent workers drain 2,000 due pages: each handed out exactly once', async (ctx) => {
    const { t, lease } = await leaseApp(ctx)
    const urls = Array.from({ length: 2000 }, (_, i) => `https://h${i % 40}.drain.example/p${i}`)
    for (let i = 0; i < urls.length; i += 1000) {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/v1/pages',
        payload: { pages: urls.slice(i, i + 1000).map((url) => ({ url })) },
      })
      assert.equal(res.statusCode, 200)
    }
    const handed = new Map<string, number>()
    const worker = async (w: number) => {
      for (;;) {
        const res = await lease({ worker: `w${w}`, limit: 25, leaseSeconds: 600 })
        assert.equal(res.statusCode, 200, res.body)
        const grant = res.json() as Leased
        if (grant.pages.length === 0) return
        for (const p of grant.pages) handed.set(p.url, (handed.get(p.url) ?? 0) + 1)
        const done = await t.app.inject({
          method: 'POST',
          url: '/v1/observations',
          payload: {
            observations: grant.pages.map((p) => ({
              url: p.url,
              crawledAt: iso(T0),
              contentHash: 'x',
              leaseId: grant.leaseId,
            })),
          },
        })
        assert.equal(done.json().accepted, grant.pages.length)
      }
    }
    await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)))
    assert.equal(handed.size, urls.length)
    assert.ok(
      [...handed.values()].every((n) => n === 1),
      'a page was handed out twice',
    )
    const leased = await t.db.pool.query('SELECT count(*)::int AS n FROM page_schedule WHERE lease_id IS NOT NULL')
    assert.equal(leased.rows[0].n, 0, 'every lease was completed by its observation')
    const first = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${urls[0]}` })).json()
    assert.ok(Date.parse(first.nextCrawlAt) > T0, 'a crawled page is due again only later')
  })

  it('respects a host’s minimum delay between leased pages', async (ctx) => {
    const { t, lease } = await leaseApp(ctx)
    await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: Array.from({ length: 5 }, (_, i) => ({ url: `https://polite.example/${i}` })) },
    })
    const put = await t.app.inject({
      method: 'PUT',
      url: '/v1/hosts/polite.example',
      payload: { maxCrawlsPerDay: null, minDelaySeconds: 60 },
    })
    assert.equal(put.statusCode, 200, put.body)
    assert.equal(put.json().pages, 5)
    const a = (await lease({ worker: 'a', limit: 10 })).json() as Leased
    const b = (await lease({ worker: 'b', limit: 10 })).json() as Leased
    assert.equal(a.pages.filter((p) => p.host === 'polite.example').length, 1)
    assert.equal(b.pages.filter((p) => p.host === 'polite.example').length, 0)
    t.clock.advanceMs(59_000)
    assert.equal(((await lease({ worker: 'c', limit: 10 })).json() as Leased).pages.length, 0)
    t.clock.advanceMs(2_000)
    const d = (await lease({ worker: 'd', limit: 10, hosts: ['polite.example'] })).json() as Leased
    assert.equal(d.pages.length, 1)
    assert.notEqual(d.pages[0]!.url, a.pages[0]!.url)
    const hosts = (await t.app.inject({ method: 'GET', url: '/v1/hosts' })).json()
    assert.deepEqual(hosts.hosts, [
      {
        host: 'polite.example',
        maxCrawlsPerDay: null,
        minDelaySeconds: 60,
        crawlDelaySeconds: null,
        throttleDelaySeconds: null,
        paceSeconds: 60,
        pages: 5,
      },
    ])
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/hosts/polite.example' })).statusCode, 204)
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/hosts/polite.example' })).statusCode, 404)
  })

  it('expired leases return their pages; an early release returns them at once', async (ctx) => {
    const { t, lease } = await leaseApp(ctx)
    await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: [{ url: 'https://exp.example/1' }, { url: 'https://exp.example/2' }] },
    })
    const g = (await lease({ worker: 'slow', limit: 10, leaseSeconds: 30, hosts: ['exp.example'] })).json() as Leased
    assert.equal(g.pages.length, 2)
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/${g.pages[0]!.id}` })).json()
    assert.equal(page.lease.leaseId, g.leaseId)
    assert.equal(
      ((await lease({ worker: 'other', limit: 10, hosts: ['exp.example'] })).json() as Leased).pages.length,
      0,
    )
    t.clock.advanceMs(31_000)
    const again = (await lease({ worker: 'other', limit: 10, hosts: ['exp.example'] })).json() as Leased
    assert.equal(again.pages.length, 2)
    // The expired lease no longer holds anything; the new one can be released early.
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/leases/${g.leaseId}` })).statusCode, 404)
    const rel = await t.app.inject({ method: 'DELETE', url: `/v1/leases/${again.leaseId}` })
    assert.deepEqual(rel.json(), { released: 2 })
    assert.equal(
      ((await lease({ worker: 'third', limit: 10, hosts: ['exp.example'] })).json() as Leased).pages.length,
      2,
    )
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/leases/not-a-uuid' })).statusCode, 400)
  })

  it('a host that loses its delay gets all its due pages handed out again; the schedule shows polite pages', async (ctx) => {
    const { t, lease } = await leaseApp(ctx)
    const host = 'unpolite.example'
    const urls = Array.from({ length: 12 }, (_, i) => `https://${host}/${i}`)
    await t.app.inject({
      method: 'PUT',
      url: `/v1/hosts/${host}`,
      payload: { maxCrawlsPerDay: null, minDelaySeconds: 600 },
    })
    await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: urls.map((url) => ({ url })) } })
    t.clock.advanceMs(1000)
    const first = (await lease({ worker: 'a', limit: 10, hosts: [host] })).json() as Leased
    assert.equal(first.pages.length, 1)
    const marked = async () =>
      (await t.db.pool.query('SELECT count(*)::int AS n FROM page_schedule WHERE host = $1 AND polite', [host])).rows[0]
        .n as number
    assert.equal(await marked(), 12, 'the lease moved the host’s pages out of the global due order')
    // The host's other pages are waiting for their turn, and the schedule lists them in due order.
    const preview = (
      await t.app.inject({ method: 'GET', url: `/v1/schedule?limit=1000&until=${iso(t.clock.nowMs())}` })
    ).json()
    const waiting = preview.items.filter((i: { host: string }) => i.host === host)
    assert.equal(waiting.length, 11)
    const due = preview.items.map((i: { dueAt: string }) => Date.parse(i.dueAt))
    assert.deepEqual(
      due,
      [...due].sort((x: number, y: number) => x - y),
    )

    // Without the delay they are ordinary pages again: a lease takes them all at once.
    const put = await t.app.inject({
      method: 'PUT',
      url: `/v1/hosts/${host}`,
      payload: { maxCrawlsPerDay: 100, minDelaySeconds: null },
    })
    assert.equal(put.statusCode, 200)
    assert.equal(await marked(), 0)
    const rest = (await lease({ worker: 'b', limit: 50, hosts: [host] })).json() as Leased
    assert.equal(rest.pages.length, 11)
    assert.ok(!rest.pages.some((p) => p.url === first.pages[0]!.url))

    // Polite again, then the limits removed altogether: the same.
    await t.app.inject({
      method: 'PUT',
      url: `/v1/hosts/${host}`,
      payload: { maxCrawlsPerDay: null, minDelaySeconds: 600 },
    })
    t.clock.advanceMs(31 * 60_000) // both leases (300 s) have expired
    assert.equal(((await lease({ worker: 'c', limit: 50, hosts: [host] })).json() as Leased).pages.length, 1)
    assert.equal(await marked(), 12)
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/hosts/${host}` })).statusCode, 204)
    assert.equal(await marked(), 0)
    assert.equal(((await lease({ worker: 'd', limit: 50, hosts: [host] })).json() as Leased).pages.length, 11)
  })

  it('validates lease requests and previews the schedule in due order', async (ctx) => {
    const { t, lease } = await leaseApp(ctx)
    for (const body of [
      {},
      { worker: '' },
      { worker: 'w', limit: 0 },
      { worker: 'w', limit: 5000 },
      { worker: 'w', leaseSeconds: 1 },
    ]) {
      const res = await lease(body)
      assert.equal(res.statusCode, 400, JSON.stringify(body))
    }
    const registered = await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: Array.from({ length: 20 }, (_, i) => ({ url: `https://preview.example/${i}` })) },
    })
    assert.equal(registered.statusCode, 200, registered.body)
    const s = (await t.app.inject({ method: 'GET', url: '/v1/schedule?limit=50' })).json()
    assert.equal(s.items.length, 20)
    const due = s.items.map((i: { dueAt: string }) => Date.parse(i.dueAt))
    assert.deepEqual(
      due,
      [...due].sort((x: number, y: number) => x - y),
    )
    const until = (await t.app.inject({ method: 'GET', url: `/v1/schedule?until=${iso(T0 - 1)}` })).json()
    assert.ok(until.items.every((i: { dueAt: string }) => Date.parse(i.dueAt) <= T0 - 1))
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/schedule?until=soon' })).statusCode, 400)
  })
})

test('a lease after the connection was replaced still works (named statements are prepared again)', async () => {
  const app = await startTestApp()
  try {
    await app.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: [{ url: 'https://reconnect.example/a' }, { url: 'https://reconnect.example/b' }] },
    })
    const first = await app.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit: 1 } })
    assert.equal(first.statusCode, 200, first.body)
    // Replace every pooled connection, as an idle timeout or a dropped connection would.
    const clients = await Promise.all(
      Array.from({ length: app.db.kind === 'embedded' ? 1 : 2 }, () => app.db.pool.connect()),
    )
    for (const c of clients) c.release(true)
    const second = await app.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit: 1 } })
    assert.equal(second.statusCode, 200, second.body)
    assert.equal(second.json().pages.length, 1)
  } finally {
    await app.close()
  }
})
