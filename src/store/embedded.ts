import { randomBytes } from 'node:crypto'
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { MS_PER_SECOND } from '../math/units.ts'

/**
 * Sharing one embedded database directory between processes (docs/design.md, "Embedded default").
 *
 * PGlite is one Postgres backend inside one process: a second process that opens the same directory
 * corrupts it. So the process that opens a directory owns it and says so in OWNER_FILE (its pid and
 * the loopback port of its socket); every other process (the CLI while the service runs) connects to
 * that socket instead of opening the directory. Stale files (their process is gone) are replaced.
 */
export const OWNER_FILE = 'recrawl-owner.json'

export type OwnerPurpose = 'service' | 'command'

interface OwnerRecord {
  pid: number
  /** Loopback TCP port of the owner's socket; null while the owner is still starting. */
  port: number | null
  purpose: OwnerPurpose
  startedAt: string
}

type DirectoryClaim =
  | { owned: true; publish(port: number): Promise<void>; release(): Promise<void> }
  | { owned: false; owner: OwnerRecord & { port: number } }

/** Directories this process owns: a record naming our own pid is stale unless listed here. */
const ownedHere = new Set<string>()

const CLAIM_POLL_MS = 100
/** How long a claim waits for a command that holds the directory to finish. */
const CLAIM_WAIT_MS = 10_000
/** A record that stays unreadable this long was cut short by a crash between creating and writing it. */
const UNREADABLE_STALE_MS = 2_000

function isAlive(pid: number, dir: string): boolean {
  if (pid === process.pid) return ownedHere.has(dir)
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function readOwner(path: string): Promise<OwnerRecord | 'missing' | 'unreadable'> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing'
    throw err
  }
  try {
    const record = JSON.parse(text) as OwnerRecord
    return Number.isInteger(record.pid) && record.pid > 0 ? record : 'unreadable'
  } catch {
    return 'unreadable' // being written right now
  }
}

/** Writes the record whole or not at all (readers never see half a file). */
async function writeOwner(path: string, record: OwnerRecord): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(temporary, JSON.stringify(record))
  await rename(temporary, path)
}

/**
 * Takes ownership of `dir`, or finds the live process that has it. A `service` claim never shares:
 * it fails when a service owns the directory and waits (up to `waitMs`) for a command to finish.
 */
export async function claimDirectory(
  dir: string,
  purpose: OwnerPurpose,
  waitMs = CLAIM_WAIT_MS,
): Promise<DirectoryClaim> {
  const path = join(dir, OWNER_FILE)
  const deadline = Date.now() + waitMs
  for (;;) {
    const mine: OwnerRecord = { pid: process.pid, port: null, purpose, startedAt: new Date().toISOString() }
    try {
      await writeFile(path, JSON.stringify(mine), { flag: 'wx' })
      ownedHere.add(dir)
      return {
        owned: true,
        publish: (port) => writeOwner(path, { ...mine, port }),
        async release() {
          ownedHere.delete(dir)
          const current = await readOwner(path)
          if (typeof current === 'object' && current.pid === process.pid) await unlink(path).catch(() => undefined)
        },
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const owner = await readOwner(path)
    if (owner === 'missing') continue // released in between: try again at once
    const stale =
      owner === 'unreadable'
        ? Date.now() -
            (await stat(path).then(
              (s) => s.mtimeMs,
              () => Date.now(),
            )) >
          UNREADABLE_STALE_MS
        : !isAlive(owner.pid, dir)
    if (stale) {
      // Left behind by a process that died without closing. Only remove what we read.
      const again = await readOwner(path)
      if (typeof again === 'object' ? owner !== 'unreadable' && again.pid === owner.pid : again === owner) {
        await unlink(path).catch(() => undefined)
      }
      continue
    }
    if (owner !== 'unreadable' && owner.port !== null) {
      if (purpose === 'command') return { owned: false, owner: { ...owner, port: owner.port } }
      if (owner.purpose === 'service') {
        throw new Error(
          `the embedded database in ${dir} is in use by another recrawl service (pid ${owner.pid}); stop it first, or set DATA_DIR to another directory`,
        )
      }
    }
    if (Date.now() > deadline) {
      const who = owner === 'unreadable' ? 'another process' : `process ${owner.pid} (${owner.purpose})`
      throw new Error(
        `the embedded database in ${dir} is held by ${who}; waited ${Math.round(waitMs / MS_PER_SECOND)} s (remove ${path} only if no recrawl process runs)`,
      )
    }
    await new Promise((r) => setTimeout(r, CLAIM_POLL_MS))
  }
}

/** Frontend messages after which the same connection must send more before another may run (extended query protocol). */
const OPEN_TURN_MESSAGES = new Set(['P', 'B', 'D', 'E', 'C', 'H', 'd'].map((c) => c.charCodeAt(0)))
const NOTIFICATION_RESPONSE = 'A'.charCodeAt(0)

/**
 * Reads NotificationResponse messages out of the backend's output stream: one message type byte
 * and an int32 length (counting itself), then for 'A' an int32 pid and two C strings.
 */
class NotificationScanner {
  private readonly header = Buffer.alloc(5)
  private headerBytes = 0
  private bodyLeft = 0
  private body: Buffer[] | null = null

  constructor(private readonly emit: (channel: string) => void) {}

  push(chunk: Uint8Array): void {
    let i = 0
    while (i < chunk.length) {
      if (this.bodyLeft === 0) {
        const n = Math.min(5 - this.headerBytes, chunk.length - i)
        this.header.set(chunk.subarray(i, i + n), this.headerBytes)
        this.headerBytes += n
        i += n
        if (this.headerBytes < 5) return
        this.bodyLeft = this.header.readInt32BE(1) - 4
        this.body = this.header[0] === NOTIFICATION_RESPONSE ? [] : null
        if (this.bodyLeft <= 0) this.endMessage()
        continue
      }
      const n = Math.min(this.bodyLeft, chunk.length - i)
      this.body?.push(Buffer.from(chunk.subarray(i, i + n)))
      this.bodyLeft -= n
      i += n
      if (this.bodyLeft === 0) this.endMessage()
    }
  }

  private endMessage(): void {
    const body = this.body
    this.headerBytes = 0
    this.bodyLeft = 0
    this.body = null
    if (body) {
      const bytes = Buffer.concat(body)
      const end = bytes.indexOf(0, 4)
      if (end > 4) this.emit(bytes.toString('utf8', 4, end))
    }
  }
}

interface GuardedPGlite {
  /** The instance to hand to the socket server. */
  db: PGlite
  /** Calls `listener` whenever a committed NOTIFY on `channel` leaves the backend, whoever sent it. */
  onNotify(channel: string, listener: () => void): () => void
}

/**
 * Wraps PGlite for @electric-sql/pglite-socket with more than one connection.
 *
 * The socket server runs one message at a time and, while PGlite reports an open transaction, only
 * messages of the connection that opened it. An extended-query exchange (Parse, Bind, Describe,
 * Execute, … Sync) is not a transaction block, so another connection's message could land between a
 * Parse and its Bind when a large message arrives in several TCP chunks, and bind the wrong
 * statement. The wrapper reports a transaction for as long as such an exchange is open, so each
 * exchange runs whole.
 *
 * PGlite is one backend for every connection, so a NOTIFY's NotificationResponse goes out on the
 * connection that committed, not on the one that listened. The wrapper reads the output and calls
 * the listeners of this process directly, before the committer even sees its COMMIT complete.
 */
export function guardPGlite(db: PGlite): GuardedPGlite {
  let turnOpen = false
  const listeners = new Map<string, Set<() => void>>()
  const scanner = new NotificationScanner((channel) => {
    for (const listener of listeners.get(channel) ?? []) {
      try {
        listener()
      } catch {
        // A listener's failure must not break the database connection that carried the notification.
      }
    }
  })
  const overrides: Partial<PGlite> = {
    isInTransaction: () => turnOpen || db.isInTransaction(),
    execProtocolRawStream: (message, options) => {
      turnOpen = OPEN_TURN_MESSAGES.has(message[0]!)
      return db.execProtocolRawStream(message, {
        ...options,
        onRawData: (data) => {
          scanner.push(data)
          options.onRawData(data)
        },
      })
    },
    // The socket server rolls back with exec() when a connection leaves in the middle of its turn.
    exec: async (...args: Parameters<PGlite['exec']>) => {
      turnOpen = false
      return db.exec(...args)
    },
  }
  const guarded = new Proxy(db, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof PGlite]
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return {
    db: guarded,
    onNotify(channel, listener) {
      let set = listeners.get(channel)
      if (!set) listeners.set(channel, (set = new Set()))
      set.add(listener)
      return () => set.delete(listener)
    },
  }
}
