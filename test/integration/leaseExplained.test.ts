/**
 * A short or empty lease says why and when to ask again (docs/api.md "Why a lease is short"): nothing due, the
 * budget's allowance, paced hosts, a host paused after a 429.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

const lease = async (t: TestApp, body: Record<string, unknown> = {}) => {
  const res = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit: 10, ...body } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

describe('leases explain themselves', () => {
  it('a full lease says nothing; an empty pool says so; a page due later gives its time', async (ctx) => {
    const t = await testAppFor(ctx)
    const empty = await lease(t)
    assert.deepEqual(
      { ...empty, leaseId: null, expiresAt: null },
      {
        leaseId: null,
        expiresAt: null,
        pages: [],
        limitedBy: ['nothingDue'],
        retryAfterSeconds: null,
        nextDueAt: null,
        pacedHosts: [],
      },
    )
    const url = 'https://later.example/a'
    // A baseline crawl now: the page is due again in a day (the prior, one change a day).
    await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: { observations: [{ url, crawledAt: iso(T0) }] },
    })
    const notYet = await lease(t)
    assert.deepEqual(notYet.limitedBy, ['nothingDue'])
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })).json()
    assert.equal(notYet.nextDueAt, page.dueAt)
    assert.equal(notYet.retryAfterSeconds, Math.ceil((Date.parse(page.dueAt) - T0) / 1000))

    t.clock.setMs(Date.parse(page.dueAt))
    const full = await lease(t, { limit: 1 })
    assert.equal(full.pages.length, 1)
    assert.deepEqual([full.limitedBy, full.retryAfterSeconds, full.nextDueAt, full.pacedHosts], [[], 0, null, []])
  })

  it('the budget allowance, a paced host and a host paused after a 429 are named, with when to come back', async (ctx) => {
    const t = await testAppFor(ctx)
    // A budget of 48 a day: the allowance starts at one crawl and fills one every 30 minutes.
    await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 48 } })
    const pages = Array.from({ length: 5 }, (_, i) => ({ url: `https://many.example/${i}` }))
    await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
    const t1 = T0 + MS_PER_DAY
    t.clock.setMs(t1)
    const first = await lease(t)
    assert.equal(first.pages.length, 1, JSON.stringify(first))
    assert.deepEqual(first.limitedBy, ['budgetAllowance'])
    assert.equal(first.retryAfterSeconds, 30 * 60)
    t.clock.setMs(t1 + first.retryAfterSeconds * 1000)
    assert.equal((await lease(t)).pages.length, 1, 'asking again after retryAfterSeconds gives a page')

    // Paced host: one page per 10 minutes; the rest wait for its turn.
    await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 10_000 } })
    await t.app.inject({ method: 'PUT', url: '/v1/hosts/many.example', payload: { minDelaySeconds: 600 } })
    const t2 = t1 + first.retryAfterSeconds * 1000 + 60_000
    t.clock.setMs(t2) // a minute of the new budget fills the allowance with some 7 crawls
    const paced = await lease(t)
    assert.equal(paced.pages.length, 1, JSON.stringify(paced))
    assert.deepEqual(paced.limitedBy, ['pacedHosts'])
    assert.equal(paced.pacedHosts.length, 1)
    assert.equal(paced.pacedHosts[0].host, 'many.example')
    assert.equal(paced.pacedHosts[0].paceSeconds, 600)
    assert.equal(paced.retryAfterSeconds, 600)

    // A 429 with Retry-After of an hour pauses the host beyond its pace.
    const crawled = paced.pages[0]
    await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: {
        observations: [
          {
            url: crawled.url,
            crawledAt: iso(t2),
            httpStatus: 429,
            retryAfter: '3600',
            leaseId: paced.leaseId,
          },
        ],
      },
    })
    const paused = await lease(t, { hosts: ['many.example'] })
    assert.equal(paused.pages.length, 0)
    assert.deepEqual(paused.limitedBy, ['hostBackoff'])
    assert.ok(paused.retryAfterSeconds >= 3500 && paused.retryAfterSeconds <= 3600, String(paused.retryAfterSeconds))
    assert.ok(Date.parse(paused.pacedHosts[0].nextLeaseAt) >= t2 + MS_PER_HOUR)
    assert.equal(paused.nextDueAt, paused.pacedHosts[0].nextLeaseAt)
  })
})
