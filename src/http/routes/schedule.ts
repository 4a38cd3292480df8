import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { listUpcomingCrawls, upcomingCrawlsSchema } from '../../domain/leases.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { readTimestamp } from '../../core/timestamps.ts'
import type { AppContext } from '../context.ts'
import { json, problems } from '../responses.ts'
import { listLimitSchema } from '../schemas.ts'

/** GET /v1/schedule: the upcoming crawls, in the order leases would hand them out. */
export const scheduleRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
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
      response: {
        200: json('The upcoming crawls.', upcomingCrawlsSchema),
        ...problems({ 400: 'Bad limit or until.' }),
      },
    },
    handler: async (request) => {
      let untilMs: number | null = null
      if (request.query.until !== undefined) {
        const read = readTimestamp(request.query.until)
        if ('error' in read)
          throw new InvalidInputError(`until is ${read.error}`, [{ path: '/querystring/until', message: read.error }])
        untilMs = read.ms
      }
      return listUpcomingCrawls(ctx, { limit: request.query.limit, untilMs })
    },
  })
}
