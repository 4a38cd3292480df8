-- The host overview's ranking (GET /v1/host-overview, src/store/hostsRepo.ts, docs/design.md "Host overview"):
-- one row per host that has pages, with the value of every sort column as of the last refresh. A call ranks
-- the hosts here and computes the numbers of the hosts it returns from their own pages and crawls, so it no
-- longer aggregates every page and every crawl of the last day (2–3 s at 10^6 pages on 10^5 hosts).
--
-- Which hosts are listed is kept exact by the statements that add or remove pages: statement-level triggers
-- (one statement per INSERT or DELETE, whatever its row count; an ingest statement that inserts no page adds
-- an empty one) insert the row of a host that gets its first page and delete the row of a host that lost its
-- last one; a URL-rule rename moves hosts in src/store/urlsRepo.ts. The sort values are refreshed as a whole
-- after every optimiser run and by a call that finds them older than two optimiser periods
-- (refreshHostRollup): a new host ranks with zeros until then.
CREATE TABLE host_rollup (
  host text PRIMARY KEY,
  pages integer NOT NULL DEFAULT 0,
  pages_failing integer NOT NULL DEFAULT 0,
  pages_overdue integer NOT NULL DEFAULT 0,
  planned_crawls_per_day double precision NOT NULL DEFAULT 0,
  expected_freshness double precision,
  crawls_last_day integer NOT NULL DEFAULT 0,
  failures_last_day integer NOT NULL DEFAULT 0
);

-- When the sort values were last computed (null: never; the next call computes them).
CREATE TABLE host_rollup_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  refreshed_at timestamptz
);
INSERT INTO host_rollup_state (id, refreshed_at) VALUES (true, NULL);

-- Back-fill: every host with pages, with the counts that need no settings; the first call or optimiser run
-- after the migration computes the rest.
INSERT INTO host_rollup (host, pages, pages_failing, planned_crawls_per_day)
SELECT p.host, count(*), count(*) FILTER (WHERE p.status = 'failing'), coalesce(sum(s.crawls_per_day), 0)
FROM pages p JOIN page_schedule s ON s.page_id = p.id
GROUP BY p.host;

CREATE FUNCTION host_rollup_pages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO host_rollup (host)
  SELECT DISTINCT host FROM inserted_pages ORDER BY host
  ON CONFLICT (host) DO NOTHING;
  RETURN NULL;
END
$$;

-- The rows are locked in host order first, as the refresh writes them, so that two statements never wait
-- for each other's rows in opposite orders.
CREATE FUNCTION host_rollup_pages_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM host_rollup r WHERE r.host IN (SELECT host FROM deleted_pages) ORDER BY r.host FOR UPDATE;
  DELETE FROM host_rollup r
  USING (SELECT DISTINCT host FROM deleted_pages) d
  WHERE r.host = d.host AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.host = d.host);
  RETURN NULL;
END
$$;

CREATE FUNCTION host_rollup_pages_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM host_rollup;
  RETURN NULL;
END
$$;

CREATE TRIGGER host_rollup_on_insert AFTER INSERT ON pages REFERENCING NEW TABLE AS inserted_pages
  FOR EACH STATEMENT EXECUTE FUNCTION host_rollup_pages_inserted();
CREATE TRIGGER host_rollup_on_delete AFTER DELETE ON pages REFERENCING OLD TABLE AS deleted_pages
  FOR EACH STATEMENT EXECUTE FUNCTION host_rollup_pages_deleted();
CREATE TRIGGER host_rollup_on_truncate AFTER TRUNCATE ON pages
  FOR EACH STATEMENT EXECUTE FUNCTION host_rollup_pages_truncated();
