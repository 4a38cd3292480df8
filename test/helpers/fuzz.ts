import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import type { Queryable } from '../../src/store/transaction.ts'

/**
 * Request generators for property tests of the HTTP API, driven by the committed OpenAPI document so a
 * new route or field is fuzzed without editing the tests. Values lean on the edges that break services:
 * bounds and just past them, subnormal and huge doubles, NUL and other control characters, timestamps
 * outside 1970..9999, lone surrogates, long strings, wrong types, unknown and missing keys, broken JSON,
 * odd media types and broken percent-encoding.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type JsonSchema = Record<string, any>

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, JsonSchema> }
}

interface Parameter {
  in: 'query' | 'path' | 'header'
  name: string
  required?: boolean
  schema: JsonSchema
}

interface Operation {
  operationId: string
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> }
}

const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] as const

export interface RouteOperation {
  method: (typeof METHODS)[number]
  path: string
  operation: Operation
}

export function loadOpenApiDocument(): OpenApiDocument {
  return JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as OpenApiDocument
}

/** Every operation of the document, in document order. */
export function operationsOf(doc: OpenApiDocument): RouteOperation[] {
  const out: RouteOperation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const upper = method.toUpperCase() as RouteOperation['method']
      if (METHODS.includes(upper)) out.push({ method: upper, path, operation })
    }
  }
  return out
}

/**
 * Known-good values by field or parameter name (page ids, lease ids, URLs of registered pages...), so
 * generated requests reach past "no such page" into the code that does the work.
 */
export type FuzzDictionary = Partial<Record<string, readonly string[]>>

/** A number to write into JSON text as is: JSON cannot spell 1e400 or -0 otherwise. */
class RawNumber {
  constructor(readonly text: string) {}
}

/** JSON text of a generated value; RawNumber leaves are written verbatim. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawNumber) return value.text
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(',')}}`
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null'
  return JSON.stringify(value) ?? 'null'
}

const T0 = Date.parse('2026-11-22T00:00:00Z')
const DAY_MS = 86_400_000

/** Doubles that break arithmetic: subnormals, the largest double, overflowing products, negative zero. */
const EDGE_NUMBERS = [
  0,
  -0,
  5e-324,
  -5e-324,
  2.2250738585072014e-308,
  1e-300,
  1e-200,
  1e-12,
  1e-9,
  1e-6,
  0.5,
  1,
  2,
  7,
  100,
  86_400,
  1e6,
  1e9,
  1e9 + 1,
  1e12,
  1e15,
  2 ** 53,
  2 ** 53 + 2,
  1e21,
  1e100,
  1e200,
  1e300,
  1e308,
  Number.MAX_VALUE,
  -1,
  -1e308,
  0.1 + 0.2,
]

/** Strings that break storage and parsers. */
const EDGE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  'x\u0000',
  '\u0001\u001f\u007f',
  '\ud800',
  'a\udfffb',
  '\ufeff',
  '\u202e\u200b',
  '😀',
  'é',
  'bücher',
  "'; DROP TABLE pages; --",
  '\\',
  '"',
  '%00',
  '%zz',
  '%',
  '../..',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e308',
  '9999999999999999999',
  '99999999999999999999999',
  'x'.repeat(300),
  'y'.repeat(5000),
  '\n\r\t',
]

const EDGE_TIMESTAMPS = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '1000-01-01T00:00:00Z',
  '1000-01-02T00:00:00Z',
  '1969-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00Z',
  '1970-01-01T00:00:00+01:00',
  '1970-01-01T00:00:00.000-00:01',
  '2000-02-29T12:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-11-21T23:59:60Z',
  '2026-11-21T24:00:00Z',
  '2026-11-22T00:04:59Z',
  '2026-11-22T00:06:00Z',
  '2026-11-21T12:00:00.123456789+05:30',
  '2026-11-21 12:00:00z',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59-23:59',
  '+275760-09-13T00:00:00Z',
  '2026-11-21',
  '2026-11-21T00:00:00',
  'yesterday',
]

const HOSTS = [
  'a.example',
  'b.example',
  'b.example:8443',
  'A.EXAMPLE.',
  'xn--bcher-kva.example',
  'bücher.example',
  '127.0.0.1',
  '[::1]',
  '[::1]:8080',
  'localhost',
]

/** One of the host-like strings: real names, names with a port, IPs, IDN, bad and long ones. */
export function hostArbitrary(dict: FuzzDictionary): fc.Arbitrary<string> {
  const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/)
  return fc.oneof(
    { arbitrary: fc.constantFrom(...HOSTS, ...(dict.host ?? [])), weight: 4 },
    { arbitrary: fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => `${ls.join('.')}.example`), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
        `${'a'.repeat(64)}.example`,
        `${'a'.repeat(63)}.`.repeat(5) + 'example',
        'a..b',
        '-a.example',
        'a.example:0',
        'a.example:65536',
        'a.example:99999999999',
        'a b.example',
        'a\u0000b',
        'a.example\u0000',
        'a%00b.example',
        'user@a.example',
        'a.example/path',
        '[::1',
        '999.999.999.999',
        '%',
        '.',
        '',
      ),
      weight: 2,
    },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
  )
}

/** URL-like strings: registered URLs, near-URLs, other schemes, broken escapes, NUL, very long ones. */
function urlArbitrary(dict: FuzzDictionary): fc.Arbitrary<string> {
  const segment = fc.oneof(
    fc.stringMatching(/^[a-zA-Z0-9._~-]{0,8}$/),
    fc.constantFrom('%00', '%zz', '%2F', '%7e', '..', '.', '😀', 'a b', '\u0000', '%', '?', '#frag', ';p=1', 'a\ud800'),
  )
  const query = fc.oneof(
    fc.constant(''),
    fc.constantFrom(
      '?',
      '?a=1&b=2',
      '?b=2&a=1',
      '?utm_source=x',
      '?a=%00',
      '?a=\u0000',
      '?&&',
      '?x=' + 'q'.repeat(4100),
    ),
  )
  const built = fc
    .tuple(
      fc.constantFrom('https://', 'http://', 'HTTP://', 'ftp://', 'javascript:', 'file:///', '//', ''),
      hostArbitrary(dict),
      fc.array(segment, { maxLength: 4 }),
      query,
    )
    .map(([scheme, host, segments, q]) => `${scheme}${host}/${segments.join('/')}${q}`)
  return fc.oneof(
    { arbitrary: fc.constantFrom(...(dict.url ?? ['https://a.example/'])), weight: 4 },
    { arbitrary: built, weight: 4 },
    {
      arbitrary: fc.constantFrom(
        `https://a.example/${'p'.repeat(4090)}`,
        `https://a.example/${'p'.repeat(5000)}`,
        'https://a.example/\u0000x',
      ),
      weight: 1,
    },
    { arbitrary: fc.constantFrom(...EDGE_STRINGS), weight: 1 },
  )
}

/** RFC 3339 strings (and near misses): near the test clock, at the edges of the accepted range, and far outside it. */
function timestampArbitrary(): fc.Arbitrary<string> {
  const offset = fc.constantFrom('Z', 'z', '+00:00', '-05:00', '+14:00', '+23:59', '-23:59', '+24:00')
  const formatted = (min: number, max: number) =>
    fc.tuple(fc.integer({ min, max }), offset).map(([ms, off]) => {
      const iso = new Date(ms).toISOString()
      const year = iso.startsWith('+') || iso.startsWith('-') ? iso.slice(3) : iso
      return `${year.slice(0, -1)}${off}`
    })
  return fc.oneof(
    { arbitrary: formatted(T0 - 30 * DAY_MS, T0 + 10 * 60_000), weight: 5 },
    { arbitrary: formatted(Date.UTC(0, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999)), weight: 2 },
    { arbitrary: fc.constantFrom(...EDGE_TIMESTAMPS), weight: 3 },
  )
}

/** Doubles in [min, max] that lean on the edges; `strict` adds values just outside. */
function numberArbitrary(schema: JsonSchema, integer: boolean, conform: boolean): fc.Arbitrary<number | RawNumber> {
  const lo: number = schema.minimum ?? schema.exclusiveMinimum ?? -Number.MAX_VALUE
  const hi: number = schema.maximum ?? schema.exclusiveMaximum ?? Number.MAX_VALUE
  const fits = (n: number) =>
    (!integer || Number.isInteger(n)) &&
    (schema.minimum === undefined || n >= schema.minimum) &&
    (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) &&
    (schema.maximum === undefined || n <= schema.maximum) &&
    (schema.exclusiveMaximum === undefined || n < schema.exclusiveMaximum)
  const near = [
    lo,
    hi,
    lo + 1,
    hi - 1,
    lo + Number.EPSILON,
    hi * (1 - Number.EPSILON),
    lo - 1,
    hi + 1,
    lo / 2,
    (lo + hi) / 2,
  ]
  const edges = [...EDGE_NUMBERS, ...near].filter((n) => Number.isFinite(n) && (!conform || fits(n)))
  const inRange = integer
    ? fc.integer({ min: Math.max(Math.ceil(lo), -(2 ** 31)), max: Math.min(Math.floor(hi), 2 ** 31) })
    : fc.double({ min: Math.max(lo, -1e12), max: Math.min(hi, 1e12), noNaN: true, noDefaultInfinity: true })
  const options: fc.WeightedArbitrary<number | RawNumber>[] = [
    { arbitrary: inRange.filter((n) => !conform || fits(n)), weight: 3 },
  ]
  if (edges.length > 0) options.push({ arbitrary: fc.constantFrom(...edges), weight: 3 })
  if (!conform)
    options.push({
      arbitrary: fc
        .constantFrom(
          '1e400',
          '-1e400',
          '-0',
          '1E-400',
          '0.0000000000000000000000001e-330',
          '123456789012345678901234567890',
        )
        .map((t) => new RawNumber(t)),
      weight: 1,
    })
  return fc.oneof(...options)
}

/** A value of any JSON type, for "wrong type" mutations. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom(...EDGE_NUMBERS),
  fc.constantFrom(...EDGE_STRINGS),
  fc.constant([]),
  fc.constant({}),
  fc.constant([null]),
  fc.constant({ __proto__: { x: 1 } }),
  fc.constant({ constructor: { prototype: { x: 1 } } }),
)

export interface SchemaArbitraryOptions {
  doc: OpenApiDocument
  dict: FuzzDictionary
  /** True: only values the schema allows (edges included). False: also wrong types, unknown and missing keys, out-of-range values. */
  conform: boolean
  /** Largest array generated (batches past MAX_BATCH_ITEMS need only a small limit in the app under test). */
  maxArray: number
}

function resolve(schema: JsonSchema, doc: OpenApiDocument): JsonSchema {
  let s = schema
  while (s && typeof s.$ref === 'string') {
    const name = (s.$ref as string).replace('#/components/schemas/', '')
    s = doc.components.schemas[name]!
  }
  return s ?? {}
}

/** A generator of values for a JSON schema; `name` is the field or parameter the value is for. */
export function schemaArbitrary(schema: JsonSchema, options: SchemaArbitraryOptions, name = ''): fc.Arbitrary<unknown> {
  const base = conformingArbitrary(resolve(schema, options.doc), options, name)
  if (options.conform) return base
  return fc.oneof({ arbitrary: base, weight: 15 }, { arbitrary: anyJson, weight: 1 })
}

function stringArbitrary(s: JsonSchema, o: SchemaArbitraryOptions, name: string): fc.Arbitrary<string> {
  const known = o.dict[name]
  let arb: fc.Arbitrary<string>
  if (s.format === 'date-time' || /At$|^before$|^until$|^now$|^lastModified$/.test(name)) arb = timestampArbitrary()
  else if (s.format === 'uuid' || /leaseId$/i.test(name))
    arb = fc.oneof(
      fc.uuid(),
      fc.constantFrom('00000000-0000-0000-0000-000000000000', 'not-a-uuid', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'),
    )
  else if (/url$|^redirectTo$/i.test(name)) arb = urlArbitrary(o.dict)
  else if (/^host$|^hosts$/.test(name)) arb = hostArbitrary(o.dict)
  else if (typeof s.pattern === 'string') arb = fc.stringMatching(new RegExp(s.pattern))
  else
    arb = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom(...EDGE_STRINGS),
    )
  if (known && known.length > 0)
    arb = fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: arb, weight: 2 })
  if (o.conform) {
    const min = s.minLength ?? 0
    const max = s.maxLength ?? Number.POSITIVE_INFINITY
    arb = arb.filter((v) => v.length >= min && v.length <= max)
  } else {
    arb = fc.oneof({ arbitrary: arb, weight: 6 }, { arbitrary: fc.constantFrom(...EDGE_STRINGS), weight: 1 })
  }
  return arb
}

function conformingArbitrary(s: JsonSchema, o: SchemaArbitraryOptions, name: string): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const)
  if (Array.isArray(s.anyOf ?? s.oneOf))
    return fc.oneof(...(s.anyOf ?? s.oneOf).map((x: JsonSchema) => schemaArbitrary(x, o, name)))
  if (Array.isArray(s.enum)) {
    const values = fc.constantFrom(...(s.enum as unknown[]))
    return o.conform
      ? values
      : fc.oneof(
          { arbitrary: values, weight: 6 },
          {
            arbitrary: fc.constantFrom('', 'UNKNOWN', String(s.enum[0]).toUpperCase(), `${String(s.enum[0])}\u0000`),
            weight: 1,
          },
        )
  }
  if (Array.isArray(s.type))
    return fc.oneof(...(s.type as string[]).map((t) => conformingArbitrary({ ...s, type: t }, o, name)))
  switch (s.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return numberArbitrary(s, true, o.conform)
    case 'number':
      return numberArbitrary(s, false, o.conform)
    case 'string':
      return stringArbitrary(s, o, name)
    case 'array': {
      const min = s.minItems ?? 0
      const max = Math.max(min, Math.min(s.maxItems ?? o.maxArray, o.maxArray))
      const items = schemaArbitrary(s.items ?? {}, o, name)
      return fc.array(items, { minLength: o.conform ? min : 0, maxLength: o.conform ? max : max + 2 })
    }
    case 'object':
      return objectArbitrary(s, o)
    default:
      return anyJson
  }
}

function objectArbitrary(s: JsonSchema, o: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set<string>(s.required ?? [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, value] of Object.entries(properties)) model[key] = schemaArbitrary(value, o, key)
  const keys = Object.keys(model)
  const record = fc.record(model, { requiredKeys: keys.filter((k) => required.has(k)) })
  if (o.conform) return record
  return fc
    .tuple(
      record,
      fc.option(fc.constantFrom('unknownKey', 'URL', '__proto__', 'constructor', '\u0000', ''), { freq: 15 }),
      fc.option(fc.constantFrom(...(keys.length > 0 ? keys : ['x'])), { freq: 15 }),
      anyJson,
    )
    .map(([value, extra, drop, extraValue]) => {
      const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
      if (drop !== null) delete out[drop]
      if (extra !== null)
        Object.defineProperty(out, extra, { value: extraValue, enumerable: true, configurable: true, writable: true })
      return out
    })
}

/** One generated request for light-my-request. */
export interface FuzzRequest {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'PATCH' | 'DELETE' | 'OPTIONS'
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/merge-patch+json',
  'application/vnd.recrawl+json',
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/jsonx',
  '',
]

/** Bodies that are not the JSON of any value, or not of the right one. */
const RAW_BODIES: (string | Buffer)[] = [
  '',
  'null',
  '[]',
  '{}',
  '"x"',
  '1e400',
  '{',
  '{"a":1,}',
  "{'a':1}",
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '\ufeff{}',
  '['.repeat(5000) + ']'.repeat(5000),
  Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
  Buffer.from([0x00, 0x00, 0x00]),
  'a=1&b=2',
]

function encodeValue(value: unknown): string {
  if (value instanceof RawNumber) return value.text
  if (typeof value === 'string') return value
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** Percent-encodes a path or query piece, or leaves it raw (broken escapes, spaces, non-ASCII) now and then. */
function encodedPiece(text: string, raw: boolean): string {
  if (!raw) {
    try {
      return encodeURIComponent(text)
    } catch {
      // A lone surrogate cannot be encoded: send its bytes as they come.
      return text
    }
  }
  return text
}

/** Requests for one operation: parameters, body and content type from the document, with hostile edges. */
export function requestArbitrary(
  route: RouteOperation,
  options: Omit<SchemaArbitraryOptions, 'conform'>,
): fc.Arbitrary<FuzzRequest> {
  // Most requests keep to the schema (with edge values inside it) so they reach the code behind validation;
  // the others break it somewhere.
  return fc.oneof(
    { arbitrary: requestOf(route, { ...options, conform: true }), weight: 3 },
    { arbitrary: requestOf(route, { ...options, conform: false }), weight: 2 },
  )
}

function requestOf(route: RouteOperation, options: SchemaArbitraryOptions): fc.Arbitrary<FuzzRequest> {
  const params = route.operation.parameters ?? []
  const paramValue = (p: Parameter) => schemaArbitrary(p.schema, options, p.name).map(encodeValue)
  const pathArb = fc.tuple(
    ...params.filter((p) => p.in === 'path').map((p) => fc.tuple(fc.constant(p.name), paramValue(p), fc.nat(9))),
    fc.constant(null),
  )
  const queryArb = fc.tuple(
    ...params
      .filter((p) => p.in === 'query')
      .map((p) =>
        fc.tuple(
          fc.constant(p.name),
          fc.option(fc.array(paramValue(p), { minLength: 1, maxLength: options.conform ? 1 : 2 }), { freq: 3 }),
          fc.nat(9),
        ),
      ),
    options.conform
      ? fc.constant(null)
      : fc.option(fc.constantFrom('unknown=1', 'limit', '=', '&&', '%zz=1', 'a=%00', 'limit[]=1', 'limit=1&limit=2'), {
          freq: 3,
        }),
  )
  const body = route.operation.requestBody
  const jsonSchema = body ? Object.values(body.content)[0]!.schema : null
  const declaredTypes = body ? Object.keys(body.content) : []
  const raw = fc
    .tuple(fc.constantFrom(...RAW_BODIES), fc.constantFrom(...CONTENT_TYPES))
    .map(([p, t]) => ({ payload: p, contentType: t || null }))
  let payloadArb: fc.Arbitrary<{ payload?: string | Buffer; contentType: string | null }>
  if (jsonSchema && options.conform) {
    payloadArb = fc
      .tuple(schemaArbitrary(jsonSchema, options, ''), fc.constantFrom(...declaredTypes))
      .map(([v, t]) => ({ payload: toJsonText(v), contentType: t }))
  } else if (jsonSchema) {
    payloadArb = fc.oneof(
      {
        arbitrary: fc
          .tuple(schemaArbitrary(jsonSchema, options, ''), fc.constantFrom(...declaredTypes))
          .map(([v, t]) => ({ payload: toJsonText(v), contentType: t })),
        weight: 8,
      },
      {
        arbitrary: fc
          .tuple(schemaArbitrary(jsonSchema, options, ''), fc.constantFrom(...CONTENT_TYPES))
          .map(([v, t]) => ({ payload: toJsonText(v), contentType: t || null })),
        weight: 1,
      },
      { arbitrary: raw, weight: 2 },
      { arbitrary: fc.constant({ contentType: null }), weight: 1 },
    )
  } else if (options.conform) {
    payloadArb = fc.constant({ contentType: null })
  } else {
    payloadArb = fc.oneof({ arbitrary: fc.constant({ contentType: null }), weight: 3 }, { arbitrary: raw, weight: 1 })
  }
  const methodArb: fc.Arbitrary<FuzzRequest['method']> = options.conform
    ? fc.constant(route.method)
    : fc.oneof(
        { arbitrary: fc.constant(route.method), weight: 8 },
        { arbitrary: fc.constantFrom(...METHODS), weight: 1 },
      )
  const authArb = options.conform
    ? fc.constant(null)
    : fc.option(fc.constantFrom('Bearer x', 'Bearer ', 'Basic eA==', 'bearer ' + 'k'.repeat(3000), 'Bearer \u00e9'), {
        freq: 6,
      })
  return fc
    .tuple(methodArb, pathArb, queryArb, payloadArb, authArb)
    .map(([method, pathParams, query, payload, auth]) => {
      let path = route.path
      for (const p of pathParams) {
        if (p === null) continue
        const [name, value, rawChance] = p
        path = path.replace(`{${name}}`, encodedPiece(value, !options.conform && rawChance === 0))
      }
      const pieces: string[] = []
      for (const q of query) {
        if (q === null) continue
        if (typeof q === 'string') {
          pieces.push(q)
          continue
        }
        const [name, values, rawChance] = q
        for (const v of values ?? []) pieces.push(`${name}=${encodedPiece(v, !options.conform && rawChance === 0)}`)
      }
      const headers: Record<string, string> = {}
      if (payload.contentType !== null) headers['content-type'] = payload.contentType
      if (auth !== null) headers.authorization = auth
      return {
        method,
        url: pieces.length > 0 ? `${path}?${pieces.join('&')}` : path,
        headers,
        ...(payload.payload !== undefined ? { payload: payload.payload } : {}),
      }
    })
}

/** What a client sees of the service's state: the views a 4xx must leave untouched. */
export async function stateSnapshot(app: FastifyInstance): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const url of ['/v1/pages?limit=1000', '/v1/settings', '/v1/hosts', '/v1/stats']) {
    const res = await app.inject({ method: 'GET', url })
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
    out[url] = res.json()
  }
  return out
}

/** Answer of one request, in the form the checks need. */
interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

/** A 2xx, or a 4xx problem document: never a 5xx, never an error in another form. */
export function assertWellFormedAnswer(request: FuzzRequest, res: Answer): void {
  const where = `${request.method} ${request.url.slice(0, 300)} ${String(request.payload ?? '').slice(0, 300)} → ${res.statusCode} ${res.body.slice(0, 500)}`
  assert.ok(res.statusCode >= 200 && res.statusCode < 500, `not 2xx or 4xx: ${where}`)
  if (res.statusCode >= 400) {
    assert.match(
      String(res.headers['content-type']),
      /^application\/problem\+json/,
      `error without problem+json: ${where}`,
    )
    if (request.method === 'HEAD') return
    const body = JSON.parse(res.body) as { status: unknown; type: unknown; title: unknown; detail: unknown }
    assert.equal(body.status, res.statusCode, where)
    assert.equal(typeof body.type, 'string', where)
    assert.equal(typeof body.title, 'string', where)
    assert.equal(typeof body.detail, 'string', where)
  }
}

/**
 * A digest of every table a request can change: equal digests mean equal stored state. One statement,
 * so it can follow every refused request; the client-visible views are compared less often.
 */
export async function databaseDigest(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ digest: string }>(
    `SELECT md5(concat_ws('|',
       (SELECT string_agg(md5(t::text), ',' ORDER BY t.id) FROM pages t),
       (SELECT string_agg(md5(t::text), ',' ORDER BY t.page_id) FROM page_schedule t),
       (SELECT string_agg(md5(t::text), ',' ORDER BY t.page_id, t.crawled_at) FROM observations t),
       (SELECT string_agg(md5(t::text), ',' ORDER BY t.host) FROM hosts t),
       (SELECT string_agg(md5(t::text), ',' ORDER BY t.id) FROM optimizer_runs t),
       (SELECT string_agg(md5(t::text), ',' ORDER BY t.sampled_at) FROM stats_samples t),
       (SELECT md5(t::text) FROM settings t),
       (SELECT md5(t::text) FROM optimizer_state t),
       (SELECT md5(t::text) FROM lease_budget t),
       (SELECT count(*)::text FROM api_keys))) AS digest`,
  )
  return rows[0]!.digest
}

/** Every table back to a new database's state (settings and optimiser rows at their defaults). */
export async function resetDatabase(q: Queryable): Promise<void> {
  await q.query(
    'TRUNCATE pages, observations, hosts, host_rollup, optimizer_runs, stats_samples RESTART IDENTITY CASCADE',
  )
  // A reset deletes every page: the optimiser's kept page set must not outlive it (src/store/optimizerPages.ts).
  await q.query('UPDATE page_deletion_count SET statements = statements + 1')
  await q.query(`UPDATE settings SET value = '{}'::jsonb`)
  await q.query(`UPDATE optimizer_state SET lambda = NULL, host_lambdas = '{}'::jsonb, solved_at = NULL, pages = NULL`)
  await q.query('UPDATE lease_budget SET tokens = NULL, updated_at = NULL')
}

/** The fast-check seed: FUZZ_SEED when set, else a fixed one, so every failure can be replayed. */
export function fuzzSeed(): number {
  const fromEnv = process.env.FUZZ_SEED
  if (fromEnv === 'random') return Math.floor(Math.random() * 2 ** 31)
  return fromEnv ? Number(fromEnv) : 20_261_122
}
