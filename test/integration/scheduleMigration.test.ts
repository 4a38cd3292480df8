/**
 * migrations/0015 moves each page's importance, rate, due time, lease, politeness mark and version into a
 * page_schedule row of its own. Every value must arrive as it was, and the rules that kept them must hold on
 * the new table: the host copy follows the page, a paced host marks its pages, a deleted page takes its row.
 */
import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { openDatabaseBefore } from '../helpers/testApp.ts'

interface ScheduleRow {
  url: string
  host: string
  importance: number
  rate: number | null
  due: string | null
  polite: boolean
  lease: string | null
  leasedBy: string | null
  leaseExpires: string | null
  version: number
}

describe('migration 0015: the schedule gets a table of its own', () => {
  let older: Awaited<ReturnType<typeof openDatabaseBefore>>
  let db: (typeof older)['db']

  before(async () => {
    older = await openDatabaseBefore('0015')
    db = older.db
  })
  after(() => older.close())

  const read = async (): Promise<ScheduleRow[]> =>
    (
      await db.pool.query<ScheduleRow>(
        `SELECT p.url, s.host, s.importance, s.crawls_per_day AS rate, s.next_crawl_at::text AS due, s.polite, s.lease_id::text AS lease,
                s.leased_by AS "leasedBy", s.lease_expires_at::text AS "leaseExpires", s.version::float8 AS version
         FROM pages p JOIN page_schedule s ON s.page_id = p.id ORDER BY p.id`,
      )
    ).rows

  it('keeps every value, then keeps the host copy, the politeness marks and deletions in step with the pages', async () => {
    await db.pool.query(`INSERT INTO hosts (host, min_delay_seconds) VALUES ('paced.example', 30)`)
    await db.pool.query(
      `INSERT INTO pages (url, host, importance, crawls_per_day, next_crawl_at, lease_id, leased_by, lease_expires_at)
       VALUES ('https://a.example/1', 'a.example', 2.5, 4, '2026-01-02 03:04:05.678+00', NULL, NULL, NULL),
              ('https://a.example/2', 'a.example', 0, NULL, NULL, '7d3c7b7e-0000-4000-8000-000000000001', 'worker-1', '2026-01-03 00:00:00+00'),
              ('https://paced.example/1', 'paced.example', 1, 0.25, '2026-01-01 00:00:00+00', NULL, NULL, NULL)`,
    )
    await db.pool.query(`UPDATE pages SET version = 7 WHERE url = 'https://a.example/1'`)
    const before = (
      await db.pool.query<ScheduleRow>(
        `SELECT url, host, importance, crawls_per_day AS rate, next_crawl_at::text AS due, polite, lease_id::text AS lease,
                leased_by AS "leasedBy", lease_expires_at::text AS "leaseExpires", version::float8 AS version
         FROM pages ORDER BY id`,
      )
    ).rows
    assert.deepEqual(
      before.map((r) => r.polite),
      [false, false, true],
    )

    assert.deepEqual(await older.applyNext(), ['0015'])
    assert.deepEqual(await read(), before)
    const { rows: columns } = await db.pool.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'pages' AND column_name IN ('importance', 'next_crawl_at', 'lease_id', 'polite', 'version')`,
    )
    assert.deepEqual(columns, [], 'the moved columns are gone from pages')

    // A page that moves to a paced host: its schedule row follows, is marked polite, and its version moves.
    await db.pool.query(
      `UPDATE pages SET url = 'https://paced.example/2', host = 'paced.example' WHERE url = 'https://a.example/1'`,
    )
    let rows = await read()
    assert.deepEqual([rows[0]!.host, rows[0]!.polite, rows[0]!.version], ['paced.example', true, 8])
    // The host loses its pace: its pages are unmarked; it gains one again: marked.
    await db.pool.query(`UPDATE hosts SET min_delay_seconds = NULL WHERE host = 'paced.example'`)
    assert.deepEqual(
      (await read()).map((r) => r.polite),
      [false, false, false],
    )
    await db.pool.query(`UPDATE hosts SET crawl_delay_seconds = 5 WHERE host = 'paced.example'`)
    assert.deepEqual(
      (await read()).map((r) => r.polite),
      [true, false, true],
    )
    // A new schedule row of a paced host starts polite.
    await db.pool.query(
      `WITH page AS (INSERT INTO pages (url, host) VALUES ('https://paced.example/3', 'paced.example') RETURNING id, host)
       INSERT INTO page_schedule (page_id, host) SELECT id, host FROM page`,
    )
    rows = await read()
    assert.deepEqual([rows[3]!.polite, rows[3]!.importance, rows[3]!.version], [true, 1, 0])
    // A schedule row cannot name another host than its page's, and a deleted page takes its row along.
    await assert.rejects(
      db.pool.query(
        `UPDATE page_schedule SET host = 'elsewhere.example' WHERE page_id = (SELECT min(page_id) FROM page_schedule)`,
      ),
      /foreign key/,
    )
    await db.pool.query(`DELETE FROM pages WHERE url = 'https://a.example/2'`)
    const { rows: left } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM page_schedule')
    assert.equal(left[0]!.n, 3)
  })
})
