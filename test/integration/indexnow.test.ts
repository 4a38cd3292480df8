import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { testAppFor, type TestApp } from '../helpers/testApp.ts'
import { createApiKey } from '../../src/domain/apiKeys.ts'
import { INDEXNOW_MAX_URLS } from '../../src/core/indexNow.ts'
import { withoutIndexNowKey } from '../../src/ops/logger.ts'

const KEY_A = 'a1b2c3d4e5f6a7b8'
const KEY_B = 'Zz-9876543210-key'

function api(t: TestApp) {
  const submit = (body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/indexnow',
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    })
  return {
    submit,
    ping: (url: string, key: string, keyLocation?: string) =>
      t.app.inject({
        method: 'GET',
        url: `/indexnow?url=${encodeURIComponent(url)}&key=${encodeURIComponent(key)}${
          keyLocation === undefined ? '' : `&keyLocation=${encodeURIComponent(keyLocation)}`
        }`,
      }),
    putKey: (host: string, key: string) =>
      t.app.inject({ method: 'PUT', url: `/v1/hosts/${encodeURIComponent(host)}/indexnow-keys/${key}` }),
    deleteKey: (host: string, key: string) =>
      t.app.inject({ method: 'DELETE', url: `/v1/hosts/${encodeURIComponent(host)}/indexnow-keys/${key}` }),
    keys: (host: string) => t.app.inject({ method: 'GET', url: `/v1/hosts/${encodeURIComponent(host)}/indexnow-keys` }),
    putPages: (urls: string[]) =>
      t.app.inject({ method: 'PUT', url: '/v1/pages', payload: { pages: urls.map((url) => ({ url })) } }),
    putSource: (body: Record<string, unknown>) =>
      t.app.inject({ method: 'PUT', url: '/v1/signal-sources/indexnow', payload: body }),
    /** signalsReceived of source `indexnow` as GET /v1/signal-sources shows it (0 while it has none). */
    async received(): Promise<number> {
      const res = await t.app.inject({ method: 'GET', url: '/v1/signal-sources' })
      assert.equal(res.statusCode, 200, res.body)
      const sources = res.json().sources as { source: string; signalsReceived: number }[]
      return sources.find((s) => s.source === 'indexnow')?.signalsReceived ?? 0
    },
    async storedSignals(): Promise<{ url: string; source: string; changedAt: Date | null; receivedAt: Date }[]> {
      const { rows } = await t.db.pool.query<{ url: string; source: string; changedAt: Date | null; receivedAt: Date }>(
        `SELECT p.url, s.source, s.changed_at AS "changedAt", s.received_at AS "receivedAt"
         FROM signals s JOIN pages p ON p.id = s.page_id ORDER BY p.url, s.received_at`,
      )
      return rows
    },
    async pageUrls(): Promise<string[]> {
      const { rows } = await t.db.pool.query<{ url: string }>('SELECT url FROM pages ORDER BY url')
      return rows.map((r) => r.url)
    },
  }
}

function assertProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number) {
  assert.equal(res.statusCode, status, res.body)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
}

const PAGES = ['https://www.example.org/a', 'https://www.example.org/b', 'https://www.example.org/c']

describe('IndexNow keys', () => {
  it('are registered per canonical host, listed, kept once, and withdrawn', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    const empty = await a.keys('www.example.org')
    assert.equal(empty.statusCode, 200, empty.body)
    assert.deepEqual(empty.json(), { host: 'www.example.org', keys: [] })

    const put = await a.putKey('WWW.Example.org', KEY_A)
    assert.equal(put.statusCode, 200, put.body)
    assert.equal(put.json().host, 'www.example.org')
    assert.deepEqual(
      put.json().keys.map((k: { key: string }) => k.key),
      [KEY_A],
    )
    t.clock.advanceMs(60_000)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_B)).statusCode, 200)
    const listed = (await a.keys('www.example.org.')).json()
    assert.deepEqual(
      listed.keys.map((k: { key: string }) => k.key),
      [KEY_A, KEY_B],
    )
    assert.ok(!Number.isNaN(Date.parse(listed.keys[0].createdAt)))

    assertProblem(await a.putKey('www.example.org', 'short'), 400)
    assertProblem(await a.putKey('www.example.org', 'has_underscore_1'), 400)
    assertProblem(await a.putKey('www.example.org', 'x'.repeat(129)), 400)
    assertProblem(await a.putKey('exa%20mple', KEY_A), 400)

    assert.equal((await a.deleteKey('www.example.org', KEY_B)).statusCode, 204)
    assertProblem(await a.deleteKey('www.example.org', KEY_B), 404)
    assertProblem(await a.deleteKey('other.example', KEY_A), 404)
    assert.deepEqual(
      (await a.keys('www.example.org')).json().keys.map((k: { key: string }) => k.key),
      [KEY_A],
    )
  })

  it('follow their host when the URL rules rename it', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    assert.equal((await a.putKey('example.org', KEY_B)).statusCode, 200)
    const settings = (await t.app.inject({ method: 'GET', url: '/v1/settings' })).json()
    const patched = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      payload: { urls: { ...settings.urls, dropWww: true } },
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.deepEqual(
      (await a.keys('example.org'))
        .json()
        .keys.map((k: { key: string }) => k.key)
        .sort(),
      [KEY_A, KEY_B].sort(),
    )
    const { rows } = await t.db.pool.query<{ host: string }>('SELECT DISTINCT host FROM indexnow_keys')
    assert.deepEqual(
      rows.map((r) => r.host),
      ['example.org'],
    )
    // A submission naming the old spelling reaches the renamed keys.
    assert.equal((await a.putPages(['https://example.org/a'])).statusCode, 200)
    const res = await a.submit({ host: 'www.example.org', key: KEY_A, urlList: ['https://www.example.org/a'] })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().accepted, 1)
  })
})

describe('POST /indexnow', () => {
  it('stores each URL of a registered key’s submission as a signal of source indexnow, received now', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages(PAGES)).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    t.clock.advanceMs(1_250)
    const res = await a.submit({
      host: 'www.example.org',
      key: KEY_A,
      keyLocation: `https://www.example.org/${KEY_A}.txt`,
      urlList: ['https://www.example.org/a', 'https://WWW.example.org:443/b#top', 'https://www.example.org/a'],
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const receipt = res.json()
    assert.equal(receipt.accepted, 2)
    assert.equal(receipt.duplicates, 1, 'the same URL twice in one submission is one signal')
    assert.equal(receipt.unknownPages, 0)
    assert.deepEqual(receipt.rejected, [])
    assert.equal(await a.received(), 2)
    const stored = await a.storedSignals()
    assert.deepEqual(
      stored.map((s) => [s.url, s.source, s.changedAt]),
      [
        ['https://www.example.org/a', 'indexnow', null],
        ['https://www.example.org/b', 'indexnow', null],
      ],
    )
    // Received now, to the second.
    for (const s of stored) assert.equal(s.receivedAt.getTime(), t.clock.nowMs() - 250)
  })

  it('a retry within the same second stores nothing twice; a later submission is a new signal', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages(PAGES)).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    const body = { host: 'www.example.org', key: KEY_A, urlList: PAGES }
    assert.equal((await a.submit(body)).json().accepted, 3)
    t.clock.advanceMs(900)
    const retry = await a.submit(body)
    assert.equal(retry.statusCode, 200, retry.body)
    assert.equal(retry.json().accepted, 0)
    assert.equal(retry.json().duplicates, 3)
    assert.equal(await a.received(), 3)
    t.clock.advanceMs(200)
    const later = await a.submit(body)
    assert.equal(later.json().accepted, 3)
    assert.equal(await a.received(), 6)
    assert.equal((await a.storedSignals()).length, 6)
  })

  it('a key not registered for the host is 403 and stores nothing; a key of host A does not work for host B', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages([...PAGES, 'https://b.example/1'])).statusCode, 200)
    assertProblem(await a.submit({ host: 'www.example.org', key: KEY_A, urlList: PAGES }), 403)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    assert.equal((await a.putKey('b.example', KEY_B)).statusCode, 200)
    assertProblem(await a.submit({ host: 'www.example.org', key: KEY_B, urlList: PAGES }), 403)
    assertProblem(await a.submit({ host: 'b.example', key: KEY_A, urlList: ['https://b.example/1'] }), 403)
    // The same host on another port, or without www, is another host.
    assertProblem(await a.submit({ host: 'example.org', key: KEY_A, urlList: ['https://example.org/a'] }), 403)
    assertProblem(
      await a.submit({ host: 'www.example.org:8443', key: KEY_A, urlList: ['https://www.example.org:8443/a'] }),
      403,
    )
    assert.equal(await a.received(), 0)
    assert.equal((await a.storedSignals()).length, 0)
    // Each key on its own host works.
    assert.equal((await a.submit({ host: 'b.example', key: KEY_B, urlList: ['https://b.example/1'] })).statusCode, 200)
    assert.equal((await a.submit({ host: 'www.example.org', key: KEY_A, urlList: PAGES })).statusCode, 200)
    assert.equal(await a.received(), 4)
    // A withdrawn key is refused from then on.
    assert.equal((await a.deleteKey('b.example', KEY_B)).statusCode, 204)
    t.clock.advanceMs(5_000)
    assertProblem(await a.submit({ host: 'b.example', key: KEY_B, urlList: ['https://b.example/1'] }), 403)
    assert.equal(await a.received(), 4)
  })

  it('one URL off the host makes the whole submission 422; nothing is stored', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages([...PAGES, 'https://other.example/x'])).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    for (const stray of ['https://other.example/x', 'https://example.org/a', 'https://www.example.org:8080/a']) {
      const res = await a.submit({ host: 'www.example.org', key: KEY_A, urlList: [...PAGES, stray] })
      assertProblem(res, 422)
      assert.match(res.json().detail, /not on www\.example\.org/)
    }
    assertProblem(
      await a.submit({
        host: 'www.example.org',
        key: KEY_A,
        keyLocation: `https://other.example/${KEY_A}.txt`,
        urlList: PAGES,
      }),
      422,
    )
    // A key outside the protocol's form is 422 too.
    assertProblem(await a.submit({ host: 'www.example.org', key: 'bad_key!', urlList: PAGES }), 422)
    assert.equal(await a.received(), 0)
    assert.equal((await a.storedSignals()).length, 0)
  })

  it('a malformed submission is 400 problem+json naming the field; nothing is stored', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages(PAGES)).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    const cases: [body: unknown, path: string | null][] = [
      ['{"host": "www.example.org", ', null],
      [{ key: KEY_A, urlList: PAGES }, '/body/host'],
      [{ host: 'www.example.org', urlList: PAGES }, '/body/key'],
      [{ host: 'www.example.org', key: KEY_A }, '/body/urlList'],
      [{ host: 'www.example.org', key: KEY_A, urlList: [] }, '/body/urlList'],
      [{ host: 'www.example.org', key: KEY_A, urlList: 'https://www.example.org/a' }, '/body/urlList'],
      [{ host: 'www.example.org', key: KEY_A, urlList: [PAGES[0], 7] }, '/body/urlList/1'],
      [{ host: 'www.example.org', key: KEY_A, urlList: [PAGES[0], 'not a url'] }, '/body/urlList/1'],
      [{ host: 'www.example.org', key: KEY_A, urlList: ['ftp://www.example.org/a'] }, '/body/urlList/0'],
      [{ host: 'www.example.org/a', key: KEY_A, urlList: PAGES }, '/body/host'],
      [{ host: 'www.example.org', key: KEY_A, keyLocation: 'nowhere', urlList: PAGES }, '/body/keyLocation'],
    ]
    for (const [body, path] of cases) {
      const res = await a.submit(body)
      assertProblem(res, 400)
      if (path !== null)
        assert.ok(
          (res.json().errors as { path: string }[]).some((e) => e.path === path),
          `${JSON.stringify(body)}: ${res.body}`,
        )
    }
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/indexnow',
      headers: { 'content-type': 'text/plain' },
      payload: 'https://www.example.org/a',
    })
    assertProblem(notJson, 400)
    assert.equal(await a.received(), 0)
  })

  it(`more than ${INDEXNOW_MAX_URLS} URLs are refused whole; exactly that many are taken`, async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    assert.equal((await a.putSource({ discover: true })).statusCode, 200)
    const urls = Array.from({ length: INDEXNOW_MAX_URLS + 1 }, (_, i) => `https://www.example.org/page/${i}`)
    const over = await a.submit({ host: 'www.example.org', key: KEY_A, urlList: urls })
    assertProblem(over, 413)
    assert.match(over.json().detail, /10000/)
    assert.equal(await a.received(), 0)
    assert.deepEqual(await a.pageUrls(), [])
    const full = await a.submit({ host: 'www.example.org', key: KEY_A, urlList: urls.slice(0, INDEXNOW_MAX_URLS) })
    assert.equal(full.statusCode, 200, full.body.slice(0, 500))
    assert.equal(full.json().accepted, INDEXNOW_MAX_URLS)
    assert.equal(full.json().discovered, INDEXNOW_MAX_URLS)
    assert.equal(await a.received(), INDEXNOW_MAX_URLS)
  })

  it('unknown URLs register pages only when the indexnow source allows discovery', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages([PAGES[0]!])).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    const body = { host: 'www.example.org', key: KEY_A, urlList: PAGES }
    const closed = await a.submit(body)
    assert.equal(closed.statusCode, 200, closed.body)
    assert.equal(closed.json().accepted, 1)
    assert.equal(closed.json().unknownPages, 2)
    assert.equal(closed.json().discovered, 0)
    assert.deepEqual(await a.pageUrls(), [PAGES[0]])

    const put = await a.putSource({ discover: true, discoverImportance: 0.25 })
    assert.equal(put.statusCode, 200, put.body)
    t.clock.advanceMs(2_000)
    const open = await a.submit(body)
    assert.equal(open.statusCode, 200, open.body)
    assert.equal(open.json().discovered, 2)
    assert.equal(open.json().accepted, 3)
    assert.deepEqual(await a.pageUrls(), [...PAGES].sort())
    const page = await t.app.inject({ method: 'GET', url: `/v1/pages/by-url?url=${encodeURIComponent(PAGES[2]!)}` })
    assert.equal(page.json().importance, 0.25)
    assert.equal(await a.received(), 4)
  })

  it('needs no API key where the /v1 routes do; the key routes keep theirs', async (ctx) => {
    const t = await testAppFor(ctx, { loopbackOnly: false })
    const admin = await createApiKey(t.db, { name: 'ops', role: 'admin' })
    const reader = await createApiKey(t.db, { name: 'dash', role: 'reader' })
    const a = api(t)
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    assertProblem(await a.putKey('www.example.org', KEY_A), 401)
    assertProblem(
      await t.app.inject({
        method: 'PUT',
        url: `/v1/hosts/www.example.org/indexnow-keys/${KEY_A}`,
        headers: auth(reader.key),
      }),
      403,
    )
    const put = await t.app.inject({
      method: 'PUT',
      url: `/v1/hosts/www.example.org/indexnow-keys/${KEY_A}`,
      headers: auth(admin.key),
    })
    assert.equal(put.statusCode, 200, put.body)
    const listed = await t.app.inject({
      method: 'GET',
      url: '/v1/hosts/www.example.org/indexnow-keys',
      headers: auth(reader.key),
    })
    assert.equal(listed.statusCode, 200, listed.body)
    assert.equal(
      (
        await t.app.inject({
          method: 'PUT',
          url: '/v1/signal-sources/indexnow',
          headers: auth(admin.key),
          payload: { discover: true },
        })
      ).statusCode,
      200,
    )
    const res = await a.submit({ host: 'www.example.org', key: KEY_A, urlList: PAGES })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().discovered, 3)
    const ping = await a.ping('https://www.example.org/d', KEY_A)
    assert.equal(ping.statusCode, 200, ping.body)
  })

  it('is rate limited per client address, whatever Authorization header it carries', async (ctx) => {
    // The two set-up calls count against the address too (no API key in loopback mode).
    const t = await testAppFor(ctx, { rateLimitPerMinute: 4 })
    const a = api(t)
    assert.equal((await a.putPages(PAGES)).statusCode, 200)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    const body = { host: 'www.example.org', key: KEY_A, urlList: PAGES }
    assert.equal((await a.submit(body, { authorization: 'Bearer one' })).statusCode, 200)
    assert.equal((await a.submit(body, { authorization: 'Bearer two' })).statusCode, 200)
    const limited = await a.submit(body, { authorization: 'Bearer three' })
    assertProblem(limited, 429)
    assert.match(String(limited.headers['retry-after']), /^\d+$/)
  })
})

describe('GET /indexnow', () => {
  it('submits one URL of the URL’s host with a key registered for it', async (ctx) => {
    const t = await testAppFor(ctx)
    const a = api(t)
    assert.equal((await a.putPages(PAGES)).statusCode, 200)
    assertProblem(await a.ping(PAGES[0]!, KEY_A), 403)
    assert.equal((await a.putKey('www.example.org', KEY_A)).statusCode, 200)
    assert.equal((await a.putKey('b.example', KEY_B)).statusCode, 200)
    assertProblem(await a.ping(PAGES[0]!, KEY_B), 403)

    const res = await a.ping(PAGES[0]!, KEY_A, `https://www.example.org/${KEY_A}.txt`)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().accepted, 1)
    assert.equal((await a.ping(PAGES[0]!, KEY_A)).json().duplicates, 1, 'a retry within the second')
    assert.deepEqual(
      (await a.storedSignals()).map((s) => [s.url, s.source]),
      [[PAGES[0], 'indexnow']],
    )

    assertProblem(await a.ping('not a url', KEY_A), 400)
    assertProblem(await a.ping(PAGES[1]!, 'bad key'), 422)
    assertProblem(await a.ping(PAGES[1]!, KEY_A, `https://b.example/${KEY_A}.txt`), 422)
    assertProblem(await t.app.inject({ method: 'GET', url: `/indexnow?key=${KEY_A}` }), 400)
    assertProblem(await t.app.inject({ method: 'GET', url: `/indexnow?url=${encodeURIComponent(PAGES[1]!)}` }), 400)
    assert.equal(await a.received(), 1)
  })
})

describe('request logs', () => {
  it('leave the IndexNow key out of the request line', () => {
    assert.equal(
      withoutIndexNowKey(`/indexnow?url=https%3A%2F%2Fa.example%2F&key=${KEY_A}&keyLocation=x`),
      '/indexnow?url=https%3A%2F%2Fa.example%2F&key=[redacted]&keyLocation=x',
    )
    assert.equal(withoutIndexNowKey(`/indexnow?key=${KEY_A}`), '/indexnow?key=[redacted]')
    assert.equal(withoutIndexNowKey('/v1/pages?key=x'), '/v1/pages?key=x')
  })
})
