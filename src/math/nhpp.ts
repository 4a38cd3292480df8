/**
 * Localised change rates: power-law (Weibull) non-homogeneous Poisson process fitted inside a window
 * of update points (docs/math.md 2.1, Singh 2007).
 *
 * Times are in days from an arbitrary origin, ascending. Inside a window, times are measured from
 * the window start, so the intensity is λ(t) = (β/η)(t/η)^{β−1} with t = atDays − windowStartDays.
 */

type RateTrend = 'rising' | 'falling' | 'constant'

/**
 * How the observation of the window ended (docs/math.md 2.1 uses 'failure'):
 * - 'failure': observation stops at the last update point t_n (2nβ/β̂ ~ χ²(2(n−1))).
 * - 'time': observation stops at a fixed time T ≥ t_n with no update in (t_n, T] (2nβ/β̂ ~ χ²(2n)).
 */
type PowerLawTruncation = 'failure' | 'time'

interface PowerLawFit {
  /** MLE β̂ (shape). */
  beta: number
  /** MLE η̂ in days (scale, measured from the window start). */
  eta: number
  /** Bias-corrected β̃ (unbiased for β); null when n ≤ 3. */
  betaCorrected: number | null
  /** Update points inside the window. */
  n: number
  windowStartDays: number
  /** t_n for 'failure' truncation, T for 'time' truncation (absolute days). */
  windowEndDays: number
  trend: RateTrend
  truncation: PowerLawTruncation
  /** Standard-normal score of the χ² test of β = 1: positive when the rate rises (Wilson–Hilferty). */
  trendScore: number
}

/**
 * |score| above which the trend counts as rising or falling (two-sided p ≈ 0.003). The window rule
 * tests every extension, so a 5 % level stops windows early on homogeneous data: in simulations
 * (rate 2/day, 200 points) z = 2 cut 22 % of windows below 100 points, z = 3 only 1 %, while a jump
 * of the rate was still found with under 2 % of pre-jump points in the window.
 */
const DEFAULT_TREND_Z = 3
/** Points at which the bias corrections of 2.1 start to be defined: λ̌ needs n > 3. */
const MIN_POINTS_FOR_CORRECTION = 4

interface FitPowerLawOptions {
  /**
   * Days (absolute) up to which the process was watched with no update after the last point. When
   * given and later than the last point, the time-truncated MLE is used: β̂ = n / Σ ln(T/t_i).
   */
  observedUntilDays?: number
  /** Critical |z| for the trend classification; default DEFAULT_TREND_Z. */
  trendZ?: number
}

/**
 * MLE of the power-law NHPP (docs/math.md 2.1): β̂ = n / Σ ln(t_n/t_i), η̂ = t_n / n^{1/β̂}; with
 * n > 3, β̃ = (n−2)/n · β̂ (time truncation: (n−1)/n · β̂, from 2nβ/β̂ ~ χ²(2n)).
 * Points at or before the window start (and after observedUntilDays) are ignored.
 * Returns null with fewer than 2 points, or when all points coincide with the window end.
 */
export function fitPowerLaw(
  updateTimesDays: readonly number[],
  windowStartDays: number,
  options: FitPowerLawOptions = {},
): PowerLawFit | null {
  if (!Number.isFinite(windowStartDays)) return null
  const observedUntil = options.observedUntilDays
  const limit = observedUntil !== undefined && Number.isFinite(observedUntil) ? observedUntil : Infinity
  const elapsed = updateTimesDays
    .filter((t) => Number.isFinite(t) && t > windowStartDays && t <= limit)
    .map((t) => t - windowStartDays)
    .sort((a, b) => a - b)
  const n = elapsed.length
  if (n < 2) return null
  const lastElapsed = elapsed[n - 1]!
  const truncation: PowerLawTruncation =
    limit !== Infinity && limit - windowStartDays > lastElapsed ? 'time' : 'failure'
  const endElapsed = truncation === 'time' ? limit - windowStartDays : lastElapsed
  const logEnd = Math.log(endElapsed)
  let sumLog = 0
  for (const t of elapsed) sumLog += logEnd - Math.log(t)
  if (!(sumLog > 0)) return null
  const beta = n / sumLog
  const logEta = logEnd - Math.log(n) / beta
  const eta = Math.exp(logEta)
  if (!Number.isFinite(beta) || !(eta > 0) || !Number.isFinite(eta)) return null
  const betaCorrected = n >= MIN_POINTS_FOR_CORRECTION ? ((truncation === 'failure' ? n - 2 : n - 1) / n) * beta : null
  const degreesOfFreedom = truncation === 'failure' ? 2 * (n - 1) : 2 * n
  const trendScore = -chiSquareZ(2 * sumLog, degreesOfFreedom)
  return {
    beta,
    eta,
    betaCorrected,
    n,
    windowStartDays,
    windowEndDays: windowStartDays + endElapsed,
    trend: classifyTrend(trendScore, options.trendZ ?? DEFAULT_TREND_Z),
    truncation,
    trendScore,
  }
}

/** Wilson–Hilferty normal score of a χ²(k) value. */
function chiSquareZ(value: number, k: number): number {
  const c = 2 / (9 * k)
  return (Math.cbrt(value / k) - (1 - c)) / Math.sqrt(c)
}

function classifyTrend(score: number, criticalZ: number): RateTrend {
  if (score > criticalZ) return 'rising'
  if (score < -criticalZ) return 'falling'
  return 'constant'
}

/**
 * λ̌(t) of docs/math.md 2.1 in changes per day:
 * (n−3)/(n−2) · n β̃ t^{β̃−1} / t_n^{β̃} for failure truncation (time truncation: n β̃ t^{β̃−1} / T^{β̃},
 * whose conditional mean at T is the true intensity). Without the corrections (n ≤ 3) the plain MLE
 * intensity n β̂ t^{β̂−1} / t_n^{β̂} is returned. Null when atDays is not after the window start or
 * the value is not finite (t → 0 with β < 1).
 */
export function localisedRate(fit: PowerLawFit, atDays: number): number | null {
  const t = atDays - fit.windowStartDays
  const end = fit.windowEndDays - fit.windowStartDays
  if (!(t > 0) || !(end > 0) || !Number.isFinite(t)) return null
  const beta = fit.betaCorrected ?? fit.beta
  const factor = fit.betaCorrected !== null && fit.truncation === 'failure' ? (fit.n - 3) / (fit.n - 2) : 1
  const logRate = Math.log((factor * fit.n * beta) / end) + (beta - 1) * Math.log(t / end)
  const rate = Math.exp(logRate)
  return Number.isFinite(rate) ? rate : null
}

/**
 * λ̄(t) of Singh 2007 (section 3.2, after Calabria et al. 1988), changes per day: the plain MLE
 * intensity corrected by (n − 3)/n, (n − 3) β̂ t^{β̂−1} / t_n^{β̂}. At t_n it equals λ̌(t_n); elsewhere it
 * keeps the uncorrected exponent β̂. With time truncation at T the analogue is (n − 1) β̂ t^{β̂−1} / T^{β̂}
 * (from 2nβ/β̂ ~ χ²(2n)). Null with n ≤ 3 or when atDays is not after the window start.
 */
export function lambdaBar(fit: PowerLawFit, atDays: number): number | null {
  const t = atDays - fit.windowStartDays
  const end = fit.windowEndDays - fit.windowStartDays
  if (fit.n < MIN_POINTS_FOR_CORRECTION || !(t > 0) || !(end > 0) || !Number.isFinite(t)) return null
  const factor = fit.truncation === 'failure' ? fit.n - 3 : fit.n - 1
  const rate = Math.exp(Math.log((factor * fit.beta) / end) + (fit.beta - 1) * Math.log(t / end))
  return Number.isFinite(rate) ? rate : null
}

interface DuaneFit {
  /** Slope γ of ln(cumulative MTBU) on ln t; γ ≈ 1 − β for a power law. */
  gamma: number
  /** Intercept: the cumulative mean time between updates is α t^γ (days, t in days). */
  alpha: number
}

/**
 * The Duane plot fit (Singh 2007, section 3.3): least squares of ln(t_i / i) on ln t_i, times from
 * the window start. Null with fewer than 3 points after the start or when all points coincide.
 */
export function duaneFit(updateTimesDays: readonly number[], windowStartDays: number): DuaneFit | null {
  const elapsed = updateTimesDays
    .filter((t) => Number.isFinite(t) && t > windowStartDays)
    .map((t) => t - windowStartDays)
    .sort((a, b) => a - b)
  const n = elapsed.length
  if (n < 3) return null
  const xs = elapsed.map((t) => Math.log(t))
  const ys = elapsed.map((t, i) => Math.log(t / (i + 1)))
  const meanX = xs.reduce((a, b) => a + b, 0) / n
  const meanY = ys.reduce((a, b) => a + b, 0) / n
  let sxx = 0
  let sxy = 0
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - meanX
    sxx += dx * dx
    sxy += dx * (ys[i]! - meanY)
  }
  if (!(sxx > 1e-12)) return null
  const gamma = sxy / sxx
  const alpha = Math.exp(meanY - gamma * meanX)
  return Number.isFinite(gamma) && alpha > 0 && Number.isFinite(alpha) ? { gamma, alpha } : null
}

/**
 * Duane rates at atDays (changes per day) from a Duane fit (Singh 2007, section 3.3). Singh writes the
 * cumulative rate t^{−γ}/α, the inverse of the fitted cumulative MTBU: the mean rate since the window
 * start. The instantaneous rate is the derivative of the fitted count t^{1−γ}/α, (1 − γ) t^{−γ}/α,
 * which is what λ̌ estimates. Null when atDays is not after the window start.
 */
export function duaneRate(
  fit: DuaneFit,
  windowStartDays: number,
  atDays: number,
): { changesPerDay: number; cumulativeChangesPerDay: number } | null {
  const t = atDays - windowStartDays
  if (!(t > 0) || !Number.isFinite(t)) return null
  const cumulative = Math.pow(t, -fit.gamma) / fit.alpha
  const instantaneous = (1 - fit.gamma) * cumulative
  return Number.isFinite(cumulative)
    ? { changesPerDay: Math.max(0, instantaneous), cumulativeChangesPerDay: cumulative }
    : null
}

/**
 * Duane plot slope γ (docs/math.md 2.1; Singh 2007, section 3.3): least-squares slope of ln(t_i / i) on ln t_i,
 * times from the window start. For a power law the cumulative MTBU is η^β t^{1−β}, so γ ≈ 1 − β.
 * Null with fewer than 3 points after the start or when all points coincide.
 */
export function duaneSlope(updateTimesDays: readonly number[], windowStartDays: number): number | null {
  return duaneFit(updateTimesDays, windowStartDays)?.gamma ?? null
}

interface SelectWindowOptions {
  /** Smallest window (update points); default 4 (Singh 2007 drops smaller windows). */
  minPoints?: number
  /**
   * Consecutive extensions whose trend disagrees with the window's that are tolerated before the
   * extension stops; default 3 (the threshold value of Singh 2007's experiments).
   */
  tolerance?: number
  /** Critical |z| of the trend test; default DEFAULT_TREND_Z. */
  trendZ?: number
  /**
   * Start of observation (days). When given and before the first point, the first point may join the
   * window with this as its start; otherwise a window starting at point s is measured from point s−1.
   */
  originDays?: number
  /** Largest window (update points), bounding the O(window²) cost; default 2000. */
  maxPoints?: number
}

const DEFAULT_MAX_WINDOW_POINTS = 2000

/**
 * Window rule of docs/math.md 2.1 (Singh 2007, section 4). Start from the last 3 points and fix the window's
 * trend from their fit; extend backwards one point at a time, refitting (the window is measured from
 * the update point just before its first point, as the process restarts there). An extension agrees
 * when its trend equals the window's; up to `tolerance` consecutive disagreeing extensions are kept
 * if a later one agrees again, otherwise the window stops at the last agreeing extension. The window
 * is then widened to at least minPoints. Null when fewer than minPoints points can be fitted.
 */
export function selectWindow(
  updateTimesDays: readonly number[],
  options: SelectWindowOptions = {},
): { startIndex: number; fit: PowerLawFit } | null {
  const minPoints = Math.max(2, Math.floor(options.minPoints ?? 4))
  const tolerance = Math.max(0, Math.floor(options.tolerance ?? 3))
  const maxPoints = Math.max(minPoints, Math.floor(options.maxPoints ?? DEFAULT_MAX_WINDOW_POINTS))
  const trendZ = options.trendZ ?? DEFAULT_TREND_Z
  const points = updateTimesDays.filter((t) => Number.isFinite(t)).sort((a, b) => a - b)
  const m = points.length
  const origin = options.originDays
  const hasOrigin = origin !== undefined && Number.isFinite(origin) && m > 0 && origin < points[0]!
  const lowestStart = Math.max(hasOrigin ? 0 : 1, m - maxPoints)
  if (m - lowestStart < minPoints) return null

  const fitFrom = (start: number): PowerLawFit | null => {
    const windowStart = start >= 1 ? points[start - 1]! : (origin as number)
    return fitPowerLaw(points.slice(start), windowStart, { trendZ })
  }

  const initialStart = m - 3
  const state = fitFrom(initialStart)?.trend ?? 'constant'
  let lastAgreeing = initialStart
  let disagreements = 0
  for (let start = initialStart - 1; start >= lowestStart; start--) {
    const fit = fitFrom(start)
    if (fit !== null && fit.trend === state) {
      lastAgreeing = start
      disagreements = 0
    } else if (++disagreements > tolerance) {
      break
    }
  }
  const chosen = Math.min(lastAgreeing, m - minPoints)
  const fit = fitFrom(chosen)
  return fit === null ? null : { startIndex: chosen, fit }
}

interface RateWindow {
  /** Index of the window's first update point in the sorted points. */
  startIndex: number
  /** One past the window's last update point. */
  endIndex: number
  /** The window's time origin: the point before its first, or the start of observation. */
  windowStartDays: number
  /** The window's last update point. */
  windowEndDays: number
  points: number
  trend: RateTrend
  /** β̃ (β̂ when n ≤ 3). */
  beta: number
  /** n over the window's length: its mean rate. */
  meanChangesPerDay: number
  /** λ̌ at the window's last point; null with n ≤ 3. */
  endChangesPerDay: number | null
}

/**
 * Windows over the whole history (Singh 2007, section 4): the last window is chosen by selectWindow
 * (the same as the current rate's), then the rule is applied again to the points before it, and so
 * on back to the first point. A leftover of fewer than minPoints points at the start is merged into
 * the first window (Singh merges a small window half into each neighbour; the leftover has only one).
 * Each window is fitted with failure truncation at its last point. Empty with too few points.
 */
export function segmentHistory(updateTimesDays: readonly number[], options: SelectWindowOptions = {}): RateWindow[] {
  const points = updateTimesDays.filter((t) => Number.isFinite(t)).sort((a, b) => a - b)
  const origin = options.originDays
  const hasOrigin = origin !== undefined && Number.isFinite(origin) && points.length > 0 && origin < points[0]!
  const trendZ = options.trendZ ?? DEFAULT_TREND_Z
  const bounds: { start: number; end: number }[] = []
  let end = points.length
  while (end > 0) {
    const selected = selectWindow(points.slice(0, end), options)
    if (selected === null) break
    bounds.unshift({ start: selected.startIndex, end })
    end = selected.startIndex
  }
  const firstStart = hasOrigin ? 0 : 1
  if (bounds.length > 0 && end > firstStart) bounds[0]!.start = firstStart
  const windows: RateWindow[] = []
  for (const { start, end: stop } of bounds) {
    const windowStart = start >= 1 ? points[start - 1]! : (origin as number)
    const fit = fitPowerLaw(points.slice(start, stop), windowStart, { trendZ })
    if (fit === null) continue
    const length = fit.windowEndDays - fit.windowStartDays
    windows.push({
      startIndex: start,
      endIndex: stop,
      windowStartDays: fit.windowStartDays,
      windowEndDays: fit.windowEndDays,
      points: fit.n,
      trend: fit.trend,
      beta: fit.betaCorrected ?? fit.beta,
      meanChangesPerDay: fit.n / length,
      endChangesPerDay: fit.betaCorrected !== null ? localisedRate(fit, fit.windowEndDays) : null,
    })
  }
  return windows
}

export interface CrawlChange {
  atDays: number
  /** Whether the page changed since the previous crawl; null when unknown. */
  changed: boolean | null
  /** Last-Modified reported at this crawl (days), null when absent. */
  lastModifiedDays: number | null
}

/**
 * Update points for 2.1 from a crawl history: for each interval (t_{k−1}, t_k], the Last-Modified
 * time when it lies inside the interval (and the crawl did not report "unchanged"), else the midpoint
 * of an interval that saw a change. At most one point per interval: changes hidden inside one
 * interval are lost, so rates are biased low when the crawl interval is not short against 1/rate.
 */
export function updatePointsFromCrawls(crawls: readonly CrawlChange[]): number[] {
  const sorted = crawls.filter((c) => Number.isFinite(c.atDays)).sort((a, b) => a.atDays - b.atDays)
  const points: number[] = []
  for (let k = 1; k < sorted.length; k++) {
    const previous = sorted[k - 1]!.atDays
    const crawl = sorted[k]!
    if (crawl.changed === false || !(crawl.atDays > previous)) continue
    const lastModified = crawl.lastModifiedDays
    if (
      lastModified !== null &&
      Number.isFinite(lastModified) &&
      lastModified > previous &&
      lastModified <= crawl.atDays
    ) {
      points.push(lastModified)
    } else if (crawl.changed === true) {
      points.push((previous + crawl.atDays) / 2)
    }
  }
  return points
}

export interface CurrentRate {
  changesPerDay: number
  trend: RateTrend
  /** β̃ of the window (β̂ when n ≤ 3). */
  beta: number
  /** Update points in the window. */
  points: number
  windowStartDays: number
  /** 'power-law' when the rate is λ̌(now); 'constant' when the window shows no trend and n/T is used. */
  model: 'power-law' | 'constant'
  /** Every estimate of the window's rate now (Singh 2007, section 3), changes per day; null where undefined. */
  alternatives: {
    /** n/T over the window up to the last crawl (section 3.1). */
    mean: number | null
    /** λ̌(now), the bias-corrected power-law intensity (section 3.2). */
    weibull: number | null
    /** λ̄(now), the other unbiased form of section 3.2. */
    lambdaBar: number | null
    /** (1 − γ) now^{−γ}/α from the Duane plot of the window (section 3.3). */
    duane: number | null
    /** now^{−γ}/α: the Duane plot's cumulative rate as Singh writes it. */
    duaneCumulative: number | null
  }
}

/**
 * Current localised rate for the API (docs/math.md 2.1): the window of selectWindow over the crawl
 * history's update points (observation starts at the first crawl), refitted with time truncation at
 * the last crawl, since the crawls also say that nothing changed between the last update point and
 * the last crawl. With a rising or falling trend the rate is λ̌(now). When the trend test finds no
 * trend the window is taken as homogeneous and the rate is n/T (T from the window start to the last
 * crawl): λ̌ then only adds the noise of β̃, and a few points of an older regime at the window start
 * bend β̃ strongly. Measured over 100 runs each (bias, mean |error|): rate 2/day dropping to 0.2/day
 * −27 %, 27 % with λ̌ against +9 %, 15 % with n/T; rate 1/day jumping to 5/day +10 %, 11 % against
 * −7 %, 9 %; homogeneous 1/day −2 %, 8 % against 0 %, 6 %. Null when the window rule finds too few
 * points.
 */
export function currentRate(
  crawls: readonly CrawlChange[],
  nowDays: number,
  options: SelectWindowOptions = {},
): CurrentRate | null {
  if (!Number.isFinite(nowDays)) return null
  const times = crawls.map((c) => c.atDays).filter((t) => Number.isFinite(t))
  if (times.length < 2) return null
  const firstCrawl = times.reduce((a, b) => Math.min(a, b), Infinity)
  const lastCrawl = times.reduce((a, b) => Math.max(a, b), -Infinity)
  const points = updatePointsFromCrawls(crawls)
  const selected = selectWindow(points, { ...options, originDays: options.originDays ?? firstCrawl })
  if (selected === null) return null
  const windowPoints = points.slice(selected.startIndex)
  const fit =
    fitPowerLaw(windowPoints, selected.fit.windowStartDays, { observedUntilDays: lastCrawl, trendZ: options.trendZ }) ??
    selected.fit
  const beta = fit.betaCorrected ?? fit.beta
  const at = Math.max(nowDays, fit.windowEndDays)
  const spanDays = fit.windowEndDays - fit.windowStartDays
  const mean = spanDays > 0 && Number.isFinite(fit.n / spanDays) ? fit.n / spanDays : null
  const duane = duaneFit(windowPoints, fit.windowStartDays)
  const duaneRates = duane === null ? null : duaneRate(duane, fit.windowStartDays, at)
  const alternatives = {
    mean,
    weibull: localisedRate(fit, at),
    lambdaBar: lambdaBar(fit, at),
    duane: duaneRates?.changesPerDay ?? null,
    duaneCumulative: duaneRates?.cumulativeChangesPerDay ?? null,
  }
  const base = { trend: fit.trend, beta, points: fit.n, windowStartDays: fit.windowStartDays, alternatives }
  if (fit.trend === 'constant') {
    return mean !== null ? { ...base, changesPerDay: mean, model: 'constant' } : null
  }
  const rate = alternatives.weibull
  return rate === null ? null : { ...base, changesPerDay: rate, model: 'power-law' }
}

/**
 * Windows over the whole crawl history (segmentHistory over the update points of
 * updatePointsFromCrawls, observation starting at the first crawl).
 */
export function rateHistory(crawls: readonly CrawlChange[], options: SelectWindowOptions = {}): RateWindow[] {
  const times = crawls.map((c) => c.atDays).filter((t) => Number.isFinite(t))
  if (times.length < 2) return []
  const points = updatePointsFromCrawls(crawls)
  return segmentHistory(points, {
    ...options,
    originDays: options.originDays ?? times.reduce((a, b) => Math.min(a, b), Infinity),
  })
}
