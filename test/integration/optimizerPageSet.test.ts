/**
 * The optimiser keeps its input between runs and reads only the pages written since (src/domain/optimize.ts,
 * PageSetCache). A run on the kept page set must solve exactly what a run that reads every page solves: after
 * each kind of write (crawls, importance and bounds, leases, a deletion, a host cap), a second service on the
 * same database, which has kept nothing, runs the optimiser and finds the same multiplier and nothing to
 * re-time. Two connection pools on one database: Postgres only.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { runOptimizer } from '../../src/domain/optimize.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'

async function call(t: TestApp, method: 'PUT' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
  const res = await t.app.inject({ method, url, ...(payload ? { payload } : {}) })
  assert.ok(res.statusCode < 300, `${method} ${url} → ${res.statusCode} ${res.body}`)
  return res.body === '' ? null : res.json()
}

describe('the optimiser’s kept page set', () => {
  it('solves what a full read solves after crawls, upserts, leases, a deletion and a host cap', async (ctx) => {
    if (!process.env.DATABASE_URL) {
      ctx.skip('needs Postgres: a second pool on the same database')
      return
    }
    const t = await testAppFor(ctx)
    const random = createRandom(5)
    const urls = Array.from({ length: 400 }, (_, i) => `https://set-${i % 8}.example/p/${i}`)
    await call(t, 'PUT', '/v1/pages', { pages: urls.map((url, i) => ({ url, importance: 1 + (i % 5) })) })
    await call(t, 'PATCH', '/v1/settings', { budgetCrawlsPerDay: 150 })
    const crawl = async (subset: string[], atMs: number) =>
      call(t, 'POST', '/v1/observations', {
        observations: subset.map((url) => ({ url, crawledAt: iso(atMs), changed: random.next() < 0.5 })),
      })
    for (let k = 0; k < 4; k++) await crawl(urls, T0 - (4 - k) * MS_PER_DAY)

    const { rows } = await t.db.pool.query<{ name: string }>('SELECT current_database() AS name')
    const url = new URL(process.env.DATABASE_URL)
    url.pathname = `/${rows[0]!.name}`
    const other = new pg.Pool({ connectionString: url.toString(), max: 2 })
    ctx.after(() => other.end())
    const clock = manualClock(T0)
    /** A run by a second service that has kept nothing: what the kept set must have solved. */
    const freshRun = () => runOptimizer({ pool: other, clock, random: createRandom(1) }, { trigger: 'api', wait: true })

    const steps: [string, () => Promise<unknown>][] = [
      ['crawls of some pages', () => crawl(urls.slice(0, 60), T0 - MS_PER_HOUR)],
      [
        'importance and bounds changed',
        () =>
          call(t, 'PUT', '/v1/pages', {
            pages: urls.slice(100, 130).map((u) => ({ url: u, importance: 9, minCrawlsPerDay: 0.5 })),
          }),
      ],
      [
        'new pages',
        () =>
          call(t, 'PUT', '/v1/pages', {
            pages: [{ url: 'https://set-new.example/a' }, { url: 'https://set-new.example/b' }],
          }),
      ],
      ['a lease', () => call(t, 'POST', '/v1/leases', { worker: 'w', limit: 50 })],
      [
        'a deleted page',
        async () => {
          const page = (
            await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(urls[5]!)}` })
          ).json()
          await call(t, 'DELETE', `/v1/pages/${page.id}`)
        },
      ],
      ['a host cap', () => call(t, 'PUT', '/v1/hosts/set-3.example', { maxCrawlsPerDay: 5 })],
      ['nothing', async () => {}],
    ]
    // The service's first run reads every page and keeps them.
    await call(t, 'POST', '/v1/optimize')
    for (const [what, write] of steps) {
      await write()
      const kept = await call(t, 'POST', '/v1/optimize')
      const fresh = await freshRun()
      assert.ok(fresh)
      assert.equal(fresh.pages, kept.pages, `${what}: pages`)
      // The same multiplier, to the last few ulps (the kept run starts its search from the previous λ).
      assert.ok(
        Math.abs(fresh.lambda / kept.lambda - 1) < 1e-12,
        `${what}: the multiplier ${kept.lambda}, a full read ${fresh.lambda}`,
      )
      assert.equal(fresh.pagesRetimed, 0, `${what}: a full read found rates the kept set did not set`)
      // With nothing written since, the kept set (which took in its own writes) finds nothing to re-time either.
      if (what === 'nothing') assert.equal(kept.pagesRetimed, 0)
    }
  })
})
