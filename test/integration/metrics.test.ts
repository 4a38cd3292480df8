import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { buildApp } from '../../src/app.ts'
import { expectedPageFreshness } from '../../src/core/crawlTiming.ts'
import { DEFAULT_SETTINGS, type Settings } from '../../src/core/settings.ts'
import { createRandom } from '../../src/math/random.ts'
import type { FastifyInstance } from 'fastify'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'
import { TOP_HOSTS } from '../../src/ops/metrics.ts'
import type { components } from '@recrawl/client'

// ---------------------------------------------------------------- a small parser of the Prometheus text format

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}
interface Family {
  name: string
  type: string
  help: string
  samples: Sample[]
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?[ \\t]+(\\S+)(?:[ \\t]+(-?\\d+))?$`)
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY
  if (text === '-Inf') return Number.NEGATIVE_INFINITY
  if (text === 'NaN') return Number.NaN
  const v = Number(text)
  if (Number.isNaN(v)) throw new Error(`not a sample value: ${text}`)
  return v
}

function parseLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {}
  if (!text) return labels
  LABEL.lastIndex = 0
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text)
    if (!m) throw new Error(`bad label set: {${text}}`)
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
  }
  return labels
}

/**
 * Parses the exposition text strictly: every sample belongs to the family declared by the latest
 * # TYPE (histograms own their _bucket/_sum/_count), no family is declared twice, every value parses.
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>()
  let current: Family | null = null
  const helps = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    if (line.startsWith('# HELP ')) {
      const [, name, help] = /^# HELP (\S+) ?(.*)$/.exec(line) ?? []
      assert.ok(name, `bad HELP line: ${line}`)
      helps.set(name, help ?? '')
      continue
    }
    if (line.startsWith('# TYPE ')) {
      const m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line)
      assert.ok(m, `bad TYPE line: ${line}`)
      assert.ok(!families.has(m[1]!), `family declared twice: ${m[1]}`)
      current = { name: m[1]!, type: m[2]!, help: helps.get(m[1]!) ?? '', samples: [] }
      families.set(current.name, current)
      continue
    }
    if (line.startsWith('#')) continue
    const m = SAMPLE_LINE.exec(line)
    assert.ok(m, `bad sample line: ${line}`)
    assert.ok(current, `sample before any TYPE: ${line}`)
    const name = m[1]!
    const allowed =
      current.type === 'histogram'
        ? [`${current.name}_bucket`, `${current.name}_sum`, `${current.name}_count`]
        : current.type === 'summary'
          ? [current.name, `${current.name}_sum`, `${current.name}_count`]
          : [current.name]
    assert.ok(allowed.includes(name), `sample ${name} outside its family ${current.name}`)
    current.samples.push({ name, labels: parseLabels(m[2]), value: parseValue(m[3]!) })
  }
  return families
}

function sampleValue(
  families: Map<string, Family>,
  family: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const f = families.get(family)
  const hit = f?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  return hit?.value
}

const counter = (fs: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  sampleValue(fs, name, name, labels)

/** Histogram buckets are cumulative and the +Inf bucket equals _count, per label set. */
function assertHistogramConsistent(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number }>()
  for (const s of f.samples) {
    const { le, ...rest } = s.labels
    const key = JSON.stringify(Object.entries(rest).sort())
    const g = groups.get(key) ?? { buckets: [] }
    groups.set(key, g)
    if (s.name.endsWith('_bucket')) g.buckets.push([parseValue(le!), s.value])
    if (s.name.endsWith('_count')) g.count = s.value
  }
  for (const [key, g] of groups) {
    g.buckets.sort((a, b) => a[0] - b[0])
    for (let i = 1; i < g.buckets.length; i++)
      assert.ok(g.buckets[i]![1] >= g.buckets[i - 1]![1], `${f.name} ${key} buckets not cumulative`)
    const last = g.buckets[g.buckets.length - 1]!
    assert.equal(last[0], Number.POSITIVE_INFINITY, `${f.name} ${key} has no +Inf bucket`)
    assert.equal(last[1], g.count, `${f.name} ${key}: +Inf bucket ≠ _count`)
  }
}

// ---------------------------------------------------------------- the known sequence

const A = 'https://m1.example/a'
const B = 'https://m1.example/b'
const C = 'https://m2.example/c'
const D = 'https://m3.example/d'

async function scrape(app: FastifyInstance): Promise<Map<string, Family>> {
  const res = await app.inject({ method: 'GET', url: '/metrics' })
  assert.equal(res.statusCode, 200)
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
  return parseExposition(res.body)
}

async function stats(t: TestApp): Promise<components['schemas']['Stats']> {
  const res = await t.app.inject({ method: 'GET', url: '/v1/stats' })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function allPages(t: TestApp): Promise<
  {
    importance: number
    changesPerDay: number | null
    crawlsPerDay: number | null
    minCrawlsPerDay: null
    maxCrawlsPerDay: null
  }[]
> {
  return (await t.app.inject({ method: 'GET', url: '/v1/pages?limit=1000' })).json().pages
}

async function settings(t: TestApp): Promise<Settings> {
  return (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
}

/** A service for one test, its stats never cached. */
const metricsApp = (ctx: Parameters<typeof testAppFor>[0]) => testAppFor(ctx, { statsCacheMs: 0 })

/**
 * The known sequence, part 1: A, B and C registered; two batches of reports (7 accepted, 2 of them
 * changes; 1 duplicate; 1 late; 1 rejected; D registered by its first report); a malformed batch (400).
 */
async function reportKnownBatches(t: TestApp): Promise<void> {
  assert.equal(
    (
      await t.app.inject({
        method: 'PUT',
        url: '/v1/pages',
        payload: { pages: [{ url: A }, { url: B }, { url: C, importance: 3 }] },
      })
    ).statusCode,
    200,
  )
  const batch1 = await t.app.inject({
    method: 'POST',
    url: '/v1/observations',
    payload: {
      observations: [
        { url: A, crawledAt: iso(T0 - 3 * MS_PER_HOUR) },
        { url: B, crawledAt: iso(T0 - 3 * MS_PER_HOUR) },
        { url: C, crawledAt: iso(T0 - 3 * MS_PER_HOUR) },
        { url: A, crawledAt: iso(T0 - 2 * MS_PER_HOUR), changed: true },
        { url: B, crawledAt: iso(T0 - 2 * MS_PER_HOUR), changed: false },
        { url: A, crawledAt: iso(T0 + MS_PER_HOUR), changed: true }, // more than 5 min in the future: rejected
      ],
    },
  })
  const body1 = batch1.json() as {
    accepted: number
    duplicates: number
    late: number
    rejected: unknown[]
    leaseNotCompleted: unknown[]
  }
  assert.deepEqual(
    { ...body1, rejected: body1.rejected.length },
    { accepted: 5, duplicates: 0, late: 0, rejected: 1, leaseNotCompleted: [] },
  )
  const batch2 = await t.app.inject({
    method: 'POST',
    url: '/v1/observations',
    payload: {
      observations: [
        { url: A, crawledAt: iso(T0 - 2 * MS_PER_HOUR), changed: true }, // duplicate
        { url: B, crawledAt: iso(T0 - 150 * 60_000), changed: true }, // older than B's latest: late
        { url: C, crawledAt: iso(T0 - 30 * 60_000), changed: true },
        { url: D, crawledAt: iso(T0 - 30 * 60_000) }, // unknown: registered, baseline
      ],
    },
  })
  assert.deepEqual(batch2.json(), { accepted: 2, duplicates: 1, late: 1, rejected: [], leaseNotCompleted: [] })
  // A malformed batch is refused as a whole (400) and counts nothing.
  assert.equal(
    (await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations: [{ url: A }] } }))
      .statusCode,
    400,
  )
}

/**
 * Part 2, 200 days on, when every page is due whatever its rate (the floor is 0.01 crawls/day): a lease
 * of all 4 pages for 60 s, and once it has expired, a lease of 3 pages for 600 s.
 */
async function leaseTwice(t: TestApp, checks: { due?(): Promise<void>; leased?(): Promise<void> } = {}): Promise<void> {
  t.clock.setMs(T0 + 200 * MS_PER_DAY)
  await checks.due?.()
  const first = (
    await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w1', limit: 10, leaseSeconds: 60 } })
  ).json()
  assert.equal(first.pages.length, 4)
  await checks.leased?.()
  t.clock.advanceMs(120_000)
  // The first lease has expired: its 4 pages return to the pool and are leased again.
  const second = (
    await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w2', limit: 3, leaseSeconds: 600 } })
  ).json()
  assert.equal(second.pages.length, 3)
}

/** Part 3: one optimiser run, then an infeasible one (422: not a run). Returns the run. */
async function optimizeOnce(t: TestApp): Promise<{ durationMs: number }> {
  const run = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
  assert.equal(run.statusCode, 200, run.body)
  // A host cap below its pages' floors (PATCH /v1/settings refuses an infeasible budget itself).
  const cap = await t.app.inject({ method: 'PUT', url: '/v1/hosts/m1.example', payload: { maxCrawlsPerDay: 0.001 } })
  assert.equal(cap.statusCode, 200, cap.body)
  assert.equal((await t.app.inject({ method: 'POST', url: '/v1/optimize' })).statusCode, 422)
  await t.app.inject({ method: 'DELETE', url: '/v1/hosts/m1.example' })
  return run.json()
}

/** The whole known sequence. */
async function knownSequence(t: TestApp): Promise<void> {
  await reportKnownBatches(t)
  await leaseTwice(t)
  await optimizeOnce(t)
}

describe('GET /metrics after a known sequence of requests', () => {
  it('counts observations by result, changes, registrations', async (ctx) => {
    const t = await metricsApp(ctx)
    await reportKnownBatches(t)
    const m = await scrape(t.app)
    assert.equal(counter(m, 'recrawl_observations_total', { result: 'accepted' }), 7)
    assert.equal(counter(m, 'recrawl_observations_total', { result: 'duplicate' }), 1)
    assert.equal(counter(m, 'recrawl_observations_total', { result: 'late' }), 1)
    assert.equal(counter(m, 'recrawl_observations_total', { result: 'rejected' }), 1)
    assert.equal(counter(m, 'recrawl_changes_detected_total'), 2)
    assert.equal(counter(m, 'recrawl_pages_registered_total'), 1)
    assert.equal(m.get('recrawl_observations_total')?.type, 'counter')
  })

  it('gauges: pages, overdue, crawls in the last hour, weighted freshness equal to the per-page formula', async (ctx) => {
    const t = await metricsApp(ctx)
    await reportKnownBatches(t)
    const m = await scrape(t.app)
    assert.equal(counter(m, 'recrawl_pages'), 4)
    // In (T0 − 1 h, T0]: the crawls of C and D at T0 − 30 min (late, rejected and older ones excluded).
    assert.equal(counter(m, 'recrawl_crawls_per_day_last_hour'), 2 * 24)
    assert.equal(counter(m, 'recrawl_budget_crawls_per_day'), DEFAULT_SETTINGS.budgetCrawlsPerDay)
    assert.equal(counter(m, 'recrawl_pages_leased'), 0)

    const s = await settings(t)
    const pages = await allPages(t)
    let weighted = 0
    let total = 0
    let planned = 0
    for (const p of pages) {
      weighted += p.importance * (expectedPageFreshness(p, s, p.crawlsPerDay) ?? 0)
      total += p.importance
      planned += p.crawlsPerDay ?? 0
    }
    const freshness = counter(m, 'recrawl_expected_freshness')!
    assert.ok(Math.abs(freshness - weighted / total) <= 1e-12, `SQL ${freshness} vs TS ${weighted / total}`)
    assert.ok(Math.abs(counter(m, 'recrawl_planned_crawls_per_day')! - planned) <= 1e-9 * planned)
  })

  it('leases granted and expired count pages', async (ctx) => {
    const t = await metricsApp(ctx)
    await reportKnownBatches(t)
    await leaseTwice(t, {
      async due() {
        assert.equal(counter(await scrape(t.app), 'recrawl_pages_overdue'), 4)
      },
      async leased() {
        const leased = await scrape(t.app)
        assert.equal(counter(leased, 'recrawl_pages_leased'), 4)
        assert.equal(counter(leased, 'recrawl_pages_overdue'), 0)
        assert.equal(counter(leased, 'recrawl_oldest_overdue_age_seconds'), 0)
      },
    })
    const m = await scrape(t.app)
    assert.equal(counter(m, 'recrawl_leases_granted_total'), 7)
    assert.equal(counter(m, 'recrawl_leases_expired_total'), 4)
    assert.equal(counter(m, 'recrawl_pages_leased'), 3)
    assert.equal(counter(m, 'recrawl_pages_overdue'), 1)
    assert.ok(counter(m, 'recrawl_oldest_overdue_age_seconds')! > 100 * 86_400)
  })

  it('short leases by reason, the hand-out allowance after a lease, host backoffs', async (ctx) => {
    const t = await metricsApp(ctx)
    await reportKnownBatches(t)
    const reasons = new Map<string, number>()
    const lease = async (limit: number) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit } })
      assert.equal(res.statusCode, 200, res.body)
      const grant = res.json() as { pages: unknown[]; limitedBy: string[] }
      for (const r of grant.limitedBy) reasons.set(r, (reasons.get(r) ?? 0) + 1)
      return grant
    }
    const first = await lease(1)
    const afterFirst = await scrape(t.app)
    const tokensAfterFirst = counter(afterFirst, 'recrawl_handout_allowance_tokens')!
    const capacity = counter(afterFirst, 'recrawl_handout_allowance_capacity_tokens')!
    assert.equal(first.pages.length, 1)
    assert.ok(
      capacity > 0 && tokensAfterFirst >= 0 && tokensAfterFirst <= capacity,
      `${tokensAfterFirst} / ${capacity}`,
    )
    // The clock stands still: no refill, so the second lease's pages come out of what the first left.
    const second = await lease(1000)
    assert.ok(second.limitedBy.length > 0, 'a lease of 1000 is short')
    const m = await scrape(t.app)
    assert.equal(counter(m, 'recrawl_handout_allowance_tokens'), Math.max(0, tokensAfterFirst - second.pages.length))
    for (const reason of ['nothingDue', 'budgetAllowance', 'pacedHosts', 'hostBackoff'])
      assert.equal(counter(m, 'recrawl_leases_short_total', { limited_by: reason }), reasons.get(reason) ?? 0, reason)
    assert.equal(counter(m, 'recrawl_host_backoffs_total'), 0)

    // A 429 without Retry-After is a backoff incident: its host is paused, once.
    const now = t.clock.nowMs()
    const post = await t.app.inject({
      method: 'POST',
      url: '/v1/observations',
      payload: {
        observations: [
          { url: 'https://busy.example/a', crawledAt: iso(now - 60_000) },
          { url: 'https://busy.example/a', crawledAt: iso(now - 30_000), httpStatus: 429 },
        ],
      },
    })
    assert.equal(post.statusCode, 200, post.body)
    assert.equal(counter(await scrape(t.app), 'recrawl_host_backoffs_total'), 1)
  })

  it('crawls per host for the most crawled hosts only: a bounded label', async (ctx) => {
    const t = await metricsApp(ctx)
    // Host i gets i + 1 crawls (the last one late, stored too); a duplicate counts for none.
    const hosts = TOP_HOSTS + 5
    const now = t.clock.nowMs()
    const observations = []
    for (let i = 0; i < hosts; i++)
      for (let k = 0; k <= i; k++)
        observations.push({
          url: `https://h${i}.example/`,
          crawledAt: iso(now - (k + 1) * 60_000),
          changed: k % 2 === 0,
        })
    observations.push({ url: 'https://h0.example/', crawledAt: iso(now - 60_000), changed: true })
    const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().duplicates, 1)
    const m = await scrape(t.app)
    const family = m.get('recrawl_host_crawls_total')!
    assert.equal(family.type, 'counter')
    const byHost = Object.fromEntries(family.samples.map((s) => [s.labels.host, s.value]))
    const expected = Object.fromEntries(
      Array.from({ length: TOP_HOSTS }, (_, j) => hosts - 1 - j).map((i) => [`h${i}.example`, i + 1]),
    )
    assert.deepEqual(byHost, expected)
  })

  it('time limited by the budget: the time between snapshots while the allowance holds the fleet back', async (ctx) => {
    const t = await metricsApp(ctx)
    // The gauges of one scrape share a snapshot until the event loop turns: let it turn, so each scrape takes its own.
    const fresh = async () => {
      await new Promise((resolve) => setImmediate(resolve))
      return scrape(t.app)
    }
    const limited = async () => counter(await fresh(), 'recrawl_budget_limited_seconds_total')
    const limiting = async () => counter(await fresh(), 'recrawl_handout_allowance_limiting')
    assert.equal(await limited(), 0)
    t.clock.advanceMs(60_000)
    assert.equal(await limited(), 0, 'nothing overdue: not limited')
    // A budget of 24 a day holds 2 tokens; 30 overdue pages are more than it can hand out.
    const patch = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: { budgetCrawlsPerDay: 24 },
    })
    assert.equal(patch.statusCode, 200, patch.body)
    const pages = Array.from({ length: 30 }, (_, i) => ({ url: `https://limited.example/${i}` }))
    assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })).statusCode, 200)
    t.clock.advanceMs(2 * MS_PER_DAY)
    assert.equal(await limiting(), 1)
    t.clock.advanceMs(45_000)
    assert.equal(await limited(), 45, 'limited from the previous snapshot to this one')
    t.clock.advanceMs(30_000)
    assert.equal(await limited(), 75)
    t.clock.advanceMs(10 * 60_000)
    assert.equal(await limited(), 75, 'a gap of ten minutes without a snapshot does not count')
    // A budget that covers every overdue page: no longer limited, and the time stops growing.
    const raise = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: { budgetCrawlsPerDay: 100_000 },
    })
    assert.equal(raise.statusCode, 200, raise.body)
    const lease = await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w', limit: 1000 } })
    assert.equal(lease.statusCode, 200, lease.body)
    assert.equal(await limiting(), 0)
    const before = await limited()
    t.clock.advanceMs(60_000)
    assert.equal(await limited(), before)
  })

  it('optimiser runs and their duration histogram', async (ctx) => {
    const t = await metricsApp(ctx)
    await reportKnownBatches(t)
    const run = await optimizeOnce(t)
    const m = await scrape(t.app)
    assert.equal(counter(m, 'recrawl_optimizer_runs_total'), 1)
    assert.equal(sampleValue(m, 'recrawl_optimizer_duration_seconds', 'recrawl_optimizer_duration_seconds_count'), 1)
    const sum = sampleValue(m, 'recrawl_optimizer_duration_seconds', 'recrawl_optimizer_duration_seconds_sum')!
    assert.ok(Math.abs(sum - run.durationMs / 1000) < 1e-9)
    assert.equal(m.get('recrawl_optimizer_duration_seconds')?.type, 'histogram')
  })

  it('times requests by route pattern, method and status; every histogram is well formed', async (ctx) => {
    const t = await metricsApp(ctx)
    await knownSequence(t)
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/pages/987654' })).statusCode, 404)
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/pages/987655' })).statusCode, 404)
    assert.equal((await t.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode, 404)
    const m = await scrape(t.app)
    const http = m.get('recrawl_http_request_duration_seconds')!
    assert.equal(http.type, 'histogram')
    const count = (labels: Record<string, string>) => sampleValue(m, http.name, `${http.name}_count`, labels)
    assert.equal(count({ route: '/v1/pages/:id', method: 'GET', status: '404' }), 2)
    assert.equal(count({ route: '/v1/observations', method: 'POST', status: '200' }), 2)
    assert.equal(count({ route: '/v1/observations', method: 'POST', status: '400' }), 1)
    assert.equal(count({ route: '/v1/leases', method: 'POST', status: '200' }), 2)
    assert.equal(count({ route: '/v1/optimize', method: 'POST', status: '422' }), 1)
    assert.equal(count({ route: 'unmatched', method: 'GET', status: '404' }), 1)
    assert.ok(!http.samples.some((s) => s.labels.route?.includes('987654')), 'raw URLs must not become labels')
    for (const f of m.values()) if (f.type === 'histogram') assertHistogramConsistent(f)
    for (const name of [
      'recrawl_pages',
      'recrawl_pages_overdue',
      'recrawl_oldest_overdue_age_seconds',
      'recrawl_expected_freshness',
      'recrawl_budget_crawls_per_day',
      'recrawl_crawls_per_day_last_hour',
    ]) {
      assert.equal(m.get(name)?.type, 'gauge', name)
      assert.ok(m.get(name)!.help.length > 0, `${name} has no HELP`)
    }
    assert.ok(m.has('process_cpu_seconds_total'), 'process metrics')
  })

  it('every metric the Grafana dashboard queries exists', async (ctx) => {
    const t = await metricsApp(ctx)
    await knownSequence(t)
    const dashboard = await readFile(new URL('../../deploy/grafana/recrawl.json', import.meta.url), 'utf8')
    const exprs = JSON.stringify(JSON.parse(dashboard).panels)
    const names = new Set(exprs.match(/\b(?:recrawl|process|nodejs)_[a-z0-9_]+/g))
    assert.ok(names.size >= 15, `only ${names.size} metric names`)
    const m = await scrape(t.app)
    const samples = new Set([...m.values()].flatMap((f) => [f.name, ...f.samples.map((s) => s.name)]))
    for (const name of names)
      assert.ok(samples.has(name) || m.has(name), `the dashboard queries ${name}, which /metrics does not serve`)
  })

  it('/metrics needs no key even when keys exist; /v1/stats needs the reader role', async (ctx) => {
    const t = await metricsApp(ctx)
    const withKeys = await buildApp({
      pool: t.db.pool,
      databaseKind: t.db.kind,
      clock: t.clock,
      random: createRandom(1),
      maxBatchItems: 10,
      bodyLimitBytes: 1 << 20,
      loopbackOnly: false,
      authCacheMs: 0,
    })
    try {
      assert.equal((await withKeys.inject({ method: 'GET', url: '/metrics' })).statusCode, 200)
      assert.equal((await withKeys.inject({ method: 'GET', url: '/v1/stats' })).statusCode, 401)
    } finally {
      await withKeys.close()
    }
  })
})

/**
 * 60 pages taught different change rates (20 daily crawls each, up to the clock's now), then a budget of
 * 30 crawls/day and an optimiser run: rates spread over several bins. Returns the URLs and the changes
 * reported in the last two crawls (those within a 48 h window).
 */
async function teachSpreadOfRates(t: TestApp): Promise<{ urls: string[]; changesInWindow: number }> {
  const random = createRandom(9)
  const now = t.clock.nowMs()
  const urls = Array.from({ length: 60 }, (_, i) => `https://h${i % 5}.example/p${i}`)
  let changesInWindow = 0
  const observations = urls.flatMap((url, i) => {
    const items: Record<string, unknown>[] = [{ url, crawledAt: iso(now - 20 * MS_PER_DAY) }]
    for (let k = 1; k <= 20; k++) {
      const changed = random.next() < (i % 10) / 10
      if (k >= 19 && changed) changesInWindow++
      items.push({ url, crawledAt: iso(now - (20 - k) * MS_PER_DAY), changed })
    }
    return items
  })
  assert.equal(
    (await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })).statusCode,
    200,
  )
  assert.equal(
    (await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { budgetCrawlsPerDay: 30 } })).statusCode,
    200,
  )
  assert.equal((await t.app.inject({ method: 'POST', url: '/v1/optimize' })).statusCode, 200)
  return { urls, changesInWindow }
}

describe('GET /v1/stats', () => {
  it('repeats the counters and gauges, with histograms, runs, overdue hosts and series', async (ctx) => {
    const t = await metricsApp(ctx)
    await knownSequence(t)
    const s = await stats(t)
    const m = await scrape(t.app)
    assert.equal(s.takenAt, iso(t.clock.nowMs()))
    assert.equal(s.pages, 4)
    assert.equal(s.pagesOverdue, counter(m, 'recrawl_pages_overdue'))
    assert.equal(s.pagesLeased, 3)
    assert.equal(s.expectedFreshness, counter(m, 'recrawl_expected_freshness'))
    assert.deepEqual(s.counters, {
      observations: { accepted: 7, duplicate: 1, late: 1, rejected: 1 },
      // No crawl above reported a status: the 9 not rejected are all "none".
      fetchesByStatusClass: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, error: 0, none: 9 },
      changesDetected: 2,
      leasesGranted: 7,
      leasesExpired: 4,
      optimizerRuns: 1,
    })
    assert.equal(s.optimizerRuns.length, 1)
    assert.equal(s.optimizerRuns[0]?.trigger, 'api')
    assert.equal(s.optimizerRuns[0]?.pages, 4)
    // Four pages at the default cap (24 a day) spend far less than the budget: it does not bind, λ = 0.
    assert.equal(s.optimizer.lambda, 0)
    assert.equal(s.topOverdueHosts.length, 1)
    assert.equal(s.topOverdueHosts[0]?.pagesOverdue, 1)
    // Samples: one per minute at most, each time a snapshot was taken (at T0 and at T0 + 200 d, +2 min).
    assert.ok(s.series.points.length >= 1)
    assert.equal(s.series.points.at(-1)?.pages, 4)
  })

  it('histograms: log10 bins, 4 per decade, match the page rates', async (ctx) => {
    const t = await metricsApp(ctx)
    const { urls, changesInWindow } = await teachSpreadOfRates(t)
    const s = await stats(t)
    const pages = await allPages(t)
    assert.equal(s.pages, pages.length)
    for (const [histogram, field] of [
      [s.changeRateHistogram, 'changesPerDay'],
      [s.crawlRateHistogram, 'crawlsPerDay'],
    ] as const) {
      assert.equal(histogram.counts.length, 24)
      assert.equal(histogram.edgesPerDay.length, 25)
      assert.ok(Math.abs(histogram.edgesPerDay[0]! - 1e-3) < 1e-15 && Math.abs(histogram.edgesPerDay[24]! - 1e3) < 1e-9)
      const expected = new Array<number>(24).fill(0)
      let below = 0
      let above = 0
      let unknown = 0
      for (const p of pages) {
        const r = p[field]
        if (r === null) unknown++
        else if (r <= 0 || Math.log10(r) < -3) below++
        else if (Math.log10(r) >= 3) above++
        else expected[Math.floor((Math.log10(r) + 3) * 4)]!++
      }
      assert.deepEqual(
        { counts: histogram.counts, below: histogram.below, above: histogram.above, unknown: histogram.unknown },
        { counts: expected, below, above, unknown },
        field,
      )
      assert.ok(expected.filter((c) => c > 0).length >= 3, `${field}: rates spread over several bins`)
    }
    // The 48 h window holds the crawls at now − 1 d and now: 2 per page, in two hourly buckets of 49.
    assert.equal(s.crawlActivity.length, 49)
    assert.equal(
      s.crawlActivity.reduce((n: number, a: { crawls: number }) => n + a.crawls, 0),
      2 * urls.length,
    )
    assert.equal(s.crawlActivity.filter((a: { crawls: number }) => a.crawls > 0).length, 2)
    assert.equal(
      s.crawlActivity.reduce((n: number, a: { changes: number }) => n + a.changes, 0),
      changesInWindow,
    )
  })

  it('weighted freshness follows the Poisson form ρ/(ρ+Δ) under the Poisson schedule', async (ctx) => {
    const t = await metricsApp(ctx)
    await teachSpreadOfRates(t)
    assert.equal(
      (await t.app.inject({ method: 'PATCH', url: '/v1/settings', payload: { schedule: 'poisson' } })).statusCode,
      200,
    )
    const s = await stats(t)
    const set = await settings(t)
    const pages = await allPages(t)
    let weighted = 0
    let total = 0
    for (const p of pages) {
      const f = expectedPageFreshness(p, set, p.crawlsPerDay) ?? 0
      assert.equal(
        f,
        p.crawlsPerDay === null ? 0 : p.crawlsPerDay / (p.crawlsPerDay + (p.changesPerDay ?? set.defaultChangesPerDay)),
      )
      weighted += p.importance * f
      total += p.importance
    }
    assert.equal(s.schedule, 'poisson')
    assert.ok(
      s.expectedFreshness !== null && Math.abs(s.expectedFreshness - weighted / total) <= 1e-12,
      `${s.expectedFreshness} vs ${weighted / total}`,
    )
  })

  it('the snapshot is cached: scrapes within the cache period cost no query', async (ctx) => {
    const t = await metricsApp(ctx)
    const cachedApp = await buildApp({
      pool: t.db.pool,
      databaseKind: t.db.kind,
      clock: t.clock,
      random: createRandom(2),
      maxBatchItems: 5000,
      bodyLimitBytes: 1 << 20,
      loopbackOnly: true,
      authCacheMs: 0,
      statsCacheMs: 60_000,
    })
    try {
      const first = await scrape(cachedApp)
      const pagesBefore = counter(first, 'recrawl_pages')!
      assert.equal(
        (
          await t.app.inject({
            method: 'PUT',
            url: '/v1/pages',
            payload: { pages: [{ url: 'https://cache.example/new' }] },
          })
        ).statusCode,
        200,
      )
      let queries = 0
      const query = t.db.pool.query.bind(t.db.pool)
      t.db.pool.query = ((...args: Parameters<typeof query>) => {
        queries++
        return query(...args)
      }) as typeof t.db.pool.query
      try {
        const scrapes = await Promise.all([scrape(cachedApp), scrape(cachedApp), scrape(cachedApp)])
        for (const m of scrapes) assert.equal(counter(m, 'recrawl_pages'), pagesBefore)
      } finally {
        t.db.pool.query = query
      }
      assert.equal(queries, 0)
      assert.equal(counter(await scrape(t.app), 'recrawl_pages'), pagesBefore + 1) // the uncached app sees the new page
    } finally {
      await cachedApp.close()
    }
  })

  it('rejects a window outside 1 h … 30 days', async (ctx) => {
    const t = await metricsApp(ctx)
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/stats?hours=0' })).statusCode, 400)
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/stats?hours=721' })).statusCode, 400)
  })
})

describe('recrawl_fetches_total', () => {
  it('counts the reports not rejected by the class of their reported status, from 0 for every class', async (ctx) => {
    const own = await metricsApp(ctx)
    const fresh = await scrape(own.app)
    assert.equal(fresh.get('recrawl_fetches_total')?.type, 'counter')
    for (const c of ['1xx', '2xx', '3xx', '4xx', '5xx', 'error', 'none'])
      assert.equal(counter(fresh, 'recrawl_fetches_total', { status_class: c }), 0, c)

    const P = 'https://f.example/p'
    const Q = 'https://f.example/q'
    const post = async (observations: Record<string, unknown>[]) => {
      const res = await own.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
      assert.equal(res.statusCode, 200, res.body)
      return res.json() as { accepted: number; duplicates: number; late: number; rejected: { index: number }[] }
    }
    const first = await post([
      { url: P, crawledAt: iso(T0 - 5 * MS_PER_HOUR), httpStatus: 200 },
      { url: Q, crawledAt: iso(T0 - 5 * MS_PER_HOUR) },
      { url: P, crawledAt: iso(T0 - 4 * MS_PER_HOUR), httpStatus: 503 },
      { url: P, crawledAt: iso(T0 - 3 * MS_PER_HOUR), httpStatus: 304 },
      { url: Q, crawledAt: iso(T0 - 3 * MS_PER_HOUR), httpStatus: 404 },
      { url: P, crawledAt: iso(T0 + 3 * MS_PER_HOUR), httpStatus: 500, changed: true }, // future: rejected
      { url: Q, crawledAt: iso(T0 - 2 * MS_PER_HOUR), httpStatus: 200 }, // no change information: rejected
    ])
    assert.deepEqual(
      first.rejected.map((r) => r.index),
      [5, 6],
    )
    const second = await post([
      { url: P, crawledAt: iso(T0 - 3 * MS_PER_HOUR), httpStatus: 304 }, // duplicate (a retry)
      { url: Q, crawledAt: iso(T0 - 4 * MS_PER_HOUR), httpStatus: 502 }, // late
      { url: P, crawledAt: iso(T0 - MS_PER_HOUR), httpStatus: 102, changed: true },
      { url: P, crawledAt: iso(T0 - MS_PER_HOUR / 2), fetchError: 'timeout' }, // no HTTP answer: an error
    ])
    assert.deepEqual(
      { ...second, rejected: second.rejected.length },
      { accepted: 2, duplicates: 1, late: 1, rejected: 0, leaseNotCompleted: [] },
    )

    const m = await scrape(own.app)
    const byClass = Object.fromEntries(
      ['1xx', '2xx', '3xx', '4xx', '5xx', 'error', 'none'].map((c) => [
        c,
        counter(m, 'recrawl_fetches_total', { status_class: c }),
      ]),
    )
    assert.deepEqual(byClass, { '1xx': 1, '2xx': 1, '3xx': 2, '4xx': 1, '5xx': 2, error: 1, none: 1 })
    // Every report not rejected is counted once, whatever ingest made of it.
    const notRejected = ['accepted', 'duplicate', 'late'].reduce(
      (n, result) => n + counter(m, 'recrawl_observations_total', { result })!,
      0,
    )
    assert.equal(
      Object.values(byClass).reduce((n, v) => n! + v!, 0),
      notRejected,
    )
    const s = (await own.app.inject({ method: 'GET', url: '/v1/stats' })).json()
    assert.deepEqual(s.counters.fetchesByStatusClass, byClass)
  })
})
