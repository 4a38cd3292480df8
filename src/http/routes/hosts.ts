import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  hostLimitsSchema,
  hostListSchema,
  hostOverviewListSchema,
  hostOverviewQuerySchema,
  hostSchema,
  listHostLimits,
  listHostOverview,
  putHostLimits,
  removeHostLimits,
} from '../../domain/hosts.ts'
import type { AppContext } from '../context.ts'
import { json, problems } from '../responses.ts'

export const hostParams = z.object({
  host: z.string().min(1).describe('Host name as pages carry it (lower case, with a port when not the default).'),
})

/** The hosts' politeness limits: list, set, remove. */
export const hostsRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
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

  app.get('/v1/host-overview', {
    config: { role: 'reader' },
    schema: {
      operationId: 'listHostOverview',
      tags: ['hosts'],
      summary: 'Per-host pages, plan, limits, backoff and failures',
      description:
        'Every host that has pages, sorted and paged by the server (docs/api.md "Host overview"); follow nextCursor until it is null. The numbers are computed on the call; the order is that of per-host sort values refreshed after every optimiser run.',
      querystring: hostOverviewQuerySchema,
      response: {
        200: json('The next hosts.', hostOverviewListSchema),
        ...problems({ 400: 'Bad sort, order, hostPrefix, cursor or limit.' }),
      },
    },
    handler: async (request) => listHostOverview(ctx, request.query),
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
