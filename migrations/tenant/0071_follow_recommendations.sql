-- The follow suggestions' global sources (src/api/suggestions.c), as
-- Mastodon's global_follow_recommendations view: accounts most followed
-- by the tenant's users active in the last 30 days ("most_followed"), and
-- accounts whose statuses of the last 30 days drew the most favourites
-- and reblogs ("most_interactions"), each source's rank n / (1 + n) and
-- summed over the two. The trends task (src/social/trends_task.c)
-- rewrites a tenant's rows at most once an hour, after new activity; the
-- suggestions list reads the best of them by follow_recommendations_rank.
-- docs/trends.md has the details.
CREATE TABLE follow_recommendations (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    rank double precision NOT NULL,
    -- 'most_followed' and/or 'most_interactions', in that order
    reason text[] NOT NULL,
    PRIMARY KEY (tenant_id, account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX follow_recommendations_rank ON follow_recommendations (tenant_id, rank DESC);
