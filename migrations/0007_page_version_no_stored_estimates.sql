-- A page's version, bumped by every write of its crawl state or its attributes (ingest, upserts,
-- settings changes, re-times). An optimiser run reads pages without locking them and writes a page's
-- new rate and due time back only while the page still has the version it read, so a re-time never
-- rests on a state older than the page's latest crawl.
ALTER TABLE pages ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- Every estimate but the scheduling one (changes_per_day) is derived from estimator_state when a page
-- is read; storing them cost every ingest batch an MLE and a moment-matching solve per page and a
-- jsonb document per row.
ALTER TABLE pages DROP COLUMN estimates;
