import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_DIR, runProcess } from './processes.ts'
import { startTestApp } from '../helpers/testApp.ts'
import { listenOnLoopback } from '../helpers/listen.ts'

// The client package as a user gets it: `npm pack` in packages/client (its prepack builds it), the tarball
// installed into an empty project, a program type-checked there with tsc against the shipped .d.ts files,
// compiled, and run with plain node against a live service. The install is offline: openapi-fetch and what it
// needs (and @types/node) are packed from the repository's node_modules, so the test needs no registry.

const CLIENT_DIR = join(REPO_DIR, 'packages/client')
const TSC = join(REPO_DIR, 'node_modules/typescript/bin/tsc')

/** One command of the test (npm, tsc, node) in `cwd`, killed after two minutes. */
const run = (command: string, args: string[], cwd: string) => runProcess(command, args, { cwd, timeoutMs: 120_000 })

async function succeed(command: string, args: string[], cwd: string): Promise<string> {
  const result = await run(command, args, cwd)
  assert.equal(result.code, 0, `${command} ${args.join(' ')}: ${result.stdout}${result.stderr}`)
  return result.stdout
}

/** A package of the repository's node_modules and, recursively, its dependencies (names). */
function withDependencies(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen
  seen.add(name)
  const manifest = JSON.parse(readFileSync(join(REPO_DIR, 'node_modules', name, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
  }
  for (const dependency of Object.keys(manifest.dependencies ?? {})) withDependencies(dependency, seen)
  return seen
}

const USER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023'],
    types: ['node'],
    strict: true,
    skipLibCheck: false,
    outDir: 'out',
  },
  files: ['program.ts'],
}

/** What a user writes: register a page, lease it, report a fetch with the Location as received, read it back. */
const PROGRAM = `import { createRecrawlClient, ok, ProblemError, type LeasedPage } from '@recrawl/client'

const [baseUrl, site] = process.argv.slice(2) as [string, string]
const api = createRecrawlClient({ baseUrl })
await ok(api.PUT('/v1/pages', { body: { pages: [{ url: site + '/old', importance: 2 }] } }))
const grant = await ok(api.POST('/v1/leases', { body: { worker: 'packaged', limit: 10 } }))
const page: LeasedPage = grant.pages[0]!
const receipt = await ok(
  api.POST('/v1/observations', {
    body: {
      observations: [
        { leaseId: grant.leaseId, url: page.url, crawledAt: new Date().toISOString(), httpStatus: 301, redirectTo: '/new' },
      ],
    },
  }),
)
const moved = await ok(api.GET('/v1/pages/{id}', { params: { path: { id: page.id } } }))
const missing = await ok(api.GET('/v1/pages/{id}', { params: { path: { id: '999999' } } })).catch((err: unknown) => err)
console.log(
  JSON.stringify({
    leased: grant.pages.length,
    accepted: receipt.accepted,
    status: moved.status,
    redirectTo: moved.redirectTo,
    missing: missing instanceof ProblemError ? [missing.status, missing.kind] : String(missing),
  }),
)
`

/** Wrong programs the shipped types must refuse. */
const WRONG_PROGRAM = `import { createRecrawlClient, ok } from '@recrawl/client'

const api = createRecrawlClient({ baseUrl: 'http://127.0.0.1:8080' })
const grant = await ok(api.POST('/v1/leases', { body: { worker: 'w', limit: 'five' } }))
const leaseId: number = grant.leaseId
await ok(api.GET('/v1/no-such-route'))
console.log(leaseId)
`

interface PackResult {
  filename: string
  files: { path: string }[]
}

const skip = process.env.DATABASE_URL
  ? 'the package does not depend on the database: it is checked in the embedded pass'
  : false

describe('the client package @recrawl/client', { skip }, () => {
  let root: string
  let project: string
  let packed: PackResult

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'recrawl-client-package-'))
    project = join(root, 'project')
    mkdirSync(project)
    const result = JSON.parse(
      await succeed('npm', ['pack', '--json', '--pack-destination', root], CLIENT_DIR),
    ) as PackResult[]
    packed = result[0]!
    const tarballs = [join(root, packed.filename)]
    // What the package needs, and Node's types, as a Node project has them (fetch, Request and Response among them).
    for (const name of new Set([...withDependencies('openapi-fetch'), ...withDependencies('@types/node')])) {
      const [dependency] = JSON.parse(
        await succeed(
          'npm',
          ['pack', '--json', '--pack-destination', root, join(REPO_DIR, 'node_modules', name)],
          root,
        ),
      ) as PackResult[]
      tarballs.push(join(root, dependency!.filename))
    }
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'client-user', private: true, type: 'module' }))
    await succeed('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], project)
  })
  after(() => rmSync(root, { recursive: true, force: true }))

  it('packs compiled JavaScript, .d.ts files and exports, and depends on openapi-fetch only', () => {
    const files = packed.files.map((f) => f.path).sort()
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/generated/schema.d.ts', 'package.json'])
      assert.ok(files.includes(file), `${file} is in the tarball: ${files.join(', ')}`)
    assert.deepEqual(
      files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
      [],
      'no TypeScript sources',
    )
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules/@recrawl/client/package.json'), 'utf8'),
    ) as Record<string, unknown>
    assert.deepEqual(Object.keys(manifest.dependencies as object), ['openapi-fetch'])
    assert.equal(manifest.devDependencies, undefined)
    assert.deepEqual(manifest.exports, {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    })
    assert.equal(manifest.type, 'module')
  })

  it('type-checks a program in an empty project and refuses wrong requests and response types', async () => {
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(USER_TSCONFIG))
    writeFileSync(join(project, 'program.ts'), PROGRAM)
    await succeed(process.execPath, [TSC, '-p', 'tsconfig.json'], project)

    writeFileSync(join(project, 'wrong.ts'), WRONG_PROGRAM)
    writeFileSync(
      join(project, 'tsconfig.wrong.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, files: ['wrong.ts'] }),
    )
    const wrong = await run(process.execPath, [TSC, '-p', 'tsconfig.wrong.json'], project)
    assert.notEqual(wrong.code, 0)
    const errors = wrong.stdout.split('\n').filter((l) => l.startsWith('wrong.ts('))
    // A body field of the wrong type, a response field read as the wrong type, a path the API does not have: one error on each of those lines.
    assert.deepEqual([...new Set(errors.map((l) => Number(/^wrong\.ts\((\d+),/.exec(l)![1])))], [4, 5, 6], wrong.stdout)
  })

  it('type-checks the example crawler against the installed package alone', async () => {
    // examples/crawler imports nothing of the repository but @recrawl/client: copied into a project that installed
    // the tarball, it compiles there.
    cpSync(join(REPO_DIR, 'examples/crawler'), join(project, 'crawler'), { recursive: true })
    writeFileSync(
      join(project, 'tsconfig.crawler.json'),
      JSON.stringify({
        extends: './tsconfig.json',
        compilerOptions: { noEmit: true, allowImportingTsExtensions: true },
        files: ['crawler/crawler.ts'],
      }),
    )
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(USER_TSCONFIG))
    await succeed(process.execPath, [TSC, '-p', 'tsconfig.crawler.json'], project)
  })

  it('runs the compiled program with node against a live service', async () => {
    // Compiled by the test above when it ran first; compiled here otherwise.
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(USER_TSCONFIG))
    writeFileSync(join(project, 'program.ts'), PROGRAM)
    await succeed(process.execPath, [TSC, '-p', 'tsconfig.json'], project)
    const t = await startTestApp()
    t.clock.setMs(Date.now())
    try {
      const baseUrl = await listenOnLoopback(t.app)
      const site = 'http://site.example'
      const output = await succeed(process.execPath, ['out/program.js', baseUrl, site], project)
      assert.deepEqual(JSON.parse(output), {
        leased: 1,
        accepted: 1,
        status: 'redirected',
        redirectTo: `${site}/new`,
        missing: [404, 'not-found'],
      })
    } finally {
      await t.close()
    }
  })
})
