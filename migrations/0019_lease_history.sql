-- Lease history for operators (GET /v1/lease-overview, src/store/leasesRepo.ts): when a page's lease was
-- taken (for the age of the leases a worker holds; null for leases taken before this migration), and per
-- hour how many leased pages expired without a report (counted in the hour they expired, when a lease call
-- returns them to the pool) and how many workers gave back (released, or a lease ended early).
ALTER TABLE page_schedule ADD COLUMN leased_at timestamptz;

CREATE TABLE lease_history (
  hour_start timestamptz PRIMARY KEY,
  pages_expired bigint NOT NULL DEFAULT 0,
  pages_given_back bigint NOT NULL DEFAULT 0
);
