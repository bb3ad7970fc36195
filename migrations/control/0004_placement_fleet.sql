-- Placements as a fleet's units (issue 30): each may live on any
-- PostgreSQL server (database_url, which 0001 already had), names the
-- Redis its tenants' keys are to use, holds at most capacity tenants
-- (NULL: no cap), and is open to new tenants, draining (taking none while
-- its tenants are moved away) or closed. The operator registers, changes
-- and retires them through /admin/v1/placements (src/admin/placements.c).
ALTER TABLE placements ADD COLUMN IF NOT EXISTS redis_url text;
ALTER TABLE placements ADD COLUMN IF NOT EXISTS capacity integer CHECK (capacity >= 1);
ALTER TABLE placements ADD COLUMN IF NOT EXISTS state text NOT NULL DEFAULT 'open'
    CHECK (state IN ('open', 'draining', 'closed'));
ALTER TABLE placements ADD COLUMN IF NOT EXISTS updated_at timestamptz NOT NULL DEFAULT now();
