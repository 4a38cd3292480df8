/**
 * IndexNow (docs/api.md "IndexNow"): the keys the operator registers per host, and submissions checked against
 * them. A submission becomes change signals of source `indexnow` without a claimed change time, applied by
 * ingestSignals like any batch of POST /v1/signals.
 */
import { z } from 'zod'
import {
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  UnprocessableError,
  type FieldProblem,
} from '../core/errors.ts'
import { EXAMPLE_NOW } from '../core/examples.ts'
import {
  INDEXNOW_KEY_PATTERN,
  INDEXNOW_KEY_RULE,
  INDEXNOW_MAX_URLS,
  INDEXNOW_SOURCE,
  indexNowReceivedAtMs,
} from '../core/indexNow.ts'
import { isoTimestamp } from '../core/timestamps.ts'
import { canonicalUrl } from '../core/url.ts'
import { deleteIndexNowKey, insertIndexNowKey, isIndexNowKeyOf, listIndexNowKeys } from '../store/indexNowKeysRepo.ts'
import { loadSettings } from '../store/settingsRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import type { DomainDeps } from './deps.ts'
import { normalizeHostName } from './hosts.ts'
import { ingestSignals } from './signals.ts'

const EXAMPLE_KEY = '5a1c9e0b7d2f4e6a8b3c'

export const indexNowKeySchema = z
  .string()
  .regex(INDEXNOW_KEY_PATTERN, { error: `an IndexNow key is ${INDEXNOW_KEY_RULE}` })
  .describe(`An IndexNow key: ${INDEXNOW_KEY_RULE}.`)

export const indexNowKeyListSchema = z
  .object({
    host: z.string().describe('The host name as pages carry it.'),
    keys: z
      .array(
        z
          .object({ key: z.string(), createdAt: z.string().describe('When the key was first registered (RFC 3339).') })
          .meta({ id: 'IndexNowKey', description: 'A key the host may submit URLs with.' }),
      )
      .describe('Oldest first; empty when the host has none.'),
  })
  .meta({
    id: 'IndexNowKeyList',
    description: 'The IndexNow keys registered for a host.',
    examples: [{ host: 'www.example.org', keys: [{ key: EXAMPLE_KEY, createdAt: EXAMPLE_NOW }] }],
  })

type IndexNowKeyList = z.infer<typeof indexNowKeyListSchema>

/** The canonical name of a host, under the URL rules held `share` (settingsRepo.ts): a change of the rules waits for this transaction. */
async function hostNameIn(client: Parameters<typeof loadSettings>[0], rawHost: string): Promise<string> {
  return normalizeHostName(rawHost, (await loadSettings(client, 'share')).urls)
}

async function keyListOf(deps: Pick<DomainDeps, 'pool'>, host: string): Promise<IndexNowKeyList> {
  const rows = await listIndexNowKeys(deps.pool, host)
  return { host, keys: rows.map((r) => ({ key: r.key, createdAt: isoTimestamp(r.createdAt.getTime()) })) }
}

/** Registers a key for a host (again: no change). Returns the host's keys. */
export async function registerIndexNowKey(
  deps: Pick<DomainDeps, 'pool'>,
  rawHost: string,
  key: string,
): Promise<IndexNowKeyList> {
  const host = await withTransaction(deps.pool, async (c) => {
    const name = await hostNameIn(c, rawHost)
    await insertIndexNowKey(c, name, key)
    return name
  })
  return keyListOf(deps, host)
}

/** Removes a key of a host; 404 when the host has no such key. */
export async function removeIndexNowKey(deps: Pick<DomainDeps, 'pool'>, rawHost: string, key: string): Promise<void> {
  const deleted = await withTransaction(deps.pool, async (c) => deleteIndexNowKey(c, await hostNameIn(c, rawHost), key))
  if (!deleted) throw new NotFoundError('the host has no such IndexNow key')
}

export async function listHostIndexNowKeys(deps: Pick<DomainDeps, 'pool'>, rawHost: string): Promise<IndexNowKeyList> {
  const host = normalizeHostName(rawHost, (await loadSettings(deps.pool)).urls)
  return keyListOf(deps, host)
}

export const indexNowSubmissionSchema = z
  .object({
    host: z.string().describe('The host every URL of urlList is on (e.g. www.example.org).'),
    key: z.string().describe(`A key registered for the host: ${INDEXNOW_KEY_RULE}.`),
    keyLocation: z
      .string()
      .optional()
      .describe('Where the site publishes the key; when given, a URL on the host. recrawl does not fetch it.'),
    urlList: z
      .array(z.string())
      .min(1)
      .max(INDEXNOW_MAX_URLS)
      .describe(`The changed URLs, 1 to ${INDEXNOW_MAX_URLS.toLocaleString('en')}; each on the host.`),
  })
  .meta({
    id: 'IndexNowSubmission',
    description: 'An IndexNow submission (indexnow.org): URLs of one host that were added, changed or deleted.',
    examples: [
      {
        host: 'www.example.org',
        key: EXAMPLE_KEY,
        keyLocation: `https://www.example.org/${EXAMPLE_KEY}.txt`,
        urlList: ['https://www.example.org/url1', 'https://www.example.org/folder/url2'],
      },
    ],
  })

/** A submission as the two routes receive it, with where each part came from for the errors. */
interface IndexNowSubmission {
  /** The host the submission names; null for the single-URL form, where it is the URL's host. */
  host: string | null
  key: string
  keyLocation: string | null
  urls: readonly string[]
  /** JSON pointers of the fields, for errors: host, key, keyLocation and the URL at an index. */
  at: { host: string; key: string; keyLocation: string; url: (index: number) => string }
}

/** Bad URLs named in one 400 (the rest are counted). */
const ERRORS_SHOWN = 20

/**
 * Checks a submission and stores its URLs as signals of source `indexnow`, all or nothing. In order: a host or URL
 * that is not one is 400; a key outside the protocol's form is 422; a key not registered for the host is 403; a URL
 * (or keyLocation) on another host is 422. Then every URL is a signal received now, to the second (the signals'
 * identity, so a retried submission is a duplicate within the same second), applied by ingestSignals.
 */
export async function submitIndexNow(
  deps: DomainDeps,
  submission: IndexNowSubmission,
): Promise<Awaited<ReturnType<typeof ingestSignals>>> {
  const rules = (await loadSettings(deps.pool)).urls
  const errors: FieldProblem[] = []
  const urls = submission.urls.map((url, index) => {
    const canonical = canonicalUrl(url, rules)
    if ('error' in canonical) errors.push({ path: submission.at.url(index), message: canonical.error })
    return canonical
  })
  let host: string | null = null
  if (submission.host !== null) {
    host = normalizeHostName(submission.host, rules, submission.at.host)
  } else {
    const first = urls[0]
    if (first !== undefined && !('error' in first)) host = first.host
  }
  const keyLocation = submission.keyLocation === null ? null : canonicalUrl(submission.keyLocation, rules)
  if (keyLocation !== null && 'error' in keyLocation)
    errors.push({ path: submission.at.keyLocation, message: keyLocation.error })
  if (errors.length > 0) throw badUrls(errors)
  if (host === null) throw new InvalidInputError('no URL', [{ path: submission.at.url(0), message: 'no URL' }])

  if (!INDEXNOW_KEY_PATTERN.test(submission.key))
    throw new UnprocessableError(`the key is not an IndexNow key (${INDEXNOW_KEY_RULE}); nothing was stored`)
  if (!(await isIndexNowKeyOf(deps.pool, host, submission.key)))
    throw new ForbiddenError(
      `the key is not registered for ${host} (PUT /v1/hosts/{host}/indexnow-keys/{key}); nothing was stored`,
    )

  const elsewhere = urls.flatMap((u, index) => (!('error' in u) && u.host !== host ? [index] : []))
  if (elsewhere.length > 0) {
    const first = urls[elsewhere[0]!] as { host: string }
    throw new UnprocessableError(
      `${elsewhere.length} of ${urls.length} URLs are not on ${host} (the first, at ${submission.at.url(elsewhere[0]!)}, is on ${first.host}); nothing was stored`,
    )
  }
  if (keyLocation !== null && !('error' in keyLocation) && keyLocation.host !== host)
    throw new UnprocessableError(`keyLocation is not on ${host}; nothing was stored`)

  const receivedAt = isoTimestamp(indexNowReceivedAtMs(deps.clock.nowMs()))
  return ingestSignals(
    deps,
    urls.map((u) => ({ url: (u as { url: string }).url, source: INDEXNOW_SOURCE, receivedAt })),
  )
}

function badUrls(errors: FieldProblem[]): InvalidInputError {
  const more = errors.length > ERRORS_SHOWN ? ` (${ERRORS_SHOWN} of ${errors.length} shown)` : ''
  return new InvalidInputError(
    `${errors.length === 1 ? 'a URL is' : `${errors.length} URLs are`} not an absolute http(s) URL recrawl can store${more}; nothing was stored`,
    errors.slice(0, ERRORS_SHOWN),
  )
}
