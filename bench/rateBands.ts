// Where does a policy's budget go, and what freshness does it buy, by each page's true mean rate? Runs the given
// policies on one universe (same pages, same changes) and prints, for bands of true changes per day, the mean
// freshness of the band's pages inside the scoring window and their mean crawls there; then, for the first
// recrawl policy, its estimates when scoring opens, in deciles, against the rates those pages show before and after.
//
//   node --import tsx bench/rateBands.ts [--workload replay-git] [--importance equal] [--crawls-per-page 0.1]
//     [--pages 1000] [--seed 1] [--late-first-recrawl]
//     [--policies uniform,oracle-renewal,recrawl-mleAdaptive-periodic-ignore-signals,known-past-rate-2,known-mean-rate]
import { parseArgs } from 'node:util'
import { buildUniverse, createPolicy, DEFAULT_SIM_OPTIONS, WORKLOADS, type Workload } from '../src/sim/runner.ts'
import { runPolicy } from '../src/sim/engine.ts'
import type { ImportanceKind } from '../src/sim/universe.ts'

const { values } = parseArgs({
  options: {
    workload: { type: 'string', default: 'replay-git' },
    importance: { type: 'string', default: 'equal' },
    'crawls-per-page': { type: 'string', default: '0.1' },
    pages: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    'late-first-recrawl': { type: 'boolean', default: false },
    policies: {
      type: 'string',
      default: 'uniform,oracle-renewal,recrawl-mleAdaptive-periodic-ignore-signals,known-past-rate-2,known-mean-rate',
    },
  },
})
const workload = values.workload as Workload
if (!WORKLOADS.includes(workload)) throw new Error(`--workload must be one of ${WORKLOADS.join(', ')}`)
const importance = values.importance as ImportanceKind
const options = {
  ...DEFAULT_SIM_OPTIONS,
  pageCount: Number(values.pages),
  crawlsPerPagePerDay: Number(values['crawls-per-page']),
  seed: Number(values.seed),
  lastModifiedShare: 0,
  baselineAtStart: !values['late-first-recrawl'],
}
const universe = await buildUniverse(workload, importance, options)
const windowDays = universe.horizonDays - universe.warmupDays
const names = values.policies.split(',')
const runs = names.map((name) => {
  const policy = createPolicy(name, universe, options, [workload, importance])
  const windowCrawls = new Int32Array(universe.pageCount)
  const onCrawl = policy.onCrawl.bind(policy)
  policy.onCrawl = (page, nowDays, finding, ctx) => {
    if (nowDays >= universe.warmupDays) windowCrawls[page]!++
    return onCrawl(page, nowDays, finding, ctx)
  }
  const result = runPolicy(universe, policy)
  return { name, freshness: result.freshness, freshDays: result.pageFreshDays, windowCrawls }
})

console.log(
  `${workload}, ${importance} importance, ${options.crawlsPerPagePerDay} crawls per page per day, seed ${options.seed}` +
    `${values['late-first-recrawl'] ? ', first crawl a baseline' : ''}; freshness of the whole run: ` +
    runs.map((r) => `${r.name} ${r.freshness.toFixed(4)}`).join(', '),
)
console.log(`| true changes/day | pages | ${names.join(' | ')} |`)
console.log(`|---|---:|${names.map(() => '---:|').join('')}`)
const edges = [0, 0.02, 0.05, 0.1, 0.2, 0.5, Number.POSITIVE_INFINITY]
const edgeText = (x: number): string => (Number.isFinite(x) ? String(x) : '∞')
for (let b = 0; b + 1 < edges.length; b++) {
  const band: number[] = []
  for (let i = 0; i < universe.pageCount; i++) {
    const rate = universe.trueChangesPerDay[i]!
    if (rate >= edges[b]! && rate < edges[b + 1]!) band.push(i)
  }
  if (band.length === 0) continue
  const cells = runs.map((r) => {
    let fresh = 0
    let crawls = 0
    for (const i of band) {
      fresh += r.freshDays[i]!
      crawls += r.windowCrawls[i]!
    }
    return `${(fresh / (band.length * windowDays)).toFixed(3)} / ${(crawls / band.length).toFixed(1)}`
  })
  console.log(`| [${edgeText(edges[b]!)}, ${edgeText(edges[b + 1]!)}) | ${band.length} | ${cells.join(' | ')} |`)
}

// Calibration: the first estimating policy's estimates when scoring opens, in deciles, against the rate each
// decile's pages then show (their changes in the scoring window per day) and showed before (changes up to then).
const estimating = names.find((name) => name.startsWith('recrawl-'))
if (estimating !== undefined) {
  const policy = createPolicy(estimating, universe, options, [workload, importance])
  let snapshot: Float64Array | null = null
  const onTick = policy.onTick?.bind(policy)
  policy.onTick = (nowDays, ctx) => {
    onTick?.(nowDays, ctx)
    if (snapshot === null && nowDays >= universe.warmupDays) snapshot = Float64Array.from(policy.estimates!())
  }
  runPolicy(universe, policy)
  const estimates = snapshot ?? Float64Array.from(policy.estimates!())
  const before = new Float64Array(universe.pageCount)
  const after = new Float64Array(universe.pageCount)
  for (let i = 0; i < universe.pageCount; i++)
    for (let k = universe.changeOffsets[i]!; k < universe.changeOffsets[i + 1]!; k++) {
      if (universe.changeDays[k]! < universe.warmupDays) before[i]! += 1 / universe.warmupDays
      else after[i]! += 1 / windowDays
    }
  const order = Array.from({ length: universe.pageCount }, (_, i) => i).sort(
    (a, b) => (estimates[a]! || 0) - (estimates[b]! || 0),
  )
  console.log(`\n${estimating}: its estimates on day ${universe.warmupDays.toFixed(0)}, by decile (changes per day)`)
  console.log('| decile | mean estimate | mean rate before | mean rate after |')
  console.log('|---:|---:|---:|---:|')
  for (let d = 0; d < 10; d++) {
    const part = order.slice(Math.floor((d * order.length) / 10), Math.floor(((d + 1) * order.length) / 10))
    const mean = (values: ArrayLike<number>): string =>
      (part.reduce((sum, i) => sum + (Number.isNaN(values[i]!) ? 0 : values[i]!), 0) / part.length).toFixed(3)
    console.log(`| ${d + 1} | ${mean(estimates)} | ${mean(before)} | ${mean(after)} |`)
  }
}
