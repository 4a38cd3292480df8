/**
 * The shape of a page's age law (docs/math.md 3.5): which member of the gamma-mixed Poisson family
 * 1 − G(a) = (1 + Δa/β)^{−β} (src/math/renewal/gammaMixed.ts) its crawls support, with β = ∞ (Poisson)
 * unless the evidence says otherwise.
 *
 * The evidence is the page's whole history, kept in O(1) space. When the server reports Last-Modified on
 * at least SHAPE_AGE_COVERAGE of the crawls: the ages (crawl time − Last-Modified) at crawls, a log-bucket
 * histogram (histogram.ts), each with density g(a) = Δ(1 + Δa/β)^{−β−1} (Li, Cline & Loguinov 2017, method
 * M2: ages at crawls are samples of G). The fit profiles that likelihood over a fixed grid of shapes, each
 * maximised over Δ by Newton steps on ln Δ, and keeps the best shape only if it beats Poisson by
 * SHAPE_EVIDENCE_NATS of log-likelihood, the gain first scaled by changes/crawls (ages between two changes
 * repeat one another).
 *
 * Otherwise the change/no-change history alone (src/math/renewal/blindShape.ts): each interval's outcome
 * conditioned on the latest change window before it, which carries the burstiness that one constant crawl
 * interval cannot show through the share of changed intervals; a shape is kept when it beats Poisson by
 * BLIND_EVIDENCE_NATS.
 *
 * When: the fit costs about a millisecond with ages and 2–5 ms blind (more bins when the intervals vary), so
 * it runs on a schedule, not on every crawl: when a page has SHAPE_MIN_INTERVALS intervals, and again whenever
 * its interval count has grown by a factor SHAPE_REFIT_GROWTH since the last fit (about 20 fits over a page's
 * first 1,000 intervals, an amortised cost of about 20–100 µs per crawl). A page's shape is a slow, long-run property of its
 * updates; its rate, which can jump, is tracked by the scheduling estimator on every crawl. The
 * optimiser combines the two: the fitted law's Δ, scaled by how much the scheduling estimate has moved
 * since the fit (index.ts, renewalParameters).
 */
import { histogramPoints, type HistogramBin, type WeightedInterval } from './histogram.ts'
import { blindPoints, type BlindBin } from './blindHistogram.ts'
import { blindShapeProfile, shapeFromProfile } from '../renewal/blindShape.ts'

/** The shapes the fit chooses among, besides Poisson (β = ∞). */
const SHAPE_GRID: readonly number[] = Object.freeze([0.3, 0.4, 0.5, 0.7, 1, 1.5, 2, 3, 5, 8, 13, 20, 40])
/** Log-likelihood (nats) by which the best shape must beat Poisson to be used. */
const SHAPE_EVIDENCE_NATS = 5
/** The first fit waits for this many intervals. */
export const SHAPE_MIN_INTERVALS = 16
/** Refit when the interval count has grown by this factor since the last fit. */
const SHAPE_REFIT_GROWTH = 1.25
/**
 * Log-likelihood (nats) by which the best shape of the blind fit must beat Poisson. Its likelihood models the
 * dependence between successive intervals (blindShape.ts), so under Poisson the gain is a likelihood ratio of
 * independent intervals; 3 nats kept the share of Poisson pages given a shape at 0–1 % (docs/math.md 3.5).
 */
const BLIND_EVIDENCE_NATS = 3
/** Last-Modified must be known on at least this share of crawls for the ages to be used. */
const SHAPE_AGE_COVERAGE = 0.9

/** What the fit reads: the whole history's histograms and Last-Modified coverage. */
interface ShapeEvidence {
  intervals: number
  /** Ages at every crawl whose Last-Modified was known. */
  ageHistogram: readonly HistogramBin[]
  /** Every interval with the change window before it, for the fit without Last-Modified (blindHistogram.ts). */
  blindHistogram: readonly BlindBin[]
  /** X: intervals that saw a change. */
  changes: number
  /** Crawls with a known age (Last-Modified statistics, docs/math.md 1.8). */
  agedCrawls: number
}

interface ShapeFit {
  /** β of the fitted gamma-mixed law, or +Infinity (Poisson). */
  shape: number
  /** Δ of the fitted law, changes per day (that of the Poisson fit when the shape is Poisson). */
  changesPerDay: number
  /** Best log-likelihood of that shape minus Poisson's, nats (≥ 0). */
  evidenceNats: number
  /** Whether the ages (Last-Modified) or the changed intervals carried the changes. */
  usedAges: boolean
}

/**
 * Log-likelihood of the ages and its first two derivatives in u = ln Δ, for shape β (∞ = Poisson):
 * ln g(a) = u − (β + 1) ln(1 + y/β) with y = Δa, d/du = 1 − (β + 1)(y/β)w, d²/du² = −(β + 1)(y/β)w²,
 * w = 1/(1 + y/β).
 */
function logLikelihood(
  ages: readonly WeightedInterval[],
  u: number,
  beta: number,
): { value: number; first: number; second: number } {
  const rate = Math.exp(u)
  const poisson = beta === Number.POSITIVE_INFINITY
  let value = 0
  let first = 0
  let second = 0
  for (const { intervalDays, weight } of ages) {
    const y = rate * intervalDays
    if (poisson) {
      value += weight * (u - y)
      first += weight * (1 - y)
      second -= weight * y
    } else {
      const w = 1 / (1 + y / beta)
      value += weight * (u - (beta + 1) * Math.log1p(y / beta))
      first += weight * (1 - ((beta + 1) * y * w) / beta)
      second -= (weight * (beta + 1) * y * w * w) / beta
    }
  }
  return { value, first, second }
}

/** max over u of the log-likelihood for shape β, by safeguarded Newton from u0. */
function profile(points: readonly WeightedInterval[], beta: number, u0: number): { value: number; u: number } {
  let u = u0
  let current = logLikelihood(points, u, beta)
  for (let iteration = 0; iteration < 60; iteration++) {
    let step = current.second < 0 ? -current.first / current.second : Math.sign(current.first)
    step = Math.max(-2, Math.min(2, step))
    if (!Number.isFinite(step)) break
    let next = logLikelihood(points, u + step, beta)
    // Halve steps that do not increase the likelihood.
    for (let k = 0; k < 30 && !(next.value >= current.value); k++) {
      step /= 2
      next = logLikelihood(points, u + step, beta)
    }
    if (!(next.value >= current.value)) break
    u += step
    current = next
    if (Math.abs(step) < 1e-9) break
  }
  return { value: current.value, u }
}

/** Whether a page's history is due for a (re)fit (see the module comment). */
export function shapeFitDue(intervals: number, intervalsAtLastFit: number): boolean {
  return intervals >= SHAPE_MIN_INTERVALS && intervals >= SHAPE_REFIT_GROWTH * intervalsAtLastFit
}

/**
 * The shape the evidence supports (see the module comment). `startChangesPerDay` is a rough rate to
 * start Newton from (the page's Poisson MLE). Poisson unless some shape beats it by
 * SHAPE_EVIDENCE_NATS; Poisson also when there are no changes or no unchanged intervals to tell.
 */
export function fitShape(evidence: ShapeEvidence, startChangesPerDay: number): ShapeFit {
  const usedAges =
    evidence.intervals > 0 &&
    evidence.agedCrawls >= SHAPE_AGE_COVERAGE * evidence.intervals &&
    evidence.ageHistogram.length > 0
  const fallback = startChangesPerDay > 0 && Number.isFinite(startChangesPerDay) ? startChangesPerDay : 1
  const poisson: ShapeFit = { shape: Number.POSITIVE_INFINITY, changesPerDay: fallback, evidenceNats: 0, usedAges }
  if (evidence.changes <= 0 || evidence.changes >= evidence.intervals) return poisson
  if (!usedAges) {
    const blind = blindShapeProfile(blindPoints(evidence.blindHistogram), fallback)
    if (blind === null) return poisson
    const best = shapeFromProfile(blind.gainNats, BLIND_EVIDENCE_NATS)
    if (best.index < 0)
      return { ...poisson, changesPerDay: blind.poissonChangesPerDay, evidenceNats: Math.max(0, best.evidenceNats) }
    return {
      shape: best.shape,
      changesPerDay: blind.changesPerDay[best.index]!,
      evidenceNats: best.evidenceNats,
      usedAges,
    }
  }
  const points = histogramPoints(evidence.ageHistogram)
  const base = profile(points, Number.POSITIVE_INFINITY, Math.log(fallback))
  let best = { shape: Number.POSITIVE_INFINITY, value: base.value, u: base.u }
  let u = base.u
  // From Poisson down the grid, each fit starting where the previous one ended.
  for (let k = SHAPE_GRID.length - 1; k >= 0; k--) {
    const beta = SHAPE_GRID[k]!
    const fit = profile(points, beta, u)
    u = fit.u
    if (fit.value > best.value) best = { shape: beta, value: fit.value, u: fit.u }
  }
  // The ages of successive crawls between two changes repeat one another: about one independent age
  // per change, so their likelihood ratio is scaled down to that many.
  const scale = Math.min(1, evidence.changes / Math.max(1, evidence.agedCrawls))
  const evidenceNats = (best.value - base.value) * scale
  if (!(evidenceNats >= SHAPE_EVIDENCE_NATS))
    return { ...poisson, changesPerDay: Math.exp(base.u), evidenceNats: Math.max(0, evidenceNats) }
  return { shape: best.shape, changesPerDay: Math.exp(best.u), evidenceNats, usedAges }
}
