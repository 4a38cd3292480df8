/**
 * POST /v1/sitemaps (docs/api.md "Sitemaps"): a fetched sitemap, plain or gzip, becomes signals; hostile documents
 * change nothing; a sitemap whose lastmod is its build time is recognised, and its source's precision falls.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { T0, iso, testAppFor, type TestApp } from '../helpers/testApp.ts'
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/math/units.ts'

const urlset = (entries: { loc: string; lastmod?: string }[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries
    .map((e) => `<url><loc>${e.loc}</loc>${e.lastmod === undefined ? '' : `<lastmod>${e.lastmod}</lastmod>`}</url>`)
    .join('')}</urlset>`

function post(t: TestApp, body: string | Buffer, query: string, contentType = 'application/xml') {
  return t.app.inject({
    method: 'POST',
    url: `/v1/sitemaps?${query}`,
    headers: { 'content-type': contentType },
    payload: body,
  })
}

async function count(t: TestApp, table: string): Promise<number> {
  const { rows } = await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]!.n
}

describe('POST /v1/sitemaps', () => {
  it('turns each dated entry on the sitemap’s host into a signal, plain or gzip, and lists an index’s sitemaps', async (ctx) => {
    const t = await testAppFor(ctx)
    await t.app.inject({
      method: 'PUT',
      url: '/v1/signal-sources/sitemap',
      payload: { discover: true, discoverImportance: 0.5 },
    })
    const doc = urlset([
      { loc: 'https://s.example/a', lastmod: '2026-11-20' },
      { loc: 'https://s.example/b', lastmod: '2026-11-21T08:00:00Z' },
      { loc: 'https://s.example/c' },
      { loc: 'https://other.example/a', lastmod: '2026-11-20' },
    ])
    const res = await post(
      t,
      gzipSync(doc),
      `url=${encodeURIComponent('https://s.example/sitemap.xml.gz')}`,
      'application/gzip',
    )
    assert.equal(res.statusCode, 200, res.body)
    const receipt = res.json()
    assert.deepEqual(
      [receipt.kind, receipt.entries, receipt.crossHost, receipt.withoutLastmod, receipt.lastmodIsBuildTime],
      ['urlset', 3, 1, 1, false],
    )
    assert.equal(receipt.signals.accepted, 2)
    assert.equal(receipt.signals.discovered, 2)
    assert.equal(await count(t, 'signals'), 2)
    // Posted again (plain this time): the same lastmods are the same signals.
    const again = (await post(t, doc, 'url=https://s.example/sitemap.xml')).json()
    assert.equal(again.signals.duplicates, 2)
    assert.equal(await count(t, 'signals'), 2)

    const index = await post(
      t,
      `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://s.example/s1.xml</loc><lastmod>2026-11-01</lastmod></sitemap></sitemapindex>`,
      'url=https://s.example/index.xml',
      'text/xml',
    )
    assert.equal(index.statusCode, 200, index.body)
    assert.deepEqual(index.json().sitemaps, [{ url: 'https://s.example/s1.xml', lastmod: '2026-11-01T00:00:00.000Z' }])
  })

  it('refuses hostile documents with problem+json and stores nothing', async (ctx) => {
    const t = await testAppFor(ctx)
    await t.app.inject({ method: 'PUT', url: '/v1/signal-sources/sitemap', payload: { discover: true } })
    const laughs = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><urlset><url><loc>https://h.example/&b;</loc></url></urlset>`
    const cases: [string, string | Buffer, string, number][] = [
      ['entity expansion', laughs, 'application/xml', 422],
      ['malformed', '<urlset><url><loc>https://h.example/a</loc></urlset>', 'application/xml', 422],
      ['corrupt gzip', Buffer.from([0x1f, 0x8b, 1, 2, 3, 4]), 'application/gzip', 422],
      // 51 MB of whitespace, about 50 KB compressed: refused when the output passes 50 MB.
      ['gzip bomb', gzipSync(Buffer.alloc(51 * 1024 * 1024, 0x20)), 'application/gzip', 413],
      [
        'a million entries',
        gzipSync(urlset(Array.from({ length: 1_000_000 }, () => ({ loc: 'https://h.example/p' })))),
        'application/gzip',
        413,
      ],
    ]
    for (const [name, body, type, status] of cases) {
      const res = await post(t, body, 'url=https://h.example/sitemap.xml', type)
      assert.equal(res.statusCode, status, `${name}: ${res.body.slice(0, 200)}`)
      assert.match(res.headers['content-type'] as string, /application\/problem\+json/, name)
    }
    assert.equal((await post(t, urlset([]), 'url=not-a-url')).statusCode, 400)
    // No document, or JSON instead of one.
    const empty = await t.app.inject({ method: 'POST', url: '/v1/sitemaps?url=https://h.example/s.xml' })
    assert.equal(empty.statusCode, 400, empty.body)
    const asJson = await t.app.inject({
      method: 'POST',
      url: '/v1/sitemaps?url=https://h.example/s.xml',
      payload: { urlset: [] },
    })
    assert.equal(asJson.statusCode, 400, asJson.body)
    assert.equal(await count(t, 'signals'), 0)
    assert.equal(await count(t, 'pages'), 0)
  })

  it('recognises "lastmod is the build time", and the crawls make that source’s precision fall', async (ctx) => {
    const t = await testAppFor(ctx)
    const urls = Array.from({ length: 20 }, (_, i) => `https://lying.example/p${i}`)
    await t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: urls.map((url) => ({ url })) } })
    let at = T0 - 10 * MS_PER_DAY
    const crawlAll = async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/observations',
        payload: { observations: urls.map((url) => ({ url, crawledAt: iso(at), contentHash: 'same' })) },
      })
      assert.equal(res.statusCode, 200, res.body)
    }
    t.clock.setMs(at)
    await crawlAll()
    const precision: number[] = []
    for (let build = 0; build < 5; build++) {
      at += MS_PER_DAY
      t.clock.setMs(at)
      // Rebuilt every day: every entry carries the build time.
      const doc = urlset(urls.map((loc) => ({ loc, lastmod: iso(at - MS_PER_HOUR) })))
      const res = await post(t, doc, 'url=https://lying.example/sitemap.xml')
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().lastmodIsBuildTime, true)
      assert.equal(res.json().signals.accepted, urls.length)
      at += MS_PER_HOUR
      t.clock.setMs(at)
      await crawlAll()
      const sources = (await t.app.inject({ method: 'GET', url: '/v1/signal-sources' })).json().sources
      const sitemap = sources.find((s: { source: string }) => s.source === 'sitemap')
      assert.equal(sitemap.buildTimeDocuments, build + 1)
      precision.push(sitemap.precision.mean)
    }
    for (let i = 1; i < precision.length; i++) assert.ok(precision[i]! < precision[i - 1]!, precision.join(' '))
    assert.ok(precision.at(-1)! < 0.05, precision.join(' '))
  })

  it('a document larger than one transaction gives the receipt of one, and one posted again after a part was stored is finished', async (ctx) => {
    const t = await testAppFor(ctx)
    // Discovery registers every entry, so the whole document is new pages (three parts of 10,000 signals or fewer).
    await t.app.inject({ method: 'PUT', url: '/v1/signal-sources/sitemap', payload: { discover: true } })
    const entries = Array.from({ length: 24_000 }, (_, k) => ({
      loc: `https://big.example/p/${k}`,
      lastmod: iso(T0 - MS_PER_DAY + k * 1000),
    }))
    // A repeated entry (same URL, same lastmod) is one signal and one duplicate, whichever part holds the URL.
    entries.push({ ...entries[10_000]! })
    const url = `url=${encodeURIComponent('https://big.example/sitemap.xml')}`
    // As if an earlier post had failed after its first part: the first 7,000 entries stored already.
    const first = await post(t, urlset(entries.slice(0, 7_000)), url)
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.json().signals.accepted, 7_000)

    const res = await post(t, urlset(entries), url)
    assert.equal(res.statusCode, 200, res.body)
    const receipt = res.json()
    assert.equal(receipt.entries, 24_001)
    assert.deepEqual(
      [receipt.signals.accepted, receipt.signals.duplicates, receipt.signals.discovered, receipt.signals.unknownPages],
      [17_000, 7_001, 17_000, 0],
    )
    assert.equal(await count(t, 'pages'), 24_000)
    assert.equal(await count(t, 'signals'), 24_000)
    // Never crawled: each page's signal waits for its first crawl to judge it.
    assert.equal(await count(t, 'pending_signals'), 24_000)
    const sources = (await t.app.inject({ method: 'GET', url: '/v1/signal-sources' })).json().sources
    assert.equal(sources[0].signalsReceived, 24_000)
  })
})
