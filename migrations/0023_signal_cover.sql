-- What each host's trusted change signals cover of its pages' changes, as the last optimiser run found it
-- (docs/math.md 5.4): {host: {share, precision}}. The page step times a page's blind crawls for the changes left
-- uncovered between runs. Null before a run that found a cover: every page is timed as if there were no signals.
ALTER TABLE optimizer_state ADD COLUMN signal_cover jsonb;
