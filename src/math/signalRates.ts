/**
 * Crawl rates when some changes are signalled (docs/math.md 5.4). A page whose source reports a share r of its
 * changes with precision p gets those changes crawled by the signals (a signal-driven crawl right after each), so
 * its blind crawls need only catch the others: a Poisson stream of rate Δ·(1 − r) (a thinned Poisson process).
 * The signals cost about Δ·r / p crawls a day, taken from the same budget. A page's signals take over only where
 * that costs no more than the blind crawls the page gets without them; the blind crawls are then solved under
 * what is left of the budget, so the total crawl rate stays the budget.
 */
import { solveRates, type RateProblem, type RateSolution } from './optimizer/index.ts'

/** What a host's signals cover: the share of its changes they report, and the share of them that are true. */
export interface SignalCover {
  /** r ∈ [0, 1]: 0 = its pages are scheduled as if there were no signals. */
  share: number
  /** p ∈ (0, 1]. */
  precision: number
}

export const NO_SIGNAL_COVER: SignalCover = { share: 0, precision: 1 }

/**
 * What a solve stores of the signals: each covering host's cover, and the multiplier of the solve without signals,
 * which tells which pages they take over (coversPage).
 */
export interface SignalCovers {
  plainLambda: number
  hosts: Record<string, SignalCover>
}

/** Δ·(1 − r): the rate of the changes no signal reports, which the page's blind crawls must catch. */
export function unsignalledChangesPerDay(changesPerDay: number, cover: SignalCover): number {
  return changesPerDay * (1 - cover.share)
}

/** Δ·r / p: the crawls a day the page's signals will trigger (each true one, and the false ones with them). */
export function signalCrawlsPerDay(changesPerDay: number, cover: SignalCover): number {
  return cover.share > 0 ? (changesPerDay * cover.share) / cover.precision : 0
}

/**
 * Whether a page's signals take over its covered changes: when their crawls cost no more than the blind crawls
 * the page gets without signals (`plainCrawlsPerDay`). A page changing faster than it is worth crawling keeps
 * its schedule; its signals would spend more than it is given.
 */
export function coversPage(changesPerDay: number, cover: SignalCover, plainCrawlsPerDay: number): boolean {
  return cover.share > 0 && signalCrawlsPerDay(changesPerDay, cover) <= plainCrawlsPerDay
}

/**
 * Solves a fleet's rates with signals (docs/math.md 5.4): first without them; then every page its signals take
 * over (coversPage, `covers[i]` is page i's host's cover) has its change rate reduced to the uncovered part, the
 * budget loses their signals' crawls (never below the pages' floors), and the problem is solved again. Returns
 * that solution, the first one's multiplier and how many pages were taken over.
 */
export function solveRatesWithSignals(
  problem: RateProblem,
  covers: readonly SignalCover[],
): { solution: RateSolution; plainLambda: number; coveredPages: number } {
  const plain = solveRates(problem)
  let signalCrawls = 0
  let coveredPages = 0
  const uncovered = Float64Array.from(problem.changesPerDay, (delta, i) => {
    const cover = covers[i]!
    if (!coversPage(delta, cover, plain.crawlsPerDay[i]!)) return delta
    coveredPages++
    signalCrawls += signalCrawlsPerDay(delta, cover)
    return unsignalledChangesPerDay(delta, cover)
  })
  if (coveredPages === 0) return { solution: plain, plainLambda: plain.lambda, coveredPages }
  let floors = 0
  for (const min of problem.minCrawlsPerDay) floors += min
  const budgetCrawlsPerDay = Math.max(floors, problem.budgetCrawlsPerDay - signalCrawls)
  const solution = solveRates({ ...problem, changesPerDay: uncovered, budgetCrawlsPerDay, lambdaHint: plain.lambda })
  return { solution, plainLambda: plain.lambda, coveredPages }
}

/**
 * P(changed since the content was last seen | signal) for one page (docs/math.md 5.3). A source's signals are taken
 * as a mix: a share κ (`informativeShare`) reports a change that happened, the rest come whether or not the page
 * changed and say nothing. The page's chance is then κ + (1 − κ)·(1 − e^{−Δ·age}), its own chance of a change in
 * `ageDays` at `changesPerDay` where the signal tells nothing. κ = 0 (a sitemap whose lastmod is its build time)
 * leaves the page's own chance; κ = 1 (an accurate source, or a signal trusted outright) makes it 1.
 */
export function changedProbabilityGivenSignal(
  changesPerDay: number,
  ageDays: number,
  informativeShare: number,
): number {
  const kappa = Math.min(1, Math.max(0, informativeShare))
  const own = -Math.expm1(-Math.max(0, changesPerDay) * Math.max(0, ageDays))
  return kappa + (1 - kappa) * own
}

/** (1 − e^{−a})/a, 1 at a = 0. */
const freshShare = (a: number): number => (a > 1e-12 ? -Math.expm1(-a) / a : 1 - a / 2)

/**
 * What crawling a page now instead of at its due time is worth, net of the crawl it costs, in importance × days
 * (docs/math.md 5.3), for Poisson changes at `changesPerDay` and a page crawled at `crawlsPerDay`:
 *
 * - periodic schedule, due in d days: the pulled crawl moves the page's phase d days earlier, which costs ρ·d
 *   crawls, each worth the budget's marginal crawl (`marginalCrawlValue`, λ), and buys
 *   μ·[f(ρ)·d − (1 − p)·(1 − e^{−Δd})/Δ], with f(ρ) = (1 − e^{−Δ/ρ})/(Δ/ρ) the page's periodic freshness and p
 *   the chance it has changed by now;
 * - Poisson schedule (memoryless: the pulled crawl is one crawl more): μ·p/(Δ + ρ) − λ.
 *
 * Positive: the signal is worth its crawl. For a page at its optimal rate (μ f′(ρ) = λ) whose signal tells nothing
 * (p = its own chance of a change by now), the periodic net worth is 0 at the due time and negative before it.
 */
export function signalPullNetWorth(page: {
  importance: number
  changesPerDay: number
  crawlsPerDay: number
  daysUntilDue: number
  changedProbability: number
  marginalCrawlValue: number
  spacing: 'periodic' | 'poisson'
}): number {
  const { importance: mu, crawlsPerDay: rho, changedProbability: p, marginalCrawlValue: lambda } = page
  const delta = Math.max(0, page.changesPerDay)
  if (page.spacing === 'poisson') return (mu * p) / (delta + rho) - lambda
  const d = Math.max(0, page.daysUntilDue)
  const freshness = freshShare(delta / rho)
  const freshDaysUntilDue = d * freshShare(delta * d)
  return mu * (freshness * d - (1 - p) * freshDaysUntilDue) - lambda * rho * d
}

/**
 * ∫_a^b E[e^{−Δu}] du for Δ ~ Gamma(shape α, rate β per day), 0 ≤ a ≤ b: the expected days, between a and b days
 * after a change, that a copy taken at the change would still be fresh. E[e^{−Δu}] = (β/(β + u))^α, so the integral
 * is β·((β + a)/β)^{1−α}·(e^{(1−α)L} − 1)/(1 − α) with L = ln((β + b)/(β + a)), which is β·L at α = 1.
 */
export function gammaExpectedFreshDays(prior: { shape: number; rateDays: number }, a: number, b: number): number {
  const alpha = prior.shape
  const beta = prior.rateDays
  if (!(b > a)) return 0
  const c = 1 - alpha
  const logRatio = Math.log1p((b - a) / (beta + a))
  const growth = Math.abs(c * logRatio) < 1e-12 ? logRatio : Math.expm1(c * logRatio) / c
  return beta * Math.exp(c * Math.log1p(a / beta)) * growth
}

/**
 * signalPullNetWorth under the periodic schedule for a page with no estimate of its own (no closed interval yet),
 * averaged over its host's prior Gamma(α, β) instead of taken at the prior's mean (docs/math.md 5.3). Every term
 * is linear in e^{−Δt}: μ·[ρ·∫_0^{1/ρ} E e^{−Δt} dt · d − (1 − κ)·∫_s^{s+d} E e^{−Δu} du] − λρd, with s the days
 * since the page was last seen and κ the share of the source's signals that report real changes. A young host's
 * prior is wide (shape well below 1): its mean is set by its fastest pages, and at the mean a pull looks worth a
 * fraction of what it is worth on average over the pages the prior describes.
 */
export function signalPullNetWorthUnderPrior(page: {
  importance: number
  prior: { shape: number; rateDays: number }
  crawlsPerDay: number
  daysUntilDue: number
  daysSinceSeen: number
  informativeShare: number
  marginalCrawlValue: number
}): number {
  const { importance: mu, crawlsPerDay: rho, prior, marginalCrawlValue: lambda } = page
  const d = Math.max(0, page.daysUntilDue)
  const s = Math.max(0, page.daysSinceSeen)
  const kappa = Math.min(1, Math.max(0, page.informativeShare))
  const freshness = rho * gammaExpectedFreshDays(prior, 0, 1 / rho)
  return mu * (freshness * d - (1 - kappa) * gammaExpectedFreshDays(prior, s, s + d)) - lambda * rho * d
}

/**
 * The page's own marginal value of a crawl under the periodic schedule, μ f′(ρ) = (μ/Δ)·(1 − (1 + x)e^{−x}) with
 * x = Δ/ρ (docs/math.md 3.3), in importance × days: what the pull rule compares with when no multiplier binds.
 */
export function periodicMarginalCrawlValue(importance: number, changesPerDay: number, crawlsPerDay: number): number {
  const delta = Math.max(0, changesPerDay)
  if (!(delta > 0) || !(crawlsPerDay > 0)) return 0
  const x = delta / crawlsPerDay
  // 1 − (1 + x)e^{−x}, by its series where the closed form cancels.
  const g = x < 1e-4 ? (x * x) / 2 - (x * x * x) / 3 : -Math.expm1(-x) - x * Math.exp(-x)
  return (importance / delta) * g
}
