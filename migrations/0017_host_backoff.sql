-- Hosts in trouble back off (docs/api.md, "Host backoff"): a 429, a 503 without Retry-After or a run of
-- timeouts is an incident; the k-th incident since the host was forgiven blocks it for 60 s · 2^(k−1), at most a
-- day (the block is its next_lease_at). Incidents are forgiven after 30 quiet minutes past blocked_until.
ALTER TABLE hosts
  ADD COLUMN block_incidents integer NOT NULL DEFAULT 0 CHECK (block_incidents >= 0),
  ADD COLUMN blocked_until timestamptz,
  ADD COLUMN timeouts_in_a_row integer NOT NULL DEFAULT 0 CHECK (timeouts_in_a_row >= 0);
