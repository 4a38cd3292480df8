/**
 * Is a page's update process Poisson? A parametric-bootstrap test on the age CDF of docs/math.md 2.2
 * (Li, Cline & Loguinov 2017), valid for the crawl times the page actually had.
 *
 * The statistic is the largest gap D between the method's estimate of G_U and the Poisson curve
 * 1 − e^{−μ̂x}, where μ̂ is the Poisson model's own estimate from the same crawls: the MLE of
 * docs/math.md 1.5 from the change flags (M4, M6), or 1/mean age (M2, the ages of a Poisson page
 * being exponential). It is compared only where the data identify G_U: at multiples of the crawl
 * interval for M4, at the observed lags for M6, at the observed ages for M2. The slope of G_U at 0
 * (μ = g_U(0)) is not used: with a constant crawl interval it is not identified, which is what made
 * a distance built on it label Poisson pages non-Poisson.
 *
 * The null distribution of D is simulated: Poisson updates at rate μ̂ observed at the page's own
 * crawl times (with the same unknown flags or missing ages), the whole estimate recomputed for each
 * replicate. That accounts for the strong dependence between the crawls of one page, which makes
 * the textbook Kolmogorov–Smirnov bands far too narrow.
 */
import { countBelow } from './numbers.ts'
import { createRandom, type Random } from './random.ts'
import {
  MIN_CRAWLS,
  latticeChain,
  m6DefaultMaxLag,
  pairCurve,
  validCrawls,
  type AgeCrawl,
} from './updateDistribution.ts'

export type PoissonVerdict = 'consistent-with-poisson' | 'not-poisson' | 'cannot-tell'

interface PoissonFit {
  verdict: PoissonVerdict
  method: 'M2' | 'M4' | 'M6'
  /** The Poisson model's rate estimate μ̂ (changes per day) the curve is compared with; null without data. */
  changesPerDay: number | null
  /** sup |Ĝ_U(x) − (1 − e^{−μ̂x})| over the identified points; null without data. */
  distance: number | null
  /** 95th percentile of the distance for Poisson pages with these crawls: smaller gaps are noise. */
  distanceBand95: number | null
  /** Share of simulated Poisson pages at least as far from the curve, (1 + k)/(B + 1); null when not tested. */
  pValue: number | null
  /** The verdict is "not-poisson" when pValue ≤ level. */
  level: number
  bootstrapSamples: number
  /** Why the verdict is what it is, in words. */
  note: string
}

interface PoissonFitOptions {
  /** Test level; default DEFAULT_POISSON_LEVEL. */
  level?: number
  /** Replicates B; default 199 (99 when one replicate is expensive). At least 99 so that p ≤ 0.01 is reachable. */
  bootstrapSamples?: number
  /** Seed of the simulation: a page's verdict is deterministic. */
  seed?: number
}

/**
 * 1 %: a dashboard over many pages shows about one false "not Poisson" per hundred Poisson pages.
 * Measured rates are in docs/math.md 2.2 and test/unit/math/poissonFit.test.ts.
 */
export const DEFAULT_POISSON_LEVEL = 0.01
/** Changes (and, without ages, unchanged crawl intervals) needed before anything is tested. */
const MIN_POISSON_EVENTS = 10
const DEFAULT_BOOTSTRAP = 199
const MIN_BOOTSTRAP = 99
/** Above this many elementary steps per replicate, B drops to MIN_BOOTSTRAP. */
const EXPENSIVE_REPLICATE = 100_000
/** M6 pairs visited per replicate at most; the tested lag range shrinks to respect it. */
const M6_TEST_MAX_PAIRS = 150_000
/**
 * Lag bins of the M6 test: coarser than the displayed curve, since the test needs pairs per bin more
 * than resolution (Lomax α = 3 pages with re-derived periodic crawls, 1000 crawls: detected in 90-97 %
 * with 25 bins, 70-87 % with 50 or the display's bins). The bootstrap calibrates any binning.
 */
const M6_TEST_BINS = 25
/**
 * "cannot-tell" when the null band is at least this share of the room the data leave for any
 * deviation: 1 − min(Ĝ, Poisson) at the first identified point (with a constant interval and nearly
 * every crawl seeing a change, every renewal process gives Ĝ(kΔ) ≈ 1 for all k).
 */
const ROOM_SHARE = 0.5
const DEFAULT_SEED = 0x5eed

/** One method's statistic on data of one shape; `simulate` draws Poisson data of the same shape. */
interface Design<Data> {
  data: Data
  /** Distance, rate and room (null rate: nothing to compare). */
  statistic(data: Data): { distance: number; rate: number; room: number } | null
  simulate(rate: number, random: Random): Data
  /** Elementary steps of one replicate (sets B). */
  work: number
  /** Null when there is enough to test, else why not. */
  shortage: string | null
}

/**
 * Tests the Poisson hypothesis with the given method's curve. `method` is the one chosen for the
 * curve (chooseMethod in updateDistribution.ts); M4 needs (nearly) constant intervals.
 */
export function poissonFit(
  crawls: readonly AgeCrawl[],
  method: 'M2' | 'M4' | 'M6',
  options: PoissonFitOptions = {},
): PoissonFit {
  const level = options.level ?? DEFAULT_POISSON_LEVEL
  const sorted = validCrawls(crawls)
  const design: Design<unknown> | null =
    method === 'M2' ? ageDesign(sorted) : method === 'M4' ? latticeDesign(sorted) : pairDesign(sorted)
  const empty = (note: string): PoissonFit => ({
    verdict: 'cannot-tell',
    method,
    changesPerDay: null,
    distance: null,
    distanceBand95: null,
    pValue: null,
    level,
    bootstrapSamples: 0,
    note,
  })
  if (design === null) return empty(`fewer than ${MIN_CRAWLS} usable crawls`)
  const observed = design.statistic(design.data)
  if (observed === null) return empty('no change seen: nothing to compare')
  const base = { method, changesPerDay: observed.rate, distance: observed.distance, level }
  if (design.shortage !== null) {
    return {
      ...base,
      verdict: 'cannot-tell',
      distanceBand95: null,
      pValue: null,
      bootstrapSamples: 0,
      note: design.shortage,
    }
  }
  const replicates = Math.max(
    MIN_BOOTSTRAP,
    Math.floor(options.bootstrapSamples ?? (design.work > EXPENSIVE_REPLICATE ? MIN_BOOTSTRAP : DEFAULT_BOOTSTRAP)),
  )
  const random = createRandom(options.seed ?? DEFAULT_SEED)
  const nullDistances: number[] = []
  for (let b = 0; b < replicates; b++) {
    const simulated = design.statistic(design.simulate(observed.rate, random))
    // A replicate without any change is as far from the curve as data can be.
    nullDistances.push(simulated === null ? 1 : simulated.distance)
  }
  nullDistances.sort((a, b) => a - b)
  const atLeast = nullDistances.length - countClearlyBelow(nullDistances, observed.distance)
  const pValue = (1 + atLeast) / (replicates + 1)
  const band = nullDistances[Math.min(replicates - 1, Math.ceil(0.95 * replicates) - 1)]!
  const fit = { ...base, distanceBand95: band, pValue, bootstrapSamples: replicates }
  const distance = observed.distance.toFixed(3)
  if (pValue <= level) {
    return {
      ...fit,
      verdict: 'not-poisson',
      note: `distance ${distance} is beyond what Poisson pages with these crawls show (p = ${pValue.toFixed(3)})`,
    }
  }
  if (band >= ROOM_SHARE * observed.room) {
    return {
      ...fit,
      verdict: 'cannot-tell',
      note: `with these crawls a Poisson page differs by up to ${band.toFixed(3)}, and no update process can differ by more than ${observed.room.toFixed(3)}: crawl more often to tell`,
    }
  }
  return {
    ...fit,
    verdict: 'consistent-with-poisson',
    note: `distance ${distance} is within what Poisson pages with these crawls show (p = ${pValue.toFixed(3)})`,
  }
}

/** Sorted values below x; values within a relative 1e-12 of x count as ties (at least as far). */
function countClearlyBelow(sorted: readonly number[], x: number): number {
  return countBelow(sorted, x - 1e-12 * Math.abs(x))
}

/** Poisson curve at x for rate μ. */
function poissonCdf(rate: number, x: number): number {
  return -Math.expm1(-rate * x)
}

// ---------------------------------------------------------------- M2: ages

function ageDesign(sorted: readonly AgeCrawl[]): Design<(number | null)[]> | null {
  const ages = sorted.map((c) =>
    c.ageDays !== null && Number.isFinite(c.ageDays) && c.ageDays >= 0 ? c.ageDays : null,
  )
  const known = ages.filter((a) => a !== null).length
  if (known < MIN_CRAWLS) return null
  // A change is seen at crawl j when its age is shorter than the interval since the crawl before.
  let changes = 0
  for (let j = 1; j < sorted.length; j++) {
    const age = ages[j]
    if (age !== null && age !== undefined && age < sorted[j]!.atDays - sorted[j - 1]!.atDays) changes++
  }
  const times = sorted.map((c) => c.atDays)
  return {
    data: ages,
    work: known * Math.log2(known + 1),
    shortage:
      changes < MIN_POISSON_EVENTS
        ? `only ${changes} changes seen between crawls; at least ${MIN_POISSON_EVENTS} are needed`
        : null,
    statistic(data) {
      const values = Float64Array.from(data.filter((a): a is number => a !== null)).sort()
      const n = values.length
      let sum = 0
      for (let i = 0; i < n; i++) sum += values[i]!
      const mean = sum / n
      if (!(mean > 0)) return null
      const rate = 1 / mean
      let distance = 0
      for (let i = 0; i < n; i++) {
        // Kolmogorov–Smirnov gap on both sides of each step of the empirical CDF.
        const f = poissonCdf(rate, values[i]!)
        distance = Math.max(distance, Math.abs((i + 1) / n - f), Math.abs(f - i / n))
      }
      return { distance, rate, room: 1 }
    },
    simulate(rate, random) {
      const out: (number | null)[] = []
      let age = random.exponential(rate)
      for (let j = 0; j < times.length; j++) {
        if (j > 0) {
          const tau = times[j]! - times[j - 1]!
          const changeProbability = -Math.expm1(-rate * tau)
          // Given a change in the interval, the age is the time since the last of them: exponential truncated to [0, τ).
          age = random.next() < changeProbability ? -Math.log1p(-random.next() * changeProbability) / rate : age + tau
        }
        out.push(ages[j] === null ? null : age)
      }
      return out
    },
  }
}

// ---------------------------------------------------------------- M4 and M6: change flags

interface FlagShape {
  times: number[]
  /** Interval before each crawl (0 for the first). */
  taus: number[]
  /** Whether each crawl carries a change flag (the first never counts). */
  known: boolean[]
  changes: number
  unchanged: number
}

function flagShape(sorted: readonly AgeCrawl[]): FlagShape {
  const times = sorted.map((c) => c.atDays)
  const taus = times.map((t, j) => (j === 0 ? 0 : t - times[j - 1]!))
  const known = sorted.map((c, j) => j > 0 && c.changed !== null && taus[j]! > 0)
  let changes = 0
  let unchanged = 0
  sorted.forEach((c, j) => {
    if (!known[j]) return
    if (c.changed) changes++
    else unchanged++
  })
  return { times, taus, known, changes, unchanged }
}

/** Below this share of unchanged intervals, every update process looks alike at this crawl rate. */
const SATURATED_UNCHANGED_SHARE = 0.05

function flagShortage(shape: FlagShape): string | null {
  const needed = `at least ${MIN_POISSON_EVENTS} are needed`
  if (shape.changes < MIN_POISSON_EVENTS) return `only ${shape.changes} crawl intervals saw a change; ${needed}`
  if (shape.unchanged < MIN_POISSON_EVENTS) {
    return shape.unchanged < SATURATED_UNCHANGED_SHARE * (shape.changes + shape.unchanged)
      ? `only ${shape.unchanged} crawl intervals saw no change: at this crawl rate nearly every interval sees a change, whatever the update process; crawl more often to tell`
      : `only ${shape.unchanged} crawl intervals saw no change; ${needed}`
  }
  return null
}

/**
 * The Poisson MLE of docs/math.md 1.5 from the flags: the root of Σ_{changed} τ/(e^{μτ} − 1) =
 * Σ_{unchanged} τ, by Newton steps on ln μ inside a bisection bracket, started at `start`. This is
 * the equation exactMle solves; it is solved here over the fixed intervals of one page thousands of
 * times per test, so without allocation. Only changes (no unchanged interval) get the same
 * smoothing as exactMle: one changed and one unchanged pseudo-interval of the mean length. Null
 * without a change.
 */
export function flagMle(
  taus: ArrayLike<number>,
  flags: ArrayLike<boolean | null>,
  known: ArrayLike<boolean>,
  start?: number,
): number | null {
  let changes = 0
  let unchangedDays = 0
  let totalDays = 0
  let count = 0
  for (let j = 0; j < flags.length; j++) {
    if (!known[j]) continue
    const tau = taus[j]!
    count++
    totalDays += tau
    if (flags[j] === true) changes++
    else if (flags[j] === false) unchangedDays += tau
  }
  if (changes === 0) return null
  const pseudo = unchangedDays > 0 ? 0 : totalDays / count
  unchangedDays += pseudo
  // g(u) = ln Σ_changed τ/(e^{μτ} − 1) − ln U, decreasing in u = ln μ.
  const evaluate = (u: number): { value: number; slope: number } => {
    const rate = Math.exp(u)
    let sum = 0
    let derivative = 0
    const add = (tau: number) => {
      const x = rate * tau
      if (x > 700) return
      const em1 = Math.expm1(x)
      const term = tau / em1
      sum += term
      derivative -= (term * x * (em1 + 1)) / em1
    }
    for (let j = 0; j < flags.length; j++) if (known[j] && flags[j] === true) add(taus[j]!)
    if (pseudo > 0) add(pseudo)
    return sum > 0
      ? { value: Math.log(sum) - Math.log(unchangedDays), slope: derivative / sum }
      : { value: -Infinity, slope: 0 }
  }
  let lo = Math.log(1e-12)
  let hi = Math.log(1e12)
  let u =
    start !== undefined && start > 0 && Number.isFinite(start)
      ? Math.log(start)
      : Math.log(Math.max(1e-12, changes / totalDays))
  for (let iteration = 0; iteration < 200; iteration++) {
    const { value, slope } = evaluate(u)
    if (value > 0) lo = u
    else hi = u
    let next = slope < 0 && Number.isFinite(value) ? u - value / slope : (lo + hi) / 2
    if (!(next > lo && next < hi)) next = (lo + hi) / 2
    if (Math.abs(next - u) < 1e-12 || hi - lo < 1e-12) {
      u = next
      break
    }
    u = next
  }
  const rate = Math.exp(u)
  return Number.isFinite(rate) && rate > 0 ? rate : null
}

/** Change flags of a Poisson page with this rate at the shape's crawl times (probabilities cached per rate). */
function flagSimulator(shape: FlagShape): (rate: number, random: Random) => (boolean | null)[] {
  let cachedRate = Number.NaN
  let probabilities = new Float64Array(0)
  return (rate, random) => {
    if (rate !== cachedRate) {
      probabilities = Float64Array.from(shape.taus, (tau) => -Math.expm1(-rate * tau))
      cachedRate = rate
    }
    const flags = new Array<boolean | null>(shape.times.length)
    for (let j = 0; j < flags.length; j++) flags[j] = shape.known[j] ? random.next() < probabilities[j]! : null
    return flags
  }
}

function latticeDesign(sorted: readonly AgeCrawl[]): Design<(boolean | null)[]> | null {
  if (sorted.length < MIN_CRAWLS) return null
  const chain = latticeChain(sorted)
  if (chain === null) return null
  const shape = flagShape(sorted)
  const delta = chain.intervalDays
  const largest = chain.values.reduce((a, b) => Math.max(a, b), delta)
  const multiples = Math.max(1, Math.round(largest / delta))
  const counts = new Float64Array(multiples + 2)
  return {
    data: sorted.map((c) => c.changed),
    work: 2 * sorted.length,
    shortage: flagShortage(shape),
    statistic(data) {
      // With a constant interval the MLE of docs/math.md 1.5 is −ln(1 − X/n)/Δ, so the Poisson
      // curve at kΔ is 1 − (1 − X/n)^k: the geometric law of the M4 values.
      let changes = 0
      let intervals = 0
      counts.fill(0)
      let values = 0
      let chainLength = 0
      for (let j = 1; j < data.length; j++) {
        const flag = data[j]
        if (shape.known[j]) {
          intervals++
          if (flag === true) changes++
        }
        if (flag === true) chainLength = 1
        else if (flag === false && chainLength > 0) chainLength++
        else chainLength = 0
        if (chainLength > 0) {
          counts[Math.min(multiples + 1, chainLength)]! += 1
          values++
        }
      }
      if (changes === 0 || values === 0) return null
      const unchangedShare = changes < intervals ? 1 - changes / intervals : 0.5 / (intervals + 1)
      const rate = -Math.log(unchangedShare) / delta
      let cumulative = 0
      let distance = 0
      let power = 1
      for (let k = 1; k <= multiples; k++) {
        cumulative += counts[k]!
        power *= unchangedShare
        distance = Math.max(distance, Math.abs(cumulative / values - (1 - power)))
      }
      return { distance, rate, room: 1 - Math.min(counts[1]! / values, 1 - unchangedShare) }
    },
    simulate: flagSimulator(shape),
  }
}

function pairDesign(sorted: readonly AgeCrawl[]): Design<(boolean | null)[]> | null {
  const n = sorted.length
  if (n < MIN_CRAWLS) return null
  const shape = flagShape(sorted)
  const spanDays = shape.times[n - 1]! - shape.times[0]!
  if (!(spanDays > 0)) return null
  const maxLag = Math.min(m6DefaultMaxLag(sorted), (M6_TEST_MAX_PAIRS / n) * (spanDays / (n - 1)))
  const pairsPerCrawl = Math.max(1, maxLag / (spanDays / (n - 1)))
  const data = sorted.map((c) => c.changed)
  // Replicates start their MLE at the observed rate, which they are simulated from.
  const observedRate = flagMle(shape.taus, data, shape.known) ?? undefined
  return {
    data,
    work: n * pairsPerCrawl,
    shortage: flagShortage(shape),
    statistic(data) {
      const rate = flagMle(shape.taus, data, shape.known, observedRate)
      if (rate === null) return null
      const blocks = pairCurve(shape.times, data, maxLag, M6_TEST_BINS)
      if (blocks.length === 0) return null
      let distance = 0
      for (const b of blocks) distance = Math.max(distance, Math.abs(b.cdf - poissonCdf(rate, b.ageDays)))
      const first = Math.min(blocks[0]!.cdf, poissonCdf(rate, blocks[0]!.ageDays))
      return { distance, rate, room: 1 - first }
    },
    simulate: flagSimulator(shape),
  }
}
