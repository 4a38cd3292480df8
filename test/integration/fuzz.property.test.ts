import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { pino } from 'pino'
import { T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import {
  assertWellFormedAnswer,
  databaseDigest,
  fuzzSeed,
  loadOpenApiDocument,
  operationsOf,
  requestArbitrary,
  resetDatabase,
  stateSnapshot,
  type FuzzDictionary,
  type FuzzRequest,
  type RouteOperation,
} from '../helpers/fuzz.ts'

/**
 * Property: whatever a client sends to any route of the OpenAPI document (arbitrary bodies, query
 * strings, path parameters, media types, broken JSON and percent-encoding), the answer is a 2xx or a
 * 4xx problem+json, never a 5xx; and a 4xx changes nothing a client can see (pages, settings, hosts,
 * stats). Routes are read from openapi/openapi.json, so a new route is fuzzed without editing this file.
 *
 * Replay a failure with FUZZ_SEED=<seed printed below> (FUZZ_ROUTE='PUT /v1/pages' runs one route only);
 * FUZZ_SEED=random explores other seeds.
 */

/**
 * Fuzzed requests per operation: more where a body or parameters give the generator room. About 1,750
 * in all (with acceptedValues.property.test.ts about 2,300), some 30 s of CPU on the embedded database.
 */
function runsFor(route: RouteOperation): number {
  if (route.operation.requestBody !== undefined) return 120
  if ((route.operation.parameters?.length ?? 0) > 0) return 80
  return 20
}

/** Pages, crawls, host limits, an optimiser run and a lease: state for every route to work on. */
async function seedFixtures(t: TestApp): Promise<FuzzDictionary> {
  const urls = [
    'https://a.example/1',
    'https://a.example/2',
    'https://a.example/3?b=2&a=1',
    'https://b.example:8443/x',
    'https://c.example/p',
  ]
  const put = await t.app.inject({
    method: 'PUT',
    url: '/v1/pages',
    payload: {
      pages: urls.map((url, i) => ({
        url,
        importance: 1 + i,
        ...(i === 2 ? { minCrawlsPerDay: 0.5, maxCrawlsPerDay: 10 } : {}),
      })),
    },
  })
  assert.equal(put.statusCode, 200, put.body)
  const observations = [3, 2, 1].flatMap((days, k) => [
    {
      url: urls[0],
      crawledAt: iso(T0 - days * MS_PER_DAY),
      contentHash: `h${k % 2}`,
      httpStatus: 200,
      etag: `"e${k}"`,
      lastModified: iso(T0 - 4 * MS_PER_DAY),
    },
    { url: urls[1], crawledAt: iso(T0 - days * MS_PER_DAY), changed: k > 0 },
  ])
  const obs = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
  assert.equal(obs.statusCode, 200, obs.body)
  const host = await t.app.inject({
    method: 'PUT',
    url: '/v1/hosts/c.example',
    payload: { maxCrawlsPerDay: 100, minDelaySeconds: 1 },
  })
  assert.equal(host.statusCode, 200, host.body)
  const optimize = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
  assert.equal(optimize.statusCode, 200, optimize.body)
  const lease = await t.app.inject({
    method: 'POST',
    url: '/v1/leases',
    payload: { worker: 'w1', limit: 2, hosts: ['a.example'] },
  })
  assert.equal(lease.statusCode, 200, lease.body)
  const pages = (await t.app.inject({ method: 'GET', url: '/v1/pages' })).json().pages as { id: string }[]
  return {
    id: [...pages.map((p) => p.id), '0', '9223372036854775807', '9223372036854775808', '01', '-1'],
    leaseId: [lease.json().leaseId],
    url: urls,
    host: ['a.example', 'b.example:8443', 'c.example'],
    worker: ['w1'],
    contentHash: ['h0', 'h1'],
    cursor: [pages[0]!.id, '9999999999999999999', '9223372036854775807', '0'],
  }
}

/** Refusals between two comparisons of the client-visible views (every refusal is compared by database digest). */
const VIEW_CHECK_EVERY = 5

async function send(t: TestApp, request: FuzzRequest) {
  try {
    return await t.app.inject(request)
  } catch {
    // light-my-request refuses what no HTTP client could send (e.g. a header with a character outside
    // Latin-1); such a request never reaches the service.
    return null
  }
}

describe('fuzzed requests to every route', () => {
  it('every operation of the OpenAPI document answers 2xx or 4xx problem+json, and a 4xx changes nothing', async (context) => {
    const seed = fuzzSeed()
    context.diagnostic(`fast-check seed ${seed} (replay: FUZZ_SEED=${seed})`)
    const doc = loadOpenApiDocument()
    const routes = operationsOf(doc)
    assert.ok(routes.length >= 20, 'the document lists the routes')
    if (process.env.FUZZ_ROUTE) context.diagnostic(`only routes matching ${process.env.FUZZ_ROUTE}`)
    // Errors the service logs, to name the cause when a request gets a 5xx.
    const logged: string[] = []
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(line) })
    const t = await startTestApp({ maxBatchItems: 6, bodyLimitBytes: 64 * 1024, statsCacheMs: 0, logger })
    let requests = 0
    const statuses = new Map<string, number>()
    try {
      for (const route of routes) {
        if (process.env.FUZZ_ROUTE && !`${route.method} ${route.path}`.includes(process.env.FUZZ_ROUTE)) continue
        await context.test(`${route.method} ${route.path}`, async () => {
          await resetDatabase(t.db.pool)
          const dict = await seedFixtures(t)
          // The views first: the first read of /v1/stats stores a stats sample.
          let views: Record<string, unknown> | null = await stateSnapshot(t.app)
          let digest = await databaseDigest(t.db.pool)
          let refusals = 0
          const arbitrary = requestArbitrary(route, { doc, dict, maxArray: 8 })
          const check = async (request: FuzzRequest): Promise<void> => {
            const res = await send(t, request)
            if (res === null) return
            requests++
            const key = `${route.method} ${route.path} ${res.statusCode}`
            statuses.set(key, (statuses.get(key) ?? 0) + 1)
            assertWellFormedAnswer(request, res)
            const what = `${request.method} ${request.url.slice(0, 300)} ${String(request.payload ?? '').slice(0, 300)}`
            if (res.statusCode >= 400) {
              assert.equal(await databaseDigest(t.db.pool), digest, `a ${res.statusCode} changed stored state: ${what}`)
              // The views a client reads (pages, settings, hosts, stats) on every fifth refusal: they cost ~10 queries.
              if (refusals++ % VIEW_CHECK_EVERY === 0) {
                if (views === null) {
                  views = await stateSnapshot(t.app)
                  digest = await databaseDigest(t.db.pool)
                } else
                  assert.deepEqual(
                    await stateSnapshot(t.app),
                    views,
                    `a ${res.statusCode} changed what clients see: ${what}`,
                  )
              }
            } else if (request.method !== 'GET' && request.method !== 'HEAD') {
              // An accepted write may change what is stored, and this replica's counters shown in /v1/stats.
              digest = await databaseDigest(t.db.pool)
              views = null
            }
          }
          const numRuns = runsFor(route)
          await fc.assert(
            fc.asyncProperty(arbitrary, async (request) => {
              logged.length = 0
              try {
                await check(request)
              } catch (err) {
                throw new Error(`${(err as Error).message}\nservice log: ${logged.join('').slice(0, 3000)}`, {
                  cause: err,
                })
              }
            }),
            { seed, numRuns, endOnFailure: true, includeErrorInReport: true },
          )
        })
      }
    } finally {
      context.diagnostic(`${requests} fuzzed requests`)
      if (process.env.FUZZ_STATS) for (const [key, n] of [...statuses].sort()) context.diagnostic(`${key}: ${n}`)
      await t.close()
    }
  })
})
