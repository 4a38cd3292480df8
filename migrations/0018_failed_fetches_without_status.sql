-- Fetches without an HTTP answer (a fetch_error: timeout, DNS, connection, TLS, other) are failed
-- fetches too: the partial index of the fetch failures of GET /v1/stats (src/store/statsRepo.ts
-- readFetchFailures) now holds them beside the statuses outside 200…399.
DROP INDEX IF EXISTS observations_failed_fetches;
CREATE INDEX observations_failed_fetches ON observations (crawled_at)
  WHERE http_status < 200 OR http_status >= 400 OR fetch_error IS NOT NULL;
