import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type Database } from '../../src/store/db.ts'
import { OWNER_FILE } from '../../src/store/embedded.ts'

// One embedded database directory shared by an owner (the service) and a guest (a CLI command)
// in this process: the guest reaches the owner's socket, never the directory.

// Creating a database directory takes seconds; each test gets a copy of one made here (never written).
let template: string
before(async () => {
  template = mkdtempSync(join(tmpdir(), 'recrawl-sharing-template-'))
  const db = await openDatabase({ databaseUrl: undefined, dataDir: template, poolSize: 1, purpose: 'service' })
  await db.close()
})
after(() => rmSync(template, { recursive: true, force: true }))

function freshDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recrawl-sharing-'))
  cpSync(template, dir, { recursive: true })
  return dir
}

async function withOwnerAndGuest(
  work: (owner: Database, guest: Database, dir: string) => Promise<void>,
): Promise<void> {
  const dir = freshDirectory()
  const owner = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'service' })
  try {
    const guest = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'command' })
    try {
      await work(owner, guest, dir)
    } finally {
      await guest.close()
    }
  } finally {
    await owner.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('an embedded database shared with a CLI command', () => {
  it('the guest reaches the owner through the socket named in the owner file', async () => {
    await withOwnerAndGuest(async (owner, guest, dir) => {
      const record = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8'))
      assert.equal(record.pid, process.pid)
      assert.equal(record.purpose, 'service')
      assert.ok(Number.isInteger(record.port) && record.port > 0)
      assert.match(guest.location, new RegExp(`through process ${process.pid}`))
      await owner.pool.query('CREATE TABLE shared_probe (v int)')
      await guest.pool.query('INSERT INTO shared_probe VALUES (7)')
      assert.deepEqual((await owner.pool.query('SELECT v FROM shared_probe')).rows, [{ v: 7 }])
    })
  })

  it('never runs one connection’s message inside another’s extended-query exchange', async () => {
    await withOwnerAndGuest(async (owner, guest) => {
      // The owner's Parse reaches the database while its Bind … Sync are still on the way (as when a
      // large Bind arrives in several TCP chunks). A guest query sent meanwhile must wait for the Sync:
      // run in between, its Parse would replace the owner's statement and take the owner's parameters.
      const client = await owner.pool.connect()
      try {
        const stream = (client as unknown as { connection: { stream: { write: (...args: unknown[]) => boolean } } })
          .connection.stream
        const write = stream.write.bind(stream)
        const held: unknown[][] = []
        let writes = 0
        stream.write = (...args: unknown[]) => {
          if (writes++ === 0) return write(...args) // Parse
          held.push(args)
          return true
        }
        const ownerQuery = client.query('SELECT $1::text AS a', ['owner'])
        const guestQuery = guest.pool.query('SELECT $1::int + 1 AS v', [1])
        const guestFirst = await Promise.race([
          guestQuery.then(
            () => true,
            () => true,
          ),
          new Promise((r) => setTimeout(() => r(false), 300)),
        ])
        stream.write = write
        for (const args of held) write(...args)
        assert.equal(guestFirst, false, 'the guest query waited for the owner’s Sync')
        assert.deepEqual((await ownerQuery).rows, [{ a: 'owner' }])
        assert.deepEqual((await guestQuery).rows, [{ v: 2 }])
      } finally {
        client.release()
      }
    })
  })

  it('runs a guest transaction whole: the owner never sees its uncommitted rows', async () => {
    await withOwnerAndGuest(async (owner, guest) => {
      await owner.pool.query('CREATE TABLE txn_probe (v int)')
      const client = await guest.pool.connect()
      try {
        await client.query('BEGIN')
        await client.query('INSERT INTO txn_probe VALUES (1)')
        const ownerCount = owner.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM txn_probe')
        await new Promise((r) => setTimeout(r, 50))
        await client.query('ROLLBACK')
        assert.equal((await ownerCount).rows[0]!.n, 0)
      } finally {
        client.release()
      }
    })
  })

  it('delivers a NOTIFY committed by the guest to the owner’s listener before the guest’s COMMIT returns', async () => {
    await withOwnerAndGuest(async (owner, guest) => {
      let calls = 0
      const stop = await owner.subscribe('sharing_probe', () => calls++)
      const client = await guest.pool.connect()
      try {
        await client.query('BEGIN')
        await client.query("SELECT pg_notify('sharing_probe', '')")
        await client.query('ROLLBACK')
        assert.equal(calls, 0, 'a rolled-back NOTIFY is never delivered')
        await client.query('BEGIN')
        await client.query("SELECT pg_notify('sharing_probe', 'x')")
        await client.query("SELECT pg_notify('another_channel', '')")
        await client.query('COMMIT')
        assert.equal(calls, 1)
      } finally {
        client.release()
      }
      await stop()
      await guest.pool.query("SELECT pg_notify('sharing_probe', '')")
      assert.equal(calls, 1, 'no call after unsubscribing')
      await assert.rejects(
        guest.subscribe('sharing_probe', () => undefined),
        /owns/,
      )
    })
  })

  it('a second service cannot open a directory a live service owns; a closed owner removes its file', async () => {
    const dir = freshDirectory()
    try {
      const owner = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'service' })
      await assert.rejects(
        openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'service' }),
        new RegExp(`in use by another recrawl service \\(pid ${process.pid}\\)`),
      )
      await owner.close()
      assert.equal(existsSync(join(dir, OWNER_FILE)), false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('replaces an owner file left by a process that died, and one cut short while being written', async () => {
    const dir = freshDirectory()
    try {
      const first = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'service' })
      await first.pool.query('CREATE TABLE kept (v int)')
      await first.pool.query('INSERT INTO kept VALUES (42)')
      await first.close()

      const deadPid = spawnSync(process.execPath, ['-e', '']).pid
      writeFileSync(
        join(dir, OWNER_FILE),
        JSON.stringify({ pid: deadPid, port: 1, purpose: 'service', startedAt: new Date().toISOString() }),
      )
      const second = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'command' })
      assert.equal(second.location, dir, 'owns the directory instead of connecting to a dead socket')
      assert.deepEqual((await second.pool.query('SELECT v FROM kept')).rows, [{ v: 42 }])
      await second.close()

      writeFileSync(join(dir, OWNER_FILE), '')
      const old = new Date(Date.now() - 60_000)
      utimesSync(join(dir, OWNER_FILE), old, old)
      const third = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, purpose: 'service' })
      assert.equal(third.location, dir)
      await third.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
