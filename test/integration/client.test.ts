import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { readFile } from 'node:fs/promises'
import { generateClientSchema } from '../../src/client/generate.ts'
import { createRecrawlClient, ok, ProblemError } from '@recrawl/client'
import { createApiKey } from '../../src/domain/apiKeys.ts'
import { startTestApp } from '../helpers/testApp.ts'
import { listenOnLoopback } from '../helpers/listen.ts'

describe('the typed client', () => {
  it('packages/client/src/generated/schema.ts is what the code generates (regenerate with `npm run generate`)', async () => {
    const committed = await readFile(new URL('../../packages/client/src/generated/schema.ts', import.meta.url), 'utf8')
    const generated = await generateClientSchema()
    assert.equal(committed, generated)
    // The simulated-clock routes are in it (the end-to-end driver calls them), and every documented operation.
    const openapi = JSON.parse(await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as {
      paths: Record<string, unknown>
    }
    for (const path of [...Object.keys(openapi.paths), '/v1/clock'])
      assert.ok(generated.includes(`    "${path}": {`), `${path} has types`)
  })

  it('sends the API key, returns typed bodies and throws a ProblemError for problem+json answers', async () => {
    const t = await startTestApp()
    try {
      const baseUrl = await listenOnLoopback(t.app)
      const admin = await createApiKey({ pool: t.db.pool }, { name: 'ops', role: 'admin' })
      const crawler = createRecrawlClient({
        baseUrl,
        apiKey: (await createApiKey({ pool: t.db.pool }, { name: 'fleet', role: 'crawler' })).key,
      })
      const api = createRecrawlClient({ baseUrl: `${baseUrl}/`, apiKey: admin.key })

      const created = await ok(
        api.PUT('/v1/pages', { body: { pages: [{ url: 'https://a.example/x', importance: 2 }] } }),
      )
      assert.deepEqual(created, { created: 1, updated: 0 })
      const byUrl = await ok(api.GET('/v1/pages/by-url', { params: { query: { url: 'HTTPS://A.example/x' } } }))
      assert.equal(byUrl.url, 'https://a.example/x')
      assert.equal(byUrl.importance, 2)

      // Without a key: 401, with the problem's kind and the request named in the message.
      const anonymous = createRecrawlClient({ baseUrl })
      const unauthenticated = await ok(anonymous.GET('/v1/settings')).then(
        () => assert.fail('expected 401'),
        (err: unknown) => err,
      )
      assert.ok(unauthenticated instanceof ProblemError)
      assert.equal(unauthenticated.status, 401)
      assert.equal(unauthenticated.kind, 'unauthenticated')
      assert.match(unauthenticated.message, /^GET \/v1\/settings → 401 /)

      // A crawler key may not read settings: 403.
      await assert.rejects(
        ok(crawler.GET('/v1/settings')),
        (err: unknown) => err instanceof ProblemError && err.status === 403 && err.kind === 'forbidden',
      )

      // Bad input: 400 with every bad field, and nothing changed.
      const invalid = await ok(api.PUT('/v1/pages', { body: { pages: [{ url: 'not a url' }] } })).catch(
        (err: unknown) => err,
      )
      assert.ok(invalid instanceof ProblemError)
      assert.equal(invalid.status, 400)
      assert.equal(invalid.kind, 'invalid-input')
      assert.ok(
        invalid.errors.some((e) => e.path.startsWith('/body/pages/0/url')),
        JSON.stringify(invalid.errors),
      )
      assert.equal((await ok(api.GET('/v1/pages'))).pages.length, 1)

      // 404 and a 204 without a body.
      await assert.rejects(
        ok(api.GET('/v1/pages/{id}', { params: { path: { id: '999' } } })),
        (err: unknown) => err instanceof ProblemError && err.kind === 'not-found',
      )
      assert.equal(await ok(api.DELETE('/v1/pages/{id}', { params: { path: { id: byUrl.id } } })), undefined)
      assert.equal((await ok(api.GET('/v1/pages'))).pages.length, 0)
    } finally {
      await t.close()
    }
  })

  it('reads Retry-After of a 429 and gives up on a server that does not answer in time', async () => {
    let requests = 0
    const server = createServer((req, res) => {
      requests++
      if (req.url === '/v1/settings') {
        res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '17' })
        res.end(
          JSON.stringify({
            type: 'https://recrawl.dev/problems/rate-limited',
            title: 'Too Many Requests',
            status: 429,
            detail: 'slow down',
          }),
        )
        return
      }
      // Never answers: the client's timeout ends the request.
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const api = createRecrawlClient({ baseUrl, timeoutMs: 200 })
      const limited = await ok(api.GET('/v1/settings')).catch((err: unknown) => err)
      assert.ok(limited instanceof ProblemError)
      assert.equal(limited.kind, 'rate-limited')
      assert.equal(limited.retryAfterSeconds, 17)
      assert.match(limited.message, /slow down/)
      // Garbage collections while the request waits must not lose its deadline.
      setFlagsFromString('--expose-gc')
      const collect = runInNewContext('gc') as () => void
      const collecting = setInterval(collect, 20)
      const started = Date.now()
      try {
        await assert.rejects(
          ok(api.GET('/v1/stats')),
          (err: unknown) => err instanceof Error && err.name === 'TimeoutError',
        )
      } finally {
        clearInterval(collecting)
      }
      assert.ok(Date.now() - started < 5_000)
      assert.equal(requests, 2)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
