-- recrawl initial schema. Forward-only. Rates are per day, times are timestamptz.
-- Citus-ready: pages and observations are keyed by page id (observations references pages with
-- the distribution column), hosts/settings/api_keys are small reference tables, no other
-- cross-page foreign keys.

CREATE TABLE settings (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),           -- exactly one row
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- The row always exists: writers of page state take it FOR SHARE, a settings change FOR UPDATE.
INSERT INTO settings (id, value) VALUES (true, '{}'::jsonb);

CREATE TABLE hosts (
  host text PRIMARY KEY,
  max_crawls_per_day double precision CHECK (max_crawls_per_day >= 0),
  min_delay_seconds double precision CHECK (min_delay_seconds >= 0),
  -- politeness bookkeeping for leases: no page of this host before this time
  next_lease_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE pages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url text NOT NULL UNIQUE,
  host text NOT NULL,
  importance double precision NOT NULL DEFAULT 1 CHECK (importance >= 0),
  min_crawls_per_day double precision CHECK (min_crawls_per_day >= 0),
  max_crawls_per_day double precision CHECK (max_crawls_per_day >= 0),
  -- counters (API: crawls, intervals, changes)
  crawls integer NOT NULL DEFAULT 0,
  intervals integer NOT NULL DEFAULT 0,
  changes integer NOT NULL DEFAULT 0,
  first_crawled_at timestamptz,
  last_crawled_at timestamptz,          -- latest crawl stored (late crawls excluded)
  interval_start_at timestamptz,        -- start of the open interval: last crawl whose content state is known
  last_changed_at timestamptz,
  last_content_hash text,
  -- estimator sufficient statistics (src/math/estimators) and the estimates derived from them
  estimator_state jsonb NOT NULL DEFAULT '{}'::jsonb,
  estimates jsonb NOT NULL DEFAULT '{}'::jsonb,
  changes_per_day double precision,     -- the scheduling estimate (settings.estimator), clipped
  crawls_per_day double precision,      -- from the last optimisation plus local updates
  next_crawl_at timestamptz,
  -- lease (at most one unexpired lease per page)
  lease_id uuid,
  leased_by text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pages_host_id ON pages (host, id);
CREATE INDEX pages_due ON pages (next_crawl_at, id) WHERE lease_id IS NULL;
CREATE INDEX pages_lease ON pages (lease_id) WHERE lease_id IS NOT NULL;
CREATE INDEX pages_lease_expiry ON pages (lease_expires_at) WHERE lease_id IS NOT NULL;

CREATE TABLE observations (
  page_id bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  crawled_at timestamptz NOT NULL,
  changed boolean,                       -- null: baseline, late without change info, or failed fetch
  content_hash text,
  last_modified timestamptz,
  http_status smallint,
  applied boolean NOT NULL,              -- fed to the online estimators (false: baseline or late)
  late boolean NOT NULL DEFAULT false,
  interval_seconds double precision,     -- length of the estimator interval this crawl closed
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (page_id, crawled_at)
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('crawler', 'reader', 'admin')),
  key_sha256 text NOT NULL UNIQUE,       -- hex SHA-256 of the key; the key itself is never stored
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

-- The optimiser's global multiplier (one row) and its run history.
CREATE TABLE optimizer_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  lambda double precision,
  host_lambdas jsonb NOT NULL DEFAULT '{}'::jsonb,
  solved_at timestamptz
);
INSERT INTO optimizer_state (id) VALUES (true);

CREATE TABLE optimizer_runs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  started_at timestamptz NOT NULL,
  duration_ms double precision NOT NULL,
  trigger text NOT NULL,                 -- 'api' | 'periodic'
  objective text NOT NULL,
  lambda double precision,
  pages integer NOT NULL,
  pages_crawled integer NOT NULL,
  budget_crawls_per_day double precision NOT NULL,
  expected_freshness double precision,
  pages_retimed integer NOT NULL DEFAULT 0
);
