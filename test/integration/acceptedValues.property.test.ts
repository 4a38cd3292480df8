import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { pino } from 'pino'
import { T0, startTestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import {
  assertWellFormedAnswer,
  fuzzSeed,
  hostArbitrary,
  loadOpenApiDocument,
  resetDatabase,
  schemaArbitrary,
  toJsonText,
  type FuzzDictionary,
  type FuzzRequest,
  type SchemaArbitraryOptions,
} from '../helpers/fuzz.ts'

/**
 * Property: no value the service accepts can break another route. Sequences of writes whose values keep
 * to the documented schemas, leaning on their edges (the largest and smallest rates, importances and
 * caps allowed, subnormal-looking small numbers where a schema allows them, timestamps at the ends of
 * the accepted range), with time passing in between; after every write the service accepts, reading
 * stats, listing pages, running the optimiser and taking a lease answer 2xx or 4xx, never 5xx.
 *
 * Replay a failure with FUZZ_SEED=<seed printed below>; FUZZ_SEED=random explores other seeds.
 */

const RUNS = 40

const URLS = ['https://a.example/1', 'https://a.example/2', 'https://b.example/x', 'https://c.example:8443/y?q=1']
const DICT: FuzzDictionary = {
  url: URLS,
  host: ['a.example', 'b.example', 'c.example:8443'],
  worker: ['w1'],
  contentHash: ['h0', 'h1', 'h2'],
}

type Write = { kind: 'request'; request: FuzzRequest } | { kind: 'advance'; ms: number }

function writeArbitrary(options: SchemaArbitraryOptions): fc.Arbitrary<Write> {
  const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` })
  const json = (method: FuzzRequest['method'], url: string, body: unknown): Write => ({
    kind: 'request',
    request: { method, url, headers: { 'content-type': 'application/json' }, payload: toJsonText(body) },
  })
  return fc.oneof(
    {
      arbitrary: schemaArbitrary(schema('SettingsPatch'), options).map((b) => json('PATCH', '/v1/settings', b)),
      weight: 4,
    },
    { arbitrary: schemaArbitrary(schema('PageBatch'), options).map((b) => json('PUT', '/v1/pages', b)), weight: 3 },
    {
      arbitrary: fc
        .tuple(hostArbitrary(DICT), schemaArbitrary(schema('HostLimits'), options))
        .map(([host, b]) => json('PUT', `/v1/hosts/${encodeURIComponent(host)}`, b)),
      weight: 2,
    },
    {
      arbitrary: schemaArbitrary(schema('ObservationBatch'), options).map((b) => json('POST', '/v1/observations', b)),
      weight: 4,
    },
    {
      arbitrary: fc
        .constantFrom(1_000, 3_600_000, MS_PER_DAY, 30 * MS_PER_DAY, 3650 * MS_PER_DAY)
        .map((ms): Write => ({ kind: 'advance', ms })),
      weight: 1,
    },
  )
}

/** The reads and runs every accepted write must leave working. */
const PROBES: FuzzRequest[] = [
  { method: 'GET', url: '/v1/stats', headers: {} },
  { method: 'GET', url: '/v1/pages?limit=1000', headers: {} },
  { method: 'POST', url: '/v1/optimize', headers: {} },
  {
    method: 'POST',
    url: '/v1/leases',
    headers: { 'content-type': 'application/json' },
    payload: '{"worker":"probe","limit":1000}',
  },
  { method: 'GET', url: '/v1/schedule', headers: {} },
  { method: 'GET', url: '/v1/hosts', headers: {} },
]

describe('accepted values', () => {
  it('after any accepted settings patch, page upsert, host limit or crawl report, stats, pages, the optimiser and leases never answer 5xx', async (context) => {
    const seed = fuzzSeed()
    context.diagnostic(`fast-check seed ${seed} (replay: FUZZ_SEED=${seed})`)
    const doc = loadOpenApiDocument()
    const logged: string[] = []
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(line) })
    const t = await startTestApp({ statsCacheMs: 0, logger })
    const options: SchemaArbitraryOptions = { doc, dict: DICT, conform: true, maxArray: 6 }
    let accepted = 0
    let requests = 0
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(writeArbitrary(options), { minLength: 1, maxLength: 6 }), async (writes) => {
          await resetDatabase(t.db.pool)
          t.clock.setMs(T0)
          const seeded = await t.app.inject({
            method: 'PUT',
            url: '/v1/pages',
            payload: { pages: URLS.map((url) => ({ url })) },
          })
          assert.equal(seeded.statusCode, 200, seeded.body)
          const done: string[] = []
          try {
            for (const write of writes) {
              if (write.kind === 'advance') {
                t.clock.advanceMs(write.ms)
                done.push(`clock +${write.ms} ms`)
              } else {
                logged.length = 0
                const res = await t.app.inject(write.request)
                requests++
                done.push(
                  `${write.request.method} ${write.request.url} ${String(write.request.payload)} → ${res.statusCode}`,
                )
                assertWellFormedAnswer(write.request, res)
                if (res.statusCode >= 300) continue
                accepted++
              }
              for (const probe of PROBES) {
                logged.length = 0
                const res = await t.app.inject(probe)
                requests++
                assertWellFormedAnswer(probe, res)
              }
            }
          } catch (err) {
            throw new Error(
              `${(err as Error).message}\nafter:\n  ${done.join('\n  ')}\nservice log: ${logged.join('').slice(0, 3000)}`,
              { cause: err },
            )
          }
        }),
        { seed, numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
      )
    } finally {
      context.diagnostic(`${requests} requests, ${accepted} accepted writes`)
      await t.close()
    }
    assert.ok(accepted >= RUNS, `the writes generated are mostly accepted (${accepted} of ${RUNS} runs)`)
  })
})
