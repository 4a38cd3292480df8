/**
 * objective freshness-renewal in the service (docs/math.md 3.5): crawls with Last-Modified teach bursty pages a
 * shape, the page step stores it beside the state (migrations/0012), and the optimiser run solves with it, so
 * every page's stored rate is the one its fitted law gives at the stored multiplier.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { decodeEstimatorState, renewalParameters } from '../../src/math/estimators/index.ts'
import { marginalUtility } from '../../src/math/optimizer/index.ts'
import { createRandom } from '../../src/math/random.ts'
import { T0, iso, testAppFor } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

describe('objective freshness-renewal', () => {
  it('stores fitted shapes and solves with them: Σρ = R and every free page has μ f′(ρ) = λ under its own law', async (ctx) => {
    const t = await testAppFor(ctx)
    const random = createRandom(12)
    const n = 30
    const pages = Array.from({ length: n }, (_, i) => ({
      url: `https://r${i % 3}.example/${i}`,
      importance: 1 + (i % 5),
    }))
    await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
    // Even pages: Pareto (α = 1.5) updates, mean one a day; odd pages: Poisson, once a day. 120 daily crawls with Last-Modified.
    const crawls = 120
    const observations: Record<string, unknown>[] = []
    for (const [i, page] of pages.entries()) {
      const gap = i % 2 === 0 ? () => (1 / 3) * Math.pow(1 - random.next(), -1 / 1.5) : () => random.exponential(1)
      let next = -crawls - 60
      let last = Number.NEGATIVE_INFINITY
      while (next < -crawls - 1) {
        last = next
        next += gap()
      }
      for (let k = 0; k <= crawls; k++) {
        const at = k - crawls - 1 // days before T0
        let changed = false
        while (next <= at) {
          changed = true
          last = next
          next += gap()
        }
        observations.push({
          url: page.url,
          crawledAt: iso(T0 + at * MS_PER_DAY),
          ...(k === 0 ? {} : { changed }),
          lastModified: iso(T0 + Math.min(at, last) * MS_PER_DAY),
        })
      }
    }
    for (let i = 0; i < observations.length; i += 2000) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/v1/observations',
        payload: { observations: observations.slice(i, i + 2000) },
      })
      assert.equal(r.statusCode, 200, r.body)
    }
    const budget = 12
    const patch = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: { budgetCrawlsPerDay: budget, objective: 'freshness-renewal', minCrawlsPerDay: 0.01 },
    })
    assert.equal(patch.statusCode, 200, patch.body)
    const run = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
    assert.equal(run.statusCode, 200, run.body)
    const lambda = run.json().lambda as number
    assert.ok(lambda > 0)

    const { rows } = await t.db.pool.query<{
      importance: number
      changes: number
      rate: number
      state: Buffer
      shape: number | null
      ratio: number | null
    }>(
      `SELECT s.importance, p.changes_per_day AS changes, s.crawls_per_day AS rate, p.estimator_state AS state, p.age_shape AS shape, p.age_shape_rate_ratio AS ratio
       FROM pages p JOIN page_schedule s ON s.page_id = p.id`,
    )
    assert.equal(rows.length, n)
    const total = rows.reduce((s, r) => s + r.rate, 0)
    assert.ok(Math.abs(total / budget - 1) < 1e-9, `Σρ = ${total}`)
    let shaped = 0
    let free = 0
    for (const r of rows) {
      const state = decodeEstimatorState(r.state)
      // The columns are the state's own fields.
      assert.equal(r.shape, state?.ageShape ?? null)
      if (r.shape !== null) shaped++
      const law = renewalParameters(state, r.changes)
      if (r.rate <= 0.01) continue
      free++
      const m = marginalUtility('freshness-renewal', r.rate, law.changesPerDay, r.importance, law.ageShape)
      assert.ok(Math.abs(m / lambda - 1) < 1e-9, `marginal ${m} vs λ ${lambda} (β ${law.ageShape})`)
    }
    assert.ok(shaped >= 3, `${shaped} pages with a shape`)
    assert.ok(free >= n / 2, `${free} free pages`)
  })
})
