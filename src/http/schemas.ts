import { z } from 'zod'
import { estimatorNameSchema, settingsSchema } from '../domain/settings.ts'

/** Shapes of the HTTP contract (API.md). Field descriptions end up in the OpenAPI document. */

export const problemSchema = z
  .object({
    type: z.string().describe('A URI naming the problem kind.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z
      .array(z.object({ path: z.string().describe('JSON pointer into the request'), message: z.string() }))
      .optional(),
  })
  .describe('RFC 9457 problem details (application/problem+json).')

/** Most items one list response carries; a larger `limit` is served as this (follow nextCursor for more). */
export const MAX_LIST_ITEMS = 1000

/** `limit` of a listing: a positive integer, default 100, larger values served as MAX_LIST_ITEMS. */
export const listLimitSchema = z.coerce
  .number()
  .int()
  .min(1)
  .default(100)
  .transform((limit) => Math.min(limit, MAX_LIST_ITEMS))
  .describe(`Items per response, default 100; values above ${MAX_LIST_ITEMS} are served as ${MAX_LIST_ITEMS}.`)

const timestamp = z.string().describe('RFC 3339 timestamp')
const nullableTimestamp = z.string().nullable().describe('RFC 3339 timestamp, or null')

export const pageIdSchema = z.string().describe('Page id, as returned in Page.id; an id that names no page is 404.')

export const pageSchema = z
  .object({
    id: z.string().describe('Page id (a decimal integer as a string).'),
    url: z.string().describe('Normalised absolute URL.'),
    host: z.string(),
    importance: z.number().describe('Weight μ ≥ 0 in the freshness objective.'),
    minCrawlsPerDay: z.number().nullable().describe("The page's own lower bound; null = settings.minCrawlsPerDay."),
    maxCrawlsPerDay: z.number().nullable().describe("The page's own upper bound; null = settings.maxCrawlsPerDay."),
    crawls: z.number().int().describe('Observations stored for the page (baseline, in-order and late).'),
    intervals: z.number().int().describe('In-order crawl intervals fed to the online estimators (n).'),
    changes: z.number().int().describe('Intervals among those that saw a change (X).'),
    firstCrawledAt: nullableTimestamp,
    lastCrawledAt: nullableTimestamp,
    lastChangedAt: nullableTimestamp,
    changesPerDay: z
      .number()
      .nullable()
      .describe('The estimate that drives scheduling (settings.estimator); null before the first interval.'),
    estimator: estimatorNameSchema,
    estimates: z
      .record(z.string(), z.number().nullable())
      .describe('Every online estimate, changes per day, clipped to the settings bounds; null without data.'),
    crawlsPerDay: z.number().nullable().describe('Rate from the last optimisation plus local updates.'),
    nextCrawlAt: nullableTimestamp.describe(
      'When the rate schedules the next crawl: periodic schedule, lastCrawledAt + 1/crawlsPerDay days; Poisson schedule, lastCrawledAt + an exponential draw with rate crawlsPerDay; before the first crawl, due at once; null = never (rate 0).',
    ),
    dueAt: nullableTimestamp.describe(
      'When leases hand the page out: nextCrawlAt, except that recrawl crawls a page seen only once again after at most pages/budget days (exploration), probes a page whose every interval saw a change after half its shortest interval, and then waits the time the probe saved (see the README, "Schedule, exploration and probes").',
    ),
    expectedFreshness: z
      .number()
      .nullable()
      .describe('Expected fraction of time the stored copy is fresh at crawlsPerDay under the running schedule.'),
    lease: z
      .object({ leaseId: z.string(), worker: z.string().nullable(), expiresAt: timestamp })
      .nullable()
      .describe('The unexpired lease holding the page, if any.'),
  })
  .describe('Page')

export const putPagesBodySchema = z.object({
  pages: z
    .array(
      z
        .object({
          url: z.string().describe('Absolute http(s) URL.'),
          importance: z.number().min(0).finite().optional().describe('Default 1.'),
          minCrawlsPerDay: z.number().min(0).finite().nullable().optional(),
          maxCrawlsPerDay: z.number().min(0).finite().nullable().optional(),
        })
        .strict(),
    )
    .describe('At most MAX_BATCH_ITEMS (default 5,000) pages; more → 413.'),
})

export const putPagesResponseSchema = z.object({ created: z.number().int(), updated: z.number().int() })

export const listPagesQuerySchema = z.object({
  host: z.string().min(1).optional(),
  cursor: z.string().optional().describe('nextCursor of the previous response.'),
  limit: listLimitSchema,
})

export const listPagesResponseSchema = z.object({ pages: z.array(pageSchema), nextCursor: z.string().nullable() })

export const observationItemSchema = z
  .object({
    url: z.string().describe('Absolute http(s) URL of the crawled page.'),
    crawledAt: z.string().describe('RFC 3339 time of the crawl; at most 5 minutes in the future.'),
    changed: z.boolean().optional().describe('Did the page change since the previous crawl? Optional when contentHash is given.'),
    contentHash: z.string().min(1).max(512).optional().describe('Any digest of the content; a change = differs from the previous hash.'),
    lastModified: z.string().optional().describe('HTTP Last-Modified, RFC 3339.'),
    httpStatus: z.number().int().min(100).max(599).optional(),
    leaseId: z.string().optional().describe('Completes that lease for this page.'),
  })
  .strict()

export const postObservationsBodySchema = z.object({
  observations: z
    .array(observationItemSchema)
    .describe('At most MAX_BATCH_ITEMS (default 5,000) items; more → 413 and nothing is applied.'),
})

export const postObservationsResponseSchema = z.object({
  accepted: z.number().int().describe('Stored and applied in order (baselines included).'),
  duplicates: z.number().int().describe('Repeats of a stored (url, crawledAt): ignored.'),
  late: z.number().int().describe('Older than the page’s latest crawl: stored, not applied.'),
  rejected: z.array(z.object({ index: z.number().int(), reason: z.string() })).describe('Not stored.'),
})

export const observationSchema = z.object({
  crawledAt: timestamp,
  changed: z.boolean().nullable().describe('null: baseline, failed fetch, or late crawl without change information.'),
  contentHash: z.string().nullable(),
  lastModified: nullableTimestamp,
  httpStatus: z.number().int().nullable(),
  applied: z.boolean().describe('Fed to the online estimators.'),
  late: z.boolean(),
  intervalSeconds: z.number().nullable().describe('Length of the estimator interval this crawl closed.'),
  receivedAt: timestamp,
})

export const listObservationsQuerySchema = z.object({
  before: z.string().optional().describe('nextCursor of the previous response (an RFC 3339 crawl time).'),
  limit: listLimitSchema,
})

export const listObservationsResponseSchema = z.object({
  observations: z.array(observationSchema),
  nextCursor: z.string().nullable(),
})

const estimateEntrySchema = z.object({
  name: z.string(),
  changesPerDay: z.number().nullable(),
  ci95: z.tuple([z.number(), z.number()]).nullable().describe('95 % confidence interval where one applies.'),
  source: z.enum(['online', 'history']).describe('online: the O(1) state updated on every crawl; history: recomputed from stored observations.'),
  section: z.string().describe('MATH.md section.'),
  note: z.string().optional(),
})

export const pageEstimatesResponseSchema = z.object({
  pageId: z.string(),
  intervals: z.number().int(),
  changes: z.number().int(),
  observedDays: z.number(),
  historyObservations: z.number().int().describe('Stored observations used by the history estimators (most recent first, capped).'),
  estimators: z.array(estimateEntrySchema),
  changeClasses: z.array(z.object({ name: z.string(), changesPerDay: z.number(), probability: z.number() })),
  localRate: z
    .object({ changesPerDay: z.number(), trend: z.string(), beta: z.number(), points: z.number().int() })
    .nullable()
    .describe('Current rate from a power-law NHPP fit on the latest window of update points (MATH.md 2.1).'),
  updateDistribution: z
    .object({
      method: z.string().describe('M2 (Last-Modified ages), M4 (constant crawl interval) or M6 (random intervals).'),
      points: z.array(z.object({ ageDays: z.number(), cdf: z.number() })),
      meanUpdateIntervalDays: z.number().nullable(),
      coefficientOfVariation: z.number().nullable(),
      poissonFitDistance: z.number().nullable().describe('sup |G_U(x) − (1 − e^{−μx})|: large means not Poisson.'),
    })
    .nullable()
    .describe('Estimated age CDF G_U of the update process (MATH.md 2.2).'),
})

export const settingsResponseSchema = settingsSchema

export const settingsPatchResponseSchema = settingsSchema

export const healthResponseSchema = z.object({ status: z.literal('ok') })
export const readyResponseSchema = z.object({
  status: z.enum(['ready', 'not ready']),
  database: z.enum(['postgres', 'embedded']),
  pendingMigrations: z.array(z.string()),
})
