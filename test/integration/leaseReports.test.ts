/** A crawl report is never lost because of its lease: the crawl is stored and applied, and the response says why the lease was not completed. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'

type Leased = { leaseId: string; expiresAt: string; pages: { id: string; url: string }[] }

const report = (t: TestApp, items: Record<string, unknown>[]) =>
  t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: items } })

async function leaseOne(t: TestApp, url: string, leaseSeconds = 300): Promise<Leased> {
  assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [{ url }] } })).statusCode, 200)
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/leases',
    payload: { worker: 'w', limit: 10, leaseSeconds },
  })
  const grant = res.json() as Leased
  assert.equal(grant.pages.length, 1)
  return grant
}

const crawls = async (t: TestApp, url: string) =>
  (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })).json()
    .crawls as number

test('malformed and unknown lease ids: the crawl is stored and applied, the response lists each item', () =>
  withTestApp(async (t) => {
    const url = 'https://lease.example/a'
    const res = await report(t, [
      { url, crawledAt: iso(T0), contentHash: 'h1', leaseId: '7f1c…' },
      { url, crawledAt: iso(T0 + 60_000), contentHash: 'h2', leaseId: '00000000-0000-4000-8000-000000000000' },
    ])
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.accepted, 2)
    assert.deepEqual(body.rejected, [])
    assert.deepEqual(
      body.leaseNotCompleted.map((x: { index: number }) => x.index),
      [0, 1],
    )
    assert.match(body.leaseNotCompleted[0].reason, /not a lease id/)
    assert.match(body.leaseNotCompleted[1].reason, /under no lease/)
    assert.equal(await crawls(t, url), 2)
  }))

test('a matching lease is completed and not listed; a retried report still completes it', () =>
  withTestApp(async (t) => {
    const url = 'https://lease.example/b'
    const grant = await leaseOne(t, url)
    const first = (await report(t, [{ url, crawledAt: iso(T0), contentHash: 'h', leaseId: grant.leaseId }])).json()
    assert.deepEqual(first.leaseNotCompleted, [])
    const held = await t.db.pool.query('SELECT count(*)::int AS n FROM page_schedule WHERE lease_id IS NOT NULL')
    assert.equal(held.rows[0].n, 0)
    const again = (await report(t, [{ url, crawledAt: iso(T0), contentHash: 'h', leaseId: grant.leaseId }])).json()
    assert.equal(again.duplicates, 1)
    assert.equal(again.leaseNotCompleted.length, 1, 'the lease was already completed by the first report')
  }))

test('an expired lease: the crawl is applied and the page released; after another worker got the page, its lease stays', () =>
  withTestApp(async (t) => {
    const url = 'https://lease.example/c'
    const grant = await leaseOne(t, url, 5)
    t.clock.advanceMs(10_000)
    const late = (
      await report(t, [{ url, crawledAt: iso(T0 + 8_000), contentHash: 'h', leaseId: grant.leaseId }])
    ).json()
    assert.equal(late.accepted, 1)
    assert.equal(late.leaseNotCompleted.length, 1)
    assert.match(late.leaseNotCompleted[0].reason, /^expired/)
    const held = await t.db.pool.query('SELECT count(*)::int AS n FROM page_schedule WHERE lease_id IS NOT NULL')
    assert.equal(held.rows[0].n, 0, 'the expired lease was cleared by the report')

    // Second page: the lease expires and a second worker takes the page before the first one reports.
    const url2 = 'https://lease.example/d'
    const first = await leaseOne(t, url2, 5)
    t.clock.advanceMs(10_000)
    const second = (
      await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w2', limit: 10 } })
    ).json() as Leased
    assert.deepEqual(
      second.pages.map((p) => p.url),
      [url2],
    )
    const stale = (
      await report(t, [{ url: url2, crawledAt: iso(t.clock.nowMs() - 1000), contentHash: 'h', leaseId: first.leaseId }])
    ).json()
    assert.equal(stale.accepted, 1)
    assert.match(stale.leaseNotCompleted[0].reason, /another lease/)
    const row = await t.db.pool.query(
      'SELECT s.lease_id::text AS id FROM page_schedule s JOIN pages p ON p.id = s.page_id WHERE p.url = $1',
      [url2],
    )
    assert.equal(row.rows[0].id, second.leaseId, 'the second worker still holds the page')
    const done = (
      await report(t, [{ url: url2, crawledAt: iso(t.clock.nowMs()), contentHash: 'h', leaseId: second.leaseId }])
    ).json()
    assert.deepEqual(done.leaseNotCompleted, [])
  }))
