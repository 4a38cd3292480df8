import pg from 'pg'
import type { Logger } from 'pino'

/**
 * LISTEN on a Postgres server through one dedicated connection (a pooled one cannot hold a LISTEN).
 *
 * Every listener of a channel is called for each committed NOTIFY on it, and also right after the
 * connection was re-established, since notifications sent while it was down are lost: the caller
 * then treats everything it derived from the database as possibly stale.
 */
interface PostgresListener {
  subscribe(channel: string, listener: () => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

const RETRY_FIRST_MS = 500
const RETRY_MAX_MS = 30_000

export function postgresListener(databaseUrl: string, logger?: Logger): PostgresListener {
  const channels = new Map<string, Set<() => void>>()
  let client: pg.Client | null = null
  let connecting: Promise<void> | null = null
  let retryTimer: NodeJS.Timeout | null = null
  let retryMs = RETRY_FIRST_MS
  let closed = false
  /** True from a lost or failed connection until the next one is listening. */
  let missed = false

  const listening = new WeakMap<pg.Client, Set<string>>()
  async function listen(c: pg.Client, channel: string): Promise<void> {
    let set = listening.get(c)
    if (!set) listening.set(c, (set = new Set()))
    if (set.has(channel)) return
    await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
    set.add(channel)
  }

  const call = (set: Iterable<() => void> | undefined) => {
    for (const listener of set ?? []) listener()
  }

  function scheduleRetry(): void {
    if (closed || retryTimer) return
    retryTimer = setTimeout(() => {
      retryTimer = null
      void ensureConnected()
    }, retryMs)
    retryTimer.unref()
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
  }

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: databaseUrl })
    let lost = false
    const onLost = (err?: Error) => {
      // Before `client = c`, a failure belongs to connect() and its caller.
      if (lost || client !== c) return
      lost = true
      missed = true
      client = null
      if (!closed) {
        logger?.warn(
          { err },
          'lost the connection that listens for changes; caches fall back to their lifetime until it is back',
        )
        scheduleRetry()
      }
    }
    c.on('error', onLost)
    c.on('end', () => onLost())
    c.on('notification', (n) => call(channels.get(n.channel)))
    try {
      await c.connect()
      for (const channel of channels.keys()) await listen(c, channel)
    } catch (err) {
      await c.end().catch(() => undefined)
      throw err
    }
    if (closed) {
      await c.end()
      return
    }
    client = c
    retryMs = RETRY_FIRST_MS
    if (missed) {
      missed = false
      for (const set of channels.values()) call(set)
    }
  }

  function ensureConnected(): Promise<void> {
    if (client || closed) return Promise.resolve()
    connecting ??= connect()
      .catch((err: unknown) => {
        missed = true
        logger?.warn({ err }, 'cannot listen for changes; retrying')
        scheduleRetry()
      })
      .finally(() => {
        connecting = null
      })
    return connecting
  }

  return {
    async subscribe(channel, listener) {
      let set = channels.get(channel)
      if (!set) channels.set(channel, (set = new Set()))
      set.add(listener)
      await ensureConnected()
      if (client) await listen(client, channel)
      return async () => {
        set.delete(listener)
      }
    },
    async close() {
      closed = true
      if (retryTimer) clearTimeout(retryTimer)
      await connecting
      const c = client
      client = null
      await c?.end().catch(() => undefined)
    },
  }
}
