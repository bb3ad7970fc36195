-- Polls and scheduled statuses (issue 4). Both are served by timed tasks
-- (src/queue/timed.c) that sleep until the earliest expires_at / scheduled_at,
-- so each table has an index on exactly the column that task orders by.

CREATE TABLE polls (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    status_id bigint NOT NULL UNIQUE REFERENCES statuses (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    options text[] NOT NULL,
    multiple boolean NOT NULL DEFAULT false,
    hide_totals boolean NOT NULL DEFAULT false,
    expires_at timestamptz NOT NULL,
    -- Set by the expiry task when the poll notifications went out; an open
    -- poll past expires_at is one that task has yet to close.
    closed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX polls_open ON polls (expires_at) WHERE closed_at IS NULL;

-- One row per voter holding all their choices (0-based option indexes): the
-- primary key makes "one vote per account" hold under concurrent requests.
CREATE TABLE poll_votes (
    poll_id bigint NOT NULL REFERENCES polls (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    choices integer[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (poll_id, account_id)
);
CREATE INDEX poll_votes_account ON poll_votes (account_id);

-- A status to be posted later. params is Mastodon's ScheduledStatus.params
-- as the API shows it; draft is what posting resolved when it was scheduled
-- (HTML, mentioned account ids, tags, reply parent, poll), which the
-- publisher inserts as an ordinary status.
CREATE TABLE scheduled_statuses (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    scheduled_at timestamptz NOT NULL,
    params jsonb NOT NULL,
    draft jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scheduled_statuses_due ON scheduled_statuses (scheduled_at);
CREATE INDEX scheduled_statuses_account ON scheduled_statuses (account_id, id DESC);
