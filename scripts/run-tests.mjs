// Runs the test files under test/ with Node's built-in test runner (TypeScript through tsx).
// Node 20's --test does not expand globs itself, so the files are listed here.
// Usage: npm test [-- <path filter substring>...]          every test file (what CI runs)
//        npm run test:unit [-- <path filter substring>...] test/unit without the simulation-heavy tests
//                                                          (test/helpers/slow.ts: SKIP_SLOW_TESTS=1)
// One file alone: node --import tsx --test test/unit/math/nhpp.test.ts
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

const args = process.argv.slice(2)
const unit = args.includes('--unit')
const filters = args.filter((a) => a !== '--unit')
const files = collect(unit ? join('test', 'unit') : 'test')
  .map((f) => relative('.', f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}
const env = unit ? { ...process.env, SKIP_SLOW_TESTS: '1' } : process.env
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env,
})
process.exit(result.status ?? 1)
