import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../src/math/random.ts'
import { referenceEstimates, type Interval } from '../helpers/referenceEstimators.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

/** The requests of these tests, against one test's app. */
function api(t: TestApp) {
  return {
    post: (observations: unknown[]) =>
      t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } }),
    async pageByUrl(url: string) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })
      assert.equal(res.statusCode, 200, res.body)
      return res.json()
    },
  }
}

const close = (actual: number, expected: number, rel: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${what}: ${actual} vs ${expected}`)

describe(`POST /v1/observations`, () => {
  it('first crawl is a baseline; later crawls step the estimators exactly as docs/math.md 1.1–1.3', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post, pageByUrl } = api(t)
    const url = 'https://Example.COM:443/a#frag'
    const random = createRandom(7)
    const items: { url: string; crawledAt: string; changed?: boolean }[] = []
    const intervals: Interval[] = []
    let at = T0 - 60 * MS_PER_DAY
    items.push({ url, crawledAt: iso(at) })
    for (let i = 0; i < 40; i++) {
      const days = random.exponential(2)
      at += Math.max(1, Math.round(days * MS_PER_DAY))
      const changed = random.next() < 0.4
      intervals.push({ days: Math.max(1, Math.round(days * MS_PER_DAY)) / MS_PER_DAY, changed })
      items.push({ url, crawledAt: iso(at), changed })
    }
    // Two batches, so the state survives a round trip through the database.
    const r1 = await post(items.slice(0, 15))
    assert.equal(r1.statusCode, 200, r1.body)
    assert.deepEqual(r1.json(), { accepted: 15, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const r2 = await post(items.slice(15))
    assert.deepEqual(r2.json(), { accepted: 26, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })

    const page = await pageByUrl('https://example.com/a')
    assert.equal(page.url, 'https://example.com/a')
    assert.equal(page.host, 'example.com')
    assert.equal(page.crawls, 41)
    assert.equal(page.intervals, 40)
    assert.equal(page.changes, intervals.filter((i) => i.changed).length)
    const ref = referenceEstimates(intervals, 0.75, 1)
    close(page.estimates.naive, ref.naive, 1e-9, 'naive')
    close(page.estimates.lln, ref.lln, 1e-9, 'lln')
    close(page.estimates.sa, ref.sa, 1e-9, 'sa')
    assert.equal(page.estimator, 'mleAdaptive')
    assert.equal(page.changesPerDay, page.estimates[page.estimator])
    assert.ok(page.crawlsPerDay > 0)
    assert.ok(
      Math.abs(Date.parse(page.nextCrawlAt) - (at + MS_PER_DAY / page.crawlsPerDay)) < 1,
      'periodic: last crawl + 1/ρ',
    )
    assert.ok(page.expectedFreshness > 0 && page.expectedFreshness < 1)
  })

  it('counts duplicates, folds late crawls in, rejects future and malformed items', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post, pageByUrl } = api(t)
    const url = 'https://dup.example/x'
    const base = T0 - 10 * MS_PER_DAY
    const first = await post([
      { url, crawledAt: iso(base), contentHash: 'h1' },
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), contentHash: 'h1' }, // unchanged by hash
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), contentHash: 'h2' }, // same time: duplicate
    ])
    assert.deepEqual(first.json(), { accepted: 2, duplicates: 1, late: 0, rejected: [], leaseNotCompleted: [] })
    const second = await post([
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), changed: true }, // repeat of a stored crawl
      { url, crawledAt: iso(base + MS_PER_DAY), changed: true }, // older than the latest: late
      { url, crawledAt: iso(base + 3 * MS_PER_DAY), contentHash: 'h3' }, // changed by hash
      { url, crawledAt: iso(T0 + 6 * 60_000), changed: false }, // > 5 min in the future
      { url: 'ftp://dup.example/x', crawledAt: iso(base), changed: true },
      { url, crawledAt: 'yesterday', changed: true },
      { url, crawledAt: iso(base + 4 * MS_PER_DAY) }, // no change information after the baseline
      { url, crawledAt: iso(base + 5 * MS_PER_DAY), httpStatus: 304 }, // 304 = unchanged
      { url, crawledAt: iso(base + 6 * MS_PER_DAY), changed: false, leaseId: 'not-a-uuid' },
    ])
    assert.equal(second.statusCode, 200)
    const body = second.json()
    assert.equal(body.accepted, 3)
    assert.equal(body.duplicates, 1)
    assert.equal(body.late, 1)
    assert.deepEqual(
      body.rejected.map((r: { index: number }) => r.index),
      [3, 4, 5, 6],
    )
    // A malformed lease id never costs the crawl: stored and applied, and listed as a lease not completed.
    assert.deepEqual(
      body.leaseNotCompleted.map((r: { index: number }) => r.index),
      [8],
    )
    assert.match(body.rejected[0].reason, /future/)
    assert.match(body.rejected[1].reason, /scheme/)
    assert.match(body.rejected[3].reason, /changed or contentHash/)
    assert.equal(body.accepted + body.duplicates + body.late + body.rejected.length, 9)

    // The late crawl posted again is a duplicate, not a second late item.
    const again = await post([{ url, crawledAt: iso(base + MS_PER_DAY), changed: true }])
    assert.deepEqual(again.json(), { accepted: 0, duplicates: 1, late: 0, rejected: [], leaseNotCompleted: [] })

    const page = await pageByUrl(url)
    assert.equal(page.crawls, 6) // baseline, +2d, +3d, +5d, +6d in order, +1d late
    // Replayed in time order: base → +1d changed (the late crawl's flag); its change without a hash leaves
    // nothing to compare +2d's hash with, so +2d is a new baseline; +2d → +3d changed by hash; +3d → +5d
    // unchanged (304); +5d → +6d unchanged.
    assert.equal(page.intervals, 4)
    assert.equal(page.changes, 2)
    const hist = await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/observations?limit=3` })
    const h = hist.json()
    assert.equal(h.observations.length, 3)
    assert.equal(h.observations[0].crawledAt, iso(base + 6 * MS_PER_DAY))
    assert.equal(h.observations[1].crawledAt, iso(base + 5 * MS_PER_DAY))
    assert.equal(h.observations[1].changed, false)
    assert.ok(h.nextCursor)
    const rest = await t.app.inject({
      method: 'GET',
      url: `/v1/pages/${page.id}/observations?before=${encodeURIComponent(h.nextCursor)}`,
    })
    const r = rest.json()
    assert.deepEqual(
      r.observations.map((o: { crawledAt: string; late: boolean }) => [o.crawledAt, o.late]),
      [
        [iso(base + 2 * MS_PER_DAY), false],
        [iso(base + MS_PER_DAY), true],
        [iso(base), false],
      ],
    )
    assert.equal(r.nextCursor, null)
  })

  it('a failed fetch without change information is stored but judges no interval', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post, pageByUrl } = api(t)
    const url = 'https://flaky.example/'
    const base = T0 - 5 * MS_PER_DAY
    const res = await post([
      { url, crawledAt: iso(base), contentHash: 'a' },
      { url, crawledAt: iso(base + MS_PER_DAY), httpStatus: 503 },
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), contentHash: 'a' },
    ])
    assert.deepEqual(res.json(), { accepted: 3, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const page = await pageByUrl(url)
    assert.equal(page.intervals, 1)
    const hist = (await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/observations` })).json()
    assert.equal(hist.observations[0].intervalSeconds, 2 * 86_400) // spans the failed fetch
  })

  it('refuses malformed bodies and oversized batches with problem+json and applies nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post } = api(t)
    const before = (await t.app.inject({ method: 'GET', url: '/v1/pages?limit=1000' })).json().pages.length
    const cases: { payload: string; status: number; contentType?: string }[] = [
      { payload: '{"observations": [', status: 400 },
      {
        payload: JSON.stringify({
          observations: [{ url: 'https://new.example/1', crawledAt: iso(T0), changed: 'yes' }],
        }),
        status: 400,
      },
      { payload: JSON.stringify({ observations: 'nope' }), status: 400 },
      { payload: JSON.stringify({ items: [] }), status: 400 },
      { payload: 'observations=1', status: 400, contentType: 'application/x-www-form-urlencoded' }, // not JSON
    ]
    for (const c of cases) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/observations',
        payload: c.payload,
        headers: { 'content-type': c.contentType ?? 'application/json' },
      })
      assert.equal(res.statusCode, c.status, `${c.payload} → ${res.body}`)
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
      const p = res.json()
      assert.equal(p.status, c.status)
      assert.ok(p.type && p.title && p.detail)
    }
    const typed = await post([{ url: 'https://new.example/1', crawledAt: iso(T0), changed: 'yes' }])
    assert.deepEqual(typed.json().errors, [
      { path: '/body/observations/0/changed', message: typed.json().errors[0].message },
    ])

    const many = Array.from({ length: 5001 }, (_, i) => ({
      url: `https://big.example/${i}`,
      crawledAt: iso(T0),
      changed: true,
    }))
    const big = await post(many)
    assert.equal(big.statusCode, 413)
    assert.match(big.json().detail, /5001/)
    const after = (await t.app.inject({ method: 'GET', url: '/v1/pages?limit=1000' })).json().pages.length
    assert.equal(after, before)
  })

  it('concurrent overlapping batches neither deadlock nor lose updates', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post } = api(t)
    const urls = Array.from({ length: 30 }, (_, i) => `https://conc.example/${i}`)
    const random = createRandom(99)
    const batches = Array.from({ length: 12 }, (_, b) => {
      // Each batch touches a random subset of the same pages in a random order, at distinct times.
      const chosen = urls.filter(() => random.next() < 0.6).sort(() => random.next() - 0.5)
      return chosen.map((url) => ({ url, crawledAt: iso(T0 - MS_PER_DAY + b * 60_000), changed: random.next() < 0.5 }))
    })
    const results = await Promise.all(batches.map((b) => post(b)))
    let accepted = 0
    let late = 0
    for (const r of results) {
      assert.equal(r.statusCode, 200, r.body)
      accepted += r.json().accepted
      late += r.json().late
    }
    let crawls = 0
    let intervals = 0
    let pagesSeen = 0
    for (const url of urls) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })
      if (res.statusCode === 404) continue
      const page = res.json()
      pagesSeen++
      crawls += page.crawls
      intervals += page.intervals
    }
    const total = batches.reduce((s, b) => s + b.length, 0)
    assert.equal(accepted + late, total)
    assert.equal(crawls, total)
    // Every crawl but each page's first closed one interval: late ones are folded in.
    assert.equal(intervals, total - pagesSeen)
  })
})
