import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { contentHash } from '../../../examples/crawler/contentHash.ts'
import {
  FetchAborted,
  fetchErrorKind,
  fetchPage,
  parseRetryAfter,
  type FetchOptions,
} from '../../../examples/crawler/fetchPage.ts'

const NOW = Date.parse('2026-03-01T12:00:00Z')

/** A site whose handler sees each request; closed after `work`. */
async function withSite(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  work: (origin: string, seen: IncomingMessage[]) => Promise<void>,
): Promise<void> {
  const seen: IncomingMessage[] = []
  const server = createServer((req, res) => {
    seen.push(req)
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    await work(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen)
  } finally {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

function options(overrides: Partial<FetchOptions> = {}): FetchOptions {
  return {
    now: () => NOW,
    userAgent: 'test-crawler',
    timeoutMs: 5_000,
    maxBodyBytes: 1 << 20,
    signal: new AbortController().signal,
    ...overrides,
  }
}

const page = (url: string, ifNoneMatch: string | null = null, ifModifiedSince: string | null = null) => ({
  url,
  ifNoneMatch,
  ifModifiedSince,
})

describe('fetchPage', () => {
  it('sends the validators as the lease gives them and reports a 200 with its hash, ETag and Last-Modified as received', async () => {
    const body = '<html><body><main><p>hello</p></main></body></html>'
    await withSite(
      (_req, res) => {
        res.writeHead(200, {
          'content-type': 'text/html',
          etag: '"v2"',
          'last-modified': 'Sun, 01 Mar 2026 08:00:00 GMT',
        })
        res.end(body)
      },
      async (origin, seen) => {
        const outcome = await fetchPage(page(`${origin}/a`, '"v1"', 'Sat, 28 Feb 2026 10:00:00 GMT'), options())
        assert.equal(seen[0]!.headers['if-none-match'], '"v1"')
        assert.equal(seen[0]!.headers['if-modified-since'], 'Sat, 28 Feb 2026 10:00:00 GMT')
        assert.equal(seen[0]!.headers['user-agent'], 'test-crawler')
        assert.deepEqual(outcome, {
          observation: {
            url: `${origin}/a`,
            crawledAt: new Date(NOW).toISOString(),
            httpStatus: 200,
            contentHash: contentHash(new TextEncoder().encode(body), 'text/html'),
            etag: '"v2"',
            lastModified: 'Sun, 01 Mar 2026 08:00:00 GMT',
          },
          hostRetryAfterSeconds: null,
          body: null,
        })
        // A sitemap's fetch keeps the body, as received, to post it to /v1/sitemaps.
        const kept = await fetchPage(page(`${origin}/a`), { ...options(), keepBody: true })
        assert.equal(new TextDecoder().decode(kept.body!), body)
      },
    )
  })

  it('reports a 304 in one line, and sends no validators it does not have', async () => {
    await withSite(
      (_req, res) => {
        res.writeHead(304)
        res.end()
      },
      async (origin, seen) => {
        const outcome = await fetchPage(page(`${origin}/a`), options())
        assert.equal(seen[0]!.headers['if-none-match'], undefined)
        assert.equal(seen[0]!.headers['if-modified-since'], undefined)
        assert.deepEqual(outcome.observation, {
          url: `${origin}/a`,
          crawledAt: new Date(NOW).toISOString(),
          httpStatus: 304,
        })
      },
    )
  })

  it('reports a permanent redirect with its target, follows temporary ones and reports the final answer', async () => {
    await withSite(
      (req, res) => {
        if (req.url === '/old') res.writeHead(301, { location: '/new?x=1' }).end()
        else if (req.url === '/kept') res.writeHead(308, { location: 'http://elsewhere.example/kept' }).end()
        else if (req.url === '/temp') res.writeHead(302, { location: '/temp2' }).end()
        else if (req.url === '/temp2') res.writeHead(301, { location: '/final' }).end()
        else if (req.url === '/final') res.writeHead(200, { 'content-type': 'text/plain' }).end('final')
        else if (req.url === '/loop') res.writeHead(307, { location: '/loop' }).end()
        else res.writeHead(404).end()
      },
      async (origin, seen) => {
        // The Location as received; recrawl resolves it against the page's URL.
        assert.equal((await fetchPage(page(`${origin}/old`), options())).observation.redirectTo, '/new?x=1')
        assert.deepEqual(
          seen.map((r) => r.url),
          ['/old'],
          'a permanent redirect is not followed',
        )
        const kept = await fetchPage(page(`${origin}/kept`), options())
        assert.equal(kept.observation.httpStatus, 308)
        assert.equal(kept.observation.redirectTo, 'http://elsewhere.example/kept')
        const temp = await fetchPage(page(`${origin}/temp`), options())
        assert.equal(
          temp.observation.httpStatus,
          200,
          'temporary redirects (and a permanent one behind them) are followed',
        )
        assert.equal(temp.observation.url, `${origin}/temp`, 'reported for the URL it was given')
        assert.equal(temp.observation.redirectTo, undefined)
        const loop = await fetchPage(page(`${origin}/loop`), options())
        assert.equal(loop.observation.httpStatus, 307, 'a redirect loop ends after a few hops; the 3xx says nothing')
      },
    )
  })

  it('reports 429 and 503 with their Retry-After (seconds or an HTTP date), and other failures with their status only', async () => {
    await withSite(
      (req, res) => {
        if (req.url === '/busy') res.writeHead(429, { 'retry-after': '120' }).end()
        else if (req.url === '/down') res.writeHead(503, { 'retry-after': new Date(NOW + 90_500).toUTCString() }).end()
        else if (req.url === '/broken') res.writeHead(500, { 'retry-after': '5' }).end('oops')
        else res.writeHead(410).end()
      },
      async (origin) => {
        const busy = await fetchPage(page(`${origin}/busy`), options())
        assert.deepEqual(
          [busy.observation.httpStatus, busy.observation.retryAfter, busy.hostRetryAfterSeconds],
          [429, '120', 120],
        )
        const down = await fetchPage(page(`${origin}/down`), options())
        assert.deepEqual(
          [down.observation.httpStatus, down.observation.retryAfter, down.hostRetryAfterSeconds],
          [503, new Date(NOW + 90_500).toUTCString(), 90],
        )
        const broken = await fetchPage(page(`${origin}/broken`), options())
        assert.deepEqual(broken, {
          observation: { url: `${origin}/broken`, crawledAt: new Date(NOW).toISOString(), httpStatus: 500 },
          hostRetryAfterSeconds: null,
          body: null,
        })
        assert.equal((await fetchPage(page(`${origin}/gone`), options())).observation.httpStatus, 410)
      },
    )
  })

  it('hashes at most maxBodyBytes of a body', async () => {
    await withSite(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        res.end(Buffer.alloc(100_000, 7))
      },
      async (origin) => {
        const outcome = await fetchPage(page(origin), options({ maxBodyBytes: 1000 }))
        assert.equal(
          outcome.observation.contentHash,
          contentHash(new Uint8Array(1000).fill(7), 'application/octet-stream'),
        )
      },
    )
  })

  it('reports a timeout or a refused connection as a fetchError; a shutdown abandons the fetch', async () => {
    await withSite(
      () => {}, // never answers
      async (origin) => {
        const timedOut = await fetchPage(page(origin), options({ timeoutMs: 100 }))
        assert.deepEqual(timedOut.observation, {
          url: origin,
          crawledAt: new Date(NOW).toISOString(),
          fetchError: 'timeout',
        })
        const stop = new AbortController()
        setTimeout(() => stop.abort(), 50)
        await assert.rejects(fetchPage(page(origin), options({ signal: stop.signal })), FetchAborted)
      },
    )
    // A port nothing listens on: the site above is closed.
    let closedOrigin = ''
    await withSite(
      () => {},
      async (origin) => {
        closedOrigin = origin
      },
    )
    assert.equal((await fetchPage(page(closedOrigin), options())).observation.fetchError, 'connection')
  })
})

describe('fetchPage helpers', () => {
  it('parseRetryAfter reads seconds or an HTTP date, never a negative wait', () => {
    assert.equal(parseRetryAfter(null, NOW), null)
    assert.equal(parseRetryAfter(' 30 ', NOW), 30)
    assert.equal(parseRetryAfter(new Date(NOW + 10_000).toUTCString(), NOW), 10)
    assert.equal(parseRetryAfter(new Date(NOW - 10_000).toUTCString(), NOW), 0)
    assert.equal(parseRetryAfter('soon', NOW), null)
  })

  it('fetchErrorKind names what went wrong', () => {
    const withCause = (code: string) =>
      Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) })
    assert.equal(fetchErrorKind(Object.assign(new Error('t'), { name: 'TimeoutError' })), 'timeout')
    assert.equal(fetchErrorKind(withCause('ENOTFOUND')), 'dns')
    assert.equal(fetchErrorKind(withCause('ECONNREFUSED')), 'connection')
    assert.equal(fetchErrorKind(withCause('UNABLE_TO_VERIFY_LEAF_SIGNATURE')), 'tls')
    assert.equal(fetchErrorKind(withCause('DEPTH_ZERO_SELF_SIGNED_CERT')), 'tls')
    assert.equal(fetchErrorKind(withCause('ERR_TLS_CERT_ALTNAME_INVALID')), 'tls')
    assert.equal(fetchErrorKind(new Error('?')), 'other')
  })
})
