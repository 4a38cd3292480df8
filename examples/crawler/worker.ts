/**
 * The example crawler's loop, on the typed client: take a lease, fetch its pages (bounded
 * concurrency, one request at a time per host, a least delay between two requests to one host,
 * a host's Retry-After respected, a host that answers 429 or 503 without one left alone for the rest of the
 * lease), report every fetch with the lease id and what the site sent as it sent it (a relative Location, an
 * HTTP-date Last-Modified or Retry-After), send heartbeats while fetches run long, give back what was not
 * fetched, and ask again when the lease says to (its `retryAfterSeconds`, which counts the paced hosts' turns).
 * A leased item of kind `sitemap` is fetched alike and its document posted to POST /v1/sitemaps (its crawl).
 */
import {
  ok,
  postSitemap,
  ProblemError,
  type LeasedPage,
  type LeaseGrant,
  type ObservationReport,
  type RecrawlApi,
} from '@recrawl/client'
import { FetchAborted, fetchPage } from './fetchPage.ts'

interface CrawlerOptions {
  api: RecrawlApi
  /** Shown on leased pages. */
  worker: string
  /** Most pages per lease. */
  leaseSize: number
  leaseSeconds: number
  /** Heartbeat period while a lease has pages left (default: a third of leaseSeconds). */
  heartbeatSeconds?: number
  /** Most fetches at once (over different hosts). */
  concurrency: number
  /** Least wall time between two requests of this crawler to one host. */
  hostDelayMs: number
  /** Only pages of these hosts. */
  hosts?: string[]
  fetchTimeoutMs: number
  maxBodyBytes: number
  userAgent: string
  /** Observations per report (the rest at the end of the lease). */
  reportBatch: number
  /** Crawl times come from here (default: the wall clock). A simulated clock makes days pass in seconds. */
  now?: () => number
  fetch?: typeof fetch
  log?: (line: string) => void
}

export const DEFAULT_CRAWLER_OPTIONS = {
  leaseSize: 50,
  leaseSeconds: 300,
  concurrency: 8,
  hostDelayMs: 1000,
  fetchTimeoutMs: 30_000,
  maxBodyBytes: 5 * 1024 * 1024,
  userAgent: 'recrawl-example-crawler/0.1',
  reportBatch: 100,
} satisfies Partial<CrawlerOptions>

interface Totals {
  /** Pages the leases handed out. */
  leased: number
  /** Fetches reported (with an HTTP answer or a fetch error). */
  reported: number
  /** Pages given back unfetched (shutdown, or a host that asked for a pause). */
  released: number
  /** Reports by HTTP status (`error` for no answer). */
  statuses: Record<string, number>
  /** Reported items the service did not store (logged with their reason). */
  rejected: number
}

/** One lease: what came of it, and what the service said about asking again. */
interface RoundResult extends Totals {
  /** Why the lease had fewer pages than asked for (`[]` for a full lease), as the service said. */
  limitedBy: LeaseGrant['limitedBy']
  /** When asking again can give a page: 0 at once, null when the service has nothing to hand out at all. */
  retryAfterSeconds: number | null
  /** Paced hosts whose due pages wait for their turn. */
  pacedHosts: LeaseGrant['pacedHosts']
}

/** The longest wait between two leases, whatever the service said (new pages may be registered meanwhile). */
const MAX_LEASE_WAIT_SECONDS = 3600

/** The longest wait a release may ask for (the service's limit). */
const MAX_RETRY_AFTER_SECONDS = 30 * 86_400

/** The largest sitemap the protocol allows (50 MB uncompressed); a gzip one is smaller on the wire. */
const SITEMAP_MAX_BYTES = 50 * 1024 * 1024

/** Reports are sent again this often after a transient failure (the service counts repeats as duplicates). */
const REPORT_ATTEMPTS = 5

export class Crawler {
  private readonly options: CrawlerOptions & { now: () => number; log: (line: string) => void }
  private readonly stopController = new AbortController()
  /** Crawl-clock time until which a host asked for no requests (its Retry-After). */
  private readonly hostPausedUntilMs = new Map<string, number>()
  /** Wall time of the last request to each host. */
  private readonly lastRequestAtMs = new Map<string, number>()
  readonly totals: Totals = { leased: 0, reported: 0, released: 0, statuses: {}, rejected: 0 }
  heartbeats = 0

  constructor(options: CrawlerOptions) {
    this.options = { ...options, now: options.now ?? Date.now, log: options.log ?? (() => {}) }
  }

  get worker(): string {
    return this.options.worker
  }

  get stopping(): boolean {
    return this.stopController.signal.aborted
  }

  /** Ends the crawl: no new lease or fetch, fetches in flight are abandoned and their pages given back. */
  stop(): void {
    this.stopController.abort()
  }

  /**
   * Lease rounds until `rounds` are done, or (`untilIdle`) until a lease comes back empty, or until
   * stop(). After a short lease it waits as long as the lease's `retryAfterSeconds` says (asking sooner
   * only gets the same answer; at most an hour), or `pollSeconds` when the service has nothing to hand
   * out at all. Transient service errors (5xx, 409, 429, no answer) are logged and retried after
   * `pollSeconds`; others end the run.
   */
  async run(options: { rounds?: number; untilIdle?: boolean; pollSeconds: number }): Promise<Totals> {
    let nextLeaseAtMs = 0
    for (let round = 0; options.rounds === undefined || round < options.rounds; round++) {
      await this.sleep(nextLeaseAtMs - Date.now())
      if (this.stopping) break
      const leasedAtMs = Date.now()
      let result: RoundResult
      try {
        result = await this.runOnce()
      } catch (err) {
        if (!isTransient(err)) throw err
        this.options.log(
          `service error, retrying in ${options.pollSeconds} s: ${err instanceof Error ? err.message : String(err)}`,
        )
        nextLeaseAtMs = Date.now() + options.pollSeconds * 1000
        continue
      }
      if (result.leased === 0 && options.untilIdle) break
      const waitSeconds = Math.min(result.retryAfterSeconds ?? options.pollSeconds, MAX_LEASE_WAIT_SECONDS)
      nextLeaseAtMs = leasedAtMs + waitSeconds * 1000
    }
    return this.totals
  }

  /** One lease: fetch its pages, report them, give back the rest. */
  async runOnce(): Promise<RoundResult> {
    const result: RoundResult = {
      leased: 0,
      reported: 0,
      released: 0,
      statuses: {},
      rejected: 0,
      limitedBy: [],
      retryAfterSeconds: 0,
      pacedHosts: [],
    }
    if (this.stopping) return result
    const { api, now } = this.options
    const grant = await ok(
      api.POST('/v1/leases', {
        body: {
          worker: this.options.worker,
          limit: this.options.leaseSize,
          leaseSeconds: this.options.leaseSeconds,
          ...(this.options.hosts?.length ? { hosts: this.options.hosts } : {}),
        },
      }),
    )
    result.leased = grant.pages.length
    result.limitedBy = grant.limitedBy
    result.retryAfterSeconds = grant.retryAfterSeconds
    result.pacedHosts = grant.pacedHosts
    if (grant.limitedBy.length > 0) this.options.log(whyShort(grant))
    if (grant.pages.length === 0) return this.add(result)

    const unfetched = new Map(grant.pages.map((p) => [p.id, p]))
    const toReport: ObservationReport[] = []
    const send = async (observations: ObservationReport[]) => {
      const { reported, rejected } = await this.report(observations)
      result.reported += reported
      result.rejected += rejected
    }
    // Hosts that answered 429 or 503 without Retry-After in this lease: nothing more is asked of them, and their
    // other pages go back (the service blocks such a host for a while, longer with every incident).
    const struggling = new Set<string>()
    const stopHeartbeat = this.startHeartbeat(grant.leaseId, () => unfetched.size > 0)
    try {
      const byHost = new Map<string, LeasedPage[]>()
      for (const page of grant.pages) byHost.set(page.host, [...(byHost.get(page.host) ?? []), page])
      const hosts = [...byHost.entries()]
      const crawlHost = async (host: string, pages: LeasedPage[]) => {
        for (const page of pages) {
          if (this.stopping || this.pausedForMs(host) > 0 || struggling.has(host)) return
          await this.politeWait(host)
          if (this.stopping) return
          const sitemap = page.kind === 'sitemap'
          let outcome
          try {
            outcome = await fetchPage(page, {
              now,
              userAgent: this.options.userAgent,
              timeoutMs: this.options.fetchTimeoutMs,
              maxBodyBytes: sitemap ? SITEMAP_MAX_BYTES : this.options.maxBodyBytes,
              signal: this.stopController.signal,
              keepBody: sitemap,
              ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
            })
          } catch (err) {
            if (err instanceof FetchAborted) return
            throw err
          } finally {
            this.lastRequestAtMs.set(host, Date.now())
          }
          unfetched.delete(page.id)
          // A sitemap's document goes to POST /v1/sitemaps, which counts it as the item's crawl; a failed fetch
          // (or a document the service refuses) is reported as an observation, like a page's.
          if (outcome.body !== null && (await this.postSitemap(page, outcome.observation, outcome.body, grant.leaseId)))
            result.reported++
          else toReport.push({ ...outcome.observation, leaseId: grant.leaseId })
          const status = String(outcome.observation.httpStatus ?? 'error')
          result.statuses[status] = (result.statuses[status] ?? 0) + 1
          if (outcome.hostRetryAfterSeconds !== null) {
            this.hostPausedUntilMs.set(host, now() + outcome.hostRetryAfterSeconds * 1000)
            this.options.log(`${host} asked for ${outcome.hostRetryAfterSeconds} s without requests (${status})`)
          } else if (status === '429' || status === '503') {
            struggling.add(host)
            this.options.log(`${host} answered ${status} without Retry-After: no more requests to it in this lease`)
          }
          if (toReport.length >= this.options.reportBatch) await send(toReport.splice(0))
        }
      }
      // At most `concurrency` hosts at once; each host's pages one after the other.
      let next = 0
      const lanes = Array.from({ length: Math.min(this.options.concurrency, hosts.length) }, async () => {
        while (next < hosts.length) {
          const [host, pages] = hosts[next++]!
          await crawlHost(host, pages)
        }
      })
      // Every lane ends before anything is given back, even when one failed.
      const failed = (await Promise.allSettled(lanes)).find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
    } finally {
      stopHeartbeat()
      try {
        if (toReport.length > 0) await send(toReport.splice(0))
      } finally {
        if (unfetched.size > 0) result.released += await this.release(grant.leaseId, [...unfetched.values()])
      }
    }
    return this.add(result)
  }

  /** Sends observations, again on transient failures; returns how many the service accounted for and rejected. */
  private async report(observations: ObservationReport[]): Promise<{ reported: number; rejected: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        const receipt = await ok(this.options.api.POST('/v1/observations', { body: { observations } }))
        for (const item of receipt.rejected)
          this.options.log(`report of ${observations[item.index]?.url} rejected: ${item.reason}`)
        for (const item of receipt.leaseNotCompleted)
          this.options.log(`report of ${observations[item.index]?.url} did not complete its lease: ${item.reason}`)
        return { reported: observations.length, rejected: receipt.rejected.length }
      } catch (err) {
        if (!isTransient(err) || attempt >= REPORT_ATTEMPTS) throw err
        const waitMs =
          err instanceof ProblemError && err.retryAfterSeconds !== null
            ? err.retryAfterSeconds * 1000
            : 500 * 2 ** attempt
        this.options.log(
          `report failed (${err instanceof Error ? err.message : String(err)}), sending it again in ${waitMs} ms`,
        )
        await new Promise((resolve) => setTimeout(resolve, waitMs))
      }
    }
  }

  /**
   * Posts a leased sitemap's document as fetched (plain or gzip) with the lease id; sends it again on transient
   * failures. Returns false when the service refused the document (malformed, too large): the fetch is then
   * reported as an observation instead, so the item's crawl and lease are not lost.
   */
  private async postSitemap(
    page: LeasedPage,
    observation: Omit<ObservationReport, 'leaseId'>,
    body: Uint8Array,
    leaseId: string,
  ): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        const receipt = await postSitemap(this.options.api, {
          url: page.url,
          document: body,
          receivedAt: observation.crawledAt,
          leaseId,
        })
        if (receipt.crawl?.leaseCompleted === false)
          this.options.log(`sitemap ${page.url} did not complete its lease (expired or taken over)`)
        return true
      } catch (err) {
        if (!isTransient(err)) {
          this.options.log(
            `sitemap ${page.url} refused (${err instanceof Error ? err.message : String(err)}): reported as a fetch`,
          )
          return false
        }
        if (attempt >= REPORT_ATTEMPTS) throw err
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt))
      }
    }
  }

  /** Gives pages back: due again at once, or after the pause their host asked for. */
  private async release(leaseId: string, pages: LeasedPage[]): Promise<number> {
    const items = pages.map((page) => {
      const pausedSeconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.ceil(this.pausedForMs(page.host) / 1000))
      return {
        id: page.id,
        reason: 'retry' as const,
        ...(pausedSeconds > 0 ? { retryAfterSeconds: pausedSeconds } : {}),
      }
    })
    const released = await ok(
      this.options.api.POST('/v1/leases/{leaseId}/release', { params: { path: { leaseId } }, body: { pages: items } }),
    )
    this.options.log(`gave back ${released.released} unfetched page(s) of lease ${leaseId}`)
    return released.released
  }

  /** PATCH /v1/leases/{id} every heartbeatSeconds while the lease has pages left; returns the stop function. */
  private startHeartbeat(leaseId: string, needed: () => boolean): () => void {
    const periodMs = (this.options.heartbeatSeconds ?? this.options.leaseSeconds / 3) * 1000
    const timer = setInterval(() => {
      if (!needed()) return
      this.heartbeats++
      ok(
        this.options.api.PATCH('/v1/leases/{leaseId}', {
          params: { path: { leaseId } },
          body: { leaseSeconds: this.options.leaseSeconds },
        }),
      ).catch((err: unknown) =>
        this.options.log(`heartbeat of lease ${leaseId} failed: ${err instanceof Error ? err.message : String(err)}`),
      )
    }, periodMs)
    timer.unref()
    return () => clearInterval(timer)
  }

  /** How long (crawl-clock ms) the host still asked for no requests; 0 when it did not. */
  private pausedForMs(host: string): number {
    return Math.max(0, (this.hostPausedUntilMs.get(host) ?? 0) - this.options.now())
  }

  private async politeWait(host: string): Promise<void> {
    const last = this.lastRequestAtMs.get(host)
    if (last !== undefined) await this.sleep(last + this.options.hostDelayMs - Date.now())
  }

  /** Waits, or less when the crawler stops. */
  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopping) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.stopController.signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.stopController.signal.addEventListener('abort', done, { once: true })
    })
  }

  private add(result: RoundResult): RoundResult {
    this.totals.leased += result.leased
    this.totals.reported += result.reported
    this.totals.released += result.released
    this.totals.rejected += result.rejected
    for (const [status, n] of Object.entries(result.statuses))
      this.totals.statuses[status] = (this.totals.statuses[status] ?? 0) + n
    return result
  }
}

/** A log line: why the lease was short, when to ask again, and which paced hosts wait for their turn. */
function whyShort(grant: LeaseGrant): string {
  const again = grant.retryAfterSeconds === null ? 'nothing to hand out' : `ask again in ${grant.retryAfterSeconds} s`
  const paced = grant.pacedHosts
    .slice(0, 5)
    .map((h) => `${h.host} (every ${h.paceSeconds} s, next ${h.nextLeaseAt})`)
    .join(', ')
  return `lease of ${grant.pages.length} page(s), limited by ${grant.limitedBy.join(', ')}: ${again}${paced ? `; paced hosts: ${paced}` : ''}`
}

/** Worth another try later: the service was busy or away (5xx, 409, 429) or did not answer. */
function isTransient(err: unknown): boolean {
  if (err instanceof ProblemError) return err.status >= 500 || err.status === 409 || err.status === 429
  return (
    err instanceof TypeError || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
  )
}
