-- Pages of hosts with a politeness delay (hosts.min_delay_seconds > 0) are marked polite when they are
-- written, instead of by the lease statement as it met them: a page is marked when it is inserted for a
-- polite host, and a host's pages are marked when the host gains a delay (the unmark triggers of
-- migrations/0003 still clear them when it loses it). The lease claim only marks the rare page that a
-- concurrent change of its host left unmarked.
CREATE FUNCTION pages_mark_polite_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.polite := EXISTS (SELECT 1 FROM hosts h WHERE h.host = NEW.host AND h.min_delay_seconds > 0);
  RETURN NEW;
END
$$;
CREATE TRIGGER pages_polite_on_insert BEFORE INSERT ON pages FOR EACH ROW
  EXECUTE FUNCTION pages_mark_polite_on_insert();

CREATE FUNCTION hosts_mark_polite_pages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE pages SET polite = true WHERE host = NEW.host AND NOT polite;
  RETURN NULL;
END
$$;
CREATE TRIGGER hosts_delay_set_on_insert AFTER INSERT ON hosts FOR EACH ROW
  WHEN (NEW.min_delay_seconds > 0)
  EXECUTE FUNCTION hosts_mark_polite_pages();
CREATE TRIGGER hosts_delay_set AFTER UPDATE OF min_delay_seconds ON hosts FOR EACH ROW
  WHEN (NEW.min_delay_seconds > 0 AND NOT coalesce(OLD.min_delay_seconds > 0, false))
  EXECUTE FUNCTION hosts_mark_polite_pages();

-- Pages of hosts that already have a delay.
UPDATE pages p SET polite = true FROM hosts h WHERE h.host = p.host AND h.min_delay_seconds > 0 AND NOT p.polite;
