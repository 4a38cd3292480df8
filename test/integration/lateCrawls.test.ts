/**
 * Late crawls count (docs/api.md "How a crawler should report"): a crawl reported after a newer one is folded
 * into the estimates by replaying the page's stored history in crawl-time order, and a `changed` flag applies
 * to the interval that ends at its own crawl.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

const post = async (t: TestApp, observations: Record<string, unknown>[]) => {
  const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}
const page = async (t: TestApp, url: string) =>
  (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })).json()

test('crawls fetched at t1, t2, t3 and reported t1, t3, t2: each changed flag judges the interval that ends at its crawl', () =>
  withTestApp(async (t) => {
    const url = 'https://late.example/flags'
    const [t1, t2, t3] = [T0 - 3 * MS_PER_DAY, T0 - 2 * MS_PER_DAY, T0 - MS_PER_DAY]
    await post(t, [{ url, crawledAt: iso(t1), changed: false }])
    // t3 is reported relative to the crawler's previous fetch, t2: unchanged.
    await post(t, [{ url, crawledAt: iso(t3), changed: false }])
    const before = await page(t, url)
    assert.equal(before.intervals, 1)
    assert.equal(before.changes, 0)
    // t2 arrives last: changed since t1.
    const late = await post(t, [{ url, crawledAt: iso(t2), changed: true }])
    assert.equal(late.late, 1)
    const after = await page(t, url)
    assert.equal(after.crawls, 3)
    assert.equal(after.intervals, 2, '(t1, t2] and (t2, t3]')
    assert.equal(after.changes, 1)
    assert.equal(after.lastChangedAt, iso(t2))
    // The same history reported in order gives the same page.
    const inOrder = 'https://late.example/in-order'
    await post(t, [
      { url: inOrder, crawledAt: iso(t1), changed: false },
      { url: inOrder, crawledAt: iso(t2), changed: true },
      { url: inOrder, crawledAt: iso(t3), changed: false },
    ])
    const reference = await page(t, inOrder)
    assert.deepEqual(after.estimates, reference.estimates)
    assert.equal(after.changesPerDay, reference.changesPerDay)
    assert.equal(after.crawlsPerDay, reference.crawlsPerDay)
    // The history shows the late crawl applied, still marked as having arrived late.
    const hist = (await t.app.inject({ method: 'GET', url: `/v1/pages/${after.id}/observations` })).json()
    assert.deepEqual(
      hist.observations.map(
        (o: {
          crawledAt: string
          changed: boolean | null
          applied: boolean
          late: boolean
          intervalSeconds: number | null
        }) => [o.crawledAt, o.changed, o.applied, o.late, o.intervalSeconds],
      ),
      [
        [iso(t3), false, true, false, 86_400],
        [iso(t2), true, true, true, 86_400],
        [iso(t1), null, false, false, null],
      ],
    )
  }))

test('hashes reported out of order are compared with the crawl just before in time', () =>
  withTestApp(async (t) => {
    const url = 'https://late.example/hashes'
    const times = [0, 1, 2, 3, 4].map((k) => T0 - (5 - k) * MS_PER_DAY)
    const hashes = ['a', 'a', 'b', 'b', 'c']
    // Reported 0, 2, 4, then 1 and 3 late.
    await post(
      t,
      [0, 2, 4].map((k) => ({ url, crawledAt: iso(times[k]!), contentHash: hashes[k] })),
    )
    await post(
      t,
      [1, 3].map((k) => ({ url, crawledAt: iso(times[k]!), contentHash: hashes[k] })),
    )
    const p = await page(t, url)
    assert.equal(p.intervals, 4)
    assert.equal(p.changes, 2, 'a→a unchanged, a→b changed, b→b unchanged, b→c changed')
    const est = (await t.app.inject({ method: 'GET', url: `/v1/pages/${p.id}/estimates` })).json()
    assert.equal(est.intervals, 4)
    const exact = est.estimators.find((e: { name: string }) => e.name === 'mleExact')
    // Two of four one-day intervals changed: the MLE is ln 2 changes per day.
    assert.ok(Math.abs(exact.changesPerDay - Math.log(2)) < 1e-9, `${exact.changesPerDay}`)
  }))
