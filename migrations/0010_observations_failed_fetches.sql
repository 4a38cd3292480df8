-- Failed fetches (a reported status outside 200…399) by crawl time, for the fetch failures of
-- GET /v1/stats (src/store/statsRepo.ts readFetchFailures). Partial: it holds the failed crawls
-- only, so the query reads those instead of every crawl of the window, and a successful crawl costs
-- no index write. Rows without a status are not failures and are left out (NULL fails the predicate).
CREATE INDEX observations_failed_fetches ON observations (crawled_at) WHERE http_status < 200 OR http_status >= 400;
