/**
 * Update-interval distribution under blind sampling (docs/math.md 2.2; Li, Cline & Loguinov 2017).
 *
 * Updates form a renewal process with inter-update CDF F_U and rate μ. The age A at a crawl time
 * independent of the updates has the residual CDF G_U(x) = μ ∫_0^x (1 − F_U(y)) dy. The methods
 * M2, M4, M5 and M6 estimate G_U from crawls; F_U and μ follow from g_U = μ(1 − F_U) where the data
 * identify g_U near 0. M1 and M3 are the estimators of earlier work, kept for comparison: they
 * target F_U directly and are biased unless the updates are Poisson.
 */
import { countAtMost, median } from './numbers.ts'

type AgeCdfMethod = 'M2' | 'M4' | 'M5' | 'M6'
type PriorWorkMethod = 'M1' | 'M3'

interface AgeCdfPoint {
  ageDays: number
  cdf: number
}

interface IntervalCdfPoint {
  intervalDays: number
  cdf: number
}

export interface AgeCdf {
  method: AgeCdfMethod
  /** Estimates of G_U at increasing ages (all > 0). */
  points: AgeCdfPoint[]
  /** Crawl interval Δ when the points are its multiples (M4, M5: G_U is known only there), else null. */
  latticeDays: number | null
  /** Observations behind the curve: ages (M2), chain values (M4), crawl intervals (M5, M6). */
  samples: number
  /**
   * 1/μ with μ = g_U(0); null when the data do not identify the slope of G_U at 0: no change seen,
   * every crawl saw one, or (M4, M5) the crawl interval is too long next to the update intervals.
   */
  meanUpdateIntervalDays: number | null
  /**
   * Upper bound of 1/μ from the first point: G_U is concave, so μ ≥ G_U(x)/x. Null without a
   * change. With a constant interval this is E[D_3] = Δ/G_U(Δ), the mean that M3 reports.
   */
  meanUpdateIntervalBoundDays: number | null
  /** CV of U from E[A] = E[U²] μ / 2: CV² = 2 μ E[A] − 1; null when μ or E[A] is not available. */
  coefficientOfVariation: number | null
}

/** M1 or M3: the CDF earlier work reported as F_U (biased unless the updates are Poisson). */
interface PriorWorkCdf {
  method: PriorWorkMethod
  points: IntervalCdfPoint[]
  /** Mean of the retained samples: the E[U] earlier work reported. */
  meanUpdateIntervalDays: number
  samples: number
}

export interface AgeCrawl {
  atDays: number
  /** Whether the page changed since the previous crawl; null when unknown. */
  changed: boolean | null
  /** Age of the content at this crawl (crawl time − Last-Modified), days; null when unknown. */
  ageDays: number | null
}

interface AgeCdfOptions {
  /** Largest age (M2, M4, M5) or lag (M6) of the curve, days. Defaults per method. */
  maxLagDays?: number
  /** Points of the curve (M2, M6) or largest multiple of the interval (M4, M5). Defaults grow with the data. */
  bins?: number
}

/** Fewer usable crawls than this give no curve. */
export const MIN_CRAWLS = 10
/** M2 is used when at least this share of crawls carries an age ("most crawls"). */
const M2_MIN_AGE_SHARE = 0.5
/** Crawl intervals count as constant (M4) when their coefficient of variation is below this. */
const M4_MAX_INTERVAL_CV = 0.05
/** Largest multiple of Δ on an M4 or M5 curve by default. */
const LATTICE_DEFAULT_POINTS = 50
/** M6 default lag: this many mean crawl intervals, and at most half the observed span. */
const M6_DEFAULT_LAG_INTERVALS = 30
/** M6 work cap (pairs visited), keeping it O(n · lag) with a bounded lag. */
const M6_MAX_PAIRS = 4_000_000
/**
 * Points of the M2 curve (the empirical CDF of the ages, exact at every point): 50 · (n/1000)^{1/5},
 * within [50, 400], so that F_U's differences can use finer steps as the data grow. M6's bins: m6Bins.
 */
const CURVE_BINS_AT_1000 = 50
const CURVE_MAX_BINS = 400
const M6_MIN_BINS = 50
const M6_WIDTH_FACTOR = 1.85
/**
 * g_U(0) is fitted on ages or lags up to where G_U reaches a level that shrinks with the data,
 * L = 0.3 · (n/16000)^{−1/6} within [0.05, 0.3]: the fit's bias grows with the range squared, its
 * noise with 1/(n · range²)^{1/2}, so the error keeps falling as n grows.
 */
const RATE_FIT_LEVEL = 0.3
const RATE_FIT_LEVEL_FROM = 16000
const RATE_FIT_MIN_LEVEL = 0.05
/**
 * Lattice curves (M4, M5) identify g_U(0) when at least two multiples of Δ have G_U ≤ 0.45 (for
 * Poisson updates μΔ ≤ 0.3): the slope through the origin and those points is then within about
 * 5 % for exponential and Lomax updates. The lattice does not refine with more data, so neither does
 * this level.
 */
const LATTICE_RATE_LEVEL = 0.45
const LATTICE_RATE_MIN_POINTS = 2
/** Bins of M6's pass over short lags that locates the range of the fit of g_U(0). */
const RATE_SEARCH_BINS = 20
/** Ages (M2) or pairs (M6) below the fit range needed to fit g_U(0). */
const MIN_RATE_FIT_SAMPLES = 20
/** E[A] from the curve needs the curve to reach this CDF value (the tail beyond is dropped). */
const MEAN_AGE_MIN_CDF = 0.98

export function validCrawls(crawls: readonly AgeCrawl[]): AgeCrawl[] {
  return crawls.filter((c) => Number.isFinite(c.atDays)).sort((a, b) => a.atDays - b.atDays)
}

function knownAge(c: AgeCrawl): c is AgeCrawl & { ageDays: number } {
  return c.ageDays !== null && Number.isFinite(c.ageDays) && c.ageDays >= 0
}

/** Points of the M2 curve for n ages. */
function defaultCurveBins(n: number): number {
  return Math.max(
    CURVE_BINS_AT_1000,
    Math.min(CURVE_MAX_BINS, Math.round(CURVE_BINS_AT_1000 * Math.pow(n / 1000, 0.2))),
  )
}

/** CDF level up to which g_U(0) is fitted, for n samples. */
function rateFitLevel(n: number): number {
  return Math.max(
    RATE_FIT_MIN_LEVEL,
    Math.min(RATE_FIT_LEVEL, RATE_FIT_LEVEL * Math.pow(Math.max(n, 1) / RATE_FIT_LEVEL_FROM, -1 / 6)),
  )
}

// ---------------------------------------------------------------- M2

/**
 * M2 (Last-Modified known): empirical CDF of the ages at all crawls, on equally spaced ages up to
 * maxLagDays (default: the 99th percentile of the ages). μ = g_U(0) from the ages themselves (rateFromAges).
 */
export function ageCdfM2(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const ages = crawls
    .filter(knownAge)
    .map((c) => c.ageDays)
    .sort((a, b) => a - b)
  const n = ages.length
  if (n < MIN_CRAWLS) return null
  const bins = binsOption(options, defaultCurveBins(n))
  const meanAge = ages.reduce((a, b) => a + b, 0) / n
  const maxAge = positiveOr(options.maxLagDays, ages[Math.min(n - 1, Math.floor(0.99 * n))]!)
  const points: AgeCdfPoint[] = []
  if (maxAge > 0) {
    for (let k = 1; k <= bins; k++) {
      const ageDays = (maxAge * k) / bins
      points.push({ ageDays, cdf: countAtMost(ages, ageDays) / n })
    }
  }
  return summarise('M2', points, { latticeDays: null, samples: n, rate: rateFromAges(ages), meanAgeDays: meanAge })
}

/**
 * g_U(0) from sorted ages: on [0, x0], where the empirical CDF reaches rateFitLevel(n), the age
 * density is taken as linear, g(x) = a + c·x, and a, c match the count and the sum of the ages
 * below x0 (a boundary-corrected local-linear estimate of the density at 0), within
 * slopeWithinModel's range. Null with fewer than 20 ages below x0 or none positive.
 */
function rateFromAges(sortedAges: readonly number[], level = rateFitLevel(sortedAges.length)): number | null {
  const n = sortedAges.length
  if (n === 0) return null
  const k = Math.min(n - 1, Math.max(1, Math.ceil(level * n)))
  const x0 = sortedAges[k]!
  if (!(x0 > 0)) return null
  let count = 0
  let sum = 0
  for (const a of sortedAges) {
    if (a > x0) break
    count++
    sum += a
  }
  const m0 = count / n
  const m1 = sum / n
  if (m0 >= 1 || count < MIN_RATE_FIT_SAMPLES) return null
  const slope = (12 * (m1 - (m0 * x0) / 2)) / (x0 * x0 * x0)
  return slopeWithinModel((m0 - (slope * x0 * x0) / 2) / x0, m0 / x0)
}

/**
 * Least-squares fits of g_U(0) assume that on [0, x0] G_U is concave and non-decreasing, which holds
 * for G_U = μ ∫(1 − F_U): then G(x0)/x0 ≤ g(0) ≤ 2 G(x0)/x0 (a quadratic through the origin with
 * G′(x0) ≥ 0, or a linear density that stays ≥ 0). Clamping to that range keeps a few noisy points
 * from producing absurd rates on short histories.
 */
function slopeWithinModel(fitted: number, meanSlope: number): number | null {
  if (!(meanSlope > 0) || !Number.isFinite(meanSlope)) return null
  const rate = Math.min(2 * meanSlope, Math.max(meanSlope, Number.isFinite(fitted) ? fitted : meanSlope))
  return rate > 0 ? rate : null
}

// ---------------------------------------------------------------- M4 and M5 (constant interval)

interface LatticeChain {
  intervalDays: number
  /**
   * a_j for each crawl from the first seen change on: a_j = Δ if crawl j saw a change, else
   * a_{j−1} + Δ; the chain restarts after a crawl with unknown change information.
   */
  values: number[]
}

/**
 * The M4 chain of a crawl sequence, with Δ the median interval. The chain counts crawl intervals,
 * so small jitter of the intervals does not move a value across a multiple of Δ. Null with no
 * positive median interval.
 */
export function latticeChain(sorted: readonly AgeCrawl[]): LatticeChain | null {
  const intervalDays = median(consecutiveIntervals(sorted))
  if (!(intervalDays > 0)) return null
  const values: number[] = []
  let count: number | null = null
  for (let j = 1; j < sorted.length; j++) {
    const changed = sorted[j]!.changed
    if (changed === true) count = 1
    else if (changed === false && count !== null) count += 1
    else count = null
    if (count !== null) values.push(count * intervalDays)
  }
  return { intervalDays, values }
}

/**
 * M4 (no Last-Modified, constant crawl interval Δ): the age is at most a_j and more than a_j − Δ,
 * so P(a_j ≤ kΔ) = G_U(kΔ) (Li, Cline & Loguinov 2017, Theorem 9). Points at kΔ, k = 1..bins
 * (default: up to the largest a_j, at most 50), capped by maxLagDays.
 */
export function ageCdfM4(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const sorted = validCrawls(crawls)
  if (sorted.length < MIN_CRAWLS) return null
  const chain = latticeChain(sorted)
  if (chain === null || chain.values.length < MIN_CRAWLS) return null
  const values = [...chain.values].sort((a, b) => a - b)
  const delta = chain.intervalDays
  const multiples = latticeMultiples(options, delta, values[values.length - 1]!)
  const points: AgeCdfPoint[] = []
  for (let k = 1; k <= multiples; k++) {
    const ageDays = k * delta
    points.push({ ageDays, cdf: countAtMost(values, ageDays * (1 + 1e-9)) / values.length })
  }
  return latticeSummary('M4', points, delta, values.length)
}

/**
 * M3 samples: the lengths between consecutive detected changes under a constant interval, each a
 * multiple of Δ (Li, Cline & Loguinov 2017, eq. 38), counted in crawl intervals. A sample spans
 * only crawls with known change information. Null without a positive median interval.
 */
export function m3Samples(crawls: readonly AgeCrawl[]): { intervalDays: number; samplesDays: number[] } | null {
  const sorted = validCrawls(crawls)
  const intervalDays = median(consecutiveIntervals(sorted))
  if (!(intervalDays > 0)) return null
  const samplesDays: number[] = []
  let since: number | null = null
  for (let j = 1; j < sorted.length; j++) {
    const changed = sorted[j]!.changed
    if (changed === null) {
      since = null
    } else if (changed) {
      if (since !== null) samplesDays.push((since + 1) * intervalDays)
      since = 0
    } else if (since !== null) {
      since += 1
    }
  }
  return { intervalDays, samplesDays }
}

/**
 * M5 (Li, Cline & Loguinov 2017, eq. 49): G_U(x_n) = Σ_k min(x_n, D_k) / Σ_k D_k from the M3 samples
 * D_k, which repairs traces collected by M3. The paper normalises by the observed window T; the
 * sum of the samples is the window they cover, so the curve reaches 1. Over the same cycles it
 * equals M4 (a cycle of m crawls contributes min(n, m) values a_j ≤ nΔ), which is the reason it
 * is Δ-consistent (Theorem 10).
 */
export function ageCdfM5FromSamples(
  samplesDays: readonly number[],
  intervalDays: number,
  options: AgeCdfOptions = {},
): AgeCdf | null {
  const samples = samplesDays.filter((d) => Number.isFinite(d) && d > 0)
  if (samples.length < MIN_CRAWLS || !(intervalDays > 0)) return null
  const total = samples.reduce((a, b) => a + b, 0)
  const multiples = latticeMultiples(
    options,
    intervalDays,
    samples.reduce((a, b) => Math.max(a, b), 0),
  )
  const points: AgeCdfPoint[] = []
  for (let k = 1; k <= multiples; k++) {
    const ageDays = k * intervalDays
    let covered = 0
    for (const d of samples) covered += Math.min(ageDays, d)
    points.push({ ageDays, cdf: Math.min(1, covered / total) })
  }
  const crawlIntervals = Math.round(total / intervalDays)
  return latticeSummary('M5', points, intervalDays, crawlIntervals)
}

/** M5 from a crawl sequence with a constant interval (through its M3 samples). */
export function ageCdfM5(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const m3 = m3Samples(crawls)
  return m3 === null ? null : ageCdfM5FromSamples(m3.samplesDays, m3.intervalDays, options)
}

/**
 * M3 (earlier work; Li, Cline & Loguinov 2017, section V-B): the empirical CDF of the M3 samples,
 * read as F_U. Its limit is 1 − (G_U(x_{n+1}) − G_U(x_n))/G_U(Δ) (Theorem 7) and its mean Δ/G_U(Δ)
 * (Theorem 8): right only for Poisson updates, and then only at multiples of Δ.
 */
export function priorWorkM3(crawls: readonly AgeCrawl[]): PriorWorkCdf | null {
  const m3 = m3Samples(crawls)
  if (m3 === null || m3.samplesDays.length < MIN_CRAWLS) return null
  return empiricalPriorWork('M3', m3.samplesDays)
}

/**
 * M1 (earlier work; Li, Cline & Loguinov 2017, section IV-B): keep only the age at the last crawl
 * before each detected change (crawl j when crawl j + 1 saw a change), read as F_U. Its limit
 * (Theorem 2) lies between F_U and G_U for heavy-tailed updates; it is F_U only for Poisson ones.
 */
export function priorWorkM1(crawls: readonly AgeCrawl[]): PriorWorkCdf | null {
  const sorted = validCrawls(crawls)
  const retained: number[] = []
  for (let j = 0; j + 1 < sorted.length; j++) {
    const crawl = sorted[j]!
    const next = sorted[j + 1]!
    const nextChanged =
      next.changed ?? (knownAge(crawl) && knownAge(next) ? next.ageDays < next.atDays - crawl.atDays : null)
    if (nextChanged === true && knownAge(crawl)) retained.push(crawl.ageDays)
  }
  if (retained.length < MIN_CRAWLS) return null
  return empiricalPriorWork('M1', retained)
}

function empiricalPriorWork(method: PriorWorkMethod, values: readonly number[]): PriorWorkCdf {
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  const points: IntervalCdfPoint[] = []
  for (let i = 0; i < n; i++) {
    if (i + 1 < n && sorted[i + 1]! - sorted[i]! <= 1e-9 * Math.max(1, Math.abs(sorted[i]!))) continue
    points.push({ intervalDays: sorted[i]!, cdf: (i + 1) / n })
  }
  return {
    method,
    points: thinPoints(points, LATTICE_DEFAULT_POINTS * 2),
    meanUpdateIntervalDays: sorted.reduce((a, b) => a + b, 0) / n,
    samples: n,
  }
}

/** Keeps at most `max` points, evenly by index, always the last. */
function thinPoints<T>(points: readonly T[], max: number): T[] {
  if (points.length <= max) return [...points]
  const out: T[] = []
  for (let k = 1; k <= max; k++) out.push(points[Math.round((k * points.length) / max) - 1]!)
  return out
}

function latticeMultiples(options: AgeCdfOptions, delta: number, largest: number): number {
  const byLag =
    options.maxLagDays !== undefined && options.maxLagDays > 0 ? Math.floor(options.maxLagDays / delta) : Infinity
  const wanted =
    options.bins !== undefined
      ? binsOption(options, LATTICE_DEFAULT_POINTS)
      : Math.min(LATTICE_DEFAULT_POINTS, Math.ceil(largest / delta - 1e-9))
  return Math.max(1, Math.min(wanted, byLag))
}

/**
 * With a constant interval Δ the curve says nothing about G_U between multiples of Δ, so g_U(0) is
 * identified only while G_U(2Δ) stays low (LATTICE_RATE_LEVEL): the slope is then the least-squares
 * fit of a x + b x² through those points. With a longer interval G_U at multiples of Δ is consistent
 * with any slope above G_U(Δ)/Δ (updates can bunch inside one interval unseen), so μ is left unknown
 * and only the bound is reported (Li, Cline & Loguinov 2017, section V-A).
 */
function latticeSummary(method: AgeCdfMethod, points: AgeCdfPoint[], delta: number, samples: number): AgeCdf {
  const low = points.filter((p) => p.cdf <= LATTICE_RATE_LEVEL && p.cdf < 1)
  const rate = low.length >= LATTICE_RATE_MIN_POINTS ? quadraticSlope(low) : null
  return summarise(method, points, { latticeDays: delta, samples, rate, meanAgeDays: null })
}

/** a of the least-squares fit G(x) = a x + b x² through the origin, within slopeWithinModel's range at the last point. */
function quadraticSlope(points: readonly AgeCdfPoint[]): number | null {
  let s2 = 0,
    s3 = 0,
    s4 = 0,
    sy1 = 0,
    sy2 = 0
  for (const { ageDays: x, cdf: y } of points) {
    s2 += x * x
    s3 += x * x * x
    s4 += x * x * x * x
    sy1 += x * y
    sy2 += x * x * y
  }
  const last = points[points.length - 1]
  if (last === undefined) return null
  const det = s2 * s4 - s3 * s3
  const rate = det > 1e-12 * s2 * s4 ? (sy1 * s4 - sy2 * s3) / det : sy1 / s2
  return slopeWithinModel(rate, last.cdf / last.ageDays)
}

// ---------------------------------------------------------------- M6 (random intervals)

interface PairCurveBlock {
  /** Mean lag of the pairs in the bin. */
  ageDays: number
  /** Fraction of those pairs with a change between them, after pooling adjacent violators. */
  cdf: number
  pairs: number
}

/** The default largest lag of M6 for a sorted crawl sequence (before the pair cap). */
export function m6DefaultMaxLag(sorted: readonly AgeCrawl[]): number {
  const n = sorted.length
  const spanDays = sorted[n - 1]!.atDays - sorted[0]!.atDays
  return Math.min(M6_DEFAULT_LAG_INTERVALS * (spanDays / (n - 1)), spanDays / 2)
}

/**
 * M6 (no Last-Modified, random intervals): for pairs of crawls i < j with lag d = s_j − s_i up to
 * maxLagDays, P(a change in (s_i, s_j]) = G_U(d) (Li, Cline & Loguinov 2017, Theorem 11). Pairs are
 * binned by lag; the bin width shrinks as the data grow (defaultCurveBins), as the theorem's h → 0
 * requires. Each point is at the mean lag of its bin, and the fractions are made non-decreasing by
 * pooling adjacent violators (weighted by pairs). Pairs whose crawls between include an unknown
 * flag and no seen change are skipped. O(n · lag): the lag defaults to 30 mean intervals (≤ half
 * the span) and shrinks so that at most 4·10⁶ pairs are visited. μ = g_U(0) by least squares on
 * the individual pairs of short lag (rateFromPairs).
 */
export function ageCdfM6(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const sorted = validCrawls(crawls)
  const n = sorted.length
  if (n < MIN_CRAWLS) return null
  const spanDays = sorted[n - 1]!.atDays - sorted[0]!.atDays
  if (!(spanDays > 0)) return null
  const maxLag = Math.min(
    positiveOr(options.maxLagDays, m6DefaultMaxLag(sorted)),
    (M6_MAX_PAIRS / n) * (spanDays / (n - 1)),
  )
  const flags = sorted.map((c) => c.changed)
  const times = sorted.map((c) => c.atDays)
  const blocks = pairCurve(times, flags, maxLag, binsOption(options, m6Bins(times, flags, maxLag)))
  if (blocks.length === 0) return null
  const points = blocks.map((b) => ({ ageDays: b.ageDays, cdf: b.cdf }))
  // g_U(0): the range [0, x0] where G_U stays below the fit level, found on a finer pass over the
  // short lags (the display bins can be wider than that range when crawls are slow next to updates).
  const level = rateFitLevel(n)
  const coarse = points.find((p) => p.cdf >= level)
  const searchLag = coarse === undefined ? maxLag : Math.min(maxLag, 2 * coarse.ageDays)
  const fine = pairCurve(times, flags, searchLag, RATE_SEARCH_BINS)
  const reach = fine.findIndex((p) => p.cdf >= level)
  const x0 = reach < 0 ? searchLag : fine[reach]!.ageDays
  const rate = reach === 0 ? null : rateFromPairs(times, flags, x0)
  return summarise('M6', points, { latticeDays: null, samples: n - 1, rate, meanAgeDays: null })
}

/**
 * Bins of M6 over (0, maxLag]: width w = c · x½ · (n λ x½)^{−1/5}, where x½ is the lag at which a
 * coarse pass (50 bins) reaches 1/2 and λ the crawl rate. A bin's bias grows with w² times the
 * curvature of G_U (of order 1/x½²), its noise with 1/(n λ w) (pairs per bin), so the error is
 * smallest for w ∝ x½ (n λ x½)^{−1/5} and keeps falling as n^{−2/5}. c = 1.85 gives the former
 * width (0.6 mean crawl intervals) for 1000 Poisson-crawled crawls at twice the update rate; with
 * crawls slower than the updates that fixed width was wider than the rise of G_U, and the error
 * stopped falling near 0.035 (docs/math.md 2.2). Within [50, 400] bins.
 */
function m6Bins(times: ArrayLike<number>, flags: ArrayLike<boolean | null>, maxLag: number): number {
  const n = times.length
  const spanDays = times[n - 1]! - times[0]!
  if (!(spanDays > 0) || !(maxLag > 0)) return M6_MIN_BINS
  const coarse = pairCurve(times, flags, maxLag, M6_MIN_BINS)
  const half = coarse.find((p) => p.cdf >= 0.5)?.ageDays ?? maxLag
  const crawlsPerDay = (n - 1) / spanDays
  const width = M6_WIDTH_FACTOR * half * Math.pow(Math.max(1, n * crawlsPerDay * half), -0.2)
  return Math.max(M6_MIN_BINS, Math.min(CURVE_MAX_BINS, Math.ceil(maxLag / width)))
}

/** Pair fractions of M6 binned by lag on (0, maxLag], monotone by pooling adjacent violators. */
export function pairCurve(
  times: ArrayLike<number>,
  flags: ArrayLike<boolean | null>,
  maxLag: number,
  bins: number,
): PairCurveBlock[] {
  const n = times.length
  const width = maxLag / bins
  const pairs = new Float64Array(bins)
  const changes = new Float64Array(bins)
  const lagSums = new Float64Array(bins)
  for (let i = 0; i < n - 1; i++) {
    const start = times[i]!
    let seenChange = false
    let seenUnknown = false
    for (let j = i + 1; j < n; j++) {
      const lag = times[j]! - start
      if (lag > maxLag) break
      const flag = flags[j]
      if (flag === true) seenChange = true
      else if (flag === null) seenUnknown = true
      if (!(lag > 0) || (!seenChange && seenUnknown)) continue
      const bin = Math.min(bins - 1, Math.floor(lag / width))
      pairs[bin]! += 1
      lagSums[bin]! += lag
      if (seenChange) changes[bin]! += 1
    }
  }
  const lags: number[] = []
  const values: number[] = []
  const weights: number[] = []
  for (let b = 0; b < bins; b++) {
    const count = pairs[b]!
    if (count > 0) {
      lags.push(lagSums[b]! / count)
      values.push(changes[b]! / count)
      weights.push(count)
    }
  }
  const monotone = poolAdjacentViolators(values, weights)
  return lags.map((ageDays, i) => ({ ageDays, cdf: monotone[i]!, pairs: weights[i]! }))
}

/**
 * g_U(0) from the pairs of lag d ≤ x0: least squares of the change indicator Q on a·d + b·d²
 * (E[Q | d] = G_U(d)), within slopeWithinModel's range of ΣQ/Σd. Null with fewer than 20 pairs or
 * no change among them.
 */
function rateFromPairs(times: ArrayLike<number>, flags: ArrayLike<boolean | null>, x0: number): number | null {
  const n = times.length
  let s2 = 0,
    s3 = 0,
    s4 = 0,
    sy1 = 0,
    sy2 = 0,
    sd = 0,
    sq = 0,
    count = 0
  for (let i = 0; i < n - 1; i++) {
    const start = times[i]!
    let seenChange = false
    let seenUnknown = false
    for (let j = i + 1; j < n; j++) {
      const d = times[j]! - start
      if (d > x0) break
      const flag = flags[j]
      if (flag === true) seenChange = true
      else if (flag === null) seenUnknown = true
      if (!(d > 0) || (!seenChange && seenUnknown)) continue
      const q = seenChange ? 1 : 0
      const d2 = d * d
      s2 += d2
      s3 += d2 * d
      s4 += d2 * d2
      sy1 += q * d
      sy2 += q * d2
      sd += d
      sq += q
      count++
    }
  }
  if (!(s2 > 0) || sq === 0 || count < MIN_RATE_FIT_SAMPLES) return null
  const det = s2 * s4 - s3 * s3
  const rate = det > 1e-12 * s2 * s4 ? (sy1 * s4 - sy2 * s3) / det : sy1 / s2
  return slopeWithinModel(rate, sq / sd)
}

// ---------------------------------------------------------------- choice of method

interface MethodChoice {
  method: 'M2' | 'M4' | 'M6'
  /** Why: the share of crawls with an age, and the crawl intervals' coefficient of variation. */
  reason: string
  /** Whether the crawl intervals count as constant (M3, M4 and M5 apply). */
  constantIntervals: boolean
}

/**
 * The method Li, Cline & Loguinov 2017 (Fig. 22) recommends: M2 when most crawls carry an age; M4
 * when the crawl intervals are (nearly) constant; otherwise M6. Null with fewer than 10 crawls.
 */
export function chooseMethod(crawls: readonly AgeCrawl[]): MethodChoice | null {
  const sorted = validCrawls(crawls)
  if (sorted.length < MIN_CRAWLS) return null
  const share = sorted.filter(knownAge).length / sorted.length
  const intervals = consecutiveIntervals(sorted)
  const intervalMean = intervals.reduce((a, b) => a + b, 0) / intervals.length
  const intervalSd = Math.sqrt(intervals.reduce((a, b) => a + (b - intervalMean) ** 2, 0) / intervals.length)
  const cv = intervalMean > 0 ? intervalSd / intervalMean : Infinity
  const constantIntervals = cv <= M4_MAX_INTERVAL_CV
  const reason = `Last-Modified ages on ${percent(share)} of the crawls; crawl intervals ${constantIntervals ? 'constant' : 'varying'} (coefficient of variation ${Number.isFinite(cv) ? cv.toFixed(3) : '∞'})`
  const method = share >= M2_MIN_AGE_SHARE ? 'M2' : constantIntervals ? 'M4' : 'M6'
  return { method, reason, constantIntervals }
}

/**
 * The recommended method's curve (chooseMethod); M6 when M4 has nothing to estimate from. Null with
 * fewer than 10 crawls or when the chosen method has nothing to estimate from.
 */
export function estimateAgeCdf(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const choice = chooseMethod(crawls)
  if (choice === null) return null
  if (choice.method === 'M2') return ageCdfM2(crawls, options)
  if (choice.method === 'M4') return ageCdfM4(crawls, options) ?? ageCdfM6(crawls, options)
  return ageCdfM6(crawls, options)
}

// ---------------------------------------------------------------- F_U

interface UpdateDistribution {
  /** μ = g_U(0), changes per day. */
  changesPerDay: number
  meanUpdateIntervalDays: number
  /** F_U(x) = 1 − g_U(x)/g_U(0) at the midpoints of the differentiation steps. */
  points: IntervalCdfPoint[]
}

/** Steps of the numerical derivative: c · n^{1/5} over the curve, clamped (see inferUpdateDistribution). */
const DERIVATIVE_STEPS_PER_FIFTH_ROOT = 3
const DERIVATIVE_MIN_STEPS = 6
const DERIVATIVE_MAX_STEPS = 40

/**
 * F_U and μ from an age CDF (docs/math.md 2.2): g_U is the slope of G_U over steps of the curve
 * (from the origin for the first), F_U = 1 − g_U/μ clipped to [0, 1] and made non-decreasing by
 * pooling adjacent violators. The steps cover the curve up to where it reaches 0.99 and their number
 * grows as n^{1/5} (the slope's bias falls with the step squared, its noise with 1/√(n·step³)).
 * Null when μ is unknown.
 */
export function inferUpdateDistribution(ageCdf: AgeCdf): UpdateDistribution | null {
  const meanInterval = ageCdf.meanUpdateIntervalDays
  if (meanInterval === null || !(meanInterval > 0)) return null
  const rate = 1 / meanInterval
  let curve = ageCdf.points
  const top = curve.findIndex((p) => p.cdf >= 0.99)
  if (top >= 0) curve = curve.slice(0, top + 1)
  if (ageCdf.latticeDays === null) {
    const steps = Math.max(
      DERIVATIVE_MIN_STEPS,
      Math.min(DERIVATIVE_MAX_STEPS, Math.round(DERIVATIVE_STEPS_PER_FIFTH_ROOT * Math.pow(ageCdf.samples, 0.2))),
    )
    curve = thinPoints(curve, steps)
  }
  const mids: number[] = []
  const values: number[] = []
  const weights: number[] = []
  let previous: AgeCdfPoint = { ageDays: 0, cdf: 0 }
  for (const point of curve) {
    const width = point.ageDays - previous.ageDays
    if (width > 0) {
      const density = (point.cdf - previous.cdf) / width
      mids.push((point.ageDays + previous.ageDays) / 2)
      values.push(Math.min(1, Math.max(0, 1 - density / rate)))
      weights.push(width)
      previous = point
    }
  }
  const monotone = poolAdjacentViolators(values, weights)
  return {
    changesPerDay: rate,
    meanUpdateIntervalDays: meanInterval,
    points: mids.map((intervalDays, i) => ({ intervalDays, cdf: monotone[i]! })),
  }
}

// ---------------------------------------------------------------- shared

interface Summary {
  latticeDays: number | null
  samples: number
  rate: number | null
  meanAgeDays: number | null
}

function summarise(method: AgeCdfMethod, points: AgeCdfPoint[], s: Summary): AgeCdf {
  const meanAge = s.meanAgeDays ?? meanAgeFromCurve(points)
  const cvSquared = s.rate !== null && meanAge !== null ? 2 * s.rate * meanAge - 1 : null
  const first = points.find((p) => p.cdf > 0)
  return {
    method,
    points,
    latticeDays: s.latticeDays,
    samples: s.samples,
    meanUpdateIntervalDays: s.rate !== null ? 1 / s.rate : null,
    meanUpdateIntervalBoundDays: first !== undefined ? first.ageDays / first.cdf : null,
    coefficientOfVariation: cvSquared !== null && Number.isFinite(cvSquared) ? Math.sqrt(Math.max(0, cvSquared)) : null,
  }
}

/** E[A] = ∫ (1 − G_U) by the trapezoid rule from the origin, when the curve reaches ~1. */
function meanAgeFromCurve(points: readonly AgeCdfPoint[]): number | null {
  const last = points[points.length - 1]
  if (last === undefined || last.cdf < MEAN_AGE_MIN_CDF) return null
  let area = 0
  let previous: AgeCdfPoint = { ageDays: 0, cdf: 0 }
  for (const point of points) {
    area += ((point.ageDays - previous.ageDays) * (2 - previous.cdf - point.cdf)) / 2
    previous = point
  }
  return area
}

/** Weighted least-squares non-decreasing fit (pool adjacent violators). */
function poolAdjacentViolators(values: readonly number[], weights: readonly number[]): number[] {
  const blocks: { value: number; weight: number; size: number }[] = []
  values.forEach((value, i) => {
    blocks.push({ value, weight: weights[i]!, size: 1 })
    while (blocks.length > 1) {
      const last = blocks[blocks.length - 1]!
      const before = blocks[blocks.length - 2]!
      if (before.value <= last.value) break
      const weight = before.weight + last.weight
      blocks.splice(blocks.length - 2, 2, {
        value:
          weight > 0
            ? (before.value * before.weight + last.value * last.weight) / weight
            : (before.value + last.value) / 2,
        weight,
        size: before.size + last.size,
      })
    }
  })
  return blocks.flatMap((b) => new Array<number>(b.size).fill(b.value))
}

function consecutiveIntervals(sorted: readonly AgeCrawl[]): number[] {
  const out: number[] = []
  for (let j = 1; j < sorted.length; j++) out.push(sorted[j]!.atDays - sorted[j - 1]!.atDays)
  return out
}

function binsOption(options: AgeCdfOptions, fallback: number): number {
  const bins = options.bins
  return bins !== undefined && Number.isFinite(bins) && bins >= 1 ? Math.floor(bins) : fallback
}

function positiveOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback
}

function percent(share: number): string {
  return `${Math.round(share * 100)} %`
}
