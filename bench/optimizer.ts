// Benchmark of the crawl-rate optimiser (docs/math.md section 3).
//
//   node --max-old-space-size=4096 --import tsx bench/optimizer.ts [--pages N] [--skip-10m] [--runs K]
//                                                                  [--objectives freshness,harmonic,...]
//
// Each (size, host caps) configuration runs in its own child process, so the peak RSS it reports
// (process.resourceUsage().maxRSS) belongs to that configuration alone. Times are the median of K
// solves (default 3) on the same seeded instance, both wall clock and CPU time of the process (user +
// system; the solver is single-threaded, so on a machine shared with other work the CPU time is the
// steadier measure of one core's work); memory is sampled right after each solve.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { solveRates, type Objective, type RateProblem } from '../src/math/optimizer/index.ts'
import { median } from '../src/math/numbers.ts'
import { createRandom } from '../src/math/random.ts'

const ALL_OBJECTIVES: readonly Objective[] = ['freshness', 'freshness-periodic', 'harmonic', 'freshness-renewal']
const DEFAULT_SIZES = [1e4, 1e5, 1e6, 1e7]
const MIB = 1024 * 1024

interface ResultRow {
  pages: number
  hosts: number
  objective: Objective
  medianMs: number
  runsMs: number[]
  medianCpuMs: number
  runsCpuMs: number[]
  heapUsedMiB: number
  arrayBuffersMiB: number
  rssMiB: number
  peakRssMiB: number
  budgetError: number
  lambda: number
  pagesCrawled: number
  expectedFreshness: number
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/**
 * A synthetic crawl: change rates log-uniform on [0.01, 10] per day, importance log-uniform on
 * [1, e^5], a floor of one crawl per 30 days on half the pages, an hourly ceiling on 30 %, budget
 * 30 % of Σ Δ. With caps: one host per 50 pages (sizes skewed, host h drawn as ⌊H·r²⌋) and 30 % of
 * hosts capped at half their pages' Σ Δ (at least their Σ l).
 */
function makeProblem(pages: number, withHosts: boolean): Omit<RateProblem, 'objective'> {
  const random = createRandom(20261122 + pages)
  const changesPerDay = new Float64Array(pages)
  const importance = new Float64Array(pages)
  const minCrawlsPerDay = new Float64Array(pages)
  const maxCrawlsPerDay = new Float64Array(pages)
  let sumDelta = 0
  for (let i = 0; i < pages; i++) {
    const delta = 0.01 * Math.exp(random.next() * Math.log(1000))
    changesPerDay[i] = delta
    importance[i] = Math.exp(random.next() * 5)
    minCrawlsPerDay[i] = random.next() < 0.5 ? 1 / 30 : 0
    maxCrawlsPerDay[i] = random.next() < 0.3 ? 24 : Number.POSITIVE_INFINITY
    sumDelta += delta
  }
  const shapeRandom = createRandom(7 + pages)
  const ageShape = Float64Array.from({ length: pages }, () =>
    shapeRandom.next() < 0.3 ? Number.POSITIVE_INFINITY : 0.3 * Math.exp(shapeRandom.next() * Math.log(100)),
  )
  const base = {
    changesPerDay,
    importance,
    minCrawlsPerDay,
    maxCrawlsPerDay,
    ageShape,
    budgetCrawlsPerDay: 0.3 * sumDelta,
  }
  if (!withHosts) return base
  const hostCount = Math.max(1, Math.floor(pages / 50))
  const hostIndex = new Int32Array(pages)
  const hostDelta = new Float64Array(hostCount)
  const hostLower = new Float64Array(hostCount)
  for (let i = 0; i < pages; i++) {
    const r = random.next()
    const h = Math.floor(hostCount * r * r)
    hostIndex[i] = h
    hostDelta[h] = hostDelta[h]! + changesPerDay[i]!
    hostLower[h] = hostLower[h]! + minCrawlsPerDay[i]!
  }
  const hostMaxCrawlsPerDay = new Float64Array(hostCount)
  for (let h = 0; h < hostCount; h++) {
    hostMaxCrawlsPerDay[h] =
      random.next() < 0.3 ? Math.max(hostLower[h]!, 0.5 * hostDelta[h]!) : Number.POSITIVE_INFINITY
  }
  return { ...base, hostIndex, hostMaxCrawlsPerDay }
}

function runChild(pages: number, withHosts: boolean, objectives: readonly Objective[], runs: number): void {
  const base = makeProblem(pages, withHosts)
  for (const objective of objectives) {
    const problem: RateProblem = { ...base, objective }
    const runsMs: number[] = []
    const runsCpuMs: number[] = []
    let heapUsed = 0
    let arrayBuffers = 0
    let rss = 0
    let last = null
    for (let k = 0; k < runs; k++) {
      const started = performance.now()
      const cpuStarted = process.cpuUsage()
      last = solveRates(problem)
      const cpu = process.cpuUsage(cpuStarted)
      runsMs.push(performance.now() - started)
      runsCpuMs.push((cpu.user + cpu.system) / 1000)
      const memory = process.memoryUsage()
      heapUsed = Math.max(heapUsed, memory.heapUsed)
      arrayBuffers = Math.max(arrayBuffers, memory.arrayBuffers)
      rss = Math.max(rss, memory.rss)
    }
    const row: ResultRow = {
      pages,
      hosts: base.hostMaxCrawlsPerDay?.length ?? 0,
      objective,
      medianMs: median(runsMs),
      runsMs,
      medianCpuMs: median(runsCpuMs),
      runsCpuMs,
      heapUsedMiB: heapUsed / MIB,
      arrayBuffersMiB: arrayBuffers / MIB,
      rssMiB: rss / MIB,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
      budgetError: last!.totalCrawlsPerDay / problem.budgetCrawlsPerDay - 1,
      lambda: last!.lambda,
      pagesCrawled: last!.pagesCrawled,
      expectedFreshness: last!.expectedFreshness,
    }
    process.stdout.write(`${JSON.stringify(row)}\n`)
  }
}

function main(): void {
  const runs = Math.max(3, Number(argValue('--runs') ?? 3))
  const objectives = (argValue('--objectives')?.split(',') ?? ALL_OBJECTIVES) as Objective[]
  if (process.argv.includes('--child')) {
    runChild(Number(argValue('--child')), process.argv.includes('--hosts'), objectives, runs)
    return
  }
  const pagesArg = argValue('--pages')
  let sizes = pagesArg === undefined ? DEFAULT_SIZES : [Number(pagesArg)]
  if (process.argv.includes('--skip-10m')) sizes = sizes.filter((n) => n < 1e7)

  const script = fileURLToPath(import.meta.url)
  const rows: ResultRow[] = []
  process.stdout.write(
    '| pages | hosts | objective | median ms (runs) | median CPU ms | heap used MiB | array buffers MiB | RSS MiB | peak RSS MiB | Σρ/R − 1 |\n',
  )
  process.stdout.write('|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n')
  for (const pages of sizes) {
    for (const withHosts of [false, true]) {
      const args = [
        ...process.execArgv,
        script,
        '--child',
        String(pages),
        '--runs',
        String(runs),
        '--objectives',
        objectives.join(','),
      ]
      if (withHosts) args.push('--hosts')
      const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 16 * MIB })
      if (child.status !== 0) {
        process.stderr.write(child.stderr)
        throw new Error(`benchmark child for ${pages} pages failed with status ${child.status}`)
      }
      for (const line of child.stdout.split('\n')) {
        if (line.trim() === '') continue
        const row = JSON.parse(line) as ResultRow
        rows.push(row)
        process.stdout.write(
          `| ${row.pages.toLocaleString('en-US')} | ${row.hosts.toLocaleString('en-US')} | ${row.objective} | ` +
            `${row.medianMs.toFixed(1)} (${row.runsMs.map((ms) => ms.toFixed(0)).join(', ')}) | ${row.medianCpuMs.toFixed(0)} | ${row.heapUsedMiB.toFixed(0)} | ` +
            `${row.arrayBuffersMiB.toFixed(0)} | ${row.rssMiB.toFixed(0)} | ${row.peakRssMiB.toFixed(0)} | ${row.budgetError.toExponential(1)} |\n`,
        )
      }
    }
  }
}

main()
