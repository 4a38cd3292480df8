/**
 * Change signals (docs/api.md "Signals"): a batch of signals in one transaction, the judging of pending signals by
 * the crawls that follow them, and the sources' trust as the API shows it.
 */
import { z } from 'zod'
import {
  addTrustCounts,
  changeProbabilityGivenSignal,
  signalInformativeShare,
  checkSignal,
  datedSignal,
  emptyTrustCounts,
  fleetTrustOf,
  judgeSignals,
  SIGNAL_FUTURE_SKEW_MS,
  trustOf,
  type CheckedSignal,
  type PendingSignal,
  type SignalReport,
  type Trust,
  type TrustCounts,
} from '../core/signals.ts'
import { applySignal, SIGNAL_INPUT_FIELDS, stepContext, type SignalEffect } from '../core/pageStep.ts'
import { InvalidInputError, NotFoundError, PayloadTooLargeError, UnprocessableError } from '../core/errors.ts'
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { parseSitemap, SITEMAP_MAX_BYTES } from '../core/sitemaps.ts'
import { isoTimestampOrNull, readTimestamp } from '../core/timestamps.ts'
import { canonicalUrl } from '../core/url.ts'
import type { RejectedItem } from '../core/crawlReports.ts'
import { insertMissingPages, lockPageFieldsByUrl, writeSchedules } from '../store/pagesRepo.ts'
import { holdSettings, loadSettingsVersion, readOptimizerState } from '../store/settingsRepo.ts'
import {
  addPendingSignals,
  addTrustIncrements,
  insertSignals,
  listSignalSources,
  listSignalTrust,
  readPendingSignals,
  readSignalSourceConfigs,
  readTrustCounts,
  replacePendingSignals,
  signalKey,
  sourcesOnHosts,
  storedSignals,
  trustPairKey,
  writeSignalSourceConfig,
  type SignalInsert,
  type SignalSourceConfig,
  type SignalSourceRow,
  type SignalTrustRow,
  type TrustIncrement,
} from '../store/signalsRepo.ts'
import { withTransaction, type Queryable } from '../store/transaction.ts'
import { assertUrlRulesUnchanged } from './urlRules.ts'
import type { DomainDeps } from './deps.ts'

const itemNoteSchema = z
  .object({ index: z.number().int().describe('Position of the item in the batch.'), reason: z.string() })
  .meta({ id: 'SignalItemNote', description: 'A signal of a batch, by position, and why it was not stored.' })

export const signalReceiptSchema = z
  .object({
    accepted: z.number().int().describe('Stored signals (each judged by its page’s next crawl unless stale).'),
    duplicates: z.number().int().describe('Repeats of a stored (url, source, changedAt or receivedAt): ignored.'),
    future: z.number().int().describe('Dated more than 5 minutes in the future: dropped.'),
    unknownPages: z
      .number()
      .int()
      .describe('For URLs that are not pages, from a source that may not register them: dropped.'),
    discovered: z.number().int().describe('Pages registered by this batch (sources that allow discovery).'),
    pulled: z.number().int().describe('Accepted signals that made their page due now.'),
    stale: z
      .number()
      .int()
      .describe('Accepted signals whose claimed change is no newer than the content last crawled: changed nothing.'),
    rejected: z
      .array(itemNoteSchema)
      .describe('Not stored: malformed URL or timestamp, text the database cannot hold.'),
  })
  .meta({
    id: 'SignalReceipt',
    description: 'What became of a batch of signals: accepted + duplicates + future + unknownPages + rejected = items.',
    examples: [
      { accepted: 2, duplicates: 0, future: 0, unknownPages: 0, discovered: 0, pulled: 1, stale: 0, rejected: [] },
    ],
  })

type SignalReceipt = z.infer<typeof signalReceiptSchema>

/**
 * Applies one batch of signals in one transaction: check each item, register the unknown URLs of sources that allow
 * discovery, lock the pages in id order, apply each new signal to its page (src/core/pageStep.ts, applySignal) with
 * its source's trust on the page's host, store the signals, the pending ones and the counts, and write the due
 * times of the pages a signal pulled forward. Returns only after COMMIT.
 */
export async function ingestSignals(deps: DomainDeps, items: readonly SignalReport[]): Promise<SignalReceipt> {
  const nowMs = deps.clock.nowMs()
  const receipt = emptyReceipt()
  const read = await loadSettingsVersion(deps.pool)
  const checked: CheckedSignal[] = []
  for (let i = 0; i < items.length; i++) {
    const check = checkSignal(items[i]!, i, nowMs, read.settings.urls)
    if ('future' in check) receipt.future++
    else if ('reason' in check) receipt.rejected.push(check)
    else checked.push(check)
  }
  return applySignals(deps, read, nowMs, checked, receipt)
}

const emptyReceipt = (): SignalReceipt => ({
  accepted: 0,
  duplicates: 0,
  future: 0,
  unknownPages: 0,
  discovered: 0,
  pulled: 0,
  stale: 0,
  rejected: [],
})

/** What one transaction of applySignals counted; added to the receipt once it has committed. */
type SignalTally = Pick<SignalReceipt, 'accepted' | 'duplicates' | 'unknownPages' | 'discovered' | 'pulled' | 'stale'>

/** The signals by URL, in the order their URLs first appear. */
function groupByUrl(checked: readonly CheckedSignal[]): Map<string, CheckedSignal[]> {
  const byUrl = new Map<string, CheckedSignal[]>()
  for (const signal of checked) {
    const list = byUrl.get(signal.url)
    if (list) list.push(signal)
    else byUrl.set(signal.url, [signal])
  }
  return byUrl
}

/** Signals per transaction of a sitemap document, and how many of its transactions run at once. */
const SITEMAP_SIGNALS_PER_TRANSACTION = 10_000
const SITEMAP_TRANSACTIONS_AT_ONCE = 2

/**
 * The transactions of ingestSignals and of a sitemap's signals, for signals checked under the settings `read` (their
 * URLs canonical): one transaction, or for a sitemap transactions of about `signalsPerTransaction` signals (all of
 * a URL's in one), two at a time: one prepares its pages' signals while the database stores the other's, and none
 * holds tens of thousands of page locks for the whole document. Each part is idempotent, so a document that failed
 * halfway is finished by posting it again (docs/api.md). The parts lock disjoint pages, so they never wait for each
 * other's pages. After the first failure no further part starts; the error is thrown once the parts under way have
 * ended.
 */
async function applySignals(
  deps: DomainDeps,
  read: Awaited<ReturnType<typeof loadSettingsVersion>>,
  nowMs: number,
  checked: readonly CheckedSignal[],
  receipt: SignalReceipt,
  options: { buildTimeDocuments?: ReadonlyMap<string, number>; signalsPerTransaction?: number } = {},
): Promise<SignalReceipt> {
  const perTransaction = options.signalsPerTransaction ?? Number.POSITIVE_INFINITY
  const parts: Map<string, CheckedSignal[]>[] = [new Map()]
  let size = 0
  for (const [url, signals] of groupByUrl(checked)) {
    if (size >= perTransaction) {
      parts.push(new Map())
      size = 0
    }
    parts[parts.length - 1]!.set(url, signals)
    size += signals.length
  }
  let next = 0
  let failed = false
  const runParts = async () => {
    while (!failed && next < parts.length) {
      const index = next++
      try {
        // A document's build-time count goes with its first part.
        const buildTimeDocuments = index === 0 ? options.buildTimeDocuments : undefined
        await applySignalGroups(deps, read, nowMs, parts[index]!, receipt, buildTimeDocuments)
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  const outcomes = await Promise.allSettled(
    Array.from({ length: Math.min(SITEMAP_TRANSACTIONS_AT_ONCE, parts.length) }, runParts),
  )
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason
  receipt.rejected.sort((a: RejectedItem, b: RejectedItem) => a.index - b.index)
  return receipt
}

/**
 * One transaction over the signals of these URLs; its counts are added to `receipt` after COMMIT (a rerun after a
 * deadlock counts afresh).
 */
async function applySignalGroups(
  deps: DomainDeps,
  read: Awaited<ReturnType<typeof loadSettingsVersion>>,
  nowMs: number,
  byUrl: ReadonlyMap<string, CheckedSignal[]>,
  receipt: SignalReceipt,
  buildTimeDocuments: ReadonlyMap<string, number> | undefined,
): Promise<void> {
  const urlRules = read.settings.urls
  const counted = await withTransaction(deps.pool, async (client) => {
    const tally: SignalTally = { accepted: 0, duplicates: 0, unknownPages: 0, discovered: 0, pulled: 0, stale: 0 }
    const settings = await holdSettings(client, read)
    assertUrlRulesUnchanged(urlRules, settings.urls)
    const ctx = stepContext(settings, await readOptimizerState(client), nowMs, deps.random)
    const sources = new Set<string>()
    for (const signals of byUrl.values()) for (const signal of signals) sources.add(signal.source)
    const configs = await readSignalSourceConfigs(client, [...sources])
    const discovering = [...configs.values()].some((config) => config.discover)
    const discoverable = !discovering
      ? []
      : [...byUrl.values()].flatMap((signals) => {
          const importances = signals.flatMap((s) => {
            const config = configs.get(s.source)
            return config?.discover ? [config.discoverImportance] : []
          })
          return importances.length === 0
            ? []
            : [{ url: signals[0]!.url, host: signals[0]!.host, importance: Math.max(...importances) }]
        })
    const counts = { discovered: await insertMissingPages(client, discoverable, nowMs) }
    const rows = await lockPageFieldsByUrl(client, [...byUrl.keys()], SIGNAL_INPUT_FIELDS)
    const rowByUrl = new Map(rows.map((r) => [r.url, r]))
    for (const [url, signals] of byUrl) if (!rowByUrl.has(url)) tally.unknownPages += signals.length

    const keys: { pageId: string; source: string; signalledAtMs: number }[] = []
    const pairs = new Map<string, { source: string; host: string }>()
    for (const row of rows)
      for (const signal of byUrl.get(row.url)!) {
        keys.push({ pageId: row.id, source: signal.source, signalledAtMs: signal.signalledAtMs })
        const pair = trustPairKey(signal.source, row.host)
        if (!pairs.has(pair)) pairs.set(pair, { source: signal.source, host: row.host })
      }
    const stored = await storedSignals(client, keys)
    const trust = await readTrustCounts(client, [...pairs.values()])
    const trustCache = new Map<string, Trust>()
    const trustFor = (source: string, host: string): Trust => {
      const key = trustPairKey(source, host)
      let t = trustCache.get(key)
      if (!t) {
        t = trustOf(trust.byPair.get(key) ?? emptyTrustCounts(), trust.bySource.get(source) ?? emptyTrustCounts())
        trustCache.set(key, t)
      }
      return t
    }

    const inserts: SignalInsert[] = []
    const pending: { pageId: string; source: string; signalledAtMs: number }[] = []
    const increments = new Map<string, TrustIncrement>()
    const schedules: {
      id: string
      changesPerDay: number | null
      crawlsPerDay: number | null
      nextCrawlAtMs: number | null
    }[] = []
    for (const row of rows) {
      const page = { ...row }
      const signals = byUrl.get(row.url)!
      // Most pages have one signal and nothing stored: no key to build then.
      const seen = signals.length > 1 ? new Set<string>() : null
      if (seen !== null) signals.sort((a, b) => a.signalledAtMs - b.signalledAtMs)
      let pulled = false
      for (const signal of signals) {
        if (seen !== null || stored.size > 0) {
          const key = signalKey(row.id, signal.source, signal.signalledAtMs)
          if (seen?.has(key) || stored.has(key)) {
            tally.duplicates++
            continue
          }
          seen?.add(key)
        }
        const step = applySignal(
          page,
          { signalledAtMs: signal.signalledAtMs, pageLeased: row.leaseId !== null },
          signalInformativeShare(trustFor(signal.source, row.host)),
          ctx,
        )
        tally.accepted++
        const inc = incrementFor(increments, signal.source, row.host)
        inc.signalsReceived++
        if (step.effect === 'stale') {
          tally.stale++
          inc.signalsStale++
        } else pending.push({ pageId: row.id, source: signal.source, signalledAtMs: signal.signalledAtMs })
        if (step.effect === 'pulled') {
          tally.pulled++
          inc.signalsPulled++
          page.nextCrawlAtMs = step.nextCrawlAtMs
          pulled = true
        }
        inserts.push(signalInsert(row.id, signal, step.effect))
      }
      if (pulled)
        schedules.push({
          id: row.id,
          changesPerDay: page.changesPerDay,
          crawlsPerDay: page.crawlsPerDay,
          nextCrawlAtMs: page.nextCrawlAtMs,
        })
    }
    for (const [key, documents] of buildTimeDocuments ?? []) {
      const [source, host] = splitPairKey(key)
      incrementFor(increments, source, host).buildTimeDocuments += documents
    }
    const inserted = await insertSignals(client, inserts)
    if (inserted !== inserts.length) throw new Error('a signal checked as new is stored already')
    await addPendingSignals(client, pending)
    await addTrustIncrements(client, [...increments.values()])
    await writeSchedules(client, schedules, nowMs)
    tally.discovered = counts.discovered
    return tally
  })
  for (const key of ['accepted', 'duplicates', 'unknownPages', 'discovered', 'pulled', 'stale'] as const)
    receipt[key] += counted[key]
}

function signalInsert(pageId: string, signal: CheckedSignal, effect: SignalEffect): SignalInsert {
  return {
    pageId,
    source: signal.source,
    signalledAtMs: signal.signalledAtMs,
    changedAtMs: signal.changedAtMs,
    receivedAtMs: signal.receivedAtMs,
    effect,
  }
}

function splitPairKey(key: string): [string, string] {
  const bar = key.indexOf('|')
  return [key.slice(0, bar), key.slice(bar + 1)]
}

function incrementFor(map: Map<string, TrustIncrement>, source: string, host: string): TrustIncrement {
  const key = trustPairKey(source, host)
  let inc = map.get(key)
  if (!inc) {
    inc = {
      source,
      host,
      ...emptyTrustCounts(),
      signalsReceived: 0,
      signalsStale: 0,
      signalsPulled: 0,
      buildTimeDocuments: 0,
    }
    map.set(key, inc)
  }
  return inc
}

/** A crawl that closed or started an interval (in order, with content): what it judges of the page's signals. */
export interface CrawlForSignals {
  pageId: string
  host: string
  crawledAtMs: number
  /** Whether it saw a change; null for a baseline (which only clears the signals dated before it). */
  changed: boolean | null
}

/**
 * Inside the ingest transaction of crawl reports: the crawls judge the pending signals of their pages
 * (src/core/signals.ts, judgeSignals), and the counts behind each source's trust on the host move.
 */
export async function judgeCrawlSignals(client: Queryable, crawls: readonly CrawlForSignals[]): Promise<void> {
  if (crawls.length === 0) return
  const pageIds = [...new Set(crawls.map((c) => c.pageId))]
  // Every crawl that judged an interval counts towards its host's change rate (changed or not), a change also
  // towards recall.
  const judgingHosts = [...new Set(crawls.filter((c) => c.changed !== null).map((c) => c.host))]
  const [pendingRows, hostSources] = await Promise.all([
    readPendingSignals(client, pageIds),
    sourcesOnHosts(client, judgingHosts),
  ])
  if (pendingRows.length === 0 && hostSources.size === 0) return
  const pendingByPage = new Map<string, PendingSignal[]>()
  for (const p of pendingRows) {
    const list = pendingByPage.get(p.pageId)
    if (list) list.push(p)
    else pendingByPage.set(p.pageId, [p])
  }
  const increments = new Map<string, TrustIncrement>()
  for (const crawl of [...crawls].sort((a, b) => a.crawledAtMs - b.crawledAtMs)) {
    const pending = pendingByPage.get(crawl.pageId) ?? []
    if (crawl.changed === null) {
      pendingByPage.set(
        crawl.pageId,
        pending.filter((p) => p.signalledAtMs > crawl.crawledAtMs),
      )
      continue
    }
    const verdict = judgeSignals(pending, crawl.crawledAtMs, crawl.changed, hostSources.get(crawl.host) ?? [])
    pendingByPage.set(crawl.pageId, verdict.stillPending)
    for (const [source, counts] of verdict.increments)
      addTrustCounts(incrementFor(increments, source, crawl.host), counts)
  }
  const touched = [...new Set(pendingRows.map((p) => p.pageId))]
  await replacePendingSignals(
    client,
    touched,
    touched.flatMap((pageId) => (pendingByPage.get(pageId) ?? []).map((p) => ({ pageId, ...p }))),
  )
  await addTrustIncrements(client, [...increments.values()])
}

const posteriorSchema = z
  .object({
    mean: z.number().describe('Posterior mean.'),
    lower: z.number().describe('Lower credible bound (mean − 1.645 sd, at least 0).'),
    alpha: z.number(),
    beta: z.number(),
    evidence: z
      .number()
      .describe('Observations behind it: its own plus those borrowed from the source’s other hosts (at most 10).'),
  })
  .meta({ id: 'TrustPosterior', description: 'A beta posterior of a proportion (docs/math.md 5.2).' })

/** Counts and trust of a source on the example host, for the examples below. */
const EXAMPLE_COUNTS = {
  signalsReceived: 240,
  signalsStale: 3,
  signalsPulled: 150,
  signalsJudged: 200,
  signalsConfirmed: 180,
  changesSeen: 190,
  changesSignalled: 175,
  crawlsJudged: 600,
  buildTimeDocuments: 0,
  precision: { mean: 0.9, lower: 0.865, alpha: 181, beta: 21, evidence: 200 },
  recall: { mean: 0.92, lower: 0.888, alpha: 176, beta: 16, evidence: 190 },
  changeRate: { mean: 0.318, lower: 0.287, alpha: 191, beta: 411, evidence: 600 },
  changeProbability: 0.865,
  informativeShare: 0.802,
}

const countsSchema = {
  signalsReceived: z.number().int().describe('Signals stored.'),
  signalsStale: z.number().int().describe('Signals whose claimed change was no newer than the content last crawled.'),
  signalsPulled: z.number().int().describe('Signals that made their page due now.'),
  signalsJudged: z.number().int().describe('Signals a later crawl judged (precision trials).'),
  signalsConfirmed: z.number().int().describe('Judged signals whose crawl saw a change (precision hits).'),
  changesSeen: z.number().int().describe('Changes crawls saw on the host(s) (recall trials).'),
  changesSignalled: z.number().int().describe('Changes the source had signalled (recall hits).'),
  crawlsJudged: z
    .number()
    .int()
    .describe('Crawls that judged an interval on the host(s) while the source signalled there (change-rate trials).'),
  buildTimeDocuments: z
    .number()
    .int()
    .describe('Sitemap documents whose every lastmod was one time: the build time, not a change time.'),
  precision: posteriorSchema.describe('P(the page changed by its next crawl | signalled).'),
  recall: posteriorSchema.describe('P(signalled | a crawl saw a change).'),
  changeRate: posteriorSchema.describe(
    'P(a crawl saw a change), signalled or not: the precision a signal that tells nothing would have.',
  ),
  changeProbability: z
    .number()
    .describe(
      'The lower bound of the precision, 0 while untrusted: what a cover of the host’s changes rests on (docs/math.md 5.4).',
    ),
  informativeShare: z
    .number()
    .describe(
      'The share of its signals that report a real change (docs/math.md 5.3): (precision lower bound − change rate) / (1 − change rate), in [0, 1]; the schedule weighs a signal with it. 0 while untrusted, and about 0 for signals that come whether or not the page changed (a sitemap whose lastmod is its build time).',
    ),
}

export const signalSourceSchema = z
  .object({
    source: z.string(),
    discover: z.boolean().describe('Signals for unknown URLs register pages.'),
    discoverImportance: z.number().describe('The importance of the pages it registers.'),
    hosts: z.number().int().describe('Hosts it has signalled on.'),
    ...countsSchema,
  })
  .meta({
    id: 'SignalSource',
    description: 'A source of change signals: its settings and fleet-wide trust.',
    examples: [{ source: 'sitemap', discover: true, discoverImportance: 0.5, hosts: 1, ...EXAMPLE_COUNTS }],
  })

export const signalSourceListSchema = z.object({ sources: z.array(signalSourceSchema) }).meta({
  id: 'SignalSourceList',
  description: 'Every source that has sent signals or has settings.',
  examples: [{ sources: [{ source: 'sitemap', discover: false, discoverImportance: 1, hosts: 1, ...EXAMPLE_COUNTS }] }],
})

const signalSourceHostSchema = z.object({ source: z.string(), host: z.string(), ...countsSchema }).meta({
  id: 'SignalSourceHost',
  description: 'A source on one host: its counts and its trust there, borrowing from its other hosts.',
})

export const signalSourceHostListSchema = z
  .object({
    hosts: z.array(signalSourceHostSchema),
    nextCursor: z.string().nullable().describe('Pass as `after` for the next hosts; null at the end.'),
  })
  .meta({
    id: 'SignalSourceHostList',
    description: 'A source’s hosts, by name.',
    examples: [{ hosts: [{ source: 'sitemap', host: 'example.com', ...EXAMPLE_COUNTS }], nextCursor: null }],
  })

export const signalSourceSettingsSchema = z
  .object({
    discover: z.boolean().describe('Whether its signals for unknown URLs register pages.'),
    discoverImportance: z
      .number()
      .positive()
      .max(1e6)
      .default(1)
      .describe('The importance of the pages it registers (default 1).'),
  })
  .meta({
    id: 'SignalSourceSettings',
    description: 'What the operator allows a source.',
    examples: [{ discover: true, discoverImportance: 0.5 }],
  })

function withTrust(counts: TrustCounts, trust: Trust) {
  const summary = (p: Trust['precision']) => ({
    mean: p.mean,
    lower: p.lower,
    alpha: p.alpha,
    beta: p.beta,
    evidence: p.evidence,
  })
  return {
    precision: summary(trust.precision),
    recall: summary(trust.recall),
    changeRate: summary(trust.changeRate),
    changeProbability: changeProbabilityGivenSignal(trust),
    informativeShare: signalInformativeShare(trust),
    signalsJudged: counts.signalsJudged,
    signalsConfirmed: counts.signalsConfirmed,
    changesSeen: counts.changesSeen,
    changesSignalled: counts.changesSignalled,
    crawlsJudged: counts.crawlsJudged,
  }
}

export async function listSources(deps: Pick<DomainDeps, 'pool'>): Promise<z.infer<typeof signalSourceListSchema>> {
  const rows = await listSignalSources(deps.pool)
  return { sources: rows.map((r: SignalSourceRow) => ({ ...r, ...withTrust(r, fleetTrustOf(r)) })) }
}

export async function listSourceHosts(
  deps: Pick<DomainDeps, 'pool'>,
  source: string,
  options: { after: string | null; host: string | null; hostPrefix: string | null; limit: number },
): Promise<z.infer<typeof signalSourceHostListSchema>> {
  const sources = await listSignalSources(deps.pool)
  const fleet = sources.find((s) => s.source === source)
  if (!fleet) throw new NotFoundError(`no signal source ${source}`)
  const rows = await listSignalTrust(deps.pool, source, {
    afterHost: options.after,
    host: options.host,
    hostPrefix: options.hostPrefix,
    limit: options.limit,
  })
  return {
    hosts: rows.map((r: SignalTrustRow) => ({ ...r, ...withTrust(r, trustOf(r, fleet)) })),
    nextCursor: rows.length === options.limit ? rows[rows.length - 1]!.host : null,
  }
}

export async function putSourceSettings(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  source: string,
  config: SignalSourceConfig,
): Promise<z.infer<typeof signalSourceSchema>> {
  await writeSignalSourceConfig(deps.pool, source, config, deps.clock.nowMs())
  const { sources } = await listSources(deps)
  return sources.find((s) => s.source === source)!
}

const sitemapCrawlSchema = z
  .object({
    id: z.string().describe('The sitemap item’s id.'),
    outcome: z
      .enum(['accepted', 'duplicate', 'late'])
      .describe(
        'accepted: a new crawl in order; duplicate: a crawl at this receivedAt is stored already; late: older than the item’s latest crawl (history only).',
      ),
    changed: z
      .boolean()
      .describe(
        'The document’s content hash differs from the one last posted (false for the first document: a baseline).',
      ),
    leaseCompleted: z
      .boolean()
      .nullable()
      .describe('Whether the leaseId given completed the lease on the item; null without a leaseId.'),
    sitemapsRegistered: z
      .number()
      .int()
      .describe(
        'For a sitemap index: the sitemaps it names that were not registered yet, now sitemap items on the same host.',
      ),
  })
  .meta({
    id: 'SitemapCrawl',
    description:
      'A document posted for a registered sitemap item counts as its crawl (docs/api.md "Sitemaps as scheduled items").',
  })

export const sitemapReceiptSchema = z
  .object({
    kind: z.enum(['urlset', 'sitemapindex']).describe('A sitemap of pages, or an index of sitemaps.'),
    entries: z.number().int().describe('Entries on the sitemap’s host.'),
    crossHost: z.number().int().describe('Entries for other hosts (the protocol forbids them): dropped.'),
    invalid: z
      .number()
      .int()
      .describe('Entries without a usable <loc>, or with a <lastmod> that is no W3C datetime: dropped.'),
    withoutLastmod: z
      .number()
      .int()
      .describe('Page entries without <lastmod>: they claim no change, so they are no signal.'),
    lastmodIsBuildTime: z
      .boolean()
      .describe(
        'Every entry carries one lastmod: the document’s build time. Its entries are still signals, without a claimed change time, and the source’s precision on the host falls as crawls find the pages unchanged.',
      ),
    sitemaps: z
      .array(
        z
          .object({ url: z.string(), lastmod: z.string().nullable().describe('RFC 3339, or null.') })
          .meta({ id: 'SitemapIndexEntry', description: 'A sitemap an index lists.' }),
      )
      .describe('For a sitemap index: the sitemaps it lists, on the same host, to fetch and post in turn.'),
    signals: signalReceiptSchema.describe('What became of the entries as signals (a urlset only).'),
    crawl: sitemapCrawlSchema
      .nullable()
      .describe('When the URL is a registered sitemap item: the document as its crawl. Null for any other URL.'),
  })
  .meta({
    id: 'SitemapReceipt',
    description: 'What became of a sitemap document.',
    examples: [
      {
        kind: 'urlset',
        entries: 2,
        crossHost: 0,
        invalid: 0,
        withoutLastmod: 0,
        lastmodIsBuildTime: false,
        sitemaps: [],
        signals: {
          accepted: 2,
          duplicates: 0,
          future: 0,
          unknownPages: 0,
          discovered: 0,
          pulled: 1,
          stale: 0,
          rejected: [],
        },
        crawl: { id: '7', outcome: 'accepted', changed: true, leaseCompleted: true, sitemapsRegistered: 0 },
      },
    ],
  })

/** The sitemap document a crawler posted, as read: what its crawl as a sitemap item needs. */
export interface SitemapDocument {
  /** The canonical URL it was fetched from, and its host. */
  url: string
  host: string
  receivedAtMs: number
  /** A digest of the document as parsed (after gunzip): a change of the sitemap is a change of this hash. */
  contentHash: string
  /** For a sitemap index: the sitemaps it lists on its host. */
  sitemaps: readonly string[]
}

/**
 * A sitemap document as a crawler fetched it (docs/api.md "Sitemaps"): parsed safely (src/core/sitemaps.ts), and
 * each dated page entry on the sitemap's host posted as a signal of `source` (one transaction for the document).
 * Returns the receipt and the document as read, for its crawl as a sitemap item (src/domain/sitemapItems.ts).
 */
export async function ingestSitemapSignals(
  deps: DomainDeps,
  request: { sitemapUrl: string; source: string; receivedAt: string | null; body: Buffer },
): Promise<{ receipt: Omit<z.infer<typeof sitemapReceiptSchema>, 'crawl'>; document: SitemapDocument }> {
  const read = await loadSettingsVersion(deps.pool)
  const sitemap = canonicalUrl(request.sitemapUrl, read.settings.urls)
  if ('error' in sitemap)
    throw new InvalidInputError(`url: ${sitemap.error}`, [{ path: '/querystring/url', message: sitemap.error }])
  let receivedAtMs = deps.clock.nowMs()
  if (request.receivedAt !== null) {
    const at = readTimestamp(request.receivedAt)
    if ('error' in at)
      throw new InvalidInputError(`receivedAt is ${at.error}`, [{ path: '/querystring/receivedAt', message: at.error }])
    receivedAtMs = at.ms
    // One time for the whole document, which may also be a sitemap item's crawl: refused whole, as a crawl dated
    // in the future would be, rather than every entry counted as `future`.
    if (receivedAtMs > deps.clock.nowMs() + SIGNAL_FUTURE_SKEW_MS) {
      const message = 'is more than 5 minutes after the service clock'
      throw new InvalidInputError(`receivedAt ${message}`, [{ path: '/querystring/receivedAt', message }])
    }
  }
  const text = sitemapText(request.body)
  const parsed = parseSitemap(text, sitemap.host, read.settings.urls)
  const nowMs = deps.clock.nowMs()
  const receipt = emptyReceipt()
  const checked: CheckedSignal[] = []
  let withoutLastmod = 0
  if (parsed.kind === 'urlset') {
    for (const [index, entry] of parsed.entries.entries()) {
      if (entry.lastModifiedMs === null) {
        withoutLastmod++
        continue
      }
      const signal = datedSignal(
        {
          index,
          url: entry.url,
          host: sitemap.host,
          source: request.source,
          // A build time claims no change of the page.
          changedAtMs: parsed.lastmodIsBuildTime ? null : entry.lastModifiedMs,
          receivedAtMs,
        },
        nowMs,
      )
      if ('future' in signal) receipt.future++
      else checked.push(signal)
    }
  }
  const signals = await applySignals(deps, read, nowMs, checked, receipt, {
    signalsPerTransaction: SITEMAP_SIGNALS_PER_TRANSACTION,
    buildTimeDocuments: parsed.lastmodIsBuildTime
      ? new Map([[trustPairKey(request.source, sitemap.host), 1]])
      : new Map(),
  })
  const sitemapReceipt = {
    kind: parsed.kind,
    entries: parsed.entries.length,
    crossHost: parsed.crossHost,
    invalid: parsed.invalid,
    withoutLastmod,
    lastmodIsBuildTime: parsed.lastmodIsBuildTime,
    sitemaps:
      parsed.kind === 'sitemapindex'
        ? parsed.entries.map((e) => ({ url: e.url, lastmod: isoTimestampOrNull(e.lastModifiedMs) }))
        : [],
    signals,
  }
  const document: SitemapDocument = {
    url: sitemap.url,
    host: sitemap.host,
    receivedAtMs,
    contentHash: `sha256:${createHash('sha256').update(text).digest('hex')}`,
    sitemaps: sitemapReceipt.sitemaps.map((entry) => entry.url),
  }
  return { receipt: sitemapReceipt, document }
}

/** Gunzips a body that starts with the gzip magic bytes, never past SITEMAP_MAX_BYTES. */
function sitemapText(body: Buffer): string {
  let bytes = body
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
    try {
      bytes = gunzipSync(body, { maxOutputLength: SITEMAP_MAX_BYTES })
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        throw new PayloadTooLargeError(`the sitemap is larger than ${SITEMAP_MAX_BYTES} bytes uncompressed`)
      throw new UnprocessableError(`the gzip stream is corrupt: ${(err as Error).message}`)
    }
  }
  if (bytes.length > SITEMAP_MAX_BYTES)
    throw new PayloadTooLargeError(`the sitemap is larger than ${SITEMAP_MAX_BYTES} bytes uncompressed`)
  return bytes.toString('utf8')
}
