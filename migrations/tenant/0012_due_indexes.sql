-- The queue's placement poll (src/queue/queue.c) asks, across every tenant
-- of a placement at once, what falls due before its next round. These
-- indexes serve that question; the per-tenant ones (led by tenant_id) serve
-- each tenant's own claims and tasks.
CREATE INDEX jobs_due_placement ON jobs (run_at) WHERE state = 'ready';
CREATE INDEX scheduled_statuses_due_placement ON scheduled_statuses (scheduled_at);
CREATE INDEX polls_open_placement ON polls (expires_at) WHERE closed_at IS NULL;
CREATE INDEX accounts_suspended_placement ON accounts (suspended_at) WHERE suspended_at IS NOT NULL;
