import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * JSON bodies: `application/json` and any JSON media type (`application/merge-patch+json`,
 * `application/vnd.x+json`) are parsed as JSON, with the protections of Fastify's own parser, so a PATCH
 * sent as a merge patch is not refused for its content type. An empty body is no body: a route that takes
 * none (POST /v1/optimize) accepts a client that always sends `Content-Type: application/json`, and a route
 * that needs one refuses it as a body that does not match its schema.
 */
export function acceptJsonMediaTypes(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  const parseUnlessEmpty = (
    request: FastifyRequest,
    body: string,
    done: (err: Error | null, body?: unknown) => void,
  ) => {
    if (body.trim() === '') done(null, undefined)
    else parse(request, body, done)
  }
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseUnlessEmpty)
  app.addContentTypeParser(/^application\/[\w.+-]+\+json(\s*;.*)?$/i, { parseAs: 'string' }, parseUnlessEmpty)
}
