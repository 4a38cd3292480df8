/**
 * Safe defaults (docs/api.md "Settings"): with the default settings a small site is not hammered. The default
 * budget spread over a 20-page site would be 500 crawls per page and day; the default per-page cap
 * (maxCrawlsPerDay, 24: hourly) keeps each page at about one fetch an hour, and the settings say so.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { DEFAULT_MAX_CRAWLS_PER_DAY, DEFAULT_SETTINGS } from '../../src/core/settings.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

const HOUR_MS = MS_PER_DAY / 24

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? null : res.json() }
}

/**
 * A 20-page site whose pages change about twice an hour (Poisson, 48 a day), crawled for a day by a crawler that
 * polls every 5 minutes and fetches its leases at once, with the optimiser run every hour; the first page has
 * its own cap `firstPageCap` when given. Returns the fetches per page of the day and of its first hour.
 */
async function smallSiteDay(
  t: TestApp,
  firstPageCap: number | null = null,
): Promise<{ perPage: number[]; firstHour: number }> {
  const urls = Array.from({ length: 20 }, (_, i) => `https://small.example/${i}`)
  const pages = urls.map((url, i) =>
    i === 0 && firstPageCap !== null ? { url, maxCrawlsPerDay: firstPageCap } : { url },
  )
  assert.equal((await call(t, 'PUT', '/v1/pages', { pages })).status, 200)
  const random = createRandom(22)
  const version = new Map(urls.map((url) => [url, 0]))
  const lastFetchMs = new Map<string, number>()
  const perPage = new Map(urls.map((url) => [url, 0]))
  let firstHour = 0
  const pollMs = 5 * 60_000
  for (let poll = 1; poll <= MS_PER_DAY / pollMs; poll++) {
    t.clock.advanceMs(pollMs)
    const nowMs = t.clock.nowMs()
    if ((nowMs - T0) % HOUR_MS === 0) assert.equal((await call(t, 'POST', '/v1/optimize')).status, 200)
    const grant = (await call(t, 'POST', '/v1/leases', { worker: 'w', limit: 100 })).body
    if (grant.pages.length === 0) continue
    const observations = grant.pages.map((p: { url: string }) => {
      const sinceMs = nowMs - (lastFetchMs.get(p.url) ?? nowMs)
      if (random.next() > Math.exp((-48 * sinceMs) / MS_PER_DAY)) version.set(p.url, version.get(p.url)! + 1)
      lastFetchMs.set(p.url, nowMs)
      perPage.set(p.url, perPage.get(p.url)! + 1)
      if (nowMs - T0 <= HOUR_MS) firstHour++
      return {
        url: p.url,
        crawledAt: iso(nowMs),
        leaseId: grant.leaseId,
        httpStatus: 200,
        contentHash: `v${version.get(p.url)}`,
      }
    })
    const res = await call(t, 'POST', '/v1/observations', { observations })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  return { perPage: [...perPage.values()], firstHour }
}

test('the settings name the default per-page cap, and an operator can lift it', () =>
  withTestApp(async (t) => {
    const settings = (await call(t, 'GET', '/v1/settings')).body
    assert.equal(settings.maxCrawlsPerDay, DEFAULT_MAX_CRAWLS_PER_DAY)
    assert.equal(DEFAULT_SETTINGS.maxCrawlsPerDay, DEFAULT_MAX_CRAWLS_PER_DAY)
    const lifted = await call(t, 'PATCH', '/v1/settings', { maxCrawlsPerDay: null })
    assert.equal(lifted.status, 200)
    assert.equal(lifted.body.maxCrawlsPerDay, null)
    const refused = await call(t, 'PATCH', '/v1/settings', { maxCrawlsPerDay: 0.001 })
    assert.equal(refused.status, 400, 'a cap below the floor (minCrawlsPerDay) is refused')
    assert.equal((await call(t, 'GET', '/v1/settings')).body.maxCrawlsPerDay, null)
  }))

test('with the default settings a 20-page site gets about one fetch per page and hour, not the budget spread over its pages', (c) =>
  withTestApp(async (t) => {
    const { perPage, firstHour } = await smallSiteDay(t)
    const total = perPage.reduce((a, b) => a + b, 0)
    c.diagnostic(
      `default cap: ${total} fetches in a day (per page ${Math.min(...perPage)}–${Math.max(...perPage)}), ${firstHour} in the first hour`,
    )
    // Probes (a page whose every interval saw a change is fetched again sooner) and early hand-outs may go a
    // little past the cap for a while; the day stays near one fetch per page and hour.
    for (const n of perPage) assert.ok(n <= 1.25 * DEFAULT_MAX_CRAWLS_PER_DAY, `fetches per page: ${perPage}`)
    assert.ok(firstHour <= 2 * perPage.length, `${firstHour} fetches in the first hour`)
  }))

test('without the cap the same site gets the budget spread over its pages: what the default prevents', (c) =>
  withTestApp(async (t) => {
    assert.equal((await call(t, 'PATCH', '/v1/settings', { maxCrawlsPerDay: null })).status, 200)
    const { perPage, firstHour } = await smallSiteDay(t)
    const total = perPage.reduce((a, b) => a + b, 0)
    c.diagnostic(
      `no cap: ${total} fetches in a day (per page ${Math.min(...perPage)}–${Math.max(...perPage)}), ${firstHour} in the first hour`,
    )
    assert.ok(total > 2 * DEFAULT_MAX_CRAWLS_PER_DAY * perPage.length, `${total} fetches in a day`)
  }))

test("a page's own cap holds too when the budget has room: the pages due next go out early, but not sooner than their cap allows", (c) =>
  withTestApp(async (t) => {
    assert.equal((await call(t, 'PATCH', '/v1/settings', { maxCrawlsPerDay: null })).status, 200)
    const { perPage } = await smallSiteDay(t, 6)
    c.diagnostic(
      `fetches of the page capped at 6 a day: ${perPage[0]}; of the others: ${Math.min(...perPage.slice(1))}–${Math.max(...perPage.slice(1))}`,
    )
    // Its first fetch (a new page is due at once), 6 a day after it, and a probe or two: a page whose every
    // interval saw a change is probed sooner, caps or not (docs/math.md 3.6). Early hand-outs at half its period
    // gave it twice its cap (12).
    assert.ok(perPage[0]! <= 1 + 6 + 2, `the capped page: ${perPage[0]} fetches`)
  }))
