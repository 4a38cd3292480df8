import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_DIR, runCli, type CliResult } from './processes.ts'

const COMMANDS = ['start', 'migrate', 'create-key', 'list-keys', 'revoke-key', 'openapi', 'simulate']
const VERSION = (JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { version: string }).version

/** A DATA_DIR that does not exist: a command that touched the database would create it. */
async function withUntouchedDataDir(work: (env: Record<string, string>) => Promise<void>): Promise<void> {
  const parent = mkdtempSync(join(tmpdir(), 'recrawl-usage-'))
  const dataDir = join(parent, 'data')
  try {
    await work({ DATA_DIR: dataDir })
    assert.equal(existsSync(dataDir), false, 'no database was opened')
  } finally {
    rmSync(parent, { recursive: true, force: true })
  }
}

function assertUsageError(result: CliResult, problem: RegExp, usageOf: string): void {
  assert.equal(result.code, 2, result.stderr)
  assert.equal(result.stdout, '')
  assert.match(result.stderr.split('\n')[0]!, problem)
  assert.ok(result.stderr.includes(`usage: recrawl ${usageOf}`), result.stderr)
}

function assertOneLineError(result: CliResult, message: RegExp): void {
  assert.equal(result.code, 1, result.stderr)
  assert.equal(result.stdout, '')
  const lines = result.stderr.trim().split('\n')
  assert.equal(lines.length, 1, `one line, no stack: ${result.stderr}`)
  assert.match(lines[0]!, message)
}

describe('CLI conventions', () => {
  for (const command of COMMANDS) {
    it(`${command}: --help and -h print its usage; a mistyped option prints usage, exits 2 and touches nothing`, async () => {
      await withUntouchedDataDir(async (env) => {
        const [help, h, typo] = await Promise.all([
          runCli([command, '--help'], env),
          runCli([command, '-h'], env),
          runCli([command, '--hepl'], env),
        ])
        for (const result of [help, h]) {
          assert.equal(result.code, 0, result.stderr)
          assert.equal(result.stderr, '')
          assert.ok(result.stdout.startsWith(`usage: recrawl ${command}`), result.stdout)
        }
        assert.equal(help.stdout, h.stdout)
        assertUsageError(typo, new RegExp(`^recrawl: ${command}: unknown option --hepl$`), command)
      })
    })
  }

  it('the top level: help, version, and a mistyped command or option exits 2 without touching anything', async () => {
    await withUntouchedDataDir(async (env) => {
      const [help, h, helpTopic, version, none, typo, option] = await Promise.all([
        runCli(['--help'], env),
        runCli(['-h'], env),
        runCli(['help', 'revoke-key'], env),
        runCli(['--version'], env),
        runCli([], env),
        runCli(['crate-key', '--role', 'admin'], env),
        runCli(['--verbose'], env),
      ])
      assert.equal(help.code, 0)
      for (const command of COMMANDS) assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'))
      assert.equal(h.stdout, help.stdout)
      assert.ok(helpTopic.stdout.startsWith('usage: recrawl revoke-key'))
      assert.equal(version.code, 0)
      assert.equal(version.stdout, `${VERSION}\n`)
      assert.equal(none.code, 2)
      assert.ok(none.stderr.startsWith('usage: recrawl <command>'))
      assertUsageError(typo, /^recrawl: unknown command 'crate-key'$/, '<command>')
      assertUsageError(option, /^recrawl: unknown option --verbose$/, '<command>')
    })
  })

  it('wrong values are usage errors found before anything is opened', async () => {
    await withUntouchedDataDir(async (env) => {
      // An unreachable Postgres as well: had anything been opened, the exit code would be 1.
      const unreachable = { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }
      const [role, missingName, id, stray, simulate] = await Promise.all([
        runCli(['create-key', '--role', 'boss', '--name', 'x'], unreachable),
        runCli(['create-key', '--role', 'admin'], env),
        runCli(['revoke-key', '--id', 'nope'], unreachable),
        runCli(['list-keys', 'all'], env),
        runCli(['simulate', '--workload', 'poison'], env),
      ])
      assertUsageError(role, /^recrawl: create-key: unknown role 'boss': use crawler, reader or admin$/, 'create-key')
      assertUsageError(missingName, /^recrawl: create-key: missing --name/, 'create-key')
      assertUsageError(id, /^recrawl: revoke-key: --id must be a key id/, 'revoke-key')
      assertUsageError(stray, /^recrawl: list-keys: unexpected argument all$/, 'list-keys')
      assertUsageError(simulate, /^recrawl: simulate: unknown workload poison/, 'simulate')
    })
  })

  it('failures are one line without a stack: bad configuration, an unreachable database', async () => {
    await withUntouchedDataDir(async (env) => {
      const [config, unreachable] = await Promise.all([
        runCli(['list-keys'], { ...env, PORT: 'eighty', LOG_LEVEL: 'loud' }),
        runCli(['list-keys'], { ...env, DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/none' }),
      ])
      assertOneLineError(config, /^recrawl list-keys: invalid configuration: PORT: .+; LOG_LEVEL: /)
      assertOneLineError(
        unreachable,
        /^recrawl list-keys: cannot open the database at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none: .*ECONNREFUSED/,
      )
      assert.doesNotMatch(unreachable.stderr, /secret/)
    })
  })
})
