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
import { counterTotalsSchema, createMetrics, type Metrics } from '../../ops/metrics.ts'
import {
  createStats,
  DEFAULT_STATS_CACHE_MS,
  statsDetailsSchema,
  statsSnapshotSchema,
  type Stats,
} from '../../ops/stats.ts'
import { json, problems } from '../responses.ts'
import { HOURS_PER_DAY, MS_PER_SECOND, SECONDS_PER_HOUR } from '../../math/units.ts'
import { EXAMPLE_NOW, exampleTime } from '../../core/examples.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry and the hooks that feed it. */
    metrics: Metrics
    /** The cached stats snapshot behind the gauges and GET /v1/stats. */
    stats: Stats
  }
}

interface Ops {
  metrics: Metrics
  stats: Stats
}

/** The dashboard's static files (served at /). */
const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url))

/**
 * Creates the app's metrics registry and stats cache, exposes them as `app.metrics` / `app.stats`,
 * and times every request into recrawl_http_request_duration_seconds, labelled by route pattern
 * (never the raw URL: ids and query strings would explode the label set).
 */
export function installOps(
  app: FastifyInstance,
  deps: { pool: pg.Pool; clock: Clock; logger?: Logger | undefined; statsCacheMs?: number | undefined },
): Ops {
  const stats = createStats({
    pool: deps.pool,
    clock: deps.clock,
    logger: deps.logger,
    cacheMs: deps.statsCacheMs ?? DEFAULT_STATS_CACHE_MS,
  })
  const metrics = createMetrics({ stats, logger: deps.logger })
  app.decorate('metrics', metrics)
  app.decorate('stats', stats)
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp(
      { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: reply.statusCode },
      reply.elapsedTime / MS_PER_SECOND,
    )
  })
  return { metrics, stats }
}

/** Pages by rate in the 24 log bins of the stats (10^-3 … 10^3 per day), for the example of GET /v1/stats. */
const exampleHistogram = (counts: number[]) => ({
  edgesPerDay: Array.from({ length: 25 }, (_, i) => Number((10 ** (-3 + i / 4)).toPrecision(4))),
  counts: [...Array<number>(24 - counts.length).fill(0), ...counts],
  below: 0,
  above: 0,
  unknown: 1,
})

const STATS_EXAMPLE = {
  takenAt: EXAMPLE_NOW,
  pages: 203,
  pagesLeased: 25,
  pagesByStatus: { active: 190, failing: 8, gone: 4, redirected: 1, noisy: 2 },
  pagesOverdue: 12,
  oldestOverdueAgeSeconds: 840,
  expectedFreshness: 0.912,
  sitemaps: { items: 3, leased: 0, overdue: 0, notActive: 0, plannedCrawlsPerDay: 4.2 },
  schedule: 'periodic' as const,
  budgetCrawlsPerDay: 900,
  plannedCrawlsPerDay: 899.6,
  crawlsPerDayLastHour: 912,
  handOutAllowance: { tokens: 3.2, capacity: 75, reserve: 1.875, perDay: 900, limiting: true },
  counters: {
    observations: { accepted: 6110, duplicate: 4, late: 12, rejected: 3 },
    fetchesByStatusClass: { '1xx': 0, '2xx': 5720, '3xx': 41, '4xx': 198, '5xx': 92, error: 75, none: 0 },
    changesDetected: 1630,
    leasesGranted: 2416,
    leasesExpired: 37,
    optimizerRuns: 2016,
  },
  windowHours: 2,
  windowStart: exampleTime(-2 * SECONDS_PER_HOUR),
  windowEnd: EXAMPLE_NOW,
  optimizer: { lambda: 0.0132, solvedAt: exampleTime(-120) },
  changeRateHistogram: exampleHistogram([3, 9, 30, 61, 52, 25, 13, 6, 1, 0, 0, 0, 0]),
  crawlRateHistogram: exampleHistogram([12, 40, 88, 44, 16, 2, 0, 0, 0, 0, 0, 0, 0]),
  optimizerRuns: [
    {
      id: '2016',
      startedAt: exampleTime(-120),
      durationMs: 18.2,
      trigger: 'periodic',
      objective: 'freshness-periodic',
      lambda: 0.0132,
      pages: 203,
      pagesCrawled: 198,
      budgetCrawlsPerDay: 900,
      expectedFreshness: 0.912,
      pagesRetimed: 14,
    },
  ],
  topOverdueHosts: [{ host: 'example.org', pagesOverdue: 7, oldestOverdueAgeSeconds: 840 }],
  series: {
    bucketSeconds: 60,
    points: [
      {
        at: exampleTime(-60),
        pages: 203,
        pagesOverdue: 11,
        oldestOverdueAgeSeconds: 780,
        expectedFreshness: 0.913,
        budgetCrawlsPerDay: 900,
        plannedCrawlsPerDay: 899.6,
        crawlsPerDayLastHour: 904,
      },
    ],
  },
  crawlActivity: [
    {
      hourStart: exampleTime(-SECONDS_PER_HOUR),
      crawls: 38,
      changes: 9,
      fetchesByStatusClass: { '1xx': 0, '2xx': 33, '3xx': 1, '4xx': 2, '5xx': 1, error: 1, none: 0 },
    },
  ],
  fetchFailures: [
    { host: 'example.org', httpStatus: 503, fetchError: null, fetches: 5, pages: 3, lastCrawledAt: exampleTime(-300) },
    {
      host: 'example.net',
      httpStatus: null,
      fetchError: 'timeout' as const,
      fetches: 2,
      pages: 2,
      lastCrawledAt: exampleTime(-900),
    },
  ],
}

const statsResponseSchema = z
  .object({ ...statsSnapshotSchema.shape, counters: counterTotalsSchema, ...statsDetailsSchema.shape })
  .meta({
    id: 'Stats',
    description:
      'The numbers of /metrics as JSON, with rate histograms, optimiser runs, overdue hosts, failed fetches and time series.',
    examples: [STATS_EXAMPLE],
  })

/** GET /metrics (open), GET /v1/stats (reader) and the dashboard at / with its chart library. */
export const opsRoutes: FastifyPluginAsyncZod<Ops> = async (app, ops) => {
  app.get('/metrics', {
    schema: {
      operationId: 'getMetrics',
      tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format)',
      description:
        'Open (no key), like /healthz. Gauges that need SQL come from a snapshot cached for a few seconds per replica, so scrapes never query per request.',
      response: {
        200: {
          description: 'Every metric in the Prometheus text exposition format (version 0.0.4).',
          content: {
            'text/plain': {
              schema: z.string().meta({
                examples: [
                  [
                    '# HELP recrawl_pages Registered pages.',
                    '# TYPE recrawl_pages gauge',
                    'recrawl_pages 203',
                    '# HELP recrawl_observations_total Crawl reports by result.',
                    '# TYPE recrawl_observations_total counter',
                    'recrawl_observations_total{result="accepted"} 6110',
                    '',
                  ].join('\n'),
                ],
              }),
            },
          },
        },
      },
    },
    handler: async (_request, reply) => {
      const body = await ops.metrics.render()
      return reply.type(ops.metrics.contentType).send(body)
    },
  })

  app.get('/v1/stats', {
    config: { role: 'reader' },
    schema: {
      operationId: 'getStats',
      tags: ['operations'],
      summary: 'The numbers of /metrics as JSON, with rate histograms, optimiser runs, overdue hosts and time series',
      description:
        'A snapshot cached for a few seconds per replica; the time series and crawl activity cover the last `hours`.',
      querystring: z.object({
        hours: z.coerce
          .number()
          .int()
          .min(1)
          .max(HOURS_PER_DAY * 30)
          .default(48)
          .describe('Window of the time series and crawl activity.'),
      }),
      response: {
        200: json('The statistics.', statsResponseSchema),
        ...problems({ 400: 'hours is not an integer from 1 to 720.' }),
      },
    },
    handler: async (request) => {
      // The snapshot first: taking it records this minute's sample, which the series then includes.
      const snapshot = await ops.stats.snapshot()
      const [details, counters] = await Promise.all([
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
