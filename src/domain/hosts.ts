import { z } from 'zod'
import { deleteHost, getHost, listHosts, upsertHost, type HostRow } from '../store/hostsRepo.ts'
import { loadSettings } from '../store/settingsRepo.ts'
import { withTransaction, type Queryable } from '../store/transaction.ts'
import { InvalidInputError, NotFoundError } from '../core/errors.ts'
import { MIN_POSITIVE_DELAY_SECONDS, rateSchema } from '../core/inputLimits.ts'
import { canonicalHostName, type UrlRules } from '../core/url.ts'
import { SECONDS_PER_DAY } from '../math/units.ts'
import type { DomainDeps } from './deps.ts'

/**
 * A host name as pages carry it: the host of a canonical URL under the URL rules (src/core/url.ts).
 * `path` names the request field in the error.
 */
export function normalizeHostName(raw: string, rules: UrlRules, path = '/params/host'): string {
  const host = canonicalHostName(raw, rules)
  if (host === null) throw new InvalidInputError(`${raw} is not a host name`, [{ path, message: 'not a host name' }])
  return host
}

/** The canonical name of a host, under the URL rules read FOR SHARE: a change of the rules waits for this transaction. */
async function canonicalHostIn(client: Queryable, rawHost: string): Promise<string> {
  return normalizeHostName(rawHost, (await loadSettings(client, 'share')).urls)
}

/** A PUT /v1/hosts/{host} body: both limits are replaced; an absent one is null. */
export const hostLimitsSchema = z
  .object({
    maxCrawlsPerDay: rateSchema()
      .nullable()
      .optional()
      .describe('Cap on the host’s total crawl rate (docs/math.md 3.2); null or absent = none.'),
    minDelaySeconds: z
      .number()
      .min(0)
      .max(SECONDS_PER_DAY)
      .refine((v) => v === 0 || v >= MIN_POSITIVE_DELAY_SECONDS, {
        error: `must be 0 or ${MIN_POSITIVE_DELAY_SECONDS} to 86400 seconds`,
      })
      .nullable()
      .optional()
      .describe('Minimum time between two leased pages of the host; null or absent = none.'),
  })
  .strict()
  .refine((b) => b.maxCrawlsPerDay !== undefined || b.minDelaySeconds !== undefined, {
    message: 'give maxCrawlsPerDay, minDelaySeconds or both (null = no limit)',
  })
  .meta({
    id: 'HostLimits',
    description: 'PUT semantics: both limits are replaced; an absent one is null. At least one must be given.',
  })

export const hostSchema = z
  .object({
    host: z.string(),
    maxCrawlsPerDay: z.number().nullable().describe('Cap on the host’s total crawl rate; null = none.'),
    minDelaySeconds: z.number().nullable().describe('Minimum time between two leased pages of the host; null = none.'),
    crawlDelaySeconds: z
      .number()
      .nullable()
      .describe('The robots.txt Crawl-delay crawlers reported for the host (robotsCrawlDelaySeconds); null = none.'),
    throttleDelaySeconds: z
      .number()
      .nullable()
      .describe(
        'Adaptive delay: doubles when the host answers 429 (or 503 with Retry-After) or mostly errors, shrinks again with every normal answer; null = none.',
      ),
    paceSeconds: z
      .number()
      .describe(
        'The time between two leased pages of the host: the largest of minDelaySeconds, crawlDelaySeconds and throttleDelaySeconds. A paced host also gets at most 86,400 / pace crawls per day from the optimiser.',
      ),
    pages: z.number().int().describe('Pages registered on the host.'),
  })
  .meta({ id: 'Host', description: 'A host with politeness limits or pacing.' })

type Host = z.infer<typeof hostSchema>

export const hostListSchema = z
  .object({ hosts: z.array(hostSchema) })
  .meta({ id: 'HostList', description: 'Every host with limits or pacing, by name.' })

function toHost(row: HostRow): Host {
  return {
    host: row.host,
    maxCrawlsPerDay: row.maxCrawlsPerDay,
    minDelaySeconds: row.minDelaySeconds,
    crawlDelaySeconds: row.crawlDelaySeconds,
    throttleDelaySeconds: row.throttleDelaySeconds,
    paceSeconds: row.paceSeconds,
    pages: row.pages,
  }
}

export async function putHostLimits(
  deps: Pick<DomainDeps, 'pool'>,
  rawHost: string,
  limits: { maxCrawlsPerDay: number | null; minDelaySeconds: number | null },
): Promise<Host> {
  const host = await withTransaction(deps.pool, async (c) => {
    const name = await canonicalHostIn(c, rawHost)
    await upsertHost(c, { host: name, ...limits })
    return name
  })
  return toHost((await getHost(deps.pool, host))!)
}

export async function removeHostLimits(deps: Pick<DomainDeps, 'pool'>, rawHost: string): Promise<void> {
  const { host, deleted } = await withTransaction(deps.pool, async (c) => {
    const name = await canonicalHostIn(c, rawHost)
    return { host: name, deleted: await deleteHost(c, name) }
  })
  if (!deleted) throw new NotFoundError(`host ${host} has no limits`)
}

export async function listHostLimits(deps: Pick<DomainDeps, 'pool'>): Promise<z.infer<typeof hostListSchema>> {
  return { hosts: (await listHosts(deps.pool)).map(toHost) }
}
