// Reproduction of Table I of Li, Cline & Loguinov 2017 ("Temporal update dynamics under blind
// sampling"): convergence of M4 and M5 under Pareto updates, μ = 2, crawled every Δ = 1 (λ = 1),
// with recrawl's estimators (src/math/updateDistribution.ts, docs/math.md 2.2).
//
//   node --import tsx bench/liTable.ts [--max-t 1e6] [--runs-scale 1]
//
// Settings as in the paper: F_U(x) = 1 − (1 + x/β)^{−α} with α = 3, β = 1 (E[U] = 1/2, so μ = 2), so
// that G_U(x) = 1 − (1 + x)^{−2}; a constant crawl interval Δ = 1; observation windows T = 10² … 10⁷.
// For each T the table reports the mean over R seeded sample paths of
//   w_T = Σ_n |H(x_n) − G_U(x_n)| / Σ_n (H(x_n) + G_U(x_n))/2     (WMRD, eq. 53)
//   κ_T = max_n |H(x_n) − G_U(x_n)|                              (KS, eq. 54)
// at x_n = nΔ. The paper does not state the range of n in eq. 53; n = 1…10 (G_U(10) = 0.992, where
// the curve has reached 1 within the error of the largest T) reproduces its w_T, and κ_T does not
// depend on it. The update process starts 100 time units before the first crawl, so the crawls see
// it in equilibrium; crawls are at j + 1/2, j = 0…T. T = 10⁷ holds 10⁷ crawls in memory: run it with
// node --max-old-space-size=4096.
import { createRandom, type Random } from '../src/math/random.ts'
import { ageCdfM4, ageCdfM5, type AgeCdf, type AgeCrawl } from '../src/math/updateDistribution.ts'

const PARETO_ALPHA = 3
const PARETO_BETA = 1
const INTERVAL_DAYS = 1
const POINTS = 10
const BURN_IN = 100

/** Table I of the paper: T → [M4 w_T, M4 κ_T, M5 w_T, M5 κ_T] in percent. */
const PAPER: ReadonlyMap<number, readonly [number, number, number, number]> = new Map([
  [1e2, [3.48, 6.42, 3.72, 6.74]],
  [1e3, [1.37, 2.22, 1.4, 2.23]],
  [1e4, [0.47, 0.72, 0.47, 0.73]],
  [1e5, [0.15, 0.24, 0.15, 0.24]],
  [1e6, [0.04, 0.06, 0.04, 0.06]],
  [1e7, [0.02, 0.03, 0.02, 0.03]],
])
/** Sample paths per T (times --runs-scale): enough that the mean's standard error is a few % of it. */
const RUNS: ReadonlyMap<number, number> = new Map([
  [1e2, 2000],
  [1e3, 1000],
  [1e4, 200],
  [1e5, 50],
  [1e6, 30],
  [1e7, 6],
])

function argNumber(name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  if (i < 0) return fallback
  const value = Number(process.argv[i + 1])
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: not a positive number: ${process.argv[i + 1]}`)
  return value
}

/** G_U of the Pareto law: μ ∫_0^x (1 + y/β)^{−α} dy with μ = (α − 1)/β. */
function trueAgeCdf(x: number): number {
  return 1 - Math.pow(1 + x / PARETO_BETA, 1 - PARETO_ALPHA)
}

function paretoInterval(random: Random): number {
  return PARETO_BETA * (Math.pow(1 - random.next(), -1 / PARETO_ALPHA) - 1)
}

/** Crawls every Δ over [0, T] of one sample path; `changed` as a crawler sees it (no Last-Modified). */
function samplePath(seed: number, windowDays: number): AgeCrawl[] {
  const random = createRandom(seed)
  let nextUpdate = -BURN_IN
  const crawls: AgeCrawl[] = []
  for (let j = 0; j * INTERVAL_DAYS <= windowDays; j++) {
    const at = (j + 0.5) * INTERVAL_DAYS
    let changed = false
    while (nextUpdate <= at) {
      changed = true
      nextUpdate += paretoInterval(random)
    }
    crawls.push({ atDays: at, changed: j === 0 ? null : changed, ageDays: null })
  }
  return crawls
}

function errors(cdf: AgeCdf | null): { wmrd: number; ks: number } {
  if (cdf === null) return { wmrd: Number.NaN, ks: Number.NaN }
  let difference = 0
  let level = 0
  let ks = 0
  for (const { ageDays, cdf: estimate } of cdf.points) {
    const truth = trueAgeCdf(ageDays)
    difference += Math.abs(estimate - truth)
    level += (estimate + truth) / 2
    ks = Math.max(ks, Math.abs(estimate - truth))
  }
  return { wmrd: difference / level, ks }
}

function percent(x: number): string {
  return `${(100 * x).toFixed(100 * x < 0.1 ? 3 : 2)}%`
}

const maxT = argNumber('--max-t', 1e6)
const runsScale = argNumber('--runs-scale', 1)
const options = { bins: POINTS, maxLagDays: POINTS * INTERVAL_DAYS }

console.log(
  'Li, Cline & Loguinov 2017, Table I: M4 and M5 under Pareto updates (α = 3, β = 1, μ = 2), constant interval Δ = 1 (λ = 1)',
)
console.log(`w_T over x_n = n, n = 1..${POINTS}; paper / recrawl (mean over R sample paths ± its standard error)`)
console.log('')
console.log('| T | R | M4 w_T | M4 κ_T | M5 w_T | M5 κ_T |')
console.log('|---|---|---|---|---|---|')
for (const [windowDays, paper] of PAPER) {
  if (windowDays > maxT) break
  const runs = Math.max(1, Math.round(RUNS.get(windowDays)! * runsScale))
  const samples = { m4w: [] as number[], m4k: [] as number[], m5w: [] as number[], m5k: [] as number[] }
  for (let run = 0; run < runs; run++) {
    const crawls = samplePath(1_000_003 * windowDays + run, windowDays)
    const m4 = errors(ageCdfM4(crawls, options))
    const m5 = errors(ageCdfM5(crawls, options))
    samples.m4w.push(m4.wmrd)
    samples.m4k.push(m4.ks)
    samples.m5w.push(m5.wmrd)
    samples.m5k.push(m5.ks)
  }
  const cell = (paperPercent: number, values: readonly number[]) => {
    const mean = values.reduce((a, b) => a + b, 0) / values.length
    const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, values.length - 1)
    return `${paperPercent.toFixed(2)}% / ${percent(mean)} ± ${percent(Math.sqrt(variance / values.length))}`
  }
  console.log(
    `| 10^${Math.round(Math.log10(windowDays))} | ${runs} | ${cell(paper[0], samples.m4w)} | ${cell(paper[1], samples.m4k)} | ${cell(paper[2], samples.m5w)} | ${cell(paper[3], samples.m5k)} |`,
  )
}
