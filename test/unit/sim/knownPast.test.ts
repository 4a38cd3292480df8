import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRandom } from '../../../src/math/random.ts'
import { runPolicy } from '../../../src/sim/engine.ts'
import { pastChangesPerDay, recrawlPolicy } from '../../../src/sim/policies.ts'
import { selectPolicies } from '../../../src/sim/runner.ts'
import { syntheticUniverse } from '../../../src/sim/universe.ts'

const universe = () =>
  syntheticUniverse({
    workload: 'poisson',
    importanceKind: 'equal',
    pageCount: 200,
    horizonDays: 30,
    warmupDays: 10,
    crawlsPerPagePerDay: 1,
    random: createRandom(3),
    importanceRandom: createRandom(4),
  })

test('pastChangesPerDay counts each page’s changes up to the moment, held at the smoothing floor', () => {
  const u = universe()
  for (const nowDays of [0, 0.5, 7.3, 30]) {
    const rates = pastChangesPerDay(u, nowDays, 1)
    for (let i = 0; i < u.pageCount; i++) {
      let k = 0
      for (let j = u.changeOffsets[i]!; j < u.changeOffsets[i + 1]!; j++) if (u.changeDays[j]! <= nowDays) k++
      assert.equal(rates[i], Math.max(k, 1) / Math.max(nowDays, 1), `page ${i} at ${nowDays}`)
    }
  }
  // Over the whole horizon, a page with changes gets its mean rate: what known-mean-rate is fed.
  const whole = pastChangesPerDay(u, 30, 0)
  for (let i = 0; i < u.pageCount; i++) {
    const k = u.changeOffsets[i + 1]! - u.changeOffsets[i]!
    assert.ok(Math.abs(whole[i]! - k / 30) < 1e-12)
  }
})

test('the past-rate bound runs the loop on the counts so far and is selectable with its smoothing', () => {
  const u = universe()
  const loop = recrawlPolicy(u, {
    estimator: 'mle',
    spacing: 'periodic',
    reoptimizeDays: 1,
    random: createRandom(9),
    knownPastChanges: { minChanges: 1 },
  })
  assert.match(loop.name, /^recrawl-known-past-/)
  const result = runPolicy(u, loop, { mode: 'fleet' })
  assert.ok(result.freshness > 0 && result.freshness <= 1)
  // It spends the budget as the other loops do.
  assert.ok(Math.abs(result.windowCrawls / result.windowBudgetCrawls - 1) < 0.05, `${result.windowCrawls}`)
  assert.deepEqual(selectPolicies(['known-past-rate-2']).slice(-1), ['known-past-rate-2'])
  assert.ok(selectPolicies(['known-past']).includes('known-past-rate'))
  assert.throws(() => selectPolicies(['known-past-rate-x']), /unknown policy/)
})
