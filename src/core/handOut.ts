import type { Settings } from './settings.ts'
import { HOURS_PER_DAY, MINUTES_PER_DAY, MS_PER_DAY, MS_PER_SECOND, SECONDS_PER_DAY } from '../math/units.ts'

/**
 * The hand-out policy (docs/api.md "Schedule"): how many pages leases may hand out, and which pages may
 * go out before they are due. Stated here once; leases (domain/leases.ts, whose claim and allowance
 * statements in store/leasesRepo.ts take these numbers as bound parameters), ingest and the simulator's
 * fleet use it.
 *
 * - The allowance: a fleet-wide token bucket that fills at the budget (budgetCrawlsPerDay tokens a day)
 *   and holds at most handOutBurstHours of it (at least one crawl). Every page handed out takes a token,
 *   and a page given back uncrawled returns it. A new allowance holds the reserve, not its capacity, so a
 *   new fleet gets no burst.
 * - Early hand-outs: when the due pages leave tokens unused, the pages due next go out early, but never
 *   the reserve (RESERVE_MINUTES of the budget, at least one crawl): pages that fall due, a probe's short
 *   interval among them, must not wait for the allowance to refill. Only active, non-noisy pages due within
 *   EARLY_HAND_OUT_HORIZON_DAYS qualify, each from EARLY_HAND_OUT_SHARE_OF_PERIOD of its period before its
 *   due time on (a page without a rate yet, at any time), so the total rate stays even and no page is
 *   crawled twice within half its period, nor sooner after its last crawl than its cap allows. A lease with a
 *   host filter takes no early hand-outs, so that a host polled with a filter gets its planned share.
 * - While the allowance holds a whole token, the fleet lags its own polling, not the budget: a crawl made
 *   late then keeps its page's phase (pageStep.ts, StepContext.catchUpLateness).
 */

/** The reserve, in minutes of the budget: it bounds how far one hour's hand-outs can stray from the budget's hourly share (10 % is six minutes). */
const RESERVE_MINUTES = 3
/** Early hand-outs take pages due within this long. */
const EARLY_HAND_OUT_HORIZON_DAYS = 1
/** A page may go out early once its due time is at most this share of its period away. */
const EARLY_HAND_OUT_SHARE_OF_PERIOD = 0.5

/** The allowance's parameters under the settings. */
interface HandOutAllowance {
  /** Tokens added per day: the budget. */
  perDay: number
  /** The most tokens it holds. */
  capacity: number
  /** What a new allowance holds: the reserve. */
  initial: number
  /** What early hand-outs leave for pages that fall due (at most the capacity). */
  reserve: number
}

export function handOutAllowance(
  settings: Pick<Settings, 'budgetCrawlsPerDay' | 'handOutBurstHours'>,
): HandOutAllowance {
  const perDay = settings.budgetCrawlsPerDay
  const capacity = Math.max(1, (perDay * settings.handOutBurstHours) / HOURS_PER_DAY)
  const reserve = Math.min(capacity, Math.max(1, (perDay * RESERVE_MINUTES) / MINUTES_PER_DAY))
  return { perDay, capacity, initial: reserve, reserve }
}

/**
 * How many pages a lease may still hand out early: of the `taken` tokens, those the due pages left unused,
 * and no more than the allowance (`available` before the lease) holds beyond the due pages and the reserve.
 * None to a lease with a host filter (`hostFilter`): it would spend the fleet's unused allowance on those
 * hosts alone, and a crawler that polls its paced hosts with a filter would crawl them past their plan.
 */
export function earlyHandOutLimit(options: {
  taken: number
  available: number
  duePages: number
  reserve: number
  hostFilter: boolean
}): number {
  const { taken, available, duePages, reserve } = options
  if (options.hostFilter) return 0
  return Math.min(taken - duePages, Math.floor(available - duePages - reserve))
}

/**
 * Which pages an early hand-out at `nowMs` may take: due up to `untilMs`, at most `shareOfPeriod` of their
 * period 1/ρ before their due time, and not sooner after their last crawl than their cap allows (1 / the page's
 * maxCrawlsPerDay, else the settings' `maxCrawlsPerDay`; null = no cap): a page at its cap would otherwise be
 * crawled every half period while the budget has room, twice its cap. The claim statement applies it per page.
 */
export function earlyHandOutWindow(
  nowMs: number,
  settings: Pick<Settings, 'maxCrawlsPerDay'>,
): { untilMs: number; shareOfPeriod: number; maxCrawlsPerDay: number | null } {
  return {
    untilMs: nowMs + EARLY_HAND_OUT_HORIZON_DAYS * MS_PER_DAY,
    shareOfPeriod: EARLY_HAND_OUT_SHARE_OF_PERIOD,
    maxCrawlsPerDay: settings.maxCrawlsPerDay,
  }
}

/**
 * When a page may go out early: EARLY_HAND_OUT_SHARE_OF_PERIOD of its period before its due time, the
 * period running from `periodStart` to `dueAt` (any one unit of time). The claim statement applies the same
 * rule with the period 1/ρ; the simulator's fleet, which knows no rates, with the page's last crawl.
 */
export function earlyHandOutFrom(periodStart: number, dueAt: number): number {
  return (1 - EARLY_HAND_OUT_SHARE_OF_PERIOD) * dueAt + EARLY_HAND_OUT_SHARE_OF_PERIOD * periodStart
}

/** Whether the allowance holds a whole token: leases are not held back by the budget. */
export function allowanceLeft(availableTokens: number): boolean {
  return availableTokens >= 1
}

/** Why a lease handed out fewer pages than asked (docs/api.md "Why a lease is short"). */
type LeaseLimit = 'nothingDue' | 'budgetAllowance' | 'pacedHosts' | 'hostBackoff'
export const LEASE_LIMITS: readonly LeaseLimit[] = ['nothingDue', 'budgetAllowance', 'pacedHosts', 'hostBackoff']

/**
 * Explains a short lease and says when asking again can give a page: the allowance ran short while pages were
 * leasable (`budgetAllowance`: the next token is `(1 − tokens left) / budget` away), paced hosts hold due pages
 * back until their turn (`pacedHosts`, or `hostBackoff` when the host is paused beyond its pace after a 429/503),
 * or no page is due (`nothingDue`: the next due time). `retryAfterSeconds` is the later of the allowance's
 * next token and the next leasable page, at least 1 s; null when there is no page to hand out at all.
 */
export function explainShortLease(options: {
  nowMs: number
  /** Tokens the lease took from the allowance (pages it could hand out), and the pages it asked for. */
  taken: number
  limit: number
  /** The allowance after the lease, and the budget it fills at. */
  tokensLeft: number
  perDay: number
  /** When the next unleased page may be handed out (null: there is none). */
  nextLeasableAtMs: number | null
  /** Paced hosts holding due pages back: their pace and their next turn. */
  heldHosts: readonly { paceSeconds: number; nextLeaseAtMs: number }[]
}): { limitedBy: LeaseLimit[]; retryAfterSeconds: number | null } {
  const { nowMs, nextLeasableAtMs } = options
  const limitedBy: LeaseLimit[] = []
  const leasableNow = nextLeasableAtMs !== null && nextLeasableAtMs <= nowMs
  const budgetShort = options.taken < options.limit && leasableNow
  if (budgetShort) limitedBy.push('budgetAllowance')
  const backoff = (h: { paceSeconds: number; nextLeaseAtMs: number }) =>
    h.nextLeaseAtMs - nowMs > h.paceSeconds * MS_PER_SECOND
  if (options.heldHosts.some((h) => !backoff(h))) limitedBy.push('pacedHosts')
  if (options.heldHosts.some(backoff)) limitedBy.push('hostBackoff')
  if (!leasableNow && options.heldHosts.length === 0) limitedBy.push('nothingDue')
  if (nextLeasableAtMs === null) return { limitedBy, retryAfterSeconds: null }
  const tokenWaitSeconds = options.tokensLeft >= 1 ? 0 : ((1 - options.tokensLeft) / options.perDay) * SECONDS_PER_DAY
  const pageWaitSeconds = Math.max(0, (nextLeasableAtMs - nowMs) / MS_PER_SECOND)
  return { limitedBy, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(tokenWaitSeconds, pageWaitSeconds))) }
}
