/**
 * Change signals (docs/api.md "Signals", docs/math.md 5): what a signal is, the item-level checks that need no
 * database, the trust learned per source and host, and how a crawl judges the signals that preceded it. Pure:
 * src/domain/signals.ts stores signals and trust; the page-level decision is applySignal (src/core/pageStep.ts).
 */
import { z } from 'zod'
import { borrowedBetaPosterior, type BetaPosterior, type Tally } from '../math/betaPosterior.ts'
import { MS_PER_MINUTE } from '../math/units.ts'
import { NO_SIGNAL_COVER, type SignalCover } from '../math/signalRates.ts'
import { textProblem } from './text.ts'
import { readTimestamp, timestampSchema } from './timestamps.ts'
import { canonicalUrl, type UrlRules } from './url.ts'

/** The kinds of source the service knows by name; an operator may name others (a CMS webhook, a partner feed). */
const SIGNAL_SOURCE_KINDS = ['sitemap', 'feed', 'ping'] as const

/** A source name: lower case letters, digits, '.', '_', '-'; at most 64 characters. */
const SOURCE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/

export const sourceNameSchema = z
  .string()
  .regex(SOURCE_NAME_PATTERN)
  .describe(
    `Where the signal comes from: ${SIGNAL_SOURCE_KINDS.join(', ')}, or a name the operator chooses (lower case letters, digits, ".", "_", "-"; at most 64). Trust is learned per source name and host.`,
  )

export const signalReportSchema = z
  .object({
    url: z.string().describe('Absolute http(s) URL of the page said to have changed.'),
    source: sourceNameSchema,
    changedAt: timestampSchema
      .optional()
      .describe(
        'RFC 3339 time of the change the source claims (a sitemap’s lastmod, a feed entry’s updated); absent for a bare ping.',
      ),
    receivedAt: timestampSchema
      .optional()
      .describe('RFC 3339 time the signal was received from the source; absent = when this request arrives.'),
  })
  .strip()
  .meta({ id: 'SignalReport', description: 'One change signal: this page is said to have changed.' })

export type SignalReport = z.infer<typeof signalReportSchema>

/** A signal dated more than this far in the future is dropped and counted (clock skew allowance). */
export const SIGNAL_FUTURE_SKEW_MS = 5 * MS_PER_MINUTE

/** A signal that passed the item-level checks. */
export interface CheckedSignal {
  index: number
  url: string
  host: string
  source: string
  /** The claimed change time, epoch ms; null when the source claims none. */
  changedAtMs: number | null
  receivedAtMs: number
  /** When the change is said to have happened: the claimed time, else the receipt (the signal's identity). */
  signalledAtMs: number
}

type SignalCheck = CheckedSignal | { index: number; reason: string } | { index: number; future: true }

/**
 * Checks one signal item: text the database can store, a URL made canonical under the URL rules in force,
 * timestamps in range. A signal whose claimed change or receipt lies more than SIGNAL_FUTURE_SKEW_MS in the
 * future is marked `future` (dropped and counted, not an error: sitemaps in the wild carry such dates).
 */
export function checkSignal(item: SignalReport, index: number, nowMs: number, urlRules: UrlRules): SignalCheck {
  for (const [field, value] of Object.entries(item)) {
    const problem = typeof value === 'string' ? textProblem(value) : null
    if (problem !== null) return { index, reason: `${field} ${problem}` }
  }
  const normalized = canonicalUrl(item.url, urlRules)
  if ('error' in normalized) return { index, reason: normalized.error }
  let changedAtMs: number | null = null
  if (item.changedAt !== undefined) {
    const read = readTimestamp(item.changedAt)
    if ('error' in read) return { index, reason: `changedAt is ${read.error}` }
    changedAtMs = read.ms
  }
  let receivedAtMs = nowMs
  if (item.receivedAt !== undefined) {
    const read = readTimestamp(item.receivedAt)
    if ('error' in read) return { index, reason: `receivedAt is ${read.error}` }
    receivedAtMs = read.ms
  }
  return datedSignal(
    { index, url: normalized.url, host: normalized.host, source: item.source, changedAtMs, receivedAtMs },
    nowMs,
  )
}

/**
 * A signal whose URL is canonical already (a sitemap's entries): dropped as `future` when its claimed change or
 * receipt lies more than SIGNAL_FUTURE_SKEW_MS after `nowMs`, else dated.
 */
export function datedSignal(
  signal: Omit<CheckedSignal, 'signalledAtMs'>,
  nowMs: number,
): CheckedSignal | { index: number; future: true } {
  const limitMs = nowMs + SIGNAL_FUTURE_SKEW_MS
  if (signal.receivedAtMs > limitMs || (signal.changedAtMs !== null && signal.changedAtMs > limitMs))
    return { index: signal.index, future: true }
  return { ...signal, signalledAtMs: signal.changedAtMs ?? signal.receivedAtMs }
}

/**
 * What a source's signals on one host have been worth, as counts:
 * - precision: of the signals a crawl judged (the page's next crawl after the signalled time), how many saw a change;
 * - recall: of the changes crawls saw on the host, how many the source had signalled;
 * - change rate: of the crawls that judged an interval on the host while the source signalled there, how many saw a
 *   change (changesSeen of crawlsJudged): what a signal that tells nothing would score as precision.
 */
export interface TrustCounts {
  signalsJudged: number
  signalsConfirmed: number
  changesSeen: number
  changesSignalled: number
  crawlsJudged: number
}

export const emptyTrustCounts = (): TrustCounts => ({
  signalsJudged: 0,
  signalsConfirmed: 0,
  changesSeen: 0,
  changesSignalled: 0,
  crawlsJudged: 0,
})

export interface Trust {
  precision: BetaPosterior
  recall: BetaPosterior
  /** P(a crawl of the host saw a change), signalled or not (docs/math.md 5.3). */
  changeRate: BetaPosterior
}

const precisionTally = (c: TrustCounts): Tally => ({ hits: c.signalsConfirmed, trials: c.signalsJudged })
const recallTally = (c: TrustCounts): Tally => ({ hits: c.changesSignalled, trials: c.changesSeen })
// Counts kept before crawls were counted (crawlsJudged 0) cannot tell the host's change rate.
const changeRateTally = (c: TrustCounts): Tally =>
  c.crawlsJudged >= c.changesSeen ? { hits: c.changesSeen, trials: c.crawlsJudged } : { hits: 0, trials: 0 }
const minus = (a: TrustCounts, b: TrustCounts): TrustCounts => ({
  signalsJudged: Math.max(0, a.signalsJudged - b.signalsJudged),
  signalsConfirmed: Math.max(0, a.signalsConfirmed - b.signalsConfirmed),
  changesSeen: Math.max(0, a.changesSeen - b.changesSeen),
  changesSignalled: Math.max(0, a.changesSignalled - b.changesSignalled),
  crawlsJudged: Math.max(0, a.crawlsJudged - b.crawlsJudged),
})

/**
 * The trust of a source on a host (docs/math.md 5.2): beta posteriors of its precision and recall there, whose
 * prior borrows the source's figures on every other host (`fleet` is the source's total, this host included).
 */
export function trustOf(host: TrustCounts, fleet: TrustCounts): Trust {
  const others = minus(fleet, host)
  return {
    precision: borrowedBetaPosterior(precisionTally(host), precisionTally(others)),
    recall: borrowedBetaPosterior(recallTally(host), recallTally(others)),
    changeRate: borrowedBetaPosterior(changeRateTally(host), changeRateTally(others)),
  }
}

/** The trust of a source on its whole fleet of hosts (nothing to borrow from). */
export function fleetTrustOf(fleet: TrustCounts): Trust {
  return trustOf(fleet, fleet)
}

/**
 * A source is trusted only on this much evidence (its own judged signals on the host plus those borrowed from
 * its other hosts): before that, its signals change nothing.
 */
export const MIN_JUDGED_SIGNALS = 10

/**
 * P(changed | signal, trust): the chance that a page a source signalled has changed by its next crawl. The lower
 * credible bound of the precision posterior, so that a source known from few crawls counts for little; 0 (an
 * untrusted source) before MIN_JUDGED_SIGNALS.
 */
export function changeProbabilityGivenSignal(trust: Trust): number {
  if (trust.precision.evidence < MIN_JUDGED_SIGNALS) return 0
  return trust.precision.lower
}

/**
 * The share κ of a source's signals on a host that report a real change (docs/math.md 5.3): its signals are taken
 * as a mix of true reports (the page has changed) and signals that come whether or not the page changed, which are
 * confirmed only as often as any crawl of the host finds a change (the change rate π). The precision q is then
 * κ + (1 − κ)·π, so κ = (q − π)/(1 − π), with q the precision's lower credible bound and π the change rate's mean,
 * clamped to [0, 1]. A sitemap whose lastmod is its build time is confirmed as often as any crawl (κ ≈ 0); an
 * accurate source's κ is near 1. 0 (the signal moves nothing) while the precision or the change rate rests on fewer
 * than MIN_JUDGED_SIGNALS observations.
 */
export function signalInformativeShare(trust: Trust): number {
  if (trust.precision.evidence < MIN_JUDGED_SIGNALS || trust.changeRate.evidence < MIN_JUDGED_SIGNALS) return 0
  const precision = trust.precision.lower
  const changeRate = trust.changeRate.mean
  return Math.min(1, Math.max(0, (precision - changeRate) / (1 - changeRate)))
}

/**
 * A source's signals cover its host's changes in the schedule (docs/math.md 5.4) only when the lower bound of
 * their precision reaches this: a page is then given fewer blind crawls, trusting the signals to bring it in.
 */
const COVER_MIN_PRECISION = 0.9

/**
 * ...and when at least this share of its signals tells a change beyond the host's chance (signalInformativeShare):
 * on a host whose pages change between almost any two crawls, a sitemap whose lastmod is its build time reaches
 * the precision bound without telling anything, and its signals (which pull nothing, docs/math.md 5.3) would not
 * bring in the crawls a cover takes away.
 */
const COVER_MIN_INFORMATIVE_SHARE = 0.5

/**
 * What a source's signals cover of its host's changes (docs/math.md 5.4): the lower credible bounds of its recall
 * (the share of changes it reports) and precision, when the precision bound reaches COVER_MIN_PRECISION, its
 * informative share COVER_MIN_INFORMATIVE_SHARE and the recall rests on MIN_JUDGED_SIGNALS observations; else
 * nothing (the host is scheduled as if it sent no signals).
 */
export function signalCoverOf(trust: Trust): SignalCover {
  const precision = changeProbabilityGivenSignal(trust)
  if (
    precision < COVER_MIN_PRECISION ||
    signalInformativeShare(trust) < COVER_MIN_INFORMATIVE_SHARE ||
    trust.recall.evidence < MIN_JUDGED_SIGNALS ||
    !(trust.recall.lower > 0)
  )
    return NO_SIGNAL_COVER
  return { share: trust.recall.lower, precision }
}

/** A host's cover: that of its best-covering source (sources are not combined). */
export function hostSignalCover(trusts: Iterable<Trust>): SignalCover {
  let best = NO_SIGNAL_COVER
  for (const trust of trusts) {
    const cover = signalCoverOf(trust)
    if (cover.share > best.share) best = cover
  }
  return best
}

/** A signal waiting for its page's next crawl to judge it: one per page and source, the earliest. */
export interface PendingSignal {
  source: string
  signalledAtMs: number
}

/**
 * What one crawl that judged an interval (changed true or false) says about the signals of its page's host
 * (docs/math.md 5.1): every pending signal dated at or before the crawl is judged (confirmed when the crawl saw a
 * change); the crawl counts towards the change rate of every source that signals on the host, and a change towards
 * their recall, signalled when that source's pending signal preceded it. Returns the count increments by source
 * and the signals still pending (dated after the crawl).
 */
export function judgeSignals(
  pending: readonly PendingSignal[],
  crawledAtMs: number,
  changed: boolean,
  hostSources: readonly string[],
): { increments: Map<string, TrustCounts>; stillPending: PendingSignal[] } {
  const increments = new Map<string, TrustCounts>()
  const bump = (source: string) => {
    let c = increments.get(source)
    if (!c) increments.set(source, (c = emptyTrustCounts()))
    return c
  }
  const judged = new Set<string>()
  const stillPending: PendingSignal[] = []
  for (const p of pending) {
    if (p.signalledAtMs > crawledAtMs) {
      stillPending.push(p)
      continue
    }
    judged.add(p.source)
    const c = bump(p.source)
    c.signalsJudged++
    if (changed) c.signalsConfirmed++
  }
  for (const source of new Set([...hostSources, ...judged])) {
    const c = bump(source)
    c.crawlsJudged++
    if (!changed) continue
    c.changesSeen++
    if (judged.has(source)) c.changesSignalled++
  }
  return { increments, stillPending }
}

/** Adds b to a (in place). */
export function addTrustCounts(a: TrustCounts, b: TrustCounts): void {
  a.signalsJudged += b.signalsJudged
  a.signalsConfirmed += b.signalsConfirmed
  a.changesSeen += b.changesSeen
  a.changesSignalled += b.changesSignalled
  a.crawlsJudged += b.crawlsJudged
}
