import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import {
  claimDuePages,
  extendLease,
  leaseShortfall,
  lockLeasedPages,
  readLeaseHistory,
  readLeasesByWorker,
  releaseLease,
  releasePages,
  returnExpiredLeases,
  returnHandOutTokens,
  takeHandOutTokens,
  upcomingCrawls,
} from '../store/leasesRepo.ts'
import { loadSettings } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import { releasedDueAtMs } from '../core/pageStep.ts'
import { PAGE_KINDS } from '../core/pageFields.ts'
import type { Settings } from '../core/settings.ts'
import { NotFoundError } from '../core/errors.ts'
import { normalizeHostName } from './hosts.ts'
import { isPageId } from './pages.ts'
import { httpDate, isoTimestamp, timestampSchema } from '../core/timestamps.ts'
import {
  earlyHandOutLimit,
  earlyHandOutWindow,
  explainShortLease,
  handOutAllowance,
  LEASE_LIMITS,
} from '../core/handOut.ts'
import { MS_PER_HOUR, MS_PER_SECOND, SECONDS_PER_DAY } from '../math/units.ts'
import type { DomainDeps } from './deps.ts'
import { EXAMPLE_NOW, exampleTime } from '../core/examples.ts'

export const leaseRequestSchema = z
  .object({
    worker: z.string().min(1).max(200).describe('Name of the crawler taking the lease (shown on leased pages).'),
    limit: z.number().int().min(1).max(1000).default(100).describe('Most pages to hand out.'),
    leaseSeconds: z
      .number()
      .int()
      .min(5)
      .max(SECONDS_PER_DAY)
      .default(300)
      .describe('Lease lifetime; unfinished pages return to the pool after it.'),
    hosts: z.array(z.string().min(1)).max(1000).optional().describe('Only pages of these hosts.'),
  })
  .strict()
  .meta({
    id: 'LeaseRequest',
    description: 'Who takes the lease, how many pages, for how long, and optionally from which hosts.',
    examples: [{ worker: 'crawler-1', limit: 100, leaseSeconds: 300 }],
  })

type LeaseRequest = z.infer<typeof leaseRequestSchema>

const leasedPageSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    host: z.string(),
    kind: z
      .enum(PAGE_KINDS)
      .describe(
        'page: report the crawl to POST /v1/observations; sitemap: post the fetched document to POST /v1/sitemaps with this url and leaseId (a failed fetch is reported as an observation, like a page’s).',
      ),
    dueAt: timestampSchema,
    etag: z.string().nullable().describe('ETag of the latest successful fetch: send it as If-None-Match.'),
    lastModified: timestampSchema
      .nullable()
      .describe('Last-Modified of the latest successful fetch: send it as If-Modified-Since.'),
    contentHash: z.string().nullable().describe('The content hash recrawl compares the next report with.'),
    ifNoneMatch: z
      .string()
      .nullable()
      .describe('The If-None-Match header to send, ready as it is (the ETag of the latest successful fetch).'),
    ifModifiedSince: z
      .string()
      .nullable()
      .describe(
        'The If-Modified-Since header to send, ready as it is: lastModified as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).',
      ),
  })
  .meta({
    id: 'LeasedPage',
    description:
      'A page or a sitemap to fetch now (see kind), with what a conditional request needs (a 304 answer is reported as unchanged).',
  })

const pacedHostSchema = z
  .object({
    host: z.string(),
    paceSeconds: z
      .number()
      .describe(
        'Least time between two pages of the host handed out (minDelaySeconds, Crawl-delay, or the adaptive delay).',
      ),
    nextLeaseAt: timestampSchema.describe('When the host may next hand out a page (its turn, or the end of a pause).'),
  })
  .meta({ id: 'PacedHost', description: 'A paced host whose due pages wait for its turn.' })

export const leaseGrantSchema = z
  .object({
    leaseId: z.string().describe('Report each crawl with this leaseId to complete the lease for that page.'),
    expiresAt: timestampSchema,
    pages: z.array(leasedPageSchema).describe('Most overdue first; empty when nothing is due.'),
    limitedBy: z
      .array(z.enum(LEASE_LIMITS))
      .describe(
        'Why fewer pages than asked: nothingDue (no page is due), budgetAllowance (the budget’s hand-out allowance is spent for now), pacedHosts (due pages wait for their host’s turn), hostBackoff (their host is paused after 429/503). Empty when the lease is full.',
      ),
    retryAfterSeconds: z
      .number()
      .nullable()
      .describe(
        'When asking again can give a page: 0 after a full lease; null when there is no page to hand out at all.',
      ),
    nextDueAt: timestampSchema
      .nullable()
      .describe(
        'After a short lease: when the next unleased page may be handed out (null when none, or after a full lease).',
      ),
    pacedHosts: z
      .array(pacedHostSchema)
      .describe(
        'After a short lease: the paced hosts whose due pages wait for their turn, the soonest first (at most 100).',
      ),
  })
  .meta({
    id: 'LeaseGrant',
    description: 'Due pages handed out under one lease.',
    examples: [
      {
        leaseId: '0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40',
        expiresAt: exampleTime(300),
        pages: [
          {
            id: '2',
            url: 'https://example.com/news',
            host: 'example.com',
            kind: 'page',
            dueAt: exampleTime(-600),
            etag: null,
            lastModified: null,
            contentHash: 'sha256:77ab',
            ifNoneMatch: null,
            ifModifiedSince: null,
          },
          {
            id: '1',
            url: 'https://example.com/about',
            host: 'example.com',
            kind: 'page',
            dueAt: exampleTime(-60),
            etag: '"c3d4"',
            lastModified: exampleTime(-10 * 86400),
            contentHash: 'sha256:c3d4',
            ifNoneMatch: '"c3d4"',
            ifModifiedSince: 'Fri, 20 Feb 2026 12:00:00 GMT',
          },
        ],
        limitedBy: ['nothingDue'],
        retryAfterSeconds: 1800,
        nextDueAt: exampleTime(1800),
        pacedHosts: [],
      },
    ],
  })

export type LeaseGrant = z.infer<typeof leaseGrantSchema> & {
  /** Pages of expired leases this call found: returned to the pool, or leased again by it. */
  expiredReturned: number
  /** The fleet-wide hand-out allowance after this lease: tokens left (pages that may go out now) and its capacity. */
  allowance: { tokensLeft: number; capacity: number }
}

export const leaseReleaseSchema = z
  .object({ released: z.number().int().describe('Pages returned to the pool.') })
  .meta({
    id: 'LeaseRelease',
    description: 'What releasing the lease returned to the pool.',
    examples: [{ released: 2 }],
  })

export const upcomingCrawlsSchema = z
  .object({
    items: z.array(
      z
        .object({
          id: z.string(),
          url: z.string(),
          host: z.string(),
          kind: z.enum(PAGE_KINDS).describe('A page, or a sitemap item.'),
          dueAt: timestampSchema,
          crawlsPerDay: z.number().nullable(),
        })
        .meta({ id: 'ScheduledCrawl', description: 'An unleased page (or sitemap item) and when it is due.' }),
    ),
  })
  .meta({
    id: 'Schedule',
    description: 'Upcoming crawls in due order.',
    examples: [
      {
        items: [
          {
            id: '1',
            url: 'https://example.com/about',
            host: 'example.com',
            kind: 'page',
            dueAt: EXAMPLE_NOW,
            crawlsPerDay: 0.9,
          },
          {
            id: '2',
            url: 'https://example.com/news',
            host: 'example.com',
            kind: 'page',
            dueAt: exampleTime(3600),
            crawlsPerDay: 1.9,
          },
        ],
      },
    ],
  })

/**
 * Per call, at most this many pages of expired leases are returned to the pool: keeps one call short after
 * many workers vanished at once; the next calls do the rest.
 */
const EXPIRED_BATCH = 1000

/**
 * Hands out due pages as one lease (docs/api.md "Schedule"): first the pages of expired leases go back to
 * the pool, then one claim statement (store/leasesRepo.ts) takes the most overdue pages, higher importance
 * first when tied; rows are locked with SKIP LOCKED, so concurrent callers never get the same page; a host
 * with `minDelaySeconds` gets at most one page per call and per delay (its politeness row is locked and
 * moved forward in the same statement). How many pages it may hand out, and which early, is the hand-out
 * policy of core/handOut.ts: with allowance left beyond the reserve, a second claim hands out the pages due
 * next (early hand-outs, docs/api.md "Schedule").
 */
export async function takeLease(deps: Pick<DomainDeps, 'pool' | 'clock'>, request: LeaseRequest): Promise<LeaseGrant> {
  const nowMs = deps.clock.nowMs()
  const leaseId = randomUUID()
  const expiresAtMs = nowMs + request.leaseSeconds * MS_PER_SECOND
  const settings = await loadSettings(deps.pool)
  const hosts = canonicalHosts(settings, request.hosts)
  const expiredReturned = await returnExpiredLeases(deps.pool, nowMs, EXPIRED_BATCH)
  // Never more than the budget (core/handOut.ts): a fleet-wide allowance that fills at budgetCrawlsPerDay.
  const allowance = handOutAllowance(settings)
  const { taken, available } = await takeHandOutTokens(deps.pool, { nowMs, ...allowance, wanted: request.limit })
  const claim = { nowMs, hosts, leaseId, worker: request.worker, expiresAtMs }
  const pages = taken < 1 ? [] : await claimDuePages(deps.pool, { ...claim, limit: taken })
  // Due pages leave allowance unused: the pages due next go out early, keeping the reserve (not with a host filter).
  const earlyLimit = earlyHandOutLimit({
    taken,
    available,
    duePages: pages.length,
    reserve: allowance.reserve,
    hostFilter: hosts !== null,
  })
  if (earlyLimit >= 1) {
    const early = earlyHandOutWindow(nowMs, settings)
    pages.push(...(await claimDuePages(deps.pool, { ...claim, limit: earlyLimit, early })))
  }
  await returnHandOutTokens(deps.pool, taken - pages.length, allowance.capacity)
  const tokensLeft = Math.max(0, Math.min(allowance.capacity, available - pages.length))
  const explained =
    pages.length >= request.limit
      ? FULL_LEASE
      : await explainLease(deps, request.limit, hosts, {
          nowMs,
          taken,
          tokensLeft: Math.min(allowance.capacity, available - pages.length),
          perDay: allowance.perDay,
        })
  return {
    leaseId,
    expiresAt: new Date(expiresAtMs).toISOString(),
    ...explained,
    pages: pages.map((p) => ({
      id: p.id,
      url: p.url,
      host: p.host,
      kind: p.kind,
      dueAt: p.nextCrawlAt.toISOString(),
      etag: p.etag,
      lastModified: p.serverLastModified?.toISOString() ?? null,
      contentHash: p.lastContentHash,
      ifNoneMatch: p.etag,
      ifModifiedSince: p.serverLastModified === null ? null : httpDate(p.serverLastModified.getTime()),
    })),
    expiredReturned,
    allowance: { tokensLeft, capacity: allowance.capacity },
  }
}

const FULL_LEASE = { limitedBy: [], retryAfterSeconds: 0, nextDueAt: null, pacedHosts: [] }

/** Why a lease is short and when to ask again (core/handOut.ts, explainShortLease), from the pool after it. */
async function explainLease(
  deps: Pick<DomainDeps, 'pool'>,
  limit: number,
  hosts: string[] | null,
  lease: { nowMs: number; taken: number; tokensLeft: number; perDay: number },
): Promise<Pick<LeaseGrant, 'limitedBy' | 'retryAfterSeconds' | 'nextDueAt' | 'pacedHosts'>> {
  const { nextLeasableAt, heldHosts } = await leaseShortfall(deps.pool, { now: new Date(lease.nowMs), hosts })
  const { limitedBy, retryAfterSeconds } = explainShortLease({
    ...lease,
    limit,
    nextLeasableAtMs: nextLeasableAt?.getTime() ?? null,
    heldHosts: heldHosts.map((h) => ({ paceSeconds: h.paceSeconds, nextLeaseAtMs: h.nextLeaseAt.getTime() })),
  })
  return {
    limitedBy,
    retryAfterSeconds,
    nextDueAt: nextLeasableAt === null ? null : isoTimestamp(nextLeasableAt.getTime()),
    pacedHosts: heldHosts.map((h) => ({
      host: h.host,
      paceSeconds: h.paceSeconds,
      nextLeaseAt: isoTimestamp(h.nextLeaseAt.getTime()),
    })),
  }
}

/** The host filter of a lease request, canonical under the URL rules (a name that is no host → 400). */
function canonicalHosts(settings: Settings, raw: readonly string[] | undefined): string[] | null {
  if (!raw || raw.length === 0) return null
  return [...new Set(raw.map((host, i) => normalizeHostName(host, settings.urls, `/body/hosts/${i}`)))]
}

export const leaseExtensionSchema = z
  .object({
    leaseSeconds: z
      .number()
      .int()
      .min(5)
      .max(SECONDS_PER_DAY)
      .default(300)
      .describe('The lease now expires this long from now.'),
  })
  .strict()
  .meta({
    id: 'LeaseExtension',
    description: 'A heartbeat: keep the pages of the lease for longer.',
    examples: [{ leaseSeconds: 300 }],
  })

export const leaseExtendedSchema = z
  .object({
    leaseId: z.string(),
    expiresAt: timestampSchema,
    pages: z.number().int().describe('Pages the lease still holds, now until expiresAt.'),
  })
  .meta({
    id: 'LeaseExtended',
    description: 'The lease after a heartbeat.',
    examples: [{ leaseId: '0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40', expiresAt: exampleTime(600), pages: 2 }],
  })

/** A heartbeat: the pages the lease still holds are held until now + leaseSeconds. An expired or completed lease → 404. */
export async function extendLeaseFor(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  leaseId: string,
  request: z.infer<typeof leaseExtensionSchema>,
): Promise<z.infer<typeof leaseExtendedSchema>> {
  const nowMs = deps.clock.nowMs()
  const expiresAtMs = nowMs + request.leaseSeconds * MS_PER_SECOND
  const pages = await extendLease(deps.pool, leaseId, nowMs, expiresAtMs)
  if (pages === 0) throw new NotFoundError(`no active lease ${leaseId} (completed, expired or unknown): take a new one`)
  return { leaseId, expiresAt: new Date(expiresAtMs).toISOString(), pages }
}

export const pagesReleaseSchema = z
  .object({
    pages: z
      .array(
        z
          .object({
            id: z.string().describe('Page id, as in the lease.'),
            reason: z
              .enum(['retry', 'skip'])
              .describe(
                'retry: the page stays due (or is due after retryAfterSeconds); skip: due again one period from now.',
              ),
            retryAfterSeconds: z
              .number()
              .min(0)
              .max(30 * SECONDS_PER_DAY)
              .optional()
              .describe('With retry: not before this long from now.'),
          })
          .strict()
          .meta({ id: 'PageRelease', description: 'One page given back, and why.' }),
      )
      .min(1)
      .max(1000),
  })
  .strict()
  .meta({
    id: 'PagesRelease',
    description: 'Pages of the lease given back without a crawl, each with a reason.',
    examples: [
      {
        pages: [
          { id: '2', reason: 'retry' },
          { id: '1', reason: 'skip' },
        ],
      },
    ],
  })

export const pagesReleasedSchema = z
  .object({
    released: z.number().int().describe('Pages given back.'),
    notHeld: z
      .array(
        z.object({ index: z.number().int(), reason: z.string() }).meta({
          id: 'PageNotHeld',
          description: 'An item of the release, by position, that the lease does not hold.',
        }),
      )
      .describe('Items the lease does not hold (any more).'),
  })
  .meta({
    id: 'PagesReleased',
    description: 'What giving pages back did.',
    examples: [
      {
        released: 1,
        notHeld: [
          {
            index: 1,
            reason:
              'lease 0b6f2d4e-5c1a-4e8b-9f3d-7a2c1e6b8d40 does not hold page 1 (completed, expired, released or never leased)',
          },
        ],
      },
    ],
  })

/** Gives single pages of a lease back without a crawl (retry later, or skip this round). */
export async function releaseLeasedPages(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  leaseId: string,
  request: z.infer<typeof pagesReleaseSchema>,
): Promise<z.infer<typeof pagesReleasedSchema>> {
  const nowMs = deps.clock.nowMs()
  const ids = request.pages.map((p) => p.id)
  return withTransaction(deps.pool, async (client) => {
    // Held before the pages are written, as by every writer of their schedule (store/changeEpoch.ts).
    const settings = await loadSettings(client, 'share')
    const held = new Map((await lockLeasedPages(client, leaseId, ids.filter(isPageId), nowMs)).map((p) => [p.id, p]))
    const notHeld: { index: number; reason: string }[] = []
    const released: { id: string; nextCrawlAtMs: number | null }[] = []
    const seen = new Set<string>()
    request.pages.forEach((item, index) => {
      const page = held.get(item.id)
      if (!page || seen.has(item.id)) {
        notHeld.push({
          index,
          reason: seen.has(item.id)
            ? 'the same page twice'
            : `lease ${leaseId} does not hold page ${item.id} (completed, expired, released or never leased)`,
        })
        return
      }
      seen.add(item.id)
      released.push({
        id: item.id,
        nextCrawlAtMs: releasedDueAtMs(
          page,
          { reason: item.reason, retryAfterSeconds: item.retryAfterSeconds ?? null },
          nowMs,
        ),
      })
    })
    await releasePages(client, released, nowMs)
    // The pages were handed out but not crawled: their share of the budget goes back.
    await returnHandOutTokens(client, released.length, handOutAllowance(settings).capacity)
    return { released: released.length, notHeld }
  })
}

/** Releases a lease early: its pages return to the pool at once. */
export async function releaseLeaseEarly(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  leaseId: string,
): Promise<z.infer<typeof leaseReleaseSchema>> {
  const released = await releaseLease(deps.pool, leaseId, deps.clock.nowMs())
  if (released === 0) throw new NotFoundError(`no active lease ${leaseId} (completed, expired or unknown)`)
  // Handed out but not crawled: their share of the budget goes back.
  await returnHandOutTokens(deps.pool, released, handOutAllowance(await loadSettings(deps.pool)).capacity)
  return { released }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Why a crawl report's leaseId does not complete a lease on its page, or null when it does. A lease that
 * has expired but was not handed out again is still cleared (the page was crawled), and reported; the
 * reason then starts with "expired".
 */
export function leaseMismatch(
  page: { leaseId: string | null; leaseExpiresAtMs: number | null },
  leaseId: string,
  nowMs: number,
): string | null {
  if (!UUID.test(leaseId)) return 'leaseId is not a lease id (a UUID from POST /v1/leases); the crawl was applied'
  if (page.leaseId === null)
    return `the page is under no lease (lease ${leaseId} is unknown, released or already completed); the crawl was applied`
  if (page.leaseId.toLowerCase() !== leaseId.toLowerCase()) {
    return `the page is now held by another lease (lease ${leaseId} expired and the page was handed out again); the crawl was applied`
  }
  if (page.leaseExpiresAtMs !== null && page.leaseExpiresAtMs <= nowMs) {
    return `expired: lease ${leaseId} expired at ${new Date(page.leaseExpiresAtMs).toISOString()}; the crawl was applied and the page released`
  }
  return null
}

export async function listUpcomingCrawls(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  options: { limit: number; untilMs: number | null },
): Promise<z.infer<typeof upcomingCrawlsSchema>> {
  const rows = await upcomingCrawls(deps.pool, options)
  return {
    items: rows.map((r) => ({
      id: r.id,
      url: r.url,
      host: r.host,
      kind: r.kind,
      dueAt: r.dueAt.toISOString(),
      crawlsPerDay: r.crawlsPerDay,
    })),
  }
}

/** Most hours of lease history one overview carries (30 days). */
const MAX_HISTORY_HOURS = 720

export const leaseOverviewQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe('Most workers listed, 1 to 1,000 (default 100); the ones holding pages past expiry come first.'),
  hours: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_HISTORY_HOURS)
    .default(24)
    .describe(`Hours of lease history, 1 to ${MAX_HISTORY_HOURS} (default 24).`),
})

const workerLeasesSchema = z
  .object({
    worker: z.string().nullable().describe('The worker name leases were taken with; null when none was given.'),
    leases: z.number().int().describe('Leases of the worker that still hold pages.'),
    pages: z.number().int().describe('Pages those leases hold.'),
    pagesPastExpiry: z
      .number()
      .int()
      .describe(
        'Pages held past their lease’s expiry: neither reported nor given back in time. The next lease call returns them to the pool.',
      ),
    oldestLeaseAgeSeconds: z
      .number()
      .nullable()
      .describe(
        'How long ago the oldest lease still holding the worker’s pages was taken (heartbeats do not renew it); null for leases taken before the service recorded lease times.',
      ),
    earliestExpiresAt: timestampSchema.describe('The earliest expiry among the worker’s leased pages.'),
    latestExpiresAt: timestampSchema.describe('The latest expiry among the worker’s leased pages.'),
  })
  .meta({ id: 'WorkerLeases', description: 'One worker’s leased pages.' })

const leaseHistoryHourSchema = z
  .object({
    hourStart: timestampSchema,
    pagesExpired: z
      .number()
      .int()
      .describe(
        'Leased pages whose lease expired in this hour without a report or a release (counted when a lease call returns them to the pool).',
      ),
    pagesGivenBack: z
      .number()
      .int()
      .describe('Leased pages workers gave back in this hour: released (retry or skip), or their lease ended early.'),
  })
  .meta({ id: 'LeaseHistoryHour', description: 'What became of leased pages in one hour, other than a crawl report.' })

export const leaseOverviewSchema = z
  .object({
    workers: z.array(workerLeasesSchema),
    totalWorkers: z.number().int().describe('Workers holding leased pages (workers may list fewer).'),
    history: z
      .array(leaseHistoryHourSchema)
      .describe(
        'Every hour of the last `hours`, oldest first, the current (partial) one last (0 for hours without events).',
      ),
  })
  .meta({
    id: 'LeaseOverview',
    description: 'Leased pages by worker, those holding pages past expiry first, and the hourly lease history.',
    examples: [
      {
        workers: [
          {
            worker: 'crawler-4',
            leases: 1,
            pages: 25,
            pagesPastExpiry: 25,
            oldestLeaseAgeSeconds: 3600,
            earliestExpiresAt: exampleTime(-3300),
            latestExpiresAt: exampleTime(-3300),
          },
          {
            worker: 'crawler-1',
            leases: 2,
            pages: 130,
            pagesPastExpiry: 0,
            oldestLeaseAgeSeconds: 180,
            earliestExpiresAt: exampleTime(120),
            latestExpiresAt: exampleTime(290),
          },
        ],
        totalWorkers: 2,
        history: [
          { hourStart: exampleTime(-2 * 3600), pagesExpired: 0, pagesGivenBack: 3 },
          { hourStart: exampleTime(-3600), pagesExpired: 25, pagesGivenBack: 1 },
          { hourStart: EXAMPLE_NOW, pagesExpired: 0, pagesGivenBack: 0 },
        ],
      },
    ],
  })

/** Leased pages by worker and the hourly lease history (docs/api.md "Lease overview"). */
export async function leaseOverview(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  query: z.infer<typeof leaseOverviewQuerySchema>,
): Promise<z.infer<typeof leaseOverviewSchema>> {
  const nowMs = deps.clock.nowMs()
  const rows = await readLeasesByWorker(deps.pool, nowMs, query.limit)
  const lastHourMs = Math.floor(nowMs / MS_PER_HOUR) * MS_PER_HOUR
  const firstHourMs = lastHourMs - (query.hours - 1) * MS_PER_HOUR
  const counted = new Map(
    (await readLeaseHistory(deps.pool, { fromMs: firstHourMs, toMs: lastHourMs })).map((h) => [
      h.hourStart.getTime(),
      h,
    ]),
  )
  const history = []
  for (let h = firstHourMs; h <= lastHourMs; h += MS_PER_HOUR) {
    const hour = counted.get(h)
    history.push({
      hourStart: isoTimestamp(h),
      pagesExpired: hour?.pagesExpired ?? 0,
      pagesGivenBack: hour?.pagesGivenBack ?? 0,
    })
  }
  return {
    workers: rows.map((r) => ({
      worker: r.worker,
      leases: r.leases,
      pages: r.pages,
      pagesPastExpiry: r.pagesPastExpiry,
      oldestLeaseAgeSeconds:
        r.oldestLeasedAt === null ? null : Math.max(0, (nowMs - r.oldestLeasedAt.getTime()) / MS_PER_SECOND),
      earliestExpiresAt: isoTimestamp(r.earliestExpiresAt.getTime()),
      latestExpiresAt: isoTimestamp(r.latestExpiresAt.getTime()),
    })),
    totalWorkers: rows[0]?.total ?? 0,
    history,
  }
}
