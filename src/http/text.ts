import type { FastifyRequest } from 'fastify'
import { findTextProblems } from '../core/text.ts'
import { HttpProblem, problem } from './problems.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A batch field of the body whose items are checked one by one by the use case (a bad item is
     * rejected alone, docs/api.md "Observations"), so the request-wide text check leaves them out.
     */
    textCheckedPerItem?: string
  }
}

/**
 * A preValidation hook on /v1 routes and /indexnow: a string the database cannot store (a NUL character or a lone
 * surrogate) anywhere in the path parameters, the query string or the body is refused with 400 naming
 * every such field, before anything is read or written (docs/api.md "Input limits").
 */
export async function refuseUnstorableText(request: FastifyRequest): Promise<void> {
  const route = request.routeOptions.url
  if (route === undefined || !(route.startsWith('/v1/') || route === '/indexnow')) return
  const perItem = request.routeOptions.config.textCheckedPerItem
  const itemPointer = perItem === undefined ? null : new RegExp(`^/${perItem}/\\d+$`)
  const errors = [
    ...findTextProblems(request.params).map((p) => ({ path: `/params${p.pointer}`, message: p.message })),
    ...findTextProblems(request.query).map((p) => ({ path: `/querystring${p.pointer}`, message: p.message })),
    ...findTextProblems(request.body, { skip: (pointer) => itemPointer !== null && itemPointer.test(pointer) }).map(
      (p) => ({
        path: `/body${p.pointer}`,
        message: p.message,
      }),
    ),
  ]
  if (errors.length > 0) {
    throw new HttpProblem(
      problem(
        400,
        `${errors.length === 1 ? 'a string' : 'strings'} the service cannot store (NUL or a lone surrogate); nothing was changed`,
        errors,
      ),
    )
  }
}
