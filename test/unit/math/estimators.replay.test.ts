/**
 * Online MLE against the exact MLE on real update times (git/git file histories, 2020–2024, from
 * the replay data in datasets/replay). Each page is crawled over the whole
 * window, in real time (no rescaling), and its crawl intervals judged against the real change times.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SLOW } from '../../helpers/slow.ts'
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { createRandom, type Random } from '../../../src/math/random.ts'
import {
  emptyEstimatorState,
  exactMle,
  exactMomentMatching,
  onlineMle,
  onlineMomentMatching,
  stepEstimators,
  type ChangeInterval,
} from '../../../src/math/estimators/index.ts'
import { SETTINGS, type IntervalSampler } from './estimatorsHelpers.ts'
import { SECONDS_PER_DAY } from '../../../src/math/units.ts'

const REPLAY_FILE = fileURLToPath(new URL('../../../datasets/replay/git-master-2020-2024.jsonl.gz', import.meta.url))

const SCHEDULES: [string, IntervalSampler][] = [
  ['periodic, every 30 days', () => 30],
  ['Poisson, mean 30 days', (random: Random) => random.exponential(1 / 30)],
  [
    'half 1 hour, half 90 days (exponential)',
    (random: Random) => (random.next() < 0.5 ? random.exponential(24) : random.exponential(1 / 90)),
  ],
]

test('online MLE within 0.5 % of the exact MLE on the git/git replay (3509 pages, final estimates)', SLOW, (t) => {
  const lines = gunzipSync(readFileSync(REPLAY_FILE)).toString('utf8').trim().split('\n')
  const header = JSON.parse(lines[0]!) as { windowStart: number; windowEnd: number }
  const pages = lines.slice(1).map((line) => JSON.parse(line) as { page: string; changes: number[] })
  const windowDays = (header.windowEnd - header.windowStart) / SECONDS_PER_DAY
  for (const [name, sampler] of SCHEDULES) {
    const random = createRandom(2024)
    let worstMle = 0
    let worstMoment = 0
    for (const page of pages) {
      const changeDays = page.changes.map((s) => (s - header.windowStart) / SECONDS_PER_DAY)
      const history: ChangeInterval[] = []
      let state = emptyEstimatorState()
      let nowDays = 0
      let next = 0
      for (;;) {
        const intervalDays = sampler(random)
        if (nowDays + intervalDays > windowDays) break
        let changed = false
        while (next < changeDays.length && changeDays[next]! <= nowDays + intervalDays) {
          if (changeDays[next]! > nowDays) changed = true
          next++
        }
        nowDays += intervalDays
        history.push({ intervalDays, changed })
        state = stepEstimators(state, { intervalDays, changed, ageDays: null }, SETTINGS)
      }
      if (history.length === 0) continue
      worstMle = Math.max(worstMle, Math.abs(onlineMle(state).changesPerDay! / exactMle(history).changesPerDay! - 1))
      const exactMoment = exactMomentMatching(history)!
      if (exactMoment > 0) worstMoment = Math.max(worstMoment, Math.abs(onlineMomentMatching(state)! / exactMoment - 1))
    }
    t.diagnostic(
      `${name}: max relative gap MLE ${worstMle.toExponential(2)}, moment matching ${worstMoment.toExponential(2)}`,
    )
    assert.ok(worstMle < 0.005, `${name}: MLE gap ${worstMle}`)
    assert.ok(worstMoment < 0.005, `${name}: moment matching gap ${worstMoment}`)
  }
})
