import { z } from 'zod'

/**
 * Canonical page URLs (docs/api.md "Conventions"): every spelling of a page that the URL rules treat as
 * the same becomes one string, the page's identity. The WHATWG URL parser does the fixed part (scheme and
 * host lower-cased, IDN host names in punycode, IPv4 forms unified, default port dropped, `.` and `..`
 * segments resolved); the rules below do the rest, each switchable in the settings (`urls`).
 */

export const MAX_URL_LENGTH = 4096

/** A query parameter name, or a name prefix when it ends in `*`. */
const queryParameterPatternSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(
    /^[^&=#*\s]+\*?$/,
    'a parameter name, or a prefix followed by one *: no &, =, # or white space, and * only at the end',
  )

export const urlRulesSchema = z
  .strictObject({
    sortQueryParameters: z
      .boolean()
      .describe('Sort query parameters by name (a stable sort: parameters of one name keep their order).'),
    dropQueryParameters: z
      .array(queryParameterPatternSchema)
      .max(1000)
      .describe(
        'Query parameters to drop (tracking): exact names, or prefixes ending in *; matched ignoring ASCII case.',
      ),
    dropEmptyQuery: z.boolean().describe('Drop a `?` with nothing after it.'),
    normalizePercentEncoding: z
      .boolean()
      .describe(
        'In path and query: decode escapes of unreserved characters (A-Z a-z 0-9 - . _ ~), upper-case the hex of the others.',
      ),
    dropTrailingDotInHost: z.boolean().describe('`example.com.` is `example.com`.'),
    dropWww: z
      .boolean()
      .describe('Drop a leading `www.` label from the host (off by default: some sites serve other pages there).'),
    dropTrailingSlash: z
      .boolean()
      .describe('`/a/` is `/a` (off by default: some sites serve other pages there). The root path `/` stays.'),
    collapseSlashes: z.boolean().describe('`/a//b` is `/a/b` (off by default: some sites serve other pages there).'),
    lowercasePath: z
      .boolean()
      .describe(
        'Lower-case the path (off by default: paths are case-sensitive on most servers). The query keeps its case.',
      ),
  })
  .meta({
    id: 'UrlRules',
    description:
      'How a page URL is made canonical (docs/api.md "Conventions"). A change renames stored pages to their new canonical URL; ' +
      'a change that would merge two stored pages is refused (422).',
  })

export type UrlRules = z.infer<typeof urlRulesSchema>

/** Click identifiers and campaign tags that never select content. */
const DEFAULT_DROPPED_QUERY_PARAMETERS: readonly string[] = Object.freeze([
  'utm_*',
  'gclid',
  'fbclid',
  'msclkid',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'yclid',
  'twclid',
  'ttclid',
  'li_fat_id',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_ga',
  '_gl',
  '_hsenc',
  '_hsmi',
  'mkt_tok',
  'srsltid',
])

/**
 * Defaults: only rules under which two spellings name the same resource on any server that follows
 * RFC 3986 and common practice are on; rules that can merge distinct pages on some sites are off.
 */
export const DEFAULT_URL_RULES: UrlRules = Object.freeze({
  sortQueryParameters: true,
  dropQueryParameters: [...DEFAULT_DROPPED_QUERY_PARAMETERS],
  dropEmptyQuery: true,
  normalizePercentEncoding: true,
  dropTrailingDotInHost: true,
  dropWww: false,
  dropTrailingSlash: false,
  collapseSlashes: false,
  lowercasePath: false,
}) as UrlRules

/** A page URL in its canonical form and the host derived from it. */
interface CanonicalUrl {
  url: string
  host: string
}

/** The drop list of some rules, compiled once per rules object. */
interface QueryParameterFilter {
  names: ReadonlySet<string>
  prefixes: readonly string[]
}

const filters = new WeakMap<UrlRules, QueryParameterFilter>()

function filterOf(rules: UrlRules): QueryParameterFilter {
  let filter = filters.get(rules)
  if (!filter) {
    const names = new Set<string>()
    const prefixes: string[] = []
    for (const pattern of rules.dropQueryParameters) {
      const lower = pattern.toLowerCase()
      if (lower.endsWith('*')) prefixes.push(lower.slice(0, -1))
      else names.add(lower)
    }
    filter = { names, prefixes }
    filters.set(rules, filter)
  }
  return filter
}

function isDropped(name: string, filter: QueryParameterFilter): boolean {
  const key = normalizeEscapes(name).toLowerCase()
  return filter.names.has(key) || filter.prefixes.some((p) => key.startsWith(p))
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/
const HEX = /^[0-9A-Fa-f]$/

/**
 * RFC 3986 6.2.2.1 and 6.2.2.2: escapes of unreserved characters decoded, every other escape in upper-case
 * hex; a `%` that starts no escape stays as it is. A hex digit is not decoded right after such a `%` (or
 * `%` and one hex digit): `%2%63` would become the escape `%2c`.
 */
function normalizeEscapes(s: string): string {
  if (!s.includes('%')) return s
  let out = ''
  let i = 0
  while (i < s.length) {
    if (s[i] === '%' && HEX.test(s[i + 1] ?? '') && HEX.test(s[i + 2] ?? '')) {
      const hex = s.slice(i + 1, i + 3)
      const c = String.fromCharCode(Number.parseInt(hex, 16))
      const joinsStrayPercent = HEX.test(c) && (out.endsWith('%') || (out.at(-2) === '%' && HEX.test(out.at(-1)!)))
      out += UNRESERVED.test(c) && !joinsStrayPercent ? c : `%${hex.toUpperCase()}`
      i += 3
    } else {
      out += s[i]
      i++
    }
  }
  return out
}

/** The host name (no port) under the host rules; '' when nothing is left of it. */
function canonicalHostname(hostname: string, rules: UrlRules): string {
  let name = hostname
  if (rules.dropTrailingDotInHost) name = name.replace(/\.+$/, '')
  // `www.www.example.com` keeps its first label: dropping it would leave a name the rule applies to again.
  if (rules.dropWww && name.startsWith('www.')) {
    const rest = name.slice(4)
    if (rest.includes('.') && !rest.startsWith('www.')) name = rest
  }
  return name
}

/** Rounds of the path rules over the re-parsed path (a round changes it only where the parse resolved a dot segment). */
const MAX_PATH_PASSES = 4

function canonicalPath(pathname: string, rules: UrlRules): string {
  let path = pathname
  if (rules.normalizePercentEncoding) path = normalizeEscapes(path)
  if (rules.lowercasePath) {
    path = path.toLowerCase()
    if (rules.normalizePercentEncoding) path = normalizeEscapes(path)
  }
  if (rules.collapseSlashes) path = path.replace(/\/{2,}/g, '/')
  if (rules.dropTrailingSlash) path = path.replace(/\/+$/, '') || '/'
  return path
}

/** The query without its `?`, or null for none. `query` is the raw query, also without `?`. */
function canonicalQuery(query: string | null, rules: UrlRules): string | null {
  if (query === null) return null
  const normalized = rules.normalizePercentEncoding ? normalizeEscapes(query) : query
  const filter = filterOf(rules)
  const rebuild = rules.sortQueryParameters || filter.names.size > 0 || filter.prefixes.length > 0
  let result = normalized
  let droppedSome = false
  if (rebuild) {
    // Empty pieces (`a=1&&b=2`) name no parameter; a rebuilt query leaves them out.
    const pieces = normalized.split('&').filter((piece) => piece !== '')
    const kept = pieces.filter((piece) => !isDropped(nameOf(piece), filter))
    droppedSome = kept.length < pieces.length
    if (rules.sortQueryParameters) {
      const keyed = kept.map((piece) => ({ piece, name: nameOf(piece) }))
      keyed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      result = keyed.map((k) => k.piece).join('&')
    } else {
      result = kept.join('&')
    }
  }
  // A query emptied by dropping tracking parameters goes, so that the tagged URL meets the plain one.
  if (result === '' && (rules.dropEmptyQuery || droppedSome)) return null
  return result
}

const nameOf = (piece: string): string => {
  const eq = piece.indexOf('=')
  return eq < 0 ? piece : piece.slice(0, eq)
}

/**
 * The canonical form of a page URL under `rules`, or a reason when the input cannot name a page: an
 * absolute http(s) URL with a host and no credentials, at most MAX_URL_LENGTH characters before and after. The fragment is
 * always dropped. Idempotent: canonicalUrl(canonicalUrl(u).url) is canonicalUrl(u).
 */
export function canonicalUrl(raw: string, rules: UrlRules): CanonicalUrl | { error: string } {
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
  // Page URLs are stored, listed, logged and shown on the dashboard: a password in one would be too.
  if (parsed.username || parsed.password)
    return {
      error:
        'url carries credentials (user:password@), which recrawl would store and show: remove them and keep them in the crawler',
    }
  parsed.hash = ''
  // `search` is '' both for no query and for a bare `?`: the serialisation tells them apart.
  const queryStart = parsed.href.indexOf('?')
  const query = queryStart < 0 ? null : parsed.href.slice(queryStart + 1)

  const hostname = canonicalHostname(parsed.hostname, rules)
  if (hostname === '') return { error: 'url has no host' }
  const port = parsed.port ? `:${parsed.port}` : ''
  const search = canonicalQuery(query, rules)
  const build = (path: string): URL =>
    new URL(`${parsed.protocol}//${hostname}${port}${path}${search === null ? '' : `?${search}`}`)
  let result: URL
  try {
    result = build(canonicalPath(parsed.pathname, rules))
    // The parser may leave a dot segment that the path rules then expose (`//.a/.` collapses to `/.a/.`), and
    // parsing the result resolves it (`/.a/`): apply the rules again until the path stays as it is.
    for (let pass = 0; pass < MAX_PATH_PASSES; pass++) {
      const path = canonicalPath(result.pathname, rules)
      if (path === result.pathname) break
      result = build(path)
    }
  } catch {
    return { error: 'url has no valid host once canonical' }
  }
  if (result.href.length > MAX_URL_LENGTH)
    return { error: `url is longer than ${MAX_URL_LENGTH} characters once canonical` }
  return { url: result.href, host: result.host }
}

/**
 * A host name as pages carry it (the host of a canonical URL: the canonical host name, and the port when
 * it is not the default one of the page's scheme), or null when `raw` is not a host name (`example.com`,
 * `Example.COM.`, `[::1]:8080`; not `a/b`, `user@a`). A port given is kept: `example.com:80` is the host
 * of `https://example.com:80/`, while `http://example.com:80/` has the host `example.com`.
 */
export function canonicalHostName(raw: string, rules: UrlRules): string | null {
  let parsed: URL
  try {
    parsed = new URL(`http://${raw}/`)
  } catch {
    return null
  }
  if (
    parsed.host === '' ||
    parsed.pathname !== '/' ||
    parsed.username ||
    parsed.password ||
    parsed.search ||
    parsed.hash ||
    /[/?#@\\]/.test(raw)
  ) {
    return null
  }
  const hostname = canonicalHostname(parsed.hostname, rules)
  if (hostname === '') return null
  try {
    // A host name says no scheme: a port given is kept, 80 too (the host of an https URL on port 80).
    const port = parsed.port || new URL(`https://${raw}/`).port
    return new URL(`http://${hostname}/`).host + (port ? `:${port}` : '')
  } catch {
    return null
  }
}

/** The host part of a URL that is canonical already (canonicalUrl), or null when it cannot be parsed. */
export function hostOfUrl(url: string): string | null {
  try {
    return new URL(url).host
  } catch {
    return null
  }
}
