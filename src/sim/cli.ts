/**
 * `recrawl simulate`: the freshness benchmark of docs/math.md section 4 (tables per workload, --json for
 * machines), and `simulate --e2e` against a running service with a simulated clock.
 */
import { availableParallelism } from 'node:os'
import { parseOptions, UsageError } from '../args.ts'
import { runEndToEnd, DEFAULT_E2E_OPTIONS } from './e2e.ts'
import { runTasks, type ParallelProgress } from './parallel.ts'
import { groupResults, checkGoals, renderMarkdown, renderText } from './report.ts'
import { SIGNAL_SETUPS, type SignalSetup } from './signalSources.ts'
import {
  DEFAULT_LOOP_POLICY,
  DEFAULT_SIM_OPTIONS,
  IMPORTANCE_KINDS,
  planTasks,
  selectPolicies,
  WORKLOADS,
  type SimOptions,
  type Workload,
} from './runner.ts'
import type { ImportanceKind } from './universe.ts'
import { MINUTES_PER_DAY, MS_PER_SECOND } from '../math/units.ts'

const SIMULATE_USAGE = `usage: recrawl simulate [options]

Runs every selected policy on simulated page universes and prints freshness tables (stdout);
progress goes to stderr. Needs no configuration and no database.

  --workload <list>      ${WORKLOADS.join(', ')} (default: all)
  --importance <list>    zipf, equal (default: both)
  --policy <list>        uniform, proportional, nutch, oracle-periodic, oracle-poisson, recrawl-<estimator>-<schedule>;
                         a prefix selects several (e.g. recrawl-mle, recrawl); oracle-periodic always runs.
                         Bounds: known-mean-rate (the loop fed each page's true mean rate, future included),
                         known-past-rate[-<k>] (fed at each solve max(changes so far, k)/days so far; k = 1)
  --pages <n>            pages per universe (default ${DEFAULT_SIM_OPTIONS.pageCount}; replay samples this many files)
  --days <d>             simulated horizon in days (default ${DEFAULT_SIM_OPTIONS.horizonDays})
  --warmup-days <d>      freshness is scored after this (default: a third of the horizon)
  --seed <n>             (default ${DEFAULT_SIM_OPTIONS.seed})
  --crawls-per-page <r>  budget R = r × pages crawls/day, every workload (default ${DEFAULT_SIM_OPTIONS.crawlsPerPagePerDay})
  --replay-crawls-per-change <k>  replay budget R = k × total change rate instead (the older option)
  --last-modified-share <s>  share of hosts that send a usable Last-Modified (default ${DEFAULT_SIM_OPTIONS.lastModifiedShare})
  --late-first-recrawl   recrawl's first crawl of a page is a baseline, one whole interval before the next
                         (default: the copy at time 0 is the baseline, so the first recrawl, at a uniform point of
                         the registration's spread, closes an interval of random length, as in the service)
  --reoptimize-days <d>  simulated days between two solves of recrawl's loop (default ${DEFAULT_SIM_OPTIONS.reoptimizeDays})
  --scheduled            crawl each policy exactly at its own due times instead of on the budget-limited
                         fleet (R crawls/day, most overdue first); crawls may then exceed the budget
  --signals <setup>      hosts send change signals: ${SIGNAL_SETUPS.join(', ')} (one profile for every host, or
                         the realistic mix); recrawl's loops learn whom to trust; add the policies
                         ${DEFAULT_LOOP_POLICY}-ignore-signals and -blind-signals to compare (default: no signals)
  --replay-dir <dir>     update histories of the replay workloads (default: datasets/replay)
  --jobs <n>             parallel processes (default: number of cores)
  --json                 machine-readable output
  --markdown             Markdown tables
  -h, --help             this help

  --e2e --url <url>      drive a running service (SIMULATED_CLOCK=true) over HTTP instead; loopback only.
                         Uses --pages (default ${DEFAULT_E2E_OPTIONS.pageCount}), --days (default ${DEFAULT_E2E_OPTIONS.horizonDays}), --seed, --crawls-per-page,
                         --reoptimize-days, --last-modified-share (0: the fleet reports no Last-Modified),
                         --workload (one, synthetic or replay; --replay-dir) and --importance (one).
  --fleet-lag-minutes <m> with --e2e: the fleet fetches each page m minutes after it could (default 0)`

const list = (value: string | undefined): string[] | null =>
  value === undefined
    ? null
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!(n > 0) || !Number.isFinite(n)) throw new UsageError(`--${name} must be a positive number, got ${value}`)
  return n
}

function share(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!(n >= 0 && n <= 1)) throw new UsageError(`--last-modified-share must be in [0, 1], got ${value}`)
  return n
}

function nonNegative(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!(n >= 0) || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number ≥ 0, got ${value}`)
  return n
}

export async function runSimulateCommand(args: string[]): Promise<number> {
  let values
  try {
    values = parseOptions(args, {
      workload: { type: 'string' },
      importance: { type: 'string' },
      policy: { type: 'string' },
      pages: { type: 'string' },
      days: { type: 'string' },
      'warmup-days': { type: 'string' },
      seed: { type: 'string' },
      'crawls-per-page': { type: 'string' },
      'replay-crawls-per-change': { type: 'string' },
      'last-modified-share': { type: 'string' },
      'late-first-recrawl': { type: 'boolean' },
      'reoptimize-days': { type: 'string' },
      'replay-dir': { type: 'string' },
      signals: { type: 'string' },
      jobs: { type: 'string' },
      json: { type: 'boolean' },
      scheduled: { type: 'boolean' },
      markdown: { type: 'boolean' },
      e2e: { type: 'boolean' },
      url: { type: 'string' },
      'fleet-lag-minutes': { type: 'string' },
    })
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    return usageFailure(err.message)
  }
  if (values.help) {
    console.log(SIMULATE_USAGE)
    return 0
  }
  try {
    const seed = values.seed === undefined ? DEFAULT_SIM_OPTIONS.seed : Number.parseInt(values.seed, 10)
    if (!Number.isInteger(seed)) throw new UsageError('--seed must be an integer')
    const workloads = list(values.workload) ?? [...WORKLOADS]
    for (const w of workloads)
      if (!(WORKLOADS as readonly string[]).includes(w))
        throw new UsageError(`unknown workload ${w}; known: ${WORKLOADS.join(', ')}`)
    const importance = list(values.importance) ?? [...IMPORTANCE_KINDS]
    for (const k of importance)
      if (!IMPORTANCE_KINDS.includes(k as ImportanceKind))
        throw new UsageError(`unknown importance ${k}; known: zipf, equal`)

    if (values.e2e) {
      if (!values.url) throw new UsageError('--e2e needs --url (e.g. http://127.0.0.1:8080)')
      const horizonDays = positive('days', values.days, DEFAULT_E2E_OPTIONS.horizonDays)
      const report = await runEndToEnd({
        ...DEFAULT_E2E_OPTIONS,
        url: values.url,
        workload: (workloads[0] ?? DEFAULT_E2E_OPTIONS.workload) as Workload,
        importance: (importance[0] ?? DEFAULT_E2E_OPTIONS.importance) as ImportanceKind,
        pageCount: Math.round(positive('pages', values.pages, DEFAULT_E2E_OPTIONS.pageCount)),
        horizonDays,
        warmupDays: values['warmup-days'] === undefined ? horizonDays / 3 : Number(values['warmup-days']),
        seed,
        crawlsPerPagePerDay: positive(
          'crawls-per-page',
          values['crawls-per-page'],
          DEFAULT_E2E_OPTIONS.crawlsPerPagePerDay,
        ),
        reoptimizeDays: positive('reoptimize-days', values['reoptimize-days'], DEFAULT_E2E_OPTIONS.reoptimizeDays),
        fleetLagDays: nonNegative('fleet-lag-minutes', values['fleet-lag-minutes'], 0) / MINUTES_PER_DAY,
        lastModifiedShare: share(values['last-modified-share'], DEFAULT_E2E_OPTIONS.lastModifiedShare),
        replayDir: values['replay-dir'] ?? DEFAULT_E2E_OPTIONS.replayDir,
        log: (line) => console.error(line),
      })
      console.log(values.json ? JSON.stringify(report, null, 2) : report.text)
      return 0
    }

    const horizonDays = positive('days', values.days, DEFAULT_SIM_OPTIONS.horizonDays)
    const warmupDays = values['warmup-days'] === undefined ? horizonDays / 3 : Number(values['warmup-days'])
    if (!(warmupDays >= 0 && warmupDays < horizonDays)) throw new UsageError('--warmup-days must be in [0, days)')
    const options: SimOptions = {
      pageCount: Math.round(positive('pages', values.pages, DEFAULT_SIM_OPTIONS.pageCount)),
      horizonDays,
      warmupDays,
      seed,
      crawlsPerPagePerDay: positive(
        'crawls-per-page',
        values['crawls-per-page'],
        DEFAULT_SIM_OPTIONS.crawlsPerPagePerDay,
      ),
      replayCrawlsPerChange:
        values['replay-crawls-per-change'] === undefined
          ? DEFAULT_SIM_OPTIONS.replayCrawlsPerChange
          : positive('replay-crawls-per-change', values['replay-crawls-per-change'], 1),
      lastModifiedShare: share(values['last-modified-share'], DEFAULT_SIM_OPTIONS.lastModifiedShare),
      baselineAtStart: values['late-first-recrawl'] !== true,
      reoptimizeDays: positive('reoptimize-days', values['reoptimize-days'], DEFAULT_SIM_OPTIONS.reoptimizeDays),
      replayDir: values['replay-dir'] ?? DEFAULT_SIM_OPTIONS.replayDir,
      engineMode: values.scheduled ? 'scheduled' : 'fleet',
      signals: signalSetup(values.signals),
    }
    const policies = selectPolicies(list(values.policy))
    const tasks = planTasks(workloads as Workload[], importance as ImportanceKind[], policies)
    const jobs = Math.round(positive('jobs', values.jobs, availableParallelism()))

    const started = Date.now()
    const progress = progressReporter(started)
    const results = await runTasks(tasks, options, jobs, progress.update)
    progress.finish()
    const groups = groupResults(results)
    const elapsedSeconds = (Date.now() - started) / MS_PER_SECOND
    if (values.json) {
      console.log(JSON.stringify({ options, elapsedSeconds, groups, goals: checkGoals(groups) }, null, 2))
    } else if (values.markdown) {
      console.log(renderMarkdown(groups, options))
      console.log(`\n(${tasks.length} runs in ${elapsedSeconds.toFixed(0)} s, ${jobs} processes)`)
    } else {
      console.log(renderText(groups, options))
      console.log(`\n${tasks.length} runs in ${elapsedSeconds.toFixed(0)} s (${jobs} processes)`)
    }
    return 0
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(err.message)
    throw err
  }
}

function signalSetup(value: string | undefined): SignalSetup | null {
  if (value === undefined) return null
  if (!(SIGNAL_SETUPS as readonly string[]).includes(value))
    throw new UsageError(`unknown signal setup ${value}; known: ${SIGNAL_SETUPS.join(', ')}`)
  return value as SignalSetup
}

function usageFailure(problem: string): number {
  console.error(`recrawl: simulate: ${problem}\n\n${SIMULATE_USAGE}`)
  return 2
}

/** A bar on a TTY; otherwise one line every PLAIN_PROGRESS_MS. */
const PLAIN_PROGRESS_MS = 15_000
const BAR_WIDTH = 30

function progressReporter(startedMs: number) {
  const tty = process.stderr.isTTY === true
  let lastPlain = startedMs
  let lastDraw = 0
  const line = (p: ParallelProgress) => {
    const fraction = p.total > 0 ? p.work / p.total : 1
    const seconds = (Date.now() - startedMs) / MS_PER_SECOND
    const eta = fraction > 0.02 ? ` eta ${Math.max(0, seconds / fraction - seconds).toFixed(0)}s` : ''
    return { fraction, text: `${p.done}/${p.total} runs ${(fraction * 100).toFixed(0)}% ${seconds.toFixed(0)}s${eta}` }
  }
  return {
    update(p: ParallelProgress) {
      const now = Date.now()
      const { fraction, text } = line(p)
      if (tty) {
        if (now - lastDraw < 100 && p.done < p.total) return
        lastDraw = now
        const filled = Math.round(fraction * BAR_WIDTH)
        process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${text}   `)
      } else if (now - lastPlain >= PLAIN_PROGRESS_MS) {
        lastPlain = now
        process.stderr.write(`simulate: ${text}\n`)
      }
    },
    finish() {
      if (tty) process.stderr.write('\n')
    },
  }
}
