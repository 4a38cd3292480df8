// The optimiser at service scale (docs/math.md 3.1–3.5): 100,000 seeded pages on 2,000 hosts, checked page
// by page with the KKT conditions (budget and caps to 1e-9, marginal utility = λ_h on free pages).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { marginalUtility, solveRates, type Objective, type RateProblem } from '../../../src/math/optimizer/index.ts'
import { createRandom } from '../../../src/math/random.ts'

const PAGES = 100_000
const HOSTS = 2_000

function instance(objective: Objective): RateProblem {
  const random = createRandom(99)
  const changesPerDay = new Float64Array(PAGES)
  const importance = new Float64Array(PAGES)
  const minCrawlsPerDay = new Float64Array(PAGES)
  const maxCrawlsPerDay = new Float64Array(PAGES)
  const hostIndex = new Int32Array(PAGES)
  const hostDelta = new Float64Array(HOSTS)
  let sumDelta = 0
  for (let i = 0; i < PAGES; i++) {
    changesPerDay[i] = random.next() < 0.02 ? 0 : 0.01 * Math.exp(random.next() * Math.log(1000))
    importance[i] = random.next() < 0.02 ? 0 : Math.exp(random.next() * 5)
    minCrawlsPerDay[i] = random.next() < 0.5 ? 1 / 30 : 0
    maxCrawlsPerDay[i] = random.next() < 0.3 ? 24 : Number.POSITIVE_INFINITY
    const r = random.next()
    hostIndex[i] = random.next() < 0.1 ? -1 : Math.floor(HOSTS * r * r)
    if (hostIndex[i]! >= 0) hostDelta[hostIndex[i]!] = hostDelta[hostIndex[i]!]! + changesPerDay[i]!
    sumDelta += changesPerDay[i]!
  }
  const hostMaxCrawlsPerDay = Float64Array.from(hostDelta, (d) =>
    random.next() < 0.3 ? 5 + 0.3 * d : Number.POSITIVE_INFINITY,
  )
  // Renewal: 30 % Poisson, the others β log-uniform on [0.3, 30] (its own stream: the other instances do not change).
  const shapeRandom = createRandom(100)
  const ageShape = Float64Array.from({ length: PAGES }, () =>
    shapeRandom.next() < 0.3 ? Number.POSITIVE_INFINITY : 0.3 * Math.exp(shapeRandom.next() * Math.log(100)),
  )
  return {
    changesPerDay,
    importance,
    minCrawlsPerDay,
    maxCrawlsPerDay,
    hostIndex,
    hostMaxCrawlsPerDay,
    ageShape,
    budgetCrawlsPerDay: 0.3 * sumDelta,
    objective,
  }
}

for (const objective of ['freshness', 'freshness-periodic', 'harmonic', 'freshness-renewal'] as const) {
  test(`${objective}: ${PAGES} pages on ${HOSTS} hosts meet budget, caps and KKT to 1e-9`, (t) => {
    const problem = instance(objective)
    const s = solveRates(problem)
    const R = problem.budgetCrawlsPerDay
    assert.ok(s.lambda > 0)
    assert.ok(Math.abs(s.totalCrawlsPerDay / R - 1) < 1e-9, `Σρ/R − 1 = ${s.totalCrawlsPerDay / R - 1}`)
    const hostTotal = new Float64Array(HOSTS)
    let free = 0
    let worst = 0
    for (let i = 0; i < PAGES; i++) {
      const rho = s.crawlsPerDay[i]!
      const h = problem.hostIndex![i]!
      if (h >= 0) hostTotal[h] = hostTotal[h]! + rho
      const l = problem.minCrawlsPerDay[i]!
      const u = problem.maxCrawlsPerDay[i]!
      assert.ok(rho >= l && rho <= u)
      const lh = h >= 0 ? s.hostLambda[h]! : s.lambda
      const m = marginalUtility(
        objective,
        rho,
        problem.changesPerDay[i]!,
        problem.importance[i]!,
        problem.ageShape![i]!,
      )
      if (m === 0) {
        assert.equal(rho, l)
        continue
      }
      if (rho === l) assert.ok(m <= lh * (1 + 1e-9), `page ${i} at l: marginal ${m} > λ_h ${lh}`)
      else if (rho === u) assert.ok(m >= lh * (1 - 1e-9), `page ${i} at u: marginal ${m} < λ_h ${lh}`)
      else {
        free++
        worst = Math.max(worst, Math.abs(m / lh - 1))
      }
    }
    assert.ok(worst < 1e-9, `free pages: max |marginal/λ_h − 1| = ${worst}`)
    let capped = 0
    for (let h = 0; h < HOSTS; h++) {
      const cap = problem.hostMaxCrawlsPerDay![h]!
      assert.ok(hostTotal[h]! <= cap * (1 + 1e-9))
      if (s.hostLambda[h]! > s.lambda) {
        capped++
        assert.ok(Math.abs(hostTotal[h]! / cap - 1) < 1e-9, `host ${h}: Σ/C − 1 = ${hostTotal[h]! / cap - 1}`)
      }
    }
    assert.ok(capped > 50 && free > PAGES / 2, `capped hosts ${capped}, free pages ${free}`)
    t.diagnostic(
      `free pages ${free}, capped hosts ${capped}, Σρ/R − 1 = ${(s.totalCrawlsPerDay / R - 1).toExponential(2)}, max |marginal/λ_h − 1| = ${worst.toExponential(2)}`,
    )
  })
}
