/**
 * Sitemaps as scheduled items (docs/api.md "Sitemaps as scheduled items"): a sitemap registered with
 * `kind: "sitemap"` is a row of pages like any page, so it is scheduled, leased, paced and budgeted by the same
 * code. What differs is how its crawl arrives: the crawler posts the fetched document to POST /v1/sitemaps, and
 * that post, besides turning the entries into signals, is the item's crawl. The crawl goes through the same
 * ingest as POST /v1/observations (src/domain/ingest.ts, src/core/pageStep.ts): one observation with the
 * document's content hash, so the sitemap learns its own change rate and the lease on it completes.
 */
import type { z } from 'zod'
import type { PageRow } from '../core/pageFields.ts'
import { isoTimestamp } from '../core/timestamps.ts'
import { getPageByUrl, insertMissingPages } from '../store/pagesRepo.ts'
import { lockSettings } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import type { DomainDeps } from './deps.ts'
import { ingestObservations, type IngestResult, type ObservationReport } from './ingest.ts'
import { ingestSitemapSignals, type SitemapDocument, type sitemapReceiptSchema } from './signals.ts'

type SitemapReceipt = z.infer<typeof sitemapReceiptSchema>
type SitemapCrawl = NonNullable<SitemapReceipt['crawl']>

/**
 * POST /v1/sitemaps: the document's entries become signals (src/domain/signals.ts); when its URL is a registered
 * sitemap item, the document is also that item's crawl, and a sitemap index registers the sitemaps it lists (on
 * the same host: the parser keeps no other) as sitemap items. A URL that is no sitemap item (unregistered, or a
 * page) only gives signals, as before sitemaps were items.
 *
 * The signals and the crawl are two transactions: each is idempotent under a repeat of the post with the same
 * receivedAt (signals are stored once per page, source and time; a crawl once per item and time), so a post that
 * failed halfway is completed by posting it again.
 */
export async function ingestSitemap(
  deps: DomainDeps,
  request: {
    sitemapUrl: string
    source: string
    receivedAt: string | null
    leaseId: string | null
    body: Buffer
    /** Told of the item's crawl once it is committed (the metrics of reported crawls). */
    onCrawl?: (result: IngestResult, items: readonly ObservationReport[]) => void
  },
): Promise<SitemapReceipt> {
  const { receipt, document } = await ingestSitemapSignals(deps, request)
  const item = await getPageByUrl(deps.pool, document.url)
  if (item === null || item.kind !== 'sitemap') return { ...receipt, crawl: null }
  return {
    ...receipt,
    crawl: await crawlSitemapItem(deps, item, document, request.leaseId, request.onCrawl),
  }
}

/** The document as the item's crawl (the page step of an observation), and the children of an index registered. */
async function crawlSitemapItem(
  deps: DomainDeps,
  { id, importance }: Pick<PageRow, 'id' | 'importance'>,
  document: SitemapDocument,
  leaseId: string | null,
  onCrawl: ((result: IngestResult, items: readonly ObservationReport[]) => void) | undefined,
): Promise<SitemapCrawl> {
  const report: ObservationReport = {
    url: document.url,
    crawledAt: isoTimestamp(document.receivedAtMs),
    contentHash: document.contentHash,
    httpStatus: 200,
    ...(leaseId === null ? {} : { leaseId }),
  }
  const result = await ingestObservations(deps, [report])
  onCrawl?.(result, [report])
  // The only item is the canonical URL of a stored row at a checked time: a rejection is a fault, not input.
  if (result.rejected.length > 0)
    throw new Error(`the crawl of sitemap item ${id} was refused: ${result.rejected[0]!.reason}`)
  const sitemapsRegistered = await registerSitemaps(deps, document, importance)
  return {
    id,
    outcome: result.accepted > 0 ? 'accepted' : result.late > 0 ? 'late' : 'duplicate',
    changed: result.changesDetected > 0,
    leaseCompleted: leaseId === null ? null : result.leaseNotCompleted.length === 0,
    sitemapsRegistered,
  }
}

/**
 * The sitemaps an index lists, registered as sitemap items of its host with the index's importance, due now. A URL
 * that is registered already (as a sitemap, or as a page) is left as it is.
 */
async function registerSitemaps(deps: DomainDeps, document: SitemapDocument, importance: number): Promise<number> {
  if (document.sitemaps.length === 0) return 0
  const nowMs = deps.clock.nowMs()
  const children = document.sitemaps.map((url) => ({ url, host: document.host, importance, kind: 'sitemap' as const }))
  return withTransaction(deps.pool, async (client) => {
    // As every writer of pages: a settings change does not interleave, and the optimiser's change epoch holds.
    await lockSettings(client, 'share')
    return insertMissingPages(client, children, nowMs)
  })
}
