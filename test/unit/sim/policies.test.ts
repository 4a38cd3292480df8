/**
 * Policies at the same budget (docs/math.md 4): every policy stays within R × horizon crawls, the oracle
 * beats uniform rates on a heterogeneous universe, Nutch's interval rule, and recrawl's loop fed the
 * true rates matches the oracle.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SLOW } from '../../helpers/slow.ts'
import { createRandom } from '../../../src/math/random.ts'
import { runPolicy } from '../../../src/sim/engine.ts'
import {
  nutchNextIntervalDays,
  nutchPolicy,
  proportionalRates,
  recrawlPolicy,
  NUTCH_MAX_INTERVAL_DAYS,
  NUTCH_MIN_INTERVAL_DAYS,
} from '../../../src/sim/policies.ts'
import { createPolicy, DEFAULT_SIM_OPTIONS, POLICIES, runTask, type SimOptions } from '../../../src/sim/runner.ts'
import { syntheticUniverse } from '../../../src/sim/universe.ts'

const SMALL: SimOptions = { ...DEFAULT_SIM_OPTIONS, pageCount: 150, horizonDays: 30, warmupDays: 10, seed: 5 }

test(
  'every policy stays within the budget R × horizon on the fleet (150 Poisson pages, 30 days, 4,500 crawls)',
  SLOW,
  async () => {
    for (const policy of POLICIES) {
      const { result } = await runTask({ workload: 'poisson', importance: 'zipf', policy }, SMALL)
      assert.ok(result.crawls <= result.budgetCrawls, `${policy}: ${result.crawls} > ${result.budgetCrawls}`)
      // Fixed-rate policies use ≥ 85 % of it: at load 1 the fleet idles when nothing is due, and a
      // late crawl delays the page's next one. (Nutch and the loops may leave budget unused.)
      if (!policy.startsWith('recrawl') && policy !== 'nutch')
        assert.ok(result.crawls >= 0.85 * result.budgetCrawls, `${policy} used ${result.crawls}`)
      assert.ok(result.freshness > 0 && result.freshness < 1, policy)
    }
  },
)

test('scheduled mode: rate policies spend R × horizon to within 5 % (150 pages, 30 days; Poisson noise σ ≈ 1.5 %)', async () => {
  for (const policy of ['uniform', 'proportional', 'oracle-periodic', 'oracle-poisson', 'recrawl-mle-periodic']) {
    const { result } = await runTask(
      { workload: 'poisson', importance: 'equal', policy },
      { ...SMALL, engineMode: 'scheduled' },
    )
    assert.ok(
      Math.abs(result.crawls / result.budgetCrawls - 1) < 0.05,
      `${policy}: ${result.crawls / result.budgetCrawls}`,
    )
  }
})

test('the oracle beats uniform and proportional rates on rates spread over four decades (1000 pages, 40 days)', async () => {
  const options = { ...SMALL, pageCount: 1000, horizonDays: 40, warmupDays: 10 }
  for (const importance of ['equal', 'zipf'] as const) {
    const f = async (policy: string) =>
      (await runTask({ workload: 'poisson', importance, policy }, options)).result.freshness
    const oracle = await f('oracle-periodic')
    const uniform = await f('uniform')
    const proportional = await f('proportional')
    assert.ok(oracle > uniform * 1.03, `${importance}: oracle ${oracle} vs uniform ${uniform}`)
    assert.ok(oracle > proportional, `${importance}: oracle ${oracle} vs proportional ${proportional}`)
  }
})

test('Nutch interval rule: ×0.8 after a change, ×1.2 after none, clamped to [1 minute, 365 days]', () => {
  assert.equal(nutchNextIntervalDays(10, true), 8)
  assert.equal(nutchNextIntervalDays(10, false), 12)
  assert.equal(nutchNextIntervalDays(NUTCH_MIN_INTERVAL_DAYS, true), NUTCH_MIN_INTERVAL_DAYS)
  assert.equal(nutchNextIntervalDays(360, false), NUTCH_MAX_INTERVAL_DAYS)
  assert.equal(NUTCH_MIN_INTERVAL_DAYS, 1 / 1440)
})

test('Nutch in the engine: starts at n/R days, shrinks on fast pages and grows on slow ones', () => {
  const u = syntheticUniverse({
    workload: 'poisson',
    importanceKind: 'equal',
    pageCount: 200,
    horizonDays: 40,
    warmupDays: 10,
    crawlsPerPagePerDay: 1,
    random: createRandom(3),
    importanceRandom: createRandom(4),
  })
  const nutch = nutchPolicy(u, createRandom(5))
  assert.ok(nutch.intervalDays.every((d) => d === 1))
  runPolicy(u, nutch)
  for (let i = 0; i < u.pageCount; i++) {
    if (u.trueChangesPerDay[i]! > 20) assert.ok(nutch.intervalDays[i]! < 1, `fast page ${i}`)
    if (u.trueChangesPerDay[i]! < 0.02) assert.ok(nutch.intervalDays[i]! > 1, `slow page ${i}`)
  }
})

test(
  'recrawl loop fed the true rates reaches the oracle within 1 % (1000 Poisson pages, 40 days): loop mechanics cost nothing',
  SLOW,
  () => {
    const u = syntheticUniverse({
      workload: 'poisson',
      importanceKind: 'equal',
      pageCount: 1000,
      horizonDays: 40,
      warmupDays: 10,
      crawlsPerPagePerDay: 1,
      random: createRandom(7),
      importanceRandom: createRandom(8),
    })
    const oracle = runPolicy(u, createPolicy('oracle-periodic', u, SMALL, []), { mode: 'fleet' }).freshness
    const loop = recrawlPolicy(u, {
      estimator: 'mle',
      spacing: 'periodic',
      reoptimizeDays: 1,
      random: createRandom(9),
      knownChangesPerDay: u.trueChangesPerDay,
    })
    const known = runPolicy(u, loop, { mode: 'fleet' }).freshness
    assert.ok(known / oracle > 0.99, `${known} / ${oracle}`)
  },
)

test('proportional rates sum to the budget', () => {
  const u = syntheticUniverse({
    workload: 'poisson',
    importanceKind: 'zipf',
    pageCount: 100,
    horizonDays: 1,
    warmupDays: 0,
    crawlsPerPagePerDay: 2,
    random: createRandom(1),
    importanceRandom: createRandom(2),
  })
  const sum = proportionalRates(u).reduce((a, b) => a + b, 0)
  assert.ok(Math.abs(sum - 200) < 1e-9)
})

test(
  'early crawls: probes give up pages that change far faster than the budget can follow, and freshness rises (1000 Poisson pages, 60 days)',
  SLOW,
  () => {
    const u = syntheticUniverse({
      workload: 'poisson',
      importanceKind: 'equal',
      pageCount: 1000,
      horizonDays: 60,
      warmupDays: 20,
      crawlsPerPagePerDay: 1,
      random: createRandom(11),
      importanceRandom: createRandom(12),
    })
    const run = (earlyCrawls: boolean) => {
      const loop = recrawlPolicy(u, {
        estimator: 'mle',
        spacing: 'periodic',
        reoptimizeDays: 1,
        random: createRandom(13),
        earlyCrawls,
        // The mechanism alone: with the fleet's priors the fast pages are few-crawled either way.
        fleetPrior: false,
      })
      // Crawls after the warm-up, and those of pages above 20 changes/day (the oracle crawls none of them).
      let fastCrawls = 0
      let allCrawls = 0
      const onCrawl = loop.onCrawl.bind(loop)
      const counted = {
        ...loop,
        onCrawl: (
          page: number,
          t: number,
          outcome: Parameters<typeof onCrawl>[2],
          ctx: Parameters<typeof onCrawl>[3],
        ) => {
          if (t >= u.warmupDays) {
            allCrawls++
            if (u.trueChangesPerDay[page]! > 20) fastCrawls++
          }
          return onCrawl(page, t, outcome, ctx)
        },
      }
      const result = runPolicy(u, counted, { mode: 'fleet' })
      return { freshness: result.freshness, fastShare: fastCrawls / allCrawls }
    }
    const oracle = runPolicy(u, createPolicy('oracle-periodic', u, SMALL, []), { mode: 'fleet' }).freshness
    const without = run(false)
    const withEarly = run(true)
    // Pages above 20 changes/day are ~17 % of this universe; the oracle (equal importance) crawls none
    // of them. Measured: 21 % of the crawls without early crawls, 6 % with; freshness +3.8 %.
    assert.ok(without.fastShare > 0.15, `without early crawls the fast pages take ${without.fastShare} of the crawls`)
    assert.ok(withEarly.fastShare < 0.1, `with early crawls they take ${withEarly.fastShare}`)
    assert.ok(withEarly.freshness > without.freshness * 1.025, `${withEarly.freshness} vs ${without.freshness}`)
    assert.ok(withEarly.freshness / oracle > 0.97, `${withEarly.freshness} / oracle ${oracle}`)
  },
)

test(
  'on rates that jump tenfold mid-run, mleAdaptive keeps up where the whole-history MLE lags (1000 drifting pages, 60 days)',
  SLOW,
  () => {
    for (const importanceKind of ['zipf', 'equal'] as const) {
      const u = syntheticUniverse({
        workload: 'drift',
        importanceKind,
        pageCount: 1000,
        horizonDays: 60,
        warmupDays: 20,
        crawlsPerPagePerDay: 1,
        random: createRandom(21),
        importanceRandom: createRandom(22),
      })
      const oracle = runPolicy(u, createPolicy('oracle-periodic', u, SMALL, []), { mode: 'fleet' }).freshness
      const f = (estimator: 'mle' | 'mleAdaptive') =>
        runPolicy(
          u,
          recrawlPolicy(u, {
            estimator,
            spacing: 'periodic',
            reoptimizeDays: 1,
            random: createRandom(23),
            fleetPrior: false,
          }),
          {
            mode: 'fleet',
          },
        ).freshness / oracle
      // Measured: zipf 0.979 → 0.983, equal 0.952 → 0.971 of the (time-averaged) oracle. (Before noise was
      // recognised at the fleet's cadence, the whole-history MLE reached only 0.964 with zipf: pages that jumped
      // past an hourly rate kept their crawls; they are now held at the floor, as the oracle holds them.)
      const mle = f('mle')
      const adaptive = f('mleAdaptive')
      assert.ok(
        adaptive > mle + (importanceKind === 'zipf' ? 0.002 : 0.01),
        `${importanceKind}: mleAdaptive ${adaptive} vs mle ${mle}`,
      )
      assert.ok(adaptive > 0.96, `${importanceKind}: mleAdaptive ${adaptive}`)
    }
  },
)
