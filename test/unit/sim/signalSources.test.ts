/**
 * The simulator's signal sources (src/sim/signalSources.ts): each profile sends what it says against the true
 * change times, the realistic mix follows the Bing figures, and recrawl's loop learns the trust of what it is sent.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SLOW } from '../../helpers/slow.ts'
import { createRandom } from '../../../src/math/random.ts'
import {
  hostSignalProfiles,
  SIGNAL_MIX,
  SIGNAL_PARTIAL_RECALL,
  SIGNAL_PROFILES,
  signalEvents,
  type SignalProfile,
} from '../../../src/sim/signalSources.ts'
import { syntheticUniverse } from '../../../src/sim/universe.ts'
import { DEFAULT_LOOP_POLICY, DEFAULT_SIM_OPTIONS, runTask, type SimOptions } from '../../../src/sim/runner.ts'

const universe = syntheticUniverse({
  workload: 'poisson',
  importanceKind: 'equal',
  pageCount: 600,
  horizonDays: 30,
  warmupDays: 10,
  crawlsPerPagePerDay: 1,
  random: createRandom(3),
  importanceRandom: createRandom(4),
  hostRandom: createRandom(5),
})
const hosts = universe.hostNames!.length

function profileTruth(profile: SignalProfile) {
  const { events, truth } = signalEvents(universe, hostSignalProfiles(profile, hosts, createRandom(1)), createRandom(2))
  const sum = (key: 'signals' | 'truthfulSignals' | 'changes' | 'changesSignalled') =>
    truth.reduce((a, t) => a + t[key], 0)
  return {
    events,
    precision: sum('truthfulSignals') / sum('signals'),
    recall: sum('changesSignalled') / sum('changes'),
    signals: sum('signals'),
  }
}

test('each profile sends what it says: every change, a share of them, false ones, or every page at every build', () => {
  const none = profileTruth('none')
  assert.equal(none.signals, 0)
  const accurate = profileTruth('accurate')
  assert.equal(accurate.precision, 1)
  assert.equal(accurate.recall, 1)
  const late = profileTruth('late')
  assert.equal(late.recall, 1)
  // A late signal claims the true change time but arrives hours after it.
  const minLag = late.events.receivedDays.reduce((m, r, k) => Math.min(m, r - late.events.changedDays[k]!), Infinity)
  assert.ok(minLag > 0.2, String(minLag))
  const partial = profileTruth('partial')
  assert.ok(Math.abs(partial.recall - SIGNAL_PARTIAL_RECALL) < 0.05, String(partial.recall))
  assert.equal(partial.precision, 1)
  const falsePositives = profileTruth('falsePositives')
  assert.ok(Math.abs(falsePositives.precision - 0.5) < 0.05, String(falsePositives.precision))
  const buildTime = profileTruth('buildTime')
  // Every page at every build: about one signal per page and day, whatever its change rate.
  assert.ok(Math.abs(buildTime.signals / (600 * 30) - 1) < 0.05, String(buildTime.signals))
  assert.ok(buildTime.precision < 0.9, String(buildTime.precision))
  assert.ok(Number.isNaN(buildTime.events.changedDays[0]!))
  for (const { events } of [accurate, late, partial, falsePositives, buildTime])
    for (let k = 1; k < events.receivedDays.length; k++)
      assert.ok(events.receivedDays[k]! >= events.receivedDays[k - 1]!, 'signals in order of receipt')
})

test('the realistic mix draws each host’s profile with the Bing shares', () => {
  const profiles = hostSignalProfiles('mix', 20_000, createRandom(9))
  for (const profile of SIGNAL_PROFILES) {
    const share = profiles.filter((p) => p === profile).length / profiles.length
    assert.ok(Math.abs(share - SIGNAL_MIX[profile]) < 0.01, `${profile}: ${share} vs ${SIGNAL_MIX[profile]}`)
  }
  const total = Object.values(SIGNAL_MIX).reduce((a, b) => a + b, 0)
  assert.ok(Math.abs(total - 1) < 1e-12)
})

const SIGNALS_RUN: SimOptions = {
  ...DEFAULT_SIM_OPTIONS,
  pageCount: 300,
  horizonDays: 30,
  warmupDays: 10,
  seed: 2,
  crawlsPerPagePerDay: 2,
}

test(
  'recrawl’s loop learns accurate signals’ trust, and crawls fresher with them than without (300 pages, 30 days)',
  SLOW,
  async () => {
    const options: SimOptions = { ...SIGNALS_RUN, signals: 'accurate' }
    const task = { workload: 'poisson' as const, importance: 'equal' as const }
    const used = await runTask({ ...task, policy: DEFAULT_LOOP_POLICY }, options)
    const ignored = await runTask({ ...task, policy: `${DEFAULT_LOOP_POLICY}-ignore-signals` }, options)
    assert.ok(
      used.result.freshness > ignored.result.freshness * 1.03,
      `${used.result.freshness} vs ${ignored.result.freshness}`,
    )
    assert.deepEqual(ignored.signalHosts ?? [], [], 'the loop that ignores signals learns no trust')
    const judged = used.signalHosts!.filter((h) => h.signalsJudged >= 200)
    assert.ok(judged.length > 0)
    for (const h of judged) assert.ok(Math.abs(h.precisionLearned - h.precisionTruth!) < 0.05, JSON.stringify(h))
    // The loop stays within the budget with the signals' crawls.
    assert.ok(used.result.crawls <= used.result.budgetCrawls)
  },
)

test(
  'with every host’s lastmod its build time, recrawl’s loop keeps the freshness of ignoring them (300 pages, 30 days)',
  SLOW,
  async () => {
    const options: SimOptions = { ...SIGNALS_RUN, signals: 'buildTime' }
    const task = { workload: 'poisson' as const, importance: 'equal' as const }
    const used = await runTask({ ...task, policy: DEFAULT_LOOP_POLICY }, options)
    const ignored = await runTask({ ...task, policy: `${DEFAULT_LOOP_POLICY}-ignore-signals` }, options)
    const blind = await runTask({ ...task, policy: `${DEFAULT_LOOP_POLICY}-blind-signals` }, options)
    assert.ok(
      used.result.freshness >= 0.99 * ignored.result.freshness,
      `${used.result.freshness} vs ${ignored.result.freshness}`,
    )
    assert.ok(used.result.freshness > blind.result.freshness, `${used.result.freshness} vs ${blind.result.freshness}`)
  },
)
