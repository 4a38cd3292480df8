/**
 * Rates with signals (src/math/signalRates.ts, docs/math.md 5.4): signals take over a page only where their crawls
 * cost no more than its blind crawls without them; covered changes leave the blind-crawl problem, the signals'
 * crawls leave the budget, and the total stays the budget. What pulling a page for a signal is worth (5.3).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  changedProbabilityGivenSignal,
  coversPage,
  gammaExpectedFreshDays,
  NO_SIGNAL_COVER,
  periodicMarginalCrawlValue,
  signalCrawlsPerDay,
  signalPullNetWorth,
  signalPullNetWorthUnderPrior,
  solveRatesWithSignals,
  unsignalledChangesPerDay,
} from '../../../src/math/signalRates.ts'
import { solveRates, type RateProblem } from '../../../src/math/optimizer/index.ts'
import { createRandom } from '../../../src/math/random.ts'
import { logGamma } from '../../../src/math/estimators/prior.ts'

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

describe('a signal in the schedule (docs/math.md 5.3)', () => {
  test('P(changed | signal): κ + (1 − κ)(1 − e^{−Δ·age}); κ = 0 leaves the page’s own chance, κ = 1 makes it 1', () => {
    const own = 1 - Math.exp(-0.3 * 2)
    assert.ok(Math.abs(changedProbabilityGivenSignal(0.3, 2, 0) - own) < 1e-15)
    assert.ok(Math.abs(changedProbabilityGivenSignal(0.3, 2, 0.4) - (0.4 + 0.6 * own)) < 1e-15)
    assert.equal(changedProbabilityGivenSignal(0.3, 2, 1), 1)
    assert.equal(changedProbabilityGivenSignal(0, 2, 0), 0)
  })

  /**
   * Monte Carlo of the periodic case: a Poisson page (rate Δ) crawled every P days, due in d days, stale now with
   * probability p. Path A keeps the schedule (crawls at d, d + P, …); path B crawls now (0, P, 2P, …). Over a
   * horizon drawn uniformly in [L, L + P) (so neither path's phase is favoured at the end), returns the mean
   * difference B − A of fresh days and of crawls.
   */
  function simulatePull(delta: number, periodDays: number, d: number, p: number, runs: number, seed: number) {
    const random = createRandom(seed)
    const freshDays = (crawls: number[], horizon: number, changes: number[], staleAtZero: boolean) => {
      let fresh = 0
      let k = 0
      // Before the first crawl: fresh until the first change, unless stale already.
      const segments: [number, number][] = []
      if (crawls[0]! > 0 && !staleAtZero) segments.push([0, crawls[0]!])
      for (let i = 0; i < crawls.length; i++) segments.push([crawls[i]!, crawls[i + 1] ?? horizon])
      for (const [from, to] of segments) {
        while (k < changes.length && changes[k]! <= from) k++
        const next = k < changes.length ? changes[k]! : Number.POSITIVE_INFINITY
        fresh += Math.min(next, to) - from
      }
      return fresh
    }
    let freshGain = 0
    let extraCrawls = 0
    for (let r = 0; r < runs; r++) {
      const horizon = 20 * periodDays + random.next() * periodDays
      const changes: number[] = []
      for (let t = random.exponential(delta); t < horizon; t += random.exponential(delta)) changes.push(t)
      const stale = random.next() < p
      const a: number[] = []
      for (let t = d; t < horizon; t += periodDays) a.push(t)
      const b: number[] = []
      for (let t = 0; t < horizon; t += periodDays) b.push(t)
      freshGain += freshDays(b, horizon, changes, stale) - freshDays(a, horizon, changes, stale)
      extraCrawls += b.length - a.length
    }
    return { freshGain: freshGain / runs, extraCrawls: extraCrawls / runs }
  }

  test('periodic: the net worth of a pull is the simulated fresh days it buys less the crawls it costs at λ', () => {
    for (const [delta, rho, d, p, lambda] of [
      [0.5, 1, 0.6, 0.3, 0.2],
      [2, 1, 0.3, 0.9, 0.05],
      [0.1, 0.5, 1.5, 0.5, 0.5],
    ] as const) {
      const sim = simulatePull(delta, 1 / rho, d, p, 40_000, 7)
      const importance = 2
      const simulated = importance * sim.freshGain - lambda * sim.extraCrawls
      const formula = signalPullNetWorth({
        importance,
        changesPerDay: delta,
        crawlsPerDay: rho,
        daysUntilDue: d,
        changedProbability: p,
        marginalCrawlValue: lambda,
        spacing: 'periodic',
      })
      // The simulated crawl difference is d·ρ on average; the fresh days' standard error is about 0.01 here.
      assert.ok(Math.abs(sim.extraCrawls - d * rho) < 0.02, `crawls ${sim.extraCrawls} vs ${d * rho}`)
      assert.ok(Math.abs(simulated - formula) < 0.03, `Δ ${delta}: simulated ${simulated}, formula ${formula}`)
    }
  })

  test('periodic: a signal that tells nothing breaks even at the due time of a page at its optimal rate, and loses before', () => {
    const [importance, delta, rho] = [3, 0.4, 0.8]
    // At its optimal rate the page's marginal crawl value is λ (docs/math.md 3.3).
    const lambda = periodicMarginalCrawlValue(importance, delta, rho)
    const x = delta / rho
    assert.ok(Math.abs(lambda - (importance / delta) * (1 - (1 + x) * Math.exp(-x))) < 1e-12)
    const worth = (d: number) =>
      signalPullNetWorth({
        importance,
        changesPerDay: delta,
        crawlsPerDay: rho,
        daysUntilDue: d,
        // The page's own chance of a change since its last crawl, one period minus d ago.
        changedProbability: changedProbabilityGivenSignal(delta, 1 / rho - d, 0),
        marginalCrawlValue: lambda,
        spacing: 'periodic',
      })
    assert.ok(Math.abs(worth(1e-6)) < 1e-9, String(worth(1e-6)))
    for (const d of [0.1, 0.5, 1]) assert.ok(worth(d) < 0, `d ${d}: ${worth(d)}`)
    // A certain change is worth pulling at any distance from the due time.
    for (const d of [0.1, 0.5, 1])
      assert.ok(
        signalPullNetWorth({
          importance,
          changesPerDay: delta,
          crawlsPerDay: rho,
          daysUntilDue: d,
          changedProbability: 1,
          marginalCrawlValue: lambda,
          spacing: 'periodic',
        }) > 0,
      )
  })

  test('Poisson schedule: one crawl more, worth μ·p/(Δ + ρ) against λ', () => {
    const worth = signalPullNetWorth({
      importance: 2,
      changesPerDay: 0.5,
      crawlsPerDay: 1.5,
      daysUntilDue: 3,
      changedProbability: 0.6,
      marginalCrawlValue: 0.1,
      spacing: 'poisson',
    })
    assert.ok(Math.abs(worth - ((2 * 0.6) / 2 - 0.1)) < 1e-15)
  })
})

/**
 * E[g(Δ)] for Δ ~ Gamma(α, β), by the midpoint rule in y = ln Δ, where the density times Δ is smooth even for α < 1
 * (from 10^−80/β: for shape 0.18 the mass below 10^−14/β is still 0.3 %):
 * an independent computation to hold the closed forms against.
 */
function gammaExpectation(prior: { shape: number; rateDays: number }, g: (delta: number) => number): number {
  const { shape: a, rateDays: b } = prior
  const [lo, hi, steps] = [Math.log(1e-80 / b), Math.log(60 / b), 200_000]
  const h = (hi - lo) / steps
  let sum = 0
  for (let k = 0; k < steps; k++) {
    const y = lo + (k + 0.5) * h
    const delta = Math.exp(y)
    sum += g(delta) * Math.exp(a * Math.log(b * delta) - b * delta - logGamma(a))
  }
  return sum * h
}

describe('a pull for a page with no estimate of its own, over its host’s prior (docs/math.md 5.3)', () => {
  const priors = [
    { shape: 0.18, rateDays: 0.18 / 25 },
    { shape: 1, rateDays: 2 },
    { shape: 2.5, rateDays: 4 },
  ]

  test('the expected fresh days between a and b after a change: the closed form against the integral over the prior', () => {
    for (const prior of priors)
      for (const [a, b] of [
        [0, 1],
        [0.3, 2.5],
        [5, 5.01],
        [0, 40],
      ] as const) {
        const closed = gammaExpectedFreshDays(prior, a, b)
        // ∫_a^b e^{−Δu} du = (e^{−Δa} − e^{−Δb})/Δ for each rate, then averaged over the prior.
        const averaged = gammaExpectation(
          prior,
          (delta) => (Math.exp(-delta * a) * -Math.expm1(-delta * (b - a))) / delta,
        )
        assert.ok(
          Math.abs(closed - averaged) < 1e-6 * Math.max(1, averaged),
          `${JSON.stringify(prior)} [${a}, ${b}]: ${closed} vs ${averaged}`,
        )
        assert.ok(closed > 0 && closed <= b - a + 1e-12)
      }
    // Shape 1 ± ε is continuous with the logarithmic form at 1.
    const at1 = gammaExpectedFreshDays({ shape: 1, rateDays: 2 }, 0.5, 3)
    assert.ok(Math.abs(at1 - 2 * Math.log(5 / 2.5)) < 1e-12)
    assert.ok(Math.abs(gammaExpectedFreshDays({ shape: 1 + 1e-9, rateDays: 2 }, 0.5, 3) - at1) < 1e-8)
    assert.equal(gammaExpectedFreshDays(priors[0]!, 2, 2), 0)
  })

  test('the worth under the prior is the pointwise worth averaged over the prior’s rates', () => {
    for (const prior of priors)
      for (const [rho, d, s, kappa, lambda] of [
        [1, 0.6, 0.4, 0.7, 0.2],
        [0.1, 8, 2, 0.3, 0.05],
        [3, 0.2, 0.1, 0.95, 0.4],
      ] as const) {
        const closed = signalPullNetWorthUnderPrior({
          importance: 2,
          prior,
          crawlsPerDay: rho,
          daysUntilDue: d,
          daysSinceSeen: s,
          informativeShare: kappa,
          marginalCrawlValue: lambda,
        })
        const averaged = gammaExpectation(prior, (delta) =>
          signalPullNetWorth({
            importance: 2,
            changesPerDay: delta,
            crawlsPerDay: rho,
            daysUntilDue: d,
            changedProbability: changedProbabilityGivenSignal(delta, s, kappa),
            marginalCrawlValue: lambda,
            spacing: 'periodic',
          }),
        )
        assert.ok(Math.abs(closed - averaged) < 1e-6, `${JSON.stringify(prior)} ρ ${rho}: ${closed} vs ${averaged}`)
      }
  })

  test('a wide young prior values a pull above its mean’s value, as the pages it describes do on average', () => {
    const prior = priors[0]!
    const mean = prior.shape / prior.rateDays
    const page = { importance: 1, crawlsPerDay: 1, daysUntilDue: 0.6, informativeShare: 0.9, marginalCrawlValue: 0.1 }
    const atMean = signalPullNetWorth({
      ...page,
      changesPerDay: mean,
      changedProbability: changedProbabilityGivenSignal(mean, 0.4, 0.9),
      spacing: 'periodic',
    })
    const underPrior = signalPullNetWorthUnderPrior({ ...page, prior, daysSinceSeen: 0.4 })
    assert.ok(atMean < 0 && underPrior > 0, `at the mean ${atMean}, over the prior ${underPrior}`)
  })
})
