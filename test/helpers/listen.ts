import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** Serves the app over real HTTP on a free loopback port; returns its base URL. */
export async function listenOnLoopback(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}
