/**
 * Update-interval distribution under blind sampling (MATH.md 2.2; Li, Cline & Loguinov, seed 004).
 *
 * Updates form a renewal process with inter-update CDF F_U and rate μ. The age A at a crawl time
 * independent of the updates has the residual CDF G_U(x) = μ ∫_0^x (1 − F_U(y)) dy. The methods
 * estimate G_U from crawls; F_U and μ follow from g_U = μ(1 − F_U).
 */

export type AgeCdfMethod = 'M2' | 'M4' | 'M6'

export interface AgeCdfPoint {
  ageDays: number
  cdf: number
}

export interface AgeCdf {
  method: AgeCdfMethod
  /** Estimates of G_U at increasing ages (all > 0). */
  points: AgeCdfPoint[]
  /** 1/μ with μ = g_U(0); null when μ cannot be estimated (no change seen, or every crawl saw one). */
  meanUpdateIntervalDays: number | null
  /** CV of U from E[A] = E[U²] μ / 2: CV² = 2 μ E[A] − 1; null when E[A] is not available. */
  coefficientOfVariation: number | null
  /** sup |G_U(x) − (1 − e^{−μx})| over the points; null without μ. */
  poissonFitDistance: number | null
}

export interface AgeCrawl {
  atDays: number
  /** Whether the page changed since the previous crawl; null when unknown. */
  changed: boolean | null
  /** Age of the content at this crawl (crawl time − Last-Modified), days; null when unknown. */
  ageDays: number | null
}

export interface AgeCdfOptions {
  /** Largest age (M2, M4) or lag (M6) of the curve, days. Defaults per method. */
  maxLagDays?: number
  /** Points of the curve (M2, M6) or largest multiple of the interval (M4); default 50. */
  bins?: number
}

const DEFAULT_BINS = 50
/** Fewer usable crawls than this give no curve. */
const MIN_CRAWLS = 10
/** M2 is used when at least this share of crawls carries an age ("most crawls"). */
const M2_MIN_AGE_SHARE = 0.5
/** Crawl intervals count as constant (M4) when their coefficient of variation is below this. */
const M4_MAX_INTERVAL_CV = 0.05
/** M6 default lag: this many mean crawl intervals, and at most half the observed span. */
const M6_DEFAULT_LAG_INTERVALS = 30
/** M6 work cap (pairs visited), keeping it O(n · lag) with a bounded lag. */
const M6_MAX_PAIRS = 4_000_000
/** g_U(0) is fitted on the part of the curve below this CDF value, where G_U ≈ μx − bx². */
const RATE_FIT_MAX_CDF = 0.3
/** E[A] from the curve needs the curve to reach this CDF value (the tail beyond is dropped). */
const MEAN_AGE_MIN_CDF = 0.98
/** Points of the fine curve below RATE_FIT_MAX_CDF used for g_U(0) (M2 and M6). */
const RATE_FIT_POINTS = 10

function validCrawls(crawls: readonly AgeCrawl[]): AgeCrawl[] {
  return crawls.filter((c) => Number.isFinite(c.atDays)).sort((a, b) => a.atDays - b.atDays)
}

/**
 * M2 (Last-Modified known): empirical CDF of the ages at all crawls, on `bins` equally spaced ages up
 * to maxLagDays (default: the 99th percentile of the ages). μ is fitted on the raw ages.
 */
export function ageCdfM2(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const ages = crawls
    .map((c) => c.ageDays)
    .filter((a): a is number => a !== null && Number.isFinite(a) && a >= 0)
    .sort((a, b) => a - b)
  const n = ages.length
  if (n < MIN_CRAWLS) return null
  const bins = binsOption(options)
  const maxAge = positiveOr(options.maxLagDays, ages[Math.min(n - 1, Math.floor(0.99 * n))]!)
  if (!(maxAge > 0)) return summarise('M2', [], null, ages.reduce((a, b) => a + b, 0) / n)
  const points: AgeCdfPoint[] = []
  for (let k = 1; k <= bins; k++) {
    const ageDays = (maxAge * k) / bins
    points.push({ ageDays, cdf: countAtMost(ages, ageDays) / n })
  }
  return summarise('M2', points, rateAtZero(lowAgeGrid(ages)), ages.reduce((a, b) => a + b, 0) / n)
}

/** Empirical CDF on RATE_FIT_POINTS equal steps up to the age where it reaches RATE_FIT_MAX_CDF. */
function lowAgeGrid(sortedAges: readonly number[]): AgeCdfPoint[] {
  const n = sortedAges.length
  const top = sortedAges[Math.min(n - 1, Math.floor(RATE_FIT_MAX_CDF * n))]!
  if (!(top > 0)) return []
  return Array.from({ length: RATE_FIT_POINTS }, (_, k) => {
    const ageDays = (top * (k + 1)) / RATE_FIT_POINTS
    return { ageDays, cdf: countAtMost(sortedAges, ageDays) / n }
  })
}

/**
 * M4 (no Last-Modified, constant crawl interval Δ): a_j = τ_j if crawl j saw a change, else
 * a_{j−1} + τ_j (τ_j the actual interval, so Δ-multiples stay exact under small jitter); the age is
 * at most a_j and more than a_j − Δ, so P(a_j ≤ kΔ) = G_U(kΔ). The chain starts at the first seen
 * change and restarts after an unknown crawl. Points at kΔ, k = 1..bins (capped by maxLagDays).
 */
export function ageCdfM4(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const sorted = validCrawls(crawls)
  if (sorted.length < MIN_CRAWLS) return null
  const intervals = consecutiveIntervals(sorted)
  const intervalDays = median(intervals)
  if (!(intervalDays > 0)) return null
  const bounds: number[] = []
  let chain: number | null = null
  for (let j = 1; j < sorted.length; j++) {
    const crawl = sorted[j]!
    const tau = crawl.atDays - sorted[j - 1]!.atDays
    if (crawl.changed === true) chain = tau
    else if (crawl.changed === false && chain !== null) chain += tau
    else chain = null
    if (chain !== null) bounds.push(chain)
  }
  if (bounds.length < MIN_CRAWLS) return null
  bounds.sort((a, b) => a - b)
  const maxMultiple = Math.max(1, Math.min(binsOption(options), options.maxLagDays !== undefined && options.maxLagDays > 0
    ? Math.floor(options.maxLagDays / intervalDays)
    : Math.ceil(bounds[bounds.length - 1]! / intervalDays)))
  const points: AgeCdfPoint[] = []
  for (let k = 1; k <= maxMultiple; k++) {
    const ageDays = k * intervalDays
    points.push({ ageDays, cdf: countAtMost(bounds, ageDays * (1 + 1e-9)) / bounds.length })
  }
  return summarise('M4', points, rateAtZero(points), null)
}

/**
 * M6 (no Last-Modified, random intervals): for pairs of crawls i < j with lag d = s_j − s_i up to
 * maxLagDays, P(a change in (s_i, s_j]) = G_U(d). Pairs are binned by lag (width maxLag/bins); each
 * point is at the mean lag of its bin, and the binned fractions are made non-decreasing by pooling
 * adjacent violators (weighted by pairs). Pairs whose crawls between include an unknown flag and no
 * seen change are skipped. O(n · lag): the lag defaults to 30 mean intervals (≤ half the span) and
 * shrinks so that at most 4·10⁶ pairs are visited.
 */
export function ageCdfM6(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const sorted = validCrawls(crawls)
  const n = sorted.length
  if (n < MIN_CRAWLS) return null
  const spanDays = sorted[n - 1]!.atDays - sorted[0]!.atDays
  if (!(spanDays > 0)) return null
  const meanIntervalDays = spanDays / (n - 1)
  let maxLag = positiveOr(options.maxLagDays, Math.min(M6_DEFAULT_LAG_INTERVALS * meanIntervalDays, spanDays / 2))
  maxLag = Math.min(maxLag, (M6_MAX_PAIRS / n) * meanIntervalDays)
  const points = pairCurve(sorted, maxLag, binsOption(options))
  if (points.length === 0) return null
  // g_U(0) from a finer pass over the short lags, up to where the curve reaches RATE_FIT_MAX_CDF.
  const reach = points.find((p) => p.cdf >= RATE_FIT_MAX_CDF)
  const shortLag = Math.min(maxLag, reach !== undefined ? (reach.ageDays * 1.2) : maxLag)
  const fine = pairCurve(sorted, shortLag, RATE_FIT_POINTS)
  return summarise('M6', points, rateAtZero(fine.length >= 2 ? fine : points), null)
}

/** Pair fractions of M6 binned by lag on (0, maxLag], monotone by pooling adjacent violators. */
function pairCurve(sorted: readonly AgeCrawl[], maxLag: number, bins: number): AgeCdfPoint[] {
  const n = sorted.length
  const width = maxLag / bins
  const pairs = new Array<number>(bins).fill(0)
  const changes = new Array<number>(bins).fill(0)
  const lagSums = new Array<number>(bins).fill(0)
  for (let i = 0; i < n - 1; i++) {
    const start = sorted[i]!.atDays
    let seenChange = false
    let seenUnknown = false
    for (let j = i + 1; j < n; j++) {
      const crawl = sorted[j]!
      const lag = crawl.atDays - start
      if (lag > maxLag) break
      if (crawl.changed === true) seenChange = true
      else if (crawl.changed === null) seenUnknown = true
      if (!(lag > 0) || (!seenChange && seenUnknown)) continue
      const bin = Math.min(bins - 1, Math.floor(lag / width))
      pairs[bin]! += 1
      lagSums[bin]! += lag
      if (seenChange) changes[bin]! += 1
    }
  }
  const blocks: { ageDays: number; cdf: number; weight: number }[] = []
  for (let b = 0; b < bins; b++) {
    const count = pairs[b]!
    if (count > 0) blocks.push({ ageDays: lagSums[b]! / count, cdf: changes[b]! / count, weight: count })
  }
  const monotone = poolAdjacentViolators(blocks.map((b) => b.cdf), blocks.map((b) => b.weight))
  return blocks.map((b, i) => ({ ageDays: b.ageDays, cdf: monotone[i]! }))
}

/**
 * Chooses the method as seed 004 (Fig. 22) recommends: M2 when most crawls carry an age; M4 when the
 * crawl intervals are (nearly) constant; otherwise M6. Null with fewer than 10 crawls or when the
 * chosen method has nothing to estimate from.
 */
export function estimateAgeCdf(crawls: readonly AgeCrawl[], options: AgeCdfOptions = {}): AgeCdf | null {
  const sorted = validCrawls(crawls)
  if (sorted.length < MIN_CRAWLS) return null
  const withAge = sorted.filter((c) => c.ageDays !== null && Number.isFinite(c.ageDays) && c.ageDays >= 0).length
  if (withAge >= M2_MIN_AGE_SHARE * sorted.length) return ageCdfM2(sorted, options)
  const intervals = consecutiveIntervals(sorted)
  const intervalMean = intervals.reduce((a, b) => a + b, 0) / intervals.length
  const intervalSd = Math.sqrt(intervals.reduce((a, b) => a + (b - intervalMean) ** 2, 0) / intervals.length)
  if (intervalMean > 0 && intervalSd / intervalMean <= M4_MAX_INTERVAL_CV) {
    return ageCdfM4(sorted, options) ?? ageCdfM6(sorted, options)
  }
  return ageCdfM6(sorted, options)
}

export interface UpdateDistribution {
  /** μ = g_U(0), changes per day. */
  changesPerDay: number
  meanUpdateIntervalDays: number
  /** F_U(x) = 1 − g_U(x)/g_U(0), g_U from differences of the age CDF (at segment midpoints). */
  points: { intervalDays: number; cdf: number }[]
}

/**
 * F_U and μ from an age CDF (MATH.md 2.2): g_U is the slope of G_U between consecutive points
 * (from the origin for the first), F_U = 1 − g_U/μ clipped to [0, 1] and made non-decreasing.
 * Null when μ is unknown.
 */
export function inferUpdateDistribution(ageCdf: AgeCdf): UpdateDistribution | null {
  const meanInterval = ageCdf.meanUpdateIntervalDays
  if (meanInterval === null || !(meanInterval > 0)) return null
  const rate = 1 / meanInterval
  const points: { intervalDays: number; cdf: number }[] = []
  let previous: AgeCdfPoint = { ageDays: 0, cdf: 0 }
  let running = 0
  for (const point of ageCdf.points) {
    const width = point.ageDays - previous.ageDays
    if (width > 0) {
      const density = (point.cdf - previous.cdf) / width
      running = Math.max(running, Math.min(1, Math.max(0, 1 - density / rate)))
      points.push({ intervalDays: (point.ageDays + previous.ageDays) / 2, cdf: running })
      previous = point
    }
  }
  return { changesPerDay: rate, meanUpdateIntervalDays: meanInterval, points }
}

/** sup over the points of |G_U(x) − (1 − e^{−μx})|. */
export function poissonFitDistance(points: readonly AgeCdfPoint[], changesPerDay: number): number {
  let worst = 0
  for (const { ageDays, cdf } of points) worst = Math.max(worst, Math.abs(cdf + Math.expm1(-changesPerDay * ageDays)))
  return worst
}

function summarise(method: AgeCdfMethod, points: AgeCdfPoint[], rate: number | null, sampleMeanAgeDays: number | null): AgeCdf {
  const meanAge = sampleMeanAgeDays ?? meanAgeFromCurve(points)
  const cvSquared = rate !== null && meanAge !== null ? 2 * rate * meanAge - 1 : null
  return {
    method,
    points,
    meanUpdateIntervalDays: rate !== null ? 1 / rate : null,
    coefficientOfVariation: cvSquared !== null && Number.isFinite(cvSquared) ? Math.sqrt(Math.max(0, cvSquared)) : null,
    poissonFitDistance: rate !== null && points.length > 0 ? poissonFitDistance(points, rate) : null,
  }
}

/** E[A] = ∫ (1 − G_U) by the trapezoid rule from the origin, when the curve reaches ~1. */
function meanAgeFromCurve(points: readonly AgeCdfPoint[]): number | null {
  const last = points[points.length - 1]
  if (last === undefined || last.cdf < MEAN_AGE_MIN_CDF) return null
  let area = 0
  let previous: AgeCdfPoint = { ageDays: 0, cdf: 0 }
  for (const point of points) {
    area += (point.ageDays - previous.ageDays) * (2 - previous.cdf - point.cdf) / 2
    previous = point
  }
  return area
}

/**
 * μ = g_U(0): least squares of G(x) = a x + b x² through the origin on the points with G ≤ 0.3
 * (at least the first two). Since g_U is non-increasing, G(x)/x ≤ μ, so a is floored at G(x)/x at
 * the largest of those points (the least noisy). The fit is biased low when g_U falls steeply at 0
 * (Weibull shape < 1: measured μ ≈ 0.73 of the truth for shape 0.5).
 * One point: the Poisson value −ln(1 − G)/x. Null when nothing below 1 was seen or no change at all.
 */
function rateAtZero(points: readonly AgeCdfPoint[]): number | null {
  const usable = points.filter((p) => p.ageDays > 0 && Number.isFinite(p.cdf))
  const first = usable[0]
  if (first === undefined || first.cdf >= 1) return null
  const low = usable.filter((p, i) => p.cdf <= RATE_FIT_MAX_CDF || i < 2).filter((p) => p.cdf < 1)
  const lastLow = low[low.length - 1] ?? first
  const floor = lastLow.cdf / lastLow.ageDays
  let rate: number
  if (low.length < 2) {
    rate = -Math.log1p(-first.cdf) / first.ageDays
  } else {
    let s2 = 0, s3 = 0, s4 = 0, sy1 = 0, sy2 = 0
    for (const { ageDays: x, cdf: y } of low) {
      s2 += x * x
      s3 += x * x * x
      s4 += x * x * x * x
      sy1 += x * y
      sy2 += x * x * y
    }
    const det = s2 * s4 - s3 * s3
    rate = det > 1e-12 * s2 * s4 ? (sy1 * s4 - sy2 * s3) / det : sy1 / s2
    rate = Math.max(rate, floor)
  }
  return Number.isFinite(rate) && rate > 0 ? rate : null
}

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
        value: (before.value * before.weight + last.value * last.weight) / weight,
        weight,
        size: before.size + last.size,
      })
    }
  })
  return blocks.flatMap((b) => new Array<number>(b.size).fill(b.value))
}

function countAtMost(sorted: readonly number[], x: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! <= x) lo = mid + 1
    else hi = mid
  }
  return lo
}

function consecutiveIntervals(sorted: readonly AgeCrawl[]): number[] {
  const out: number[] = []
  for (let j = 1; j < sorted.length; j++) out.push(sorted[j]!.atDays - sorted[j - 1]!.atDays)
  return out
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >>> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

function binsOption(options: AgeCdfOptions): number {
  const bins = options.bins
  return bins !== undefined && Number.isFinite(bins) && bins >= 1 ? Math.floor(bins) : DEFAULT_BINS
}

function positiveOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback
}
