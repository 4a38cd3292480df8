-- Operations: a small time series of the stats snapshot for the dashboard, and an index for
-- "crawls performed in a time window" (the last hour gauge, the hourly crawl activity chart).

-- One row per minute at most (the key is the sample time truncated to the minute, so several
-- replicas sampling in the same minute write one row). Old rows are pruned by the sampler.
CREATE TABLE stats_samples (
  sampled_at timestamptz PRIMARY KEY,
  pages integer NOT NULL,
  pages_overdue integer NOT NULL,
  oldest_overdue_age_seconds double precision NOT NULL,
  expected_freshness double precision,          -- Σ importance·f(ρ) / Σ importance; null without weighted pages
  budget_crawls_per_day double precision NOT NULL,
  planned_crawls_per_day double precision NOT NULL, -- Σ crawls_per_day
  crawls_per_day_last_hour double precision NOT NULL
);

-- Observations are appended roughly in crawl-time order, so a BRIN index answers time-window
-- counts at a tiny fraction of a B-tree's size and write cost.
CREATE INDEX observations_crawled_at_brin ON observations USING brin (crawled_at);
