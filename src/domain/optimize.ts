import { refitRatePriors, solveEstimates } from '../core/ratePriors.ts'
import { hostSignalCover, trustOf, type Trust } from '../core/signals.ts'
import { NO_SIGNAL_COVER, solveRatesWithSignals, type SignalCover, type SignalCovers } from '../math/signalRates.ts'
import { readAllTrustCounts } from '../store/signalsRepo.ts'
import { SOLVER_MAX_CHANGES_PER_DAY } from '../math/estimators/index.ts'
import { z } from 'zod'
import { InfeasibleBudgetError, solveRates, type RateProblem } from '../math/optimizer/index.ts'
import { hostCaps } from '../store/hostsRepo.ts'
import {
  insertOptimizerRun,
  releaseOptimizerLock,
  saveOptimizerState,
  takeOptimizerLock,
  writeRates,
} from '../store/optimizerRepo.ts'
import {
  CHUNK_PAGES,
  ChunkWriter,
  emptyBatch,
  loadColumns,
  type ChunkWritten,
  type RateBatch,
} from '../store/optimizerPages.ts'
import { loadSettings, readOptimizerState } from '../store/settingsRepo.ts'
import { withClient, type Queryable } from '../store/transaction.ts'
import { ConflictError, UnprocessableError } from '../core/errors.ts'
import { rateMoved, retimePage, stepContext } from '../core/pageStep.ts'
import type { DomainDeps } from './deps.ts'
import { refreshHostRanking } from './hosts.ts'

export const optimizerRunSchema = z
  .object({
    lambda: z.number().describe('The budget’s Lagrange multiplier, in importance × per-day units.'),
    pages: z.number().int(),
    pagesCrawled: z.number().int().describe('Pages with a rate above their lower bound.'),
    budgetCrawlsPerDay: z.number(),
    expectedFreshness: z.number().describe('Σμ·f(ρ)/Σμ under the current estimates.'),
    durationMs: z.number(),
    pagesRetimed: z.number().int().describe('Pages whose rate changed and were re-timed.'),
  })
  .meta({
    id: 'OptimizerRun',
    description: 'The outcome of one optimiser run: the multiplier, the rates it set and what it cost.',
    examples: [
      {
        lambda: 0.275,
        pages: 3,
        pagesCrawled: 3,
        budgetCrawlsPerDay: 4,
        expectedFreshness: 0.7146,
        durationMs: 12.4,
        pagesRetimed: 3,
      },
    ],
  })

export type OptimizeResult = z.infer<typeof optimizerRunSchema>

/**
 * Solves every page's crawl rate under the budget (docs/math.md section 3) and stores the multipliers.
 * One replica at a time (a session advisory lock held for the whole run): `wait` = block until the lock is
 * free (API), else return null when another run holds it (periodic runs). Infeasible bounds →
 * UnprocessableError (422).
 *
 * The pages are read without locking them, then solved, then the pages whose rate moved are re-timed by
 * the page step (retimePage) and written back in chunks, each in its own transaction and each page only
 * while it still has the version the run read: a page crawled or changed during the run keeps the rate and
 * due time that write gave it, so no re-time ever rests on a state older than the page's latest crawl, and
 * ingest never waits for a whole run. A settings change during the run ends its write-back (the change
 * re-times every page itself).
 */
export async function runOptimizer(
  deps: DomainDeps,
  options: {
    trigger: 'api' | 'periodic'
    wait: boolean
    /** Re-timed pages per write transaction (default CHUNK_PAGES). */
    writeChunkPages?: number
  },
): Promise<OptimizeResult | null> {
  const startedMs = performance.now()
  const startedAtMs = deps.clock.nowMs()
  const result = await withClient(deps.pool, async (client) => {
    if (!(await takeOptimizerLock(client, options.wait))) return null
    try {
      return await solveAndWrite(
        client,
        deps,
        options.trigger,
        startedAtMs,
        startedMs,
        options.writeChunkPages ?? CHUNK_PAGES,
      )
    } finally {
      await releaseOptimizerLock(client)
    }
  })
  if (result) {
    deps.logger?.info({ ...result, trigger: options.trigger }, 'optimiser run')
    // The new plan moves the host overview's planned crawls and freshness: its ranking follows. A failure
    // there is not the run's: the next run, or an overview call that finds the ranking stale, tries again.
    try {
      await refreshHostRanking(deps)
    } catch (err) {
      deps.logger?.error({ err }, 'host overview ranking refresh failed')
    }
  }
  return result
}

async function solveAndWrite(
  client: Queryable,
  deps: DomainDeps,
  trigger: 'api' | 'periodic',
  startedAtMs: number,
  startedMs: number,
  writeChunkPages: number,
): Promise<OptimizeResult> {
  const settings = await loadSettings(client)
  const caps = await hostCaps(client)
  const cache = await loadColumns(client, deps.pool, settings, caps, JSON.stringify([settings, [...caps]]))
  const { cols } = cache
  const previous = await readOptimizerState(client)
  const { n } = cols
  const renewal = settings.objective === 'freshness-renewal'
  // The fleet's priors are refitted from the pages' evidence (docs/math.md 1.12), and a page without an
  // estimate (no evidence) is solved at its host's prior mean, as the simulator's loop does.
  const pageInputs = Array.from({ length: n }, (_, i) => ({
    host: cols.hosts[i]!,
    evidence: cols.evidence[i] ?? null,
    intervals: cols.intervals[i]!,
    storedChangesPerDay: cols.evidence[i] ? cols.changesPerDay[i]! : null,
  }))
  const priors = refitRatePriors(pageInputs, settings, previous.priors ?? null, startedAtMs)
  const estimates = solveEstimates(pageInputs, settings, priors)
  const changesPerDay = priors === null ? cols.changesPerDay.subarray(0, n) : estimates.changesPerDay
  /** A page's estimate the run re-derived under the new priors and must store (NaN: the stored one stands). */
  const movedEstimate = (i: number): number => (estimates.store[i] === 1 ? changesPerDay[i]! : Number.NaN)
  const lawChangesPerDay = renewal
    ? Float64Array.from(changesPerDay, (rate, i) =>
        Math.min(
          SOLVER_MAX_CHANGES_PER_DAY,
          rate * (cols.changesPerDay[i]! > 0 ? cols.renewalChangesPerDay[i]! / cols.changesPerDay[i]! : 1),
        ),
      )
    : changesPerDay
  // The blind crawls are solved for the changes the hosts' trusted signals leave uncovered, under the budget
  // the signals' crawls leave (docs/math.md 5.4), as the simulator's loop does.
  const hostCovers = await readSignalCover(client)
  const problem: RateProblem = {
    changesPerDay: lawChangesPerDay,
    ...(renewal ? { ageShape: cols.ageShape.subarray(0, n) } : {}),
    importance: cols.importance.subarray(0, n),
    minCrawlsPerDay: cols.minRate.subarray(0, n),
    maxCrawlsPerDay: cols.maxRate.subarray(0, n),
    hostIndex: cols.hostIndex.subarray(0, n),
    hostMaxCrawlsPerDay: Float64Array.from(cols.hostNames, (h) => caps.get(h)!),
    budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
    objective: settings.objective,
    // The search starts from the stored multiplier, the previous solve's (as the simulator's loop does).
    ...(previous.lambda === null ? {} : { lambdaHint: previous.lambda }),
  }
  let solution
  let signalCover: SignalCovers | null = null
  try {
    if (hostCovers === null) solution = solveRates(problem)
    else {
      const solved = solveRatesWithSignals(
        problem,
        Array.from({ length: n }, (_, i) => hostCovers[cols.hosts[i]!] ?? NO_SIGNAL_COVER),
      )
      solution = solved.solution
      signalCover = { plainLambda: solved.plainLambda, hosts: hostCovers }
    }
  } catch (err) {
    if (err instanceof InfeasibleBudgetError) throw new UnprocessableError(err.message)
    throw err
  }
  const hostLambdas: Record<string, number> = {}
  for (let h = 0; h < cols.hostNames.length; h++) {
    const lh = solution.hostLambda[h]!
    if (lh > solution.lambda) hostLambdas[cols.hostNames[h]!] = lh
  }

  const nowMs = deps.clock.nowMs()
  const optimizer = { lambda: solution.lambda, hostLambdas, pages: n, priors, signalCover }
  const ctx = stepContext(settings, optimizer, nowMs, deps.random)
  /** Still the settings the run solved with (held `share`, so they cannot change before this transaction commits)? */
  const settingsUnchanged = async (q: Queryable) =>
    JSON.stringify(await loadSettings(q, 'share')) === JSON.stringify(settings)

  let pagesRetimed = 0
  let superseded = false
  // The first chunk's transaction stores the multipliers (a run that moves no page writes one empty chunk).
  const writeChunk = async (q: Queryable, batch: RateBatch): Promise<ChunkWritten | null> => {
    if (!(await settingsUnchanged(q))) return null
    if (batch.first) await saveOptimizerState(q, { ...optimizer, solvedAtMs: nowMs })
    return { pagesWritten: await writeRates(q, batch) }
  }
  const writes = new ChunkWriter(client, deps.pool, writeChunk, (batch, written) => {
    if (written === null) {
      superseded = true
      return
    }
    pagesRetimed += written.pagesWritten
    // The next run need not read these rows again (writeRates keeps their change stamps): the columns get
    // what was written.
    for (let k = 0; k < batch.ids.length; k++) {
      const i = batch.positions[k]!
      cols.oldRate[i] = batch.crawlsPerDay[k]!
      cols.nextMs[i] = batch.nextCrawlAtMs[k] ?? Number.NaN
      const estimate = batch.changesPerDay[k]
      if (estimate !== null && estimate !== undefined) {
        // The law's rate follows the estimate (renewalParameters' scaling; a Poisson page's is the estimate itself).
        if (cols.renewalChangesPerDay[i] === cols.changesPerDay[i]) cols.renewalChangesPerDay[i] = estimate
        else if (cols.changesPerDay[i]! > 0)
          cols.renewalChangesPerDay[i] = cols.renewalChangesPerDay[i]! * (estimate / cols.changesPerDay[i]!)
        cols.changesPerDay[i] = estimate
      }
      cols.versions[i] = batch.versions[k]! + 1
    }
  })
  try {
    let batch = emptyBatch(true)
    for (let i = 0; i < n && !superseded; i++) {
      const rate = solution.crawlsPerDay[i]!
      const old = cols.oldRate[i]!
      const estimate = movedEstimate(i)
      if (!rateMoved(Number.isNaN(old) ? null : old, rate) && Number.isNaN(estimate)) continue
      const page = cols.page(i)
      const next = retimePage(Number.isNaN(estimate) ? page : { ...page, changesPerDay: estimate }, ctx, {
        solvedCrawlsPerDay: rate,
      })
      batch.ids.push(cols.ids[i]!)
      batch.versions.push(cols.versions[i]!)
      batch.crawlsPerDay.push(next.crawlsPerDay!)
      batch.nextCrawlAtMs.push(next.nextCrawlAtMs)
      batch.changesPerDay.push(Number.isNaN(estimate) ? null : estimate)
      batch.positions.push(i)
      if (batch.ids.length >= writeChunkPages) {
        await writes.submit(batch)
        batch = emptyBatch(false)
      }
    }
    if (!superseded) await writes.submit(batch)
  } finally {
    await writes.drain()
  }
  if (superseded)
    throw new ConflictError(
      'the settings changed while the optimiser ran; the change re-timed every page with the stored multipliers, run it again',
    )

  const run = {
    lambda: solution.lambda,
    pages: n,
    pagesCrawled: solution.pagesCrawled,
    budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
    expectedFreshness: solution.expectedFreshness,
    durationMs: performance.now() - startedMs,
    pagesRetimed,
  }
  await insertOptimizerRun(client, { ...run, startedAtMs, trigger, objective: settings.objective })
  return run
}

/**
 * What each host's trusted signals cover of its changes (src/core/signals.ts, hostSignalCover): the hosts with a
 * cover, or null when none has one.
 */
async function readSignalCover(client: Queryable): Promise<Record<string, SignalCover> | null> {
  const { pairs, bySource } = await readAllTrustCounts(client)
  const byHost = new Map<string, Trust[]>()
  for (const { source, host, ...counts } of pairs) {
    const trust = trustOf(counts, bySource.get(source)!)
    const list = byHost.get(host)
    if (list) list.push(trust)
    else byHost.set(host, [trust])
  }
  const cover: Record<string, SignalCover> = {}
  for (const [host, trusts] of byHost) {
    const c = hostSignalCover(trusts)
    if (c.share > 0) cover[host] = c
  }
  return Object.keys(cover).length === 0 ? null : cover
}
