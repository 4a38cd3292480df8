/**
 * Crawl rates for every page under a global budget and per-host caps (MATH.md 3.1–3.4).
 *
 * Host caps (MATH.md 3.2) are solved first: a host whose pages would exceed C_h even at λ = 0 gets
 * κ_h, the multiplier at which its pages sum to C_h, and its pages' upper bounds drop to their rates at
 * κ_h. Because every page rate is non-increasing in λ, the page's rate at a global λ is then
 * ρ_i(max(λ, κ_h)) = clamp(ρ_i(λ), l_i, ρ_i(κ_h)), so the global problem is the uncapped one with
 * those lowered bounds, Σ_h min(S_h(λ), C_h) = R is met by the same solver, and λ_h = max(λ, κ_h).
 */
import { solveFreshnessSet } from './freshnessSweep.ts'
import { HarmonicKernel, PassModel, PeriodicKernel, type RateKernel } from './kernels.ts'
import { solveMultiplierSet } from './multiplierSearch.ts'
import { marginalUtility, pageFreshness } from './pageRate.ts'
import type { PageColumns, PageSet } from './pageSet.ts'
import { InfeasibleBudgetError, type Objective, type RateProblem, type RateSolution } from './types.ts'

/**
 * Σ l may exceed a cap by this relative amount before it is infeasible, so that a budget set to
 * exactly Σ l (summed in another order) is not rejected over rounding.
 */
const FEASIBILITY_TOLERANCE = 1e-12

const OBJECTIVES: readonly Objective[] = ['freshness', 'freshness-periodic', 'harmonic']

/**
 * Solves max Σ μ_i f(ρ_i) s.t. Σ ρ_i ≤ R, l_i ≤ ρ_i ≤ u_i, Σ_{i∈h} ρ_i ≤ C_h.
 * - Budget binding: Σ ρ = R to ~1e-13 relative (exact closed form for `freshness`, Newton on ln λ
 *   with the MATH.md 3.3 finish otherwise).
 * - Not binding (R ≥ Σ of the capped upper bounds): every page at its (capped) upper bound, λ = 0.
 * - μ_i = 0 or Δ_i = 0: ρ_i = l_i.
 * Throws InfeasibleBudgetError when Σ l > R or a host's Σ l > C_h, and RangeError on malformed input
 * (negative or NaN values, u < l, infinite l or R, mismatched lengths, host index out of range).
 */
export function solveRates(problem: RateProblem): RateSolution {
  const { n, hostCount } = validate(problem)
  const { changesPerDay: delta, importance, minCrawlsPerDay: lower, objective } = problem
  const budget = problem.budgetCrawlsPerDay
  const hostIndex = problem.hostIndex !== undefined && hostCount > 0 ? problem.hostIndex : null
  const hostCap = problem.hostMaxCrawlsPerDay ?? new Float64Array(0)

  // Pages that gain nothing from crawls are pinned at l by giving them u = l.
  const upper = new Float64Array(n)
  const maxRate = problem.maxCrawlsPerDay
  for (let i = 0; i < n; i++) upper[i] = importance[i]! > 0 && delta[i]! > 0 ? maxRate[i]! : lower[i]!
  const columns: PageColumns = { changesPerDay: delta, importance, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper }

  const sumLower = compensatedSum(lower, n)
  if (sumLower > budget * (1 + FEASIBILITY_TOLERANCE)) {
    throw new InfeasibleBudgetError({ requiredCrawlsPerDay: sumLower, budgetCrawlsPerDay: budget })
  }

  const out = new Float64Array(n)
  const solver = createSetSolver(objective, columns, n, out)
  const hostLambda = new Float64Array(hostCount)
  if (hostIndex !== null) solveHostCaps({ objective, columns, hostIndex, hostCap, solver, out, hostLambda })

  const capacity = compensatedSum(upper, n)
  let lambda: number
  if (capacity <= budget) {
    out.set(upper)
    lambda = 0
  } else if (budget <= sumLower) {
    out.set(lower)
    lambda = lambdaHoldingAllAtLower(objective, columns, { indices: null, count: n })
  } else {
    lambda = solver.solve({ indices: null, count: n }, budget)
  }
  for (let h = 0; h < hostCount; h++) hostLambda[h] = Math.max(lambda, hostLambda[h]!)

  let total = 0
  let totalCompensation = 0
  let weightedFreshness = 0
  let sumImportance = 0
  let pagesCrawled = 0
  const reportObjective: Objective = objective === 'freshness-periodic' ? objective : 'freshness'
  for (let i = 0; i < n; i++) {
    const rate = out[i]!
    const next = total + rate
    totalCompensation += total >= rate ? total - next + rate : rate - next + total
    total = next
    const mu = importance[i]!
    if (mu > 0) {
      weightedFreshness += mu * pageFreshness(reportObjective, rate, delta[i]!)
      sumImportance += mu
    }
    if (rate > lower[i]!) pagesCrawled++
  }
  return {
    crawlsPerDay: out,
    lambda,
    hostLambda,
    totalCrawlsPerDay: total + totalCompensation,
    expectedFreshness: sumImportance > 0 ? weightedFreshness / sumImportance : 1,
    pagesCrawled,
  }
}

interface SetSolver {
  /** Rates of `set` into `out` summing to target (Σ l < target < Σ u); returns λ. */
  solve(set: PageSet, targetCrawlsPerDay: number): number
  /** Call after `columns.upperCrawlsPerDay[i]` changed. */
  upperChanged(i: number): void
}

function createSetSolver(objective: Objective, columns: PageColumns, n: number, out: Float64Array): SetSolver {
  if (objective === 'freshness') {
    const weight = new Float64Array(n)
    const { changesPerDay: delta, importance } = columns
    for (let i = 0; i < n; i++) weight[i] = Math.sqrt(importance[i]! * delta[i]!)
    let breakpoints: Float64Array | null = null
    return {
      solve(set, targetCrawlsPerDay) {
        if (breakpoints === null || breakpoints.length < 2 * set.count) breakpoints = new Float64Array(2 * set.count)
        return solveFreshnessSet({ columns, weight, set, targetCrawlsPerDay, out, breakpoints })
      },
      upperChanged() {},
    }
  }
  const kernel: RateKernel = objective === 'harmonic' ? new HarmonicKernel(columns) : new PeriodicKernel(columns)
  let scratch: [Float64Array, Float64Array] | null = null
  let model: PassModel | null = null
  return {
    solve(set, targetCrawlsPerDay) {
      scratch ??= [new Float64Array(n), new Float64Array(n)]
      // Room to re-evaluate an eighth of the pages exactly per model step (see multiplierSearch.ts).
      model ??= new PassModel(Math.min(n, Math.max(1024, n >> 3)))
      return solveMultiplierSet({ kernel, columns, set, targetCrawlsPerDay, out, scratch, model })
    },
    upperChanged(i) {
      kernel.upperChanged(i)
    },
  }
}

/**
 * For each host that would exceed its cap at λ = 0, finds κ_h (its pages sum to C_h) and lowers its
 * pages' upper bounds to their rates at κ_h; writes κ_h into `hostLambda` (0 for hosts that fit).
 */
function solveHostCaps(options: {
  objective: Objective
  columns: PageColumns
  hostIndex: Int32Array
  hostCap: Float64Array
  solver: SetSolver
  out: Float64Array
  hostLambda: Float64Array
}): void {
  const { objective, columns, hostIndex, hostCap, solver, out, hostLambda } = options
  const { lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const n = hostIndex.length
  const hostCount = hostCap.length
  const hostLower = new Float64Array(hostCount)
  const hostUpper = new Float64Array(hostCount)
  const hostPages = new Int32Array(hostCount + 1)
  for (let i = 0; i < n; i++) {
    const h = hostIndex[i]!
    if (h < 0) continue
    hostLower[h] = hostLower[h]! + lower[i]!
    hostUpper[h] = hostUpper[h]! + upper[i]!
    hostPages[h + 1] = hostPages[h + 1]! + 1
  }
  let bindingPages = 0
  for (let h = 0; h < hostCount; h++) {
    const cap = hostCap[h]!
    if (hostLower[h]! > cap * (1 + FEASIBILITY_TOLERANCE)) {
      throw new InfeasibleBudgetError({ requiredCrawlsPerDay: hostLower[h]!, budgetCrawlsPerDay: cap, hostIndex: h })
    }
    if (hostUpper[h]! > cap) bindingPages += hostPages[h + 1]!
    else hostPages[h + 1] = 0
  }
  if (bindingPages === 0) return

  // Counting sort of the pages of binding hosts, so each host is one contiguous run.
  const start = hostPages
  for (let h = 0; h < hostCount; h++) start[h + 1] = start[h]! + start[h + 1]!
  const order = new Int32Array(bindingPages)
  const fill = start.slice(0, hostCount)
  for (let i = 0; i < n; i++) {
    const h = hostIndex[i]!
    if (h < 0 || !(hostUpper[h]! > hostCap[h]!)) continue
    order[fill[h]!++] = i
  }

  for (let h = 0; h < hostCount; h++) {
    const from = start[h]!
    const to = start[h + 1]!
    if (to === from) continue
    const set: PageSet = { indices: order.subarray(from, to), count: to - from }
    const cap = hostCap[h]!
    if (cap <= hostLower[h]!) {
      for (let k = from; k < to; k++) out[order[k]!] = lower[order[k]!]!
      hostLambda[h] = lambdaHoldingAllAtLower(objective, columns, set)
    } else {
      hostLambda[h] = solver.solve(set, cap)
    }
    for (let k = from; k < to; k++) {
      const i = order[k]!
      if (out[i]! < upper[i]!) {
        upper[i] = out[i]!
        solver.upperChanged(i)
      }
    }
  }
}

/**
 * The smallest λ at which every page of the set sits at l (max of μ f'(l) over pages that can move),
 * reported when the budget equals Σ l exactly. Clipped to Number.MAX_VALUE (harmonic pages with l = 0
 * reach l only as λ → ∞); 0 when no page can move.
 */
function lambdaHoldingAllAtLower(objective: Objective, columns: PageColumns, set: PageSet): number {
  const { changesPerDay: delta, importance, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
  const { indices, count } = set
  let lambda = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    if (!(upper[i]! > lower[i]!)) continue
    lambda = Math.max(lambda, marginalUtility(objective, lower[i]!, delta[i]!, importance[i]!))
  }
  return Math.min(lambda, Number.MAX_VALUE)
}

function compensatedSum(values: Float64Array, count: number): number {
  let sum = 0
  let compensation = 0
  for (let i = 0; i < count; i++) {
    const value = values[i]!
    const next = sum + value
    compensation += Math.abs(sum) >= Math.abs(value) ? sum - next + value : value - next + sum
    sum = next
  }
  return sum + compensation
}

function validate(problem: RateProblem): { n: number; hostCount: number } {
  const { changesPerDay: delta, importance, minCrawlsPerDay: lower, maxCrawlsPerDay: upper } = problem
  const n = delta.length
  if (importance.length !== n || lower.length !== n || upper.length !== n) {
    throw new RangeError(`per-page arrays differ in length: ${n}, ${importance.length}, ${lower.length}, ${upper.length}`)
  }
  if (!OBJECTIVES.includes(problem.objective)) throw new RangeError(`unknown objective ${String(problem.objective)}`)
  const budget = problem.budgetCrawlsPerDay
  if (!(budget >= 0) || budget === Number.POSITIVE_INFINITY) {
    throw new RangeError(`budgetCrawlsPerDay must be finite and ≥ 0, got ${budget}`)
  }
  for (let i = 0; i < n; i++) {
    const d = delta[i]!
    const mu = importance[i]!
    const l = lower[i]!
    const u = upper[i]!
    if (!(d >= 0 && d < Number.POSITIVE_INFINITY && mu >= 0 && mu < Number.POSITIVE_INFINITY && l >= 0 && l < Number.POSITIVE_INFINITY && u >= l)) {
      throw new RangeError(`page ${i}: need finite Δ, μ, l ≥ 0 and u ≥ l, got Δ=${d} μ=${mu} l=${l} u=${u}`)
    }
  }
  const caps = problem.hostMaxCrawlsPerDay
  const hostCount = caps?.length ?? 0
  for (let h = 0; h < hostCount; h++) {
    if (!(caps![h]! >= 0)) throw new RangeError(`host ${h}: cap must be ≥ 0, got ${caps![h]}`)
  }
  const hosts = problem.hostIndex
  if (hosts !== undefined) {
    if (hosts.length !== n) throw new RangeError(`hostIndex has length ${hosts.length}, expected ${n}`)
    for (let i = 0; i < n; i++) {
      const h = hosts[i]!
      if (h < -1 || h >= hostCount) throw new RangeError(`page ${i}: host index ${h} outside [-1, ${hostCount})`)
    }
  }
  return { n, hostCount }
}
