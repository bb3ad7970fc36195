-- Every path that moves an author's counters locks the author's accounts
-- row before the instance's shard: a delete did (two statements, account
-- first), statuses.insert_plain does (it locks the author's row before
-- the trigger runs, so its answer shows the row the trigger moves), but
-- 0037's local insert took the shard first (in a WITH, the main statement
-- runs before a data-modifying CTE it does not read). Two posts by one
-- author, one of them plain, or a post and a delete, could each hold what
-- the other waited for, and PostgreSQL ended one with a deadlock. The
-- local insert now updates the account in the main statement and the
-- shard in the CTE. Everything else is 0037's function unchanged (a
-- migration replaces a function whole).

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
        -- The author's row, then the author's shard (posts by different
        -- authors lock different shards): the main statement runs before a
        -- data-modifying CTE it does not read.
        WITH sh AS (INSERT INTO instance_status_counts AS c (tenant_id, shard, n)
            VALUES (r.tenant_id, (r.account_id % 16)::smallint, 1)
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
            VALUES (r.tenant_id, (r.account_id % 16)::smallint, -1)
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
