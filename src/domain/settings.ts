import { z } from 'zod'

/**
 * Operator settings, persisted in the `settings` table (one JSON document) and read inside every
 * transaction that depends on them, so all replicas agree. Rates are per day.
 */
export const llnAlphaSchema = z
  .union([z.enum(['1/k', '1/sqrt(k)']), z.number().positive().max(1)])
  .describe('LLN regulariser α_k (MATH.md 1.2): "1/k", "1/sqrt(k)" or a constant > 0 (a constant is not consistent).')

export const estimatorNameSchema = z
  .enum(['naive', 'lln', 'sa', 'mle', 'mleAdaptive', 'momentMatching', 'choGm', 'lastModified'])
  .describe('The change-rate estimator that drives scheduling (MATH.md section 1).')

const settingsShape = {
  budgetCrawlsPerDay: z.number().positive().finite().describe('Total crawl budget R, crawls per day.'),
  objective: z
    .enum(['freshness', 'freshness-periodic', 'harmonic'])
    .describe('Optimiser objective (MATH.md 3.1, 3.3, 3.4).'),
  schedule: z.enum(['periodic', 'poisson']).describe('How nextCrawlAt is drawn from crawlsPerDay.'),
  estimator: estimatorNameSchema,
  defaultChangesPerDay: z
    .number()
    .positive()
    .finite()
    .describe('Prior change rate for pages without an estimate; also y_0 of the SA estimator.'),
  minCrawlsPerDay: z.number().min(0).finite().describe('Default lower bound (exploration floor) of every page.'),
  maxCrawlsPerDay: z.number().positive().finite().nullable().describe('Default upper bound; null = none.'),
  minChangesPerDay: z.number().min(0).finite().describe('Every reported estimate is clipped to at least this.'),
  maxChangesPerDay: z.number().positive().finite().describe('Every reported estimate is clipped to at most this.'),
  reoptimizeSeconds: z.number().int().min(10).max(86_400).describe('Period of the automatic optimiser run.'),
  registerUnknownPages: z
    .boolean()
    .describe('Observations for unknown URLs register the page (importance 1); false rejects those items.'),
  lln: z.object({ alpha: llnAlphaSchema }),
  sa: z.object({
    gamma: z.number().gt(0.5).max(1).describe('SA step exponent γ: η_k = 1/(k+1)^γ (MATH.md 1.3).'),
  }),
}

export const settingsSchema = z
  .object(settingsShape)
  .refine((s) => s.maxCrawlsPerDay === null || s.maxCrawlsPerDay >= s.minCrawlsPerDay, {
    message: 'maxCrawlsPerDay must be at least minCrawlsPerDay',
    path: ['maxCrawlsPerDay'],
  })
  .refine((s) => s.maxChangesPerDay > s.minChangesPerDay, {
    message: 'maxChangesPerDay must be greater than minChangesPerDay',
    path: ['maxChangesPerDay'],
  })

export type Settings = z.infer<typeof settingsSchema>

/**
 * Defaults: a periodic schedule with the MLE (consistent for any interval distribution, MATH.md 1.5)
 * over the intervals since the page's last detected change of rate (mleAdaptive: still consistent
 * for a page whose rate does not change, see src/math/estimators/adaptive.ts), and the periodic
 * freshness objective (exact for the schedule that runs, MATH.md 3.3). LLN and SA are consistent
 * only under Poisson crawling (MATH.md 1.4).
 */
export const DEFAULT_SETTINGS: Settings = Object.freeze({
  budgetCrawlsPerDay: 10_000,
  objective: 'freshness-periodic',
  schedule: 'periodic',
  estimator: 'mleAdaptive',
  defaultChangesPerDay: 1,
  minCrawlsPerDay: 0.01,
  maxCrawlsPerDay: null,
  minChangesPerDay: 0,
  maxChangesPerDay: 100_000,
  reoptimizeSeconds: 300,
  registerUnknownPages: true,
  lln: Object.freeze({ alpha: '1/k' as const }),
  sa: Object.freeze({ gamma: 0.75 }),
}) as Settings

/** A PATCH body: any subset of the settings; `lln` and `sa` are merged key by key. */
export const settingsPatchSchema = z
  .object({
    ...settingsShape,
    lln: settingsShape.lln.partial(),
    sa: settingsShape.sa.partial(),
  })
  .partial()
  .strict()

export type SettingsPatch = z.infer<typeof settingsPatchSchema>

/** Merges a patch into settings; the result still has to pass `settingsSchema`. */
export function mergeSettings(current: Settings, patch: SettingsPatch): unknown {
  return {
    ...current,
    ...patch,
    lln: { ...current.lln, ...patch.lln },
    sa: { ...current.sa, ...patch.sa },
  }
}

/** Reads a stored settings document, filling keys added after it was written with their defaults. */
export function settingsFromStored(stored: unknown): Settings {
  const value = (stored ?? {}) as Partial<Settings>
  const merged = mergeSettings(DEFAULT_SETTINGS, value as SettingsPatch)
  return settingsSchema.parse(merged)
}
