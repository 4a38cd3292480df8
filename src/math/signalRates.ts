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
