-- Polls and scheduled statuses (issue 4). Both are served by timed tasks
-- (src/queue/timed.c) that sleep until the earliest expires_at / scheduled_at,
-- so each table has an index on exactly the column that task orders by.

CREATE TABLE polls (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    status_id bigint NOT NULL,
    account_id bigint NOT NULL,
    options text[] NOT NULL,
    multiple boolean NOT NULL DEFAULT false,
    hide_totals boolean NOT NULL DEFAULT false,
    expires_at timestamptz NOT NULL,
    -- Set by the expiry task when the poll notifications went out; an open
    -- poll past expires_at is one that task has yet to close.
    closed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE,
    UNIQUE (tenant_id, status_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX polls_open ON polls (tenant_id, expires_at) WHERE closed_at IS NULL;

-- One row per voter holding all their choices (0-based option indexes): the
-- primary key makes "one vote per account" hold under concurrent requests.
CREATE TABLE poll_votes (
    tenant_id bigint NOT NULL,
    poll_id bigint NOT NULL,
    account_id bigint NOT NULL,
    choices integer[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, poll_id, account_id),
    FOREIGN KEY (tenant_id, poll_id) REFERENCES polls (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX poll_votes_account ON poll_votes (tenant_id, account_id);

-- A status to be posted later. params is Mastodon's ScheduledStatus.params
-- as the API shows it; draft is what posting resolved when it was scheduled
-- (HTML, mentioned account ids, tags, reply parent, poll), which the
-- publisher inserts as an ordinary status.
CREATE TABLE scheduled_statuses (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    scheduled_at timestamptz NOT NULL,
    params jsonb NOT NULL,
    draft jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX scheduled_statuses_due ON scheduled_statuses (tenant_id, scheduled_at);
CREATE INDEX scheduled_statuses_account ON scheduled_statuses (tenant_id, account_id, id DESC);
