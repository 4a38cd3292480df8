import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import type { Logger } from 'pino'

/**
 * The database handle used by every repository: a node-postgres pool, whatever is behind it.
 *
 * - With a DATABASE_URL: a normal pool against that Postgres.
 * - Without: an embedded Postgres (PGlite) persisted under `dataDir` (or in memory), exposed on a
 *   loopback socket and reached with the same `pg` driver through a pool of ONE connection:
 *   PGlite is single-session, so a second connection would interleave transactions.
 */
export interface Database {
  pool: pg.Pool
  kind: 'postgres' | 'embedded'
  /** Where the data lives, for the start-up log (credentials removed). */
  location: string
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  databaseUrl: string | undefined
  /** Embedded database directory; `null` keeps it in memory (tests). */
  dataDir: string | null
  poolSize: number
  logger?: Logger
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize, options.logger)
  return openEmbedded(options.dataDir, options.logger)
}

function attachErrorLogger(pool: pg.Pool, logger: Logger | undefined): void {
  // An idle client's connection can drop (database restart); without a listener that crashes the process.
  pool.on('error', (err) => logger?.error({ err }, 'idle database connection failed'))
}

async function openPostgres(databaseUrl: string, poolSize: number, logger?: Logger): Promise<Database> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize })
  attachErrorLogger(pool, logger)
  const url = new URL(databaseUrl)
  url.password = ''
  url.username = url.username ? url.username : ''
  return {
    pool,
    kind: 'postgres',
    location: `${url.protocol}//${url.username ? `${url.username}@` : ''}${url.host}${url.pathname}`,
    close: () => pool.end(),
  }
}

async function openEmbedded(dataDir: string | null, logger?: Logger): Promise<Database> {
  let location = 'memory'
  let db: PGlite
  if (dataDir === null) {
    db = await PGlite.create()
  } else {
    location = resolve(dataDir)
    await mkdir(location, { recursive: true })
    db = await PGlite.create(location)
  }
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 })
  await server.start()
  // After start() the connection string carries the port the OS picked.
  const port = Number(server.getServerConn().split(':').pop())
  if (!Number.isInteger(port) || port <= 0) throw new Error(`embedded database socket has no TCP port: ${server.getServerConn()}`)
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    max: 1,
  })
  attachErrorLogger(pool, logger)
  return {
    pool,
    kind: 'embedded',
    location,
    async close() {
      await pool.end()
      await server.stop()
      await db.close()
    },
  }
}
