import { z } from 'zod'
import { ESTIMATOR_NAMES, type EstimatorSettings } from '../math/estimators/index.ts'
import { MAX_RATE_PER_DAY, MIN_POSITIVE_RATE_PER_DAY, positiveRateSchema, rateSchema } from './inputLimits.ts'
import { DEFAULT_URL_RULES, urlRulesSchema } from './url.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'

/**
 * Operator settings, persisted in the `settings` table (one JSON document) and read inside every
 * transaction that depends on them, so all replicas agree. Rates are per day.
 */
const llnAlphaSchema = z
  .union([z.enum(['1/k', '1/sqrt(k)']), z.number().gt(0).lt(1)])
  .describe(
    'LLN regulariser α_k (docs/math.md 1.2): "1/k", "1/sqrt(k)" or a constant in (0, 1) (a constant is not consistent).',
  )

export const estimatorNameSchema = z.enum(ESTIMATOR_NAMES).meta({
  id: 'EstimatorName',
  description: 'The change-rate estimator that drives scheduling (docs/math.md section 1).',
})

/**
 * How a page's crawl times follow from its rate: every 1/ρ (`periodic`) or with exponential gaps of rate ρ
 * (`poisson`). The settings and the stats call it `schedule` (an API name); in code it is the crawl spacing.
 */
export const crawlSpacingSchema = z.enum(['periodic', 'poisson'])
export type CrawlSpacing = z.infer<typeof crawlSpacingSchema>

const settingsShape = {
  budgetCrawlsPerDay: positiveRateSchema().describe(
    `Total crawl budget R, crawls per day (${MIN_POSITIVE_RATE_PER_DAY} to ${MAX_RATE_PER_DAY}).`,
  ),
  objective: z
    .enum(['freshness', 'freshness-periodic', 'harmonic', 'freshness-renewal'])
    .describe(
      "Optimiser objective (docs/math.md 3.1, 3.3, 3.4, 3.5). freshness-renewal: periodic crawling with each page's fitted age law (Poisson where its crawls do not show another).",
    ),
  schedule: crawlSpacingSchema.describe('How nextCrawlAt is drawn from crawlsPerDay.'),
  estimator: estimatorNameSchema,
  defaultChangesPerDay: positiveRateSchema().describe(
    'Prior change rate for pages without an estimate; also y_0 of the SA estimator.',
  ),
  fleetPrior: z
    .boolean()
    .describe(
      'Each page’s change-rate estimate (mle, mleAdaptive) is its posterior under a gamma prior fitted per host, and across the fleet, at every optimiser run (docs/math.md 1.12): a page crawled a few times borrows from similar pages, one with a long history follows its own crawls. false: every page learns from its own crawls alone.',
    ),
  minCrawlsPerDay: rateSchema().describe('Default lower bound (exploration floor) of every page.'),
  maxCrawlsPerDay: positiveRateSchema()
    .nullable()
    .describe(
      'Default upper bound of every page without its own; null = none. The default, 24 (hourly), keeps a small site from getting the whole budget spread over its few pages.',
    ),
  minChangesPerDay: rateSchema().describe('Every reported estimate is clipped to at least this.'),
  maxChangesPerDay: positiveRateSchema().describe('Every reported estimate is clipped to at most this.'),
  reoptimizeSeconds: z.number().int().min(10).max(SECONDS_PER_DAY).describe('Period of the automatic optimiser run.'),
  handOutBurstHours: z
    .number()
    .min(0.01)
    .max(168)
    .describe(
      'Leases hand out at most the budget: a fleet-wide allowance fills at budgetCrawlsPerDay and holds at most this many hours of it, so a fleet back from a pause gets at most this much at once.',
    ),
  registerUnknownPages: z
    .boolean()
    .describe('Observations for unknown URLs register the page (importance 1); false rejects those items.'),
  lln: z.object({ alpha: llnAlphaSchema }).meta({ id: 'LlnSettings', description: 'The LLN estimator’s step.' }),
  sa: z
    .object({
      gamma: z.number().gt(0.5).max(1).describe('SA step exponent γ: η_k = 1/(k+1)^γ (docs/math.md 1.3).'),
    })
    .meta({ id: 'SaSettings', description: 'The SA estimator’s step.' }),
  outcomes: z
    .object({
      goneAfterNotFound: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .describe('Consecutive 404 answers after which a page is gone.'),
      goneAfterGone: z.number().int().min(1).max(1000).describe('Consecutive 410 answers after which a page is gone.'),
      goneRecheckDays: z
        .number()
        .min(0)
        .max(3650)
        .describe(
          'A gone or redirected page is fetched again after this many days, then after twice the wait before on each recheck that finds it still out, up to the larger of 365 days and this (a 2xx or 304 brings it back); 0 = never again.',
        ),
      retryAfterErrorSeconds: z
        .number()
        .min(1)
        .max(SECONDS_PER_DAY)
        .describe(
          'First retry after a 5xx, a timeout or a network error; the wait doubles with every further failure.',
        ),
      maxRetryIntervalDays: z
        .number()
        .positive()
        .max(365)
        .describe("The retry wait stops growing at the larger of this and the page's period."),
      followRedirects: z
        .boolean()
        .describe('A 301 or 308 with redirectTo registers the target page (with the importance of the source).'),
    })
    .meta({ id: 'OutcomeSettings', description: 'What fetch outcomes do to a page (docs/api.md "Fetch outcomes").' }),
  urls: urlRulesSchema,
}

const checkedSettingsSchema = z
  .object(settingsShape)
  .refine((s) => s.maxCrawlsPerDay === null || s.maxCrawlsPerDay >= s.minCrawlsPerDay, {
    message: 'maxCrawlsPerDay must be at least minCrawlsPerDay',
    path: ['maxCrawlsPerDay'],
  })
  .refine((s) => s.maxChangesPerDay > s.minChangesPerDay, {
    message: 'maxChangesPerDay must be greater than minChangesPerDay',
    path: ['maxChangesPerDay'],
  })

export type Settings = z.infer<typeof checkedSettingsSchema>

/**
 * The default cap of every page, crawls per day: hourly. Without a cap, the default budget spread over a small
 * site is hundreds of fetches per page per day (500 for 20 pages), far past any use: under periodic crawling a
 * page that changes every hour is still fresh 63 % of the time at one crawl an hour, and each doubling of the
 * rate past its change rate buys less than the one before (docs/math.md 3.3). One fetch per page and hour is
 * also what a small site's operator expects of a polite crawler. Pages that need more are given their own
 * maxCrawlsPerDay, or the operator raises (or removes, with null) this one.
 */
export const DEFAULT_MAX_CRAWLS_PER_DAY = 24

/**
 * Defaults: a periodic schedule with the MLE (consistent for any interval distribution, docs/math.md 1.5)
 * over the intervals since the page's last detected change of rate (mleAdaptive: still consistent
 * for a page whose rate does not change, see src/math/estimators/adaptive.ts), and the periodic
 * freshness objective (exact for the schedule that runs, docs/math.md 3.3). LLN and SA are consistent
 * only under Poisson crawling (docs/math.md 1.4).
 */
export const DEFAULT_SETTINGS: Settings = Object.freeze({
  budgetCrawlsPerDay: 10_000,
  objective: 'freshness-periodic',
  schedule: 'periodic',
  estimator: 'mleAdaptive',
  defaultChangesPerDay: 1,
  fleetPrior: true,
  minCrawlsPerDay: 0.01,
  maxCrawlsPerDay: DEFAULT_MAX_CRAWLS_PER_DAY,
  minChangesPerDay: 0,
  maxChangesPerDay: 100_000,
  reoptimizeSeconds: 300,
  handOutBurstHours: 2,
  registerUnknownPages: true,
  lln: Object.freeze({ alpha: '1/k' as const }),
  sa: Object.freeze({ gamma: 0.75 }),
  outcomes: Object.freeze({
    goneAfterNotFound: 3,
    goneAfterGone: 1,
    goneRecheckDays: 30,
    retryAfterErrorSeconds: 300,
    maxRetryIntervalDays: 1,
    followRedirects: true,
  }),
  urls: DEFAULT_URL_RULES,
}) as Settings

export const settingsSchema = checkedSettingsSchema.meta({
  id: 'Settings',
  description: 'Operator settings, shared by every replica (docs/api.md "Settings").',
  examples: [DEFAULT_SETTINGS],
})

/** A PATCH body: any subset of the settings; `lln`, `sa`, `outcomes` and `urls` are merged key by key. */
export const settingsPatchSchema = z
  .object({
    ...settingsShape,
    lln: settingsShape.lln.partial().meta({ id: 'LlnSettingsPatch', description: 'Any of the LLN settings.' }),
    sa: settingsShape.sa.partial().meta({ id: 'SaSettingsPatch', description: 'Any of the SA settings.' }),
    outcomes: settingsShape.outcomes
      .partial()
      .meta({ id: 'OutcomeSettingsPatch', description: 'Any of the fetch-outcome settings, merged key by key.' }),
    urls: settingsShape.urls
      .partial()
      .meta({ id: 'UrlRulesPatch', description: 'Any of the URL rules, merged key by key.' }),
  })
  .partial()
  .strict()
  .meta({
    id: 'SettingsPatch',
    description:
      'A JSON merge patch of the settings: any subset of the keys; lln, sa, outcomes and urls are merged key by key (a list inside is replaced whole). Unknown keys → 400.',
    examples: [{ budgetCrawlsPerDay: 4000, outcomes: { goneAfterNotFound: 5 }, urls: { dropWww: true } }],
  })

export type SettingsPatch = z.infer<typeof settingsPatchSchema>

/** Merges a patch into settings; the result still has to pass `settingsSchema`. */
export function mergeSettings(current: Settings, patch: SettingsPatch): unknown {
  return {
    ...current,
    ...patch,
    lln: { ...current.lln, ...patch.lln },
    sa: { ...current.sa, ...patch.sa },
    outcomes: { ...current.outcomes, ...patch.outcomes },
    urls: { ...current.urls, ...patch.urls },
  }
}

/**
 * Reads a stored settings document, filling keys added after it was written with their defaults. A
 * value that bounds added since refuse (docs/api.md "Input limits") is read as the nearest value
 * they allow (a number past a bound) or as its default, so an old document never breaks a request.
 */
export function settingsFromStored(stored: unknown): Settings {
  const value = (stored ?? {}) as Partial<Settings>
  let merged = mergeSettings(DEFAULT_SETTINGS, value as SettingsPatch)
  for (let pass = 0; ; pass++) {
    const parsed = settingsSchema.safeParse(merged)
    if (parsed.success || pass === 3) return parsed.success ? parsed.data : settingsSchema.parse(merged)
    merged = structuredClone(merged) as Record<string, unknown>
    for (const issue of parsed.error.issues) repairStoredValue(merged as Record<string, unknown>, issue)
  }
}

/** Moves one refused stored value into the bounds (numbers) or back to its default (anything else). */
function repairStoredValue(document: Record<string, unknown>, issue: z.core.$ZodIssue): void {
  if (issue.path.length === 0) return
  const keys = issue.path.map(String)
  let parent = document
  let fallback: unknown = DEFAULT_SETTINGS
  for (const key of keys.slice(0, -1)) {
    if (parent[key] === null || typeof parent[key] !== 'object') return
    parent = parent[key] as Record<string, unknown>
    fallback = (fallback as Record<string, unknown> | undefined)?.[key]
  }
  const last = keys[keys.length - 1]!
  const current = parent[last]
  const defaultValue = (fallback as Record<string, unknown> | undefined)?.[last]
  if (typeof current === 'number' && (issue.code === 'too_big' || issue.code === 'too_small')) {
    const bound = Number(issue.code === 'too_big' ? issue.maximum : issue.minimum)
    // An exclusive bound cannot be reached: the default is in range.
    parent[last] = issue.inclusive && Number.isFinite(bound) ? bound : defaultValue
  } else {
    parent[last] = defaultValue
  }
}

/** What the estimators need of the settings. */
export function estimatorSettingsOf(settings: Settings): EstimatorSettings {
  return {
    llnAlpha: settings.lln.alpha,
    saGamma: settings.sa.gamma,
    defaultChangesPerDay: settings.defaultChangesPerDay,
    minChangesPerDay: settings.minChangesPerDay,
    maxChangesPerDay: settings.maxChangesPerDay,
  }
}
