import { z } from 'zod'
import {
  changeClassProbabilities,
  currentEstimates,
  decodeEstimatorState,
  emptyEstimatorState,
  ESTIMATOR_NAMES,
  ESTIMATOR_SECTIONS,
  exactMle,
  exactMomentMatching,
  observedDays,
  rateChangesDetected,
  schedulingHistory,
} from '../math/estimators/index.ts'
import { currentRate, rateHistory, type CrawlChange, type CurrentRate } from '../math/nhpp.ts'
import { poissonFit } from '../math/poissonFit.ts'
import {
  ageCdfM2,
  ageCdfM4,
  ageCdfM5,
  ageCdfM6,
  chooseMethod,
  inferUpdateDistribution,
  priorWorkM1,
  priorWorkM3,
  type AgeCdf,
  type AgeCrawl,
} from '../math/updateDistribution.ts'
import { listObservations, recentHistory, type ObservationRow } from '../store/observationsRepo.ts'
import { getPageById } from '../store/pagesRepo.ts'
import { loadSettings, readOptimizerState } from '../store/settingsRepo.ts'
import { pageLearning } from '../core/ratePriors.ts'
import { MS_PER_DAY, SECONDS_PER_DAY } from '../math/units.ts'
import { InvalidInputError, NotFoundError } from '../core/errors.ts'
import { isoTimestamp, readTimestamp, timestampSchema } from '../core/timestamps.ts'
import { isPageId } from './pages.ts'
import { estimatorSettingsOf } from '../core/settings.ts'
import type { DomainDeps } from './deps.ts'
import { EXAMPLE_NOW, exampleTime } from '../core/examples.ts'

/** History estimators read at most this many recent observations (bounded cost per request). */
const HISTORY_LIMIT = 10_000

const observationSchema = z
  .object({
    crawledAt: timestampSchema,
    changed: z.boolean().nullable().describe('null: baseline, failed fetch, or late crawl without change information.'),
    contentHash: z.string().nullable(),
    lastModified: timestampSchema.nullable().describe('HTTP Last-Modified as reported (RFC 3339), or null.'),
    httpStatus: z.number().int().nullable(),
    applied: z.boolean().describe('Fed to the online estimators.'),
    late: z.boolean(),
    intervalSeconds: z.number().nullable().describe('Length of the estimator interval this crawl closed.'),
    receivedAt: timestampSchema,
  })
  .meta({ id: 'Observation', description: 'One stored crawl of a page.' })

type ObservationView = z.infer<typeof observationSchema>

export const observationListSchema = z
  .object({
    observations: z.array(observationSchema),
    nextCursor: z.string().nullable().describe('Pass as before for the next items; null at the end.'),
  })
  .meta({
    id: 'ObservationList',
    description: "A page's observations, newest first, one response of a cursor listing.",
    examples: [
      {
        observations: [
          {
            crawledAt: EXAMPLE_NOW,
            changed: true,
            contentHash: 'sha256:9e01',
            lastModified: null,
            httpStatus: 200,
            applied: true,
            late: false,
            intervalSeconds: 86400,
            receivedAt: exampleTime(1),
          },
          {
            crawledAt: exampleTime(-86400),
            changed: false,
            contentHash: 'sha256:77ab',
            lastModified: null,
            httpStatus: 200,
            applied: true,
            late: false,
            intervalSeconds: 86400,
            receivedAt: exampleTime(-86399),
          },
        ],
        nextCursor: exampleTime(-86400),
      },
    ],
  })

function toObservationView(o: ObservationRow): ObservationView {
  return {
    crawledAt: o.crawledAt.toISOString(),
    changed: o.changed,
    contentHash: o.contentHash,
    lastModified: o.lastModified?.toISOString() ?? null,
    httpStatus: o.httpStatus,
    applied: o.applied,
    late: o.late,
    intervalSeconds: o.intervalSeconds,
    receivedAt: o.receivedAt.toISOString(),
  }
}

/** A page's history, newest first; the cursor is the crawl time of the last item returned. */
export async function listPageObservations(
  deps: Pick<DomainDeps, 'pool'>,
  pageId: string,
  options: { before: string | null; limit: number },
): Promise<z.infer<typeof observationListSchema>> {
  let beforeMs: number | null = null
  if (options.before !== null) {
    const read = readTimestamp(options.before)
    if ('error' in read)
      throw new InvalidInputError(`before is ${read.error}`, [{ path: '/querystring/before', message: read.error }])
    beforeMs = read.ms
  }
  const page = isPageId(pageId) ? await getPageById(deps.pool, pageId) : null
  if (!page) throw new NotFoundError(`no page with id ${pageId}`)
  const rows = await listObservations(deps.pool, pageId, { beforeMs, limit: options.limit + 1 })
  const more = rows.length > options.limit
  const shown = more ? rows.slice(0, options.limit) : rows
  return {
    observations: shown.map(toObservationView),
    nextCursor: more ? shown[shown.length - 1]!.crawledAt.toISOString() : null,
  }
}

const estimateSchema = z
  .object({
    name: z
      .string()
      .describe('An online estimator (EstimatorName), or mleExact / momentMatchingExact from the stored history.'),
    changesPerDay: z.number().nullable(),
    ci95: z
      .array(z.number())
      .length(2)
      .nullable()
      .describe('95 % confidence interval [low, high] in changes per day, where one applies.'),
    source: z
      .enum(['online', 'history'])
      .describe('online: the O(1) state updated on every crawl; history: recomputed from stored observations.'),
    section: z.string().describe('docs/math.md section.'),
    note: z.string().optional(),
  })
  .meta({ id: 'Estimate', description: "One estimator's change rate for a page." })

type EstimateEntry = z.infer<typeof estimateSchema>

/** The update-interval distribution of docs/math.md 2.2, as the estimates endpoint shows it. */
const updateDistributionSchema = z
  .object({
    method: z
      .enum(['M2', 'M4', 'M6'])
      .describe('M2 (Last-Modified ages), M4 (constant crawl interval) or M6 (random intervals).'),
    reason: z
      .string()
      .describe('Why this method: the share of crawls with an age and the variation of the crawl intervals.'),
    ageCdf: z
      .array(z.object({ ageDays: z.number(), cdf: z.number() }).meta({ id: 'AgeCdfPoint' }))
      .describe('G_U: the distribution of the content’s age at a random time.'),
    intervalCdf: z
      .array(z.object({ intervalDays: z.number(), cdf: z.number() }).meta({ id: 'IntervalCdfPoint' }))
      .nullable()
      .describe(
        'F_U(x) = 1 − g_U(x)/g_U(0): the distribution of the time between updates; null when the data do not identify g_U(0).',
      ),
    latticeDays: z.number().nullable().describe('Crawl interval Δ when G_U is known only at its multiples (M4).'),
    meanUpdateIntervalDays: z.number().nullable().describe('1/g_U(0); null when not identified.'),
    meanUpdateIntervalBoundDays: z
      .number()
      .nullable()
      .describe('Upper bound of the mean update interval, x/G_U(x) at the first point.'),
    coefficientOfVariation: z.number().nullable().describe('CV of the update intervals, from E[A] = μE[U²]/2.'),
    note: z.string().describe('What the data identify and what they do not.'),
    poissonFit: z
      .object({
        verdict: z.enum(['consistent-with-poisson', 'not-poisson', 'cannot-tell']),
        changesPerDay: z.number().nullable().describe('The Poisson model’s rate estimate the curve is compared with.'),
        distance: z.number().nullable().describe('sup |Ĝ_U(x) − (1 − e^{−μ̂x})| where G_U is identified.'),
        distanceBand95: z
          .number()
          .nullable()
          .describe('95th percentile of the distance for Poisson pages with the same crawls.'),
        pValue: z.number().nullable().describe('Parametric-bootstrap p-value of the distance.'),
        level: z.number().describe('not-poisson when pValue ≤ level.'),
        bootstrapSamples: z.number().int(),
        note: z.string(),
      })
      .meta({ id: 'PoissonFit', description: 'Test of the Poisson hypothesis (docs/math.md 2.2).' }),
    comparisons: z
      .array(
        z
          .object({
            method: z.enum(['M1', 'M3', 'M5']),
            estimates: z.enum(['F_U', 'G_U']),
            points: z.array(z.object({ days: z.number(), cdf: z.number() }).meta({ id: 'CdfPoint' })),
            meanDays: z.number().nullable(),
            note: z.string(),
          })
          .meta({ id: 'UpdateDistributionComparison' }),
      )
      .describe(
        'M1 and M3, the estimators of earlier work (biased unless Poisson), and M5, which repairs M3’s samples.',
      ),
  })
  .meta({ id: 'UpdateDistribution' })

type UpdateDistributionView = z.infer<typeof updateDistributionSchema>
type ComparisonView = UpdateDistributionView['comparisons'][number]

const learningSchema = z
  .object({
    prior: z
      .object({
        scope: z
          .enum(['host', 'fleet'])
          .describe('host: fitted to the page’s host; fleet: the host has no fit of its own.'),
        shape: z.number().describe('α of the gamma prior (small: the group’s rates spread over decades).'),
        meanChangesPerDay: z.number().describe('The prior mean α/β: where a new page of the group starts.'),
      })
      .meta({ id: 'RatePrior' })
      .nullable()
      .describe(
        'The prior the page borrows from (docs/math.md 1.12); null when fleetPrior is off or before the first optimiser run.',
      ),
    posterior: z
      .object({
        changesPerDay: z
          .number()
          .describe(
            'The scheduling estimate: the posterior mean, or, for a page whose every interval saw a change, the posterior’s harmonic mean held between ln(n + 2)/τ̄ and four times that (docs/math.md 1.12).',
          ),
        meanChangesPerDay: z.number().describe('The posterior mean.'),
        ci90: z.array(z.number()).length(2).describe('The central 90 % credible interval of the rate: [5 %, 95 %].'),
        intervals: z.number().int().describe('The crawl intervals the posterior rests on.'),
      })
      .meta({ id: 'RatePosterior' })
      .nullable()
      .describe('The page’s rate given its prior and its own intervals; null without a prior.'),
    shape: z
      .object({
        model: z.enum(['poisson', 'gamma-mixed']),
        ageShape: z.number().nullable().describe('β of the fitted gamma-mixed law (docs/math.md 3.5); null: Poisson.'),
        fittedAtIntervals: z.number().int().describe('Intervals at the latest fit; 0 before the first.'),
        note: z.string().describe('What the fit found, or why there is none ("Poisson: not enough evidence").'),
      })
      .meta({ id: 'AgeShape' })
      .describe('The shape of the page’s age law the freshness-renewal objective uses.'),
  })
  .meta({ id: 'Learning' })
  .describe('What the page learns from: the fleet’s prior, its posterior with its interval, and its fitted shape.')

export const estimatesSchema = z
  .object({
    pageId: z.string(),
    intervals: z.number().int(),
    changes: z.number().int(),
    observedDays: z.number(),
    historyObservations: z
      .number()
      .int()
      .describe('Stored observations used by the history estimators (most recent first, capped).'),
    estimators: z.array(estimateSchema),
    changeClasses: z.array(
      z.object({ name: z.string(), changesPerDay: z.number(), probability: z.number() }).meta({ id: 'ChangeClass' }),
    ),
    localRate: z
      .object({
        changesPerDay: z
          .number()
          .describe('The current rate: λ̌(now) with a rising or falling trend, n/T over the window with none.'),
        trend: z.enum(['rising', 'falling', 'constant']),
        beta: z.number().describe('β̃ of the latest window (β̂ with 3 points or fewer).'),
        points: z.number().int().describe('Update points in the latest window.'),
        model: z.enum(['power-law', 'constant']).describe('Which estimate changesPerDay is.'),
        windowStart: timestampSchema.describe('Start of the latest window.'),
        estimators: z
          .array(
            z
              .object({
                name: z.enum(['mean', 'weibull', 'lambdaBar', 'duane', 'duaneCumulative']),
                changesPerDay: z.number().nullable(),
              })
              .meta({ id: 'LocalRateEstimate' }),
          )
          .describe(
            'Every estimate of the latest window’s rate now (Singh 2007): n/T, λ̌, λ̄, the Duane plot’s instantaneous and cumulative rates.',
          ),
        windows: z
          .array(
            z
              .object({
                from: timestampSchema,
                to: timestampSchema.describe('The window’s last update point.'),
                points: z.number().int(),
                trend: z.enum(['rising', 'falling', 'constant']),
                beta: z.number(),
                meanChangesPerDay: z.number().describe('n over the window’s length.'),
                endChangesPerDay: z
                  .number()
                  .nullable()
                  .describe('λ̌ at the window’s last point; null with 3 points or fewer.'),
              })
              .meta({ id: 'TrendWindow' }),
          )
          .describe('Windows of consistent trend over the whole history, oldest first (the last is the current one).'),
      })
      .meta({ id: 'LocalRate' })
      .nullable()
      .describe('Localised rates from power-law NHPP fits on windows of update points (docs/math.md 2.1).'),
    updateDistribution: updateDistributionSchema
      .nullable()
      .describe('The update-interval distribution (docs/math.md 2.2); null with fewer than 10 crawls.'),
    learning: learningSchema,
  })
  .meta({
    id: 'Estimates',
    description:
      'Every estimator the page history supports, with confidence intervals, change classes and the update distribution.',
    examples: [
      {
        pageId: '2',
        intervals: 3,
        changes: 2,
        observedDays: 3,
        historyObservations: 4,
        estimators: [
          { name: 'naive', changesPerDay: 0.6667, ci95: null, source: 'online', section: '1.1' },
          { name: 'mle', changesPerDay: 1.0986, ci95: null, source: 'online', section: '1.5' },
          {
            name: 'mleAdaptive',
            changesPerDay: 1.0986,
            ci95: null,
            source: 'online',
            section: '1.5, 2',
            note: 'MLE over the last 3 intervals, since the last of 0 detected changes of rate',
          },
          { name: 'lastModified', changesPerDay: null, ci95: null, source: 'online', section: '1.8' },
          { name: 'mleExact', changesPerDay: 1.0986, ci95: [0.256, 4.7148], source: 'history', section: '1.5' },
        ],
        changeClasses: [
          { name: 'hourly', changesPerDay: 24, probability: 0 },
          { name: 'daily', changesPerDay: 1, probability: 0.8996 },
          { name: 'weekly', changesPerDay: 0.1429, probability: 0.094 },
          { name: 'monthly', changesPerDay: 0.0333, probability: 0.0064 },
          { name: 'yearly', changesPerDay: 0.0027, probability: 0 },
        ],
        localRate: null,
        updateDistribution: null,
        learning: {
          prior: { scope: 'host', shape: 0.62, meanChangesPerDay: 0.85 },
          posterior: { changesPerDay: 1.1096, meanChangesPerDay: 1.1096, ci90: [0.31, 2.4], intervals: 3 },
          shape: {
            model: 'poisson',
            ageShape: null,
            fittedAtIntervals: 0,
            note: 'Poisson: not enough evidence (the first fit comes at 16 intervals; the page has 3)',
          },
        },
      },
    ],
  })

/**
 * Every estimator the page's history supports (docs/api.md `GET /v1/pages/{id}/estimates`): the online
 * estimates from the page state, the exact MLE with a confidence interval and exact moment matching
 * recomputed from the stored history, the change-class probabilities, the localised NHPP rate, and
 * the estimated age distribution of the update process.
 */
export async function pageEstimates(
  deps: Pick<DomainDeps, 'pool' | 'clock'>,
  pageId: string,
): Promise<z.infer<typeof estimatesSchema>> {
  const { pool } = deps
  const nowMs = deps.clock.nowMs()
  const page = isPageId(pageId) ? await getPageById(pool, pageId) : null
  if (!page) throw new NotFoundError(`no page with id ${pageId}`)
  const settings = await loadSettings(pool)
  const estimatorSettings = estimatorSettingsOf(settings)
  const state = decodeEstimatorState(page.estimatorState) ?? emptyEstimatorState()
  const online = currentEstimates(state, estimatorSettings)
  const history = await recentHistory(pool, pageId, HISTORY_LIMIT)

  const clip = (v: number | null): number | null =>
    v === null ? null : Math.min(settings.maxChangesPerDay, Math.max(settings.minChangesPerDay, v))
  const estimators: EstimateEntry[] = ESTIMATOR_NAMES.map((name) => ({
    name,
    changesPerDay: online[name],
    ci95: null,
    source: 'online' as const,
    section: ESTIMATOR_SECTIONS[name],
    ...(name === 'mleAdaptive'
      ? {
          note: `MLE over the last ${schedulingHistory(state, 'mleAdaptive').intervals} intervals, since the last of ${rateChangesDetected(state)} detected changes of rate`,
        }
      : {}),
  }))

  const intervals = history
    .filter((o) => o.applied && o.changed !== null && o.intervalSeconds !== null && o.intervalSeconds > 0)
    .map((o) => ({ intervalDays: o.intervalSeconds! / SECONDS_PER_DAY, changed: o.changed! }))
  if (intervals.length > 0) {
    const mle = exactMle(intervals)
    estimators.push({
      name: 'mleExact',
      changesPerDay: clip(mle.changesPerDay),
      ci95: mle.ci95 === null ? null : [clip(mle.ci95[0])!, clip(mle.ci95[1])!],
      source: 'history',
      section: '1.5',
      note: mle.smoothed ? 'no change or only changes seen: smoothed with one pseudo interval of each kind' : undefined,
    })
    estimators.push({
      name: 'momentMatchingExact',
      changesPerDay: clip(exactMomentMatching(intervals)),
      ci95: null,
      source: 'history',
      section: '1.6',
    })
  }

  const originMs = history[0]?.crawledAt.getTime() ?? 0
  const days = (d: Date) => (d.getTime() - originMs) / MS_PER_DAY
  const isoAtDays = (atDays: number) => isoTimestamp(originMs + atDays * MS_PER_DAY)
  // Every stored crawl, late ones included: a late crawl's derived columns (changed, applied, interval) were
  // rewritten by the replay that folded it in (ingest.ts, replayPage), so they read as if reported in order.
  const changeCrawls: CrawlChange[] = history.map((o) => ({
    atDays: days(o.crawledAt),
    changed: o.changed,
    lastModifiedDays: o.lastModified ? days(o.lastModified) : null,
  }))
  const local = currentRate(changeCrawls, (nowMs - originMs) / MS_PER_DAY)
  const ageCrawls: AgeCrawl[] = history.map((o) => ({
    atDays: days(o.crawledAt),
    changed: o.changed,
    ageDays: o.lastModified ? Math.max(0, o.crawledAt.getTime() - o.lastModified.getTime()) / MS_PER_DAY : null,
  }))

  return {
    pageId,
    intervals: page.intervals,
    changes: page.changes,
    observedDays: observedDays(state),
    historyObservations: history.length,
    estimators,
    changeClasses: changeClassProbabilities(state),
    localRate:
      local === null
        ? null
        : {
            changesPerDay: clip(local.changesPerDay)!,
            trend: local.trend,
            beta: local.beta,
            points: local.points,
            model: local.model,
            windowStart: isoAtDays(local.windowStartDays),
            estimators: (Object.keys(local.alternatives) as (keyof CurrentRate['alternatives'])[]).map((name) => ({
              name,
              changesPerDay: clip(local.alternatives[name]),
            })),
            windows: rateHistory(changeCrawls).map((w) => ({
              from: isoAtDays(w.windowStartDays),
              to: isoAtDays(w.windowEndDays),
              points: w.points,
              trend: w.trend,
              beta: w.beta,
              meanChangesPerDay: clip(w.meanChangesPerDay)!,
              endChangesPerDay: clip(w.endChangesPerDay),
            })),
          },
    updateDistribution: describeUpdateDistribution(ageCrawls),
    learning: pageLearning(
      decodeEstimatorState(page.estimatorState),
      page.host,
      settings,
      (await readOptimizerState(pool)).priors,
    ),
  }
}

/**
 * The update-interval distribution of docs/math.md 2.2 for the estimates endpoint: G_U by the method
 * the paper recommends for these crawls, F_U where the data identify g_U(0), the Poisson-fit test,
 * and the comparison methods the crawls support (M1 with ages; M3 and M5 with a constant interval).
 * Null with fewer than 10 crawls or nothing to estimate from.
 */
function describeUpdateDistribution(crawls: readonly AgeCrawl[]): UpdateDistributionView | null {
  const choice = chooseMethod(crawls)
  if (choice === null) return null
  let method = choice.method
  let reason = choice.reason
  let cdf = method === 'M2' ? ageCdfM2(crawls) : method === 'M4' ? ageCdfM4(crawls) : ageCdfM6(crawls)
  if (cdf === null && method === 'M4') {
    method = 'M6'
    cdf = ageCdfM6(crawls)
    reason += '; M4 had no change to start from'
  }
  if (cdf === null) return null
  const { method: _tested, ...fit } = poissonFit(crawls, method)
  const inferred = inferUpdateDistribution(cdf)
  const comparisons: ComparisonView[] = []
  const m1 = priorWorkM1(crawls)
  if (m1 !== null) {
    comparisons.push({
      method: 'M1',
      estimates: 'F_U',
      points: m1.points.map((p) => ({ days: p.intervalDays, cdf: p.cdf })),
      meanDays: m1.meanUpdateIntervalDays,
      note: 'earlier work: the age at the last crawl before each detected change, read as F_U; biased unless the updates are Poisson',
    })
  }
  if (choice.constantIntervals) {
    const m3 = priorWorkM3(crawls)
    if (m3 !== null) {
      comparisons.push({
        method: 'M3',
        estimates: 'F_U',
        points: m3.points.map((p) => ({ days: p.intervalDays, cdf: p.cdf })),
        meanDays: m3.meanUpdateIntervalDays,
        note: 'earlier work: the time between detected changes, read as F_U; biased unless the updates are Poisson (its mean is Δ/G_U(Δ))',
      })
    }
    const m5 = ageCdfM5(crawls)
    if (m5 !== null) {
      comparisons.push({
        method: 'M5',
        estimates: 'G_U',
        points: m5.points.map((p) => ({ days: p.ageDays, cdf: p.cdf })),
        meanDays: m5.meanUpdateIntervalDays,
        note: 'G_U repaired from the same samples as M3 (Li, Cline & Loguinov 2017, eq. 49)',
      })
    }
  }
  return {
    method,
    reason,
    ageCdf: cdf.points,
    intervalCdf: inferred?.points ?? null,
    latticeDays: cdf.latticeDays,
    meanUpdateIntervalDays: cdf.meanUpdateIntervalDays,
    meanUpdateIntervalBoundDays: cdf.meanUpdateIntervalBoundDays,
    coefficientOfVariation: cdf.coefficientOfVariation,
    note: identificationNote(cdf),
    poissonFit: fit,
    comparisons,
  }
}

function identificationNote(cdf: AgeCdf): string {
  if (cdf.meanUpdateIntervalDays !== null) {
    return cdf.latticeDays !== null
      ? `G_U is known at multiples of the crawl interval (${cdf.latticeDays.toPrecision(3)} days); F_U from its slopes there`
      : 'F_U = 1 − g_U(x)/g_U(0) from the slopes of G_U'
  }
  if (cdf.meanUpdateIntervalBoundDays === null) return 'no change seen: the update rate and F_U are unknown'
  const bound = cdf.meanUpdateIntervalBoundDays.toPrecision(3)
  if (cdf.latticeDays !== null) {
    const first = cdf.points[0]?.cdf ?? 0
    return `with a constant crawl interval of ${cdf.latticeDays.toPrecision(3)} days G_U is known only at its multiples, and G_U at the first is already ${first.toFixed(2)}: updates can bunch inside one interval unseen, so the update rate and F_U are not identified; the mean update interval is at most ${bound} days`
  }
  return `the slope of G_U at 0 could not be estimated (every crawl saw a change, or too few short lags): F_U is unknown; the mean update interval is at most ${bound} days`
}
