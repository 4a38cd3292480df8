/**
 * The IndexNow protocol (indexnow.org; docs/api.md "IndexNow"): what a key is and how many URLs one submission
 * may carry. Pure: src/domain/indexNow.ts checks submissions against the keys the operator registered.
 */
import { MS_PER_SECOND } from '../math/units.ts'
import { MAX_URL_LENGTH } from './url.ts'

/** A key: 8 to 128 characters of a-z, A-Z, 0-9 and '-' (the protocol's rule). */
export const INDEXNOW_KEY_PATTERN = /^[A-Za-z0-9-]{8,128}$/

export const INDEXNOW_KEY_RULE = "8 to 128 characters of a-z, A-Z, 0-9 and '-'"

/** Most URLs one submission may carry (the protocol's limit). */
export const INDEXNOW_MAX_URLS = 10_000

/**
 * The body limit of a submission: INDEXNOW_MAX_URLS URLs of the longest length a page URL may have, each quoted
 * and separated, and room for the other fields. Any submission whose URLs recrawl could store fits.
 */
export const INDEXNOW_BODY_LIMIT_BYTES = INDEXNOW_MAX_URLS * (MAX_URL_LENGTH + 3) + 64 * 1024

/** The source name of the signals a submission becomes. */
export const INDEXNOW_SOURCE = 'indexnow'

/**
 * The receipt time a submission's signals carry: the start of its second. A submission claims no change time, so
 * its signals are identified by their receipt (page, source, receivedAt); a client that retries within the same
 * second sends duplicates, not new signals.
 */
export function indexNowReceivedAtMs(nowMs: number): number {
  return Math.floor(nowMs / MS_PER_SECOND) * MS_PER_SECOND
}
