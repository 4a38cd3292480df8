import { loadSettings, readOptimizerState, writeSettingsDocument } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import { InvalidInputError, UnprocessableError } from '../core/errors.ts'
import { minimumCrawlsPerDayNeeded } from '../store/optimizerRepo.ts'
import { retimeAllPages } from './pages.ts'
import { stepContext } from '../core/pageStep.ts'
import { mergeSettings, settingsSchema, type Settings, type SettingsPatch } from '../core/settings.ts'
import { applyUrlRules } from './urlRules.ts'
import type { DomainDeps } from './deps.ts'

export async function getSettings(deps: Pick<DomainDeps, 'pool'>): Promise<Settings> {
  return loadSettings(deps.pool)
}

/** Settings whose change alters some page's estimate, rate or due time. */
const RETIMING_KEYS = [
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
 * nothing stored), the budget must fit the pages' lower bounds (else 422, nothing stored), and new URL rules must not merge stored pages or host limits (else 422, nothing
 * stored). When the change affects scheduling, every page's estimates, rate and due time are
 * re-derived in the same transaction, so no page is ever scheduled from a stale choice.
 */
export async function patchSettings(
  deps: DomainDeps,
  patch: SettingsPatch,
): Promise<{ settings: Settings; pagesRescheduled: number; pagesRenamed: number; hostsRenamed: number }> {
  return withTransaction(deps.pool, async (client) => {
    const current = await loadSettings(client, 'update')
    const parsed = settingsSchema.safeParse(mergeSettings(current, patch))
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({ path: ['/body', ...i.path].join('/'), message: i.message }))
      throw new InvalidInputError('the settings would be invalid; nothing was changed', errors)
    }
    const next = parsed.data
    // A budget the pages' lower bounds cannot fit in is refused now, not at the next optimiser run.
    if (next.budgetCrawlsPerDay !== current.budgetCrawlsPerDay || next.minCrawlsPerDay !== current.minCrawlsPerDay) {
      const needed = await minimumCrawlsPerDayNeeded(client, next.minCrawlsPerDay)
      if (needed > next.budgetCrawlsPerDay * (1 + 1e-12))
        throw new UnprocessableError(
          `infeasible crawl budget: the pages' minimum crawl rates need ${needed} crawls per day but budgetCrawlsPerDay would be ${next.budgetCrawlsPerDay}; nothing was changed`,
        )
    }
    await writeSettingsDocument(client, next, deps.clock.nowMs())
    // New URL rules rename stored pages and host limits now (or refuse a merge), so that every stored name is canonical.
    const urlsChanged = JSON.stringify(current.urls) !== JSON.stringify(next.urls)
    const renamed = urlsChanged
      ? await applyUrlRules(client, next.urls, deps.clock.nowMs())
      : { pagesRenamed: 0, hostsRenamed: 0 }
    const affects = RETIMING_KEYS.some((k) => JSON.stringify(current[k]) !== JSON.stringify(next[k]))
    let pagesRescheduled = 0
    if (affects) {
      const ctx = stepContext(next, await readOptimizerState(client), deps.clock.nowMs(), deps.random)
      pagesRescheduled = await retimeAllPages(client, ctx)
    }
    return { settings: next, pagesRescheduled, ...renamed }
  })
}
