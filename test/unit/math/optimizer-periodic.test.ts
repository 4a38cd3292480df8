// Periodic crawling (docs/math.md 3.3): the inverse of g(x) = 1 − (1 + x)e^{−x}, and the numerical trap
// near λ = μ/Δ where a page's rate jumps from about Δ/37 to 0 between two adjacent doubles.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { erlangCdf, inverseErlangCdf, lnErlangCdf } from '../../../src/math/optimizer/erlang.ts'
import { marginalUtility, rateForPage, solveRates } from '../../../src/math/optimizer/index.ts'
import { createRandom } from '../../../src/math/random.ts'

test('erlangCdf against hand values and its series/closed-form seam', () => {
  assert.ok(Math.abs(erlangCdf(1) / (1 - 2 / Math.E) - 1) < 1e-15)
  assert.ok(Math.abs(erlangCdf(2) / (1 - 3 * Math.exp(-2)) - 1) < 1e-15)
  // x²(1/2 − x/3 + x²/8 − x³/30) at x = 1e-4 (the next term is x⁴/72 ≈ 1e-18 relative).
  const x = 1e-4
  assert.ok(Math.abs(erlangCdf(x) / (x * x * (0.5 - x / 3 + (x * x) / 8 - (x * x * x) / 30)) - 1) < 1e-15)
  // Just below x = 0.1 (series) it agrees with the closed form, which is good to ~1e-14 there.
  const seam = 0.1 * (1 - 1e-15)
  assert.ok(seam < 0.1)
  assert.ok(Math.abs(erlangCdf(seam) / (-Math.expm1(-seam) - seam * Math.exp(-seam)) - 1) < 1e-13)
  assert.ok(Math.abs(lnErlangCdf(0.5) - Math.log(erlangCdf(0.5))) < 1e-15)
  assert.ok(Math.abs(lnErlangCdf(30) - Math.log1p(-31 * Math.exp(-30))) < 1e-25)
  assert.equal(erlangCdf(Number.POSITIVE_INFINITY), 1)
})

test('inverseErlangCdf: g(x(c)) = c to 1e-14 relative for c from 1e-300 to 1 − 2^-53', () => {
  const cs: number[] = []
  for (let e = -300; e < 0; e += 0.0137) cs.push(10 ** e)
  for (let e = -1; e > -16; e -= 0.0071) cs.push(1 - 10 ** e)
  for (let k = 1; k < 20_000; k++) cs.push(k / 20_000)
  cs.push(0.5, 0.5000000001, 0.4999999999, 1 - 2 ** -52, 1 - 2 ** -53)
  for (const c of cs) {
    const x = inverseErlangCdf(c)
    assert.ok(x > 0 && Number.isFinite(x), `c=${c}: x=${x}`)
    // Compare in the well-conditioned form on each side: g for small c, 1 − g for c near 1.
    const error = c <= 0.5 ? Math.abs(erlangCdf(x) / c - 1) : Math.abs(((1 + x) * Math.exp(-x)) / (1 - c) - 1)
    assert.ok(error < 1e-14, `c=${c}: relative error ${error}`)
  }
})

test('trap, identical pages: 10 pages with Δ = μ = 1, R = 0.2 need x = 50 (c = 1 − 51e^−50 rounds to 1), yet Σρ = R to 1e-9 and ρ_i = 0.02', () => {
  const n = 10
  const problem = {
    changesPerDay: new Float64Array(n).fill(1),
    importance: new Float64Array(n).fill(1),
    minCrawlsPerDay: new Float64Array(n),
    maxCrawlsPerDay: new Float64Array(n).fill(Number.POSITIVE_INFINITY),
    budgetCrawlsPerDay: 0.2,
    objective: 'freshness-periodic' as const,
  }
  const s = solveRates(problem)
  assert.ok(Math.abs(s.totalCrawlsPerDay / 0.2 - 1) < 1e-9, `Σρ = ${s.totalCrawlsPerDay}`)
  for (const rate of s.crawlsPerDay) assert.ok(Math.abs(rate / 0.02 - 1) < 1e-9, `ρ = ${rate}`)
  // The trap is real: rates read off λ alone are 0 or ≈ Δ/37..41, nowhere near 0.02.
  const page = { changesPerDay: 1, importance: 1, minCrawlsPerDay: 0, maxCrawlsPerDay: Number.POSITIVE_INFINITY }
  const below = rateForPage(page, s.lambda * (1 - 1e-15), 'freshness-periodic')
  const above = rateForPage(page, s.lambda * (1 + 1e-15), 'freshness-periodic')
  assert.ok(below > 0.024 && above === 0, `λ-only rates ${below}, ${above}`)
  // Every page's marginal utility is λ to double precision.
  for (const rate of s.crawlsPerDay)
    assert.ok(Math.abs(marginalUtility('freshness-periodic', rate, 1, 1) / s.lambda - 1) < 1e-15)
})

test('trap, mixed: pages at the edge share the leftover in proportion to Δ while the others stay at their λ rates', () => {
  // Group A: μ/Δ = 1 (edge at λ = 1), Δ from 0.1 to 10. Group B: μ/Δ = 100, well inside.
  // Budget = B's rates at λ = 1 + Σ_A Δ/45: the optimum puts A at x = 45 (beyond double precision).
  const random = createRandom(33)
  const deltaA = Array.from({ length: 20 }, () => Math.exp(Math.log(0.1) + random.next() * Math.log(100)))
  const deltaB = Array.from({ length: 5 }, () => 0.5 + random.next())
  const pageB = (d: number) => ({
    changesPerDay: d,
    importance: 100 * d,
    minCrawlsPerDay: 0,
    maxCrawlsPerDay: Number.POSITIVE_INFINITY,
  })
  const ratesB = deltaB.map((d) => rateForPage(pageB(d), 1, 'freshness-periodic'))
  const budget = ratesB.reduce((a, b) => a + b, 0) + deltaA.reduce((a, b) => a + b, 0) / 45
  const s = solveRates({
    changesPerDay: Float64Array.from([...deltaA, ...deltaB]),
    importance: Float64Array.from([...deltaA, ...deltaB.map((d) => 100 * d)]),
    minCrawlsPerDay: new Float64Array(25),
    maxCrawlsPerDay: new Float64Array(25).fill(Number.POSITIVE_INFINITY),
    budgetCrawlsPerDay: budget,
    objective: 'freshness-periodic',
  })
  assert.ok(Math.abs(s.totalCrawlsPerDay / budget - 1) < 1e-9, `Σρ/R − 1 = ${s.totalCrawlsPerDay / budget - 1}`)
  assert.ok(Math.abs(s.lambda - 1) < 1e-14, `λ = ${s.lambda}`)
  deltaA.forEach((d, i) =>
    assert.ok(Math.abs(s.crawlsPerDay[i]! / (d / 45) - 1) < 1e-9, `A page ${i}: ρ/Δ = ${s.crawlsPerDay[i]! / d}`),
  )
  deltaB.forEach((_, j) => assert.ok(Math.abs(s.crawlsPerDay[20 + j]! / ratesB[j]! - 1) < 1e-12, `B page ${j}`))
})

test('trap at scale: 20,000 random periodic pages with many sharing μ/Δ = 1, budgets swept across the edge, Σρ = R to 1e-9', () => {
  const random = createRandom(7)
  const n = 20_000
  const delta = new Float64Array(n)
  const importance = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    delta[i] = Math.exp(Math.log(0.01) + random.next() * Math.log(1000))
    // Half the pages share the ratio μ/Δ = 1, so their edges coincide.
    importance[i] = random.next() < 0.5 ? delta[i]! : delta[i]! * Math.exp(random.next() * 6)
  }
  const rates1 = Array.from(delta, (d, i) =>
    rateForPage(
      { changesPerDay: d, importance: importance[i]!, minCrawlsPerDay: 0, maxCrawlsPerDay: Infinity },
      1,
      'freshness-periodic',
    ),
  )
  const atEdge = rates1.reduce((a, b) => a + b, 0)
  const sharedDelta = Array.from(delta).reduce((a, d, i) => a + (importance[i] === d ? d : 0), 0)
  let worst = 0
  for (const x of [38, 45, 60, 200]) {
    const budget = atEdge + sharedDelta / x
    const s = solveRates({
      changesPerDay: delta,
      importance,
      minCrawlsPerDay: new Float64Array(n),
      maxCrawlsPerDay: new Float64Array(n).fill(Number.POSITIVE_INFINITY),
      budgetCrawlsPerDay: budget,
      objective: 'freshness-periodic',
    })
    const error = Math.abs(s.totalCrawlsPerDay / budget - 1)
    worst = Math.max(worst, error)
    assert.ok(error < 1e-9, `x = ${x}: Σρ/R − 1 = ${error}`)
  }
  assert.ok(worst < 1e-12, `worst ${worst}`)
})
