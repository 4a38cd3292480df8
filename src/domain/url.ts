/** A page URL in its canonical form and the host derived from it. */
export interface NormalizedUrl {
  url: string
  host: string
}

export const MAX_URL_LENGTH = 4096

/**
 * Canonical form (API.md): absolute http(s) URL, scheme and host lower-cased, default port and
 * fragment dropped (the WHATWG URL parser does the first three). Returns a reason when the input
 * cannot name a page.
 */
export function normalizeUrl(raw: string): NormalizedUrl | { error: string } {
  if (raw.length > MAX_URL_LENGTH) return { error: `url is longer than ${MAX_URL_LENGTH} characters` }
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    return { error: 'url is not an absolute URL' }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { error: `url scheme must be http or https, not ${parsed.protocol.replace(':', '')}` }
  }
  if (!parsed.hostname) return { error: 'url has no host' }
  parsed.hash = ''
  return { url: parsed.href, host: parsed.host }
}
