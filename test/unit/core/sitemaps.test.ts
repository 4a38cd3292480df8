/** Sitemap documents (src/core/sitemaps.ts): entries, limits, hostile documents and "lastmod is the build time". */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { parseSitemap, readW3cDatetime, SITEMAP_MAX_ENTRIES } from '../../../src/core/sitemaps.ts'
import { PayloadTooLargeError, UnprocessableError } from '../../../src/core/errors.ts'
import { DEFAULT_SETTINGS } from '../../../src/core/settings.ts'

const rules = DEFAULT_SETTINGS.urls
const urlset = (entries: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries}</urlset>`
const entry = (loc: string, lastmod?: string) =>
  `<url><loc>${loc}</loc>${lastmod === undefined ? '' : `<lastmod>${lastmod}</lastmod>`}<changefreq>daily</changefreq></url>`

describe('parseSitemap', () => {
  test('page entries with their lastmod; other hosts and bad entries are dropped and counted', () => {
    const parsed = parseSitemap(
      urlset(
        entry('https://a.example/x?utm_source=s', '2026-11-20') +
          entry('https://a.example/y', '2026-11-20T10:30:00+01:00') +
          entry('https://a.example/z') +
          entry('https://other.example/x', '2026-11-20') +
          entry('https://a.example/w', 'last tuesday') +
          `<url><loc><![CDATA[https://a.example/cdata]]></loc></url>`,
      ),
      'a.example',
      rules,
    )
    assert.equal(parsed.kind, 'urlset')
    assert.deepEqual(parsed.entries, [
      { url: 'https://a.example/x', lastModifiedMs: Date.UTC(2026, 10, 20) },
      { url: 'https://a.example/y', lastModifiedMs: Date.UTC(2026, 10, 20, 9, 30) },
      { url: 'https://a.example/z', lastModifiedMs: null },
      { url: 'https://a.example/cdata', lastModifiedMs: null },
    ])
    assert.equal(parsed.crossHost, 1)
    assert.equal(parsed.invalid, 1)
    assert.equal(parsed.lastmodIsBuildTime, false)
  })

  test('a sitemap index lists sitemaps', () => {
    const parsed = parseSitemap(
      `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://a.example/s1.xml.gz</loc><lastmod>2026-11-01</lastmod></sitemap><sitemap><loc>https://evil.example/s.xml</loc></sitemap></sitemapindex>`,
      'a.example',
      rules,
    )
    assert.equal(parsed.kind, 'sitemapindex')
    assert.deepEqual(parsed.entries, [{ url: 'https://a.example/s1.xml.gz', lastModifiedMs: Date.UTC(2026, 10, 1) }])
    assert.equal(parsed.crossHost, 1)
  })

  test('every entry with one lastmod is the build time', () => {
    const same = Array.from({ length: 6 }, (_, i) => entry(`https://a.example/${i}`, '2026-11-21T03:00:00Z')).join('')
    assert.equal(parseSitemap(urlset(same), 'a.example', rules).lastmodIsBuildTime, true)
    const varied = Array.from({ length: 6 }, (_, i) => entry(`https://a.example/${i}`, `2026-11-1${i}`)).join('')
    assert.equal(parseSitemap(urlset(varied), 'a.example', rules).lastmodIsBuildTime, false)
    const few = Array.from({ length: 2 }, (_, i) => entry(`https://a.example/${i}`, '2026-11-21')).join('')
    assert.equal(parseSitemap(urlset(few), 'a.example', rules).lastmodIsBuildTime, false)
  })

  test('hostile documents are refused whole: entity expansion, external entities, malformed XML, other roots', () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]><urlset><url><loc>https://a.example/&lol2;</loc></url></urlset>`
    const external = `<?xml version="1.0"?><!DOCTYPE u [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><urlset><url><loc>&xxe;</loc></url></urlset>`
    const undeclared = urlset(`<url><loc>https://a.example/&xxe;</loc></url>`)
    for (const doc of [
      laughs,
      external,
      undeclared,
      urlset('<url><loc>x</url>'),
      '<html><body/></html>',
      '',
      'not xml',
    ])
      assert.throws(() => parseSitemap(doc, 'a.example', rules), UnprocessableError, doc.slice(0, 40))
  })

  test(`more than ${SITEMAP_MAX_ENTRIES} entries are refused`, () => {
    const many = urlset(entry('https://a.example/p').repeat(SITEMAP_MAX_ENTRIES + 1))
    assert.throws(() => parseSitemap(many, 'a.example', rules), PayloadTooLargeError)
    const limit = urlset(entry('https://a.example/p').repeat(SITEMAP_MAX_ENTRIES))
    assert.equal(parseSitemap(limit, 'a.example', rules).entries.length, SITEMAP_MAX_ENTRIES)
  })
})

test('readW3cDatetime reads the W3C datetime profile and nothing else', () => {
  assert.equal(readW3cDatetime('2026'), Date.UTC(2026, 0, 1))
  assert.equal(readW3cDatetime('2026-02'), Date.UTC(2026, 1, 1))
  assert.equal(readW3cDatetime('2026-02-03T04:05Z'), Date.UTC(2026, 1, 3, 4, 5))
  assert.equal(readW3cDatetime('2026-02-03T04:05:06.5-02:00'), Date.UTC(2026, 1, 3, 6, 5, 6, 500))
  for (const bad of ['2026-13-01', '2026-02-30', '2026-02-03T04:05', 'yesterday', '2026-2-3'])
    assert.equal(readW3cDatetime(bad), null, bad)
})
