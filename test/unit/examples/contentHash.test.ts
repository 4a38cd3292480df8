import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { contentHash, mainText } from '../../../examples/crawler/contentHash.ts'

const bytes = (text: string) => new TextEncoder().encode(text)
const HTML = 'text/html; charset=utf-8'

test('mainText keeps the visible text of <main>, without scripts, styles, comments, tags or extra white space', () => {
  const page = `<!doctype html><html><head><title>T</title><style>main{color:red}</style></head>
    <body><nav>Home · News</nav><main id="x">
      <h1>Big   news</h1><!-- build 1234 --><script>track("abc")</script>
      <p>Fish &amp; chips&nbsp;for &#163;5 &#x263A; &unknown;</p>
    </main><footer>© 2026, served at 10:00</footer></body></html>`
  assert.equal(mainText(page), 'Big news Fish & chips for £5 ☺ &unknown;')
})

test('mainText falls back to <article>, then to <body> without navigation, header, footer, asides and forms', () => {
  assert.equal(mainText('<body><nav>menu</nav><article><p>story</p></article><aside>ad</aside></body>'), 'story')
  assert.equal(
    mainText(
      '<html><head><script>x()</script></head><body><header>site</header><p>text</p><aside>ad 42</aside><form>search</form><footer>now</footer></body></html>',
    ),
    'text',
  )
  assert.equal(mainText('no markup at all,\n\tjust text'), 'no markup at all, just text')
})

test('contentHash ignores what a reader does not see and changes with what they do', () => {
  const page = (main: string, token: string) =>
    `<html><head><script>var s="${token}"</script></head><body><nav>${token}</nav><main>${main}</main><footer>${token}</footer></body></html>`
  const a = contentHash(bytes(page('<p>version 1</p>', 'a1')), HTML)
  assert.equal(
    contentHash(bytes(page('<p>version   1</p>\n', 'b2')), HTML),
    a,
    'tokens outside main and white space do not count',
  )
  assert.notEqual(contentHash(bytes(page('<p>version 2</p>', 'a1')), HTML), a, 'the main text counts')
  assert.equal(a, `sha256:${createHash('sha256').update('version 1').digest('hex')}`)
})

test('contentHash: other text types are hashed with white space collapsed, anything else byte for byte', () => {
  assert.equal(
    contentHash(bytes('{"a": 1}\n'), 'application/json'),
    contentHash(bytes('{"a":  1}'), 'application/json'),
  )
  assert.notEqual(
    contentHash(bytes('{"a": 1}'), 'application/json'),
    contentHash(bytes('{"a": 2}'), 'application/json'),
  )
  const binary = new Uint8Array([0, 1, 2, 255])
  assert.equal(contentHash(binary, 'image/png'), `sha256:${createHash('sha256').update(binary).digest('hex')}`)
  assert.equal(
    contentHash(bytes('<p>x</p>'), null),
    `sha256:${createHash('sha256').update(bytes('<p>x</p>')).digest('hex')}`,
  )
})

test('contentHash decodes the declared charset', () => {
  const latin1 = new Uint8Array([0x3c, 0x70, 0x3e, 0x63, 0x61, 0x66, 0xe9, 0x3c, 0x2f, 0x70, 0x3e]) // <p>café</p>
  assert.equal(contentHash(latin1, 'text/html; charset=iso-8859-1'), contentHash(bytes('<p>café</p>'), HTML))
  assert.equal(
    contentHash(bytes('<p>café</p>'), 'text/html; charset=no-such-charset'),
    contentHash(bytes('<p>café</p>'), HTML),
  )
})
