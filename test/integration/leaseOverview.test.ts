/**
 * GET /v1/lease-overview (docs/api.md "Lease overview"): leased pages by worker, a worker holding pages past
 * its lease's expiry first, and those pages gone from it once a lease call returns them to the pool.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

async function overview(t: TestApp, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/v1/lease-overview${query}` })
  return { status: res.statusCode, body: res.json(), type: res.headers['content-type'] }
}

async function lease(t: TestApp, worker: string, limit: number, leaseSeconds: number) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker, limit, leaseSeconds } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

test('leased pages by worker: a worker past its lease comes first, and its pages leave once returned', () =>
  withTestApp(async (t) => {
    const pages = Array.from({ length: 10 }, (_, i) => ({ url: `https://w.example/${i}` }))
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })).statusCode, 200)
    t.clock.setMs(T0 + MS_PER_DAY)
    const empty = (await overview(t)).body
    assert.deepEqual([empty.workers, empty.totalWorkers, empty.history.length], [[], 0, 24])

    const big = await lease(t, 'steady', 4, 3600)
    await lease(t, 'steady', 1, 3600)
    const stuck = await lease(t, 'stuck', 2, 60)
    assert.equal(big.pages.length + stuck.pages.length, 6)
    let res = await overview(t)
    assert.equal(res.status, 200)
    assert.equal(res.body.totalWorkers, 2)
    assert.deepEqual(
      res.body.workers.map((w: { worker: string; leases: number; pages: number; pagesPastExpiry: number }) => [
        w.worker,
        w.leases,
        w.pages,
        w.pagesPastExpiry,
      ]),
      [
        ['steady', 2, 5, 0],
        ['stuck', 1, 2, 0],
      ],
    )
    assert.equal(res.body.workers[1].earliestExpiresAt, stuck.expiresAt)

    t.clock.advanceMs(120_000)
    res = await overview(t)
    assert.deepEqual(
      res.body.workers.map((w: { worker: string; pagesPastExpiry: number }) => [w.worker, w.pagesPastExpiry]),
      [
        ['stuck', 2],
        ['steady', 0],
      ],
      'the worker holding pages past its lease comes first',
    )
    assert.equal((await overview(t, '?limit=1')).body.workers.length, 1)

    await lease(t, 'other', 1, 300) // returns the expired pages to the pool
    res = await overview(t)
    assert.equal(
      res.body.workers.find((w: { worker: string }) => w.worker === 'stuck'),
      undefined,
      'returned pages are no longer held',
    )
    for (const q of ['?limit=0', '?limit=x', '?limit=5000', '?hours=0', '?hours=721', '?hours=1.5']) {
      const bad = await overview(t, q)
      assert.equal(bad.status, 400, q)
      assert.match(String(bad.type), /application\/problem\+json/)
    }
  }))

interface HistoryHour {
  hourStart: string
  pagesExpired: number
  pagesGivenBack: number
}

test('lease age by worker, and per hour the leased pages that expired or were given back', () =>
  withTestApp(async (t) => {
    const pages = Array.from({ length: 10 }, (_, i) => ({ url: `https://h.example/${i}` }))
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })).statusCode, 200)
    const startMs = T0 + MS_PER_DAY + 10 * 60_000 // 00:10 of the second day
    t.clock.setMs(startMs)
    const kept = await lease(t, 'steady', 4, 3600)
    const stuck = await lease(t, 'stuck', 2, 60)
    t.clock.advanceMs(30_000)
    const late = await lease(t, 'late', 1, 3600)

    t.clock.advanceMs(90_000) // stuck's lease has expired, unreported
    let res = await overview(t)
    const ages = Object.fromEntries(
      res.body.workers.map((w: { worker: string; oldestLeaseAgeSeconds: number }) => [
        w.worker,
        w.oldestLeaseAgeSeconds,
      ]),
    )
    assert.deepEqual(ages, { stuck: 120, steady: 120, late: 90 })
    // A heartbeat extends a lease; it does not make it younger.
    const extended = await t.app.inject({
      method: 'PATCH',
      url: `/v1/leases/${kept.leaseId}`,
      payload: { leaseSeconds: 7200 },
    })
    assert.equal(extended.statusCode, 200, extended.body)
    res = await overview(t)
    assert.equal(res.body.workers.find((w: { worker: string }) => w.worker === 'steady').oldestLeaseAgeSeconds, 120)

    // Given back: one page released, then the rest of a lease ended early.
    const release = await t.app.inject({
      method: 'POST',
      url: `/v1/leases/${kept.leaseId}/release`,
      payload: { pages: [{ id: kept.pages[0].id, reason: 'retry' }] },
    })
    assert.equal(release.statusCode, 200, release.body)
    assert.equal(release.json().released, 1)
    const ended = await t.app.inject({ method: 'DELETE', url: `/v1/leases/${late.leaseId}` })
    assert.equal(ended.statusCode, 200, ended.body)

    // The next hour: a lease call returns stuck's expired pages to the pool, counted in the hour they expired.
    t.clock.setMs(startMs + MS_PER_HOUR)
    await lease(t, 'other', 1, 300)
    res = await overview(t, '?hours=3')
    const hourOf = (ms: number) => new Date(Math.floor(ms / MS_PER_HOUR) * MS_PER_HOUR).toISOString()
    assert.deepEqual(
      res.body.history.map((h: HistoryHour) => [h.hourStart, h.pagesExpired, h.pagesGivenBack]),
      [
        [hourOf(startMs - MS_PER_HOUR), 0, 0],
        [hourOf(startMs), stuck.pages.length, 2],
        [hourOf(startMs + MS_PER_HOUR), 0, 0],
      ],
    )
    assert.equal(
      res.body.workers.find((w: { worker: string }) => w.worker === 'stuck'),
      undefined,
    )
  }))
