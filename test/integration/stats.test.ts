import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { FAILED_STATUS_CLASSES, STATUS_CLASSES, statusClassOf, type StatusClass } from '../../src/ops/fetchStatus.ts'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../src/math/units.ts'
import type { components } from '@recrawl/client'

type Stats = components['schemas']['Stats']

/**
 * GET /v1/stats: the window it reports on, crawl activity by reported HTTP status class per hour and
 * the failed fetches by host, all from the observation history. Each test has its own service.
 */

const withApp = (run: (t: TestApp) => Promise<void>) => withTestApp(run, { statsCacheMs: 0 })

async function report(
  t: TestApp,
  observations: Record<string, unknown>[],
): Promise<{ accepted: number; duplicates: number; late: number; rejected: unknown[] }> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function stats(t: TestApp, hours?: number): Promise<Stats> {
  const res = await t.app.inject({ method: 'GET', url: hours === undefined ? '/v1/stats' : `/v1/stats?hours=${hours}` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

interface Crawl {
  url: string
  atMs: number
  httpStatus?: number
  fetchError?: string
  changed?: boolean
}

/** A page's crawls in time order: the first is its baseline, the later ones say changed (or failed). */
function history(
  url: string,
  times: { atMs: number; httpStatus?: number; fetchError?: string; changed?: boolean }[],
): Crawl[] {
  return times.map((c, i) => ({
    url,
    ...c,
    ...(i > 0 && c.changed === undefined && !(c.httpStatus && c.httpStatus >= 400) && !c.fetchError
      ? { changed: false }
      : {}),
  }))
}

const toItems = (crawls: Crawl[]) =>
  crawls.map((c) => ({
    url: c.url,
    crawledAt: iso(c.atMs),
    ...(c.httpStatus === undefined ? {} : { httpStatus: c.httpStatus }),
    ...(c.fetchError === undefined ? {} : { fetchError: c.fetchError }),
    ...(c.changed === undefined ? {} : { changed: c.changed }),
  }))

describe('GET /v1/stats window and crawl activity', () => {
  it('reports its window on the service clock and every hour of it by status class', async () => {
    await withApp(async (t) => {
      const now = T0 + 17 * MS_PER_MINUTE // not on an hour: the first and last hours are partial
      t.clock.setMs(now)
      const crawls = [
        ...history('https://a.example/1', [
          { atMs: now - 50 * MS_PER_HOUR, httpStatus: 200 }, // before any window below
          { atMs: now - 6 * MS_PER_HOUR - MS_PER_MINUTE, httpStatus: 200 }, // just before the 6 h window
          { atMs: now - 6 * MS_PER_HOUR, httpStatus: 200, changed: true }, // exactly at its start: outside (start exclusive)
          { atMs: now - 5 * MS_PER_HOUR, httpStatus: 304 },
          { atMs: now - 4 * MS_PER_HOUR, httpStatus: 503 },
          { atMs: now - 4 * MS_PER_HOUR + MS_PER_MINUTE, httpStatus: 503 },
          { atMs: now - 3 * MS_PER_HOUR, changed: true }, // no status
          { atMs: now - 3 * MS_PER_HOUR + MS_PER_MINUTE, fetchError: 'timeout' }, // no HTTP answer
          { atMs: now, httpStatus: 200, changed: true }, // exactly at the end: inside (end inclusive)
        ]),
        ...history('https://b.example/1', [
          { atMs: now - 5 * MS_PER_HOUR + MS_PER_MINUTE, httpStatus: 200 },
          { atMs: now - 4 * MS_PER_HOUR + 2 * MS_PER_MINUTE, httpStatus: 404 },
          { atMs: now - 2 * MS_PER_HOUR, httpStatus: 101 },
          { atMs: now - MS_PER_HOUR, httpStatus: 201, changed: true },
        ]),
      ]
      const result = await report(t, toItems(crawls))
      assert.deepEqual(result.rejected, [])
      assert.equal(result.accepted, crawls.length)

      for (const hours of [6, 48]) {
        const s = await stats(t, hours)
        assert.equal(s.windowHours, hours)
        assert.equal(s.windowEnd, iso(now))
        assert.equal(s.takenAt, s.windowEnd)
        assert.equal(s.windowStart, iso(now - hours * MS_PER_HOUR))
        const fromMs = now - hours * MS_PER_HOUR
        // One entry per hour from the hour holding the window's start to the hour holding its end.
        const firstHour = Math.floor(fromMs / MS_PER_HOUR) * MS_PER_HOUR
        assert.deepEqual(
          s.crawlActivity.map((a: { hourStart: string }) => a.hourStart),
          Array.from({ length: Math.floor(now / MS_PER_HOUR) - firstHour / MS_PER_HOUR + 1 }, (_, i) =>
            iso(firstHour + i * MS_PER_HOUR),
          ),
        )
        for (const a of s.crawlActivity as {
          hourStart: string
          crawls: number
          changes: number
          fetchesByStatusClass: Record<StatusClass, number>
        }[]) {
          const startMs = Date.parse(a.hourStart)
          const inHour = crawls.filter(
            (c) => c.atMs >= startMs && c.atMs < startMs + MS_PER_HOUR && c.atMs > fromMs && c.atMs <= now,
          )
          const expected = Object.fromEntries(
            STATUS_CLASSES.map((cls) => [
              cls,
              inHour.filter((c) => statusClassOf(c.httpStatus, c.fetchError) === cls).length,
            ]),
          )
          assert.deepEqual(a.fetchesByStatusClass, expected, `${a.hourStart} (${hours} h)`)
          assert.equal(a.crawls, inHour.length)
          // Changes are counted by ingest: a crawl's changed flag only counts when it closed an interval.
          assert.equal(a.changes, inHour.filter((c) => c.changed === true).length)
        }
        const total = (s.crawlActivity as { crawls: number }[]).reduce((n, a) => n + a.crawls, 0)
        assert.equal(total, crawls.filter((c) => c.atMs > fromMs && c.atMs <= now).length)
      }
      // The 6 h window, spelled out once: three 2xx, two 5xx, one of every other class (a timeout is an error).
      const six = await stats(t, 6)
      const sum = Object.fromEntries(
        STATUS_CLASSES.map((cls) => [
          cls,
          six.crawlActivity.reduce((n: number, a) => n + a.fetchesByStatusClass[cls], 0),
        ]),
      )
      assert.deepEqual(sum, { '1xx': 1, '2xx': 3, '3xx': 1, '4xx': 1, '5xx': 2, error: 1, none: 1 })
    })
  })

  it('counts a crawl stored late by its crawl time, and no rejected crawl', async () => {
    await withApp(async (t) => {
      t.clock.setMs(T0)
      const url = 'https://late.example/p'
      await report(t, toItems(history(url, [{ atMs: T0 - 3 * MS_PER_HOUR }, { atMs: T0 - MS_PER_HOUR }])))
      const late = await report(t, [{ url, crawledAt: iso(T0 - 2 * MS_PER_HOUR), httpStatus: 500 }])
      assert.equal(late.late, 1)
      const rejected = await report(t, [
        { url, crawledAt: iso(T0 + 2 * MS_PER_HOUR), httpStatus: 500, changed: true }, // in the future
        { url: 'not a url', crawledAt: iso(T0 - MS_PER_HOUR / 2), httpStatus: 500 },
      ])
      assert.equal(rejected.rejected.length, 2)
      const s = await stats(t, 6)
      const byHour = new Map(s.crawlActivity.map((a) => [a.hourStart, a.fetchesByStatusClass['5xx']]))
      assert.equal(byHour.get(iso(T0 - 2 * MS_PER_HOUR)), 1)
      assert.equal(
        [...byHour.values()].reduce((n, v) => n + v, 0),
        1,
      )
      assert.deepEqual(
        s.fetchFailures.map((f) => [f.host, f.httpStatus, f.fetches, f.pages, f.lastCrawledAt]),
        [['late.example', 500, 1, 1, iso(T0 - 2 * MS_PER_HOUR)]],
      )
    })
  })
})

describe('GET /v1/stats fetch failures', () => {
  it('lists failed fetches of the window by host and status, most first, and nothing else', async () => {
    await withApp(async (t) => {
      t.clock.setMs(T0)
      const crawls: Crawl[] = []
      // shop.example: 503 on three pages (4 crawls); blog.example: 404 on one page twice and a 500 once;
      // 3xx, 2xx and crawls without a status are no failures; a 503 before the window is outside it;
      // the 4 h window starts exactly at the 102 (start exclusive).
      for (const [i, url] of ['https://shop.example/1', 'https://shop.example/2', 'https://shop.example/3'].entries()) {
        const times = [
          { atMs: T0 - 10 * MS_PER_HOUR, httpStatus: 200 },
          { atMs: T0 - 5 * MS_PER_HOUR + i * MS_PER_MINUTE, httpStatus: 503 },
        ]
        if (i === 0) times.push({ atMs: T0 - 2 * MS_PER_HOUR, httpStatus: 503 })
        crawls.push(...history(url, times))
      }
      crawls.push(
        ...history('https://blog.example/gone', [
          { atMs: T0 - 60 * MS_PER_HOUR, httpStatus: 503 },
          { atMs: T0 - 8 * MS_PER_HOUR, httpStatus: 404 },
          { atMs: T0 - 7 * MS_PER_HOUR, httpStatus: 404 },
        ]),
        ...history('https://blog.example/other', [
          { atMs: T0 - 9 * MS_PER_HOUR, httpStatus: 200 },
          { atMs: T0 - 4 * MS_PER_HOUR, httpStatus: 102 }, // no final response: a failure too
          { atMs: T0 - 3 * MS_PER_HOUR, httpStatus: 500 },
          { atMs: T0 - 2 * MS_PER_HOUR, httpStatus: 301, changed: false },
          { atMs: T0 - MS_PER_HOUR, changed: true },
        ]),
        ...history('https://slow.example/1', [
          { atMs: T0 - 9 * MS_PER_HOUR, httpStatus: 200 },
          { atMs: T0 - 6 * MS_PER_HOUR, fetchError: 'timeout' }, // no HTTP answer: a failure of its own kind
          { atMs: T0 - 5 * MS_PER_HOUR - MS_PER_MINUTE, fetchError: 'dns' },
        ]),
      )
      assert.deepEqual((await report(t, toItems(crawls))).rejected, [])

      const s = await stats(t, 48)
      assert.deepEqual(
        s.fetchFailures.map((f) => [f.host, f.httpStatus, f.fetchError, f.fetches, f.pages, f.lastCrawledAt]),
        [
          ['shop.example', 503, null, 4, 3, iso(T0 - 2 * MS_PER_HOUR)],
          ['blog.example', 404, null, 2, 1, iso(T0 - 7 * MS_PER_HOUR)],
          ['blog.example', 500, null, 1, 1, iso(T0 - 3 * MS_PER_HOUR)],
          ['blog.example', 102, null, 1, 1, iso(T0 - 4 * MS_PER_HOUR)],
          ['slow.example', null, 'dns', 1, 1, iso(T0 - 5 * MS_PER_HOUR - MS_PER_MINUTE)],
          ['slow.example', null, 'timeout', 1, 1, iso(T0 - 6 * MS_PER_HOUR)],
        ],
      )
      // A narrower window: only what falls in it.
      const narrow = await stats(t, 4)
      assert.deepEqual(
        narrow.fetchFailures.map((f) => [f.host, f.httpStatus, f.fetches, f.pages]),
        [
          ['shop.example', 503, 1, 1], // a tie: the latest first
          ['blog.example', 500, 1, 1],
        ],
      )
      // The rows add up to the failure classes of the hourly activity.
      for (const w of [s, narrow]) {
        const failedByClass = w.crawlActivity.reduce(
          (n, a) => n + FAILED_STATUS_CLASSES.reduce((m, c) => m + a.fetchesByStatusClass[c], 0),
          0,
        )
        assert.equal(
          w.fetchFailures.reduce((n: number, f) => n + f.fetches, 0),
          failedByClass,
        )
      }
    })
  })

  it('is empty without failures', async () => {
    await withApp(async (t) => {
      t.clock.setMs(T0)
      await report(
        t,
        toItems(
          history('https://fine.example/', [
            { atMs: T0 - 2 * MS_PER_HOUR, httpStatus: 200 },
            { atMs: T0 - MS_PER_HOUR, httpStatus: 304 },
          ]),
        ),
      )
      const s = await stats(t)
      assert.deepEqual(s.fetchFailures, [])
      assert.equal(s.windowHours, 48)
    })
  })
})

describe('GET /v1/stats handOutAllowance', () => {
  it('says the allowance limits the fleet while a short lease names budgetAllowance, and not once it refills', () =>
    withApp(async (t) => {
      // A budget of 48 a day: the allowance starts at one crawl and fills one every 30 minutes.
      await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 48 } })
      const pages = Array.from({ length: 5 }, (_, i) => ({ url: `https://many.example/${i}` }))
      await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
      t.clock.setMs(T0 + 24 * MS_PER_HOUR)
      const before = (await stats(t)).handOutAllowance
      assert.equal(before.perDay, 48)
      assert.ok(before.tokens >= 1 && before.tokens < 5, JSON.stringify(before))
      assert.equal(before.limiting, true, '5 overdue pages, fewer tokens')
      const res = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit: 10 } })
      const grant = res.json()
      assert.deepEqual(grant.limitedBy, ['budgetAllowance'])
      const after = (await stats(t)).handOutAllowance
      assert.ok(after.tokens < 1, JSON.stringify(after))
      assert.equal(after.limiting, true)

      await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 10_000 } })
      t.clock.advanceMs(10 * MS_PER_MINUTE)
      const refilled = (await stats(t)).handOutAllowance
      assert.ok(refilled.tokens >= 4, JSON.stringify(refilled))
      assert.equal(refilled.limiting, false, 'enough tokens for every overdue page')
    }))
})
