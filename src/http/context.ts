import type { DomainDeps } from '../domain/deps.ts'

/** What route plugins get: the use cases' dependencies and the HTTP limits. */
export interface AppContext extends DomainDeps {
  maxBatchItems: number
}
