import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createRecrawlClient, ok } from '@recrawl/client'
import { simulatedClock } from '../../src/domain/clock.ts'
import { DEFAULT_E2E_OPTIONS, runEndToEnd } from '../../src/sim/e2e.ts'
import { startTestApp } from '../helpers/testApp.ts'
import { listenOnLoopback } from '../helpers/listen.ts'

describe('simulate --e2e (src/sim/e2e.ts)', () => {
  it('drives a simulated-clock service through the typed client and reports its budget use per day after the warm-up', async () => {
    const t = await startTestApp({ clock: simulatedClock(0) })
    try {
      const url = await listenOnLoopback(t.app)
      const report = await runEndToEnd({
        ...DEFAULT_E2E_OPTIONS,
        url,
        pageCount: 24,
        horizonDays: 4.5,
        warmupDays: 1,
        stepDays: 1 / 12,
        maxWallSeconds: 300,
        log: () => {},
      })
      assert.equal(report.budgetCrawlsPerDay, 24)
      // Whole days after the warm-up: [1, 2), [2, 3), [3, 4); the half day at the end is not one.
      assert.equal(report.budgetUsePerDay.length, 3)
      for (const use of report.budgetUsePerDay) assert.ok(use > 0.5 && use <= 1.25, `budget use ${use}`)
      const reportedAfterWarmup = report.budgetUsePerDay.reduce((s, u) => s + u * report.budgetCrawlsPerDay, 0)
      assert.ok(reportedAfterWarmup <= report.service.crawls)
      assert.match(
        report.text,
        /budget use per day after warm-up \(crawls reported \/ budget, 3 days\): mean \d\.\d{3}/,
      )
      // The service hands out its budget every day after the warm-up, within one crawl (24 a day here).
      assert.equal(report.handOutsPerDay.length, 3)
      for (const use of report.handOutsPerDay) assert.ok(Math.abs(use * 24 - 24) <= 1, `handed out ${use * 24} of 24`)
      assert.equal(report.handOutsPerHour.length, 3 * 24)

      // The service saw exactly the crawls the driver reports, all through the client's requests.
      const stats = await ok(
        createRecrawlClient({ baseUrl: url }).GET('/v1/stats', { params: { query: { hours: 1 } } }),
      )
      assert.equal(stats.counters.observations.accepted, report.service.crawls)
      assert.ok(report.service.requests > report.service.crawls / 24)
      assert.ok(report.service.freshness > 0 && report.service.freshness <= 1)
      assert.equal(report.inProcess.length, 6)
    } finally {
      await t.close()
    }
  })

  it('refuses a service without a simulated clock, through the client’s error', async () => {
    const t = await startTestApp()
    try {
      const url = await listenOnLoopback(t.app)
      await assert.rejects(
        runEndToEnd({ ...DEFAULT_E2E_OPTIONS, url, pageCount: 4, horizonDays: 1, warmupDays: 0, log: () => {} }),
        /no simulated clock .*GET \/v1\/clock → 404/,
      )
    } finally {
      await t.close()
    }
  })
})
