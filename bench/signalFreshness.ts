/**
 * Freshness with change signals used (learned trust), ignored, and trusted blindly, at two budgets and both
 * importances, for the realistic mix of signal profiles and for every host lying (lastmod = build time); and the
 * precision and recall the loop learned per host against the truth (docs/math.md 5.6). Prints Markdown for
 * BENCHMARKS.md.
 *
 *   node --import tsx bench/signalFreshness.ts [--pages 400] [--days 60] [--jobs 2]
 *        [--workloads poisson,weibull,replay-git] [--budgets 0.1,2]
 */
import { parseArgs } from 'node:util'
import { runTasks } from '../src/sim/parallel.ts'
import {
  DEFAULT_LOOP_POLICY,
  DEFAULT_SIM_OPTIONS,
  type SimOptions,
  type TaskResult,
  type Workload,
} from '../src/sim/runner.ts'
import { SIGNAL_PROFILES, type SignalSetup } from '../src/sim/signalSources.ts'
import type { ImportanceKind } from '../src/sim/universe.ts'

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '400' },
    days: { type: 'string', default: '60' },
    jobs: { type: 'string', default: '2' },
    workloads: { type: 'string', default: 'poisson,weibull,replay-git' },
    budgets: { type: 'string', default: '0.1,2' },
  },
})
const workloads = values.workloads.split(',') as Workload[]
const budgets = values.budgets.split(',').map(Number)
const importances: ImportanceKind[] = ['zipf', 'equal']
const USED = DEFAULT_LOOP_POLICY
const IGNORED = `${DEFAULT_LOOP_POLICY}-ignore-signals`
const BLIND = `${DEFAULT_LOOP_POLICY}-blind-signals`
/** Hosts whose trust rests on at least this many judged signals (changes seen, for recall) are compared. */
const MIN_EVIDENCE = 200

async function run(setup: SignalSetup, budget: number, policies: string[]): Promise<TaskResult[]> {
  const horizonDays = Number(values.days)
  const options: SimOptions = {
    ...DEFAULT_SIM_OPTIONS,
    pageCount: Number(values.pages),
    horizonDays,
    warmupDays: horizonDays / 3,
    crawlsPerPagePerDay: budget,
    signals: setup,
  }
  const tasks = workloads.flatMap((workload) =>
    importances.flatMap((importance) => policies.map((policy) => ({ workload, importance, policy }))),
  )
  return runTasks(tasks, options, Number(values.jobs), () => {})
}

const started = Date.now()
const freshness = (results: TaskResult[], w: string, i: string, p: string) =>
  results.find((r) => r.workload === w && r.importance === i && r.policy === p)!.result.freshness
const f3 = (x: number) => x.toFixed(3)
const f4 = (x: number) => x.toFixed(4)

const lines: string[] = []
/** Progress on stderr: the rows so far. */
const progress = (line: string) => process.stderr.write(`${line}\n`)
lines.push(
  '| workload | importance | crawls/page/day | ignored | used | blind | used / ignored | blind / ignored | all lying: used | all lying: used / ignored |',
  '|---|---|---|---|---|---|---|---|---|---|',
)
const trustRows: TaskResult[] = []
for (const budget of budgets) {
  const mix = await run('mix', budget, [IGNORED, USED, BLIND])
  const lying = await run('buildTime', budget, [USED])
  trustRows.push(...mix.filter((r) => r.policy === USED))
  for (const w of workloads)
    for (const i of importances) {
      const ignored = freshness(mix, w, i, IGNORED)
      const used = freshness(mix, w, i, USED)
      const blind = freshness(mix, w, i, BLIND)
      const lyingUsed = freshness(lying, w, i, USED)
      progress(`${w} ${i} ${budget}: ${((Date.now() - started) / 1000).toFixed(0)} s`)
      lines.push(
        `| ${w} | ${i} | ${budget} | ${f4(ignored)} | ${f4(used)} | ${f4(blind)} | ${f3(used / ignored)} | ${f3(blind / ignored)} | ${f4(lyingUsed)} | ${f3(lyingUsed / ignored)} |`,
      )
    }
}

lines.push(
  '',
  `Learned trust against the truth, per host of the mix with at least ${MIN_EVIDENCE} judged signals (precision) or changes seen (recall), over every run above:`,
  '',
  '| profile | hosts (precision) | learned precision, mean | truth, mean | max \\|learned − truth\\| | hosts (recall) | learned recall, mean | truth, mean | max \\|learned − truth\\| |',
  '|---|---|---|---|---|---|---|---|---|',
)
for (const profile of SIGNAL_PROFILES) {
  const hosts = trustRows.flatMap((r) => r.signalHosts ?? []).filter((h) => h.profile === profile)
  if (hosts.length === 0) continue
  const p = hosts.filter((h) => h.signalsJudged >= MIN_EVIDENCE && h.precisionTruth !== null)
  const r = hosts.filter((h) => h.changesSeen >= MIN_EVIDENCE && h.recallTruth !== null)
  const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length)
  const maxErr = (xs: number[]) => (xs.length === 0 ? Number.NaN : Math.max(...xs))
  lines.push(
    `| ${profile} | ${p.length} | ${f3(mean(p.map((h) => h.precisionLearned)))} | ${f3(mean(p.map((h) => h.precisionTruth!)))} | ${f3(maxErr(p.map((h) => Math.abs(h.precisionLearned - h.precisionTruth!))))} | ${r.length} | ${f3(mean(r.map((h) => h.recallLearned)))} | ${f3(mean(r.map((h) => h.recallTruth!)))} | ${f3(maxErr(r.map((h) => Math.abs(h.recallLearned - h.recallTruth!))))} |`,
  )
}
lines.push('', `(${((Date.now() - started) / 1000).toFixed(0)} s, ${values.jobs} processes)`)
console.log(lines.join('\n'))
