import { rateForPage, pageFreshness } from '../math/optimizer/index.ts'
import type { Random } from '../math/random.ts'
import type { Settings } from './settings.ts'

const MS_PER_DAY = 86_400_000

/** What the rate of one page depends on. */
export interface RateInputs {
  changesPerDay: number | null
  importance: number
  minCrawlsPerDay: number | null
  maxCrawlsPerDay: number | null
}

/** A page's effective bounds: its own, else the settings-level ones (MATH.md 3.6: the floor keeps every page learnable). */
export function pageBounds(page: RateInputs, settings: Settings): { minCrawlsPerDay: number; maxCrawlsPerDay: number } {
  const minCrawlsPerDay = page.minCrawlsPerDay ?? settings.minCrawlsPerDay
  const maxCrawlsPerDay = page.maxCrawlsPerDay ?? settings.maxCrawlsPerDay ?? Number.POSITIVE_INFINITY
  return { minCrawlsPerDay, maxCrawlsPerDay: Math.max(maxCrawlsPerDay, minCrawlsPerDay) }
}

/** The change rate scheduling uses: the page's estimate, or the prior for pages without one. */
export function schedulingChangesPerDay(page: RateInputs, settings: Settings): number {
  return page.changesPerDay ?? settings.defaultChangesPerDay
}

/** The multiplier that applies to a host's pages: its own when its cap binds (MATH.md 3.2), else the global one. */
export function lambdaForHost(state: { lambda: number | null; hostLambdas: Record<string, number> }, host: string): number | null {
  // λ = 0: the last solve left budget unused (every page at its upper bound). It says nothing about
  // a page added since, which is then timed from its own change rate until the next solve.
  if (state.lambda === null || !(state.lambda > 0)) return null
  return state.hostLambdas[host] ?? state.lambda
}

/**
 * The page's crawl rate from the stored global multiplier λ (MATH.md 3.1, O(1)). Before the first
 * optimisation (λ unknown) a page is crawled at its change rate, within its bounds.
 */
export function crawlsPerDayFor(page: RateInputs, settings: Settings, lambda: number | null): number {
  const bounds = pageBounds(page, settings)
  const changesPerDay = schedulingChangesPerDay(page, settings)
  if (lambda === null) {
    return Math.min(bounds.maxCrawlsPerDay, Math.max(bounds.minCrawlsPerDay, changesPerDay))
  }
  return rateForPage({ changesPerDay, importance: page.importance, ...bounds }, lambda, settings.objective)
}

/**
 * When the page is due next: never crawled → `nowMs`; periodic → last crawl + 1/ρ days;
 * Poisson → last crawl + an exponential draw with rate ρ. ρ = 0 → never (null).
 */
export function nextCrawlAtMs(options: {
  lastCrawledAtMs: number | null
  crawlsPerDay: number
  schedule: Settings['schedule']
  nowMs: number
  random: Random
}): number | null {
  if (options.lastCrawledAtMs === null) return options.nowMs
  if (!(options.crawlsPerDay > 0)) return null
  if (options.schedule === 'periodic') return options.lastCrawledAtMs + MS_PER_DAY / options.crawlsPerDay
  return options.lastCrawledAtMs + options.random.exponential(options.crawlsPerDay) * MS_PER_DAY
}

/**
 * Expected freshness of one page at its rate under the schedule that runs: periodic crawling
 * gives (ρ/Δ)(1 − e^{−Δ/ρ}) (MATH.md 3.3), Poisson crawling ρ/(ρ+Δ) (MATH.md 3.1).
 */
export function expectedPageFreshness(page: RateInputs, settings: Settings, crawlsPerDay: number | null): number | null {
  if (crawlsPerDay === null) return null
  const objective = settings.schedule === 'periodic' ? 'freshness-periodic' : 'freshness'
  return pageFreshness(objective, crawlsPerDay, schedulingChangesPerDay(page, settings))
}

/**
 * A page's due time after its rate changed between crawls. Periodic: last crawl + 1/ρ (may be in
 * the past: due now). Poisson: memoryless, so the rest of the wait is a fresh draw from now, unless
 * the page is already due. Never crawled: unchanged (due since registration).
 */
export function retimedCrawlAtMs(options: {
  lastCrawledAtMs: number | null
  nextCrawlAtMs: number | null
  crawlsPerDay: number
  schedule: Settings['schedule']
  nowMs: number
  random: Random
}): number | null {
  if (options.lastCrawledAtMs === null) return options.nextCrawlAtMs ?? options.nowMs
  if (!(options.crawlsPerDay > 0)) return null
  if (options.schedule === 'periodic') return options.lastCrawledAtMs + MS_PER_DAY / options.crawlsPerDay
  if (options.nextCrawlAtMs !== null && options.nextCrawlAtMs <= options.nowMs) return options.nextCrawlAtMs
  return options.nowMs + options.random.exponential(options.crawlsPerDay) * MS_PER_DAY
}
