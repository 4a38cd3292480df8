import type { FleetPriors } from '../math/estimators/index.ts'
import type { SignalCovers } from '../math/signalRates.ts'
import { clampTimestampMs } from '../core/timestamps.ts'
import { FAILING_OUT_AFTER_FAILURES } from '../core/fetchOutcomes.ts'
import type { PageFieldName, PageValue } from '../core/pageFields.ts'
import { selectList } from './pageColumns.ts'
import type { Queryable } from './transaction.ts'
import { numberArrayLiteral } from './arrayLiterals.ts'

/** Key of the advisory lock that makes one replica at a time run the optimiser. */
export const OPTIMIZER_LOCK_KEY = 7242019002

/**
 * Takes the optimiser lock for this session (connection): waits (`wait`) or gives up at once. Held for the
 * whole run, across its transactions; released by releaseOptimizerLock or when the connection ends.
 */
export async function takeOptimizerLock(q: Queryable, wait: boolean): Promise<boolean> {
  if (wait) {
    await q.query('SELECT pg_advisory_lock($1)', [OPTIMIZER_LOCK_KEY])
    return true
  }
  const { rows } = await q.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [OPTIMIZER_LOCK_KEY])
  return rows[0]?.ok === true
}

export async function releaseOptimizerLock(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_unlock($1)', [OPTIMIZER_LOCK_KEY])
}

/** The fields an optimiser run reads of every page. */
const OPTIMIZER_FIELDS = [
  'id',
  'host',
  'importance',
  'changesPerDay',
  'minCrawlsPerDay',
  'maxCrawlsPerDay',
  'crawlsPerDay',
  'lastCrawledAtMs',
  'nextCrawlAtMs',
  'intervals',
  /** The page's version when read (migrations/0007): the write-back applies only while it still holds. */
  'version',
  'status',
  'consecutiveFailures',
  'noisy',
  /** β of the fitted age law (null: Poisson) and its rate ratio (migrations/0012; docs/math.md 3.5). */
  'ageShape',
  'ageShapeRateRatio',
  /** The scheduling evidence for the change-rate priors (docs/math.md 1.12). */
  'estimatorState',
  /** Sitemap items give no evidence to the priors: their rates are no page's. */
  'kind',
] as const satisfies readonly PageFieldName[]

type OptimizerField = (typeof OPTIMIZER_FIELDS)[number]

/** One chunk of the optimiser's input, in id order: a column per field. */
export type OptimizerPageChunk = { [K in OptimizerField]: PageValue<K>[] }

const OPTIMIZER_COLUMNS = selectList(OPTIMIZER_FIELDS)

type OptimizerRow = unknown[]

/** Up to `limit` pages after `afterId`, in id order (keyset paging: constant memory per chunk on the server). */
export async function readOptimizerChunk(
  q: Queryable,
  afterId: string | null,
  limit: number,
): Promise<OptimizerPageChunk> {
  const { rows } = await q.query<OptimizerRow>({
    // The bound on both tables keeps each side of the merge join to the chunk (ids start at 1): with it on one
    // side only, the other side's index was read from its first row for every chunk.
    text: `SELECT ${OPTIMIZER_COLUMNS} FROM page_schedule s JOIN pages p ON p.id = s.page_id
           WHERE s.page_id > $1::bigint AND p.id > $1::bigint ORDER BY s.page_id LIMIT $2`,
    values: [afterId ?? '0', limit],
    rowMode: 'array',
  })
  return toChunk(rows)
}

/**
 * The pages whose schedule row is stamped `sinceEpoch` or later (changeEpoch.ts): one sequential scan of the
 * schedule rows, no index. Every write of a field read here stamps the page's schedule row. The join names the
 * host on both sides, so that Citus joins the two tables where they live when both are distributed by host.
 */
export async function readOptimizerChanges(q: Queryable, sinceEpoch: bigint): Promise<OptimizerPageChunk> {
  const { rows } = await q.query<OptimizerRow>({
    text: `SELECT ${OPTIMIZER_COLUMNS} FROM page_schedule s JOIN pages p ON p.host = s.host AND p.id = s.page_id
           WHERE s.change_epoch >= $1::bigint ORDER BY s.page_id`,
    values: [sinceEpoch.toString()],
    rowMode: 'array',
  })
  return toChunk(rows)
}

/** Statements that have deleted pages so far (migrations/0014, 0026): a change means pages may be gone. */
export async function readPageDeletions(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ n: string }>('SELECT statements::text AS n FROM page_deletion_count WHERE id')
  return rows[0]!.n
}

function toChunk(rows: readonly OptimizerRow[]): OptimizerPageChunk {
  const columns = OPTIMIZER_FIELDS.map(() => [] as unknown[])
  for (const r of rows) for (let c = 0; c < columns.length; c++) columns[c]!.push(r[c])
  return Object.fromEntries(OPTIMIZER_FIELDS.map((k, c) => [k, columns[c]])) as OptimizerPageChunk
}

/**
 * Writes new rates and due times, and new scheduling estimates where the run's priors moved them, for the pages
 * whose rate or estimate moved (bulk, one statement per chunk), each only
 * while the page still has the version the run read (the fields written are those the table marks `optimizer`): a page crawled or changed since keeps what that write
 * gave it. Returns how many pages were written.
 */
export async function writeRates(
  q: Queryable,
  rates: {
    ids: readonly string[]
    versions: readonly number[]
    crawlsPerDay: readonly number[]
    nextCrawlAtMs: readonly (number | null)[]
    /** New scheduling estimates; null leaves the stored one. */
    changesPerDay: readonly (number | null)[]
  },
): Promise<number> {
  if (rates.ids.length === 0) return 0
  // Due times travel as epoch milliseconds: cheaper to send and to parse than RFC 3339 text. The extra
  // `s.page_id = ANY(...)` makes the planner find the rows by primary key: left to the join alone, it hashes
  // the whole table for every chunk once a chunk holds more than a few thousand rows. The narrow schedule row is
  // rewritten (migrations/0015); the page row only for a moved estimate.
  // A page's new estimate is written in the same statement and only where its schedule row was: a crawl that
  // raced the run (a newer version) keeps its own estimate as well as its own schedule.
  // The rows keep their change stamps (changeEpoch.ts): the run takes what it wrote into its columns, so the
  // next run need not read them again.
  const { rows } = await q.query<{ written: string }>(
    `WITH u AS (
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::float8[], $4::float8[], $5::float8[])
         AS u(id, version, rate, next_ms, changes_per_day)
     ), s AS (
       UPDATE page_schedule s SET crawls_per_day = u.rate, next_crawl_at = to_timestamp(u.next_ms / 1000), version = s.version + 1,
         change_epoch = s.change_epoch
       FROM u WHERE s.page_id = ANY($1::bigint[]) AND s.page_id = u.id AND s.version = u.version
       RETURNING s.page_id
     ), e AS (
       UPDATE pages p SET changes_per_day = u.changes_per_day
       FROM s JOIN u ON u.id = s.page_id
       WHERE p.id = s.page_id AND u.changes_per_day IS NOT NULL
     )
     SELECT count(*) AS written FROM s`,
    [
      numberArrayLiteral(rates.ids),
      numberArrayLiteral(rates.versions),
      numberArrayLiteral(rates.crawlsPerDay),
      numberArrayLiteral(rates.nextCrawlAtMs.map((ms) => (ms === null ? null : clampTimestampMs(ms)))),
      numberArrayLiteral(rates.changesPerDay),
    ],
  )
  return Number(rows[0]!.written)
}

export async function saveOptimizerState(
  q: Queryable,
  state: {
    lambda: number
    hostLambdas: Record<string, number>
    solvedAtMs: number
    pages: number
    priors: FleetPriors | null
    signalCover: SignalCovers | null
  },
): Promise<void> {
  await q.query(
    'UPDATE optimizer_state SET lambda = $1, host_lambdas = $2::jsonb, solved_at = $3, pages = $4, rate_priors = $5::jsonb, signal_cover = $6::jsonb WHERE id',
    [
      state.lambda,
      JSON.stringify(state.hostLambdas),
      new Date(state.solvedAtMs),
      state.pages,
      state.priors === null ? null : JSON.stringify(state.priors),
      state.signalCover === null ? null : JSON.stringify(state.signalCover),
    ],
  )
}

interface OptimizerRunRow {
  id: string
  startedAt: Date
  durationMs: number
  trigger: string
  objective: string
  lambda: number | null
  pages: number
  pagesCrawled: number
  budgetCrawlsPerDay: number
  expectedFreshness: number | null
  pagesRetimed: number
}

export async function insertOptimizerRun(
  q: Queryable,
  run: Omit<OptimizerRunRow, 'id' | 'startedAt'> & { startedAtMs: number },
): Promise<void> {
  await q.query(
    `INSERT INTO optimizer_runs (started_at, duration_ms, trigger, objective, lambda, pages, pages_crawled,
       budget_crawls_per_day, expected_freshness, pages_retimed)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      new Date(run.startedAtMs),
      run.durationMs,
      run.trigger,
      run.objective,
      run.lambda,
      run.pages,
      run.pagesCrawled,
      run.budgetCrawlsPerDay,
      run.expectedFreshness,
      run.pagesRetimed,
    ],
  )
}

export async function recentOptimizerRuns(q: Queryable, limit: number): Promise<OptimizerRunRow[]> {
  const { rows } = await q.query<OptimizerRunRow>(
    `SELECT id::text AS id, started_at AS "startedAt", duration_ms AS "durationMs", trigger, objective, lambda, pages,
       pages_crawled AS "pagesCrawled", budget_crawls_per_day AS "budgetCrawlsPerDay",
       expected_freshness AS "expectedFreshness", pages_retimed AS "pagesRetimed"
     FROM optimizer_runs r ORDER BY r.id DESC LIMIT $1`,
    [limit],
  )
  return rows
}

/**
 * The crawls per day the pages' lower bounds need together, with `defaultMinCrawlsPerDay` for pages without
 * their own (core/crawlTiming.ts, pageBounds). Pages out of the budget (core/fetchOutcomes.ts, isOutOfBudget) need none.
 */
export async function minimumCrawlsPerDayNeeded(q: Queryable, defaultMinCrawlsPerDay: number): Promise<number> {
  const { rows } = await q.query<{ needed: number }>(
    `SELECT coalesce(sum(coalesce(min_crawls_per_day, $1::float8)), 0)::float8 AS needed
       FROM pages
      WHERE status NOT IN ('gone', 'redirected')
        AND NOT (status = 'failing' AND consecutive_failures >= $2)`,
    [defaultMinCrawlsPerDay, FAILING_OUT_AFTER_FAILURES],
  )
  return rows[0]!.needed
}
