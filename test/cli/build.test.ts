import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_DIR, runCli, startService, type Entry } from './processes.ts'

// The built image without Docker: the runtime stage of the Dockerfile assembled in a temporary
// directory (dist/ built there, the COPY lines copied, node_modules linked), then every command run
// from dist/cli.js. It does not depend on the database, so it runs in the embedded pass only.

const DOCKERFILE = readFileSync(join(REPO_DIR, 'Dockerfile'), 'utf8')
const DOCKERIGNORE = readFileSync(join(REPO_DIR, '.dockerignore'), 'utf8')

interface Copy {
  from: string | null
  source: string
  destination: string
}

/** COPY lines of one stage (`FROM … AS stage` up to the next FROM). */
function copies(stage: string): Copy[] {
  const lines = DOCKERFILE.split('\n')
  const start = lines.findIndex((l) => new RegExp(`^FROM \\S+ AS ${stage}$`, 'i').test(l.trim()))
  assert.ok(start >= 0, `the Dockerfile has a ${stage} stage`)
  const result: Copy[] = []
  for (const line of lines.slice(start + 1)) {
    if (/^FROM /i.test(line)) break
    const match = /^COPY\s+(?:--from=(\S+)\s+)?(.+)$/i.exec(line.trim())
    if (!match) continue
    const parts = match[2]!.split(/\s+/)
    const destination = parts.pop()!
    for (const source of parts) result.push({ from: match[1] ?? null, source, destination })
  }
  return result
}

/** Whether .dockerignore keeps `path` in the build context (last matching rule wins). */
function inContext(path: string): boolean {
  let kept = true
  for (const raw of DOCKERIGNORE.split('\n')) {
    const rule = raw.trim()
    if (rule === '' || rule.startsWith('#')) continue
    const negated = rule.startsWith('!')
    const pattern = (negated ? rule.slice(1) : rule).replace(/\/$/, '')
    if (matches(pattern, path.replace(/\/$/, ''))) kept = negated
  }
  return kept
}

/** Whether a .dockerignore pattern (`*` within one path segment) names `path` or a folder above it. */
function matches(pattern: string, path: string): boolean {
  const segment = (part: string) =>
    part
      .split('*')
      .map((text) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*')
  return new RegExp(`^${pattern.split('/').map(segment).join('/')}(/|$)`).test(path)
}

const skip = process.env.DATABASE_URL
  ? 'the build does not depend on the database: it runs in the embedded pass'
  : false

describe('the built image', { skip }, () => {
  let root: string
  let entry: Entry

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'recrawl-image-'))
    for (const copy of copies('runtime')) {
      if (copy.from === 'build') continue // dist/ and packages/client/dist/, built below
      if (copy.from === 'deps') {
        // The repository's node_modules, except that the workspace link to the client package points into
        // this image, as npm ci made it there.
        mkdirSync(join(root, 'node_modules/@recrawl'), { recursive: true })
        for (const name of readdirSync(join(REPO_DIR, 'node_modules'))) {
          if (name !== '@recrawl') symlinkSync(join(REPO_DIR, 'node_modules', name), join(root, 'node_modules', name))
        }
        symlinkSync(join(root, 'packages/client'), join(root, 'node_modules/@recrawl/client'), 'dir')
        continue
      }
      const destination = join(
        root,
        copy.destination.endsWith('/') || copy.destination === '.' || copy.destination === './'
          ? copy.source
          : copy.destination,
      )
      mkdirSync(join(destination, '..'), { recursive: true })
      cpSync(join(REPO_DIR, copy.source), destination, { recursive: true })
    }
    const tsc = (args: string[]) => {
      const run = spawnSync(process.execPath, [join(REPO_DIR, 'node_modules/typescript/bin/tsc'), ...args], {
        cwd: REPO_DIR,
        encoding: 'utf8',
      })
      assert.equal(run.status, 0, `tsc ${args.join(' ')}: ${run.stdout}${run.stderr}`)
    }
    // As the build stage does (npm run build): the client package first, then the service, which imports the
    // client package's built files (the simulator's --e2e driver uses it).
    tsc(['-p', 'packages/client/tsconfig.json', '--outDir', join(root, 'packages/client/dist')])
    const buildConfig = join(root, 'tsconfig.build.json')
    writeFileSync(
      buildConfig,
      JSON.stringify({
        extends: join(REPO_DIR, 'tsconfig.build.json'),
        compilerOptions: {
          outDir: join(root, 'dist'),
          typeRoots: [join(REPO_DIR, 'node_modules/@types')],
          paths: { '@recrawl/client': [join(root, 'packages/client/dist/index.d.ts')] },
        },
      }),
    )
    tsc(['-p', buildConfig])
    rmSync(buildConfig)
    entry = { args: ['dist/cli.js'], cwd: root }
  })
  after(() => rmSync(root, { recursive: true, force: true }))

  it('.dockerignore keeps every COPY source in the context and leaves out the rest', () => {
    for (const copy of [...copies('deps'), ...copies('build'), ...copies('runtime')]) {
      if (copy.from === null)
        assert.ok(inContext(copy.source), `${copy.source} is copied but .dockerignore leaves it out`)
    }
    for (const path of [
      'node_modules',
      'data',
      '.git',
      'dist',
      'test-artifacts',
      'test',
      'bench',
      '.env',
      'packages/client/dist',
      'packages/client/node_modules',
    ]) {
      assert.equal(inContext(path), false, `${path} must not be in the build context`)
    }
    assert.equal(inContext('packages/client/src/index.ts'), true)
  })

  it('serves the API and the dashboard from dist/, and every command works there while it runs', async () => {
    const dataDir = join(root, 'data')
    const env = { DATA_DIR: dataDir }
    const service = await startService(env, entry)
    try {
      assert.equal((await fetch(`${service.baseUrl}/readyz`)).status, 200)
      const dashboard = await fetch(`${service.baseUrl}/`)
      assert.equal(dashboard.status, 200)
      assert.match(await dashboard.text(), /<html/i)
      assert.equal((await fetch(`${service.baseUrl}/vendor/uplot/uPlot.iife.min.js`)).status, 200)

      const [version, help, migrate, openapi] = await Promise.all([
        runCli(['--version'], env, entry),
        runCli(['create-key', '--help'], env, entry),
        runCli(['migrate'], env, entry),
        runCli(['openapi', '--check'], env, entry),
      ])
      assert.equal(
        version.stdout.trim(),
        (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version,
      )
      assert.ok(help.stdout.startsWith('usage: recrawl create-key'))
      assert.equal(migrate.code, 0, migrate.stderr)
      assert.equal(migrate.stdout, 'database schema is up to date\n')
      assert.equal(openapi.code, 0, openapi.stderr)

      const create = async (role: string) => {
        const created = await runCli(['create-key', '--role', role, '--name', `image-${role}`], env, entry)
        assert.equal(created.code, 0, created.stderr)
        return JSON.parse(created.stdout) as { id: string; key: string }
      }
      const admin = await create('admin')
      const reader = await create('reader')
      const settings = (key: string) =>
        fetch(`${service.baseUrl}/v1/settings`, { headers: { authorization: `Bearer ${key}` } })
      assert.equal((await settings(admin.key)).status, 200)
      const listed = await runCli(['list-keys'], env, entry)
      assert.deepEqual(
        JSON.parse(listed.stdout).map((k: { id: string }) => k.id),
        [admin.id, reader.id],
      )
      const revoked = await runCli(['revoke-key', '--id', admin.id], env, entry)
      assert.equal(revoked.code, 0, revoked.stderr)
      assert.equal((await settings(admin.key)).status, 401)
      assert.equal((await settings(reader.key)).status, 200)
      assert.equal(await service.stop(), 0)
    } finally {
      await service.stop('SIGKILL')
    }
  })

  it('simulate runs from dist/ with parallel jobs, a synthetic and a replay workload', async () => {
    const result = await runCli(
      [
        'simulate',
        '--jobs',
        '2',
        '--workload',
        'poisson,replay-git',
        '--importance',
        'equal',
        '--policy',
        'uniform',
        '--pages',
        '20',
        '--days',
        '10',
        '--json',
      ],
      {},
      entry,
    )
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as {
      options: { replayDir: string }
      groups: { workload: string; rows: { policy: string }[] }[]
    }
    assert.deepEqual(report.groups.map((g) => g.workload).sort(), ['poisson', 'replay-git'])
    for (const group of report.groups)
      assert.deepEqual(group.rows.map((r) => r.policy).sort(), ['oracle-periodic', 'oracle-renewal', 'uniform'])
    assert.equal(report.options.replayDir, join(root, 'datasets/replay'), 'the replay histories are found beside dist/')
  })
})
