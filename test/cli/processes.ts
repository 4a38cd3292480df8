import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The repository root: the CLI runs from its sources there (tsx), as `npm run cli` does. */
export const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url))

/** How to start the CLI: from the sources through tsx (default) or a built entry such as dist/cli.js. */
export interface Entry {
  args: string[]
  cwd: string
}

const SOURCES: Entry = { args: ['--import', 'tsx', 'src/cli.ts'], cwd: REPO_DIR }

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** The environment of a child: this one without the database settings, plus `env`. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'HOST', 'PORT', 'LOG_LEVEL', 'NODE_OPTIONS', 'npm_lifecycle_event'])
    delete base[name]
  for (const [name, value] of Object.entries(env)) if (value !== undefined) base[name] = value
  return base
}

const SERVICE_START_TIMEOUT_MS = 180_000

/**
 * Runs `command` with `args` in `cwd` to its end (killed after `timeoutMs`), with this environment less the
 * database settings, plus `env`.
 */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: childEnv(options.env ?? {}),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** Runs one CLI command to its end (killed after `timeoutMs`). */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  entry: Entry = SOURCES,
  timeoutMs = 180_000,
): Promise<CliResult> {
  return runProcess(process.execPath, [...entry.args, ...args], { cwd: entry.cwd, env, timeoutMs })
}

interface Service {
  baseUrl: string
  child: ChildProcess
  /** Everything the service wrote to stderr so far (its logs). */
  logs(): string
  /** Sends `signal` and waits for the exit (SIGKILL after 15 s). */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** `start` on an ephemeral loopback port; resolves once the service listens and answers /readyz. */
export async function startService(env: Record<string, string | undefined>, entry: Entry = SOURCES): Promise<Service> {
  const child = spawn(process.execPath, [...entry.args, 'start'], {
    cwd: entry.cwd,
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let logs = ''
  let stdout = ''
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()))
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
  let exitCode: number | null | undefined
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve((exitCode = code))))
  // Never leave the service behind, whatever ends the test process.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  void exited.then(() => process.removeListener('exit', killOnExit))

  // Generous: a start compiles TypeScript and, on the embedded database, boots Postgres in WebAssembly,
  // which takes minutes on a busy machine. Speed is measured in bench/, never here.
  const deadline = Date.now() + SERVICE_START_TIMEOUT_MS
  let baseUrl: string | null = null
  while (baseUrl === null) {
    if (exitCode !== undefined) throw new Error(`the service exited with ${exitCode} during start:\n${logs}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the service did not start within ${SERVICE_START_TIMEOUT_MS / 1000} s:\n${logs}`)
    }
    const address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs)?.[1]
    if (
      address &&
      (await fetch(`${address}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      baseUrl = address
    else await new Promise((r) => setTimeout(r, 100))
  }
  if (stdout !== '') throw new Error(`the service wrote to stdout (logs belong on stderr): ${stdout.slice(0, 200)}`)
  return {
    baseUrl,
    child,
    logs: () => logs,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (exitCode !== undefined) return exitCode
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      const code = await exited
      clearTimeout(timer)
      return code
    },
  }
}
