/** Stored page rows and the page step's PageState: one mapping each way. */
import { decodeEstimatorState, encodeEstimatorState, readEstimatorState } from '../math/estimators/index.ts'
import type { CrawledPageWrite, PageRow } from '../store/pagesRepo.ts'
import type { PageState } from '../core/pageStep.ts'

export function pageStateOf(row: PageRow): PageState {
  return {
    host: row.host,
    importance: row.importance,
    minCrawlsPerDay: row.minCrawlsPerDay,
    maxCrawlsPerDay: row.maxCrawlsPerDay,
    crawls: row.crawls,
    intervals: row.intervals,
    changes: row.changes,
    firstCrawledAtMs: row.firstCrawledAtMs,
    lastCrawledAtMs: row.lastCrawledAtMs,
    intervalStartAtMs: row.intervalStartAtMs,
    lastChangedAtMs: row.lastChangedAtMs,
    lastContentHash: row.lastContentHash,
    estimator: decodeEstimatorState(row.estimatorState),
    changesPerDay: row.changesPerDay,
    crawlsPerDay: row.crawlsPerDay,
    nextCrawlAtMs: row.nextCrawlAtMs,
    status: row.status,
    consecutiveFailures: row.consecutiveFailures,
    lastHttpStatus: row.lastHttpStatus,
    lastSuccessAtMs: row.lastSuccessAtMs,
    redirectTo: row.redirectTo,
    etag: row.etag,
    serverLastModifiedMs: row.serverLastModifiedMs,
    noisy: row.noisy,
  }
}

/**
 * What to write back for a page after its crawls. The estimator state is encoded again only when a crawl
 * stepped it (`before` is the state the row was read into).
 */
export function crawledPageWrite(
  row: PageRow,
  before: PageState,
  after: PageState,
  completedLeaseId: string | null,
): CrawledPageWrite {
  const state = after.estimator === null ? null : readEstimatorState(after.estimator)
  const ageShape = state?.ageShape ?? null
  return {
    id: row.id,
    crawls: after.crawls,
    intervals: after.intervals,
    changes: after.changes,
    firstCrawledAtMs: after.firstCrawledAtMs,
    lastCrawledAtMs: after.lastCrawledAtMs,
    intervalStartAtMs: after.intervalStartAtMs,
    lastChangedAtMs: after.lastChangedAtMs,
    lastContentHash: after.lastContentHash,
    estimatorState:
      after.estimator === before.estimator
        ? row.estimatorState
        : after.estimator === null
          ? null
          : encodeEstimatorState(after.estimator),
    changesPerDay: after.changesPerDay,
    crawlsPerDay: after.crawlsPerDay,
    nextCrawlAtMs: after.nextCrawlAtMs,
    status: after.status,
    consecutiveFailures: after.consecutiveFailures,
    lastHttpStatus: after.lastHttpStatus,
    lastSuccessAtMs: after.lastSuccessAtMs,
    redirectTo: after.redirectTo,
    etag: after.etag,
    serverLastModifiedMs: after.serverLastModifiedMs,
    noisy: after.noisy,
    ageShape,
    ageShapeRateRatio: ageShape === null ? null : state!.ageShapeRateRatio,
    completedLeaseId,
  }
}
