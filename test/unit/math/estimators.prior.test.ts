/**
 * The fleet prior (docs/math.md 1.10): the posterior against closed forms, the prior's weight as evidence
 * grows, and the marginal-likelihood fit against simulations whose rates are drawn from a known gamma law.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom, type Random } from '../../../src/math/random.ts'
import {
  ALL_CHANGED_PRIOR_REACH,
  exactMle,
  schedulingEstimateFromEvidence,
  type ChangeInterval,
} from '../../../src/math/estimators/index.ts'
import {
  fitFleetPriors,
  logGamma,
  priorForHost,
  ratePosterior,
  type GammaPrior,
  type RateEvidence,
} from '../../../src/math/estimators/prior.ts'
import { median } from '../../../src/math/numbers.ts'

/** Marsaglia–Tsang gamma draw with shape a and rate b. */
function gammaDraw(random: Random, a: number, b: number): number {
  if (a < 1) return gammaDraw(random, a + 1, b) * Math.pow(random.next(), 1 / a)
  const d = a - 1 / 3
  const c = 1 / Math.sqrt(9 * d)
  for (;;) {
    let x: number
    let v: number
    do {
      const u1 = 1 - random.next()
      x = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * random.next())
      v = 1 + c * x
    } while (v <= 0)
    v = v * v * v
    const u = random.next()
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return (d * v) / b
  }
}

function evidenceOf(intervals: readonly ChangeInterval[]): RateEvidence {
  let unchangedDays = 0
  const changed = []
  for (const i of intervals) {
    if (i.changed) changed.push({ intervalDays: i.intervalDays, weight: 1 })
    else unchangedDays += i.intervalDays
  }
  return { unchangedDays, changed }
}

/** n crawl intervals of a Poisson page with uniform lengths in [lo, hi] days. */
function history(random: Random, changesPerDay: number, n: number, lo: number, hi: number): ChangeInterval[] {
  return Array.from({ length: n }, () => {
    const intervalDays = lo + (hi - lo) * random.next()
    return { intervalDays, changed: random.next() < -Math.expm1(-changesPerDay * intervalDays) }
  })
}

const mean = (p: GammaPrior) => p.shape / p.rateDays

test('ln Γ matches known values', () => {
  assert.ok(Math.abs(logGamma(1)) < 1e-12)
  assert.ok(Math.abs(logGamma(5) - Math.log(24)) < 1e-12)
  assert.ok(Math.abs(logGamma(0.5) - 0.5 * Math.log(Math.PI)) < 1e-12)
})

test('no evidence: the posterior is the prior; only unchanged intervals: exactly Gamma(α, β + U)', () => {
  const prior = { shape: 0.7, rateDays: 2.5 }
  assert.equal(ratePosterior({ unchangedDays: 0, changed: [] }, prior).changesPerDay, mean(prior))
  for (const u of [0.01, 1, 30, 400]) {
    const post = ratePosterior({ unchangedDays: u, changed: [] }, prior)
    const exact = prior.shape / (prior.rateDays + u)
    assert.ok(Math.abs(post.changesPerDay / exact - 1) < 2e-3, `U=${u}: ${post.changesPerDay} vs ${exact}`)
    assert.ok(Math.abs(post.gamma.shape / prior.shape - 1) < 2e-2, `shape ${post.gamma.shape}`)
  }
})

test('one changed interval τ and unchanged days U: the mean of the binomial expansion', () => {
  for (const [a, b, tau, u] of [
    [0.7, 2.5, 1, 3],
    [3, 0.5, 0.04, 0],
    [0.3, 40, 10, 100],
  ] as const) {
    const post = ratePosterior(
      { unchangedDays: u, changed: [{ intervalDays: tau, weight: 1 }] },
      {
        shape: a,
        rateDays: b,
      },
    )
    // ∫ Δ^{a−1} e^{−(b+U)Δ}(1 − e^{−τΔ}) Δ^k dΔ ∝ Γ(a+k)[(b+U)^{−a−k} − (b+U+τ)^{−a−k}].
    const z = (k: number) => Math.pow(b + u, -a - k) - Math.pow(b + u + tau, -a - k)
    const exact = (a * z(1)) / z(0)
    assert.ok(Math.abs(post.changesPerDay / exact - 1) < 3e-3, `${post.changesPerDay} vs ${exact}`)
  }
})

test('the harmonic mean 1/E[1/Δ]: Gamma(α − 1, …) with only unchanged intervals, the binomial expansion with one changed one', () => {
  const prior = { shape: 3, rateDays: 2 }
  for (const u of [0.5, 10, 200]) {
    const exact = (prior.shape - 1) / (prior.rateDays + u)
    const h = ratePosterior({ unchangedDays: u, changed: [] }, prior).harmonicChangesPerDay
    assert.ok(Math.abs(h / exact - 1) < 3e-3, `U=${u}: ${h} vs ${exact}`)
  }
  for (const [a, b, tau, u] of [
    [0.7, 2.5, 1, 3],
    [3, 0.5, 0.04, 0],
    [0.3, 0.006, 1, 0],
  ] as const) {
    const post = ratePosterior(
      { unchangedDays: u, changed: [{ intervalDays: tau, weight: 1 }] },
      { shape: a, rateDays: b },
    )
    // E[1/Δ] ∝ Γ(a − 1)[(b+U)^{1−a} − (b+U+τ)^{1−a}], so 1/E[1/Δ] = (a − 1) z(0)/z(−1) (also for a < 1).
    const z = (k: number) => Math.pow(b + u, -a - k) - Math.pow(b + u + tau, -a - k)
    const exact = ((a - 1) * z(0)) / z(-1)
    assert.ok(Math.abs(post.harmonicChangesPerDay / exact - 1) < 3e-3, `${post.harmonicChangesPerDay} vs ${exact}`)
    assert.ok(post.harmonicChangesPerDay < post.changesPerDay)
  }
})

test('a page whose every interval changed: the posterior’s harmonic mean, not its upper tail, held between ln(n + 2)/τ̄, a few times that, and the mean', () => {
  const bounds = { minChangesPerDay: 1e-6, maxChangesPerDay: 1e4 }
  const one = (tau: number) => ({ unchangedDays: 0, changed: [{ intervalDays: tau, weight: 1 }] })
  // A wide prior with a far upper tail (a host mixing fast and slow pages): the mean follows the tail.
  const wide = { shape: 0.3, rateDays: 0.006 } // mean 50 a day
  const priors = (prior: GammaPrior) => ({ fleet: prior, hosts: {} })
  const wideEstimate = schedulingEstimateFromEvidence(one(1), bounds, priors(wide), 'h')
  const widePost = ratePosterior(one(1), wide)
  assert.ok(widePost.changesPerDay > 40, `mean ${widePost.changesPerDay}`)
  assert.ok(widePost.harmonicChangesPerDay > Math.log(3), `harmonic ${widePost.harmonicChangesPerDay}`)
  assert.equal(wideEstimate, widePost.harmonicChangesPerDay)
  // A prior on slow rates: the harmonic mean falls below the page's own evidence, ln(n + 2)/τ̄ holds it.
  const slow = { shape: 2, rateDays: 200 }
  const slowPost = ratePosterior(one(1), slow)
  assert.ok(slowPost.harmonicChangesPerDay < Math.log(3) && slowPost.changesPerDay < Math.log(3))
  assert.equal(schedulingEstimateFromEvidence(one(1), bounds, priors(slow), 'h'), slowPost.changesPerDay)
  const middle = { shape: 2, rateDays: 2 } // mean 1 a day
  const middlePost = ratePosterior(one(1), middle)
  assert.ok(middlePost.harmonicChangesPerDay < Math.log(3) && Math.log(3) < middlePost.changesPerDay)
  assert.ok(Math.abs(schedulingEstimateFromEvidence(one(1), bounds, priors(middle), 'h') - Math.log(3)) < 1e-12)
  // A prior fitted where no page had an unchanged interval (a young fleet of fast pages) runs to the edge of the
  // hyperprior: its harmonic mean is far above what five all-changed hours say, and the hold caps it.
  const fiveHours = { unchangedDays: 0, changed: [{ intervalDays: 1 / 24, weight: 5 }] }
  const ownEvidence = Math.log(7) * 24
  const edge = { shape: 0.5, rateDays: 0.0005 }
  assert.ok(ratePosterior(fiveHours, edge).harmonicChangesPerDay > ALL_CHANGED_PRIOR_REACH * ownEvidence)
  const held = schedulingEstimateFromEvidence(fiveHours, bounds, priors(edge), 'h')
  assert.ok(Math.abs(held / (ALL_CHANGED_PRIOR_REACH * ownEvidence) - 1) < 1e-12, `${held}`)
  // One unchanged interval bounds the rate: the posterior mean again.
  const bounded = { unchangedDays: 1, changed: [{ intervalDays: 1, weight: 1 }] }
  assert.equal(
    schedulingEstimateFromEvidence(bounded, bounds, priors(wide), 'h'),
    ratePosterior(bounded, wide).changesPerDay,
  )
})

test('the prior’s weight shrinks as the page’s evidence grows: posterior → MLE, from either side', () => {
  // n one-day intervals, half of them changed: MLE ln 2 changes per day.
  const mle = Math.LN2
  for (const prior of [
    { shape: 0.5, rateDays: 0.05 },
    { shape: 2, rateDays: 200 },
  ]) {
    let previous = Number.POSITIVE_INFINITY
    for (const n of [2, 8, 32, 128, 2048, 65536]) {
      const post = ratePosterior(
        { unchangedDays: n / 2, changed: [{ intervalDays: 1, weight: n / 2 }] },
        prior,
      ).changesPerDay
      const distance = Math.abs(Math.log(post / mle))
      assert.ok(distance < previous, `n=${n}: ${post}`)
      previous = distance
    }
    assert.ok(previous < 0.01, `after 65536 intervals still ${previous}`)
  }
})

for (const [shape, rateDays, gain] of [
  [0.8, 2, 0.97],
  [3, 3, 0.8],
] as const) {
  test(`fit from simulated histories: rates from Gamma(${shape}, ${rateDays}) are recovered, and the posterior beats the MLE`, () => {
    const random = createRandom(7)
    const truth = { shape, rateDays }
    const pages: { host: string; evidence: RateEvidence }[] = []
    const rates: number[] = []
    const mles: number[] = []
    for (let i = 0; i < 3000; i++) {
      const rate = gammaDraw(random, truth.shape, truth.rateDays)
      const h = history(random, rate, 1 + random.int(8), 0.2, 5)
      rates.push(rate)
      pages.push({ host: 'h', evidence: evidenceOf(h) })
      mles.push(exactMle(h).changesPerDay!)
    }
    const { fleet } = fitFleetPriors(pages, { shape: 0.5, rateDays: 0.5 })
    assert.ok(Math.abs(fleet.shape / truth.shape - 1) < 0.15, `α ${fleet.shape}`)
    assert.ok(Math.abs(mean(fleet) / mean(truth) - 1) < 0.1, `mean ${mean(fleet)}`)
    // Median relative error over pages with 1 to 8 intervals: the more alike the pages (larger α), the more the
    // prior helps.
    const relative = (estimates: number[]) => median(estimates.map((e, i) => Math.abs(e - rates[i]!) / rates[i]!))
    const posteriorError = relative(pages.map((p) => ratePosterior(p.evidence, fleet).changesPerDay))
    const mleError = relative(mles)
    assert.ok(posteriorError < gain * mleError, `posterior ${posteriorError} vs MLE ${mleError}`)
  })
}

test('host priors: hosts with different levels get their own, a host with one page stays near the fleet', () => {
  const random = createRandom(11)
  const pages: { host: string; evidence: RateEvidence }[] = []
  const add = (host: string, count: number, prior: GammaPrior) => {
    for (let i = 0; i < count; i++)
      pages.push({
        host,
        evidence: evidenceOf(history(random, gammaDraw(random, prior.shape, prior.rateDays), 6, 0.5, 3)),
      })
  }
  add('slow', 400, { shape: 2, rateDays: 20 }) // mean 0.1
  add('fast', 400, { shape: 2, rateDays: 0.5 }) // mean 4
  add('lone', 1, { shape: 2, rateDays: 0.5 })
  const priors = fitFleetPriors(pages, { shape: 0.5, rateDays: 0.5 })
  const slow = mean(priorForHost(priors, 'slow'))
  const fast = mean(priorForHost(priors, 'fast'))
  assert.ok(slow > 0.07 && slow < 0.14, `slow ${slow}`)
  assert.ok(fast > 2.8 && fast < 5.6, `fast ${fast}`)
  const lone = mean(priorForHost(priors, 'lone'))
  assert.ok(Math.abs(Math.log(lone / mean(priors.fleet))) < 1.5, `lone ${lone} vs fleet ${mean(priors.fleet)}`)
  assert.equal(priorForHost(priors, 'unknown'), priors.fleet)
})

test('the 90 % credible interval: exact Gamma(α, β + U) quantiles with only unchanged intervals', () => {
  // Shape 2: CDF(x) = 1 − e^{−bx}(1 + bx) with b = β + U.
  const prior: GammaPrior = { shape: 2, rateDays: 4 }
  for (const unchangedDays of [0, 10, 200]) {
    const b = prior.rateDays + unchangedDays
    const cdf = (x: number) => 1 - Math.exp(-b * x) * (1 + b * x)
    const [lo, hi] = ratePosterior({ unchangedDays, changed: [] }, prior).ci90
    assert.ok(Math.abs(cdf(lo) - 0.05) < 0.005, `U = ${unchangedDays}: CDF(${lo}) = ${cdf(lo)}`)
    assert.ok(Math.abs(cdf(hi) - 0.95) < 0.005, `U = ${unchangedDays}: CDF(${hi}) = ${cdf(hi)}`)
  }
  // With changes the interval narrows as evidence grows and holds the posterior mean.
  const wide = ratePosterior({ unchangedDays: 5, changed: [{ intervalDays: 5, weight: 1 }] }, prior)
  const narrow = ratePosterior({ unchangedDays: 500, changed: [{ intervalDays: 5, weight: 100 }] }, prior)
  for (const p of [wide, narrow]) assert.ok(p.ci90[0] < p.changesPerDay && p.changesPerDay < p.ci90[1])
  assert.ok(narrow.ci90[1] / narrow.ci90[0] < wide.ci90[1] / wide.ci90[0])
})
