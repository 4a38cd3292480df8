/**
 * migrations/0006 converts stored jsonb estimator states to the bytes of src/math/estimators/codec.ts
 * in SQL: every state must read back as the state it was, and its estimates must not move.
 */
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { currentEstimates, decodeEstimatorState, readEstimatorState } from '../../src/math/estimators/index.ts'
import { jumpingHistory, SETTINGS } from '../unit/math/estimatorsHelpers.ts'
import { openDatabaseBefore } from '../helpers/testApp.ts'

describe('migration 0006: jsonb estimator states become bytes', () => {
  let older: Awaited<ReturnType<typeof openDatabaseBefore>>
  let db: (typeof older)['db']

  before(async () => {
    older = await openDatabaseBefore('0006')
    db = older.db
  })
  after(() => older.close())

  /** A state as jsonb held it before 0006: without the fields that later layouts added (shape fits, block statistics). */
  function asStoredThen(state: ReturnType<typeof jumpingHistory>): Record<string, unknown> {
    const {
      ageHistogram: _a,
      ageShape: _b,
      ageShapeRateRatio: _c,
      ageShapeFitIntervals: _d,
      quietDays: _n,
      windowDays: _o,
      blindHistogram: _p,
      segment,
      ...rest
    } = readEstimatorState(state)
    const {
      blockIntervals: _e,
      blockChanges: _f,
      blockExpected: _g,
      blockVariance: _h,
      blocks: _i,
      squaredResiduals: _j,
      variances: _k,
      dispersionUp: _l,
      dispersionDown: _m,
      ...oldSegment
    } = segment
    return { ...rest, segment: oldSegment }
  }

  it('converts every state value for value, a state without segment keeps the whole history as one, and {} becomes NULL', async () => {
    const states = Array.from({ length: 40 }, (_, i) => asStoredThen(jumpingHistory(i + 1, ((i * 5) % 80) + 1)))
    const legacy = asStoredThen(jumpingHistory(99, 25))
    const { segment: _dropped, ...withoutSegment } = legacy
    const stored: unknown[] = [...states, withoutSegment, {}]
    for (const [i, state] of stored.entries()) {
      await db.pool.query(
        `INSERT INTO pages (url, host, next_crawl_at, estimator_state) VALUES ($1, 'h.example', now(), $2::jsonb)`,
        [`https://h.example/${i}`, JSON.stringify(state)],
      )
    }
    // Exactly 0006: later migrations are not this test's subject.
    assert.deepEqual(await older.applyNext(), ['0006'])
    const { rows } = await db.pool.query<{ url: string; state: Buffer | null }>(
      `SELECT url, estimator_state AS state FROM pages ORDER BY id`,
    )
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
