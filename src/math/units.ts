/**
 * Time units, in one place. Rates in recrawl are per day (changesPerDay, crawlsPerDay); timestamps are
 * epoch milliseconds; intervals in formulas are days.
 */
export const MS_PER_SECOND = 1000
export const SECONDS_PER_MINUTE = 60
const MINUTES_PER_HOUR = 60
export const HOURS_PER_DAY = 24
export const SECONDS_PER_HOUR = MINUTES_PER_HOUR * SECONDS_PER_MINUTE
export const SECONDS_PER_DAY = HOURS_PER_DAY * SECONDS_PER_HOUR
export const MINUTES_PER_DAY = HOURS_PER_DAY * MINUTES_PER_HOUR
export const MS_PER_MINUTE = SECONDS_PER_MINUTE * MS_PER_SECOND
export const MS_PER_HOUR = SECONDS_PER_HOUR * MS_PER_SECOND
export const MS_PER_DAY = SECONDS_PER_DAY * MS_PER_SECOND
