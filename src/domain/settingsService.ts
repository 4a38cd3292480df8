import type pg from 'pg'
import type { Random } from '../math/random.ts'
import { lockSettingsDocument, readOptimizerState, readSettingsDocument, writeSettingsDocument } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import type { Clock } from './clock.ts'
import { InvalidInputError } from './errors.ts'
import { rescheduleAllPages } from './pages.ts'
import { mergeSettings, settingsFromStored, settingsSchema, type Settings, type SettingsPatch } from './settings.ts'

export interface SettingsDeps {
  pool: pg.Pool
  clock: Clock
  random: Random
}

export async function getSettings(deps: Pick<SettingsDeps, 'pool'>): Promise<Settings> {
  return settingsFromStored(await readSettingsDocument(deps.pool))
}

/** Settings whose change alters some page's estimate, rate or due time. */
const RESCHEDULING_KEYS = [
  'objective',
  'schedule',
  'estimator',
  'defaultChangesPerDay',
  'minCrawlsPerDay',
  'maxCrawlsPerDay',
  'minChangesPerDay',
  'maxChangesPerDay',
  'lln',
] as const

/**
 * Applies a partial change atomically: the merged settings must be valid as a whole (else 400,
 * nothing stored). When the change affects scheduling, every page's estimates, rate and due time
 * are re-derived in the same transaction, so no page is ever scheduled from a stale choice.
 */
export async function patchSettings(deps: SettingsDeps, patch: SettingsPatch): Promise<{ settings: Settings; pagesRescheduled: number }> {
  return withTransaction(deps.pool, async (client) => {
    const current = settingsFromStored(await lockSettingsDocument(client))
    const parsed = settingsSchema.safeParse(mergeSettings(current, patch))
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({ path: ['/body', ...i.path].join('/'), message: i.message }))
      throw new InvalidInputError('the settings would be invalid; nothing was changed', errors)
    }
    const next = parsed.data
    await writeSettingsDocument(client, next)
    const affects = RESCHEDULING_KEYS.some((k) => JSON.stringify(current[k]) !== JSON.stringify(next[k]))
    let pagesRescheduled = 0
    if (affects) {
      const optimizer = await readOptimizerState(client)
      pagesRescheduled = await rescheduleAllPages(client, next, optimizer, deps.clock.nowMs(), deps.random)
    }
    return { settings: next, pagesRescheduled }
  })
}
