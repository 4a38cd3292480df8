/**
 * README "Configuration" against src/config.ts: the table names every variable the service reads, and
 * nothing else, with the default the parser applies.
 */
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { CONFIG_VARIABLES, loadConfig, type Config } from '../../src/config.ts'

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

/** The rows of the table under "## Configuration": variable → default as written (backticks dropped). */
function documentedDefaults(): Map<string, string> {
  const section = README.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? ''
  const rows = new Map<string, string>()
  for (const line of section.split('\n')) {
    const cells = /^\| `([A-Z0-9_]+)` \| ([^|]+) \|/.exec(line)
    if (cells) rows.set(cells[1]!, cells[2]!.trim().replaceAll('`', ''))
  }
  return rows
}

/** DATABASE_POOL_SIZE → databasePoolSize: the Config field a variable fills. */
const fieldOf = (variable: string): keyof Config =>
  variable.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as keyof Config

it('README documents exactly the variables src/config.ts reads', () => {
  assert.deepEqual([...documentedDefaults().keys()].sort(), [...CONFIG_VARIABLES].sort())
})

it('each documented default is the value the parser applies when the variable is unset', () => {
  const defaults = loadConfig({})
  for (const [variable, documented] of documentedDefaults()) {
    const field = fieldOf(variable)
    assert.ok(field in defaults, `${variable} fills no Config field named ${field}`)
    const actual = defaults[field]
    assert.equal(actual === undefined ? 'unset' : String(actual), documented, variable)
  }
})
