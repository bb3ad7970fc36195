-- Social group: direct-message conversations kept up to date by the
-- database, and the index behind grouped notifications.
--
-- account_conversations is maintained by triggers rather than by the code
-- that writes statuses, so every writer of a direct status (the API today,
-- federation's inbox next) keeps every participant's conversation list
-- without knowing about it. A direct status and its mentions are written in
-- one statement; AFTER triggers run when the statement ends, so the status
-- trigger already sees the mentions, and the mentions trigger covers
-- mentions added later (edits). Both call one idempotent function.

-- Upserts the conversation of status sid for each local participant: the
-- author (whose copy turns read, having just written) and every mentioned
-- account (whose copy turns unread). A conversation removed with DELETE
-- /api/v1/conversations/:id comes back with the next message, as in
-- Mastodon.
CREATE FUNCTION eunha_conversation_touch(tid bigint, sid bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s record;
    parts bigint[];
BEGIN
    SELECT id, account_id, visibility, deleted_at, reblog_of_id,
           coalesce(conversation_id, id) AS conv
      INTO s FROM statuses WHERE tenant_id = tid AND id = sid;
    IF NOT FOUND OR s.visibility <> 3 OR s.deleted_at IS NOT NULL
       OR s.reblog_of_id IS NOT NULL THEN
        RETURN;
    END IF;
    parts := ARRAY(SELECT s.account_id UNION SELECT m.account_id FROM mentions m
                   WHERE m.tenant_id = tid AND m.status_id = sid);
    BEGIN
        INSERT INTO account_conversations AS ac
               (tenant_id, account_id, conversation_id, participant_ids, last_status_id, unread, updated_at)
        SELECT tid, a.id, s.conv,
               ARRAY(SELECT x FROM unnest(parts) x WHERE x <> a.id ORDER BY x),
               s.id, a.id <> s.account_id, now()
          FROM accounts a
         WHERE a.tenant_id = tid AND a.id = ANY (parts) AND a.domain IS NULL
        ON CONFLICT (tenant_id, account_id, conversation_id) DO UPDATE SET
            participant_ids = ARRAY(SELECT DISTINCT x FROM
                unnest(ac.participant_ids || EXCLUDED.participant_ids) x ORDER BY x),
            last_status_id = greatest(ac.last_status_id, EXCLUDED.last_status_id),
            unread = CASE WHEN EXCLUDED.last_status_id >= coalesce(ac.last_status_id, 0)
                          THEN EXCLUDED.unread ELSE ac.unread END,
            updated_at = now();
    EXCEPTION WHEN OTHERS THEN
        -- A conversation list is not worth failing the status for.
        RAISE WARNING 'cannot update conversations of status %: %', sid, SQLERRM;
    END;
END
$$;

CREATE FUNCTION eunha_conversation_on_status() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM eunha_conversation_touch(NEW.tenant_id, NEW.id);
    RETURN NULL;
END
$$;

CREATE FUNCTION eunha_conversation_on_mention() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM eunha_conversation_touch(NEW.tenant_id, NEW.status_id);
    RETURN NULL;
END
$$;

CREATE TRIGGER statuses_conversation AFTER INSERT ON statuses
    FOR EACH ROW WHEN (NEW.visibility = 3) EXECUTE FUNCTION eunha_conversation_on_status();
CREATE TRIGGER mentions_conversation AFTER INSERT ON mentions
    FOR EACH ROW EXECUTE FUNCTION eunha_conversation_on_mention();

CREATE INDEX account_conversations_account ON account_conversations (tenant_id, account_id, last_status_id DESC);

-- Grouped notifications look groups up by key (show, dismiss, accounts).
CREATE INDEX notifications_group_key ON notifications (tenant_id, account_id, group_key)
    WHERE group_key IS NOT NULL;
