-- A post's statement (statuses.insert_plain) and feeds.recipients read the
-- author's followers for the home feeds and the bell; both want the local
-- ones only (remote followers are reached by deliveries, one per inbox),
-- but a follows row does not say whether its follower is local, so every
-- remote follower's row and account were read on every post: a post by an
-- account with 10,000 remote followers read 20,000 rows to fill no feed.
-- follows.local says it, set from the follower's account (whose domain
-- never changes) by a trigger, so every writer of follows (REST, inbox,
-- import, move, followers sync) keeps it without knowing; the partial
-- indexes serve the two questions a post asks: which local followers, and
-- is there any remote one.

ALTER TABLE follows ADD COLUMN local boolean NOT NULL DEFAULT false;

UPDATE follows f SET local = true FROM accounts a
WHERE a.tenant_id = f.tenant_id AND a.id = f.account_id AND a.domain IS NULL;

CREATE FUNCTION eunha_follows_local() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.local := EXISTS (SELECT 1 FROM accounts a WHERE a.tenant_id = NEW.tenant_id
                         AND a.id = NEW.account_id AND a.domain IS NULL);
    RETURN NEW;
END
$$;

CREATE TRIGGER follows_local BEFORE INSERT OR UPDATE OF account_id, local ON follows
    FOR EACH ROW EXECUTE FUNCTION eunha_follows_local();

-- INCLUDE notify: the bell's list comes from the same scan.
CREATE INDEX follows_local_followers ON follows (tenant_id, target_account_id, account_id)
    INCLUDE (notify) WHERE local;
CREATE INDEX follows_remote_followers ON follows (tenant_id, target_account_id, account_id)
    WHERE NOT local;

-- The mutes of one author, read as a set when its post picks the feeds
-- (blocks have blocks_target already).
CREATE INDEX mutes_target ON mutes (tenant_id, target_account_id);

-- The instance's status count is summed over sixteen shard rows (0034),
-- chosen by the author: two authors whose ids fell in one shard waited for
-- each other's commit, and so did any two posts by one author through
-- different connections of a pool. The shard is now the backend's: a
-- backend runs one transaction at a time, so two transactions on one
-- shard need two backends whose pids agree modulo 16, and a placement's
-- few connections, opened one after another, mostly have consecutive
-- pids. Only the sum means anything, so a status may be counted in one
-- shard and uncounted in another. Everything else is 0038's function
-- unchanged (a migration replaces a function whole).
CREATE OR REPLACE FUNCTION eunha_status_counts() RETURNS trigger
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

    IF d > 0 AND r.local THEN
        -- The author's row, then the shard: the main statement runs before
        -- a data-modifying CTE it does not read (0038's lock order).
        WITH sh AS (INSERT INTO instance_status_counts AS c (tenant_id, shard, n)
            VALUES (r.tenant_id, (pg_backend_pid() % 16)::smallint, 1)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET n = c.n + 1)
        UPDATE accounts SET statuses_count = statuses_count + 1,
            last_status_at = greatest(last_status_at, r.created_at)
        WHERE tenant_id = r.tenant_id AND id = r.account_id;
    ELSIF d > 0 THEN
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
        IF r.local THEN
            INSERT INTO instance_status_counts AS c (tenant_id, shard, n)
            VALUES (r.tenant_id, (pg_backend_pid() % 16)::smallint, -1)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET n = c.n - 1;
        END IF;
    END IF;
    IF r.in_reply_to_id IS NOT NULL THEN
        UPDATE statuses SET replies_count = greatest(replies_count + d, 0)
        WHERE tenant_id = r.tenant_id AND id = r.in_reply_to_id;
    END IF;
    IF r.reblog_of_id IS NOT NULL THEN
        UPDATE statuses SET reblogs_count = greatest(reblogs_count + d, 0)
        WHERE tenant_id = r.tenant_id AND id = r.reblog_of_id;
    END IF;
    RETURN NULL;
END
$$;
