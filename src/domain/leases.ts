import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import {
  expireLeases,
  grantLease,
  lockDuePages,
  lockHostSpacing,
  releaseLease,
  setHostNextLeaseAt,
  upcomingCrawls,
} from '../store/leasesRepo.ts'
import { withTransaction } from '../store/transaction.ts'
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
  /** Leases of other workers that had expired and were returned to the pool by this call. */
  expiredReturned: number
}

/** Candidates locked per page asked for: room to skip pages of hosts that must wait (politeness). */
const OVERSCAN = 4

/**
 * Hands out due pages as one lease (API.md "Schedule"): expired leases return to the pool first;
 * due, unleased pages are locked most overdue first with SKIP LOCKED, so concurrent callers never
 * get the same page; a host with `minDelaySeconds` gets at most one page per call and per delay
 * (its `next_lease_at` row is locked while deciding, so two callers cannot both use the slot).
 */
export async function takeLease(deps: LeaseDeps, request: LeaseRequest): Promise<LeaseGrant> {
  const nowMs = deps.clock.nowMs()
  const now = new Date(nowMs)
  return withTransaction(deps.pool, async (client) => {
    const expiredReturned = await expireLeases(client, now)
    const candidates = await lockDuePages(client, {
      now,
      limit: request.limit * OVERSCAN,
      hosts: request.hosts && request.hosts.length > 0 ? [...request.hosts] : null,
    })
    const hosts = [...new Set(candidates.map((c) => c.host))]
    const spacing = await lockHostSpacing(client, hosts)
    const delayOf = new Map(spacing.locked.map((h) => [h.host, h]))
    const hostUpdates: { host: string; nextLeaseAt: string }[] = []
    const chosen: typeof candidates = []
    for (const c of candidates) {
      if (chosen.length >= request.limit) break
      if (spacing.busy.has(c.host)) continue
      const politeness = delayOf.get(c.host)
      if (politeness) {
        if (politeness.nextLeaseAt !== null && politeness.nextLeaseAt.getTime() > nowMs) continue
        const nextLeaseAt = new Date(nowMs + politeness.minDelaySeconds * 1000)
        politeness.nextLeaseAt = nextLeaseAt
        hostUpdates.push({ host: c.host, nextLeaseAt: nextLeaseAt.toISOString() })
      }
      chosen.push(c)
    }
    const leaseId = randomUUID()
    const expiresAt = new Date(nowMs + request.leaseSeconds * 1000)
    await grantLease(client, { ids: chosen.map((c) => c.id), leaseId, worker: request.worker, expiresAt })
    await setHostNextLeaseAt(client, hostUpdates)
    return {
      leaseId,
      expiresAt: expiresAt.toISOString(),
      pages: chosen.map((c) => ({ id: c.id, url: c.url, host: c.host, dueAt: c.nextCrawlAt.toISOString() })),
      expiredReturned,
    }
  })
}

/** Releases a lease early: its pages return to the pool at once. */
export async function releaseLeaseEarly(deps: LeaseDeps, leaseId: string): Promise<{ released: number }> {
  const released = await withTransaction(deps.pool, (client) => releaseLease(client, leaseId))
  if (released === 0) throw new NotFoundError(`no active lease ${leaseId} (completed, expired or unknown)`)
  return { released }
}

export async function schedulePreview(deps: LeaseDeps, options: { limit: number; until: Date | null }) {
  const rows = await upcomingCrawls(deps.pool, options)
  return {
    items: rows.map((r) => ({ id: r.id, url: r.url, host: r.host, dueAt: r.dueAt.toISOString(), crawlsPerDay: r.crawlsPerDay })),
  }
}
