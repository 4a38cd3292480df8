-- Estimator states as bytes (src/math/estimators/codec.ts) instead of jsonb. Every ingest batch
-- rewrites the state of each page it touches; as jsonb each of its ~100 numbers was converted to
-- numeric on the way in, and the state cost Postgres more than the rest of the row together. As
-- big-endian float64 values (the byte order of float8send) it is about half the size and copied as is.
-- Existing states are converted here, value for value; a page without a state ('{}') gets NULL.

CREATE FUNCTION recrawl_f8(x jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT float8send(CASE WHEN jsonb_typeof(x) = 'number' THEN (x #>> '{}')::float8 ELSE 'NaN'::float8 END)
$$;

-- A list of numbers: its length, then its values.
CREATE FUNCTION recrawl_list(x jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(x) = 'array' THEN
    float8send(jsonb_array_length(x)::float8)
      || coalesce((SELECT string_agg(recrawl_f8(e), ''::bytea ORDER BY o) FROM jsonb_array_elements(x) WITH ORDINALITY AS a(e, o)), ''::bytea)
  ELSE float8send(0::float8) END
$$;

-- A histogram: its bin count, then four values per bin.
CREATE FUNCTION recrawl_histogram(x jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(x) = 'array' THEN
    float8send(jsonb_array_length(x)::float8)
      || coalesce((SELECT string_agg(recrawl_f8(b -> 0) || recrawl_f8(b -> 1) || recrawl_f8(b -> 2) || recrawl_f8(b -> 3), ''::bytea ORDER BY o)
                   FROM jsonb_array_elements(x) WITH ORDINALITY AS a(b, o)), ''::bytea)
  ELSE float8send(0::float8) END
$$;

CREATE FUNCTION recrawl_state_bytes(s jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(s) IS DISTINCT FROM 'object' OR s = '{}'::jsonb THEN NULL ELSE
    float8send(1::float8)
      || recrawl_f8(s -> 'intervals') || recrawl_f8(s -> 'changes') || recrawl_f8(s -> 'observedDays')
      || recrawl_f8(s -> 'saChangesPerDay') || recrawl_f8(s -> 'unchangedDays')
      || recrawl_f8(s -> 'lastModified' -> 'crawls') || recrawl_f8(s -> 'lastModified' -> 'changes')
      || recrawl_f8(s -> 'lastModified' -> 'exposureDays')
      || recrawl_list(s -> 'classLogProbabilities')
      || CASE WHEN jsonb_typeof(s -> 'segment') = 'object' THEN
           recrawl_f8(s -> 'segment' -> 'intervals') || recrawl_f8(s -> 'segment' -> 'changes')
             || recrawl_f8(s -> 'segment' -> 'observedDays') || recrawl_f8(s -> 'segment' -> 'unchangedDays')
             || recrawl_f8(s -> 'segment' -> 'cusumUp') || recrawl_f8(s -> 'segment' -> 'cusumDown')
             || recrawl_f8(s -> 'segment' -> 'changesPerDay') || recrawl_f8(s -> 'segment' -> 'restarts')
         ELSE
           -- no segment stored (states older than mleAdaptive): the whole history is the segment
           recrawl_f8(NULL) || recrawl_f8(NULL) || recrawl_f8(NULL) || recrawl_f8(NULL)
             || recrawl_f8(NULL) || recrawl_f8(NULL) || recrawl_f8(NULL) || recrawl_f8(NULL)
         END
      || recrawl_histogram(s -> 'changedHistogram') || recrawl_histogram(s -> 'unchangedHistogram')
      || recrawl_histogram(s -> 'segment' -> 'changedHistogram')
  END
$$;

ALTER TABLE pages ALTER COLUMN estimator_state DROP DEFAULT;
ALTER TABLE pages ALTER COLUMN estimator_state DROP NOT NULL;
ALTER TABLE pages ALTER COLUMN estimator_state TYPE bytea USING recrawl_state_bytes(estimator_state);

DROP FUNCTION recrawl_state_bytes(jsonb);
DROP FUNCTION recrawl_histogram(jsonb);
DROP FUNCTION recrawl_list(jsonb);
DROP FUNCTION recrawl_f8(jsonb);
