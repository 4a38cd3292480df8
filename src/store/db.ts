import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import pg from 'pg'
import type { PGlite } from '@electric-sql/pglite'
import type { Logger } from 'pino'
import { claimDirectory, guardPGlite, type OwnerPurpose } from './embedded.ts'
import { postgresListener } from './notifications.ts'
import { DEFAULT_DATABASE_TIMEOUTS } from '../config.ts'

/**
 * The database handle used by every repository: a node-postgres pool, whatever is behind it.
 *
 * - With a DATABASE_URL: a normal pool against that Postgres.
 * - Without: an embedded Postgres (PGlite) persisted under `dataDir` (or in memory), exposed on a
 *   loopback socket and reached with the same `pg` driver through a pool of ONE connection:
 *   PGlite is single-session. The process that opens the directory owns it; another process (a CLI
 *   command while the service runs) gets a pool of one connection to the owner's socket instead,
 *   and the socket runs each transaction and each extended-query exchange whole (store/embedded.ts).
 */
export interface Database {
  pool: pg.Pool
  kind: 'postgres' | 'embedded'
  /** Where the data lives, for the start-up log (credentials removed). */
  location: string
  /**
   * Calls `listener` after each committed `NOTIFY channel` (pg_notify) from any process, and whenever
   * notifications may have been missed. Only the process that owns an embedded database can listen.
   */
  subscribe(channel: string, listener: () => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

/** Time limits of the Postgres sessions, in ms; 0 = none. The embedded database has none (openEmbedded). */
export interface DatabaseTimeouts {
  /** Opening a connection, or waiting for a free one from the pool. */
  connectMs: number
  /** Postgres statement_timeout (the client also gives up after statementMs + connectMs without an answer). */
  statementMs: number
  /** Postgres lock_timeout: row and advisory lock waits. */
  lockMs: number
  /** Postgres idle_in_transaction_session_timeout. */
  idleInTransactionMs: number
}

interface OpenDatabaseOptions {
  databaseUrl: string | undefined
  /** Embedded database directory; `null` keeps it in memory (tests). */
  dataDir: string | null
  poolSize: number
  logger?: Logger
  /**
   * Embedded only: a `service` owns its directory (and fails if another service does); a `command`
   * (the default) connects to the process that owns the directory when there is one.
   */
  purpose?: OwnerPurpose
  timeouts?: DatabaseTimeouts
}

/** Loopback connections the owner of an embedded database accepts beside its own (CLI commands). */
const EMBEDDED_GUEST_CONNECTIONS = 4

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const timeouts = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize, timeouts, options.logger)
  return openEmbedded(options.dataDir, options.purpose ?? 'command', options.logger)
}

function attachErrorLogger(pool: pg.Pool, logger: Logger | undefined): void {
  // An idle client's connection can drop (database restart); without a listener that crashes the process.
  // Checked-out clients are watched by withTransaction (src/store/transaction.ts).
  pool.on('error', (err) =>
    logger?.warn({ err }, 'idle database connection failed; the pool drops it and opens a new one when needed'),
  )
}

/**
 * Session limits sent with every new connection (Postgres applies them to the session), and the
 * client-side limits: a network cut never answers, so the client stops waiting on its own.
 */
function postgresSessionOptions(t: DatabaseTimeouts): pg.PoolConfig {
  return {
    connectionTimeoutMillis: t.connectMs,
    keepAlive: true,
    ...(t.statementMs > 0 ? { statement_timeout: t.statementMs, query_timeout: t.statementMs + t.connectMs } : {}),
    ...(t.lockMs > 0 ? { lock_timeout: t.lockMs } : {}),
    ...(t.idleInTransactionMs > 0 ? { idle_in_transaction_session_timeout: t.idleInTransactionMs } : {}),
  }
}

async function openPostgres(
  databaseUrl: string,
  poolSize: number,
  timeouts: DatabaseTimeouts,
  logger?: Logger,
): Promise<Database> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, ...postgresSessionOptions(timeouts) })
  attachErrorLogger(pool, logger)
  const url = new URL(databaseUrl)
  url.password = ''
  url.username = url.username ? url.username : ''
  let listener: ReturnType<typeof postgresListener> | null = null
  return {
    pool,
    kind: 'postgres',
    location: `${url.protocol}//${url.username ? `${url.username}@` : ''}${url.host}${url.pathname}`,
    subscribe: (channel, onNotify) => (listener ??= postgresListener(databaseUrl, logger)).subscribe(channel, onNotify),
    async close() {
      await listener?.close()
      await pool.end()
    },
  }
}

async function openEmbedded(dataDir: string | null, purpose: OwnerPurpose, logger?: Logger): Promise<Database> {
  let location = 'memory'
  let db: PGlite
  let release = async () => {}
  let publish = async (_port: number) => {}
  // Loaded only by the owner: a command that reaches the database through its owner needs neither.
  const load = () => Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')])
  let modules: Awaited<ReturnType<typeof load>>
  if (dataDir === null) {
    modules = await load()
    db = await modules[0].PGlite.create()
  } else {
    location = resolve(dataDir)
    await mkdir(location, { recursive: true })
    const claim = await claimDirectory(location, purpose)
    if (!claim.owned) return openGuest(location, claim.owner, logger)
    release = claim.release
    publish = claim.publish
    try {
      modules = await load()
      db = await modules[0].PGlite.create(location)
    } catch (err) {
      await release()
      throw err
    }
  }
  const guarded = guardPGlite(db)
  const server = new modules[1].PGLiteSocketServer({
    db: guarded.db,
    host: '127.0.0.1',
    port: 0,
    maxConnections: 1 + EMBEDDED_GUEST_CONNECTIONS,
  })
  let port: number
  try {
    await server.start()
    // After start() the connection string carries the port the OS picked.
    port = Number(server.getServerConn().split(':').pop())
    if (!Number.isInteger(port) || port <= 0)
      throw new Error(`embedded database socket has no TCP port: ${server.getServerConn()}`)
    await publish(port)
  } catch (err) {
    await server.stop().catch(() => undefined)
    await db.close().catch(() => undefined)
    await release()
    throw err
  }
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    max: 1,
    // No limits here: PGlite runs inside this process, so it cannot become unreachable, and it enforces
    // no statement, lock or idle timeouts (one session, nobody else to wait for). A client-side limit
    // would fire while a long statement blocks this very thread, and a limit on the wait for the one
    // connection would refuse requests that only queue behind an optimiser run.
    // Keep the one connection: PGlite is a single session, so a new connection would find the named
    // statements of the old one still prepared. After a reconnect (the old connection failed), a new one
    // first forgets them.
    idleTimeoutMillis: 0,
    onConnect: async (client: pg.ClientBase) => {
      await client.query('DEALLOCATE ALL')
    },
  })
  attachErrorLogger(pool, logger)
  const listened = new Set<string>()
  return {
    pool,
    kind: 'embedded',
    location,
    async subscribe(channel, listener) {
      const stop = guarded.onNotify(channel, listener)
      // One backend serves every connection, so one LISTEN holds for all of them until close.
      if (!listened.has(channel)) {
        await pool.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
        listened.add(channel)
      }
      return async () => stop()
    },
    async close() {
      await pool.end()
      await server.stop()
      await db.close()
      await release()
    },
  }
}

/** A connection to the socket of the process that owns the embedded database in `location`. */
async function openGuest(location: string, owner: { pid: number; port: number }, logger?: Logger): Promise<Database> {
  const pool = new pg.Pool({ host: '127.0.0.1', port: owner.port, user: 'postgres', database: 'postgres', max: 1 })
  attachErrorLogger(pool, logger)
  try {
    ;(await pool.connect()).release()
  } catch (err) {
    await pool.end()
    throw new Error(
      `the embedded database in ${location} is owned by process ${owner.pid}, but its socket 127.0.0.1:${owner.port} does not answer (${(err as Error).message})`,
      { cause: err },
    )
  }
  return {
    pool,
    kind: 'embedded',
    location: `${location} (through process ${owner.pid})`,
    subscribe: () =>
      Promise.reject(new Error('only the process that owns an embedded database can listen for notifications')),
    close: () => pool.end(),
  }
}
