// Crawl-rate optimiser: hand-computed cases, edge cases and the per-page formulas (docs/math.md 3.1–3.4).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  InfeasibleBudgetError,
  marginalUtility,
  pageFreshness,
  rateForPage,
  solveRates,
  type Objective,
  type RateProblem,
} from '../../../src/math/optimizer/index.ts'
import { referenceUtility } from '../../helpers/referenceFreshness.ts'

const OBJECTIVES: readonly Objective[] = ['freshness', 'freshness-periodic', 'harmonic']

function problem(
  pages: { delta: number; mu: number; l?: number; u?: number; host?: number }[],
  budget: number,
  objective: Objective,
  caps?: number[],
): RateProblem {
  return {
    changesPerDay: Float64Array.from(pages, (p) => p.delta),
    importance: Float64Array.from(pages, (p) => p.mu),
    minCrawlsPerDay: Float64Array.from(pages, (p) => p.l ?? 0),
    maxCrawlsPerDay: Float64Array.from(pages, (p) => p.u ?? Number.POSITIVE_INFINITY),
    ...(caps === undefined
      ? {}
      : { hostIndex: Int32Array.from(pages, (p) => p.host ?? -1), hostMaxCrawlsPerDay: Float64Array.from(caps) }),
    budgetCrawlsPerDay: budget,
    objective,
  }
}

function close(actual: number, expected: number, relative = 1e-12, message?: string): void {
  assert.ok(
    Math.abs(actual - expected) <= relative * Math.max(Math.abs(expected), 1e-300),
    message ?? `${actual} vs ${expected}`,
  )
}

test('freshness, two pages by hand: μ = (4, 1), Δ = 1, R = 2 → √λ = 3/4, ρ = (5/3, 1/3)', () => {
  // Σ (√μ_i/√λ − 1) = 3/√λ − 2 = 2.
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 4 },
        { delta: 1, mu: 1 },
      ],
      2,
      'freshness',
    ),
  )
  close(s.lambda, 9 / 16)
  close(s.crawlsPerDay[0]!, 5 / 3)
  close(s.crawlsPerDay[1]!, 1 / 3)
  close(s.totalCrawlsPerDay, 2)
  // (4·(5/8) + 1·(1/4)) / 5 = 0.55
  close(s.expectedFreshness, 0.55)
  assert.equal(s.pagesCrawled, 2)
})

test('freshness: a page below the threshold μΔ/(l+Δ)² < λ gets no crawls beyond l', () => {
  // μ = (9, 1), Δ = 1, R = 1: page 0 alone: 3/√λ − 1 = 1 → λ = 9/4 > μ_1Δ_1/Δ_1² = 1.
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 9 },
        { delta: 1, mu: 1 },
      ],
      1,
      'freshness',
    ),
  )
  close(s.lambda, 9 / 4)
  close(s.crawlsPerDay[0]!, 1)
  assert.equal(s.crawlsPerDay[1], 0)
  assert.equal(s.pagesCrawled, 1)
})

test('freshness with bounds: the upper bound binds, the rest is shared', () => {
  // μ = (4, 1), Δ = 1, u_0 = 1, R = 2: page 0 at 1, page 1 = 1 → √(1/λ) − 1 = 1 → λ = 1/4;
  // page 0 at λ = 1/4 would want 2/(1/2) − 1 = 3 > 1, so it sits at u.
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 4, u: 1 },
        { delta: 1, mu: 1 },
      ],
      2,
      'freshness',
    ),
  )
  close(s.lambda, 1 / 4)
  close(s.crawlsPerDay[0]!, 1)
  close(s.crawlsPerDay[1]!, 1)
})

test('harmonic by hand: μ = (2, 1), Δ = 1, R = 1 + (√5 − 1)/2 → λ = 1, ρ = (1, (√5 − 1)/2)', () => {
  // ρ(ρ + 1) = μ/λ: ρ² + ρ − 2 = 0 → 1; ρ² + ρ − 1 = 0 → (√5 − 1)/2.
  const golden = (Math.sqrt(5) - 1) / 2
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 2 },
        { delta: 1, mu: 1 },
      ],
      1 + golden,
      'harmonic',
    ),
  )
  close(s.lambda, 1, 1e-10)
  close(s.crawlsPerDay[0]!, 1, 1e-10)
  close(s.crawlsPerDay[1]!, golden, 1e-10)
  // Reported freshness is the Poisson one: (2·1/2 + 1·golden/(golden + 1)) / 3.
  close(s.expectedFreshness, (1 + golden / (golden + 1)) / 3, 1e-10)
})

test('periodic by hand: two equal pages, R = 2 → ρ = 1 each, λ = (μ/Δ)·g(1) = 1 − 2/e', () => {
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 1 },
        { delta: 1, mu: 1 },
      ],
      2,
      'freshness-periodic',
    ),
  )
  close(s.crawlsPerDay[0]!, 1, 1e-12)
  close(s.crawlsPerDay[1]!, 1, 1e-12)
  close(s.lambda, 1 - 2 / Math.E, 1e-10)
  close(s.expectedFreshness, 1 - Math.exp(-1), 1e-12)
})

test('host cap by hand: pages 0, 1 on a host capped at 0.5, page 2 free, R = 2', () => {
  // Host pages share 0.5 → 0.25 each, λ_h = 1/(1.25)² = 0.64; page 2 takes 1.5 → λ = 1/(2.5)² = 0.16.
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 1, host: 0 },
        { delta: 1, mu: 1, host: 0 },
        { delta: 1, mu: 1 },
      ],
      2,
      'freshness',
      [0.5],
    ),
  )
  close(s.crawlsPerDay[0]!, 0.25)
  close(s.crawlsPerDay[1]!, 0.25)
  close(s.crawlsPerDay[2]!, 1.5)
  close(s.lambda, 0.16)
  close(s.hostLambda[0]!, 0.64)
})

test('host cap that does not bind: λ_h = λ', () => {
  const s = solveRates(
    problem(
      [
        { delta: 1, mu: 1, host: 0 },
        { delta: 1, mu: 1, host: 1 },
      ],
      2,
      'freshness',
      [5, Number.POSITIVE_INFINITY],
    ),
  )
  close(s.crawlsPerDay[0]!, 1)
  close(s.lambda, 0.25)
  assert.deepEqual([...s.hostLambda], [s.lambda, s.lambda])
})

for (const objective of OBJECTIVES) {
  test(`${objective}: Δ = 0 and μ = 0 pages stay at l even with budget to spare`, () => {
    const s = solveRates(
      problem(
        [
          { delta: 0, mu: 5, l: 0.1, u: 10 },
          { delta: 2, mu: 0, l: 0.2 },
          { delta: 1, mu: 1 },
        ],
        3,
        objective,
      ),
    )
    assert.equal(s.crawlsPerDay[0], 0.1)
    assert.equal(s.crawlsPerDay[1], 0.2)
    close(s.crawlsPerDay[2]!, 2.7, 1e-12)
    close(s.totalCrawlsPerDay, 3, 1e-12)
  })

  test(`${objective}: Σu ≤ R → every page at u, λ = 0`, () => {
    const s = solveRates(
      problem(
        [
          { delta: 1, mu: 1, u: 2 },
          { delta: 3, mu: 2, l: 1, u: 4 },
          { delta: 0, mu: 1, l: 0.5, u: 9 },
        ],
        100,
        objective,
      ),
    )
    assert.deepEqual([...s.crawlsPerDay], [2, 4, 0.5])
    assert.equal(s.lambda, 0)
    assert.equal(s.pagesCrawled, 2)
  })

  test(`${objective}: Σl > R → InfeasibleBudgetError, never a rescale`, () => {
    assert.throws(
      () =>
        solveRates(
          problem(
            [
              { delta: 1, mu: 1, l: 2 },
              { delta: 1, mu: 1, l: 2 },
            ],
            3,
            objective,
          ),
        ),
      (err: unknown) =>
        err instanceof InfeasibleBudgetError &&
        err.requiredCrawlsPerDay === 4 &&
        err.budgetCrawlsPerDay === 3 &&
        err.hostIndex === null &&
        /budget/.test(err.message),
    )
  })

  test(`${objective}: a host whose Σl exceeds its cap is infeasible, and the message says which host`, () => {
    assert.throws(
      () =>
        solveRates(
          problem(
            [
              { delta: 1, mu: 1, l: 1, host: 1 },
              { delta: 1, mu: 1, l: 1, host: 1 },
              { delta: 1, mu: 1 },
            ],
            10,
            objective,
            [5, 1.5],
          ),
        ),
      (err: unknown) =>
        err instanceof InfeasibleBudgetError &&
        err.hostIndex === 1 &&
        /host 1/.test(err.message) &&
        err.requiredCrawlsPerDay === 2,
    )
  })

  test(`${objective}: R = Σl exactly → every page at l with a finite λ`, () => {
    const s = solveRates(
      problem(
        [
          { delta: 1, mu: 1, l: 0.5 },
          { delta: 2, mu: 3, l: 0.25 },
        ],
        0.75,
        objective,
      ),
    )
    assert.deepEqual([...s.crawlsPerDay], [0.5, 0.25])
    assert.ok(Number.isFinite(s.lambda) && s.lambda > 0)
    assert.equal(s.pagesCrawled, 0)
    // λ is the largest marginal at l, so rateForPage keeps every page at l.
    for (const [i, page] of [
      { delta: 1, mu: 1, l: 0.5 },
      { delta: 2, mu: 3, l: 0.25 },
    ].entries()) {
      const rate = rateForPage(
        { changesPerDay: page.delta, importance: page.mu, minCrawlsPerDay: page.l, maxCrawlsPerDay: Infinity },
        s.lambda,
        objective,
      )
      close(rate, s.crawlsPerDay[i]!, 1e-9)
    }
  })

  test(`${objective}: no pages, no importance`, () => {
    const empty = solveRates(problem([], 5, objective))
    assert.equal(empty.crawlsPerDay.length, 0)
    assert.equal(empty.lambda, 0)
    assert.equal(empty.expectedFreshness, 1)
    const noImportance = solveRates(problem([{ delta: 1, mu: 0 }], 5, objective))
    assert.equal(noImportance.expectedFreshness, 1)
    assert.equal(noImportance.crawlsPerDay[0], 0)
  })

  test(`${objective}: malformed input is a RangeError`, () => {
    assert.throws(() => solveRates(problem([{ delta: -1, mu: 1 }], 1, objective)), RangeError)
    assert.throws(() => solveRates(problem([{ delta: Number.NaN, mu: 1 }], 1, objective)), RangeError)
    assert.throws(() => solveRates(problem([{ delta: 1, mu: 1, l: 2, u: 1 }], 5, objective)), RangeError)
    assert.throws(() => solveRates(problem([{ delta: 1, mu: 1 }], Number.POSITIVE_INFINITY, objective)), RangeError)
    assert.throws(() => solveRates(problem([{ delta: 1, mu: 1, host: 3 }], 1, objective, [1])), RangeError)
  })
}

test('pageFreshness formulas', () => {
  close(pageFreshness('freshness', 1, 1), 0.5)
  close(pageFreshness('harmonic', 3, 1), 0.75)
  close(pageFreshness('freshness-periodic', 1, 1), 1 - Math.exp(-1))
  close(pageFreshness('freshness-periodic', 2, 1), 2 * (1 - Math.exp(-0.5)))
  // Periodic ≥ Poisson at the same rate (docs/math.md 3.3).
  assert.ok(pageFreshness('freshness-periodic', 0.3, 2) > pageFreshness('freshness', 0.3, 2))
  // Very frequent crawls: 1 − x/2 + x²/6 with x = Δ/ρ = 1e-9, no cancellation.
  close(pageFreshness('freshness-periodic', 1e9, 1), 1 - 5e-10, 1e-15)
  // Δ/ρ that underflows to 0 or overflows to ∞ gives the limits 1 and 0, not 0/0 or ∞/∞.
  for (const objective of ['freshness-periodic', 'freshness-renewal'] as const) {
    assert.equal(pageFreshness(objective, 24, 5e-324), 1)
    assert.equal(pageFreshness(objective, 5e-324, 1e308), 0)
  }
  for (const objective of OBJECTIVES) {
    assert.equal(pageFreshness(objective, 0, 0), 1)
    assert.equal(pageFreshness(objective, 5, 0), 1)
    assert.equal(pageFreshness(objective, 0, 2), 0)
    assert.equal(pageFreshness(objective, Number.POSITIVE_INFINITY, 2), 1)
  }
  assert.throws(() => pageFreshness('freshness', -1, 1), RangeError)
})

test('marginalUtility is the derivative of μ f(ρ) (central differences)', () => {
  // Poisson pages (no shape): the renewal utility is the periodic one.
  for (const objective of OBJECTIVES) {
    for (const [rho, delta, mu] of [
      [0.5, 2, 3],
      [4, 0.1, 0.7],
      [0.02, 1, 1],
    ] as const) {
      const h = rho * 1e-5
      const numeric =
        (referenceUtility(objective, rho + h, delta, mu) - referenceUtility(objective, rho - h, delta, mu)) / (2 * h)
      close(marginalUtility(objective, rho, delta, mu), numeric, 1e-7, `${objective} ρ=${rho}`)
    }
  }
  // Renewal pages: f = (ρ/Δ) ∫_0^{Δ/ρ} (1 + s/β)^{−β} ds.
  for (const beta of [0.4, 2.5, 30]) {
    const f = (rho: number, delta: number) => referenceUtility('freshness-renewal', rho, delta, 1, beta)
    for (const [rho, delta, mu] of [
      [0.5, 2, 3],
      [4, 0.1, 0.7],
      [0.02, 1, 1],
    ] as const) {
      const h = rho * 1e-5
      const numeric = (mu * (f(rho + h, delta) - f(rho - h, delta))) / (2 * h)
      close(marginalUtility('freshness-renewal', rho, delta, mu, beta), numeric, 1e-7, `renewal β=${beta} ρ=${rho}`)
      close(
        pageFreshness('freshness-renewal', rho, delta, beta),
        f(rho, delta),
        1e-12,
        `renewal freshness β=${beta} ρ=${rho}`,
      )
    }
  }
})

test('rateForPage: formulas, clamping, and λ = 0', () => {
  const page = { changesPerDay: 1, importance: 4, minCrawlsPerDay: 0, maxCrawlsPerDay: Number.POSITIVE_INFINITY }
  close(rateForPage(page, 1, 'freshness'), 1) // √4 − 1
  close(rateForPage(page, 4, 'freshness'), 0) // at the threshold μ/Δ
  assert.equal(rateForPage(page, 9, 'freshness'), 0)
  close(rateForPage({ ...page, maxCrawlsPerDay: 0.5 }, 1, 'freshness'), 0.5)
  close(rateForPage({ ...page, minCrawlsPerDay: 2 }, 1, 'freshness'), 2)
  close(rateForPage(page, 2, 'harmonic'), 1) // ρ(ρ + 1) = 2
  // Periodic: λ = (μ/Δ) g(1) → ρ = Δ/1.
  close(rateForPage(page, 4 * (1 - 2 / Math.E), 'freshness-periodic'), 1, 1e-12)
  assert.equal(rateForPage(page, 4, 'freshness-periodic'), 0) // c = λΔ/μ = 1
  // Renewal without a shape is periodic; with β = 2, h(1) = 2(1 − 2/1.5²) = 2/9, so λ = 4 · 2/9 → ρ = 1.
  assert.equal(rateForPage(page, 1, 'freshness-renewal'), rateForPage(page, 1, 'freshness-periodic'))
  close(rateForPage({ ...page, ageShape: 2 }, (4 * 2) / 9, 'freshness-renewal'), 1, 1e-12)
  assert.equal(rateForPage({ ...page, ageShape: 2 }, 4 * 2, 'freshness-renewal'), 0) // c = h(∞) = 2
  assert.ok(rateForPage({ ...page, ageShape: 0.7 }, 1e6, 'freshness-renewal') > 0) // β ≤ 1: h unbounded, never given up
  assert.throws(() => rateForPage({ ...page, ageShape: 0 }, 1, 'freshness-renewal'), RangeError)
  // λ = 0: u when finite, else l.
  assert.equal(rateForPage({ ...page, maxCrawlsPerDay: 7 }, 0, 'freshness'), 7)
  assert.equal(rateForPage({ ...page, minCrawlsPerDay: 0.1 }, 0, 'harmonic'), 0.1)
  // No change or no importance: l.
  assert.equal(rateForPage({ ...page, changesPerDay: 0, minCrawlsPerDay: 0.3 }, 1, 'freshness'), 0.3)
  assert.equal(rateForPage({ ...page, importance: 0, minCrawlsPerDay: 0.3 }, 1, 'harmonic'), 0.3)
  // Tiny λ never yields +Infinity.
  assert.ok(Number.isFinite(rateForPage({ ...page, importance: 1e300 }, 1e-300, 'freshness')))
  assert.throws(() => rateForPage(page, -1, 'freshness'), RangeError)
  assert.throws(() => rateForPage(page, Number.NaN, 'freshness'), RangeError)
})
