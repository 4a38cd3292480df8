import type { FastifyInstance, FastifyRequest } from 'fastify'
import type pg from 'pg'
import { activeKeyCount, roleAllows, roleOfKey, type Role } from '../domain/apiKeys.ts'
import { HttpProblem, problem } from './problems.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The role a caller needs; absent = open (health, metrics, docs, dashboard). */
    role?: Role
  }
  interface FastifyRequest {
    /** The role the request was authenticated with, or 'admin' in open loopback mode. */
    role: Role | null
  }
}

export interface AuthOptions {
  pool: pg.Pool
  /** True when the service listens only on loopback: then, with no keys configured, requests need none. */
  loopbackOnly: boolean
  /** How long key lookups and the key count are cached (revocation takes effect within this). */
  cacheMs: number
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost'])
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || host.startsWith('127.')
}

/**
 * Bearer-key authentication with roles (API.md "Auth"). Keys are looked up by SHA-256, with a
 * short cache so a busy crawler fleet does not cost a query per request.
 */
export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  const keyCache = new Map<string, { role: Role | null; untilMs: number }>()
  let countCache: { count: number; untilMs: number } | null = null

  async function keysExist(): Promise<boolean> {
    const now = Date.now()
    if (countCache === null || countCache.untilMs <= now) {
      countCache = { count: await activeKeyCount(options.pool), untilMs: now + options.cacheMs }
    }
    return countCache.count > 0
  }

  async function lookup(key: string): Promise<Role | null> {
    const now = Date.now()
    const hit = keyCache.get(key)
    if (hit && hit.untilMs > now) return hit.role
    const role = await roleOfKey(options.pool, key)
    if (keyCache.size > 10_000) keyCache.clear()
    keyCache.set(key, { role, untilMs: now + options.cacheMs })
    return role
  }

  app.decorateRequest('role', null)
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const required = request.routeOptions.config.role
    if (!required) return
    const header = request.headers.authorization
    if (!(await keysExist())) {
      if (options.loopbackOnly) {
        request.role = 'admin'
        return
      }
      throw new HttpProblem(
        problem(401, 'no API keys exist and the service listens beyond loopback; create one with `npm run cli -- create-key --role admin --name <name>`'),
        { 'WWW-Authenticate': 'Bearer' },
      )
    }
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null
    if (!match) {
      throw new HttpProblem(problem(401, 'missing API key: send Authorization: Bearer <key>'), { 'WWW-Authenticate': 'Bearer' })
    }
    const role = await lookup(match[1]!)
    if (role === null) {
      throw new HttpProblem(problem(401, 'unknown or revoked API key'), { 'WWW-Authenticate': 'Bearer error="invalid_token"' })
    }
    if (!roleAllows(role, required)) {
      throw new HttpProblem(problem(403, `this route needs the ${required} role; the key has ${role}`))
    }
    request.role = role
  })
}
