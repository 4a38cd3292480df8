import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { getSettings, patchSettings } from '../../domain/settingsService.ts'
import { settingsPatchSchema } from '../../domain/settings.ts'
import type { AppContext } from '../context.ts'
import { problemSchema, settingsResponseSchema } from '../schemas.ts'

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
