import type { Queryable } from './transaction.ts'

/** The stored settings document ({} until the first change: defaults apply). */
export async function readSettingsDocument(q: Queryable): Promise<unknown> {
  const { rows } = await q.query<{ value: unknown }>('SELECT value FROM settings WHERE id')
  return rows[0]?.value ?? {}
}

/**
 * Reads the settings FOR SHARE: writers of page state (ingest, optimiser) hold it until they commit,
 * so a settings change (which takes it FOR UPDATE) never interleaves with them.
 */
export async function readSettingsDocumentShared(q: Queryable): Promise<unknown> {
  const { rows } = await q.query<{ value: unknown }>('SELECT value FROM settings WHERE id FOR SHARE')
  return rows[0]?.value ?? {}
}

/** Reads the settings row FOR UPDATE, so two concurrent changes apply one after the other. */
export async function lockSettingsDocument(q: Queryable): Promise<unknown> {
  const { rows } = await q.query<{ value: unknown }>('SELECT value FROM settings WHERE id FOR UPDATE')
  return rows[0]?.value ?? {}
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
}

export async function readOptimizerState(q: Queryable): Promise<OptimizerStateRow> {
  const { rows } = await q.query<OptimizerStateRow>(
    'SELECT lambda, host_lambdas AS "hostLambdas", solved_at AS "solvedAt", pages FROM optimizer_state WHERE id',
  )
  return rows[0] ?? { lambda: null, hostLambdas: {}, solvedAt: null, pages: null }
}
