-- Counters kept as columns, so that no read counts rows: rendering an
-- account or a status, the instance entity and NodeInfo read these instead
-- of counting an author's statuses (thousands of rows) on every request.
-- Triggers move them in the same transaction as the row that moves them, so
-- they cannot drift from the rows; eunha_recount() rebuilds a tenant's
-- counters from its rows after an import.

ALTER TABLE accounts
    ADD COLUMN statuses_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN followers_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN following_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_status_at timestamptz;

ALTER TABLE statuses
    ADD COLUMN replies_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN reblogs_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN favourites_count bigint NOT NULL DEFAULT 0;

-- One row per tenant: local users that are not suspended, local statuses
-- that are not deleted (what /api/v1/instance and NodeInfo report).
CREATE TABLE instance_counters (
    tenant_id bigint NOT NULL,
    user_count bigint NOT NULL DEFAULT 0,
    status_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id)
);

-- A status counts (for its author, its parent, the status it boosts and the
-- instance) while it is not deleted. d is +1 when a row starts counting and
-- -1 when it stops.
CREATE FUNCTION eunha_status_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r statuses%ROWTYPE;
    d int;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.deleted_at IS NOT NULL THEN
            RETURN NULL;
        END IF;
        r := NEW;
        d := 1;
    ELSIF TG_OP = 'DELETE' THEN
        IF OLD.deleted_at IS NOT NULL THEN
            RETURN NULL;
        END IF;
        r := OLD;
        d := -1;
    ELSE
        IF (OLD.deleted_at IS NULL) = (NEW.deleted_at IS NULL) THEN
            RETURN NULL;
        END IF;
        r := NEW;
        d := CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE -1 END;
    END IF;

    IF d > 0 THEN
        UPDATE accounts SET statuses_count = statuses_count + 1,
            last_status_at = greatest(last_status_at, r.created_at)
        WHERE tenant_id = r.tenant_id AND id = r.account_id;
    ELSE
        -- The latest status left, walking the author's index from the top.
        UPDATE accounts a SET statuses_count = greatest(a.statuses_count - 1, 0),
            last_status_at = CASE WHEN a.last_status_at > r.created_at THEN a.last_status_at
                ELSE (SELECT s.created_at FROM statuses s WHERE s.tenant_id = r.tenant_id
                      AND s.account_id = r.account_id AND s.deleted_at IS NULL AND s.id <> r.id
                      ORDER BY s.id DESC LIMIT 1) END
        WHERE a.tenant_id = r.tenant_id AND a.id = r.account_id;
    END IF;
    IF r.in_reply_to_id IS NOT NULL THEN
        UPDATE statuses SET replies_count = greatest(replies_count + d, 0)
        WHERE tenant_id = r.tenant_id AND id = r.in_reply_to_id;
    END IF;
    IF r.reblog_of_id IS NOT NULL THEN
        UPDATE statuses SET reblogs_count = greatest(reblogs_count + d, 0)
        WHERE tenant_id = r.tenant_id AND id = r.reblog_of_id;
    END IF;
    IF r.local THEN
        INSERT INTO instance_counters AS c (tenant_id, status_count) VALUES (r.tenant_id, d)
        ON CONFLICT (tenant_id) DO UPDATE SET status_count = greatest(c.status_count + d, 0);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER statuses_counts AFTER INSERT OR DELETE OR UPDATE OF deleted_at ON statuses
    FOR EACH ROW EXECUTE FUNCTION eunha_status_counts();

CREATE FUNCTION eunha_favourite_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE statuses SET favourites_count = favourites_count + 1
        WHERE tenant_id = NEW.tenant_id AND id = NEW.status_id;
    ELSE
        UPDATE statuses SET favourites_count = greatest(favourites_count - 1, 0)
        WHERE tenant_id = OLD.tenant_id AND id = OLD.status_id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER favourites_counts AFTER INSERT OR DELETE ON favourites
    FOR EACH ROW EXECUTE FUNCTION eunha_favourite_counts();

CREATE FUNCTION eunha_follow_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE accounts SET following_count = following_count + 1
        WHERE tenant_id = NEW.tenant_id AND id = NEW.account_id;
        UPDATE accounts SET followers_count = followers_count + 1
        WHERE tenant_id = NEW.tenant_id AND id = NEW.target_account_id;
    ELSE
        UPDATE accounts SET following_count = greatest(following_count - 1, 0)
        WHERE tenant_id = OLD.tenant_id AND id = OLD.account_id;
        UPDATE accounts SET followers_count = greatest(followers_count - 1, 0)
        WHERE tenant_id = OLD.tenant_id AND id = OLD.target_account_id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER follows_counts AFTER INSERT OR DELETE ON follows
    FOR EACH ROW EXECUTE FUNCTION eunha_follow_counts();

-- A user counts while it is local and not suspended.
CREATE FUNCTION eunha_user_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    was boolean := TG_OP <> 'INSERT' AND OLD.domain IS NULL AND OLD.suspended_at IS NULL;
    now_ boolean := TG_OP <> 'DELETE' AND NEW.domain IS NULL AND NEW.suspended_at IS NULL;
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
CREATE TRIGGER accounts_counts AFTER INSERT OR DELETE OR UPDATE OF domain, suspended_at
    ON accounts FOR EACH ROW EXECUTE FUNCTION eunha_user_counts();

-- Rebuilds one tenant's counters from its rows (after an import, whose
-- archive's counters and the triggers' increments would otherwise add up).
CREATE FUNCTION eunha_recount(tid bigint) RETURNS void
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
            AND suspended_at IS NULL),
        (SELECT count(*) FROM statuses WHERE tenant_id = tid AND local AND deleted_at IS NULL))
    ON CONFLICT (tenant_id) DO UPDATE SET user_count = excluded.user_count,
        status_count = excluded.status_count;
$$;
