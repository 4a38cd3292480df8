-- Sitemaps as scheduled items (docs/api.md "Sitemaps as scheduled items"): a row of pages is either a page or a
-- sitemap. A sitemap is scheduled, leased, paced and budgeted exactly as a page is (its change rate is learned from
-- the content hash of the documents posted back), but leases tell the crawler to post its document to
-- POST /v1/sitemaps, and freshness figures count pages only. A URL is one or the other, never both (url is unique).
ALTER TABLE pages ADD COLUMN kind text NOT NULL DEFAULT 'page' CHECK (kind IN ('page', 'sitemap'));

-- Only sitemaps are looked up by kind (stats count them apart); pages are the vast majority.
CREATE INDEX pages_sitemaps ON pages (host) WHERE kind = 'sitemap';
