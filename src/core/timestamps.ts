import { z } from 'zod'

/** RFC 3339 timestamps as the API accepts them (docs/api.md, Conventions and "Input limits"). */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/

/**
 * The instants recrawl reads and writes: 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z, which JavaScript
 * dates, Postgres and every client can hold, and far beyond any crawl.
 */
const MIN_TIMESTAMP_MS = 0
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * Reads an RFC 3339 timestamp to epoch milliseconds, or says why it cannot. Every field must be in
 * range (Date.parse alone would read 2026-02-30 as 2 March; a leap second, :60, is not accepted), and
 * the instant must lie in 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z: what every store and
 * client can represent, and far beyond any crawl.
 */
export function readTimestamp(value: string): { ms: number } | { error: string } {
  const m = RFC3339.exec(value)
  if (!m) return { error: 'not an RFC 3339 timestamp' }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) {
    return { error: 'not an RFC 3339 timestamp' }
  }
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return { error: 'not an RFC 3339 timestamp' }
  const ms = Date.parse(value)
  if (!Number.isFinite(ms)) return { error: 'not an RFC 3339 timestamp' }
  if (ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS)
    return { error: 'outside 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z' }
  return { ms }
}

/** Epoch milliseconds of an accepted timestamp (readTimestamp), or null. */
export function parseTimestampMs(value: string): number | null {
  const read = readTimestamp(value)
  return 'ms' in read ? read.ms : null
}

/**
 * A computed instant moved into MIN/MAX_TIMESTAMP_MS when it lies outside: a due time from a rate of one crawl
 * in millions of years is written, and read, as the last instant of 9999. NaN is a bug and throws.
 */
export function clampTimestampMs(ms: number): number {
  if (Number.isNaN(ms)) throw new RangeError('a computed time is NaN')
  return Math.min(MAX_TIMESTAMP_MS, Math.max(MIN_TIMESTAMP_MS, ms))
}

/** A computed instant as the API shows it and the store writes it: RFC 3339 in UTC with milliseconds (clamped). */
export function isoTimestamp(ms: number): string {
  return new Date(clampTimestampMs(ms)).toISOString()
}

/** isoTimestamp, or null for null. */
export function isoTimestampOrNull(ms: number | null): string | null {
  return ms === null ? null : isoTimestamp(ms)
}

/**
 * A timestamp field of the API's shapes: a string documented as RFC 3339 `date-time`. Responses
 * write Date.toISOString(); requests are checked by readTimestamp, so a bad value gets its field's
 * own 400 (or, in an observation batch, its item's rejection).
 */
export const timestampSchema = z.string().meta({ format: 'date-time', description: 'RFC 3339 timestamp.' })
