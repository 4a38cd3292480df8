import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { generateOpenApiJson } from '../../src/http/openapi.ts'

describe('openapi/openapi.json', () => {
  it('is what the code generates (regenerate with `npm run cli -- openapi`)', async () => {
    const committed = await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')
    assert.equal(committed, await generateOpenApiJson())
  })

  it('names every path of the API contract', async () => {
    const doc = JSON.parse(await generateOpenApiJson())
    for (const path of [
      '/v1/pages',
      '/v1/pages/by-url',
      '/v1/pages/{id}',
      '/v1/pages/{id}/observations',
      '/v1/pages/{id}/estimates',
      '/v1/observations',
      '/v1/settings',
      '/healthz',
      '/readyz',
    ]) {
      assert.ok(doc.paths[path], `missing ${path}`)
    }
  })
})
