/**
 * The blind shape likelihood (src/math/renewal/blindShape.ts, docs/math.md 3.5): its conditional chance of
 * no change against a simulated renewal process, its Poisson limit against the independent-interval formula,
 * and the profile's decision on pooled pages.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  BLIND_SHAPE_GRID,
  blindLogLikelihood,
  blindShapeProfile,
  shapeFromProfile,
  type BlindIntervals,
} from '../../../src/math/renewal/blindShape.ts'
import { createRandom, type Random } from '../../../src/math/random.ts'

/** Lomax inter-update times of the gamma-mixed law with rate Δ and shape β: 1 − F(u) = (1 + Δu/β)^{−(β+1)}. */
function lomaxGap(changesPerDay: number, beta: number, random: Random): number {
  return (beta / changesPerDay) * (Math.pow(1 - random.next(), -1 / (beta + 1)) - 1)
}

/** Did each of `crawls` daily intervals see a change? The process starts long before the first crawl. */
function dailyOutcomes(changesPerDay: number, beta: number, crawls: number, random: Random): boolean[] {
  let next = -1e4
  while (next < 0) next += lomaxGap(changesPerDay, beta, random)
  const out: boolean[] = []
  for (let day = 1; day <= crawls; day++) {
    let changed = false
    while (next <= day) {
      changed = true
      next += lomaxGap(changesPerDay, beta, random)
    }
    out.push(changed)
  }
  return out
}

const quietChance = (point: Omit<BlindIntervals, 'unchanged' | 'changed'>, rate: number, beta: number) =>
  Math.exp(blindLogLikelihood([{ ...point, unchanged: 1, changed: 0 }], rate, beta))

test('the chance of no change after a change window matches a simulated gamma-mixed renewal process', () => {
  const rate = 1
  const beta = 0.7
  const outcomes = dailyOutcomes(rate, beta, 400_000, createRandom(5))
  // P(no change today | a change yesterday), and | a change two days ago and none yesterday.
  const tally = { afterChange: [0, 0], afterOneQuiet: [0, 0] }
  for (let k = 2; k < outcomes.length; k++) {
    if (outcomes[k - 1]) tally.afterChange[outcomes[k]! ? 1 : 0]!++
    if (outcomes[k - 2] && !outcomes[k - 1]) tally.afterOneQuiet[outcomes[k]! ? 1 : 0]!++
  }
  const cases = [
    { counts: tally.afterChange, point: { quietDays: 0, windowDays: 1, intervalDays: 1 } },
    { counts: tally.afterOneQuiet, point: { quietDays: 1, windowDays: 1, intervalDays: 1 } },
  ]
  for (const { counts, point } of cases) {
    const n = counts[0]! + counts[1]!
    const observed = counts[0]! / n
    const expected = quietChance(point, rate, beta)
    const sigma = Math.sqrt((expected * (1 - expected)) / n)
    // Successive days of a bursty process are dependent: allow 5 binomial standard deviations.
    assert.ok(Math.abs(observed - expected) < 5 * sigma, `${JSON.stringify(point)}: ${observed} vs ${expected}`)
  }
  // A bursty page is quieter after a quiet day than right after a change, and a Poisson page is not.
  assert.ok(quietChance(cases[1]!.point, rate, beta) > quietChance(cases[0]!.point, rate, beta) + 0.05)
  const poisson = cases.map((c) => quietChance(c.point, rate, Number.POSITIVE_INFINITY))
  assert.ok(Math.abs(poisson[0]! - Math.exp(-1)) < 1e-12 && Math.abs(poisson[1]! - Math.exp(-1)) < 1e-12)
})

test('at β = ∞ the likelihood is that of independent Poisson intervals, whatever the change windows', () => {
  const points: BlindIntervals[] = [
    { quietDays: 0, windowDays: Number.POSITIVE_INFINITY, intervalDays: 0.7, unchanged: 2, changed: 1 },
    { quietDays: 3, windowDays: 0.5, intervalDays: 2, unchanged: 1, changed: 4 },
    { quietDays: 0, windowDays: 10, intervalDays: 0.01, unchanged: 5, changed: 0 },
  ]
  const rate = 0.8
  const expected = points.reduce(
    (sum, p) => sum - p.unchanged * rate * p.intervalDays + p.changed * Math.log(-Math.expm1(-rate * p.intervalDays)),
    0,
  )
  assert.ok(Math.abs(blindLogLikelihood(points, rate, Number.POSITIVE_INFINITY) - expected) < 1e-12)
})

test('profiles add across pages with their own rates: a group of short histories finds the shape no page finds alone', () => {
  const random = createRandom(9)
  const beta = 0.5
  const pages = 40
  let alone = 0
  const pooled = new Array<number>(BLIND_SHAPE_GRID.length).fill(0)
  const poissonPooled = new Array<number>(BLIND_SHAPE_GRID.length).fill(0)
  for (let page = 0; page < pages; page++) {
    const rate = Math.exp(2 * random.next() - 1) // 0.37 … 2.7 changes a day
    for (const [shape, sum] of [
      [beta, pooled],
      [Number.POSITIVE_INFINITY, poissonPooled],
    ] as const) {
      const outcomes =
        shape === Number.POSITIVE_INFINITY
          ? Array.from({ length: 30 }, () => random.next() < -Math.expm1(-rate))
          : dailyOutcomes(rate, shape, 30, random)
      const points: BlindIntervals[] = []
      let quiet = 0
      let window = Number.POSITIVE_INFINITY
      for (const changed of outcomes) {
        points.push({
          quietDays: quiet,
          windowDays: window,
          intervalDays: 1,
          unchanged: changed ? 0 : 1,
          changed: changed ? 1 : 0,
        })
        if (changed) {
          quiet = 0
          window = 1
        } else quiet += 1
      }
      const profile = blindShapeProfile(points, rate)
      if (profile === null) continue
      profile.gainNats.forEach((g, k) => (sum[k]! += g))
      if (shape === beta && shapeFromProfile(profile.gainNats, 3).index >= 0) alone++
    }
  }
  const found = shapeFromProfile(pooled, 3)
  assert.ok(found.shape <= 1, `pooled shape ${found.shape} (${found.evidenceNats} nats)`)
  assert.ok(alone < pages / 2, `${alone} of ${pages} found it alone`)
  assert.equal(shapeFromProfile(poissonPooled, 3).shape, Number.POSITIVE_INFINITY)
})
