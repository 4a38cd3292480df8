import type { Queryable } from './transaction.ts'

/** The stored settings document, or null when none was saved yet (defaults apply). */
export async function readSettingsDocument(q: Queryable): Promise<unknown | null> {
  const { rows } = await q.query<{ value: unknown }>('SELECT value FROM settings WHERE id')
  return rows[0]?.value ?? null
}

/** Reads the settings row FOR UPDATE, so two concurrent PATCHes apply one after the other. */
export async function lockSettingsDocument(q: Queryable): Promise<unknown | null> {
  await q.query(`INSERT INTO settings (id, value) VALUES (true, '{}'::jsonb) ON CONFLICT (id) DO NOTHING`)
  const { rows } = await q.query<{ value: unknown }>('SELECT value FROM settings WHERE id FOR UPDATE')
  return rows[0]?.value ?? null
}

export async function writeSettingsDocument(q: Queryable, value: unknown): Promise<void> {
  await q.query(
    `INSERT INTO settings (id, value, updated_at) VALUES (true, $1::jsonb, now())
     ON CONFLICT (id) DO UPDATE SET value = excluded.value, updated_at = now()`,
    [JSON.stringify(value)],
  )
}

export interface OptimizerStateRow {
  lambda: number | null
  solvedAt: Date | null
}

export async function readOptimizerState(q: Queryable): Promise<OptimizerStateRow> {
  const { rows } = await q.query<OptimizerStateRow>(
    'SELECT lambda, solved_at AS "solvedAt" FROM optimizer_state WHERE id',
  )
  return rows[0] ?? { lambda: null, solvedAt: null }
}
