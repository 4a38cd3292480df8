import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { putHostLimits, listHostLimits, removeHostLimits } from '../../domain/hosts.ts'
import { releaseLeaseEarly, schedulePreview, takeLease, type LeaseGrant } from '../../domain/leases.ts'
import { runOptimizer, type OptimizeResult } from '../../domain/optimize.ts'
import { InvalidInputError } from '../../domain/errors.ts'
import { parseTimestampMs } from '../../domain/ingest.ts'
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import { listLimitSchema, problemSchema } from '../schemas.ts'

const errors = { '4xx': problemSchema, '5xx': problemSchema }

export interface ScheduleHooks {
  logger?: Logger | undefined
  onLease?: (grant: LeaseGrant) => void
  onOptimized?: (result: OptimizeResult) => void
}

const leaseBody = z
  .object({
    worker: z.string().min(1).max(200).describe('Name of the crawler taking the lease (shown on leased pages).'),
    limit: z.number().int().min(1).max(1000).default(100).describe('Most pages to hand out.'),
    leaseSeconds: z.number().int().min(5).max(86_400).default(300).describe('Lease lifetime; unfinished pages return to the pool after it.'),
    hosts: z.array(z.string().min(1)).max(1000).optional().describe('Only pages of these hosts.'),
  })
  .strict()

const leaseResponse = z.object({
  leaseId: z.string(),
  expiresAt: z.string(),
  pages: z.array(z.object({ id: z.string(), url: z.string(), host: z.string(), dueAt: z.string() })),
})

const hostLimits = z
  .object({
    maxCrawlsPerDay: z
      .number()
      .min(0)
      .finite()
      .nullable()
      .optional()
      .describe('Cap on the host’s total crawl rate (MATH.md 3.2); null or absent = none.'),
    minDelaySeconds: z
      .number()
      .min(0)
      .max(86_400)
      .nullable()
      .optional()
      .describe('Minimum time between two leased pages of the host; null or absent = none.'),
  })
  .strict()
  .refine((b) => b.maxCrawlsPerDay !== undefined || b.minDelaySeconds !== undefined, {
    message: 'give maxCrawlsPerDay, minDelaySeconds or both (null = no limit)',
  })
  .describe('PUT semantics: both limits are replaced; an absent one is null.')
const hostView = z.object({
  host: z.string(),
  maxCrawlsPerDay: z.number().nullable(),
  minDelaySeconds: z.number().nullable(),
  pages: z.number().int(),
})

export const optimizeResponseSchema = z.object({
  lambda: z.number().describe('The budget’s Lagrange multiplier, in importance × per-day units.'),
  pages: z.number().int(),
  pagesCrawled: z.number().int().describe('Pages with a rate above their lower bound.'),
  budgetCrawlsPerDay: z.number(),
  expectedFreshness: z.number().describe('Σμ·f(ρ)/Σμ under the current estimates.'),
  durationMs: z.number(),
  pagesRetimed: z.number().int().describe('Pages whose rate changed and were re-timed.'),
})

export const scheduleRoutes: FastifyPluginAsyncZod<AppContext & ScheduleHooks> = async (app, ctx) => {
  app.post('/v1/leases', {
    config: { role: 'crawler' },
    schema: {
      tags: ['schedule'],
      summary: 'Take due pages to crawl',
      description:
        'Pages whose dueAt has passed (a page’s nextCrawlAt, or sooner while recrawl explores or probes it), most overdue first (higher importance first when tied). Concurrent callers never receive the same page; a host with ' +
        'minDelaySeconds gets at most one page per delay. Report each crawl with the leaseId to complete it; unfinished pages return to the pool when the lease expires.',
      body: leaseBody,
      response: { 200: leaseResponse, ...errors },
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
      tags: ['schedule'],
      summary: 'Release a lease early',
      params: z.object({ leaseId: z.uuid().describe('leaseId from POST /v1/leases') }),
      response: { 200: z.object({ released: z.number().int() }), ...errors },
    },
    handler: async (request) => releaseLeaseEarly(ctx, request.params.leaseId),
  })

  app.get('/v1/schedule', {
    config: { role: 'reader' },
    schema: {
      tags: ['schedule'],
      summary: 'Upcoming crawls in due order (unleased pages)',
      querystring: z.object({
        limit: listLimitSchema,
        until: z.string().optional().describe('RFC 3339: only crawls due up to this time.'),
      }),
      response: {
        200: z.object({
          items: z.array(z.object({ id: z.string(), url: z.string(), host: z.string(), dueAt: z.string(), crawlsPerDay: z.number().nullable() })),
        }),
        ...errors,
      },
    },
    handler: async (request) => {
      let until: Date | null = null
      if (request.query.until !== undefined) {
        const ms = parseTimestampMs(request.query.until)
        if (ms === null) throw new InvalidInputError('until is not an RFC 3339 timestamp', [{ path: '/querystring/until', message: 'not an RFC 3339 timestamp' }])
        until = new Date(ms)
      }
      return schedulePreview(ctx, { limit: request.query.limit, until })
    },
  })

  app.post('/v1/optimize', {
    config: { role: 'admin' },
    schema: {
      tags: ['optimiser'],
      summary: 'Solve every page’s crawl rate now',
      description: 'Waits for a run in progress on another replica. Bounds whose sum exceeds the budget → 422.',
      response: { 200: optimizeResponseSchema, ...errors },
    },
    handler: async () => {
      const result = (await runOptimizer({ ...ctx, logger: ctx.logger }, { trigger: 'api', wait: true }))!
      ctx.onOptimized?.(result)
      return result
    },
  })

  app.get('/v1/hosts', {
    config: { role: 'reader' },
    schema: { tags: ['hosts'], summary: 'Hosts with politeness limits', response: { 200: z.object({ hosts: z.array(hostView) }), ...errors } },
    handler: async () => listHostLimits(ctx.pool),
  })

  app.put('/v1/hosts/:host', {
    config: { role: 'admin' },
    schema: {
      tags: ['hosts'],
      summary: 'Set a host’s limits',
      description: 'maxCrawlsPerDay applies from the next optimiser run; minDelaySeconds from the next lease.',
      params: z.object({ host: z.string().min(1) }),
      body: hostLimits,
      response: { 200: hostView, ...errors },
    },
    handler: async (request) =>
      putHostLimits(ctx.pool, request.params.host, {
        maxCrawlsPerDay: request.body.maxCrawlsPerDay ?? null,
        minDelaySeconds: request.body.minDelaySeconds ?? null,
      }),
  })

  app.delete('/v1/hosts/:host', {
    config: { role: 'admin' },
    schema: {
      tags: ['hosts'],
      summary: 'Remove a host’s limits',
      params: z.object({ host: z.string().min(1) }),
      response: { 204: z.null(), ...errors },
    },
    handler: async (request, reply) => {
      await removeHostLimits(ctx.pool, request.params.host)
      return reply.code(204).send(null)
    },
  })
}
