import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../src/math/random.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

type Page = {
  id: string
  url: string
  host: string
  importance: number
  changesPerDay: number
  crawlsPerDay: number
  minCrawlsPerDay: number | null
  maxCrawlsPerDay: number | null
}

async function allPages(t: TestApp): Promise<Page[]> {
  const pages: Page[] = []
  let cursor: string | null = null
  do {
    const res: { json(): { pages: Page[]; nextCursor: string | null } } = await t.app.inject({
      method: 'GET',
      url: `/v1/pages?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
    })
    const body: { pages: Page[]; nextCursor: string | null } = res.json()
    pages.push(...body.pages)
    cursor = body.nextCursor
  } while (cursor)
  return pages
}

/**
 * 300 pages on 7 hosts with random importance (every tenth capped at 0.5 crawls/day), each taught a change
 * rate by 12 daily crawls, then solved for a budget of 400 crawls/day under the freshness objective.
 */
async function optimizeTaughtPages(
  t: TestApp,
): Promise<{ run: { lambda: number; pages: number; expectedFreshness: number }; budget: number }> {
  const random = createRandom(5)
  const pages = Array.from({ length: 300 }, (_, i) => ({
    url: `https://o${i % 7}.example/${i}`,
    importance: 0.1 + random.next() * 5,
    ...(i % 10 === 0 ? { maxCrawlsPerDay: 0.5 } : {}),
  }))
  await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })
  // Teach each page a change rate: 12 periodic crawls with a page-specific change pattern.
  const observations = pages.flatMap((p, i) => {
    const items: Record<string, unknown>[] = [{ url: p.url, crawledAt: iso(T0 - 12 * MS_PER_DAY) }]
    for (let k = 1; k <= 12; k++)
      items.push({
        url: p.url,
        crawledAt: iso(T0 - (12 - k) * MS_PER_DAY - 1000),
        changed: random.next() < ((i % 9) + 1) / 10,
      })
    return items
  })
  for (let i = 0; i < observations.length; i += 2000) {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: { observations: observations.slice(i, i + 2000) },
    })
    assert.equal(r.statusCode, 200)
  }
  const budget = 400
  assert.equal(
    (
      await t.app.inject({
        method: 'PATCH',
        url: '/v1/settings',
        payload: { budgetCrawlsPerDay: budget, objective: 'freshness', minCrawlsPerDay: 0.01 },
      })
    ).statusCode,
    200,
  )
  const res = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
  assert.equal(res.statusCode, 200, res.body)
  const run = res.json()
  return { run, budget }
}

describe('POST /v1/optimize', () => {
  it('spends exactly the budget and satisfies the optimality conditions of docs/math.md 3.1', async (ctx) => {
    const t = await testAppFor(ctx)
    const { run, budget } = await optimizeTaughtPages(t)
    assert.equal(run.pages, 300)
    assert.ok(run.expectedFreshness > 0 && run.expectedFreshness < 1)

    const after = await allPages(t)
    const total = after.reduce((s, p) => s + p.crawlsPerDay, 0)
    assert.ok(Math.abs(total - budget) <= 1e-9 * budget, `total ${total}`)
    let free = 0
    for (const p of after) {
      const lo = p.minCrawlsPerDay ?? 0.01
      const hi = p.maxCrawlsPerDay ?? Infinity
      const marginal = (p.importance * p.changesPerDay) / (p.crawlsPerDay + p.changesPerDay) ** 2
      if (p.crawlsPerDay > lo * (1 + 1e-9) && p.crawlsPerDay < hi * (1 - 1e-9)) {
        free++
        assert.ok(
          Math.abs(marginal - run.lambda) <= 1e-6 * run.lambda,
          `free page marginal ${marginal} vs λ ${run.lambda}`,
        )
      } else if (p.crawlsPerDay <= lo * (1 + 1e-9)) {
        assert.ok(marginal <= run.lambda * (1 + 1e-6))
      } else {
        assert.ok(marginal >= run.lambda * (1 - 1e-6))
      }
    }
    assert.ok(free > 100)
    const runs = await t.db.pool.query('SELECT pages, pages_crawled, lambda FROM optimizer_runs')
    assert.equal(runs.rows.length, 1)
    assert.equal(runs.rows[0].pages, 300)
  })

  it('a page whose estimate moves is re-timed at once from the stored multiplier', async (ctx) => {
    const t = await testAppFor(ctx)
    await optimizeTaughtPages(t)
    const [page] = await allPages(t)
    const before = page!
    const crawl = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: { observations: [{ url: before.url, crawledAt: iso(T0), changed: true }] },
    })
    assert.equal(crawl.json().accepted, 1)
    const after = (await t.app.inject({ method: 'GET', url: `/v1/pages/${before.id}` })).json()
    assert.notEqual(after.changesPerDay, before.changesPerDay)
    const state = await t.db.pool.query('SELECT lambda FROM optimizer_state')
    const lambda = state.rows[0].lambda
    const expected = Math.min(
      after.maxCrawlsPerDay ?? Infinity,
      Math.max(0.01, Math.sqrt((after.importance * after.changesPerDay) / lambda) - after.changesPerDay),
    )
    assert.ok(Math.abs(after.crawlsPerDay - expected) <= 1e-9 * expected, `${after.crawlsPerDay} vs ${expected}`)
    assert.ok(Math.abs(Date.parse(after.nextCrawlAt) - (T0 + MS_PER_DAY / after.crawlsPerDay)) < 1)
  })

  it('host caps bound a host’s total rate', async (ctx) => {
    const t = await testAppFor(ctx)
    await optimizeTaughtPages(t)
    const before = (await allPages(t)).filter((p) => p.host === 'o1.example').reduce((s, p) => s + p.crawlsPerDay, 0)
    const cap = before / 2
    await t.app.inject({
      method: 'PUT',
      url: '/v1/hosts/o1.example',
      payload: { maxCrawlsPerDay: cap, minDelaySeconds: null },
    })
    const run = (await t.app.inject({ method: 'POST', url: '/v1/optimize' })).json()
    const pages = await allPages(t)
    const hostTotal = pages.filter((p) => p.host === 'o1.example').reduce((s, p) => s + p.crawlsPerDay, 0)
    assert.ok(hostTotal <= cap * (1 + 1e-9), `${hostTotal} > ${cap}`)
    const total = pages.reduce((s, p) => s + p.crawlsPerDay, 0)
    assert.ok(Math.abs(total - run.budgetCrawlsPerDay) <= 1e-9 * run.budgetCrawlsPerDay)
  })

  it('refuses an infeasible budget with 422 and records no run', async (ctx) => {
    const t = await testAppFor(ctx)
    await optimizeTaughtPages(t)
    const runsBefore = (await t.db.pool.query('SELECT count(*)::int AS n FROM optimizer_runs')).rows[0].n
    // The settings refuse such a budget when it is set (docs/api.md "Settings")...
    const patched = await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { minCrawlsPerDay: 5 } })
    assert.equal(patched.statusCode, 422)
    // ...but a page registered later with a high floor can still make the bounds exceed it.
    const { budgetCrawlsPerDay } = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    const floor = { url: 'https://floor.example/a', minCrawlsPerDay: budgetCrawlsPerDay }
    await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [floor] } })
    const res = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
    assert.equal(res.statusCode, 422)
    assert.match(res.json().detail, /budget/i)
    const runsAfter = (await t.db.pool.query('SELECT count(*)::int AS n FROM optimizer_runs')).rows[0].n
    assert.equal(runsAfter, runsBefore)
    await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [{ ...floor, minCrawlsPerDay: 1 }] } })
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/optimize' })).statusCode, 200)
  })
})
