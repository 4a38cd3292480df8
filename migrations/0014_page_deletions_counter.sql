-- A counter of statements that deleted pages (DELETE or TRUNCATE), for the optimiser's kept page set
-- (src/domain/optimize.ts): between runs it reads only the rows written since the last run, which shows
-- new and changed pages but not deleted ones; a moved counter sends it back to reading every page. A
-- sequence, not a row: it is not emptied with the tables, and a statement that rolls back only costs one
-- full read.
CREATE SEQUENCE page_deletions;

CREATE FUNCTION count_page_deletions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM nextval('page_deletions');
  RETURN NULL;
END
$$;

CREATE TRIGGER pages_deleted AFTER DELETE OR TRUNCATE ON pages FOR EACH STATEMENT EXECUTE FUNCTION count_page_deletions();
