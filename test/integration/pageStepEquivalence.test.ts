/**
 * The simulator runs the code that ships: one seeded crawl sequence goes through the service over HTTP
 * and through the simulator's loop (src/sim/policies.ts, recrawlPolicy), and after every crawl and every
 * optimiser run the page's counters, estimates, scheduling estimate, rate and due time are the same.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { FreshnessTracker, type PolicyContext } from '../../src/sim/engine.ts'
import { recrawlPolicy } from '../../src/sim/policies.ts'
import { syntheticUniverse } from '../../src/sim/universe.ts'
import { T0, iso, startTestApp } from '../helpers/testApp.ts'

const PAGES = 12
const HORIZON_DAYS = 8
const CRAWLS_PER_PAGE_PER_DAY = 3

test('service over HTTP and simulator loop: identical estimates, rates and due times at every step (12 pages, 8 days, a solve every day)', async () => {
  const universe = syntheticUniverse({
    workload: 'poisson',
    importanceKind: 'zipf',
    pageCount: PAGES,
    horizonDays: HORIZON_DAYS,
    warmupDays: 0,
    crawlsPerPagePerDay: CRAWLS_PER_PAGE_PER_DAY,
    random: createRandom(101),
    importanceRandom: createRandom(102),
  })
  // The same random stream as the service of startTestApp: the registration spreads first due times with it.
  // The service's leases have budget left (none are taken here), so a late crawl keeps its phase there too.
  const loop = recrawlPolicy(universe, {
    estimator: 'mleAdaptive',
    spacing: 'periodic',
    reoptimizeDays: 1,
    random: createRandom(42),
    catchUpLateness: true,
  })
  const tracker = new FreshnessTracker(universe)
  const due = new Float64Array(PAGES)
  const ctx: PolicyContext = {
    universe,
    setDue: (page, days) => {
      due[page] = days
    },
    dueDays: (page) => due[page]!,
    lastCrawlDays: (page) => tracker.lastCrawlDays(page),
  }
  loop.start(ctx)

  const t = await startTestApp()
  try {
    // Each page on its host in the universe, as the simulator's loop sees it (the hosts' priors, docs/math.md 1.12).
    const url = (i: number) =>
      `https://${universe.hostNames?.[universe.hostOfPage?.[i] ?? 0] ?? 'sim.example'}/page/${i}`
    const call = async (method: 'GET' | 'PUT' | 'PATCH' | 'POST', path: string, payload?: unknown) => {
      const res = await t.app.inject({
        method,
        url: path,
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
      assert.ok(res.statusCode < 300, `${method} ${path} → ${res.statusCode}: ${res.body}`)
      return res.json()
    }
    await call('PATCH', '/v1/settings', {
      budgetCrawlsPerDay: universe.budgetCrawlsPerDay,
      estimator: 'mleAdaptive',
      schedule: 'periodic',
      // The simulator's loop runs without the service's default page cap (src/sim/policies.ts).
      maxCrawlsPerDay: null,
    })
    await call('PUT', '/v1/pages', {
      pages: Array.from({ length: PAGES }, (_, i) => ({ url: url(i), importance: universe.importance[i]! })),
    })
    const ids: string[] = []
    for (let i = 0; i < PAGES; i++)
      ids.push((await call('GET', `/v1/pages/by-url?url=${encodeURIComponent(url(i))}`)).id)
    for (let i = 0; i < PAGES; i++) {
      const served = await call('GET', `/v1/pages/${ids[i]}`)
      assert.equal(Date.parse(served.dueAt) - T0, loop.pages()[i]!.nextCrawlAtMs, `page ${i}: first due time`)
    }

    const compare = async (i: number, when: string) => {
      const sim = loop.pages()[i]!
      const served = await call('GET', `/v1/pages/${ids[i]}`)
      const what = `page ${i} ${when}`
      assert.equal(served.crawls, sim.crawls, `${what}: crawls`)
      assert.equal(served.intervals, sim.intervals, `${what}: intervals`)
      assert.equal(served.changes, sim.changes, `${what}: changes`)
      assert.equal(served.changesPerDay, sim.changesPerDay, `${what}: changesPerDay`)
      assert.equal(served.crawlsPerDay, sim.crawlsPerDay, `${what}: crawlsPerDay`)
      if (sim.lastCrawledAtMs !== null) {
        assert.equal(Date.parse(served.lastCrawledAt), T0 + sim.lastCrawledAtMs, `${what}: lastCrawledAt`)
        assert.equal(Date.parse(served.dueAt) - T0, sim.nextCrawlAtMs, `${what}: dueAt`)
      }
    }

    let nowDays = 0
    let nextSolveDays = 1
    let crawls = 0
    let solves = 0
    for (;;) {
      // The most overdue page first, as leases hand them out; crawl times are whole milliseconds.
      let page = 0
      for (let i = 1; i < PAGES; i++) if (due[i]! < due[page]!) page = i
      const atMs = Math.round(Math.max(due[page]!, nowDays + 1 / MS_PER_DAY) * MS_PER_DAY)
      if (atMs / MS_PER_DAY >= nextSolveDays) {
        // An optimiser run: the simulator's tick and POST /v1/optimize at the same time.
        nowDays = nextSolveDays
        t.clock.setMs(T0 + Math.round(nowDays * MS_PER_DAY))
        loop.onTick!(nowDays, ctx)
        await call('POST', '/v1/optimize')
        solves++
        for (let i = 0; i < PAGES; i++)
          if (loop.pages()[i]!.crawls > 0) await compare(i, `after the solve at day ${nowDays}`)
        nextSolveDays++
        if (nextSolveDays > HORIZON_DAYS) break
        continue
      }
      nowDays = atMs / MS_PER_DAY
      t.clock.setMs(T0 + atMs)
      const outcome = tracker.crawl(page, nowDays)
      due[page] = loop.onCrawl(page, nowDays, outcome, ctx)
      const lastModified =
        outcome.ageDays === null ? {} : { lastModified: iso(T0 + atMs - Math.round(outcome.ageDays * MS_PER_DAY)) }
      const body = await call('POST', '/v1/observations', {
        observations: [{ url: url(page), crawledAt: iso(T0 + atMs), changed: outcome.changed, ...lastModified }],
      })
      assert.equal(body.accepted, 1)
      crawls++
      await compare(page, `after crawl ${crawls} at day ${nowDays.toFixed(4)}`)
    }
    assert.ok(crawls > PAGES * HORIZON_DAYS, `only ${crawls} crawls`)
    assert.equal(solves, HORIZON_DAYS)
    assert.ok(
      loop.pages().every((p) => p.intervals > 3),
      'every page has an estimate of its own',
    )
  } finally {
    await t.close()
  }
})
