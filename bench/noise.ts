// Noise recognised at a fleet's cadence (docs/math.md 1.10): pages whose hash differs on every fetch, and
// Poisson pages that simply change often, run through the page step (src/core/pageStep.ts) by a fleet that
// leases every hour: at each hourly lease every due page is handed out and crawled within the next
// `--spread-minutes`. Reports, per kind of page, the share flagged noisy within the horizon, and for noisy
// pages the crawls until the flag.
//
//   node --import tsx bench/noise.ts [--pages 200] [--days 30] [--lease-minutes 60] [--lambda 0.1] [--seed 1]
//
// λ is the stored multiplier of the optimiser (docs/math.md 3.1): larger means a tighter budget.
import { parseArgs } from 'node:util'
import { createRandom, type Random } from '../src/math/random.ts'
import { MS_PER_DAY, MS_PER_MINUTE } from '../src/math/units.ts'
import { applyCrawl, newPageState, stepContext, type PageState } from '../src/core/pageStep.ts'
import { DEFAULT_SETTINGS } from '../src/core/settings.ts'

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '200' },
    days: { type: 'string', default: '30' },
    'lease-minutes': { type: 'string', default: '60' },
    'spread-minutes': { type: 'string', default: '10' },
    lambda: { type: 'string', default: '0.1' },
    seed: { type: 'string', default: '1' },
  },
})
const pagesPerKind = Number(values.pages)
const horizonDays = Number(values.days)
const leaseMs = Number(values['lease-minutes']) * MS_PER_MINUTE
const spreadMs = Number(values['spread-minutes']) * MS_PER_MINUTE
const lambda = Number(values.lambda)
const random = createRandom(Number(values.seed))

/** null: noise (a change on every fetch); else a Poisson page with this many changes per day. */
const KINDS: readonly (number | null)[] = [null, 1, 4, 8, 12, 16, 24, 48]
const T0 = Date.UTC(2026, 0, 1)

interface SimPage {
  kind: number | null
  state: PageState
  nextChangeMs: number
  changedSinceCrawl: boolean
  crawls: number
  flaggedAtCrawl: number | null
}

function exponentialMs(rate: number, r: Random): number {
  return (-Math.log(1 - r.next()) / rate) * MS_PER_DAY
}

const pages: SimPage[] = []
for (const kind of KINDS) {
  for (let k = 0; k < pagesPerKind; k++) {
    pages.push({
      kind,
      state: newPageState({ host: `h${k % 20}.example` }, T0 + random.next() * MS_PER_DAY),
      nextChangeMs: kind === null ? Infinity : T0 + exponentialMs(kind, random),
      changedSinceCrawl: false,
      crawls: 0,
      flaggedAtCrawl: null,
    })
  }
}
pages.forEach((p) => (p.state.nextCrawlAtMs = T0 + random.next() * MS_PER_DAY))

const settings = { ...DEFAULT_SETTINGS, budgetCrawlsPerDay: pages.length }
for (let leaseAt = T0; leaseAt < T0 + horizonDays * MS_PER_DAY; leaseAt += leaseMs) {
  for (const page of pages) {
    if (page.state.nextCrawlAtMs === null || page.state.nextCrawlAtMs > leaseAt) continue
    const crawledAtMs = Math.round(leaseAt + random.next() * spreadMs)
    while (page.nextChangeMs <= crawledAtMs) {
      page.changedSinceCrawl = true
      page.nextChangeMs += exponentialMs(page.kind!, random)
    }
    const changed = page.kind === null ? true : page.changedSinceCrawl
    page.changedSinceCrawl = false
    const ctx = stepContext(settings, { lambda, hostLambdas: {}, pages: pages.length }, crawledAtMs, random)
    const step = applyCrawl(
      page.state,
      {
        crawledAtMs,
        changed: page.crawls === 0 ? null : changed,
        contentHash: page.crawls === 0 ? 'baseline' : null,
        lastModifiedMs: null,
        httpStatus: 200,
        etag: null,
        fetchError: null,
        retryAfterSeconds: null,
        redirectTo: null,
      },
      ctx,
    )
    page.state = step.page
    page.crawls += 1
    if (page.state.noisy && page.flaggedAtCrawl === null) page.flaggedAtCrawl = page.crawls
  }
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
console.log(
  `hourly leases every ${values['lease-minutes']} min, spread ${values['spread-minutes']} min, λ = ${lambda}, ${horizonDays} days, ${pagesPerKind} pages per kind`,
)
console.log('| pages | flagged | flagged ever (at the end) | crawls to flag: median, 90th pct | crawls per page |')
console.log('|---|---|---|---|---|')
for (const kind of KINDS) {
  const group = pages.filter((p) => p.kind === kind)
  const flagged = group.filter((p) => p.flaggedAtCrawl !== null)
  const atEnd = group.filter((p) => p.state.noisy).length
  const toFlag = flagged.map((p) => p.flaggedAtCrawl!).sort((a, b) => a - b)
  const crawls = group.reduce((s, p) => s + p.crawls, 0) / group.length
  console.log(
    `| ${kind === null ? 'noise' : `Poisson ${kind}/day`} | ${flagged.length}/${group.length} | ${atEnd}/${group.length} | ${quantile(toFlag, 0.5)}, ${quantile(toFlag, 0.9)} | ${crawls.toFixed(1)} |`,
  )
}
