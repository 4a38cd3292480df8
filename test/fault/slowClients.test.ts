/**
 * Slow and idle clients (HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS):
 * a body sent at 1 byte/s and headers sent at 1 byte/s are cut off with 408 problem+json, an idle
 * keep-alive connection is closed, and meanwhile the service keeps answering other clients at once.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type AddressInfo } from 'node:net'
import { startTestApp } from '../helpers/testApp.ts'

const TIMEOUTS = { requestMs: 6_000, headersMs: 4_000, keepAliveMs: 1_500 }
const SLOW_BODY_CLIENTS = 40
const SLOW_HEADER_CLIENTS = 10

interface SlowClient {
  /** ms from connect to the server closing the connection. */
  closedAfterMs: Promise<number>
  answer(): string
  stop(): void
}

/** Connects, sends `head` at once, then one byte of `trickle` per second until the server closes. */
function slowClient(port: number, head: string, trickle: string): SlowClient {
  const socket = connect(port, '127.0.0.1')
  const started = performance.now()
  let answer = ''
  let i = 0
  socket.setEncoding('utf8')
  socket.on('data', (d) => (answer += d))
  socket.on('error', () => {})
  const timer = setInterval(() => {
    if (!socket.destroyed && socket.writable) socket.write(trickle[i++ % trickle.length]!)
  }, 1_000)
  socket.write(head)
  const closedAfterMs = new Promise<number>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer)
      resolve(performance.now() - started)
    })
  })
  return {
    closedAfterMs,
    answer: () => answer,
    stop: () => {
      clearInterval(timer)
      socket.destroy()
    },
  }
}

function statusOf(answer: string): { status: number; contentType: string; body: { status?: number; detail?: string } } {
  const [head, body] = answer.split('\r\n\r\n')
  const status = Number(head?.split(' ')[1])
  const contentType = /content-type: ([^\r\n]+)/i.exec(head ?? '')?.[1] ?? ''
  let parsed = {}
  try {
    parsed = JSON.parse(body ?? '')
  } catch {
    // no JSON body
  }
  return { status, contentType, body: parsed }
}

describe('slow and idle clients', () => {
  it(
    `${SLOW_BODY_CLIENTS} bodies and ${SLOW_HEADER_CLIENTS} header blocks at 1 byte/s are cut off with 408; everyone else is served at once`,
    { timeout: 60_000 },
    async (t) => {
      const app = await startTestApp({ httpTimeouts: TIMEOUTS })
      const clients: SlowClient[] = []
      try {
        await app.app.listen({ host: '127.0.0.1', port: 0 })
        const { port } = app.app.server.address() as AddressInfo
        const base = `http://127.0.0.1:${port}`

        const bodyHead =
          'POST /v1/observations HTTP/1.1\r\nHost: slow\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"observations":['
        for (let i = 0; i < SLOW_BODY_CLIENTS; i++) clients.push(slowClient(port, bodyHead, ' '))
        const headerClients: SlowClient[] = []
        for (let i = 0; i < SLOW_HEADER_CLIENTS; i++)
          headerClients.push(slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Slow: ', 'a'))
        clients.push(...headerClients)

        // Meanwhile a normal client reads and writes, and is served as if nobody else were there.
        const latenciesMs: number[] = []
        const until = performance.now() + TIMEOUTS.requestMs + 1_500
        let n = 0
        while (performance.now() < until) {
          const started = performance.now()
          const health = await fetch(`${base}/healthz`)
          latenciesMs.push(performance.now() - started)
          assert.equal(health.status, 200)
          const report = await fetch(`${base}/v1/observations`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              observations: [
                {
                  url: `https://fast.example/${n++}`,
                  crawledAt: new Date(app.clock.nowMs() - 60_000).toISOString(),
                  changed: false,
                },
              ],
            }),
          })
          assert.equal(report.status, 200)
          await new Promise((r) => setTimeout(r, 50))
        }

        const bodyClosed = await Promise.all(clients.slice(0, SLOW_BODY_CLIENTS).map((c) => c.closedAfterMs))
        const headerClosed = await Promise.all(headerClients.map((c) => c.closedAfterMs))
        t.diagnostic(
          JSON.stringify({
            slowBodyClosedAfterMs: [Math.round(Math.min(...bodyClosed)), Math.round(Math.max(...bodyClosed))],
            slowHeadersClosedAfterMs: [Math.round(Math.min(...headerClosed)), Math.round(Math.max(...headerClosed))],
            healthLatencyMaxMs: Math.round(Math.max(...latenciesMs)),
            requests: latenciesMs.length,
          }),
        )
        for (const c of clients) {
          const { status, contentType, body } = statusOf(c.answer())
          assert.equal(status, 408, c.answer().slice(0, 200))
          assert.match(contentType, /^application\/problem\+json/)
          assert.equal(body.status, 408)
        }
        // Cut off by the limits (Node checks them every second), not at once and not much later.
        for (const ms of bodyClosed)
          assert.ok(
            ms >= TIMEOUTS.requestMs * 0.9 && ms < TIMEOUTS.requestMs + 4_000,
            `slow body closed after ${ms} ms`,
          )
        for (const ms of headerClosed)
          assert.ok(
            ms >= TIMEOUTS.headersMs * 0.9 && ms < TIMEOUTS.headersMs + 4_000,
            `slow headers closed after ${ms} ms`,
          )
        // Nobody waited for a slow client to be cut off: every answer came before the shortest of the limits. (How
        // fast it came is the machine's business; a service blocked by the slow clients would wait them out.)
        assert.ok(latenciesMs.length >= 2, `the normal client was served repeatedly (${latenciesMs.length} requests)`)
        assert.ok(
          Math.max(...latenciesMs) < TIMEOUTS.headersMs,
          `health checks were not held up by the slow clients (max ${Math.max(...latenciesMs)} ms)`,
        )

        // Nothing of the cut-off bodies was applied: only the normal client's pages exist.
        const pages = (await app.app.inject({ method: 'GET', url: '/v1/pages?limit=1000' })).json().pages as {
          url: string
        }[]
        assert.equal(pages.length, n)
        assert.ok(pages.every((p) => p.url.startsWith('https://fast.example/')))
      } finally {
        for (const c of clients) c.stop()
        await app.close()
      }
    },
  )

  it('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', { timeout: 30_000 }, async () => {
    const app = await startTestApp({ httpTimeouts: TIMEOUTS })
    try {
      await app.app.listen({ host: '127.0.0.1', port: 0 })
      const { port } = app.app.server.address() as AddressInfo
      const socket = connect(port, '127.0.0.1')
      socket.setEncoding('utf8')
      let answer = ''
      let answeredAt = 0
      socket.on('data', (d) => {
        answer += d
        answeredAt ||= performance.now()
      })
      socket.write('GET /healthz HTTP/1.1\r\nHost: idle\r\n\r\n')
      await new Promise<void>((resolve) => socket.on('close', () => resolve()))
      const idleMs = performance.now() - answeredAt
      assert.match(answer, /^HTTP\/1\.1 200/)
      assert.match(answer, /keep-alive/i)
      assert.ok(
        idleMs >= TIMEOUTS.keepAliveMs * 0.9 && idleMs < TIMEOUTS.keepAliveMs + 4_000,
        `closed after ${idleMs} ms idle`,
      )
    } finally {
      await app.close()
    }
  })
})
