import type { Logger } from 'pino'
import type { Config } from '../config.ts'
import { openDatabase, type Database, type DatabaseTimeouts } from './db.ts'
import type { OwnerPurpose } from './embedded.ts'
import { migrate, SchemaNewerThanCodeError } from './migrate.ts'
import { isDatabaseUnavailable } from './transaction.ts'
import { MS_PER_SECOND } from '../math/units.ts'

/** The Postgres session limits of the configuration (DATABASE_*_TIMEOUT_MS). */
function databaseTimeouts(
  config: Pick<
    Config,
    | 'databaseConnectTimeoutMs'
    | 'databaseStatementTimeoutMs'
    | 'databaseLockTimeoutMs'
    | 'databaseIdleInTransactionTimeoutMs'
  >,
): DatabaseTimeouts {
  return {
    connectMs: config.databaseConnectTimeoutMs,
    statementMs: config.databaseStatementTimeoutMs,
    lockMs: config.databaseLockTimeoutMs,
    idleInTransactionMs: config.databaseIdleInTransactionTimeoutMs,
  }
}

/** A short name for why the database is unreachable: the error code, else the message (an AggregateError's first inner one). */
function unavailableReason(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] }
  if (typeof e.code === 'string') return e.code
  if (Array.isArray(e.errors) && e.errors.length > 0) return unavailableReason(e.errors[0])
  return typeof e.message === 'string' && e.message !== '' ? e.message : 'unknown error'
}

/** Pauses between two attempts to reach the database at start: doubling from 2 × this, to at most the max. */
const START_RETRY_BASE_DELAY_MS = 250
const START_RETRY_MAX_DELAY_MS = 5_000

/**
 * Runs `attempt` until it succeeds, retrying while the database is unreachable (refused, reset,
 * starting up, timed out) for at most `waitSeconds` in all, with a log line per failed attempt.
 * Any other error (wrong password, unknown database, a failing migration) is thrown at once.
 */
export async function retryWhileDatabaseUnavailable<T>(
  attempt: () => Promise<T>,
  options: { waitSeconds: number; logger: Logger; location: string },
): Promise<T> {
  const deadlineMs = performance.now() + options.waitSeconds * MS_PER_SECOND
  for (let n = 1; ; n++) {
    try {
      return await attempt()
    } catch (err) {
      // A database that does not exist at start is a configuration error, said at once; once running, the
      // same error (the database was dropped) is an outage, answered 503.
      if (!isDatabaseUnavailable(err) || (err as { code?: unknown }).code === '3D000') throw err
      const leftMs = deadlineMs - performance.now()
      const reason = unavailableReason(err)
      if (leftMs <= 0) {
        throw new Error(
          options.waitSeconds > 0
            ? `the database at ${options.location} is still unreachable (${reason}) after ${options.waitSeconds} s (DATABASE_START_WAIT_SECONDS); giving up`
            : `the database at ${options.location} is unreachable (${reason})`,
          { cause: err },
        )
      }
      const delayMs = Math.min(leftMs, START_RETRY_MAX_DELAY_MS, START_RETRY_BASE_DELAY_MS * 2 ** n)
      options.logger.warn(
        { attempt: n, reason, retryInMs: Math.round(delayMs) },
        `waiting for the database at ${options.location}: unreachable (${reason}); attempt ${n} failed, retrying in ${(delayMs / MS_PER_SECOND).toFixed(1)} s ` +
          `(gives up ${Math.ceil(leftMs / MS_PER_SECOND)} s from now, DATABASE_START_WAIT_SECONDS)`,
      )
      await new Promise((r) => setTimeout(r, delayMs))
    }
  }
}

/**
 * Opens the configured database (embedded when DATABASE_URL is unset) and applies pending migrations,
 * waiting for a database that is not reachable yet (DATABASE_START_WAIT_SECONDS). Refuses a database whose
 * schema is newer than this code (SchemaNewerThanCodeError). A `command` reaches an embedded database
 * through the service that owns it, if one runs.
 */
export async function openMigratedDatabase(
  config: Pick<
    Config,
    | 'databaseUrl'
    | 'dataDir'
    | 'databasePoolSize'
    | 'databaseStartWaitSeconds'
    | 'databaseConnectTimeoutMs'
    | 'databaseStatementTimeoutMs'
    | 'databaseLockTimeoutMs'
    | 'databaseIdleInTransactionTimeoutMs'
  >,
  logger: Logger,
  purpose: OwnerPurpose,
  onApplied?: (version: string) => void,
): Promise<Database> {
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    logger,
    purpose,
    timeouts: databaseTimeouts(config),
  })
  logger.info(
    { database: db.kind, location: db.location },
    db.kind === 'embedded'
      ? `using the embedded database (PGlite, one connection) with its data in ${db.location}; set DATABASE_URL to use a Postgres server`
      : `using Postgres at ${db.location}`,
  )
  try {
    await retryWhileDatabaseUnavailable(
      () =>
        migrate(db.pool, {
          onApplied: (m, ms) => {
            logger.info({ migration: m.version, name: m.name, durationMs: Math.round(ms) }, 'migration applied')
            onApplied?.(m.version)
          },
        }),
      // A service waits for its database; a command says at once that it cannot reach it.
      { waitSeconds: purpose === 'service' ? config.databaseStartWaitSeconds : 0, logger, location: db.location },
    )
  } catch (err) {
    // A command reports the failure in its own one line.
    if (purpose === 'service') {
      if (err instanceof SchemaNewerThanCodeError)
        logger.fatal({ unknownMigrations: err.unknownMigrations }, err.message)
      else logger.fatal({ err }, 'cannot use the database')
    }
    await db.close().catch(() => {})
    throw err
  }
  return db
}
