import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

/** A source as GET /v1/signal-sources shows it (the fields these tests read). */
interface SourceView {
  source: string
  signalsReceived: number
  signalsStale: number
  signalsPulled: number
  signalsJudged: number
  signalsConfirmed: number
  changesSeen: number
  changesSignalled: number
  buildTimeDocuments: number
  precision: { mean: number; lower: number }
  recall: { mean: number; lower: number }
  changeProbability: number
}

function api(t: TestApp) {
  return {
    signals: (signals: unknown[]) => t.app.inject({ method: 'POST', url: '/v1/signals', payload: { signals } }),
    observations: (observations: unknown[]) =>
      t.app.inject({ method: 'POST', url: '/v1/observations', payload: { observations } }),
    putPages: (pages: unknown[]) => t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages } }),
    putSource: (source: string, body: Record<string, unknown>) =>
      t.app.inject({ method: 'PUT', url: `/v1/signal-sources/${source}`, payload: body }),
    async sources() {
      const res = await t.app.inject({ method: 'GET', url: '/v1/signal-sources' })
      assert.equal(res.statusCode, 200, res.body)
      return res.json().sources as SourceView[]
    },
    async page(url: string) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(url)}` })
      return res
    },
    async pageCount() {
      const { rows } = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pages')
      return rows[0]!.n
    },
    async signalCount() {
      const { rows } = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM signals')
      return rows[0]!.n
    },
  }
}

describe('POST /v1/signals', () => {
  it('stores signals once, drops future dates and unknown URLs, and counts every item', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages([{ url: 'https://a.example/1' }, { url: 'https://a.example/2' }])).statusCode, 200)
    const batch = [
      { url: 'https://a.example/1', source: 'sitemap', changedAt: iso(T0 - MS_PER_HOUR) },
      { url: 'https://A.example:443/2', source: 'ping' },
      { url: 'https://a.example/2', source: 'feed', changedAt: iso(T0 + 2 * MS_PER_HOUR) },
      { url: 'https://a.example/3', source: 'sitemap' },
      { url: 'not a url', source: 'sitemap' },
      { url: 'https://a.example/1', source: 'sitemap', changedAt: 'yesterday' },
    ]
    const res = await a.signals(batch)
    assert.equal(res.statusCode, 200, res.body)
    const receipt = res.json()
    assert.equal(receipt.accepted, 2)
    assert.equal(receipt.future, 1)
    assert.equal(receipt.unknownPages, 1)
    assert.equal(receipt.discovered, 0)
    assert.deepEqual(
      receipt.rejected.map((r: { index: number }) => r.index),
      [4, 5],
    )
    assert.equal(
      receipt.accepted + receipt.duplicates + receipt.future + receipt.unknownPages + receipt.rejected.length,
      batch.length,
    )
    assert.equal(await a.pageCount(), 2)
    assert.equal(await a.signalCount(), 2)

    // The same batch again: the dated signal is a duplicate; the bare ping is a new one (received now).
    const again = (await a.signals(batch.slice(0, 1))).json()
    assert.equal(again.accepted, 0)
    assert.equal(again.duplicates, 1)
    assert.equal(await a.signalCount(), 2)
    // An explicit receipt time makes a bare ping idempotent too.
    const ping = { url: 'https://a.example/2', source: 'ping', receivedAt: iso(T0 - 60_000) }
    assert.equal((await a.signals([ping])).json().accepted, 1)
    assert.equal((await a.signals([ping])).json().duplicates, 1)

    const sources = await a.sources()
    assert.deepEqual(
      sources.map((s) => [s.source, s.signalsReceived]),
      [
        ['ping', 2],
        ['sitemap', 1],
      ],
    )
  })

  it('registers unknown URLs only for a source the operator allows, with its importance', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const before = (await a.signals([{ url: 'https://b.example/new', source: 'sitemap' }])).json()
    assert.equal(before.unknownPages, 1)
    assert.equal((await a.page('https://b.example/new')).statusCode, 404)

    const put = await a.putSource('sitemap', { discover: true, discoverImportance: 2.5 })
    assert.equal(put.statusCode, 200, put.body)
    assert.equal(put.json().discover, true)
    const after = (
      await a.signals([
        { url: 'https://b.example/new', source: 'sitemap' },
        { url: 'https://b.example/other', source: 'ping' },
      ])
    ).json()
    assert.equal(after.discovered, 1)
    assert.equal(after.accepted, 1)
    assert.equal(after.unknownPages, 1)
    const page = await a.page('https://b.example/new')
    assert.equal(page.statusCode, 200)
    assert.equal(page.json().importance, 2.5)
    assert.equal((await a.page('https://b.example/other')).statusCode, 404)
  })

  it('refuses a bad body or source name with problem+json and stores nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    await a.putPages([{ url: 'https://c.example/1' }])
    for (const body of [
      { signals: [{ url: 'https://c.example/1', source: 'Not Allowed!' }] },
      { signals: [{ url: 'https://c.example/1' }] },
      { signals: 'x' },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/signals', payload: body })
      assert.equal(res.statusCode, 400, res.body)
      assert.match(res.headers['content-type'] as string, /application\/problem\+json/)
    }
    const many = Array.from({ length: 5001 }, () => ({ url: 'https://c.example/1', source: 'ping' }))
    const big = await a.signals(many)
    assert.equal(big.statusCode, 413)
    assert.equal(await a.signalCount(), 0)
    assert.equal((await a.putSource('sitemap', { discover: true, discoverImportance: -1 })).statusCode, 400)
  })

  it('the crawls that follow judge the signals: precision and recall per source and host, with the counts behind them', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const urls = [1, 2, 3, 4].map((i) => `https://d.example/${i}`)
    await a.putPages(urls.map((url) => ({ url })))
    const baseline = await a.observations(urls.map((url) => ({ url, crawledAt: iso(T0 - 2 * MS_PER_DAY) })))
    assert.equal(baseline.json().accepted, 4)
    const sig = await a.signals([
      { url: urls[0], source: 'sitemap', changedAt: iso(T0 - MS_PER_HOUR) },
      { url: urls[1], source: 'sitemap', changedAt: iso(T0 - MS_PER_HOUR) },
      // Claims a change older than the content last seen: stale, never judged.
      { url: urls[2], source: 'sitemap', changedAt: iso(T0 - 3 * MS_PER_DAY) },
    ])
    const { accepted, stale, pulled } = sig.json()
    // A source with no record yet is untrusted: its signals change no due time.
    assert.deepEqual({ accepted, stale, pulled }, { accepted: 3, stale: 1, pulled: 0 })
    const crawl = (at: number, changed: boolean[]) =>
      a.observations(urls.map((url, i) => ({ url, crawledAt: iso(at), changed: changed[i] })))
    assert.equal((await crawl(T0, [true, false, true, false])).statusCode, 200)
    // Crawled again: the signals were judged once, so only the recall of this change moves.
    assert.equal((await crawl(T0 + 60_000, [false, false, false, true])).statusCode, 200)

    const [sitemap] = await a.sources()
    assert.equal(sitemap!.source, 'sitemap')
    assert.deepEqual(
      [sitemap!.signalsReceived, sitemap!.signalsStale, sitemap!.signalsJudged, sitemap!.signalsConfirmed],
      [3, 1, 2, 1],
    )
    assert.deepEqual([sitemap!.changesSeen, sitemap!.changesSignalled], [3, 1])
    // Beta(1 + hits, 1 + misses) with nothing to borrow (one host).
    assert.ok(Math.abs(sitemap!.precision.mean - 2 / 4) < 1e-9)
    assert.ok(Math.abs(sitemap!.recall.mean - 2 / 5) < 1e-9)
    assert.equal(sitemap!.changeProbability, 0, 'untrusted on so little evidence')

    const hosts = await t.app.inject({ method: 'GET', url: '/v1/signal-sources/sitemap/hosts' })
    assert.equal(hosts.statusCode, 200, hosts.body)
    assert.deepEqual(
      hosts.json().hosts.map((h: SourceView & { host: string }) => [h.host, h.signalsJudged, h.changesSeen]),
      [['d.example', 2, 3]],
    )
    const missing = await t.app.inject({ method: 'GET', url: '/v1/signal-sources/nobody/hosts' })
    assert.equal(missing.statusCode, 404)
  })

  it('pages a source’s hosts by name, one host or those whose name starts with a prefix', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    // Seven hosts; the prefix's `_` and `%` must match only themselves.
    const hosts = ['a1.example', 'a2.example', 'a3.example', 'a_x.example', 'ab.example', 'b1.example', 'b2.example']
    await a.putPages(hosts.map((h) => ({ url: `https://${h}/` })))
    const sig = await a.signals(hosts.map((h) => ({ url: `https://${h}/`, source: 'feed', changedAt: iso(T0) })))
    assert.equal(sig.json().accepted, hosts.length, sig.body)
    const list = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/signal-sources/feed/hosts?${query}` })
      assert.equal(res.statusCode, 200, res.body)
      return res.json() as { hosts: { host: string; signalsReceived: number }[]; nextCursor: string | null }
    }
    const walk = async (query: string) => {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const res = await list(`${query}&limit=2${cursor === null ? '' : `&after=${encodeURIComponent(cursor)}`}`)
        assert.ok(res.hosts.length <= 2)
        seen.push(...res.hosts.map((h) => h.host))
        cursor = res.nextCursor
      } while (cursor !== null)
      return seen
    }
    assert.deepEqual(await walk(''), [...hosts].sort())
    assert.deepEqual(await walk('hostPrefix=a'), [
      'a1.example',
      'a2.example',
      'a3.example',
      'a_x.example',
      'ab.example',
    ])
    assert.deepEqual(await walk('hostPrefix=a_'), ['a_x.example'])
    assert.deepEqual(await walk('hostPrefix=b'), ['b1.example', 'b2.example'])
    assert.deepEqual(await walk('hostPrefix=c'), [])
    assert.deepEqual(
      (await list('host=a2.example')).hosts.map((h) => [h.host, h.signalsReceived]),
      [['a2.example', 1]],
    )
    // An empty value counts as absent (docs/api.md "Conventions"); a prefix longer than a host name is refused.
    assert.equal((await list('hostPrefix=')).hosts.length, hosts.length)
    const long = await t.app.inject({
      method: 'GET',
      url: `/v1/signal-sources/feed/hosts?hostPrefix=${'a'.repeat(254)}`,
    })
    assert.equal(long.statusCode, 400, long.body)
  })
})

describe('deleting pages removes their signals', () => {
  const counts = async (t: TestApp) => {
    const { rows } = await t.db.pool.query<{ signals: number; pending: number }>(
      `SELECT (SELECT count(*)::int FROM signals) AS signals, (SELECT count(*)::int FROM pending_signals) AS pending`,
    )
    return rows[0]!
  }

  it('DELETE /v1/pages/{id} takes the page’s signals and pending signals with it, and leaves the others', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const urls = ['https://e.example/1', 'https://e.example/2']
    await a.putPages(urls.map((url) => ({ url })))
    await a.observations(urls.map((url) => ({ url, crawledAt: iso(T0 - 2 * MS_PER_DAY) })))
    const sig = await a.signals(
      urls.flatMap((url) => [
        { url, source: 'sitemap', changedAt: iso(T0 - 2 * MS_PER_HOUR) },
        { url, source: 'ping', changedAt: iso(T0 - MS_PER_HOUR) },
      ]),
    )
    assert.equal(sig.json().accepted, 4, sig.body)
    assert.deepEqual(await counts(t), { signals: 4, pending: 4 })
    const page = (await a.page(urls[0]!)).json()
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/pages/${page.id}` })).statusCode, 204)
    assert.deepEqual(await counts(t), { signals: 2, pending: 2 })
    const { rows } = await t.db.pool.query<{ url: string }>(
      'SELECT DISTINCT p.url FROM signals s JOIN pages p ON p.id = s.page_id',
    )
    assert.deepEqual(
      rows.map((r) => r.url),
      [urls[1]],
    )
  })

  it('a deletion that waits for a signal transaction holding the page removes what that transaction stored', async (ctx) => {
    const t = await testAppFor(ctx)
    if (t.db.label !== 'postgres') return ctx.skip('needs two connections (Postgres)')
    const a = api(t)
    const url = 'https://f.example/1'
    await a.putPages([{ url }])
    await a.observations([{ url, crawledAt: iso(T0 - 2 * MS_PER_DAY) }])
    const page = (await a.page(url)).json()
    // A signal transaction as src/domain/signals.ts runs one: the page locked, its signal stored, not yet committed.
    const holder = await t.db.pool.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('SELECT id FROM pages WHERE id = $1::bigint FOR UPDATE', [page.id])
      await holder.query(
        `INSERT INTO signals (page_id, source, signalled_at, received_at, effect) VALUES ($1::bigint, 'ping', now(), now(), 'notWorth')`,
        [page.id],
      )
      await holder.query(
        `INSERT INTO pending_signals (page_id, source, signalled_at) VALUES ($1::bigint, 'ping', now())`,
        [page.id],
      )
      const deletion = t.app.inject({ method: 'DELETE', url: `/v1/pages/${page.id}` })
      // The deletion is waiting for the page's lock.
      for (let i = 0; i < 100; i++) {
        const { rows } = await t.db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM pages%'`,
        )
        if (rows[0]!.n > 0) break
        await new Promise((r) => setTimeout(r, 20))
      }
      await holder.query('COMMIT')
      assert.equal((await deletion).statusCode, 204)
    } finally {
      holder.release()
    }
    assert.deepEqual(await counts(t), { signals: 0, pending: 0 })
  })
})
