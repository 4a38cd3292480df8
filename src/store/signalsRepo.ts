import type { TrustCounts } from '../core/signals.ts'
import { numberArrayLiteral, textArrayLiteral } from './arrayLiterals.ts'
import { likePrefix } from './likePatterns.ts'
import type { Queryable } from './transaction.ts'

/** What the operator allows a source (migrations/0021). */
export interface SignalSourceConfig {
  discover: boolean
  discoverImportance: number
}

export async function readSignalSourceConfigs(
  q: Queryable,
  sources: readonly string[],
): Promise<Map<string, SignalSourceConfig>> {
  if (sources.length === 0) return new Map()
  const { rows } = await q.query<{ source: string } & SignalSourceConfig>(
    `SELECT source, discover, discover_importance AS "discoverImportance" FROM signal_sources WHERE source = ANY($1::text[])`,
    [sources],
  )
  return new Map(rows.map((r) => [r.source, { discover: r.discover, discoverImportance: r.discoverImportance }]))
}

export async function writeSignalSourceConfig(
  q: Queryable,
  source: string,
  config: SignalSourceConfig,
  nowMs: number,
): Promise<void> {
  await q.query(
    `INSERT INTO signal_sources (source, discover, discover_importance, updated_at) VALUES ($1, $2, $3, $4::timestamptz)
     ON CONFLICT (source) DO UPDATE SET discover = excluded.discover, discover_importance = excluded.discover_importance,
       updated_at = excluded.updated_at`,
    [source, config.discover, config.discoverImportance, new Date(nowMs)],
  )
}

export interface SignalInsert {
  pageId: string
  source: string
  signalledAtMs: number
  changedAtMs: number | null
  receivedAtMs: number
  effect: string
}

/** The key of one stored signal in the set storedSignals returns. */
export const signalKey = (pageId: string, source: string, signalledAtMs: number) =>
  `${pageId}|${source}|${signalledAtMs}`

/**
 * Appends signals; one already stored (same page, source and signalled time) is left alone. Returns how many were
 * new.
 */
export async function insertSignals(q: Queryable, rows: readonly SignalInsert[]): Promise<number> {
  if (rows.length === 0) return 0
  const result = await q.query(
    `INSERT INTO signals AS s (page_id, source, signalled_at, changed_at, received_at, effect)
     SELECT u.page_id, u.source, to_timestamp(u.signalled_ms / 1000.0),
       to_timestamp(u.changed_ms / 1000.0), to_timestamp(u.received_ms / 1000.0), u.effect
     FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::float8[], $5::float8[], $6::text[])
       AS u(page_id, source, signalled_ms, changed_ms, received_ms, effect)
     ON CONFLICT (page_id, source, signalled_at) DO NOTHING`,
    [
      numberArrayLiteral(rows.map((r) => r.pageId)),
      textArrayLiteral(rows.map((r) => r.source)),
      numberArrayLiteral(rows.map((r) => r.signalledAtMs)),
      numberArrayLiteral(rows.map((r) => r.changedAtMs)),
      numberArrayLiteral(rows.map((r) => r.receivedAtMs)),
      textArrayLiteral(rows.map((r) => r.effect)),
    ],
  )
  return result.rowCount ?? 0
}

/** Which of these (page, source, signalled time) are stored already (signalKey). */
export async function storedSignals(
  q: Queryable,
  keys: readonly { pageId: string; source: string; signalledAtMs: number }[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set()
  const { rows } = await q.query<{ pageId: string; source: string; ms: string }>(
    `SELECT s.page_id::text AS "pageId", s.source, floor(extract(epoch FROM s.signalled_at) * 1000)::bigint::text AS ms
     FROM unnest($1::bigint[], $2::text[], $3::float8[]) AS u(page_id, source, ms)
     JOIN signals s ON s.page_id = u.page_id AND s.source = u.source AND s.signalled_at = to_timestamp(u.ms / 1000.0)`,
    [
      numberArrayLiteral(keys.map((k) => k.pageId)),
      textArrayLiteral(keys.map((k) => k.source)),
      numberArrayLiteral(keys.map((k) => k.signalledAtMs)),
    ],
  )
  return new Set(rows.map((r) => signalKey(r.pageId, r.source, Number(r.ms))))
}

const COUNT_COLUMNS = `signals_judged::float8 AS "signalsJudged", signals_confirmed::float8 AS "signalsConfirmed",
  changes_seen::float8 AS "changesSeen", changes_signalled::float8 AS "changesSignalled",
  crawls_judged::float8 AS "crawlsJudged"`
const SUM_COLUMNS = `sum(signals_judged)::float8 AS "signalsJudged", sum(signals_confirmed)::float8 AS "signalsConfirmed",
  sum(changes_seen)::float8 AS "changesSeen", sum(changes_signalled)::float8 AS "changesSignalled",
  sum(crawls_judged)::float8 AS "crawlsJudged"`

/** The trust counts of these (source, host) pairs, by `${source}|${host}`, and each source's fleet-wide sums. */
export async function readTrustCounts(
  q: Queryable,
  pairs: readonly { source: string; host: string }[],
): Promise<{ byPair: Map<string, TrustCounts>; bySource: Map<string, TrustCounts> }> {
  if (pairs.length === 0) return { byPair: new Map(), bySource: new Map() }
  const sources = [...new Set(pairs.map((p) => p.source))]
  const [own, fleet] = await Promise.all([
    q.query<{ source: string; host: string } & TrustCounts>(
      `SELECT t.source, t.host, ${COUNT_COLUMNS} FROM signal_trust t
       JOIN unnest($1::text[], $2::text[]) AS u(source, host) ON t.source = u.source AND t.host = u.host`,
      [pairs.map((p) => p.source), pairs.map((p) => p.host)],
    ),
    q.query<{ source: string } & TrustCounts>(
      `SELECT source, ${SUM_COLUMNS} FROM signal_trust WHERE source = ANY($1::text[]) GROUP BY source`,
      [sources],
    ),
  ])
  return {
    byPair: new Map(own.rows.map(({ source, host, ...c }) => [trustPairKey(source, host), c])),
    bySource: new Map(fleet.rows.map(({ source, ...c }) => [source, c])),
  }
}

/** The trust counts of every (source, host) pair, and each source's fleet-wide sums (for the optimiser run). */
export async function readAllTrustCounts(
  q: Queryable,
): Promise<{ pairs: ({ source: string; host: string } & TrustCounts)[]; bySource: Map<string, TrustCounts> }> {
  const [own, fleet] = await Promise.all([
    q.query<{ source: string; host: string } & TrustCounts>(
      `SELECT source, host, ${COUNT_COLUMNS} FROM signal_trust WHERE signals_judged > 0`,
    ),
    q.query<{ source: string } & TrustCounts>(`SELECT source, ${SUM_COLUMNS} FROM signal_trust GROUP BY source`),
  ])
  return { pairs: own.rows, bySource: new Map(fleet.rows.map(({ source, ...c }) => [source, c])) }
}

export const trustPairKey = (source: string, host: string) => `${source}|${host}`

/** Increments of one (source, host) row of signal_trust. */
export interface TrustIncrement extends TrustCounts {
  source: string
  host: string
  signalsReceived: number
  signalsStale: number
  signalsPulled: number
  buildTimeDocuments: number
}

const INCREMENT_COLUMNS = [
  ['signalsReceived', 'signals_received'],
  ['signalsStale', 'signals_stale'],
  ['signalsPulled', 'signals_pulled'],
  ['signalsJudged', 'signals_judged'],
  ['signalsConfirmed', 'signals_confirmed'],
  ['changesSeen', 'changes_seen'],
  ['changesSignalled', 'changes_signalled'],
  ['crawlsJudged', 'crawls_judged'],
  ['buildTimeDocuments', 'build_time_documents'],
] as const

/** Adds the increments to signal_trust (a new pair starts at 0), in (source, host) order. */
export async function addTrustIncrements(q: Queryable, increments: readonly TrustIncrement[]): Promise<void> {
  if (increments.length === 0) return
  const sorted = [...increments].sort((a, b) =>
    a.source === b.source ? (a.host < b.host ? -1 : 1) : a.source < b.source ? -1 : 1,
  )
  const cols = INCREMENT_COLUMNS.map(([, c]) => c)
  await q.query(
    `INSERT INTO signal_trust AS t (source, host, ${cols.join(', ')})
     SELECT * FROM unnest($1::text[], $2::text[], ${cols.map((_, i) => `$${i + 3}::bigint[]`).join(', ')})
     ON CONFLICT (source, host) DO UPDATE SET ${cols.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ')}`,
    [
      sorted.map((i) => i.source),
      sorted.map((i) => i.host),
      ...INCREMENT_COLUMNS.map(([k]) => sorted.map((i) => i[k])),
    ],
  )
}

/** Makes each (page, source) pending at the earliest of its stored and new signalled time. */
export async function addPendingSignals(
  q: Queryable,
  rows: readonly { pageId: string; source: string; signalledAtMs: number }[],
): Promise<void> {
  if (rows.length === 0) return
  // One row per (page, source), the earliest, so that one statement never updates a row twice.
  const earliest = new Map<string, { pageId: string; source: string; signalledAtMs: number }>()
  for (const r of rows) {
    const key = `${r.pageId}|${r.source}`
    const seen = earliest.get(key)
    if (seen === undefined || r.signalledAtMs < seen.signalledAtMs) earliest.set(key, r)
  }
  const unique = [...earliest.values()]
  await q.query(
    `INSERT INTO pending_signals AS p (page_id, source, signalled_at)
     SELECT u.page_id, u.source, to_timestamp(u.ms / 1000.0)
     FROM unnest($1::bigint[], $2::text[], $3::float8[]) AS u(page_id, source, ms)
     ON CONFLICT (page_id, source) DO UPDATE SET signalled_at = excluded.signalled_at
       WHERE excluded.signalled_at < p.signalled_at`,
    [
      numberArrayLiteral(unique.map((r) => r.pageId)),
      textArrayLiteral(unique.map((r) => r.source)),
      numberArrayLiteral(unique.map((r) => r.signalledAtMs)),
    ],
  )
}

/** The pending signals of these pages. */
export async function readPendingSignals(
  q: Queryable,
  pageIds: readonly string[],
): Promise<{ pageId: string; source: string; signalledAtMs: number }[]> {
  if (pageIds.length === 0) return []
  const { rows } = await q.query<{ pageId: string; source: string; signalledAtMs: number }>(
    `SELECT page_id::text AS "pageId", source, floor(extract(epoch FROM signalled_at) * 1000)::float8 AS "signalledAtMs"
     FROM pending_signals WHERE page_id = ANY($1::bigint[])`,
    [pageIds],
  )
  return rows
}

/** Replaces the pending signals of these pages by `rows`. */
export async function replacePendingSignals(
  q: Queryable,
  pageIds: readonly string[],
  rows: readonly { pageId: string; source: string; signalledAtMs: number }[],
): Promise<void> {
  if (pageIds.length === 0) return
  await q.query(`DELETE FROM pending_signals WHERE page_id = ANY($1::bigint[])`, [pageIds])
  await addPendingSignals(q, rows)
}

/** The sources that signal on each of these hosts. */
export async function sourcesOnHosts(q: Queryable, hosts: readonly string[]): Promise<Map<string, string[]>> {
  if (hosts.length === 0) return new Map()
  const { rows } = await q.query<{ host: string; sources: string[] }>(
    `SELECT host, array_agg(source ORDER BY source) AS sources FROM signal_trust WHERE host = ANY($1::text[]) GROUP BY host`,
    [hosts],
  )
  return new Map(rows.map((r) => [r.host, r.sources]))
}

/** One source with its settings and fleet-wide counts. */
export interface SignalSourceRow extends TrustCounts, SignalSourceConfig {
  source: string
  hosts: number
  signalsReceived: number
  signalsStale: number
  signalsPulled: number
  buildTimeDocuments: number
}

const ALL_SUMS = `${SUM_COLUMNS}, sum(signals_received)::float8 AS "signalsReceived",
  sum(signals_stale)::float8 AS "signalsStale", sum(signals_pulled)::float8 AS "signalsPulled",
  sum(build_time_documents)::float8 AS "buildTimeDocuments"`

/** Every source that has sent signals or has settings, by name. */
export async function listSignalSources(q: Queryable): Promise<SignalSourceRow[]> {
  const { rows } = await q.query<SignalSourceRow>(
    `WITH t AS (SELECT source, count(*)::int AS hosts, ${ALL_SUMS} FROM signal_trust GROUP BY source)
     SELECT coalesce(t.source, c.source) AS source, coalesce(c.discover, false) AS discover,
       coalesce(c.discover_importance, 1) AS "discoverImportance", coalesce(t.hosts, 0) AS hosts,
       coalesce(t."signalsJudged", 0) AS "signalsJudged", coalesce(t."signalsConfirmed", 0) AS "signalsConfirmed",
       coalesce(t."changesSeen", 0) AS "changesSeen", coalesce(t."changesSignalled", 0) AS "changesSignalled",
       coalesce(t."crawlsJudged", 0) AS "crawlsJudged",
       coalesce(t."signalsReceived", 0) AS "signalsReceived", coalesce(t."signalsStale", 0) AS "signalsStale",
       coalesce(t."signalsPulled", 0) AS "signalsPulled", coalesce(t."buildTimeDocuments", 0) AS "buildTimeDocuments"
     FROM t FULL JOIN signal_sources c ON c.source = t.source ORDER BY 1`,
  )
  return rows
}

/** One source on one host: its counts. */
export type SignalTrustRow = Omit<SignalSourceRow, 'hosts' | 'discover' | 'discoverImportance'> & { host: string }

/** A source's hosts, by name after `afterHost`: only `host`, or only the hosts whose name starts with `hostPrefix`. */
export async function listSignalTrust(
  q: Queryable,
  source: string,
  options: { afterHost: string | null; host: string | null; hostPrefix: string | null; limit: number },
): Promise<SignalTrustRow[]> {
  const { rows } = await q.query<SignalTrustRow>(
    `SELECT source, host, ${COUNT_COLUMNS}, signals_received::float8 AS "signalsReceived",
       signals_stale::float8 AS "signalsStale", signals_pulled::float8 AS "signalsPulled",
       build_time_documents::float8 AS "buildTimeDocuments"
     FROM signal_trust WHERE source = $1 AND ($2::text IS NULL OR host > $2) AND ($3::text IS NULL OR host = $3)
       AND ($5::text IS NULL OR host LIKE $5)
     ORDER BY host LIMIT $4`,
    [
      source,
      options.afterHost,
      options.host,
      options.limit,
      options.hostPrefix === null ? null : likePrefix(options.hostPrefix),
    ],
  )
  return rows
}
