import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../src/math/random.ts'
import { DAY_MS, T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'

let t: TestApp
before(async () => {
  t = await startTestApp()
})
after(async () => {
  await t?.close()
})

/** A page that changes as a Poisson process (rate Δ) crawled at Poisson times (rate p), reporting Last-Modified. */
function simulatedHistory(url: string, changesPerDay: number, crawlsPerDay: number, crawls: number, seed: number) {
  const random = createRandom(seed)
  const startMs = T0 - 400 * DAY_MS
  let nextChangeMs = startMs + random.exponential(changesPerDay) * DAY_MS
  let lastChangeMs = startMs - DAY_MS
  let atMs = startMs
  const items: Record<string, unknown>[] = []
  for (let k = 0; k < crawls; k++) {
    atMs += Math.max(1000, Math.round(random.exponential(crawlsPerDay) * DAY_MS))
    let changed = false
    while (nextChangeMs <= atMs) {
      changed = true
      lastChangeMs = nextChangeMs
      nextChangeMs += random.exponential(changesPerDay) * DAY_MS
    }
    items.push({ url, crawledAt: iso(atMs), ...(k > 0 ? { changed } : {}), lastModified: iso(Math.floor(lastChangeMs / 1000) * 1000) })
  }
  return items
}

describe('GET /v1/pages/{id}/estimates', () => {
  it('reports every estimator with the exact MLE, its confidence interval and the update distribution', async () => {
    const url = 'https://est.example/page'
    const items = simulatedHistory(url, 0.5, 1, 300, 11)
    const post = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: items } })
    assert.equal(post.json().accepted, 300)
    const page = (await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${url}` })).json()
    const res = await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/estimates` })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.intervals, 299)
    assert.equal(body.historyObservations, 300)
    const byName = new Map(body.estimators.map((e: { name: string }) => [e.name, e]))
    for (const name of ['naive', 'lln', 'sa', 'mle', 'momentMatching', 'choGm', 'lastModified', 'mleExact', 'momentMatchingExact']) {
      assert.ok(byName.has(name), `missing ${name}`)
    }
    const exact = byName.get('mleExact') as { changesPerDay: number; ci95: [number, number] }
    const online = byName.get('mle') as { changesPerDay: number }
    assert.ok(Math.abs(online.changesPerDay - exact.changesPerDay) <= 0.005 * exact.changesPerDay, 'online MLE within 0.5 % of the exact one')
    assert.ok(exact.ci95[0] < exact.changesPerDay && exact.changesPerDay < exact.ci95[1])
    assert.ok(exact.ci95[0] < 0.5 && 0.5 < exact.ci95[1], `true rate 0.5 inside ${exact.ci95}`)
    const probability = body.changeClasses.reduce((s: number, c: { probability: number }) => s + c.probability, 0)
    assert.ok(Math.abs(probability - 1) < 1e-9)
    assert.equal(body.updateDistribution.method, 'M2')
    assert.ok(body.updateDistribution.points.length > 3)
    assert.ok(body.localRate === null || body.localRate.changesPerDay > 0)
  })

  it('a page with no history has only empty estimates', async () => {
    const put = await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [{ url: 'https://est.example/new' }] } })
    assert.equal(put.statusCode, 200)
    const page = (await t.app.inject({ method: 'GET', url: '/v1/pages/by-url?url=https://est.example/new' })).json()
    const body = (await t.app.inject({ method: 'GET', url: `/v1/pages/${page.id}/estimates` })).json()
    assert.equal(body.intervals, 0)
    assert.ok(body.estimators.every((e: { changesPerDay: number | null }) => e.changesPerDay === null))
    assert.equal(body.updateDistribution, null)
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/pages/999999/estimates' })).statusCode, 404)
  })
})
