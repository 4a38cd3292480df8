/**
 * docs/api.md "Input limits": each request here once answered 500 (found by fuzzing); each now gets a
 * 2xx, or a 400/422 problem+json that changes nothing, and an observation batch refuses only its bad
 * items. Also: stored values from before the limits, and the last line of defence for database data
 * exceptions.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import type { InjectOptions } from 'fastify'
import { installProblemHandlers } from '../../src/http/problems.ts'
import { T0, iso, startTestApp, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { parseRaw, rawExchange } from '../helpers/rawHttp.ts'

type Res = { statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown }

function assertProblem(
  res: Res,
  status: number,
  path?: string,
): { detail: string; errors?: { path: string; message: string }[] } {
  assert.equal(res.statusCode, status, res.body)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
  const body = res.json() as { status: number; detail: string; errors?: { path: string; message: string }[] }
  assert.equal(body.status, status)
  if (path !== undefined)
    assert.ok(
      body.errors?.some((e) => e.path === path),
      `${path} in ${res.body}`,
    )
  return body
}

/** What clients can see of the service's state. */
async function visibleState(t: TestApp) {
  const out: unknown[] = []
  for (const url of ['/v1/pages?limit=1000', '/v1/settings', '/v1/hosts'])
    out.push((await t.app.inject({ method: 'GET', url })).json())
  return out
}

const post = (t: TestApp, observations: unknown[]) =>
  t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
const patch = (t: TestApp, payload: object) => t.app.inject({ method: 'PATCH', url: '/v1/settings', payload })

async function withApp(
  fn: (t: TestApp) => Promise<void>,
  overrides: Parameters<typeof startTestApp>[0] = {},
): Promise<void> {
  const t = await startTestApp({ statsCacheMs: 0, ...overrides })
  try {
    await fn(t)
  } finally {
    await t.close()
  }
}

describe('timestamps outside 1970..9999', () => {
  it('reject only their own item of an observation batch, saying which field and why; the stats still answer', async () => {
    await withApp(async (t) => {
      const good = { url: 'https://a.example/', crawledAt: iso(T0 - MS_PER_DAY), contentHash: 'h' }
      const res = await post(t, [
        {
          url: 'https://a.example/',
          crawledAt: iso(T0 - 2 * MS_PER_DAY),
          contentHash: 'h',
          lastModified: '0000-01-01T00:00:00Z',
        },
        { url: 'https://b.example/', crawledAt: '1000-01-01T00:00:00Z', contentHash: 'h' },
        { url: 'https://b.example/', crawledAt: '1969-12-31T23:59:59.999Z', contentHash: 'h' },
        { url: 'https://b.example/', crawledAt: '1970-01-01T00:30:00+01:00', contentHash: 'h' },
        good,
        {
          url: 'https://c.example/',
          crawledAt: '1970-01-01T00:00:00Z',
          contentHash: 'h',
          lastModified: '9999-12-31T23:59:59.999Z',
        },
      ])
      assert.equal(res.statusCode, 200, res.body)
      const receipt = res.json() as { accepted: number; rejected: { index: number; reason: string }[] }
      assert.deepEqual(
        receipt.rejected.map((r) => r.index),
        [0, 1, 2, 3],
      )
      assert.match(
        receipt.rejected[0]!.reason,
        /^lastModified is outside 1970-01-01T00:00:00Z \.\. 9999-12-31T23:59:59\.999Z/,
      )
      for (const r of receipt.rejected.slice(1)) assert.match(r.reason, /^crawledAt is outside 1970/)
      assert.equal(receipt.accepted, 2)
      const pages = (await t.app.inject({ method: 'GET', url: '/v1/pages' })).json().pages as {
        url: string
        crawls: number
      }[]
      assert.deepEqual(
        pages.map((p) => [p.url, p.crawls]),
        [
          ['https://a.example/', 1],
          ['https://c.example/', 1],
        ],
      )
      const stats = await t.app.inject({ method: 'GET', url: '/v1/stats' })
      assert.equal(stats.statusCode, 200, stats.body)
    })
  })

  it('are 400 in query strings (until, before), and the ends of the range are accepted', async () => {
    await withApp(async (t) => {
      await post(t, [{ url: 'https://a.example/', crawledAt: iso(T0 - MS_PER_DAY), contentHash: 'h' }])
      for (const url of [
        '/v1/schedule?until=0000-01-01T00:00:00Z',
        '/v1/schedule?until=9999-12-31T23:59:59-01:00',
        '/v1/pages/1/observations?before=1969-12-31T23:59:59Z',
      ]) {
        const body = assertProblem(await t.app.inject({ method: 'GET', url }), 400)
        assert.match(body.detail, /outside 1970-01-01T00:00:00Z \.\. 9999-12-31T23:59:59\.999Z/, url)
      }
      const until = await t.app.inject({ method: 'GET', url: '/v1/schedule?until=9999-12-31T23:59:59.999Z' })
      assert.equal(until.statusCode, 200, until.body)
      assert.equal(until.json().items.length, 1)
      const before = await t.app.inject({ method: 'GET', url: '/v1/pages/1/observations?before=1970-01-01T00:00:00Z' })
      assert.equal(before.statusCode, 200, before.body)
      assert.equal(before.json().observations.length, 0)
    })
  })
})

describe('NUL characters and lone surrogates', () => {
  it('reject only their own item of an observation batch, whichever field carries them', async () => {
    await withApp(async (t) => {
      const at = iso(T0 - MS_PER_DAY)
      const res = await post(t, [
        { url: 'https://a.example/', crawledAt: at, contentHash: 'a\u0000b' },
        { url: 'https://a.example/', crawledAt: at, contentHash: 'h', etag: '"e\u0000"' },
        { url: 'https://a.example/\u0000x', crawledAt: at, contentHash: 'h' },
        { url: 'https://a.example/', crawledAt: at, contentHash: '\ud800' },
        {
          url: 'https://a.example/',
          crawledAt: at,
          contentHash: 'h',
          httpStatus: 301,
          redirectTo: 'https://b.example/\u0000',
        },
        { url: 'https://a.example/', crawledAt: at, contentHash: 'h', leaseId: '\u0000' },
        { url: 'https://a.example/%00', crawledAt: at, contentHash: 'h😀' },
      ])
      assert.equal(res.statusCode, 200, res.body)
      const receipt = res.json() as { accepted: number; rejected: { index: number; reason: string }[] }
      assert.deepEqual(
        receipt.rejected.map((r) => [r.index, r.reason]),
        [
          [0, 'contentHash contains a NUL character (\\u0000)'],
          [1, 'etag contains a NUL character (\\u0000)'],
          [2, 'url contains a NUL character (\\u0000)'],
          [3, 'contentHash is not well-formed Unicode (a lone surrogate)'],
          [4, 'redirectTo contains a NUL character (\\u0000)'],
          [5, 'leaseId contains a NUL character (\\u0000)'],
        ],
      )
      // An escaped NUL in a URL is a URL like any other; a character outside the BMP is well-formed.
      assert.equal(receipt.accepted, 1)
      const page = (
        await t.app.inject({
          method: 'GET',
          url: `/v1/pages/by-url?url=${encodeURIComponent('https://a.example/%00')}`,
        })
      ).json()
      assert.equal(page.crawls, 1)
    })
  })

  it('are 400 naming the field everywhere else (lease worker and hosts, page URLs, settings, host and page paths, query strings), and change nothing', async () => {
    await withApp(async (t) => {
      assert.equal(
        (await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [{ url: 'https://a.example/' }] } }))
          .statusCode,
        200,
      )
      const before = await visibleState(t)
      const cases: [InjectOptions, string][] = [
        [{ method: 'POST', url: '/v1/leases', payload: { worker: 'a\u0000b' } }, '/body/worker'],
        [
          { method: 'POST', url: '/v1/leases', payload: { worker: 'w', hosts: ['a.example', 'a\u0000b'] } },
          '/body/hosts/1',
        ],
        [
          {
            method: 'PUT',
            url: '/v1/pages',
            payload: { pages: [{ url: 'https://b.example/' }, { url: 'https://b.example/\u0000' }] },
          },
          '/body/pages/1/url',
        ],
        [
          { method: 'PUT', url: '/v1/pages', payload: { pages: [{ url: 'https://b.example/\udc00' }] } },
          '/body/pages/0/url',
        ],
        [
          { method: 'PATCH', url: '/v1/settings', payload: { urls: { dropQueryParameters: ['ref\u0000'] } } },
          '/body/urls/dropQueryParameters/0',
        ],
        [{ method: 'PUT', url: '/v1/hosts/a%00b.example', payload: { maxCrawlsPerDay: 1 } }, '/params/host'],
        [{ method: 'DELETE', url: '/v1/pages/1%00' }, '/params/id'],
        [{ method: 'GET', url: '/v1/pages?host=a.example%00' }, '/querystring/host'],
        [
          { method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent('https://a.example/\u0000')}` },
          '/querystring/url',
        ],
      ]
      for (const [request, path] of cases) {
        const body = assertProblem(await t.app.inject(request), 400, path)
        assert.match(body.detail, /cannot store/)
      }
      assert.deepEqual(await visibleState(t), before)
    })
  })
})

describe('numbers at and past their bounds', () => {
  it('settings refuse values that would break other routes, naming the field; the bounds themselves are accepted', async () => {
    await withApp(async (t) => {
      await t.app.inject({
        method: 'PUT',
        url: '/v1/pages',
        payload: { pages: [{ url: 'https://a.example/1' }, { url: 'https://a.example/2' }] },
      })
      await post(t, [
        { url: 'https://a.example/1', crawledAt: iso(T0 - 2 * MS_PER_DAY), contentHash: 'x' },
        { url: 'https://a.example/1', crawledAt: iso(T0 - MS_PER_DAY), contentHash: 'y' },
      ])
      const before = await visibleState(t)
      for (const [payload, path] of [
        [{ budgetCrawlsPerDay: 1e308 }, '/body/budgetCrawlsPerDay'],
        [{ budgetCrawlsPerDay: 5e-324 }, '/body/budgetCrawlsPerDay'],
        [{ defaultChangesPerDay: 1e308 }, '/body/defaultChangesPerDay'],
        [{ maxChangesPerDay: 5e-324 }, '/body/maxChangesPerDay'],
        [{ minChangesPerDay: 1e-300 }, '/body/minChangesPerDay'],
        [{ minCrawlsPerDay: 2e9 }, '/body/minCrawlsPerDay'],
        [{ maxCrawlsPerDay: 1e-10 }, '/body/maxCrawlsPerDay'],
        [{ lln: { alpha: 1 } }, '/body/lln/alpha'],
        [{ lln: { alpha: 0 } }, '/body/lln/alpha'],
      ] as const) {
        const body = assertProblem(await patch(t, payload), 400, path)
        assert.ok(body.errors!.every((e) => e.message.length > 0))
      }
      assert.deepEqual(await visibleState(t), before)
      for (const payload of [
        {
          budgetCrawlsPerDay: 1e9,
          defaultChangesPerDay: 1e9,
          maxChangesPerDay: 1e9,
          minCrawlsPerDay: 0,
          maxCrawlsPerDay: 1e9,
        },
        {
          // The two pages' floors need 2e-9 a day: a smaller budget is refused with 422.
          budgetCrawlsPerDay: 2e-9,
          defaultChangesPerDay: 1e-9,
          minChangesPerDay: 0,
          maxChangesPerDay: 1e-9,
          maxCrawlsPerDay: 1e-9,
          minCrawlsPerDay: 1e-9,
        },
        { minCrawlsPerDay: 0, budgetCrawlsPerDay: 1e-9 },
        { lln: { alpha: 0.999999 }, estimator: 'lln' as const },
        { lln: { alpha: 1e-12 }, estimator: 'lln' as const },
      ]) {
        const res = await patch(t, payload)
        assert.equal(res.statusCode, 200, res.body)
        for (const url of ['/v1/stats', '/v1/pages'])
          assert.equal(
            (await t.app.inject({ method: 'GET', url })).statusCode,
            200,
            `${url} after ${JSON.stringify(payload)}`,
          )
        const optimized = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
        assert.ok(
          optimized.statusCode === 200 || optimized.statusCode === 422,
          `optimize after ${JSON.stringify(payload)}: ${optimized.body}`,
        )
        if (payload.maxCrawlsPerDay === 1e-9) {
          // One crawl in 2.7 million years: the next crawl is shown (and stored) as the last instant of 9999.
          const crawled = (await t.app.inject({ method: 'GET', url: '/v1/pages/1' })).json()
          assert.equal(crawled.crawlsPerDay, 1e-9)
          assert.equal(crawled.nextCrawlAt, '9999-12-31T23:59:59.999Z')
        }
        assert.equal(
          (await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w' } })).statusCode,
          200,
        )
      }
    })
  })

  it('page importance and bounds, and host caps and delays, refuse values past their bounds; the bounds themselves work', async () => {
    await withApp(async (t) => {
      for (const [page, path] of [
        [{ importance: 5e-324 }, '/body/pages/0/importance'],
        [{ importance: 1e10 }, '/body/pages/0/importance'],
        [{ minCrawlsPerDay: 1e-12 }, '/body/pages/0/minCrawlsPerDay'],
        [{ maxCrawlsPerDay: 1e308 }, '/body/pages/0/maxCrawlsPerDay'],
      ] as const) {
        assertProblem(
          await t.app.inject({
            method: 'PUT',
            url: '/v1/pages',
            payload: { pages: [{ url: 'https://a.example/', ...page }] },
          }),
          400,
          path,
        )
      }
      for (const [limits, path] of [
        [{ maxCrawlsPerDay: 1e308 }, '/body/maxCrawlsPerDay'],
        [{ maxCrawlsPerDay: 5e-324 }, '/body/maxCrawlsPerDay'],
        [{ minDelaySeconds: 5e-324 }, '/body/minDelaySeconds'],
      ] as const) {
        assertProblem(await t.app.inject({ method: 'PUT', url: '/v1/hosts/a.example', payload: limits }), 400, path)
      }
      assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/pages' })).json().pages, [])
      assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/hosts' })).json().hosts, [])
      const put = await t.app.inject({
        method: 'PUT',
        url: '/v1/pages',
        payload: {
          pages: [
            { url: 'https://a.example/1', importance: 1e-9, minCrawlsPerDay: 1e-9, maxCrawlsPerDay: 1e9 },
            { url: 'https://a.example/2', importance: 1e9 },
            { url: 'https://b.example/1', importance: 0, minCrawlsPerDay: 0, maxCrawlsPerDay: 0 },
          ],
        },
      })
      assert.equal(put.statusCode, 200, put.body)
      assert.equal(
        (
          await t.app.inject({
            method: 'PUT',
            url: '/v1/hosts/a.example',
            payload: { maxCrawlsPerDay: 1e9, minDelaySeconds: 0.001 },
          })
        ).statusCode,
        200,
      )
      assert.equal(
        (await t.app.inject({ method: 'PUT', url: '/v1/hosts/b.example', payload: { maxCrawlsPerDay: 1e-9 } }))
          .statusCode,
        200,
      )
      assert.equal((await patch(t, { budgetCrawlsPerDay: 1e9 })).statusCode, 200)
      const optimized = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
      assert.equal(optimized.statusCode, 200, optimized.body)
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/stats' })).statusCode, 200)
      assert.equal(
        (await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w' } })).statusCode,
        200,
      )
    })
  })

  it('a cursor past the largest page id is 400, not a database error', async () => {
    await withApp(async (t) => {
      await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [{ url: 'https://a.example/' }] } })
      for (const cursor of ['9999999999999999999', '9223372036854775808']) {
        assertProblem(
          await t.app.inject({ method: 'GET', url: `/v1/pages?cursor=${cursor}` }),
          400,
          '/querystring/cursor',
        )
      }
      const last = await t.app.inject({ method: 'GET', url: '/v1/pages?cursor=9223372036854775807' })
      assert.equal(last.statusCode, 200, last.body)
      assert.deepEqual(last.json(), { pages: [], nextCursor: null })
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/pages?cursor=0' })).json().pages.length, 1)
    })
  })

  it('a lease release naming a page id past the largest bigint lists it as not held', async () => {
    await withApp(async (t) => {
      await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: [{ url: 'https://a.example/' }] } })
      const lease = (await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w' } })).json()
      assert.equal(lease.pages.length, 1)
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1/leases/${lease.leaseId}/release`,
        payload: {
          pages: [
            { id: '9999999999999999999', reason: 'retry' },
            { id: lease.pages[0].id, reason: 'retry' },
          ],
        },
      })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().released, 1)
      assert.deepEqual(
        res.json().notHeld.map((n: { index: number }) => n.index),
        [0],
      )
    })
  })
})

describe('stored values from before the limits', () => {
  it('pages with subnormal or huge rates and importances never make stats, pages, the optimiser or leases fail', async () => {
    await withApp(async (t) => {
      const urls = Array.from({ length: 6 }, (_, i) => ({ url: `https://a.example/${i}` }))
      await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: urls } })
      // Values the API refuses today, written as an older version could have stored them.
      await t.db.pool.query(
        `WITH v(id, importance, changes, crawls) AS (
           VALUES (1, 5e-324::float8, 5e-324::float8, 1e-300::float8), (2, 1e-300, 1e300, 5e-324), (3, 1e300, 1e-300, 1e300),
                  (4, 1e-200, 1e-200, 1e200), (5, 1, 1e-310, 1e300), (6, 5e-324, 1e308, 1e308)
         ),
         estimates AS (UPDATE pages SET changes_per_day = v.changes FROM v WHERE pages.id = v.id)
         UPDATE page_schedule SET importance = v.importance, crawls_per_day = v.crawls FROM v WHERE page_schedule.page_id = v.id`,
      )
      for (const schedule of ['periodic', 'poisson'] as const) {
        assert.equal((await patch(t, { schedule })).statusCode, 200)
        const stats = await t.app.inject({ method: 'GET', url: '/v1/stats' })
        assert.equal(stats.statusCode, 200, stats.body)
        const freshness = stats.json().expectedFreshness as number
        assert.ok(freshness >= 0 && freshness <= 1, `${schedule}: ${freshness}`)
      }
      for (const [method, url] of [
        ['GET', '/v1/pages'],
        ['POST', '/v1/optimize'],
        ['GET', '/v1/schedule'],
      ] as const) {
        const res = await t.app.inject({ method, url })
        assert.ok(res.statusCode < 500, `${method} ${url}: ${res.body}`)
      }
      assert.equal(
        (await t.app.inject({ method: 'POST', url: '/v1/leases', payload: { worker: 'w' } })).statusCode,
        200,
      )
    })
  })

  it('a settings document with values the bounds now refuse is read with each moved to the nearest bound or its default', async () => {
    await withApp(async (t) => {
      await t.db.pool.query(
        `UPDATE settings SET value = '{"budgetCrawlsPerDay": 1e12, "defaultChangesPerDay": 5e-324, "lln": {"alpha": 1}, "maxCrawlsPerDay": 1e300, "estimator": "naive"}'::jsonb`,
      )
      const res = await t.app.inject({ method: 'GET', url: '/v1/settings' })
      assert.equal(res.statusCode, 200, res.body)
      const s = res.json()
      assert.equal(s.budgetCrawlsPerDay, 1e9)
      assert.equal(s.defaultChangesPerDay, 1e-9)
      assert.equal(s.maxCrawlsPerDay, 1e9)
      assert.equal(s.lln.alpha, '1/k')
      assert.equal(s.estimator, 'naive')
      // And a patch of an unrelated key is accepted: the merged document is valid.
      const patched = await patch(t, { reoptimizeSeconds: 600 })
      assert.equal(patched.statusCode, 200, patched.body)
      assert.equal(patched.json().budgetCrawlsPerDay, 1e9)
    })
  })
})

describe('host names and framework-level errors', () => {
  it('a host name of 253 characters, and one written in Unicode, can be given limits', async () => {
    await withApp(async (t) => {
      const host = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
      assert.equal(host.length, 253)
      const res = await t.app.inject({ method: 'PUT', url: `/v1/hosts/${host}`, payload: { maxCrawlsPerDay: 10 } })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().host, host)
      const unicode = `${'ü'.repeat(50)}.example`
      const encoded = await t.app.inject({
        method: 'PUT',
        url: `/v1/hosts/${encodeURIComponent(unicode)}`,
        payload: { maxCrawlsPerDay: 10 },
      })
      assert.equal(encoded.statusCode, 200, encoded.body)
      assert.match(encoded.json().host, /^xn--/)
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/hosts/${host}` })).statusCode, 204)
    })
  })

  it('malformed bodies and media types are 400 or 413 problem+json, through the whole HTTP stack', async () => {
    await withApp(
      async (t) => {
        await t.app.listen({ host: '127.0.0.1', port: 0 })
        const { port } = t.app.server.address() as AddressInfo
        const request = (head: string, body: string | Buffer) =>
          Buffer.concat([
            Buffer.from(
              `${head}\r\nHost: x\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
            ),
            Buffer.from(body),
          ])
        const cases: [Buffer, number][] = [
          [request('POST /v1/observations HTTP/1.1\r\nContent-Type: application/json', '{"observations":'), 400],
          [request('POST /v1/observations HTTP/1.1\r\nContent-Type: application/json', ''), 400],
          [
            request(
              'POST /v1/observations HTTP/1.1\r\nContent-Type: application/json',
              Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
            ),
            400,
          ],
          [
            request(
              'POST /v1/observations HTTP/1.1\r\nContent-Type: application/json',
              '['.repeat(3_000) + ']'.repeat(3_000),
            ),
            400,
          ],
          [request('POST /v1/observations HTTP/1.1\r\nContent-Type: application/xml', '<x/>'), 400],
          [
            request(
              'PATCH /v1/settings HTTP/1.1\r\nContent-Type: application/merge-patch+json',
              '{"budgetCrawlsPerDay":1e400}',
            ),
            400,
          ],
          [
            request(
              'PUT /v1/pages HTTP/1.1\r\nContent-Type: application/json',
              JSON.stringify({
                pages: Array.from({ length: 100 }, (_, i) => ({ url: `https://a.example/${'p'.repeat(100)}${i}` })),
              }),
            ),
            413,
          ],
          [request('GET /v1/pages/%zz HTTP/1.1', ''), 400],
        ]
        for (const [raw, status] of cases) {
          const answer = parseRaw(await rawExchange(port, raw))
          assert.equal(answer.status, status, raw.toString('utf8', 0, 80))
          assert.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/)
          assert.equal((answer.body as { status: number }).status, status)
        }
      },
      { bodyLimitBytes: 8 * 1024 },
    )
  })
})

describe('the last line of defence', () => {
  it('a database data exception (SQLSTATE class 22) is 422 problem+json naming it, not 500', async () => {
    await withApp(async (t) => {
      const app = Fastify({ logger: false })
      installProblemHandlers(app)
      app.get('/bigint', async () => t.db.pool.query(`SELECT '9999999999999999999'::bigint`))
      app.get('/underflow', async () => t.db.pool.query('SELECT 1e-200::float8 * 1e-200::float8'))
      app.get('/nul', async () => t.db.pool.query('SELECT $1::text', ['a\u0000b']))
      try {
        for (const url of ['/bigint', '/underflow', '/nul']) {
          const body = assertProblem(await app.inject({ method: 'GET', url }), 422)
          assert.match(body.detail, /SQLSTATE 22[0-9A-Z]{3}/, url)
        }
      } finally {
        await app.close()
      }
    })
  })
})
