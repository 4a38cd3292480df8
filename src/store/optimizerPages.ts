/**
 * The optimiser's input and output as the store keeps them between and during runs: every page's columns,
 * kept per pool across runs and brought up to date from the pages written since (PageSetCache), and the
 * writer that commits a run's re-timed chunks, each in its own transaction, while the run goes on.
 */
import type pg from 'pg'
import { decodeEstimatorState, SOLVER_MAX_CHANGES_PER_DAY, type RateEvidence } from '../math/estimators/index.ts'
import { pageRateEvidence } from '../core/ratePriors.ts'
import { pageBounds } from '../core/crawlTiming.ts'
import { isOutOfBudget } from '../core/fetchOutcomes.ts'
import type { PageStatus } from '../core/pageFields.ts'
import type { RetimeInput } from '../core/pageStep.ts'
import type { Settings } from '../core/settings.ts'
import { moveChangeEpoch } from './changeEpoch.ts'
import {
  readOptimizerChanges,
  readOptimizerChunk,
  readPageDeletions,
  type OptimizerPageChunk,
} from './optimizerRepo.ts'
import { transactionOn, withTransaction, type Queryable } from './transaction.ts'

/** Pages are read and written in chunks of this many rows. */
export const CHUNK_PAGES = 20_000
/** Connections a run writes on at once when the pool has more than this many (see ChunkWriter). */
const WRITE_CONNECTIONS = 2
/** The typed-array columns of Columns, grown together. */
const TYPED_COLUMNS = [
  'changesPerDay',
  'ageShape',
  'renewalChangesPerDay',
  'importance',
  'minRate',
  'maxRate',
  'hostIndex',
  'oldRate',
  'lastMs',
  'nextMs',
  'intervals',
  'consecutiveFailures',
  'versions',
] as const satisfies readonly (keyof Columns)[]
type TypedColumn = (typeof TYPED_COLUMNS)[number]

/** Growable typed columns of the optimiser's input. */
class Columns {
  n = 0
  ids: string[] = []
  hostNames: string[] = []
  hostIndexOf = new Map<string, number>()
  /** Each page's scheduling evidence for the change-rate priors (null: none, or no prior applies). */
  evidence: (RateEvidence | null)[] = []
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
  consecutiveFailures = new Int32Array(this.capacity)
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
    const self = this as unknown as Record<TypedColumn, Float64Array | Int32Array>
    for (const k of TYPED_COLUMNS) self[k] = grow(self[k])
  }

  /** The page at index i as retimePage reads it. */
  page(i: number): RetimeInput {
    const nan = (x: number) => (Number.isNaN(x) ? null : x)
    return {
      status: this.statuses[i]!,
      consecutiveFailures: this.consecutiveFailures[i]!,
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

/** One chunk of re-timed pages on its way to writeRates, with each page's index in the columns. */
export interface RateBatch {
  ids: string[]
  versions: number[]
  crawlsPerDay: number[]
  nextCrawlAtMs: (number | null)[]
  /** The page's new scheduling estimate (the posterior under the run's priors), or null: the stored one stands. */
  changesPerDay: (number | null)[]
  positions: number[]
  /** The run's first chunk. */
  first: boolean
}

export const emptyBatch = (first: boolean): RateBatch => ({
  ids: [],
  versions: [],
  crawlsPerDay: [],
  nextCrawlAtMs: [],
  changesPerDay: [],
  positions: [],
  first,
})

/** What a committed chunk wrote (null: the settings had changed, nothing was written). */
export interface ChunkWritten {
  pagesWritten: number
}

/**
 * Writes the run's chunks, each in its own transaction, while the run re-times the next ones. With a pool of
 * several connections (Postgres), up to WRITE_CONNECTIONS chunks are written at once on connections of
 * their own (a run that re-times every page spends most of its time in these writes, and the database
 * spreads them over its cores); with a single connection (the embedded database), one chunk at a time on
 * the run's own connection. `applied` runs after a chunk commits.
 */
export class ChunkWriter {
  private readonly inFlight = new Set<Promise<void>>()
  private failure: { error: unknown } | null = null
  private readonly slots: number

  constructor(
    private readonly client: Queryable,
    private readonly pool: pg.Pool,
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
  while (chunk.id.length > 0) {
    // The database reads the next chunk while this one is copied into the columns.
    const next =
      chunk.id.length < CHUNK_PAGES ? null : readOptimizerChunk(client, chunk.id[chunk.id.length - 1]!, CHUNK_PAGES)
    cols.reserve(chunk.id.length)
    for (let j = 0; j < chunk.id.length; j++) fillRow(cols, cols.n++, chunk, j, settings, caps)
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
  const host = chunk.host[j]!
  const bounds = pageBounds(
    { minCrawlsPerDay: chunk.minCrawlsPerDay[j] ?? null, maxCrawlsPerDay: chunk.maxCrawlsPerDay[j] ?? null },
    settings,
  )
  const status = chunk.status[j]!
  const noisy = chunk.noisy[j]!
  // Gone, redirected and long-failing pages are out of the budget; a noisy page stays at its floor.
  const consecutiveFailures = chunk.consecutiveFailures[j]!
  const out = isOutOfBudget({ status, consecutiveFailures })
  cols.ids[i] = chunk.id[j]!
  cols.hosts[i] = host
  cols.statuses[i] = status
  cols.noisy[i] = noisy
  cols.changesPerDay[i] = chunk.changesPerDay[j] ?? settings.defaultChangesPerDay
  const state = chunk.estimatorState[j] ?? null
  // The priors summarise how pages change: a sitemap item's rate (how often its document changes) is none of that.
  cols.evidence[i] =
    state === null || chunk.kind[j] !== 'page' ? null : pageRateEvidence(decodeEstimatorState(state), settings, noisy)
  // The law crawlsPerDayFor uses between solves (renewalParameters), from the columns the page step wrote.
  const shape = chunk.ageShape[j] ?? null
  cols.ageShape[i] = shape ?? Number.POSITIVE_INFINITY
  cols.renewalChangesPerDay[i] =
    shape === null
      ? cols.changesPerDay[i]!
      : Math.min(SOLVER_MAX_CHANGES_PER_DAY, cols.changesPerDay[i]! * (chunk.ageShapeRateRatio[j] ?? 1))
  cols.importance[i] = chunk.importance[j]!
  cols.minRate[i] = out ? 0 : bounds.minCrawlsPerDay
  cols.maxRate[i] = out ? 0 : noisy ? bounds.minCrawlsPerDay : bounds.maxCrawlsPerDay
  cols.oldRate[i] = chunk.crawlsPerDay[j] ?? Number.NaN
  cols.lastMs[i] = chunk.lastCrawledAtMs[j] ?? Number.NaN
  cols.nextMs[i] = chunk.nextCrawlAtMs[j] ?? Number.NaN
  cols.intervals[i] = chunk.intervals[j]!
  cols.consecutiveFailures[i] = consecutiveFailures
  cols.versions[i] = chunk.version[j]!
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
 * to read what changed since. A run moves the change epoch on (changeEpoch.ts) and reads only the pages
 * stamped since the last run's move (one sequential scan); the rows the last run wrote back keep their stamps,
 * and it applied them to the columns already. It reads every page again after a change of settings or host
 * caps, after a deletion (migrations/0014, 0026), when the epoch did not move past the kept one, and every
 * FULL_READ_EVERY runs.
 */
interface PageSetCache {
  key: string
  cols: Columns
  positionOf: Map<string, number>
  /** The epoch the last run moved to: rows stamped below it were in its read. */
  sinceEpoch: bigint
  /** The page-deletion counter read before sinceEpoch was taken. */
  deletions: string
  runsSinceFullRead: number
}

const FULL_READ_EVERY = 12
const pageSetCaches = new WeakMap<object, PageSetCache>()

export async function loadColumns(
  client: Queryable,
  owner: object,
  settings: Settings,
  caps: ReadonlyMap<string, number>,
  key: string,
): Promise<PageSetCache> {
  // The counter first: a deletion that commits after it was read moves it for the next run.
  const deletions = await readPageDeletions(client)
  const sinceEpoch = await moveChangeEpoch(client)
  const cache = pageSetCaches.get(owner)
  if (
    cache &&
    cache.key === key &&
    cache.deletions === deletions &&
    cache.runsSinceFullRead < FULL_READ_EVERY &&
    // An epoch that did not move past the kept one: the database was replaced (restored) under the process.
    sinceEpoch > cache.sinceEpoch
  ) {
    const changes = await readOptimizerChanges(client, cache.sinceEpoch)
    const { cols, positionOf } = cache
    cols.reserve(changes.id.length)
    for (let j = 0; j < changes.id.length; j++) {
      let i = positionOf.get(changes.id[j]!)
      if (i === undefined) {
        i = cols.n++
        positionOf.set(changes.id[j]!, i)
      }
      fillRow(cols, i, changes, j, settings, caps)
    }
    cache.sinceEpoch = sinceEpoch
    cache.runsSinceFullRead++
    return cache
  }
  const cols = await readColumns(client, settings, caps)
  const positionOf = new Map<string, number>()
  for (let i = 0; i < cols.n; i++) positionOf.set(cols.ids[i]!, i)
  const fresh: PageSetCache = { key, cols, positionOf, sinceEpoch, deletions, runsSinceFullRead: 0 }
  pageSetCaches.set(owner, fresh)
  return fresh
}
