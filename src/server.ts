import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import type { Config } from './config.ts'
import { activeKeyCount, watchApiKeyChanges } from './domain/apiKeys.ts'
import { simulatedClock, systemClock, type Clock } from './domain/clock.ts'
import { isLoopbackHost } from './loopback.ts'
import { startOptimizerLoop } from './domain/optimizerLoop.ts'
import { startStatsSampler } from './ops/stats.ts'
import { createRandom } from './math/random.ts'
import { createLogger } from './ops/logger.ts'
import { openMigratedDatabase, retryWhileDatabaseUnavailable } from './store/open.ts'
import { MS_PER_MINUTE, MS_PER_SECOND } from './math/units.ts'

/** One stats sample per minute (the series' resolution); under a simulated clock, which runs fast, more often. */
const STATS_SAMPLE_MS = MS_PER_MINUTE
const SIMULATED_STATS_SAMPLE_MS = 5 * MS_PER_SECOND

/** The signals that close the service gracefully (Ctrl-C, `kill`, `docker stop`). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const
/** A stop signal this soon after the first is the same stop delivered twice, not a request to exit at once. */
const REPEATED_SIGNAL_WINDOW_MS = 2 * MS_PER_SECOND

/** Process entry of `start`: config → logger → database → app → listen, and a graceful close on signals. */
export async function startServer(config: Config): Promise<void> {
  const logger = createLogger(config)
  const db = await openMigratedDatabase(config, logger, 'service')
  const loopbackOnly = isLoopbackHost(config.host)
  const keys = await retryWhileDatabaseUnavailable(() => activeKeyCount(db), {
    waitSeconds: config.databaseStartWaitSeconds,
    logger,
    location: db.location,
  })
  if (keys === 0) {
    if (loopbackOnly) {
      logger.warn(
        `no API keys exist: requests without a key are accepted because the service listens on loopback (${config.host}) only; create keys with \`npm run cli -- create-key --role admin --name <name>\``,
      )
    } else {
      logger.warn(
        `no API keys exist and HOST=${config.host} is not loopback: every API request will be refused with 401 until a key is created (\`npm run cli -- create-key\`)`,
      )
    }
  } else {
    logger.info({ keys }, 'API keys required (Authorization: Bearer <key>)')
  }

  const random = createRandom(Date.now() >>> 0)
  // Simulated time starts at the epoch: pages registered before the first report are due at once.
  const clock: Clock = config.simulatedClock ? simulatedClock(0) : systemClock
  if (config.simulatedClock)
    logger.warn('SIMULATED_CLOCK=true: scheduling time follows reported crawl times and PUT /v1/clock (testing only)')
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
    keyChanges: (onChange) => watchApiKeyChanges(db, onChange),
    httpTimeouts: {
      requestMs: config.httpRequestTimeoutMs,
      headersMs: config.httpHeadersTimeoutMs,
      keepAliveMs: config.httpKeepAliveTimeoutMs,
    },
  }).catch(async (err: unknown) => {
    await db.close()
    throw err
  })

  const optimizerLoop = startOptimizerLoop(
    { pool: db.pool, clock, random, logger },
    { onOptimized: app.metrics.onOptimized },
  )
  const statsSampler = startStatsSampler(app.stats, {
    intervalMs: config.simulatedClock ? SIMULATED_STATS_SAMPLE_MS : STATS_SAMPLE_MS,
    logger,
  })

  const shutdown = async () => {
    await optimizerLoop.stop()
    statsSampler.stop()
    await app.close()
    await db.close()
  }
  let closingSignal: string | undefined
  const signals = closeWithGrace(
    { delay: config.shutdownGraceSeconds * MS_PER_SECOND, logger, skip: [...STOP_SIGNALS] },
    async ({ signal, err }) => {
      if (err) logger.error({ err }, 'closing after an error')
      else logger.info({ signal: signal ?? closingSignal }, 'closing')
      await shutdown()
    },
  )
  // SIGINT and SIGTERM are handled here rather than by close-with-grace, which exits at once on a second signal:
  // Ctrl-C under `npm start` delivers SIGINT twice (the terminal signals the whole process group, and npm
  // forwards its own copy), and the in-flight requests must still finish. A repeat within
  // REPEATED_SIGNAL_WINDOW_MS is that same stop; a later one is an operator insisting, and exits at once.
  let firstStopAtMs: number | null = null
  const onStopSignal = (signal: NodeJS.Signals) => {
    const nowMs = performance.now()
    if (firstStopAtMs === null) {
      firstStopAtMs = nowMs
      closingSignal = signal
      void signals.close()
    } else if (nowMs - firstStopAtMs > REPEATED_SIGNAL_WINDOW_MS) {
      logger.error({ signal }, `second ${signal} while closing: exiting now`)
      process.exit(1)
    }
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onStopSignal)

  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    // E.g. the port is taken: close the database properly (an embedded one is released) and report.
    signals.uninstall()
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onStopSignal)
    await shutdown()
    throw err
  }
}
