import { createRequire } from 'node:module'
import { isDeepStrictEqual } from 'node:util'
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { isRateLimited } from './rateLimited.ts'

/**
 * How the OpenAPI document is made from the routes (@fastify/swagger with the zod type provider):
 * shapes with a `.meta({ id })` become components referenced by `$ref`, every keyed route declares
 * the bearer requirement (and only those), and the version is package.json's.
 */

const SCHEMA_REF = '#/components/schemas/'
/** fastify-type-provider-zod names the request-side copy of component X `XInput`. */
const INPUT_SUFFIX = 'Input'

const BEARER_SECURITY = [{ bearer: [] as string[] }]

interface PackageJson {
  version: string
  license: string
  homepage: string
  repository: { url: string }
}

/**
 * package.json: its version is the document's info.version, its homepage the contact, its licence the
 * licence, and its repository the base of every documentation link. Read at run time (dist/ sits
 * beside package.json too).
 */
function packageJson(): PackageJson {
  return createRequire(import.meta.url)('../../package.json') as PackageJson
}

/** Where the repository's files are read on the web: `git+https://host/x.git` → `https://host/x/blob/main/`. */
function repositoryFilesUrl(pkg: PackageJson): string {
  return `${pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')}/blob/main/`
}

/** A repository-relative documentation link (docs/math.md) in a description, not already part of a URL. */
const DOCS_LINK = /(?<![\w/.-])(docs\/[\w-]+\.md)/g

const TAGS = [
  { name: 'pages', description: 'Register pages and read their estimates, rates, due times and history.' },
  { name: 'observations', description: 'Crawlers report crawls: did the page change?' },
  { name: 'schedule', description: 'Leases of due pages for crawlers, and the upcoming schedule.' },
  { name: 'optimiser', description: 'The bandwidth-constrained freshness optimisation of every page’s crawl rate.' },
  { name: 'settings', description: 'Budget, objective, schedule and estimator, shared by every replica.' },
  { name: 'hosts', description: 'Per-host politeness limits and IndexNow keys.' },
  {
    name: 'signals',
    description: 'Change signals (sitemaps, feeds, pings, IndexNow) and the trust learned for each source.',
  },
  { name: 'operations', description: 'Health, readiness, metrics and statistics for operators.' },
]

const SIMULATION_TAG = { name: 'simulation', description: 'The simulated clock (SIMULATED_CLOCK=true only).' }

type RouteDocument = Parameters<typeof jsonSchemaTransform>[0]

/**
 * What every /v1 and /indexnow answer carries when RATE_LIMIT_PER_MINUTE is set (@fastify/rate-limit, src/app.ts):
 * the client's budget of requests in the current minute. Declared on those responses; absent when no limit is set.
 */
const RATE_LIMIT_HEADERS: Record<string, { type: 'integer'; description: string }> = {
  'X-RateLimit-Limit': {
    type: 'integer',
    description: 'Requests allowed per minute and key (or address): RATE_LIMIT_PER_MINUTE. Only when a limit is set.',
  },
  'X-RateLimit-Remaining': {
    type: 'integer',
    description: 'Requests left in the current minute. Only when a limit is set.',
  },
  'X-RateLimit-Reset': {
    type: 'integer',
    description: 'Seconds until the current minute’s count starts again. Only when a limit is set.',
  },
}
type ResponseDeclarations = Record<string, { headers?: unknown } | undefined>

/**
 * The per-route transform: zod schemas to JSON Schema (fastify-type-provider-zod), then the bearer
 * requirement on routes whose config names a role (src/http/auth.ts enforces exactly those) and an
 * explicit empty one on open routes, and the response headers the route declares, which the zod
 * transform does not carry over.
 */
function documentRoute(document: RouteDocument): ReturnType<typeof jsonSchemaTransform> {
  const result = jsonSchemaTransform(document)
  if (result.schema === undefined || (result.schema as { hide?: boolean }).hide) return result
  const schema = { ...result.schema } as Record<string, unknown>
  schema.security = document.route.config?.role ? BEARER_SECURITY : []
  const declared = (document.schema as { response?: ResponseDeclarations } | undefined)?.response
  const transformed = schema.response as Record<string, Record<string, unknown>> | undefined
  const rateLimited = isRateLimited(document.url)
  if (declared && transformed) {
    schema.response = Object.fromEntries(
      Object.entries(transformed).map(([status, response]) => {
        const headers = {
          ...(rateLimited ? RATE_LIMIT_HEADERS : {}),
          ...(declared[status]?.headers as Record<string, unknown> | undefined),
        }
        return [status, Object.keys(headers).length > 0 ? { ...response, headers } : response]
      }),
    )
  }
  return { ...result, schema }
}

type OpenApiObject = Record<string, unknown> & {
  paths?: unknown
  components?: {
    schemas?: Record<string, unknown>
    responses?: Record<string, unknown>
    parameters?: Record<string, unknown>
  }
}

/** Every `#/components/schemas/…` name referenced from `value`. */
function referencedNames(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) referencedNames(item, into)
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(SCHEMA_REF))
        into.add(child.slice(SCHEMA_REF.length))
      else referencedNames(child, into)
    }
  }
  return into
}

function renameRefs(value: unknown, from: string, to: string): unknown {
  if (Array.isArray(value)) return value.map((item) => renameRefs(item, from, to))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === '$ref' && child === SCHEMA_REF + from ? SCHEMA_REF + to : renameRefs(child, from, to),
    ]),
  )
}

/**
 * The document-level transform: the type provider adds every registered schema twice (X for
 * responses, XInput for requests). Keep only the components the paths reach, name a request-only
 * shape X, and fold XInput into X when the two are the same schema.
 */
function documentComponents(
  documentObject: Parameters<typeof jsonSchemaTransformObject>[0],
): ReturnType<typeof jsonSchemaTransformObject> {
  let doc = jsonSchemaTransformObject(documentObject) as OpenApiObject
  const all = doc.components?.schemas ?? {}

  const reachable = referencedNames(doc.paths, new Set())
  for (let frontier = [...reachable]; frontier.length > 0;) {
    const next: string[] = []
    for (const name of frontier) {
      for (const found of referencedNames(all[name], new Set())) {
        if (!reachable.has(found)) {
          reachable.add(found)
          next.push(found)
        }
      }
    }
    frontier = next
  }
  let schemas: Record<string, unknown> = Object.fromEntries(Object.entries(all).filter(([name]) => reachable.has(name)))

  for (let changed = true; changed;) {
    changed = false
    for (const name of Object.keys(schemas).sort()) {
      if (!name.endsWith(INPUT_SUFFIX) || !(name in schemas)) continue
      const base = name.slice(0, -INPUT_SUFFIX.length)
      if (base in schemas && !isDeepStrictEqual(schemas[base], schemas[name])) continue
      const { [name]: schema, ...rest } = schemas
      schemas = base in rest ? rest : { ...rest, [base]: schema }
      doc = renameRefs(doc, name, base) as OpenApiObject
      schemas = renameRefs(schemas, name, base) as Record<string, unknown>
      changed = true
    }
  }

  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((name) => [name, schemas[name]]),
  )
  const finished = forGenerators({ ...doc, components: { ...doc.components, schemas: sorted } }, packageJson())
  return finished as ReturnType<typeof jsonSchemaTransformObject>
}

type Operation = { requestBody?: unknown; parameters?: unknown; responses?: unknown }

/** The names `roots` reference, and every name those reference in turn. */
function closure(roots: Set<string>, schemas: Record<string, unknown>): Set<string> {
  for (let frontier = [...roots]; frontier.length > 0;) {
    const next: string[] = []
    for (const name of frontier)
      for (const found of referencedNames(schemas[name], new Set()))
        if (!roots.has(found)) {
          roots.add(found)
          next.push(found)
        }
    frontier = next
  }
  return roots
}

/** `value` with every `additionalProperties: false` removed: a response may gain fields. */
function openObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(openObjects)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, child]) => !(key === 'additionalProperties' && child === false))
      .map(([key, child]) => [key, openObjects(child)]),
  )
}

/**
 * A request object whose optional properties keep their default in words only: generators such as
 * openapi-typescript turn a property with a `default` into a required one (it is always present in a
 * response), so `POST /v1/leases {worker}` would not compile. The service applies the default.
 */
function requestDefaultsInWords(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema
  const object = schema as { properties?: Record<string, Record<string, unknown>>; required?: string[] }
  if (!object.properties) return schema
  const properties = Object.fromEntries(
    Object.entries(object.properties).map(([name, property]) => {
      if (!('default' in property) || object.required?.includes(name)) return [name, property]
      const { default: value, ...rest } = property
      const said = `Default: ${JSON.stringify(value)}.`
      return [name, { ...rest, description: rest.description ? `${String(rest.description)} ${said}` : said }]
    }),
  )
  return { ...object, properties }
}

/** Every description with its repository-relative documentation links made absolute. */
function absoluteDocsLinks(value: unknown, filesUrl: string): unknown {
  if (Array.isArray(value)) return value.map((item) => absoluteDocsLinks(item, filesUrl))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === 'description' && typeof child === 'string'
        ? child.replace(DOCS_LINK, `${filesUrl}$1`)
        : absoluteDocsLinks(child, filesUrl),
    ]),
  )
}

/**
 * What third-party generators and validators need beyond the zod schemas: response schemas open to
 * additive fields (requests stay strict where the API refuses unknown fields), request defaults that do
 * not make fields required, and documentation links that resolve outside the repository.
 */
function forGenerators(doc: OpenApiObject, pkg: PackageJson): OpenApiObject {
  const schemas = doc.components?.schemas ?? {}
  const operations = Object.values((doc.paths ?? {}) as Record<string, Record<string, Operation>>).flatMap((item) =>
    Object.values(item),
  )
  const requestSide = closure(
    new Set(operations.flatMap((op) => [...referencedNames([op.requestBody, op.parameters], new Set())])),
    schemas,
  )
  const responseSide = closure(
    new Set(operations.flatMap((op) => [...referencedNames(op.responses, new Set())])),
    schemas,
  )
  const components = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => {
      if (responseSide.has(name) && !requestSide.has(name)) return [name, openObjects(schema)]
      if (requestSide.has(name) && !responseSide.has(name)) return [name, requestDefaultsInWords(schema)]
      return [name, schema]
    }),
  )
  const paths = Object.fromEntries(
    Object.entries((doc.paths ?? {}) as Record<string, Record<string, Operation>>).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, op]) => [
          method,
          op.responses === undefined ? op : { ...op, responses: openObjects(op.responses) },
        ]),
      ),
    ]),
  )
  const opened = { ...doc, paths, components: { ...doc.components, schemas: components } }
  return sharedErrorResponses(absoluteDocsLinks(opened, repositoryFilesUrl(pkg)) as OpenApiObject)
}

/** Names of the shared error responses (components/responses), by status. */
const ERROR_RESPONSE_NAMES: Record<string, string> = {
  '400': 'InvalidInput',
  '401': 'Unauthenticated',
  '403': 'Forbidden',
  '404': 'NotFound',
  '409': 'Conflict',
  '413': 'TooLarge',
  '422': 'Unprocessable',
  '429': 'RateLimited',
  '500': 'InternalError',
  '503': 'Unavailable',
}

/** Every operation of every path, mapped by `f` (paths and methods kept, in order). */
function mapOperations<Op, Out>(
  paths: Record<string, Record<string, Op>>,
  f: (op: Op) => Out,
): Record<string, Record<string, Out>> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(Object.entries(item).map(([method, op]) => [method, f(op)])),
    ]),
  )
}

/**
 * The error response most routes share for a status (the same description, headers and problem body)
 * declared once in components/responses and referenced, instead of repeated on every route; a route whose
 * error says something of its own keeps it inline.
 */
function sharedErrorResponses(doc: OpenApiObject): OpenApiObject {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, { responses?: Record<string, unknown> }>>
  const counts = new Map<string, Map<string, number>>()
  for (const item of Object.values(paths))
    for (const op of Object.values(item))
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!(status in ERROR_RESPONSE_NAMES)) continue
        const byBody = counts.get(status) ?? new Map<string, number>()
        const key = JSON.stringify(response)
        byBody.set(key, (byBody.get(key) ?? 0) + 1)
        counts.set(status, byBody)
      }
  const shared = new Map<string, string>()
  const responses: Record<string, unknown> = {}
  for (const [status, byBody] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    const [key, n] = [...byBody].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!
    if (n < 2) continue
    shared.set(status, key)
    responses[ERROR_RESPONSE_NAMES[status]!] = JSON.parse(key) as unknown
  }
  const referenced = mapOperations(paths, (op) =>
    op.responses === undefined
      ? op
      : {
          ...op,
          responses: Object.fromEntries(
            Object.entries(op.responses).map(([status, response]) => [
              status,
              shared.get(status) === JSON.stringify(response)
                ? { $ref: `#/components/responses/${ERROR_RESPONSE_NAMES[status]!}` }
                : response,
            ]),
          ),
        },
  )
  return sharedParameters({ ...doc, paths: referenced, components: { ...doc.components, responses } })
}

/** A parameter's component name: its name and where it goes (`id` in the path → IdPath). */
const parameterName = (p: { name: string; in: string }): string =>
  `${p.name.charAt(0).toUpperCase()}${p.name.slice(1)}${p.in.charAt(0).toUpperCase()}${p.in.slice(1)}`

/** Parameters that several routes declare alike (the page id, the lease id, limit), declared once and referenced. */
function sharedParameters(doc: OpenApiObject): OpenApiObject {
  type Parameter = { name: string; in: string }
  const paths = (doc.paths ?? {}) as Record<string, Record<string, { parameters?: Parameter[] }>>
  const counts = new Map<string, number>()
  for (const item of Object.values(paths))
    for (const op of Object.values(item))
      for (const p of op.parameters ?? []) counts.set(JSON.stringify(p), (counts.get(JSON.stringify(p)) ?? 0) + 1)
  const parameters: Record<string, unknown> = {}
  const names = new Map<string, string>()
  for (const [key, n] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    const name = parameterName(JSON.parse(key) as Parameter)
    if (n < 2 || name in parameters) continue
    parameters[name] = JSON.parse(key) as unknown
    names.set(key, name)
  }
  const referenced = mapOperations(paths, (op) =>
    op.parameters === undefined
      ? op
      : {
          ...op,
          parameters: op.parameters.map((p) => {
            const name = names.get(JSON.stringify(p))
            return name === undefined ? p : { $ref: `#/components/parameters/${name}` }
          }),
        },
  )
  const sorted = Object.fromEntries(
    Object.keys(parameters)
      .sort()
      .map((name) => [name, parameters[name]]),
  )
  return { ...doc, paths: referenced, components: { ...doc.components, parameters: sorted } }
}

/** The @fastify/swagger options: info, servers, tags and the bearer scheme; no global security requirement. */
export function swaggerOptions(options: { simulatedClock: boolean }): FastifyDynamicSwaggerOptions {
  const pkg = packageJson()
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'recrawl',
        version: pkg.version,
        contact: { name: 'recrawl', url: pkg.homepage },
        license: { name: pkg.license, url: `${repositoryFilesUrl(pkg)}package.json` },
        description:
          'Crawl scheduler: crawlers report crawls, recrawl learns each page’s change rate online, solves a bandwidth-constrained freshness ' +
          'optimisation and hands out due pages. Rates are per day; timestamps RFC 3339; errors RFC 9457 problem+json. ' +
          'Every /v1 route takes an API key (Authorization: Bearer; while no key exists, a service listening only on loopback needs none); ' +
          '/healthz, /readyz and /metrics are always open.',
      },
      servers: [
        {
          url: '/',
          description: 'The service that serves this document (a local `npm start` listens on http://127.0.0.1:8080).',
        },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key made with `npm run cli -- create-key`; its role (reader, crawler, admin) decides the routes.',
          },
        },
      },
      tags: options.simulatedClock ? [...TAGS, SIMULATION_TAG] : TAGS,
    },
    transform: documentRoute,
    transformObject: documentComponents,
  }
}
