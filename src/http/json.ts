import type { FastifyInstance } from 'fastify'

/**
 * Bodies typed as any JSON media type (`application/merge-patch+json`, `application/vnd.x+json`)
 * are parsed as JSON, with the same protections as `application/json`, so a PATCH sent as a merge
 * patch is not refused for its content type.
 */
export function acceptJsonMediaTypes(app: FastifyInstance): void {
  app.addContentTypeParser(
    /^application\/[\w.+-]+\+json(\s*;.*)?$/i,
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  )
}
