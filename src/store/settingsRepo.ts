import type { SignalCovers } from '../math/signalRates.ts'
import type { FleetPriors } from '../math/estimators/index.ts'
import { settingsFromStored, type Settings } from '../core/settings.ts'
import type { Queryable } from './transaction.ts'

/**
 * How a transaction holds the settings row it reads. `share`: writers of page state (ingest, a registration,
 * the optimiser's write-back, host limits) hold it until they commit, so that a settings change, which takes it
 * `update`, never interleaves with them; two changes apply one after the other. Without a lock: a plain read.
 */
type SettingsLock = 'share' | 'update'

const SETTINGS_SQL = {
  none: 'SELECT value, xmin::text AS version FROM settings WHERE id',
  share: 'SELECT value, xmin::text AS version FROM settings WHERE id FOR SHARE',
  update: 'SELECT value, xmin::text AS version FROM settings WHERE id FOR UPDATE',
} as const

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
  const { rows } = await q.query<{ value: unknown; version: string }>(SETTINGS_SQL[lock ?? 'none'])
  return { settings: settingsFromStored(rows[0]?.value ?? {}), version: rows[0]?.version ?? null }
}

/**
 * Inside a transaction: holds the settings row FOR SHARE and returns the settings in force. Settings read
 * before the transaction (loadSettingsVersion) are returned as they are when the row has not changed since,
 * so a request reads and parses them once; otherwise the new document is parsed.
 */
export async function holdSettings(q: Queryable, read: LoadedSettings): Promise<Settings> {
  const { rows } = await q.query<{ unchanged: boolean | null; value: unknown }>({
    name: 'settings-hold',
    text: `SELECT xmin::text = $1::text AS unchanged, CASE WHEN xmin::text = $1::text THEN NULL ELSE value END AS value
           FROM settings WHERE id FOR SHARE`,
    values: [read.version],
  })
  return rows[0]?.unchanged === true ? read.settings : settingsFromStored(rows[0]?.value ?? {})
}

export async function writeSettingsDocument(q: Queryable, value: unknown): Promise<void> {
  await q.query('UPDATE settings SET value = $1::jsonb, updated_at = now() WHERE id', [JSON.stringify(value)])
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
