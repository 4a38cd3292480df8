import { createHash, randomBytes } from 'node:crypto'
import type pg from 'pg'
import { countActiveKeys, findActiveKeyRole, insertApiKey, listApiKeys, revokeApiKey, type Role } from '../store/apiKeysRepo.ts'
import { withTransaction } from '../store/transaction.ts'
import { NotFoundError } from './errors.ts'

export type { Role }
export const ROLES: readonly Role[] = ['crawler', 'reader', 'admin']

/** Keys are stored only as their SHA-256; a 256-bit random key needs no slow hash. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

/** Creates a key and returns it in clear, once; it cannot be shown again. */
export async function createApiKey(pool: pg.Pool, options: { name: string; role: Role }): Promise<{ id: string; key: string; role: Role; name: string }> {
  const key = `rk_${randomBytes(32).toString('base64url')}`
  const { id } = await withTransaction(pool, (c) => insertApiKey(c, { name: options.name, role: options.role, keySha256: hashApiKey(key) }))
  return { id, key, role: options.role, name: options.name }
}

export async function roleOfKey(pool: pg.Pool, key: string): Promise<Role | null> {
  return findActiveKeyRole(pool, hashApiKey(key))
}

export async function activeKeyCount(pool: pg.Pool): Promise<number> {
  return countActiveKeys(pool)
}

export async function listKeys(pool: pg.Pool) {
  return listApiKeys(pool)
}

export async function revokeKey(pool: pg.Pool, id: string): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(id) || !(await withTransaction(pool, (c) => revokeApiKey(c, id)))) {
    throw new NotFoundError(`no active key with id ${id}`)
  }
}

/** Whether a key with `role` may call a route that needs `required` (admin may do everything). */
export function roleAllows(role: Role, required: Role): boolean {
  return role === 'admin' || role === required
}
