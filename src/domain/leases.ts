import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { releaseLease, takeLeasedPages, upcomingCrawls } from '../store/leasesRepo.ts'
import type { Clock } from './clock.ts'
import { NotFoundError } from './errors.ts'

export interface LeaseDeps {
  pool: pg.Pool
  clock: Clock
}

export interface LeaseRequest {
  worker: string
  limit: number
  leaseSeconds: number
  hosts?: readonly string[] | undefined
}

export interface LeaseGrant {
  leaseId: string
  expiresAt: string
  pages: { id: string; url: string; host: string; dueAt: string }[]
  /** Pages of expired leases this call found: returned to the pool, or leased again by it. */
  expiredReturned: number
}

/**
 * Per call, at most this many pages of expired leases are returned to the pool and this many pages
 * of polite hosts moved out of the global due order: keeps one call short after many workers vanished
 * at once or a large host gained a delay; the next calls do the rest.
 */
const SWEEP_BATCH = 1000

/**
 * Hands out due pages as one lease (API.md "Schedule"), in one statement (store/leasesRepo.ts):
 * most overdue first, higher importance first when tied; rows are locked with SKIP LOCKED, so
 * concurrent callers never get the same page; a host with `minDelaySeconds` gets at most one page
 * per call and per delay (its politeness row is locked and moved forward in the same statement);
 * pages of expired leases are offered again.
 */
export async function takeLease(deps: LeaseDeps, request: LeaseRequest): Promise<LeaseGrant> {
  const nowMs = deps.clock.nowMs()
  const leaseId = randomUUID()
  const expiresAt = new Date(nowMs + request.leaseSeconds * 1000)
  const taken = await takeLeasedPages(deps.pool, {
    now: new Date(nowMs),
    limit: request.limit,
    hosts: request.hosts && request.hosts.length > 0 ? [...request.hosts] : null,
    leaseId,
    worker: request.worker,
    expiresAt,
    sweepBatch: SWEEP_BATCH,
  })
  return {
    leaseId,
    expiresAt: expiresAt.toISOString(),
    pages: taken.pages.map((p) => ({ id: p.id, url: p.url, host: p.host, dueAt: p.nextCrawlAt.toISOString() })),
    expiredReturned: taken.expired,
  }
}

/** Releases a lease early: its pages return to the pool at once. */
export async function releaseLeaseEarly(deps: LeaseDeps, leaseId: string): Promise<{ released: number }> {
  const released = await releaseLease(deps.pool, leaseId, new Date(deps.clock.nowMs()))
  if (released === 0) throw new NotFoundError(`no active lease ${leaseId} (completed, expired or unknown)`)
  return { released }
}

export async function schedulePreview(deps: LeaseDeps, options: { limit: number; until: Date | null }) {
  const rows = await upcomingCrawls(deps.pool, options)
  return {
    items: rows.map((r) => ({ id: r.id, url: r.url, host: r.host, dueAt: r.dueAt.toISOString(), crawlsPerDay: r.crawlsPerDay })),
  }
}
