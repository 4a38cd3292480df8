import type { SignalCovers } from '../math/signalRates.ts'
import type { FleetPriors } from '../math/estimators/index.ts'
import { settingsFromStored, type Settings } from '../core/settings.ts'
import type { Queryable } from './transaction.ts'

/**
 * How a transaction holds the settings it reads. `share`: writers of page state (ingest, a registration, the
 * optimiser's write-back, host limits) hold them until they commit, so that a settings change, which holds them
 * `update`, never interleaves with them; two changes apply one after the other. Without a lock: a plain read.
 * Every writer of what the optimiser reads of a page holds it (a lease report that gives pages back, and the
 * registration of a sitemap index's sitemaps, take it for that alone), and an optimiser run moves the change
 * epoch under it held `update` (changeEpoch.ts).
 *
 * The hold is a transaction-level advisory lock (shared or exclusive) on SETTINGS_LOCK_KEY, not a lock of the
 * settings row: every ingest batch takes it, and on Citus a row lock of that one-row table is a lock of its
 * placement on every node, which deadlocked with the shard locks of concurrent batches (migrations/0026,
 * docs/design.md "Beyond one machine"). It waits for and blocks exactly the same transactions as the row lock
 * did: shared holders run together, the exclusive holder waits for every shared holder to end and every later
 * holder waits for it. The lock is taken in a statement of its own before the settings are read, so that the
 * read's snapshot is taken after the wait and sees a change that committed meanwhile (a row lock re-read the
 * row by itself). The service's sessions all run on one node (Citus: the coordinator), where the lock lives.
 */
type SettingsLock = 'share' | 'update'

/** Arbitrary constant shared by every replica; other advisory locks (migrate.ts, optimizerRepo.ts, hostsRepo.ts) use others. */
const SETTINGS_LOCK_KEY = 7_242_019_003

const LOCK_SQL = {
  share: { name: 'settings-lock-share', text: 'SELECT pg_advisory_xact_lock_shared($1::bigint)' },
  update: { name: 'settings-lock-update', text: 'SELECT pg_advisory_xact_lock($1::bigint)' },
} as const

const SETTINGS_SQL = 'SELECT value, xmin::text AS version FROM settings WHERE id'

/** Holds the settings `share` or `update` until the transaction ends (waiting for a holder of the other kind). */
export async function lockSettings(q: Queryable, lock: SettingsLock): Promise<void> {
  await q.query({ ...LOCK_SQL[lock], values: [SETTINGS_LOCK_KEY] })
}

/** The settings as read, with the version of the row they were read from (for holdSettings). */
interface LoadedSettings {
  settings: Settings
  version: string | null
}

/**
 * The one way to read the settings: the stored document ({} until the first change) parsed with the
 * defaults filled in (core/settings.ts, settingsFromStored), under the lock the caller needs.
 */
export async function loadSettings(q: Queryable, lock?: SettingsLock): Promise<Settings> {
  return (await loadSettingsVersion(q, lock)).settings
}

/** loadSettings, with the row's version: for a request that checks its input before its transaction. */
export async function loadSettingsVersion(q: Queryable, lock?: SettingsLock): Promise<LoadedSettings> {
  if (lock !== undefined) await lockSettings(q, lock)
  const { rows } = await q.query<{ value: unknown; version: string }>(SETTINGS_SQL)
  return { settings: settingsFromStored(rows[0]?.value ?? {}), version: rows[0]?.version ?? null }
}

/**
 * Inside a transaction: holds the settings `share` and returns the settings in force. Settings read
 * before the transaction (loadSettingsVersion) are returned as they are when the row has not changed since,
 * so a request reads and parses them once; otherwise the new document is parsed.
 */
export async function holdSettings(q: Queryable, read: LoadedSettings): Promise<Settings> {
  await lockSettings(q, 'share')
  const { rows } = await q.query<{ unchanged: boolean | null; value: unknown }>({
    name: 'settings-hold',
    text: `SELECT xmin::text = $1::text AS unchanged, CASE WHEN xmin::text = $1::text THEN NULL ELSE value END AS value
           FROM settings WHERE id`,
    values: [read.version],
  })
  return rows[0]?.unchanged === true ? read.settings : settingsFromStored(rows[0]?.value ?? {})
}

export async function writeSettingsDocument(q: Queryable, value: unknown, nowMs: number): Promise<void> {
  await q.query('UPDATE settings SET value = $1::jsonb, updated_at = $2::timestamptz WHERE id', [
    JSON.stringify(value),
    new Date(nowMs),
  ])
}

interface OptimizerStateRow {
  lambda: number | null
  hostLambdas: Record<string, number>
  solvedAt: Date | null
  /** Pages the last run solved for; null before the first run. */
  pages: number | null
  /** The change-rate priors the last run fitted (migrations/0016); null before one. */
  priors: FleetPriors | null
  /** What each host's trusted signals cover (migrations/0023_signal_cover); null before a run found one. */
  signalCover: SignalCovers | null
}

export async function readOptimizerState(q: Queryable): Promise<OptimizerStateRow> {
  const { rows } = await q.query<OptimizerStateRow>(
    'SELECT lambda, host_lambdas AS "hostLambdas", solved_at AS "solvedAt", pages, rate_priors AS priors, signal_cover AS "signalCover" FROM optimizer_state WHERE id',
  )
  return rows[0] ?? { lambda: null, hostLambdas: {}, solvedAt: null, pages: null, priors: null, signalCover: null }
}
