import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import type { LightMyRequestResponse } from 'fastify'
import { generateOpenApiJson } from '../../src/http/openapi.ts'
import { problemSchema } from '../../src/http/schemas.ts'
import { createApiKey } from '../../src/domain/apiKeys.ts'
import { startTestApp } from '../helpers/testApp.ts'

interface Operation {
  operationId?: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> }
  responses: Record<
    string,
    { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref?: string } }> }
  >
}

interface Document {
  info: { version: string }
  security?: unknown
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }
}

const PROBLEM_REF = '#/components/schemas/Problem'
/** The problem of /readyz's 503: a Problem with the pending migrations. */
const NOT_READY_REF = '#/components/schemas/NotReady'

/** The generated document, with the shared error responses and parameters (components/responses, /parameters) resolved in place. */
async function generated(options: { simulatedClock?: boolean } = {}): Promise<Document> {
  const doc = JSON.parse(await generateOpenApiJson(options)) as Document & {
    components: { responses?: Record<string, Operation['responses'][string]>; parameters?: Record<string, object> }
  }
  for (const methods of Object.values(doc.paths))
    for (const op of Object.values(methods))
      for (const [status, response] of Object.entries(op.responses)) {
        const ref = (response as { $ref?: string }).$ref
        if (ref === undefined) continue
        const shared = doc.components.responses?.[ref.replace('#/components/responses/', '')]
        assert.ok(shared, `${ref} resolves`)
        op.responses[status] = shared
      }
  for (const methods of Object.values(doc.paths))
    for (const op of Object.values(methods) as { parameters?: ({ $ref?: string } | object)[] }[])
      op.parameters = op.parameters?.map((p) => {
        const ref = (p as { $ref?: string }).$ref
        if (ref === undefined) return p
        const shared = doc.components.parameters?.[ref.replace('#/components/parameters/', '')]
        assert.ok(shared, `${ref} resolves`)
        return shared
      })
  return doc
}

function operations(doc: Document): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method, path, op })),
  )
}

/** The documented operation a request hits: its method and path template (`{id}` matches one segment). */
function operationFor(doc: Document, method: string, url: string): Operation {
  const path = url.split('?')[0]!
  for (const entry of operations(doc)) {
    const pattern = new RegExp(`^${entry.path.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    if (entry.method === method.toLowerCase() && pattern.test(path)) return entry.op
  }
  throw new Error(`no documented operation for ${method} ${path}`)
}

/** Every `$ref` in a value. */
function refs(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, into))
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') into.push(child)
      else refs(child, into)
    }
  }
  return into
}

/** The response is problem+json, its body a Problem with the response's status, and the operation declares that status so. */
function assertDeclaredProblem(
  doc: Document,
  method: string,
  url: string,
  res: LightMyRequestResponse,
  status: number,
): void {
  const where = `${method} ${url}`
  assert.equal(res.statusCode, status, `${where}: ${res.body}`)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, where)
  const body = problemSchema.parse(res.json())
  assert.equal(body.status, status, where)
  const declared = operationFor(doc, method, url).responses[String(status)]
  assert.ok(declared, `${where}: ${status} is not declared`)
  assert.equal(
    declared.content?.['application/problem+json']?.schema.$ref,
    PROBLEM_REF,
    `${where}: ${status} is not declared as problem+json`,
  )
}

/** The named shapes exist, no request-side copy kept the type provider's `Input` name, and every component is used and every reference resolves. */
function assertComponents(doc: Document): void {
  const names = Object.keys(doc.components.schemas)
  for (const name of [
    'Page',
    'Lease',
    'Observation',
    'ObservationReport',
    'ObservationReceipt',
    'Estimates',
    'LeaseGrant',
    'LeaseRequest',
    'Settings',
    'SettingsPatch',
    'EstimatorName',
    'Problem',
    'Host',
    'HostLimits',
    'Stats',
    'OptimizerRun',
  ]) {
    assert.ok(names.includes(name), `missing component ${name}`)
  }
  assert.deepEqual(
    names.filter((name) => name.endsWith('Input')),
    [],
    'a request-side copy of a shape kept its own name',
  )
  const all = refs(doc)
  for (const ref of all) assert.ok(names.includes(ref.replace('#/components/schemas/', '')), `unresolved ${ref}`)
  for (const name of names) assert.ok(all.includes(`#/components/schemas/${name}`), `unused component ${name}`)
}

describe('openapi/openapi.json', () => {
  it('is what the code generates (regenerate with `npm run generate`)', async () => {
    const committed = await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')
    assert.equal(committed, await generateOpenApiJson())
  })

  it('gives every operation its stable operationId', async () => {
    const ids = Object.fromEntries(
      operations(await generated()).map(({ method, path, op }) => [`${method.toUpperCase()} ${path}`, op.operationId]),
    )
    assert.deepEqual(ids, {
      'GET /healthz': 'healthz',
      'GET /readyz': 'readyz',
      'GET /metrics': 'getMetrics',
      'GET /v1/stats': 'getStats',
      'PUT /v1/pages': 'putPages',
      'GET /v1/pages': 'listPages',
      'GET /v1/pages/by-url': 'getPageByUrl',
      'GET /v1/pages/{id}': 'getPage',
      'DELETE /v1/pages/{id}': 'deletePage',
      'GET /v1/pages/{id}/observations': 'listPageObservations',
      'GET /v1/pages/{id}/estimates': 'getPageEstimates',
      'POST /v1/observations': 'postObservations',
      'GET /v1/settings': 'getSettings',
      'PATCH /v1/settings': 'patchSettings',
      'POST /v1/leases': 'takeLease',
      'PATCH /v1/leases/{leaseId}': 'extendLease',
      'POST /v1/leases/{leaseId}/release': 'releaseLeasePages',
      'DELETE /v1/leases/{leaseId}': 'releaseLease',
      'GET /v1/schedule': 'getSchedule',
      'POST /v1/optimize': 'runOptimizer',
      'GET /v1/hosts': 'listHosts',
      'GET /v1/host-overview': 'listHostOverview',
      'GET /v1/lease-overview': 'leaseOverview',
      'POST /v1/pages/bulk': 'bulkPages',
      'PUT /v1/hosts/{host}': 'putHost',
      'DELETE /v1/hosts/{host}': 'deleteHost',
      'POST /v1/signals': 'postSignals',
      'POST /v1/sitemaps': 'postSitemap',
      'GET /v1/signal-sources': 'listSignalSources',
      'GET /v1/signal-sources/{source}/hosts': 'listSignalSourceHosts',
      'PUT /v1/signal-sources/{source}': 'putSignalSource',
      'POST /indexnow': 'postIndexNow',
      'GET /indexnow': 'getIndexNow',
      'GET /v1/hosts/{host}/indexnow-keys': 'listIndexNowKeys',
      'PUT /v1/hosts/{host}/indexnow-keys/{key}': 'putIndexNowKey',
      'DELETE /v1/hosts/{host}/indexnow-keys/{key}': 'deleteIndexNowKey',
    })
  })

  it('describes every response, declares every error as problem+json and names every JSON body as a component', async () => {
    const doc = await generated()
    for (const { method, path, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const where = `${method} ${path} ${status}`
        assert.ok(response.description && response.description !== 'Default Response', `${where}: no description`)
        const content = response.content ?? {}
        if (/^[45]/.test(status)) {
          assert.equal(
            content['application/problem+json']?.schema.$ref,
            path === '/readyz' && status === '503' ? NOT_READY_REF : PROBLEM_REF,
            `${where}: not problem+json`,
          )
        }
        assert.ok(Object.keys(content).length <= 1, `${where}: one media type per status`)
        if (content['application/json'])
          assert.match(String(content['application/json'].schema.$ref), /^#\/components\/schemas\/\w+$/, where)
      }
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        assert.match(String(media.schema.$ref), /^#\/components\/schemas\/\w+$/, `${method} ${path} ${type} body`)
      }
    }
  })

  it('names every object schema, leaves responses open to added fields and keeps request defaults optional', async () => {
    const doc = (await generated()) as unknown as {
      info: { contact?: { url?: string }; license?: { name?: string } }
      paths: unknown
      components: { schemas: Record<string, unknown> }
    }
    const inline: string[] = []
    const walk = (value: unknown, path: string, top: boolean): void => {
      if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}/${i}`, false))
      else if (value !== null && typeof value === 'object') {
        const o = value as Record<string, unknown>
        if (!top && o.type === 'object' && o.properties) inline.push(path)
        for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`, false)
      }
    }
    for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, name, true)
    walk(doc.paths, 'paths', false)
    assert.deepEqual(inline, [])
    const closed = (name: string) =>
      JSON.stringify(doc.components.schemas[name]).includes('"additionalProperties":false')
    for (const name of ['LeaseGrant', 'Page', 'Stats', 'ObservationReceipt', 'Estimates'])
      assert.ok(!closed(name), name)
    for (const name of ['LeaseRequest', 'SettingsPatch', 'PageRegistration']) assert.ok(closed(name), name)
    const lease = doc.components.schemas.LeaseRequest as { properties: Record<string, Record<string, unknown>> }
    for (const field of ['limit', 'leaseSeconds']) {
      assert.ok(!('default' in lease.properties[field]!), field)
      assert.match(String(lease.properties[field]!.description), /Default: \d+\./, field)
    }
    assert.match(String(doc.info.contact?.url), /^https:\/\//)
    assert.ok(doc.info.license?.name)
    assert.ok(!/[^/\w]docs\/\w+\.md/.test(JSON.stringify(doc)), 'documentation links are absolute')
    // The errors every keyed route shares are declared once and referenced.
    const raw = await generateOpenApiJson()
    for (const name of ['Unauthenticated', 'Forbidden', 'RateLimited', 'InternalError', 'Unavailable'])
      assert.ok(raw.split(`"#/components/responses/${name}"`).length - 1 >= 10, name)
    for (const name of ['IdPath', 'LeaseIdPath', 'LimitQuery'])
      assert.ok(raw.split(`"#/components/parameters/${name}"`).length - 1 >= 2, name)
  })

  it('names the shared shapes once, and every reference resolves (with the simulated clock routes too)', async () => {
    const simulated = await generated({ simulatedClock: true })
    assert.equal(simulated.paths['/v1/clock']?.get?.operationId, 'getClock')
    assert.equal(simulated.paths['/v1/clock']?.put?.operationId, 'setClock')
    for (const doc of [await generated(), simulated]) assertComponents(doc)
  })

  it('declares the key only where one is needed, takes its version from package.json and PATCH as a merge patch', async () => {
    const doc = await generated()
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    assert.equal(doc.info.version, pkg.version)
    assert.equal(doc.security, undefined, 'no global security requirement')
    for (const { path, op } of operations(doc)) {
      const open = ['/healthz', '/readyz', '/metrics', '/indexnow'].includes(path)
      assert.deepEqual(op.security, open ? [] : [{ bearer: [] }], path)
      assert.equal('401' in op.responses, !open, `${path}: 401 declared exactly where a key is needed`)
    }
    for (const hidden of ['/', '/docs', '/openapi.json']) assert.equal(doc.paths[hidden], undefined, hidden)
    assert.deepEqual(Object.keys(doc.paths['/v1/settings']!.patch!.requestBody!.content), [
      'application/merge-patch+json',
      'application/json',
    ])
  })

  it('agrees with the server: keyed operations answer 401 problem+json without a key, open ones and the docs need none', async () => {
    const doc = await generated()
    const t = await startTestApp({ loopbackOnly: false })
    try {
      await createApiKey(t.db, { name: 'ops', role: 'admin' })
      const samples: Record<string, string> = {
        id: '1',
        leaseId: '00000000-0000-4000-8000-000000000000',
        host: 'example.com',
        key: 'a1b2c3d4e5f6a7b8',
      }
      for (const { method, path, op } of operations(doc)) {
        const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => samples[name]!)
        const res = await t.app.inject({ method: method.toUpperCase() as 'GET', url })
        if (op.security?.length) assertDeclaredProblem(doc, method, url, res, 401)
        // IndexNow takes no API key; without its fields the request is malformed.
        else if (path === '/indexnow') assertDeclaredProblem(doc, method, url, res, 400)
        else assert.equal(res.statusCode, 200, `${method} ${url} is open`)
      }
      for (const url of ['/openapi.json', '/docs/', '/'])
        assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200, url)
      const served = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
      assert.deepEqual(served, JSON.parse(await generateOpenApiJson()))
    } finally {
      await t.close()
    }
  })

  it('agrees with the server: every error a route answers is declared for it as problem+json', async () => {
    const doc = await generated()
    const t = await startTestApp({ loopbackOnly: false, maxBatchItems: 2 })
    try {
      const admin = await createApiKey(t.db, { name: 'ops', role: 'admin' })
      const reader = await createApiKey(t.db, { name: 'dash', role: 'reader' })
      const call = (
        method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
        url: string,
        payload?: unknown,
        key = admin.key,
        type = 'application/json',
      ) =>
        t.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': type }) },
          ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
        })

      // A budget below the page's own lower bound makes the optimisation infeasible; the patch goes as a merge patch.
      const patched = await call(
        'PATCH',
        '/v1/settings',
        { budgetCrawlsPerDay: 1 },
        admin.key,
        'application/merge-patch+json',
      )
      assert.equal(patched.statusCode, 200, patched.body)
      assert.equal(patched.json().budgetCrawlsPerDay, 1)
      assert.equal(
        (await call('PUT', '/v1/pages', { pages: [{ url: 'https://a.example/', minCrawlsPerDay: 5 }] })).statusCode,
        200,
      )

      const unknownLease = '00000000-0000-4000-8000-000000000000'
      const cases: [
        method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
        url: string,
        payload: unknown,
        status: number,
        key?: string,
      ][] = [
        ['PUT', '/v1/pages', { pages: [{ url: 'not a url' }] }, 400],
        ['PUT', '/v1/pages', { pages: [1, 2, 3].map((i) => ({ url: `https://b${i}.example/` })) }, 413],
        ['PUT', '/v1/pages', { pages: [] }, 403, reader.key],
        ['GET', '/v1/pages?cursor=x', undefined, 400],
        ['GET', '/v1/pages/by-url?url=https://nowhere.example/', undefined, 404],
        ['GET', '/v1/pages/999', undefined, 404],
        ['DELETE', '/v1/pages/999', undefined, 404],
        ['GET', '/v1/pages/999/observations', undefined, 404],
        ['GET', '/v1/pages/999/estimates', undefined, 404],
        ['POST', '/v1/observations', { observations: [{}] }, 400],
        ['POST', '/v1/observations', { observations: [{}, {}, {}] }, 413],
        ['PATCH', '/v1/settings', { noSuchSetting: 1 }, 400],
        ['POST', '/v1/leases', {}, 400],
        ['DELETE', '/v1/leases/not-a-uuid', undefined, 400],
        ['DELETE', `/v1/leases/${unknownLease}`, undefined, 404],
        ['GET', '/v1/schedule?until=tomorrow', undefined, 400],
        ['POST', '/v1/optimize', undefined, 422],
        ['PUT', '/v1/hosts/exa%20mple', { maxCrawlsPerDay: 1 }, 400],
        ['DELETE', '/v1/hosts/example.com', undefined, 404],
        ['GET', '/v1/stats?hours=0', undefined, 400],
        ['PUT', '/v1/hosts/example.com/indexnow-keys/short', undefined, 400],
        ['DELETE', '/v1/hosts/example.com/indexnow-keys/a1b2c3d4e5f6a7b8', undefined, 404],
        ['POST', '/indexnow', { host: 'example.com', key: 'a1b2c3d4e5f6a7b8' }, 400],
        ['POST', '/indexnow', { host: 'example.com', key: 'a1b2c3d4e5f6a7b8', urlList: ['https://example.com/'] }, 403],
        ['POST', '/indexnow', { host: 'example.com', key: 'bad', urlList: ['https://example.com/'] }, 422],
        [
          'POST',
          '/indexnow',
          { host: 'example.com', key: 'a1b2c3d4e5f6a7b8', urlList: Array<string>(10_001).fill('https://example.com/') },
          413,
        ],
        ['GET', '/indexnow?url=nowhere&key=a1b2c3d4e5f6a7b8', undefined, 400],
        ['GET', '/indexnow?url=https%3A%2F%2Fexample.com%2F&key=a1b2c3d4e5f6a7b8', undefined, 403],
      ]
      for (const [method, url, payload, status, key] of cases) {
        assertDeclaredProblem(doc, method, url, await call(method, url, payload, key), status)
      }
    } finally {
      await t.close()
    }
  })

  it('agrees with the server on the rate limit: 429 problem+json with Retry-After, as declared', async () => {
    const doc = await generated()
    const t = await startTestApp({ rateLimitPerMinute: 1 })
    try {
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/settings' })).statusCode, 200)
      const limited = await t.app.inject({ method: 'GET', url: '/v1/settings' })
      assertDeclaredProblem(doc, 'GET', '/v1/settings', limited, 429)
      assert.match(String(limited.headers['retry-after']), /^\d+$/)
      assert.ok(operationFor(doc, 'GET', '/v1/settings').responses['429']!.headers?.['Retry-After'])
    } finally {
      await t.close()
    }
  })
})
