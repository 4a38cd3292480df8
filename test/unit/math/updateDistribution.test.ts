import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import type { Random } from '../../../src/math/random.ts'
import {
  ageCdfM2,
  ageCdfM4,
  ageCdfM6,
  estimateAgeCdf,
  inferUpdateDistribution,
  poissonFitDistance,
} from '../../../src/math/updateDistribution.ts'
import type { AgeCdf, AgeCrawl } from '../../../src/math/updateDistribution.ts'

/** An inter-update law with mean 1 day: sampler and survival function 1 − F_U. */
interface UpdateLaw {
  name: string
  sample(random: Random): number
  survival(days: number): number
}

const POISSON: UpdateLaw = {
  name: 'exponential',
  sample: (random) => random.exponential(1),
  survival: (x) => Math.exp(-x),
}
/** Lomax (Pareto II), α = 3, σ = 2: mean σ/(α−1) = 1, CV = √(α/(α−2)) = √3. */
const PARETO: UpdateLaw = {
  name: 'pareto',
  sample: (random) => 2 * (Math.pow(1 - random.next(), -1 / 3) - 1),
  survival: (x) => Math.pow(1 + x / 2, -3),
}
/** Weibull, shape 0.5, scale 0.5: mean 0.5·Γ(3) = 1, CV = √5. */
const WEIBULL: UpdateLaw = {
  name: 'weibull',
  sample: (random) => 0.5 * Math.pow(-Math.log1p(-random.next()), 2),
  survival: (x) => Math.exp(-Math.sqrt(x / 0.5)),
}

/** True residual CDF G_U(x) = μ ∫_0^x (1 − F_U(y)) dy with μ = 1, by Simpson's rule (2000 panels). */
function trueAgeCdf(law: UpdateLaw, x: number): number {
  const panels = 2000
  const h = x / panels
  let sum = law.survival(0) + law.survival(x)
  for (let i = 1; i < panels; i++) sum += (i % 2 === 1 ? 4 : 2) * law.survival(i * h)
  return (sum * h) / 3
}

/** Renewal updates from −burnInDays (an update there) to endDays. */
function simulateUpdates(random: Random, law: UpdateLaw, burnInDays: number, endDays: number): number[] {
  const times: number[] = []
  let t = -burnInDays
  while (t <= endDays) {
    times.push(t)
    t += law.sample(random)
  }
  return times
}

/** Crawls at the given times: changed since the previous crawl, and age = time since the last update. */
function crawlsAt(updates: readonly number[], crawlTimes: readonly number[]): AgeCrawl[] {
  const crawls: AgeCrawl[] = []
  let next = 0
  let lastUpdate = Number.NEGATIVE_INFINITY
  crawlTimes.forEach((at, k) => {
    let changed = false
    while (next < updates.length && updates[next]! <= at) {
      lastUpdate = updates[next++]!
      changed = true
    }
    crawls.push({ atDays: at, changed: k === 0 ? null : changed, ageDays: at - lastUpdate })
  })
  return crawls
}

function randomCrawlTimes(random: Random, count: number, meanIntervalDays: number): number[] {
  const times: number[] = []
  let t = 0
  for (let i = 0; i < count; i++) {
    t += random.exponential(1 / meanIntervalDays)
    times.push(t)
  }
  return times
}

function constantCrawlTimes(count: number, intervalDays: number): number[] {
  return Array.from({ length: count }, (_, i) => (i + 1) * intervalDays)
}

function withoutAges(crawls: readonly AgeCrawl[]): AgeCrawl[] {
  return crawls.map((c) => ({ ...c, ageDays: null }))
}

function supError(cdf: AgeCdf, law: UpdateLaw): number {
  return Math.max(...cdf.points.map((p) => Math.abs(p.cdf - trueAgeCdf(law, p.ageDays))))
}

function scenario(seed: number, law: UpdateLaw, crawlTimes: (random: Random) => number[]): AgeCrawl[] {
  const random = createRandom(seed)
  const times = crawlTimes(random)
  const updates = simulateUpdates(random, law, 200, times[times.length - 1]! + 1)
  return crawlsAt(updates, times)
}

test('trueAgeCdf matches the closed forms (exponential: 1 − e^{−x}; Lomax α = 3: 1 − (1 + x/2)^{−2})', () => {
  for (const x of [0.1, 1, 5]) {
    assert.ok(Math.abs(trueAgeCdf(POISSON, x) + Math.expm1(-x)) < 1e-9)
    assert.ok(Math.abs(trueAgeCdf(PARETO, x) - (1 - Math.pow(1 + x / 2, -2))) < 1e-9)
  }
})

// Tolerances below come from 10 seeds of each scenario (4000 crawls; sup error mean / max):
// exponential M2 0.017/0.024, M4 0.013/0.023, M6 0.025/0.039; Pareto M2 0.027/0.047, M4 0.023/0.033,
// M6 0.038/0.063; Weibull M2 0.031/0.043. Poisson-fit distance: exponential M2 ≤ 0.033, M4 ≤ 0.029,
// M6 ≤ 0.098; Pareto ≥ 0.080 (M2), 0.085 (M4), 0.079 (M6); Weibull ≥ 0.154.
test('Poisson updates (μ = 1/day, 4000 crawls): M2, M4, M6 all match 1 − e^{−μx} (sup error < 0.05)', () => {
  const m2 = ageCdfM2(scenario(1, POISSON, (r) => randomCrawlTimes(r, 4000, 0.5)))
  const m4 = ageCdfM4(withoutAges(scenario(2, POISSON, () => constantCrawlTimes(4000, 0.25))))
  const m6 = ageCdfM6(withoutAges(scenario(3, POISSON, (r) => randomCrawlTimes(r, 4000, 0.5))))
  for (const cdf of [m2, m4, m6]) {
    assert.ok(cdf)
    const error = supError(cdf, POISSON)
    assert.ok(error < 0.05, `${cdf.method}: sup error ${error}`)
    // 1/μ: M2 and M4 within 10 % over 10 seeds, M6 within 21 %.
    assert.ok(cdf.meanUpdateIntervalDays !== null && Math.abs(cdf.meanUpdateIntervalDays - 1) < 0.25, `${cdf.method}: 1/μ ${cdf.meanUpdateIntervalDays}`)
    const maxDistance = cdf.method === 'M6' ? 0.12 : 0.05
    assert.ok(cdf.poissonFitDistance !== null && cdf.poissonFitDistance < maxDistance, `${cdf.method}: Poisson distance ${cdf.poissonFitDistance}`)
  }
  assert.ok(m2!.coefficientOfVariation !== null && Math.abs(m2!.coefficientOfVariation - 1) < 0.15, `CV ${m2!.coefficientOfVariation}`)
})

test('Pareto (CV √3) and Weibull (CV √5) renewal updates, 4000 crawls: M2 matches the true residual CDF (sup error < 0.06), Poisson distance > 0.07', () => {
  for (const law of [PARETO, WEIBULL]) {
    const cdf = ageCdfM2(scenario(10, law, (r) => randomCrawlTimes(r, 4000, 0.5)))
    assert.ok(cdf)
    const error = supError(cdf, law)
    assert.ok(error < 0.06, `${law.name}: sup error ${error}`)
    assert.ok(cdf.poissonFitDistance !== null && cdf.poissonFitDistance > 0.07, `${law.name}: Poisson distance ${cdf.poissonFitDistance}`)
    // Measured CV 1.33–3.13 (Pareto), 1.57–2.22 (Weibull): far from the exponential's 1.
    assert.ok(cdf.coefficientOfVariation !== null && cdf.coefficientOfVariation > 1.25, `${law.name}: CV ${cdf.coefficientOfVariation}`)
  }
})

test('Pareto updates, no Last-Modified, 4000 crawls: M4 with a constant interval and M6 with random intervals (sup error < 0.07)', () => {
  const m4 = ageCdfM4(withoutAges(scenario(20, PARETO, () => constantCrawlTimes(4000, 0.25))))
  const m6 = ageCdfM6(withoutAges(scenario(21, PARETO, (r) => randomCrawlTimes(r, 4000, 0.5))))
  for (const cdf of [m4, m6]) {
    assert.ok(cdf)
    const error = supError(cdf, PARETO)
    assert.ok(error < 0.07, `${cdf.method}: sup error ${error}`)
    assert.ok(cdf.poissonFitDistance !== null && cdf.poissonFitDistance > 0.06, `${cdf.method}: Poisson distance ${cdf.poissonFitDistance}`)
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
  assert.deepEqual(cdf.points.map((p) => p.ageDays), [1, 2, 3, 4])
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
  const cdf = ageCdfM2(scenario(40, PARETO, (r) => randomCrawlTimes(r, 20000, 0.5)), { maxLagDays: 3, bins: 15 })
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

test('poissonFitDistance: zero on the exponential curve itself', () => {
  const points = [0.5, 1, 2].map((x) => ({ ageDays: x, cdf: 1 - Math.exp(-2 * x) }))
  assert.ok(poissonFitDistance(points, 2) < 1e-15)
  assert.ok(Math.abs(poissonFitDistance(points, 1) - Math.max(...[0.5, 1, 2].map((x) => Math.exp(-x) - Math.exp(-2 * x)))) < 1e-15)
})

function assertFinite(cdf: AgeCdf | null): void {
  if (cdf === null) return
  for (const p of cdf.points) assert.ok(Number.isFinite(p.ageDays) && Number.isFinite(p.cdf) && p.cdf >= 0 && p.cdf <= 1)
  for (const v of [cdf.meanUpdateIntervalDays, cdf.coefficientOfVariation, cdf.poissonFitDistance]) {
    assert.ok(v === null || Number.isFinite(v))
  }
  const distribution = inferUpdateDistribution(cdf)
  if (distribution !== null) {
    assert.ok(Number.isFinite(distribution.changesPerDay))
    for (const p of distribution.points) assert.ok(Number.isFinite(p.cdf) && Number.isFinite(p.intervalDays))
  }
}

test('degenerate inputs: no changes, all changes, one crawl, zero ages give null or finite values', () => {
  const none: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: i === 0 ? null : false, ageDays: null }))
  const all: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: true, ageDays: null }))
  const allRandom: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i * i * 0.01 + i, changed: true, ageDays: null }))
  const zeroAges: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: true, ageDays: 0 }))
  const oldAges: AgeCrawl[] = Array.from({ length: 40 }, (_, i) => ({ atDays: i, changed: false, ageDays: 100 + i }))
  for (const crawls of [none, all, allRandom, zeroAges, oldAges]) {
    for (const estimate of [estimateAgeCdf, ageCdfM2, ageCdfM4, ageCdfM6]) assertFinite(estimate(crawls))
  }
  assert.equal(estimateAgeCdf([{ atDays: 0, changed: null, ageDays: 1 }]), null)
  assert.equal(estimateAgeCdf([]), null)
  assert.equal(ageCdfM4(none), null) // no change: the chain never starts
  const allChanged = estimateAgeCdf(all)
  assert.ok(allChanged)
  assert.equal(allChanged.meanUpdateIntervalDays, null) // every crawl saw a change: μ is only bounded below
  const noneSeen = estimateAgeCdf(none)
  assert.ok(noneSeen)
  assert.equal(noneSeen.meanUpdateIntervalDays, null)
})
