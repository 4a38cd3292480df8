/**
 * Optimiser runs and crawl reports may interleave in any order, and no page ever ends with a due time computed
 * from a state older than its latest stored crawl (docs/design.md, "The one global number"): repeated
 * optimiser runs against concurrent reports, then every page is due after its own latest crawl and carries
 * the rate and due time the page step gives its final state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, startTestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

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
