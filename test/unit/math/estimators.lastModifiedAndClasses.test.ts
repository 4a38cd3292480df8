import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SLOW } from '../../helpers/slow.ts'
import { createRandom } from '../../../src/math/random.ts'
import { changeClassProbabilities, currentEstimates } from '../../../src/math/estimators/index.ts'
import {
  applyAll,
  mean,
  periodicCrawling,
  poissonCrawling,
  SETTINGS,
  simulateCrawls,
  type IntervalSampler,
} from './estimatorsHelpers.ts'

/** Mean over `runs` seeded runs of the Last-Modified estimate after `crawls` crawls, divided by Δ. */
function lastModifiedMeanRatio(
  changesPerDay: number,
  sampler: IntervalSampler,
  crawls: number,
  runs: number,
  seed: number,
): number {
  const ratios: number[] = []
  for (let run = 0; run < runs; run++) {
    const state = applyAll(simulateCrawls(createRandom(seed + run), changesPerDay, sampler, crawls))
    ratios.push(currentEstimates(state, { ...SETTINGS, minChangesPerDay: 0 }).lastModified! / changesPerDay)
  }
  return mean(ratios)
}

for (const [schedule, sampler] of [
  ['periodic', periodicCrawling(1)],
  ['Poisson', poissonCrawling(1)],
] as const) {
  test(
    `lastModified: |bias| < 5 % after 50 ${schedule} crawls for Δ/p from 0.1 to 10 (mean of 2000 runs)`,
    SLOW,
    (t) => {
      const measured: string[] = []
      for (const ratio of [0.1, 0.3, 1, 3, 10]) {
        const meanRatio = lastModifiedMeanRatio(ratio, sampler, 50, 2000, 10_000)
        measured.push(`${ratio}: ${((meanRatio - 1) * 100).toFixed(2)} %`)
        assert.ok(Math.abs(meanRatio - 1) < 0.05, `Δ/p = ${ratio}: mean estimate / Δ = ${meanRatio}`)
      }
      t.diagnostic(`bias by Δ/p: ${measured.join(', ')}`)
    },
  )
}

test('lastModified: the bias-corrected count beats the plain X/S at 50 crawls (Δ/p = 10, periodic, 2000 runs)', () => {
  // With X = N nearly always, X/S overestimates by ≈ N/(N − 1); the corrected count removes that.
  const plain: number[] = []
  const corrected: number[] = []
  for (let run = 0; run < 2000; run++) {
    const observations = simulateCrawls(createRandom(20_000 + run), 10, periodicCrawling(1), 50)
    let changes = 0
    let exposureDays = 0
    for (const { intervalDays, ageDays } of observations) {
      const changed = ageDays! < intervalDays
      changes += changed ? 1 : 0
      exposureDays += changed ? ageDays! : intervalDays
    }
    plain.push(changes / exposureDays / 10)
    corrected.push(currentEstimates(applyAll(observations), SETTINGS).lastModified! / 10)
  }
  assert.ok(mean(plain) - 1 > 0.015, `plain ${mean(plain)}`)
  assert.ok(Math.abs(mean(corrected) - 1) < 0.01, `corrected ${mean(corrected)}`)
})

function classPosterior(changesPerDay: number, crawlsPerDay: number, crawls: number, seed: number) {
  const state = applyAll(simulateCrawls(createRandom(seed), changesPerDay, poissonCrawling(crawlsPerDay), crawls))
  return changeClassProbabilities(state)
}

test('class probabilities concentrate on the true class (> 0.95 after 200 Poisson crawls, 5 seeds per class)', () => {
  const cases = [
    { name: 'hourly', changesPerDay: 24, crawlsPerDay: 48 },
    { name: 'daily', changesPerDay: 1, crawlsPerDay: 2 },
    { name: 'weekly', changesPerDay: 1 / 7, crawlsPerDay: 0.5 },
    { name: 'monthly', changesPerDay: 1 / 30, crawlsPerDay: 1 / 7 },
    { name: 'yearly', changesPerDay: 1 / 365, crawlsPerDay: 1 / 30 },
  ]
  for (const c of cases) {
    for (let seed = 1; seed <= 5; seed++) {
      const posterior = classPosterior(c.changesPerDay, c.crawlsPerDay, 200, seed)
      const truth = posterior.find((p) => p.name === c.name)!
      assert.ok(truth.probability > 0.95, `${c.name} seed ${seed}: ${JSON.stringify(posterior)}`)
      const total = posterior.reduce((s, p) => s + p.probability, 0)
      assert.ok(Math.abs(total - 1) < 1e-12)
    }
  }
})

test('class probabilities start uniform and a rate between classes splits between its neighbours', () => {
  assert.deepEqual(
    changeClassProbabilities(applyAll([])).map((p) => p.probability),
    [0.2, 0.2, 0.2, 0.2, 0.2],
  )
  // Δ = 0.4/day lies between daily (1) and weekly (1/7): those two keep nearly all the mass.
  const posterior = classPosterior(0.4, 1, 100, 9)
  const daily = posterior.find((p) => p.name === 'daily')!.probability
  const weekly = posterior.find((p) => p.name === 'weekly')!.probability
  assert.ok(daily + weekly > 0.99, JSON.stringify(posterior))
})
