import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { readiness } from '../../domain/health.ts'
import { json, unavailable } from '../responses.ts'
import { problem } from '../problems.ts'
import { healthSchema, notReadySchema, readinessSchema } from '../schemas.ts'

/** How long a load balancer should wait before asking again while migrations are pending. */
const READYZ_RETRY_AFTER_SECONDS = 5

export const healthRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; databaseKind: 'postgres' | 'embedded' }> = async (
  app,
  ctx,
) => {
  app.get('/healthz', {
    schema: {
      operationId: 'healthz',
      tags: ['operations'],
      summary: 'Liveness: the process serves requests',
      description: 'Open (no key). Touches no database.',
      response: { 200: json('The process is alive.', healthSchema) },
    },
    handler: async () => ({ status: 'ok' as const }),
  })

  app.get('/readyz', {
    schema: {
      operationId: 'readyz',
      tags: ['operations'],
      summary: 'Readiness: database reachable and every migration applied',
      description: 'Open (no key). Load balancers send traffic only while this is 200.',
      response: {
        200: json('Ready: the database is reachable and fully migrated.', readinessSchema),
        503: unavailable(
          'Not ready: migrations are pending (pendingMigrations lists them), or the database is unreachable.',
          notReadySchema,
        ),
      },
    },
    handler: async (_request, reply) => {
      const { pendingMigrations: pending } = await readiness(ctx)
      if (pending.length === 0) return { status: 'ready' as const, database: ctx.databaseKind, pendingMigrations: [] }
      return reply
        .code(503)
        .type('application/problem+json')
        .header('Retry-After', String(READYZ_RETRY_AFTER_SECONDS))
        .send({
          ...problem(503, `${pending.length} migration(s) not yet applied: ${pending.join(', ')}.`),
          database: ctx.databaseKind,
          pendingMigrations: pending,
        })
    },
  })
}
