/**
 * What the crawler hashes: the normalised main text of a page, so that markup, scripts, styles,
 * navigation and white space do not count as change (docs/api.md "How a crawler should report").
 */
import { createHash } from 'node:crypto'

/** Elements whose content is never text a reader sees. */
const INVISIBLE = ['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object', 'head']
/** Page furniture around the main content, dropped when the page marks no <main> or <article>. */
const FURNITURE = ['nav', 'header', 'footer', 'aside', 'form']

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }

/** The first element `name` (its inner HTML), or null. */
function inner(html: string, name: string): string | null {
  const match = new RegExp(`<${name}\\b[^>]*>([\\s\\S]*?)</${name}\\s*>`, 'i').exec(html)
  return match ? match[1]! : null
}

function dropElements(html: string, names: readonly string[]): string {
  let out = html
  for (const name of names) out = out.replace(new RegExp(`<${name}\\b[^>]*>[\\s\\S]*?</${name}\\s*>`, 'gi'), ' ')
  return out
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const point =
        code[1] === 'x' || code[1] === 'X' ? Number.parseInt(code.slice(2), 16) : Number.parseInt(code.slice(1), 10)
      return Number.isInteger(point) && point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : whole
    }
    return NAMED_ENTITIES[code.toLowerCase()] ?? whole
  })
}

/**
 * The visible text of the page's main content: the <main> element, else the first <article>, else
 * the <body> without navigation, header, footer, asides and forms; comments, scripts, styles and
 * every tag removed, entities decoded, white space collapsed to single spaces.
 */
export function mainText(html: string): string {
  const visible = dropElements(html.replace(/<!--[\s\S]*?-->/g, ' '), INVISIBLE)
  const main =
    inner(visible, 'main') ?? inner(visible, 'article') ?? dropElements(inner(visible, 'body') ?? visible, FURNITURE)
  const text = main.replace(/<[^>]*>/g, ' ')
  return decodeEntities(text).replace(/\s+/g, ' ').trim()
}

/**
 * `sha256:<hex>` of what counts as the page's content: the main text of HTML, the text with white
 * space collapsed of other text types, the bytes of anything else.
 */
export function contentHash(body: Uint8Array, contentType: string | null): string {
  const type = (contentType ?? '').toLowerCase()
  const hash = createHash('sha256')
  if (/html|xml/.test(type) || /^text\//.test(type) || /json/.test(type)) {
    const charset = /charset=([^;\s]+)/.exec(type)?.[1]?.replace(/"/g, '')
    const text = decode(body, charset)
    hash.update(/html/.test(type) ? mainText(text) : text.replace(/\s+/g, ' ').trim())
  } else {
    hash.update(body)
  }
  return `sha256:${hash.digest('hex')}`
}

function decode(body: Uint8Array, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body)
  } catch {
    return new TextDecoder('utf-8').decode(body)
  }
}
