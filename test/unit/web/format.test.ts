/** The dashboard's axis ticks (web/format.js): short and distinct at every magnitude from 1 to 10^9 a day. */
import { test } from 'node:test'
import assert from 'node:assert/strict'

const FORMAT_MODULE = new URL('../../../web/format.js', import.meta.url).href
const { fmtAxisCount } = (await import(FORMAT_MODULE)) as { fmtAxisCount: (v: number | null) => string }

test('axis ticks of counts and rates from 1 to 10^9 are at most 5 characters and never read 0,000', () => {
  for (let exp = 0; exp <= 9; exp++) {
    // The ticks uPlot picks for a range up to 10^exp: multiples of 10^(exp−1), 2·10^(exp−1) and 5·10^(exp−1).
    for (const step of [1, 2, 5]) {
      const ticks = Array.from({ length: 11 }, (_, i) => i * step * 10 ** Math.max(0, exp - 1))
      const labels = ticks.map(fmtAxisCount)
      for (const l of labels) {
        assert.ok(l.length <= 5, `${l} (ticks up to ${ticks.at(-1)})`)
        assert.doesNotMatch(l, /,/)
      }
      assert.equal(new Set(labels).size, labels.length, `distinct ticks: ${labels.join(' ')}`)
    }
  }
})

test('ticks read as the numbers they stand for', () => {
  assert.deepEqual([0, 0.25, 7, 950, 1500, 200_000, 2_500_000, 1e9, 1e12].map(fmtAxisCount), [
    '0',
    '0.25',
    '7',
    '950',
    '1.5K',
    '200K',
    '2.5M',
    '1B',
    '1e12',
  ])
  assert.equal(fmtAxisCount(null), '')
})
