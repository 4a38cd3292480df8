import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  extendLeaseFor,
  leaseExtendedSchema,
  leaseExtensionSchema,
  leaseGrantSchema,
  leaseOverview,
  leaseOverviewQuerySchema,
  leaseOverviewSchema,
  leaseReleaseSchema,
  leaseRequestSchema,
  pagesReleasedSchema,
  pagesReleaseSchema,
  releaseLeasedPages,
  releaseLeaseEarly,
  takeLease,
  type LeaseGrant,
} from '../../domain/leases.ts'
import type { AppContext } from '../context.ts'
import { json, problems } from '../responses.ts'

interface LeasesHooks {
  /** Called with every lease granted (metrics). */
  onLease?: (grant: LeaseGrant) => void
}

/** The leases of due pages: take, release, extend, and give single pages back (docs/api.md "Schedule"). */
export const leasesRoutes: FastifyPluginAsyncZod<AppContext & LeasesHooks> = async (app, ctx) => {
  app.post('/v1/leases', {
    config: { role: 'crawler' },
    schema: {
      operationId: 'takeLease',
      tags: ['schedule'],
      summary: 'Take due pages to crawl',
      description:
        'Pages whose dueAt has passed (a page’s nextCrawlAt, or sooner while recrawl explores or probes it), most overdue first (higher importance first when tied). Concurrent callers never receive the same page; a host with ' +
        'minDelaySeconds gets at most one page per delay. Report each crawl with the leaseId to complete it; unfinished pages return to the pool when the lease expires.',
      body: leaseRequestSchema,
      response: {
        200: json('The lease and its pages (none when nothing is due).', leaseGrantSchema),
        ...problems({ 400: true }),
      },
    },
    handler: async (request) => {
      const grant = await takeLease(ctx, request.body)
      ctx.onLease?.(grant)
      return {
        leaseId: grant.leaseId,
        expiresAt: grant.expiresAt,
        pages: grant.pages,
        limitedBy: grant.limitedBy,
        retryAfterSeconds: grant.retryAfterSeconds,
        nextDueAt: grant.nextDueAt,
        pacedHosts: grant.pacedHosts,
      }
    },
  })

  app.get('/v1/lease-overview', {
    config: { role: 'reader' },
    schema: {
      operationId: 'leaseOverview',
      tags: ['schedule'],
      summary: 'Leased pages by worker',
      description:
        'Each worker’s leases, pages and expiry range, with the pages it holds past their lease’s expiry; those workers come first (docs/api.md "Lease overview").',
      querystring: leaseOverviewQuerySchema,
      response: { 200: json('The workers.', leaseOverviewSchema), ...problems({ 400: 'Bad limit or hours.' }) },
    },
    handler: async (request) => leaseOverview(ctx, request.query),
  })

  app.delete('/v1/leases/:leaseId', {
    config: { role: 'crawler' },
    schema: {
      operationId: 'releaseLease',
      tags: ['schedule'],
      summary: 'Release a lease early',
      description: 'The lease’s pages not yet reported return to the pool at once.',
      params: z.object({ leaseId: z.uuid().describe('leaseId from POST /v1/leases') }),
      response: {
        200: json('The lease is released.', leaseReleaseSchema),
        ...problems({
          400: 'leaseId is not a UUID.',
          404: 'No active lease with this id (completed, expired or unknown).',
        }),
      },
    },
    handler: async (request) => releaseLeaseEarly(ctx, request.params.leaseId),
  })

  app.patch('/v1/leases/:leaseId', {
    config: { role: 'crawler' },
    schema: {
      operationId: 'extendLease',
      tags: ['schedule'],
      summary: 'Extend a lease (heartbeat)',
      description:
        'The pages the lease still holds (not yet reported, not expired) are held until now + leaseSeconds. Send it before the lease expires; an expired lease cannot be extended (its pages may have gone to another worker).',
      params: z.object({ leaseId: z.uuid().describe('leaseId from POST /v1/leases') }),
      body: leaseExtensionSchema,
      response: {
        200: json('The lease is extended.', leaseExtendedSchema),
        ...problems({
          400: 'leaseId is not a UUID, or the body is invalid.',
          404: 'No active lease with this id (completed, expired or unknown).',
        }),
      },
    },
    handler: async (request) => extendLeaseFor(ctx, request.params.leaseId, request.body),
  })

  app.post('/v1/leases/:leaseId/release', {
    config: { role: 'crawler' },
    schema: {
      operationId: 'releaseLeasePages',
      tags: ['schedule'],
      summary: 'Give single pages of a lease back without crawling them',
      description:
        'retry: the page stays due (or is due after retryAfterSeconds), for another worker or later; skip: this round is skipped and the page is due again one period from now. Pages the lease does not hold are listed in notHeld; the others are released.',
      params: z.object({ leaseId: z.uuid().describe('leaseId from POST /v1/leases') }),
      body: pagesReleaseSchema,
      response: {
        200: json('The pages the lease held are released.', pagesReleasedSchema),
        ...problems({ 400: 'leaseId is not a UUID, or the body is invalid.' }),
      },
    },
    handler: async (request) => releaseLeasedPages(ctx, request.params.leaseId, request.body),
  })
}
