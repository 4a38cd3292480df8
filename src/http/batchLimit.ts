import type { FastifyRequest } from 'fastify'
import { HttpProblem, problem } from './problems.ts'

/**
 * A preValidation hook: a batch larger than the limit is refused with 413 before anything is
 * validated or applied (docs/api.md "Batches").
 */
export function batchLimit(field: string, maxItems: number, limitName = 'MAX_BATCH_ITEMS') {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body as Record<string, unknown> | null | undefined
    const items = body && typeof body === 'object' ? body[field] : undefined
    if (Array.isArray(items) && items.length > maxItems) {
      throw new HttpProblem(
        problem(
          413,
          `${items.length} ${field} in one request; the limit is ${maxItems} (${limitName}). Split the batch; nothing was applied.`,
        ),
      )
    }
  }
}
