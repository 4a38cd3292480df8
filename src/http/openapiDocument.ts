import { createRequire } from 'node:module'
import { isDeepStrictEqual } from 'node:util'
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'

/**
 * How the OpenAPI document is made from the routes (@fastify/swagger with the zod type provider):
 * shapes with a `.meta({ id })` become components referenced by `$ref`, every keyed route declares
 * the bearer requirement (and only those), and the version is package.json's.
 */

const SCHEMA_REF = '#/components/schemas/'
/** fastify-type-provider-zod names the request-side copy of component X `XInput`. */
const INPUT_SUFFIX = 'Input'

const BEARER_SECURITY = [{ bearer: [] as string[] }]

/** package.json's version: the document's info.version. Read at run time (dist/ sits beside package.json too). */
function packageVersion(): string {
  const pkg = createRequire(import.meta.url)('../../package.json') as { version: string }
  return pkg.version
}

const TAGS = [
  { name: 'pages', description: 'Register pages and read their estimates, rates, due times and history.' },
  { name: 'observations', description: 'Crawlers report crawls: did the page change?' },
  { name: 'schedule', description: 'Leases of due pages for crawlers, and the upcoming schedule.' },
  { name: 'optimiser', description: 'The bandwidth-constrained freshness optimisation of every page’s crawl rate.' },
  { name: 'settings', description: 'Budget, objective, schedule and estimator, shared by every replica.' },
  { name: 'hosts', description: 'Per-host politeness limits.' },
  { name: 'operations', description: 'Health, readiness, metrics and statistics for operators.' },
]

const SIMULATION_TAG = { name: 'simulation', description: 'The simulated clock (SIMULATED_CLOCK=true only).' }

type RouteDocument = Parameters<typeof jsonSchemaTransform>[0]

/**
 * What every /v1 answer carries when RATE_LIMIT_PER_MINUTE is set (@fastify/rate-limit, src/app.ts): the
 * client's budget of requests in the current minute. Declared on every /v1 response; absent when no limit is set.
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
  const rateLimited = document.url.startsWith('/v1/')
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

type OpenApiObject = Record<string, unknown> & { paths?: unknown; components?: { schemas?: Record<string, unknown> } }

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
  return { ...doc, components: { ...doc.components, schemas: sorted } } as ReturnType<typeof jsonSchemaTransformObject>
}

/** The @fastify/swagger options: info, servers, tags and the bearer scheme; no global security requirement. */
export function swaggerOptions(options: { simulatedClock: boolean }): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'recrawl',
        version: packageVersion(),
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
