/**
 * Which requests RATE_LIMIT_PER_MINUTE limits (src/app.ts) and the OpenAPI document declares the limit on: the /v1
 * routes, counted per API key (or client address without one), and the open IndexNow routes, counted per client
 * address (they take no API key, so a header must not open a bucket of its own).
 */

/** `url` is a request URL (with its query) or a route path. */
export function isOpenRateLimited(url: string): boolean {
  return url === '/indexnow' || url.startsWith('/indexnow?')
}

export function isRateLimited(url: string): boolean {
  return url.startsWith('/v1/') || isOpenRateLimited(url)
}
