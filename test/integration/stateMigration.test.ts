/**
 * migrations/0006 converts stored jsonb estimator states to the bytes of src/math/estimators/codec.ts
 * in SQL: every state must read back as the state it was, and its estimates must not move.
 */
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  currentEstimates,
  decodeEstimatorState,
  emptyEstimatorState,
  readEstimatorState,
  stepEstimators,
  type EstimatorState,
} from '../../src/math/estimators/index.ts'
import { createRandom } from '../../src/math/random.ts'
import { MIGRATIONS_DIR, migrate } from '../../src/store/migrate.ts'
import { openTestDatabase } from '../helpers/testApp.ts'

const SETTINGS = { llnAlpha: '1/k' as const, saGamma: 0.75, defaultChangesPerDay: 1, minChangesPerDay: 0, maxChangesPerDay: 1e5 }

function history(seed: number, crawls: number): EstimatorState {
  const random = createRandom(seed)
  let state = emptyEstimatorState()
  for (let k = 0; k < crawls; k++) {
    const rate = k < crawls / 2 ? 0.2 : 4
    const intervalDays = 0.05 + 2 * random.next()
    const ageDays = k % 3 === 0 ? random.next() * intervalDays : null
    state = stepEstimators(state, { intervalDays, changed: random.next() < -Math.expm1(-rate * intervalDays), ageDays }, SETTINGS)
  }
  return state
}

describe('migration 0006: jsonb estimator states become bytes', () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>
  let olderDir: string

  before(async () => {
    olderDir = await mkdtemp(join(tmpdir(), 'recrawl-migrations-'))
    for (const file of await readdir(MIGRATIONS_DIR)) {
      if (file.endsWith('.sql') && file < '0006') await copyFile(join(MIGRATIONS_DIR, file), join(olderDir, file))
    }
    db = await openTestDatabase(2, olderDir)
  })
  after(async () => {
    await db.close()
    await rm(olderDir, { recursive: true, force: true })
  })

  it('converts every state value for value, a state without segment keeps the whole history as one, and {} becomes NULL', async () => {
    const states = Array.from({ length: 40 }, (_, i) => history(i + 1, (i * 5) % 80 + 1))
    const legacy = history(99, 25) as Record<string, unknown>
    const { segment: _dropped, ...withoutSegment } = legacy
    const stored: unknown[] = [...states, withoutSegment, {}]
    for (const [i, state] of stored.entries()) {
      await db.pool.query(`INSERT INTO pages (url, host, next_crawl_at, estimator_state) VALUES ($1, 'h.example', now(), $2::jsonb)`, [
        `https://h.example/${i}`,
        JSON.stringify(state),
      ])
    }
    assert.deepEqual(await migrate(db.pool), ['0006'])
    const { rows } = await db.pool.query<{ url: string; state: Buffer | null }>(`SELECT url, estimator_state AS state FROM pages ORDER BY id`)
    assert.equal(rows.length, stored.length)
    for (const [i, row] of rows.entries()) {
      const before = stored[i]
      if (i === stored.length - 1) {
        assert.equal(row.state, null)
        continue
      }
      const decoded = decodeEstimatorState(row.state)
      assert.ok(decoded, `page ${i} has no state after the migration`)
      // What the service read from the jsonb before is what it reads from the bytes now.
      const expected = readEstimatorState(JSON.parse(JSON.stringify(before)))
      assert.deepEqual(decoded, expected, `page ${i}`)
      assert.deepEqual(currentEstimates(decoded, SETTINGS), currentEstimates(expected, SETTINGS))
    }
  })
})
