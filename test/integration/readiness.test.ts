/**
 * GET /readyz: 200 with a Readiness body once every migration is applied; while some are pending, a 503
 * problem (application/problem+json, the one media type of every 503) that names them, with Retry-After.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readdir } from 'node:fs/promises'
import { buildApp } from '../../src/app.ts'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_MAX_BATCH_ITEMS } from '../../src/config.ts'
import { manualClock } from '../../src/domain/clock.ts'
import { createRandom } from '../../src/math/random.ts'
import { T0, openDatabaseBefore } from '../helpers/testApp.ts'

describe('GET /readyz', () => {
  it('is a 503 problem naming the pending migrations until they are applied, then 200', async () => {
    const files = (await readdir(new URL('../../migrations/', import.meta.url)))
      .filter((f) => f.endsWith('.sql'))
      .sort()
    const last = files[files.length - 1]!.slice(0, 4)
    const before = await openDatabaseBefore(last)
    const app = await buildApp({
      pool: before.db.pool,
      databaseKind: 'postgres',
      clock: manualClock(T0),
      random: createRandom(1),
      maxBatchItems: DEFAULT_MAX_BATCH_ITEMS,
      bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
      loopbackOnly: true,
    })
    try {
      const pending = await app.inject({ method: 'GET', url: '/readyz' })
      assert.equal(pending.statusCode, 503, pending.body)
      assert.match(String(pending.headers['content-type']), /^application\/problem\+json/)
      assert.ok(Number(pending.headers['retry-after']) > 0)
      const body = pending.json()
      assert.equal(body.status, 503)
      assert.equal(body.database, 'postgres')
      assert.deepEqual(body.pendingMigrations, [last])
      assert.match(body.detail, new RegExp(last))

      await before.applyNext()
      const ready = await app.inject({ method: 'GET', url: '/readyz' })
      assert.equal(ready.statusCode, 200, ready.body)
      assert.match(String(ready.headers['content-type']), /^application\/json/)
      assert.deepEqual(ready.json(), { status: 'ready', database: 'postgres', pendingMigrations: [] })
    } finally {
      await app.close()
      await before.close()
    }
  })
})
