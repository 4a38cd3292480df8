import type pg from 'pg'
import {
  changeClassProbabilities,
  currentEstimates,
  decodeEstimatorState,
  emptyEstimatorState,
  exactMle,
  exactMomentMatching,
  observedDays,
  rateChangesDetected,
  schedulingHistory,
} from '../math/estimators/index.ts'
import { currentRate } from '../math/nhpp.ts'
import { estimateAgeCdf } from '../math/updateDistribution.ts'
import { listObservations, recentHistory, type ObservationRow } from '../store/observationsRepo.ts'
import { getPageById } from '../store/pagesRepo.ts'
import { readSettingsDocument } from '../store/settingsRepo.ts'
import { InvalidInputError, NotFoundError } from './errors.ts'
import { estimatorSettingsOf, parseTimestampMs } from './ingest.ts'
import { isPageId } from './pages.ts'
import { settingsFromStored } from './settings.ts'

const MS_PER_DAY = 86_400_000
/** History estimators read at most this many recent observations (bounded cost per request). */
export const HISTORY_LIMIT = 10_000

export interface ObservationView {
  crawledAt: string
  changed: boolean | null
  contentHash: string | null
  lastModified: string | null
  httpStatus: number | null
  applied: boolean
  late: boolean
  intervalSeconds: number | null
  receivedAt: string
}

function toObservationView(o: ObservationRow): ObservationView {
  return {
    crawledAt: o.crawledAt.toISOString(),
    changed: o.changed,
    contentHash: o.contentHash,
    lastModified: o.lastModified?.toISOString() ?? null,
    httpStatus: o.httpStatus,
    applied: o.applied,
    late: o.late,
    intervalSeconds: o.intervalSeconds,
    receivedAt: o.receivedAt.toISOString(),
  }
}

/** A page's history, newest first; the cursor is the crawl time of the last item returned. */
export async function listPageObservations(
  pool: pg.Pool,
  pageId: string,
  options: { before: string | null; limit: number },
): Promise<{ observations: ObservationView[]; nextCursor: string | null }> {
  let before: Date | null = null
  if (options.before !== null) {
    const ms = parseTimestampMs(options.before)
    if (ms === null) throw new InvalidInputError('before is not an RFC 3339 timestamp', [{ path: '/querystring/before', message: 'not an RFC 3339 timestamp' }])
    before = new Date(ms)
  }
  const page = isPageId(pageId) ? await getPageById(pool, pageId) : null
  if (!page) throw new NotFoundError(`no page with id ${pageId}`)
  const rows = await listObservations(pool, pageId, { before, limit: options.limit + 1 })
  const more = rows.length > options.limit
  const shown = more ? rows.slice(0, options.limit) : rows
  return {
    observations: shown.map(toObservationView),
    nextCursor: more ? shown[shown.length - 1]!.crawledAt.toISOString() : null,
  }
}

export interface EstimateEntry {
  name: string
  changesPerDay: number | null
  ci95: [number, number] | null
  source: 'online' | 'history'
  section: string
  note?: string
}

const ONLINE_SECTIONS: Record<string, string> = {
  naive: '1.1',
  lln: '1.2',
  sa: '1.3',
  mle: '1.5',
  mleAdaptive: '1.5, 2',
  momentMatching: '1.6',
  choGm: '1.7',
  lastModified: '1.8',
}

/**
 * Every estimator the page's history supports (API.md `GET /v1/pages/{id}/estimates`): the online
 * estimates from the page state, the exact MLE with a confidence interval and exact moment matching
 * recomputed from the stored history, the change-class probabilities, the localised NHPP rate, and
 * the estimated age distribution of the update process.
 */
export async function pageEstimates(pool: pg.Pool, pageId: string, nowMs: number) {
  const page = isPageId(pageId) ? await getPageById(pool, pageId) : null
  if (!page) throw new NotFoundError(`no page with id ${pageId}`)
  const settings = settingsFromStored(await readSettingsDocument(pool))
  const estimatorSettings = estimatorSettingsOf(settings)
  const state = decodeEstimatorState(page.estimatorState) ?? emptyEstimatorState()
  const online = currentEstimates(state, estimatorSettings)
  const history = await recentHistory(pool, pageId, HISTORY_LIMIT)

  const clip = (v: number | null): number | null =>
    v === null ? null : Math.min(settings.maxChangesPerDay, Math.max(settings.minChangesPerDay, v))
  const estimators: EstimateEntry[] = Object.entries(online).map(([name, value]) => ({
    name,
    changesPerDay: value,
    ci95: null,
    source: 'online' as const,
    section: ONLINE_SECTIONS[name] ?? '1',
    ...(name === 'mleAdaptive'
      ? {
          note: `MLE over the last ${schedulingHistory(state, 'mleAdaptive').intervals} intervals, since the last of ${rateChangesDetected(state)} detected changes of rate`,
        }
      : {}),
  }))

  const intervals = history
    .filter((o) => o.applied && o.changed !== null && o.intervalSeconds !== null && o.intervalSeconds > 0)
    .map((o) => ({ intervalDays: o.intervalSeconds! / 86_400, changed: o.changed! }))
  if (intervals.length > 0) {
    const mle = exactMle(intervals)
    estimators.push({
      name: 'mleExact',
      changesPerDay: clip(mle.changesPerDay),
      ci95: mle.ci95 === null ? null : [clip(mle.ci95[0])!, clip(mle.ci95[1])!],
      source: 'history',
      section: '1.5',
      note: mle.smoothed ? 'no change or only changes seen: smoothed with one pseudo interval of each kind' : undefined,
    })
    estimators.push({
      name: 'momentMatchingExact',
      changesPerDay: clip(exactMomentMatching(intervals)),
      ci95: null,
      source: 'history',
      section: '1.6',
    })
  }

  const originMs = history[0]?.crawledAt.getTime() ?? 0
  const days = (d: Date) => (d.getTime() - originMs) / MS_PER_DAY
  const inOrder = history.filter((o) => !o.late)
  const local = currentRate(
    inOrder.map((o) => ({ atDays: days(o.crawledAt), changed: o.changed, lastModifiedDays: o.lastModified ? days(o.lastModified) : null })),
    (nowMs - originMs) / MS_PER_DAY,
  )
  const ageCdf = estimateAgeCdf(
    inOrder.map((o) => ({
      atDays: days(o.crawledAt),
      changed: o.changed,
      ageDays: o.lastModified ? Math.max(0, o.crawledAt.getTime() - o.lastModified.getTime()) / MS_PER_DAY : null,
    })),
  )

  return {
    pageId,
    intervals: page.intervals,
    changes: page.changes,
    observedDays: observedDays(state),
    historyObservations: history.length,
    estimators,
    changeClasses: changeClassProbabilities(state),
    localRate: local === null ? null : { changesPerDay: clip(local.changesPerDay)!, trend: local.trend, beta: local.beta, points: local.points },
    updateDistribution: ageCdf,
  }
}
