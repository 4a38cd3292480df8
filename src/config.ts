import { z } from 'zod'
import { MS_PER_DAY, MS_PER_HOUR, SECONDS_PER_DAY } from './math/units.ts'

/**
 * The service's whole configuration, parsed once from the environment (in server.ts / cli.ts).
 * Nothing else reads process.env. Every quantity carries its unit in its name. The defaults below are also
 * what callers without a configuration use (tests, tools: app.ts, store/db.ts).
 */

/** Postgres session limits, ms (DATABASE_*_TIMEOUT_MS); 0 = none. */
export const DEFAULT_DATABASE_TIMEOUTS = Object.freeze({
  connectMs: 5_000,
  statementMs: 30_000,
  lockMs: 10_000,
  idleInTransactionMs: 60_000,
})

/** How long the HTTP server waits for clients, ms (HTTP_*_TIMEOUT_MS). */
export const DEFAULT_HTTP_TIMEOUTS = Object.freeze({ requestMs: 30_000, headersMs: 10_000, keepAliveMs: 72_000 })

/** MAX_BATCH_ITEMS and BODY_LIMIT_BYTES. */
export const DEFAULT_MAX_BATCH_ITEMS = 5000
export const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024 * 1024

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

/**
 * The configuration, one field per environment variable: a field's variable is its name in upper snake case
 * (databasePoolSize ← DATABASE_POOL_SIZE). Config is what this schema makes of the environment.
 */
const configSchema = z.object({
  databaseUrl: z
    .string()
    .url()
    .optional()
    .describe('Postgres connection string. Unset: the embedded database (PGlite) under DATA_DIR.'),
  dataDir: z.string().min(1).default('./data').describe('Where the embedded database keeps its files.'),
  databasePoolSize: z.coerce.number().int().min(1).max(200).default(10),
  databaseConnectTimeoutMs: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(DEFAULT_DATABASE_TIMEOUTS.connectMs)
    .describe('Longest wait for a database connection: opening one, or a free one from the pool; then 503.'),
  databaseStatementTimeoutMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MS_PER_DAY)
    .default(DEFAULT_DATABASE_TIMEOUTS.statementMs)
    .describe(
      'Postgres statement_timeout; the client also stops waiting for an answer after it plus the connect timeout. 0 = none.',
    ),
  databaseLockTimeoutMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MS_PER_DAY)
    .default(DEFAULT_DATABASE_TIMEOUTS.lockMs)
    .describe('Postgres lock_timeout: longest wait for a row or advisory lock. 0 = none.'),
  databaseIdleInTransactionTimeoutMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MS_PER_DAY)
    .default(DEFAULT_DATABASE_TIMEOUTS.idleInTransactionMs)
    .describe(
      'Postgres idle_in_transaction_session_timeout: a session idle inside a transaction this long is ended. 0 = none.',
    ),
  databaseStartWaitSeconds: z.coerce
    .number()
    .min(0)
    .max(SECONDS_PER_DAY)
    .default(120)
    .describe('At start, how long to keep retrying while the database is unreachable before exiting.'),
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  maxBatchItems: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_MAX_BATCH_ITEMS),
  bodyLimitBytes: z.coerce.number().int().min(1024).default(DEFAULT_BODY_LIMIT_BYTES),
  shutdownGraceSeconds: z.coerce.number().min(0).default(10),
  httpRequestTimeoutMs: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(MS_PER_HOUR)
    .default(DEFAULT_HTTP_TIMEOUTS.requestMs)
    .describe(
      'A request (headers and body) must arrive completely within this; else 408 and the connection is closed.',
    ),
  httpHeadersTimeoutMs: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(MS_PER_HOUR)
    .default(DEFAULT_HTTP_TIMEOUTS.headersMs)
    .describe('The request headers must arrive within this (at most HTTP_REQUEST_TIMEOUT_MS).'),
  httpKeepAliveTimeoutMs: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(MS_PER_HOUR)
    .default(DEFAULT_HTTP_TIMEOUTS.keepAliveMs)
    .describe('An idle keep-alive connection is closed after this (above the usual 60 s of load balancers).'),
  rateLimitPerMinute: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      'Requests per minute per API key (or client address without keys) on /v1 routes, and per client address on /indexnow; 0 = no limit.',
    ),
  simulatedClock: booleanFromEnv
    .default(false)
    .describe('Testing only: scheduling time follows the crawl times reported by the crawlers.'),
})

/** The environment variable of a configuration field: databasePoolSize → DATABASE_POOL_SIZE. */
const variableOf = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()

const FIELDS = Object.keys(configSchema.shape) as (keyof typeof configSchema.shape)[]

/** Every environment variable the service reads (README "Configuration" documents each). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(FIELDS.map(variableOf))

export type Config = z.infer<typeof configSchema>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`)
    this.name = 'ConfigError'
  }
}

/** Parses the environment; lists every problem at once instead of failing on the first. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const input = Object.fromEntries(
    FIELDS.map((field) => {
      const value = env[variableOf(field)]
      return [field, value === '' ? undefined : value]
    }),
  )
  const parsed = configSchema.safeParse(input)
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const [field, ...rest] = i.path.map(String)
        return `${[variableOf(field ?? ''), ...rest].join('.')}: ${i.message}`
      }),
    )
  }
  const c = parsed.data
  if (c.httpHeadersTimeoutMs > c.httpRequestTimeoutMs) {
    throw new ConfigError([
      `HTTP_HEADERS_TIMEOUT_MS (${c.httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${c.httpRequestTimeoutMs})`,
    ])
  }
  return c
}
