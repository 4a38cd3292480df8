/**
 * Edges a new user meets in the first hour (docs/api.md): URL credentials are refused with a clear reason, a
 * budget the pages' lower bounds cannot fit in is refused when it is set, and POST /v1/optimize takes a client
 * that always sends a JSON content type with no body.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor } from '../helpers/testApp.ts'

describe('first-run edges', () => {
  it('a URL with credentials is refused: the whole page batch (400), a report item alone', async (ctx) => {
    const t = await testAppFor(ctx)
    const put = await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: [{ url: 'https://user:secret@creds.example/a' }] },
    })
    assert.equal(put.statusCode, 400, put.body)
    assert.match(put.body, /credentials/)
    assert.doesNotMatch(put.body, /secret/, 'the password is not echoed back')
    const report = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: {
        observations: [
          { url: 'https://user:secret@creds.example/a', crawledAt: iso(T0) },
          { url: 'https://creds.example/b', crawledAt: iso(T0) },
        ],
      },
    })
    assert.equal(report.json().accepted, 1)
    assert.equal(report.json().rejected.length, 1)
    assert.match(report.json().rejected[0].reason, /^url carries credentials/)
    const pages = await t.app.inject({ method: 'GET', url: '/v1/pages?host=creds.example' })
    assert.deepEqual(
      pages.json().pages.map((p: { url: string }) => p.url),
      ['https://creds.example/b'],
    )
  })

  it('PATCH /v1/settings refuses a budget below what the lower bounds need (422), and changes nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const pages = Array.from({ length: 10 }, (_, i) => ({ url: `https://floor.example/${i}`, minCrawlsPerDay: 2 }))
    pages.push({ url: 'https://floor.example/default', minCrawlsPerDay: undefined as unknown as number })
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })).statusCode, 200)
    const before = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    const patch = (body: Record<string, unknown>) =>
      t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: body })

    // 10 pages at 2 a day and one at the settings' minimum (0.5 here): 20.5 a day.
    assert.equal((await patch({ minCrawlsPerDay: 0.5 })).statusCode, 200)
    const refused = await patch({ budgetCrawlsPerDay: 20 })
    assert.equal(refused.statusCode, 422, refused.body)
    assert.match(refused.json().detail, /need 20\.5 crawls per day/)
    const raised = await patch({ minCrawlsPerDay: before.budgetCrawlsPerDay, maxCrawlsPerDay: null })
    assert.equal(raised.statusCode, 422, 'a minimum that would need more than the budget is refused too')
    const after = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    assert.equal(after.budgetCrawlsPerDay, before.budgetCrawlsPerDay)
    assert.equal(after.minCrawlsPerDay, 0.5)
    assert.equal((await patch({ budgetCrawlsPerDay: 20.5 })).statusCode, 200, 'exactly enough is feasible')
    const optimized = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
    assert.equal(optimized.statusCode, 200, optimized.body)
  })

  it('POST /v1/optimize accepts a JSON content type with an empty body; a route that needs a body still refuses it', async (ctx) => {
    const t = await testAppFor(ctx)
    const empty = await t.app.inject({
      method: 'POST',
      url: '/v1/optimize',
      headers: { 'content-type': 'application/json' },
      payload: '',
    })
    assert.equal(empty.statusCode, 200, empty.body)
    const noBatch = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      headers: { 'content-type': 'application/json' },
      payload: '',
    })
    assert.equal(noBatch.statusCode, 400, noBatch.body)
    assert.match(String(noBatch.headers['content-type']), /^application\/problem\+json/)
  })
})
