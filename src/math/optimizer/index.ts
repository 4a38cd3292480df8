/** Crawl-rate optimiser (docs/math.md section 3): the global solve and the O(1) per-page update. */
export { InfeasibleBudgetError, type Objective, type RateProblem, type RateSolution } from './types.ts'
export { solveRates } from './solveRates.ts'
export { marginalUtility, pageFreshness, rateForPage } from './pageRate.ts'
export { MultiplierSearchError } from './multiplierSearch.ts'
