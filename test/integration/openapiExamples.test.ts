import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { generateOpenApiJson } from '../../src/http/openapi.ts'

// Every request body and every response body of the document (errors too) carries an example (the JSON Schema `examples`
// of its schema, from the zod schema's meta), and every example is valid against the schema it illustrates, as a
// third-party validator reads the document. Responses are open to added fields, so the check closes every object
// first: an example with a misspelt or removed field fails.

interface MediaType {
  schema: Record<string, unknown>
}
interface Operation {
  requestBody?: { content: Record<string, MediaType> }
  responses: Record<string, { content?: Record<string, MediaType>; $ref?: string }>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, Record<string, unknown>>
    responses: Record<string, { content?: Record<string, MediaType> }>
  }
}

/** `schema` with every object that lists properties closed to others (additionalProperties: false). */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed)
  if (schema === null || typeof schema !== 'object') return schema
  const object = Object.fromEntries(
    Object.entries(schema).map(([key, child]) => [key, key === 'examples' ? child : closed(child)]),
  )
  if ('properties' in object && !('additionalProperties' in object)) object.additionalProperties = false
  return object
}

/** Each body of the document: where it is, its schema, and its examples (resolved through a `$ref`). */
function bodies(doc: Document): { where: string; schema: Record<string, unknown>; examples: unknown[] | undefined }[] {
  const found = []
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) {
      const media: [string, MediaType][] = []
      for (const [type, m] of Object.entries(op.requestBody?.content ?? {})) media.push([`request ${type}`, m])
      for (const [status, reference] of Object.entries(op.responses)) {
        // Error responses are shared (components/responses) and referenced.
        const ref = reference.$ref
        const response =
          ref === undefined ? reference : doc.components.responses[ref.replace('#/components/responses/', '')]!
        for (const [type, m] of Object.entries(response.content ?? {})) media.push([`${status} ${type}`, m])
      }
      for (const [what, m] of media) {
        const ref = m.schema.$ref as string | undefined
        const target = ref === undefined ? m.schema : doc.components.schemas[ref.replace('#/components/schemas/', '')]!
        found.push({
          where: `${method.toUpperCase()} ${path} ${what}`,
          schema: m.schema,
          examples: target.examples as unknown[] | undefined,
        })
      }
    }
  return found
}

async function documentAndValidator(): Promise<{ doc: Document; compile(schema: object): ValidateFunction }> {
  const doc = JSON.parse(await generateOpenApiJson()) as Document
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'doc', components: closed(doc.components) as object })
  const compile = (schema: object) =>
    ajv.compile(JSON.parse(JSON.stringify(closed(schema)).replaceAll('"#/components/', '"doc#/components/')) as object)
  return { doc, compile }
}

describe('examples in the OpenAPI document', () => {
  it('every request body and response body has an example, and each is valid against its schema', async () => {
    const { doc, compile } = await documentAndValidator()
    const all = bodies(doc)
    assert.ok(all.length >= 25, `${all.length} bodies`)
    const missing = all.filter((b) => !Array.isArray(b.examples) || b.examples.length === 0).map((b) => b.where)
    assert.deepEqual(missing, [], 'bodies without an example')
    for (const body of all) {
      const validate = compile(body.schema)
      for (const example of body.examples!)
        assert.ok(validate(example), `${body.where}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(example)}`)
    }
  })

  it('the check refuses an example with a field removed, misspelt or of the wrong type', async () => {
    const { doc, compile } = await documentAndValidator()
    const page = bodies(doc).find((b) => b.where === 'GET /v1/pages/{id} 200 application/json')!
    const validate = compile(page.schema)
    const example = page.examples![0] as Record<string, unknown>
    assert.ok(validate(example))
    const { status, ...withoutStatus } = example
    assert.equal(typeof status, 'string')
    assert.equal(validate(withoutStatus), false, 'a required field removed')
    assert.equal(validate({ ...withoutStatus, statsu: status }), false, 'a misspelt field')
    assert.equal(validate({ ...example, crawls: 'four' }), false, 'a number as text')
    assert.equal(validate({ ...example, lastCrawledAt: 'yesterday' }), false, 'a timestamp that is none')
  })
})
