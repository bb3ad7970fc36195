-- A post reads its author's audience: the local followers whose home
-- feeds take it, those who asked to be told, and the remote followers'
-- inboxes. That changes only when a follow, block or mute involving the
-- author does, or a remote follower's inbox or suspension, yet reading it
-- cost every post an index entry per follower. accounts.audience_stamp
-- changes whenever the audience of the account may have, so a process that
-- kept the audience of the author's last post under its stamp can post
-- without reading it again (src/social/audience.c). Stamps only grow, and
-- come from the clock, so a row restored from an archive or copied by a
-- move never repeats a stamp a process keeps for different followers.

ALTER TABLE accounts ADD COLUMN audience_stamp bigint NOT NULL DEFAULT 0;

CREATE FUNCTION eunha_audience_next(old bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT greatest(old + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)
$$;

-- 0013's function, the follower's stamp moved with its count.
CREATE OR REPLACE FUNCTION eunha_follow_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE accounts SET following_count = following_count + 1
        WHERE tenant_id = NEW.tenant_id AND id = NEW.account_id;
        UPDATE accounts SET followers_count = followers_count + 1,
            audience_stamp = eunha_audience_next(audience_stamp)
        WHERE tenant_id = NEW.tenant_id AND id = NEW.target_account_id;
    ELSE
        UPDATE accounts SET following_count = greatest(following_count - 1, 0)
        WHERE tenant_id = OLD.tenant_id AND id = OLD.account_id;
        UPDATE accounts SET followers_count = greatest(followers_count - 1, 0),
            audience_stamp = eunha_audience_next(audience_stamp)
        WHERE tenant_id = OLD.tenant_id AND id = OLD.target_account_id;
    END IF;
    RETURN NULL;
END
$$;

-- The stamps of accounts a and b (b may be NULL).
CREATE FUNCTION eunha_audience_bump(t bigint, a bigint, b bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE accounts SET audience_stamp = eunha_audience_next(audience_stamp)
    WHERE tenant_id = t AND id IN (a, b)
$$;

-- A follow whose bell, follower or target changed (the counts' trigger
-- covers insert and delete).
CREATE FUNCTION eunha_follows_audience() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM eunha_audience_bump(NEW.tenant_id, NEW.target_account_id,
                                nullif(OLD.target_account_id, NEW.target_account_id));
    RETURN NULL;
END
$$;
CREATE TRIGGER follows_audience AFTER UPDATE OF notify, local, account_id, target_account_id
    ON follows FOR EACH ROW EXECUTE FUNCTION eunha_follows_audience();

-- A block keeps either side's posts out of the other's feed.
CREATE FUNCTION eunha_blocks_audience() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r blocks%ROWTYPE;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    PERFORM eunha_audience_bump(r.tenant_id, r.account_id, r.target_account_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER blocks_audience AFTER INSERT OR DELETE ON blocks
    FOR EACH ROW EXECUTE FUNCTION eunha_blocks_audience();

-- A mute keeps the muted account's posts out of the muter's feed; one that
-- expires is kept by the process only until it does.
CREATE FUNCTION eunha_mutes_audience() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM eunha_audience_bump(OLD.tenant_id, OLD.target_account_id, NULL);
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM eunha_audience_bump(NEW.tenant_id, NEW.target_account_id, NULL);
    ELSE
        PERFORM eunha_audience_bump(NEW.tenant_id, NEW.target_account_id,
                                    nullif(OLD.target_account_id, NEW.target_account_id));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER mutes_audience AFTER INSERT OR DELETE OR UPDATE ON mutes
    FOR EACH ROW EXECUTE FUNCTION eunha_mutes_audience();

-- A remote follower's inbox moved, or it was suspended or unsuspended: the
-- inboxes of everyone it follows.
CREATE FUNCTION eunha_accounts_audience() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE accounts SET audience_stamp = eunha_audience_next(audience_stamp)
    WHERE tenant_id = NEW.tenant_id AND id IN (SELECT f.target_account_id FROM follows f
        WHERE f.tenant_id = NEW.tenant_id AND f.account_id = NEW.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER accounts_audience AFTER UPDATE OF inbox_url, shared_inbox_url, suspended_at
    ON accounts FOR EACH ROW WHEN (NEW.domain IS NOT NULL AND (
        OLD.inbox_url IS DISTINCT FROM NEW.inbox_url
        OR OLD.shared_inbox_url IS DISTINCT FROM NEW.shared_inbox_url
        OR (OLD.suspended_at IS NULL) <> (NEW.suspended_at IS NULL)))
    EXECUTE FUNCTION eunha_accounts_audience();
