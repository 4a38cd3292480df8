/**
 * Exploration and probes through HTTP: a page crawled once comes due again after pages/budget days,
 * a page whose every interval changed is probed after half its shortest interval, leases hand both
 * out at that due time, and the page's nextCrawlAt stays the rate's own schedule (docs/api.md).
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

type Page = {
  id: string
  url: string
  crawlsPerDay: number
  lastCrawledAt: string
  nextCrawlAt: string
  dueAt: string
  intervals: number
  changes: number
}
const api = (t: TestApp) => ({
  pageByUrl: async (url: string): Promise<Page> =>
    (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })).json(),
  async post(observations: Record<string, unknown>[]) {
    const r = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
    assert.equal(r.statusCode, 200, r.body)
    return r.json()
  },
})

describe('early crawls', () => {
  it('explores a page crawled once, probes a page whose every interval changed, and leases both at their due time', async (ctx) => {
    const t = await testAppFor(ctx)
    const { pageByUrl, post } = api(t)
    // 100 pages share 50 crawls/day: an even split crawls each every 2 days.
    // The probe candidate (page 0) matters twice as much as the rest, so the optimiser keeps crawling it
    // above its floor, at a period longer than the half-day probe.
    const pages = Array.from({ length: 100 }, (_, i) => ({
      url: `https://early.example/${i}`,
      importance: i === 0 ? 2 : 1,
    }))
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })).statusCode, 200)
    assert.equal(
      // The mechanism alone: each page's own estimate (the fleet prior would pull the fast page's toward the others').
      (
        await t.app.inject({
          method: 'PATCH',
          url: '/v1/settings',
          payload: { budgetCrawlsPerDay: 50, fleetPrior: false },
        })
      ).statusCode,
      200,
    )
    // Most pages: 10 daily crawls, a change every other day (about 0.7 changes/day).
    const history: Record<string, unknown>[] = []
    for (const { url } of pages.slice(2)) {
      for (let k = 0; k <= 10; k++)
        history.push({ url, crawledAt: iso(T0 - (10 - k) * MS_PER_DAY), ...(k > 0 ? { changed: k % 2 === 0 } : {}) })
    }
    // The probe candidate: three 1-day intervals, every one changed.
    const fast = pages[0]!.url
    for (let k = 0; k <= 3; k++)
      history.push({ url: fast, crawledAt: iso(T0 - (4 - k) * MS_PER_DAY), ...(k > 0 ? { changed: true } : {}) })
    await post(history)
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/optimize' })).statusCode, 200)

    // A crawl of the fast page that changed again: it is probed half a day later, although its rate
    // alone would wait 1/ρ; nextCrawlAt still says what the rate says.
    await post([{ url: fast, crawledAt: iso(T0), changed: true }])
    const probed = await pageByUrl(fast)
    assert.equal(probed.changes, probed.intervals)
    assert.ok(1 / probed.crawlsPerDay > 0.5, `period ${1 / probed.crawlsPerDay} d`)
    const lastMs = Date.parse(probed.lastCrawledAt)
    assert.equal(Date.parse(probed.dueAt), lastMs + MS_PER_DAY / 2, 'half the shortest (1-day) interval')
    assert.ok(Math.abs(Date.parse(probed.nextCrawlAt) - (lastMs + MS_PER_DAY / probed.crawlsPerDay)) <= 1)

    // A new page seen once: due again after pages/budget = 101/50 days at the latest.
    const fresh = 'https://early.example/new'
    await post([{ url: fresh, crawledAt: iso(T0) }])
    const explored = await pageByUrl(fresh)
    assert.equal(explored.intervals, 0)
    const dueDays = (Date.parse(explored.dueAt) - T0) / MS_PER_DAY
    assert.ok(dueDays <= 100 / 50 + 1e-9, `due after ${dueDays} days`)

    // Leases follow dueAt: at the probe's due time the fast page is handed out. (A fleet has been asking
    // for work since T0: the pages due then went first, and the allowance has filled since.)
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/leases',
          payload: { worker: 'w', limit: 1000, leaseSeconds: 60 },
        })
      ).statusCode,
      200,
    )
    t.clock.setMs(Date.parse(probed.dueAt) + 1)
    const lease = (
      await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit: 1000, leaseSeconds: 60 } })
    ).json()
    assert.ok(
      lease.pages.some((p: { url: string }) => p.url === fast),
      'the probed page is leased at its due time',
    )
  })
})
