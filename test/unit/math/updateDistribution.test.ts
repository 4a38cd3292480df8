import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import type { Random } from '../../../src/math/random.ts'
import {
  ageCdfM2,
  ageCdfM4,
  ageCdfM5,
  ageCdfM5FromSamples,
  ageCdfM6,
  chooseMethod,
  estimateAgeCdf,
  inferUpdateDistribution,
  m3Samples,
  priorWorkM1,
  priorWorkM3,
} from '../../../src/math/updateDistribution.ts'
import type { AgeCdf, AgeCrawl } from '../../../src/math/updateDistribution.ts'
import {
  EXPONENTIAL,
  constantCrawlTimes,
  crawlsAt,
  lomax,
  randomCrawlTimes,
  renewalCrawls,
  simulateUpdates,
  trueAgeCdf,
  weibull,
  withoutAges,
  type UpdateLaw,
} from '../../helpers/renewal.ts'

const POISSON = EXPONENTIAL
/** Lomax (Pareto II), α = 3, σ = 2: mean σ/(α−1) = 1, CV = √(α/(α−2)) = √3. */
const PARETO = lomax(3)
/** Weibull, shape 0.5, scale 0.5: mean 0.5·Γ(3) = 1, CV = √5. */
const WEIBULL = weibull(0.5)

function supError(cdf: AgeCdf, law: UpdateLaw): number {
  return Math.max(...cdf.points.map((p) => Math.abs(p.cdf - trueAgeCdf(law, p.ageDays))))
}

function scenario(seed: number, law: UpdateLaw, crawlTimes: (random: Random) => number[]): AgeCrawl[] {
  const random = createRandom(seed)
  return renewalCrawls(random, law, crawlTimes(random))
}

test('trueAgeCdf matches the closed forms (exponential: 1 − e^{−x}; Lomax α = 3: 1 − (1 + x/2)^{−2})', () => {
  for (const x of [0.1, 1, 5]) {
    assert.ok(Math.abs(trueAgeCdf(POISSON, x) + Math.expm1(-x)) < 1e-9)
    assert.ok(Math.abs(trueAgeCdf(PARETO, x) - (1 - Math.pow(1 + x / 2, -2))) < 1e-9)
  }
})

// Tolerances below come from 10 seeds of each scenario (4000 crawls; sup error mean / max):
// exponential M2 0.017/0.024, M4 0.013/0.023, M6 0.025/0.039; Pareto M2 0.027/0.047, M4 0.023/0.033,
// M6 0.038/0.063; Weibull M2 0.031/0.043. Whether a curve is Poisson is tested in poissonFit.test.ts.
test('Poisson updates (μ = 1/day, 4000 crawls): M2, M4, M6 all match 1 − e^{−μx} (sup error < 0.05)', () => {
  const m2 = ageCdfM2(scenario(1, POISSON, (r) => randomCrawlTimes(r, 4000, 0.5)))
  const m4 = ageCdfM4(withoutAges(scenario(2, POISSON, () => constantCrawlTimes(4000, 0.25))))
  const m6 = ageCdfM6(withoutAges(scenario(3, POISSON, (r) => randomCrawlTimes(r, 4000, 0.5))))
  for (const cdf of [m2, m4, m6]) {
    assert.ok(cdf)
    const error = supError(cdf, POISSON)
    assert.ok(error < 0.05, `${cdf.method}: sup error ${error}`)
    // 1/μ: M2 and M4 (μΔ = 0.25, identified) within 10 % over 10 seeds, M6 within 21 %.
    assert.ok(
      cdf.meanUpdateIntervalDays !== null && Math.abs(cdf.meanUpdateIntervalDays - 1) < 0.25,
      `${cdf.method}: 1/μ ${cdf.meanUpdateIntervalDays}`,
    )
    // G_U is concave, so x/G_U(x) at the first point bounds 1/μ from above.
    assert.ok(
      cdf.meanUpdateIntervalBoundDays !== null && cdf.meanUpdateIntervalBoundDays > 0.9,
      `${cdf.method}: bound ${cdf.meanUpdateIntervalBoundDays}`,
    )
  }
  assert.ok(
    m2!.coefficientOfVariation !== null && Math.abs(m2!.coefficientOfVariation - 1) < 0.15,
    `CV ${m2!.coefficientOfVariation}`,
  )
})

test('Pareto (CV √3) and Weibull (CV √5) renewal updates, 4000 crawls: M2 matches the true residual CDF (sup error < 0.06)', () => {
  for (const law of [PARETO, WEIBULL]) {
    const cdf = ageCdfM2(scenario(10, law, (r) => randomCrawlTimes(r, 4000, 0.5)))
    assert.ok(cdf)
    const error = supError(cdf, law)
    assert.ok(error < 0.06, `${law.name}: sup error ${error}`)
    // Measured CV 1.33–3.13 (Pareto), 1.57–2.22 (Weibull): far from the exponential's 1.
    assert.ok(
      cdf.coefficientOfVariation !== null && cdf.coefficientOfVariation > 1.25,
      `${law.name}: CV ${cdf.coefficientOfVariation}`,
    )
  }
})

test('Pareto updates, no Last-Modified, 4000 crawls: M4 with a constant interval and M6 with random intervals (sup error < 0.07)', () => {
  const m4 = ageCdfM4(withoutAges(scenario(20, PARETO, () => constantCrawlTimes(4000, 0.25))))
  const m6 = ageCdfM6(withoutAges(scenario(21, PARETO, (r) => randomCrawlTimes(r, 4000, 0.5))))
  for (const cdf of [m4, m6]) {
    assert.ok(cdf)
    const error = supError(cdf, PARETO)
    assert.ok(error < 0.07, `${cdf.method}: sup error ${error}`)
  }
  // M4 evaluates exactly at multiples of the crawl interval.
  assert.ok(m4!.points.every((p, i) => Math.abs(p.ageDays - (i + 1) * 0.25) < 1e-9))
})

test('M4 on a hand-computed sequence: a_j = Δ after a change, else a_{j−1} + Δ', () => {
  // Crawls every day; changes seen at crawls 2, 5, 6, 10 (flags of crawls 0..11 below).
  const flags = [null, false, true, false, false, true, true, false, false, false, true, false]
  const crawls: AgeCrawl[] = flags.map((changed, i) => ({ atDays: i, changed, ageDays: null }))
  // chain from crawl 2: 1, 2, 3, 1, 1, 2, 3, 4, 1, 2 → CDF at 1..4: 4/10, 7/10, 9/10, 10/10.
  const cdf = ageCdfM4(crawls, { bins: 4 })
  assert.ok(cdf)
  assert.deepEqual(
    cdf.points.map((p) => p.ageDays),
    [1, 2, 3, 4],
  )
  const expected = [0.4, 0.7, 0.9, 1]
  cdf.points.forEach((p, i) => assert.ok(Math.abs(p.cdf - expected[i]!) < 1e-12))
})

test('estimateAgeCdf chooses M2 with ages, M4 with constant intervals, M6 otherwise', () => {
  const random = scenario(30, POISSON, (r) => randomCrawlTimes(r, 500, 0.5))
  assert.equal(estimateAgeCdf(random)!.method, 'M2')
  assert.equal(estimateAgeCdf(withoutAges(random))!.method, 'M6')
  const constant = withoutAges(scenario(31, POISSON, () => constantCrawlTimes(500, 0.25)))
  assert.equal(estimateAgeCdf(constant)!.method, 'M4')
})

test('inferUpdateDistribution recovers F_U (Pareto, M2 with 20000 crawls: |F̂ − F| < 0.15 where F ≤ 0.9, μ within 15 %)', () => {
  const cdf = ageCdfM2(
    scenario(40, PARETO, (r) => randomCrawlTimes(r, 20000, 0.5)),
    { maxLagDays: 3, bins: 15 },
  )
  assert.ok(cdf)
  const distribution = inferUpdateDistribution(cdf)
  assert.ok(distribution)
  assert.ok(Math.abs(distribution.changesPerDay - 1) < 0.15, `μ ${distribution.changesPerDay}`)
  for (const { intervalDays, cdf: f } of distribution.points) {
    const truth = 1 - PARETO.survival(intervalDays)
    if (truth <= 0.9) assert.ok(Math.abs(f - truth) < 0.15, `F(${intervalDays}) ${f} vs ${truth}`)
  }
  assert.ok(distribution.points.every((p, i, all) => i === 0 || p.cdf >= all[i - 1]!.cdf))
})

function assertFinite(cdf: AgeCdf | null): void {
  if (cdf === null) return
  for (const p of cdf.points)
    assert.ok(Number.isFinite(p.ageDays) && Number.isFinite(p.cdf) && p.cdf >= 0 && p.cdf <= 1)
  for (const v of [cdf.meanUpdateIntervalDays, cdf.meanUpdateIntervalBoundDays, cdf.coefficientOfVariation]) {
    assert.ok(v === null || Number.isFinite(v))
  }
  const distribution = inferUpdateDistribution(cdf)
  if (distribution !== null) {
    assert.ok(Number.isFinite(distribution.changesPerDay))
    for (const p of distribution.points) assert.ok(Number.isFinite(p.cdf) && Number.isFinite(p.intervalDays))
  }
}

test('degenerate inputs: no changes, all changes, one crawl, zero ages give null or finite values', () => {
  const none: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({
    atDays: i,
    changed: i === 0 ? null : false,
    ageDays: null,
  }))
  const all: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: true, ageDays: null }))
  const allRandom: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({
    atDays: i * i * 0.01 + i,
    changed: true,
    ageDays: null,
  }))
  const zeroAges: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: true, ageDays: 0 }))
  const oldAges: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: false, ageDays: 100 + i }))
  for (const crawls of [none, all, allRandom, zeroAges, oldAges]) {
    for (const estimate of [estimateAgeCdf, ageCdfM2, ageCdfM4, ageCdfM5, ageCdfM6]) assertFinite(estimate(crawls))
    for (const prior of [priorWorkM1(crawls), priorWorkM3(crawls)]) {
      if (prior !== null)
        assert.ok(Number.isFinite(prior.meanUpdateIntervalDays) && prior.points.every((p) => p.cdf > 0 && p.cdf <= 1))
    }
  }
  assert.equal(estimateAgeCdf([{ atDays: 0, changed: null, ageDays: 1 }]), null)
  assert.equal(estimateAgeCdf([]), null)
  assert.equal(ageCdfM4(none), null) // no change: the chain never starts
  const allChanged = estimateAgeCdf(all)
  assert.ok(allChanged)
  assert.equal(allChanged.meanUpdateIntervalDays, null) // every crawl saw a change: μ is only bounded below
  assert.equal(allChanged.meanUpdateIntervalBoundDays, 1) // ... by G_U(Δ)/Δ = 1 change a day
  const noneSeen = estimateAgeCdf(none)
  assert.ok(noneSeen)
  assert.equal(noneSeen.meanUpdateIntervalDays, null)
})

test('M4 with a crawl interval at or above half the mean update interval: μ and F_U not identified, the bound holds', () => {
  // Li, Cline & Loguinov 2017, section V-A: G_U at multiples of Δ does not fix its slope at 0. The
  // former fit gave μ̂ ≈ 0.62 μ for Poisson updates at μΔ = 2.
  for (const law of [POISSON, PARETO]) {
    for (const delta of [0.5, 1, 2]) {
      const cdf = ageCdfM4(withoutAges(scenario(50, law, () => constantCrawlTimes(2000, delta))))
      assert.ok(cdf)
      assert.equal(cdf.latticeDays, delta)
      assert.equal(cdf.meanUpdateIntervalDays, null, `${law.name} Δ=${delta}`)
      assert.equal(inferUpdateDistribution(cdf), null)
      // 1/μ = 1 ≤ Δ/G_U(Δ) (a sample of it: within noise).
      assert.ok(
        cdf.meanUpdateIntervalBoundDays! > 0.95,
        `${law.name} Δ=${delta}: bound ${cdf.meanUpdateIntervalBoundDays}`,
      )
      assert.ok(
        Math.abs(cdf.meanUpdateIntervalBoundDays! - delta / trueAgeCdf(law, delta)) <
          (0.1 * delta) / trueAgeCdf(law, delta),
      )
    }
  }
})

test('M4 counts crawl intervals: jittered intervals (±3 %) give the same curve as exact ones', () => {
  const random = createRandom(60)
  const exact = constantCrawlTimes(3000, 0.5)
  const jittered = exact.map((t) => t + 0.015 * (2 * random.next() - 1))
  const updates = simulateUpdates(createRandom(61), PARETO, 200, 1600)
  const a = ageCdfM4(withoutAges(crawlsAt(updates, exact)))!
  const b = ageCdfM4(withoutAges(crawlsAt(updates, jittered)))!
  assert.equal(chooseMethod(withoutAges(crawlsAt(updates, jittered)))!.method, 'M4')
  // The crawls see the same changes except where an update falls within the jitter of a crawl.
  const gap = Math.max(...a.points.map((p, i) => Math.abs(p.cdf - b.points[i]!.cdf)))
  assert.ok(gap < 0.01, `gap ${gap}`)
  assert.ok(supError(b, PARETO) < 0.05, `sup error ${supError(b, PARETO)}`)
})

test('M6 error keeps falling with more crawls when crawls are slower than updates (crawl every 2 mean update intervals)', () => {
  // With the former fixed 50 bins (0.6 mean crawl intervals wide, wider than the rise of G_U) the mean
  // sup error of these 4 seeds went from 0.026 to 0.034 (exponential) and from 0.029 to 0.034
  // (Pareto) between 4000 and 64000 crawls. With m6Bins: 0.032 → 0.008 and 0.020 → 0.010.
  for (const law of [POISSON, PARETO]) {
    const mean = (n: number) => {
      let total = 0
      for (let seed = 0; seed < 4; seed++) {
        const cdf = ageCdfM6(withoutAges(scenario(900 + seed, law, (r) => randomCrawlTimes(r, n, 2))))!
        total += Math.max(
          ...cdf.points
            .filter((p) => trueAgeCdf(law, p.ageDays) < 0.99)
            .map((p) => Math.abs(p.cdf - trueAgeCdf(law, p.ageDays))),
        )
      }
      return total / 4
    }
    const small = mean(4000)
    const large = mean(64000)
    assert.ok(large < 0.02 && large < 0.6 * small, `${law.name}: sup error ${small} at 4000 crawls, ${large} at 64000`)
  }
})

test('M3 and M5 on a hand-computed sequence: M3 samples are the gaps between detected changes, M5 = M4 over whole cycles', () => {
  // Crawls every day; changes seen at crawls 2, 5, 6, 10 (flags of crawls 0..11).
  const flags = [null, false, true, false, false, true, true, false, false, false, true, false]
  const crawls: AgeCrawl[] = flags.map((changed, i) => ({ atDays: i, changed, ageDays: null }))
  assert.deepEqual(m3Samples(crawls), { intervalDays: 1, samplesDays: [3, 1, 4] })
  // M5 from samples 3, 1, 4 (Σ = 8): Σ min(n, D)/8 = 3/8, 6/8, 7/8, 8/8 for n = 1..4. M4 over the same
  // cycles (chain 1,2,3 | 1 | 1,2,3,4) gives the same fractions.
  const samples = [3, 1, 4, 2, 2, 1, 5, 1, 3, 2]
  const m5 = ageCdfM5FromSamples(samples, 1)!
  const chain = samples.flatMap((d) => Array.from({ length: d }, (_, k) => k + 1))
  m5.points.forEach((p, i) => {
    const m4 = chain.filter((a) => a <= i + 1).length / chain.length
    assert.ok(Math.abs(p.cdf - m4) < 1e-12, `n=${i + 1}: M5 ${p.cdf} vs M4 ${m4}`)
  })
  assert.equal(m5.points[m5.points.length - 1]!.cdf, 1)
})

test('M3 is Δ-consistent for F_U only with Poisson updates; its limit is Theorem 7 and its mean Δ/G_U(Δ) (20000 crawls)', () => {
  // The limit's distance to F_U at multiples 1..8 of Δ = 0.5: 0 (Poisson), 0.031 (Pareto), 0.195 (Weibull).
  const delta = 0.5
  for (const law of [POISSON, PARETO, WEIBULL]) {
    const crawls = withoutAges(scenario(70, law, () => constantCrawlTimes(20000, delta)))
    const m3 = priorWorkM3(crawls)!
    const cdfAt = (x: number) => m3.points.filter((p) => p.intervalDays <= x + 1e-9).at(-1)?.cdf ?? 0
    const limit = (k: number) =>
      1 - (trueAgeCdf(law, (k + 1) * delta) - trueAgeCdf(law, k * delta)) / trueAgeCdf(law, delta)
    let toLimit = 0
    let toF = 0
    for (let k = 1; k <= 8; k++) {
      toLimit = Math.max(toLimit, Math.abs(cdfAt(k * delta) - limit(k)))
      toF = Math.max(toF, Math.abs(cdfAt(k * delta) - (1 - law.survival(k * delta))))
    }
    assert.ok(toLimit < 0.03, `${law.name}: M3 vs Theorem 7: ${toLimit}`)
    if (law === POISSON) assert.ok(toF < 0.03, `Poisson: M3 vs F_U ${toF}`)
    if (law === WEIBULL) assert.ok(toF > 0.15, `Weibull: M3 should be far from F_U, gap ${toF}`)
    const expectedMean = delta / trueAgeCdf(law, delta)
    assert.ok(
      Math.abs(m3.meanUpdateIntervalDays / expectedMean - 1) < 0.03,
      `${law.name}: E[D_3] ${m3.meanUpdateIntervalDays} vs ${expectedMean}`,
    )
    // M5 repairs the same samples: G_U at multiples of Δ.
    const m5 = ageCdfM5(crawls)!
    const m5Error = Math.max(...m5.points.map((p) => Math.abs(p.cdf - trueAgeCdf(law, p.ageDays))))
    assert.ok(m5Error < 0.03, `${law.name}: M5 sup error ${m5Error}`)
  }
})

test('M1 is F_U for Poisson updates and lies between F_U and G_U for Pareto ones (Li, Cline & Loguinov 2017, Theorem 4)', () => {
  const poisson = priorWorkM1(scenario(80, POISSON, (r) => randomCrawlTimes(r, 20000, 0.5)))!
  const poissonError = Math.max(...poisson.points.map((p) => Math.abs(p.cdf - (1 - POISSON.survival(p.intervalDays)))))
  assert.ok(poissonError < 0.03, `Poisson: M1 vs F_U ${poissonError}`)
  const pareto = priorWorkM1(scenario(81, PARETO, (r) => randomCrawlTimes(r, 20000, 0.5)))!
  let gapToF = 0
  for (const { intervalDays: x, cdf } of pareto.points) {
    if (x > 10) break
    const f = 1 - PARETO.survival(x)
    const g = trueAgeCdf(PARETO, x)
    assert.ok(cdf <= f + 0.02 && cdf >= g - 0.02, `x=${x}: M1 ${cdf} outside [G_U ${g}, F_U ${f}]`)
    gapToF = Math.max(gapToF, f - cdf)
  }
  assert.ok(gapToF > 0.05, `Pareto: M1 should be biased away from F_U, gap ${gapToF}`)
})

test('M6 estimates μ from the short lags even when crawls are slower than updates (crawl every 2 mean update intervals, 16000 crawls)', () => {
  // The display bins are then wider than the rise of G_U; a finer pass finds the fit range.
  // Measured root-mean-square relative error: 0.12 (exponential), 0.09 (Pareto).
  for (const law of [POISSON, PARETO]) {
    let error = 0
    for (let seed = 0; seed < 4; seed++) {
      const cdf = ageCdfM6(withoutAges(scenario(950 + seed, law, (r) => randomCrawlTimes(r, 16000, 2))))!
      assert.ok(cdf.meanUpdateIntervalDays !== null, `${law.name}: μ not estimated`)
      error += Math.abs(1 / cdf.meanUpdateIntervalDays - 1) / 4
    }
    assert.ok(error < 0.2, `${law.name}: mean relative error of μ ${error}`)
  }
})
