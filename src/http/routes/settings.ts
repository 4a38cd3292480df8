import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { getSettings, patchSettings } from '../../domain/settingsService.ts'
import { settingsPatchSchema, settingsSchema } from '../../core/settings.ts'
import type { AppContext } from '../context.ts'
import { z } from 'zod'
import { InvalidInputError } from '../../core/errors.ts'
import { readTimestamp, timestampSchema } from '../../core/timestamps.ts'
import { json, problems } from '../responses.ts'

const clockSchema = z.object({ now: timestampSchema }).meta({ id: 'Clock', description: 'The simulated time.' })
const clockMoveSchema = z
  .object({
    now: timestampSchema.describe('RFC 3339 time to move to; an earlier time than the current one changes nothing.'),
  })
  .meta({ id: 'ClockMove', description: 'Where to move the simulated time.' })

export const settingsRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.get('/v1/settings', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getSettings',
      tags: ['settings'],
      summary: 'Current settings',
      description: 'The settings every replica uses, defaults filled in.',
      response: { 200: json('The settings.', settingsSchema), ...problems() },
    },
    handler: async () => getSettings(ctx),
  })

  app.patch('/v1/settings', {
    config: { role: 'admin' },
    schema: {
      operationId: 'patchSettings',
      tags: ['settings'],
      summary: 'Change settings (any subset; lln and sa merge key by key)',
      description:
        'The merged settings must be valid as a whole, else 400 and nothing changes. A change of estimator, bounds, LLN α, objective or schedule ' +
        're-derives every page’s estimates, rate and due time in the same transaction.',
      consumes: ['application/merge-patch+json', 'application/json'],
      body: settingsPatchSchema,
      response: {
        200: json('The settings after the change.', settingsSchema),
        ...problems({
          400: 'Unknown key, bad value (docs/api.md "Input limits"), or merged settings that are invalid as a whole; nothing was changed.',
          413: true,
          422: 'The budget is less than the pages’ minimum crawl rates need, or new URL rules would give two stored pages or host limits one name; nothing was changed.',
        }),
      },
    },
    handler: async (request) => (await patchSettings(ctx, request.body)).settings,
  })
}

/** Registered only with SIMULATED_CLOCK=true: lets a simulation driver move the service's time. */
export const clockRoutes: FastifyPluginAsyncZod<AppContext> = async (app, ctx) => {
  app.get('/v1/clock', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getClock',
      tags: ['simulation'],
      summary: 'Simulated time (SIMULATED_CLOCK=true only)',
      description: 'The service’s current simulated time.',
      response: { 200: json('The simulated time.', clockSchema), ...problems() },
    },
    handler: async () => ({ now: new Date(ctx.clock.nowMs()).toISOString() }),
  })
  app.put('/v1/clock', {
    config: { role: 'admin' },
    schema: {
      operationId: 'setClock',
      tags: ['simulation'],
      summary: 'Move simulated time forward (SIMULATED_CLOCK=true only; never backwards)',
      description: 'A time before the current one leaves the clock where it is.',
      body: clockMoveSchema,
      response: {
        200: json('The simulated time after the move.', clockSchema),
        ...problems({ 400: 'now is not an RFC 3339 timestamp.', 413: true }),
      },
    },
    handler: async (request) => {
      const read = readTimestamp(request.body.now)
      if ('error' in read)
        throw new InvalidInputError(`now is ${read.error}`, [{ path: '/body/now', message: read.error }])
      ctx.clock.advanceTo?.(read.ms)
      return { now: new Date(ctx.clock.nowMs()).toISOString() }
    },
  })
}
