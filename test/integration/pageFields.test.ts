/**
 * The per-page field table (src/core/pageFields.ts) against what it describes: the columns the migrations
 * create, and the Page object of the API. A field added to one and not the other fails here.
 */
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { openTestDatabase } from '../helpers/testApp.ts'
import { PAGE_FIELDS } from '../../src/core/pageFields.ts'
import { DERIVED_PROPERTIES, pageSchema } from '../../src/domain/pages.ts'
import { newPageState } from '../../src/core/pageStep.ts'

/** information_schema's name of each SQL type the table uses. */
const DATA_TYPE: Record<string, string> = {
  bigint: 'bigint',
  counter: 'bigint',
  text: 'text',
  uuid: 'uuid',
  integer: 'integer',
  smallint: 'smallint',
  'double precision': 'double precision',
  timestamptz: 'timestamp with time zone',
  boolean: 'boolean',
  bytea: 'bytea',
}

describe('the per-page field table', () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>
  before(async () => {
    db = await openTestDatabase(1)
  })
  after(() => db.close())

  it('names every field with its column, type and nullability as the migrations create them', async () => {
    const { rows } = await db.pool.query<{
      table: string
      column: string
      type: string
      nullable: boolean
      default: string | null
    }>(
      `SELECT table_name AS table, column_name AS column, data_type AS type, is_nullable = 'YES' AS nullable,
         column_default AS default
       FROM information_schema.columns WHERE table_schema = current_schema() AND table_name IN ('pages', 'page_schedule')`,
    )
    const stored = new Map(rows.map((r) => [`${r.table}.${r.column}`, r]))
    for (const [name, f] of Object.entries(PAGE_FIELDS)) {
      const column = stored.get(`${f.table}.${f.column}`)
      assert.ok(column, `${name}: no column ${f.table}.${f.column}`)
      assert.equal(column.type, DATA_TYPE[f.type], `${name}: type`)
      assert.equal(column.nullable, f.nullable, `${name}: nullable`)
      if ('initial' in f) {
        const literal = typeof f.initial === 'string' ? `'${f.initial}'::text` : String(f.initial)
        assert.equal(column.default, literal, `${name}: a new page's value is the column's default`)
      }
    }
  })

  it("gives a new page's state a value for every field that cannot be null", () => {
    const page = newPageState({ host: 'a.example' }, 0)
    for (const [name, f] of Object.entries(PAGE_FIELDS)) {
      if (!f.state) continue
      const value = (page as Record<string, unknown>)[name]
      assert.notEqual(value, undefined, name)
      if (!f.nullable) assert.notEqual(value, null, name)
    }
  })

  it('gives a JSON name to exactly the Page properties shown as stored', () => {
    const shown = Object.values(PAGE_FIELDS).flatMap((f) => ('json' in f ? [f.json] : []))
    assert.deepEqual([...shown, ...DERIVED_PROPERTIES].sort(), Object.keys(pageSchema.shape).sort())
  })
})
