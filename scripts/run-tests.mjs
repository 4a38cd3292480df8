// Runs every test file under test/ with Node's built-in test runner (TypeScript through tsx).
// Node 20's --test does not expand globs itself, so the files are listed here.
// Usage: npm test [-- <path filter substring>...]
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { spawnSync } from 'node:child_process'

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return collect(path)
    return name.endsWith('.test.ts') ? [path] : []
  })
}

const filters = process.argv.slice(2)
const files = collect('test')
  .map((f) => relative('.', f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
