/**
 * A change-rate prior learned from the fleet (empirical Bayes, docs/math.md 1.12).
 *
 * Each page's change rate Δ is modelled as drawn from a gamma law Gamma(α, β) shared by a group of pages (a
 * host), density β^α Δ^{α−1} e^{−βΔ}/Γ(α), mean α/β. A page's crawl intervals are interval-censored
 * observations of a Poisson process: an interval of τ days saw a change with probability 1 − e^{−Δτ}. With U
 * the total length of the unchanged intervals and τ_j the changed ones, the page's likelihood is
 *
 *     L(Δ) = e^{−ΔU} Π_j (1 − e^{−Δτ_j}).
 *
 * - The posterior of Δ is prior × L; its mean is the page's scheduling estimate. With no interval it is the
 *   prior mean α/β; as intervals accumulate L narrows around the MLE and the prior's weight vanishes.
 * - The prior is fitted by maximising the marginal likelihood Π_i ∫ Gamma(Δ; α, β) L_i(Δ) dΔ over the
 *   group's pages (type-II maximum likelihood). A host's fit adds a log-normal hyperprior centred on the
 *   fleet-wide fit, so a host with few pages stays near the fleet and one with many follows its own pages.
 *
 * The integrals are sums over a fixed grid of rates, log-spaced over GRID_MIN … GRID_MAX changes per day, plus
 * the part below the grid in closed form (there L(Δ) ≈ L(Δ_0)(Δ/Δ_0)^X, X the number of changes, and
 * e^{−βΔ} ≈ 1). Pure: no I/O.
 */
import { goldenSectionMax } from '../numbers.ts'
import { histogramPoints, type HistogramBin, type WeightedInterval } from './histogram.ts'

/** A gamma law on the change rate: shape α (no unit) and rate β (days); mean α/β changes per day. */
export interface GammaPrior {
  shape: number
  rateDays: number
}

/** What a page's crawl intervals say about its rate: Σ unchanged days and the changed intervals. */
export interface RateEvidence {
  unchangedDays: number
  /** Changed intervals (days), each with a weight (a count; histogram points carry fractions). */
  changed: readonly WeightedInterval[]
}

/** The evidence of a histogram of changed intervals and the total of unchanged days (state.ts). */
export function histogramEvidence(unchangedDays: number, changedHistogram: readonly HistogramBin[]): RateEvidence {
  return { unchangedDays, changed: histogramPoints(changedHistogram) }
}

/** The grid of rates, changes per day. */
const GRID_MIN = 1e-5
const GRID_MAX = 1e4
const GRID_POINTS = 109
const LOG_GRID_MIN = Math.log(GRID_MIN)
/** Spacing of the grid in ln Δ (a factor of about 1.21). */
const GRID_STEP = (Math.log(GRID_MAX) - LOG_GRID_MIN) / (GRID_POINTS - 1)
const GRID = Float64Array.from({ length: GRID_POINTS }, (_, g) => Math.exp(LOG_GRID_MIN + g * GRID_STEP))

/** Shapes and means a fit may take. */
const MIN_SHAPE = 0.05
const MAX_SHAPE = 30
const MIN_MEAN = 1e-4
const MAX_MEAN = 1e3

/** ln Γ(x) for x > 0 (Lanczos, g = 7, relative error below 1e-13). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x)
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  const z = x - 1
  let a = c[0]!
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** ln(1 − e^{−x}) for x > 0, accurate for small and large x. */
function logOneMinusExpMinus(x: number): number {
  return x < 0.693 ? Math.log(-Math.expm1(-x)) : Math.log1p(-Math.exp(-x))
}

/** ln L(Δ) of docs/math.md 1.12 (−∞ when a changed interval has length 0 is impossible: such an interval says nothing). */
function logLikelihood(evidence: RateEvidence, changesPerDay: number): number {
  let sum = -changesPerDay * evidence.unchangedDays
  for (const { intervalDays, weight } of evidence.changed) {
    if (intervalDays > 0) sum += weight * logOneMinusExpMinus(changesPerDay * intervalDays)
  }
  return sum
}

/** Σ of the changed intervals' weights: X, the number of changes. */
function changeCount(evidence: RateEvidence): number {
  let x = 0
  for (const { intervalDays, weight } of evidence.changed) if (intervalDays > 0) x += weight
  return x
}

/**
 * A page's likelihood for the fit: on the grid (as L/max L, with ln max L and X for the part below the grid),
 * or, when it is too narrow for the grid (most of its mass within one grid step), as a point at its maximum:
 * then ∫ Gamma(Δ) L(Δ) dΔ ≈ Gamma(Δ̂) ∫ L, and only Gamma(Δ̂) depends on the prior.
 */
type GridLikelihood =
  { kind: 'grid'; relative: Float64Array; logMax: number; changes: number } | { kind: 'point'; changesPerDay: number }

/** A grid point holding more than this share of the mass makes a likelihood (or posterior) too narrow for the grid. */
const NARROW_SHARE = 0.3

function gridLikelihood(evidence: RateEvidence): GridLikelihood {
  const relative = new Float64Array(GRID_POINTS)
  let logMax = Number.NEGATIVE_INFINITY
  for (let g = 0; g < GRID_POINTS; g++) {
    const value = logLikelihood(evidence, GRID[g]!)
    relative[g] = value
    if (value > logMax) logMax = value
  }
  let total = 0
  let top = 0
  let topIndex = 0
  for (let g = 0; g < GRID_POINTS; g++) {
    relative[g] = Math.exp(relative[g]! - logMax)
    const mass = relative[g]! * GRID[g]!
    total += mass
    if (mass > top) {
      top = mass
      topIndex = g
    }
  }
  if (top > NARROW_SHARE * total && topIndex > 0 && topIndex < GRID_POINTS - 1) {
    const u = maximiseOnLine((x) => logLikelihood(evidence, Math.exp(x)), topIndex)
    return { kind: 'point', changesPerDay: Math.exp(u) }
  }
  return { kind: 'grid', relative, logMax, changes: changeCount(evidence) }
}

/** The maximum of a unimodal f(u) within one grid step of ln GRID[index] (golden-section search). */
function maximiseOnLine(f: (u: number) => number, index: number): number {
  const lo = LOG_GRID_MIN + (index - 1) * GRID_STEP
  const hi = LOG_GRID_MIN + (index + 1) * GRID_STEP
  const bracket = goldenSectionMax(f, lo, hi, 40)
  return (bracket.low + bracket.high) / 2
}

/** A page's posterior: its scheduling estimate, and the gamma law with the posterior's mean and variance. */
interface RatePosterior {
  /** The posterior mean. */
  changesPerDay: number
  /** exp E[ln Δ]: the posterior's geometric mean. */
  geometricChangesPerDay: number
  /** 1 / E[1/Δ]: the posterior's harmonic mean (the rate whose freshness a page far faster than its crawls gets on average). */
  harmonicChangesPerDay: number
  /** Moment-matched gamma law of the posterior (its shape measures how sure the estimate is). */
  gamma: GammaPrior
  /** The central 90 % credible interval of the rate: the posterior's 5 % and 95 % quantiles, changes per day. */
  ci90: [number, number]
}

/**
 * The q-quantile of a distribution given on ascending points with weights summing to 1: each point's weight is
 * spread evenly in ln Δ over its cell (halfway to each neighbour).
 */
function quantile(rates: Float64Array, weights: Float64Array, q: number): number {
  const n = rates.length
  const u = (k: number) => Math.log(rates[k]!)
  const edge = (k: number) =>
    k === 0 ? u(0) - (u(1) - u(0)) / 2 : k === n ? u(n - 1) + (u(n - 1) - u(n - 2)) / 2 : (u(k - 1) + u(k)) / 2
  let cumulative = 0
  for (let k = 0; k < n; k++) {
    const next = cumulative + weights[k]!
    if (next >= q && weights[k]! > 0) {
      const t = (q - cumulative) / weights[k]!
      return Math.exp(edge(k) + t * (edge(k + 1) - edge(k)))
    }
    cumulative = next
  }
  return rates[n - 1]!
}

/** The 90 % credible interval of points from posteriorPoints. */
function credibleInterval(points: { rates: Float64Array; weights: Float64Array }): [number, number] {
  return [quantile(points.rates, points.weights, 0.05), quantile(points.rates, points.weights, 0.95)]
}

/** ln of the prior density × Δ (the Jacobian of ln Δ) at Δ = e^u. */
function logPriorInLogRate(prior: GammaPrior, u: number): number {
  const { shape: a, rateDays: b } = prior
  return a * Math.log(b) - logGamma(a) + a * u - b * Math.exp(u)
}

/** A narrow posterior is integrated on a fine grid this many grid steps either side of its peak, with this many points. */
const FINE_HALF_WIDTH_STEPS = 6
const FINE_POINTS = 121
/** At most this many zooms into a narrow posterior. */
const MAX_ZOOMS = 6

/**
 * The posterior on points of ln Δ with normalised weights: the grid plus the part below it (one point at Δ_0/2),
 * or a fine grid around the peak when the posterior is too narrow for the grid (NARROW_SHARE).
 */
function posteriorPoints(
  evidence: RateEvidence,
  prior: GammaPrior,
): { rates: Float64Array; weights: Float64Array; belowInverse?: number } {
  const logPost = (u: number) => logPriorInLogRate(prior, u) + logLikelihood(evidence, Math.exp(u))
  const grid = Float64Array.from({ length: GRID_POINTS }, (_, g) => LOG_GRID_MIN + g * GRID_STEP)
  const coarse = Float64Array.from(grid, logPost)
  let top = 0
  for (let g = 1; g < GRID_POINTS; g++) if (coarse[g]! > coarse[top]!) top = g
  let total = 0
  for (let g = 0; g < GRID_POINTS; g++) total += Math.exp(coarse[g]! - coarse[top]!)
  if (1 > NARROW_SHARE * total && top > 0 && top < GRID_POINTS - 1) {
    // Narrow: zoom in around the peak until the posterior spans many points.
    let center = LOG_GRID_MIN + top * GRID_STEP
    let halfWidth = FINE_HALF_WIDTH_STEPS * GRID_STEP
    for (let zoom = 0; ; zoom++) {
      const step = (2 * halfWidth) / (FINE_POINTS - 1)
      const fine = normalised(
        Float64Array.from({ length: FINE_POINTS }, (_, k) => center - halfWidth + k * step),
        logPost,
      )
      // The posterior's spread in ln Δ: when it covers fewer than 10 points, zoom to ±6 spreads around its mean.
      let meanU = 0
      let squareU = 0
      for (let k = 0; k < FINE_POINTS; k++) {
        const uk = center - halfWidth + k * step
        meanU += fine.weights[k]! * uk
        squareU += fine.weights[k]! * uk * uk
      }
      const sd = Math.sqrt(Math.max(0, squareU - meanU * meanU))
      if (sd >= 10 * step || zoom === MAX_ZOOMS || !(sd > 0)) return fine
      center = meanU
      halfWidth = 6 * sd
    }
  }
  const points = normalised(grid, logPost)
  // Below the grid: ∫_0^{Δ_0} (prior × L)(Δ) dΔ ≈ (prior × L × Δ)(Δ_0)/(α + X), relative to the grid's integral.
  const below = Math.exp(coarse[0]! - points.logMax) / (prior.shape + changeCount(evidence)) / points.unnormalisedTotal
  const rates = new Float64Array(GRID_POINTS + 1)
  const weights = new Float64Array(GRID_POINTS + 1)
  rates.set(points.rates, 1)
  rates[0] = GRID_MIN / 2
  // E[1/Δ] below the grid, where the density goes as Δ^{α+X−1}: (α + X)/((α + X − 1)Δ_0), infinite for α + X ≤ 1.
  const power = prior.shape + changeCount(evidence)
  const belowInverse = power > 1 ? power / ((power - 1) * GRID_MIN) : Number.POSITIVE_INFINITY
  weights[0] = below / (1 + below)
  for (let g = 0; g < GRID_POINTS; g++) weights[g + 1] = points.weights[g]! / (1 + below)
  return { rates, weights, belowInverse }
}

/**
 * Trapezoid weights of exp(logDensity) on equally spaced points u, normalised to sum 1; the rates e^u; and the
 * integral before normalisation, relative to e^{logMax}.
 */
function normalised(
  u: Float64Array,
  logDensity: (u: number) => number,
): { rates: Float64Array; weights: Float64Array; unnormalisedTotal: number; logMax: number } {
  const values = Float64Array.from(u, logDensity)
  let logMax = Number.NEGATIVE_INFINITY
  for (const v of values) if (v > logMax) logMax = v
  const step = u.length > 1 ? u[1]! - u[0]! : 1
  const weights = Float64Array.from(values, (v, k) => (k === 0 || k === u.length - 1 ? 0.5 : 1) * Math.exp(v - logMax))
  let total = 0
  for (const w of weights) total += w
  for (let k = 0; k < weights.length; k++) weights[k] = weights[k]! / total
  return { rates: Float64Array.from(u, Math.exp), weights, unnormalisedTotal: total * step, logMax }
}

/**
 * The posterior of a page's change rate under `prior` given its evidence (docs/math.md 1.12). With no
 * evidence it is the prior itself.
 */
export function ratePosterior(evidence: RateEvidence, prior: GammaPrior): RatePosterior {
  const priorMean = prior.shape / prior.rateDays
  const noEvidence = evidence.unchangedDays <= 0 && changeCount(evidence) === 0
  const points = posteriorPoints(noEvidence ? { unchangedDays: 0, changed: [] } : evidence, prior)
  const none = {
    changesPerDay: priorMean,
    geometricChangesPerDay: Math.exp(digamma(prior.shape)) / prior.rateDays,
    harmonicChangesPerDay: prior.shape > 1 ? (prior.shape - 1) / prior.rateDays : 0,
    gamma: prior,
    ci90: credibleInterval(points),
  }
  if (noEvidence) return none
  const { rates, weights, belowInverse } = points
  let m1 = 0
  let m2 = 0
  let logMean = 0
  let inverse = 0
  for (let k = 0; k < rates.length; k++) {
    // The point below the grid stands for a law there, whose E[1/Δ] is not 1/(its rate).
    if (k === 0 && belowInverse !== undefined) inverse += weights[0]! > 0 ? weights[0]! * belowInverse : 0
    else inverse += weights[k]! / rates[k]!
    m1 += weights[k]! * rates[k]!
    m2 += weights[k]! * rates[k]! * rates[k]!
    logMean += weights[k]! * Math.log(rates[k]!)
  }
  if (!(m1 > 0) || !Number.isFinite(m2)) return none
  const variance = Math.max(m2 - m1 * m1, m1 * m1 * 1e-6)
  return {
    changesPerDay: m1,
    geometricChangesPerDay: Math.exp(logMean),
    harmonicChangesPerDay: 1 / inverse,
    gamma: { shape: (m1 * m1) / variance, rateDays: m1 / variance },
    ci90: credibleInterval(points),
  }
}

/** ψ(x), the digamma function, for x > 0 (recurrence to x ≥ 6, then the asymptotic series). */
function digamma(x: number): number {
  let result = 0
  while (x < 6) {
    result -= 1 / x
    x += 1
  }
  const f = 1 / (x * x)
  return result + Math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))
}

/** Weights of the grid points under a prior, for the marginal likelihood of many pages at once. */
function priorWeights(prior: GammaPrior): { weights: Float64Array; below: number } {
  const { shape: a, rateDays: b } = prior
  const logNorm = a * Math.log(b) - logGamma(a)
  const weights = new Float64Array(GRID_POINTS)
  for (let g = 0; g < GRID_POINTS; g++) {
    const edge = g === 0 || g === GRID_POINTS - 1 ? 0.5 : 1
    weights[g] = edge * GRID_STEP * Math.exp(logNorm + a * Math.log(GRID[g]!) - b * GRID[g]!)
  }
  return { weights, below: Math.exp(logNorm + a * LOG_GRID_MIN) }
}

/** Σ_i ln ∫ Gamma(Δ; prior) L_i(Δ) dΔ over pages (each up to its constant logMax). */
function logMarginal(pages: readonly GridLikelihood[], prior: GammaPrior): number {
  const { weights, below } = priorWeights(prior)
  let sum = 0
  for (const like of pages) {
    if (like.kind === 'point') {
      sum += logPriorInLogRate(prior, Math.log(like.changesPerDay))
      continue
    }
    let m = (below * like.relative[0]!) / (prior.shape + like.changes)
    for (let g = 0; g < GRID_POINTS; g++) m += weights[g]! * like.relative[g]!
    sum += Math.log(m > 1e-300 ? m : 1e-300)
  }
  return sum
}

/** A normal hyperprior on (ln α, ln mean): centre and standard deviations. */
interface Hyperprior {
  center: GammaPrior
  logShapeSd: number
  logMeanSd: number
}

const toPrior = (logShape: number, logMean: number): GammaPrior => {
  const shape = Math.exp(logShape)
  return { shape, rateDays: shape / Math.exp(logMean) }
}

/**
 * Maximises Σ ln marginal (+ the hyperprior's log-density) over (ln α, ln mean) by Nelder–Mead, started at
 * `start`, within MIN/MAX_SHAPE and MIN/MAX_MEAN.
 */
function maximise(
  pages: readonly GridLikelihood[],
  start: GammaPrior,
  hyper: Hyperprior | null,
  maxIterations = 200,
): GammaPrior {
  const lo = [Math.log(MIN_SHAPE), Math.log(MIN_MEAN)]
  const hi = [Math.log(MAX_SHAPE), Math.log(MAX_MEAN)]
  const hyperCenter = hyper
    ? [Math.log(hyper.center.shape), Math.log(hyper.center.shape / hyper.center.rateDays)]
    : null
  const objective = (p: number[]): number => {
    for (let k = 0; k < 2; k++) if (p[k]! < lo[k]! || p[k]! > hi[k]!) return Number.POSITIVE_INFINITY
    let value = -logMarginal(pages, toPrior(p[0]!, p[1]!))
    if (hyper && hyperCenter) {
      const ds = (p[0]! - hyperCenter[0]!) / hyper.logShapeSd
      const dm = (p[1]! - hyperCenter[1]!) / hyper.logMeanSd
      value += 0.5 * (ds * ds + dm * dm)
    }
    return value
  }
  const s0 = [Math.log(start.shape), Math.log(start.shape / start.rateDays)]
  let simplex = [s0, [s0[0]! + 0.5, s0[1]!], [s0[0]!, s0[1]! + 0.7]].map((p) => ({ p, f: objective(p) }))
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    simplex.sort((x, y) => x.f - y.f)
    const [best, mid, worst] = simplex as [(typeof simplex)[0], (typeof simplex)[0], (typeof simplex)[0]]
    if (Math.abs(worst.f - best.f) < 1e-7 * (1 + Math.abs(best.f)) && spread(simplex.map((v) => v.p)) < 1e-4) break
    const centroid = [0, 1].map((k) => (best.p[k]! + mid.p[k]!) / 2)
    const along = (t: number) => centroid.map((c, k) => c + t * (worst.p[k]! - c))
    const reflected = along(-1)
    const fr = objective(reflected)
    if (fr < best.f) {
      const expanded = along(-2)
      const fe = objective(expanded)
      simplex[2] = fe < fr ? { p: expanded, f: fe } : { p: reflected, f: fr }
    } else if (fr < mid.f) {
      simplex[2] = { p: reflected, f: fr }
    } else {
      const contracted = along(0.5)
      const fc = objective(contracted)
      if (fc < worst.f) simplex[2] = { p: contracted, f: fc }
      else
        simplex = simplex.map((v, k) => {
          if (k === 0) return v
          const p = v.p.map((x, j) => best.p[j]! + 0.5 * (x - best.p[j]!))
          return { p, f: objective(p) }
        })
    }
  }
  simplex.sort((x, y) => x.f - y.f)
  return toPrior(simplex[0]!.p[0]!, simplex[0]!.p[1]!)
}

function spread(points: readonly number[][]): number {
  let max = 0
  for (const p of points) for (const q of points) max = Math.max(max, Math.abs(p[0]! - q[0]!), Math.abs(p[1]! - q[1]!))
  return max
}

/** The fleet's prior and each host's. */
export interface FleetPriors {
  fleet: GammaPrior
  hosts: Record<string, GammaPrior>
  /** When they were fitted (epoch ms); absent in priors stored before it was kept. */
  fittedAtMs?: number
  /** How many pages had evidence when they were fitted. */
  fittedPages?: number
}

/** The prior before anything is known: mean `defaultChangesPerDay`, shape 0.5 (wide: four decades hold most of it). */
export function vaguePrior(defaultChangesPerDay: number): GammaPrior {
  const shape = 0.5
  return { shape, rateDays: shape / defaultChangesPerDay }
}

/**
 * How far a host's prior may stray from the fleet's before its own pages must pay for it: standard
 * deviations of ln α and ln mean in the hyperprior (a factor e ≈ 2.7 in shape, e² ≈ 7.4 in mean).
 */
const HOST_LOG_SHAPE_SD = 1
const HOST_LOG_MEAN_SD = 2
/**
 * The fleet's own fit has a weak hyperprior around the vague prior, so that a fit from the first few intervals
 * of a young fleet cannot collapse onto a sure, extreme rate: a factor e^1.5 ≈ 4.5 in shape, e^3 ≈ 20 in mean.
 */
const FLEET_LOG_SHAPE_SD = 1.5
const FLEET_LOG_MEAN_SD = 3

/** The fleet's own fit reads at most this many pages (an even sample of those given). */
const MAX_FLEET_FIT_PAGES = 5_000
/**
 * A host gets a prior of its own only with at least this many pages with evidence (one: on the replayed
 * histories, leaving hosts of one or two pages at the fleet's prior cost up to 0.01 of freshness).
 */
const MIN_HOST_FIT_PAGES = 1
/**
 * A host's fit starts at the fleet's, to which the hyperprior keeps it close: a bounded number of Nelder–Mead
 * steps suffice, and they bound a refit's time on a fleet of many small hosts.
 */
const HOST_FIT_ITERATIONS = 40

/**
 * Fits the fleet-wide prior to every page with evidence (with a weak hyperprior centred on `vague`), then each
 * host's prior with the fleet's as hyperprior centre (docs/math.md 1.12). Pages without evidence are ignored; a
 * host with fewer than MIN_HOST_FIT_PAGES of them keeps the fleet's prior (it is not listed). `start` is where the search begins (the previous
 * fit, or the vague prior).
 */
export function fitFleetPriors(
  pages: readonly { host: string; evidence: RateEvidence }[],
  start: GammaPrior,
  vague: GammaPrior = start,
): FleetPriors {
  const byHost = new Map<string, GridLikelihood[]>()
  const all: GridLikelihood[] = []
  for (const { host, evidence } of pages) {
    if (evidence.unchangedDays <= 0 && changeCount(evidence) === 0) continue
    const like = gridLikelihood(evidence)
    all.push(like)
    let list = byHost.get(host)
    if (!list) byHost.set(host, (list = []))
    list.push(like)
  }
  if (all.length === 0) return { fleet: start, hosts: {} }
  // The fleet's two parameters need far fewer pages than the hosts' fits: an even sample of them.
  const stride = Math.ceil(all.length / MAX_FLEET_FIT_PAGES)
  const fleetSample = stride <= 1 ? all : all.filter((_, k) => k % stride === 0)
  const fleet = maximise(fleetSample, start, {
    center: vague,
    logShapeSd: FLEET_LOG_SHAPE_SD,
    logMeanSd: FLEET_LOG_MEAN_SD,
  })
  const hyper: Hyperprior = { center: fleet, logShapeSd: HOST_LOG_SHAPE_SD, logMeanSd: HOST_LOG_MEAN_SD }
  const hosts: Record<string, GammaPrior> = {}
  for (const [host, list] of byHost)
    if (list.length >= MIN_HOST_FIT_PAGES) hosts[host] = maximise(list, fleet, hyper, HOST_FIT_ITERATIONS)
  return { fleet, hosts }
}

/** The prior of a host: its own fit, else the fleet's. */
export function priorForHost(priors: FleetPriors, host: string): GammaPrior {
  return priors.hosts[host] ?? priors.fleet
}
