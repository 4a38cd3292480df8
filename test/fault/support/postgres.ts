import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)

/**
 * The directory of initdb and pg_ctl: PG_BIN, else `pg_config --bindir`, else the newest
 * /usr/lib/postgresql/<version>/bin. Null when none is installed.
 */
export async function postgresBinDir(): Promise<string | null> {
  const candidates: string[] = []
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN)
  try {
    candidates.push((await run('pg_config', ['--bindir'])).stdout.trim())
  } catch {
    // no pg_config on PATH
  }
  if (existsSync('/usr/lib/postgresql')) {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`))
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null
}

/** A TCP port nobody listens on right now (the OS picks it; it is released before use). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface PrivatePostgres {
  port: number
  /** Connection string of database `name` on this cluster (user postgres, trust auth). */
  url(name?: string): string
  createDatabase(name: string): Promise<string>
  /** pg_ctl start (after stop). */
  start(): Promise<void>
  /** pg_ctl stop; `immediate` is a crash: no checkpoint, backends killed, recovery from WAL at the next start. */
  stop(mode: 'fast' | 'immediate'): Promise<void>
  /** Terminates every backend connected to database `name`; returns how many. */
  terminateBackends(name: string): Promise<number>
  /** Stops the cluster (if running) and removes its directory. */
  destroy(): Promise<void>
  log(): Promise<string>
}

/**
 * A throwaway Postgres cluster in a temp directory on a free loopback port, for tests that crash,
 * stop or restart the database (never the shared server). As root, initdb and pg_ctl run as the
 * `postgres` user (Postgres refuses to run as root). fsync is off: these tests kill processes,
 * never the machine, and the operating system keeps what was written.
 */
export async function startPrivatePostgres(binDir: string): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'recrawl-pg-'))
  const dataDir = join(dir, 'data')
  const logFile = join(dir, 'postgres.log')
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    await chown(dir, Number(stdout.trim()), Number(gid.trim()))
  }
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(binDir, tool), ...args]) : run(join(binDir, tool), args)

  await pgRun('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ])
  const port = await freePort()
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=100',
    '-c shared_buffers=32MB',
  ].join(' ')
  const start = async () => {
    await pgRun('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'])
  }
  let running = false
  await start()
  running = true

  const url = (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`
  const admin = async <T>(work: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url(), connectionTimeoutMillis: 10_000 })
    c.on('error', () => {})
    await c.connect()
    try {
      return await work(c)
    } finally {
      await c.end().catch(() => {})
    }
  }

  return {
    port,
    url,
    async createDatabase(name) {
      await admin((c) => c.query(`CREATE DATABASE ${name}`))
      return url(name)
    },
    async start() {
      await start()
      running = true
    },
    async stop(mode) {
      await pgRun('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop'])
      running = false
    },
    async terminateBackends(name) {
      return admin(async (c) => {
        const { rows } = await c.query<{ n: number }>(
          'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        )
        return rows[0]!.n
      })
    },
    async destroy() {
      if (running) await pgRun('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => {})
      running = false
      await rm(dir, { recursive: true, force: true })
    },
    log: () => readFile(logFile, 'utf8').catch(() => ''),
  }
}
