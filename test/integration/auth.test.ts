import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createApiKey, revokeKey } from '../../src/domain/apiKeys.ts'
import { startTestApp, type TestApp } from '../helpers/testApp.ts'

let t: TestApp
before(async () => {
  t = await startTestApp({ loopbackOnly: false })
})
after(async () => {
  await t?.close()
})

const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, key?: string, payload?: unknown) =>
  t.app.inject({ method, url, ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}), ...(payload ? { payload } : {}) })

describe('API keys and roles', () => {
  it('without keys on a non-loopback listener, every API route is refused with a hint', async () => {
    const res = await call('GET', '/v1/settings')
    assert.equal(res.statusCode, 401)
    assert.match(res.json().detail, /create-key/)
    assert.equal((await call('GET', '/healthz')).statusCode, 200)
    assert.equal((await call('GET', '/openapi.json')).statusCode, 200)
  })

  it('enforces roles: crawler reports, reader reads, admin does everything', async () => {
    const admin = await createApiKey(t.db.pool, { name: 'ops', role: 'admin' })
    const reader = await createApiKey(t.db.pool, { name: 'dash', role: 'reader' })
    const crawler = await createApiKey(t.db.pool, { name: 'fleet', role: 'crawler' })
    const stored = await t.db.pool.query('SELECT key_sha256 FROM api_keys')
    assert.ok(stored.rows.every((r) => !r.key_sha256.includes(admin.key)), 'keys are stored hashed')

    const obs = { observations: [{ url: 'https://auth.example/', crawledAt: '2026-11-21T00:00:00Z' }] }
    assert.equal((await call('GET', '/v1/settings')).statusCode, 401)
    assert.equal((await call('GET', '/v1/settings', 'rk_wrong')).statusCode, 401)
    assert.equal((await call('GET', '/v1/settings', reader.key)).statusCode, 200)
    assert.equal((await call('GET', '/v1/settings', crawler.key)).statusCode, 403)
    assert.equal((await call('POST', '/v1/observations', reader.key, obs)).statusCode, 403)
    assert.equal((await call('POST', '/v1/observations', crawler.key, obs)).statusCode, 200)
    assert.equal((await call('PATCH', '/v1/settings', reader.key, { budgetCrawlsPerDay: 5 })).statusCode, 403)
    assert.equal((await call('PATCH', '/v1/settings', admin.key, { budgetCrawlsPerDay: 5 })).statusCode, 200)
    assert.equal((await call('GET', '/v1/pages', admin.key)).statusCode, 200)
    const forbidden = await call('PUT', '/v1/pages', crawler.key, { pages: [] })
    assert.equal(forbidden.statusCode, 403)
    assert.match(forbidden.headers['content-type'] as string, /problem\+json/)

    await revokeKey(t.db.pool, reader.id)
    assert.equal((await call('GET', '/v1/settings', reader.key)).statusCode, 401)
  })
})
