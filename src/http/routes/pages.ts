import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  bulkPages,
  bulkPagesResultSchema,
  bulkPagesSchema,
  getPage,
  getPageForUrl,
  listPageViews,
  pageBatchResultSchema,
  pageListSchema,
  pageSchema,
  putPages,
  removePage,
} from '../../domain/pages.ts'
import { estimatesSchema, listPageObservations, observationListSchema, pageEstimates } from '../../domain/history.ts'
import type { AppContext } from '../context.ts'
import { batchLimit } from '../batchLimit.ts'
import { json, problems } from '../responses.ts'
import { listObservationsQuerySchema, listPagesQuerySchema, pageIdSchema, putPagesBodySchema } from '../schemas.ts'

const idParams = z.object({ id: pageIdSchema })
const NO_PAGE = 'No page with this id.'

export const pagesRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.put('/v1/pages', {
    config: { role: 'admin' },
    preValidation: batchLimit('pages', ctx.maxBatchItems),
    schema: {
      operationId: 'putPages',
      tags: ['pages'],
      summary: 'Register or update pages in bulk',
      description:
        'PUT semantics per page: importance (default 1) and bounds (default none) replace the stored ones. Any invalid item → 400, nothing written. ' +
        '`kind: "sitemap"` registers a sitemap as a scheduled item (docs/api.md "Sitemaps as scheduled items"); a URL registered with the other kind → 409, nothing written.',
      body: putPagesBodySchema,
      response: {
        200: json('Every page of the batch is written, with its rate and due time.', pageBatchResultSchema),
        ...problems({
          400: true,
          409: 'A URL of the batch is registered with another kind (page or sitemap), or a concurrent change; nothing was changed.',
          413: true,
        }),
      },
    },
    handler: async (request) => putPages(ctx, request.body.pages),
  })

  app.get('/v1/pages', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listPages',
      tags: ['pages'],
      summary: 'List pages (cursor paging by id)',
      description: 'Pages in id order, optionally of one host; follow nextCursor until it is null.',
      querystring: listPagesQuerySchema,
      response: { 200: json('The next pages.', pageListSchema), ...problems({ 400: 'Bad host, cursor or limit.' }) },
    },
    handler: async (request) =>
      listPageViews(ctx, {
        host: request.query.host,
        urlPrefix: request.query.urlPrefix,
        status: request.query.status,
        noisy: request.query.noisy,
        kind: request.query.kind,
        cursor: request.query.cursor ?? null,
        limit: request.query.limit,
      }),
  })

  app.post('/v1/pages/bulk', {
    config: { role: 'admin' },
    schema: {
      operationId: 'bulkPages',
      tags: ['pages'],
      summary: 'Count, delete or update the pages a filter takes',
      description:
        'One action on every page a filter (host, urlPrefix, status, noisy, kind; at least one) takes: count, delete (with their history) or update importance and bounds. dryRun: true only counts, for a confirmation that states the number (docs/api.md "Bulk actions").',
      body: bulkPagesSchema,
      response: {
        200: json('How many pages the filter took and how many were changed.', bulkPagesResultSchema),
        ...problems({ 400: true, 409: true }),
      },
    },
    handler: async (request) => bulkPages(ctx, request.body),
  })

  app.get('/v1/pages/by-url', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getPageByUrl',
      tags: ['pages'],
      summary: 'Read a page by URL (normalised before lookup)',
      description:
        'The URL is normalised as on registration (lower-case scheme and host, default port and fragment dropped) before the lookup.',
      querystring: z.object({ url: z.string().min(1).describe('Absolute http(s) URL of the page.') }),
      response: {
        200: json('The page.', pageSchema),
        ...problems({ 400: 'Missing or invalid url.', 404: 'No page with this URL.' }),
      },
    },
    handler: async (request) => getPageForUrl(ctx, request.query.url),
  })

  app.get('/v1/pages/:id', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getPage',
      tags: ['pages'],
      summary: 'Read a page with every online estimate',
      description: 'The page’s attributes, counts, every online estimate, rate, due time and lease.',
      params: idParams,
      response: { 200: json('The page.', pageSchema), ...problems({ 404: NO_PAGE }) },
    },
    handler: async (request) => getPage(ctx, request.params.id),
  })

  app.delete('/v1/pages/:id', {
    config: { role: 'admin' },
    schema: {
      operationId: 'deletePage',
      tags: ['pages'],
      summary: 'Delete a page and its history',
      description: 'Removes the page and its observation history.',
      params: idParams,
      response: { 204: z.null().describe('Deleted.'), ...problems({ 404: NO_PAGE }) },
    },
    handler: async (request, reply) => {
      await removePage(ctx, request.params.id)
      return reply.code(204).send(null)
    },
  })

  app.get('/v1/pages/:id/observations', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listPageObservations',
      tags: ['pages'],
      summary: "A page's observation history, newest first",
      description: 'Every stored crawl of the page, newest first; follow nextCursor (as before) until it is null.',
      params: idParams,
      querystring: listObservationsQuerySchema,
      response: {
        200: json('The next observations.', observationListSchema),
        ...problems({ 400: 'Bad before or limit.', 404: NO_PAGE }),
      },
    },
    handler: async (request) =>
      listPageObservations(ctx, request.params.id, {
        before: request.query.before ?? null,
        limit: request.query.limit,
      }),
  })

  app.get('/v1/pages/:id/estimates', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getPageEstimates',
      tags: ['pages'],
      summary: 'Every estimator the page history supports, with confidence intervals and the update distribution',
      description:
        'The online estimates from the page state, the exact MLE with its 95 % interval and exact moment matching from the stored history, ' +
        'the change-class probabilities, the local NHPP rate and the estimated age distribution of the update process (docs/math.md sections 1 and 2).',
      params: idParams,
      response: { 200: json('The estimates.', estimatesSchema), ...problems({ 404: NO_PAGE }) },
    },
    handler: async (request) => pageEstimates(ctx, request.params.id),
  })
}
