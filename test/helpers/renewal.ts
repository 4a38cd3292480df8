// Renewal update processes with mean interval 1 day, and crawls of them, for the simulation tests of
// docs/math.md 2.2.
import type { Random } from '../../src/math/random.ts'
import type { AgeCrawl } from '../../src/math/updateDistribution.ts'

/** An inter-update law with mean 1 day: sampler and survival function 1 − F_U. */
export interface UpdateLaw {
  name: string
  sample(random: Random): number
  survival(days: number): number
}

export const EXPONENTIAL: UpdateLaw = {
  name: 'exponential',
  sample: (random) => random.exponential(1),
  survival: (x) => Math.exp(-x),
}

/** Lomax (Pareto II) with shape α > 1 and scale α − 1 (mean 1); CV √(α/(α − 2)) for α > 2, infinite below. */
export function lomax(alpha: number): UpdateLaw {
  const scale = alpha - 1
  return {
    name: `lomax α=${alpha}`,
    sample: (random) => scale * (Math.pow(1 - random.next(), -1 / alpha) - 1),
    survival: (x) => Math.pow(1 + x / scale, -alpha),
  }
}

/** Weibull with shape k and mean 1 (scale 1/Γ(1 + 1/k)). */
export function weibull(shape: number): UpdateLaw {
  const scale = 1 / gamma(1 + 1 / shape)
  return {
    name: `weibull k=${shape}`,
    sample: (random) => scale * Math.pow(-Math.log1p(-random.next()), 1 / shape),
    survival: (x) => Math.exp(-Math.pow(x / scale, shape)),
  }
}

/** Γ(z) for z > 0 (Lanczos, g = 7; relative error below 1e-13). */
function gamma(z: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  if (z < 0.5) return Math.PI / (Math.sin(Math.PI * z) * gamma(1 - z))
  const x = z - 1
  let sum = c[0]!
  for (let i = 1; i < 9; i++) sum += c[i]! / (x + i)
  const t = x + 7.5
  return Math.sqrt(2 * Math.PI) * Math.pow(t, x + 0.5) * Math.exp(-t) * sum
}

/** True residual CDF G_U(x) = μ ∫_0^x (1 − F_U(y)) dy with μ = 1, by Simpson's rule (2000 panels). */
export function trueAgeCdf(law: UpdateLaw, x: number): number {
  const panels = 2000
  const h = x / panels
  let sum = law.survival(0) + law.survival(x)
  for (let i = 1; i < panels; i++) sum += (i % 2 === 1 ? 4 : 2) * law.survival(i * h)
  return (sum * h) / 3
}

/** Renewal updates from −burnInDays (an update there) to endDays. */
export function simulateUpdates(random: Random, law: UpdateLaw, burnInDays: number, endDays: number): number[] {
  const times: number[] = []
  let t = -burnInDays
  while (t <= endDays) {
    times.push(t)
    t += law.sample(random)
  }
  return times
}

/** Crawls at the given times: changed since the previous crawl, and age = time since the last update. */
export function crawlsAt(updates: readonly number[], crawlTimes: readonly number[]): AgeCrawl[] {
  const crawls: AgeCrawl[] = []
  let next = 0
  let lastUpdate = Number.NEGATIVE_INFINITY
  crawlTimes.forEach((at, k) => {
    let changed = false
    while (next < updates.length && updates[next]! <= at) {
      lastUpdate = updates[next++]!
      changed = true
    }
    crawls.push({ atDays: at, changed: k === 0 ? null : changed, ageDays: at - lastUpdate })
  })
  return crawls
}

export function randomCrawlTimes(random: Random, count: number, meanIntervalDays: number): number[] {
  const times: number[] = []
  let t = 0
  for (let i = 0; i < count; i++) {
    t += random.exponential(1 / meanIntervalDays)
    times.push(t)
  }
  return times
}

export function constantCrawlTimes(count: number, intervalDays: number): number[] {
  return Array.from({ length: count }, (_, i) => (i + 1) * intervalDays)
}

/**
 * recrawl's default schedule: periodic crawls whose interval changes whenever the page's rate is
 * re-derived, here every 50 crawls by a factor drawn from [0.7, 1.4].
 */
export function resolvedPeriodicCrawlTimes(random: Random, count: number, intervalDays: number): number[] {
  const times: number[] = []
  let t = 0
  let current = intervalDays
  for (let i = 0; i < count; i++) {
    if (i % 50 === 0) current = intervalDays * (0.7 + 0.7 * random.next())
    t += current
    times.push(t)
  }
  return times
}

export function withoutAges(crawls: readonly AgeCrawl[]): AgeCrawl[] {
  return crawls.map((c) => ({ ...c, ageDays: null }))
}

/** Crawls of a renewal page at the given times (updates from 200 days before the first crawl). */
export function renewalCrawls(random: Random, law: UpdateLaw, crawlTimes: readonly number[]): AgeCrawl[] {
  const updates = simulateUpdates(random, law, 200, crawlTimes[crawlTimes.length - 1]! + 1)
  return crawlsAt(updates, crawlTimes)
}
