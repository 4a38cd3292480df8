import type { z } from 'zod'

/**
 * Examples in the OpenAPI document. A schema's `.meta({ examples: [...] })` becomes the JSON Schema `examples`
 * of its component: each example is typed as the schema's input, so one that no longer fits its schema does
 * not compile (and test/integration/openapiExamples.test.ts validates each against the document).
 */
declare module 'zod' {
  interface GlobalMeta {
    examples?: z.$input[]
  }
}

/** The instant the examples are set at, and times before and after it, as RFC 3339 text. */
export const EXAMPLE_NOW = '2026-03-02T12:00:00.000Z'
const EXAMPLE_NOW_MS = Date.parse(EXAMPLE_NOW)

/** EXAMPLE_NOW moved by `seconds` (negative: before it), as RFC 3339 text. */
export function exampleTime(seconds: number): string {
  return new Date(EXAMPLE_NOW_MS + seconds * 1000).toISOString()
}
