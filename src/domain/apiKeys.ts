import { createHash, randomBytes } from 'node:crypto'
import {
  API_KEYS_CHANNEL,
  countActiveKeys,
  findActiveKeyRole,
  insertApiKey,
  listApiKeys,
  notifyApiKeysChanged,
  revokeApiKey,
  type Role,
} from '../store/apiKeysRepo.ts'
import type { Database } from '../store/db.ts'
import { withTransaction } from '../store/transaction.ts'
import { NotFoundError } from '../core/errors.ts'
import type { DomainDeps } from './deps.ts'

export type { Role }
export const ROLES: readonly Role[] = ['crawler', 'reader', 'admin']

/** Keys are stored only as their SHA-256; a 256-bit random key needs no slow hash. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

interface CreatedApiKey {
  id: string
  key: string
  role: Role
  name: string
  /** No other key was active: from now on every API request needs a key, loopback or not. */
  first: boolean
}

/**
 * Creates a key and returns it in clear, once; it cannot be shown again. Every replica learns of it
 * at commit (API_KEYS_CHANNEL), so it works at once and, as the first key, ends open loopback access.
 */
export async function createApiKey(
  deps: Pick<DomainDeps, 'pool'>,
  options: { name: string; role: Role },
): Promise<CreatedApiKey> {
  const key = `rk_${randomBytes(32).toString('base64url')}`
  const { id, first } = await withTransaction(deps.pool, async (c) => {
    const activeBefore = await countActiveKeys(c)
    const inserted = await insertApiKey(c, { name: options.name, role: options.role, keySha256: hashApiKey(key) })
    await notifyApiKeysChanged(c)
    return { id: inserted.id, first: activeBefore === 0 }
  })
  return { id, key, role: options.role, name: options.name, first }
}

export async function roleOfKey(deps: Pick<DomainDeps, 'pool'>, key: string): Promise<Role | null> {
  return findActiveKeyRole(deps.pool, hashApiKey(key))
}

export async function activeKeyCount(deps: Pick<DomainDeps, 'pool'>): Promise<number> {
  return countActiveKeys(deps.pool)
}

export async function listKeys(deps: Pick<DomainDeps, 'pool'>) {
  return listApiKeys(deps.pool)
}

/** Revokes a key; every replica refuses it from the commit on. Returns how many keys stay active. */
export async function revokeKey(deps: Pick<DomainDeps, 'pool'>, id: string): Promise<{ activeKeys: number }> {
  const activeKeys = !isApiKeyId(id)
    ? null
    : await withTransaction(deps.pool, async (c) => {
        if (!(await revokeApiKey(c, id))) return null
        await notifyApiKeysChanged(c)
        return countActiveKeys(c)
      })
  if (activeKeys === null) throw new NotFoundError(`no active key with id ${id} (list-keys shows the ids)`)
  return { activeKeys }
}

/** Key ids are UUIDs. */
export function isApiKeyId(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
}

/** Calls `onChange` whenever keys may have changed in any process (see Database.subscribe). */
export function watchApiKeyChanges(
  db: Pick<Database, 'subscribe'>,
  onChange: () => void,
): Promise<() => Promise<void>> {
  return db.subscribe(API_KEYS_CHANNEL, onChange)
}

/** Whether a key with `role` may call a route that needs `required` (admin may do everything). */
export function roleAllows(role: Role, required: Role): boolean {
  return role === 'admin' || role === required
}
