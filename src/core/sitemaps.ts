/**
 * Sitemap documents (sitemaps.org protocol 0.9) as crawlers fetched them (gunzipped by src/domain/signals.ts), parsed as a stream
 * with saxes (no DTD: a DOCTYPE is refused, so no entity is ever declared or expanded, external or internal), and
 * held to the protocol's limits (50,000 entries, 50 MB uncompressed). Each <url> entry's <lastmod> becomes a change
 * signal (docs/api.md "Sitemaps"); a sitemap index lists the sitemaps to fetch next. Pure: no I/O.
 */
import { SaxesParser } from 'saxes'
import { PayloadTooLargeError, UnprocessableError } from './errors.ts'
import { canonicalUrl, type UrlRules } from './url.ts'
import { MS_PER_MINUTE } from '../math/units.ts'

/** The protocol's limits: entries per document, and its size uncompressed. */
export const SITEMAP_MAX_ENTRIES = 50_000
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024

/**
 * A document of at least this many entries that all carry one lastmod has been stamped with its own build time
 * ("lastmod is the build time"): its lastmods claim nothing about the pages.
 */
const SITEMAP_BUILD_TIME_MIN_ENTRIES = 5

interface SitemapEntry {
  url: string
  /** <lastmod>, epoch ms; null when absent. */
  lastModifiedMs: number | null
}

interface ParsedSitemap {
  kind: 'urlset' | 'sitemapindex'
  /** Entries on the sitemap's host (pages of a urlset, sitemaps of an index). */
  entries: SitemapEntry[]
  /** Entries for other hosts than the sitemap's (the protocol forbids them): dropped. */
  crossHost: number
  /** Entries whose <loc> is not a URL the service can store, or whose <lastmod> is not a W3C datetime: dropped. */
  invalid: number
  /** Every entry's lastmod is one time: the document's build time, not a change time. */
  lastmodIsBuildTime: boolean
}

/**
 * W3C datetime as sitemaps use it: YYYY, YYYY-MM, YYYY-MM-DD, or a date and time with minutes, optional seconds and
 * fraction, and a zone (Z or ±hh:mm). A date without time is its midnight UTC. Returns epoch ms or null.
 */
export function readW3cDatetime(value: string): number | null {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2}))?)?)?$/.exec(
    value.trim(),
  )
  if (!m) return null
  const [, y, mo, d, h, mi, s, frac, zone] = m
  const month = mo === undefined ? 1 : Number(mo)
  const day = d === undefined ? 1 : Number(d)
  if (month < 1 || month > 12 || day < 1 || day > 31) return null
  const hours = h === undefined ? 0 : Number(h)
  const minutes = mi === undefined ? 0 : Number(mi)
  const seconds = s === undefined ? 0 : Number(s)
  if (hours > 23 || minutes > 59 || seconds > 60) return null
  const ms = frac === undefined ? 0 : Math.round(Number(`0.${frac}`) * 1000)
  let t = Date.UTC(Number(y), month - 1, day, hours, minutes, seconds, ms)
  if (zone !== undefined && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1
    t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * MS_PER_MINUTE
  }
  // A day past the month's end (2026-02-30) rolls into the next month: not a date.
  const valid = new Date(Date.UTC(Number(y), month - 1, day)).getUTCMonth() === month - 1
  return valid && Number.isFinite(t) ? t : null
}

/**
 * Parses a sitemap or sitemap index fetched from `sitemapUrl` (canonical). Malformed XML, a DOCTYPE, an unknown root
 * element → UnprocessableError; more than SITEMAP_MAX_ENTRIES entries → PayloadTooLargeError. Nothing is kept of a
 * refused document.
 */
export function parseSitemap(text: string, sitemapHost: string, urlRules: UrlRules): ParsedSitemap {
  const parser = new SaxesParser({ position: false })
  const path: string[] = []
  let kind: ParsedSitemap['kind'] | null = null
  let loc: string | null = null
  let lastmod: string | null = null
  let textBuffer = ''
  let count = 0
  const result: ParsedSitemap = { kind: 'urlset', entries: [], crossHost: 0, invalid: 0, lastmodIsBuildTime: false }
  const entryTag = () => (kind === 'urlset' ? 'url' : 'sitemap')
  parser.on('doctype', () => {
    throw new UnprocessableError('a sitemap has no DOCTYPE (no entity declarations are accepted)')
  })
  parser.on('opentag', (tag) => {
    const name = localName(tag.name)
    if (path.length === 0) {
      if (name !== 'urlset' && name !== 'sitemapindex')
        throw new UnprocessableError(`the root element is <${tag.name}>, not <urlset> or <sitemapindex>`)
      kind = name
    }
    path.push(name)
    if (path.length === 2 && name === entryTag()) {
      loc = null
      lastmod = null
      if (++count > SITEMAP_MAX_ENTRIES)
        throw new PayloadTooLargeError(
          `the sitemap has more than ${SITEMAP_MAX_ENTRIES} entries (the protocol's limit)`,
        )
    }
    textBuffer = ''
  })
  parser.on('text', (t) => {
    if (path.length === 3) textBuffer += t
  })
  parser.on('cdata', (t) => {
    if (path.length === 3) textBuffer += t
  })
  parser.on('closetag', () => {
    const name = path.pop()!
    if (path.length === 2) {
      if (name === 'loc') loc = textBuffer.trim()
      else if (name === 'lastmod') lastmod = textBuffer.trim()
    } else if (path.length === 1 && name === entryTag()) {
      addEntry(result, loc, lastmod, sitemapHost, urlRules)
    }
    textBuffer = ''
  })
  try {
    parser.write(text).close()
  } catch (err) {
    if (err instanceof UnprocessableError || err instanceof PayloadTooLargeError) throw err
    throw new UnprocessableError(`the sitemap is not well-formed XML: ${(err as Error).message.slice(0, 200)}`)
  }
  if (kind === null) throw new UnprocessableError('the sitemap is empty')
  result.kind = kind
  result.lastmodIsBuildTime = isBuildTime(result.entries)
  return result
}

function localName(name: string): string {
  const colon = name.indexOf(':')
  return colon === -1 ? name : name.slice(colon + 1)
}

function addEntry(
  result: ParsedSitemap,
  loc: string | null,
  lastmod: string | null,
  sitemapHost: string,
  urlRules: UrlRules,
): void {
  if (loc === null || loc === '') {
    result.invalid++
    return
  }
  const canonical = canonicalUrl(loc, urlRules)
  if ('error' in canonical) {
    result.invalid++
    return
  }
  if (canonical.host !== sitemapHost) {
    result.crossHost++
    return
  }
  let lastModifiedMs: number | null = null
  if (lastmod !== null) {
    lastModifiedMs = readW3cDatetime(lastmod)
    if (lastModifiedMs === null) {
      result.invalid++
      return
    }
  }
  result.entries.push({ url: canonical.url, lastModifiedMs })
}

/** Every entry dated, all with one lastmod, and enough of them for that to mean something. */
function isBuildTime(entries: readonly SitemapEntry[]): boolean {
  if (entries.length < SITEMAP_BUILD_TIME_MIN_ENTRIES) return false
  const first = entries[0]!.lastModifiedMs
  return first !== null && entries.every((e) => e.lastModifiedMs === first)
}
