import { lockSettings } from './settingsRepo.ts'
import { transactionOn, type Queryable } from './transaction.ts'

/**
 * The change epoch (migrations/0028): how the optimiser's kept page set (optimizerPages.ts) finds the pages
 * written since its last read without transaction ids, which on Citus describe only the coordinator.
 *
 * Every statement that writes a field the optimiser reads of a page (readOptimizerChanges: anything in its
 * schedule row but the lease columns and the politeness mark; its pages row is only written together with its
 * schedule row) sets the schedule row's change_epoch to CURRENT_CHANGE_EPOCH, in a transaction that took the
 * settings lock (settingsRepo.ts, lockSettings: shared for page writers, exclusive for a settings change) in an
 * earlier statement (test/integration/schemaPortability.test.ts checks the statements of src/store). A run
 * moves the epoch from e to e + 1 under the same lock held exclusively (moveChangeEpoch), then reads the rows
 * stamped at or after the epoch its previous run moved to. Why that never misses a row: docs/design.md, "The
 * optimiser's kept page set". The optimiser's own write-back keeps its rows' stamps: what it wrote is in its
 * columns already.
 */

/**
 * The current epoch, read by the writing statement itself. The statement's snapshot must be taken after the
 * settings lock was granted (a later statement of the transaction, in READ COMMITTED), so that it sees an
 * epoch moved before the grant.
 */
export const CURRENT_CHANGE_EPOCH = '(SELECT epoch FROM change_epoch WHERE id)'

/**
 * Moves the epoch on, in a short transaction of its own on `q` that holds the settings lock exclusively:
 * the move waits for every transaction that may still stamp the old epoch, and later ones stamp the new.
 * Returns the new epoch: every row stamped below it is committed, and visible to any statement from now on.
 */
export async function moveChangeEpoch(q: Queryable): Promise<bigint> {
  return transactionOn(q, async () => {
    await lockSettings(q, 'update')
    const { rows } = await q.query<{ epoch: string }>(
      'UPDATE change_epoch SET epoch = epoch + 1 WHERE id RETURNING epoch::text AS epoch',
    )
    return BigInt(rows[0]!.epoch)
  })
}
