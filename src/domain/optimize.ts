import type pg from 'pg'
import type { Logger } from 'pino'
import { InfeasibleBudgetError, solveRates, type RateProblem } from '../math/optimizer/index.ts'
import type { Random } from '../math/random.ts'
import { hostCaps } from '../store/hostsRepo.ts'
import {
  insertOptimizerRun,
  readOptimizerChunk,
  saveOptimizerState,
  takeOptimizerLock,
  writeRates,
} from '../store/optimizerRepo.ts'
import { readSettingsDocumentShared } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import type { Clock } from './clock.ts'
import { UnprocessableError } from './errors.ts'
import { explorationIntervalDays, pageBounds, retimedCrawlAtMs } from './schedule.ts'
import { settingsFromStored } from './settings.ts'

export interface OptimizeDeps {
  pool: pg.Pool
  clock: Clock
  random: Random
  logger?: Logger | undefined
}

export interface OptimizeResult {
  lambda: number
  pages: number
  pagesCrawled: number
  budgetCrawlsPerDay: number
  expectedFreshness: number
  durationMs: number
  /** Pages whose stored rate moved by more than RETIME_RELATIVE_CHANGE and were re-timed. */
  pagesRetimed: number
}

/** Pages are read and written in chunks of this many rows. */
const CHUNK_PAGES = 20_000
/**
 * A page's stored rate and due time are rewritten only when its new rate differs by more than this
 * fraction. It is tiny on purpose: the API reports the exact solution (a client re-solving from
 * the reported estimates must find the same rates), so only pages the solve left unchanged (at
 * their bounds, or untouched by a small budget change) are skipped.
 */
export const RETIME_RELATIVE_CHANGE = 1e-9

/**
 * Solves every page's crawl rate under the budget (MATH.md section 3) and stores the multipliers.
 * One replica at a time (advisory lock): `wait` = block until the lock is free (API), else return
 * null when another run holds it (periodic runs). Infeasible bounds → UnprocessableError (422).
 */
export async function runOptimizer(deps: OptimizeDeps, options: { trigger: 'api' | 'periodic'; wait: boolean }): Promise<OptimizeResult | null> {
  const startedMs = performance.now()
  const startedAt = new Date(deps.clock.nowMs())
  const result = await withTransaction(deps.pool, async (client) => {
    if (!(await takeOptimizerLock(client, options.wait))) return null
    const settings = settingsFromStored(await readSettingsDocumentShared(client))
    const caps = await hostCaps(client)

    // Stream the pages into typed arrays (ids kept as strings for the write-back).
    const ids: string[] = []
    const hostNames: string[] = []
    const hostIndexOf = new Map<string, number>()
    let capacity = 1024
    let changesPerDay = new Float64Array(capacity)
    let importance = new Float64Array(capacity)
    let minRate = new Float64Array(capacity)
    let maxRate = new Float64Array(capacity)
    let hostIndex = new Int32Array(capacity)
    let oldRate = new Float64Array(capacity)
    let lastMs = new Float64Array(capacity)
    let nextMs = new Float64Array(capacity)
    let intervalCount = new Int32Array(capacity)
    const grow = <T extends Float64Array | Int32Array>(a: T, size: number): T => {
      const b = new (a.constructor as new (n: number) => T)(size)
      b.set(a)
      return b
    }
    let n = 0
    let afterId: string | null = null
    for (;;) {
      const chunk = await readOptimizerChunk(client, afterId, CHUNK_PAGES)
      if (chunk.ids.length === 0) break
      if (n + chunk.ids.length > capacity) {
        capacity = Math.max(capacity * 2, n + chunk.ids.length)
        changesPerDay = grow(changesPerDay, capacity)
        importance = grow(importance, capacity)
        minRate = grow(minRate, capacity)
        maxRate = grow(maxRate, capacity)
        hostIndex = grow(hostIndex, capacity)
        oldRate = grow(oldRate, capacity)
        lastMs = grow(lastMs, capacity)
        nextMs = grow(nextMs, capacity)
        intervalCount = grow(intervalCount, capacity)
      }
      for (let j = 0; j < chunk.ids.length; j++, n++) {
        ids.push(chunk.ids[j]!)
        const host = chunk.hosts[j]!
        const bounds = pageBounds(
          { changesPerDay: null, importance: 0, minCrawlsPerDay: chunk.minCrawlsPerDay[j]!, maxCrawlsPerDay: chunk.maxCrawlsPerDay[j]! },
          settings,
        )
        changesPerDay[n] = chunk.changesPerDay[j] ?? settings.defaultChangesPerDay
        importance[n] = chunk.importance[j]!
        minRate[n] = bounds.minCrawlsPerDay
        maxRate[n] = bounds.maxCrawlsPerDay
        oldRate[n] = chunk.crawlsPerDay[j] ?? Number.NaN
        lastMs[n] = chunk.lastCrawledAtMs[j] ?? Number.NaN
        nextMs[n] = chunk.nextCrawlAtMs[j] ?? Number.NaN
        intervalCount[n] = chunk.intervals[j]!
        let h = -1
        if (caps.has(host)) {
          h = hostIndexOf.get(host) ?? -1
          if (h === -1) {
            h = hostNames.length
            hostIndexOf.set(host, h)
            hostNames.push(host)
          }
        }
        hostIndex[n] = h
      }
      afterId = chunk.ids[chunk.ids.length - 1]!
    }

    const problem: RateProblem = {
      changesPerDay: changesPerDay.subarray(0, n),
      importance: importance.subarray(0, n),
      minCrawlsPerDay: minRate.subarray(0, n),
      maxCrawlsPerDay: maxRate.subarray(0, n),
      hostIndex: hostIndex.subarray(0, n),
      hostMaxCrawlsPerDay: Float64Array.from(hostNames, (h) => caps.get(h)!),
      budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
      objective: settings.objective,
    }
    let solution
    try {
      solution = solveRates(problem)
    } catch (err) {
      if (err instanceof InfeasibleBudgetError) throw new UnprocessableError(err.message)
      throw err
    }

    // Write back only the pages whose rate moved materially, in chunks.
    const nowMs = deps.clock.nowMs()
    const exploreDays = explorationIntervalDays(n, settings)
    let pagesRetimed = 0
    let batchIds: string[] = []
    let batchRates: number[] = []
    let batchNext: (string | null)[] = []
    const flush = async () => {
      await writeRates(client, batchIds, batchRates, batchNext)
      batchIds = []
      batchRates = []
      batchNext = []
    }
    for (let i = 0; i < n; i++) {
      const rate = solution.crawlsPerDay[i]!
      const old = oldRate[i]!
      if (!Number.isNaN(old) && Math.abs(rate - old) <= RETIME_RELATIVE_CHANGE * Math.max(Math.abs(old), 1e-12)) continue
      const next = retimedCrawlAtMs({
        lastCrawledAtMs: Number.isNaN(lastMs[i]!) ? null : lastMs[i]!,
        nextCrawlAtMs: Number.isNaN(nextMs[i]!) ? null : nextMs[i]!,
        previousCrawlsPerDay: Number.isNaN(old) ? null : old,
        crawlsPerDay: rate,
        schedule: settings.schedule,
        nowMs,
        random: deps.random,
        explorationIntervalDays: intervalCount[i] === 0 ? exploreDays : null,
      })
      batchIds.push(ids[i]!)
      batchRates.push(rate)
      batchNext.push(next === null ? null : new Date(next).toISOString())
      pagesRetimed++
      if (batchIds.length >= CHUNK_PAGES) await flush()
    }
    await flush()

    const hostLambdas: Record<string, number> = {}
    for (let h = 0; h < hostNames.length; h++) {
      const lh = solution.hostLambda[h]!
      if (lh > solution.lambda) hostLambdas[hostNames[h]!] = lh
    }
    await saveOptimizerState(client, { lambda: solution.lambda, hostLambdas, solvedAt: new Date(nowMs), pages: n })
    const durationMs = performance.now() - startedMs
    const run = {
      lambda: solution.lambda,
      pages: n,
      pagesCrawled: solution.pagesCrawled,
      budgetCrawlsPerDay: settings.budgetCrawlsPerDay,
      expectedFreshness: solution.expectedFreshness,
      durationMs,
      pagesRetimed,
    }
    await insertOptimizerRun(client, { ...run, startedAt, trigger: options.trigger, objective: settings.objective })
    return run
  })
  if (result) {
    deps.logger?.info({ ...result, trigger: options.trigger }, 'optimiser run')
  }
  return result
}
