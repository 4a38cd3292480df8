/**
 * What a solve does with the fleet's priors (src/core/ratePriors.ts, docs/math.md 1.12): pages with few
 * intervals get their posterior under the priors just fitted, pages with long histories keep the estimate their
 * latest crawl stored, and only estimates that moved are flagged for storing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  PRIOR_REFIT_MS,
  pageRateEvidence,
  refitRatePriors,
  solveEstimates,
  type SolvePage,
} from '../../../src/core/ratePriors.ts'
import { emptyEstimatorState, stepEstimators } from '../../../src/math/estimators/index.ts'
import { DEFAULT_SETTINGS } from '../../../src/core/settings.ts'
import { ratePosterior, type FleetPriors, type RateEvidence } from '../../../src/math/estimators/prior.ts'

const slowHost: FleetPriors = {
  fleet: { shape: 2, rateDays: 2 / 0.5 },
  hosts: { 'slow.example': { shape: 4, rateDays: 4 / 0.02 } },
}
/** Two unchanged 5-day intervals and one changed 5-day interval. */
const few: RateEvidence = { unchangedDays: 10, changed: [{ intervalDays: 5, weight: 1 }] }

test('a page with few intervals takes its posterior under the new priors, and is flagged to be stored', () => {
  const pages: SolvePage[] = [
    { host: 'slow.example', evidence: few, intervals: 3, storedChangesPerDay: 0.2 },
    { host: 'other.example', evidence: few, intervals: 3, storedChangesPerDay: 0.2 },
  ]
  const { changesPerDay, store } = solveEstimates(pages, DEFAULT_SETTINGS, slowHost)
  const slow = ratePosterior(few, slowHost.hosts['slow.example']!).changesPerDay
  const fleet = ratePosterior(few, slowHost.fleet).changesPerDay
  assert.ok(Math.abs(changesPerDay[0]! - slow) < 1e-12 * slow, `${changesPerDay[0]} against ${slow}`)
  assert.ok(Math.abs(changesPerDay[1]! - fleet) < 1e-12 * fleet, `${changesPerDay[1]} against ${fleet}`)
  // The same evidence, two hosts: the slow host's prior pulls its page lower.
  assert.ok(changesPerDay[0]! < changesPerDay[1]!)
  assert.deepEqual([...store], [1, 1])
})

test('an estimate within 0.1 % of the stored one is kept exactly, and not flagged', () => {
  const posterior = ratePosterior(few, slowHost.fleet).changesPerDay
  const stored = posterior * (1 + 5e-4)
  const { changesPerDay, store } = solveEstimates(
    [{ host: 'a.example', evidence: few, intervals: 3, storedChangesPerDay: stored }],
    DEFAULT_SETTINGS,
    slowHost,
  )
  assert.equal(changesPerDay[0], stored)
  assert.equal(store[0], 0)
})

test('a long history keeps its stored estimate; a page without evidence starts at its host’s prior mean', () => {
  const long: RateEvidence = { unchangedDays: 400, changed: [{ intervalDays: 5, weight: 20 }] }
  const { changesPerDay, store } = solveEstimates(
    [
      { host: 'slow.example', evidence: long, intervals: 100, storedChangesPerDay: 0.07 },
      { host: 'slow.example', evidence: null, intervals: 0, storedChangesPerDay: null },
      { host: 'new.example', evidence: null, intervals: 0, storedChangesPerDay: null },
    ],
    DEFAULT_SETTINGS,
    slowHost,
  )
  assert.equal(changesPerDay[0], 0.07)
  assert.ok(Math.abs(changesPerDay[1]! - 0.02) < 1e-12)
  assert.ok(Math.abs(changesPerDay[2]! - 0.5) < 1e-12)
  assert.deepEqual([...store], [0, 0, 0])
})

test('without priors every page keeps its stored estimate, and one without falls back to the default', () => {
  const { changesPerDay, store } = solveEstimates(
    [
      { host: 'a.example', evidence: few, intervals: 3, storedChangesPerDay: 0.3 },
      { host: 'a.example', evidence: null, intervals: 0, storedChangesPerDay: null },
    ],
    DEFAULT_SETTINGS,
    null,
  )
  assert.deepEqual([...changesPerDay], [0.3, DEFAULT_SETTINGS.defaultChangesPerDay])
  assert.deepEqual([...store], [0, 0])
})

test('at most 5,000 estimates are re-derived per solve, those of the pages with the fewest intervals first', () => {
  const pages: SolvePage[] = Array.from({ length: 8_000 }, (_, i) => ({
    host: 'a.example',
    evidence: few,
    intervals: i < 4_000 ? 10 : 3,
    storedChangesPerDay: 0.9,
  }))
  const { store } = solveEstimates(pages, DEFAULT_SETTINGS, slowHost)
  let threeIntervals = 0
  let tenIntervals = 0
  for (let i = 0; i < pages.length; i++) {
    if (store[i] !== 1) continue
    if (i < 4_000) tenIntervals++
    else threeIntervals++
  }
  assert.equal(threeIntervals, 4_000)
  assert.equal(tenIntervals, 1_000)
})

test('the priors are refitted at most once an hour: a younger fit is kept as it is', () => {
  const pages = Array.from({ length: 40 }, (_, i) => ({
    host: `h${i % 4}.example`,
    evidence: { unchangedDays: 10 + i, changed: i % 3 === 0 ? [{ intervalDays: 5, weight: 1 }] : [] },
  }))
  const settings = { ...DEFAULT_SETTINGS, fleetPrior: true }
  const first = refitRatePriors(pages, settings, null, 1_000_000)!
  assert.equal(first.fittedAtMs, 1_000_000)
  assert.equal(refitRatePriors(pages, settings, first, 1_000_000 + PRIOR_REFIT_MS - 1), first)
  const later = refitRatePriors(pages, settings, first, 1_000_000 + PRIOR_REFIT_MS)!
  assert.notEqual(later, first)
  assert.equal(later.fittedAtMs, 1_000_000 + PRIOR_REFIT_MS)
  assert.equal(refitRatePriors(pages, { ...settings, fleetPrior: false }, first, 0), null)
  // A young fleet's fit is redone as soon as the pages with evidence grow by more than a tenth.
  const more = [...pages, ...pages.slice(0, 5).map((p) => ({ ...p, host: 'new.example' }))]
  const regrown = refitRatePriors(more, settings, first, 1_000_000 + 1)!
  assert.notEqual(regrown, first)
  assert.equal(regrown.fittedPages, 45)
})

test('a noisy page gives the priors no evidence: its changes are noise, not its host’s rate', () => {
  const settings = { ...DEFAULT_SETTINGS, fleetPrior: true }
  const state = stepEstimators(
    emptyEstimatorState(),
    { intervalDays: 0.01, changed: true, ageDays: null },
    { llnAlpha: '1/k', saGamma: 0.75, defaultChangesPerDay: 1, minChangesPerDay: 0, maxChangesPerDay: 1e5 },
  )
  assert.notEqual(pageRateEvidence(state, settings, false), null)
  assert.equal(pageRateEvidence(state, settings, true), null)
})
