import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { isoTimestamp, MAX_TIMESTAMP_MS, readTimestamp } from '../../../src/core/timestamps.ts'
import { findTextProblems, textProblem } from '../../../src/core/text.ts'
import { DEFAULT_SETTINGS, settingsFromStored } from '../../../src/core/settings.ts'

describe('readTimestamp', () => {
  it('accepts exactly 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z, offsets applied', () => {
    assert.deepEqual(readTimestamp('1970-01-01T00:00:00Z'), { ms: 0 })
    assert.deepEqual(readTimestamp('1970-01-01T01:00:00+01:00'), { ms: 0 })
    assert.deepEqual(readTimestamp('9999-12-31T23:59:59.999Z'), { ms: MAX_TIMESTAMP_MS })
    assert.deepEqual(readTimestamp('2026-11-22T12:00:00.250+02:00'), { ms: Date.parse('2026-11-22T10:00:00.250Z') })
    const outside = { error: 'outside 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z' }
    for (const v of [
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:30:00+01:00',
      '0000-01-01T00:00:00Z',
      '1000-01-01T00:00:00Z',
      '9999-12-31T23:59:59-00:01',
    ]) {
      assert.deepEqual(readTimestamp(v), outside, v)
    }
    for (const v of [
      '2026-02-30T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22',
      '+275760-09-13T00:00:00Z',
      '2026-11-22T00:00:00+24:00',
      '',
    ]) {
      assert.deepEqual(readTimestamp(v), { error: 'not an RFC 3339 timestamp' }, v)
    }
  })

  it('computed instants are written inside the range: past 9999 as its last instant, NaN is a bug', () => {
    assert.equal(isoTimestamp(Date.parse('2026-11-22T00:00:00Z')), '2026-11-22T00:00:00.000Z')
    assert.equal(isoTimestamp(1e300), '9999-12-31T23:59:59.999Z')
    assert.equal(isoTimestamp(Number.POSITIVE_INFINITY), '9999-12-31T23:59:59.999Z')
    assert.equal(isoTimestamp(-5), '1970-01-01T00:00:00.000Z')
    assert.throws(() => isoTimestamp(Number.NaN), RangeError)
  })
})

describe('text the store can hold', () => {
  it('refuses NUL and lone surrogates, and nothing else', () => {
    assert.equal(textProblem('a\u0000b'), 'contains a NUL character (\\u0000)')
    assert.equal(textProblem('\ud800'), 'is not well-formed Unicode (a lone surrogate)')
    assert.equal(textProblem('x\udc00'), 'is not well-formed Unicode (a lone surrogate)')
    assert.equal(textProblem('\udc00\ud800'), 'is not well-formed Unicode (a lone surrogate)')
    for (const ok of ['', '%00', '😀', '\ud83d\ude00', 'bücher', '\u0001\u001f', '\ufeff'])
      assert.equal(textProblem(ok), null, JSON.stringify(ok))
  })

  it('finds every bad string and key of a JSON value by pointer, skips what is checked per item, and survives deep nesting', () => {
    const value = { a: 'x\u0000', 'k\u0000': 'fine', 'p/q~': ['ok', '\ud800'], items: [{ u: '\u0000' }], n: 1, z: null }
    assert.deepEqual(findTextProblems(value, { skip: (p) => /^\/items\/\d+$/.test(p) }), [
      { pointer: '/a', message: 'contains a NUL character (\\u0000)' },
      { pointer: '/k\u0000', message: 'key contains a NUL character (\\u0000)' },
      { pointer: '/p~1q~0/1', message: 'is not well-formed Unicode (a lone surrogate)' },
    ])
    let deep: unknown = '\u0000'
    for (let i = 0; i < 200_000; i++) deep = [deep]
    assert.equal(findTextProblems(deep).length, 1)
    assert.equal(
      findTextProblems(
        Array.from({ length: 100 }, () => '\u0000'),
        { limit: 20 },
      ).length,
      20,
    )
  })
})

describe('settings stored before the input limits', () => {
  it('read with a number past a bound moved to the bound, anything else refused read as its default', () => {
    const s = settingsFromStored({
      budgetCrawlsPerDay: 1e308,
      minCrawlsPerDay: 5e-324,
      lln: { alpha: 1 },
      maxChangesPerDay: 2e9,
      sa: { gamma: 0.75 },
    })
    assert.equal(s.budgetCrawlsPerDay, 1e9)
    assert.equal(s.maxChangesPerDay, 1e9)
    // 5e-324 is neither 0 nor at least 1e-9: no bound to move to, so the default.
    assert.equal(s.minCrawlsPerDay, DEFAULT_SETTINGS.minCrawlsPerDay)
    assert.equal(s.lln.alpha, DEFAULT_SETTINGS.lln.alpha)
    assert.deepEqual(settingsFromStored({}), DEFAULT_SETTINGS)
  })
})
