/**
 * Canonical page URLs (src/core/url.ts): what the parser fixes, what each rule does when on and
 * leaves alone when off, and the inputs that cannot name a page.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import {
  canonicalHostName,
  canonicalUrl,
  DEFAULT_URL_RULES,
  MAX_URL_LENGTH,
  urlRulesSchema,
  type UrlRules,
} from '../../../src/core/url.ts'

/** Every rule off: only what the WHATWG parser does, and the fragment dropped. */
const NONE: UrlRules = {
  sortQueryParameters: false,
  dropQueryParameters: [],
  dropEmptyQuery: false,
  normalizePercentEncoding: false,
  dropTrailingDotInHost: false,
  dropWww: false,
  dropTrailingSlash: false,
  collapseSlashes: false,
  lowercasePath: false,
}

function url(raw: string, rules: UrlRules = DEFAULT_URL_RULES): string {
  const result = canonicalUrl(raw, rules)
  if ('error' in result) throw new Error(`${raw}: ${result.error}`)
  return result.url
}

function host(raw: string, rules: UrlRules = DEFAULT_URL_RULES): string {
  const result = canonicalUrl(raw, rules)
  if ('error' in result) throw new Error(`${raw}: ${result.error}`)
  return result.host
}

/** `rule` on: `raw` becomes `on`; off (all else as given): it stays `off`. */
function ruleCase(rule: Partial<UrlRules>, raw: string, on: string, off: string) {
  assert.equal(url(raw, { ...NONE, ...rule }), on, `with ${JSON.stringify(rule)}`)
  assert.equal(url(raw, NONE), off, 'with every rule off')
}

describe('canonical URLs: what the parser fixes under any rules', () => {
  it('lower-cases scheme and host, drops the default port and the fragment, resolves dot segments', () => {
    for (const rules of [NONE, DEFAULT_URL_RULES]) {
      assert.equal(url('HTTPS://Example.COM:443/a#top', rules), 'https://example.com/a')
      assert.equal(url('http://example.com:80/', rules), 'http://example.com/')
      assert.equal(url('http://example.com:8080/', rules), 'http://example.com:8080/')
      assert.equal(url('https://example.com/a/./b/../c', rules), 'https://example.com/a/c')
      assert.equal(url('https://example.com/a/%2e%2E/c', rules), 'https://example.com/c')
      assert.equal(url('https://example.com', rules), 'https://example.com/')
    }
  })

  it('writes internationalised host names in punycode and IPv4 addresses in dotted decimal', () => {
    assert.equal(url('https://Bücher.example/x'), 'https://xn--bcher-kva.example/x')
    assert.equal(host('https://Bücher.example/x'), 'xn--bcher-kva.example')
    assert.equal(url('http://0x7f.1/'), 'http://127.0.0.1/')
    assert.equal(host('http://[0:0::1]:8080/'), '[::1]:8080')
  })

  it('keeps the port in the host when it is not the default one', () => {
    assert.equal(host('https://example.com:8443/a'), 'example.com:8443')
    assert.equal(host('https://example.com:443/a'), 'example.com')
  })

  it('refuses what cannot name a page, with a reason', () => {
    const reasons = (raw: string) => {
      const r = canonicalUrl(raw, DEFAULT_URL_RULES)
      return 'error' in r ? r.error : null
    }
    assert.equal(reasons('not a url'), 'url is not an absolute URL')
    assert.equal(reasons('/relative/path'), 'url is not an absolute URL')
    assert.equal(reasons('ftp://example.com/a'), 'url scheme must be http or https, not ftp')
    assert.equal(reasons('http://./a'), 'url has no host')
    // Credentials would be stored, listed and shown with the page: refused, with or without a password.
    for (const withCredentials of [
      'https://user:pass@example.com/a',
      'https://user@example.com/a',
      'http://:pw@e.com/',
    ]) {
      assert.match(reasons(withCredentials)!, /^url carries credentials \(user:password@\)/, withCredentials)
    }
    assert.equal(
      reasons(`https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`),
      `url is longer than ${MAX_URL_LENGTH} characters`,
    )
    // Within the limit as sent, beyond it once the parser has percent-encoded it.
    const expanding = `https://example.com/${'é'.repeat(MAX_URL_LENGTH - 30)}`
    assert.equal(reasons(expanding), `url is longer than ${MAX_URL_LENGTH} characters once canonical`)
  })
})

describe('canonical URLs: each rule', () => {
  it('sortQueryParameters: by name, parameters of one name keep their order', () => {
    ruleCase(
      { sortQueryParameters: true },
      'https://e.com/?b=2&a=1',
      'https://e.com/?a=1&b=2',
      'https://e.com/?b=2&a=1',
    )
    ruleCase(
      { sortQueryParameters: true },
      'https://e.com/?x=2&a&x=1',
      'https://e.com/?a&x=2&x=1',
      'https://e.com/?x=2&a&x=1',
    )
    // An escaped & or = stays inside its parameter.
    ruleCase(
      { sortQueryParameters: true },
      'https://e.com/?q=a%26z=1&b',
      'https://e.com/?b&q=a%26z=1',
      'https://e.com/?q=a%26z=1&b',
    )
    ruleCase(
      { sortQueryParameters: true },
      'https://e.com/?b=1&&a=2',
      'https://e.com/?a=2&b=1',
      'https://e.com/?b=1&&a=2',
    )
  })

  it('dropQueryParameters: exact names and prefixes, ignoring ASCII case and unreserved escapes', () => {
    const rule = { dropQueryParameters: ['utm_*', 'gclid'] }
    ruleCase(
      rule,
      'https://e.com/p?utm_source=a&id=7&gclid=x',
      'https://e.com/p?id=7',
      'https://e.com/p?utm_source=a&id=7&gclid=x',
    )
    ruleCase(
      rule,
      'https://e.com/p?UTM_Medium=a&GCLID=b&id=7',
      'https://e.com/p?id=7',
      'https://e.com/p?UTM_Medium=a&GCLID=b&id=7',
    )
    ruleCase(rule, 'https://e.com/p?utm%5Fsource=a&id=7', 'https://e.com/p?id=7', 'https://e.com/p?utm%5Fsource=a&id=7')
    // Names that merely contain a listed name stay; an exact name is not a prefix.
    ruleCase(
      rule,
      'https://e.com/p?my_utm_x=1&gclid2=2',
      'https://e.com/p?my_utm_x=1&gclid2=2',
      'https://e.com/p?my_utm_x=1&gclid2=2',
    )
    // A query of tracking parameters only goes with its `?`: the tagged link meets the plain one.
    ruleCase(rule, 'https://e.com/p?utm_source=a', 'https://e.com/p', 'https://e.com/p?utm_source=a')
    assert.equal(url('https://e.com/p?fbclid=1&msclkid=2&utm_campaign=c'), url('https://e.com/p'))
  })

  it('dropEmptyQuery: a bare ? goes', () => {
    ruleCase({ dropEmptyQuery: true }, 'https://e.com/p?', 'https://e.com/p', 'https://e.com/p?')
    ruleCase(
      { dropEmptyQuery: true, sortQueryParameters: true },
      'https://e.com/p?&&',
      'https://e.com/p',
      'https://e.com/p?&&',
    )
    // Off, a rebuilt query of empty pieces keeps its `?`: it was not a tracking query.
    assert.equal(url('https://e.com/p?&&', { ...NONE, sortQueryParameters: true }), 'https://e.com/p?')
  })

  it('normalizePercentEncoding: unreserved characters decoded, other escapes upper-cased, in path and query', () => {
    const rule = { normalizePercentEncoding: true }
    ruleCase(
      rule,
      'https://e.com/%7Euser/%61%2d%5F%2E',
      'https://e.com/~user/a-_.',
      'https://e.com/%7Euser/%61%2d%5F%2E',
    )
    ruleCase(rule, 'https://e.com/a%2fb%c3%a9', 'https://e.com/a%2Fb%C3%A9', 'https://e.com/a%2fb%c3%a9')
    ruleCase(rule, 'https://e.com/?q=%7e%2f%41', 'https://e.com/?q=~%2FA', 'https://e.com/?q=%7e%2f%41')
    // An escaped % stays one: %2541 is the text "%41", not "A".
    ruleCase(rule, 'https://e.com/%2541', 'https://e.com/%2541', 'https://e.com/%2541')
    // A stray % stays, and no escape is decoded into a new escape with it.
    ruleCase(rule, 'https://e.com/%2%63%zz%7e', 'https://e.com/%2%63%zz~', 'https://e.com/%2%63%zz%7e')
    // Reserved characters stay escaped: %2F is not a path separator, %26 not a parameter separator.
    assert.notEqual(url('https://e.com/a%2Fb'), url('https://e.com/a/b'))
    assert.notEqual(url('https://e.com/?a=1%262'), url('https://e.com/?a=1&2'))
    // + and %20 in a query differ on servers that do not read it as a form.
    assert.notEqual(url('https://e.com/?q=a+b'), url('https://e.com/?q=a%20b'))
  })

  it('dropTrailingDotInHost: example.com. is example.com, in the URL and in its host', () => {
    ruleCase(
      { dropTrailingDotInHost: true },
      'https://Example.com./a',
      'https://example.com/a',
      'https://example.com./a',
    )
    ruleCase(
      { dropTrailingDotInHost: true },
      'https://example.com..:8080/',
      'https://example.com:8080/',
      'https://example.com..:8080/',
    )
    assert.equal(host('https://example.com./a'), 'example.com')
  })

  it('dropWww: a leading www. label goes, unless too little or another www. would be left', () => {
    const rule = { dropWww: true }
    ruleCase(rule, 'https://www.example.com/a', 'https://example.com/a', 'https://www.example.com/a')
    ruleCase(rule, 'https://www.com/a', 'https://www.com/a', 'https://www.com/a')
    ruleCase(rule, 'https://www.www.example.com/', 'https://www.www.example.com/', 'https://www.www.example.com/')
    ruleCase(rule, 'https://wwwx.example.com/', 'https://wwwx.example.com/', 'https://wwwx.example.com/')
    assert.equal(host('https://www.example.com/a', { ...NONE, dropWww: true }), 'example.com')
    assert.equal(url('https://www.example.com/a'), 'https://www.example.com/a') // off by default
  })

  it('dropTrailingSlash: /a/ is /a, the root stays /', () => {
    const rule = { dropTrailingSlash: true }
    ruleCase(rule, 'https://e.com/a/b/', 'https://e.com/a/b', 'https://e.com/a/b/')
    ruleCase(rule, 'https://e.com/a//?x=1', 'https://e.com/a?x=1', 'https://e.com/a//?x=1')
    ruleCase(rule, 'https://e.com/', 'https://e.com/', 'https://e.com/')
    assert.equal(url('https://e.com/a/'), 'https://e.com/a/') // off by default
  })

  it('collapseSlashes: /a//b is /a/b', () => {
    ruleCase({ collapseSlashes: true }, 'https://e.com//a///b/', 'https://e.com/a/b/', 'https://e.com//a///b/')
    assert.equal(url('https://e.com//a'), 'https://e.com//a') // off by default
  })

  it('collapseSlashes with dropTrailingSlash: a dot segment the parser left is resolved before the slash goes', () => {
    // The parser keeps the final `.` of `//.a/.`; collapsed to `/.a/.`, it resolves to `/.a/` once parsed again.
    const rule = { ...NONE, collapseSlashes: true, dropTrailingSlash: true }
    assert.equal(url('http://www.a.com//.a/.', rule), 'http://www.a.com/.a')
    assert.equal(url('http://www.a.com/.a', rule), 'http://www.a.com/.a')
  })

  it('lowercasePath: the path only; the query and the escapes keep theirs', () => {
    const rule = { lowercasePath: true }
    ruleCase(rule, 'https://e.com/About/Us?Q=A', 'https://e.com/about/us?Q=A', 'https://e.com/About/Us?Q=A')
    assert.equal(
      url('https://e.com/A%2F%c3%a9', { ...NONE, lowercasePath: true, normalizePercentEncoding: true }),
      'https://e.com/a%2F%C3%A9',
    )
    assert.equal(url('https://e.com/About'), 'https://e.com/About') // off by default: paths keep their case
  })
})

describe('canonical URLs: the six spellings of one page', () => {
  it('are one URL under the default rules', () => {
    const spellings = [
      'https://example.com/~user/page?a=1&b=2',
      'https://example.com/~user/page?b=2&a=1',
      'https://example.com/~user/page?a=1&utm_source=news&b=2&utm_medium=mail',
      'https://example.com/%7Euser/page?a=1&b=2',
      'https://example.com./~user/page?a=1&b=2',
      'HTTPS://EXAMPLE.COM:443/%7euser/page?b=2&a=1&gclid=xyz#reviews',
    ]
    assert.deepEqual(new Set(spellings.map((s) => url(s))), new Set(['https://example.com/~user/page?a=1&b=2']))
  })

  it('stay six pages with every rule off but the parser', () => {
    const spellings = [
      'https://example.com/~user/page?a=1&b=2',
      'https://example.com/~user/page?b=2&a=1',
      'https://example.com/~user/page?a=1&b=2&utm_source=news',
      'https://example.com/%7Euser/page?a=1&b=2',
      'https://example.com./~user/page?a=1&b=2',
      'https://example.com/~user/page?a=1&b=2&',
    ]
    assert.equal(new Set(spellings.map((s) => url(s, NONE))).size, spellings.length)
  })
})

describe('canonical host names (host filters and host limits)', () => {
  it('are the host of the canonical URL under the same rules', () => {
    const rules = { ...DEFAULT_URL_RULES, dropWww: true }
    for (const raw of [
      'Example.COM',
      'example.com.',
      'www.Example.com.',
      'bücher.example',
      'example.com:8080',
      '[::1]:81',
    ]) {
      assert.equal(canonicalHostName(raw, rules), host(`http://${raw}/x`, rules), raw)
    }
    assert.equal(canonicalHostName('www.example.com', DEFAULT_URL_RULES), 'www.example.com')
  })

  it('refuse what is not a host name', () => {
    for (const raw of ['a/b', 'user@example.com', 'example.com?x', 'example.com#x', 'a b', '.', 'a\\b']) {
      assert.equal(canonicalHostName(raw, DEFAULT_URL_RULES), null, raw)
    }
  })
})

describe('URL rules as settings', () => {
  it('the defaults are valid and have only the safe rules on', () => {
    const parsed = urlRulesSchema.parse(DEFAULT_URL_RULES)
    assert.deepEqual(
      Object.entries(parsed)
        .filter(([, v]) => v === true)
        .map(([k]) => k)
        .sort(),
      ['dropEmptyQuery', 'dropTrailingDotInHost', 'normalizePercentEncoding', 'sortQueryParameters'],
    )
    for (const name of ['utm_*', 'gclid', 'fbclid', 'msclkid'])
      assert.ok(parsed.dropQueryParameters.includes(name), name)
  })

  it('refuse malformed parameter patterns and unknown rules', () => {
    for (const bad of ['*', 'a*b', 'a**', 'a=b', 'a&b', 'a b', '', 'x#']) {
      assert.equal(
        urlRulesSchema.safeParse({ ...DEFAULT_URL_RULES, dropQueryParameters: [bad] }).success,
        false,
        JSON.stringify(bad),
      )
    }
    assert.equal(
      urlRulesSchema.safeParse({ ...DEFAULT_URL_RULES, dropQueryParameters: ['ref', 'pk_*', '_hs*'] }).success,
      true,
    )
    assert.equal(urlRulesSchema.safeParse({ ...DEFAULT_URL_RULES, sortQuery: true }).success, false)
  })
})
