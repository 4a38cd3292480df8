/**
 * Crawl rates for every page under a global budget and per-host caps (docs/math.md 3.1–3.4).
 *
 * Host caps (docs/math.md 3.2) are solved first: a host whose pages would exceed C_h even at λ = 0 gets
 * κ_h, the multiplier at which its pages sum to C_h, and its pages' upper bounds drop to their rates at
 * κ_h. Because every page rate is non-increasing in λ, the page's rate at a global λ is then
 * ρ_i(max(λ, κ_h)) = clamp(ρ_i(λ), l_i, ρ_i(κ_h)), so the global problem is the uncapped one with
 * those lowered bounds, Σ_h min(S_h(λ), C_h) = R is met by the same solver, and λ_h = max(λ, κ_h).
 *
 * Only hosts with κ_h > λ matter (the others get λ_h = λ either way), and on large instances most
 * capped hosts are not among them. So on large instances λ is first estimated from a sample, and a
 * host whose pages fit under C_h at a multiplier λ_probe somewhat below that estimate is set aside:
 * S_h is non-increasing, so if the global λ comes out ≥ λ_probe, S_h(λ) ≤ C_h and the host does not
 * bind. If λ comes out lower, the set-aside hosts that overspend at λ get their κ_h and the global
 * problem is solved again, until none does.
 */
import { additionError, compensatedSum } from './compensatedSum.ts'
import { solveFreshnessSet } from './freshnessSweep.ts'
import { HarmonicKernel, PassModel, PeriodicKernel, RenewalKernel, type RateKernel } from './kernels.ts'
import { solveMultiplierSet } from './multiplierSearch.ts'
import { marginalUtility, pageFreshness } from './pageRate.ts'
import { strideSample, type PageColumns, type PageSet } from './pageSet.ts'
import { InfeasibleBudgetError, type Objective, type RateProblem, type RateSolution } from './types.ts'

/**
 * Σ l may exceed a cap by this relative amount before it is infeasible, so that a budget set to
 * exactly Σ l (summed in another order) is not rejected over rounding.
 */
const FEASIBILITY_TOLERANCE = 1e-12

const OBJECTIVES: readonly Objective[] = ['freshness', 'freshness-periodic', 'harmonic', 'freshness-renewal']

/** Instances with at least this many pages probe λ before solving host caps (see the module comment). */
const PROBE_ABOVE_PAGES = 50_000
const PROBE_SAMPLE_PAGES = 16_384
/** λ_probe = (sampled λ) · e^{−PROBE_MARGIN}: well below the estimate's sampling error. */
const PROBE_MARGIN = 0.1

/**
 * Solves max Σ μ_i f(ρ_i) s.t. Σ ρ_i ≤ R, l_i ≤ ρ_i ≤ u_i, Σ_{i∈h} ρ_i ≤ C_h.
 * - Budget binding: Σ ρ = R to ~1e-13 relative (exact closed form for `freshness`, a safeguarded
 *   model-based search on ln λ with the docs/math.md 3.3 finish otherwise, see multiplierSearch.ts).
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
  if (objective === 'freshness-renewal' && problem.ageShape !== undefined) columns.ageShape = problem.ageShape

  const sumLower = compensatedSum(lower, n)
  if (sumLower > budget * (1 + FEASIBILITY_TOLERANCE)) {
    throw new InfeasibleBudgetError({ requiredCrawlsPerDay: sumLower, budgetCrawlsPerDay: budget })
  }

  const out = new Float64Array(n)
  const solver = createSetSolver(objective, columns, n, out, problem.lambdaHint)
  const hostLambda = new Float64Array(hostCount)
  const caps = hostIndex === null ? null : new HostCaps({ objective, columns, hostIndex, hostCap, solver, hostLambda })
  if (caps !== null) {
    const estimate = n >= PROBE_ABOVE_PAGES ? sampledLambda(solver, columns, n, sumLower, budget) : Number.NaN
    if (estimate > 0) caps.bindAbove(estimate * Math.exp(-PROBE_MARGIN), out)
    else caps.bindAll()
  }

  let lambda: number
  for (;;) {
    const capacity = compensatedSum(upper, n)
    if (capacity <= budget) {
      out.set(upper)
      lambda = 0
    } else if (budget <= sumLower) {
      out.set(lower)
      lambda = lambdaHoldingAllAtLower(objective, columns, { indices: null, count: n })
    } else {
      lambda = solver.solve({ indices: null, count: n }, budget)
    }
    // Hosts set aside at the probe must still fit at this λ; those that do not are bound, and solved again.
    if (caps === null || caps.bindOverspent(lambda, out) === 0) break
  }
  for (let h = 0; h < hostCount; h++) hostLambda[h] = Math.max(lambda, hostLambda[h]!)

  let total = 0
  let compensation = 0
  let weightedFreshness = 0
  let sumImportance = 0
  let pagesCrawled = 0
  const reportObjective: Objective =
    objective === 'freshness-periodic' || objective === 'freshness-renewal' ? objective : 'freshness'
  const shape = columns.ageShape
  for (let i = 0; i < n; i++) {
    const rate = out[i]!
    compensation += additionError(total, rate)
    total += rate
    const mu = importance[i]!
    if (mu > 0) {
      weightedFreshness +=
        mu * pageFreshness(reportObjective, rate, delta[i]!, shape === undefined ? Number.POSITIVE_INFINITY : shape[i]!)
      sumImportance += mu
    }
    if (rate > lower[i]!) pagesCrawled++
  }
  return {
    crawlsPerDay: out,
    lambda,
    hostLambda,
    totalCrawlsPerDay: total + compensation,
    expectedFreshness: sumImportance > 0 ? weightedFreshness / sumImportance : 1,
    pagesCrawled,
  }
}

interface SetSolver {
  /** Where `solve` writes its rates (page-indexed). */
  readonly out: Float64Array
  /** Rates of `set` into `out` summing to target (Σ l < target < Σ u); returns λ. */
  solve(set: PageSet, targetCrawlsPerDay: number): number
  /** Rates of `set` at multiplier λ > 0 into `into`. */
  ratesAt(set: PageSet, lambda: number, into: Float64Array): void
  /** Call after `columns.upperCrawlsPerDay[i]` changed. */
  upperChanged(i: number): void
}

function createSetSolver(
  objective: Objective,
  columns: PageColumns,
  n: number,
  out: Float64Array,
  lambdaHint?: number,
): SetSolver {
  if (objective === 'freshness') {
    const weight = new Float64Array(n)
    const { changesPerDay: delta, importance } = columns
    for (let i = 0; i < n; i++) weight[i] = Math.sqrt(importance[i]! * delta[i]!)
    let breakpoints: Float64Array | null = null
    return {
      out,
      solve(set, targetCrawlsPerDay) {
        if (breakpoints === null || breakpoints.length < 2 * set.count) breakpoints = new Float64Array(2 * set.count)
        return solveFreshnessSet({ columns, weight, set, targetCrawlsPerDay, out, breakpoints })
      },
      ratesAt(set, lambda, into) {
        const { lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
        const t = 1 / Math.sqrt(lambda)
        const { indices, count } = set
        for (let k = 0; k < count; k++) {
          const i = indices === null ? k : indices[k]!
          const rate = weight[i]! * t - delta[i]!
          into[i] = rate < lower[i]! ? lower[i]! : rate > upper[i]! ? upper[i]! : rate
        }
      },
      upperChanged() {},
    }
  }
  const kernel: RateKernel =
    objective === 'harmonic'
      ? new HarmonicKernel(columns)
      : objective === 'freshness-renewal' && columns.ageShape !== undefined
        ? new RenewalKernel(columns)
        : new PeriodicKernel(columns)
  let scratch: [Float64Array, Float64Array] | null = null
  let model: PassModel | null = null
  return {
    out,
    solve(set, targetCrawlsPerDay) {
      scratch ??= [new Float64Array(n), new Float64Array(n)]
      // Room to re-evaluate an eighth of the pages exactly per model step (see multiplierSearch.ts).
      model ??= new PassModel(Math.min(n, Math.max(1024, n >> 3)))
      // The hint is the whole set's multiplier: host subsets start from their own sample or guess.
      const startLambda = set.indices === null ? lambdaHint : undefined
      return solveMultiplierSet({
        kernel,
        columns,
        set,
        targetCrawlsPerDay,
        out,
        scratch,
        model,
        ...(startLambda === undefined ? {} : { startLambda }),
      })
    },
    ratesAt(set, lambda, into) {
      kernel.evaluate(lambda, set, into)
    },
    upperChanged(i) {
      kernel.upperChanged(i)
    },
  }
}

/**
 * The hosts that would exceed their cap at λ = 0 (the others never bind), their pages in one array
 * grouped by host, and which of them are bound: a bound host has κ_h in `hostLambda` and its pages'
 * upper bounds lowered to their rates at κ_h.
 */
class HostCaps {
  private readonly options: {
    objective: Objective
    columns: PageColumns
    hostIndex: Int32Array
    hostCap: Float64Array
    solver: SetSolver
    hostLambda: Float64Array
  }
  private readonly hostLower: Float64Array
  /** Pages of host h: order[start[h]..start[h + 1]); empty for hosts that never bind. */
  private readonly order: Int32Array
  private readonly start: Int32Array
  /**
   * The same pages in page order: per-host sums over all of them read the page arrays nearly in
   * sequence, where `order` jumps between distant pages (on 10^7 pages, every read a cache miss).
   */
  private readonly ascending: Int32Array
  /** Hosts with pages in `order` not yet bound, and the multiplier at which they were seen to fit. */
  private pending: Int32Array
  private pendingFitAt = Number.POSITIVE_INFINITY

  constructor(options: {
    objective: Objective
    columns: PageColumns
    hostIndex: Int32Array
    hostCap: Float64Array
    solver: SetSolver
    hostLambda: Float64Array
  }) {
    const { columns, hostIndex, hostCap } = options
    this.options = options
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
    let bindingHosts = 0
    for (let h = 0; h < hostCount; h++) {
      const cap = hostCap[h]!
      if (hostLower[h]! > cap * (1 + FEASIBILITY_TOLERANCE)) {
        throw new InfeasibleBudgetError({ requiredCrawlsPerDay: hostLower[h]!, budgetCrawlsPerDay: cap, hostIndex: h })
      }
      if (hostUpper[h]! > cap) {
        bindingPages += hostPages[h + 1]!
        bindingHosts++
      } else hostPages[h + 1] = 0
    }

    // Counting sort of the pages of those hosts, so each host is one contiguous run.
    const start = hostPages
    for (let h = 0; h < hostCount; h++) start[h + 1] = start[h]! + start[h + 1]!
    const order = new Int32Array(bindingPages)
    const ascending = new Int32Array(bindingPages)
    const fill = start.slice(0, hostCount)
    let a = 0
    for (let i = 0; i < n; i++) {
      const h = hostIndex[i]!
      if (h < 0 || !(hostUpper[h]! > hostCap[h]!)) continue
      order[fill[h]!++] = i
      ascending[a++] = i
    }
    const pending = new Int32Array(bindingHosts)
    let p = 0
    for (let h = 0; h < hostCount; h++) if (start[h + 1]! > start[h]!) pending[p++] = h
    this.hostLower = hostLower
    this.order = order
    this.start = start
    this.ascending = ascending
    this.pending = pending
  }

  /** Binds every host that can bind. */
  bindAll(): void {
    for (const h of this.pending) this.bind(h)
    this.pending = new Int32Array(0)
  }

  /**
   * Binds the hosts whose pages spend more than C_h at `probe` and sets the others aside as fitting
   * there. `scratch` is a page-indexed buffer.
   */
  bindAbove(probe: number, scratch: Float64Array): void {
    if (this.order.length === 0) return
    this.options.solver.ratesAt({ indices: this.ascending, count: this.ascending.length }, probe, scratch)
    this.pending = this.bindWhere(scratch)
    this.pendingFitAt = probe
  }

  /**
   * After a global solve at λ with rates `rates`: binds the set-aside hosts whose pages spend more
   * than C_h there; returns how many (0 when λ is at least the multiplier they were seen to fit at).
   */
  bindOverspent(lambda: number, rates: Float64Array): number {
    if (this.pending.length === 0 || lambda >= this.pendingFitAt) return 0
    const before = this.pending.length
    this.pending = this.bindWhere(rates)
    this.pendingFitAt = lambda
    return before - this.pending.length
  }

  /** Binds the pending hosts whose pages' `rates` sum above C_h; returns the hosts left pending. */
  private bindWhere(rates: Float64Array): Int32Array {
    const { ascending, pending } = this
    const { hostIndex, hostCap } = this.options
    const hostSum = new Float64Array(hostCap.length)
    for (const i of ascending) hostSum[hostIndex[i]!] = hostSum[hostIndex[i]!]! + rates[i]!
    let kept = 0
    for (const h of pending) {
      if (hostSum[h]! > hostCap[h]!) this.bind(h)
      else pending[kept++] = h
    }
    return pending.subarray(0, kept)
  }

  /** Finds κ_h and lowers the host's pages' upper bounds to their rates there. */
  private bind(h: number): void {
    const { objective, columns, hostCap, solver, hostLambda } = this.options
    const { lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper } = columns
    const { order } = this
    const from = this.start[h]!
    const to = this.start[h + 1]!
    const set: PageSet = { indices: order.subarray(from, to), count: to - from }
    const cap = hostCap[h]!
    if (cap <= this.hostLower[h]!) {
      // κ_h is read off the bounds before they are lowered.
      hostLambda[h] = lambdaHoldingAllAtLower(objective, columns, set)
      for (let k = from; k < to; k++) {
        const i = order[k]!
        if (lower[i]! < upper[i]!) {
          upper[i] = lower[i]!
          solver.upperChanged(i)
        }
      }
      return
    }
    hostLambda[h] = solver.solve(set, cap)
    const rates = solver.out
    for (let k = from; k < to; k++) {
      const i = order[k]!
      if (rates[i]! < upper[i]!) {
        upper[i] = rates[i]!
        solver.upperChanged(i)
      }
    }
  }
}

/**
 * λ of the instance without host caps, solved on a strided sample of the pages (budget above Σl
 * scaled by the sampled fraction); NaN when the sample cannot spend that budget.
 */
function sampledLambda(solver: SetSolver, columns: PageColumns, n: number, sumLower: number, budget: number): number {
  const sample = strideSample({ indices: null, count: n }, PROBE_SAMPLE_PAGES)
  let sampleLower = 0
  let sampleUpper = 0
  for (const i of sample) {
    sampleLower += columns.lowerCrawlsPerDay[i]!
    sampleUpper += columns.upperCrawlsPerDay[i]!
  }
  const target = sampleLower + (budget - sumLower) * (sample.length / n)
  if (!(target > sampleLower && target < sampleUpper)) return Number.NaN
  return solver.solve({ indices: sample, count: sample.length }, target)
}

/**
 * The smallest λ at which every page of the set sits at l (max of μ f'(l) over pages that can move),
 * reported when the budget equals Σ l exactly. Clipped to Number.MAX_VALUE (harmonic pages with l = 0
 * reach l only as λ → ∞); 0 when no page can move.
 */
function lambdaHoldingAllAtLower(objective: Objective, columns: PageColumns, set: PageSet): number {
  const { changesPerDay: delta, importance, lowerCrawlsPerDay: lower, upperCrawlsPerDay: upper, ageShape } = columns
  const { indices, count } = set
  let lambda = 0
  for (let k = 0; k < count; k++) {
    const i = indices === null ? k : indices[k]!
    if (!(upper[i]! > lower[i]!)) continue
    const shape = ageShape === undefined ? Number.POSITIVE_INFINITY : ageShape[i]!
    lambda = Math.max(lambda, marginalUtility(objective, lower[i]!, delta[i]!, importance[i]!, shape))
  }
  return Math.min(lambda, Number.MAX_VALUE)
}

function validate(problem: RateProblem): { n: number; hostCount: number } {
  const { changesPerDay: delta, importance, minCrawlsPerDay: lower, maxCrawlsPerDay: upper } = problem
  const n = delta.length
  if (importance.length !== n || lower.length !== n || upper.length !== n) {
    throw new RangeError(
      `per-page arrays differ in length: ${n}, ${importance.length}, ${lower.length}, ${upper.length}`,
    )
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
    if (!(
      d >= 0 &&
      d < Number.POSITIVE_INFINITY &&
      mu >= 0 &&
      mu < Number.POSITIVE_INFINITY &&
      l >= 0 &&
      l < Number.POSITIVE_INFINITY &&
      u >= l
    )) {
      throw new RangeError(`page ${i}: need finite Δ, μ, l ≥ 0 and u ≥ l, got Δ=${d} μ=${mu} l=${l} u=${u}`)
    }
  }
  const caps = problem.hostMaxCrawlsPerDay
  const hostCount = caps?.length ?? 0
  for (let h = 0; h < hostCount; h++) {
    if (!(caps![h]! >= 0)) throw new RangeError(`host ${h}: cap must be ≥ 0, got ${caps![h]}`)
  }
  const shapes = problem.ageShape
  if (shapes !== undefined) {
    if (shapes.length !== n) throw new RangeError(`ageShape has length ${shapes.length}, expected ${n}`)
    for (let i = 0; i < n; i++)
      if (!(shapes[i]! > 0))
        throw new RangeError(`page ${i}: ageShape must be > 0 (+Infinity for Poisson), got ${shapes[i]}`)
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
