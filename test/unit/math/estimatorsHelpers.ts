/** Seeded crawl histories with known truth, shared by the estimator tests. */
import { createRandom, type Random } from '../../../src/math/random.ts'
import {
  emptyEstimatorState,
  stepEstimators,
  type EstimatorSettings,
  type EstimatorState,
  type IntervalObservation,
} from '../../../src/math/estimators/index.ts'

export const SETTINGS: EstimatorSettings = {
  llnAlpha: '1/k',
  saGamma: 0.75,
  defaultChangesPerDay: 1,
  minChangesPerDay: 1e-6,
  maxChangesPerDay: 1e5,
}

/** Draws the next crawl interval in days. */
export type IntervalSampler = (random: Random) => number

export const poissonCrawling =
  (crawlsPerDay: number): IntervalSampler =>
  (random) =>
    random.exponential(crawlsPerDay)
export const periodicCrawling =
  (crawlsPerDay: number): IntervalSampler =>
  () =>
    1 / crawlsPerDay

/**
 * Crawls a page whose changes are a Poisson process of rate changesPerDay. Each observation
 * carries the age at the crawl (time since the latest change; changes started long before).
 */
export function simulateCrawls(
  random: Random,
  changesPerDay: number,
  sampler: IntervalSampler,
  crawls: number,
): IntervalObservation[] {
  const observations: IntervalObservation[] = []
  let nowDays = 0
  let lastChangeDays = -random.exponential(changesPerDay)
  let nextChangeDays = random.exponential(changesPerDay)
  for (let k = 0; k < crawls; k++) {
    const intervalDays = sampler(random)
    const crawlDays = nowDays + intervalDays
    while (nextChangeDays <= crawlDays) {
      lastChangeDays = nextChangeDays
      nextChangeDays += random.exponential(changesPerDay)
    }
    const ageDays = crawlDays - lastChangeDays
    observations.push({ intervalDays, changed: ageDays < intervalDays, ageDays })
    nowDays = crawlDays
  }
  return observations
}

export function applyAll(
  observations: readonly IntervalObservation[],
  settings: EstimatorSettings = SETTINGS,
  state: EstimatorState = emptyEstimatorState(),
): EstimatorState {
  return observations.reduce((s, obs) => stepEstimators(s, obs, settings), state)
}

export const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length

export function assertClose(
  actual: number | null | undefined,
  expected: number,
  relativeTolerance: number,
  label = '',
): void {
  if (
    actual === null ||
    actual === undefined ||
    !(Math.abs(actual - expected) <= relativeTolerance * Math.abs(expected))
  ) {
    throw new Error(`${label} expected ${expected} ± ${relativeTolerance * 100} %, got ${actual}`)
  }
}

/** Every number reachable in a JSON-like value. */
export function numbersIn(value: unknown): number[] {
  if (typeof value === 'number') return [value]
  if (Array.isArray(value)) return value.flatMap(numbersIn)
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(numbersIn)
  return []
}

/**
 * The state of a page crawled `crawls` times at random intervals (0.05–3.05 days), whose rate jumps
 * from `before` to `after` changes/day half way (so mleAdaptive's segment may restart), with a
 * Last-Modified age on every third crawl: a state with every part filled, for storage tests.
 */
export function jumpingHistory(seed: number, crawls: number, before = 0.3, after = 3): EstimatorState {
  const random = createRandom(seed)
  let state = emptyEstimatorState()
  for (let k = 0; k < crawls; k++) {
    const rate = k < crawls / 2 ? before : after
    const intervalDays = 0.05 + 3 * random.next()
    const changed = random.next() < -Math.expm1(-rate * intervalDays)
    const ageDays = k % 3 === 0 ? random.next() * intervalDays : null
    state = stepEstimators(state, { intervalDays, changed, ageDays }, SETTINGS)
  }
  return state
}
