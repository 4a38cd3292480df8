/**
 * The typed recrawl client: openapi-fetch over the types generated from the OpenAPI document
 * (generated/schema.ts), plus the API key header, a per-request timeout and one error type for problem+json
 * answers. Every path, parameter, body and response is checked by the compiler:
 *
 *   const api = createRecrawlClient({ baseUrl: 'http://127.0.0.1:8080', apiKey })
 *   const grant = await ok(api.POST('/v1/leases', { body: { worker: 'crawler-1', limit: 50 } }))
 *   const page = await ok(api.GET('/v1/pages/{id}', { params: { path: { id: grant.pages[0]!.id } } }))
 *
 * `ok` returns the body of a 2xx answer and throws a ProblemError for anything else.
 */
import createClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './generated/schema.js'

export type { components, paths } from './generated/schema.js'

type Schemas = components['schemas']
export type RecrawlApi = Client<paths>
export type LeaseGrant = Schemas['LeaseGrant']
export type LeasedPage = Schemas['LeasedPage']
export type ObservationReport = Schemas['ObservationReport']
export type ObservationReceipt = Schemas['ObservationReceipt']
export type PagesRelease = Schemas['PagesRelease']
export type Page = Schemas['Page']
export type Problem = Schemas['Problem']
export type SitemapReceipt = Schemas['SitemapReceipt']

export interface RecrawlClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>`; leave it out while the service runs without keys. */
  apiKey?: string
  /** Each request is abandoned after this long (default 60 s). */
  timeoutMs?: number
  /** The fetch to use (default: Node's global fetch). */
  fetch?: (request: Request, init?: RequestInit) => Promise<Response>
}

const DEFAULT_TIMEOUT_MS = 60_000

export function createRecrawlClient(options: RecrawlClientOptions): RecrawlApi {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const baseFetch = options.fetch ?? ((request: Request, init?: RequestInit) => fetch(request, init))
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` },
    fetch: async (request) => {
      const deadline = abortAfter(request.signal, timeoutMs)
      try {
        const response = await baseFetch(request, { signal: deadline.signal })
        requestMethods.set(response, request.method)
        return response
      } catch (err) {
        deadline.cancel()
        throw err
      }
    },
  })
}

/** The method of the request behind each response, for error messages (a Response does not know it). */
const requestMethods = new WeakMap<Response, string>()

/**
 * A signal that aborts when the request's own signal does or when `timeoutMs` has passed, whichever
 * comes first; the timeout also covers reading the body. A plain timer holds the controller, so the
 * deadline cannot be collected before it fires (Node 20 can lose an `AbortSignal.timeout` that only
 * `AbortSignal.any` refers to, and the request then waits for the socket's own five-minute limit).
 * The timer does not keep the process alive.
 */
function abortAfter(own: AbortSignal, timeoutMs: number): { signal: AbortSignal; cancel: () => void } {
  const controller = new AbortController()
  const onAbort = (): void => controller.abort(own.reason)
  if (own.aborted) onAbort()
  else own.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(() => {
    own.removeEventListener('abort', onAbort)
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'))
  }, timeoutMs)
  // Node's timers can let the process exit while they wait; a browser's are plain numbers.
  ;(timer as unknown as { unref?: () => void }).unref?.()
  return {
    signal: controller.signal,
    cancel: () => {
      clearTimeout(timer)
      own.removeEventListener('abort', onAbort)
    },
  }
}

/**
 * A non-2xx answer. `status` is the HTTP status; `kind` the last segment of the problem's `type`
 * (`invalid-input`, `not-found`, `conflict`, `rate-limited`, `unavailable`, …; null when the body
 * was no problem document); `errors` the bad fields of a 400; `retryAfterSeconds` the Retry-After
 * header of a 429 or 503.
 */
export class ProblemError extends Error {
  override readonly name = 'ProblemError'
  readonly status: number
  readonly kind: string | null
  readonly problem: Problem | null
  readonly errors: { path: string; message: string }[]
  readonly retryAfterSeconds: number | null

  constructor(
    readonly method: string,
    readonly url: string,
    response: Response,
    body: unknown,
  ) {
    const problem = isProblem(body) ? body : null
    const what = problem
      ? `${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`
      : typeof body === 'string' && body !== ''
        ? body.slice(0, 300)
        : response.statusText
    super(`${method} ${pathOf(url)} → ${response.status} ${what}`)
    this.status = response.status
    this.problem = problem
    this.kind = problem ? (problem.type.split('/').pop() ?? null) : null
    this.errors = problem?.errors ?? []
    const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN)
    this.retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null
  }
}

function pathOf(url: string): string {
  return URL.canParse(url) ? new URL(url).pathname : url
}

function isProblem(body: unknown): body is Problem {
  if (body === null || typeof body !== 'object') return false
  const b = body as Record<string, unknown>
  return typeof b.type === 'string' && typeof b.title === 'string' && typeof b.status === 'number'
}

type Data<R> = R extends { data: infer D } ? D : never

/** The body of a 2xx answer (undefined for 204); any other answer throws a ProblemError. */
export async function ok<R extends { response: Response; error?: unknown }>(pending: Promise<R>): Promise<Data<R>> {
  const result = await pending
  const { response } = result
  if (!response.ok)
    throw new ProblemError(requestMethods.get(response) ?? 'request', response.url, response, result.error)
  return (result as unknown as { data: Data<R> }).data
}

/** What postSitemap needs: the document as fetched, where from, when, and the lease of a leased sitemap item. */
export interface SitemapPost {
  /** The URL it was fetched from (a leased item's `url`). */
  url: string
  /** The body as received: XML, or gzip (recognised by its first bytes). */
  document: Uint8Array
  /** When it was fetched (RFC 3339); absent = when the service receives it. */
  receivedAt?: string
  /** The lease of a leased item of kind `sitemap`: the post completes it. */
  leaseId?: string
  /** The signal source its entries count for (default `sitemap`). */
  source?: string
}

/**
 * POST /v1/sitemaps with the document as its body, as it was fetched (not JSON), with the media type its first
 * bytes say (gzip or XML). Answers as `ok` does: the receipt, or a ProblemError.
 */
export function postSitemap(api: RecrawlApi, post: SitemapPost): Promise<SitemapReceipt> {
  const { document } = post
  const gzip = document.length >= 2 && document[0] === 0x1f && document[1] === 0x8b
  return ok(
    api.POST('/v1/sitemaps', {
      params: {
        query: {
          url: post.url,
          ...(post.receivedAt === undefined ? {} : { receivedAt: post.receivedAt }),
          ...(post.leaseId === undefined ? {} : { leaseId: post.leaseId }),
          ...(post.source === undefined ? {} : { source: post.source }),
        },
      },
      // The route takes the bytes as they came; the OpenAPI document declares no JSON body for it.
      body: document as never,
      bodySerializer: (bytes: unknown) => bytes as string,
      headers: { 'content-type': gzip ? 'application/gzip' : 'application/xml' },
    }),
  )
}
