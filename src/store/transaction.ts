import type pg from 'pg'

/** SQLSTATEs after which the whole transaction may simply be run again. */
const RETRYABLE_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
])
const MAX_ATTEMPTS = 5
/** Pause before the k-th rerun: k² × this (a short, growing back-off that lets the competing transaction finish). */
const RERUN_BACKOFF_MS = 5
/**
 * A unit whose connection was lost before COMMIT runs once more: that covers a stale pooled
 * connection (the database restarted since it was opened). More attempts would only multiply the
 * time until a client hears 503 while the database is really away.
 */
const MAX_ATTEMPTS_AFTER_LOST_CONNECTION = 2

/**
 * SQLSTATEs of a database that cannot serve the request now but may a moment later: the connection
 * or the server went away, it is starting or shutting down, it has no connection slot left, or a
 * configured timeout (statement, lock, idle in transaction) cut the request short.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '25006', // read_only_sql_transaction: connected to a standby (a failover in progress)
  '25P03', // idle_in_transaction_session_timeout
  '3D000', // invalid_catalog_name: the database does not exist (dropped, or not created yet)
  '53300', // too_many_connections
  '55000', // object_not_in_prerequisite_state: the database is not accepting connections (ALLOW_CONNECTIONS false)
  '55P03', // lock_not_available (lock_timeout)
  '57014', // query_canceled (statement_timeout)
  '57P01', // admin_shutdown (pg_terminate_backend, a fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
  '57P04', // database_dropped
  '57P05', // idle_session_timeout
])
/**
 * Class 08, connection exception, in every subclass (08000, 08001, 08003, 08004, 08006, …) but 08P01,
 * protocol_violation: a malformed message is a bug of this process, not the database going away.
 */
const UNAVAILABLE_SQLSTATE_CLASS = /^08(?!P01)[0-9A-Z]{3}$/
/** Socket errors on the way to the database. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
])
/** node-postgres and pg-pool report a lost or timed-out connection by message only. */
const UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection .*closed|Client has encountered a connection error|Query read timeout|timeout expired/i

/**
 * True when an error means "the database is unavailable right now" rather than "this request is
 * wrong": the HTTP layer answers 503 with Retry-After, start-up waits and tries again.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false
  const e = err as { code?: unknown; message?: unknown; errors?: unknown }
  if (
    typeof e.code === 'string' &&
    (UNAVAILABLE_SQLSTATES.has(e.code) || UNAVAILABLE_SQLSTATE_CLASS.test(e.code) || UNAVAILABLE_ERRNOS.has(e.code))
  )
    return true
  // A host name with several addresses fails with an AggregateError of one error per address.
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isDatabaseUnavailable)) return true
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)
}

/** The session itself is gone (not just the statement): the client must be discarded, not rolled back. */
function isConnectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  // A statement or lock timeout leaves the session usable (ROLLBACK works); everything else here does not.
  return isDatabaseUnavailable(err) && code !== '57014' && code !== '55P03'
}

/**
 * The connection was ended by a limit (idle in transaction, no answer within the query timeout):
 * running the unit again would hit the same limit.
 */
function isTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown }
  return e.code === '25P03' || (typeof e.message === 'string' && /timeout/i.test(e.message))
}

export type Queryable = Pick<pg.PoolClient, 'query'>

/**
 * Runs `work` inside BEGIN … COMMIT on one pooled connection, rolling back on error and retrying
 * the whole unit on serialization failures and deadlocks (safe because nothing was committed).
 *
 * A connection that breaks while checked out (database restart, terminated backend, network cut)
 * never takes the process down: pg-pool stops listening for a client's `error` event while it is
 * checked out, so this function listens instead, and discards the broken client. When the
 * connection was lost before COMMIT was sent, nothing was committed and the unit is run again on a
 * fresh connection (a stale pooled connection costs one retry); when COMMIT itself got no answer,
 * its outcome is unknown and the error is thrown: the caller answers 503 and the client repeats the
 * request (a repeated crawl report is stored once: the repeat counts as a duplicate).
 */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptTransaction(pool, work)
    if ('value' in outcome) return outcome.value
    const maxAttempts =
      outcome.rerun === 'serialization'
        ? MAX_ATTEMPTS
        : outcome.rerun === 'fresh-connection'
          ? MAX_ATTEMPTS_AFTER_LOST_CONNECTION
          : 0
    if (attempt >= maxAttempts) throw outcome.error
    await new Promise((r) => setTimeout(r, RERUN_BACKOFF_MS * attempt * attempt))
  }
}

/** Why a failed attempt may run again: a serialization failure or deadlock, or a connection lost before COMMIT. */
type Attempt<T> = { value: T } | { error: unknown; rerun: 'serialization' | 'fresh-connection' | null }

/** One BEGIN … COMMIT on one checked-out client; says whether a failure may be run again. */
async function attemptTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<Attempt<T>> {
  const client = await pool.connect()
  let lost: unknown = null
  const onError = (err: Error) => {
    lost ??= err
  }
  client.on('error', onError)
  let commitSent = false
  try {
    await client.query('BEGIN')
    const value = await work(client)
    commitSent = true
    await client.query('COMMIT')
    return { value }
  } catch (error) {
    if (lost === null && isConnectionLost(error)) lost = error
    if (lost === null) {
      try {
        await client.query('ROLLBACK')
      } catch (rollbackError) {
        lost = rollbackError
      }
    }
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && RETRYABLE_SQLSTATES.has(code)) return { error, rerun: 'serialization' }
    const freshConnectionMayWork =
      lost !== null && !commitSent && isDatabaseUnavailable(error) && !isTimeout(lost) && !isTimeout(error)
    return { error, rerun: freshConnectionMayWork ? 'fresh-connection' : null }
  } finally {
    client.off('error', onError)
    // A client whose connection was lost is destroyed by the pool instead of being reused.
    client.release(lost === null ? undefined : lost instanceof Error ? lost : true)
  }
}

/**
 * Runs `work` with one pooled connection held for its whole duration (for work that spans several
 * transactions, such as an optimiser run under a session-level advisory lock). As in withTransaction, an
 * `error` of the checked-out connection never takes the process down, and a connection that was lost is
 * discarded rather than returned to the pool.
 */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let lost: unknown = null
  const onError = (err: Error) => {
    lost ??= err
  }
  client.on('error', onError)
  try {
    return await work(client)
  } catch (err) {
    if (lost === null && isConnectionLost(err)) lost = err
    throw err
  } finally {
    client.off('error', onError)
    client.release(lost === null ? undefined : lost instanceof Error ? lost : true)
  }
}

/** BEGIN … COMMIT on a connection the caller holds (ROLLBACK on error; no retry). */
export async function transactionOn<T>(client: Queryable, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN')
  try {
    const result = await work()
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  }
}
