-- The crawls that judged an interval on a host while a source signalled there (docs/math.md 5.3): with changes_seen
-- they give the chance that any crawl of the host saw a change, against which a source's precision tells how much
-- its signals say. Rows kept before this count start at 0 and the source's signals move nothing until crawls have
-- been counted again.
ALTER TABLE signal_trust ADD COLUMN crawls_judged bigint NOT NULL DEFAULT 0 CHECK (crawls_judged >= 0);
