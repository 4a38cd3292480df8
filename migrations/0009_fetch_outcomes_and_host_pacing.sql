-- What the real web answers (docs/api.md, "Fetch outcomes"): a page's status, failures, last HTTP status,
-- last success, the validators a crawler needs for a conditional request, a redirect's target, and whether
-- its content hash changes on every fetch (noise).
ALTER TABLE pages
  ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'failing', 'gone', 'redirected')),
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN last_http_status smallint,
  ADD COLUMN last_success_at timestamptz,
  ADD COLUMN redirect_to text,
  ADD COLUMN etag text,
  ADD COLUMN server_last_modified timestamptz,   -- the Last-Modified of the latest successful fetch
  ADD COLUMN noisy boolean NOT NULL DEFAULT false;

ALTER TABLE observations
  ADD COLUMN etag text,
  ADD COLUMN fetch_error text,
  ADD COLUMN redirect_to text,
  ADD COLUMN retry_after_seconds double precision;

-- A host's pace: the least time between two pages of it handed out, the largest of the operator's
-- min_delay_seconds, the robots.txt crawl-delay crawlers report, and an adaptive delay that grows when the
-- host answers 429 or 503 and shrinks again as it answers normally. Pages of a paced host are "polite"
-- (migrations/0003, 0008): kept out of the global due order and served one per host and per pace.
ALTER TABLE hosts
  ADD COLUMN crawl_delay_seconds double precision CHECK (crawl_delay_seconds >= 0),
  ADD COLUMN throttle_delay_seconds double precision CHECK (throttle_delay_seconds >= 0),
  ADD COLUMN pace_seconds double precision GENERATED ALWAYS AS
    (greatest(coalesce(min_delay_seconds, 0), coalesce(crawl_delay_seconds, 0), coalesce(throttle_delay_seconds, 0))) STORED;

DROP TRIGGER hosts_delay_cleared ON hosts;
DROP TRIGGER hosts_deleted ON hosts;
DROP TRIGGER hosts_delay_set_on_insert ON hosts;
DROP TRIGGER hosts_delay_set ON hosts;

-- Generated columns cannot be named in UPDATE OF, so the triggers fire on the columns the pace comes from.
CREATE TRIGGER hosts_pace_set_on_insert AFTER INSERT ON hosts FOR EACH ROW
  WHEN (NEW.pace_seconds > 0)
  EXECUTE FUNCTION hosts_mark_polite_pages();
CREATE TRIGGER hosts_pace_set AFTER UPDATE OF min_delay_seconds, crawl_delay_seconds, throttle_delay_seconds ON hosts FOR EACH ROW
  WHEN (NEW.pace_seconds > 0 AND NOT OLD.pace_seconds > 0)
  EXECUTE FUNCTION hosts_mark_polite_pages();
CREATE TRIGGER hosts_pace_cleared AFTER UPDATE OF min_delay_seconds, crawl_delay_seconds, throttle_delay_seconds ON hosts FOR EACH ROW
  WHEN (OLD.pace_seconds > 0 AND NOT NEW.pace_seconds > 0)
  EXECUTE FUNCTION hosts_unmark_polite_pages();
CREATE TRIGGER hosts_deleted AFTER DELETE ON hosts FOR EACH ROW
  WHEN (OLD.pace_seconds > 0)
  EXECUTE FUNCTION hosts_unmark_polite_pages();

CREATE OR REPLACE FUNCTION pages_mark_polite_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.polite := EXISTS (SELECT 1 FROM hosts h WHERE h.host = NEW.host AND h.pace_seconds > 0);
  RETURN NEW;
END
$$;

-- The fleet-wide hand-out budget (docs/api.md "Schedule"): a token bucket filled at budgetCrawlsPerDay and
-- holding at most handOutBurstHours of it; every page a lease hands out takes one token. tokens NULL = full.
CREATE TABLE lease_budget (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  tokens double precision,
  updated_at timestamptz
);
INSERT INTO lease_budget (id) VALUES (true);
