/**
 * One conditional fetch of a leased page with Node's fetch (undici), turned into the observation
 * recrawl expects (docs/api.md "How a crawler should report" and "Fetch outcomes"). A leased sitemap is fetched
 * the same way, keeping its body: a 2xx document is posted to POST /v1/sitemaps, anything else is reported.
 */
import type { LeasedPage, ObservationReport } from '@recrawl/client'
import { contentHash } from './contentHash.ts'

export interface FetchOptions {
  /** Crawl time source (ms since the epoch): the wall clock, or a simulated one. */
  now: () => number
  userAgent: string
  timeoutMs: number
  /** Bodies are read up to this many bytes (the hash covers that much). */
  maxBodyBytes: number
  /** Aborts the fetch (shutdown): the page then counts as not fetched. */
  signal: AbortSignal
  fetch?: typeof fetch
  /** Keep the body of a 2xx answer (a sitemap's document, posted as it came). */
  keepBody?: boolean
}

/** What a fetch found: the observation to report, without the leaseId. */
interface FetchOutcome {
  observation: Omit<ObservationReport, 'leaseId'>
  /** For a 429 or 503 with Retry-After: the host asked for this long without requests. */
  hostRetryAfterSeconds: number | null
  /** With keepBody, the body of a 2xx answer as received (up to maxBodyBytes); null otherwise. */
  body: Uint8Array | null
}

/** The fetch was abandoned because the crawler is shutting down; nothing was fetched. */
export class FetchAborted extends Error {}

const TEMPORARY_REDIRECTS = new Set([302, 303, 307])
const PERMANENT_REDIRECTS = new Set([301, 308])
const MAX_REDIRECTS = 5

export async function fetchPage(
  page: Pick<LeasedPage, 'url' | 'ifNoneMatch' | 'ifModifiedSince'>,
  options: FetchOptions,
): Promise<FetchOutcome> {
  const crawledAtMs = options.now()
  const base = { url: page.url, crawledAt: new Date(crawledAtMs).toISOString() }
  const headers: Record<string, string> = {
    'user-agent': options.userAgent,
    accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
  }
  // The lease carries the validators ready to send.
  if (page.ifNoneMatch) headers['if-none-match'] = page.ifNoneMatch
  if (page.ifModifiedSince) headers['if-modified-since'] = page.ifModifiedSince
  const doFetch = options.fetch ?? fetch

  let url = page.url
  let response: Response
  try {
    for (let hops = 0; ; hops++) {
      response = await doFetch(url, {
        redirect: 'manual',
        headers,
        signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
      })
      const location = response.headers.get('location')
      const redirect =
        TEMPORARY_REDIRECTS.has(response.status) || (PERMANENT_REDIRECTS.has(response.status) && hops > 0)
      // A permanent redirect of the URL we were given is reported, not followed: the page moved. The Location
      // goes as it came (recrawl resolves a relative one against the page's URL).
      if (PERMANENT_REDIRECTS.has(response.status) && hops === 0 && location) {
        await response.body?.cancel()
        return outcome({ ...base, httpStatus: response.status, redirectTo: location })
      }
      if (!redirect || !location || hops >= MAX_REDIRECTS) break
      await response.body?.cancel()
      url = new URL(location, url).href
    }
  } catch (err) {
    if (options.signal.aborted) throw new FetchAborted(`fetch of ${page.url} abandoned`)
    return outcome({ ...base, fetchError: fetchErrorKind(err) })
  }

  const status = response.status
  if (status === 304) {
    await response.body?.cancel()
    return outcome({ ...base, httpStatus: 304 })
  }
  if (status >= 200 && status < 300) {
    let body: Uint8Array
    try {
      body = await readBody(response, options.maxBodyBytes)
    } catch (err) {
      if (options.signal.aborted) throw new FetchAborted(`fetch of ${page.url} abandoned`)
      return outcome({ ...base, fetchError: fetchErrorKind(err) })
    }
    const etag = response.headers.get('etag')
    const lastModified = response.headers.get('last-modified')
    return {
      ...outcome({
        ...base,
        httpStatus: status,
        contentHash: contentHash(body, response.headers.get('content-type')),
        ...(etag ? { etag } : {}),
        ...(lastModified ? { lastModified } : {}),
      }),
      body: options.keepBody ? body : null,
    }
  }
  await response.body?.cancel()
  // Retry-After goes as it came (seconds or an HTTP date); the crawler reads it too, to pause the host itself.
  const retryAfter = status === 429 || status === 503 ? response.headers.get('retry-after') : null
  return {
    observation: { ...base, httpStatus: status, ...(retryAfter === null ? {} : { retryAfter }) },
    hostRetryAfterSeconds: parseRetryAfter(retryAfter, crawledAtMs),
    body: null,
  }
}

function outcome(observation: FetchOutcome['observation']): FetchOutcome {
  return { observation, hostRetryAfterSeconds: null, body: null }
}

/** The body, up to `limit` bytes (the rest is not downloaded). */
async function readBody(response: Response, limit: number): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array()
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    const take = Math.min(value.byteLength, limit - size)
    chunks.push(value.subarray(0, take))
    size += take
    if (size >= limit) {
      await reader.cancel()
      break
    }
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

/** Retry-After in seconds: a number of seconds, or an HTTP date (seconds from `nowMs`, at least 0). */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text)
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000))
}

/** The kind of a fetch that got no HTTP answer, as recrawl's `fetchError` names it. */
export function fetchErrorKind(err: unknown): 'timeout' | 'dns' | 'connection' | 'tls' | 'other' {
  const error = err as { name?: string; code?: string; cause?: { code?: string; name?: string } }
  if (error?.name === 'TimeoutError' || error?.cause?.name === 'TimeoutError') return 'timeout'
  const code = String(error?.cause?.code ?? error?.code ?? '')
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'ETIMEDOUT'
  )
    return 'timeout'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return 'dns'
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|UND_ERR_CLOSED)$/.test(code))
    return 'connection'
  if (/CERT|TLS|SSL|^UNABLE_TO_|^ERR_SSL/.test(code)) return 'tls'
  return 'other'
}
