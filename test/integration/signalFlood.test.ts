/**
 * Signals in the schedule (docs/math.md 5.3): a lease-driven fleet on one host whose changes a ping source reports
 * as they happen. The source earns its trust from the crawls; then half of the host's pages change at once and the
 * source says so. Signal-driven crawls come out of the same budget: every hour still hands out the budget's
 * hourly share ±10 %, and the signalled pages are crawled sooner than their schedule would have.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor } from '../helpers/testApp.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../../src/math/units.ts'

describe('a signal flood', () => {
  it('50 % of a host signalled at once: hand-outs per hour stay within ±10 % of the budget’s share', async (ctx) => {
    const t = await testAppFor(ctx)
    const random = createRandom(5)
    const n = 480
    const budgetCrawlsPerDay = n
    const days = 2
    const floodAtMs = T0 + 30 * MS_PER_HOUR
    const stepMs = 5 * MS_PER_MINUTE
    const urls = Array.from({ length: n }, (_, i) => `https://flood.example/p/${i}`)
    const changesPerDay = urls.map(() => 0.1 * Math.exp(random.next() * Math.log(20)))
    const nextChangeMs = changesPerDay.map((c) => T0 + random.exponential(c) * MS_PER_DAY)
    /** Time of each page's latest change, and of its latest crawl. */
    const lastChangeMs = new Array<number>(n).fill(T0 - MS_PER_DAY)
    const lastCrawlMs = new Array<number | null>(n).fill(null)
    const index = new Map(urls.map((u, i) => [u, i]))
    t.clock.setMs(T0)
    // Default settings, the fleet prior on: pages crawled once have no estimate of their own, and a signal's worth
    // for them is averaged over the young host's prior (docs/math.md 5.3); at its mean only 52 of 240 were pulled.
    const patch = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: { budgetCrawlsPerDay },
    })
    assert.equal(patch.statusCode, 200, patch.body)
    const put = await t.app.inject({
      method: 'PUT',
      url: '/v1/pages',
      payload: { pages: urls.map((url) => ({ url })) },
    })
    assert.equal(put.statusCode, 200, put.body)

    const hours = days * 24
    const handedOutPerHour = new Array<number>(hours).fill(0)
    let pulledByFlood = 0
    let floodPending: Set<number> | null = null
    const floodCrawlDelayHours: number[] = []
    let nextOptimizeMs = T0
    for (let nowMs = T0; nowMs < T0 + days * MS_PER_DAY; nowMs += stepMs) {
      t.clock.setMs(nowMs)
      if (nowMs >= nextOptimizeMs) {
        assert.equal((await t.app.inject({ method: 'POST', url: '/v1/optimize' })).statusCode, 200)
        nextOptimizeMs += 6 * MS_PER_HOUR
      }
      // The host's changes up to now, each pinged as it happens.
      const signals: { url: string; source: string; changedAt: string }[] = []
      for (let i = 0; i < n; i++) {
        while (nextChangeMs[i]! <= nowMs) {
          lastChangeMs[i] = nextChangeMs[i]!
          signals.push({ url: urls[i]!, source: 'ping', changedAt: iso(nextChangeMs[i]!) })
          nextChangeMs[i] = nextChangeMs[i]! + random.exponential(changesPerDay[i]!) * MS_PER_DAY
        }
      }
      const flood = nowMs === floodAtMs
      if (flood) {
        floodPending = new Set()
        for (let i = 0; i < n; i += 2) {
          lastChangeMs[i] = nowMs
          floodPending.add(i)
          signals.push({ url: urls[i]!, source: 'ping', changedAt: iso(nowMs) })
        }
      }
      for (let from = 0; from < signals.length; from += 5000) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/signals',
          payload: { signals: signals.slice(from, from + 5000) },
        })
        assert.equal(res.statusCode, 200, res.body)
        if (flood) pulledByFlood += res.json().pulled
      }
      // The fleet takes what is due and crawls it at once.
      for (;;) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/leases',
          payload: { worker: 'fleet', limit: 1000, leaseSeconds: 3600 },
        })
        assert.equal(res.statusCode, 200, res.body)
        const lease = res.json() as { leaseId: string; pages: { url: string }[] }
        handedOutPerHour[Math.floor((nowMs - T0) / MS_PER_HOUR)]! += lease.pages.length
        if (lease.pages.length > 0) {
          const observations = lease.pages.map((p) => {
            const i = index.get(p.url)!
            const last = lastCrawlMs[i] ?? null
            lastCrawlMs[i] = nowMs
            if (floodPending?.delete(i)) floodCrawlDelayHours.push((nowMs - floodAtMs) / MS_PER_HOUR)
            return {
              url: p.url,
              crawledAt: iso(nowMs),
              leaseId: lease.leaseId,
              ...(last === null ? {} : { changed: lastChangeMs[i]! > last }),
            }
          })
          const rep = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
          assert.equal(rep.statusCode, 200, rep.body)
        }
        if (lease.pages.length < 1000) break
      }
    }

    const sources = (await t.app.inject({ method: 'GET', url: '/v1/signal-sources' })).json().sources
    const ping = sources.find((s: { source: string }) => s.source === 'ping')
    assert.ok(ping.precision.mean > 0.8, `precision ${ping.precision.mean}`)
    assert.ok(pulledByFlood > n / 4, `the flood pulled ${pulledByFlood} of ${n / 2} signalled pages forward`)
    const hourlyShare = budgetCrawlsPerDay / 24
    const uses = handedOutPerHour.map((count) => count / hourlyShare)
    for (const [h, use] of uses.entries())
      assert.ok(
        use >= 0.9 && use <= 1.1,
        `hour ${h}: ${use.toFixed(3)} of the hourly share (${uses.map((u) => u.toFixed(2)).join(' ')})`,
      )
    // The flood is worked off at the budget's pace, sooner than the pages' own periods (a day on average).
    const sorted = [...floodCrawlDelayHours].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    assert.ok(median < 12, `median delay ${median} h`)
  })
})
