import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { createApiKey, revokeKey, watchApiKeyChanges } from '../../src/domain/apiKeys.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { openTestDatabase, withTestApp, T0, type TestApp } from '../helpers/testApp.ts'

const call = (
  t: Pick<TestApp, 'app'>,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT',
  url: string,
  key?: string,
  payload?: unknown,
) =>
  t.app.inject({
    method,
    url,
    ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}),
    ...(payload ? { payload } : {}),
  })

const withApp = (overrides: Parameters<typeof withTestApp>[1], work: (t: TestApp) => Promise<void>) =>
  withTestApp(work, overrides)

describe('API keys and roles', () => {
  it('without keys on a non-loopback listener, every API route is refused with a hint', async () => {
    await withApp({ loopbackOnly: false }, async (t) => {
      const res = await call(t, 'GET', '/v1/settings')
      assert.equal(res.statusCode, 401)
      assert.match(res.json().detail, /create-key/)
      assert.equal((await call(t, 'GET', '/healthz')).statusCode, 200)
      assert.equal((await call(t, 'GET', '/openapi.json')).statusCode, 200)
    })
  })

  it('enforces roles: crawler reports, reader reads, admin does everything', async () => {
    await withApp({ loopbackOnly: false }, async (t) => {
      const admin = await createApiKey(t.db, { name: 'ops', role: 'admin' })
      const reader = await createApiKey(t.db, { name: 'dash', role: 'reader' })
      const crawler = await createApiKey(t.db, { name: 'fleet', role: 'crawler' })
      assert.deepEqual([admin.first, reader.first, crawler.first], [true, false, false])
      const stored = await t.db.pool.query('SELECT key_sha256 FROM api_keys')
      assert.ok(
        stored.rows.every((r) => !r.key_sha256.includes(admin.key)),
        'keys are stored hashed',
      )

      const obs = { observations: [{ url: 'https://auth.example/', crawledAt: '2026-11-21T00:00:00Z' }] }
      assert.equal((await call(t, 'GET', '/v1/settings')).statusCode, 401)
      assert.equal((await call(t, 'GET', '/v1/settings', 'rk_wrong')).statusCode, 401)
      assert.equal((await call(t, 'GET', '/v1/settings', reader.key)).statusCode, 200)
      assert.equal((await call(t, 'GET', '/v1/settings', crawler.key)).statusCode, 403)
      assert.equal((await call(t, 'POST', '/v1/observations', reader.key, obs)).statusCode, 403)
      assert.equal((await call(t, 'POST', '/v1/observations', crawler.key, obs)).statusCode, 200)
      assert.equal((await call(t, 'PATCH', '/v1/settings', reader.key, { budgetCrawlsPerDay: 5 })).statusCode, 403)
      assert.equal((await call(t, 'PATCH', '/v1/settings', admin.key, { budgetCrawlsPerDay: 5 })).statusCode, 200)
      assert.equal((await call(t, 'GET', '/v1/pages', admin.key)).statusCode, 200)
      const forbidden = await call(t, 'PUT', '/v1/pages', crawler.key, { pages: [] })
      assert.equal(forbidden.statusCode, 403)
      assert.match(forbidden.headers['content-type'] as string, /problem\+json/)

      assert.deepEqual(await revokeKey(t.db, reader.id), { activeKeys: 2 })
      assert.equal((await call(t, 'GET', '/v1/settings', reader.key)).statusCode, 401)
      await assert.rejects(revokeKey(t.db, reader.id), /no active key/)
      await assert.rejects(revokeKey(t.db, 'not-a-uuid'), /no active key/)
    })
  })

  it('a key change reaches a running app at once, however long the caches live', async () => {
    const db = await openTestDatabase()
    const app = await buildApp({
      pool: db.pool,
      databaseKind: db.kind,
      clock: manualClock(T0),
      random: createRandom(42),
      maxBatchItems: 5000,
      bodyLimitBytes: 16 * 1024 * 1024,
      loopbackOnly: true,
      authCacheMs: 3_600_000,
      keyChanges: (onChange) => watchApiKeyChanges(db, onChange),
    })
    // The embedded database calls the listener before the COMMIT returns; Postgres delivers the
    // notice on another connection a moment after it, so there the answer is awaited (bounded).
    const settle = async (request: () => Promise<LightMyRequestResponse>, status: number): Promise<number> => {
      let res = await request()
      for (let i = 0; db.kind === 'postgres' && res.statusCode !== status && i < 200; i++) {
        await new Promise((r) => setTimeout(r, 25))
        res = await request()
      }
      return res.statusCode
    }
    try {
      const settings = (key?: string) => call({ app }, 'GET', '/v1/settings', key)
      assert.equal((await settings()).statusCode, 200, 'no keys: open loopback access (and the count is cached)')

      const crawler = await createApiKey(db, { name: 'fleet', role: 'crawler' })
      assert.equal(crawler.first, true)
      assert.equal(await settle(() => settings(), 401), 401, 'the first key ends open loopback access')
      const report = { observations: [{ url: 'https://auth.example/at-once', crawledAt: '2026-11-21T00:00:00Z' }] }
      assert.equal((await call({ app }, 'POST', '/v1/observations', crawler.key, report)).statusCode, 200)

      const admin = await createApiKey(db, { name: 'ops', role: 'admin' })
      assert.equal((await settings(admin.key)).statusCode, 200, 'a new key works at once (and is now cached)')
      await revokeKey(db, admin.id)
      assert.equal(await settle(() => settings(admin.key), 401), 401, 'a revoked key is refused at once')
    } finally {
      await app.close()
      await db.close()
    }
  })
})
