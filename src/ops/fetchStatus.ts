import { z } from 'zod'

/**
 * HTTP status classes of reported fetches: the values of the status_class label of
 * recrawl_fetches_total and the keys of `fetchesByStatusClass` in GET /v1/stats. `error` is a fetch
 * that got no HTTP answer (a fetchError: timeout, DNS, connection, TLS, other), a failure of its own
 * kind; `none` is a crawl reported with neither an httpStatus nor a fetchError (the crawler did not say).
 */
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx', 'error', 'none'] as const

export type StatusClass = (typeof STATUS_CLASSES)[number]

/** A count per status class. */
export const statusClassCountsSchema = z
  .object(Object.fromEntries(STATUS_CLASSES.map((c) => [c, z.number().int()])) as Record<StatusClass, z.ZodNumber>)
  .meta({
    id: 'FetchesByStatusClass',
    description:
      'Crawl reports by the class of the httpStatus the crawler reported (error: a fetchError, no HTTP answer; none: reported with neither); the status_class label of recrawl_fetches_total.',
  })

export type StatusClassCounts = z.infer<typeof statusClassCountsSchema>

/** The class of a reported status (the API accepts 100…599); without one, a reported fetchError makes it `error`. */
export function statusClassOf(
  httpStatus: number | null | undefined,
  fetchError: string | null | undefined = null,
): StatusClass {
  if (httpStatus === null || httpStatus === undefined) return fetchError ? 'error' : 'none'
  if (httpStatus < 200) return '1xx'
  if (httpStatus < 300) return '2xx'
  if (httpStatus < 400) return '3xx'
  if (httpStatus < 500) return '4xx'
  return '5xx'
}

export function zeroStatusClassCounts(): StatusClassCounts {
  return { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, error: 0, none: 0 }
}

/** Failed fetches: no content seen (a status outside 200…399, or no HTTP answer at all). */
export const FAILED_STATUS_CLASSES: readonly StatusClass[] = ['1xx', '4xx', '5xx', 'error']
