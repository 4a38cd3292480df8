-- URL rules (settings.urls, docs/api.md "Conventions"). Pages and host limits stored before them were
-- named by the WHATWG URL parser alone, and every stored name must be canonical under the rules in
-- force (a lease hands out a stored URL, and the crawler reports it back). A database that holds pages
-- or host limits therefore keeps exactly those rules, every one off, until the operator switches rules
-- on with PATCH /v1/settings: that renames the stored names, or refuses a change that would merge two
-- pages. A database without either takes the defaults.
UPDATE settings
SET value = value || jsonb_build_object('urls', jsonb_build_object(
  'sortQueryParameters', false,
  'dropQueryParameters', '[]'::jsonb,
  'dropEmptyQuery', false,
  'normalizePercentEncoding', false,
  'dropTrailingDotInHost', false,
  'dropWww', false,
  'dropTrailingSlash', false,
  'collapseSlashes', false,
  'lowercasePath', false
))
WHERE id AND NOT (value ? 'urls') AND (EXISTS (SELECT 1 FROM pages) OR EXISTS (SELECT 1 FROM hosts));
