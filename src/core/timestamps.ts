import { z } from 'zod'
import { MS_PER_SECOND } from '../math/units.ts'

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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const MONTH = `(${MONTHS.join('|')})`
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})'
/** RFC 9110 §5.6.7: the preferred IMF-fixdate, and the two obsolete forms a recipient must still accept. */
const IMF_FIXDATE = new RegExp(`^[A-Za-z]{3}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`)
const RFC850_DATE = new RegExp(`^[A-Za-z]{6,9}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`)
const ASCTIME_DATE = new RegExp(`^[A-Za-z]{3} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`)

/**
 * Reads an HTTP date (RFC 9110 §5.6.7: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, or the obsolete RFC 850 and
 * asctime forms) to epoch milliseconds, as a header carries it. A two-digit RFC 850 year more than 50 years in the
 * future of `nowMs` is read in the past century, as RFC 9110 says. The day name is not checked (RFC 9110 lets a
 * recipient ignore it).
 */
export function readHttpDate(value: string, nowMs: number): { ms: number } | { error: string } {
  const trimmed = value.trim()
  let parts: { year: number; month: string; day: number; hour: number; minute: number; second: number } | null = null
  let m = IMF_FIXDATE.exec(trimmed)
  if (m) parts = { day: +m[1]!, month: m[2]!, year: +m[3]!, hour: +m[4]!, minute: +m[5]!, second: +m[6]! }
  else if ((m = RFC850_DATE.exec(trimmed))) {
    const nowYear = new Date(nowMs).getUTCFullYear()
    let year = Math.floor(nowYear / 100) * 100 + Number(m[3])
    if (year > nowYear + 50) year -= 100
    parts = { day: +m[1]!, month: m[2]!, year, hour: +m[4]!, minute: +m[5]!, second: +m[6]! }
  } else if ((m = ASCTIME_DATE.exec(trimmed))) {
    parts = { month: m[1]!, day: Number(m[2]!.trim()), hour: +m[3]!, minute: +m[4]!, second: +m[5]!, year: +m[6]! }
  }
  if (parts === null) return { error: 'not an HTTP date' }
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  const month = MONTHS.indexOf(parts.month) + 1
  const read = readTimestamp(
    `${pad(parts.year, 4)}-${pad(month)}-${pad(parts.day)}T${pad(parts.hour)}:${pad(parts.minute)}:${pad(parts.second)}Z`,
  )
  // A field out of range (31 February) is no HTTP date; an instant outside 1970..9999 says so.
  return 'error' in read && read.error === 'not an RFC 3339 timestamp' ? { error: 'not an HTTP date' } : read
}

/** An instant as an HTTP date in the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`), ready for If-Modified-Since. */
export function httpDate(ms: number): string {
  return new Date(clampTimestampMs(ms)).toUTCString()
}

/** A Last-Modified value as a crawler got it: an HTTP date (the header as sent) or RFC 3339. */
export function readLastModified(value: string, nowMs: number): { ms: number } | { error: string } {
  const rfc3339 = readTimestamp(value)
  if ('ms' in rfc3339 || RFC3339.test(value)) return rfc3339
  const http = readHttpDate(value, nowMs)
  return 'ms' in http || http.error !== 'not an HTTP date'
    ? http
    : { error: 'neither an HTTP date nor an RFC 3339 timestamp' }
}

/**
 * A Retry-After value as a crawler got it (RFC 9110 §10.2.3): a number of seconds (a JSON number, or the header's
 * digits), or an HTTP date, read as the seconds from `responseAtMs` (the crawl) to that date, 0 when it is past.
 */
export function readRetryAfterSeconds(
  value: number | string,
  responseAtMs: number,
): { seconds: number } | { error: string } {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? { seconds: value } : { error: 'not a number of seconds ≥ 0' }
  }
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return { seconds: Number(trimmed) }
  const date = readHttpDate(trimmed, responseAtMs)
  if ('error' in date) return { error: 'neither a number of seconds nor an HTTP date' }
  return { seconds: Math.max(0, Math.ceil((date.ms - responseAtMs) / MS_PER_SECOND)) }
}
