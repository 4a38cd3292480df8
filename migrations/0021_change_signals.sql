-- Change signals (docs/api.md "Signals", docs/math.md 6): sitemaps, feeds and pings say a page changed.
-- Every accepted signal is stored once per (page, source, signalled time): a repeated batch is a duplicate.
CREATE TABLE signals (
  page_id bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  source text NOT NULL,
  -- The claimed change time, else the receipt: the signal's identity.
  signalled_at timestamptz NOT NULL,
  changed_at timestamptz,
  received_at timestamptz NOT NULL,
  stored_at timestamptz NOT NULL DEFAULT now(),
  -- What the signal did to the schedule: pulled (due now), stale (older than the content last seen),
  -- notWorth (the source is not trusted enough for this page), alreadyDue, notActive (failing, gone, redirected).
  effect text NOT NULL,
  PRIMARY KEY (page_id, source, signalled_at)
);

-- The earliest signal of each source a page has received since its latest crawl: judged by the next one.
CREATE TABLE pending_signals (
  page_id bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
  source text NOT NULL,
  signalled_at timestamptz NOT NULL,
  PRIMARY KEY (page_id, source)
);

-- What each source's signals on each host have been worth (the counts behind the trust posteriors).
CREATE TABLE signal_trust (
  source text NOT NULL,
  host text NOT NULL,
  signals_received bigint NOT NULL DEFAULT 0 CHECK (signals_received >= 0),
  signals_stale bigint NOT NULL DEFAULT 0 CHECK (signals_stale >= 0),
  signals_pulled bigint NOT NULL DEFAULT 0 CHECK (signals_pulled >= 0),
  signals_judged bigint NOT NULL DEFAULT 0 CHECK (signals_judged >= 0),
  signals_confirmed bigint NOT NULL DEFAULT 0 CHECK (signals_confirmed >= 0),
  changes_seen bigint NOT NULL DEFAULT 0 CHECK (changes_seen >= 0),
  changes_signalled bigint NOT NULL DEFAULT 0 CHECK (changes_signalled >= 0),
  build_time_documents bigint NOT NULL DEFAULT 0 CHECK (build_time_documents >= 0),
  PRIMARY KEY (source, host)
);
CREATE INDEX signal_trust_host ON signal_trust (host);

-- What the operator allows per source: whether its signals for unknown URLs register pages, and with what importance.
CREATE TABLE signal_sources (
  source text PRIMARY KEY,
  discover boolean NOT NULL DEFAULT false,
  discover_importance double precision NOT NULL DEFAULT 1 CHECK (discover_importance > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
