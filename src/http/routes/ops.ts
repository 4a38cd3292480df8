import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type pg from 'pg'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { Clock } from '../../domain/clock.ts'
import { createMetrics, type Metrics } from '../../ops/metrics.ts'
import { createStats, type Stats } from '../../ops/stats.ts'
import { problemSchema } from '../schemas.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry and the hooks that feed it. */
    metrics: Metrics
    /** The cached stats snapshot behind the gauges and GET /v1/stats. */
    stats: Stats
  }
}

export interface Ops {
  metrics: Metrics
  stats: Stats
}

/** The dashboard's static files (served at /). */
export const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url))

/**
 * Creates the app's metrics registry and stats cache, exposes them as `app.metrics` / `app.stats`,
 * and times every request into recrawl_http_request_duration_seconds, labelled by route pattern
 * (never the raw URL: ids and query strings would explode the label set).
 */
export function installOps(
  app: FastifyInstance,
  deps: { pool: pg.Pool; clock: Clock; logger?: Logger | undefined; statsCacheMs?: number | undefined },
): Ops {
  const stats = createStats({ pool: deps.pool, clock: deps.clock, logger: deps.logger, cacheMs: deps.statsCacheMs ?? 5_000 })
  const metrics = createMetrics({ stats, logger: deps.logger })
  app.decorate('metrics', metrics)
  app.decorate('stats', stats)
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp(
      { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: reply.statusCode },
      reply.elapsedTime / 1000,
    )
  })
  return { metrics, stats }
}

const rateHistogramSchema = z.object({
  edgesPerDay: z.array(z.number()).describe('bins + 1 log-spaced bin edges, per day; bin i counts rates in [edges[i], edges[i+1]).'),
  counts: z.array(z.number().int()),
  below: z.number().int().describe('Pages with a rate below the first edge (zeros included).'),
  above: z.number().int().describe('Pages with a rate at or above the last edge.'),
  unknown: z.number().int().describe('Pages without the rate.'),
})

export const statsResponseSchema = z.object({
  takenAt: z.string().describe('When the snapshot was taken (RFC 3339); snapshots are cached for a few seconds.'),
  pages: z.number().int(),
  pagesLeased: z.number().int().describe('Pages under an unexpired lease.'),
  pagesOverdue: z.number().int().describe('Due (dueAt ≤ now) and not under an unexpired lease.'),
  oldestOverdueAgeSeconds: z.number().describe('How long the most overdue page has been due; 0 when none is.'),
  expectedFreshness: z
    .number()
    .nullable()
    .describe('Σμ·f(ρ)/Σμ of the current rates under the running schedule (MATH.md 3.1 Poisson, 3.3 periodic); null without weighted pages.'),
  schedule: z.enum(['periodic', 'poisson']),
  budgetCrawlsPerDay: z.number().describe('Budget R from the settings.'),
  plannedCrawlsPerDay: z.number().describe('Σ crawlsPerDay: what the current rates spend of the budget.'),
  crawlsPerDayLastHour: z.number().describe('Crawls reported with crawledAt in the last hour × 24.'),
  counters: z
    .object({
      observations: z.object({ accepted: z.number(), duplicate: z.number(), late: z.number(), rejected: z.number() }),
      changesDetected: z.number(),
      leasesGranted: z.number(),
      leasesExpired: z.number(),
      optimizerRuns: z.number(),
    })
    .describe('Totals of the counters of /metrics since this replica started.'),
  windowHours: z.number(),
  optimizer: z.object({ lambda: z.number().nullable(), solvedAt: z.string().nullable() }).describe('The stored multiplier λ and when it was solved.'),
  changeRateHistogram: rateHistogramSchema.describe('Pages by estimated changesPerDay (log10 bins, 4 per decade).'),
  crawlRateHistogram: rateHistogramSchema.describe('Pages by crawlsPerDay (log10 bins, 4 per decade).'),
  optimizerRuns: z
    .array(
      z.object({
        id: z.string(),
        startedAt: z.string(),
        durationMs: z.number(),
        trigger: z.string(),
        objective: z.string(),
        lambda: z.number().nullable(),
        pages: z.number().int(),
        pagesCrawled: z.number().int(),
        budgetCrawlsPerDay: z.number(),
        expectedFreshness: z.number().nullable(),
        pagesRetimed: z.number().int(),
      }),
    )
    .describe('The latest optimiser runs, newest first.'),
  topOverdueHosts: z
    .array(z.object({ host: z.string(), pagesOverdue: z.number().int(), oldestOverdueAgeSeconds: z.number() }))
    .describe('Hosts with the most overdue pages.'),
  series: z
    .object({
      bucketSeconds: z.number().int(),
      points: z.array(
        z.object({
          at: z.string(),
          pages: z.number().int(),
          pagesOverdue: z.number().int(),
          oldestOverdueAgeSeconds: z.number(),
          expectedFreshness: z.number().nullable(),
          budgetCrawlsPerDay: z.number(),
          plannedCrawlsPerDay: z.number(),
          crawlsPerDayLastHour: z.number(),
        }),
      ),
    })
    .describe('Snapshots stored at most once a minute (whenever one is taken, and every minute by the service), averaged into at most 300 buckets over the window.'),
  crawlActivity: z
    .array(z.object({ hourStart: z.string(), crawls: z.number().int(), changes: z.number().int() }))
    .describe('Every hour of the window by crawl time: crawls reported and changes detected among them, from the observation history (0 for hours without crawls).'),
})

/** GET /metrics (open), GET /v1/stats (reader) and the dashboard at / with its chart library. */
export const opsRoutes: FastifyPluginAsyncZod<Ops> = async (app, ops) => {
  app.get('/metrics', {
    schema: {
      tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format)',
      description:
        'Open (no key), like /healthz. Gauges that need SQL come from a snapshot cached for a few seconds per replica, so scrapes never query per request.',
      produces: ['text/plain'],
    },
    handler: async (_request, reply) => {
      const body = await ops.metrics.render()
      return reply.type(ops.metrics.contentType).send(body)
    },
  })

  app.get('/v1/stats', {
    config: { role: 'reader' },
    schema: {
      tags: ['operations'],
      summary: 'The numbers of /metrics as JSON, with rate histograms, optimiser runs, overdue hosts and time series',
      querystring: z.object({
        hours: z.coerce.number().int().min(1).max(24 * 30).default(48).describe('Window of the time series and crawl activity.'),
      }),
      response: { 200: statsResponseSchema, '4xx': problemSchema, '5xx': problemSchema },
    },
    handler: async (request) => {
      const [snapshot, details, counters] = await Promise.all([
        ops.stats.snapshot(),
        ops.stats.details({ windowHours: request.query.hours }),
        ops.metrics.counterTotals(),
      ])
      return { ...snapshot, counters, ...details }
    },
  })

  if (existsSync(WEB_DIR)) {
    await app.register(fastifyStatic, { root: WEB_DIR, prefix: '/', wildcard: false, index: ['index.html'] })
    const require = createRequire(import.meta.url)
    await app.register(fastifyStatic, {
      root: dirname(require.resolve('uplot/dist/uPlot.iife.min.js')),
      prefix: '/vendor/uplot/',
      wildcard: false,
      decorateReply: false,
    })
  } else {
    app.log.warn({ dir: WEB_DIR }, 'dashboard files not found: / is not served')
  }
}
