import type pg from 'pg'
import type { Logger } from 'pino'
import type { Random } from '../math/random.ts'
import type { Clock } from './clock.ts'

/**
 * What every use case takes as its first argument: the database pool, the injected clock and random
 * source, and a logger when there is one. A use case that needs less takes a Pick of it, so any caller
 * holding the whole object (the routes' context, the optimiser loop, a test) passes it as is.
 */
export interface DomainDeps {
  pool: pg.Pool
  clock: Clock
  random: Random
  logger?: Logger | undefined
}
