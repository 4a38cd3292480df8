-- The optimiser's kept page set (src/store/optimizerPages.ts) re-reads only the schedule rows changed since its
-- last read. It found them by the rows' transaction ids (xmin) against a snapshot's; on Citus a row's xmin is the
-- id of the worker's transaction, unrelated to the coordinator's snapshot, and the read silently found nothing.
-- Instead, every statement that writes what the optimiser reads of a page stamps its schedule row with the
-- current change epoch, and each run moves the epoch on before it reads (docs/design.md, "The optimiser's
-- kept page set"). One row, like page_deletion_count; a reference table on Citus.
CREATE TABLE change_epoch (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  epoch bigint NOT NULL
);
INSERT INTO change_epoch (id, epoch) VALUES (true, 1);

-- Unindexed: the optimiser scans for it once a run, and an index would be one more entry for every write.
-- Rows stored before start at 0 (a process's first run reads every page anyway); a new row must be stamped
-- by its statement: without a default, one that forgets fails instead of going unread.
ALTER TABLE page_schedule ADD COLUMN change_epoch bigint NOT NULL DEFAULT 0;
ALTER TABLE page_schedule ALTER COLUMN change_epoch DROP DEFAULT;
