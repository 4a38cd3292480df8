-- A sitemap stores one signal and one pending row for each of up to 50,000 entries in one transaction, and a
-- foreign key checks every such row against pages, one lookup per row: about a third of the document's time.
-- The signal transaction has locked each page it writes for already (src/domain/signals.ts), so the check finds
-- what the lock proved. Deleting pages removes their signals and pending rows by statement instead of by cascade
-- (src/store/pagesRepo.ts, deletePagesOf): after the pages are gone, in a later statement of the same
-- transaction, so that it sees the signals of any transaction that held one of those pages while the deletion
-- waited for it. A signal transaction that starts later no longer finds the pages and stores nothing for them.
ALTER TABLE signals DROP CONSTRAINT signals_page_id_fkey;
ALTER TABLE pending_signals DROP CONSTRAINT pending_signals_page_id_fkey;
