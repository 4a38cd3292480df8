-- Leases in one statement (src/store/leasesRepo.ts): due pages in the order next_crawl_at,
-- importance DESC, id, and pages of hosts with a politeness delay kept out of that order.

-- true: the page's host has minDelaySeconds, so at most one of its pages goes out per delay. Such
-- pages are served per host (pages_polite_due) and left out of the global due order, so a polite
-- host's backlog never sits in front of every lease. New pages start false; the lease statement
-- marks pages of polite hosts as it meets them, and the triggers below clear the mark when a host
-- loses its delay.
ALTER TABLE pages ADD COLUMN polite boolean NOT NULL DEFAULT false;

-- Replaces pages_due (next_crawl_at, id): pages registered in one request share next_crawl_at, and
-- without importance in the key every lease read and sorted the whole tied group (5 ms for a group
-- of 5,000 at 10^6 pages, against 0.3 ms with this index).
CREATE INDEX pages_due_order ON pages (next_crawl_at, importance DESC, id) WHERE lease_id IS NULL AND NOT polite;
DROP INDEX pages_due;

-- The most overdue page of one polite host. Holds polite pages only, so it costs other pages nothing.
CREATE INDEX pages_polite_due ON pages (host, next_crawl_at, importance DESC, id) WHERE lease_id IS NULL AND polite;

-- A host that loses its delay (minDelaySeconds cleared or set to 0, or its limits removed): its pages
-- return to the global due order. The lease statement marks a page only while holding the host row
-- FOR SHARE, so a change of the host waits for it and then sees the mark.
CREATE FUNCTION hosts_unmark_polite_pages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE pages SET polite = false WHERE host = OLD.host AND polite;
  RETURN NULL;
END
$$;
CREATE TRIGGER hosts_delay_cleared AFTER UPDATE OF min_delay_seconds ON hosts FOR EACH ROW
  WHEN (OLD.min_delay_seconds > 0 AND NOT coalesce(NEW.min_delay_seconds > 0, false))
  EXECUTE FUNCTION hosts_unmark_polite_pages();
CREATE TRIGGER hosts_deleted AFTER DELETE ON hosts FOR EACH ROW
  WHEN (OLD.min_delay_seconds > 0)
  EXECUTE FUNCTION hosts_unmark_polite_pages();
