/**
 * The client's types (src/client/schema.ts) as the code describes the API: openapi-typescript run on
 * the OpenAPI document the routes generate, with the simulated-clock routes included (they exist only
 * with SIMULATED_CLOCK=true, and the end-to-end driver needs them). `recrawl openapi` writes the file,
 * `recrawl openapi --check` and a test fail when the committed file differs.
 *
 * openapi-typescript is a development dependency: this module is loaded only from a source checkout.
 */
import { generateOpenApiJson } from '../http/openapi.ts'

const HEADER = `/**
 * Types of the recrawl HTTP API, generated from the OpenAPI document the code describes
 * (the committed openapi/openapi.json plus the SIMULATED_CLOCK=true routes GET and PUT /v1/clock).
 * Do not edit: run \`npm run cli -- openapi\` after changing a route, and commit the result.
 */

`

export async function generateClientSchema(): Promise<string> {
  const { default: openapiTS, astToString } = await import('openapi-typescript')
  const document = JSON.parse(await generateOpenApiJson({ simulatedClock: true })) as Parameters<typeof openapiTS>[0]
  // Fields with a default stay optional in requests (the service fills them in).
  const ast = await openapiTS(document, { silent: true, defaultNonNullable: false })
  return HEADER + astToString(ast)
}
