import { z } from 'zod'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_HTTP_TIMEOUTS, DEFAULT_MAX_BATCH_ITEMS } from './app.ts'
import { DEFAULT_DATABASE_TIMEOUTS } from './store/db.ts'
import { MS_PER_DAY, MS_PER_HOUR, SECONDS_PER_DAY } from './math/units.ts'

/**
 * The service's whole configuration, parsed once from the environment (in server.ts / cli.ts).
 * Nothing else reads process.env. Every quantity carries its unit in its name.
 */
const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

const configSchema = z.object({
  DATABASE_URL: z
    .string()
    .url()
    .optional()
    .describe('Postgres connection string. Unset: the embedded database (PGlite) under DATA_DIR.'),
  DATA_DIR: z.string().min(1).default('./data').describe('Where the embedded database keeps its files.'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(DEFAULT_DATABASE_TIMEOUTS.connectMs)
    .describe('Longest wait for a database connection: opening one, or a free one from the pool; then 503.'),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(MS_PER_DAY)
    .default(DEFAULT_DATABASE_TIMEOUTS.statementMs)
    .describe(
      'Postgres statement_timeout; the client also stops waiting for an answer after it plus the connect timeout. 0 = none.',
    ),
  DATABASE_LOCK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(MS_PER_DAY)
    .default(DEFAULT_DATABASE_TIMEOUTS.lockMs)
    .describe('Postgres lock_timeout: longest wait for a row or advisory lock. 0 = none.'),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(MS_PER_DAY)
    .default(DEFAULT_DATABASE_TIMEOUTS.idleInTransactionMs)
    .describe(
      'Postgres idle_in_transaction_session_timeout: a session idle inside a transaction this long is ended. 0 = none.',
    ),
  DATABASE_START_WAIT_SECONDS: z.coerce
    .number()
    .min(0)
    .max(SECONDS_PER_DAY)
    .default(120)
    .describe('At start, how long to keep retrying while the database is unreachable before exiting.'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_BATCH_ITEMS: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_MAX_BATCH_ITEMS),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_BODY_LIMIT_BYTES),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(10),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(MS_PER_HOUR)
    .default(DEFAULT_HTTP_TIMEOUTS.requestMs)
    .describe(
      'A request (headers and body) must arrive completely within this; else 408 and the connection is closed.',
    ),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(MS_PER_HOUR)
    .default(DEFAULT_HTTP_TIMEOUTS.headersMs)
    .describe('The request headers must arrive within this (at most HTTP_REQUEST_TIMEOUT_MS).'),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(MS_PER_HOUR)
    .default(DEFAULT_HTTP_TIMEOUTS.keepAliveMs)
    .describe('An idle keep-alive connection is closed after this (above the usual 60 s of load balancers).'),
  RATE_LIMIT_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('Requests per minute per API key (or client address without keys) on /v1 routes; 0 = no limit.'),
  SIMULATED_CLOCK: booleanFromEnv
    .default(false)
    .describe('Testing only: scheduling time follows the crawl times reported by the crawlers.'),
})

/** Every environment variable the service reads (README "Configuration" documents each). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(configSchema.shape))

export interface Config {
  databaseUrl: string | undefined
  dataDir: string
  databasePoolSize: number
  databaseConnectTimeoutMs: number
  databaseStatementTimeoutMs: number
  databaseLockTimeoutMs: number
  databaseIdleInTransactionTimeoutMs: number
  databaseStartWaitSeconds: number
  host: string
  port: number
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  maxBatchItems: number
  bodyLimitBytes: number
  shutdownGraceSeconds: number
  httpRequestTimeoutMs: number
  httpHeadersTimeoutMs: number
  httpKeepAliveTimeoutMs: number
  rateLimitPerMinute: number
  simulatedClock: boolean
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`)
    this.name = 'ConfigError'
  }
}

/** Parses the environment; lists every problem at once instead of failing on the first. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(CONFIG_VARIABLES.map((k) => [k, env[k] === '' ? undefined : env[k]]))
  const parsed = configSchema.safeParse(cleaned)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))
  }
  const c = parsed.data
  if (c.HTTP_HEADERS_TIMEOUT_MS > c.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError([
      `HTTP_HEADERS_TIMEOUT_MS (${c.HTTP_HEADERS_TIMEOUT_MS}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${c.HTTP_REQUEST_TIMEOUT_MS})`,
    ])
  }
  return {
    databaseUrl: c.DATABASE_URL,
    dataDir: c.DATA_DIR,
    databasePoolSize: c.DATABASE_POOL_SIZE,
    databaseConnectTimeoutMs: c.DATABASE_CONNECT_TIMEOUT_MS,
    databaseStatementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseLockTimeoutMs: c.DATABASE_LOCK_TIMEOUT_MS,
    databaseIdleInTransactionTimeoutMs: c.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    databaseStartWaitSeconds: c.DATABASE_START_WAIT_SECONDS,
    host: c.HOST,
    port: c.PORT,
    logLevel: c.LOG_LEVEL,
    maxBatchItems: c.MAX_BATCH_ITEMS,
    bodyLimitBytes: c.BODY_LIMIT_BYTES,
    shutdownGraceSeconds: c.SHUTDOWN_GRACE_SECONDS,
    httpRequestTimeoutMs: c.HTTP_REQUEST_TIMEOUT_MS,
    httpHeadersTimeoutMs: c.HTTP_HEADERS_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: c.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    simulatedClock: c.SIMULATED_CLOCK,
  }
}
