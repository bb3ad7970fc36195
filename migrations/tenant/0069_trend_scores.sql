-- Trends as Mastodon keeps them, scored by a timed task per tenant
-- (src/social/trends_task.c) and read by src/api/trends.c, and the
-- follow suggestions' staff-featured accounts and dismissals
-- (src/api/suggestions.c). docs/trends.md says how the scores work.
--
-- One row per trending tag (kind 0), status (1) or link (2, a preview
-- card): score is the undecayed score (a tag's or link's highest of the
-- last two days, a status's from its distinct favouriters and
-- rebloggers) and scored_at when it decays from (when that highest was
-- reached; a status's creation). The score at time T is
-- score * 0.5 ^ ((T - scored_at) / half_life), the same factor for every
-- row of a kind, so rank = log2(score) + epoch(scored_at) / half_life
-- orders the rows as their decayed scores do at any T: the readers walk
-- trend_scores_rank and stop below the decay threshold without the task
-- having to run again, so an idle tenant's trends fade on their own.
CREATE TABLE trend_scores (
    tenant_id bigint NOT NULL,
    kind smallint NOT NULL,
    target_id bigint NOT NULL,
    score double precision NOT NULL,
    scored_at timestamptz NOT NULL,
    rank double precision NOT NULL,
    PRIMARY KEY (tenant_id, kind, target_id)
);
CREATE INDEX trend_scores_rank ON trend_scores (tenant_id, kind, rank DESC);

-- Accounts the staff feature in follow suggestions (source "featured").
CREATE TABLE suggestion_features (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

-- Suggestions a user dismissed (DELETE /api/v1/suggestions/:id): never
-- suggested to them again.
CREATE TABLE suggestion_dismissals (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id, target_account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id)
        ON DELETE CASCADE
);
