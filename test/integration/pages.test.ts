import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

const putPages = (t: TestApp, pages: unknown[]) => t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })

/** Four pages on two hosts, as the first test leaves them. */
async function registerPages(t: TestApp): Promise<void> {
  const res = await putPages(t, [
    { url: 'https://a.example/1' },
    { url: 'https://a.example/2' },
    { url: 'https://b.example/1', minCrawlsPerDay: 0.1 },
    { url: 'https://a.example/3' },
  ])
  assert.deepEqual(res.json(), { created: 4, updated: 0 })
}

/** Two crawls of a page, a day apart, the second a change. */
async function crawlTwice(t: TestApp, url: string): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/observations',
    payload: {
      observations: [
        { url, crawledAt: iso(T0 - 2 * MS_PER_DAY) },
        { url, crawledAt: iso(T0 - MS_PER_DAY), changed: true },
      ],
    },
  })
  assert.equal(res.json().accepted, 2)
}

describe('pages', () => {
  it('upserts in bulk with PUT semantics and reads pages back by id and by URL', async (ctx) => {
    const t = await testAppFor(ctx)
    const res = await putPages(t, [
      { url: 'https://a.example/1', importance: 2.5, maxCrawlsPerDay: 48 },
      { url: 'https://a.example/2' },
      { url: 'https://b.example/1', minCrawlsPerDay: 0.1 },
    ])
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { created: 3, updated: 0 })
    const again = await putPages(t, [{ url: 'https://A.example/1', importance: 1 }, { url: 'https://a.example/3' }])
    assert.deepEqual(again.json(), { created: 1, updated: 1 })

    const page = (await t.app.inject({ method: 'GET', url: '/v1/pages/by-url?url=https://a.example/1' })).json()
    assert.equal(page.importance, 1)
    assert.equal(page.maxCrawlsPerDay, null) // PUT replaces: the bound was not given again
    assert.equal(page.crawls, 0)
    assert.equal(page.changesPerDay, null)
    assert.equal(page.nextCrawlAt, iso(T0)) // never crawled: due now
    const byId = await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}` })
    assert.deepEqual(byId.json(), page)
  })

  it('lists pages with cursor paging and a host filter', async (ctx) => {
    const t = await testAppFor(ctx)
    await registerPages(t)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const q: string = cursor ? `&cursor=${cursor}` : ''
      const res = await t.app.inject({ method: 'GET', url: `/v1/pages?limit=2${q}` })
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.ok(body.pages.length <= 2)
      seen.push(...body.pages.map((p: { url: string }) => p.url))
      cursor = body.nextCursor
    } while (cursor)
    assert.deepEqual(seen.sort(), [
      'https://a.example/1',
      'https://a.example/2',
      'https://a.example/3',
      'https://b.example/1',
    ])
    const b = (await t.app.inject({ method: 'GET', url: '/v1/pages?host=b.example' })).json()
    assert.deepEqual(
      b.pages.map((p: { url: string }) => p.url),
      ['https://b.example/1'],
    )
    assert.equal(b.nextCursor, null)
    const bad = await t.app.inject({ method: 'GET', url: '/v1/pages?cursor=abc' })
    assert.equal(bad.statusCode, 400)
  })

  it('rejects a batch with any invalid page, listing every problem, and writes nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const res = await putPages(t, [
      { url: 'https://ok.example/new' },
      { url: 'not a url' },
      { url: 'https://ok.example/x', minCrawlsPerDay: 5, maxCrawlsPerDay: 1 },
      { url: 'https://ok.example/new#dup' },
    ])
    assert.equal(res.statusCode, 400)
    const p = res.json()
    assert.deepEqual(
      p.errors.map((e: { path: string }) => e.path),
      ['/body/pages/1/url', '/body/pages/2/maxCrawlsPerDay', '/body/pages/3/url'],
    )
    const lookup = await t.app.inject({ method: 'GET', url: '/v1/pages/by-url?url=https://ok.example/new' })
    assert.equal(lookup.statusCode, 404)
    assert.equal(lookup.headers['content-type'], 'application/problem+json; charset=utf-8')
    const negative = await putPages(t, [{ url: 'https://ok.example/n', importance: -1 }])
    assert.equal(negative.statusCode, 400)
    assert.equal(negative.json().errors[0].path, '/body/pages/0/importance')
  })

  it('changing importance re-times a crawled page at once', async (ctx) => {
    const t = await testAppFor(ctx)
    await registerPages(t)
    await crawlTwice(t, 'https://a.example/2')
    const before = (await t.app.inject({ method: 'GET', url: '/v1/pages/by-url?url=https://a.example/2' })).json()
    await putPages(t, [{ url: 'https://a.example/2', maxCrawlsPerDay: 0.5 }])
    const after = (await t.app.inject({ method: 'GET', url: `/v1/pages/${before.id}` })).json()
    assert.equal(after.crawlsPerDay, 0.5)
    assert.equal(Date.parse(after.nextCrawlAt), T0 - MS_PER_DAY + 2 * MS_PER_DAY)
  })

  it('deletes a page with its history; unknown and malformed ids are 404', async (ctx) => {
    const t = await testAppFor(ctx)
    await registerPages(t)
    await crawlTwice(t, 'https://a.example/2')
    const page = (await t.app.inject({ method: 'GET', url: '/v1/pages/by-url?url=https://a.example/2' })).json()
    assert.equal(page.crawls, 2)
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/pages/${page.id}` })
    assert.equal(del.statusCode, 204)
    assert.equal(del.body, '')
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}` })).statusCode, 404)
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/observations` })).statusCode, 404)
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/pages/${page.id}` })).statusCode, 404)
    const count = await t.db.pool.query('SELECT count(*)::int AS n FROM observations WHERE page_id = $1', [page.id])
    assert.equal(count.rows[0].n, 0)
    const bad = await t.app.inject({ method: 'GET', url: '/v1/pages/abc' })
    assert.equal(bad.statusCode, 404) // ids are opaque: one that cannot exist is an unknown page
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/nothing' })).statusCode, 404)
  })
})
