/**
 * Page search and bulk actions (docs/api.md "Pages", "Bulk actions"): GET /v1/pages by host, URL prefix, status
 * and noisy flag, paged; POST /v1/pages/bulk counts (dryRun), deletes or updates exactly the pages a filter takes.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_HOUR } from '../../src/math/units.ts'

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.json(), type: String(res.headers['content-type']) }
}

/** Every page URL a listing returns, following nextCursor. */
async function urls(t: TestApp, query: string, limit = 3): Promise<string[]> {
  const out: string[] = []
  let cursor: string | null = null
  do {
    const q: string = `${query}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`
    const res = await call(t, 'GET', `/v1/pages?${q}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    out.push(...res.body.pages.map((p: { url: string }) => p.url))
    cursor = res.body.nextCursor
  } while (cursor !== null)
  return out.sort()
}

/** a.example/keep/0..3, a.example/junk/0..5, b.example/junk/0..1; a.example/keep/0 is failing after 503s. */
async function seed(t: TestApp): Promise<void> {
  const pages = [
    ...Array.from({ length: 4 }, (_, i) => ({ url: `https://a.example/keep/${i}` })),
    ...Array.from({ length: 6 }, (_, i) => ({ url: `https://a.example/junk/${i}` })),
    ...Array.from({ length: 2 }, (_, i) => ({ url: `https://b.example/junk/${i}` })),
  ]
  assert.equal((await call(t, 'PUT', '/v1/pages', { pages })).status, 200)
  const url = 'https://a.example/keep/0'
  assert.equal(
    (await call(t, 'POST', '/v1/observations', { observations: [{ url, crawledAt: iso(T0), contentHash: 'x' }] }))
      .status,
    200,
  )
  t.clock.advanceMs(MS_PER_HOUR)
  const failed = await call(t, 'POST', '/v1/observations', {
    observations: [{ url, crawledAt: iso(T0 + MS_PER_HOUR), httpStatus: 503 }],
  })
  assert.deepEqual(failed.body.rejected, [])
}

test('pages are found by URL prefix, host, status and noisy flag, paged by the server', () =>
  withTestApp(async (t) => {
    await seed(t)
    assert.equal((await urls(t, 'urlPrefix=https://a.example/junk/')).length, 6)
    assert.deepEqual(await urls(t, 'host=b.example'), ['https://b.example/junk/0', 'https://b.example/junk/1'])
    assert.deepEqual(await urls(t, 'status=failing'), ['https://a.example/keep/0'])
    assert.equal((await urls(t, 'host=a.example&status=active')).length, 9)
    assert.equal((await urls(t, 'noisy=false')).length, 12)
    assert.deepEqual(await urls(t, 'noisy=true'), [])
    assert.deepEqual(await urls(t, 'urlPrefix=https://a.example/%25'), [], 'a % in the prefix matches itself only')
    for (const q of ['status=dead', 'noisy=yes', 'host=%20']) {
      const res = await call(t, 'GET', `/v1/pages?${q}`)
      assert.equal(res.status, 400, q)
      assert.match(res.type, /application\/problem\+json/)
    }
  }))

test('a bulk dry run counts, a delete removes exactly the filtered pages, an update sets importance and bounds', () =>
  withTestApp(async (t) => {
    await seed(t)
    const filter = { urlPrefix: 'https://a.example/junk/' }
    const dry = await call(t, 'POST', '/v1/pages/bulk', { filter, action: 'delete', dryRun: true })
    assert.deepEqual(dry.body, { matched: 6, applied: 0 })
    assert.equal((await urls(t, 'host=a.example')).length, 10, 'a dry run deletes nothing')

    const del = await call(t, 'POST', '/v1/pages/bulk', { filter, action: 'delete' })
    assert.deepEqual(del.body, { matched: 6, applied: 6 })
    assert.equal((await urls(t, 'host=a.example')).length, 4)
    assert.equal((await urls(t, 'host=b.example')).length, 2, 'other pages stay')

    const upd = await call(t, 'POST', '/v1/pages/bulk', {
      filter: { host: 'b.example' },
      action: 'update',
      set: { importance: 5, maxCrawlsPerDay: 2 },
    })
    assert.deepEqual(upd.body, { matched: 2, applied: 2 })
    const b = (await call(t, 'GET', '/v1/pages?host=b.example')).body.pages
    assert.deepEqual(
      b.map((p: { importance: number; minCrawlsPerDay: number | null; maxCrawlsPerDay: number | null }) => [
        p.importance,
        p.minCrawlsPerDay,
        p.maxCrawlsPerDay,
      ]),
      [
        [5, null, 2],
        [5, null, 2],
      ],
    )
    const a = (await call(t, 'GET', '/v1/pages?host=a.example')).body.pages
    assert.ok(
      a.every((p: { importance: number }) => p.importance === 1),
      'pages outside the filter keep theirs',
    )
  }))

test('a bulk action without a filter, with an unknown action or an update without set is a 400 that changes nothing', () =>
  withTestApp(async (t) => {
    await seed(t)
    for (const body of [
      { filter: {}, action: 'delete' },
      { action: 'delete' },
      { filter: { host: 'a.example' }, action: 'drop' },
      { filter: { host: 'a.example' }, action: 'update' },
      { filter: { host: 'a.example' }, action: 'update', set: {} },
      { filter: { host: 'a.example', colour: 'red' }, action: 'delete' },
      { filter: { status: 'dead' }, action: 'delete' },
    ]) {
      const res = await call(t, 'POST', '/v1/pages/bulk', body)
      assert.equal(res.status, 400, JSON.stringify(body))
      assert.match(res.type, /application\/problem\+json/)
    }
    assert.equal((await urls(t, 'urlPrefix=https://')).length, 12)
  }))
