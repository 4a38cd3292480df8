import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import rateLimit from '@fastify/rate-limit'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import type pg from 'pg'
import type { Clock } from './domain/clock.ts'
import type { Random } from './math/random.ts'
import { installAuth } from './http/auth.ts'
import {
  clientErrorHandler,
  frameworkErrorHandler,
  HttpProblem,
  installProblemHandlers,
  problem,
} from './http/problems.ts'
import { dropEmptyQueryValues } from './http/query.ts'
import { acceptJsonMediaTypes } from './http/json.ts'
import { refuseUnstorableText } from './http/text.ts'
import { swaggerOptions } from './http/openapiDocument.ts'
import { isOpenRateLimited, isRateLimited } from './http/rateLimited.ts'
import { hashApiKey } from './domain/apiKeys.ts'
import { healthRoutes } from './http/routes/health.ts'
import { installOps, opsRoutes } from './http/routes/ops.ts'
import { observationsRoutes } from './http/routes/observations.ts'
import { pagesRoutes } from './http/routes/pages.ts'
import { clockRoutes, settingsRoutes } from './http/routes/settings.ts'
import { hostsRoutes } from './http/routes/hosts.ts'
import { signalsRoutes } from './http/routes/signals.ts'
import { indexNowRoutes } from './http/routes/indexNow.ts'
import { leasesRoutes } from './http/routes/leases.ts'
import { optimizerRoutes } from './http/routes/optimizer.ts'
import { scheduleRoutes } from './http/routes/schedule.ts'
import { MS_PER_MINUTE, MS_PER_SECOND } from './math/units.ts'
import { DEFAULT_HTTP_TIMEOUTS } from './config.ts'

export interface AppDeps {
  pool: pg.Pool
  databaseKind: 'postgres' | 'embedded'
  clock: Clock
  random: Random
  /** A pino logger; omit for a silent app (tests). */
  logger?: Logger
  maxBatchItems: number
  bodyLimitBytes: number
  /** With no API keys configured, requests need no key only when this is true (loopback listener). */
  loopbackOnly: boolean
  /** Cache lifetime of API key lookups. */
  authCacheMs?: number
  /** Key changes from any process (Database.subscribe through watchApiKeyChanges): they empty the key caches at once. */
  keyChanges?: (onChange: () => void) => Promise<() => Promise<void>>
  /** Requests per minute per API key (or client address) on /v1 routes, and per address on /indexnow; 0 or absent = unlimited. */
  rateLimitPerMinute?: number
  /** Wall-clock lifetime of the stats snapshot behind /metrics gauges and /v1/stats (default 5 s). */
  statsCacheMs?: number
  /** Limits on slow and idle clients (default DEFAULT_HTTP_TIMEOUTS). */
  httpTimeouts?: HttpTimeouts
}

/** How long the HTTP server waits for clients, in ms (README "Configuration"). */
interface HttpTimeouts {
  /** The whole request, headers and body, must arrive within this; else 408 and the connection closes. */
  requestMs: number
  /** The request line and headers must arrive within this (at most requestMs). */
  headersMs: number
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number
}

/** Lifetime of cached API key lookups when AppDeps.authCacheMs is not given. */
const DEFAULT_AUTH_CACHE_MS = 10_000

/**
 * Longest path parameter the router accepts (longer → 414). A host name is at most 253 characters
 * (RFC 1035, in its ASCII form), and page ids are short; this leaves room for percent-encoding.
 */
const MAX_PARAM_LENGTH = 1024

/** Registers plugins and routes. Never listens, never reads the environment (server.ts does). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const timeouts = deps.httpTimeouts ?? DEFAULT_HTTP_TIMEOUTS
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger as FastifyBaseLogger } : { logger: false }),
    bodyLimit: deps.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      requestTimeout: timeouts.requestMs,
      headersTimeout: timeouts.headersMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // How often Node checks the request and header deadlines (its default, 30 s, would let a slow
      // client stay that much longer than its limit).
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  installProblemHandlers(app)
  // Closing: idle keep-alive connections are closed at once, and a request still in flight is answered with
  // `Connection: close`, so its connection ends with the answer instead of holding the close until the
  // keep-alive timeout.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  app.addHook('preValidation', dropEmptyQueryValues)
  app.addHook('preValidation', refuseUnstorableText)
  acceptJsonMediaTypes(app)

  await app.register(swagger, swaggerOptions({ simulatedClock: deps.clock.advanceTo !== undefined }))
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  if (deps.rateLimitPerMinute && deps.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      max: deps.rateLimitPerMinute,
      timeWindow: MS_PER_MINUTE,
      allowList: (request) => !isRateLimited(request.url),
      keyGenerator: (request) => {
        const auth = request.headers.authorization
        return auth && !isOpenRateLimited(request.url) ? `key:${hashApiKey(auth)}` : `ip:${request.ip}`
      },
      errorResponseBuilder: (_request, context) =>
        new HttpProblem(
          problem(
            429,
            `rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / MS_PER_SECOND)} s`,
          ),
          {
            'Retry-After': String(Math.ceil(context.ttl / MS_PER_SECOND)),
          },
        ),
    })
  }

  await installAuth(app, {
    pool: deps.pool,
    loopbackOnly: deps.loopbackOnly,
    cacheMs: deps.authCacheMs ?? DEFAULT_AUTH_CACHE_MS,
    keyChanges: deps.keyChanges,
  })

  const ops = installOps(app, {
    pool: deps.pool,
    clock: deps.clock,
    logger: deps.logger,
    statsCacheMs: deps.statsCacheMs,
  })

  const ctx = { pool: deps.pool, clock: deps.clock, random: deps.random, maxBatchItems: deps.maxBatchItems }
  await app.register(healthRoutes, { pool: deps.pool, databaseKind: deps.databaseKind })
  await app.register(pagesRoutes, ctx)
  await app.register(observationsRoutes, { ...ctx, onIngested: ops.metrics.onIngested })
  await app.register(settingsRoutes, ctx)
  if (deps.clock.advanceTo) await app.register(clockRoutes, ctx)
  await app.register(leasesRoutes, { ...ctx, onLease: ops.metrics.onLease })
  await app.register(scheduleRoutes, ctx)
  await app.register(optimizerRoutes, { ...ctx, onOptimized: ops.metrics.onOptimized })
  await app.register(hostsRoutes, ctx)
  await app.register(signalsRoutes, { ...ctx, onIngested: ops.metrics.onIngested })
  await app.register(indexNowRoutes, ctx)
  await app.register(opsRoutes, ops)
  await app.ready()
  return app
}
