/** Stored page rows and the page step's PageState: one mapping each way, over the fields of core/pageFields.ts. */
import { decodeEstimatorState, encodeEstimatorState, readEstimatorState } from '../math/estimators/index.ts'
import type { CrawledPageWrite } from '../store/pagesRepo.ts'
import { compileRecord, copied, fieldsWrittenBy, STATE_FIELDS, type PageRow } from '../core/pageFields.ts'
import type { PageState } from '../core/pageStep.ts'

/** The step's state of a stored row: its state fields as they are, and the estimator state decoded. */
export const pageStateOf: (row: PageRow) => PageState = compileRecord([
  ...copied(STATE_FIELDS),
  { from: 'estimatorState', to: 'estimator', via: decodeEstimatorState },
])

/** The fields of the page step's state that a reported crawl writes back as they are. */
const CRAWLED_STATE_FIELDS = fieldsWrittenBy('crawl').filter((k) => (STATE_FIELDS as readonly string[]).includes(k))
const crawledState = compileRecord<PageState, Record<string, unknown>>(copied(CRAWLED_STATE_FIELDS))

/**
 * What to write back for a page after its crawls. The estimator state is encoded again only when a crawl
 * stepped it (`before` is the state the row was read into); the age shape and its rate ratio are copies of
 * the state's (migrations/0012).
 */
export function crawledPageWrite(
  row: PageRow,
  before: PageState,
  after: PageState,
  completedLeaseId: string | null,
): CrawledPageWrite {
  const write = crawledState(after)
  write.id = row.id
  const state = after.estimator === null ? null : readEstimatorState(after.estimator)
  const ageShape = state?.ageShape ?? null
  write.estimatorState =
    after.estimator === before.estimator
      ? row.estimatorState
      : after.estimator === null
        ? null
        : encodeEstimatorState(after.estimator)
  write.ageShape = ageShape
  write.ageShapeRateRatio = ageShape === null ? null : state!.ageShapeRateRatio
  write.completedLeaseId = completedLeaseId
  return write as CrawledPageWrite
}
