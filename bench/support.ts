// Shared helpers of the Postgres-backed benchmarks (ingest, leases, growth): a throwaway database,
// the service as a child process, latency percentiles and a description of the machine.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpus, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { createServer } from 'node:net'
import pg from 'pg'
import type { Pool as HttpPool } from 'undici'
import { migrate } from '../src/store/migrate.ts'
import { median as medianOf } from '../src/math/numbers.ts'

export const REPO_DIR = fileURLToPath(new URL('..', import.meta.url))

/** The server the benchmarks create their databases on (loopback only). */
export const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

export function argNumbers(name: string, fallback: number[]): number[] {
  const raw = argValue(name)
  if (raw === undefined) return fallback
  return raw.split(',').map((s) => {
    const v = Number(s)
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: not a positive number: ${s}`)
    return v
  })
}

export function argNumber(name: string, fallback: number): number {
  return argNumbers(name, [fallback])[0]!
}

export function hasFlag(name: string): boolean {
  return process.argv.includes(name)
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

export interface BenchDatabase {
  name: string
  url: string
  drop(): Promise<void>
}

/** Creates `recrawl_bench_<random>` and applies the migrations; `drop()` removes it (idempotent). */
export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `recrawl_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = withDatabase(ADMIN_URL, name)
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    await migrate(pool)
  } finally {
    await pool.end()
  }
  let dropped = false
  const drop = async () => {
    if (dropped) return
    dropped = true
    const c = new pg.Client({ connectionString: ADMIN_URL })
    await c.connect()
    try {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      await c.end()
    }
  }
  return { name, url, drop }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface ServiceProcess {
  baseUrl: string
  child: ChildProcess
  stop(): Promise<void>
}

/**
 * Starts `src/cli.ts start` as a child process (its own event loop, as in production) on a free
 * loopback port, with the default log level (request logs go to /dev/null), and waits for /readyz.
 */
export async function startService(databaseUrl: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort()
  // BENCH_SERVICE_NODE_ARGS: extra Node flags for the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const extra = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0)
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', 'src/cli.ts', 'start'], {
    cwd: REPO_DIR,
    env: { ...process.env, DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  let exited = false
  // Never leave the service behind, whatever ends this process.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  child.on('exit', () => {
    exited = true
    process.removeListener('exit', killOnExit)
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (exited) throw new Error(`service exited during start:\n${stderr}`)
    try {
      const res = await fetch(`${baseUrl}/readyz`)
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`service did not become ready within 60 s:\n${stderr}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  const stop = async () => {
    if (exited) return
    const done = new Promise<void>((r) => child.once('exit', () => r()))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    await done
    clearTimeout(timer)
  }
  return { baseUrl, child, stop }
}

/** Nearest-rank percentile of an unsorted sample (q in [0, 1]); 0 for an empty sample. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)))
  return sorted[rank - 1]!
}

/** The median of a sample (src/math/numbers.ts); 0 for an empty sample. */
export function median(values: readonly number[]): number {
  return values.length === 0 ? 0 : medianOf(values)
}

/** nproc, CPU model, memory, Node and Postgres versions: the header of every result. */
export async function machineDescription(): Promise<string> {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU'
  let nproc = String(cpus().length)
  try {
    nproc = execFileSync('nproc', { encoding: 'utf8' }).trim()
  } catch {
    // keep os.cpus() count
  }
  const c = new pg.Client({ connectionString: ADMIN_URL })
  await c.connect()
  let pgVersion = 'unknown'
  try {
    const { rows } = await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")
    pgVersion = rows[0]?.v ?? pgVersion
  } finally {
    await c.end()
  }
  const memGiB = (totalmem() / 1024 ** 3).toFixed(1)
  return `nproc ${nproc}, ${cpu}, ${memGiB} GiB RAM, Node ${process.version}, PostgreSQL ${pgVersion} (same machine, loopback)`
}

/** Drops the database and stops the service on Ctrl-C too, so an interrupted run leaves nothing behind. */
export function cleanupOnSignal(cleanup: () => Promise<void>): void {
  let running = false
  const handler = () => {
    if (running) return
    running = true
    cleanup().finally(() => process.exit(130))
  }
  process.once('SIGINT', handler)
  process.once('SIGTERM', handler)
}

export const fmt = (v: number, digits = 1): string => v.toFixed(digits)

/** Waits until the service has completed an optimiser run (recrawl_optimizer_runs_total ≥ 1); returns the seconds waited. */
export async function waitForOptimizerRun(http: HttpPool): Promise<number> {
  const start = performance.now()
  for (;;) {
    const res = await http.request({ method: 'GET', path: '/metrics' })
    const text = await res.body.text()
    const runs = /^recrawl_optimizer_runs_total (\S+)$/m.exec(text)
    if (runs && Number(runs[1]) >= 1) return (performance.now() - start) / 1000
    if (performance.now() - start > 600_000) throw new Error('no optimiser run within 10 minutes')
    await new Promise((r) => setTimeout(r, 500))
  }
}
