/**
 * The schema keeps out what Citus refuses on distributed tables (docs/design.md, "Citus: what the schema no
 * longer uses"): triggers, sequences other than identity columns', and foreign keys that act on update. And
 * migrations/0026, which removed them, carries the state they kept: the page-deletion counter never goes back,
 * and a paced host's pages stay marked.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { migrate } from '../../src/store/migrate.ts'
import { openDatabaseBefore, openTestDatabase } from '../helpers/testApp.ts'

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
      // What follows 0026 applies on top of it.
      assert.ok((await migrate(pool)).every((version) => version > '0026'))
    } finally {
      await older.close()
    }
  })
})
