import { z } from 'zod'

/**
 * The service's whole configuration, parsed once from the environment (in server.ts / cli.ts).
 * Nothing else reads process.env. Every quantity carries its unit in its name.
 */
const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

export const configSchema = z.object({
  DATABASE_URL: z
    .string()
    .url()
    .optional()
    .describe('Postgres connection string. Unset: the embedded database (PGlite) under DATA_DIR.'),
  DATA_DIR: z.string().min(1).default('./data').describe('Where the embedded database keeps its files.'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_BATCH_ITEMS: z.coerce.number().int().min(1).max(100_000).default(5000),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(16 * 1024 * 1024),
  ALLOW_UNAUTHENTICATED: booleanFromEnv
    .optional()
    .describe('Override: accept requests without a key even when keys exist (never on a non-loopback HOST).'),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(10),
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

export interface Config {
  databaseUrl: string | undefined
  dataDir: string
  databasePoolSize: number
  host: string
  port: number
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  maxBatchItems: number
  bodyLimitBytes: number
  allowUnauthenticated: boolean | undefined
  shutdownGraceSeconds: number
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
  const cleaned = Object.fromEntries(
    Object.keys(configSchema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]),
  )
  const parsed = configSchema.safeParse(cleaned)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))
  }
  const c = parsed.data
  return {
    databaseUrl: c.DATABASE_URL,
    dataDir: c.DATA_DIR,
    databasePoolSize: c.DATABASE_POOL_SIZE,
    host: c.HOST,
    port: c.PORT,
    logLevel: c.LOG_LEVEL,
    maxBatchItems: c.MAX_BATCH_ITEMS,
    bodyLimitBytes: c.BODY_LIMIT_BYTES,
    allowUnauthenticated: c.ALLOW_UNAUTHENTICATED,
    shutdownGraceSeconds: c.SHUTDOWN_GRACE_SECONDS,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    simulatedClock: c.SIMULATED_CLOCK,
  }
}
