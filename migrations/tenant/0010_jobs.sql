-- Durable background jobs (src/queue/). A worker claims due rows with
-- UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED) and sets
-- locked_until, so two processes never run one job at once and a job whose
-- process died runs again once its lock has passed. A finished job is
-- deleted; one that failed job_max_attempts times stays as 'dead' with its
-- last error until an operator retries or deletes it.
CREATE TABLE jobs (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    queue text NOT NULL DEFAULT 'default',
    kind text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    -- At most one job per key, waiting, running or dead ('purge_account:ID').
    dedupe_key text,
    state text NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'dead')),
    run_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    locked_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, dedupe_key)
);
CREATE INDEX jobs_due ON jobs (tenant_id, queue, run_at) WHERE state = 'ready';
CREATE INDEX jobs_dead ON jobs (tenant_id, id) WHERE state = 'dead';

-- Written by the "ping" job kind: an operator (or a test) enqueues pings to
-- see that a tenant's workers run, and which process ran each.
CREATE TABLE job_pings (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    job_id bigint NOT NULL,
    process text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    ran_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX job_pings_job ON job_pings (tenant_id, job_id);

-- The suspended-account cleanup task looks for the earliest suspension.
CREATE INDEX accounts_suspended ON accounts (tenant_id, suspended_at) WHERE suspended_at IS NOT NULL;
