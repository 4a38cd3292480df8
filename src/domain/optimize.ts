import { z } from 'zod'
import { SOLVER_MAX_CHANGES_PER_DAY } from '../math/estimators/index.ts'
import { InfeasibleBudgetError, solveRates, type RateProblem } from '../math/optimizer/index.ts'
import { hostCaps } from '../store/hostsRepo.ts'
import {
  insertOptimizerRun,
  readOptimizerChanges,
  readOptimizerChunk,
  readPageDeletions,
  readSnapshotXmin,
  readTransactionXid,
  releaseOptimizerLock,
  saveOptimizerState,
  takeOptimizerLock,
  writeRates,
  type OptimizerPageChunk,
} from '../store/optimizerRepo.ts'
import { loadSettings, readOptimizerState } from '../store/settingsRepo.ts'
import { transactionOn, withClient, withTransaction, type Queryable } from '../store/transaction.ts'
import { ConflictError, UnprocessableError } from '../core/errors.ts'
import { rateMoved, retimePage, stepContext, type RetimeInput } from '../core/pageStep.ts'
import type { PageStatus } from '../core/pageFields.ts'
import { pageBounds } from '../core/crawlTiming.ts'
import type { Settings } from '../core/settings.ts'
import type { DomainDeps } from './deps.ts'

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
  })

export type OptimizeResult = z.infer<typeof optimizerRunSchema>

/** Pages are read and written in chunks of this many rows. */
const CHUNK_PAGES = 20_000
/** Connections a run writes on at once when the pool has more than this many (see ChunkWriter). */
const WRITE_CONNECTIONS = 2
/** Growable typed columns of the optimiser's input. */
class Columns {
  n = 0
  ids: string[] = []
  hostNames: string[] = []
  hostIndexOf = new Map<string, number>()
  private capacity = 1024
  changesPerDay = new Float64Array(this.capacity)
  /** For freshness-renewal (docs/math.md 3.5): each page's age shape (+∞: Poisson) and its law's rate. */
  ageShape = new Float64Array(this.capacity)
  renewalChangesPerDay = new Float64Array(this.capacity)
  importance = new Float64Array(this.capacity)
  minRate = new Float64Array(this.capacity)
  maxRate = new Float64Array(this.capacity)
  hostIndex = new Int32Array(this.capacity)
  oldRate = new Float64Array(this.capacity)
  lastMs = new Float64Array(this.capacity)
  nextMs = new Float64Array(this.capacity)
  intervals = new Int32Array(this.capacity)
  versions = new Float64Array(this.capacity)
  hosts: string[] = []
  statuses: PageStatus[] = []
  noisy: boolean[] = []

  reserve(extra: number): void {
    if (this.n + extra <= this.capacity) return
    this.capacity = Math.max(this.capacity * 2, this.n + extra)
    const grow = <T extends Float64Array | Int32Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(this.capacity)
      b.set(a)
      return b
    }
    this.changesPerDay = grow(this.changesPerDay)
    this.ageShape = grow(this.ageShape)
    this.renewalChangesPerDay = grow(this.renewalChangesPerDay)
    this.importance = grow(this.importance)
    this.minRate = grow(this.minRate)
    this.maxRate = grow(this.maxRate)
    this.hostIndex = grow(this.hostIndex)
    this.oldRate = grow(this.oldRate)
    this.lastMs = grow(this.lastMs)
    this.nextMs = grow(this.nextMs)
    this.intervals = grow(this.intervals)
    this.versions = grow(this.versions)
  }

  /** The page at index i as retimePage reads it. */
  page(i: number): RetimeInput {
    const nan = (x: number) => (Number.isNaN(x) ? null : x)
    return {
      status: this.statuses[i]!,
      noisy: this.noisy[i]!,
      host: this.hosts[i]!,
      importance: this.importance[i]!,
      minCrawlsPerDay: this.minRate[i]!,
      maxCrawlsPerDay: this.maxRate[i]!,
      intervals: this.intervals[i]!,
      lastCrawledAtMs: nan(this.lastMs[i]!),
      estimator: null,
      changesPerDay: this.changesPerDay[i]!,
      crawlsPerDay: nan(this.oldRate[i]!),
      nextCrawlAtMs: nan(this.nextMs[i]!),
    }
  }
}

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
  const startedAt = new Date(deps.clock.nowMs())
  const result = await withClient(deps.pool, async (client) => {
    if (!(await takeOptimizerLock(client, options.wait))) return null
    try {
      return await solveAndWrite(
        client,
        deps,
        options.trigger,
        startedAt,
        startedMs,
        options.writeChunkPages ?? CHUNK_PAGES,
      )
    } finally {
      await releaseOptimizerLock(client)
    }
  })
  if (result) deps.logger?.info({ ...result, trigger: options.trigger }, 'optimiser run')
  return result
}

async function solveAndWrite(
  client: Queryable,
  deps: DomainDeps,
  trigger: 'api' | 'periodic',
  startedAt: Date,
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
  const problem: RateProblem = {
    changesPerDay: (renewal ? cols.renewalChangesPerDay : cols.changesPerDay).subarray(0, n),
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
  try {
    solution = solveRates(problem)
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
  const optimizer = { lambda: solution.lambda, hostLambdas, pages: n }
  const ctx = stepContext(settings, optimizer, nowMs, deps.random)
  /** Still the settings the run solved with (read FOR SHARE, so they cannot change before this transaction commits)? */
  const settingsUnchanged = async (q: Queryable) =>
    JSON.stringify(await loadSettings(q, 'share')) === JSON.stringify(settings)

  let pagesRetimed = 0
  let superseded = false
  // The first chunk's transaction stores the multipliers (a run that moves no page writes one empty chunk).
  const writeChunk = async (q: Queryable, batch: RateBatch): Promise<ChunkWritten | null> => {
    if (!(await settingsUnchanged(q))) return null
    if (batch.first) await saveOptimizerState(q, { ...optimizer, solvedAt: new Date(nowMs) })
    return { pagesWritten: await writeRates(q, batch), xid: await readTransactionXid(q) }
  }
  const writes = new ChunkWriter(client, deps.pool, writeChunk, (batch, written) => {
    if (written === null) {
      superseded = true
      return
    }
    pagesRetimed += written.pagesWritten
    // The next run need not read these rows again: the columns get what was written.
    cache.ownXids.push(written.xid)
    for (let k = 0; k < batch.ids.length; k++) {
      const i = batch.positions[k]!
      cols.oldRate[i] = batch.crawlsPerDay[k]!
      cols.nextMs[i] = batch.nextCrawlAtMs[k] ?? Number.NaN
      cols.versions[i] = batch.versions[k]! + 1
    }
  })
  try {
    let batch = emptyBatch(true)
    for (let i = 0; i < n && !superseded; i++) {
      const rate = solution.crawlsPerDay[i]!
      const old = cols.oldRate[i]!
      if (!rateMoved(Number.isNaN(old) ? null : old, rate)) continue
      const next = retimePage(cols.page(i), ctx, { solvedCrawlsPerDay: rate })
      batch.ids.push(cols.ids[i]!)
      batch.versions.push(cols.versions[i]!)
      batch.crawlsPerDay.push(next.crawlsPerDay!)
      batch.nextCrawlAtMs.push(next.nextCrawlAtMs)
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
  await insertOptimizerRun(client, { ...run, startedAt, trigger, objective: settings.objective })
  return run
}

/** One chunk of re-timed pages on its way to writeRates, with each page's index in the columns. */
interface RateBatch {
  ids: string[]
  versions: number[]
  crawlsPerDay: number[]
  nextCrawlAtMs: (number | null)[]
  positions: number[]
  /** The run's first chunk. */
  first: boolean
}

const emptyBatch = (first: boolean): RateBatch => ({
  ids: [],
  versions: [],
  crawlsPerDay: [],
  nextCrawlAtMs: [],
  positions: [],
  first,
})

/** What a committed chunk wrote (null: the settings had changed, nothing was written). */
interface ChunkWritten {
  pagesWritten: number
  xid: bigint
}

/**
 * Writes the run's chunks, each in its own transaction, while the run re-times the next ones. With a pool of
 * several connections (Postgres), up to WRITE_CONNECTIONS chunks are written at once on connections of
 * their own (a run that re-times every page spends most of its time in these writes, and the database
 * spreads them over its cores); with a single connection (the embedded database), one chunk at a time on
 * the run's own connection. `applied` runs after a chunk commits.
 */
class ChunkWriter {
  private readonly inFlight = new Set<Promise<void>>()
  private failure: { error: unknown } | null = null
  private readonly slots: number

  constructor(
    private readonly client: Queryable,
    private readonly pool: DomainDeps['pool'],
    private readonly write: (q: Queryable, batch: RateBatch) => Promise<ChunkWritten | null>,
    private readonly applied: (batch: RateBatch, written: ChunkWritten | null) => void,
  ) {
    this.slots = (pool.options.max ?? 1) > WRITE_CONNECTIONS ? WRITE_CONNECTIONS : 0
  }

  /** Starts writing `batch` once a slot is free; throws the error of any chunk that failed. */
  async submit(batch: RateBatch): Promise<void> {
    while (this.inFlight.size >= Math.max(1, this.slots)) await Promise.race(this.inFlight)
    if (this.failure) throw this.failure.error
    const work =
      this.slots === 0
        ? transactionOn(this.client, () => this.write(this.client, batch))
        : withTransaction(this.pool, (q) => this.write(q, batch))
    const tracked: Promise<void> = work
      .then(
        (written) => this.applied(batch, written),
        (error: unknown) => {
          this.failure ??= { error }
        },
      )
      .finally(() => this.inFlight.delete(tracked))
    this.inFlight.add(tracked)
  }

  /** Waits for every chunk in flight; throws the first failure. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.race(this.inFlight)
    if (this.failure) throw this.failure.error
  }
}

/** Streams every page into typed columns (ids kept as strings for the write-back), in id order. */
async function readColumns(client: Queryable, settings: Settings, caps: ReadonlyMap<string, number>): Promise<Columns> {
  const cols = new Columns()
  let chunk = await readOptimizerChunk(client, null, CHUNK_PAGES)
  while (chunk.ids.length > 0) {
    // The database reads the next chunk while this one is copied into the columns.
    const next =
      chunk.ids.length < CHUNK_PAGES ? null : readOptimizerChunk(client, chunk.ids[chunk.ids.length - 1]!, CHUNK_PAGES)
    cols.reserve(chunk.ids.length)
    for (let j = 0; j < chunk.ids.length; j++) fillRow(cols, cols.n++, chunk, j, settings, caps)
    if (next === null) break
    chunk = await next
  }
  return cols
}

/** Sets the optimiser's columns at index i from row j of a chunk. */
function fillRow(
  cols: Columns,
  i: number,
  chunk: OptimizerPageChunk,
  j: number,
  settings: Settings,
  caps: ReadonlyMap<string, number>,
): void {
  const host = chunk.hosts[j]!
  const bounds = pageBounds(
    { minCrawlsPerDay: chunk.minCrawlsPerDay[j] ?? null, maxCrawlsPerDay: chunk.maxCrawlsPerDay[j] ?? null },
    settings,
  )
  const status = chunk.statuses[j] as PageStatus
  const noisy = chunk.noisy[j]!
  // Gone and redirected pages are out of the budget; a noisy page stays at its floor.
  const out = status === 'gone' || status === 'redirected'
  cols.ids[i] = chunk.ids[j]!
  cols.hosts[i] = host
  cols.statuses[i] = status
  cols.noisy[i] = noisy
  cols.changesPerDay[i] = chunk.changesPerDay[j] ?? settings.defaultChangesPerDay
  // The law crawlsPerDayFor uses between solves (renewalParameters), from the columns the page step wrote.
  const shape = chunk.ageShapes[j] ?? null
  cols.ageShape[i] = shape ?? Number.POSITIVE_INFINITY
  cols.renewalChangesPerDay[i] =
    shape === null
      ? cols.changesPerDay[i]!
      : Math.min(SOLVER_MAX_CHANGES_PER_DAY, cols.changesPerDay[i]! * (chunk.ageShapeRateRatios[j] ?? 1))
  cols.importance[i] = chunk.importance[j]!
  cols.minRate[i] = out ? 0 : bounds.minCrawlsPerDay
  cols.maxRate[i] = out ? 0 : noisy ? bounds.minCrawlsPerDay : bounds.maxCrawlsPerDay
  cols.oldRate[i] = chunk.crawlsPerDay[j] ?? Number.NaN
  cols.lastMs[i] = chunk.lastCrawledAtMs[j] ?? Number.NaN
  cols.nextMs[i] = chunk.nextCrawlAtMs[j] ?? Number.NaN
  cols.intervals[i] = chunk.intervals[j]!
  cols.versions[i] = chunk.versions[j]!
  let h = -1
  if (caps.has(host)) {
    h = cols.hostIndexOf.get(host) ?? -1
    if (h === -1) {
      h = cols.hostNames.length
      cols.hostIndexOf.set(host, h)
      cols.hostNames.push(host)
    }
  }
  cols.hostIndex[i] = h
}

/**
 * The optimiser's input kept between runs of one process (per pool): the columns of the last run, and where
 * to read what changed since. A run reads only the pages written since the last run's read began (their row
 * version's transaction id, one sequential scan), except the versions the last run wrote itself, which it
 * applied to the columns already. It reads every page again after a change of settings or host caps, after
 * a deletion (migrations/0014), across a transaction-id epoch, and every FULL_READ_EVERY runs.
 */
interface PageSetCache {
  key: string
  cols: Columns
  positionOf: Map<string, number>
  sinceXid: bigint
  ownXids: bigint[]
  /** The page-deletion counter when sinceXid was taken. */
  deletions: string
  runsSinceFullRead: number
}

const FULL_READ_EVERY = 12
const pageSetCaches = new WeakMap<object, PageSetCache>()

async function loadColumns(
  client: Queryable,
  owner: object,
  settings: Settings,
  caps: ReadonlyMap<string, number>,
  key: string,
): Promise<PageSetCache> {
  const deletions = await readPageDeletions(client)
  const sinceXid = await readSnapshotXmin(client)
  const cache = pageSetCaches.get(owner)
  if (
    cache &&
    cache.key === key &&
    cache.deletions === deletions &&
    cache.runsSinceFullRead < FULL_READ_EVERY &&
    cache.sinceXid >> 32n === sinceXid >> 32n
  ) {
    const changes = await readOptimizerChanges(client, cache.sinceXid, cache.ownXids)
    const { cols, positionOf } = cache
    cols.reserve(changes.ids.length)
    for (let j = 0; j < changes.ids.length; j++) {
      let i = positionOf.get(changes.ids[j]!)
      if (i === undefined) {
        i = cols.n++
        positionOf.set(changes.ids[j]!, i)
      }
      fillRow(cols, i, changes, j, settings, caps)
    }
    cache.sinceXid = sinceXid
    cache.ownXids = []
    cache.runsSinceFullRead++
    return cache
  }
  const cols = await readColumns(client, settings, caps)
  const positionOf = new Map<string, number>()
  for (let i = 0; i < cols.n; i++) positionOf.set(cols.ids[i]!, i)
  const fresh: PageSetCache = { key, cols, positionOf, sinceXid, ownXids: [], deletions, runsSinceFullRead: 0 }
  pageSetCaches.set(owner, fresh)
  return fresh
}
