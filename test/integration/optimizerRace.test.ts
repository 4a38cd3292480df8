/**
 * Optimiser runs and crawl reports may interleave in any order, and no page ever ends with a due time computed
 * from a state older than its latest stored crawl (docs/design.md, "The one global number"): repeated
 * optimiser runs against concurrent reports, then every page is due after its own latest crawl and carries
 * the rate and due time the page step gives its final state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, startTestApp, testAppFor } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { loadColumns } from '../../src/store/optimizerPages.ts'
import { getPageByUrl, writeSchedules } from '../../src/store/pagesRepo.ts'
import { loadSettings, lockSettings } from '../../src/store/settingsRepo.ts'

const PAGES = 300
const ROUNDS = 12

test('repeated optimiser runs against concurrent reports never leave a page due before its own latest crawl', async () => {
  const t = await startTestApp()
  try {
    const urls = Array.from({ length: PAGES }, (_, i) => `https://race${i % 7}.example/p${i}`)
    const budget = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: { budgetCrawlsPerDay: PAGES * 3 },
    })
    assert.equal(budget.statusCode, 200, budget.body)
    const post = (items: Record<string, unknown>[]) =>
      t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: items } })
    assert.equal((await post(urls.map((url) => ({ url, crawledAt: iso(T0), contentHash: 'v0' })))).statusCode, 200)

    let optimizerRuns = 0
    let stop = false
    const optimizer = (async () => {
      while (!stop) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
        assert.equal(res.statusCode, 200, res.body)
        optimizerRuns++
      }
    })()
    // Each round reports a crawl of every page in small concurrent batches, a day after the last: longer than
    // a page's period (about 8 hours), so a due time computed from the previous crawl lies before this one.
    for (let round = 1; round <= ROUNDS; round++) {
      const at = T0 + round * MS_PER_DAY
      t.clock.setMs(at)
      const batches: Promise<unknown>[] = []
      for (let from = 0; from < PAGES; from += 25) {
        const items = urls
          .slice(from, from + 25)
          .map((url, j) => ({ url, crawledAt: iso(at), contentHash: `v${(round + j) % 3 === 0 ? round : 0}` }))
        batches.push(post(items).then((res) => assert.equal(res.statusCode, 200, res.body)))
      }
      await Promise.all(batches)
    }
    stop = true
    await optimizer
    assert.ok(optimizerRuns >= 2, `only ${optimizerRuns} optimiser runs interleaved`)

    let cursor: string | null = null
    let checked = 0
    do {
      const res = await t.app.inject({ method: 'GET', url: `/v1/pages?limit=1000${cursor ? `&cursor=${cursor}` : ''}` })
      const body = res.json() as {
        pages: { url: string; lastCrawledAt: string; dueAt: string; crawls: number }[]
        nextCursor: string | null
      }
      for (const p of body.pages) {
        assert.equal(p.crawls, ROUNDS + 1, `${p.url}: every report stored`)
        assert.ok(
          Date.parse(p.dueAt) > Date.parse(p.lastCrawledAt),
          `${p.url}: due ${p.dueAt} not after its latest crawl ${p.lastCrawledAt}`,
        )
        checked++
      }
      cursor = body.nextCursor
    } while (cursor)
    assert.equal(checked, PAGES)
  } finally {
    await t.close()
  }
})

/**
 * The kept page set's change epoch (src/store/changeEpoch.ts, docs/design.md "The optimiser's kept page set"): a
 * page written by a transaction that is still open while a run reads is read by that run or by the next one.
 * Two connections at once: Postgres only (the embedded database runs one transaction at a time, so there a
 * writer cannot stay open across a run).
 */
test('a write whose transaction is open across a run’s read is in the kept columns after the next run', async (ctx) => {
  if (!process.env.DATABASE_URL) {
    ctx.skip('needs Postgres: a writer and a run on two connections at once')
    return
  }
  const t = await testAppFor(ctx)
  const urls = Array.from({ length: 40 }, (_, i) => `https://epoch${i % 4}.example/p${i}`)
  const put = await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: urls.map((url) => ({ url })) } })
  assert.equal(put.statusCode, 200, put.body)
  const { pool } = t.db
  const settings = await loadSettings(pool)
  const caps = new Map<string, number>()
  const owner = {}
  const run = async () => {
    const client = await pool.connect()
    try {
      return await loadColumns(client, owner, settings, caps, 'key')
    } finally {
      client.release()
    }
  }
  const idOf = async (url: string) => (await getPageByUrl(pool, url))!.id
  /** The kept columns' rate and estimate of a page. */
  const kept = (cache: Awaited<ReturnType<typeof run>>, id: string) => {
    const i = cache.positionOf.get(id)!
    return { crawlsPerDay: cache.cols.oldRate[i], changesPerDay: cache.cols.changesPerDay[i] }
  }
  /** A writer of page state: holds the settings lock shared and re-times one page, then waits to commit. */
  const openWriter = async (id: string, crawlsPerDay: number, lockFirst: boolean) => {
    const client = await pool.connect()
    await client.query('BEGIN')
    const write = async () => {
      await lockSettings(client, 'share')
      await writeSchedules(client, [{ id, changesPerDay: crawlsPerDay / 2, crawlsPerDay, nextCrawlAtMs: T0 }], T0)
    }
    if (lockFirst) await write()
    else await client.query('SELECT 1')
    return {
      write,
      async commit() {
        await client.query('COMMIT')
        client.release()
      },
    }
  }
  const settled = (p: Promise<unknown>) =>
    Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))])

  await run() // reads every page and keeps them
  await run() // now an incremental reader

  // A writer that stamped its row before the run and commits during it: the run waits for it and reads it.
  const first = await idOf(urls[1]!)
  const w1 = await openWriter(first, 11, true)
  const reading = run()
  assert.equal(await settled(reading), false, 'the run waits for a writer that holds the settings lock')
  await w1.commit()
  assert.deepEqual(kept(await reading, first), { crawlsPerDay: 11, changesPerDay: 5.5 })

  // A writer whose transaction began before the run but writes after the run's read: the next run reads it.
  const second = await idOf(urls[2]!)
  const w2 = await openWriter(second, 13, false)
  const before = await run()
  assert.notEqual(kept(before, second).crawlsPerDay, 13)
  await w2.write()
  await w2.commit()
  assert.deepEqual(kept(await run(), second), { crawlsPerDay: 13, changesPerDay: 6.5 })

  // A run's own write-back keeps the rows' stamps (it took what it wrote into its columns): nothing it wrote is
  // stamped with the epoch it moved to.
  const optimized = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
  assert.equal(optimized.statusCode, 200, optimized.body)
  assert.ok((optimized.json() as { pagesRetimed: number }).pagesRetimed > 0)
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM page_schedule WHERE change_epoch >= (SELECT epoch FROM change_epoch WHERE id)',
  )
  assert.equal(rows[0]!.n, 0)
})
