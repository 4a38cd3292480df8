-- A page's schedule in a narrow table of its own: its importance, rate, due time, lease, politeness mark and
-- the version the optimiser's write-back checks (migrations/0007). pages keeps the page's identity and crawl
-- state (URL, counters, estimator state, fetch outcome, scheduling estimate, bounds).
--
-- Why: the due time is indexed, so no update that moves it is HOT, and Postgres writes a new entry into every
-- index of the table for every row it rewrites. In the page row that meant the unique index on url, the
-- (host, id) index and the wide row with its estimator state, for every page an optimiser run re-times. One
-- UPDATE of every page's rate and due time took 19–25 s at 10^6 pages on a 2-core machine; the same UPDATE on
-- this table took 8–10 s. Leases, lease reports and re-times now write this table only.
--
-- Every page has exactly one schedule row, inserted by the statement that inserts the page
-- (src/store/pagesRepo.ts). host is a copy of the page's host, kept by the foreign key (ON UPDATE CASCADE):
-- the polite order and host-filtered leases read it without touching the page row.
CREATE TABLE page_schedule (
  page_id bigint PRIMARY KEY,
  host text NOT NULL,
  importance double precision NOT NULL DEFAULT 1 CHECK (importance >= 0),
  crawls_per_day double precision,      -- from the last optimisation plus local updates
  next_crawl_at timestamptz,
  polite boolean NOT NULL DEFAULT false, -- the host is paced (migrations/0003, 0008, 0009)
  lease_id uuid,                         -- at most one unexpired lease per page
  leased_by text,
  lease_expires_at timestamptz,
  version bigint NOT NULL DEFAULT 0     -- bumped by every write of the page's state, attributes or schedule
);

INSERT INTO page_schedule (page_id, host, importance, crawls_per_day, next_crawl_at, polite, lease_id, leased_by, lease_expires_at, version)
SELECT id, host, importance, crawls_per_day, next_crawl_at, polite, lease_id, leased_by, lease_expires_at, version FROM pages;

-- (host, id) becomes unique (it is: id is) so that the schedule can reference it.
DROP INDEX pages_host_id;
ALTER TABLE pages ADD CONSTRAINT pages_host_id UNIQUE (host, id);
ALTER TABLE page_schedule ADD CONSTRAINT page_schedule_page FOREIGN KEY (host, page_id) REFERENCES pages (host, id)
  ON UPDATE CASCADE ON DELETE CASCADE;

-- The lease order (migrations/0003), the most overdue page of each paced host, and the lease lookups.
CREATE INDEX page_schedule_due_order ON page_schedule (next_crawl_at, importance DESC, page_id) WHERE lease_id IS NULL AND NOT polite;
CREATE INDEX page_schedule_polite_due ON page_schedule (host, next_crawl_at, importance DESC, page_id) WHERE lease_id IS NULL AND polite;
CREATE INDEX page_schedule_lease ON page_schedule (lease_id) WHERE lease_id IS NOT NULL;
CREATE INDEX page_schedule_lease_expiry ON page_schedule (lease_expires_at) WHERE lease_id IS NOT NULL;

-- Politeness marks (migrations/0008, 0009), now on the schedule: a page is marked when its schedule row is
-- inserted for a paced host, and again when its host changes (a URL rename, through the cascade; that also
-- moves its version, so an optimiser run that read the page before does not write it back).
DROP TRIGGER pages_polite_on_insert ON pages;
DROP FUNCTION pages_mark_polite_on_insert();

CREATE FUNCTION page_schedule_mark_polite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.polite := EXISTS (SELECT 1 FROM hosts h WHERE h.host = NEW.host AND h.pace_seconds > 0);
  IF TG_OP = 'UPDATE' THEN
    NEW.version := OLD.version + 1;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER page_schedule_polite_on_insert BEFORE INSERT ON page_schedule FOR EACH ROW
  EXECUTE FUNCTION page_schedule_mark_polite();
CREATE TRIGGER page_schedule_host_changed BEFORE UPDATE OF host ON page_schedule FOR EACH ROW
  WHEN (NEW.host IS DISTINCT FROM OLD.host)
  EXECUTE FUNCTION page_schedule_mark_polite();

-- A host that gains or loses its pace: its pages, found through pages (host, id), are marked or unmarked.
CREATE OR REPLACE FUNCTION hosts_mark_polite_pages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE page_schedule s SET polite = true FROM pages p WHERE p.host = NEW.host AND s.page_id = p.id AND NOT s.polite;
  RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION hosts_unmark_polite_pages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE page_schedule s SET polite = false FROM pages p WHERE p.host = OLD.host AND s.page_id = p.id AND s.polite;
  RETURN NULL;
END
$$;

ALTER TABLE pages
  DROP COLUMN importance,
  DROP COLUMN crawls_per_day,
  DROP COLUMN next_crawl_at,
  DROP COLUMN polite,
  DROP COLUMN lease_id,
  DROP COLUMN leased_by,
  DROP COLUMN lease_expires_at,
  DROP COLUMN version;

ANALYZE page_schedule;
