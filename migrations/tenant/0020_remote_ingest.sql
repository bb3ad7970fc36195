-- Remote accounts and statuses as the inbox stores them (src/ap/ingest_store.c).
--
-- The actor's addresses and flags that accounts lacked. IF NOT EXISTS: the
-- actor documents of local accounts (migration 0019) may add some of the
-- same columns for their own use; both mean the same thing.
ALTER TABLE accounts
    ADD COLUMN IF NOT EXISTS featured_url text,
    ADD COLUMN IF NOT EXISTS public_key_id text,
    ADD COLUMN IF NOT EXISTS actor_type text,
    ADD COLUMN IF NOT EXISTS also_known_as text[] NOT NULL DEFAULT '{}',
    ADD COLUMN IF NOT EXISTS moved_to_uri text,
    ADD COLUMN IF NOT EXISTS indexable boolean NOT NULL DEFAULT false;

-- A reply whose parent we have not seen yet keeps the parent's URI, so the
-- parent's arrival can link it (and count it).
ALTER TABLE statuses ADD COLUMN IF NOT EXISTS in_reply_to_uri text;
CREATE INDEX IF NOT EXISTS statuses_unresolved_parent ON statuses (tenant_id, in_reply_to_uri)
    WHERE in_reply_to_uri IS NOT NULL AND in_reply_to_id IS NULL;

-- Linking a reply to its parent after the fact moves the parents' reply
-- counts, which eunha_status_counts() (0013) only moves on insert, delete
-- and deletion.
CREATE FUNCTION eunha_status_reply_moves() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.deleted_at IS NOT NULL OR OLD.deleted_at IS NOT NULL
       OR OLD.in_reply_to_id IS NOT DISTINCT FROM NEW.in_reply_to_id THEN
        RETURN NULL;
    END IF;
    IF OLD.in_reply_to_id IS NOT NULL THEN
        UPDATE statuses SET replies_count = greatest(replies_count - 1, 0)
        WHERE tenant_id = OLD.tenant_id AND id = OLD.in_reply_to_id;
    END IF;
    IF NEW.in_reply_to_id IS NOT NULL THEN
        UPDATE statuses SET replies_count = replies_count + 1
        WHERE tenant_id = NEW.tenant_id AND id = NEW.in_reply_to_id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER statuses_reply_moves AFTER UPDATE OF in_reply_to_id ON statuses
    FOR EACH ROW EXECUTE FUNCTION eunha_status_reply_moves();
