/**
 * Each host gets its planned share (docs/api.md "Schedule"): a crawler that takes a lease every 10 minutes and
 * polls the paced hosts that leases name every minute with a `hosts` filter, for a simulated day. The polite
 * (paced) hosts get within 10 % of their planned crawls; a rate-limited host (one request per 10 minutes,
 * 429 otherwise) is paced: a lease with a host filter takes no early hand-outs, which would give the filtered
 * hosts the fleet's unused allowance (polite-a got 80 fetches for 69.5 planned with them).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { createRandom } from '../../src/math/random.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'

const HOUR_MS = MS_PER_DAY / 24
const MINUTE_MS = 60_000
const PAGES_PER_HOST = 10
/** Hosts and their pages' change rates (changes per day); the polite ones have an operator pace. */
const HOSTS = [
  { host: 'polite-a.example', changesPerDay: 4, minDelaySeconds: 300 },
  { host: 'polite-b.example', changesPerDay: 1, minDelaySeconds: 600 },
  { host: 'plain-c.example', changesPerDay: 4, minDelaySeconds: null },
  { host: 'plain-d.example', changesPerDay: 2, minDelaySeconds: null },
  { host: 'plain-e.example', changesPerDay: 0.5, minDelaySeconds: null },
  { host: 'limited.example', changesPerDay: 2, minDelaySeconds: null },
] as const
const LIMITED_EVERY_MS = 10 * 60_000

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.body === '' ? null : res.json()
}

/** Each host's planned crawls per day (Σ crawlsPerDay of its pages). */
async function plannedPerHost(t: TestApp): Promise<Map<string, number>> {
  const body = await call(t, 'GET', '/v1/host-overview?limit=100')
  return new Map(body.hosts.map((h: { host: string; plannedCrawlsPerDay: number }) => [h.host, h.plannedCrawlsPerDay]))
}

test('a crawler that polls paced hosts with a host filter gives each polite host its planned share, within 10 %; a rate-limited host is paced', (c) =>
  withTestApp(async (t) => {
    const random = createRandom(24)
    const pages = HOSTS.flatMap(({ host }) =>
      Array.from({ length: PAGES_PER_HOST }, (_, i) => ({ url: `https://${host}/${i}` })),
    )
    await call(t, 'PUT', '/v1/pages', { pages })
    for (const h of HOSTS)
      if (h.minDelaySeconds !== null)
        await call(t, 'PUT', `/v1/hosts/${h.host}`, { minDelaySeconds: h.minDelaySeconds })
    const rateOf = new Map<string, number>(HOSTS.map((h) => [h.host, h.changesPerDay]))
    // Twenty days of daily crawls before, each page at its own time of day: each page's change rate is learned,
    // and the pages do not all fall due together.
    const history = pages.flatMap(({ url }) => {
      const rate = rateOf.get(new URL(url).host)!
      const phaseMs = Math.floor(random.next() * MS_PER_DAY)
      return Array.from({ length: 21 }, (_, k) => ({
        url,
        crawledAt: iso(T0 - phaseMs - (20 - k) * MS_PER_DAY),
        ...(k > 0 ? { changed: random.next() > Math.exp(-rate) } : {}),
      }))
    })
    await call(t, 'POST', '/v1/observations', { observations: history })
    // 300 crawls a day for 60 pages: the plan gives the polite hosts less than their pace allows.
    await call(t, 'PATCH', '/v1/settings', { budgetCrawlsPerDay: 300 })

    const fetched = new Map<string, number>(HOSTS.map((h) => [h.host, 0]))
    const planned = new Map<string, number>(HOSTS.map((h) => [h.host, 0]))
    const lastFetchMs = new Map<string, number>()
    let limitedLastOkMs = -Infinity
    const throttledPerHour: number[] = []
    const crawl = async (grant: { leaseId: string; pages: { url: string; host: string }[] }) => {
      if (grant.pages.length === 0) return
      const nowMs = t.clock.nowMs()
      const hour = Math.floor((nowMs - T0) / HOUR_MS)
      const observations = grant.pages.map((p, i) => {
        const crawledAtMs = nowMs + i
        if (p.host === 'limited.example') {
          if (crawledAtMs - limitedLastOkMs < LIMITED_EVERY_MS) {
            throttledPerHour[hour] = (throttledPerHour[hour] ?? 0) + 1
            return { url: p.url, crawledAt: iso(crawledAtMs), leaseId: grant.leaseId, httpStatus: 429 }
          }
          limitedLastOkMs = crawledAtMs
        }
        fetched.set(p.host, fetched.get(p.host)! + 1)
        const sinceMs = crawledAtMs - (lastFetchMs.get(p.url) ?? T0 - MS_PER_DAY / 2)
        lastFetchMs.set(p.url, crawledAtMs)
        const changed = random.next() > Math.exp((-rateOf.get(p.host)! * sinceMs) / MS_PER_DAY)
        return { url: p.url, crawledAt: iso(crawledAtMs), leaseId: grant.leaseId, httpStatus: 200, changed }
      })
      await call(t, 'POST', '/v1/observations', { observations })
    }
    // The crawler takes a lease every 10 minutes, and a worker of its own polls every minute, with a `hosts`
    // filter, the paced hosts that leases have named.
    const pacedHosts = new Set<string>()
    for (let minute = 1; minute <= MS_PER_DAY / MINUTE_MS; minute++) {
      t.clock.advanceMs(MINUTE_MS)
      if (minute % 60 === 1) {
        // The optimiser runs every hour; the plan of each hour is what the host should get in it.
        await call(t, 'POST', '/v1/optimize')
        for (const [host, perDay] of await plannedPerHost(t)) planned.set(host, planned.get(host)! + perDay / 24)
      }
      if (minute % 10 === 0) {
        const grant = await call(t, 'POST', '/v1/leases', { worker: 'w', limit: 100 })
        await crawl(grant)
        for (const h of grant.pacedHosts as { host: string }[]) pacedHosts.add(h.host)
      }
      if (pacedHosts.size > 0)
        await crawl(await call(t, 'POST', '/v1/leases', { worker: 'polite', limit: 100, hosts: [...pacedHosts] }))
    }

    const ratios = HOSTS.map(({ host }) => `${host} ${fetched.get(host)}/${planned.get(host)!.toFixed(1)}`)
    c.diagnostic(
      `fetched / planned: ${ratios.join(', ')}; 429s per hour: ${throttledPerHour.map((n) => n ?? 0).join(' ')}`,
    )
    for (const h of HOSTS) {
      if (h.minDelaySeconds === null) continue
      const ratio = fetched.get(h.host)! / planned.get(h.host)!
      assert.ok(
        Math.abs(ratio - 1) <= 0.1,
        `${h.host}: ${fetched.get(h.host)} fetches for ${planned.get(h.host)} planned`,
      )
    }
    // The rate-limited host: never asked more than it allows in a day, and once it is learned (after the first
    // 6 hours) at most one 429 in any hour: each one paces it again. Its pages fall due in bunches, so the spacing
    // it refuses can be longer than the pace; the pace is learned from that spacing (six 429s in the day when it
    // was learned from the pace alone, two of them in one hour).
    assert.ok(fetched.get('limited.example')! <= MS_PER_DAY / LIMITED_EVERY_MS)
    for (const n of throttledPerHour.slice(6)) assert.ok((n ?? 0) <= 1, `429s per hour: ${throttledPerHour.join(' ')}`)
  }))
