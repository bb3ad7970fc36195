-- A claimed job keeps its run_at and is held by locked_until, so jobs_due
-- (0010) kept held jobs among the due ones: each claim stepped over every
-- job another turn held (deliveries waiting behind a slow host hold
-- theirs for as long as they wait: a thousand of them made every claim of
-- the tenant's deliver queue read a thousand entries), and the time until
-- the next due job read all of the tenant's ready jobs to take the least
-- greatest(run_at, locked_until). That expression is when a ready job can
-- next be claimed; it is what the claim, its next-due time and the
-- safety poll ask, so it is what is indexed now.

CREATE INDEX jobs_due_at ON jobs (tenant_id, queue,
    (greatest(run_at, coalesce(locked_until, run_at))), id) WHERE state = 'ready';
CREATE INDEX jobs_due_at_placement ON jobs ((greatest(run_at, coalesce(locked_until, run_at))))
    WHERE state = 'ready';

DROP INDEX jobs_due;
DROP INDEX jobs_due_placement;
