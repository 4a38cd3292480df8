import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod'
import { ConflictError, InvalidInputError, NotFoundError, UnprocessableError, type FieldProblem } from '../domain/errors.ts'

/** RFC 9457 problem details; `type` names the kind so clients can branch on it. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  errors?: FieldProblem[]
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

const SLUGS: Record<number, string> = {
  400: 'invalid-input',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  409: 'conflict',
  413: 'too-large',
  415: 'unsupported-media-type',
  422: 'unprocessable',
  429: 'rate-limited',
  500: 'internal',
  503: 'unavailable',
}

export function problem(status: number, detail: string, errors?: FieldProblem[]): Problem {
  return {
    type: `https://recrawl.dev/problems/${SLUGS[status] ?? 'error'}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    ...(errors && errors.length > 0 ? { errors } : {}),
  }
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  return reply.code(p.status).type('application/problem+json').send(p)
}

/** An HTTP-level refusal raised by hooks (auth, batch size); carries its own status. */
export class HttpProblem extends Error {
  constructor(readonly problem: Problem, readonly headers: Record<string, string> = {}) {
    super(problem.detail)
    this.name = 'HttpProblem'
  }
}

/** Connection-level database failures: the request may succeed later, so 503 + Retry-After. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300'])
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'])

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown }
  if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATES.has(e.code) || UNAVAILABLE_ERRNOS.has(e.code))) return true
  const message = typeof e.message === 'string' ? e.message : ''
  return /timeout exceeded when trying to connect|Connection terminated|connection .*closed|Client has encountered a connection error/i.test(message)
}

/** Maps every error to problem+json: validation → 400 with each field, domain errors by class, DB outages → 503. */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof HttpProblem) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
      return sendProblem(reply, err.problem)
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const where = err.validationContext ?? 'request'
      const errors = err.validation.map((v) => ({
        path: `/${where}${v.instancePath === '/' ? '' : (v.instancePath ?? '')}`,
        message: v.message ?? 'invalid',
      }))
      return sendProblem(reply, problem(400, `the ${where} does not match the schema; nothing was changed`, errors))
    }
    if (err instanceof InvalidInputError) return sendProblem(reply, problem(400, err.message, err.errors))
    if (err instanceof NotFoundError) return sendProblem(reply, problem(404, err.message))
    if (err instanceof ConflictError) return sendProblem(reply, problem(409, err.message))
    if (err instanceof UnprocessableError) return sendProblem(reply, problem(422, err.message))
    if ((err as { code?: unknown }).code === '23505') {
      // A unique constraint lost a race with a concurrent request: the same request may succeed now.
      request.log.warn({ err }, 'unique violation')
      return sendProblem(reply, problem(409, 'the request conflicts with a concurrent change; nothing was changed, retry it'))
    }
    if (isDatabaseUnavailable(err)) {
      request.log.error({ err }, 'database unavailable')
      reply.header('Retry-After', '5')
      return sendProblem(reply, problem(503, 'the database is unavailable; retry later (nothing was changed)'))
    }
    if (isResponseSerializationError(err)) {
      request.log.error({ err, cause: err.cause }, 'response does not match its schema')
      return sendProblem(reply, problem(500, 'internal error'))
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      // API.md: a body that is not JSON is bad input (400), whatever it claims to be.
      return sendProblem(
        reply,
        problem(400, `the body must be JSON (Content-Type: application/json), not ${request.headers['content-type'] ?? 'untyped'}; nothing was changed`, [
          { path: '/body', message: 'not JSON' },
        ]),
      )
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON (400), body too large (413), wrong content type (415).
      const detail =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'the request body is larger than the limit (BODY_LIMIT_BYTES); nothing was changed'
          : err.message
      return sendProblem(reply, problem(status, detail))
    }
    request.log.error({ err }, 'request failed')
    return sendProblem(reply, problem(500, 'internal error; see the service log for request id ' + request.id))
  })

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, problem(404, `no route ${request.method} ${request.url.split('?')[0]}`)),
  )
}
