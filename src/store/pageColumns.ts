/**
 * The SQL of the per-page fields, derived from their table (src/core/pageFields.ts): select lists, record
 * definitions, SET lists and the encoding of values sent as JSON or arrays. A page statement names the fields
 * it reads or writes by their domain names; the columns, types and conversions come from here.
 */
import {
  PAGE_FIELDS,
  type CounterFieldName,
  type PageField,
  type PageFieldName,
  type PageTable,
} from '../core/pageFields.ts'
import { isoTimestampOrNull } from '../core/timestamps.ts'

/** The alias each page table has in the page statements: `p` the pages row, `s` its page_schedule row. */
const ALIAS: Record<PageTable, string> = { pages: 'p', page_schedule: 's' }

/** A field's column as read into the domain: ids as text, the version as a number, times as epoch ms. */
function readExpression(f: PageField): string {
  const c = `${ALIAS[f.table]}.${f.column}`
  switch (f.type) {
    case 'bigint':
    case 'uuid':
      return `${c}::text`
    case 'counter':
      return `${c}::float8`
    case 'timestamptz':
      // Floored, as a JS Date would hold it: parsing text timestamps into Dates was a visible share of ingest CPU.
      return `floor(extract(epoch FROM ${c}) * 1000)::float8`
    default:
      return c
  }
}

/** `expr AS "name", …` for the given fields, in their order. */
export const selectList = (names: readonly PageFieldName[]): string =>
  names.map((k) => `${readExpression(PAGE_FIELDS[k])} AS "${k}"`).join(', ')

/** The SQL type a field travels as in a JSON record or an array parameter (bytes travel as base64 text). */
export function wireType(f: PageField): string {
  switch (f.type) {
    case 'counter':
      return 'bigint'
    case 'bytea':
      return 'text'
    default:
      return f.type
  }
}

/** `"name" type, …`: the column definitions of jsonb_to_recordset for the given fields. */
export const recordColumns = (names: readonly PageFieldName[]): string =>
  names.map((k) => `"${k}" ${wireType(PAGE_FIELDS[k])}`).join(', ')

/**
 * `column = u."name", …` for the given fields of one table, from the record `u`. A counter field (the
 * version) is not sent: every write moves it by one.
 */
export function setList(names: readonly PageFieldName[], table: PageTable): string {
  const alias = ALIAS[table]
  return names
    .filter((k) => PAGE_FIELDS[k].table === table)
    .map((k) => {
      const f = PAGE_FIELDS[k]
      if (f.type === 'counter') return `${f.column} = ${alias}.${f.column} + 1`
      if (f.type === 'bytea') return `${f.column} = decode(u."${k}", 'base64')`
      return `${f.column} = u."${k}"`
    })
    .join(', ')
}

/** The fields a statement sends (every field but the counters, which the statement moves itself). */
export const sentFields = <K extends PageFieldName>(names: readonly K[]): Exclude<K, CounterFieldName>[] =>
  names.filter((k): k is Exclude<K, CounterFieldName> => PAGE_FIELDS[k].type !== 'counter')

const toBase64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')

/** How a field's value travels, when it is converted: times as RFC 3339 text, bytes as base64. */
export function wireConverter(f: PageField): ((value: never) => unknown) | undefined {
  if (f.type === 'timestamptz') return isoTimestampOrNull
  if (f.type === 'bytea') return (bytes: Uint8Array | null) => (bytes === null ? null : toBase64(bytes))
  return undefined
}

/** A value as it travels (see wireConverter). */
export function wireValue(f: PageField, value: unknown): unknown {
  const convert = wireConverter(f) as ((value: unknown) => unknown) | undefined
  return convert === undefined ? value : convert(value)
}
