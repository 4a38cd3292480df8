import { z } from 'zod'

/**
 * Failures a use case reports to its caller. The HTTP layer maps each class to one status and a
 * problem+json body; nothing else decides status codes.
 */

/** One bad field of a request: where, and what is wrong with it. */
export const fieldProblemSchema = z
  .object({
    path: z.string().describe('JSON pointer into the request, e.g. /body/pages/3/url.'),
    message: z.string(),
  })
  .meta({ id: 'FieldProblem', description: 'One bad field of a request.' })

export type FieldProblem = z.infer<typeof fieldProblemSchema>

/** The request names things that cannot be (400). Nothing was changed. */
export class InvalidInputError extends Error {
  constructor(
    message: string,
    readonly errors: FieldProblem[] = [],
  ) {
    super(message)
    this.name = 'InvalidInputError'
  }
}

/** The request is well-formed but its credentials do not allow it (403), e.g. an IndexNow key not registered for the host. */
export class ForbiddenError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ForbiddenError'
  }
}

/** The named resource does not exist (404). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NotFoundError'
  }
}

/** The request conflicts with the current state (409). */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConflictError'
  }
}

/** Well-formed but impossible, e.g. a budget below the sum of the lower bounds (422). */
export class UnprocessableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnprocessableError'
  }
}

/** The request's content is larger than a limit allows (413). Nothing was changed. */
export class PayloadTooLargeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PayloadTooLargeError'
  }
}
