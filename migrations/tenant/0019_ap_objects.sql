-- What the ActivityPub documents a tenant serves need beyond the API's
-- columns (src/ap/actors.c): an account's other identities and the account
-- it moved to, as Mastodon's actors carry them, and its opt-in to full-text
-- indexing (false, Mastodon's default).
ALTER TABLE accounts
    ADD COLUMN also_known_as text[] NOT NULL DEFAULT '{}',
    ADD COLUMN moved_to_account_id bigint,
    ADD COLUMN indexable boolean NOT NULL DEFAULT false,
    ADD FOREIGN KEY (tenant_id, moved_to_account_id) REFERENCES accounts (tenant_id, id)
        ON DELETE SET NULL (moved_to_account_id);

-- Each tenant's instance actor (src/ap/instance_actor.c) is a local accounts
-- row, username 'instance.actor' (sign-up names cannot hold a dot), that
-- signs the tenant's own fetches. It is no user: the instance's user count
-- leaves it out, as Mastodon's does.
CREATE OR REPLACE FUNCTION eunha_user_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    was boolean := TG_OP <> 'INSERT' AND OLD.domain IS NULL AND OLD.suspended_at IS NULL
        AND OLD.username <> 'instance.actor';
    now_ boolean := TG_OP <> 'DELETE' AND NEW.domain IS NULL AND NEW.suspended_at IS NULL
        AND NEW.username <> 'instance.actor';
    tid bigint := CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END;
    d int := (CASE WHEN now_ THEN 1 ELSE 0 END) - (CASE WHEN was THEN 1 ELSE 0 END);
BEGIN
    IF d <> 0 THEN
        INSERT INTO instance_counters AS c (tenant_id, user_count) VALUES (tid, d)
        ON CONFLICT (tenant_id) DO UPDATE SET user_count = greatest(c.user_count + d, 0);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION eunha_recount(tid bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE accounts a SET
        statuses_count = (SELECT count(*) FROM statuses s WHERE s.tenant_id = tid
            AND s.account_id = a.id AND s.deleted_at IS NULL),
        last_status_at = (SELECT max(s.created_at) FROM statuses s WHERE s.tenant_id = tid
            AND s.account_id = a.id AND s.deleted_at IS NULL),
        followers_count = (SELECT count(*) FROM follows f WHERE f.tenant_id = tid
            AND f.target_account_id = a.id),
        following_count = (SELECT count(*) FROM follows f WHERE f.tenant_id = tid
            AND f.account_id = a.id)
    WHERE a.tenant_id = tid;
    UPDATE statuses s SET
        replies_count = (SELECT count(*) FROM statuses r WHERE r.tenant_id = tid
            AND r.in_reply_to_id = s.id AND r.deleted_at IS NULL),
        reblogs_count = (SELECT count(*) FROM statuses r WHERE r.tenant_id = tid
            AND r.reblog_of_id = s.id AND r.deleted_at IS NULL),
        favourites_count = (SELECT count(*) FROM favourites f WHERE f.tenant_id = tid
            AND f.status_id = s.id)
    WHERE s.tenant_id = tid;
    INSERT INTO instance_counters AS c (tenant_id, user_count, status_count)
    VALUES (tid,
        (SELECT count(*) FROM accounts WHERE tenant_id = tid AND domain IS NULL
            AND suspended_at IS NULL AND username <> 'instance.actor'),
        (SELECT count(*) FROM statuses WHERE tenant_id = tid AND local AND deleted_at IS NULL))
    ON CONFLICT (tenant_id) DO UPDATE SET user_count = excluded.user_count,
        status_count = excluded.status_count;
$$;
