import { STATUS_CODES, maxHeaderSize } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  PayloadTooLargeError,
  NotFoundError,
  UnprocessableError,
  type FieldProblem,
} from '../core/errors.ts'
import type { problemSchema } from './schemas.ts'
import { MultiplierSearchError } from '../math/optimizer/index.ts'
import { isDatabaseUnavailable } from '../domain/health.ts'

/** RFC 9457 problem details; `type` names the kind so clients can branch on it. */
type Problem = z.infer<typeof problemSchema>

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

const SLUGS: Record<number, string> = {
  400: 'invalid-input',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  408: 'request-timeout',
  409: 'conflict',
  413: 'too-large',
  414: 'uri-too-long',
  415: 'unsupported-media-type',
  422: 'unprocessable',
  429: 'rate-limited',
  431: 'headers-too-large',
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

function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  return reply.code(p.status).type('application/problem+json').send(p)
}

/** An HTTP-level refusal raised by hooks (auth, batch size); carries its own status. */
export class HttpProblem extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.detail)
    this.name = 'HttpProblem'
  }
}

/** Seconds a client is asked to wait before retrying a request the database could not serve. */
const DATABASE_RETRY_AFTER_SECONDS = 5

/** Why the database could not serve the request, for the 503's detail. */
function unavailableDetail(err: unknown): string {
  const code = (err as { code?: unknown }).code
  if (code === '57014') return 'a database statement took longer than its limit (DATABASE_STATEMENT_TIMEOUT_MS)'
  if (code === '55P03')
    return 'the request waited too long for a lock held by a concurrent change (DATABASE_LOCK_TIMEOUT_MS)'
  if (code === '53300') return 'the database has no free connection slot'
  if (code === '3D000') return 'the database does not exist'
  if (code === '55000' || code === '57P01' || code === '57P03')
    return 'the database is not accepting connections (shut down, starting or closed by its administrator)'
  return 'the database is unavailable'
}

/** A Postgres data exception (SQLSTATE class 22: a value out of range, malformed or not representable). */
function isDataException(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown }
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && typeof message === 'string'
}

/**
 * Maps every error to problem+json: validation → 400 with each field, domain errors by class, database
 * data exceptions → 422, DB outages → 503.
 */
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
    if (err instanceof ForbiddenError) return sendProblem(reply, problem(403, err.message))
    if (err instanceof NotFoundError) return sendProblem(reply, problem(404, err.message))
    if (err instanceof ConflictError) return sendProblem(reply, problem(409, err.message))
    if (err instanceof UnprocessableError) return sendProblem(reply, problem(422, err.message))
    if (err instanceof PayloadTooLargeError) return sendProblem(reply, problem(413, err.message))
    if ((err as { code?: unknown }).code === '23505') {
      // A unique constraint lost a race with a concurrent request: the same request may succeed now.
      request.log.warn({ err }, 'unique violation')
      return sendProblem(
        reply,
        problem(409, 'the request conflicts with a concurrent change; nothing was changed, retry it'),
      )
    }
    if (err instanceof MultiplierSearchError) {
      // The settings ask for a solution outside what the optimiser can represent (docs/math.md section 3).
      return sendProblem(reply, problem(422, `the optimiser cannot solve these settings: ${err.message}`))
    }
    if (isDataException(err)) {
      // The last line of defence: input validation (docs/api.md "Input limits") should have refused the value.
      request.log.warn({ err }, 'database data exception')
      const { code, message } = err as unknown as { code: string; message: string }
      return sendProblem(
        reply,
        problem(
          422,
          `a value of this request, or one derived from it, is outside what the database can store or compute (SQLSTATE ${code}: ${message.slice(0, 200)}); nothing was changed`,
        ),
      )
    }
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ err }, 'database unavailable')
      reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
      return sendProblem(reply, problem(503, `${unavailableDetail(err)}; retry later`))
    }
    if (isResponseSerializationError(err)) {
      request.log.error({ err, cause: err.cause }, 'response does not match its schema')
      return sendProblem(reply, problem(500, 'internal error'))
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      // docs/api.md: a body that is not JSON is bad input (400), whatever it claims to be.
      return sendProblem(
        reply,
        problem(
          400,
          `the body must be JSON (Content-Type: application/json), not ${request.headers['content-type'] ?? 'untyped'}; nothing was changed`,
          [{ path: '/body', message: 'not JSON' }],
        ),
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

/**
 * Fastify's own routing errors (the `frameworkErrors` server option), answered as problem+json like
 * every other error: a path that does not decode (`/v1/pages/%zz`) is 400, a path parameter longer
 * than the router's limit is 414.
 */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_BAD_URL') {
    void sendProblem(
      reply,
      problem(400, 'the request path is not valid percent-encoding', [
        { path: '/params', message: 'not a valid URL component' },
      ]),
    )
    return
  }
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendProblem(
      reply,
      problem(414, 'a path parameter is longer than the server accepts', [{ path: '/params', message: 'too long' }]),
    )
    return
  }
  request.log.error({ err }, 'routing failed')
  void sendProblem(reply, problem(500, 'internal error; see the service log for request id ' + request.id))
}

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (the `clientErrorHandler` server
 * option): malformed HTTP (400), headers over the size limit (431), a request that did not arrive
 * within the time limits (408). Answered as problem+json on the raw socket, which is then closed.
 */
export function clientErrorHandler(
  this: { log: FastifyBaseLogger },
  err: Error & { code?: string },
  socket: Socket,
): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  let status = 400
  let detail = `the request is not valid HTTP (${err.code ?? 'parse error'})`
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408
    detail =
      'the request did not arrive in time (headers within HTTP_HEADERS_TIMEOUT_MS, the whole request within HTTP_REQUEST_TIMEOUT_MS); the connection is closed'
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431
    detail = `the request line and headers are larger than ${maxHeaderSize} bytes`
  }
  this.log.debug({ err, status }, 'client error')
  // As Node does: write only when no response has begun on this socket, else the answer would corrupt it.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(problem(status, detail))
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(err)
}
