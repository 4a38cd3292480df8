/**
 * The array literals of src/store/arrayLiterals.ts stand in for node-postgres's own array parameters: whatever a
 * statement is given that way, the database must read back exactly, on Postgres and on the embedded database.
 * Replay a failure with FUZZ_SEED=<seed printed below>; FUZZ_SEED=random explores other seeds.
 */
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { numberArrayLiteral, textArrayLiteral } from '../../src/store/arrayLiterals.ts'
import { openTestDatabase } from '../helpers/testApp.ts'
import { fuzzSeed } from '../helpers/fuzz.ts'

// Postgres text holds any character but NUL (the service refuses NUL before it reaches a statement).
const storableText = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replaceAll('\u0000', ''))
const awkwardText = fc.constantFrom('', 'NULL', 'null', ' ', '"', '\\', '\\"', ',', '{', '}', '{a,b}', 'a b', 'é€😀')

describe('array literals read back exactly', () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>
  before(async () => {
    db = await openTestDatabase(2)
  })
  after(async () => {
    await db.close()
  })
  const seed = fuzzSeed()

  it(`text: quotes, backslashes, commas, braces, spaces, "NULL" and any Unicode (seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(storableText, awkwardText), { maxLength: 30 }), async (values) => {
        const { rows } = await db.pool.query<{ a: string[] }>('SELECT $1::text[] AS a', [textArrayLiteral(values)])
        assert.deepEqual(rows[0]!.a, values)
      }),
      { seed, numRuns: 200 },
    )
  })

  it(`numbers: doubles at every scale, infinities, nulls and bigint ids (seed ${seed})`, async () => {
    const double = fc.double({ noNaN: true }).map((v) => (Object.is(v, -0) ? 0 : v))
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(double, { nil: null }), { maxLength: 30 }),
        fc.array(fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }), { maxLength: 30 }),
        async (doubles, ids) => {
          const { rows } = await db.pool.query<{ d: (number | null)[]; i: string[] }>(
            'SELECT $1::float8[] AS d, $2::bigint[]::text[] AS i',
            [numberArrayLiteral(doubles), numberArrayLiteral(ids.map(String))],
          )
          assert.deepEqual(rows[0]!.d, doubles)
          assert.deepEqual(rows[0]!.i, ids.map(String))
        },
      ),
      { seed, numRuns: 200 },
    )
  })

  it('refuses NaN instead of storing it', () => {
    assert.throws(() => numberArrayLiteral([1, Number.NaN]), RangeError)
  })
})
