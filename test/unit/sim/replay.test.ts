/** The replay reader parses the real histories in datasets/replay and maps them onto the horizon. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { createRandom } from '../../../src/math/random.ts'
import {
  DEFAULT_REPLAY_DIR,
  parseReplay,
  readReplayFile,
  REPLAY_FILES,
  replayUniverse,
} from '../../../src/sim/replay.ts'
import { SECONDS_PER_DAY } from '../../../src/math/units.ts'

test('git replay file: 3,509 files and 23,777 changes inside 2020-2024, ascending (README figures)', async () => {
  const data = await readReplayFile(join(DEFAULT_REPLAY_DIR, REPLAY_FILES['replay-git']))
  assert.equal(data.pages.length, 3509)
  let changes = 0
  for (const p of data.pages) {
    changes += p.changesSeconds.length
    for (let k = 1; k < p.changesSeconds.length; k++) assert.ok(p.changesSeconds[k]! >= p.changesSeconds[k - 1]!)
  }
  assert.equal(changes, 23_777)
  assert.equal(data.windowStartSeconds, Date.UTC(2020, 0, 1) / 1000)
})

test('tldr replay file: 37,343 page files and 89,885 changes', async () => {
  const data = await readReplayFile(join(DEFAULT_REPLAY_DIR, REPLAY_FILES['replay-tldr']))
  assert.equal(data.pages.length, 37_343)
  assert.equal(
    data.pages.reduce((s, p) => s + p.changesSeconds.length, 0),
    89_885,
  )
})

test('replay universe: window mapped onto the horizon, Δ = changes / horizon, budget = k × ΣΔ', () => {
  const day = SECONDS_PER_DAY
  const text = [
    JSON.stringify({ source: 't', windowStart: 0, windowEnd: 100 * day, unit: 'unix seconds' }),
    JSON.stringify({ page: 'a', changes: [10 * day, 50 * day] }),
    JSON.stringify({ page: 'b', changes: [99 * day] }),
  ].join('\n')
  const u = replayUniverse({
    workload: 'replay-test',
    data: parseReplay(text),
    importanceKind: 'equal',
    pageCount: 10,
    horizonDays: 10,
    warmupDays: 2,
    crawlsPerChange: 2,
    random: createRandom(1),
    importanceRandom: createRandom(2),
  })
  assert.equal(u.pageCount, 2)
  assert.deepEqual(Array.from(u.changeDays), [1, 5, 9.9])
  assert.deepEqual(Array.from(u.trueChangesPerDay), [0.2, 0.1])
  assert.ok(Math.abs(u.budgetCrawlsPerDay - 0.6) < 1e-12)
  assert.match(u.timeScale ?? '', /1 simulated day = 10\.00 real days/)
})

test('malformed replay lines are rejected with their line number', () => {
  const header = JSON.stringify({ windowStart: 0, windowEnd: 10, unit: 'unix seconds' })
  assert.throws(() => parseReplay(`${header}\n{"page": "a", "changes": ["x"]}`), /line 2/)
})
