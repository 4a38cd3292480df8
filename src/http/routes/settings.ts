import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { getSettings, patchSettings } from '../../domain/settingsService.ts'
import { settingsPatchSchema } from '../../domain/settings.ts'
import type { AppContext } from '../context.ts'
import { z } from 'zod'
import { InvalidInputError } from '../../domain/errors.ts'
import { parseTimestampMs } from '../../domain/ingest.ts'
import { problemSchema, settingsResponseSchema } from '../schemas.ts'

const clockSchema = z.object({ now: z.string().describe('RFC 3339') })

export const settingsRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.get('/v1/settings', {
    config: { role: 'reader' },
    schema: { tags: ['settings'], summary: 'Current settings', response: { 200: settingsResponseSchema, '4xx': problemSchema, '5xx': problemSchema } },
    handler: async () => getSettings(ctx),
  })

  app.patch('/v1/settings', {
    config: { role: 'admin' },
    schema: {
      tags: ['settings'],
      summary: 'Change settings (any subset; lln and sa merge key by key)',
      description:
        'The merged settings must be valid as a whole, else 400 and nothing changes. A change of estimator, bounds, LLN α, objective or schedule ' +
        're-derives every page’s estimates, rate and due time in the same transaction.',
      body: settingsPatchSchema,
      response: { 200: settingsResponseSchema, '4xx': problemSchema, '5xx': problemSchema },
    },
    handler: async (request) => (await patchSettings(ctx, request.body)).settings,
  })
}

/** Registered only with SIMULATED_CLOCK=true: lets a simulation driver move the service's time. */
export const clockRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.get('/v1/clock', {
    config: { role: 'reader' },
    schema: { tags: ['simulation'], summary: 'Simulated time (SIMULATED_CLOCK=true only)', response: { 200: clockSchema } },
    handler: async () => ({ now: new Date(ctx.clock.nowMs()).toISOString() }),
  })
  app.put('/v1/clock', {
    config: { role: 'admin' },
    schema: {
      tags: ['simulation'],
      summary: 'Move simulated time forward (SIMULATED_CLOCK=true only; never backwards)',
      body: clockSchema,
      response: { 200: clockSchema, '4xx': problemSchema },
    },
    handler: async (request) => {
      const ms = parseTimestampMs(request.body.now)
      if (ms === null) throw new InvalidInputError('now is not an RFC 3339 timestamp', [{ path: '/body/now', message: 'not an RFC 3339 timestamp' }])
      ctx.clock.advanceTo?.(ms)
      return { now: new Date(ctx.clock.nowMs()).toISOString() }
    },
  })
}
