/**
 * Page universes with known change times (docs/math.md section 4): every change of every page over the
 * horizon is drawn up front, so the engine can score freshness exactly and every policy of one
 * workload sees the same changes.
 *
 * Time is in simulated days from 0 (the start of the run) to `horizonDays`. At time 0 every page's
 * stored copy is in sync (an initial crawl that no policy pays for), so a page that is never crawled
 * is fresh until its first change.
 */
import type { Random } from '../math/random.ts'
import { empiricalAgeLaw, paretoAgeLaw, poissonAgeLaw, weibullAgeLaw, type AgeLaw } from '../math/renewal/ageLaws.ts'

export type SyntheticWorkload = 'poisson' | 'pareto' | 'weibull' | 'drift'
export type ImportanceKind = 'zipf' | 'equal'

export interface Universe {
  workload: string
  importanceKind: ImportanceKind
  pageCount: number
  horizonDays: number
  /** Freshness is scored on [warmupDays, horizonDays]. */
  warmupDays: number
  /** Change times of page i are changeDays[changeOffsets[i] .. changeOffsets[i+1]), ascending, in (0, horizonDays]. */
  changeDays: Float64Array
  changeOffsets: Int32Array
  /**
   * The Δ the oracle uses, changes per day: the Poisson rate; 1 / mean inter-update time for renewal
   * pages; the time-averaged rate over the horizon for drifting and replayed pages (docs/math.md 4).
   */
  trueChangesPerDay: Float64Array
  /**
   * The age law the distribution-aware oracle uses (docs/math.md 3.5, 4): the true one of Poisson,
   * Pareto and Weibull pages; for drifting and replayed pages the law of the page's actual ages over
   * the scoring window (see pageAgeLaws).
   */
  ageLaws: readonly AgeLaw[]
  /** μ_i. */
  importance: Float64Array
  /** R, crawls per day, the same for every policy. */
  budgetCrawlsPerDay: number
  /** How simulated time relates to real time, for the report (replay only). */
  timeScale: string | null
  /**
   * The host (or group) of each page, 0 … hostNames.length − 1: pages of one host share a rate level.
   * Absent: every page is on one host.
   */
  hostOfPage?: Int32Array
  hostNames?: readonly string[]
  /** 1 when the page's host sends a usable Last-Modified, else 0 (the crawler then reports no age). Absent: all do. */
  sendsLastModified?: Uint8Array
}

interface SyntheticOptions {
  workload: SyntheticWorkload
  importanceKind: ImportanceKind
  pageCount: number
  horizonDays: number
  warmupDays: number
  /** R / n: the budget per page, crawls per day. */
  crawlsPerPagePerDay: number
  random: Random
  /** Importance is drawn from its own stream, so the change times do not depend on it. */
  importanceRandom: Random
  /**
   * Hosts from their own stream: sizes uniform on [MIN_PAGES_PER_HOST, MAX_PAGES_PER_HOST] and a rate level per
   * host that its pages' rates scatter around (HOST_RATE_SPREAD). Absent: hosts of a fixed size, and every
   * page's rate drawn on its own (log-uniform), as before hosts existed.
   */
  hostRandom?: Random
  /** Share of hosts that send a usable Last-Modified, drawn per host from its own stream (default: every host). */
  lastModifiedShare?: number
  lastModifiedRandom?: Random
}

/** Pages per host of a synthetic universe: uniform on [MIN, MAX]. */
const MIN_PAGES_PER_HOST = 20
const MAX_PAGES_PER_HOST = 50
/**
 * A page's change rate is its host's level times e^{σz}, z standard normal: pages of one host are alike
 * within about a factor e^σ, hosts differ over four decades, as sites of one kind resemble each other.
 */
const HOST_RATE_SPREAD = 1
/** The default share of hosts that send a usable Last-Modified (most servers send none, or a useless one). */
export const DEFAULT_LAST_MODIFIED_SHARE = 0.4

/** Host rate levels are log-uniform over four decades: 0.01 to 100 changes per day; page rates stay inside. */
const MIN_CHANGES_PER_DAY = 0.01
const MAX_CHANGES_PER_DAY = 100
/** Pareto shape α of the heavy-tailed renewal workload (finite mean, infinite variance). */
const PARETO_SHAPE = 1.5
/** Weibull shape k < 1 of the other heavy-tailed workload (coefficient of variation √5 ≈ 2.24). */
const WEIBULL_SHAPE = 0.5
/** A drifting page's rate is multiplied or divided by this factor at its jump time. */
const DRIFT_FACTOR = 10
/** Zipf exponent s of the importance weights μ = 1/rank^s. */
const ZIPF_EXPONENT = 1

/** Growable Float64Array of change times. */
class TimeBuffer {
  data = new Float64Array(1 << 16)
  length = 0
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2)
      bigger.set(this.data)
      this.data = bigger
    }
    this.data[this.length++] = value
  }
  toArray(): Float64Array {
    return this.data.slice(0, this.length)
  }
}

function logUniformChangesPerDay(random: Random): number {
  const logMin = Math.log(MIN_CHANGES_PER_DAY)
  return Math.exp(logMin + random.next() * (Math.log(MAX_CHANGES_PER_DAY) - logMin))
}

/** A standard normal draw (Box–Muller). */
function standardNormal(random: Random): number {
  const u = 1 - random.next()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next())
}

/**
 * Consecutive pages in hosts of MIN_PAGES_PER_HOST … MAX_PAGES_PER_HOST pages (without a random source, all of
 * their mean size); returns each page's host.
 */
function syntheticHosts(pageCount: number, random: Random | undefined): { hostOfPage: Int32Array; hostCount: number } {
  const hostOfPage = new Int32Array(pageCount)
  let host = 0
  for (let start = 0; start < pageCount; host++) {
    const size =
      random === undefined
        ? (MIN_PAGES_PER_HOST + MAX_PAGES_PER_HOST) >> 1
        : MIN_PAGES_PER_HOST + random.int(MAX_PAGES_PER_HOST - MIN_PAGES_PER_HOST + 1)
    for (let i = start; i < Math.min(pageCount, start + size); i++) hostOfPage[i] = host
    start += size
  }
  return { hostOfPage, hostCount: host }
}

/** drawLastModified with a universe's options; without them every host sends one. */
export function lastModifiedFlags(
  hostOfPage: Int32Array,
  hostCount: number,
  options: { lastModifiedShare?: number; lastModifiedRandom?: Random },
): Uint8Array {
  const { lastModifiedShare: share, lastModifiedRandom: random } = options
  if (share === undefined || random === undefined || share >= 1) return new Uint8Array(hostOfPage.length).fill(1)
  return drawLastModified(hostOfPage, hostCount, share, random)
}

/** Which hosts send a usable Last-Modified (a `share` of them, each independently), as a per-page flag. */
function drawLastModified(hostOfPage: Int32Array, hostCount: number, share: number, random: Random): Uint8Array {
  const hostSends = Array.from({ length: hostCount }, () => random.next() < share)
  return Uint8Array.from(hostOfPage, (h) => (hostSends[h] ? 1 : 0))
}

/** Weights μ: Zipf 1/rank^s over a random permutation of the pages (independent of Δ), or all 1. */
export function drawImportance(kind: ImportanceKind, pageCount: number, random: Random): Float64Array {
  const importance = new Float64Array(pageCount).fill(1)
  if (kind === 'equal') return importance
  const rank = Int32Array.from({ length: pageCount }, (_, i) => i + 1)
  for (let i = pageCount - 1; i > 0; i--) {
    const j = random.int(i + 1)
    const t = rank[i]!
    rank[i] = rank[j]!
    rank[j] = t
  }
  for (let i = 0; i < pageCount; i++) importance[i] = 1 / Math.pow(rank[i]!, ZIPF_EXPONENT)
  return importance
}

/** Poisson change times at a constant rate on (fromDays, toDays]. */
function pushPoisson(out: TimeBuffer, changesPerDay: number, fromDays: number, toDays: number, random: Random): number {
  let count = 0
  if (!(changesPerDay > 0)) return 0
  for (let t = fromDays + random.exponential(changesPerDay); t <= toDays; t += random.exponential(changesPerDay)) {
    out.push(t)
    count++
  }
  return count
}

/**
 * Pareto(α, x_m) gaps with mean 1/Δ (x_m = (α − 1)/(αΔ)). The first change is drawn from the
 * stationary residual-life law, so the process is in equilibrium from time 0:
 * G(x) = x/m for x ≤ x_m, else inverse x = x_m (α(1 − u))^{1/(1 − α)}, P(x ≤ x_m) = (α − 1)/α.
 */
function pushPareto(out: TimeBuffer, changesPerDay: number, horizonDays: number, random: Random): void {
  const alpha = PARETO_SHAPE
  const scale = (alpha - 1) / (alpha * changesPerDay)
  const meanDays = 1 / changesPerDay
  const u = random.next()
  let t = u < (alpha - 1) / alpha ? u * meanDays : scale * Math.pow(alpha * (1 - u), 1 / (1 - alpha))
  while (t <= horizonDays) {
    out.push(t)
    t += scale * Math.pow(1 - random.next(), -1 / alpha)
  }
}

/**
 * Weibull(k, θ) gaps with mean 1/Δ (θ = 1/(Δ Γ(1 + 1/k)); Γ(3) = 2 for k = 1/2). The residual law
 * has no closed form, so the process starts at −max(horizon, 50/Δ) and runs into equilibrium.
 */
function pushWeibull(out: TimeBuffer, changesPerDay: number, horizonDays: number, random: Random): void {
  const k = WEIBULL_SHAPE
  const theta = 1 / (changesPerDay * 2) // Γ(1 + 1/k) = Γ(3) = 2 for k = 1/2
  const gap = () => theta * Math.pow(-Math.log1p(-random.next()), 1 / k)
  let t = -Math.max(horizonDays, 50 / changesPerDay)
  for (;;) {
    t += gap()
    if (t > horizonDays) return
    if (t > 0) out.push(t)
  }
}

export function syntheticUniverse(options: SyntheticOptions): Universe {
  const { workload, pageCount: n, horizonDays, random } = options
  const buffer = new TimeBuffer()
  const offsets = new Int32Array(n + 1)
  const trueRates = new Float64Array(n)
  const { hostRandom } = options
  const { hostOfPage, hostCount } = syntheticHosts(n, hostRandom)
  const hostLevels = hostRandom ? Array.from({ length: hostCount }, () => logUniformChangesPerDay(hostRandom)) : null
  for (let i = 0; i < n; i++) {
    offsets[i] = buffer.length
    const rate = hostLevels
      ? Math.min(
          MAX_CHANGES_PER_DAY,
          Math.max(
            MIN_CHANGES_PER_DAY,
            hostLevels[hostOfPage[i]!]! * Math.exp(HOST_RATE_SPREAD * standardNormal(random)),
          ),
        )
      : logUniformChangesPerDay(random)
    if (workload === 'poisson') {
      pushPoisson(buffer, rate, 0, horizonDays, random)
      trueRates[i] = rate
    } else if (workload === 'pareto') {
      pushPareto(buffer, rate, horizonDays, random)
      trueRates[i] = rate
    } else if (workload === 'weibull') {
      pushWeibull(buffer, rate, horizonDays, random)
      trueRates[i] = rate
    } else {
      // Jump at a uniform time in the middle fifth of the run, up or down by DRIFT_FACTOR.
      const jumpDays = horizonDays * (0.4 + 0.2 * random.next())
      const after = random.next() < 0.5 ? rate * DRIFT_FACTOR : rate / DRIFT_FACTOR
      pushPoisson(buffer, rate, 0, jumpDays, random)
      pushPoisson(buffer, after, jumpDays, horizonDays, random)
      trueRates[i] = (rate * jumpDays + after * (horizonDays - jumpDays)) / horizonDays
    }
  }
  offsets[n] = buffer.length
  const changeDays = buffer.toArray()
  const trueLaw = (i: number): AgeLaw => {
    const rate = trueRates[i]!
    if (workload === 'poisson') return poissonAgeLaw(rate)
    if (workload === 'pareto') return paretoAgeLaw(PARETO_SHAPE, 1 / rate)
    if (workload === 'weibull') return weibullAgeLaw(WEIBULL_SHAPE, 1 / rate)
    return realisedAgeLaw(changeDays, offsets, i, options.warmupDays, horizonDays)
  }
  return {
    workload,
    importanceKind: options.importanceKind,
    pageCount: n,
    horizonDays,
    warmupDays: options.warmupDays,
    changeDays,
    changeOffsets: offsets,
    trueChangesPerDay: trueRates,
    ageLaws: Array.from({ length: n }, (_, i) => trueLaw(i)),
    importance: drawImportance(options.importanceKind, n, options.importanceRandom),
    budgetCrawlsPerDay: options.crawlsPerPagePerDay * n,
    timeScale: null,
    hostOfPage,
    hostNames: Array.from({ length: hostCount }, (_, h) => `host-${h}.example`),
    sendsLastModified: lastModifiedFlags(hostOfPage, hostCount, options),
  }
}

/**
 * The law of page i's actual ages over the scoring window [warmupDays, horizonDays] (ageLaws.ts,
 * empiricalAgeLaw). It is what "true" means for a page whose changes follow no stationary law (a
 * drifting page, a replayed history): periodic crawling at rate ρ with a random phase is fresh, in
 * expectation over the phase, exactly ρ ∫_0^{1/ρ} (1 − G(a)) da of the window with this G, so the
 * oracle built from it is the best fixed periodic schedule in hindsight.
 */
export function realisedAgeLaw(
  changeDays: Float64Array,
  changeOffsets: Int32Array,
  page: number,
  warmupDays: number,
  horizonDays: number,
): AgeLaw {
  return empiricalAgeLaw(changeDays.subarray(changeOffsets[page]!, changeOffsets[page + 1]!), warmupDays, horizonDays)
}

/** Deterministic 32-bit seed from a base seed and labels (FNV-1a over the labels). */
export function deriveSeed(seed: number, ...labels: string[]): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0
  for (const label of labels) {
    for (let i = 0; i < label.length; i++) {
      h ^= label.charCodeAt(i)
      h = Math.imul(h, 0x01000193) >>> 0
    }
    h ^= 0xff
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}
