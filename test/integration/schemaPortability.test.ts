/**
 * The schema keeps out what Citus refuses on distributed tables (docs/design.md, "Citus: what the schema no
 * longer uses"): triggers, sequences other than identity columns', and foreign keys that act on update. And
 * migrations/0026, which removed them, carries the state they kept: the page-deletion counter never goes back,
 * and a paced host's pages stay marked.
 */
import { readdir, readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { PAGE_FIELDS, type PageFieldName } from '../../src/core/pageFields.ts'
import { loadMigrations, migrate } from '../../src/store/migrate.ts'
import { readOptimizerChunk } from '../../src/store/optimizerRepo.ts'
import { utcHourStart } from '../../src/store/statsRepo.ts'
import { openDatabaseBefore, openTestDatabase } from '../helpers/testApp.ts'

const STORE_DIR = new URL('../../src/store/', import.meta.url)

/** Every statement file of src/store, by name. */
async function storeSources(): Promise<Map<string, string>> {
  const names = (await readdir(STORE_DIR)).filter((n) => n.endsWith('.ts'))
  return new Map(await Promise.all(names.map(async (n) => [n, await readFile(new URL(n, STORE_DIR), 'utf8')] as const)))
}

/** Schedule columns a statement may write without stamping the change epoch: the optimiser reads none of them. */
const UNSTAMPED_SCHEDULE_COLUMNS = new Set(['lease_id', 'leased_by', 'lease_expires_at', 'leased_at', 'polite'])

describe('a schema Citus can distribute', () => {
  it('has no triggers, no sequences besides identity columns, and no foreign key that acts on update', async () => {
    const db = await openTestDatabase(2)
    try {
      const { rows: triggers } = await db.pool.query<{ name: string }>(
        `SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND NOT t.tgisinternal`,
      )
      assert.deepEqual(triggers, [])
      const { rows: sequences } = await db.pool.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'S'
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'i')`,
      )
      assert.deepEqual(sequences, [])
      const { rows: keys } = await db.pool.query<{ name: string }>(
        `SELECT conname AS name FROM pg_constraint WHERE contype = 'f' AND confupdtype <> 'a'`,
      )
      assert.deepEqual(keys, [])
    } finally {
      await db.close()
    }
  })

  it('buckets lease history by whole UTC hours with an immutable expression, in any session time zone', async () => {
    // Citus refuses functions that are not immutable in a distributed statement's RETURNING, where the lease
    // statements compute the hour; an index expression must be immutable too, so building one checks it here.
    const db = await openTestDatabase(1)
    const client = await db.pool.connect()
    try {
      await client.query(`SET TIME ZONE 'Asia/Kolkata'`)
      await client.query(`CREATE TEMP TABLE hour_check (t timestamptz)`)
      await client.query(`CREATE INDEX ON hour_check ((${utcHourStart('t')}))`)
      const { rows } = await client.query<{ hour: Date }>(`SELECT ${utcHourStart('$1::timestamptz')} AS hour`, [
        '2026-11-27T15:45:12.345Z',
      ])
      assert.equal(rows[0]!.hour.toISOString(), '2026-11-27T15:00:00.000Z')
    } finally {
      client.release()
      await db.close()
    }
  })

  it('migration 0026 keeps the deletion counter moving forward and the paced hosts’ pages marked', async () => {
    const older = await openDatabaseBefore('0026')
    const { pool } = older.db
    try {
      await pool.query(
        `INSERT INTO hosts (host, min_delay_seconds) VALUES ('paced.example', 30), ('free.example', NULL)`,
      )
      await pool.query(
        `WITH p AS (INSERT INTO pages (url, host) VALUES ('https://paced.example/1', 'paced.example'),
           ('https://free.example/1', 'free.example'), ('https://free.example/2', 'free.example') RETURNING id, host)
         INSERT INTO page_schedule (page_id, host) SELECT id, host FROM p`,
      )
      await pool.query(`DELETE FROM pages WHERE url = 'https://free.example/2'`)
      await pool.query(`DELETE FROM pages WHERE url = 'https://nothing.example/'`)
      const { rows: seq } = await pool.query<{ n: string }>(
        'SELECT (CASE WHEN is_called THEN last_value ELSE 0 END)::text AS n FROM page_deletions',
      )

      assert.deepEqual(await older.applyNext(), ['0026'])
      const { rows: counter } = await pool.query<{ n: string }>('SELECT statements::text AS n FROM page_deletion_count')
      assert.ok(BigInt(counter[0]!.n) > BigInt(seq[0]!.n), `${counter[0]!.n} after ${seq[0]!.n}`)
      const { rows: hosts } = await pool.query(`SELECT host, pages_polite FROM hosts ORDER BY host`)
      assert.deepEqual(hosts, [
        { host: 'free.example', pages_polite: false },
        { host: 'paced.example', pages_polite: true },
      ])
      const { rows: marks } = await pool.query(
        `SELECT p.url, s.polite FROM pages p JOIN page_schedule s ON s.page_id = p.id ORDER BY p.url`,
      )
      assert.deepEqual(marks, [
        { url: 'https://free.example/1', polite: false },
        { url: 'https://paced.example/1', polite: true },
      ])
      // The foreign key still keeps the schedule's host copy equal to its page's, and still deletes with the page.
      await assert.rejects(
        pool.query(`UPDATE page_schedule SET host = 'elsewhere.example' WHERE host = 'free.example'`),
        /foreign key/,
      )
      await assert.rejects(
        pool.query(`UPDATE pages SET host = 'elsewhere.example' WHERE host = 'free.example'`),
        /foreign key/,
      )
      await pool.query(`DELETE FROM pages WHERE host = 'free.example'`)
      const { rows: left } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM page_schedule')
      assert.equal(left[0]!.n, 1)
      // The later migrations apply over it.
      const later = (await loadMigrations()).map((m) => m.version).filter((v) => v > '0026')
      assert.deepEqual(await migrate(pool), later)
    } finally {
      await older.close()
    }
  })

  it('migration 0028 stamps stored schedule rows with epoch 0 and wants a stamp on every new one', async () => {
    const older = await openDatabaseBefore('0028')
    const { pool } = older.db
    try {
      await pool.query(
        `WITH p AS (INSERT INTO pages (url, host) VALUES ('https://stored.example/1', 'stored.example') RETURNING id, host)
         INSERT INTO page_schedule (page_id, host) SELECT id, host FROM p`,
      )
      assert.deepEqual(await older.applyNext(), ['0028'])
      const { rows: stamps } = await pool.query('SELECT change_epoch::int AS e FROM page_schedule')
      assert.deepEqual(stamps, [{ e: 0 }])
      const { rows: epoch } = await pool.query('SELECT epoch::int AS e FROM change_epoch')
      assert.deepEqual(epoch, [{ e: 1 }])
      await assert.rejects(
        pool.query(
          `WITH p AS (INSERT INTO pages (url, host) VALUES ('https://stored.example/2', 'stored.example') RETURNING id, host)
           INSERT INTO page_schedule (page_id, host) SELECT id, host FROM p`,
        ),
        /change_epoch/,
      )
    } finally {
      await older.close()
    }
  })

  it('finds changed pages by the change epoch, not by transaction ids', async () => {
    // On Citus a row's xmin is its worker's transaction id, which the coordinator's snapshot knows nothing of.
    // The settings' version check (settingsRepo.ts) compares a row's xmin only with itself read earlier.
    for (const [name, text] of await storeSources()) {
      if (name === 'settingsRepo.ts') continue
      assert.doesNotMatch(text, /\bxmin\b|pg_current_snapshot|pg_snapshot_xmin|pg_current_xact_id|txid_/, name)
    }
  })

  it('stamps the change epoch in every statement that writes what the optimiser reads of a page', async () => {
    const db = await openTestDatabase(2)
    try {
      // What the optimiser reads of a page (its chunk has a column per field): none of it may go unstamped.
      const read = Object.keys(await readOptimizerChunk(db.pool, null, 1)) as PageFieldName[]
      assert.ok(read.length > 10)
      for (const k of read) {
        const f = PAGE_FIELDS[k]
        assert.ok(
          !(f.table === 'page_schedule' && UNSTAMPED_SCHEDULE_COLUMNS.has(f.column)),
          `the optimiser reads ${k}`,
        )
      }
    } finally {
      await db.close()
    }
    let schedule = 0
    for (const [name, text] of await storeSources()) {
      for (const m of text.matchAll(
        /UPDATE page_schedule\b|INSERT INTO page_schedule\b|UPDATE pages\b|INSERT INTO pages\b/g,
      )) {
        const at = m.index
        const where = `${name}:${text.slice(0, at).split('\n').length}`
        if (m[0] === 'UPDATE page_schedule') {
          schedule++
          const set = text.slice(at).split(/\b(?:FROM|WHERE|RETURNING)\b/)[0]!
          if (set.includes('change_epoch')) continue
          const columns = [...set.matchAll(/(?:SET|,)\s*(\w+)\s*=/g)].map((c) => c[1]!)
          assert.ok(columns.length > 0, `${where}: no columns found in ${set}`)
          for (const c of columns)
            assert.ok(UNSTAMPED_SCHEDULE_COLUMNS.has(c), `${where}: writes ${c} without stamping the change epoch`)
        } else if (m[0] === 'INSERT INTO page_schedule') {
          schedule++
          const columns = text.slice(at).split(/\b(?:SELECT|VALUES)\b/)[0]!
          assert.match(columns, /change_epoch/, `${where}: a new schedule row without a change epoch`)
        } else {
          // A page's row is written with its schedule row, in the same statement (one template).
          const start = text.lastIndexOf('`', at)
          const end = text.indexOf('`', at)
          assert.match(text.slice(start, end), /change_epoch/, `${where}: a page write without its schedule's stamp`)
        }
      }
    }
    assert.ok(schedule >= 14, `found ${schedule} statements that write page_schedule`)
  })
})
