import type pg from 'pg'
import type { Clock } from '../domain/clock.ts'
import type { Random } from '../math/random.ts'

/** What route plugins get: the use cases' dependencies and the HTTP limits. */
export interface AppContext {
  pool: pg.Pool
  clock: Clock
  random: Random
  maxBatchItems: number
}
