import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import rateLimit from '@fastify/rate-limit'
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import type pg from 'pg'
import type { Clock } from './domain/clock.ts'
import type { Random } from './math/random.ts'
import { installAuth } from './http/auth.ts'
import { HttpProblem, installProblemHandlers, problem } from './http/problems.ts'
import { dropEmptyQueryValues } from './http/query.ts'
import { acceptJsonMediaTypes } from './http/json.ts'
import { hashApiKey } from './domain/apiKeys.ts'
import { healthRoutes } from './http/routes/health.ts'
import { installOps, opsRoutes } from './http/routes/ops.ts'
import { observationsRoutes } from './http/routes/observations.ts'
import { pagesRoutes } from './http/routes/pages.ts'
import { clockRoutes, settingsRoutes } from './http/routes/settings.ts'
import { scheduleRoutes } from './http/routes/schedule.ts'

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
  /** Requests per minute per API key (or client address) on /v1 routes; 0 or absent = unlimited. */
  rateLimitPerMinute?: number
  /** Wall-clock lifetime of the stats snapshot behind /metrics gauges and /v1/stats (default 5 s). */
  statsCacheMs?: number
}

export const API_VERSION = '1.0.0'

/** Registers plugins and routes. Never listens, never reads the environment (server.ts does). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger as FastifyBaseLogger } : { logger: false }),
    bodyLimit: deps.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
  }).withTypeProvider<ZodTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  installProblemHandlers(app)
  app.addHook('preValidation', dropEmptyQueryValues)
  acceptJsonMediaTypes(app)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'recrawl',
        version: API_VERSION,
        description:
          'Crawl scheduler: crawlers report crawls, recrawl learns each page’s change rate online, solves a bandwidth-constrained freshness ' +
          'optimisation and hands out due pages. Rates are per day; timestamps RFC 3339; errors RFC 9457 problem+json.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
      tags: [
        { name: 'pages' },
        { name: 'observations' },
        { name: 'settings' },
        { name: 'schedule' },
        { name: 'optimiser' },
        { name: 'hosts' },
        { name: 'operations' },
      ],
    },
    transform: jsonSchemaTransform,
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  if (deps.rateLimitPerMinute && deps.rateLimitPerMinute > 0) {
    await app.register(rateLimit, {
      max: deps.rateLimitPerMinute,
      timeWindow: 60_000,
      allowList: (request) => !request.url.startsWith('/v1/'),
      keyGenerator: (request) => {
        const auth = request.headers.authorization
        return auth ? `key:${hashApiKey(auth)}` : `ip:${request.ip}`
      },
      errorResponseBuilder: (_request, context) =>
        new HttpProblem(problem(429, `rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`), {
          'Retry-After': String(Math.ceil(context.ttl / 1000)),
        }),
    })
  }

  installAuth(app, { pool: deps.pool, loopbackOnly: deps.loopbackOnly, cacheMs: deps.authCacheMs ?? 10_000 })

  const ops = installOps(app, { pool: deps.pool, clock: deps.clock, logger: deps.logger, statsCacheMs: deps.statsCacheMs })

  const ctx = { pool: deps.pool, clock: deps.clock, random: deps.random, maxBatchItems: deps.maxBatchItems }
  await app.register(healthRoutes, { pool: deps.pool, databaseKind: deps.databaseKind })
  await app.register(pagesRoutes, ctx)
  await app.register(observationsRoutes, { ...ctx, onIngested: ops.metrics.onIngested })
  await app.register(settingsRoutes, ctx)
  if (deps.clock.advanceTo) await app.register(clockRoutes, ctx)
  await app.register(scheduleRoutes, { ...ctx, logger: deps.logger, onLease: ops.metrics.onLease, onOptimized: ops.metrics.onOptimized })
  await app.register(opsRoutes, ops)
  await app.ready()
  return app
}

