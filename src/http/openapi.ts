import { buildApp } from '../app.ts'
import { manualClock } from '../domain/clock.ts'
import { createRandom } from '../math/random.ts'
import type pg from 'pg'

/**
 * The OpenAPI document as the code generates it, serialised stably (committed as
 * openapi/openapi.json; a test fails when they differ). Building the app needs no database.
 */
export async function generateOpenApiJson(): Promise<string> {
  const app = await buildApp({
    pool: {} as pg.Pool,
    databaseKind: 'postgres',
    clock: manualClock(0),
    random: createRandom(1),
    maxBatchItems: 5000,
    bodyLimitBytes: 16 * 1024 * 1024,
    loopbackOnly: true,
  })
  try {
    return `${JSON.stringify(app.swagger(), null, 2)}\n`
  } finally {
    await app.close()
  }
}
