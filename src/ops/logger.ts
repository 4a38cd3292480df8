import pino, { type Logger } from 'pino'
import type { Config } from '../config.ts'

/** What a request log line says of the request (Fastify's fields), without an IndexNow key in its query. */
interface LoggedRequest {
  method?: string
  url?: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

/**
 * GET /indexnow carries the submitter's key in its query: keys are public in IndexNow, but the log has no use for
 * them, so the request line is logged with the key's value replaced.
 */
export function withoutIndexNowKey(url: string): string {
  if (!/^\/indexnow\?/.test(url)) return url
  return url.replace(/([?&]key=)[^&]*/g, '$1[redacted]')
}

const serializers = {
  req: (req: LoggedRequest) => ({
    method: req.method,
    url: req.url === undefined ? undefined : withoutIndexNowKey(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
}

/**
 * Logs go to stderr, always: stdout carries only what a command prints as its result. Written like
 * pino's default stdout stream (asynchronous, flushed when the process exits).
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'recrawl' }, serializers }, pino.destination({ dest: 2 }))
}
