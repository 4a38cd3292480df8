import type { z } from 'zod'
import { problemSchema } from './schemas.ts'

/**
 * Response declarations of the routes: each names its media type and carries a description, so the
 * OpenAPI document says what every status means, and Fastify serializes each body with its schema
 * (per media type: an error is checked against Problem when the reply is application/problem+json).
 */

const PROBLEM_MEDIA_TYPE = 'application/problem+json'

/** A JSON response body. */
export function json<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } }
}

/** A response header, as @fastify/swagger documents it (a JSON schema with a description). */
interface HeaderDoc {
  type: 'integer' | 'string'
  description: string
}

const RETRY_AFTER: HeaderDoc = { type: 'integer', description: 'Seconds to wait before retrying.' }

function problemResponse(description: string, headers?: Record<string, HeaderDoc>) {
  return { description, ...(headers ? { headers } : {}), content: { [PROBLEM_MEDIA_TYPE]: { schema: problemSchema } } }
}

/** The statuses a route may declare besides those every /v1 route has. */
type OwnStatus = 400 | 404 | 409 | 413 | 422

const DATA_EXCEPTION =
  'A value of the request, or one derived from it, is outside what the service can store or compute; nothing was changed.'

const OWN_DEFAULTS: Record<OwnStatus, string> = {
  400: 'Invalid input: errors lists every bad field; nothing was changed.',
  404: 'Not found.',
  409: 'Conflicts with a concurrent change; nothing was changed, retry the request.',
  413: 'More items than MAX_BATCH_ITEMS, or a body larger than BODY_LIMIT_BYTES; nothing was applied.',
  422: 'Well-formed but impossible; nothing was changed.',
}

/**
 * The problem responses of a /v1 route (every one needs a key): 400 (any request can be malformed:
 * broken JSON, text the service cannot store), 401, 403, 422 (a value the database cannot store or
 * compute, src/http/problems.ts), 429, 500 and 503, and the route's own statuses, each with the
 * default description or the one given.
 */
export function problems(own: Partial<Record<OwnStatus, string | true>> = {}) {
  const responses: Record<string, ReturnType<typeof problemResponse>> = {}
  const declared: Partial<Record<OwnStatus, string | true>> = { 400: true, 422: DATA_EXCEPTION, ...own }
  for (const [status, text] of Object.entries(declared)) {
    responses[status] = problemResponse(text === true ? OWN_DEFAULTS[Number(status) as OwnStatus] : text)
  }
  return {
    ...responses,
    401: problemResponse('No valid API key: missing, unknown or revoked.', {
      'WWW-Authenticate': {
        type: 'string',
        description: 'Bearer, with error="invalid_token" for an unknown or revoked key.',
      },
    }),
    403: problemResponse('The key’s role does not allow this route.'),
    429: problemResponse('More requests in a minute than RATE_LIMIT_PER_MINUTE allows (when set); nothing was done.', {
      'Retry-After': RETRY_AFTER,
    }),
    500: problemResponse('Internal error; the service log has the request id.'),
    503: problemResponse('The database is unavailable; nothing was changed, retry later.', {
      'Retry-After': RETRY_AFTER,
    }),
  }
}

/**
 * The problem responses of an open route (no key, so no 401): the statuses it answers itself, each with its own
 * description, and 429, 500 and 503 as on every /v1 route.
 */
export function openProblems(own: Partial<Record<OwnStatus | 403, string>>) {
  const shared = problems()
  const responses: Record<string, ReturnType<typeof problemResponse>> = {}
  for (const [status, text] of Object.entries(own)) responses[status] = problemResponse(text)
  return {
    ...responses,
    429: shared[429],
    500: shared[500],
    503: shared[503],
  }
}

/** 503 of /readyz: not ready, a problem whether migrations are pending or the database is unreachable. */
export function unavailable<T extends z.ZodType>(description: string, schema: T) {
  return { description, headers: { 'Retry-After': RETRY_AFTER }, content: { [PROBLEM_MEDIA_TYPE]: { schema } } }
}
