import { buildApp } from '../app.ts'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_MAX_BATCH_ITEMS } from '../config.ts'
import { manualClock, simulatedClock } from '../domain/clock.ts'
import { createRandom } from '../math/random.ts'
import type pg from 'pg'

/**
 * The OpenAPI document as the code generates it, serialised stably (committed as
 * openapi/openapi.json; a test fails when they differ). Building the app needs no database.
 * `simulatedClock` adds the routes of SIMULATED_CLOCK=true (not in the committed document).
 */
export async function generateOpenApiJson(options: { simulatedClock?: boolean } = {}): Promise<string> {
  const app = await buildApp({
    pool: {} as pg.Pool,
    databaseKind: 'postgres',
    clock: options.simulatedClock ? simulatedClock(0) : manualClock(0),
    random: createRandom(1),
    maxBatchItems: DEFAULT_MAX_BATCH_ITEMS,
    bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
    loopbackOnly: true,
  })
  try {
    return `${JSON.stringify(app.swagger(), null, 2)}\n`
  } finally {
    await app.close()
  }
}
