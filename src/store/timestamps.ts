/**
 * The instants the store writes: 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z, which JavaScript
 * dates, Postgres and every client can hold (the API accepts the same range, src/core/timestamps.ts).
 */
export const STORABLE_MIN_MS = 0
export const STORABLE_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * An instant as RFC 3339 in UTC with milliseconds, moved into the storable range when it lies outside:
 * a due time computed from a tiny rate (one crawl in millions of years) is written, and read, as the
 * last instant of 9999. NaN is a bug and throws.
 */
export function storableTimestamp(ms: number): string {
  return new Date(storableMs(ms)).toISOString()
}

/** The instant storableTimestamp writes, as milliseconds since the epoch (for `to_timestamp(ms / 1000)`). */
export function storableMs(ms: number): number {
  if (Number.isNaN(ms)) throw new RangeError('a computed time is NaN')
  return Math.min(STORABLE_MAX_MS, Math.max(STORABLE_MIN_MS, ms))
}

/** storableTimestamp, or null for null. */
export function storableTimestampOrNull(ms: number | null): string | null {
  return ms === null ? null : storableTimestamp(ms)
}
