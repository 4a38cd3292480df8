import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { optimizerRunSchema, runOptimizer, type OptimizeResult } from '../../domain/optimize.ts'
import type { AppContext } from '../context.ts'
import { json, problems } from '../responses.ts'

interface OptimizerHooks {
  /** Called with the outcome of every run this route asked for (metrics). */
  onOptimized?: (result: OptimizeResult) => void
}

/** POST /v1/optimize: an optimiser run now. */
export const optimizerRoutes: FastifyPluginAsyncZod<AppContext & OptimizerHooks> = async (app, ctx) => {
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
}
