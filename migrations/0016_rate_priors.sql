-- The change-rate priors the last optimiser run fitted (docs/math.md 1.12): {"fleet": {shape, rateDays},
-- "hosts": {host: {shape, rateDays}}}. Null before the first run: every page's estimate is its own.
ALTER TABLE optimizer_state ADD COLUMN rate_priors jsonb;
