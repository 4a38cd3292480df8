/**
 * Host names that reach only this machine: the one list, for the service (open access without keys
 * while it listens on loopback only) and for the simulator's --e2e run (it drives local services only).
 * An IPv6 literal may come bracketed, as URL.hostname gives it.
 */
const LOOPBACK_HOSTS = new Set(['localhost', '::1'])

export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  return LOOPBACK_HOSTS.has(bare) || bare.startsWith('127.')
}
