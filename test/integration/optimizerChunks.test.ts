/**
 * An optimiser run writes its re-timed pages in chunks, each in its own transaction, while it re-times the
 * next ones (src/domain/optimize.ts, ChunkWriter): on Postgres two chunks at a time on connections of their
 * own, on the embedded database one at a time on the run's connection. Small chunks here make a run of a few
 * hundred pages take both paths through many chunks.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { runOptimizer } from '../../src/domain/optimize.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'

const PAGES = 480
const BUDGET_CRAWLS_PER_DAY = 200

async function call(t: TestApp, method: 'PUT' | 'POST' | 'PATCH', url: string, payload?: object) {
  const res = await t.app.inject({ method, url, ...(payload ? { payload } : {}) })
  assert.ok(res.statusCode < 300, `${method} ${url} → ${res.statusCode} ${res.body}`)
  return res.json()
}

/** Pages on 6 hosts with three crawls each, so their change rates differ and the solve moves every rate. */
async function seed(t: TestApp): Promise<string[]> {
  const random = createRandom(11)
  const urls = Array.from({ length: PAGES }, (_, i) => `https://chunk-${i % 6}.example/p/${i}`)
  await call(t, 'PUT', '/v1/pages', { pages: urls.map((url, i) => ({ url, importance: 1 + (i % 4) })) })
  await call(t, 'PATCH', '/v1/settings', { budgetCrawlsPerDay: BUDGET_CRAWLS_PER_DAY })
  for (let k = 0; k < 3; k++) {
    await call(t, 'POST', '/v1/observations', {
      observations: urls.map((url, i) => ({
        url,
        crawledAt: iso(T0 - (3 - k) * MS_PER_DAY),
        changed: random.next() < (i % 10) / 10,
      })),
    })
  }
  return urls
}

async function storedRates(t: TestApp): Promise<{ sum: number; versions: Map<string, number> }> {
  const { rows } = await t.db.pool.query<{ id: string; rate: number | null; version: number }>(
    'SELECT page_id::text AS id, crawls_per_day AS rate, version::float8 AS version FROM page_schedule',
  )
  return { sum: rows.reduce((s, r) => s + (r.rate ?? 0), 0), versions: new Map(rows.map((r) => [r.id, r.version])) }
}

describe('optimiser write-back in chunks', () => {
  it('stores every re-timed page and the multiplier once, across many chunks', async (ctx) => {
    const t = await testAppFor(ctx)
    await seed(t)
    const before = await storedRates(t)
    const deps = { pool: t.db.pool, clock: t.clock, random: createRandom(3) }
    const run = await runOptimizer(deps, { trigger: 'api', wait: true, writeChunkPages: 25 })
    assert.ok(run)
    const after = await storedRates(t)
    const written = [...after.versions].filter(([id, v]) => v !== before.versions.get(id)).length
    // Far more than one chunk moved, and the count the run reports is the rows it wrote.
    assert.ok(run.pagesRetimed > 10 * 25, `only ${run.pagesRetimed} pages re-timed`)
    assert.equal(written, run.pagesRetimed)
    // The stored rates are the solution's: they spend the budget (pages whose rate barely moved keep theirs).
    assert.ok(Math.abs(after.sum / BUDGET_CRAWLS_PER_DAY - 1) < 0.01, `stored rates sum to ${after.sum}`)
    const { rows } = await t.db.pool.query<{ lambda: number }>('SELECT lambda FROM optimizer_state')
    assert.equal(rows[0]!.lambda, run.lambda)
    // Every chunk's write reached the kept page set: the next run finds nothing to re-time.
    const again = await runOptimizer(deps, { trigger: 'api', wait: true, writeChunkPages: 25 })
    assert.equal(again?.pagesRetimed, 0)
  })

  it('ends the run with the error of a chunk that fails, and leaves every connection free', async (ctx) => {
    const t = await testAppFor(ctx)
    await seed(t)
    const { rows } = await t.db.pool.query<{ id: string }>(
      'SELECT id::text AS id FROM pages ORDER BY id OFFSET 300 LIMIT 1',
    )
    await t.db.pool.query(`
      CREATE FUNCTION refuse_one_page() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'chunk refused for page %', OLD.page_id; END $$;
      CREATE TRIGGER refuse_one_page BEFORE UPDATE ON page_schedule FOR EACH ROW WHEN (OLD.page_id = ${Number(rows[0]!.id)})
        EXECUTE FUNCTION refuse_one_page();`)
    const deps = { pool: t.db.pool, clock: t.clock, random: createRandom(3) }
    await assert.rejects(
      runOptimizer(deps, { trigger: 'api', wait: true, writeChunkPages: 25 }),
      /chunk refused for page/,
    )
    assert.equal(t.db.pool.idleCount, t.db.pool.totalCount, 'a connection is still checked out')
    await t.db.pool.query('DROP TRIGGER refuse_one_page ON page_schedule; DROP FUNCTION refuse_one_page()')
    // The chunks that committed keep their rates; the next run writes the rest.
    const run = await runOptimizer(deps, { trigger: 'api', wait: true, writeChunkPages: 25 })
    assert.ok(run && run.pagesRetimed > 0)
    const again = await runOptimizer(deps, { trigger: 'api', wait: true })
    assert.equal(again?.pagesRetimed, 0)
  })
})
