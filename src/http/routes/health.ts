import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { pendingMigrations } from '../../store/migrate.ts'
import { healthResponseSchema, problemSchema, readyResponseSchema } from '../schemas.ts'

export const healthRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; databaseKind: 'postgres' | 'embedded' }> = async (app, ctx) => {
  app.get('/healthz', {
    schema: { tags: ['operations'], summary: 'Liveness: the process serves requests', response: { 200: healthResponseSchema } },
    handler: async () => ({ status: 'ok' as const }),
  })

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      summary: 'Readiness: database reachable and every migration applied',
      response: { 200: readyResponseSchema, 503: readyResponseSchema.or(problemSchema) },
    },
    handler: async (_request, reply) => {
      const pending = await pendingMigrations(ctx.pool)
      const ready = pending.length === 0
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', database: ctx.databaseKind, pendingMigrations: pending })
    },
  })
}
