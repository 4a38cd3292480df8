/**
 * Rates with signals (src/math/signalRates.ts, docs/math.md 5.4): signals take over a page only where their crawls
 * cost no more than its blind crawls without them; covered changes leave the blind-crawl problem, the signals'
 * crawls leave the budget, and the total stays the budget.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  coversPage,
  NO_SIGNAL_COVER,
  signalCrawlsPerDay,
  solveRatesWithSignals,
  unsignalledChangesPerDay,
} from '../../../src/math/signalRates.ts'
import { solveRates, type RateProblem } from '../../../src/math/optimizer/index.ts'

const problem = (changesPerDay: number[], budgetCrawlsPerDay: number, min = 0): RateProblem => ({
  changesPerDay: Float64Array.from(changesPerDay),
  importance: new Float64Array(changesPerDay.length).fill(1),
  minCrawlsPerDay: new Float64Array(changesPerDay.length).fill(min),
  maxCrawlsPerDay: new Float64Array(changesPerDay.length).fill(Number.POSITIVE_INFINITY),
  budgetCrawlsPerDay,
  objective: 'freshness-periodic',
})
const sum = (a: Float64Array) => a.reduce((x, y) => x + y, 0)

test('without a cover the solve is the plain one', () => {
  const p = problem([0.5, 2, 0.1], 3)
  const out = solveRatesWithSignals(p, [NO_SIGNAL_COVER, NO_SIGNAL_COVER, NO_SIGNAL_COVER])
  assert.equal(out.coveredPages, 0)
  assert.deepEqual([...out.solution.crawlsPerDay], [...solveRates(p).crawlsPerDay])
})

test('a covered page gets fewer blind crawls, its signals’ crawls come out of the budget, and the total is the budget', () => {
  const cover = { share: 0.8, precision: 0.95 }
  const p = problem([0.5, 0.5, 0.5, 0.5], 4)
  const plain = solveRates(p)
  const out = solveRatesWithSignals(p, [cover, cover, NO_SIGNAL_COVER, NO_SIGNAL_COVER])
  assert.equal(out.coveredPages, 2)
  assert.equal(out.plainLambda, plain.lambda)
  const signalCrawls = 2 * signalCrawlsPerDay(0.5, cover)
  assert.ok(Math.abs(sum(out.solution.crawlsPerDay) + signalCrawls - 4) < 1e-6)
  assert.ok(out.solution.crawlsPerDay[0]! < plain.crawlsPerDay[0]!)
  // The budget the signals spare goes to the pages they do not cover.
  assert.ok(out.solution.crawlsPerDay[2]! > plain.crawlsPerDay[2]!)
  assert.ok(Math.abs(unsignalledChangesPerDay(0.5, cover) - 0.1) < 1e-12)
})

test('signals do not take over a page that changes faster than it is worth crawling', () => {
  const cover = { share: 1, precision: 0.95 }
  // One page changes 50 times a day: the budget leaves it few crawls, far fewer than its signals would take.
  const p = problem([50, 0.2, 0.2], 1)
  const plain = solveRates(p)
  assert.ok(plain.crawlsPerDay[0]! < signalCrawlsPerDay(50, cover))
  assert.equal(coversPage(50, cover, plain.crawlsPerDay[0]!), false)
  const out = solveRatesWithSignals(p, [cover, NO_SIGNAL_COVER, NO_SIGNAL_COVER])
  assert.equal(out.coveredPages, 0)
})

test('the budget never falls below what the pages’ floors need', () => {
  const cover = { share: 1, precision: 0.9 }
  const p = problem([0.3, 0.3], 1, 0.45)
  const out = solveRatesWithSignals(p, [cover, cover])
  assert.ok(sum(out.solution.crawlsPerDay) >= 0.9 - 1e-9)
})
