import type pg from 'pg'
import type { Random } from '../math/random.ts'
import { currentEstimates, decodeEstimatorState, ESTIMATOR_NAMES } from '../math/estimators/index.ts'
import {
  deletePage,
  getPageById,
  getPageByUrl,
  listPages,
  upsertPages,
  writeSchedules,
  type PageRow,
  type PageUpsert,
} from '../store/pagesRepo.ts'
import { readOptimizerState, readSettingsDocument, readSettingsDocumentShared } from '../store/settingsRepo.ts'
import { withTransaction, type Queryable } from '../store/transaction.ts'
import type { Clock } from './clock.ts'
import { InvalidInputError, NotFoundError, type FieldProblem } from './errors.ts'
import { estimatorSettingsOf } from './ingest.ts'
import {
  crawlsPerDayFor,
  expectedPageFreshness,
  explorationIntervalDays,
  lambdaForHost,
  retimedCrawlAtMs,
  scheduledCrawlAt,
} from './schedule.ts'
import { settingsFromStored, type Settings } from './settings.ts'
import { normalizeHostName } from './hosts.ts'
import { normalizeUrl } from './url.ts'

export interface PagesDeps {
  pool: pg.Pool
  clock: Clock
  random: Random
}

/** A page as the API shows it (API.md "Pages"). */
export interface PageView {
  id: string
  url: string
  host: string
  importance: number
  minCrawlsPerDay: number | null
  maxCrawlsPerDay: number | null
  crawls: number
  intervals: number
  changes: number
  firstCrawledAt: string | null
  lastCrawledAt: string | null
  lastChangedAt: string | null
  changesPerDay: number | null
  estimator: Settings['estimator']
  estimates: Record<string, number | null>
  crawlsPerDay: number | null
  nextCrawlAt: string | null
  dueAt: string | null
  expectedFreshness: number | null
  lease: { leaseId: string; worker: string | null; expiresAt: string } | null
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString())

/** Every estimator is named in a Page, null until the page's history supports it. */
const NO_ESTIMATES: Readonly<Record<string, null>> = Object.freeze(Object.fromEntries(ESTIMATOR_NAMES.map((name) => [name, null])))

export function toPageView(row: PageRow, settings: Settings): PageView {
  return {
    id: row.id,
    url: row.url,
    host: row.host,
    importance: row.importance,
    minCrawlsPerDay: row.minCrawlsPerDay,
    maxCrawlsPerDay: row.maxCrawlsPerDay,
    crawls: row.crawls,
    intervals: row.intervals,
    changes: row.changes,
    firstCrawledAt: iso(row.firstCrawledAt),
    lastCrawledAt: iso(row.lastCrawledAt),
    lastChangedAt: iso(row.lastChangedAt),
    changesPerDay: row.changesPerDay,
    estimator: settings.estimator,
    estimates: { ...NO_ESTIMATES, ...row.estimates },
    crawlsPerDay: row.crawlsPerDay,
    nextCrawlAt: iso(
      scheduledCrawlAt({
        lastCrawledAt: row.lastCrawledAt,
        crawlsPerDay: row.crawlsPerDay,
        schedule: settings.schedule,
        dueAt: row.nextCrawlAt,
      }),
    ),
    dueAt: iso(row.nextCrawlAt),
    expectedFreshness: expectedPageFreshness(row, settings, row.crawlsPerDay),
    lease:
      row.leaseId !== null && row.leaseExpiresAt !== null
        ? { leaseId: row.leaseId, worker: row.leasedBy, expiresAt: row.leaseExpiresAt.toISOString() }
        : null,
  }
}

export interface PageInput {
  url: string
  importance?: number | undefined
  minCrawlsPerDay?: number | null | undefined
  maxCrawlsPerDay?: number | null | undefined
}

/**
 * Bulk upsert (PUT semantics): every given page gets exactly the given attributes (importance
 * defaults to 1, bounds to none). The whole batch is checked first; any bad item → 400 with every
 * problem listed, nothing written. Rates and due times of the touched pages follow at once.
 */
export async function putPages(deps: PagesDeps, pages: readonly PageInput[]): Promise<{ created: number; updated: number }> {
  const problems: FieldProblem[] = []
  const upserts: PageUpsert[] = []
  const firstIndexOf = new Map<string, number>()
  pages.forEach((page, index) => {
    const normalized = normalizeUrl(page.url)
    if ('error' in normalized) {
      problems.push({ path: `/body/pages/${index}/url`, message: normalized.error })
      return
    }
    const earlier = firstIndexOf.get(normalized.url)
    if (earlier !== undefined) {
      problems.push({ path: `/body/pages/${index}/url`, message: `same page as /body/pages/${earlier}/url (${normalized.url})` })
      return
    }
    firstIndexOf.set(normalized.url, index)
    const min = page.minCrawlsPerDay ?? null
    const max = page.maxCrawlsPerDay ?? null
    if (min !== null && max !== null && max < min) {
      problems.push({ path: `/body/pages/${index}/maxCrawlsPerDay`, message: 'maxCrawlsPerDay must be at least minCrawlsPerDay' })
      return
    }
    upserts.push({ ...normalized, importance: page.importance ?? 1, minCrawlsPerDay: min, maxCrawlsPerDay: max })
  })
  if (problems.length > 0) throw new InvalidInputError(`${problems.length} of ${pages.length} pages are invalid; nothing was changed`, problems)

  const nowMs = deps.clock.nowMs()
  return withTransaction(deps.pool, async (client) => {
    const settings = settingsFromStored(await readSettingsDocumentShared(client))
    const optimizer = await readOptimizerState(client)
    const written = await upsertPages(client, upserts, new Date(nowMs))
    let created = 0
    const schedules = written.map(({ row, created: isNew }) => {
      if (isNew) created++
      return { id: row.id, ...retimedRow(row, row.changesPerDay, settings, optimizer, nowMs, deps.random) }
    })
    await writeSchedules(client, schedules)
    return { created, updated: written.length - created }
  })
}

/** A page's rate and due time from its scheduling estimate and the stored multipliers. */
function retimedRow(
  row: PageRow,
  changesPerDay: number | null,
  settings: Settings,
  optimizer: { lambda: number | null; hostLambdas: Record<string, number>; pages: number | null },
  nowMs: number,
  random: Random,
): { changesPerDay: number | null; crawlsPerDay: number; nextCrawlAt: string | null } {
  const crawlsPerDay = crawlsPerDayFor({ ...row, changesPerDay }, settings, lambdaForHost(optimizer, row.host))
  const nextMs = retimedCrawlAtMs({
    lastCrawledAtMs: row.lastCrawledAt?.getTime() ?? null,
    nextCrawlAtMs: row.nextCrawlAt?.getTime() ?? null,
    previousCrawlsPerDay: row.crawlsPerDay,
    explorationIntervalDays: row.intervals === 0 ? explorationIntervalDays(optimizer.pages, settings) : null,
    crawlsPerDay,
    schedule: settings.schedule,
    nowMs,
    random,
  })
  return { changesPerDay, crawlsPerDay, nextCrawlAt: nextMs === null ? null : new Date(nextMs).toISOString() }
}

async function currentSettings(q: Queryable): Promise<Settings> {
  return settingsFromStored(await readSettingsDocument(q))
}

const MAX_PAGE_ID = 9_223_372_036_854_775_807n

/** Whether a string can be a page id (a positive bigint). Ids are opaque to clients: anything else names no page (404). */
export function isPageId(id: string): boolean {
  return /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= MAX_PAGE_ID
}

export async function getPage(deps: Pick<PagesDeps, 'pool'>, id: string): Promise<PageView> {
  const row = isPageId(id) ? await getPageById(deps.pool, id) : null
  if (!row) throw new NotFoundError(`no page with id ${id}`)
  return toPageView(row, await currentSettings(deps.pool))
}

export async function getPageForUrl(deps: Pick<PagesDeps, 'pool'>, rawUrl: string): Promise<PageView> {
  const normalized = normalizeUrl(rawUrl)
  if ('error' in normalized) throw new InvalidInputError(normalized.error, [{ path: '/querystring/url', message: normalized.error }])
  const row = await getPageByUrl(deps.pool, normalized.url)
  if (!row) throw new NotFoundError(`no page with url ${normalized.url}`)
  return toPageView(row, await currentSettings(deps.pool))
}

/** Cursor paging by id: the cursor is the last id of the previous page, opaque to clients. */
export async function listPageViews(
  deps: Pick<PagesDeps, 'pool'>,
  options: { host: string | null; cursor: string | null; limit: number },
): Promise<{ pages: PageView[]; nextCursor: string | null }> {
  let afterId: string | null = null
  if (options.cursor !== null) {
    if (!/^\d{1,19}$/.test(options.cursor)) {
      throw new InvalidInputError('cursor is not a value returned as nextCursor', [{ path: '/querystring/cursor', message: 'invalid cursor' }])
    }
    afterId = options.cursor
  }
  const host = options.host === null ? null : normalizeHostName(options.host, '/querystring/host')
  const rows = await listPages(deps.pool, { host, afterId, limit: options.limit + 1 })
  const settings = await currentSettings(deps.pool)
  const more = rows.length > options.limit
  const pageRows = more ? rows.slice(0, options.limit) : rows
  return {
    pages: pageRows.map((r) => toPageView(r, settings)),
    nextCursor: more ? pageRows[pageRows.length - 1]!.id : null,
  }
}

export async function removePage(deps: Pick<PagesDeps, 'pool'>, id: string): Promise<void> {
  const deleted = isPageId(id) && (await withTransaction(deps.pool, (client) => deletePage(client, id)))
  if (!deleted) throw new NotFoundError(`no page with id ${id}`)
}

/**
 * Re-derives every page's estimates (new clipping bounds, LLN α, estimator choice), rate and due
 * time after a settings change, streaming pages in id order in chunks. Runs inside the caller's
 * transaction, which holds the settings row FOR UPDATE.
 */
export async function rescheduleAllPages(
  client: Queryable,
  settings: Settings,
  optimizer: { lambda: number | null; hostLambdas: Record<string, number>; pages: number | null },
  nowMs: number,
  random: Random,
  chunkSize = 2000,
): Promise<number> {
  const estimatorSettings = estimatorSettingsOf(settings)
  let afterId: string | null = null
  let total = 0
  for (;;) {
    const rows: PageRow[] = await listPages(client, { host: null, afterId, limit: chunkSize })
    if (rows.length === 0) return total
    const schedules = rows.map((row) => {
      const state = decodeEstimatorState(row.estimatorState)
      const estimates = state ? { ...currentEstimates(state, estimatorSettings) } : row.estimates
      const changesPerDay = state ? (estimates[settings.estimator] ?? null) : row.changesPerDay
      return { id: row.id, estimates, ...retimedRow(row, changesPerDay, settings, optimizer, nowMs, random) }
    })
    await writeSchedules(client, schedules)
    total += rows.length
    afterId = rows[rows.length - 1]!.id
  }
}
