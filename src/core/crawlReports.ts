/**
 * What a crawler reports (POST /v1/observations, docs/api.md "Observations") and what it gets back, and
 * the item-level checks that need no database: URL (made canonical under the URL rules in force), timestamps (RFC 3339, in
 * 1970..9999), text the database can store (no NUL, no lone surrogate, in any field). An item that fails them is rejected alone,
 * with its index and a reason. src/domain/ingest.ts stores and applies the reports.
 */
import { z } from 'zod'
import { FETCH_ERRORS } from './fetchOutcomes.ts'
import type { CrawlReport } from './pageStep.ts'
import { textProblem } from './text.ts'
import { readLastModified, readRetryAfterSeconds, readTimestamp, timestampSchema } from './timestamps.ts'
import { canonicalUrl, type UrlRules } from './url.ts'
import { MS_PER_MINUTE, SECONDS_PER_DAY } from '../math/units.ts'

/** The longest Retry-After honoured; a longer one (or a later date) is read as this. */
const RETRY_AFTER_MAX_SECONDS = 30 * SECONDS_PER_DAY

/** Retry-After as a crawler has it: seconds (a number), or the header as received (digits or an HTTP date). */
const retryAfterSchema = z
  .union([z.number().min(0).max(RETRY_AFTER_MAX_SECONDS), z.string().min(1).max(100)])
  .optional()

export const observationReportSchema = z
  .object({
    url: z.string().describe('Absolute http(s) URL of the crawled page.'),
    crawledAt: timestampSchema.describe('RFC 3339 time of the crawl; at most 5 minutes in the future.'),
    changed: z
      .boolean()
      .optional()
      .describe('Did the page change since the previous crawl? Optional when contentHash is given.'),
    contentHash: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe('Any digest of the content; a change = differs from the previous hash.'),
    lastModified: z
      .string()
      .optional()
      .describe('HTTP Last-Modified of the response: the header as received (an HTTP date) or RFC 3339.'),
    etag: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe('HTTP ETag of the response (kept for a conditional request next time).'),
    httpStatus: z
      .number()
      .int()
      .min(100)
      .max(599)
      .optional()
      .describe(
        'HTTP status of the response. 304 = unchanged; 301/308 need redirectTo; 404/410/429/5xx are failures (docs/api.md "Fetch outcomes").',
      ),
    fetchError: z
      .enum(FETCH_ERRORS)
      .optional()
      .describe('The fetch got no HTTP answer: a timeout, DNS, connection, TLS or other error.'),
    retryAfterSeconds: retryAfterSchema.describe(
      'Retry-After of a 429 or 503: seconds, or the header as received (digits or an HTTP date, counted from crawledAt).',
    ),
    retryAfter: retryAfterSchema.describe(
      'The same as retryAfterSeconds, named after the header: pass Retry-After through as received. When both are sent, retryAfterSeconds is used.',
    ),
    redirectTo: z
      .string()
      .max(4096)
      .optional()
      .describe(
        'The Location of a 301 or 308, as received: absolute, or relative to the crawled URL (RFC 9110). The page moved there (registered as a page) and is no longer scheduled. Without it a 301/308 says nothing.',
      ),
    robotsCrawlDelaySeconds: z
      .number()
      .min(0)
      .max(SECONDS_PER_DAY)
      .optional()
      .describe("The Crawl-delay of the host's robots.txt that applies to this crawler; 0 clears it."),
    leaseId: z.string().optional().describe('Completes that lease for this page.'),
  })
  // Fields the service does not know are ignored and counted (receipt.unknownFields, counted on the body as
  // received by unknownFieldsOf): a fleet upgraded before or after the service, or a crawler sending more than
  // it needs, loses no crawl (docs/api.md "Observations").
  .strip()
  .meta({
    id: 'ObservationReport',
    description:
      'One crawl of one page. Fields not listed here are ignored, and counted in the receipt’s unknownFields.',
  })

/** The fields an observation may carry; any other is ignored and counted. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(observationReportSchema.shape))

export type ObservationReport = z.infer<typeof observationReportSchema>

const itemNoteSchema = z
  .object({
    index: z.number().int().describe('Position of the item in the batch.'),
    reason: z.string(),
  })
  .meta({ id: 'ItemNote', description: 'An item of a batch, by position, and what happened to it.' })

export const observationReceiptSchema = z
  .object({
    accepted: z.number().int().describe('Stored and applied in order (baselines included).'),
    duplicates: z.number().int().describe('Repeats of a stored (url, crawledAt): ignored.'),
    late: z
      .number()
      .int()
      .describe(
        'Older than the page’s latest crawl: stored, and folded in by replaying the page’s history in crawl-time order.',
      ),
    rejected: z.array(itemNoteSchema).describe('Not stored.'),
    unknownFields: z
      .record(z.string(), z.number().int())
      .optional()
      .describe(
        'Fields the service does not know, ignored (the items are applied): each name with the number of items that carried it. Only present when there were some.',
      ),
    leaseNotCompleted: z
      .array(itemNoteSchema)
      .describe(
        'Items stored and applied whose leaseId did not complete a lease on the page (malformed, unknown or already completed, expired, or the page was handed out again). The crawl is never lost because of its lease.',
      ),
  })
  .meta({
    id: 'ObservationReceipt',
    description: 'What became of a batch of reports: accepted + duplicates + late + rejected = items.',
    examples: [
      {
        accepted: 2,
        duplicates: 0,
        late: 0,
        rejected: [{ index: 2, reason: 'crawledAt is more than 5 minutes in the future' }],
        leaseNotCompleted: [
          {
            index: 1,
            reason:
              'the page is under no lease (lease 0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40 is unknown, released or already completed); the crawl was applied',
          },
        ],
      },
    ],
  })

export type ObservationReceipt = z.infer<typeof observationReceiptSchema>

/** A report that passed the item-level checks: the page's canonical URL and host, and the crawl. */
export interface CheckedReport extends CrawlReport {
  index: number
  url: string
  host: string
  leaseId: string | null
  robotsCrawlDelaySeconds: number | null
}

/** An item of the batch and why it was rejected (or why its lease was not completed). */
export type RejectedItem = z.infer<typeof itemNoteSchema>

/** A crawl more than this far in the future is rejected (clock skew allowance, docs/api.md). */
const MAX_FUTURE_SKEW_MS = 5 * MS_PER_MINUTE

export function checkReport(
  item: ObservationReport,
  index: number,
  nowMs: number,
  urlRules: UrlRules,
): CheckedReport | RejectedItem {
  // Text the database cannot hold (NUL, lone surrogates) rejects the item, whichever field carries it.
  for (const [field, value] of Object.entries(item)) {
    const problem = typeof value === 'string' ? textProblem(value) : null
    if (problem !== null) return { index, reason: `${field} ${problem}` }
  }
  const normalized = canonicalUrl(item.url, urlRules)
  if ('error' in normalized) return { index, reason: normalized.error }
  const crawledAt = readTimestamp(item.crawledAt)
  if ('error' in crawledAt) return { index, reason: `crawledAt is ${crawledAt.error}` }
  const crawledAtMs = crawledAt.ms
  if (crawledAtMs > nowMs + MAX_FUTURE_SKEW_MS)
    return { index, reason: 'crawledAt is more than 5 minutes in the future' }
  let lastModifiedMs: number | null = null
  if (item.lastModified !== undefined) {
    const lastModified = readLastModified(item.lastModified, nowMs)
    if ('error' in lastModified) return { index, reason: `lastModified is ${lastModified.error}` }
    lastModifiedMs = lastModified.ms
  }
  let retryAfterSeconds: number | null = null
  const retryAfter = item.retryAfterSeconds ?? item.retryAfter
  if (retryAfter !== undefined) {
    const read = readRetryAfterSeconds(retryAfter, crawledAtMs)
    const field = item.retryAfterSeconds === undefined ? 'retryAfter' : 'retryAfterSeconds'
    if ('error' in read) return { index, reason: `${field} is ${read.error}` }
    retryAfterSeconds = Math.min(read.seconds, RETRY_AFTER_MAX_SECONDS)
  }
  let redirectTo: string | null = null
  if ((item.httpStatus === 301 || item.httpStatus === 308) && item.redirectTo !== undefined) {
    const target = canonicalUrl(resolveLocation(item.redirectTo, normalized.url), urlRules)
    if ('error' in target) return { index, reason: `redirectTo: ${target.error}` }
    if (target.url === normalized.url) return { index, reason: 'redirectTo is the page itself' }
    redirectTo = target.url
  }
  return {
    index,
    url: normalized.url,
    host: normalized.host,
    crawledAtMs,
    changed: item.changed ?? null,
    contentHash: item.contentHash ?? null,
    lastModifiedMs,
    httpStatus: item.httpStatus ?? null,
    etag: item.etag ?? null,
    fetchError: item.fetchError ?? null,
    retryAfterSeconds,
    redirectTo,
    robotsCrawlDelaySeconds: item.robotsCrawlDelaySeconds ?? null,
    leaseId: item.leaseId ?? null,
  }
}

/**
 * A Location header resolved against the URL that answered it (RFC 9110 §10.2.2 allows a relative reference);
 * what cannot be resolved is returned as it is, for canonicalUrl to say why.
 */
function resolveLocation(location: string, baseUrl: string): string {
  try {
    return new URL(location, baseUrl).href
  } catch {
    return location
  }
}

/**
 * The receipt's unknownFields: each field of the items as received (before validation strips them) that the service
 * does not know, with the number of items that carried it.
 */
export function countUnknownFields(items: readonly unknown[]): Record<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue
    for (const field of Object.keys(item)) {
      if (!KNOWN_FIELDS.has(field)) counts.set(field, (counts.get(field) ?? 0) + 1)
    }
  }
  return Object.fromEntries(counts)
}
