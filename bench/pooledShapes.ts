// Can the fleet's crawls tell a non-Poisson shape when each page has only a few intervals (docs/math.md 3.5)?
// Runs recrawl's default loop on a synthetic workload with equal importance, then pools the blind shape
// likelihood (src/math/renewal/blindShape.ts) over every page with both a changed and an unchanged interval:
// for each shape of the grid, the sum over pages of the page's profile gain over Poisson (each page keeps its own
// rate). A positive sum at some shape is the evidence a per-host or per-fleet shape fit would act on; a negative
// sum everywhere means the histories prefer Poisson even where the truth is not.
//
//   node --import tsx bench/pooledShapes.ts [--workloads poisson,pareto,weibull,drift] [--crawls-per-page 0.1] [--pages 1000]
import { parseArgs } from 'node:util'
import { buildUniverse, createPolicy, DEFAULT_SIM_OPTIONS, WORKLOADS, type Workload } from '../src/sim/runner.ts'
import { runPolicy } from '../src/sim/engine.ts'
import type { recrawlPolicy } from '../src/sim/policies.ts'
import { readEstimatorState } from '../src/math/estimators/state.ts'
import { blindPoints } from '../src/math/estimators/blindHistogram.ts'
import { blindShapeProfile, BLIND_SHAPE_GRID } from '../src/math/renewal/blindShape.ts'

const { values } = parseArgs({
  options: {
    workloads: { type: 'string', default: 'poisson,pareto,weibull,drift' },
    'crawls-per-page': { type: 'string', default: '0.1' },
    pages: { type: 'string', default: '1000' },
  },
})
const options = {
  ...DEFAULT_SIM_OPTIONS,
  pageCount: Number(values.pages),
  crawlsPerPagePerDay: Number(values['crawls-per-page']),
}
console.log(
  `| workload | crawls/page/day | pages pooled | pages with their own shape | ${BLIND_SHAPE_GRID.map((b) => `β = ${b}`).join(' | ')} |`,
)
console.log(`|---|---:|---:|---:|${BLIND_SHAPE_GRID.map(() => '---:').join('|')}|`)
for (const name of values.workloads.split(',')) {
  if (!(WORKLOADS as readonly string[]).includes(name)) throw new Error(`unknown workload ${name}`)
  const workload = name as Workload
  const universe = await buildUniverse(workload, 'equal', options)
  const policy = createPolicy('recrawl-mleAdaptive-periodic', universe, options, [workload, 'equal']) as ReturnType<
    typeof recrawlPolicy
  >
  runPolicy(universe, policy, { mode: 'fleet' })
  const gains = new Array<number>(BLIND_SHAPE_GRID.length).fill(0)
  let pooled = 0
  let ownShape = 0
  for (const page of policy.pages()) {
    if (page.estimator === null) continue
    const state = readEstimatorState(page.estimator)
    if (state.ageShape !== null) ownShape++
    const profile = blindShapeProfile(blindPoints(state.blindHistogram), page.changesPerDay ?? 1)
    if (profile === null) continue
    pooled++
    profile.gainNats.forEach((g, k) => (gains[k]! += g))
  }
  console.log(
    `| ${workload} | ${options.crawlsPerPagePerDay} | ${pooled} | ${ownShape} | ${gains.map((g) => g.toFixed(1)).join(' | ')} |`,
  )
}
