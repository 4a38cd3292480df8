import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { FastifyRequest } from 'fastify'
import { ingestObservations, type IngestResult, type ObservationReport } from '../../domain/ingest.ts'
import type { AppContext } from '../context.ts'
import { batchLimit } from '../batchLimit.ts'
import { countUnknownFields, observationReceiptSchema } from '../../core/crawlReports.ts'
import { json, problems } from '../responses.ts'
import { postObservationsBodySchema } from '../schemas.ts'

interface ObservationsHooks {
  /** Called after every committed batch with its result and the items as posted (metrics). */
  onIngested?: (result: IngestResult, items: readonly ObservationReport[]) => void
}

/** The unknown fields of each request's items, counted before validation strips them. */
const unknownFieldsByRequest = new WeakMap<FastifyRequest, Record<string, number>>()

async function countItemsUnknownFields(request: FastifyRequest): Promise<void> {
  const body = request.body as { observations?: unknown } | null | undefined
  const items = body && typeof body === 'object' ? body.observations : undefined
  if (!Array.isArray(items)) return
  const counts = countUnknownFields(items)
  if (Object.keys(counts).length > 0) unknownFieldsByRequest.set(request, counts)
}

export const observationsRoutes: FastifyPluginAsyncZod<AppContext & ObservationsHooks> = async (app, ctx) => {
  app.post('/v1/observations', {
    config: { role: 'crawler', textCheckedPerItem: 'observations' },
    preValidation: [batchLimit('observations', ctx.maxBatchItems), countItemsUnknownFields],
    schema: {
      operationId: 'postObservations',
      tags: ['observations'],
      summary: 'Report crawls in a batch',
      description:
        'One transaction per batch: 200 means every accepted item is durably committed. accepted + duplicates + late + rejected = items. ' +
        'The first crawl of a page is its baseline; from the second on, changed or contentHash is required. ' +
        'A page’s items within one batch are applied in crawl-time order; crawls older than what is already stored are late, and are folded in by replaying the page’s history in crawl-time order (a changed flag always refers to the crawl before it in time). ' +
        'Fields an item carries that the service does not know are ignored and counted in unknownFields; the item is applied. ' +
        'LLN and SA use the empirical crawl rate p̂ = n/T (docs/math.md 1.2).',
      body: postObservationsBodySchema,
      response: {
        200: json('The batch is committed: what became of each item.', observationReceiptSchema),
        ...problems({ 400: 'The body does not match the schema; nothing was stored.', 409: true, 413: true }),
      },
    },
    handler: async (request) => {
      const result = await ingestObservations(ctx, request.body.observations)
      ctx.onIngested?.(result, request.body.observations)
      const unknownFields = unknownFieldsByRequest.get(request)
      return {
        accepted: result.accepted,
        duplicates: result.duplicates,
        late: result.late,
        rejected: result.rejected,
        ...(unknownFields === undefined ? {} : { unknownFields }),
        leaseNotCompleted: result.leaseNotCompleted,
      }
    },
  })
}
