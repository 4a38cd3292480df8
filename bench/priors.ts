// What the fleet's priors cost an optimiser run (docs/math.md 1.12): the refit (an even sample of at most
// 20,000 pages) and the re-derived posteriors (at most 20,000 pages with few intervals), for a fleet of
// `--pages` pages over `--hosts` hosts of which `--thin-share` have few intervals (3–20) and the rest long
// histories (100–1,000). In-process: the columns the run reads from the database are built here.
//
//   node --import tsx bench/priors.ts [--pages 1000000] [--hosts 100000] [--thin-share 0.2] [--runs 3] [--seed 1]
import { parseArgs } from 'node:util'
import { createRandom } from '../src/math/random.ts'
import { median } from '../src/math/numbers.ts'
import { PRIOR_REFIT_MS, refitRatePriors, solveEstimates, type SolvePage } from '../src/core/ratePriors.ts'
import { DEFAULT_SETTINGS } from '../src/core/settings.ts'
import type { FleetPriors } from '../src/math/estimators/index.ts'

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '1000000' },
    hosts: { type: 'string', default: '100000' },
    'thin-share': { type: 'string', default: '0.2' },
    runs: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
  },
})
const pageCount = Number(values.pages)
const hostCount = Number(values.hosts)
const thinShare = Number(values['thin-share'])
const random = createRandom(Number(values.seed))

/** A Poisson page's evidence after `intervals` crawls one day apart: unchanged days and changed intervals. */
function pageOf(i: number): SolvePage {
  const changesPerDay = Math.exp(Math.log(0.01) + random.next() * Math.log(1e4))
  const intervals = random.next() < thinShare ? 3 + random.int(18) : 100 + random.int(901)
  const intervalDays = 1
  const pChange = -Math.expm1(-changesPerDay * intervalDays)
  let changes = 0
  for (let k = 0; k < Math.min(intervals, 50); k++) if (random.next() < pChange) changes++
  changes = Math.round((changes * intervals) / Math.min(intervals, 50))
  return {
    host: `h${i % hostCount}.example`,
    evidence: {
      unchangedDays: (intervals - changes) * intervalDays,
      changed: changes === 0 ? [] : [{ intervalDays, weight: changes }],
    },
    intervals,
    storedChangesPerDay: changesPerDay,
  }
}

const pages = Array.from({ length: pageCount }, (_, i) => pageOf(i))
const settings = { ...DEFAULT_SETTINGS, fleetPrior: true }
const fitMs: number[] = []
const deriveMs: number[] = []
let priors: FleetPriors | null = null
let stored = 0
for (let run = 0; run < Number(values.runs); run++) {
  const t0 = performance.now()
  priors = refitRatePriors(pages, settings, priors, run * 2 * PRIOR_REFIT_MS)
  const t1 = performance.now()
  const { store } = solveEstimates(pages, settings, priors)
  const t2 = performance.now()
  fitMs.push(t1 - t0)
  deriveMs.push(t2 - t1)
  stored = store.reduce((sum, s) => sum + s, 0)
}
console.log(
  JSON.stringify({
    pages: pageCount,
    hosts: hostCount,
    thinShare,
    refitMsMedian: Math.round(median(fitMs)),
    rederiveMsMedian: Math.round(median(deriveMs)),
    estimatesStoredLastRun: stored,
    runs: fitMs.length,
  }),
)
