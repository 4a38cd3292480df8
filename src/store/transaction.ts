import type pg from 'pg'

/** SQLSTATEs after which the whole transaction may simply be run again. */
const RETRYABLE_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
])
const MAX_ATTEMPTS = 5

export type Queryable = Pick<pg.PoolClient, 'query'>

/**
 * Runs `work` inside BEGIN … COMMIT on one pooled connection, rolling back on error and retrying
 * the whole unit on serialization failures and deadlocks (safe because nothing was committed).
 */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect()
    let released = false
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (err) {
      try {
        await client.query('ROLLBACK')
      } catch {
        // The connection is broken; release it as such so the pool discards it.
        client.release(true)
        released = true
      }
      const code = (err as { code?: string }).code
      if (code && RETRYABLE_SQLSTATES.has(code) && attempt < MAX_ATTEMPTS) {
        await new Promise((r) => setTimeout(r, 5 * attempt * attempt))
        continue
      }
      throw err
    } finally {
      if (!released) client.release()
    }
  }
}
