import { signalReportSchema } from '../core/signals.ts'
import { z } from 'zod'
import { fieldProblemSchema } from '../core/errors.ts'
import { observationReportSchema } from '../core/crawlReports.ts'
import { pageFilterFieldsSchema, pageRegistrationSchema } from '../domain/pages.ts'
import { EXAMPLE_NOW, exampleTime } from '../core/examples.ts'

/**
 * Shapes that exist only at the HTTP edge (docs/api.md): problems, batch bodies, query strings and
 * health. What use cases take and return is declared beside them in src/domain. Field descriptions
 * and `.meta({ id })` names end up in the OpenAPI document.
 */

export const problemSchema = z
  .object({
    type: z.string().describe('A URI naming the problem kind.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z.array(fieldProblemSchema).optional().describe('Every bad field, for invalid input.'),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details, sent as application/problem+json.',
    examples: [
      {
        type: 'https://recrawl.dev/problems/invalid-input',
        title: 'Bad Request',
        status: 400,
        detail: 'The request is invalid; nothing was changed.',
        errors: [{ path: '/body/observations/3/url', message: 'Invalid URL' }],
      },
      {
        type: 'https://recrawl.dev/problems/unavailable',
        title: 'Service Unavailable',
        status: 503,
        detail: 'The database is unavailable; retry later.',
      },
    ],
  })

/** Most items one list response carries; a larger `limit` is served as this (follow nextCursor for more). */
const MAX_LIST_ITEMS = 1000

/** `limit` of a listing: a positive integer, default 100, larger values served as MAX_LIST_ITEMS. */
export const listLimitSchema = z.coerce
  .number()
  .int()
  .min(1)
  .default(100)
  .transform((limit) => Math.min(limit, MAX_LIST_ITEMS))
  .describe(`Items per response, default 100; values above ${MAX_LIST_ITEMS} are served as ${MAX_LIST_ITEMS}.`)

export const pageIdSchema = z.string().describe('Page id, as returned in Page.id; an id that names no page is 404.')

export const putPagesBodySchema = z
  .object({
    pages: z.array(pageRegistrationSchema).describe('At most MAX_BATCH_ITEMS (default 5,000) pages; more → 413.'),
  })
  .meta({
    id: 'PageBatch',
    description: 'Pages to register or update; any invalid item → 400 and nothing is written.',
    examples: [
      {
        pages: [
          { url: 'https://example.com/news', importance: 3 },
          { url: 'https://example.com/about' },
          { url: 'https://example.org/blog', maxCrawlsPerDay: 24 },
        ],
      },
    ],
  })

/** The page filter's conditions, with `noisy` as a query string carries it (the text true or false). */
export const listPagesQuerySchema = pageFilterFieldsSchema.extend({
  noisy: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe(pageFilterFieldsSchema.shape.noisy.description!),
  cursor: z.string().optional().describe('nextCursor of the previous response.'),
  limit: listLimitSchema,
})

export const postObservationsBodySchema = z
  .object({
    observations: z
      .array(observationReportSchema)
      .describe('At most MAX_BATCH_ITEMS (default 5,000) items; more → 413 and nothing is applied.'),
  })
  .meta({
    id: 'ObservationBatch',
    description: 'Crawl reports, applied in one transaction.',
    examples: [
      {
        observations: [
          {
            url: 'https://example.com/news',
            crawledAt: EXAMPLE_NOW,
            contentHash: 'sha256:9e01',
            httpStatus: 200,
            leaseId: '0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40',
          },
          {
            url: 'https://example.com/about',
            crawledAt: EXAMPLE_NOW,
            httpStatus: 304,
            etag: '"c3d4"',
            leaseId: '0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40',
          },
          {
            url: 'https://example.org/blog',
            crawledAt: EXAMPLE_NOW,
            httpStatus: 503,
            retryAfter: '120',
            leaseId: '0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40',
          },
        ],
      },
    ],
  })

export const postSignalsBodySchema = z
  .object({
    signals: z
      .array(signalReportSchema)
      .describe('At most MAX_BATCH_ITEMS (default 5,000) items; more → 413 and nothing is applied.'),
  })
  .meta({
    id: 'SignalBatch',
    description: 'Change signals, applied in one transaction.',
    examples: [
      {
        signals: [
          { url: 'https://example.com/news', source: 'sitemap', changedAt: exampleTime(-3600) },
          { url: 'https://example.com/about', source: 'ping', receivedAt: EXAMPLE_NOW },
        ],
      },
    ],
  })

export const listObservationsQuerySchema = z.object({
  before: z.string().optional().describe('nextCursor of the previous response (an RFC 3339 crawl time).'),
  limit: listLimitSchema,
})

export const healthSchema = z
  .object({ status: z.literal('ok') })
  .meta({ id: 'Health', description: 'The process serves requests.', examples: [{ status: 'ok' }] })

/**
 * The 503 of /readyz, a problem like every other 503 (one media type): the database is unreachable,
 * or it is reachable and migrations are pending (then `database` and `pendingMigrations` say which).
 */
export const notReadySchema = problemSchema
  .extend({
    database: z.enum(['postgres', 'embedded']).optional(),
    pendingMigrations: z
      .array(z.string())
      .optional()
      .describe('Migrations not yet applied (absent when the database could not be reached).'),
  })
  .meta({
    id: 'NotReady',
    description: 'Not ready: a problem (application/problem+json), with the pending migrations when there are any.',
    examples: [
      {
        type: 'https://recrawl.dev/problems/unavailable',
        title: 'Service Unavailable',
        status: 503,
        detail: '1 migration(s) not yet applied: 0023_signal_cover.sql.',
        database: 'postgres',
        pendingMigrations: ['0023_signal_cover.sql'],
      },
    ],
  })

export const readinessSchema = z
  .object({
    status: z.enum(['ready']),
    database: z.enum(['postgres', 'embedded']),
    pendingMigrations: z
      .array(z.string())
      .describe('Migrations not yet applied; the service is ready when there is none.'),
  })
  .meta({
    id: 'Readiness',
    description: 'Whether the database is reachable and fully migrated.',
    examples: [{ status: 'ready', database: 'postgres', pendingMigrations: [] }],
  })
