/**
 * Signals in the optimiser's rates (docs/math.md 5.4): a host whose source is reliably right gets fewer blind
 * crawls, one whose source is noise is solved as if it sent nothing, and the blind rates plus the signals'
 * expected crawls make the budget.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY } from '../../src/math/units.ts'
import { signalCrawlsPerDay } from '../../src/math/signalRates.ts'

const HOSTS = ['a.example', 'b.example', 'c.example']
const PAGES_PER_HOST = 30
const BUDGET = 90

/** Pages on three hosts, each taught the same change pattern by 12 daily crawls (a change every other day). */
async function taughtPages(t: TestApp): Promise<void> {
  const pages = HOSTS.flatMap((host) =>
    Array.from({ length: PAGES_PER_HOST }, (_, i) => ({ url: `https://${host}/${i}` })),
  )
  assert.equal((await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } })).statusCode, 200)
  const observations = pages.flatMap((p, i) => {
    const items: Record<string, unknown>[] = [{ url: p.url, crawledAt: iso(T0 - 12 * MS_PER_DAY) }]
    for (let k = 1; k <= 12; k++)
      items.push({ url: p.url, crawledAt: iso(T0 - (12 - k) * MS_PER_DAY - 1000), changed: (k + i) % 2 === 0 })
    return items
  })
  const r = await t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } })
  assert.equal(r.statusCode, 200, r.body)
  const s = await t.app.inject({
    method: 'PATCH',
    url: '/v1/settings',
    payload: { budgetCrawlsPerDay: BUDGET, objective: 'freshness-periodic', fleetPrior: false },
  })
  assert.equal(s.statusCode, 200, s.body)
}

async function ratesByHost(t: TestApp): Promise<Map<string, { crawlsPerDay: number; changesPerDay: number }[]>> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/optimize' })
  assert.equal(res.statusCode, 200, res.body)
  const list = await t.app.inject({ method: 'GET', url: '/v1/pages?limit=1000' })
  const rows = list.json().pages as { host: string; crawlsPerDay: number; changesPerDay: number }[]
  assert.equal(rows.length, HOSTS.length * PAGES_PER_HOST)
  const byHost = new Map<string, { crawlsPerDay: number; changesPerDay: number }[]>()
  for (const row of rows) byHost.set(row.host, [...(byHost.get(row.host) ?? []), row])
  return byHost
}

const total = (rows: readonly { crawlsPerDay: number }[]) => rows.reduce((s, r) => s + r.crawlsPerDay, 0)

describe('signals in the optimiser’s rates', () => {
  it('a reliably signalled host gets fewer blind crawls, a noisy one none fewer, and the total stays the budget', async (ctx) => {
    const t = await testAppFor(ctx)
    await taughtPages(t)
    const before = await ratesByHost(t)
    // What crawls taught of two sources: on a.example every change signalled and every signal right; on
    // b.example half the signals false. On both hosts half of the 800 crawls saw a change.
    await t.db.pool.query(
      `INSERT INTO signal_trust (source, host, signals_judged, signals_confirmed, changes_seen, changes_signalled,
         crawls_judged)
       VALUES ('ping', 'a.example', 400, 400, 400, 398, 800), ('noisy', 'b.example', 400, 200, 400, 400, 800)`,
    )
    const after = await ratesByHost(t)
    const { rows } = await t.db.pool.query<{ cover: { plainLambda: number; hosts: Record<string, unknown> } }>(
      'SELECT signal_cover AS cover FROM optimizer_state',
    )
    const cover = rows[0]!.cover
    assert.deepEqual(Object.keys(cover.hosts), ['a.example'])
    const a = cover.hosts['a.example'] as { share: number; precision: number }
    assert.ok(a.share > 0.9 && a.precision > 0.9, JSON.stringify(a))

    const rates = (m: typeof before) => HOSTS.map((h) => total(m.get(h)!).toFixed(3)).join(' ')
    const message = `before ${rates(before)}, after ${rates(after)}`
    assert.ok(total(after.get('a.example')!) < 0.5 * total(before.get('a.example')!), message)
    assert.ok(total(after.get('b.example')!) > total(before.get('b.example')!), message)
    // b.example and c.example, the one noisy and the other silent, are solved alike.
    assert.ok(Math.abs(total(after.get('b.example')!) - total(after.get('c.example')!)) < 1e-6)
    const signalCrawls = after.get('a.example')!.reduce((s, r) => s + signalCrawlsPerDay(r.changesPerDay, a), 0)
    const blind = [...after.values()].reduce((s, rows) => s + total(rows), 0)
    assert.ok(Math.abs(blind + signalCrawls - BUDGET) < 1e-6 * BUDGET, `${blind} + ${signalCrawls}`)
  })
})
