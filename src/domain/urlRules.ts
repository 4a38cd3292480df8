import type { Queryable } from '../store/transaction.ts'
import { lockIndexNowKeyHosts, renameIndexNowKeyHosts } from '../store/indexNowKeysRepo.ts'
import { lockHostNames, pagesWithUrls, pageUrlsAfter, renameHosts, renamePages } from '../store/urlsRepo.ts'
import { ConflictError, UnprocessableError } from '../core/errors.ts'
import { canonicalHostName, canonicalUrl, type UrlRules } from '../core/url.ts'

/**
 * The URL rules (settings `urls`, docs/api.md "Conventions"): every stored page URL and host limit name is
 * canonical under them; a change of the rules renames what they name differently (applyUrlRules), in the
 * transaction that stores the change. A batch canonicalised before its transaction must be written under
 * the same rules: when they changed in between (the change renamed stored pages), the batch is refused
 * whole and can be sent again.
 */
export function assertUrlRulesUnchanged(used: UrlRules, current: UrlRules): void {
  if (JSON.stringify(used) !== JSON.stringify(current)) {
    throw new ConflictError(
      'the URL rules (settings.urls) changed while the request was handled; nothing was changed, send it again',
    )
  }
}

/** Pages read per statement while stored URLs are renamed. */
const RENAME_CHUNK_PAGES = 5000
/** Merges named in the refusal. */
const MERGES_SHOWN = 5

/**
 * Renames every host limit, IndexNow key host and page whose name is not canonical under `rules`. A name that would
 * become the name of another stored host or page would merge the two: then nothing is renamed and the
 * change is refused (422), naming the merges, so that the operator deletes one of each pair first or
 * keeps the rule off. Runs in the caller's transaction, which holds the settings `update` (settingsRepo.ts): no page
 * is written or registered meanwhile, and host limit changes wait for it.
 */
export async function applyUrlRules(
  client: Queryable,
  rules: UrlRules,
  nowMs: number,
): Promise<{ pagesRenamed: number; hostsRenamed: number }> {
  const hostRenames: { from: string; to: string }[] = []
  const hostMerges: string[] = []
  const hosts = await lockHostNames(client)
  const hostTargets = new Map<string, string>()
  const stored = new Set(hosts)
  for (const host of hosts) {
    const to = canonicalHostName(host, rules) ?? host
    if (to === host) continue
    // Canonical names are fixed points of the rules, so a target that is stored is not renamed itself.
    const earlier = hostTargets.get(to)
    if (stored.has(to)) hostMerges.push(`hosts ${host} and ${to} would both be ${to}`)
    else if (earlier !== undefined) hostMerges.push(`hosts ${earlier} and ${host} would both be ${to}`)
    else {
      hostTargets.set(to, host)
      hostRenames.push({ from: host, to })
    }
  }
  if (hostMerges.length > 0) throw mergeRefusal('host limits', hostMerges)
  await renameHosts(client, hostRenames, nowMs)
  // IndexNow keys follow their hosts; two names that become one keep the keys of both.
  const keyRenames = (await lockIndexNowKeyHosts(client)).flatMap((from) => {
    const to = canonicalHostName(from, rules) ?? from
    return to === from ? [] : [{ from, to }]
  })
  await renameIndexNowKeyHosts(client, keyRenames)

  let pagesRenamed = 0
  const pageMerges: string[] = []
  let afterId: string | null = null
  for (;;) {
    const rows = await pageUrlsAfter(client, afterId, RENAME_CHUNK_PAGES)
    if (rows.length === 0) break
    afterId = rows[rows.length - 1]!.id
    const renames: { id: string; url: string; host: string }[] = []
    const byTarget = new Map<string, string>()
    for (const row of rows) {
      const canonical = canonicalUrl(row.url, rules)
      // A stored URL that the rules cannot read (none today: they only shorten or re-spell) keeps its name.
      if ('error' in canonical || canonical.url === row.url) continue
      const earlier = byTarget.get(canonical.url)
      if (earlier !== undefined) pageMerges.push(`pages ${earlier} and ${row.id} would both be ${canonical.url}`)
      else {
        byTarget.set(canonical.url, row.id)
        renames.push({ id: row.id, ...canonical })
      }
    }
    // Targets already stored: pages not renamed (targets are fixed points), or renamed in an earlier chunk.
    for (const other of await pagesWithUrls(client, [...byTarget.keys()])) {
      pageMerges.push(`page ${byTarget.get(other.url)} would be ${other.url}, the URL of page ${other.id}`)
    }
    if (pageMerges.length >= MERGES_SHOWN) break
    if (pageMerges.length === 0) {
      await renamePages(client, renames, nowMs)
      pagesRenamed += renames.length
    }
  }
  if (pageMerges.length > 0) throw mergeRefusal('pages', pageMerges)
  return { pagesRenamed, hostsRenamed: hostRenames.length }
}

function mergeRefusal(what: string, merges: readonly string[]): UnprocessableError {
  const shown = merges.slice(0, MERGES_SHOWN).join('; ')
  return new UnprocessableError(
    `these URL rules would merge stored ${what} (${shown}${merges.length > MERGES_SHOWN ? '; …' : ''}); ` +
      'delete one of each or keep the rule off; nothing was changed',
  )
}
