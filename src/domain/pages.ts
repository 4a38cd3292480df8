import { z } from 'zod'
import { currentEstimates, decodeEstimatorState, ESTIMATOR_NAMES } from '../math/estimators/index.ts'
import {
  countPages,
  deletePage,
  deletePagesWhere,
  getPageById,
  getPageByUrl,
  listPages,
  upsertPages,
  writeSchedules,
  type PageFilter,
  type PageUpsert,
} from '../store/pagesRepo.ts'
import {
  fieldNamesWhere,
  PAGE_FIELDS,
  PAGE_KINDS,
  PAGE_STATUSES,
  type PageField,
  type PageRow,
} from '../core/pageFields.ts'
import { holdSettings, loadSettings, loadSettingsVersion, readOptimizerState } from '../store/settingsRepo.ts'
import { withTransaction, type Queryable } from '../store/transaction.ts'
import { ConflictError, InvalidInputError, NotFoundError, type FieldProblem } from '../core/errors.ts'
import { pageStateOf } from './pageRows.ts'
import { registrationDueAtMs, retimePage, stepContext, type StepContext } from '../core/pageStep.ts'
import { expectedPageFreshness, scheduledCrawlAt } from '../core/crawlTiming.ts'
import { estimatorNameSchema, estimatorSettingsOf, type Settings } from '../core/settings.ts'
import { importanceSchema, MAX_IMPORTANCE, MIN_POSITIVE_IMPORTANCE, rateSchema } from '../core/inputLimits.ts'
import { isoTimestampOrNull, timestampSchema } from '../core/timestamps.ts'
import { normalizeHostName } from './hosts.ts'
import { canonicalUrl, type UrlRules } from '../core/url.ts'
import { assertUrlRulesUnchanged } from './urlRules.ts'
import { EXAMPLE_NOW, exampleTime } from '../core/examples.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'
import type { DomainDeps } from './deps.ts'

const nullableTimestamp = timestampSchema.nullable().describe('RFC 3339 timestamp, or null.')

const leaseSchema = z
  .object({ leaseId: z.string(), worker: z.string().nullable(), expiresAt: timestampSchema })
  .meta({ id: 'Lease', description: 'The unexpired lease holding a page.' })

/** The news page of the README's walk-through, once the budget is set: the example of a Page. */
const PAGE_EXAMPLE = {
  id: '2',
  url: 'https://example.com/news',
  host: 'example.com',
  kind: 'page',
  importance: 3,
  minCrawlsPerDay: null,
  maxCrawlsPerDay: null,
  crawls: 4,
  intervals: 3,
  changes: 2,
  firstCrawledAt: exampleTime(-3 * SECONDS_PER_DAY),
  lastCrawledAt: EXAMPLE_NOW,
  lastChangedAt: EXAMPLE_NOW,
  changesPerDay: 1.0986,
  estimator: 'mleAdaptive',
  estimates: {
    naive: 0.6667,
    lln: 1,
    sa: 1.2495,
    mle: 1.0986,
    mleAdaptive: 1.0986,
    momentMatching: 1.0986,
    choGm: 0.8473,
    lastModified: null,
  },
  crawlsPerDay: 1.9,
  nextCrawlAt: exampleTime(SECONDS_PER_DAY / 1.9),
  dueAt: exampleTime(SECONDS_PER_DAY / 1.9),
  expectedFreshness: 0.7012,
  lease: null,
  status: 'active',
  consecutiveFailures: 0,
  lastHttpStatus: 200,
  lastSuccessAt: EXAMPLE_NOW,
  redirectTo: null,
  etag: null,
  lastModified: null,
  noisy: false,
} as const

/** A page as the API shows it (docs/api.md "Pages"). */
export const pageSchema = z
  .object({
    id: z.string().describe('Page id (a decimal integer as a string).'),
    url: z.string().describe('Normalised absolute URL.'),
    host: z.string(),
    kind: z
      .enum(PAGE_KINDS)
      .describe(
        'page: crawled and reported with POST /v1/observations; sitemap: its document is posted to POST /v1/sitemaps (docs/api.md "Sitemaps as scheduled items").',
      ),
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
      .describe(
        'Every online estimate by estimator name, changes per day, clipped to the settings bounds; null without data.',
      ),
    crawlsPerDay: z.number().nullable().describe('Rate from the last optimisation plus local updates.'),
    nextCrawlAt: nullableTimestamp.describe(
      'When the rate schedules the next crawl: periodic schedule, lastCrawledAt + 1/crawlsPerDay days; Poisson schedule, lastCrawledAt + an exponential draw with rate crawlsPerDay; before the first crawl, due at once; null = never (rate 0).',
    ),
    dueAt: nullableTimestamp.describe(
      'When leases hand the page out: nextCrawlAt, except that recrawl crawls a page seen only once again after at most pages/budget days (exploration), probes a page whose every interval saw a change after half its shortest interval, and then waits the time the probe saved (docs/math.md 3.6).',
    ),
    expectedFreshness: z
      .number()
      .nullable()
      .describe('Expected fraction of time the stored copy is fresh at crawlsPerDay under the running schedule.'),
    lease: leaseSchema
      .nullable()
      .describe('The lease holding the page, if any (an expired one until the next lease call returns it).'),
    status: z
      .enum(PAGE_STATUSES)
      .describe(
        'active: fetched normally; failing: its latest fetches failed, retried with backoff (after 12 in a row out of the budget, rechecked with a wait that keeps doubling, at most a year); gone: 404/410 too often, out of the budget and rechecked after outcomes.goneRecheckDays, then twice as long after each recheck that finds it still out (at most a year); redirected: answered 301/308 (see redirectTo), out of the budget and rechecked as gone pages are. A 2xx makes any page active again.',
      ),
    consecutiveFailures: z.number().int().describe('Failed fetches (404, 410, 5xx, timeouts…) since the last success.'),
    lastHttpStatus: z
      .number()
      .int()
      .nullable()
      .describe('HTTP status of the latest in-order crawl report that had one.'),
    lastSuccessAt: nullableTimestamp.describe('The latest crawl that answered with content or 304.'),
    redirectTo: z.string().nullable().describe('Where a redirected page moved (registered as a page of its own).'),
    etag: z.string().nullable().describe('ETag of the latest successful fetch (If-None-Match).'),
    lastModified: nullableTimestamp.describe('Last-Modified of the latest successful fetch (If-Modified-Since).'),
    noisy: z
      .boolean()
      .describe(
        "Its content hash changed on every fetch, at intervals where a page changing at most hourly would have shown no change at least once with probability 0.99 (docs/math.md 1.11), or even at the shortest probe interval: the crawler hashes noise (ads, timestamps, tokens). Kept at its floor rate until an unchanged fetch; fix the crawler's hashing (hash the normalised main content).",
      ),
  })
  .meta({
    id: 'Page',
    description: 'A page: its attributes, crawl history counts, every online estimate, its rate and due time.',
    examples: [PAGE_EXAMPLE],
  })

type PageView = z.infer<typeof pageSchema>

/** The Page properties computed from the row and the settings; every other one is a stored field's. */
export const DERIVED_PROPERTIES = ['estimator', 'estimates', 'nextCrawlAt', 'expectedFreshness', 'lease'] as const

export const pageListSchema = z
  .object({
    pages: z.array(pageSchema),
    nextCursor: z.string().nullable().describe('Pass as cursor for the next items; null at the end.'),
  })
  .meta({
    id: 'PageList',
    description: 'Pages in id order, one response of a cursor listing.',
    examples: [{ pages: [PAGE_EXAMPLE], nextCursor: '2' }],
  })

/** One page of a PUT /v1/pages batch. */
export const pageRegistrationSchema = z
  .object({
    url: z.string().describe('Absolute http(s) URL.'),
    kind: z
      .enum(PAGE_KINDS)
      .optional()
      .describe(
        'Default page. sitemap: a sitemap or sitemap index of the URL’s host, scheduled like a page and leased with kind sitemap. A URL keeps the kind it was registered with (409 otherwise).',
      ),
    importance: importanceSchema()
      .optional()
      .describe(`Default 1; 0, or ${MIN_POSITIVE_IMPORTANCE} to ${MAX_IMPORTANCE}.`),
    minCrawlsPerDay: rateSchema()
      .nullable()
      .optional()
      .describe('The page’s own lower bound; null or absent = the settings’ minCrawlsPerDay.'),
    maxCrawlsPerDay: rateSchema()
      .nullable()
      .optional()
      .describe('The page’s own upper bound; null or absent = the settings’ maxCrawlsPerDay.'),
  })
  .strict()
  .meta({
    id: 'PageRegistration',
    description:
      'A page (or a sitemap) to register or update: importance and bounds replace the stored ones (absent = default).',
  })

type PageInput = z.infer<typeof pageRegistrationSchema>

export const pageBatchResultSchema = z.object({ created: z.number().int(), updated: z.number().int() }).meta({
  id: 'PageBatchResult',
  description: 'How many pages of the batch were new and how many existed.',
  examples: [{ created: 3, updated: 0 }],
})

/** Every estimator is named in a Page, null until the page's history supports it. */
const NO_ESTIMATES: Readonly<Record<string, null>> = Object.freeze(
  Object.fromEntries(ESTIMATOR_NAMES.map((name) => [name, null])),
)

/** The fields a Page shows as stored, under their JSON names (core/pageFields.ts); times in RFC 3339. */
const SHOWN_FIELDS = fieldNamesWhere<keyof PageRow>((f) => f.json !== undefined)

function shownAsStored(row: PageRow): Record<string, unknown> {
  const view: Record<string, unknown> = {}
  for (const k of SHOWN_FIELDS) {
    const f: PageField = PAGE_FIELDS[k]
    view[f.json!] = f.type === 'timestamptz' ? isoTimestampOrNull(row[k] as number | null) : row[k]
  }
  return view
}

/** A page as the API shows it. Every estimate is derived from the stored estimator state here. */
function toPageView(row: PageRow, settings: Settings): PageView {
  const state = decodeEstimatorState(row.estimatorState)
  return {
    ...(shownAsStored(row) as Omit<PageView, (typeof DERIVED_PROPERTIES)[number]>),
    estimator: settings.estimator,
    estimates: state === null ? { ...NO_ESTIMATES } : currentEstimates(state, estimatorSettingsOf(settings)),
    nextCrawlAt: isoTimestampOrNull(
      scheduledCrawlAt({
        lastCrawledAtMs: row.lastCrawledAtMs,
        crawlsPerDay: row.crawlsPerDay,
        spacing: settings.schedule,
        dueAtMs: row.nextCrawlAtMs,
      }),
    ),
    expectedFreshness: expectedPageFreshness(row, settings, row.crawlsPerDay),
    lease:
      row.leaseId !== null && row.leaseExpiresAtMs !== null
        ? { leaseId: row.leaseId, worker: row.leasedBy, expiresAt: isoTimestampOrNull(row.leaseExpiresAtMs)! }
        : null,
  }
}

/**
 * Bulk upsert (PUT semantics): every given page gets exactly the given attributes (importance
 * defaults to 1, bounds to none). The whole batch is checked first; any bad item → 400 with every
 * problem listed, nothing written. Rates and due times of the touched pages follow at once.
 */
export async function putPages(
  deps: DomainDeps,
  pages: readonly PageInput[],
): Promise<{ created: number; updated: number }> {
  const problems: FieldProblem[] = []
  const upserts: PageUpsert[] = []
  const firstIndexOf = new Map<string, number>()
  const read = await loadSettingsVersion(deps.pool)
  const urlRules = read.settings.urls
  pages.forEach((page, index) => {
    const canonical = canonicalUrl(page.url, urlRules)
    if ('error' in canonical) {
      problems.push({ path: `/body/pages/${index}/url`, message: canonical.error })
      return
    }
    const earlier = firstIndexOf.get(canonical.url)
    if (earlier !== undefined) {
      problems.push({
        path: `/body/pages/${index}/url`,
        message: `same page as /body/pages/${earlier}/url (${canonical.url})`,
      })
      return
    }
    firstIndexOf.set(canonical.url, index)
    const min = page.minCrawlsPerDay ?? null
    const max = page.maxCrawlsPerDay ?? null
    if (min !== null && max !== null && max < min) {
      problems.push({
        path: `/body/pages/${index}/maxCrawlsPerDay`,
        message: 'maxCrawlsPerDay must be at least minCrawlsPerDay',
      })
      return
    }
    upserts.push({
      ...canonical,
      kind: page.kind ?? 'page',
      importance: page.importance ?? 1,
      minCrawlsPerDay: min,
      maxCrawlsPerDay: max,
    })
  })
  if (problems.length > 0)
    throw new InvalidInputError(
      `${problems.length} of ${pages.length} pages are invalid; nothing was changed`,
      problems,
    )

  const nowMs = deps.clock.nowMs()
  return withTransaction(deps.pool, async (client) => {
    const settings = await holdSettings(client, read)
    assertUrlRulesUnchanged(urlRules, settings.urls)
    const ctx = stepContext(settings, await readOptimizerState(client), nowMs, deps.random)
    const written = await upsertPages(client, upserts, nowMs, nowMs)
    if (written.length < upserts.length) throw otherKindConflict(upserts, written)
    // New pages, most important first, get first due times spread over the time the budget needs for them.
    const fresh = written.filter((w) => w.created).sort((a, b) => b.row.importance - a.row.importance)
    const created = fresh.length
    const firstDue = new Map(fresh.map((w, k) => [w.row.id, registrationDueAtMs(ctx, k, created)]))
    const schedules = written.map(({ row }) => {
      const page = pageStateOf(row)
      page.nextCrawlAtMs = firstDue.get(row.id) ?? page.nextCrawlAtMs
      // Importance and bounds may have changed: the rate the stored λ gives, and its due time.
      return { id: row.id, ...retimePage(page, ctx) }
    })
    await writeSchedules(client, schedules, nowMs)
    return { created, updated: written.length - created }
  })
}

/** The refusal of a batch that gives a stored URL another kind: every such URL, with the kind it has. */
function otherKindConflict(upserts: readonly PageUpsert[], written: readonly { row: PageRow }[]): ConflictError {
  const done = new Set(written.map((w) => w.row.url))
  const clashes = upserts.filter((u) => !done.has(u.url))
  const shown = clashes
    .slice(0, 10)
    .map((u) => `${u.url} is registered as a ${u.kind === 'page' ? 'sitemap' : 'page'}`)
    .join('; ')
  return new ConflictError(
    `${clashes.length} URL(s) of the batch are registered with another kind (a URL is a page or a sitemap, never both): ${shown}${clashes.length > 10 ? '; …' : ''}; nothing was changed`,
  )
}

const MAX_PAGE_ID = 9_223_372_036_854_775_807n

/** Whether a string can be a page id (a positive bigint). Ids are opaque to clients: anything else names no page (404). */
export function isPageId(id: string): boolean {
  return /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= MAX_PAGE_ID
}

export async function getPage(deps: Pick<DomainDeps, 'pool'>, id: string): Promise<PageView> {
  const row = isPageId(id) ? await getPageById(deps.pool, id) : null
  if (!row) throw new NotFoundError(`no page with id ${id}`)
  return toPageView(row, await loadSettings(deps.pool))
}

/** The page of any spelling of its URL: the lookup is by the canonical form under the URL rules in force. */
export async function getPageForUrl(deps: Pick<DomainDeps, 'pool'>, rawUrl: string): Promise<PageView> {
  const settings = await loadSettings(deps.pool)
  const canonical = canonicalUrl(rawUrl, settings.urls)
  if ('error' in canonical)
    throw new InvalidInputError(canonical.error, [{ path: '/querystring/url', message: canonical.error }])
  const row = await getPageByUrl(deps.pool, canonical.url)
  if (!row) throw new NotFoundError(`no page with url ${canonical.url}`)
  return toPageView(row, settings)
}

/**
 * The conditions of a page filter, declared once for the listing's query string (GET /v1/pages) and the bulk
 * action's body (POST /v1/pages/bulk): every given condition must hold.
 */
export const pageFilterFieldsSchema = z.object({
  host: z.string().min(1).optional().describe('Only pages of this host.'),
  urlPrefix: z
    .string()
    .min(1)
    .optional()
    .describe('Only pages whose canonical URL starts with this text (taken literally).'),
  status: z.enum(PAGE_STATUSES).optional().describe('Only pages with this status.'),
  noisy: z.boolean().optional().describe('Only pages flagged noisy (true) or not (false).'),
  kind: z.enum(PAGE_KINDS).optional().describe('Only pages (page) or only sitemap items (sitemap).'),
})

/** Which pages a listing or a bulk action takes, as given (absent = any). */
type PageFilterInput = z.infer<typeof pageFilterFieldsSchema>

/** The filter with its host made canonical; `path` names the request part in errors. */
function pageFilterOf(input: PageFilterInput, rules: UrlRules, path: string): PageFilter {
  return {
    host: input.host === undefined ? null : normalizeHostName(input.host, rules, `${path}/host`),
    urlPrefix: input.urlPrefix ?? null,
    status: input.status ?? null,
    noisy: input.noisy ?? null,
    kind: input.kind ?? null,
  }
}

/** Cursor paging by id: the cursor is the last id of the previous page, opaque to clients. */
export async function listPageViews(
  deps: Pick<DomainDeps, 'pool'>,
  options: PageFilterInput & { cursor: string | null; limit: number },
): Promise<z.infer<typeof pageListSchema>> {
  let afterId: string | null = null
  if (options.cursor !== null) {
    // A cursor is a page id (or 0): a bigint, so a longer or larger number is no cursor.
    if (!/^\d{1,19}$/.test(options.cursor) || BigInt(options.cursor) > MAX_PAGE_ID) {
      throw new InvalidInputError('cursor is not a value returned as nextCursor', [
        { path: '/querystring/cursor', message: 'invalid cursor' },
      ])
    }
    afterId = options.cursor
  }
  const settings = await loadSettings(deps.pool)
  const filter = pageFilterOf(options, settings.urls, '/querystring')
  const rows = await listPages(deps.pool, { filter, afterId, limit: options.limit + 1 })
  const more = rows.length > options.limit
  const pageRows = more ? rows.slice(0, options.limit) : rows
  return {
    pages: pageRows.map((r) => toPageView(r, settings)),
    nextCursor: more ? pageRows[pageRows.length - 1]!.id : null,
  }
}

export async function removePage(deps: Pick<DomainDeps, 'pool'>, id: string): Promise<void> {
  const deleted = isPageId(id) && (await withTransaction(deps.pool, (client) => deletePage(client, id)))
  if (!deleted) throw new NotFoundError(`no page with id ${id}`)
}

const ANY_PAGE: PageFilter = { host: null, urlPrefix: null, status: null, noisy: null, kind: null }

/** Pages read and rewritten per statement when every page is re-timed after a settings change. */
const RETIME_CHUNK_PAGES = 2000

/**
 * Re-derives every page's estimates (new clipping bounds, LLN α, estimator choice), rate and due
 * time after a settings change, streaming pages in id order in chunks. Runs inside the caller's
 * transaction, which holds the settings `update` (settingsRepo.ts).
 */
export async function retimeAllPages(
  client: Queryable,
  ctx: StepContext,
  chunkSize = RETIME_CHUNK_PAGES,
): Promise<number> {
  let afterId: string | null = null
  let total = 0
  for (;;) {
    const rows: PageRow[] = await listPages(client, { filter: ANY_PAGE, afterId, limit: chunkSize })
    if (rows.length === 0) return total
    const schedules = rows.map((row) => ({ id: row.id, ...retimePage(pageStateOf(row), ctx, { reestimate: true }) }))
    await writeSchedules(client, schedules, ctx.nowMs)
    total += rows.length
    afterId = rows[rows.length - 1]!.id
  }
}

const pageFilterSchema = pageFilterFieldsSchema
  .strict()
  .meta({ id: 'PageFilter', description: 'Which pages: every given condition must hold. At least one is required.' })

export const bulkPagesSchema = z
  .object({
    filter: pageFilterSchema.refine((f) => Object.values(f).some((v) => v !== undefined), {
      message: 'give at least one of host, urlPrefix, status, noisy, kind',
    }),
    action: z
      .enum(['count', 'delete', 'update'])
      .describe('count changes nothing; delete removes the pages and their history; update sets what `set` gives.'),
    set: z
      .object({
        importance: importanceSchema().optional(),
        minCrawlsPerDay: rateSchema().nullable().optional().describe('null = the settings’ minCrawlsPerDay.'),
        maxCrawlsPerDay: rateSchema().nullable().optional().describe('null = the settings’ maxCrawlsPerDay.'),
      })
      .strict()
      .meta({
        id: 'BulkPageAttributes',
        description: 'For update: the attributes to set; an absent one keeps each page’s value.',
      })
      .optional(),
    dryRun: z.boolean().optional().describe('true: only count the pages the action would take (default false).'),
  })
  .strict()
  .refine((b) => b.action !== 'update' || (b.set !== undefined && Object.values(b.set).some((v) => v !== undefined)), {
    message: 'update needs set with at least one of importance, minCrawlsPerDay, maxCrawlsPerDay',
    path: ['set'],
  })
  .meta({
    id: 'BulkPages',
    description: 'An action on every page a filter takes, or only its count (dryRun).',
    examples: [{ filter: { host: 'example.org', status: 'gone' }, action: 'delete', dryRun: true }],
  })

export const bulkPagesResultSchema = z
  .object({
    matched: z.number().int().describe('Pages the filter took.'),
    applied: z.number().int().describe('Pages deleted or updated; 0 for count and dryRun.'),
  })
  .meta({
    id: 'BulkPagesResult',
    description: 'What a bulk action took and did.',
    examples: [{ matched: 8, applied: 0 }],
  })

/** Pages rewritten per putPages call of a bulk update. */
const BULK_UPDATE_CHUNK = 1000

/**
 * A bulk action (docs/api.md "Bulk actions"): count, delete or update the pages a filter takes. An update goes
 * through putPages with each page's own values for what `set` leaves out, so rates and due times follow as for
 * any registration.
 */
export async function bulkPages(
  deps: DomainDeps,
  body: z.infer<typeof bulkPagesSchema>,
): Promise<z.infer<typeof bulkPagesResultSchema>> {
  const settings = await loadSettings(deps.pool)
  const filter = pageFilterOf(body.filter, settings.urls, '/body/filter')
  if (body.action === 'count' || body.dryRun === true)
    return { matched: await countPages(deps.pool, filter), applied: 0 }
  if (body.action === 'delete') {
    const deleted: number = await withTransaction(deps.pool, (client) => deletePagesWhere(client, filter))
    return { matched: deleted, applied: deleted }
  }
  const set = body.set!
  let afterId: string | null = null
  let applied = 0
  for (;;) {
    const rows: PageRow[] = await listPages(deps.pool, { filter, afterId, limit: BULK_UPDATE_CHUNK })
    if (rows.length === 0) return { matched: applied, applied }
    await putPages(
      deps,
      rows.map((r) => ({
        url: r.url,
        importance: set.importance ?? r.importance,
        minCrawlsPerDay: set.minCrawlsPerDay !== undefined ? set.minCrawlsPerDay : r.minCrawlsPerDay,
        maxCrawlsPerDay: set.maxCrawlsPerDay !== undefined ? set.maxCrawlsPerDay : r.maxCrawlsPerDay,
      })),
    )
    applied += rows.length
    afterId = rows[rows.length - 1]!.id
  }
}
