import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the site answered: which host (its origin), path, when (the site's clock), with what status and headers. */
export interface SiteRequest {
  origin: string
  path: string
  atMs: number
  status: number | null
  /** The request's headers (conditional requests send If-None-Match and If-Modified-Since). */
  headers: IncomingHttpHeaders
}

type SiteHandler = (req: IncomingMessage, res: ServerResponse, host: SiteHost) => void

interface SiteHost {
  origin: string
  /** The service's name for this host (`127.0.0.1:<port>`). */
  host: string
}

/**
 * A test web site of several hosts on loopback, one HTTP server per host (the service tells hosts
 * apart by host and port). Every request is logged with the site's clock, which a test may
 * simulate; handlers answer from it.
 */
export class TestSite {
  readonly requests: SiteRequest[] = []
  private readonly servers: Server[] = []

  constructor(readonly nowMs: () => number) {}

  async addHost(handler: SiteHandler): Promise<SiteHost> {
    const site: SiteHost = { origin: '', host: '' }
    const server = createServer((req, res) => {
      const entry: SiteRequest = {
        origin: site.origin,
        path: req.url ?? '/',
        atMs: this.nowMs(),
        status: null,
        headers: req.headers,
      }
      this.requests.push(entry)
      res.on('finish', () => {
        entry.status = res.statusCode
      })
      handler(req, res, site)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    site.origin = `http://127.0.0.1:${port}`
    site.host = `127.0.0.1:${port}`
    this.servers.push(server)
    return site
  }

  /** Requests for one page (origin + path), in order. */
  requestsFor(url: string): SiteRequest[] {
    return this.requests.filter((r) => r.origin + r.path === url)
  }

  async close(): Promise<void> {
    await Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          }),
      ),
    )
  }
}

export function html(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers })
  res.end(body)
}

/** An HTTP date (RFC 9110 IMF-fixdate), as Last-Modified and Retry-After carry it. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString()
}
