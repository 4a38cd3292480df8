-- A page row carries its estimator state (jsonb, 1–2 kB once a page has a few intervals) and is
-- rewritten by every ingest batch that touches the page. Past the default toast_tuple_target
-- (about 2 kB) Postgres compresses the state on every such write and decompresses it on every read;
-- the ingest benchmark lost about a fifth of its throughput to that once the state grew past it.
-- Rows up to the largest target stay uncompressed in the heap page; larger ones are still toasted.
ALTER TABLE pages SET (toast_tuple_target = 8160);
