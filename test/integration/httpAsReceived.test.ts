import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

/** What a crawler got from HTTP goes in as it got it (docs/api.md "Observations"). */
function api(t: TestApp) {
  return {
    post: (observations: unknown[]) =>
      t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } }),
    async page(url: string) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })
      return { status: res.statusCode, body: res.json() }
    },
  }
}

describe('observations take HTTP as the crawler received it', () => {
  it('a relative Location is resolved against the crawled URL, and the move is learned', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post, page } = api(t)
    const url = 'https://moves.example/docs/old?x=1'
    assert.equal((await post([{ url, crawledAt: iso(T0 - MS_PER_DAY) }])).statusCode, 200)
    const res = await post([{ url, crawledAt: iso(T0), httpStatus: 301, redirectTo: '../new/page#top' }])
    assert.deepEqual(res.json(), { accepted: 1, duplicates: 0, late: 0, rejected: [], leaseNotCompleted: [] })
    const moved = await page(url)
    assert.equal(moved.body.status, 'redirected')
    assert.equal(moved.body.redirectTo, 'https://moves.example/new/page')
    assert.equal((await page('https://moves.example/new/page')).status, 200)
  })

  it('Last-Modified and Retry-After as HTTP dates are read; leases give back ready-to-send validators', async (ctx) => {
    const t = await testAppFor(ctx)
    const { post, page } = api(t)
    const url = 'https://dates.example/a'
    const lastModified = 'Sat, 21 Nov 2026 07:12:00 GMT'
    const first = await post([
      { url, crawledAt: iso(T0 - MS_PER_DAY), contentHash: 'h1', lastModified, etag: 'W/"v1"' },
    ])
    assert.deepEqual(first.json().rejected, [])
    const history = await t.app.inject({ method: 'GET', url: `/v1/pages/${(await page(url)).body.id}/observations` })
    assert.equal(history.json().observations[0].lastModified, '2026-11-21T07:12:00.000Z')

    // A 429 whose Retry-After is a date two hours after the crawl: the page waits exactly that long.
    const retryAt = new Date(T0 + 2 * MS_PER_HOUR).toUTCString()
    const throttled = await post([{ url, crawledAt: iso(T0), httpStatus: 429, retryAfter: retryAt }])
    assert.deepEqual(throttled.json().rejected, [])
    assert.equal((await page(url)).body.dueAt, iso(T0 + 2 * MS_PER_HOUR))
    t.clock.setMs(T0 + 2 * MS_PER_HOUR)
    // The same date in retryAfterSeconds, where the header is passed through under the older name.
    const again = await post([
      {
        url,
        crawledAt: iso(T0 + 2 * MS_PER_HOUR),
        httpStatus: 503,
        retryAfterSeconds: new Date(T0 + 5 * MS_PER_HOUR).toUTCString(),
      },
    ])
    assert.deepEqual(again.json().rejected, [])
    assert.equal((await page(url)).body.dueAt, iso(T0 + 5 * MS_PER_HOUR))

    t.clock.setMs(T0 + 6 * MS_PER_HOUR)
    const lease = await t.app.inject({
      method: 'POST',
      url: '/v1/leases',
      payload: { worker: 'w', hosts: ['dates.example'] },
    })
    const [leased] = lease.json().pages
    assert.equal(leased.url, url)
    assert.equal(leased.lastModified, '2026-11-21T07:12:00.000Z')
    assert.equal(leased.ifModifiedSince, lastModified)
    assert.equal(leased.etag, 'W/"v1"')
    assert.equal(leased.ifNoneMatch, 'W/"v1"')
  })

  it('a bad date rejects its item alone, with the reason', async (ctx) => {
    const t = await testAppFor(ctx)
    const res = await api(t).post([
      { url: 'https://bad.example/a', crawledAt: iso(T0), lastModified: 'last tuesday' },
      { url: 'https://bad.example/b', crawledAt: iso(T0), httpStatus: 429, retryAfter: 'later' },
      { url: 'https://bad.example/c', crawledAt: iso(T0) },
    ])
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().accepted, 1)
    assert.deepEqual(res.json().rejected, [
      { index: 0, reason: 'lastModified is neither an HTTP date nor an RFC 3339 timestamp' },
      { index: 1, reason: 'retryAfter is neither a number of seconds nor an HTTP date' },
    ])
  })

  it('fields the service does not know are ignored and counted; every item is applied', async (ctx) => {
    const t = await testAppFor(ctx)
    const res = await api(t).post([
      { url: 'https://extra.example/a', crawledAt: iso(T0), contentType: 'text/html', bytes: 10 },
      { url: 'https://extra.example/b', crawledAt: iso(T0) },
      { url: 'https://extra.example/c', crawledAt: iso(T0), contentType: 'text/plain' },
    ])
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      accepted: 3,
      duplicates: 0,
      late: 0,
      rejected: [],
      unknownFields: { contentType: 2, bytes: 1 },
      leaseNotCompleted: [],
    })
    const listed = await t.app.inject({ method: 'GET', url: '/v1/pages?host=extra.example' })
    assert.equal(listed.json().pages.length, 3)
  })
})
