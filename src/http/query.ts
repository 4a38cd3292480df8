import type { FastifyRequest } from 'fastify'

/**
 * A preValidation hook: a query parameter given with an empty value (`?host=&cursor=`) counts as
 * absent, so a client that fills a URL template with empty strings gets the defaults instead of a 400.
 * Required parameters are still required: an empty `url=` is missing, and validation says so.
 */
export async function dropEmptyQueryValues(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined
  if (!query || typeof query !== 'object') return
  for (const key of Object.keys(query)) {
    if (query[key] === '') delete query[key]
  }
}
