// Seeded random instances of the crawl-rate problem (docs/math.md 3.1–3.4), checked three ways:
// 1. a KKT certificate built from the returned rates and multipliers (sufficient for optimality of
//    this concave separable problem): budget, host caps, bounds, complementary slackness, and
//    marginal utility = λ_h on free pages, ≤ λ_h at l, ≥ λ_h at u, all to 1e-9 relative;
// 2. the objective against an independent slow solver (bisection on ln λ, per-page rates by
//    bisection on the marginal utility, host multipliers by their own bisection): the optimum lies
//    between the values of the solver's two bracket ends, and ours must lie there to 1e-9 relative;
// 3. rateForPage(page, λ_h) reproduces every free page's rate (the O(1) update between solves).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SLOW } from '../../helpers/slow.ts'
import {
  rateForPage,
  solveRates,
  type Objective,
  type RateProblem,
  type RateSolution,
} from '../../../src/math/optimizer/index.ts'
import { createRandom, type Random } from '../../../src/math/random.ts'
import { referenceMarginal as marginal, referenceUtility as utility } from '../../helpers/referenceFreshness.ts'

const TOLERANCE = 1e-9

/** The rate with marginal utility λ, clamped to [l, u], by bisection on ln ρ (any objective). */
function referenceRate(
  objective: Objective,
  lambda: number,
  delta: number,
  mu: number,
  l: number,
  u: number,
  beta: number,
): number {
  if (mu === 0 || delta === 0 || u === l) return l
  if (lambda === 0) return u
  if (marginal(objective, l, delta, mu, beta) <= lambda) return l
  if (u < Number.POSITIVE_INFINITY && marginal(objective, u, delta, mu, beta) >= lambda) return u
  if (objective === 'freshness') return Math.min(u, Math.max(l, Math.sqrt((mu * delta) / lambda) - delta))
  let low = l > 0 ? l : delta * 1e-30
  let high = u < Number.POSITIVE_INFINITY ? u : Math.max(1, l) * 2
  while (marginal(objective, high, delta, mu, beta) > lambda) high *= 4
  for (let k = 0; k < 200; k++) {
    const mid = Math.sqrt(low * high)
    if (mid <= low || mid >= high) break
    if (marginal(objective, mid, delta, mu, beta) > lambda) low = mid
    else high = mid
  }
  return 0.5 * (low + high)
}

interface Page {
  delta: number
  mu: number
  l: number
  u: number
  host: number
  /** β of the gamma-mixed age law (freshness-renewal; +Infinity: Poisson). */
  beta: number
}

/** Bisection on ln λ for a decreasing total(λ) = target; returns the two ends (total ≥ / ≤ target). */
function bisectLambda(total: (lambda: number) => number, target: number): [number, number] {
  let low = -20
  let high = 20
  while (total(Math.exp(low)) < target) low -= 20
  while (total(Math.exp(high)) > target) high += 20
  for (let k = 0; k < 200; k++) {
    const mid = 0.5 * (low + high)
    if (mid <= low || mid >= high) break
    if (total(Math.exp(mid)) >= target) low = mid
    else high = mid
  }
  return [Math.exp(low), Math.exp(high)]
}

/**
 * Rates that bound the optimum from both sides. Host multipliers κ_h come from their own bisection
 * (0 when the host fits at λ = 0, ∞ when only Σl fits); a page's rate at a global λ is its rate at
 * max(λ, κ_h). `upper` uses the bracket ends that spend at least C_h and R: it is optimal for a
 * problem with looser caps and budget, so its value is ≥ the optimum; `lower` uses the ends that spend
 * at most, so its value is ≤ the optimum. (Near the periodic edge of docs/math.md 3.3 the two differ by a
 * jump no λ resolves; elsewhere they agree to ~1e-15.)
 */
function referenceSolve(
  objective: Objective,
  pages: Page[],
  caps: number[],
  budget: number,
): { upper: number[]; lower: number[] } {
  const rateAt = (p: Page, lambda: number) => referenceRate(objective, lambda, p.delta, p.mu, p.l, p.u, p.beta)
  const kappaEnds = caps.map((cap, h): [number, number] => {
    const own = pages.filter((p) => p.host === h)
    const sumAt = (lambda: number) => own.reduce((s, p) => s + rateAt(p, lambda), 0)
    if (sumAt(0) <= cap) return [0, 0]
    if (cap <= own.reduce((s, p) => s + p.l, 0)) return [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]
    return bisectLambda(sumAt, cap)
  })
  const solveWith = (end: 0 | 1): number[] => {
    const ratesAt = (lambda: number) =>
      pages.map((p) => rateAt(p, p.host >= 0 ? Math.max(lambda, kappaEnds[p.host]![end]) : lambda))
    const totalAt = (lambda: number) => ratesAt(lambda).reduce((s, r) => s + r, 0)
    if (totalAt(0) <= budget) return ratesAt(0)
    if (budget <= pages.reduce((s, p) => s + p.l, 0)) return pages.map((p) => p.l)
    return ratesAt(bisectLambda(totalAt, budget)[end])
  }
  return { upper: solveWith(0), lower: solveWith(1) }
}

// ---- Instances ----

function logUniform(random: Random, low: number, high: number): number {
  return Math.exp(Math.log(low) + random.next() * Math.log(high / low))
}

function randomInstance(random: Random, objective: Objective): { pages: Page[]; caps: number[]; problem: RateProblem } {
  const n = 1 + random.int(30)
  const hostCount = random.next() < 0.5 ? 1 + random.int(4) : 0
  const pages: Page[] = []
  for (let i = 0; i < n; i++) {
    const delta = random.next() < 0.1 ? 0 : logUniform(random, 0.01, 50)
    const mu = random.next() < 0.1 ? 0 : logUniform(random, 0.01, 100)
    const l = random.next() < 0.5 ? 0 : random.next() * 0.5
    const u =
      random.next() < 0.4 ? Number.POSITIVE_INFINITY : random.next() < 0.1 ? l : l + logUniform(random, 0.01, 20)
    // Renewal: a third Poisson, the rest β log-uniform on [0.2, 50] (kept 0.05 away from β = 1, where the
    // reference formula h loses digits).
    let beta = Number.POSITIVE_INFINITY
    if (objective === 'freshness-renewal' && random.next() < 2 / 3) {
      do beta = logUniform(random, 0.2, 50)
      while (Math.abs(beta - 1) < 0.05)
    }
    pages.push({ delta, mu, l, u, host: hostCount > 0 ? random.int(hostCount + 1) - 1 : -1, beta })
  }
  const spread = (p: Page) => (p.u < Number.POSITIVE_INFINITY ? p.u - p.l : p.delta + 1)
  const caps: number[] = []
  for (let h = 0; h < hostCount; h++) {
    const own = pages.filter((p) => p.host === h)
    const sumLower = own.reduce((s, p) => s + p.l, 0)
    const r = random.next()
    caps.push(
      r < 0.25
        ? Number.POSITIVE_INFINITY
        : r < 0.3
          ? sumLower
          : sumLower + random.next() * own.reduce((s, p) => s + spread(p), 0),
    )
  }
  const sumLower = pages.reduce((s, p) => s + p.l, 0)
  const r = random.next()
  const budget = r < 0.05 ? sumLower : sumLower + random.next() * 1.3 * pages.reduce((s, p) => s + spread(p), 0)
  const problem: RateProblem = {
    changesPerDay: Float64Array.from(pages, (p) => p.delta),
    importance: Float64Array.from(pages, (p) => p.mu),
    minCrawlsPerDay: Float64Array.from(pages, (p) => p.l),
    maxCrawlsPerDay: Float64Array.from(pages, (p) => p.u),
    ...(objective === 'freshness-renewal' ? { ageShape: Float64Array.from(pages, (p) => p.beta) } : {}),
    ...(hostCount > 0
      ? { hostIndex: Int32Array.from(pages, (p) => p.host), hostMaxCrawlsPerDay: Float64Array.from(caps) }
      : {}),
    budgetCrawlsPerDay: budget,
    objective,
  }
  return { pages, caps, problem }
}

// ---- Checks ----

function near(a: number, b: number, tolerance = TOLERANCE): boolean {
  return Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b), 1e-300)
}

/** Largest deviations seen, reported as test diagnostics. */
const worst = { budget: 0, marginal: 0 }

/** KKT certificate; returns the number of free pages checked. */
function checkKkt(
  objective: Objective,
  pages: Page[],
  caps: number[],
  budget: number,
  s: RateSolution,
  label: string,
): number {
  const rates = s.crawlsPerDay
  const total = rates.reduce((a, b) => a + b, 0)
  assert.ok(Number.isFinite(s.lambda) && s.lambda >= 0, `${label}: λ = ${s.lambda}`)
  assert.ok(total <= budget * (1 + TOLERANCE) + 1e-300, `${label}: Σρ = ${total} > R = ${budget}`)
  if (s.lambda > 0) {
    assert.ok(near(total, budget), `${label}: λ > 0 but Σρ = ${total} ≠ R = ${budget}`)
    if (budget > 0) worst.budget = Math.max(worst.budget, Math.abs(total / budget - 1))
  }
  assert.ok(near(s.totalCrawlsPerDay, total), `${label}: totalCrawlsPerDay ${s.totalCrawlsPerDay} ≠ Σρ ${total}`)
  for (let h = 0; h < caps.length; h++) {
    const hostTotal = pages.reduce((a, p, i) => a + (p.host === h ? rates[i]! : 0), 0)
    const lh = s.hostLambda[h]!
    assert.ok(Number.isFinite(lh) && lh >= s.lambda, `${label}: λ_${h} = ${lh} < λ`)
    assert.ok(hostTotal <= caps[h]! * (1 + TOLERANCE) + 1e-300, `${label}: host ${h} Σ = ${hostTotal} > C = ${caps[h]}`)
    if (lh > s.lambda * (1 + TOLERANCE))
      assert.ok(near(hostTotal, caps[h]!), `${label}: host ${h} has λ_h > λ but Σ = ${hostTotal} ≠ C = ${caps[h]}`)
  }
  let free = 0
  pages.forEach((p, i) => {
    const rho = rates[i]!
    const lh = p.host >= 0 ? s.hostLambda[p.host]! : s.lambda
    const where = `${label} page ${i} (Δ=${p.delta}, μ=${p.mu}, l=${p.l}, u=${p.u}, ρ=${rho}, λ_h=${lh})`
    assert.ok(Number.isFinite(rho) && rho >= p.l && rho <= p.u, `${where}: outside bounds`)
    if (p.mu === 0 || p.delta === 0) {
      assert.equal(rho, p.l, `${where}: no utility, must sit at l`)
      return
    }
    const m = marginal(objective, rho, p.delta, p.mu, p.beta)
    const atLower = rho <= p.l * (1 + 1e-13)
    const atUpper = rho >= p.u * (1 - 1e-13)
    if (atLower && m <= lh * (1 + TOLERANCE)) return
    if (atUpper && m >= lh * (1 - TOLERANCE)) return
    free++
    assert.ok(near(m, lh), `${where}: marginal ${m} ≠ λ_h`)
    worst.marginal = Math.max(worst.marginal, Math.abs(m / lh - 1))
  })
  return free
}

for (const objective of ['freshness', 'freshness-periodic', 'harmonic', 'freshness-renewal'] as const) {
  const instances = objective === 'freshness' ? 500 : 300
  // The renewal and periodic kernels' reference solver is slow: seconds of CPU per 100 instances.
  const tag = objective === 'freshness-renewal' || objective === 'freshness-periodic' ? SLOW : {}
  test(
    `${objective}: ${instances} seeded random instances match KKT, the slow solver's objective (1e-9) and rateForPage`,
    tag,
    (t) => {
      worst.budget = 0
      worst.marginal = 0
      let worstObjective = 0
      const random = createRandom(objective.length * 7919)
      let binding = 0
      let freePages = 0
      let edgePages = 0
      let withCaps = 0
      for (let k = 0; k < instances; k++) {
        const { pages, caps, problem } = randomInstance(random, objective)
        const label = `${objective} #${k}`
        const s = solveRates(problem)
        if (s.lambda > 0) binding++
        if (caps.some((c, h) => s.hostLambda[h]! > s.lambda)) withCaps++
        freePages += checkKkt(objective, pages, caps, problem.budgetCrawlsPerDay, s, label)

        const reference = referenceSolve(objective, pages, caps, problem.budgetCrawlsPerDay)
        // A renewal page with β < 1 and l = 0 has f growing like ρ^β at 0, so at a rate within the budget's
        // rounding (ρ < 1e-9 R, where Σρ = R holds to 1e-13) its utility is not determined to 1e-9: such
        // pages are left out of the comparison, in ours and in the reference alike.
        const steepAtZero = (p: Page, i: number) =>
          objective === 'freshness-renewal' && p.beta < 1 && s.crawlsPerDay[i]! < 1e-9 * problem.budgetCrawlsPerDay
        const value = (rates: ArrayLike<number>) =>
          pages.reduce(
            (a, p, i) => a + (steepAtZero(p, i) ? 0 : utility(objective, rates[i]!, p.delta, p.mu, p.beta)),
            0,
          )
        const ours = value(s.crawlsPerDay)
        const low = value(reference.upper) // spends ≥ R and ≥ C_h: an upper bound on the optimum
        const high = value(reference.lower) // spends ≤ R and ≤ C_h: a lower bound
        if (Number.isFinite(ours) && Number.isFinite(high) && Number.isFinite(low)) {
          const slack = TOLERANCE * Math.max(Math.abs(low), Math.abs(high), 1e-300)
          assert.ok(
            ours >= high - slack && ours <= low + slack,
            `${label}: objective ${ours} outside [${high}, ${low}]`,
          )
          if (Number.isFinite(ours))
            worstObjective = Math.max(
              worstObjective,
              Math.max(high - ours, ours - low, 0) / Math.max(Math.abs(ours), 1e-300),
            )
        }

        pages.forEach((p, i) => {
          const rho = s.crawlsPerDay[i]!
          if (!(rho > p.l && rho < p.u) || s.lambda === 0) return
          // Near the periodic edge the rate is ill-conditioned in λ (d ln ρ / d ln λ ≈ e^x/x², x = Δ/ρ:
          // 1e6 at x = 20) and beyond x ≈ 37 no double λ gives it at all (docs/math.md 3.3). The KKT check
          // above covers those pages.
          if (
            (objective === 'freshness-periodic' || (objective === 'freshness-renewal' && p.beta > 1)) &&
            p.delta / rho > 20
          ) {
            edgePages++
            return
          }
          const lh = p.host >= 0 ? s.hostLambda[p.host]! : s.lambda
          const again = rateForPage(
            { changesPerDay: p.delta, importance: p.mu, minCrawlsPerDay: p.l, maxCrawlsPerDay: p.u, ageShape: p.beta },
            lh,
            objective,
          )
          // Rates are differences of terms of size Δ (√(μΔ/λ) − Δ), so compare on that scale.
          assert.ok(
            Math.abs(again - rho) <= 1e-9 * (rho + p.delta),
            `${label} page ${i}: rateForPage ${again} ≠ solved ${rho}`,
          )
        })
      }
      // The generator must exercise every regime, or the checks above prove little.
      assert.ok(binding > instances * 0.4, `only ${binding} binding budgets`)
      assert.ok(withCaps > instances * 0.05, `only ${withCaps} instances with a binding host cap`)
      assert.ok(freePages > instances, `only ${freePages} free pages`)
      assert.ok(edgePages < freePages / 20, `${edgePages} of ${freePages} free pages at the periodic edge`)
      t.diagnostic(
        `binding budgets ${binding}/${instances}, binding host caps in ${withCaps}, free pages ${freePages} (${edgePages} at the periodic edge); ` +
          `max |Σρ/R − 1| = ${worst.budget.toExponential(2)}, max |marginal/λ_h − 1| = ${worst.marginal.toExponential(2)}, ` +
          `max objective outside the reference bracket = ${worstObjective.toExponential(2)}`,
      )
    },
  )
}

test('KKT check fails on a perturbed solution (the certificate can fail)', () => {
  const random = createRandom(4242)
  let caught = 0
  for (let k = 0; k < 30; k++) {
    const { pages, caps, problem } = randomInstance(random, 'freshness')
    const s = solveRates(problem)
    const free = pages.findIndex(
      (p, i) => s.crawlsPerDay[i]! > p.l && s.crawlsPerDay[i]! < p.u && p.mu > 0 && p.delta > 0,
    )
    const other = pages.findIndex(
      (p, i) => i !== free && s.crawlsPerDay[i]! > p.l && s.crawlsPerDay[i]! < p.u && p.mu > 0 && p.delta > 0,
    )
    if (free < 0 || other < 0) continue
    // Move 1e-6 of budget between two free pages: same total, no longer optimal.
    const moved = { ...s, crawlsPerDay: Float64Array.from(s.crawlsPerDay) }
    const shift = 1e-6 * Math.min(moved.crawlsPerDay[free]!, moved.crawlsPerDay[other]!)
    moved.crawlsPerDay[free] = moved.crawlsPerDay[free]! + shift
    moved.crawlsPerDay[other] = moved.crawlsPerDay[other]! - shift
    assert.throws(() => checkKkt('freshness', pages, caps, problem.budgetCrawlsPerDay, moved, 'perturbed'))
    caught++
  }
  assert.ok(caught > 5)
})
