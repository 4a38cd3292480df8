import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

export interface ServiceProcess {
  child: ChildProcess
  /** Base URL once it listens (http://127.0.0.1:<port>). */
  url: string
  /** Every log line so far (pino JSON, one object per line; other lines as { msg }). */
  logs: { level?: number; msg?: string; [key: string]: unknown }[]
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  alive(): boolean
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves with the first log line matching `test`, or rejects after `timeoutMs` or when the process ends. */
  waitForLog(
    test: (line: { msg?: string; [key: string]: unknown }) => boolean,
    timeoutMs: number,
  ): Promise<{ msg?: string }>
}

/**
 * Starts `recrawl start` as a child process (the way production runs it) on a free port, and
 * resolves once it listens. `env` is added to a clean environment: DATABASE_URL or DATA_DIR, limits.
 * With `waitForListen: false` it resolves at once (for processes expected to wait or exit).
 */
export async function spawnService(
  env: Record<string, string>,
  options: { waitForListen?: boolean; listenTimeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'start'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const logs: ServiceProcess['logs'] = []
  const waiters = new Set<() => void>()
  let buffered = ''
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    let nl: number
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      if (line.trim() === '') continue
      try {
        logs.push(JSON.parse(line))
      } catch {
        logs.push({ msg: line })
      }
      for (const w of waiters) w()
    }
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  let exitedWith: { code: number | null; signal: NodeJS.Signals | null } | null = null
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedWith = { code, signal }
      for (const w of waiters) w()
      resolve(exitedWith)
    })
  })

  const waitForLog: ServiceProcess['waitForLog'] = (test, timeoutMs) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hit = logs.find(test)
        if (hit) return finish(() => resolve(hit))
        if (exitedWith) {
          return finish(() =>
            reject(
              new Error(
                `service exited (${JSON.stringify(exitedWith)}) before the expected log line; last lines:\n${tail(logs)}`,
              ),
            ),
          )
        }
      }
      const timer = setTimeout(
        () =>
          finish(() => reject(new Error(`no expected log line within ${timeoutMs} ms; last lines:\n${tail(logs)}`))),
        timeoutMs,
      )
      const finish = (f: () => void) => {
        clearTimeout(timer)
        waiters.delete(check)
        f()
      }
      waiters.add(check)
      check()
    })

  const service: ServiceProcess = {
    child,
    url: '',
    logs,
    exited,
    alive: () => exitedWith === null,
    async kill(signal) {
      if (exitedWith === null) child.kill(signal)
      return exited
    },
    waitForLog,
  }
  if (options.waitForListen === false) return service
  try {
    const line = await waitForLog(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at http://127.0.0.1:'),
      options.listenTimeoutMs ?? 180_000,
    )
    service.url = line.msg!.slice('Server listening at '.length)
  } catch (err) {
    await service.kill('SIGKILL')
    throw err
  }
  return service
}

function tail(logs: { msg?: string }[]): string {
  return logs
    .slice(-15)
    .map((l) => JSON.stringify(l).slice(0, 400))
    .join('\n')
}
