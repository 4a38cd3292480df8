-- IndexNow keys (docs/api.md "IndexNow"): the keys the operator allows each host to submit URLs with. A site proves
-- it owns a key by publishing it in a file on the host; recrawl does not fetch such files, so a key registered here
-- for the host is what makes a submission valid. Keys are stored as given, not hashed: the protocol publishes them
-- in that file, so a hash would protect nothing, and the operator reads them back to compare with the site's file.
-- Not tied to the hosts table: a host has keys whether or not it has limits.
CREATE TABLE indexnow_keys (
  host text NOT NULL,
  key text NOT NULL CHECK (key ~ '^[A-Za-z0-9-]{8,128}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host, key)
);
