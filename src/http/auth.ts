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

interface AuthOptions {
  pool: pg.Pool
  /** True when the service listens only on loopback: then, with no keys configured, requests need none. */
  loopbackOnly: boolean
  /**
   * How long key lookups and the key count are cached. With `keyChanges` a change empties the caches
   * at once, and this lifetime only bounds staleness while change notices cannot arrive.
   */
  cacheMs: number
  /** Subscribes to key changes made by any process (the CLI, another replica); returns the unsubscribe. */
  keyChanges?: (onChange: () => void) => Promise<() => Promise<void>>
}

/** Beyond this many cached keys (a client cycling through invalid ones), the key cache starts over. */
const KEY_CACHE_MAX_ENTRIES = 10_000

/**
 * Bearer-key authentication with roles (docs/api.md "Auth"). Keys are looked up by SHA-256, with a
 * cache so a busy crawler fleet does not cost a query per request; a key change anywhere empties it.
 */
export async function installAuth(app: FastifyInstance, options: AuthOptions): Promise<void> {
  const keyCache = new Map<string, { role: Role | null; untilMs: number }>()
  let countCache: { count: number; untilMs: number } | null = null
  // A lookup that started before a change must not put its stale answer back into the cache.
  let generation = 0

  async function keysExist(): Promise<boolean> {
    const now = Date.now()
    if (countCache !== null && countCache.untilMs > now) return countCache.count > 0
    const started = generation
    const count = await activeKeyCount(options)
    if (started === generation) countCache = { count, untilMs: now + options.cacheMs }
    return count > 0
  }

  async function lookup(key: string): Promise<Role | null> {
    const now = Date.now()
    const hit = keyCache.get(key)
    if (hit && hit.untilMs > now) return hit.role
    const started = generation
    const role = await roleOfKey(options, key)
    if (started === generation) {
      if (keyCache.size > KEY_CACHE_MAX_ENTRIES) keyCache.clear()
      keyCache.set(key, { role, untilMs: now + options.cacheMs })
    }
    return role
  }

  if (options.keyChanges) {
    const unsubscribe = await options.keyChanges(() => {
      generation++
      keyCache.clear()
      countCache = null
    })
    app.addHook('onClose', async () => unsubscribe())
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
        problem(
          401,
          'no API keys exist and the service listens beyond loopback; create one with `npm run cli -- create-key --role admin --name <name>`',
        ),
        { 'WWW-Authenticate': 'Bearer' },
      )
    }
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null
    if (!match) {
      throw new HttpProblem(problem(401, 'missing API key: send Authorization: Bearer <key>'), {
        'WWW-Authenticate': 'Bearer',
      })
    }
    const role = await lookup(match[1]!)
    if (role === null) {
      throw new HttpProblem(problem(401, 'unknown or revoked API key'), {
        'WWW-Authenticate': 'Bearer error="invalid_token"',
      })
    }
    if (!roleAllows(role, required)) {
      throw new HttpProblem(problem(403, `this route needs the ${required} role; the key has ${role}`))
    }
    request.role = role
  })
}
