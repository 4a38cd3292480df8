/**
 * Late crawls count (docs/api.md "How a crawler should report"): a crawl reported after a newer one is folded
 * into the estimates by replaying the page's stored history in crawl-time order, and a `changed` flag applies
 * to the interval that ends at its own crawl.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { createRandom } from '../../src/math/random.ts'

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

/** One page's crawls: a Poisson page crawled at irregular times, with a content hash and, when it changed, a Last-Modified. */
function randomHistory(seed: number, crawls: number): Record<string, unknown>[] {
  const random = createRandom(seed)
  const changesPerDay = 0.2 + 2 * random.next()
  const out: Record<string, unknown>[] = []
  let atMs = T0 - 60 * MS_PER_DAY
  let version = 0
  let lastChangeMs = atMs - MS_PER_DAY
  for (let k = 0; k < crawls; k++) {
    const gapMs = (0.05 + 2 * random.next()) * MS_PER_DAY
    // Changes inside the gap: a Poisson count, the last one dating Last-Modified.
    let t = atMs + random.exponential(changesPerDay) * MS_PER_DAY
    while (t < atMs + gapMs) {
      version++
      lastChangeMs = t
      t += random.exponential(changesPerDay) * MS_PER_DAY
    }
    atMs += gapMs
    out.push({ crawledAt: iso(atMs), contentHash: `v${version}`, lastModified: iso(lastChangeMs), httpStatus: 200 })
  }
  return out
}

const ORDERS: Record<string, (history: Record<string, unknown>[], seed: number) => Record<string, unknown>[][]> = {
  'one at a time, shuffled': (h, seed) => {
    const random = createRandom(seed)
    const shuffled = [...h]
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = random.int(i + 1)
      ;[shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!]
    }
    return shuffled.map((o) => [o])
  },
  'one at a time, newest first': (h) => [...h].reverse().map((o) => [o]),
  'the current crawl first, then the older ones in one batch': (h) => [[h.at(-1)!], h.slice(0, -1)],
  'half in order, then the gaps back-filled': (h) => [h.filter((_, i) => i % 2 === 0), h.filter((_, i) => i % 2 === 1)],
}

test('after any order of reports, the estimates, localRate and updateDistribution equal those of the same crawls reported in crawl-time order', () =>
  withTestApp(async (t) => {
    const view = async (url: string) => {
      const p = await page(t, url)
      const est = (await t.app.inject({ method: 'GET', url: `/v1/pages/${p.id}/estimates` })).json()
      return {
        page: [p.crawls, p.intervals, p.changes, p.changesPerDay, p.crawlsPerDay, p.lastChangedAt, p.estimates],
        intervals: est.intervals,
        estimators: est.estimators,
        localRate: est.localRate,
        updateDistribution: est.updateDistribution,
      }
    }
    for (const seed of [1, 2, 3]) {
      const history = randomHistory(seed, 14)
      const inOrderUrl = `https://late.example/order-${seed}/in-order`
      await post(
        t,
        history.map((o) => ({ ...o, url: inOrderUrl })),
      )
      const reference = await view(inOrderUrl)
      assert.ok(reference.intervals >= 10, 'the reference judged its intervals')
      assert.notEqual(reference.localRate, null, 'the reference has a local rate')
      assert.notEqual(reference.updateDistribution, null, 'the reference has an update distribution')
      for (const [name, order] of Object.entries(ORDERS)) {
        const url = `https://late.example/order-${seed}/${name.replaceAll(/[^a-z]+/g, '-')}`
        for (const batch of order(history, seed))
          await post(
            t,
            batch.map((o) => ({ ...o, url })),
          )
        assert.deepEqual(await view(url), reference, `${name} (seed ${seed})`)
      }
    }
  }))

test('a late report without change information is rejected, as it would be in order, and changes nothing', () =>
  withTestApp(async (t) => {
    const url = 'https://late.example/no-information'
    const t0 = T0 - 10 * MS_PER_DAY
    await post(t, [{ url, crawledAt: iso(t0), contentHash: 'a' }])
    await post(t, [{ url, crawledAt: iso(t0 + 2 * MS_PER_DAY), contentHash: 'b' }])
    const before = await page(t, url)
    assert.equal(before.intervals, 1)
    const res = await post(t, [{ url, crawledAt: iso(t0 + MS_PER_DAY), httpStatus: 200 }])
    assert.equal(res.accepted, 0)
    assert.equal(res.late, 0)
    assert.equal(res.rejected.length, 1)
    assert.match(res.rejected[0].reason, /changed or contentHash is required/)
    const after = await page(t, url)
    assert.deepEqual(after, before, 'nothing changed')
    // In order, the same report is refused too.
    const inOrder = await post(t, [{ url, crawledAt: iso(t0 + 3 * MS_PER_DAY), httpStatus: 200 }])
    assert.equal(inOrder.rejected.length, 1)
  }))
