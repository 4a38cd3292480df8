import { z } from 'zod'

/**
 * HTTP status classes of reported fetches: the values of the status_class label of
 * recrawl_fetches_total and the keys of `fetchesByStatusClass` in GET /v1/stats. `none` is a crawl
 * reported without an httpStatus (the crawler did not say, or the fetch got no response at all).
 */
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx', 'none'] as const

export type StatusClass = (typeof STATUS_CLASSES)[number]

/** A count per status class. */
export const statusClassCountsSchema = z
  .object(Object.fromEntries(STATUS_CLASSES.map((c) => [c, z.number().int()])) as Record<StatusClass, z.ZodNumber>)
  .describe(
    'Crawl reports by the class of the httpStatus the crawler reported (none: reported without one); the status_class label of recrawl_fetches_total.',
  )

export type StatusClassCounts = z.infer<typeof statusClassCountsSchema>

/** The class of a reported status (the API accepts 100…599). */
export function statusClassOf(httpStatus: number | null | undefined): StatusClass {
  if (httpStatus === null || httpStatus === undefined) return 'none'
  if (httpStatus < 200) return '1xx'
  if (httpStatus < 300) return '2xx'
  if (httpStatus < 400) return '3xx'
  if (httpStatus < 500) return '4xx'
  return '5xx'
}

export function zeroStatusClassCounts(): StatusClassCounts {
  return { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, none: 0 }
}
