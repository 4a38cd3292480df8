/**
 * What the real web answers, over HTTP (docs/api.md "Fetch outcomes", "Schedule"): redirects register their
 * target, gone pages leave the leases and the budget, hosts that push back get paced, leases carry validators,
 * can be extended and given back page by page, and never hand out more than the budget.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

/** `fn` on a new test app whose settings are first patched with `settings`. */
const withApp = (fn: (t: TestApp) => Promise<void>, settings: Record<string, unknown> = {}) =>
  withTestApp(async (t) => {
    if (Object.keys(settings).length > 0) {
      const res = await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: settings })
      assert.equal(res.statusCode, 200, res.body)
    }
    await fn(t)
  })

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? null : res.json() }
}

const report = async (t: TestApp, observations: Record<string, unknown>[]) => {
  const res = await call(t, 'POST', '/v1/observations', { observations })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.rejected, [])
  return res.body
}
const page = async (t: TestApp, url: string) =>
  (await call(t, 'GET', `/v1/pages/by-url?url=${encodeURIComponent(url)}`)).body
const lease = async (t: TestApp, body: Record<string, unknown> = {}) =>
  (await call(t, 'POST', '/v1/leases', { worker: 'w', limit: 100, ...body })).body

test('a 301 with redirectTo registers the target with the importance of the source; the source is redirected and no longer leased', () =>
  withApp(async (t) => {
    await call(t, 'PUT', '/v1/pages', { pages: [{ url: 'https://old.example/a', importance: 7 }] })
    await report(t, [{ url: 'https://old.example/a', crawledAt: iso(T0), contentHash: 'x' }])
    t.clock.advanceMs(MS_PER_DAY)
    await report(t, [
      {
        url: 'https://old.example/a',
        crawledAt: iso(T0 + MS_PER_DAY),
        httpStatus: 301,
        redirectTo: 'https://new.example/a',
      },
    ])
    const source = await page(t, 'https://old.example/a')
    assert.equal(source.status, 'redirected')
    assert.equal(source.redirectTo, 'https://new.example/a')
    assert.equal(source.dueAt, iso(T0 + 31 * MS_PER_DAY), 'rechecked after goneRecheckDays')
    const target = await page(t, 'https://new.example/a')
    assert.equal(target.importance, 7)
    t.clock.advanceMs(10 * MS_PER_DAY)
    const urls = (await lease(t)).pages.map((p: { url: string }) => p.url)
    assert.deepEqual(urls, ['https://new.example/a'])
  }))

/** The days from `fromMs` to a page's dueAt. */
const dueInDays = (p: { dueAt: string | null }, fromMs: number) =>
  p.dueAt === null ? null : (Date.parse(p.dueAt) - fromMs) / MS_PER_DAY

test('a gone page is rechecked with a wait that doubles per recheck whatever it answers, up to a year; a 2xx brings it back', () =>
  withApp(async (t) => {
    const url = 'https://dead.example/soft404'
    await call(t, 'PUT', '/v1/pages', { pages: [{ url }] })
    await report(t, [{ url, crawledAt: iso(T0), contentHash: 'a' }])
    t.clock.advanceMs(MS_PER_DAY)
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), httpStatus: 410 }])
    assert.equal(dueInDays(await page(t, url), t.clock.nowMs()), 30)
    // The repro: 410, then a 302 on the recheck; then a 5xx, a timeout, a 410 again, a 302.
    const answers: Record<string, unknown>[] = [
      { httpStatus: 302 },
      { httpStatus: 503 },
      { fetchError: 'timeout' },
      { httpStatus: 410 },
      { httpStatus: 302 },
    ]
    const waits: number[] = []
    for (const answer of answers) {
      const before = await page(t, url)
      t.clock.advanceMs(Date.parse(before.dueAt) - t.clock.nowMs())
      await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), ...answer }])
      const after = await page(t, url)
      assert.equal(after.status, 'gone', JSON.stringify(answer))
      assert.equal(after.crawlsPerDay, 0)
      waits.push(dueInDays(after, t.clock.nowMs())!)
    }
    assert.deepEqual(waits, [60, 120, 240, 365, 365])
    t.clock.advanceMs(365 * MS_PER_DAY)
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), httpStatus: 200, contentHash: 'b' }])
    const back = await page(t, url)
    assert.equal(back.status, 'active')
    assert.ok(back.crawlsPerDay > 0)
    assert.ok(dueInDays(back, t.clock.nowMs())! <= 1 / back.crawlsPerDay + 1e-6, 'back on its normal schedule')
  }))

test('a page failing for long (5xx, DNS, timeouts) leaves the budget, is rechecked with a growing wait, and comes back when it answers', () =>
  withApp(async (t) => {
    const url = 'https://down.example/p'
    await call(t, 'PUT', '/v1/pages', { pages: [{ url }, { url: 'https://up.example/q' }] })
    await report(t, [
      { url, crawledAt: iso(T0), contentHash: 'a' },
      { url: 'https://up.example/q', crawledAt: iso(T0), contentHash: 'a' },
    ])
    t.clock.advanceMs(MS_PER_DAY)
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), contentHash: 'a' }])
    const answers: Record<string, unknown>[] = [{ httpStatus: 503 }, { fetchError: 'dns' }, { fetchError: 'timeout' }]
    const waits: number[] = []
    let outAfter: number | null = null
    for (let k = 1; k <= 18; k++) {
      t.clock.advanceMs(Date.parse((await page(t, url)).dueAt) - t.clock.nowMs())
      await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), ...answers[k % answers.length] }])
      const after = await page(t, url)
      assert.equal(after.status, 'failing')
      assert.equal(after.consecutiveFailures, k)
      assert.notEqual(after.dueAt, null, 'always rechecked')
      waits.push(dueInDays(after, t.clock.nowMs())!)
      if (after.crawlsPerDay === 0) outAfter ??= k
      else assert.equal(outAfter, null, 'once out, it stays out while it fails')
    }
    assert.ok(outAfter !== null && outAfter >= 10 && outAfter <= 14, `out of the budget after ${outAfter} failures`)
    const failingDays = (t.clock.nowMs() - T0) / MS_PER_DAY
    for (let k = 1; k < waits.length; k++) assert.ok(waits[k]! >= waits[k - 1]!, `the wait never shrinks: ${waits}`)
    assert.ok(waits.at(-1)! > 100, `rechecked rarely in the end: ${waits}`)
    assert.ok(waits.at(-1)! <= 365)
    const run = (await call(t, 'POST', '/v1/optimize')).body
    assert.equal(run.pagesCrawled, 1, 'only the page that answers gets a rate')
    assert.equal((await page(t, url)).crawlsPerDay, 0)
    assert.ok(failingDays > 5)
    // A temporary redirect on a recheck keeps it out, still with a due time.
    t.clock.advanceMs(Date.parse((await page(t, url)).dueAt) - t.clock.nowMs())
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), httpStatus: 302 }])
    assert.equal((await page(t, url)).crawlsPerDay, 0)
    assert.notEqual((await page(t, url)).dueAt, null)
    t.clock.advanceMs(Date.parse((await page(t, url)).dueAt) - t.clock.nowMs())
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), contentHash: 'a' }])
    const back = await page(t, url)
    assert.equal(back.status, 'active')
    assert.equal(back.consecutiveFailures, 0)
    assert.ok(back.crawlsPerDay > 0)
    assert.ok(dueInDays(back, t.clock.nowMs())! <= 1 / back.crawlsPerDay + 1e-6, 'back on its normal schedule')
    assert.equal((await call(t, 'POST', '/v1/optimize')).body.pagesCrawled, 2)
  }))

test('a redirected page is rechecked with a growing wait and comes back when the redirect is removed', () =>
  withApp(async (t) => {
    const url = 'https://moved.example/a'
    await call(t, 'PUT', '/v1/pages', { pages: [{ url }] })
    await report(t, [{ url, crawledAt: iso(T0), contentHash: 'a' }])
    t.clock.advanceMs(MS_PER_DAY)
    const moved = { httpStatus: 301, redirectTo: 'https://moved.example/b' }
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), ...moved }])
    assert.equal(dueInDays(await page(t, url), t.clock.nowMs()), 30)
    for (const [answer, wait] of [
      [moved, 60],
      [{ httpStatus: 307 }, 120],
      [{ httpStatus: 500 }, 240],
    ] as const) {
      t.clock.advanceMs(Date.parse((await page(t, url)).dueAt) - t.clock.nowMs())
      assert.ok((await lease(t, { hosts: ['moved.example'] })).pages.some((p: { url: string }) => p.url === url))
      await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), ...answer }])
      const after = await page(t, url)
      assert.equal(after.status, 'redirected')
      assert.equal(after.redirectTo, 'https://moved.example/b')
      assert.equal(dueInDays(after, t.clock.nowMs()), wait)
    }
    t.clock.advanceMs(240 * MS_PER_DAY)
    await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), httpStatus: 200, contentHash: 'b' }])
    const back = await page(t, url)
    assert.equal(back.status, 'active')
    assert.equal(back.redirectTo, null)
    assert.ok(back.crawlsPerDay > 0)
  }))

test('a gone page is out of the leases and the budget until it is due for its recheck', () =>
  withApp(async (t) => {
    await call(t, 'PUT', '/v1/pages', { pages: [{ url: 'https://dead.example/x' }, { url: 'https://live.example/y' }] })
    await report(t, [
      { url: 'https://dead.example/x', crawledAt: iso(T0), contentHash: 'a' },
      { url: 'https://live.example/y', crawledAt: iso(T0), contentHash: 'a' },
    ])
    t.clock.advanceMs(MS_PER_DAY)
    await report(t, [{ url: 'https://dead.example/x', crawledAt: iso(T0 + MS_PER_DAY), httpStatus: 410 }])
    const dead = await page(t, 'https://dead.example/x')
    assert.equal(dead.status, 'gone')
    assert.equal(dead.consecutiveFailures, 1)
    assert.equal(dead.lastHttpStatus, 410)
    assert.equal(dead.lastSuccessAt, iso(T0))
    const run = (await call(t, 'POST', '/v1/optimize')).body
    assert.equal(run.pagesCrawled, 1, 'only the live page gets a rate')
    assert.equal((await page(t, 'https://dead.example/x')).crawlsPerDay, 0)
    t.clock.advanceMs(10 * MS_PER_DAY)
    assert.deepEqual(
      (await lease(t)).pages.map((p: { url: string }) => p.url),
      ['https://live.example/y'],
    )
    t.clock.advanceMs(30 * MS_PER_DAY)
    assert.ok(
      (await lease(t)).pages.some((p: { url: string }) => p.url === 'https://dead.example/x'),
      'rechecked after goneRecheckDays',
    )
    await report(t, [
      { url: 'https://dead.example/x', crawledAt: iso(t.clock.nowMs()), httpStatus: 200, contentHash: 'b' },
    ])
    assert.equal((await page(t, 'https://dead.example/x')).status, 'active')
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    assert.match(
      metrics,
      /recrawl_crawls_by_page_status_total\{page_status="gone"\} 1\n/,
      'the recheck is counted as a crawl of a gone page',
    )
    assert.match(metrics, /recrawl_crawls_by_page_status_total\{page_status="active"\} 3\n/)
  }))

test('a host that answers 429 with Retry-After is paused and paced; normal answers end the pacing; robots.txt Crawl-delay paces too', () =>
  withApp(async (t) => {
    const urls = Array.from({ length: 6 }, (_, i) => `https://busy.example/${i}`)
    await call(t, 'PUT', '/v1/pages', { pages: urls.map((url) => ({ url })) })
    await report(t, [{ url: urls[0], crawledAt: iso(T0), httpStatus: 429, retryAfterSeconds: 600 }])
    const hosts = (await call(t, 'GET', '/v1/hosts')).body.hosts
    const busy = hosts.find((h: { host: string }) => h.host === 'busy.example')
    assert.ok(busy, 'the host got pacing state')
    assert.equal(busy.throttleDelaySeconds, 600, 'the Retry-After sets the pace')
    assert.equal(busy.paceSeconds, 600)
    assert.equal((await lease(t)).pages.length, 0, 'paused for the Retry-After')
    t.clock.advanceMs(601_000)
    const first = await lease(t)
    assert.equal(first.pages.length, 1, 'one page of a paced host per pace')
    assert.equal((await lease(t)).pages.length, 0)
    // Normal answers shrink the delay until it ends; the host's pages are served together again.
    const paceAfter = async () =>
      (await call(t, 'GET', '/v1/hosts')).body.hosts.find((h: { host: string }) => h.host === 'busy.example')
        .throttleDelaySeconds
    let previous = 600
    for (let round = 0; round < 7; round++) {
      t.clock.advanceMs(601_000)
      const ok = urls.map((url, i) => ({
        url,
        crawledAt: iso(t.clock.nowMs() - i * 1000),
        contentHash: 'v',
        httpStatus: 200,
      }))
      await report(t, ok)
      const pace = await paceAfter()
      if (pace === null) break
      assert.ok(pace < previous, 'each batch of normal answers shrinks the pace')
      previous = pace
    }
    const after = (await call(t, 'GET', '/v1/hosts')).body.hosts.find(
      (h: { host: string }) => h.host === 'busy.example',
    )
    assert.equal(after.throttleDelaySeconds, null)
    assert.equal(after.paceSeconds, 0)

    await report(t, [
      {
        url: 'https://robots.example/a',
        crawledAt: iso(t.clock.nowMs()),
        contentHash: 'v',
        robotsCrawlDelaySeconds: 7,
      },
    ])
    const robots = (await call(t, 'GET', '/v1/hosts')).body.hosts.find(
      (h: { host: string }) => h.host === 'robots.example',
    )
    assert.equal(robots.crawlDelaySeconds, 7)
    assert.equal(robots.paceSeconds, 7)
  }))

test('leases carry the validators of the latest successful fetch; a 304 reported in one line counts as unchanged', () =>
  withApp(async (t) => {
    const url = 'https://cond.example/p'
    await report(t, [
      { url, crawledAt: iso(T0), contentHash: 'h', etag: '"e1"', lastModified: iso(T0 - MS_PER_DAY), httpStatus: 200 },
    ])
    t.clock.advanceMs(30 * MS_PER_DAY)
    const grant = await lease(t)
    assert.deepEqual(
      grant.pages.map((p: Record<string, unknown>) => [p.url, p.etag, p.lastModified, p.contentHash]),
      [[url, '"e1"', iso(T0 - MS_PER_DAY), 'h']],
    )
    const done = await report(t, [{ url, crawledAt: iso(t.clock.nowMs()), httpStatus: 304, leaseId: grant.leaseId }])
    assert.equal(done.accepted, 1)
    const p = await page(t, url)
    assert.equal(p.intervals, 1)
    assert.equal(p.changes, 0)
    assert.equal(p.etag, '"e1"')
  }))

test('a lease is extended by a heartbeat, gives single pages back (retry, skip), and an expired lease cannot be extended', () =>
  withApp(async (t) => {
    const urls = ['https://hb.example/a', 'https://hb.example/b', 'https://hb.example/c']
    await report(
      t,
      urls.map((url) => ({ url, crawledAt: iso(T0), contentHash: 'v' })),
    )
    t.clock.advanceMs(30 * MS_PER_DAY)
    const grant = await lease(t, { leaseSeconds: 60 })
    assert.equal(grant.pages.length, 3)
    t.clock.advanceMs(50_000)
    const extended = await call(t, 'PATCH', `/v1/leases/${grant.leaseId}`, { leaseSeconds: 120 })
    assert.equal(extended.status, 200, JSON.stringify(extended.body))
    assert.equal(extended.body.pages, 3)
    assert.equal(extended.body.expiresAt, iso(t.clock.nowMs() + 120_000))
    t.clock.advanceMs(60_000)
    assert.equal((await lease(t)).pages.length, 0, 'still held after the first expiry time')

    const [a, b] = grant.pages
    const released = await call(t, 'POST', `/v1/leases/${grant.leaseId}/release`, {
      pages: [
        { id: a.id, reason: 'retry' },
        { id: b.id, reason: 'skip' },
        { id: '999999', reason: 'retry' },
      ],
    })
    assert.equal(released.status, 200, JSON.stringify(released.body))
    assert.equal(released.body.released, 2)
    assert.deepEqual(
      released.body.notHeld.map((x: { index: number }) => x.index),
      [2],
    )
    const again = await lease(t)
    assert.deepEqual(
      again.pages.map((p: { url: string }) => p.url),
      [a.url],
      'retry: due again at once; skip: one period later',
    )
    const skipped = await call(t, 'GET', `/v1/pages/${b.id}`)
    assert.ok(Date.parse(skipped.body.dueAt) > t.clock.nowMs() + MS_PER_DAY / 10)

    t.clock.advanceMs(200_000)
    const expired = await call(t, 'PATCH', `/v1/leases/${grant.leaseId}`, { leaseSeconds: 120 })
    assert.equal(expired.status, 404)
    assert.equal(expired.body.status, 404)
  }))

test('leases never hand out more than the budget: the allowance starts at the reserve, fills at budgetCrawlsPerDay and holds handOutBurstHours of it', () =>
  withApp(
    async (t) => {
      const urls = Array.from({ length: 40 }, (_, i) => `https://budget.example/${i}`)
      await report(
        t,
        urls.map((url) => ({ url, crawledAt: iso(T0 - 30 * MS_PER_DAY), contentHash: 'v' })),
      )
      // 48 crawls a day, at most 2 hours of it at once: a new allowance holds the reserve (one crawl), then 2 per hour.
      assert.equal((await lease(t)).pages.length, 1)
      assert.equal((await lease(t)).pages.length, 0)
      t.clock.advanceMs(1_800_000)
      assert.equal((await lease(t)).pages.length, 1)
      t.clock.advanceMs(3_600_000)
      const hour = await lease(t)
      assert.equal(hour.pages.length, 2)
      // Pages given back return their share.
      await call(t, 'DELETE', `/v1/leases/${hour.leaseId}`)
      assert.equal((await lease(t)).pages.length, 2)
      t.clock.advanceMs(10 * 3_600_000)
      assert.equal((await lease(t)).pages.length, 4, 'a pause earns at most handOutBurstHours of the budget')
    },
    { budgetCrawlsPerDay: 48, handOutBurstHours: 2 },
  ))

test('a host down for a day answering 503 without Retry-After gets fewer requests than a host answering normally', () =>
  withApp(async (t) => {
    const upUrls = Array.from({ length: 8 }, (_, i) => `https://up.example/${i}`)
    const downUrls = Array.from({ length: 8 }, (_, i) => `https://down.example/${i}`)
    await call(t, 'PUT', '/v1/pages', { pages: [...upUrls, ...downUrls].map((url) => ({ url })) })
    const pollMs = 5 * 60_000
    const fetches = new Map<string, number>()
    // A crawler polling every five minutes for a day; one host answers normally, the other is down.
    for (let poll = 0; poll < MS_PER_DAY / pollMs; poll++) {
      t.clock.advanceMs(pollMs)
      const grant = await lease(t)
      if (grant.pages.length === 0) continue
      for (const p of grant.pages as { host: string }[]) fetches.set(p.host, (fetches.get(p.host) ?? 0) + 1)
      await report(
        t,
        grant.pages.map((p: { url: string; host: string }) => ({
          url: p.url,
          crawledAt: iso(t.clock.nowMs()),
          leaseId: grant.leaseId,
          ...(p.host === 'down.example' ? { httpStatus: 503 } : { contentHash: `v${poll % 3}`, httpStatus: 200 }),
        })),
      )
    }
    const normal = fetches.get('up.example') ?? 0
    const outage = fetches.get('down.example') ?? 0
    assert.ok(normal >= upUrls.length, `a normal host gets every page fetched: ${normal}`)
    assert.ok(outage < normal, `${outage} fetches of the down host against ${normal} of the normal one`)
  }))

test('a host answering 429 without Retry-After gets no more than a handful of 429s a day after the first', () =>
  withApp(async (t) => {
    const urls = Array.from({ length: 8 }, (_, i) => `https://busy429.example/${i}`)
    await call(t, 'PUT', '/v1/pages', { pages: urls.map((url) => ({ url })) })
    const pollMs = 5 * 60_000
    let throttled = 0
    for (let poll = 0; poll < MS_PER_DAY / pollMs; poll++) {
      t.clock.advanceMs(pollMs)
      const grant = await lease(t)
      if (grant.pages.length === 0) continue
      throttled += grant.pages.length
      await report(
        t,
        grant.pages.map((p: { url: string }) => ({
          url: p.url,
          crawledAt: iso(t.clock.nowMs()),
          leaseId: grant.leaseId,
          httpStatus: 429,
        })),
      )
    }
    assert.ok(throttled <= urls.length + 15, `${throttled} 429s in a day`)
  }))

/**
 * A crawler that leases every `pollMs` and fetches at once, for `days` days, against a host that allows one
 * request per 10 minutes and answers 429 (with `retryAfterSeconds` when given) to the others. Returns the 429s
 * and the successful fetches of each day, and the host's number of pages.
 */
async function rateLimitedHost(t: TestApp, retryAfterSeconds: number | null, days: number) {
  const urls = Array.from({ length: 20 }, (_, i) => `https://limited.example/${i}`)
  await call(t, 'PUT', '/v1/pages', { pages: urls.map((url) => ({ url })) })
  const pollMs = 2 * 60_000
  const allowEveryMs = 10 * 60_000
  let lastAllowedMs = -Infinity
  const throttledPerDay = Array.from({ length: days }, () => 0)
  const fetchedPerDay = Array.from({ length: days }, () => 0)
  for (let poll = 0; poll < (days * MS_PER_DAY) / pollMs; poll++) {
    t.clock.advanceMs(pollMs)
    const grant = await lease(t)
    if (grant.pages.length === 0) continue
    const nowMs = t.clock.nowMs()
    const day = Math.floor((nowMs - T0) / MS_PER_DAY)
    const observations = grant.pages.map((p: { url: string }, i: number) => {
      const crawledAtMs = nowMs + i
      if (crawledAtMs - lastAllowedMs >= allowEveryMs) {
        lastAllowedMs = crawledAtMs
        if (day < days) fetchedPerDay[day]!++
        return { url: p.url, crawledAt: iso(crawledAtMs), leaseId: grant.leaseId, httpStatus: 200, contentHash: 'same' }
      }
      if (day < days) throttledPerDay[day]!++
      return {
        url: p.url,
        crawledAt: iso(crawledAtMs),
        leaseId: grant.leaseId,
        httpStatus: 429,
        ...(retryAfterSeconds === null ? {} : { retryAfterSeconds }),
      }
    })
    await report(t, observations)
  }
  return { throttledPerDay, fetchedPerDay, pages: urls.length }
}

for (const retryAfterSeconds of [null, 600]) {
  test(`a host that allows one request per 10 minutes (429${retryAfterSeconds === null ? ' without' : ' with'} Retry-After) gets a handful of 429s a day after the first, and its pages fetched as planned`, (c) =>
    withApp(async (t) => {
      const days = 3
      const { throttledPerDay, fetchedPerDay, pages } = await rateLimitedHost(t, retryAfterSeconds, days)
      c.diagnostic(
        `429s per day: ${throttledPerDay.join(', ')}; successful fetches per day: ${fetchedPerDay.join(', ')}`,
      )
      for (const n of throttledPerDay.slice(1)) assert.ok(n <= 5, `429s per day: ${throttledPerDay}`)
      // The pages are due daily (no optimiser run): 20 fetches a day, well within the host's 144. A host that
      // is pushed into a new incident by every recovery gets a few of them.
      for (const n of fetchedPerDay.slice(1))
        assert.ok(n >= 0.9 * pages, `successful fetches per day: ${fetchedPerDay} for ${pages} daily pages`)
    }))
}
