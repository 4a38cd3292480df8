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
  replayHost,
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

test('peps replay file: 521 pages on two sites (python/peps, rust-lang/rfcs) and 2,126 changes (README figures)', async () => {
  const data = await readReplayFile(join(DEFAULT_REPLAY_DIR, REPLAY_FILES['replay-peps']))
  assert.equal(data.pages.length, 521)
  assert.equal(
    data.pages.reduce((s, p) => s + p.changesSeconds.length, 0),
    2126,
  )
  assert.deepEqual([...new Set(data.pages.map((p) => replayHost(p.page)))].sort(), ['python/peps', 'rust-lang/rfcs'])
})

test('replay universe: budget in crawls per page per day, hosts from paths, Last-Modified per whole host', () => {
  const day = SECONDS_PER_DAY
  const rows = [JSON.stringify({ source: 't', windowStart: 0, windowEnd: 100 * day, unit: 'unix seconds' })]
  for (let h = 0; h < 200; h++)
    for (let k = 0; k < 3; k++) rows.push(JSON.stringify({ page: `site${h}/p${k}`, changes: [(10 + h / 10) * day] }))
  const u = replayUniverse({
    workload: 'replay-test',
    data: parseReplay(rows.join('\n')),
    importanceKind: 'equal',
    pageCount: 600,
    horizonDays: 10,
    warmupDays: 2,
    crawlsPerPagePerDay: 0.1,
    crawlsPerChange: null,
    random: createRandom(1),
    importanceRandom: createRandom(2),
    lastModifiedShare: 0.4,
    lastModifiedRandom: createRandom(3),
  })
  assert.ok(Math.abs(u.budgetCrawlsPerDay - 60) < 1e-9)
  assert.equal(u.hostNames?.length, 200)
  const sends = new Map<number, Set<number>>()
  for (let i = 0; i < u.pageCount; i++) {
    const h = u.hostOfPage![i]!
    assert.match(u.hostNames![h]!, /^site\d+$/)
    sends.set(h, (sends.get(h) ?? new Set()).add(u.sendsLastModified![i]!))
  }
  // Every page of a host agrees, and about 40 % of the 200 hosts send one (σ ≈ 3.5 %).
  for (const flags of sends.values()) assert.equal(flags.size, 1)
  const share = [...sends.values()].filter((f) => f.has(1)).length / sends.size
  assert.ok(share > 0.3 && share < 0.5, `share ${share}`)
})
