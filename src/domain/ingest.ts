import type pg from 'pg'
import {
  currentEstimates,
  decodeEstimatorState,
  emptyEstimatorState,
  encodeEstimatorState,
  schedulingHistory,
  stepEstimators,
  type EstimatorName,
  type EstimatorSettings,
  type EstimatorState,
} from '../math/estimators/index.ts'
import type { Random } from '../math/random.ts'
import { insertMissingPages, lockPagesByUrlForIngest, writeIngestUpdates, type IngestPageRow, type PageIngestUpdate } from '../store/pagesRepo.ts'
import { insertObservations, type ObservationInsert } from '../store/observationsRepo.ts'
import { readOptimizerState, readSettingsDocumentShared, type OptimizerStateRow } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import type { Clock } from './clock.ts'
import {
  allIntervalsChanged,
  crawlsPerDayFor,
  earlyCrawlIntervalDays,
  explorationIntervalDays,
  lambdaForHost,
  nextCrawlAtMs,
  pageBounds,
  probePaybackDays,
} from './schedule.ts'
import { settingsFromStored, type Settings } from './settings.ts'
import { normalizeUrl } from './url.ts'

/** One crawl report, as it arrives (shape already checked by the HTTP layer). */
export interface ObservationItem {
  url: string
  crawledAt: string
  changed?: boolean | undefined
  contentHash?: string | undefined
  lastModified?: string | undefined
  httpStatus?: number | undefined
  leaseId?: string | undefined
}

export interface IngestResult {
  accepted: number
  duplicates: number
  late: number
  rejected: { index: number; reason: string }[]
  /** Intervals among the accepted items that saw a change (for metrics). */
  changesDetected: number
  /** Pages registered by this batch. */
  pagesRegistered: number
}

export interface IngestDeps {
  pool: pg.Pool
  clock: Clock
  random: Random
}

/** A crawl more than this far in the future is rejected (clock skew allowance, API.md). */
export const MAX_FUTURE_SKEW_MS = 5 * 60_000
const MS_PER_DAY = 86_400_000
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Parses an RFC 3339 timestamp to epoch milliseconds, or null. Every field must be in range
 * (Date.parse alone would read 2026-02-30 as 2 March). A leap second (:60) is not accepted.
 */
export function parseTimestampMs(value: string): number | null {
  const m = RFC3339.exec(value)
  if (!m) return null
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return null
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? ms : null
}

interface ValidItem {
  index: number
  url: string
  host: string
  crawledAtMs: number
  changed: boolean | null
  contentHash: string | null
  lastModifiedMs: number | null
  httpStatus: number | null
  leaseId: string | null
}

/** Item-level checks that need no database: URL, timestamps, lease id format. */
function validateItem(item: ObservationItem, index: number, nowMs: number): ValidItem | { index: number; reason: string } {
  const normalized = normalizeUrl(item.url)
  if ('error' in normalized) return { index, reason: normalized.error }
  const crawledAtMs = parseTimestampMs(item.crawledAt)
  if (crawledAtMs === null) return { index, reason: 'crawledAt is not an RFC 3339 timestamp' }
  if (crawledAtMs > nowMs + MAX_FUTURE_SKEW_MS) {
    return { index, reason: 'crawledAt is more than 5 minutes in the future' }
  }
  let lastModifiedMs: number | null = null
  if (item.lastModified !== undefined) {
    lastModifiedMs = parseTimestampMs(item.lastModified)
    if (lastModifiedMs === null) return { index, reason: 'lastModified is not an RFC 3339 timestamp' }
  }
  if (item.leaseId !== undefined && !UUID.test(item.leaseId)) {
    return { index, reason: 'leaseId is not a lease id (UUID)' }
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
    leaseId: item.leaseId ?? null,
  }
}

export function estimatorSettingsOf(settings: Settings): EstimatorSettings {
  return {
    llnAlpha: settings.lln.alpha,
    saGamma: settings.sa.gamma,
    defaultChangesPerDay: settings.defaultChangesPerDay,
    minChangesPerDay: settings.minChangesPerDay,
    maxChangesPerDay: settings.maxChangesPerDay,
  }
}

/** A failed fetch (no content seen) that carries no change information. */
function isFailedFetch(status: number | null): boolean {
  return status !== null && (status < 200 || status >= 400)
}

const toIso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/** The mutable working copy of one locked page while its items are applied. */
interface PageWork {
  row: IngestPageRow
  crawls: number
  intervals: number
  changes: number
  firstCrawledAtMs: number | null
  lastCrawledAtMs: number | null
  intervalStartAtMs: number | null
  lastChangedAtMs: number | null
  lastContentHash: string | null
  state: EstimatorState
  stepped: boolean
  touched: boolean
  completedLeaseId: string | null
  /** The interval the latest in-order crawl closed, in days (null: it closed none), and whether the page was probing before it. */
  closedIntervalDays: number | null
  wasProbing: boolean
}

/**
 * Applies one batch of crawl reports in one transaction (DESIGN.md "One observation, end to end"):
 * register unknown pages, lock the touched pages in id order, classify each item (baseline, in-order
 * interval, late, duplicate, rejected), append the history, step the estimators in crawl-time order,
 * re-time the pages from the stored multiplier λ, complete leases, and write the pages back in bulk.
 * Returns only after COMMIT, so every accepted item is durable.
 */
export async function ingestObservations(deps: IngestDeps, items: readonly ObservationItem[]): Promise<IngestResult> {
  if (deps.clock.advanceTo) {
    // Simulated time follows the crawlers: the latest reported crawl is "now".
    let latest = Number.NEGATIVE_INFINITY
    for (const item of items) latest = Math.max(latest, parseTimestampMs(item.crawledAt) ?? Number.NEGATIVE_INFINITY)
    deps.clock.advanceTo(latest)
  }
  const nowMs = deps.clock.nowMs()
  const rejected: { index: number; reason: string }[] = []
  const valid: ValidItem[] = []
  for (let i = 0; i < items.length; i++) {
    const checked = validateItem(items[i]!, i, nowMs)
    if ('reason' in checked) rejected.push(checked)
    else valid.push(checked)
  }

  const byUrl = new Map<string, ValidItem[]>()
  const hostOf = new Map<string, string>()
  for (const item of valid) {
    const list = byUrl.get(item.url)
    if (list) list.push(item)
    else byUrl.set(item.url, [item])
    hostOf.set(item.url, item.host)
  }

  const counts = await withTransaction(deps.pool, async (client) => {
    const settings = settingsFromStored(await readSettingsDocumentShared(client))
    const optimizer = await readOptimizerState(client)
    const estimatorSettings = estimatorSettingsOf(settings)
    const result = { accepted: 0, duplicates: 0, late: 0, changesDetected: 0, pagesRegistered: 0 }
    const batchRejected: { index: number; reason: string }[] = []

    const urls = [...byUrl.keys()]
    if (settings.registerUnknownPages) {
      result.pagesRegistered = await insertMissingPages(
        client,
        urls.map((url) => ({ url, host: hostOf.get(url)! })),
        new Date(nowMs),
      )
    }
    const rows = await lockPagesByUrlForIngest(client, urls)
    const rowByUrl = new Map(rows.map((r) => [r.url, r]))

    const inserts: ObservationInsert[] = []
    /** Keys of the inserts that must be new (in-order crawls); the rest may already be stored (late). */
    const lateKeys: { key: string; index: number }[] = []
    const work = new Map<string, PageWork>()

    for (const [url, pageItems] of byUrl) {
      const row = rowByUrl.get(url)
      if (!row) {
        for (const item of pageItems) batchRejected.push({ index: item.index, reason: 'unknown page (registration of unknown URLs is off)' })
        continue
      }
      const w: PageWork = {
        row,
        crawls: row.crawls,
        intervals: row.intervals,
        changes: row.changes,
        firstCrawledAtMs: row.firstCrawledAtMs,
        lastCrawledAtMs: row.lastCrawledAtMs,
        intervalStartAtMs: row.intervalStartAtMs,
        lastChangedAtMs: row.lastChangedAtMs,
        lastContentHash: row.lastContentHash,
        state: decodeEstimatorState(row.estimatorState) ?? emptyEstimatorState(),
        stepped: false,
        touched: false,
        completedLeaseId: null,
        closedIntervalDays: null,
        wasProbing: false,
      }
      work.set(row.id, w)
      const seen = new Set<number>()
      // Stable sort: same-time items keep their order; the first one stored is kept, the rest are duplicates.
      const ordered = [...pageItems].sort((a, b) => a.crawledAtMs - b.crawledAtMs)
      for (const item of ordered) {
        if (seen.has(item.crawledAtMs) || item.crawledAtMs === w.lastCrawledAtMs) {
          result.duplicates++
          continue
        }
        if (w.lastCrawledAtMs !== null && item.crawledAtMs < w.lastCrawledAtMs) {
          seen.add(item.crawledAtMs)
          // Late: stored for the history, never fed to the online estimators (their order matters).
          // firstCrawledAt stays the earliest stored crawl (a repeat of a stored one cannot be earlier).
          if (w.firstCrawledAtMs === null || item.crawledAtMs < w.firstCrawledAtMs) w.firstCrawledAtMs = item.crawledAtMs
          inserts.push(observationInsert(row.id, item, item.changed, false, true, null))
          lateKeys.push({ key: `${row.id}|${item.crawledAtMs}`, index: item.index })
          if (item.leaseId) w.completedLeaseId = item.leaseId
          continue
        }
        const outcome = applyInOrder(w, item, estimatorSettings, settings.estimator)
        if ('reason' in outcome) {
          // Not stored: a later item with the same crawl time may still be (it is no duplicate).
          batchRejected.push({ index: item.index, reason: outcome.reason })
          continue
        }
        seen.add(item.crawledAtMs)
        inserts.push(observationInsert(row.id, item, outcome.changed, outcome.applied, false, outcome.intervalSeconds))
        if (item.leaseId) w.completedLeaseId = item.leaseId
        if (outcome.applied && outcome.changed) result.changesDetected++
        result.accepted++
      }
    }

    const inserted = await insertObservations(client, inserts)
    for (const ins of inserts) {
      if (ins.late) continue
      if (!inserted.has(`${ins.pageId}|${Date.parse(ins.crawledAt)}`)) {
        // An in-order crawl is newer than everything stored for its page; a conflict here means the
        // page row and its history disagree. Abort rather than apply an estimator step twice.
        throw new Error(`observation for page ${ins.pageId} at ${ins.crawledAt} already stored but newer than the page's last crawl`)
      }
    }
    for (const { key } of lateKeys) {
      if (inserted.has(key)) result.late++
      else result.duplicates++
    }
    for (const ins of inserts) {
      if (inserted.has(`${ins.pageId}|${Date.parse(ins.crawledAt)}`)) {
        const w = work.get(ins.pageId)!
        w.crawls++
        w.touched = true
      }
    }

    const updates: PageIngestUpdate[] = []
    for (const w of work.values()) {
      if (!w.touched && w.completedLeaseId === null) continue
      updates.push(pageUpdate(w, settings, estimatorSettings, optimizer, nowMs, deps.random))
    }
    await writeIngestUpdates(client, updates)
    return { ...result, rejected: batchRejected }
  })

  return {
    accepted: counts.accepted,
    duplicates: counts.duplicates,
    late: counts.late,
    rejected: [...rejected, ...counts.rejected].sort((a, b) => a.index - b.index),
    changesDetected: counts.changesDetected,
    pagesRegistered: counts.pagesRegistered,
  }
}

function observationInsert(
  pageId: string,
  item: ValidItem,
  changed: boolean | null,
  applied: boolean,
  late: boolean,
  intervalSeconds: number | null,
): ObservationInsert {
  return {
    pageId,
    crawledAt: new Date(item.crawledAtMs).toISOString(),
    changed,
    contentHash: item.contentHash,
    lastModified: toIso(item.lastModifiedMs),
    httpStatus: item.httpStatus,
    applied,
    late,
    intervalSeconds,
  }
}

type InOrderOutcome =
  | { changed: boolean | null; applied: boolean; intervalSeconds: number | null }
  | { reason: string }

/**
 * One crawl newer than everything stored for the page. Decides what it tells the estimators:
 * - the first crawl whose content is known is the baseline (no change information);
 * - `changed` is taken as given; else a `contentHash` is compared with the previous crawl's hash;
 *   else HTTP 304 means unchanged;
 * - a hash with no previous hash to compare starts a new baseline (the interval cannot be judged);
 * - a crawl reported unchanged without a hash keeps the previous hash (the content is the same), so
 *   a later hash-only report still compares with it; a change without a hash forgets it;
 * - a failed fetch (status < 200 or ≥ 400) without change information is stored but judges nothing:
 *   the open interval continues to the next successful crawl;
 * - otherwise the item is rejected (API.md: changed or contentHash required after the first crawl).
 */
function applyInOrder(w: PageWork, item: ValidItem, settings: EstimatorSettings, estimator: EstimatorName): InOrderOutcome {
  let changed: boolean | null = item.changed
  if (changed === null && item.contentHash !== null && w.lastContentHash !== null && w.intervalStartAtMs !== null) {
    changed = item.contentHash !== w.lastContentHash
  }
  if (changed === null && item.httpStatus === 304) changed = false

  const hasBaseline = w.intervalStartAtMs !== null
  const failed = changed === null && item.contentHash === null && isFailedFetch(item.httpStatus)
  if (hasBaseline && changed === null && item.contentHash === null && !failed) {
    return { reason: 'changed or contentHash is required after the first crawl of a page' }
  }

  if (w.firstCrawledAtMs === null) w.firstCrawledAtMs = item.crawledAtMs
  w.lastCrawledAtMs = item.crawledAtMs
  w.closedIntervalDays = null
  w.wasProbing = false
  if (failed) return { changed: null, applied: false, intervalSeconds: null }

  let applied = false
  let intervalSeconds: number | null = null
  if (hasBaseline && changed !== null) {
    const intervalMs = item.crawledAtMs - w.intervalStartAtMs!
    const ageDays = item.lastModifiedMs === null ? null : Math.max(0, item.crawledAtMs - item.lastModifiedMs) / MS_PER_DAY
    w.closedIntervalDays = intervalMs / MS_PER_DAY
    w.wasProbing = allIntervalsChanged(schedulingHistory(w.state, estimator))
    w.state = stepEstimators(w.state, { intervalDays: intervalMs / MS_PER_DAY, changed, ageDays }, settings)
    w.stepped = true
    w.intervals++
    if (changed) {
      w.changes++
      // Last-Modified inside the interval dates the change more precisely than the crawl does.
      const lm = item.lastModifiedMs
      w.lastChangedAtMs = lm !== null && lm > w.intervalStartAtMs! && lm <= item.crawledAtMs ? lm : item.crawledAtMs
    }
    applied = true
    intervalSeconds = intervalMs / 1000
  } else {
    changed = null // baseline (or a new baseline): no change information
  }
  w.intervalStartAtMs = item.crawledAtMs
  w.lastContentHash = item.contentHash ?? (changed === false ? w.lastContentHash : null)
  return { changed, applied, intervalSeconds }
}

function pageUpdate(
  w: PageWork,
  settings: Settings,
  estimatorSettings: EstimatorSettings,
  optimizer: OptimizerStateRow,
  nowMs: number,
  random: Random,
): PageIngestUpdate {
  let estimates = w.row.estimates
  let changesPerDay = w.row.changesPerDay
  if (w.stepped) {
    estimates = { ...currentEstimates(w.state, estimatorSettings) }
    changesPerDay = estimates[settings.estimator] ?? null
  }
  const rateInputs = {
    changesPerDay,
    importance: w.row.importance,
    minCrawlsPerDay: w.row.minCrawlsPerDay,
    maxCrawlsPerDay: w.row.maxCrawlsPerDay,
  }
  const crawlsPerDay = crawlsPerDayFor(rateInputs, settings, lambdaForHost(optimizer, w.row.host))
  const bounds = pageBounds(rateInputs, settings)
  const crawledNow = w.lastCrawledAtMs !== w.row.lastCrawledAtMs
  const nextMs = crawledNow
    ? nextCrawlAtMs({
        lastCrawledAtMs: w.lastCrawledAtMs,
        crawlsPerDay,
        schedule: settings.schedule,
        nowMs,
        random,
        earlyIntervalDays: earlyCrawlIntervalDays({
          ...schedulingHistory(w.state, settings.estimator),
          crawlsPerDay,
          minCrawlsPerDay: bounds.minCrawlsPerDay,
          explorationIntervalDays: explorationIntervalDays(optimizer.pages, settings),
        }),
        paybackDays: probePaybackDays({
          wasProbing: w.wasProbing,
          closedIntervalDays: w.closedIntervalDays,
          crawlsPerDay,
          minCrawlsPerDay: bounds.minCrawlsPerDay,
        }),
      })
    : w.row.nextCrawlAtMs
  return {
    id: w.row.id,
    crawls: w.crawls,
    intervals: w.intervals,
    changes: w.changes,
    firstCrawledAt: toIso(w.firstCrawledAtMs),
    lastCrawledAt: toIso(w.lastCrawledAtMs),
    intervalStartAt: toIso(w.intervalStartAtMs),
    lastChangedAt: toIso(w.lastChangedAtMs),
    lastContentHash: w.lastContentHash,
    estimatorState: w.stepped ? encodeEstimatorState(w.state) : w.row.estimatorState,
    estimates,
    changesPerDay,
    crawlsPerDay,
    nextCrawlAt: toIso(nextMs),
    completedLeaseId: w.completedLeaseId,
  }
}
