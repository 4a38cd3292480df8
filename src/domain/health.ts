/**
 * What the health routes ask of the database: whether it is fully migrated, and whether an error means that
 * it cannot be reached or used (the HTTP layer answers those with 503 and Retry-After).
 */
import { pendingMigrations } from '../store/migrate.ts'
import type { DomainDeps } from './deps.ts'

export { isDatabaseUnavailable } from '../store/transaction.ts'

/** The migrations not applied yet, by name (none: the database is ready). */
export async function readiness(deps: Pick<DomainDeps, 'pool'>): Promise<{ pendingMigrations: string[] }> {
  return { pendingMigrations: await pendingMigrations(deps.pool) }
}
