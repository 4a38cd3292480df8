/**
 * Properties of canonical URLs (src/core/url.ts) over generated URLs and rule sets: idempotence
 * (canonical(canonical(u)) = canonical(u)), what each switched-on rule guarantees of the result, and
 * that the default rules lose nothing but the fragment and tracking parameters.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { canonicalHostName, canonicalUrl, DEFAULT_URL_RULES, type UrlRules } from '../../../src/core/url.ts'

const RUNS = Number(process.env.URL_PROPERTY_RUNS ?? 2000)
/**
 * A fixed seed, so that a failure can be replayed and the suite gives the same answer each time, as the HTTP fuzz
 * tests do (test/helpers/fuzz.ts); URL_PROPERTY_SEED=random explores (with URL_PROPERTY_RUNS for more runs).
 */
const SEED =
  process.env.URL_PROPERTY_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.URL_PROPERTY_SEED ?? 346_827_934)

const hex = fc.constantFrom(...'0123456789abcdefABCDEF')
const escape = fc.tuple(hex, hex).map(([a, b]) => `%${a}${b}`)
/** Characters a crawler meets in paths and queries, escapes of any byte in either case, and a few odd ones. */
const char = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(..."abcXYZ019-._~!$'()*+,;:@") },
  { weight: 3, arbitrary: escape },
  { weight: 1, arbitrary: fc.constantFrom('%', '%2', '%zz', ' ', 'é', '中', '"', '<', '`', '{', '|', '^', '\\', '[') },
)
const word = fc.array(char, { minLength: 0, maxLength: 6 }).map((cs) => cs.join(''))
const segment = fc.oneof(
  { weight: 6, arbitrary: word },
  { weight: 1, arbitrary: fc.constantFrom('.', '..', '%2e', '%2E%2e', '') },
)
const path = fc.array(segment, { maxLength: 6 }).map((segs) => `/${segs.join('/')}`)

const TRACKING = ['utm_source', 'UTM_Medium', 'utm%5Fcampaign', 'gclid', 'fbclid', 'ref', 'pk_kwd', 'sid']
const paramName = fc.oneof({ weight: 3, arbitrary: word }, { weight: 2, arbitrary: fc.constantFrom(...TRACKING) })
const param = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(paramName, word).map(([n, v]) => `${n}=${v}`) },
  { weight: 1, arbitrary: paramName },
  { weight: 1, arbitrary: fc.constantFrom('', '=', '==x', '&') },
)
const query = fc.option(
  fc.array(param, { maxLength: 6 }).map((ps) => `?${ps.join('&')}`),
  { nil: '' },
)

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?$/)
const hostname = fc.oneof(
  { weight: 4, arbitrary: fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.')) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('www.', 'WWW.', 'www.www.', ''), label, fc.constantFrom('.com', '.example', ''))
      .map(([a, b, c]) => a + b + c),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'Example.COM',
      'bücher.example',
      'EXAMPLE.com.',
      'a.b..',
      '127.0.0.1',
      '0x7f.1',
      '[::1]',
      '[2001:DB8::1]',
      'xn--bcher-kva.example',
    ),
  },
)
const hostWithDot = fc
  .tuple(hostname, fc.constantFrom('', '', '.', '..'))
  .map(([h, dot]) => (h.startsWith('[') ? h : h + dot))
const port = fc.constantFrom('', '', ':80', ':443', ':8080', ':0')
const scheme = fc.constantFrom('http', 'https', 'HTTP', 'hTTps')
const fragment = fc.option(
  word.map((w) => `#${w}`),
  { nil: '' },
)
const userinfo = fc.constantFrom('', '', '', 'user@', 'u:p%41@')

/** Absolute http(s) URLs, mostly odd spellings. */
const rawUrl = fc
  .tuple(scheme, userinfo, hostWithDot, port, path, query, fragment)
  .map(([s, u, h, p, pa, q, f]) => `${s}://${u}${h}${p}${pa}${q}${f}`)

const patterns = fc.subarray(['utm_*', 'gclid', 'fbclid', 'ref', 'pk_*', 'SID', '_ga', 'x*'])
const rules: fc.Arbitrary<UrlRules> = fc.record({
  sortQueryParameters: fc.boolean(),
  dropQueryParameters: patterns,
  dropEmptyQuery: fc.boolean(),
  normalizePercentEncoding: fc.boolean(),
  dropTrailingDotInHost: fc.boolean(),
  dropWww: fc.boolean(),
  dropTrailingSlash: fc.boolean(),
  collapseSlashes: fc.boolean(),
  lowercasePath: fc.boolean(),
})

const anyUrl = fc.oneof(
  { weight: 3, arbitrary: rawUrl },
  { weight: 1, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
)

function canonical(raw: string, r: UrlRules) {
  const c = canonicalUrl(raw, r)
  return 'error' in c ? null : c
}

const queryPieces = (href: string): string[] => {
  const i = href.indexOf('?')
  return i < 0 ? [] : href.slice(i + 1).split('&')
}
const nameOf = (piece: string) => piece.split('=')[0]!
const decode = (s: string): string | null => {
  try {
    return decodeURIComponent(s)
  } catch {
    return null
  }
}

describe('canonical URL properties', () => {
  it('canonical(canonical(u)) = canonical(u), and the host is the host of the URL', () => {
    fc.assert(
      fc.property(anyUrl, rules, (raw, r) => {
        const once = canonical(raw, r)
        if (once === null) return
        const twice = canonical(once.url, r)
        assert.deepEqual(twice, once)
        assert.equal(new URL(once.url).host, once.host)
        assert.equal(canonicalHostName(once.host, r), once.host)
      }),
      { numRuns: RUNS, seed: SEED },
    )
  })

  it('every switched-on rule holds of the result', () => {
    fc.assert(
      fc.property(rawUrl, rules, (raw, r) => {
        const c = canonical(raw, r)
        if (c === null) return
        const u = new URL(c.url)
        assert.ok(!c.url.includes('#'), 'no fragment')
        const pieces = queryPieces(c.url)
        if (r.sortQueryParameters) {
          const names = pieces.map(nameOf)
          assert.deepEqual(
            names,
            [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
            'parameters sorted by name',
          )
        }
        for (const name of pieces.map(nameOf)) {
          const key = name.replace(/%5f/gi, '_').toLowerCase()
          for (const p of r.dropQueryParameters.map((x) => x.toLowerCase())) {
            assert.ok(p.endsWith('*') ? !key.startsWith(p.slice(0, -1)) : key !== p, `${name} is dropped by ${p}`)
          }
        }
        if (r.dropEmptyQuery) assert.ok(!c.url.endsWith('?'), 'no empty query')
        if (r.normalizePercentEncoding) {
          const pathAndQuery = u.pathname + u.search
          for (const m of pathAndQuery.matchAll(/%([0-9A-Fa-f]{2})/g)) {
            assert.equal(m[1], m[1]!.toUpperCase(), 'escapes in upper case')
            const c = String.fromCharCode(Number.parseInt(m[1]!, 16))
            // Decoded, a hex digit after a stray % (or % and a digit) would make a new escape.
            const before = pathAndQuery.slice(0, m.index)
            const joinsStray = /[0-9A-Fa-f]/.test(c) && /%[0-9A-Fa-f]?$/.test(before)
            assert.ok(!/[A-Za-z0-9\-._~]/.test(c) || joinsStray, 'no escaped unreserved character')
          }
        }
        if (r.dropTrailingDotInHost) assert.ok(!u.hostname.endsWith('.'), 'no trailing dot')
        if (r.dropWww)
          assert.ok(
            !u.hostname.startsWith('www.') || u.hostname.startsWith('www.www.') || !u.hostname.slice(4).includes('.'),
          )
        if (r.dropTrailingSlash) assert.ok(u.pathname === '/' || !u.pathname.endsWith('/'), 'no trailing slash')
        if (r.collapseSlashes) assert.ok(!u.pathname.includes('//'), 'no double slash')
        if (r.lowercasePath)
          assert.equal(u.pathname.replace(/%[0-9A-F]{2}/gi, ''), u.pathname.replace(/%[0-9A-F]{2}/gi, '').toLowerCase())
      }),
      { numRuns: RUNS, seed: SEED },
    )
  })

  it('the default rules change spelling only: the decoded path, the decoded parameters and the authority stay', () => {
    fc.assert(
      fc.property(rawUrl, (raw) => {
        const c = canonical(raw, DEFAULT_URL_RULES)
        if (c === null) return
        const parsed = new URL(raw)
        const u = new URL(c.url)
        assert.equal(u.protocol, parsed.protocol)
        assert.equal(u.username, '')
        assert.equal(u.password, '')
        assert.equal(u.port, parsed.port)
        // The trailing dots go (a name left of digits only is an IPv4 address: `0..` is 0.0.0.0).
        assert.equal(u.hostname, new URL(`http://${parsed.hostname.replace(/\.+$/, '')}/`).hostname)
        // Path: the same text once decoded, and the same case.
        const before = decode(parsed.pathname)
        if (before !== null) assert.equal(decode(u.pathname), before)
        // Query: the same multiset of decoded pairs, less the tracking parameters.
        const pairs = (href: string, dropTracking: boolean) =>
          queryPieces(href)
            .filter((p) => p !== '')
            .filter((p) => !dropTracking || !isTracking(nameOf(p)))
            .map((p) => decode(p))
            .sort()
        const original = pairs(parsed.href.replace(/#.*$/, ''), true)
        if (!original.includes(null)) assert.deepEqual(pairs(c.url, false), original)
      }),
      { numRuns: RUNS, seed: SEED },
    )
  })
})

function isTracking(name: string): boolean {
  const key = (decode(name) ?? name).toLowerCase()
  return DEFAULT_URL_RULES.dropQueryParameters.some((p) =>
    p.endsWith('*') ? key.startsWith(p.slice(0, -1)) : key === p,
  )
}
