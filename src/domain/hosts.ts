import type pg from 'pg'
import { deleteHost, getHost, listHosts, upsertHost } from '../store/hostsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import { InvalidInputError, NotFoundError } from './errors.ts'

/**
 * A host name as pages carry it (URL host: lower-case name, optional port). `path` names the
 * request field in the error.
 */
export function normalizeHostName(raw: string, path = '/params/host'): string {
  const invalid = () => new InvalidInputError(`${raw} is not a host name`, [{ path, message: 'not a host name' }])
  let parsed: URL
  try {
    parsed = new URL(`http://${raw}/`)
  } catch {
    throw invalid()
  }
  if (parsed.host === '' || parsed.pathname !== '/' || parsed.username || parsed.search || parsed.hash || /[/?#@]/.test(raw)) {
    throw invalid()
  }
  return parsed.host
}

export async function putHostLimits(
  pool: pg.Pool,
  rawHost: string,
  limits: { maxCrawlsPerDay: number | null; minDelaySeconds: number | null },
) {
  const host = normalizeHostName(rawHost)
  await withTransaction(pool, (c) => upsertHost(c, { host, ...limits }))
  return (await getHost(pool, host))!
}

export async function removeHostLimits(pool: pg.Pool, rawHost: string): Promise<void> {
  const host = normalizeHostName(rawHost)
  if (!(await withTransaction(pool, (c) => deleteHost(c, host)))) throw new NotFoundError(`host ${host} has no limits`)
}

export async function listHostLimits(pool: pg.Pool) {
  return { hosts: await listHosts(pool) }
}
