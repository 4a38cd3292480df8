-- The schema features Citus cannot carry on distributed tables go (docs/design.md "Beyond one machine"): the
-- triggers that keep derived rows in step, the page-deletion sequence, and the schedule's cascade on update.
-- The statements that change pages and hosts now do that work themselves, in the same transaction
-- (src/store/pagesRepo.ts, hostsRepo.ts, urlsRepo.ts); what a reader sees is unchanged.

-- The page-deletion counter (migrations/0014) becomes a row, moved by the statements that delete pages. It is
-- written in the deleting transaction, so it moves exactly when the deletion becomes visible. It starts past
-- the sequence's last value, so it never repeats a value a reader may hold.
CREATE TABLE page_deletion_count (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  statements bigint NOT NULL
);
INSERT INTO page_deletion_count (id, statements)
SELECT true, (CASE WHEN is_called THEN last_value ELSE 0 END) + 1 FROM page_deletions;
DROP TRIGGER pages_deleted ON pages;
DROP FUNCTION count_page_deletions();
DROP SEQUENCE page_deletions;

-- The host overview's list of hosts (migrations/0022): the statements that insert or delete pages add and drop
-- the rows of hosts that got their first page or lost their last one.
DROP TRIGGER host_rollup_on_insert ON pages;
DROP TRIGGER host_rollup_on_delete ON pages;
DROP TRIGGER host_rollup_on_truncate ON pages;
DROP FUNCTION host_rollup_pages_inserted();
DROP FUNCTION host_rollup_pages_deleted();
DROP FUNCTION host_rollup_pages_truncated();

-- Politeness marks (migrations/0008, 0009, 0015). pages_polite is whether the host's pages are marked: the
-- statements that write a host's pace columns compare it with the pace (the row is locked by then, so the
-- comparison sees every earlier write) and mark or unmark the host's pages when they differ. A new schedule row
-- is marked by the statement that inserts it; a page whose host changes (a URL-rule rename) is re-marked, and
-- its version moves, by the statement that renames it.
ALTER TABLE hosts ADD COLUMN pages_polite boolean NOT NULL DEFAULT false;
UPDATE hosts SET pages_polite = pace_seconds > 0 WHERE pace_seconds > 0;

DROP TRIGGER hosts_pace_set_on_insert ON hosts;
DROP TRIGGER hosts_pace_set ON hosts;
DROP TRIGGER hosts_pace_cleared ON hosts;
DROP TRIGGER hosts_deleted ON hosts;
DROP FUNCTION hosts_mark_polite_pages();
DROP FUNCTION hosts_unmark_polite_pages();
DROP TRIGGER page_schedule_polite_on_insert ON page_schedule;
DROP TRIGGER page_schedule_host_changed ON page_schedule;
DROP FUNCTION page_schedule_mark_polite();

-- A page's id never changes (GENERATED ALWAYS: Postgres refuses to update it); its host changes with a URL-rule rename,
-- which now writes the page and its schedule row in one statement. The foreign key still keeps the schedule's
-- host copy equal to the page's, checked at the end of that statement, and still deletes the row with its page.
ALTER TABLE page_schedule DROP CONSTRAINT page_schedule_page;
ALTER TABLE page_schedule ADD CONSTRAINT page_schedule_page FOREIGN KEY (host, page_id) REFERENCES pages (host, id)
  ON DELETE CASCADE;
