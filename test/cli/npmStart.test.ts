/**
 * `npm start`, the documented way to run the service, closes gracefully the way people stop it: Ctrl-C in a
 * terminal (SIGINT to the whole foreground process group) and SIGTERM to the top process (a supervisor, `kill`).
 * The request in flight is answered, the service logs that it closes, the embedded database's owner file is
 * removed, and nothing is left running or listening.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_DIR } from './processes.ts'

const START_TIMEOUT_MS = 180_000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

async function npmStartThenStop(stop: (npmPid: number) => void) {
  const dataDir = await mkdtemp(join(tmpdir(), 'recrawl-npm-start-'))
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }
  for (const name of ['DATABASE_URL', 'NODE_OPTIONS', 'npm_lifecycle_event', 'npm_lifecycle_script']) delete env[name]
  // A process group of its own, as a terminal gives a foreground job.
  const npm = spawn('npm', ['start'], { cwd: REPO_DIR, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const pgid = npm.pid!
  const killAll = () => {
    if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL')
  }
  process.once('exit', killAll)
  let logs = ''
  npm.stderr!.on('data', (d: Buffer) => (logs += d.toString()))
  npm.stdout!.on('data', () => {})
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.on('exit', (code, signal) => resolve({ code, signal })),
  )
  try {
    const deadline = Date.now() + START_TIMEOUT_MS
    let baseUrl: string | undefined
    while (baseUrl === undefined) {
      assert.ok(Date.now() < deadline, `the service did not start:\n${logs}`)
      baseUrl = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs)?.[1]
      if (baseUrl === undefined) await sleep(100)
    }
    assert.ok(existsSync(join(dataDir, 'recrawl-owner.json')), 'the owner file exists while the service runs')

    // A large batch is in flight when the signal comes.
    const observations = Array.from({ length: 5000 }, (_, i) => ({
      url: `https://stop${i % 50}.example/p${i}`,
      crawledAt: new Date(Date.now() - 60_000).toISOString(),
    }))
    const inFlight = fetch(`${baseUrl}/v1/observations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ observations }),
    })
    await sleep(50)
    stop(pgid)
    const answer = await inFlight
    assert.equal(answer.status, 200, 'the request in flight is answered')
    const receipt = (await answer.json()) as { accepted: number; rejected: unknown[] }
    assert.equal(receipt.accepted + receipt.rejected.length, 5000)

    const timer = setTimeout(killAll, 30_000)
    const { code, signal } = await exited
    clearTimeout(timer)
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, logs.slice(-2000))
    assert.match(logs, /"msg":"closing"/)
    for (let i = 0; i < 50 && groupAlive(pgid); i++) await sleep(100)
    assert.equal(groupAlive(pgid), false, 'no process of the group is left')
    assert.equal(existsSync(join(dataDir, 'recrawl-owner.json')), false, 'the owner file is removed')
    await assert.rejects(fetch(`${baseUrl}/healthz`), 'nothing listens on the port any more')
  } finally {
    killAll()
    process.removeListener('exit', killAll)
    await rm(dataDir, { recursive: true, force: true })
  }
}

describe('npm start closes gracefully', () => {
  it('on Ctrl-C: SIGINT to the whole process group', () => npmStartThenStop((pgid) => process.kill(-pgid, 'SIGINT')))
  it('on SIGTERM to the npm process alone', () => npmStartThenStop((pid) => process.kill(pid, 'SIGTERM')))
})
