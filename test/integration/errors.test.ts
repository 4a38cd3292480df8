import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { buildApp } from '../../src/app.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openDatabase } from '../../src/store/db.ts'
import { T0, startTestApp } from '../helpers/testApp.ts'

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
      const big = { observations: Array.from({ length: 50 }, (_, i) => ({ url: `https://x.example/${i}`, crawledAt: '2026-11-21T00:00:00Z', changed: true })) }
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
