import { z } from 'zod'

/**
 * Bounds on the numbers the API accepts (docs/api.md "Input limits"), chosen so that no accepted value
 * can break another route: every rate, weight and product of them the optimiser, the estimators and
 * the stats queries form stays a normal double, far from overflow (1e308) and underflow (1e-308), and
 * every stored rate stays a meaningful one. A rate of 1e-9 per day is one crawl in 2.7 million years;
 * 1e9 per day is 11,574 a second.
 */

/** Smallest positive rate, per day (0 is allowed where a rate may be zero). */
export const MIN_POSITIVE_RATE_PER_DAY = 1e-9
/** Largest rate, per day: budgets, caps, bounds and change rates. */
export const MAX_RATE_PER_DAY = 1e9
/** Smallest positive importance (0 is allowed: the page's freshness does not count). */
export const MIN_POSITIVE_IMPORTANCE = 1e-9
/** Largest importance. */
export const MAX_IMPORTANCE = 1e9
/** Smallest positive time between two leased pages of a host, in seconds (the service keeps milliseconds). */
export const MIN_POSITIVE_DELAY_SECONDS = 0.001

const RATE_RANGE = `${MIN_POSITIVE_RATE_PER_DAY} to ${MAX_RATE_PER_DAY}`

/** A positive rate per day in [MIN_POSITIVE_RATE_PER_DAY, MAX_RATE_PER_DAY]. */
export function positiveRateSchema() {
  return z
    .number()
    .min(MIN_POSITIVE_RATE_PER_DAY, { error: `must be at least ${MIN_POSITIVE_RATE_PER_DAY} per day` })
    .max(MAX_RATE_PER_DAY, { error: `must be at most ${MAX_RATE_PER_DAY} per day` })
}

/** A rate per day that may be 0, else in [MIN_POSITIVE_RATE_PER_DAY, MAX_RATE_PER_DAY]. */
export function rateSchema() {
  return z
    .number()
    .min(0, { error: 'must be 0 or more' })
    .max(MAX_RATE_PER_DAY, { error: `must be at most ${MAX_RATE_PER_DAY} per day` })
    .refine((v) => v === 0 || v >= MIN_POSITIVE_RATE_PER_DAY, { error: `must be 0 or ${RATE_RANGE} per day` })
}

/** An importance: 0, or in [MIN_POSITIVE_IMPORTANCE, MAX_IMPORTANCE]. */
export function importanceSchema() {
  return z
    .number()
    .min(0, { error: 'must be 0 or more' })
    .max(MAX_IMPORTANCE, { error: `must be at most ${MAX_IMPORTANCE}` })
    .refine((v) => v === 0 || v >= MIN_POSITIVE_IMPORTANCE, {
      error: `must be 0 or ${MIN_POSITIVE_IMPORTANCE} to ${MAX_IMPORTANCE}`,
    })
}
