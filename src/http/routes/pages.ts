import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { getPage, getPageForUrl, listPageViews, putPages, removePage } from '../../domain/pages.ts'
import { listPageObservations, pageEstimates } from '../../domain/history.ts'
import type { AppContext } from '../context.ts'
import { batchLimit } from '../batchLimit.ts'
import {
  listObservationsQuerySchema,
  listObservationsResponseSchema,
  listPagesQuerySchema,
  listPagesResponseSchema,
  pageEstimatesResponseSchema,
  pageIdSchema,
  pageSchema,
  problemSchema,
  putPagesBodySchema,
  putPagesResponseSchema,
} from '../schemas.ts'

const errors = { '4xx': problemSchema, '5xx': problemSchema }
const idParams = z.object({ id: pageIdSchema })

export const pagesRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.put('/v1/pages', {
    config: { role: 'admin' },
    preValidation: batchLimit('pages', ctx.maxBatchItems),
    schema: {
      tags: ['pages'],
      summary: 'Register or update pages in bulk',
      description: 'PUT semantics per page: importance (default 1) and bounds (default none) replace the stored ones. Any invalid item → 400, nothing written.',
      body: putPagesBodySchema,
      response: { 200: putPagesResponseSchema, ...errors },
    },
    handler: async (request) => putPages(ctx, request.body.pages),
  })

  app.get('/v1/pages', {
    config: { role: 'reader' },
    schema: {
      tags: ['pages'],
      summary: 'List pages (cursor paging by id)',
      querystring: listPagesQuerySchema,
      response: { 200: listPagesResponseSchema, ...errors },
    },
    handler: async (request) =>
      listPageViews(ctx, { host: request.query.host ?? null, cursor: request.query.cursor ?? null, limit: request.query.limit }),
  })

  app.get('/v1/pages/by-url', {
    config: { role: 'reader' },
    schema: {
      tags: ['pages'],
      summary: 'Read a page by URL (normalised before lookup)',
      querystring: z.object({ url: z.string().min(1) }),
      response: { 200: pageSchema, ...errors },
    },
    handler: async (request) => getPageForUrl(ctx, request.query.url),
  })

  app.get('/v1/pages/:id', {
    config: { role: 'reader' },
    schema: { tags: ['pages'], summary: 'Read a page with every online estimate', params: idParams, response: { 200: pageSchema, ...errors } },
    handler: async (request) => getPage(ctx, request.params.id),
  })

  app.delete('/v1/pages/:id', {
    config: { role: 'admin' },
    schema: {
      tags: ['pages'],
      summary: 'Delete a page and its history',
      params: idParams,
      response: { 204: z.null().describe('Deleted.'), ...errors },
    },
    handler: async (request, reply) => {
      await removePage(ctx, request.params.id)
      return reply.code(204).send(null)
    },
  })

  app.get('/v1/pages/:id/observations', {
    config: { role: 'reader' },
    schema: {
      tags: ['pages'],
      summary: "A page's observation history, newest first",
      params: idParams,
      querystring: listObservationsQuerySchema,
      response: { 200: listObservationsResponseSchema, ...errors },
    },
    handler: async (request) =>
      listPageObservations(ctx.pool, request.params.id, { before: request.query.before ?? null, limit: request.query.limit }),
  })

  app.get('/v1/pages/:id/estimates', {
    config: { role: 'reader' },
    schema: {
      tags: ['pages'],
      summary: 'Every estimator the page history supports, with confidence intervals and the update distribution',
      params: idParams,
      response: { 200: pageEstimatesResponseSchema, ...errors },
    },
    handler: async (request) => pageEstimates(ctx.pool, request.params.id, ctx.clock.nowMs()),
  })
}
