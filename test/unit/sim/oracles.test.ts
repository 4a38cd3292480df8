/**
 * The two oracles of the simulator (docs/math.md 3.5, 4): on Poisson pages the distribution-aware one is
 * the periodic one, the universes' renewal pages follow the age laws the oracle is built from, and on
 * heavy-tailed pages the distribution-aware rates are fresher than the Poisson-model ones.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import { periodicFreshness } from '../../../src/math/renewal/ageLaws.ts'
import { runPolicy } from '../../../src/sim/engine.ts'
import { fixedRatePolicy, oracleRates, renewalOracleRates } from '../../../src/sim/policies.ts'
import { DEFAULT_SIM_OPTIONS, runTask, type SimOptions } from '../../../src/sim/runner.ts'
import { syntheticUniverse, type SyntheticWorkload } from '../../../src/sim/universe.ts'

const universe = (workload: SyntheticWorkload, pageCount: number, importanceKind: 'zipf' | 'equal' = 'equal') =>
  syntheticUniverse({
    workload,
    importanceKind,
    pageCount,
    horizonDays: 60,
    warmupDays: 10,
    crawlsPerPagePerDay: 1,
    random: createRandom(7),
    importanceRandom: createRandom(8),
  })

test('on Poisson pages the distribution-aware oracle is the periodic oracle: same rates (1e-9), same freshness', async () => {
  for (const importance of ['zipf', 'equal'] as const) {
    const u = universe('poisson', 400, importance)
    const periodic = oracleRates(u, 'periodic')
    const renewal = renewalOracleRates(u)
    for (let i = 0; i < u.pageCount; i++) {
      const d = u.trueChangesPerDay[i]!
      // Beyond x = Δ/ρ ≈ 20 a periodic rate is ill-conditioned in λ (docs/math.md 3.3).
      if (d / periodic[i]! > 20) continue
      assert.ok(
        Math.abs(renewal[i]! - periodic[i]!) <= 1e-9 * (periodic[i]! + d),
        `${importance} page ${i}: ${renewal[i]} vs ${periodic[i]}`,
      )
    }
  }
  const options: SimOptions = { ...DEFAULT_SIM_OPTIONS, pageCount: 300, horizonDays: 30, warmupDays: 10, seed: 3 }
  const f = async (policy: string) =>
    (await runTask({ workload: 'poisson', importance: 'zipf', policy }, options)).result.freshness
  assert.ok(Math.abs((await f('oracle-renewal')) / (await f('oracle-periodic')) - 1) < 1e-6)
})

test('the renewal universes follow their age laws: periodic freshness of pages crawled ≥ once a day is ρ∫(1 − G) to 1.5 %', () => {
  for (const workload of ['pareto', 'weibull'] as const) {
    const u = universe(workload, 600)
    for (const x of [0.3, 3]) {
      const rates = Float64Array.from(u.trueChangesPerDay, (d) => d / x)
      const result = runPolicy(u, fixedRatePolicy('fixed', rates, 'periodic', createRandom(9)), { mode: 'scheduled' })
      let measured = 0
      let expected = 0
      for (let i = 0; i < u.pageCount; i++) {
        // Pages crawled less often than daily still carry the copy synced at time 0 into the window.
        if (rates[i]! < 1) continue
        measured += result.pageFreshDays[i]! / (u.horizonDays - u.warmupDays)
        expected += periodicFreshness(u.ageLaws[i]!, rates[i]!)
      }
      assert.ok(
        Math.abs(measured / expected - 1) < 0.015,
        `${workload} x=${x}: measured ${measured} vs law ${expected}`,
      )
    }
  }
})

test('on heavy-tailed pages the distribution-aware oracle is fresher than the Poisson-model oracle (both on the fleet)', async () => {
  const options: SimOptions = { ...DEFAULT_SIM_OPTIONS, pageCount: 400, horizonDays: 40, warmupDays: 10, seed: 4 }
  for (const workload of ['pareto', 'weibull'] as const) {
    const f = async (policy: string) =>
      (await runTask({ workload, importance: 'equal', policy }, options)).result.freshness
    const renewal = await f('oracle-renewal')
    const periodic = await f('oracle-periodic')
    assert.ok(renewal > periodic * 1.01, `${workload}: ${renewal} vs ${periodic}`)
  }
})
