/**
 * The README's shell examples are executed, so the README cannot drift from what the service does.
 *
 * Conventions in README.md:
 * - A fenced block with the info string `sh` is a shell example. All of them run in README order as ONE bash
 *   script (`set -euo pipefail`), so a variable set in one block (LEASE_ID, …) is seen by the next. They run
 *   in the repository root with `API` pointing at a service this test starts the way `npm start` does
 *   (`node --import tsx src/cli.ts start`) on an ephemeral loopback port, with a fresh temporary DATA_DIR
 *   (embedded database) and no API keys. DATA_DIR is exported to the examples too, so `npm run cli -- …`
 *   commands reach the same database. The test waits for the service's first (empty) periodic optimiser
 *   run, so the next one is minutes away and the numbers the examples print are deterministic.
 * - `<!-- readme-test: skip -->` as the last non-blank line before an `sh` block: the block is shown, never
 *   run (`npm start`, which this test does itself, or commands that run for minutes).
 * - `<!-- readme-test: after-keys -->`: the block needs `npm run cli -- create-key` to work while the
 *   embedded service runs. It runs when AFTER_KEYS_ENABLED is true; such blocks come last.
 * - Shell examples use `sh` only: a `bash`, `shell`, `console` or `zsh` block fails this test, since it
 *   would silently escape it.
 * - The expected output of an `sh` block is the fenced block right after it (only blank lines between)
 *   with the info string `json` or `text`. Without one, only the exit status counts.
 *   - `json`: the output is read as a sequence of JSON values and must match the sequence shown, where
 *     the string "…" matches any value; a string containing "…" matches any string with "…" replaced
 *     by anything; an object key "…" allows keys that are not shown (without it, the keys must be exactly
 *     those shown); an array whose last element is "…" allows more elements after those shown; a
 *     number with a decimal point matches to the precision shown (0.67 matches 0.6666…); an integer
 *     matches exactly.
 *   - `text`: line by line, trailing blanks ignored; "…" inside a line matches any characters, and a
 *     line that is just "…" matches any number of lines.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONFIG_VARIABLES } from '../../src/config.ts'

/** Switch on once `create-key` works against the running embedded service (see the README's "API keys"). */
const AFTER_KEYS_ENABLED = true

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const README = join(ROOT, 'README.md')
const SERVICE_START_TIMEOUT_MS = 180_000
const EXAMPLES_TIMEOUT_MS = 120_000
const SHELL_INFOS = new Set(['bash', 'shell', 'console', 'zsh'])
/** Configuration the service reads from the environment: cleared, so the caller's settings cannot leak in. */
const SERVICE_ENV_KEYS = [...CONFIG_VARIABLES, 'NODE_TEST_CONTEXT']

// ---- README blocks ----

interface Block {
  /** 1-based lines of the opening and the closing fence. */
  line: number
  endLine: number
  info: string
  /** The readme-test marker before the block, if any. */
  marker: string | null
  body: string
}

interface Example {
  block: Block
  expected: Block | null
}

function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  let lastText: string | null = null
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})\s*([\w-]*)\s*$/.exec(lines[i]!)
    if (!open) {
      if (lines[i]!.trim() !== '') lastText = lines[i]!.trim()
      continue
    }
    const fence = open[1]!
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !lines[i]!.startsWith(fence); i++) body.push(lines[i]!)
    const marker = lastText === null ? null : (/^<!--\s*readme-test:\s*([\w-]+)\s*-->$/.exec(lastText)?.[1] ?? null)
    blocks.push({ line: start + 1, endLine: i + 1, info: open[2]!, marker, body: body.join('\n') })
    lastText = null
  }
  return blocks
}

/** The `sh` examples with their expected output blocks. */
function examples(markdown: string): Example[] {
  const lines = markdown.split('\n')
  const blocks = fencedBlocks(markdown)
  const out: Example[] = []
  blocks.forEach((block, k) => {
    if (block.info !== 'sh') return
    const next = blocks[k + 1]
    const adjacent =
      next !== undefined &&
      (next.info === 'json' || next.info === 'text') &&
      // Only blank lines between the closing fence and the next opening fence.
      lines.slice(block.endLine, next.line - 1).every((l) => l.trim() === '')
    out.push({ block, expected: adjacent ? next : null })
  })
  return out
}

// ---- Matching ----

/** A number as the README shows it: matched to the precision of its text. */
class ShownNumber {
  constructor(readonly text: string) {}
  get value(): number {
    return Number(this.text)
  }
}

type Value = null | boolean | string | number | ShownNumber | Value[] | { [key: string]: Value }

/** A sequence of JSON values; with `shownNumbers`, numbers keep their text (expected output). */
function parseJsonSequence(text: string, shownNumbers = false): Value[] {
  let pos = 0
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${pos}: ${JSON.stringify(text.slice(pos, pos + 30))}`)
  }
  const skip = () => {
    while (pos < text.length && /\s/.test(text[pos]!)) pos++
  }
  const token = (re: RegExp): string | null => {
    re.lastIndex = pos
    const m = re.exec(text)
    if (!m) return null
    pos += m[0].length
    return m[0]
  }
  const value = (): Value => {
    skip()
    const c = text[pos]
    if (c === '{') {
      pos++
      const object: Record<string, Value> = {}
      skip()
      if (text[pos] === '}') {
        pos++
        return object
      }
      for (;;) {
        skip()
        const key = token(/"(?:[^"\\]|\\.)*"/y) ?? fail('expected a key')
        skip()
        if (text[pos++] !== ':') fail('expected ":"')
        object[JSON.parse(key) as string] = value()
        skip()
        const sep = text[pos++]
        if (sep === '}') return object
        if (sep !== ',') fail('expected "," or "}"')
      }
    }
    if (c === '[') {
      pos++
      const array: Value[] = []
      skip()
      if (text[pos] === ']') {
        pos++
        return array
      }
      for (;;) {
        array.push(value())
        skip()
        const sep = text[pos++]
        if (sep === ']') return array
        if (sep !== ',') fail('expected "," or "]"')
      }
    }
    const string = token(/"(?:[^"\\]|\\.)*"/y)
    if (string !== null) return JSON.parse(string) as string
    const number = token(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y)
    if (number !== null) return shownNumbers ? new ShownNumber(number) : Number(number)
    const literal = token(/true|false|null/y)
    if (literal !== null) return JSON.parse(literal) as boolean | null
    return fail('expected a JSON value')
  }
  const values: Value[] = []
  for (skip(); pos < text.length; skip()) values.push(value())
  return values
}

const ANY = '…'

function wildcard(pattern: string): RegExp {
  const parts = pattern.split(ANY).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${parts.join('.*')}$`, 's')
}

const isObject = (v: unknown): v is Record<string, Value> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof ShownNumber)

/** Differences between an expected value (with placeholders) and an actual one, as "path: problem". */
function jsonMismatches(expected: Value, actual: Value, path = ''): string[] {
  const here = path === '' ? '/' : path
  if (expected === ANY) return []
  if (expected instanceof ShownNumber) {
    if (typeof actual !== 'number')
      return [`${here}: expected a number ${expected.text}, got ${JSON.stringify(actual)}`]
    const m = /^-?\d+(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(expected.text)!
    if (m[1] === undefined && m[2] === undefined) {
      return actual === expected.value ? [] : [`${here}: expected ${expected.text}, got ${actual}`]
    }
    const tolerance = 0.5 * 10 ** (Number(m[2] ?? 0) - (m[1]?.length ?? 0))
    return Math.abs(actual - expected.value) <= tolerance * (1 + 1e-9)
      ? []
      : [`${here}: expected ${expected.text} (±${tolerance}), got ${actual}`]
  }
  if (typeof expected === 'string') {
    if (typeof actual !== 'string')
      return [`${here}: expected a string ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
    const ok = expected.includes(ANY) ? wildcard(expected).test(actual) : expected === actual
    return ok ? [] : [`${here}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${here}: expected an array, got ${JSON.stringify(actual)}`]
    const open = expected.length > 0 && expected[expected.length - 1] === ANY
    const shown = open ? expected.slice(0, -1) : expected
    if (open ? actual.length < shown.length : actual.length !== shown.length) {
      return [`${here}: expected ${open ? 'at least ' : ''}${shown.length} elements, got ${actual.length}`]
    }
    return shown.flatMap((e, i) => jsonMismatches(e, actual[i]!, `${path}/${i}`))
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return [`${here}: expected an object, got ${JSON.stringify(actual)}`]
    const problems: string[] = []
    for (const [key, e] of Object.entries(expected)) {
      if (key === ANY) continue
      if (!(key in actual)) problems.push(`${path}/${key}: missing`)
      else problems.push(...jsonMismatches(e, actual[key]!, `${path}/${key}`))
    }
    if (!(ANY in expected)) {
      for (const key of Object.keys(actual))
        if (!(key in expected)) problems.push(`${path}/${key}: not shown in the README`)
    }
    return problems
  }
  return expected === actual ? [] : [`${here}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
}

/** Whether text output matches the shown lines ("…" within a line, or a line "…" for any number of lines). */
function textMatches(expected: string, actual: string): boolean {
  const lines = (s: string) => {
    const l = s.split('\n').map((x) => x.trimEnd())
    while (l.length > 0 && l[l.length - 1] === '') l.pop()
    while (l.length > 0 && l[0] === '') l.shift()
    return l
  }
  const want = lines(expected)
  const got = lines(actual)
  const memo = new Map<string, boolean>()
  const match = (i: number, j: number): boolean => {
    const key = `${i},${j}`
    const known = memo.get(key)
    if (known !== undefined) return known
    let ok: boolean
    if (i === want.length) ok = j === got.length
    else if (want[i] === ANY) ok = match(i + 1, j) || (j < got.length && match(i, j + 1))
    else ok = j < got.length && wildcard(want[i]!).test(got[j]!) && match(i + 1, j + 1)
    memo.set(key, ok)
    return ok
  }
  return match(0, 0)
}

function outputMismatches(expected: Block, actual: string): string[] {
  if (expected.info === 'text')
    return textMatches(expected.body, actual) ? [] : ['the output does not match the text shown']
  let values: Value[]
  try {
    values = parseJsonSequence(actual)
  } catch (err) {
    return [`the output is not JSON (${(err as Error).message})`]
  }
  const shown = parseJsonSequence(expected.body, true)
  if (shown.length !== values.length) return [`expected ${shown.length} JSON values, got ${values.length}`]
  return shown.flatMap((e, i) => jsonMismatches(e, values[i]!, shown.length > 1 ? `[${i}]` : ''))
}

// ---- Tests that need no service ----

test('the output matcher fails on what differs and passes placeholders', () => {
  const shown = (s: string) => parseJsonSequence(s, true)[0]!
  const actual = (s: string) => parseJsonSequence(s)[0]!
  assert.deepEqual(jsonMismatches(shown('{"a": 1, "b": "x"}'), actual('{"a": 1, "b": "x"}')), [])
  assert.equal(jsonMismatches(shown('{"a": 1}'), actual('{"a": 2}')).length, 1)
  assert.equal(jsonMismatches(shown('{"a": 1}'), actual('{"a": 1, "b": 2}')).length, 1, 'keys not shown need "…"')
  assert.deepEqual(jsonMismatches(shown('{"a": 1, "…": "…"}'), actual('{"a": 1, "b": 2}')), [])
  assert.deepEqual(
    jsonMismatches(shown('{"id": "…", "at": "2026-…Z"}'), actual('{"id": [1], "at": "2026-11-23T10:00:00Z"}')),
    [],
  )
  assert.equal(jsonMismatches(shown('{"at": "2026-…Z"}'), actual('{"at": "2027-01-01T00:00:00Z"}')).length, 1)
  assert.deepEqual(jsonMismatches(shown('{"x": 1.10}'), actual('{"x": 1.0986122886681098}')), [])
  assert.equal(jsonMismatches(shown('{"x": 1.09}'), actual('{"x": 1.0986122886681098}')).length, 1)
  assert.equal(jsonMismatches(shown('{"x": 1}'), actual('{"x": 1.0000001}')).length, 1, 'integers are exact')
  assert.deepEqual(jsonMismatches(shown('[1, "…"]'), actual('[1, 2, 3]')), [])
  assert.equal(jsonMismatches(shown('[1, 2]'), actual('[1, 2, 3]')).length, 1)
  assert.equal(jsonMismatches(shown('[]'), actual('{}')).length, 1)
  assert.ok(textMatches('a 1\n…\nz …', 'a 1\nb\nc\nz 26\n'))
  assert.ok(!textMatches('a 1\nz', 'a 1\nb\nz'))
  assert.ok(!textMatches('a 2', 'a 1'))
})

test('the README follows the conventions: sh examples only, expected outputs that parse, known markers', () => {
  const markdown = readFileSync(README, 'utf8')
  for (const block of fencedBlocks(markdown)) {
    assert.ok(
      !SHELL_INFOS.has(block.info),
      `README.md:${block.line}: use \`sh\` for shell examples, not \`${block.info}\``,
    )
    if (block.marker !== null) {
      assert.ok(
        ['skip', 'after-keys'].includes(block.marker),
        `README.md:${block.line}: unknown marker readme-test: ${block.marker}`,
      )
      assert.equal(block.info, 'sh', `README.md:${block.line}: readme-test markers apply to sh blocks`)
    }
  }
  const all = examples(markdown)
  const run = all.filter((e) => e.block.marker === null)
  assert.ok(run.length >= 10, `only ${run.length} runnable examples in README.md`)
  const firstAfterKeys = all.findIndex((e) => e.block.marker === 'after-keys')
  if (firstAfterKeys >= 0) {
    assert.ok(
      all.slice(firstAfterKeys).every((e) => e.block.marker !== null),
      'after-keys blocks come last: every runnable block after the first of them would need a key',
    )
  }
  for (const e of all) {
    if (e.expected?.info === 'json') {
      assert.doesNotThrow(
        () => parseJsonSequence(e.expected!.body, true),
        `README.md:${e.expected.line}: the expected JSON does not parse`,
      )
    }
  }
})

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    anchors.add(
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    )
  }
  return anchors
}

test('relative links in README.md and docs/ name files of the repository, and headings that exist', () => {
  const files = [
    README,
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f)),
  ]
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [target, anchor] = m[1]!.split('#') as [string, string | undefined]
      if (/^[a-z]+:/i.test(target)) continue
      const path = target === '' ? file : resolve(dirname(file), target)
      const where = `${relative(ROOT, file)}: link ${m[1]}`
      assert.ok(!relative(ROOT, path).startsWith('..'), `${where} leaves the repository`)
      assert.ok(existsSync(path), `${where} names no file`)
      if (anchor !== undefined && path.endsWith('.md')) {
        assert.ok(headingAnchors(readFileSync(path, 'utf8')).has(anchor), `${where} names no heading`)
      }
    }
  }
})

// ---- The examples against a running service ----

interface Service {
  process: ChildProcess
  url: string
  dataDir: string
  log: string[]
}

function serviceEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of SERVICE_ENV_KEYS) delete env[key]
  return { ...env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }
}

/** Starts the service as `npm start` does and resolves once it listens and its first optimiser run is done. */
function startService(dataDir: string): Promise<Service> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'start'], {
    cwd: ROOT,
    env: serviceEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const log: string[] = []
  let url = ''
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the service did not start within ${SERVICE_START_TIMEOUT_MS} ms:\n${log.join('\n')}`))
    }, SERVICE_START_TIMEOUT_MS)
    let pending = ''
    const onData = (chunk: Buffer) => {
      pending += chunk.toString('utf8')
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        log.push(line)
        const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
        if (listening) url = listening[1]!
        if (url !== '' && line.includes('"msg":"optimiser run"')) {
          clearTimeout(timer)
          resolvePromise({ process: child, url, dataDir, log })
        }
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the service exited (${code ?? signal}) before it was ready:\n${log.join('\n')}`))
    })
  })
}

async function stopService(s: Service): Promise<void> {
  const child = s.process
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  child.kill('SIGTERM')
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000).unref())
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL')
    await exited
  }
}

const BLOCK_MARK = '@@readme-example@@'

/** Runs the examples as one bash script; returns each one's stdout and the index of the last one that started. */
function runExamples(
  list: Example[],
  env: NodeJS.ProcessEnv,
  scriptPath: string,
): Promise<{ outputs: string[]; code: number | null; stderr: string }> {
  const script =
    ['set -euo pipefail', ...list.flatMap((e) => [`printf '\\n%s\\n' '${BLOCK_MARK}'`, e.block.body])].join('\n') + '\n'
  return writeFile(scriptPath, script).then(
    () =>
      new Promise((resolvePromise) => {
        const child = spawn('bash', ['--noprofile', '--norc', scriptPath], {
          cwd: ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
        const timer = setTimeout(() => child.kill('SIGKILL'), EXAMPLES_TIMEOUT_MS)
        child.on('close', (code) => {
          clearTimeout(timer)
          const outputs = stdout.split(`\n${BLOCK_MARK}\n`).slice(1)
          resolvePromise({ outputs, code, stderr })
        })
      }),
  )
}

test('every README example runs, in order, against a fresh service and prints what the README shows', async (ctx) => {
  for (const tool of ['curl', 'jq']) {
    assert.equal(spawnSync(tool, ['--version']).status, 0, `the README examples need ${tool} on the PATH`)
  }
  const workDir = await mkdtemp(join(tmpdir(), 'recrawl-readme-'))
  let service: Service | null = null
  ctx.after(async () => {
    if (service) await stopService(service)
    await rm(workDir, { recursive: true, force: true })
  })
  service = await startService(join(workDir, 'data'))
  const all = examples(readFileSync(README, 'utf8')).filter(
    (e) => e.block.marker === null || (e.block.marker === 'after-keys' && AFTER_KEYS_ENABLED),
  )
  // The examples see the service's DATA_DIR (for `npm run cli -- …`) and API; nothing else of its configuration.
  const env: NodeJS.ProcessEnv = { ...serviceEnv(service.dataDir), API: service.url }
  delete env.PORT
  delete env.HOST
  delete env.LOG_LEVEL
  const { outputs, code, stderr } = await runExamples(all, env, join(workDir, 'examples.sh'))

  const failures: string[] = []
  all.forEach((e, i) => {
    const output = outputs[i]
    const where = `README.md:${e.block.line} (${e.block.body.split('\n')[0]})`
    if (output === undefined) {
      failures.push(`${where}: never ran`)
      return
    }
    const ranToEnd = i < outputs.length - 1 || code === 0
    if (!ranToEnd) {
      failures.push(
        `${where}: failed with exit status ${code}\n  stdout: ${output}\n  stderr: ${stderr.trim().split('\n').slice(-10).join('\n  ')}`,
      )
      return
    }
    if (e.expected !== null) {
      const problems = outputMismatches(e.expected, output)
      if (problems.length > 0)
        failures.push(
          `${where}: output differs from README.md:${e.expected.line}\n  ${problems.join('\n  ')}\n  actual output:\n${output}`,
        )
    }
  })
  if (failures.length > 0) {
    assert.fail(
      `${failures.length} README example(s) failed:\n\n${failures.join('\n\n')}\n\nservice log (last lines):\n${service.log.slice(-10).join('\n')}`,
    )
  }
})
