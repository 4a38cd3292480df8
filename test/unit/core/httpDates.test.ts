import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { httpDate, readHttpDate, readLastModified, readRetryAfterSeconds } from '../../../src/core/timestamps.ts'

const NOW = Date.parse('2026-11-22T00:00:00Z')
const SAMPLE = Date.parse('1994-11-06T08:49:37Z')

describe('HTTP dates (RFC 9110 §5.6.7)', () => {
  it('reads the three forms a recipient must accept, and writes IMF-fixdate', () => {
    assert.deepEqual(readHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW), { ms: SAMPLE })
    assert.deepEqual(readHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW), { ms: SAMPLE })
    assert.deepEqual(readHttpDate('Sun Nov  6 08:49:37 1994', NOW), { ms: SAMPLE })
    assert.equal(httpDate(SAMPLE), 'Sun, 06 Nov 1994 08:49:37 GMT')
    // What it writes it reads back, for any instant to the second.
    for (const ms of [0, NOW, NOW + 123_000, Date.parse('2099-02-28T23:59:59Z')]) {
      assert.deepEqual(readHttpDate(httpDate(ms), NOW), { ms })
    }
  })

  it('reads a two-digit year more than 50 years ahead in the past century', () => {
    assert.deepEqual(readHttpDate('Monday, 01-Jan-30 00:00:00 GMT', NOW), { ms: Date.parse('2030-01-01T00:00:00Z') })
    assert.deepEqual(readHttpDate('Friday, 01-Jan-99 00:00:00 GMT', NOW), { ms: Date.parse('1999-01-01T00:00:00Z') })
  })

  it('refuses what is not an HTTP date, and impossible dates', () => {
    for (const bad of [
      '',
      'yesterday',
      '2026-11-22T00:00:00Z',
      'Sun, 31 Feb 2026 00:00:00 GMT',
      'Sun, 06 Nov 1994 08:49:37 CET',
    ]) {
      assert.ok('error' in readHttpDate(bad, NOW), bad)
    }
  })

  it('Last-Modified is read as an HTTP date or RFC 3339', () => {
    assert.deepEqual(readLastModified('Sun, 06 Nov 1994 08:49:37 GMT', NOW), { ms: SAMPLE })
    assert.deepEqual(readLastModified('1994-11-06T08:49:37Z', NOW), { ms: SAMPLE })
    assert.deepEqual(readLastModified('06/11/1994', NOW), {
      error: 'neither an HTTP date nor an RFC 3339 timestamp',
    })
  })

  it('Retry-After is seconds (a number or digits) or an HTTP date counted from the response', () => {
    assert.deepEqual(readRetryAfterSeconds(120, NOW), { seconds: 120 })
    assert.deepEqual(readRetryAfterSeconds(' 3600 ', NOW), { seconds: 3600 })
    assert.deepEqual(readRetryAfterSeconds(httpDate(NOW + 90_000), NOW), { seconds: 90 })
    assert.deepEqual(readRetryAfterSeconds(httpDate(NOW - 90_000), NOW), { seconds: 0 })
    assert.ok('error' in readRetryAfterSeconds('soon', NOW))
    assert.ok('error' in readRetryAfterSeconds('-5', NOW))
  })
})
