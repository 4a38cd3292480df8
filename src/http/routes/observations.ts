import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { ingestObservations } from '../../domain/ingest.ts'
import type { AppContext } from '../context.ts'
import { batchLimit } from '../batchLimit.ts'
import { postObservationsBodySchema, postObservationsResponseSchema, problemSchema } from '../schemas.ts'

export interface ObservationsHooks {
  /** Called after every committed batch (metrics). */
  onIngested?: (result: Awaited<ReturnType<typeof ingestObservations>>) => void
}

export const observationsRoutes: FastifyPluginAsyncZod<AppContext & ObservationsHooks> = async (app, ctx) => {
  app.post('/v1/observations', {
    config: { role: 'crawler' },
    preValidation: batchLimit('observations', ctx.maxBatchItems),
    schema: {
      tags: ['observations'],
      summary: 'Report crawls in a batch',
      description:
        'One transaction per batch: 200 means every accepted item is durably committed. accepted + duplicates + late + rejected = items. ' +
        'The first crawl of a page is its baseline; from the second on, changed or contentHash is required. ' +
        'A page’s items within one batch are applied in crawl-time order; only crawls older than what is already stored are late. ' +
        'LLN and SA use the empirical crawl rate p̂ = n/T (MATH.md 1.2).',
      body: postObservationsBodySchema,
      response: { 200: postObservationsResponseSchema, '4xx': problemSchema, '5xx': problemSchema },
    },
    handler: async (request) => {
      const result = await ingestObservations(ctx, request.body.observations)
      ctx.onIngested?.(result)
      return { accepted: result.accepted, duplicates: result.duplicates, late: result.late, rejected: result.rejected }
    },
  })
}
