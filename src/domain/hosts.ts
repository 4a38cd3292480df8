import { z } from 'zod'
import {
  deleteHost,
  getHost,
  HOST_OVERVIEW_SORTS,
  hostRollupRefreshedAt,
  listHosts,
  rankHosts,
  readHostNumbers,
  refreshHostRollup,
  upsertHost,
  type HostOverviewClock,
  type HostOverviewRow,
  type HostOverviewSort,
  type HostRow,
} from '../store/hostsRepo.ts'
import { loadSettings } from '../store/settingsRepo.ts'
import { withTransaction, type Queryable } from '../store/transaction.ts'
import { InvalidInputError, NotFoundError } from '../core/errors.ts'
import { MIN_POSITIVE_DELAY_SECONDS, rateSchema } from '../core/inputLimits.ts'
import { canonicalHostName, type UrlRules } from '../core/url.ts'
import { pagesByStatusSchema } from '../core/pageFields.ts'
import { MS_PER_SECOND, SECONDS_PER_DAY } from '../math/units.ts'
import type { DomainDeps } from './deps.ts'

/**
 * A host name as pages carry it: the host of a canonical URL under the URL rules (src/core/url.ts).
 * `path` names the request field in the error.
 */
export function normalizeHostName(raw: string, rules: UrlRules, path = '/params/host'): string {
  const host = canonicalHostName(raw, rules)
  if (host === null) throw new InvalidInputError(`${raw} is not a host name`, [{ path, message: 'not a host name' }])
  return host
}

/** The canonical name of a host, under the URL rules held `share` (settingsRepo.ts): a change of the rules waits for this transaction. */
async function canonicalHostIn(client: Queryable, rawHost: string): Promise<string> {
  return normalizeHostName(rawHost, (await loadSettings(client, 'share')).urls)
}

/** A PUT /v1/hosts/{host} body: both limits are replaced; an absent one is null. */
export const hostLimitsSchema = z
  .object({
    maxCrawlsPerDay: rateSchema()
      .nullable()
      .optional()
      .describe('Cap on the host’s total crawl rate (docs/math.md 3.2); null or absent = none.'),
    minDelaySeconds: z
      .number()
      .min(0)
      .max(SECONDS_PER_DAY)
      .refine((v) => v === 0 || v >= MIN_POSITIVE_DELAY_SECONDS, {
        error: `must be 0 or ${MIN_POSITIVE_DELAY_SECONDS} to 86400 seconds`,
      })
      .nullable()
      .optional()
      .describe('Minimum time between two leased pages of the host; null or absent = none.'),
  })
  .strict()
  .refine((b) => b.maxCrawlsPerDay !== undefined || b.minDelaySeconds !== undefined, {
    message: 'give maxCrawlsPerDay, minDelaySeconds or both (null = no limit)',
  })
  .meta({
    id: 'HostLimits',
    description: 'PUT semantics: both limits are replaced; an absent one is null. At least one must be given.',
    examples: [{ maxCrawlsPerDay: 2000, minDelaySeconds: 10 }],
  })

const HOST_EXAMPLE = {
  host: 'example.org',
  maxCrawlsPerDay: 2000,
  minDelaySeconds: 10,
  crawlDelaySeconds: null,
  throttleDelaySeconds: 60,
  paceSeconds: 60,
  pages: 120,
}

export const hostSchema = z
  .object({
    host: z.string(),
    maxCrawlsPerDay: z.number().nullable().describe('Cap on the host’s total crawl rate; null = none.'),
    minDelaySeconds: z.number().nullable().describe('Minimum time between two leased pages of the host; null = none.'),
    crawlDelaySeconds: z
      .number()
      .nullable()
      .describe('The robots.txt Crawl-delay crawlers reported for the host (robotsCrawlDelaySeconds); null = none.'),
    throttleDelaySeconds: z
      .number()
      .nullable()
      .describe(
        'Adaptive delay: doubles when the host answers 429 (or 503 with Retry-After) or mostly errors, shrinks again with every normal answer; null = none.',
      ),
    paceSeconds: z
      .number()
      .describe(
        'The time between two leased pages of the host: the largest of minDelaySeconds, crawlDelaySeconds and throttleDelaySeconds. A paced host also gets at most 86,400 / pace crawls per day from the optimiser.',
      ),
    pages: z.number().int().describe('Pages registered on the host.'),
  })
  .meta({ id: 'Host', description: 'A host with politeness limits or pacing.', examples: [HOST_EXAMPLE] })

type Host = z.infer<typeof hostSchema>

export const hostListSchema = z.object({ hosts: z.array(hostSchema) }).meta({
  id: 'HostList',
  description: 'Every host with limits or pacing, by name.',
  examples: [{ hosts: [HOST_EXAMPLE] }],
})

function toHost(row: HostRow): Host {
  return {
    host: row.host,
    maxCrawlsPerDay: row.maxCrawlsPerDay,
    minDelaySeconds: row.minDelaySeconds,
    crawlDelaySeconds: row.crawlDelaySeconds,
    throttleDelaySeconds: row.throttleDelaySeconds,
    paceSeconds: row.paceSeconds,
    pages: row.pages,
  }
}

export async function putHostLimits(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  rawHost: string,
  limits: { maxCrawlsPerDay: number | null; minDelaySeconds: number | null },
): Promise<Host> {
  const host = await withTransaction(deps.pool, async (c) => {
    const name = await canonicalHostIn(c, rawHost)
    await upsertHost(c, { host: name, ...limits }, deps.clock.nowMs())
    return name
  })
  return toHost((await getHost(deps.pool, host))!)
}

export async function removeHostLimits(deps: Pick<DomainDeps, 'pool'>, rawHost: string): Promise<void> {
  const { host, deleted } = await withTransaction(deps.pool, async (c) => {
    const name = await canonicalHostIn(c, rawHost)
    return { host: name, deleted: await deleteHost(c, name) }
  })
  if (!deleted) throw new NotFoundError(`host ${host} has no limits`)
}

export async function listHostLimits(deps: Pick<DomainDeps, 'pool'>): Promise<z.infer<typeof hostListSchema>> {
  return { hosts: (await listHosts(deps.pool)).map(toHost) }
}

const HOST_SORT_KEYS = Object.keys(HOST_OVERVIEW_SORTS) as [HostOverviewSort, ...HostOverviewSort[]]

/** Most hosts one overview response carries. */
const MAX_OVERVIEW_HOSTS = 500

export const hostOverviewQuerySchema = z.object({
  sort: z
    .enum(HOST_SORT_KEYS)
    .default('crawlsLastDay')
    .describe(
      'The column to sort by, by its value at the last refresh of the ranking (after every optimiser run); ties are broken by host name.',
    ),
  order: z.enum(['asc', 'desc']).default('desc').describe('Sort direction; hosts without a value come last.'),
  hostPrefix: z.string().min(1).max(253).optional().describe('Only hosts whose name starts with this text.'),
  cursor: z.string().optional().describe('nextCursor of the previous response.'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(50)
    .transform((limit) => Math.min(limit, MAX_OVERVIEW_HOSTS))
    .describe(
      `Hosts per response, default 50; values above ${MAX_OVERVIEW_HOSTS} are served as ${MAX_OVERVIEW_HOSTS}.`,
    ),
})

const countsOf = (description: string) => z.number().int().describe(description)

const hostOverviewSchema = z
  .object({
    host: z.string(),
    pages: countsOf('Pages registered on the host.'),
    pagesByStatus: pagesByStatusSchema,
    pagesOverdue: countsOf('Pages due and not held by an unexpired lease.'),
    plannedCrawlsPerDay: z.number().describe('Σ crawlsPerDay of the host’s pages (the current plan).'),
    capCrawlsPerDay: z
      .number()
      .nullable()
      .describe('The host’s crawl cap: the smaller of maxCrawlsPerDay and 86,400 / paceSeconds; null = none.'),
    maxCrawlsPerDay: z
      .number()
      .nullable()
      .describe('The operator’s cap on the host (PUT /v1/hosts/{host}); null = none.'),
    paceSeconds: z.number().describe('Least time between two leased pages of the host; 0 = not paced.'),
    throttleDelaySeconds: z.number().nullable().describe('The adaptive delay part of the pace; null = none.'),
    blockedUntil: z
      .string()
      .nullable()
      .describe('While the host is backed off (docs/api.md "Host backoff"): when it may be leased again; else null.'),
    blockIncidents: countsOf('Backoff incidents since the host was last forgiven.'),
    expectedFreshness: z
      .number()
      .nullable()
      .describe('Σ importance·f(ρ) / Σ importance over the host’s pages under the current plan; null without weight.'),
    crawlsLastDay: countsOf('Crawls of the host stored with a crawl time in the last 24 hours.'),
    failuresLastDay: z
      .object({
        total: countsOf('Crawls in the last 24 hours with a status outside 200…399 or no HTTP answer.'),
        http4xx: countsOf('4xx answers other than 429.'),
        http429: countsOf('429 Too Many Requests.'),
        http5xx: countsOf('5xx answers.'),
        httpOther: countsOf('Statuses below 200.'),
        timeout: countsOf('No answer: timeouts.'),
        dns: countsOf('No answer: DNS errors.'),
        connection: countsOf('No answer: connection errors.'),
        tls: countsOf('No answer: TLS errors.'),
        other: countsOf('No answer: other errors.'),
      })
      .meta({ id: 'HostFailures', description: 'Failed fetches of the host in the last 24 hours, by kind.' }),
  })
  .meta({ id: 'HostOverview', description: 'One host’s pages, plan, limits, backoff and failures.' })

export const hostOverviewListSchema = z
  .object({
    hosts: z.array(hostOverviewSchema),
    total: z.number().int().describe('Hosts matching the filter.'),
    nextCursor: z.string().nullable().describe('Pass as cursor for the next hosts; null at the end.'),
  })
  .meta({
    id: 'HostOverviewList',
    description: 'One response of the host overview, in the requested order.',
    examples: [
      {
        hosts: [
          {
            host: 'example.org',
            pages: 120,
            pagesByStatus: { active: 112, failing: 5, gone: 3, redirected: 0, noisy: 1 },
            pagesOverdue: 4,
            plannedCrawlsPerDay: 1850.5,
            capCrawlsPerDay: 2000,
            maxCrawlsPerDay: 2000,
            paceSeconds: 10,
            throttleDelaySeconds: null,
            blockedUntil: null,
            blockIncidents: 0,
            expectedFreshness: 0.93,
            crawlsLastDay: 1790,
            failuresLastDay: {
              total: 14,
              http4xx: 6,
              http429: 0,
              http5xx: 5,
              httpOther: 0,
              timeout: 2,
              dns: 1,
              connection: 0,
              tls: 0,
              other: 0,
            },
          },
        ],
        total: 11,
        nextCursor: '1',
      },
    ],
  })

function toHostOverview(r: HostOverviewRow, nowMs: number): z.infer<typeof hostOverviewSchema> {
  const pace = r.paceSeconds ?? 0
  const paceCap = pace > 0 ? SECONDS_PER_DAY / pace : null
  const caps = [r.maxCrawlsPerDay, paceCap].filter((c): c is number => c !== null)
  return {
    host: r.host,
    pages: r.pages,
    pagesByStatus: {
      active: r.pagesActive,
      failing: r.pagesFailing,
      gone: r.pagesGone,
      redirected: r.pagesRedirected,
      noisy: r.pagesNoisy,
    },
    pagesOverdue: r.pagesOverdue,
    plannedCrawlsPerDay: r.plannedCrawlsPerDay,
    capCrawlsPerDay: caps.length === 0 ? null : Math.min(...caps),
    maxCrawlsPerDay: r.maxCrawlsPerDay,
    paceSeconds: pace,
    throttleDelaySeconds: r.throttleDelaySeconds,
    blockedUntil: r.blockedUntil !== null && r.blockedUntil.getTime() > nowMs ? r.blockedUntil.toISOString() : null,
    blockIncidents: r.blockIncidents ?? 0,
    expectedFreshness: r.importanceTotal > 0 ? r.weightedFreshness / r.importanceTotal : null,
    crawlsLastDay: r.crawlsLastDay,
    failuresLastDay: {
      total: r.failuresLastDay,
      http4xx: r.http4xx,
      http429: r.http429,
      http5xx: r.http5xx,
      httpOther: r.httpOther,
      timeout: r.timeouts,
      dns: r.dns,
      connection: r.connection,
      tls: r.tls,
      other: r.otherErrors,
    },
  }
}

/** Largest offset a cursor may carry (far beyond any host count). */
const MAX_OVERVIEW_OFFSET = 1e9

/** The overview's clock: now, and the settings its freshness is computed under. */
async function overviewClock(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
): Promise<HostOverviewClock & { staleMs: number }> {
  const settings = await loadSettings(deps.pool)
  return {
    nowMs: deps.clock.nowMs(),
    spacing: settings.schedule,
    defaultChangesPerDay: settings.defaultChangesPerDay,
    staleMs: HOST_RANKING_STALE_RUNS * settings.reoptimizeSeconds * MS_PER_SECOND,
  }
}

/**
 * The host overview's ranking is recomputed after every optimiser run; a call that finds it older than this
 * many optimiser periods (no run lately: none is due yet after a start, or runs fail) recomputes it first.
 */
const HOST_RANKING_STALE_RUNS = 2

/**
 * Recomputes the ranking of the host overview (host_rollup, docs/design.md "Host overview"); false when
 * another refresh is under way (its result will do).
 */
export async function refreshHostRanking(deps: Pick<DomainDeps, 'pool' | 'clock'>): Promise<boolean> {
  const clock = await overviewClock(deps)
  return withTransaction(deps.pool, (c) => refreshHostRollup(c, clock))
}

/** One page of the host overview (docs/api.md "Host overview"); the cursor is an offset, opaque to clients. */
export async function listHostOverview(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  query: z.infer<typeof hostOverviewQuerySchema>,
): Promise<z.infer<typeof hostOverviewListSchema>> {
  let offset = 0
  if (query.cursor !== undefined) {
    if (!/^\d{1,10}$/.test(query.cursor) || Number(query.cursor) > MAX_OVERVIEW_OFFSET) {
      throw new InvalidInputError('cursor is not a value returned as nextCursor', [
        { path: '/querystring/cursor', message: 'invalid cursor' },
      ])
    }
    offset = Number(query.cursor)
  }
  const clock = await overviewClock(deps)
  const refreshedAt = await hostRollupRefreshedAt(deps.pool)
  // Never computed, older than allowed, or computed at a time still to come (the clock went back).
  if (
    refreshedAt === null ||
    refreshedAt.getTime() > clock.nowMs ||
    clock.nowMs - refreshedAt.getTime() > clock.staleMs
  ) {
    await withTransaction(deps.pool, (c) => refreshHostRollup(c, clock))
  }
  const ranked = await rankHosts(deps.pool, {
    hostPrefix: query.hostPrefix ?? null,
    sort: query.sort,
    descending: query.order === 'desc',
    offset,
    limit: query.limit,
  })
  const numbers = new Map((await readHostNumbers(deps.pool, clock, ranked.hosts)).map((r) => [r.host, r]))
  // A host that lost its last page since it was ranked has no numbers and is left out.
  const rows = ranked.hosts.map((h) => numbers.get(h)).filter((r): r is HostOverviewRow => r !== undefined)
  const next = offset + ranked.hosts.length
  return {
    hosts: rows.map((r) => toHostOverview(r, clock.nowMs)),
    total: ranked.total,
    nextCursor: ranked.hosts.length > 0 && next < ranked.total ? String(next) : null,
  }
}
