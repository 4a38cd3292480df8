import { z } from 'zod'

/**
 * The per-page fields, declared once. Every other description of a page is derived from this table: the
 * stored row (PageRow) and the page step's state (PageState in pageStep.ts), the column lists, record
 * definitions and SET lists of the store's page statements (src/store/pageColumns.ts), the row↔state
 * mapping (src/domain/pageRows.ts) and the fields the API shows as stored (src/domain/pages.ts). Adding a
 * per-page field is an entry here plus a migration (docs/design.md, "How to add a per-page field").
 *
 * Each entry gives:
 * - `table` and `column`: where it is stored (`pages` holds the page's identity and crawl state,
 *   `page_schedule` its schedule; migrations/0015);
 * - `type`: its SQL type, which also fixes its domain type (FieldTypes below): times are epoch milliseconds in
 *   the domain (names end in Ms), bigint ids travel as decimal strings, the version counter as a number;
 * - `nullable`: whether the column admits NULL;
 * - `values`: for a text field with a closed set of values, the set (the domain type is their union);
 * - `read`: read into PageRow (false: written only, a copy for the optimiser's read);
 * - `state`: part of the page step's PageState;
 * - `json`: its name in the API's Page object, where it is shown as stored (timestamps as RFC 3339);
 * - `initial`: a new page's value when it is not null, the column's default (a nullable field starts null);
 * - `writtenBy`: the statements that write it: `crawl` (a reported crawl, writeCrawledPages), `retime` (after an
 *   upsert or a settings change, writeSchedules), `optimizer` (an optimiser run's write-back, writeRates),
 *   `upsert` (PUT /v1/pages, upsertPages), `register` (the insert of a new page only), `lease` (leasesRepo).
 */

/**
 * What a page is (docs/api.md, Pages):
 * - `active`: fetched normally;
 * - `failing`: its latest fetches failed (404, 5xx, timeouts…): retried with backoff;
 * - `gone`: answered 404 or 410 too often: left out of the budget and fetched again only rarely;
 * - `redirected`: answered 301 or 308: its target is crawled instead; left out of the budget and fetched again only rarely.
 * A gone, failing or redirected page that answers 2xx again is active again.
 */
export const PAGE_STATUSES = ['active', 'failing', 'gone', 'redirected'] as const
export type PageStatus = (typeof PAGE_STATUSES)[number]

/**
 * What a scheduled item is (docs/api.md "Sitemaps as scheduled items"): a `page`, crawled and reported with
 * POST /v1/observations, or a `sitemap`, whose fetched document is posted to POST /v1/sitemaps. Both are scheduled
 * alike; freshness figures count pages only. Set when the item is registered, never changed.
 */
export const PAGE_KINDS = ['page', 'sitemap'] as const
export type PageKind = (typeof PAGE_KINDS)[number]

/** Pages counted by status, and the noisy ones among them: the fleet's in GET /v1/stats, a host's in the host overview. */
export const pagesByStatusSchema = z
  .object({
    active: z.number().int(),
    failing: z.number().int(),
    gone: z.number().int(),
    redirected: z.number().int(),
    noisy: z
      .number()
      .int()
      .describe('Pages whose content hash changed on every fetch (any status): fix the crawler’s hashing.'),
  })
  .meta({ id: 'PagesByStatus', description: 'Pages by status (docs/api.md "Fetch outcomes").' })

/** The SQL types of page columns and the domain type each is read as. */
interface FieldTypes {
  bigint: string
  counter: number
  text: string
  uuid: string
  integer: number
  smallint: number
  'double precision': number
  timestamptz: number
  boolean: boolean
  bytea: Uint8Array
}

type SqlType = keyof FieldTypes
type PageWriter = 'crawl' | 'retime' | 'optimizer' | 'upsert' | 'register' | 'lease'
export type PageTable = 'pages' | 'page_schedule'

export interface PageField {
  readonly table: PageTable
  readonly column: string
  readonly type: SqlType
  readonly nullable: boolean
  readonly values?: readonly string[]
  readonly read: boolean
  readonly state: boolean
  readonly json?: string
  readonly writtenBy: readonly PageWriter[]
  /** A new page's value, the column's default (a nullable field starts null). */
  readonly initial?: string | number | boolean
}

type FieldEntry = Omit<PageField, 'read' | 'state'> & { readonly read?: boolean; readonly state?: boolean }

/** An entry of the table: read into PageRow and part of PageState unless it says otherwise. */
const field = <const F extends FieldEntry>(
  f: F,
): Omit<F, 'read' | 'state'> & {
  read: F extends { read: infer R extends boolean } ? R : true
  state: F extends { state: infer S extends boolean } ? S : true
} => ({ read: true, state: true, ...f }) as never

/** The table. Keys are the domain names (with units); order is the order of PageRow and of the select list. */
export const PAGE_FIELDS = {
  id: field({ table: 'pages', column: 'id', type: 'bigint', nullable: false, state: false, json: 'id', writtenBy: [] }),
  url: field({
    table: 'pages',
    column: 'url',
    type: 'text',
    nullable: false,
    state: false,
    json: 'url',
    writtenBy: ['register'],
  }),
  host: field({ table: 'pages', column: 'host', type: 'text', nullable: false, json: 'host', writtenBy: ['register'] }),
  /** A page or a sitemap (migrations/0025): given at registration; an upsert never changes it (a 409 instead). */
  kind: field({
    table: 'pages',
    column: 'kind',
    type: 'text',
    values: PAGE_KINDS,
    nullable: false,
    initial: 'page',
    state: false,
    json: 'kind',
    writtenBy: ['upsert'],
  }),
  importance: field({
    table: 'page_schedule',
    column: 'importance',
    type: 'double precision',
    nullable: false,
    json: 'importance',
    writtenBy: ['upsert'],
  }),
  /** The page's own bounds; null = the settings' ones. */
  minCrawlsPerDay: field({
    table: 'pages',
    column: 'min_crawls_per_day',
    type: 'double precision',
    nullable: true,
    json: 'minCrawlsPerDay',
    writtenBy: ['upsert'],
  }),
  maxCrawlsPerDay: field({
    table: 'pages',
    column: 'max_crawls_per_day',
    type: 'double precision',
    nullable: true,
    json: 'maxCrawlsPerDay',
    writtenBy: ['upsert'],
  }),
  /** Observations stored for the page (baseline, in-order, failed and late). */
  crawls: field({
    table: 'pages',
    column: 'crawls',
    type: 'integer',
    nullable: false,
    initial: 0,
    json: 'crawls',
    writtenBy: ['crawl'],
  }),
  /** In-order crawl intervals fed to the estimators (n), and those that saw a change (X). */
  intervals: field({
    table: 'pages',
    column: 'intervals',
    type: 'integer',
    nullable: false,
    initial: 0,
    json: 'intervals',
    writtenBy: ['crawl'],
  }),
  changes: field({
    table: 'pages',
    column: 'changes',
    type: 'integer',
    nullable: false,
    initial: 0,
    json: 'changes',
    writtenBy: ['crawl'],
  }),
  firstCrawledAtMs: field({
    table: 'pages',
    column: 'first_crawled_at',
    type: 'timestamptz',
    nullable: true,
    json: 'firstCrawledAt',
    writtenBy: ['crawl'],
  }),
  /** The latest crawl stored (a late crawl does not move it). */
  lastCrawledAtMs: field({
    table: 'pages',
    column: 'last_crawled_at',
    type: 'timestamptz',
    nullable: true,
    json: 'lastCrawledAt',
    writtenBy: ['crawl'],
  }),
  /** Start of the open interval: the latest crawl whose content state is known. */
  intervalStartAtMs: field({
    table: 'pages',
    column: 'interval_start_at',
    type: 'timestamptz',
    nullable: true,
    writtenBy: ['crawl'],
  }),
  lastChangedAtMs: field({
    table: 'pages',
    column: 'last_changed_at',
    type: 'timestamptz',
    nullable: true,
    json: 'lastChangedAt',
    writtenBy: ['crawl'],
  }),
  /** The content hash the next hash-only report is compared with. */
  lastContentHash: field({
    table: 'pages',
    column: 'last_content_hash',
    type: 'text',
    nullable: true,
    writtenBy: ['crawl'],
  }),
  /**
   * Sufficient statistics of every estimator as stored (src/math/estimators/codec.ts); null before the first
   * interval. The page step holds it decoded, as `estimator` (src/domain/pageRows.ts).
   */
  estimatorState: field({
    table: 'pages',
    column: 'estimator_state',
    type: 'bytea',
    nullable: true,
    state: false,
    writtenBy: ['crawl'],
  }),
  /** The scheduling estimate (settings.estimator, clipped); null before the first interval. */
  changesPerDay: field({
    table: 'pages',
    column: 'changes_per_day',
    type: 'double precision',
    nullable: true,
    json: 'changesPerDay',
    writtenBy: ['crawl', 'retime', 'optimizer'],
  }),
  /** The page's crawl rate; null before it was ever computed. */
  crawlsPerDay: field({
    table: 'page_schedule',
    column: 'crawls_per_day',
    type: 'double precision',
    nullable: true,
    json: 'crawlsPerDay',
    writtenBy: ['crawl', 'retime', 'optimizer'],
  }),
  /** When leases hand the page out next; null = never (rate 0). */
  nextCrawlAtMs: field({
    table: 'page_schedule',
    column: 'next_crawl_at',
    type: 'timestamptz',
    nullable: true,
    json: 'dueAt',
    writtenBy: ['crawl', 'retime', 'optimizer', 'register'],
  }),
  leaseId: field({
    table: 'page_schedule',
    column: 'lease_id',
    type: 'uuid',
    nullable: true,
    state: false,
    writtenBy: ['lease'],
  }),
  leasedBy: field({
    table: 'page_schedule',
    column: 'leased_by',
    type: 'text',
    nullable: true,
    state: false,
    writtenBy: ['lease'],
  }),
  leaseExpiresAtMs: field({
    table: 'page_schedule',
    column: 'lease_expires_at',
    type: 'timestamptz',
    nullable: true,
    state: false,
    writtenBy: ['lease'],
  }),
  /** When the lease holding the page was taken (migrations/0019): the lease overview's lease age. */
  leasedAtMs: field({
    table: 'page_schedule',
    column: 'leased_at',
    type: 'timestamptz',
    nullable: true,
    read: false,
    state: false,
    writtenBy: ['lease'],
  }),
  /** Bumped by every write of the page's state, attributes or schedule (migrations/0007, 0015). */
  version: field({
    table: 'page_schedule',
    column: 'version',
    type: 'counter',
    nullable: false,
    state: false,
    writtenBy: ['crawl', 'retime', 'optimizer', 'upsert'],
  }),
  status: field({
    table: 'pages',
    column: 'status',
    type: 'text',
    values: PAGE_STATUSES,
    nullable: false,
    initial: 'active',
    json: 'status',
    writtenBy: ['crawl'],
  }),
  /** Consecutive failed fetches (404, 410, errors), 0 after a success. */
  consecutiveFailures: field({
    table: 'pages',
    column: 'consecutive_failures',
    type: 'integer',
    nullable: false,
    initial: 0,
    json: 'consecutiveFailures',
    writtenBy: ['crawl'],
  }),
  lastHttpStatus: field({
    table: 'pages',
    column: 'last_http_status',
    type: 'smallint',
    nullable: true,
    json: 'lastHttpStatus',
    writtenBy: ['crawl'],
  }),
  lastSuccessAtMs: field({
    table: 'pages',
    column: 'last_success_at',
    type: 'timestamptz',
    nullable: true,
    json: 'lastSuccessAt',
    writtenBy: ['crawl'],
  }),
  /** The target of a 301 or 308 (a canonical URL). */
  redirectTo: field({
    table: 'pages',
    column: 'redirect_to',
    type: 'text',
    nullable: true,
    json: 'redirectTo',
    writtenBy: ['crawl'],
  }),
  /** Validators of the latest successful fetch, for a conditional request (If-None-Match, If-Modified-Since). */
  etag: field({ table: 'pages', column: 'etag', type: 'text', nullable: true, json: 'etag', writtenBy: ['crawl'] }),
  serverLastModifiedMs: field({
    table: 'pages',
    column: 'server_last_modified',
    type: 'timestamptz',
    nullable: true,
    json: 'lastModified',
    writtenBy: ['crawl'],
  }),
  /**
   * Its content hash changed on every fetch, at intervals where a page changing at most hourly would have shown no
   * change (docs/math.md 1.11), or even at the shortest probe interval: what the crawler hashes is
   * noise (ads, timestamps, tokens), not the page. Such a page is kept at its floor rate.
   */
  noisy: field({
    table: 'pages',
    column: 'noisy',
    type: 'boolean',
    nullable: false,
    initial: false,
    json: 'noisy',
    writtenBy: ['crawl'],
  }),
  /**
   * β of the fitted age law (null: Poisson) and its rate ratio (migrations/0012; docs/math.md 3.5): copies of
   * fields of the estimator state, written with it, read by the optimiser only.
   */
  ageShape: field({
    table: 'pages',
    column: 'age_shape',
    type: 'double precision',
    nullable: true,
    read: false,
    state: false,
    writtenBy: ['crawl'],
  }),
  ageShapeRateRatio: field({
    table: 'pages',
    column: 'age_shape_rate_ratio',
    type: 'double precision',
    nullable: true,
    read: false,
    state: false,
    writtenBy: ['crawl'],
  }),
} as const satisfies Record<string, PageField>

type Fields = typeof PAGE_FIELDS
export type PageFieldName = keyof Fields

/** The domain type of a field. */
type FieldValue<F extends PageField> =
  (F['values'] extends readonly (infer V)[] ? V : FieldTypes[F['type']]) | (F['nullable'] extends true ? null : never)

/** The domain type of the field named K. */
export type PageValue<K extends PageFieldName> = FieldValue<Fields[K]>

/** The names of the fields whose entry matches `Where`. */
type FieldsWhere<Where> = { [K in PageFieldName]: Fields[K] extends Where ? K : never }[PageFieldName]

/** An object with the given fields, each of its domain type (and its comment in the table). */
export type FieldValues<K extends PageFieldName> = {
  -readonly [P in keyof Fields as P extends K ? P : never]: FieldValue<Fields[P]>
}

/** The names of the fields that match `test`, in table order. */
export const fieldNamesWhere = <K extends PageFieldName>(test: (f: PageField) => boolean): readonly K[] =>
  (Object.keys(PAGE_FIELDS) as K[]).filter((k) => test(PAGE_FIELDS[k]))

/** Fields that every write moving them moves by one (the version). */
export type CounterFieldName = FieldsWhere<{ type: 'counter' }>

/** The stored row: every field read. */
export type PageRow = FieldValues<FieldsWhere<{ read: true }>>

export type StateFieldName = FieldsWhere<{ state: true }>
/** The fields of PageState that are stored as they are (PageState adds the decoded estimator state). */
export const STATE_FIELDS = fieldNamesWhere<StateFieldName>((f) => f.state)

/** One property of a compiled record: read `from` of the source, convert it with `via` if given, store as `to`. */
interface RecordProperty {
  from: string
  to: string
  via?: (value: never) => unknown
}

/**
 * Compiles a function that builds an object literal from a source object, property by property as listed.
 * The function is generated once from constant names (the field table's), so the engine sees a written-out
 * literal with named property reads: a loop of computed-key stores built the same objects about ten times
 * slower, and ingest builds several per reported page.
 */
export function compileRecord<S, T>(properties: readonly RecordProperty[]): (source: S) => T {
  const vias = properties.map((p) => p.via)
  const body = properties
    .map((p, i) => {
      const read = `s[${JSON.stringify(p.from)}]`
      return `${JSON.stringify(p.to)}: ${p.via === undefined ? read : `via[${i}](${read})`}`
    })
    .join(', ')
  return new Function('via', `return (s) => ({ ${body} })`)(vias) as (source: S) => T
}

/** The properties copying the named fields as they are. */
export const copied = (names: readonly string[]): RecordProperty[] => names.map((k) => ({ from: k, to: k }))

const INITIAL_VALUES: Record<string, unknown> = Object.fromEntries(
  STATE_FIELDS.map((k) => {
    const f: PageField = PAGE_FIELDS[k]
    return [k, f.initial ?? null]
  }),
)
const initialValues = compileRecord<Record<string, unknown>, Record<StateFieldName, unknown>>(copied(STATE_FIELDS))

/**
 * The stored part of a new page's state: each field's initial value, null where it has none. The fields a
 * registration gives (host, importance, bounds, due time) are the caller's to set.
 */
export const initialStateFields = (): Record<StateFieldName, unknown> => initialValues(INITIAL_VALUES)

/** The names of the fields the statements of `W` write. */
type WrittenBy<W extends PageWriter> = {
  [K in PageFieldName]: W extends Fields[K]['writtenBy'][number] ? K : never
}[PageFieldName]

export const fieldsWrittenBy = <W extends PageWriter>(writer: W): readonly WrittenBy<W>[] =>
  fieldNamesWhere<WrittenBy<W>>((f) => f.writtenBy.includes(writer))
