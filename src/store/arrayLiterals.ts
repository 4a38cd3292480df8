/**
 * Postgres array literals built in one pass. node-postgres encodes an array parameter element by element through
 * its generic value preparation; for the tens of thousands of elements of a sitemap's or an optimiser chunk's
 * statement, a literal built here costs a fraction of that. The statement casts the parameter (`$1::bigint[]`).
 */

/** `{1,2.5,NULL}`: numbers, digit strings (ids) or nulls. NaN is a fault, never stored. */
export function numberArrayLiteral(values: readonly (number | string | null)[]): string {
  let nulls = false
  for (const v of values) {
    if (v === null) nulls = true
    else if (typeof v === 'number' && Number.isNaN(v)) throw new RangeError('a computed number is NaN')
  }
  return `{${(nulls ? values.map((v) => (v === null ? 'NULL' : v)) : values).join(',')}}`
}

/** `{"a","b \"c\""}`: every element quoted, with its double quotes and backslashes escaped. */
export function textArrayLiteral(values: readonly string[]): string {
  let out = '{'
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!
    const escaped = v.includes('"') || v.includes('\\') ? v.replace(/["\\]/g, '\\$&') : v
    out += (i === 0 ? '"' : ',"') + escaped + '"'
  }
  return out + '}'
}
