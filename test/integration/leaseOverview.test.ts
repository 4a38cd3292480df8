/**
 * GET /v1/lease-overview (docs/api.md "Lease overview"): leased pages by worker, a worker holding pages past
 * its lease's expiry first, and those pages gone from it once a lease call returns them to the pool.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

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
    assert.deepEqual((await overview(t)).body, { workers: [], totalWorkers: 0 })

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
    for (const q of ['?limit=0', '?limit=x', '?limit=5000']) {
      const bad = await overview(t, q)
      assert.equal(bad.status, 400, q)
      assert.match(String(bad.type), /application\/problem\+json/)
    }
  }))
