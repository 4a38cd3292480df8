-- A host that pushed back (429, 503) remembers the pace that drew it (docs/api.md, "Host backoff"): its adaptive
-- delay does not recover below 1.5 times that pace, which relaxes by 1 % per successful answer.
ALTER TABLE hosts
  ADD COLUMN pushback_pace_seconds double precision CHECK (pushback_pace_seconds > 0);
