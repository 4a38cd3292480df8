import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { buildApp } from '../../src/app.ts'
import { installProblemHandlers } from '../../src/http/problems.ts'
import { MultiplierSearchError } from '../../src/math/optimizer/index.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openDatabase } from '../../src/store/db.ts'
import { T0, startTestApp } from '../helpers/testApp.ts'
import { parseRaw, rawExchange } from '../helpers/rawHttp.ts'

describe('error classes', () => {
  it('a database that cannot be reached gives 503 with Retry-After, never a 500', async () => {
    // Nothing listens on port 1: every connection attempt is refused.
    const db = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none', dataDir: null, poolSize: 1 })
    const app = await buildApp({
      pool: db.pool,
      databaseKind: 'postgres',
      clock: manualClock(T0),
      random: createRandom(1),
      maxBatchItems: 10,
      bodyLimitBytes: 1 << 20,
      loopbackOnly: true,
    })
    try {
      for (const [method, url, payload] of [
        ['GET', '/v1/settings', undefined],
        ['POST', '/v1/observations', { observations: [] }],
      ] as const) {
        const res = await app.inject({ method, url, ...(payload ? { payload } : {}) })
        assert.equal(res.statusCode, 503, `${method} ${url}: ${res.body}`)
        assert.equal(res.headers['retry-after'], '5')
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
        assert.equal(res.json().status, 503)
      }
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    } finally {
      await app.close()
      await db.close()
    }
  })

  it('a client over its rate limit gets 429 with Retry-After; health checks are never limited', async () => {
    const t = await startTestApp({ rateLimitPerMinute: 3 })
    try {
      const codes: number[] = []
      for (let i = 0; i < 5; i++) codes.push((await t.app.inject({ method: 'GET', url: '/v1/settings' })).statusCode)
      assert.deepEqual(codes, [200, 200, 200, 429, 429])
      const limited = await t.app.inject({ method: 'GET', url: '/v1/settings' })
      assert.equal(limited.json().status, 429)
      assert.ok(Number(limited.headers['retry-after']) > 0)
      for (let i = 0; i < 5; i++) assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    } finally {
      await t.close()
    }
  })

  it('a body over the byte limit is 413 and an unknown route 404, both as problem+json', async () => {
    const t = await startTestApp({ bodyLimitBytes: 2048 })
    try {
      const big = {
        observations: Array.from({ length: 50 }, (_, i) => ({
          url: `https://x.example/${i}`,
          crawledAt: '2026-11-21T00:00:00Z',
          changed: true,
        })),
      }
      const res = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: big })
      assert.equal(res.statusCode, 413)
      assert.match(String(res.headers['content-type']), /problem\+json/)
      const pages = await t.app.inject({ method: 'GET', url: '/v1/pages' })
      assert.equal(pages.json().pages.length, 0)
      const missing = await t.app.inject({ method: 'GET', url: '/v2/anything' })
      assert.equal(missing.statusCode, 404)
      assert.equal(missing.json().title, 'Not Found')
    } finally {
      await t.close()
    }
  })
})

const assertProblem = (
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
) => {
  assert.equal(res.statusCode, status)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
  const body = res.json() as { status: number; type: string; title: string; detail: string }
  assert.equal(body.status, status)
  assert.match(body.type, /^https:\/\/recrawl\.dev\/problems\//)
  assert.ok(body.title.length > 0 && body.detail.length > 0)
}

describe('Fastify- and Node-level errors are problem+json', () => {
  it('a path that is not valid percent-encoding is 400; a path parameter over the router limit is 414; a 150-character host gets limits', async () => {
    const t = await startTestApp()
    try {
      assertProblem(await t.app.inject({ method: 'GET', url: '/v1/pages/%zz' }), 400)
      assertProblem(await t.app.inject({ method: 'DELETE', url: '/v1/hosts/%E0%A4%A' }), 400)
      // A host name of 150 characters (labels of at most 63) is within the router's limit.
      const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(24)}.example`
      assert.ok(host.length > 100)
      const put = await t.app.inject({ method: 'PUT', url: `/v1/hosts/${host}`, payload: { maxCrawlsPerDay: 10 } })
      assert.equal(put.statusCode, 200, put.body)
      assert.equal(put.json().host, host)
      const listed = (await t.app.inject({ method: 'GET', url: '/v1/hosts' }))
        .json()
        .hosts.map((h: { host: string }) => h.host)
      assert.ok(listed.includes(host))
      assertProblem(
        await t.app.inject({
          method: 'PUT',
          url: `/v1/hosts/${'x'.repeat(5000)}.example`,
          payload: { maxCrawlsPerDay: 10 },
        }),
        414,
      )
      assertProblem(await t.app.inject({ method: 'GET', url: `/v1/pages/${'9'.repeat(5000)}` }), 414)
      // Nothing was stored by the refused requests.
      assert.deepEqual(
        (await t.app.inject({ method: 'GET', url: '/v1/hosts' })).json().hosts.map((h: { host: string }) => h.host),
        [host],
      )
    } finally {
      await t.close()
    }
  })

  it('malformed HTTP is 400 and headers over the size limit are 431, on the wire', async () => {
    const t = await startTestApp()
    try {
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      const { port } = t.app.server.address() as AddressInfo
      for (const [request, status] of [
        ['GARBAGE\r\n\r\n', 400],
        ['GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
        [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ] as const) {
        const answer = parseRaw(await rawExchange(port, request))
        assert.equal(answer.status, status, request.slice(0, 40))
        assert.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/)
        assert.equal((answer.body as { status: number }).status, status)
      }
      // The server still serves.
      const ok = parseRaw(await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
      assert.equal(ok.status, 200)
    } finally {
      await t.close()
    }
  })

  it('an optimiser that cannot represent the multiplier is 422, not 500', async () => {
    const app = Fastify({ logger: false })
    installProblemHandlers(app)
    app.post('/solve', async () => {
      throw new MultiplierSearchError('the budget needs a multiplier below e^−700; rescale importance or change rates')
    })
    try {
      const res = await app.inject({ method: 'POST', url: '/solve' })
      assertProblem(res, 422)
      assert.match((res.json() as { detail: string }).detail, /e\^−700/)
    } finally {
      await app.close()
    }
  })
})
