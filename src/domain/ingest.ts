import { MS_PER_SECOND } from '../math/units.ts'
import {
  hostBlockStates,
  hostCrawledBefore,
  throttledHosts,
  writeHostPacing,
  type HostPacingRow,
  type HostPacingUpdate,
} from '../store/hostsRepo.ts'
import {
  addHostSignal,
  emptyHostBlockState,
  emptyHostSignals,
  nextHostBlock,
  nextAdaptivePace,
  type HostBlockState,
  type FetchError,
  type HostSignals,
} from '../core/fetchOutcomes.ts'
import { hostOfUrl } from '../core/url.ts'
import {
  crawlKey,
  insertObservations,
  reportedHistory,
  rewriteCrawlOutcomes,
  storedCrawls,
  type ObservationInsert,
} from '../store/observationsRepo.ts'
import { insertMissingPages, lockPagesByUrl, writeCrawledPages, type CrawledPageWrite } from '../store/pagesRepo.ts'
import type { PageKind, PageRow, PageStatus } from '../core/pageFields.ts'
import { holdSettings, loadSettingsVersion, readOptimizerState } from '../store/settingsRepo.ts'
import { availableHandOutTokens } from '../store/leasesRepo.ts'
import { withTransaction, type Queryable } from '../store/transaction.ts'
import type { Clock } from './clock.ts'
import {
  checkReport,
  type CheckedReport,
  type ObservationReceipt,
  type ObservationReport,
  type RejectedItem,
} from '../core/crawlReports.ts'
import { leaseMismatch } from './leases.ts'
import { allowanceLeft, handOutAllowance } from '../core/handOut.ts'
import {
  applyCrawl,
  replayHistory,
  stepContext,
  type CrawlOutcome,
  type PageState,
  type StepContext,
} from '../core/pageStep.ts'
import { crawledPageWrite, pageStateOf } from './pageRows.ts'
import { parseTimestampMs } from '../core/timestamps.ts'
import { assertUrlRulesUnchanged } from './urlRules.ts'
import type { DomainDeps } from './deps.ts'
import { judgeCrawlSignals, type CrawlForSignals } from './signals.ts'

export type { ObservationReport } from '../core/crawlReports.ts'

export interface IngestResult extends Omit<ObservationReceipt, 'unknownFields'> {
  /** Intervals among the accepted items that saw a change (for metrics). */
  changesDetected: number
  /** Pages registered by this batch. */
  pagesRegistered: number
  /** In-order crawls by the page's status before the crawl (noisy pages apart): crawls spent on dead and failing pages. */
  crawlsByPageStatus: Record<PageStatus | 'noisy', number>
  /** Hosts this batch paused (a backoff incident: 429, 503 without Retry-After, a run of timeouts). */
  hostsBackedOff: number
  /** Crawls stored (in order or late) by the host of their page: the per-host metric of the busiest hosts. */
  crawlsByHost: ReadonlyMap<string, number>
}

/**
 * Applies one batch of crawl reports in one transaction (docs/design.md "One observation, end to end"):
 * check each item, register unknown pages, lock the touched pages in id order, feed each page's reports to
 * the page step (src/core/pageStep.ts) in crawl-time order, append the history, complete leases, and write
 * the pages back in one statement. Returns only after COMMIT, so every accepted item is durable.
 */
export async function ingestObservations(deps: DomainDeps, items: readonly ObservationReport[]): Promise<IngestResult> {
  const nowMs = advanceSimulatedClock(deps.clock, items)
  const rejected: RejectedItem[] = []
  const byUrl = new Map<string, CheckedReport[]>()
  // Read once: the items are checked under these settings, and the transaction holds them (or refuses the
  // batch when the URL rules changed in between).
  const read = await loadSettingsVersion(deps.pool)
  const urlRules = read.settings.urls
  for (let i = 0; i < items.length; i++) {
    const checked = checkReport(items[i]!, i, nowMs, urlRules)
    if ('reason' in checked) rejected.push(checked)
    else {
      const list = byUrl.get(checked.url)
      if (list) list.push(checked)
      else byUrl.set(checked.url, [checked])
    }
  }

  const result = await withTransaction(deps.pool, async (client) => {
    const settings = await holdSettings(client, read)
    assertUrlRulesUnchanged(urlRules, settings.urls)
    const ctx = stepContext(settings, await readOptimizerState(client), nowMs, deps.random)
    // Leases had budget left: a late crawl is the fleet's lag, and its page keeps its phase (pageStep.ts).
    const allowance = { nowMs, ...handOutAllowance(settings) }
    ctx.catchUpLateness = allowanceLeft(await availableHandOutTokens(client, allowance))
    const batch = new BatchResult()
    if (settings.registerUnknownPages) {
      batch.pagesRegistered = await insertMissingPages(
        client,
        [...byUrl.values()].map((reports) => ({ url: reports[0]!.url, host: reports[0]!.host })),
        nowMs,
      )
    }
    const rows = await lockPagesByUrl(client, [...byUrl.keys()])
    const rowByUrl = new Map(rows.map((r) => [r.url, r]))
    for (const [url, reports] of byUrl) {
      if (!rowByUrl.has(url))
        for (const r of reports)
          batch.rejected.push({ index: r.index, reason: 'unknown page (registration of unknown URLs is off)' })
    }

    // A crawl older than its page's latest may repeat a stored one: those are duplicates, not late crawls.
    const older = rows.flatMap((row) =>
      byUrl
        .get(row.url)!
        .filter((r) => row.lastCrawledAtMs !== null && r.crawledAtMs < row.lastCrawledAtMs)
        .map((r) => ({ id: row.id, ms: r.crawledAtMs })),
    )
    const stored = await storedCrawls(
      client,
      older.map((o) => o.id),
      older.map((o) => o.ms),
    )

    const inserts: ObservationInsert[] = []
    const writes: CrawledPageWrite[] = []
    /** Pages that got a crawl older than their latest: recomputed from their whole history once it is stored. */
    const replays: { row: PageRow; write: CrawledPageWrite }[] = []
    for (const row of rows) {
      const lateBefore = batch.late
      const write = applyPageReports(row, byUrl.get(row.url)!, stored, ctx, batch, inserts)
      if (write && batch.late > lateBefore) replays.push({ row, write })
      else if (write) writes.push(write)
    }
    // The targets of permanent redirects become pages (with the importance of the page that moved).
    batch.pagesRegistered += await insertMissingPages(client, [...batch.redirects.values()], nowMs)
    const inserted = await insertObservations(client, inserts)
    for (const ins of inserts) {
      if (!inserted.has(crawlKey(ins.pageId, ins.crawledAtMs))) {
        // The page row is locked, and every crawl it does not know of was checked above: a conflict here
        // means the row and its history disagree. Abort rather than count a crawl twice.
        throw new Error(
          `observation for page ${ins.pageId} at ${new Date(ins.crawledAtMs).toISOString()} is stored already`,
        )
      }
    }
    for (const { row, write } of replays) writes.push(await replayPage(client, row, write, ctx))
    await writeCrawledPages(client, writes, nowMs)
    // The crawls judge the change signals that preceded them (docs/math.md 5.1).
    await judgeCrawlSignals(client, batch.crawlsForSignals)
    batch.throttled = await throttledHosts(client)
    batch.blocks = await hostBlockStates(client, [...batch.hostSignals.keys()])
    return batch
  })
  const hostsBackedOff = await adaptHostPacing(deps, result, nowMs)

  return {
    accepted: result.accepted,
    duplicates: result.duplicates,
    late: result.late,
    rejected: [...rejected, ...result.rejected].sort(byIndex),
    leaseNotCompleted: result.leaseNotCompleted.sort(byIndex),
    changesDetected: result.changesDetected,
    pagesRegistered: result.pagesRegistered,
    crawlsByPageStatus: result.crawlsByPageStatus,
    hostsBackedOff,
    crawlsByHost: result.crawlsByHost,
  }
}

const byIndex = (a: RejectedItem, b: RejectedItem) => a.index - b.index

/** Counts of one batch, filled while its pages are applied. */
class BatchResult {
  accepted = 0
  duplicates = 0
  late = 0
  changesDetected = 0
  pagesRegistered = 0
  rejected: RejectedItem[] = []
  leaseNotCompleted: RejectedItem[] = []
  /** Pages to register: targets of permanent redirects, by URL (a moved sitemap's target is a sitemap). */
  redirects = new Map<string, { url: string; host: string; importance: number; kind: PageKind }>()
  /** What the batch says about each host (429, errors, successes, Retry-After, robots.txt Crawl-delay). */
  hostSignals = new Map<string, HostSignals>()
  /** Hosts whose adaptive delay runs, as read after the batch was applied. */
  throttled: HostPacingRow[] = []
  /** The backoff state of the hosts in the batch, as read after the batch was applied. */
  blocks = new Map<string, HostBlockState>()
  /** In-order crawls with content: what they judge of their pages' change signals. */
  crawlsForSignals: CrawlForSignals[] = []
  /** In-order crawls by what the page was when it was crawled: where the budget went. */
  crawlsByPageStatus = { active: 0, failing: 0, gone: 0, redirected: 0, noisy: 0 }
  /** Crawls stored, by the host of their page. */
  crawlsByHost = new Map<string, number>()

  signal(host: string, report: CheckedReport): void {
    let signals = this.hostSignals.get(host)
    if (!signals) this.hostSignals.set(host, (signals = emptyHostSignals()))
    addHostSignal(signals, report)
  }

  count(outcome: CrawlOutcome): void {
    if (outcome.kind === 'duplicate') this.duplicates++
    else if (outcome.kind === 'late') this.late++
    else if (outcome.kind === 'inOrder') {
      this.accepted++
      if (outcome.applied && outcome.changed) this.changesDetected++
    }
  }
}

/**
 * One locked page's reports through the page step, in crawl-time order (a stable sort: of several reports of
 * one crawl time the first one stored wins, the rest are duplicates). Appends the observations to store and
 * returns the page's write-back, or null when nothing about the page changed.
 */
function applyPageReports(
  row: PageRow,
  reports: readonly CheckedReport[],
  stored: ReadonlySet<string>,
  ctx: StepContext,
  batch: BatchResult,
  inserts: ObservationInsert[],
): CrawledPageWrite | null {
  const before = pageStateOf(row)
  let page: PageState = before
  let completedLeaseId: string | null = null
  const seen = new Set<number>()
  for (const report of [...reports].sort((a, b) => a.crawledAtMs - b.crawledAtMs)) {
    let outcome: CrawlOutcome
    if (seen.has(report.crawledAtMs) || stored.has(crawlKey(row.id, report.crawledAtMs))) {
      outcome = { kind: 'duplicate' }
    } else {
      const step = applyCrawl(page, report, ctx)
      if (step.outcome.kind === 'inOrder') batch.crawlsByPageStatus[page.noisy ? 'noisy' : page.status]++
      outcome = step.outcome
      page = step.page
    }
    if (outcome.kind === 'rejected') {
      // Not stored: a later report with the same crawl time may still be (it is no duplicate).
      batch.rejected.push({ index: report.index, reason: outcome.reason })
      continue
    }
    batch.count(outcome)
    seen.add(report.crawledAtMs)
    if (outcome.kind === 'inOrder') {
      batch.signal(row.host, report)
      if (outcome.fetch === 'content' || outcome.fetch === 'notModified')
        batch.crawlsForSignals.push({
          pageId: row.id,
          host: row.host,
          crawledAtMs: report.crawledAtMs,
          changed: outcome.changed,
        })
      if (outcome.redirectTo !== null) {
        const target = hostOfUrl(outcome.redirectTo)
        if (target !== null)
          batch.redirects.set(outcome.redirectTo, {
            url: outcome.redirectTo,
            host: target,
            importance: row.importance,
            kind: row.kind,
          })
      }
    }
    if (outcome.kind !== 'duplicate') {
      inserts.push(observationInsert(row.id, report, outcome))
      batch.crawlsByHost.set(row.host, (batch.crawlsByHost.get(row.host) ?? 0) + 1)
    }
    if (report.leaseId !== null) {
      // A crawl is never lost because of its lease; a repeated report still completes it.
      const reason = leaseMismatch(row, report.leaseId, ctx.nowMs)
      if (reason === null || reason.startsWith('expired')) completedLeaseId = report.leaseId
      if (reason !== null) batch.leaseNotCompleted.push({ index: report.index, reason })
    }
  }
  if (page === before && completedLeaseId === null) return null
  return crawledPageWrite(row, before, page, completedLeaseId)
}

function observationInsert(
  pageId: string,
  report: CheckedReport,
  outcome: Exclude<CrawlOutcome, { kind: 'rejected' | 'duplicate' }>,
): ObservationInsert {
  const inOrder = outcome.kind === 'inOrder'
  return {
    pageId,
    crawledAtMs: report.crawledAtMs,
    changed: outcome.changed,
    reportedChanged: report.changed,
    contentHash: report.contentHash,
    lastModifiedMs: report.lastModifiedMs,
    httpStatus: report.httpStatus,
    etag: report.etag,
    fetchError: report.fetchError,
    redirectTo: report.redirectTo,
    retryAfterSeconds: report.retryAfterSeconds,
    applied: inOrder && outcome.applied,
    late: !inOrder,
    intervalSeconds: inOrder ? outcome.intervalSeconds : null,
  }
}

/**
 * Folds late crawls in: the page is replayed from its whole stored history (pageStep.ts, replayHistory), and the
 * derived columns of its observations (changed, applied, interval) are rewritten to what the replay made of
 * them. Returns the page's write-back, with the lease the batch completed.
 */
async function replayPage(
  client: Queryable,
  row: PageRow,
  write: CrawledPageWrite,
  ctx: StepContext,
): Promise<CrawledPageWrite> {
  const history = await reportedHistory(client, row.id)
  const replayed = replayHistory(
    row,
    history.map((h) => ({ ...h, changed: h.reportedChanged, fetchError: h.fetchError as FetchError | null })),
    ctx,
  )
  await rewriteCrawlOutcomes(client, row.id, replayed.crawls)
  return crawledPageWrite(row, pageStateOf(row), replayed.page, write.completedLeaseId)
}

/** For a host that pushed back: the time from its crawl before the push-back to the push-back, in seconds. */
async function pushbackSpacingSeconds(deps: DomainDeps, host: string, signals: HostSignals): Promise<number | null> {
  if (signals.pushbackAtMs === null) return null
  const beforeMs = await hostCrawledBefore(deps.pool, host, signals.pushbackAtMs)
  return beforeMs === null ? null : (signals.pushbackAtMs - beforeMs) / MS_PER_SECOND
}

/**
 * Hosts adapt their pace to what they answered (fetchOutcomes.ts, nextThrottleDelaySeconds): after the batch
 * is committed, in a transaction of its own (the crawls are stored whatever happens here; a failure is logged).
 */
async function adaptHostPacing(deps: DomainDeps, batch: BatchResult, nowMs: number): Promise<number> {
  let backedOff = 0
  const current = new Map(batch.throttled.map((h) => [h.host, h]))
  const updates: HostPacingUpdate[] = []
  for (const [host, signals] of batch.hostSignals) {
    const row = current.get(host)
    const before = { delaySeconds: row?.throttleDelaySeconds ?? null, pushbackSeconds: row?.pushbackSeconds ?? null }
    const blockBefore = batch.blocks.get(host) ?? emptyHostBlockState()
    const { state: block, blockUntilMs } = nextHostBlock(blockBefore, signals, nowMs, Math.random())
    // A blocked host must be paced: only a paced host's next lease time holds its pages back. The pace is at
    // least the first block and doubles with each incident (up to the adaptive delay's ceiling), so the block's
    // end does not release all of the host's due pages at once, each of them a new incident; and it does not
    // recover below the spacing that drew the host's last push-back, so the host is not pushed into a new one.
    const pace = nextAdaptivePace(
      before,
      signals,
      blockUntilMs !== null,
      await pushbackSpacingSeconds(deps, host, signals),
    )
    if (blockUntilMs !== null) backedOff++
    const pushed = signals.throttled > 0 && signals.retryAfterSeconds !== null
    const blockChanged =
      block.incidents !== blockBefore.incidents ||
      block.blockedUntilMs !== blockBefore.blockedUntilMs ||
      block.timeoutsInARow !== blockBefore.timeoutsInARow
    const paceChanged = pace.delaySeconds !== before.delaySeconds || pace.pushbackSeconds !== before.pushbackSeconds
    if (!paceChanged && !pushed && !blockChanged && signals.robotsCrawlDelaySeconds === null) continue
    const pauseUntilMs = Math.max(pushed ? nowMs + signals.retryAfterSeconds! * MS_PER_SECOND : 0, blockUntilMs ?? 0)
    updates.push({
      host,
      block,
      throttleDelaySeconds: pace.delaySeconds,
      pushbackSeconds: pace.pushbackSeconds,
      pauseUntilMs: pauseUntilMs > 0 ? pauseUntilMs : null,
      ...(signals.robotsCrawlDelaySeconds === null ? {} : { crawlDelaySeconds: signals.robotsCrawlDelaySeconds }),
    })
  }
  if (updates.length === 0) return 0
  try {
    await withTransaction(deps.pool, (client) => writeHostPacing(client, updates, nowMs))
    return backedOff
  } catch (err) {
    deps.logger?.warn({ err, hosts: updates.length }, 'could not adapt host pacing; the crawls are stored')
    return 0
  }
}

/** Simulated time follows the crawlers: the latest reported crawl is "now". Returns the time of the batch. */
function advanceSimulatedClock(clock: Clock, items: readonly ObservationReport[]): number {
  if (clock.advanceTo) {
    let latest = Number.NEGATIVE_INFINITY
    for (const item of items) {
      const ms = parseTimestampMs(item.crawledAt)
      if (ms !== null && ms > latest) latest = ms
    }
    clock.advanceTo(latest)
  }
  return clock.nowMs()
}
