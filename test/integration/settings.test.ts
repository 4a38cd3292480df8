import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_SETTINGS } from '../../src/core/settings.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

/** The requests of these tests, against one test's service. */
const api = (t: TestApp) => ({
  patch: (payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: '/v1/settings', payload }),
  getPage: async (url: string) => (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${url}` })).json(),
})

describe('settings', () => {
  it('starts from the documented defaults', async (ctx) => {
    const t = await testAppFor(ctx)
    const res = await t.app.inject({ method: 'GET', url: '/v1/settings' })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), DEFAULT_SETTINGS)
    assert.equal(res.json().estimator, 'mleAdaptive')
    assert.equal(res.json().schedule, 'periodic')
  })

  it('persists a valid change, merging nested objects', async (ctx) => {
    const t = await testAppFor(ctx)
    const { patch } = api(t)
    const res = await patch({ budgetCrawlsPerDay: 500, sa: { gamma: 0.9 } })
    assert.equal(res.statusCode, 200, res.body)
    const after = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    assert.equal(after.budgetCrawlsPerDay, 500)
    assert.equal(after.sa.gamma, 0.9)
    assert.deepEqual(after.lln, DEFAULT_SETTINGS.lln)
  })

  it('refuses invalid changes with the offending paths and changes nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const { patch } = api(t)
    const before = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    for (const body of [
      { estimator: 'magic' },
      { sa: { gamma: 0.5 } },
      { lln: { alpha: '1/k^2' } },
      { budgetCrawlsPerDay: -1 },
      { minCrawlsPerDay: 10, maxCrawlsPerDay: 1 },
      { unknownKey: 1 },
    ]) {
      const res = await patch(body)
      assert.equal(res.statusCode, 400, JSON.stringify(body))
      assert.ok(res.json().errors.length > 0)
    }
    const cross = await patch({ minCrawlsPerDay: 10, maxCrawlsPerDay: 1 })
    assert.equal(cross.json().errors[0].path, '/body/maxCrawlsPerDay')
    const after = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    assert.deepEqual(after, before)
  })

  it('switching the estimator, α or the clipping bounds re-derives every page at once', async (ctx) => {
    const t = await testAppFor(ctx)
    const { patch, getPage } = api(t)
    const url = 'https://s.example/p'
    const obs = [{ url, crawledAt: iso(T0 - 10 * MS_PER_DAY) }]
    for (let i = 1; i <= 9; i++)
      obs.push({ url, crawledAt: iso(T0 - (10 - i) * MS_PER_DAY), changed: i % 3 === 0 } as never)
    await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: obs } })
    const mle = await getPage(url)
    assert.equal(mle.changesPerDay, mle.estimates.mle)

    await patch({ estimator: 'naive' })
    const naive = await getPage(url)
    assert.equal(naive.estimator, 'naive')
    assert.equal(naive.changesPerDay, naive.estimates.naive)
    assert.ok(Math.abs(naive.changesPerDay - 3 / 9) < 1e-12)

    // LLN with α = 1/k: p̂·X/(n−X+1) = 1·3/7; with a constant α = 0.5: 1·(1/3)/(2/3 + 0.5).
    await patch({ estimator: 'lln', lln: { alpha: 0.5 } })
    const lln = await getPage(url)
    assert.ok(Math.abs(lln.changesPerDay - 1 / 3 / (2 / 3 + 0.5)) < 1e-12, String(lln.changesPerDay))
    await patch({ lln: { alpha: '1/k' } })
    assert.ok(Math.abs((await getPage(url)).changesPerDay - 3 / 7) < 1e-12)

    await patch({ maxChangesPerDay: 0.2 })
    const clipped = await getPage(url)
    assert.equal(clipped.changesPerDay, 0.2)
    assert.equal(clipped.estimates.naive, 0.2)
  })
})
