/**
 * GET /v1/host-overview (docs/api.md "Host overview"): per-host pages by status, plan against cap and pace,
 * failures of the last day by kind (answers without an HTTP status included), sorted and paged by the server.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, withTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

async function call(t: TestApp, method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown) {
  const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? null : res.json(), type: res.headers['content-type'] }
}

interface Overview {
  host: string
  pages: number
  pagesByStatus: Record<string, number>
  pagesOverdue: number
  capCrawlsPerDay: number | null
  paceSeconds: number
  crawlsLastDay: number
  failuresLastDay: Record<string, number>
}

/** Three hosts: a.example with 3 pages (one gone after 404s), b.example with 2 pages and timeouts, c.example with 1. */
async function seed(t: TestApp): Promise<void> {
  const urls = [
    'https://a.example/1',
    'https://a.example/2',
    'https://a.example/3',
    'https://b.example/1',
    'https://b.example/2',
    'https://c.example/1',
  ]
  assert.equal((await call(t, 'PUT', '/v1/pages', { pages: urls.map((url) => ({ url })) })).status, 200)
  assert.equal(
    (await call(t, 'PUT', '/v1/hosts/a.example', { maxCrawlsPerDay: 50, minDelaySeconds: 3600 })).status,
    200,
  )
  const first = urls.map((url) => ({ url, crawledAt: iso(T0), contentHash: 'h', httpStatus: 200 }))
  assert.equal((await call(t, 'POST', '/v1/observations', { observations: first })).status, 200)
  for (let i = 1; i <= 3; i++) {
    t.clock.advanceMs(MS_PER_HOUR)
    const at = iso(T0 + i * MS_PER_HOUR)
    const round: Record<string, unknown>[] = [
      { url: 'https://a.example/3', crawledAt: at, httpStatus: 404 },
      { url: 'https://b.example/1', crawledAt: at, fetchError: 'timeout' },
    ]
    if (i === 1) round.push({ url: 'https://b.example/2', crawledAt: at, fetchError: 'dns' })
    if (i === 2) round.push({ url: 'https://b.example/2', crawledAt: at, httpStatus: 503 })
    const res = await call(t, 'POST', '/v1/observations', { observations: round })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.rejected, [])
  }
  t.clock.advanceMs(MS_PER_HOUR)
}

test('the overview counts each host’s pages by status, its crawls and its failures by kind, timeouts and DNS included', () =>
  withTestApp(async (t) => {
    await seed(t)
    const res = await call(t, 'GET', '/v1/host-overview?sort=host&order=asc')
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.total, 3)
    const [a, b, c] = res.body.hosts as Overview[]
    assert.deepEqual([a!.host, b!.host, c!.host], ['a.example', 'b.example', 'c.example'])
    assert.equal(a!.pages, 3)
    assert.equal(a!.pagesByStatus.active! + a!.pagesByStatus.failing! + a!.pagesByStatus.gone!, 3)
    assert.ok(a!.pagesByStatus.failing! + a!.pagesByStatus.gone! >= 1, JSON.stringify(a))
    assert.equal(a!.failuresLastDay.http4xx, 3)
    assert.equal(a!.failuresLastDay.total, 3)
    assert.equal(a!.crawlsLastDay, 6)
    assert.equal(a!.paceSeconds, 3600)
    assert.equal(a!.capCrawlsPerDay, 24, 'one page an hour is less than the cap of 50')
    assert.equal(b!.failuresLastDay.timeout, 3)
    assert.equal(b!.failuresLastDay.dns, 1)
    assert.equal(b!.failuresLastDay.http5xx, 1)
    assert.equal(b!.failuresLastDay.total, 5)
    assert.equal(c!.failuresLastDay.total, 0)
    assert.equal(c!.capCrawlsPerDay, null)
    t.clock.advanceMs(MS_PER_DAY)
    const dayLater = (await call(t, 'GET', '/v1/host-overview?sort=host&order=asc&hostPrefix=b.')).body
    assert.equal(dayLater.total, 1)
    assert.equal(dayLater.hosts[0].failuresLastDay.total, 0, 'failures older than a day are no longer counted')
  }))

test('the overview sorts by the requested column and pages through every host exactly once', () =>
  withTestApp(async (t) => {
    await seed(t)
    const byFailures = (await call(t, 'GET', '/v1/host-overview?sort=failuresLastDay')).body.hosts as Overview[]
    assert.deepEqual(
      byFailures.map((h) => h.host),
      ['b.example', 'a.example', 'c.example'],
    )
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const q: string = cursor === null ? '' : `&cursor=${cursor}`
      const body = (await call(t, 'GET', `/v1/host-overview?sort=pages&order=asc&limit=2${q}`)).body
      assert.ok(body.hosts.length <= 2)
      seen.push(...body.hosts.map((h: Overview) => h.host))
      cursor = body.nextCursor
    } while (cursor !== null)
    assert.deepEqual(seen, ['c.example', 'b.example', 'a.example'])
  }))

test('a bad sort, order or cursor is a problem+json 400', () =>
  withTestApp(async (t) => {
    for (const q of ['sort=nope', 'order=up', 'cursor=abc', 'cursor=-1', 'limit=0']) {
      const res = await call(t, 'GET', `/v1/host-overview?${q}`)
      assert.equal(res.status, 400, q)
      assert.match(String(res.type), /application\/problem\+json/, q)
    }
    const prefix = await call(t, 'GET', '/v1/host-overview?hostPrefix=%25')
    assert.equal(prefix.status, 200)
    assert.equal(prefix.body.total, 0, 'a % in the prefix matches itself only')
  }))
