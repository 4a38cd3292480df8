/**
 * Black-box check of the HTTP contract (docs/api.md) and of the estimators it exposes (docs/math.md 1.1–1.3,
 * 1.5), through HTTP only, against a real SQL engine. The reference formulas (test/helpers/referenceEstimators.ts)
 * are restated from docs/math.md and share no code with src/math. Every test starts its own service on an
 * empty database and builds the state it reads.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createApiKey } from '../../src/domain/apiKeys.ts'
import { referenceEstimates, referenceExactMle, type Interval } from '../helpers/referenceEstimators.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import type { components } from '@recrawl/client'

type Page = components['schemas']['Page']
type PageList = components['schemas']['PageList']

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The requests of these tests, against one test's service. */
function api(t: TestApp) {
  const call = (method: Method, url: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  return {
    call,
    postObservations: (observations: unknown[]) => call('POST', '/v1/observations', { observations }),
    byUrl: (url: string) => call('GET', `/v1/pages/by-url?url=${encodeURIComponent(url)}`),
  }
}
type Api = ReturnType<typeof api>

/** A small seeded generator (mulberry32), independent of the service's own. */
function seeded(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  return { next, exponential: (rate: number) => -Math.log(1 - next()) / rate }
}

function assertRel(actual: unknown, expected: number, rel: number, what: string) {
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)}`)
  const a = actual as number
  assert.ok(Math.abs(a - expected) <= rel * Math.abs(expected) + 1e-300, `${what}: got ${a}, expected ${expected}`)
}

interface ProblemBody {
  type: unknown
  title: unknown
  status: unknown
  detail: string
  /** Present on validation problems; checked below whenever it is. */
  errors: { path: string; message: string }[]
}

function assertProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  what = '',
) {
  assert.equal(res.statusCode, status, `${what}: ${JSON.stringify(res.json())}`)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, what)
  const p = res.json() as ProblemBody
  assert.equal(typeof p.type, 'string', what)
  assert.equal(typeof p.title, 'string', what)
  assert.equal(p.status, status, what)
  assert.equal(typeof p.detail, 'string', what)
  assert.ok(p.detail.length > 0, what)
  if (p.errors !== undefined) {
    assert.ok(Array.isArray(p.errors) && p.errors.length > 0, what)
    for (const e of p.errors) {
      assert.equal(typeof e.path, 'string', what)
      assert.ok(e.path.startsWith('/'), `${what}: path ${e.path} is a JSON pointer`)
      assert.equal(typeof e.message, 'string', what)
    }
  }
  return p
}

/** A seeded crawl history: Poisson or periodic crawl times, Poisson changes. */
interface History {
  url: string
  items: Record<string, unknown>[]
  intervals: Interval[]
  times: number[]
  lastChangedMs: number | null
}
function makeHistory(
  url: string,
  seed: number,
  o: {
    crawls: number
    crawlsPerDay: number
    schedule: 'poisson' | 'periodic'
    changesPerDay: number
    useHash?: boolean
    endMs: number
  },
): History {
  const r = seeded(seed)
  const gaps: number[] = []
  for (let i = 0; i < o.crawls - 1; i++) {
    const days = o.schedule === 'poisson' ? r.exponential(o.crawlsPerDay) : 1 / o.crawlsPerDay
    gaps.push(Math.max(1000, Math.round(days * MS_PER_DAY)))
  }
  let at = o.endMs - gaps.reduce((s, g) => s + g, 0)
  const times = [at]
  const intervals: Interval[] = []
  let version = 0
  const items: Record<string, unknown>[] = [
    o.useHash ? { url, crawledAt: iso(at), contentHash: `v${version}` } : { url, crawledAt: iso(at) },
  ]
  let lastChangedMs: number | null = null
  for (const gap of gaps) {
    at += gap
    const changed = r.next() < 1 - Math.exp(-o.changesPerDay * (gap / MS_PER_DAY))
    if (changed) {
      version++
      lastChangedMs = at
    }
    times.push(at)
    intervals.push({ days: gap / MS_PER_DAY, changed })
    items.push(
      o.useHash
        ? { url, crawledAt: iso(at), contentHash: `v${version}`, httpStatus: 200 }
        : { url, crawledAt: iso(at), changed },
    )
  }
  return { url, items, intervals, times, lastChangedMs }
}

const GAMMA = 0.75
const Y0 = 2

/**
 * The estimates' common state: α = 1/k, γ = GAMMA and y_0 = Y0, then seven registered pages whose seeded
 * histories are reported interleaved, in batches of varying size with repeats of stored crawls, and one
 * late crawl folded into page 0. Returns the histories as the service should now know them.
 */
async function seedHistories({ call, postObservations }: Api): Promise<History[]> {
  const patched = await call('PATCH', '/v1/settings', {
    lln: { alpha: '1/k' },
    sa: { gamma: GAMMA },
    defaultChangesPerDay: Y0,
  })
  assert.equal(patched.statusCode, 200, patched.body)
  const end = T0 - MS_PER_DAY
  const specs = [
    { crawls: 80, crawlsPerDay: 1, schedule: 'poisson', changesPerDay: 1 },
    { crawls: 60, crawlsPerDay: 3, schedule: 'periodic', changesPerDay: 5 },
    { crawls: 50, crawlsPerDay: 0.5, schedule: 'periodic', changesPerDay: 0.2, useHash: true },
    { crawls: 120, crawlsPerDay: 4, schedule: 'poisson', changesPerDay: 0.7, useHash: true },
    { crawls: 30, crawlsPerDay: 24, schedule: 'poisson', changesPerDay: 3 },
    { crawls: 25, crawlsPerDay: 2, schedule: 'periodic', changesPerDay: 0 }, // X = 0: smoothed MLE
    { crawls: 20, crawlsPerDay: 1, schedule: 'poisson', changesPerDay: 1000 }, // X = n: smoothed MLE
  ] as const
  const histories = specs.map((spec, i) =>
    makeHistory(`https://est${i % 3}.example/page/${i}`, 1000 + i, { ...spec, endMs: end }),
  )
  const put = await call('PUT', '/v1/pages', { pages: histories.map((h, i) => ({ url: h.url, importance: 1 + i })) })
  assert.deepEqual(put.json(), { created: histories.length, updated: 0 })

  // Interleave the pages, cut into batches of varying size; inject duplicates and late crawls.
  const all = histories
    .flatMap((h) => h.items)
    .sort((a, b) => Date.parse(a.crawledAt as string) - Date.parse(b.crawledAt as string))
  const r = seeded(77)
  let expectedDuplicates = 0
  let expectedLate = 0
  let i = 0
  while (i < all.length) {
    const size = 1 + Math.floor(r.next() * 60)
    const batch = all.slice(i, i + size)
    const extra: Record<string, unknown>[] = []
    if (i > 0 && r.next() < 0.5) {
      extra.push({ ...all[i - 1]! }) // a repeat of a stored crawl
      expectedDuplicates++
    }
    i += size
    const res = await postObservations([...batch, ...extra])
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.accepted + body.duplicates + body.late + body.rejected.length, batch.length + extra.length)
    assert.deepEqual(body.rejected, [])
    assert.equal(body.accepted, batch.length)
  }
  // A late crawl between two stored crawls of page 0: counted as late, and folded in: its change flag
  // applies to the interval that ends at it, and the next crawl's flag to the interval after it.
  const h0 = histories[0]!
  const lateAt = Math.floor((h0.times[10]! + h0.times[11]!) / 2)
  const lateItem = { url: h0.url, crawledAt: iso(lateAt), changed: true }
  const late = await postObservations([lateItem])
  assert.deepEqual(late.json(), { accepted: 0, duplicates: 0, late: 1, rejected: [], leaseNotCompleted: [] })
  const split = h0.intervals[10]!
  h0.intervals.splice(
    10,
    1,
    { days: (lateAt - h0.times[10]!) / MS_PER_DAY, changed: true },
    { days: (h0.times[11]! - lateAt) / MS_PER_DAY, changed: split.changed },
  )
  h0.items.push(lateItem)
  if (h0.lastChangedMs === null || lateAt > h0.lastChangedMs) h0.lastChangedMs = lateAt
  expectedLate++
  assert.ok(expectedDuplicates > 0 && expectedLate === 1)
  return histories
}

describe('contract: estimates against an independent implementation of docs/math.md 1', () => {
  it('PATCH /v1/settings sets α = "1/k", γ = 0.75 and y_0', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    const res = await call('PATCH', '/v1/settings', {
      lln: { alpha: '1/k' },
      sa: { gamma: GAMMA },
      defaultChangesPerDay: Y0,
    })
    assert.equal(res.statusCode, 200, res.body)
    const s = (await call('GET', '/v1/settings')).json()
    assert.equal(s.lln.alpha, '1/k')
    assert.equal(s.sa.gamma, GAMMA)
    assert.equal(s.defaultChangesPerDay, Y0)
  })

  it('registered pages report seeded histories in interleaved batches', async (ctx) => {
    const t = await testAppFor(ctx)
    const histories = await seedHistories(api(t))
    const pages = (await api(t).call('GET', '/v1/pages')).json().pages
    assert.deepEqual(pages.map((p: { url: string }) => p.url).sort(), histories.map((h) => h.url).sort())
  })

  it('naive, lln and sa agree to 1e-6 relative; mle within 2 % of the exact MLE; counters and times match', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, byUrl } = api(t)
    const histories = await seedHistories(api(t))
    for (const [i, h] of histories.entries()) {
      const res = await byUrl(h.url)
      assert.equal(res.statusCode, 200)
      const page = res.json()
      const ref = referenceEstimates(h.intervals, GAMMA, Y0)
      const what = `page ${i} (${h.url})`
      assertRel(page.estimates.naive, ref.naive, 1e-6, `${what} naive`)
      assertRel(page.estimates.lln, ref.lln, 1e-6, `${what} lln`)
      assertRel(page.estimates.sa, ref.sa, 1e-6, `${what} sa`)
      assertRel(page.estimates.mle, referenceExactMle(h.intervals), 0.02, `${what} mle`)
      assertRel(page.estimates.choGm, ref.choGm, 1e-6, `${what} choGm`)
      assert.equal(page.estimator, 'mleAdaptive')
      assert.equal(page.changesPerDay, page.estimates[page.estimator])
      assert.equal(page.crawls, h.items.length)
      assert.equal(page.intervals, h.intervals.length)
      assert.equal(page.changes, h.intervals.filter((x) => x.changed).length)
      assert.equal(page.firstCrawledAt, iso(h.times[0]!))
      assert.equal(page.lastCrawledAt, iso(h.times.at(-1)!))
      assert.equal(page.lastChangedAt, h.lastChangedMs === null ? null : iso(h.lastChangedMs))
      assert.equal(page.importance, 1 + i)
      assert.equal(page.host, `est${i % 3}.example`)
      assert.ok(page.crawlsPerDay > 0)
      // Periodic schedule (the default): next crawl = last crawl + 1/ρ days.
      assert.ok(
        Math.abs(Date.parse(page.nextCrawlAt) - (h.times.at(-1)! + MS_PER_DAY / page.crawlsPerDay)) <= 1,
        `${what} nextCrawlAt`,
      )
      assert.ok(page.expectedFreshness >= 0 && page.expectedFreshness <= 1)
      assert.deepEqual((await call('GET', `/v1/pages/${page.id}`)).json(), page)

      // The per-page estimates endpoint: the same online values, and the exact MLE from the stored history.
      const est = (await call('GET', `/v1/pages/${page.id}/estimates`)).json()
      const named = new Map(
        est.estimators.map((e: { name: string; changesPerDay: number }) => [e.name, e.changesPerDay]),
      )
      for (const name of ['naive', 'lln', 'sa', 'mle', 'choGm'])
        assert.equal(named.get(name), page.estimates[name], `${what} estimates ${name}`)
      assertRel(named.get('mleExact'), referenceExactMle(h.intervals), 1e-6, `${what} mleExact`)
      assert.equal(est.intervals, h.intervals.length)
    }
  })

  it('switching the scheduling estimator re-derives changesPerDay from the same state', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, byUrl } = api(t)
    const histories = await seedHistories(api(t))
    for (const name of ['naive', 'lln', 'sa', 'mle'] as const) {
      assert.equal((await call('PATCH', '/v1/settings', { estimator: name })).statusCode, 200)
      const page = (await byUrl(histories[1]!.url)).json()
      assert.equal(page.estimator, name)
      assert.equal(page.changesPerDay, page.estimates[name])
    }
    const ref = referenceEstimates(histories[1]!.intervals, GAMMA, Y0)
    assertRel((await byUrl(histories[1]!.url)).json().estimates.lln, ref.lln, 1e-6, 'lln after settings changes')
  })

  it('a Poisson schedule draws the next crawl after the last one', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, byUrl } = api(t)
    const histories = await seedHistories(api(t))
    assert.equal((await call('PATCH', '/v1/settings', { schedule: 'poisson' })).statusCode, 200)
    const page = (await byUrl(histories[0]!.url)).json()
    assert.ok(Date.parse(page.nextCrawlAt) >= Date.parse(page.lastCrawledAt))
  })
})

describe('contract: observation rules', () => {
  it('first crawl is the baseline; from the second on, changed or contentHash is required', async (ctx) => {
    const t = await testAppFor(ctx)
    const { postObservations, byUrl } = api(t)
    const url = 'https://rules.example/baseline'
    const base = T0 - 20 * MS_PER_DAY
    const first = await postObservations([{ url, crawledAt: iso(base), changed: true }])
    assert.deepEqual(first.json(), { accepted: 1, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    let page = (await byUrl(url)).json()
    assert.equal(page.crawls, 1)
    assert.equal(page.intervals, 0)
    assert.equal(page.changes, 0)
    assert.equal(page.lastChangedAt, null)
    assert.equal(page.changesPerDay, null)
    assert.equal(page.importance, 1) // registered by its first observation
    for (const name of ['naive', 'lln', 'sa', 'mle', 'choGm'])
      assert.equal(page.estimates[name], null, `estimates.${name} before any interval`)

    const second = await postObservations([
      { url, crawledAt: iso(base + MS_PER_DAY) }, // neither changed nor contentHash
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), changed: false },
    ])
    const body = second.json()
    assert.equal(body.accepted, 1)
    assert.equal(body.rejected.length, 1)
    assert.equal(body.rejected[0].index, 0)
    assert.match(body.rejected[0].reason, /changed|contentHash/)
    page = (await byUrl(url)).json()
    assert.equal(page.crawls, 2) // the rejected item was not stored
    assert.equal(page.intervals, 1)
    assertRel(page.estimates.naive + 1, 1, 0, 'naive is 0 after one unchanged interval')

    // A rejected item stores nothing, so a corrected report of the same crawl is no duplicate.
    const fixed = await postObservations([
      { url, crawledAt: iso(base + 3 * MS_PER_DAY), httpStatus: 200 },
      { url, crawledAt: iso(base + 3 * MS_PER_DAY), changed: true },
    ])
    assert.deepEqual(
      fixed.json().rejected.map((r: { index: number }) => r.index),
      [0],
    )
    assert.equal(fixed.json().accepted, 1)
    assert.equal(fixed.json().duplicates, 0)
    assert.equal((await byUrl(url)).json().changes, 1)
  })

  it('contentHash: a change is a hash that differs from the previous crawl’s', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    const url = 'https://rules.example/hash'
    const base = T0 - 10 * MS_PER_DAY
    const hashes = ['a', 'a', 'b', 'b', 'c', 'a']
    const res = await postObservations(
      hashes.map((h, i) => ({ url, crawledAt: iso(base + i * MS_PER_DAY), contentHash: `sha256:${h}` })),
    )
    assert.deepEqual(res.json(), { accepted: 6, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const page = (await byUrl(url)).json()
    assert.equal(page.intervals, 5)
    assert.equal(page.changes, 3)
    assert.equal(page.lastChangedAt, iso(base + 5 * MS_PER_DAY))
    assertRel(page.estimates.naive, 3 / 5, 1e-12, 'naive')
    const hist = (await call('GET', `/v1/pages/${page.id}/observations`)).json()
    assert.deepEqual(
      hist.observations.map((o: { changed: boolean | null }) => o.changed),
      [true, true, false, true, false, null],
    )
    assert.equal(hist.observations[5].contentHash, 'sha256:a')

    // "unchanged" without a hash keeps the known content: the next hash compares with it.
    const more = await postObservations([
      { url, crawledAt: iso(base + 6 * MS_PER_DAY), changed: false },
      { url, crawledAt: iso(base + 7 * MS_PER_DAY), contentHash: 'sha256:a' },
      { url, crawledAt: iso(base + 8 * MS_PER_DAY), contentHash: 'sha256:d' },
    ])
    assert.deepEqual(more.json(), { accepted: 3, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const after = (await byUrl(url)).json()
    assert.equal(after.intervals, 8)
    assert.equal(after.changes, 4)
  })

  it('duplicates, late crawls and future crawls are classified per item; the four counts add up', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    const url = 'https://rules.example/classes'
    const base = T0 - 10 * MS_PER_DAY
    await postObservations([
      { url, crawledAt: iso(base) },
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), changed: true },
    ])
    const before = (await byUrl(url)).json()
    const res = await postObservations([
      { url, crawledAt: iso(base + 2 * MS_PER_DAY), changed: false }, // 0: repeat of the latest crawl
      { url: 'HTTPS://RULES.example:443/classes#x', crawledAt: '2026-11-12T00:00:00+00:00', changed: true }, // 1: same crawl as the baseline
      { url, crawledAt: iso(base + MS_PER_DAY), changed: false }, // 2: late
      { url, crawledAt: iso(T0 + 5 * 60_000 + 1000), changed: true }, // 3: > 5 min in the future
      { url, crawledAt: iso(T0 + 4 * 60_000), changed: true }, // 4: within the skew allowance
      { url, crawledAt: iso(T0 + 4 * 60_000), changed: true }, // 5: duplicate within the batch
      { url: 'gopher://rules.example/', crawledAt: iso(base), changed: true }, // 6: not http(s)
      { url, crawledAt: '2026-02-30T00:00:00Z', changed: true }, // 7: no such day
      { url, crawledAt: 'yesterday', changed: true }, // 8
    ])
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.accepted, 1)
    assert.equal(body.duplicates, 3)
    assert.equal(body.late, 1)
    assert.deepEqual(
      body.rejected.map((r: { index: number }) => r.index),
      [3, 6, 7, 8],
    )
    for (const r of body.rejected) assert.ok(typeof r.reason === 'string' && r.reason.length > 0)
    assert.match(body.rejected[0].reason, /future/)

    const page = (await byUrl(url)).json()
    assert.equal(page.crawls, before.crawls + 2) // the late crawl and the one at T0 + 4 min
    // The late crawl is folded in: base → +1 d (unchanged) and +1 d → +2 d (changed) replace base → +2 d.
    assert.equal(page.intervals, before.intervals + 2)
    assert.equal(page.lastCrawledAt, iso(T0 + 4 * 60_000))
    const hist = (await call('GET', `/v1/pages/${page.id}/observations`)).json()
    const late = hist.observations.find((o: { crawledAt: string }) => o.crawledAt === iso(base + MS_PER_DAY))
    assert.equal(late.late, true)
    assert.equal(late.applied, true)
    assert.equal(late.changed, false)
    assert.equal(late.intervalSeconds, 86_400)

    // A late crawl before the baseline is the page's first crawl; the estimators do not move.
    const early = await postObservations([{ url, crawledAt: iso(base - MS_PER_DAY), changed: true }])
    assert.deepEqual(early.json(), { accepted: 0, duplicates: 0, late: 1, rejected: [], leaseNotCompleted: [] })
    const after = (await byUrl(url)).json()
    assert.equal(after.firstCrawledAt, iso(base - MS_PER_DAY))
    assert.equal(after.crawls, page.crawls + 1)
    assert.deepEqual(after.estimates, page.estimates)
  })

  it('a page’s items within one batch are applied in crawl-time order, whatever their order in the batch', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    const url = 'https://rules.example/unsorted'
    const base = T0 - 6 * MS_PER_DAY
    const res = await postObservations([
      { url, crawledAt: iso(base + 3 * MS_PER_DAY), changed: true },
      { url, crawledAt: iso(base) },
      { url, crawledAt: iso(base + MS_PER_DAY), changed: false },
    ])
    assert.deepEqual(res.json(), { accepted: 3, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const page = (await byUrl(url)).json()
    assert.equal(page.intervals, 2)
    assert.equal(page.changes, 1)
    assertRel(page.estimates.naive, 1 / 3, 1e-12, 'naive')
    const settings = (await call('GET', '/v1/settings')).json()
    const ref = referenceEstimates(
      [
        { days: 1, changed: false },
        { days: 2, changed: true },
      ],
      settings.sa.gamma,
      settings.defaultChangesPerDay,
    )
    assertRel(page.estimates.sa, ref.sa, 1e-9, 'sa')
  })

  it('malformed bodies, wrong types and oversized batches are refused whole; nothing is applied', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    const url = 'https://rules.example/untouched'
    const valid = { url, crawledAt: iso(T0 - MS_PER_DAY) }
    const raw = (payload: string, contentType?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/observations',
        payload,
        headers: contentType ? { 'content-type': contentType } : {},
      })
    const cases: [string, ReturnType<typeof raw>][] = [
      ['not JSON', raw('{"observations": [', 'application/json')],
      ['not JSON at all', raw('observations please', 'text/plain')],
      ['no content type', raw('observations please')],
      ['form encoded', raw('observations=1', 'application/x-www-form-urlencoded')],
      ['empty body', raw('', 'application/json')],
      ['null body', raw('null', 'application/json')],
      ['array body', raw('[]', 'application/json')],
      ['observations not an array', postObservations('x' as never)],
      ['missing observations', call('POST', '/v1/observations', { items: [valid] })],
      ['changed not boolean', postObservations([valid, { url, crawledAt: iso(T0), changed: 'yes' }])],
      ['url not a string', postObservations([valid, { url: 42, crawledAt: iso(T0), changed: true }])],
      ['crawledAt missing', postObservations([valid, { url, changed: true }])],
      ['crawledAt a number', postObservations([valid, { url, crawledAt: T0, changed: true }])],
      ['httpStatus a string', postObservations([valid, { url, crawledAt: iso(T0), changed: true, httpStatus: '200' }])],
      ['item not an object', postObservations([valid, 'x'])],
    ]
    for (const [what, pending] of cases) {
      const res = await pending
      const p = assertProblem(res, 400, what)
      if (what === 'changed not boolean')
        assert.deepEqual(
          p.errors.map((e: { path: string }) => e.path),
          ['/body/observations/1/changed'],
        )
    }
    const tooMany = await postObservations(
      Array.from({ length: 5001 }, (_, i) => ({
        url: `https://rules.example/many/${i}`,
        crawledAt: iso(T0 - MS_PER_DAY),
      })),
    )
    assertProblem(tooMany, 413, 'too many items')
    const pagesTooMany = await call('PUT', '/v1/pages', {
      pages: Array.from({ length: 5001 }, (_, i) => ({ url: `https://rules.example/many/${i}` })),
    })
    assertProblem(pagesTooMany, 413, 'too many pages')
    assert.equal((await byUrl(url)).statusCode, 404)
    assert.equal((await byUrl('https://rules.example/many/0')).statusCode, 404)
  })

  it('with registration of unknown URLs off, their items are rejected by index', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    const known = 'https://rules.example/known'
    assert.equal((await call('PUT', '/v1/pages', { pages: [{ url: known }] })).statusCode, 200)
    assert.equal((await call('PATCH', '/v1/settings', { registerUnknownPages: false })).statusCode, 200)
    const res = await postObservations([
      { url: 'https://rules.example/stranger', crawledAt: iso(T0 - MS_PER_DAY) },
      { url: known, crawledAt: iso(T0 - MS_PER_DAY / 2), changed: false },
    ])
    assert.equal(res.json().accepted, 1)
    assert.deepEqual(
      res.json().rejected.map((r: { index: number }) => r.index),
      [0],
    )
    assert.equal((await byUrl('https://rules.example/stranger')).statusCode, 404)
  })
})

/** Pages on three hosts (one with a port), with importance 0.5 … 4.5 and the first with its own bounds. */
const urls = [
  'https://pg-a.example/1',
  'https://pg-a.example/2',
  'https://pg-b.example/1',
  'https://pg-a.example/3',
  'https://pg-b.example:8443/2',
]
async function registerPages({ call }: Api): Promise<void> {
  const res = await call('PUT', '/v1/pages', {
    pages: urls.map((url, i) => ({
      url,
      importance: i + 0.5,
      ...(i === 0 ? { minCrawlsPerDay: 0.1, maxCrawlsPerDay: 48 } : {}),
    })),
  })
  assert.deepEqual(res.json(), { created: urls.length, updated: 0 })
}

describe('contract: pages', () => {
  it('PUT /v1/pages validates every item; a bad item writes nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, byUrl } = api(t)
    const bad: [string, unknown][] = [
      ['importance negative', { pages: [{ url: urls[0] }, { url: urls[1], importance: -1 }] }],
      ['importance a string', { pages: [{ url: urls[0], importance: '2' }] }],
      ['bound not a number', { pages: [{ url: urls[0], maxCrawlsPerDay: 'many' }] }],
      ['min above max', { pages: [{ url: urls[0], minCrawlsPerDay: 5, maxCrawlsPerDay: 1 }] }],
      ['not a URL', { pages: [{ url: urls[0] }, { url: 'example.com/x' }] }],
      ['not http', { pages: [{ url: 'ftp://pg-a.example/1' }] }],
      ['same page twice', { pages: [{ url: urls[0] }, { url: 'HTTPS://pg-a.example/1#top' }] }],
      ['pages missing', { urls }],
      ['pages not an array', { pages: urls[0] }],
    ]
    for (const [what, payload] of bad) {
      const p = assertProblem(await call('PUT', '/v1/pages', payload), 400, what)
      assert.ok(p.errors?.length > 0, `${what}: lists the offending fields`)
    }
    const min = assertProblem(await call('PUT', '/v1/pages', bad[3]![1]), 400).errors
    assert.deepEqual(
      min.map((e: { path: string }) => e.path),
      ['/body/pages/0/maxCrawlsPerDay'],
    )
    const dup = assertProblem(await call('PUT', '/v1/pages', bad[6]![1]), 400).errors
    assert.deepEqual(
      dup.map((e: { path: string }) => e.path),
      ['/body/pages/1/url'],
    )
    assert.equal((await byUrl(urls[0]!)).statusCode, 404)
  })

  it('PUT /v1/pages creates and updates; bounds and importance round-trip', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, byUrl } = api(t)
    await registerPages(api(t))
    const again = await call('PUT', '/v1/pages', { pages: [{ url: urls[0], importance: 2.5, maxCrawlsPerDay: 48 }] })
    assert.deepEqual(again.json(), { created: 0, updated: 1 })
    const page = (await byUrl(urls[0]!)).json()
    assert.equal(page.importance, 2.5)
    assert.equal(page.minCrawlsPerDay, null)
    assert.equal(page.maxCrawlsPerDay, 48)
    assert.equal(page.crawls, 0)
    assert.equal(page.firstCrawledAt, null)
    assert.equal(page.lastCrawledAt, null)
    assert.equal(typeof page.id, 'string')
    for (const key of [
      'id',
      'url',
      'host',
      'kind',
      'importance',
      'minCrawlsPerDay',
      'maxCrawlsPerDay',
      'crawls',
      'intervals',
      'changes',
      'firstCrawledAt',
      'lastCrawledAt',
      'lastChangedAt',
      'changesPerDay',
      'estimator',
      'estimates',
      'crawlsPerDay',
      'nextCrawlAt',
      'expectedFreshness',
    ]) {
      assert.ok(key in page, `Page.${key}`)
    }
  })

  it('GET /v1/pages pages through every page once with the cursor, optionally by host', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    await registerPages(api(t))
    const seen: string[] = []
    let cursor: string | null = null
    let rounds = 0
    do {
      const res = await call(
        'GET',
        `/v1/pages?limit=3${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      )
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.ok(body.pages.length <= 3)
      seen.push(...body.pages.map((p: { url: string }) => p.url))
      cursor = body.nextCursor
      rounds++
    } while (cursor !== null && rounds < 100)
    assert.equal(new Set(seen).size, seen.length, 'no page twice')
    for (const url of urls) assert.ok(seen.includes(url), url)

    const hostA: string[] = []
    cursor = null
    do {
      const body = (
        await call(
          'GET',
          `/v1/pages?host=pg-a.example&limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        )
      ).json() as PageList
      hostA.push(...body.pages.map((p: { url: string }) => p.url))
      cursor = body.nextCursor
    } while (cursor !== null)
    assert.deepEqual(hostA.sort(), [urls[0], urls[1], urls[3]])
    const ported = (await call('GET', '/v1/pages?host=PG-B.example:8443')).json()
    assert.deepEqual(
      ported.pages.map((p: { url: string }) => p.url),
      [urls[4]],
    )
    assert.equal(ported.pages[0].host, 'pg-b.example:8443')

    for (const q of ['limit=0', 'limit=-3', 'limit=abc', 'limit=2.5', 'cursor=not-a-cursor', 'host=a/b'])
      assertProblem(await call('GET', `/v1/pages?${q}`), 400, q)
    // Empty values count as absent; a limit above the maximum is served as the maximum.
    const empty = await call('GET', '/v1/pages?host=&cursor=&limit=')
    assert.equal(empty.statusCode, 200, empty.body)
    assert.equal(empty.json().pages.length, Math.min(100, seen.length))
    const huge = await call('GET', '/v1/pages?limit=100000')
    assert.equal(huge.statusCode, 200, huge.body)
    assert.equal(huge.json().pages.length, seen.length)
  })

  it('by-url normalises scheme, host, default port and fragment; unknown → 404, malformed → 400', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, byUrl } = api(t)
    await registerPages(api(t))
    const page = (await byUrl(urls[1]!)).json()
    for (const spelling of ['HTTPS://PG-A.example/2', 'https://pg-a.EXAMPLE:443/2#frag', 'https://pg-a.example/2#']) {
      const res = await byUrl(spelling)
      assert.equal(res.statusCode, 200, spelling)
      assert.equal(res.json().id, page.id)
    }
    assert.equal(page.url, urls[1])
    assertProblem(await byUrl('https://pg-a.example/2?x=1'), 404, 'query is part of the page')
    assertProblem(await byUrl('https://pg-a.example/nope'), 404, 'unknown')
    assertProblem(await byUrl('not a url'), 400, 'malformed')
    assertProblem(await call('GET', '/v1/pages/by-url'), 400, 'missing')
    assertProblem(await call('GET', '/v1/pages/by-url?url='), 400, 'empty')
    const http = await call('PUT', '/v1/pages', { pages: [{ url: 'HTTP://Pg-C.example:80/a/b?q=1#f' }] })
    assert.equal(http.statusCode, 200)
    const c = (await byUrl('http://pg-c.example/a/b?q=1')).json()
    assert.equal(c.url, 'http://pg-c.example/a/b?q=1')
    assert.equal(c.host, 'pg-c.example')
  })

  it('an id that names no page is 404 on every page route, whatever its form', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    for (const id of [
      '987654321',
      '0',
      '-1',
      'abc',
      'does-not-exist',
      '99999999999999999999999',
      '9223372036854775808',
    ]) {
      assertProblem(await call('GET', `/v1/pages/${id}`), 404, id)
      assertProblem(await call('GET', `/v1/pages/${id}/observations`), 404, id)
      assertProblem(await call('GET', `/v1/pages/${id}/estimates`), 404, id)
      assertProblem(await call('DELETE', `/v1/pages/${id}`), 404, id)
    }
  })

  it('observations page newest first; nextCursor is the next `before`', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    await registerPages(api(t))
    const url = urls[2]!
    const times = Array.from({ length: 7 }, (_, i) => T0 - (10 - i) * MS_PER_DAY)
    await postObservations(
      times.map((at, i) => ({ url, crawledAt: iso(at), ...(i > 0 ? { changed: i % 2 === 0 } : {}) })),
    )
    const page = (await byUrl(url)).json()
    const got: string[] = []
    let before: string | null = null
    do {
      const res = await call(
        'GET',
        `/v1/pages/${page.id}/observations?limit=3${before === null ? '' : `&before=${encodeURIComponent(before)}`}`,
      )
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.ok(body.observations.length <= 3)
      got.push(...body.observations.map((o: { crawledAt: string }) => o.crawledAt))
      before = body.nextCursor
    } while (before !== null)
    assert.deepEqual(got, times.map(iso).reverse())
    assertProblem(await call('GET', `/v1/pages/${page.id}/observations?before=yesterday`), 400)
    assertProblem(await call('GET', `/v1/pages/${page.id}/observations?limit=0`), 400)
    const est = await call('GET', `/v1/pages/${page.id}/estimates`)
    assert.equal(est.statusCode, 200)
    assert.ok(Array.isArray(est.json().estimators))
  })

  it('DELETE /v1/pages/{id} deletes the page and its history', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations, byUrl } = api(t)
    await registerPages(api(t))
    const url = urls[2]!
    await postObservations(
      [0, 1, 2].map((i) => ({ url, crawledAt: iso(T0 - (10 - i) * MS_PER_DAY), ...(i > 0 ? { changed: true } : {}) })),
    )
    const page = (await byUrl(url)).json()
    assert.equal(page.crawls, 3)
    const del = await call('DELETE', `/v1/pages/${page.id}`)
    assert.equal(del.statusCode, 204)
    assertProblem(await call('GET', `/v1/pages/${page.id}`), 404)
    assertProblem(await call('GET', `/v1/pages/${page.id}/observations`), 404)
    assertProblem(await byUrl(url), 404)
    assertProblem(await call('DELETE', `/v1/pages/${page.id}`), 404)
    // Reporting the URL again starts a new page with a fresh history.
    const res = await postObservations([{ url, crawledAt: iso(T0 - 5 * MS_PER_DAY), changed: true }])
    assert.deepEqual(res.json(), { accepted: 1, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const fresh = (await byUrl(url)).json()
    assert.notEqual(fresh.id, page.id)
    assert.equal(fresh.crawls, 1)
    const hist = (await call('GET', `/v1/pages/${fresh.id}/observations`)).json()
    assert.equal(hist.observations.length, 1)
  })
})

describe('contract: settings, hosts, schedule, optimiser, leases', () => {
  it('GET /v1/settings has every documented field; PATCH refuses bad values and changes nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    const before = (await call('GET', '/v1/settings')).json()
    for (const key of [
      'budgetCrawlsPerDay',
      'objective',
      'schedule',
      'estimator',
      'defaultChangesPerDay',
      'minCrawlsPerDay',
      'maxCrawlsPerDay',
      'reoptimizeSeconds',
      'lln',
      'sa',
    ]) {
      assert.ok(key in before, key)
    }
    const bad: Record<string, unknown>[] = [
      { budgetCrawlsPerDay: 'lots' },
      { budgetCrawlsPerDay: 0 },
      { budgetCrawlsPerDay: -5 },
      { objective: 'speed' },
      { schedule: 'daily' },
      { estimator: 'guess' },
      { defaultChangesPerDay: 0 },
      { minCrawlsPerDay: -1 },
      { maxCrawlsPerDay: 0 },
      { minCrawlsPerDay: 10, maxCrawlsPerDay: 1 },
      { reoptimizeSeconds: 0 },
      { reoptimizeSeconds: 1.5 },
      { lln: { alpha: '1/k^2' } },
      { lln: { alpha: 0 } },
      { lln: 'fast' },
      { sa: { gamma: 0.5 } },
      { sa: { gamma: 1.01 } },
      { sa: { gamma: '0.75' } },
      { noSuchSetting: true },
      { budgetCrawlsPerDay: 5, estimator: 'guess' }, // a valid key next to a bad one: nothing applied
    ]
    for (const body of bad) assertProblem(await call('PATCH', '/v1/settings', body), 400, JSON.stringify(body))
    assertProblem(
      await t.app.inject({
        method: 'PATCH',
        url: '/v1/settings',
        payload: '[1]',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'array',
    )
    const cross = assertProblem(await call('PATCH', '/v1/settings', { minCrawlsPerDay: 10, maxCrawlsPerDay: 1 }), 400)
    assert.deepEqual(
      cross.errors.map((e: { path: string }) => e.path),
      ['/body/maxCrawlsPerDay'],
    )
    assert.deepEqual((await call('GET', '/v1/settings')).json(), before)

    const ok = await call('PATCH', '/v1/settings', {
      budgetCrawlsPerDay: 1234,
      maxCrawlsPerDay: 96,
      lln: { alpha: '1/sqrt(k)' },
    })
    assert.equal(ok.statusCode, 200)
    assert.equal(ok.json().budgetCrawlsPerDay, 1234)
    const now = (await call('GET', '/v1/settings')).json()
    assert.deepEqual(now, ok.json())
    assert.equal(now.maxCrawlsPerDay, 96)
    assert.equal(now.lln.alpha, '1/sqrt(k)')
    assert.equal(now.sa.gamma, before.sa.gamma)
    const mergePatch = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: JSON.stringify({ maxCrawlsPerDay: null, lln: { alpha: '1/k' } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    })
    assert.equal(mergePatch.statusCode, 200, mergePatch.body)
    assert.equal(mergePatch.json().maxCrawlsPerDay, null)
    assert.equal(mergePatch.json().lln.alpha, '1/k')
    const poisoned = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: '{"__proto__": {"budgetCrawlsPerDay": 1}}',
      headers: { 'content-type': 'application/merge-patch+json' },
    })
    assertProblem(poisoned, 400, '__proto__')
  })

  it('PUT, GET and DELETE /v1/hosts', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    await registerPages(api(t))
    const put = await call('PUT', '/v1/hosts/PG-A.example', { maxCrawlsPerDay: 500, minDelaySeconds: 2 })
    assert.equal(put.statusCode, 200, put.body)
    assert.deepEqual(put.json(), {
      host: 'pg-a.example',
      maxCrawlsPerDay: 500,
      minDelaySeconds: 2,
      crawlDelaySeconds: null,
      throttleDelaySeconds: null,
      paceSeconds: 2,
      pages: 3,
    })
    const nullable = await call('PUT', '/v1/hosts/pg-b.example', { maxCrawlsPerDay: null, minDelaySeconds: 1.5 })
    assert.equal(nullable.statusCode, 200, nullable.body)
    const partial = await call('PUT', '/v1/hosts/only-delay.example', { minDelaySeconds: 3 })
    assert.equal(partial.statusCode, 200, partial.body)
    assert.equal(partial.json().maxCrawlsPerDay, null)
    const list = (await call('GET', '/v1/hosts')).json()
    const a = list.hosts.find((h: { host: string }) => h.host === 'pg-a.example')
    assert.deepEqual(a, {
      host: 'pg-a.example',
      maxCrawlsPerDay: 500,
      minDelaySeconds: 2,
      crawlDelaySeconds: null,
      throttleDelaySeconds: null,
      paceSeconds: 2,
      pages: 3,
    })
    for (const h of list.hosts)
      for (const key of ['host', 'maxCrawlsPerDay', 'minDelaySeconds', 'pages']) assert.ok(key in h, key)

    for (const [what, body] of [
      ['negative cap', { maxCrawlsPerDay: -1, minDelaySeconds: 2 }],
      ['delay a string', { maxCrawlsPerDay: 1, minDelaySeconds: 'two' }],
      ['unknown key', { maxCrawlsPerDay: 1, delay: 2 }],
      ['empty', {}],
    ] as const) {
      assertProblem(await call('PUT', '/v1/hosts/pg-a.example', body), 400, what)
    }
    assertProblem(await call('PUT', '/v1/hosts/a%2Fb', { maxCrawlsPerDay: 1, minDelaySeconds: 1 }), 400, 'not a host')
    assert.deepEqual(
      (await call('GET', '/v1/hosts')).json().hosts.find((h: { host: string }) => h.host === 'pg-a.example'),
      a,
    )

    assert.equal((await call('DELETE', '/v1/hosts/pg-a.example')).statusCode, 204)
    assert.equal((await call('DELETE', '/v1/hosts/only-delay.example')).statusCode, 204)
    assert.equal((await call('DELETE', '/v1/hosts/pg-b.example')).statusCode, 204)
    assertProblem(await call('DELETE', '/v1/hosts/pg-a.example'), 404)
    assert.ok(!(await call('GET', '/v1/hosts')).json().hosts.some((h: { host: string }) => h.host === 'pg-a.example'))
  })

  it('GET /v1/schedule lists upcoming crawls in due order', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    await registerPages(api(t))
    const res = await call('GET', '/v1/schedule?limit=50')
    assert.equal(res.statusCode, 200)
    const items = res.json().items
    assert.ok(items.length > 0 && items.length <= 50)
    for (const item of items)
      for (const key of ['id', 'url', 'host', 'dueAt', 'crawlsPerDay']) assert.ok(key in item, key)
    for (let i = 1; i < items.length; i++)
      assert.ok(Date.parse(items[i - 1].dueAt) <= Date.parse(items[i].dueAt), 'due order')
    const until = iso(T0)
    const due = (await call('GET', `/v1/schedule?limit=1000&until=${encodeURIComponent(until)}`)).json().items
    assert.ok(due.every((i: { dueAt: string }) => Date.parse(i.dueAt) <= T0))
    assert.equal((await call('GET', '/v1/schedule?limit=2')).json().items.length, 2)
    for (const q of ['limit=0', 'limit=x', 'until=soon', 'until=2026-02-30T00:00:00Z'])
      assertProblem(await call('GET', `/v1/schedule?${q}`), 400, q)
    assert.equal((await call('GET', '/v1/schedule?limit=&until=')).statusCode, 200)
  })

  it('POST /v1/optimize reports λ, pages, pagesCrawled, budget, freshness and duration; infeasible → 422', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    await seedHistories(api(t))
    await registerPages(api(t))
    assert.equal(
      (await call('PATCH', '/v1/settings', { objective: 'freshness', budgetCrawlsPerDay: 40, minCrawlsPerDay: 0.01 }))
        .statusCode,
      200,
    )
    const res = await call('POST', '/v1/optimize')
    assert.equal(res.statusCode, 200, res.body)
    const run = res.json()
    for (const key of ['lambda', 'pages', 'pagesCrawled', 'budgetCrawlsPerDay', 'expectedFreshness', 'durationMs'])
      assert.equal(typeof run[key], 'number', key)
    assert.equal(run.budgetCrawlsPerDay, 40)
    assert.ok(run.lambda > 0)
    assert.ok(run.expectedFreshness > 0 && run.expectedFreshness < 1)
    assert.ok(run.durationMs >= 0)

    const pages: Page[] = []
    let cursor: string | null = null
    do {
      const body = (
        await call('GET', `/v1/pages?limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`)
      ).json() as PageList
      pages.push(...body.pages)
      cursor = body.nextCursor
    } while (cursor !== null)
    assert.equal(run.pages, pages.length)
    const total = pages.reduce((s, p) => s + (p.crawlsPerDay ?? 0), 0)
    assertRel(total, 40, 1e-6, 'the budget is spent')
    let crawled = 0
    let weighted = 0
    let weights = 0
    for (const p of pages) {
      assert.notEqual(p.crawlsPerDay, null, `${p.url} has a crawl rate after the run`)
      const rate = p.crawlsPerDay!
      const lo = p.minCrawlsPerDay ?? 0.01
      const hi = p.maxCrawlsPerDay ?? Infinity
      // A page without an estimate of its own is solved at its host's prior mean (docs/math.md 1.12).
      const delta =
        p.changesPerDay ?? (await call('GET', `/v1/pages/${p.id}/estimates`)).json().learning.posterior.changesPerDay
      assert.ok(rate >= lo * (1 - 1e-9) && rate <= hi * (1 + 1e-9), p.url)
      if (rate > lo * (1 + 1e-9)) crawled++
      if (rate > lo * (1 + 1e-6) && rate < hi * (1 - 1e-6) && p.importance > 0) {
        // Strictly between its bounds: λ = μΔ/(ρ+Δ)² (freshness objective).
        assertRel(run.lambda, (p.importance * delta) / (rate + delta) ** 2, 1e-4, `λ at ${p.url}`)
      }
      weighted += p.importance * (rate / (rate + delta))
      weights += p.importance
    }
    assert.equal(run.pagesCrawled, crawled)
    assertRel(run.expectedFreshness, weighted / weights, 1e-6, 'expectedFreshness')

    // Lower bounds that need more than the budget: refused when set (422), and by the optimiser when a page's
    // own floor makes them so.
    assertProblem(await call('PATCH', '/v1/settings', { minCrawlsPerDay: 10 }), 422, 'infeasible')
    const floor = { url: 'https://floor.contract.example/a', minCrawlsPerDay: 1e6 }
    assert.equal((await call('PUT', '/v1/pages', { pages: [floor] })).statusCode, 200)
    const infeasible = await call('POST', '/v1/optimize')
    assertProblem(infeasible, 422, 'infeasible')
  })

  it('POST /v1/leases hands out due pages with the documented fields; the observation completes the lease', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call, postObservations } = api(t)
    const url = 'https://lease.example/a'
    await call('PUT', '/v1/pages', { pages: [{ url }] })
    const res = await call('POST', '/v1/leases', {
      worker: 'crawler-7',
      limit: 100,
      leaseSeconds: 300,
      hosts: ['lease.example'],
    })
    assert.equal(res.statusCode, 200, res.body)
    const grant = res.json()
    assert.equal(typeof grant.leaseId, 'string')
    assert.equal(grant.expiresAt, iso(T0 + 300_000))
    assert.equal(grant.pages.length, 1)
    assert.deepEqual(Object.keys(grant.pages[0]).sort(), [
      'contentHash',
      'dueAt',
      'etag',
      'host',
      'id',
      'ifModifiedSince',
      'ifNoneMatch',
      'kind',
      'lastModified',
      'url',
    ])
    assert.equal(grant.pages[0].url, url)
    assert.equal(grant.pages[0].host, 'lease.example')
    assert.equal(grant.pages[0].kind, 'page')
    const again = (
      await call('POST', '/v1/leases', { worker: 'crawler-8', limit: 100, leaseSeconds: 300, hosts: ['lease.example'] })
    ).json()
    assert.equal(again.pages.length, 0, 'a leased page is not handed out twice')
    const done = await postObservations([{ url, crawledAt: iso(T0), contentHash: 'x', leaseId: grant.leaseId }])
    assert.deepEqual(done.json(), { accepted: 1, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    assertProblem(await call('DELETE', `/v1/leases/${grant.leaseId}`), 404, 'completed lease')
    for (const [what, body] of [
      ['no worker', { limit: 1 }],
      ['limit a string', { worker: 'w', limit: 'ten' }],
      ['limit zero', { worker: 'w', limit: 0 }],
      ['leaseSeconds negative', { worker: 'w', leaseSeconds: -1 }],
      ['hosts not an array', { worker: 'w', hosts: 'lease.example' }],
    ] as const) {
      assertProblem(await call('POST', '/v1/leases', body), 400, what)
    }
    assertProblem(await call('DELETE', '/v1/leases/not-a-lease'), 400)
  })
})

describe('contract: authentication', () => {
  it('401 without or with an unknown key, 403 for a missing role, as problem+json', async (ctx) => {
    const secured = await testAppFor(ctx, { loopbackOnly: false })
    const reader = await createApiKey(secured.db, { name: 'dash', role: 'reader' })
    const crawler = await createApiKey(secured.db, { name: 'fleet', role: 'crawler' })
    const admin = await createApiKey(secured.db, { name: 'ops', role: 'admin' })
    const as = (key: string | null, method: Method, url: string, payload?: unknown) =>
      secured.app.inject({
        method,
        url,
        ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}),
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
    assertProblem(await as(null, 'GET', '/v1/pages'), 401, 'no key')
    assertProblem(await as('not-a-key', 'GET', '/v1/pages'), 401, 'unknown key')
    assertProblem(await as(crawler.key, 'GET', '/v1/pages'), 403, 'crawler reads')
    assertProblem(await as(reader.key, 'POST', '/v1/observations', { observations: [] }), 403, 'reader reports')
    assertProblem(await as(crawler.key, 'PATCH', '/v1/settings', { budgetCrawlsPerDay: 5 }), 403, 'crawler patches')
    assertProblem(await as(reader.key, 'POST', '/v1/optimize'), 403, 'reader optimises')
    assertProblem(await as(crawler.key, 'DELETE', '/v1/pages/1'), 403, 'crawler deletes')
    assertProblem(
      await as(reader.key, 'PUT', '/v1/hosts/x.example', { maxCrawlsPerDay: 1, minDelaySeconds: 1 }),
      403,
      'reader sets hosts',
    )
    assert.equal((await as(reader.key, 'GET', '/v1/settings')).statusCode, 200)
    assert.equal((await as(crawler.key, 'POST', '/v1/leases', { worker: 'w' })).statusCode, 200)
    assert.equal((await as(admin.key, 'GET', '/v1/pages')).statusCode, 200)
    assert.equal((await as(admin.key, 'POST', '/v1/observations', { observations: [] })).statusCode, 200)
  })
})

describe('contract: conflicts', () => {
  it('a unique constraint lost to a concurrent writer is 409 problem+json, not 500', async (ctx) => {
    const t = await testAppFor(ctx)
    const { call } = api(t)
    // Stand-in for a race: a constraint the service does not expect makes the second write collide.
    await t.db.pool.query('CREATE UNIQUE INDEX contract_one_delay ON hosts (min_delay_seconds)')
    try {
      assert.equal((await call('PUT', '/v1/hosts/one.example', { minDelaySeconds: 7 })).statusCode, 200)
      assertProblem(await call('PUT', '/v1/hosts/two.example', { minDelaySeconds: 7 }), 409)
      assert.ok(!(await call('GET', '/v1/hosts')).json().hosts.some((h: { host: string }) => h.host === 'two.example'))
    } finally {
      await t.db.pool.query('DROP INDEX contract_one_delay')
      await call('DELETE', '/v1/hosts/one.example')
    }
  })
})
