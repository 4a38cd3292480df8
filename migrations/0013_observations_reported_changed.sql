-- The change flag as the crawler reported it (null: not reported). `changed` is what recrawl made of the
-- report (a hash comparison, a 304, a baseline); the reported flag is what a page's history is replayed from
-- when a crawl arrives out of order (src/domain/pageStep.ts, replayHistory): a flag then applies to the interval
-- that ends at its crawl in time order, not to the one it was first applied to.
ALTER TABLE observations ADD COLUMN reported_changed boolean;
-- Best effort for existing rows: what was applied is what was reported or equivalent to it.
UPDATE observations SET reported_changed = changed WHERE changed IS NOT NULL;
