/**
 * The estimation columns of the few-crawls table (src/sim/fewCrawls.ts): the truth bound's choice against its
 * formula, and the bound against the page's own MLE on Poisson pages whose rates come from a known law.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import { fewCrawlsEstimation, mostProbableWithin } from '../../../src/sim/fewCrawls.ts'
import type { ChangeInterval } from '../../../src/math/estimators/index.ts'

test('truth bound: the rate with the most posterior mass within ε', () => {
  // Rates 0.1, 0.11 and 2 a day, ε = 0.2: 0.1 and 0.11 lie within 0.2 of each other, 2 of neither.
  const rates = Float64Array.from([0.1, 0.11, 2])
  const unchanged = [{ intervalDays: 1, changed: false }]
  // One unchanged day: weights e^{−0.1}, e^{−0.11}, e^{−2}. 0.1 covers [0.083, 0.125] ∋ 0.1, 0.11: the most mass.
  assert.equal(mostProbableWithin(rates, unchanged, 0.2), 0.1)
  // Three changed days: (1 − e^{−2})^3 = 0.65 against (1 − e^{−0.1})^3 + (1 − e^{−0.11})^3 = 0.002: the fast rate.
  const changed = Array.from({ length: 3 }, () => ({ intervalDays: 1, changed: true }))
  assert.equal(mostProbableWithin(rates, changed, 0.2), 2)
  // With ε = 0.05 the two slow rates no longer cover each other's (0.11/1.05 = 0.105 > 0.1): e^{−0.1} alone wins.
  assert.equal(mostProbableWithin(rates, unchanged, 0.05), 0.1)
})

test('truth bound: on Poisson pages with rates from a known law it beats the MLE; the scheduling estimate is scored as given', () => {
  const random = createRandom(7)
  const pages = 2000
  const truth = new Float64Array(pages)
  const hostOfPage = new Int32Array(pages)
  const histories: ChangeInterval[][] = []
  for (let i = 0; i < pages; i++) {
    // Two hosts: one with rates log-uniform over [0.05, 0.5] a day, one over [0.5, 5]; 2 to 6 intervals of 0.5–3 days.
    hostOfPage[i] = i % 2
    const rate = (i % 2 === 0 ? 0.05 : 0.5) * Math.exp(random.next() * Math.log(10))
    truth[i] = rate
    const history: ChangeInterval[] = []
    const intervals = 2 + random.int(5)
    for (let k = 0; k < intervals; k++) {
      const intervalDays = 0.5 + 2.5 * random.next()
      history.push({ intervalDays, changed: random.exponential(rate) < intervalDays })
    }
    histories.push(history)
  }
  // A scheduling estimate that is the truth doubled: relative error 1 on every page.
  const doubled = truth.map((d) => 2 * d)
  const result = fewCrawlsEstimation(histories, doubled, truth, hostOfPage, 8, 0.6)
  assert.equal(result.pages, pages)
  assert.ok(Math.abs(result.scheduling.median! - 1) < 1e-12)
  const mle = result.mle.median!
  assert.ok(Math.abs(result.truthBound.targetRelativeError! - 0.6 * mle) < 1e-12)
  // A prior that knows each host's rates (a tenfold range) does far better than the page's own MLE (0.33 against
  // 0.52 with this seed), and the median is within ε exactly when at least half the pages are.
  const bound = result.truthBound
  assert.ok(bound.median! < 0.75 * mle, `bound ${bound.median} vs MLE ${mle}`)
  assert.equal(bound.median! <= bound.targetRelativeError!, bound.withinShare! >= 0.5)
  assert.ok(bound.withinShare! > 0.3 && bound.withinShare! < 1)
  // Without the hosts (one host, rates over a hundredfold range) the same histories give the bound less.
  const oneHost = fewCrawlsEstimation(histories, doubled, truth, null, 8, 0.6)
  assert.ok(oneHost.truthBound.withinShare! < bound.withinShare!)
  assert.ok(oneHost.truthBound.median! > bound.median!)
  // Pages outside 1..maxIntervals are left out.
  assert.equal(fewCrawlsEstimation(histories, doubled, truth, hostOfPage, 1, 0.6).pages, 0)
})
