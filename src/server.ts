import closeWithGrace from 'close-with-grace'
import pino, { type Logger } from 'pino'
import { buildApp } from './app.ts'
import type { Config } from './config.ts'
import { activeKeyCount } from './domain/apiKeys.ts'
import { simulatedClock, systemClock, type Clock } from './domain/clock.ts'
import { isLoopbackHost } from './http/auth.ts'
import { startOptimizerLoop } from './domain/optimizerLoop.ts'
import { startStatsSampler } from './ops/stats.ts'
import { createRandom } from './math/random.ts'
import { openDatabase, type Database } from './store/db.ts'
import { migrate } from './store/migrate.ts'

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'recrawl' } })
}

/** Opens the configured database (embedded when DATABASE_URL is unset) and applies pending migrations. */
export async function openMigratedDatabase(config: Config, logger: Logger): Promise<Database> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize, logger })
  logger.info(
    { database: db.kind, location: db.location },
    db.kind === 'embedded'
      ? `using the embedded database (PGlite, one connection) with its data in ${db.location}; set DATABASE_URL to use a Postgres server`
      : `using Postgres at ${db.location}`,
  )
  await migrate(db.pool, {
    onApplied: (m, ms) => logger.info({ migration: m.version, name: m.name, durationMs: Math.round(ms) }, 'migration applied'),
  })
  return db
}

/** Process entry of `start`: config → logger → database → app → listen, and a graceful close on signals. */
export async function startServer(config: Config): Promise<void> {
  const logger = createLogger(config)
  const db = await openMigratedDatabase(config, logger)
  const loopbackOnly = isLoopbackHost(config.host)
  const keys = await activeKeyCount(db.pool)
  if (keys === 0) {
    if (loopbackOnly) {
      logger.warn(`no API keys exist: requests without a key are accepted because the service listens on loopback (${config.host}) only; create keys with \`npm run cli -- create-key --role admin --name <name>\``)
    } else {
      logger.warn(`no API keys exist and HOST=${config.host} is not loopback: every API request will be refused with 401 until a key is created (\`npm run cli -- create-key\`)`)
    }
  } else {
    logger.info({ keys }, 'API keys required (Authorization: Bearer <key>)')
  }

  const random = createRandom(Date.now() >>> 0)
  // Simulated time starts at the epoch: pages registered before the first report are due at once.
  const clock: Clock = config.simulatedClock ? simulatedClock(0) : systemClock
  if (config.simulatedClock) logger.warn('SIMULATED_CLOCK=true: scheduling time follows reported crawl times and PUT /v1/clock (testing only)')
  const app = await buildApp({
    pool: db.pool,
    databaseKind: db.kind,
    clock,
    random,
    logger,
    maxBatchItems: config.maxBatchItems,
    bodyLimitBytes: config.bodyLimitBytes,
    loopbackOnly,
    rateLimitPerMinute: config.rateLimitPerMinute,
  })

  const optimizerLoop = startOptimizerLoop({ pool: db.pool, clock, random, logger }, { onOptimized: app.metrics.onOptimized })
  // One stats sample per minute for the dashboard's time series; simulated time runs fast, so sample more often.
  const statsSampler = startStatsSampler(app.stats, { intervalMs: config.simulatedClock ? 5_000 : 60_000, logger })

  closeWithGrace({ delay: config.shutdownGraceSeconds * 1000, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'closing after an error')
    else logger.info({ signal }, 'closing')
    await optimizerLoop.stop()
    statsSampler.stop()
    await app.close()
    await db.close()
  })

  await app.listen({ host: config.host, port: config.port })
}
