import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { readiness } from '../../domain/health.ts'
import { json, unavailable } from '../responses.ts'
import { healthSchema, readinessSchema } from '../schemas.ts'

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
          'Not ready: migrations are pending (a Readiness body), or the database is unreachable (a problem).',
          readinessSchema,
        ),
      },
    },
    handler: async (_request, reply) => {
      const { pendingMigrations: pending } = await readiness(ctx)
      const ready = pending.length === 0
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not ready', database: ctx.databaseKind, pendingMigrations: pending })
    },
  })
}
