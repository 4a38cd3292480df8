-- Pages the last optimiser run solved for. With the budget it gives the interval an even split of
-- the budget would give every page (pages / budget days), which is how soon a page crawled only once
-- is crawled again to get an estimate of its own (src/domain/schedule.ts, earlyCrawlIntervalDays).
ALTER TABLE optimizer_state ADD COLUMN pages integer;
