import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  hostLimitsSchema,
  hostListSchema,
  hostSchema,
  listHostLimits,
  putHostLimits,
  removeHostLimits,
} from '../../domain/hosts.ts'
import {
  leaseGrantSchema,
  leaseReleaseSchema,
  leaseExtensionSchema,
  leaseExtendedSchema,
  pagesReleaseSchema,
  pagesReleasedSchema,
  extendLeaseFor,
  releaseLeasedPages,
  leaseRequestSchema,
  releaseLeaseEarly,
  schedulePreview,
  scheduleSchema,
  takeLease,
  type LeaseGrant,
} from '../../domain/leases.ts'
import { optimizerRunSchema, runOptimizer, type OptimizeResult } from '../../domain/optimize.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { readTimestamp } from '../../core/timestamps.ts'
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import { json, problems } from '../responses.ts'
import { listLimitSchema } from '../schemas.ts'

interface ScheduleHooks {
  logger?: Logger | undefined
  onLease?: (grant: LeaseGrant) => void
  onOptimized?: (result: OptimizeResult) => void
}

const hostParams = z.object({
  host: z.string().min(1).describe('Host name as pages carry it (lower case, with a port when not the default).'),
})

export const scheduleRoutes: FastifyPluginAsyncZod<AppContext & ScheduleHooks> = async (app, ctx) => {
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
      return { leaseId: grant.leaseId, expiresAt: grant.expiresAt, pages: grant.pages }
    },
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

  app.get('/v1/schedule', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getSchedule',
      tags: ['schedule'],
      summary: 'Upcoming crawls in due order (unleased pages)',
      description: 'What leases would hand out next, without leasing anything.',
      querystring: z.object({
        limit: listLimitSchema,
        until: z.string().optional().describe('RFC 3339: only crawls due up to this time.'),
      }),
      response: { 200: json('The upcoming crawls.', scheduleSchema), ...problems({ 400: 'Bad limit or until.' }) },
    },
    handler: async (request) => {
      let until: Date | null = null
      if (request.query.until !== undefined) {
        const read = readTimestamp(request.query.until)
        if ('error' in read)
          throw new InvalidInputError(`until is ${read.error}`, [{ path: '/querystring/until', message: read.error }])
        until = new Date(read.ms)
      }
      return schedulePreview(ctx, { limit: request.query.limit, until })
    },
  })

  app.post('/v1/optimize', {
    config: { role: 'admin' },
    schema: {
      operationId: 'runOptimizer',
      tags: ['optimiser'],
      summary: 'Solve every page’s crawl rate now',
      description: 'Waits for a run in progress on another replica. Bounds whose sum exceeds the budget → 422.',
      response: {
        200: json('The run’s outcome; every page’s rate and due time are stored.', optimizerRunSchema),
        ...problems({
          422: 'The pages’ lower bounds need more than the budget or a host’s cap, or the optimiser cannot represent the solution; nothing was changed.',
        }),
      },
    },
    handler: async () => {
      const result = (await runOptimizer(ctx, { trigger: 'api', wait: true }))!
      ctx.onOptimized?.(result)
      return result
    },
  })

  app.get('/v1/hosts', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listHosts',
      tags: ['hosts'],
      summary: 'Hosts with politeness limits',
      description: 'Every host that has a limit, with its page count.',
      response: { 200: json('The hosts.', hostListSchema), ...problems() },
    },
    handler: async () => listHostLimits(ctx),
  })

  app.put('/v1/hosts/:host', {
    config: { role: 'admin' },
    schema: {
      operationId: 'putHost',
      tags: ['hosts'],
      summary: 'Set a host’s limits',
      description: 'maxCrawlsPerDay applies from the next optimiser run; minDelaySeconds from the next lease.',
      params: hostParams,
      body: hostLimitsSchema,
      response: {
        200: json('The host with its new limits.', hostSchema),
        ...problems({ 400: true, 409: true, 413: true }),
      },
    },
    handler: async (request) =>
      putHostLimits(ctx, request.params.host, {
        maxCrawlsPerDay: request.body.maxCrawlsPerDay ?? null,
        minDelaySeconds: request.body.minDelaySeconds ?? null,
      }),
  })

  app.delete('/v1/hosts/:host', {
    config: { role: 'admin' },
    schema: {
      operationId: 'deleteHost',
      tags: ['hosts'],
      summary: 'Remove a host’s limits',
      description: 'The host’s pages keep their rates until the next optimiser run; leases stop spacing them at once.',
      params: hostParams,
      response: {
        204: z.null().describe('The limits are removed.'),
        ...problems({ 400: 'Not a host name.', 404: 'The host has no limits.' }),
      },
    },
    handler: async (request, reply) => {
      await removeHostLimits(ctx, request.params.host)
      return reply.code(204).send(null)
    },
  })
}
