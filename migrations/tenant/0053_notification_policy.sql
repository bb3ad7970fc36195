-- Mastodon 4.3's notification policy and notification requests
-- (src/api/notification_requests.c, src/social/notify.c). A recipient
-- chooses, per kind of sender, whether a notification is accepted, filtered
-- into a request (kept, but out of the list, the stream and the unread
-- counts until the request is accepted) or dropped.

-- One row per user who changed the defaults; no row means the defaults,
-- so a user who never opened the setting costs nothing.
CREATE TABLE notification_policies (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    for_not_following text NOT NULL DEFAULT 'accept',
    for_not_followers text NOT NULL DEFAULT 'accept',
    for_new_accounts text NOT NULL DEFAULT 'accept',
    for_private_mentions text NOT NULL DEFAULT 'filter',
    for_limited_accounts text NOT NULL DEFAULT 'filter',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    CHECK (for_not_following IN ('accept', 'filter', 'drop')
           AND for_not_followers IN ('accept', 'filter', 'drop')
           AND for_new_accounts IN ('accept', 'filter', 'drop')
           AND for_private_mentions IN ('accept', 'filter', 'drop')
           AND for_limited_accounts IN ('accept', 'filter', 'drop'))
);

-- An accepted request: everything from that sender is accepted from then
-- on, whatever the policy says (Mastodon's NotificationPermission).
CREATE TABLE notification_permissions (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    from_account_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id, from_account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, from_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

-- One pending request per (recipient, sender). As in Mastodon, only a
-- filtered mention opens or bumps one; last_status_id is that mention's
-- status (no foreign key: a deleted status is skipped when rendering).
CREATE TABLE notification_requests (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    from_account_id bigint NOT NULL,
    last_status_id bigint,
    notifications_count integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, account_id, from_account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, from_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX notification_requests_account ON notification_requests (tenant_id, account_id, id DESC);

-- Filtered rows are few; the lists skip them while walking
-- notifications_account, and accepting or dismissing a request finds a
-- sender's through this partial index.
ALTER TABLE notifications ADD COLUMN filtered boolean NOT NULL DEFAULT false;
CREATE INDEX notifications_filtered ON notifications (tenant_id, account_id, from_account_id)
    WHERE filtered;

-- Is status p_status (a direct mention of p_recipient by p_sender) an
-- answer to a private mention of p_sender by p_recipient, up to 100
-- statuses up the thread? Then the private-mentions policy lets it
-- through, as Mastodon's response_to_recipient? does.
CREATE FUNCTION eunha_answers_private_mention(p_tenant bigint, p_status bigint,
                                              p_recipient bigint, p_sender bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
    WITH RECURSIVE up(id, depth) AS (
        SELECT s.in_reply_to_id, 0 FROM statuses s
        WHERE s.tenant_id = p_tenant AND s.id = p_status AND s.in_reply_to_id IS NOT NULL
      UNION ALL
        SELECT s.in_reply_to_id, up.depth + 1 FROM up JOIN statuses s
            ON s.tenant_id = p_tenant AND s.id = up.id
        WHERE s.in_reply_to_id IS NOT NULL AND up.depth < 100
    )
    SELECT EXISTS (SELECT 1 FROM up JOIN statuses s ON s.tenant_id = p_tenant AND s.id = up.id
                   JOIN mentions m ON m.tenant_id = p_tenant AND m.status_id = s.id
                       AND m.account_id = p_sender AND NOT m.silent
                   WHERE s.account_id = p_recipient AND s.visibility = 3)
$$;

-- 'accept', 'filter' or 'drop' for a notification of p_type about
-- p_status from p_sender (created at p_created_at, silenced at
-- p_silenced_at: the caller has the sender's row already) to p_recipient,
-- under the recipient's policy: Mastodon's NotifyService DropCondition and
-- FilterCondition past the blocks and mutes, which the caller applies.
-- Drop wins over filter. Only the policy row is read in the common case; a
-- condition costs its probe only when its setting is not 'accept'.
-- A mention from staff whose role outranks the recipient's (Mastodon's
-- from_staff?) is never held back; that check runs only when the policy
-- would hold the mention back, so the all-accept path reads nothing more.
CREATE FUNCTION eunha_notification_verdict(p_tenant bigint, p_recipient bigint, p_sender bigint,
                                           p_type text, p_status bigint,
                                           p_created_at timestamptz, p_silenced_at timestamptz)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
    pol record;
    recipient_follows boolean;
    worst text := 'accept';
    setting text;
    holds boolean;
BEGIN
    -- Mastodon's filterable types: a poll ending, an edit, a new status of
    -- someone followed with notify and the staff's notices always arrive.
    IF p_type NOT IN ('mention', 'reblog', 'follow', 'follow_request', 'favourite') THEN
        RETURN 'accept';
    END IF;
    SELECT np.for_not_following, np.for_not_followers, np.for_new_accounts,
           np.for_private_mentions, np.for_limited_accounts INTO pol
        FROM notification_policies np WHERE np.tenant_id = p_tenant AND np.account_id = p_recipient;
    IF NOT FOUND THEN
        SELECT 'accept' AS for_not_following, 'accept' AS for_not_followers,
               'accept' AS for_new_accounts, 'filter' AS for_private_mentions,
               'filter' AS for_limited_accounts INTO pol;
    END IF;
    FOREACH setting IN ARRAY ARRAY['not_following', 'not_followers', 'new_accounts',
                                    'private_mentions', 'limited_accounts'] LOOP
        CONTINUE WHEN CASE setting WHEN 'not_following' THEN pol.for_not_following
            WHEN 'not_followers' THEN pol.for_not_followers
            WHEN 'new_accounts' THEN pol.for_new_accounts
            WHEN 'private_mentions' THEN pol.for_private_mentions
            ELSE pol.for_limited_accounts END IN ('accept', worst);
        IF setting <> 'not_followers' AND recipient_follows IS NULL THEN
            recipient_follows := EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = p_tenant
                                 AND f.account_id = p_recipient AND f.target_account_id = p_sender);
        END IF;
        holds := CASE setting
            WHEN 'not_following' THEN NOT recipient_follows
            -- A follower of less than three days counts as none, so a
            -- follow cannot open the door right before a message.
            WHEN 'not_followers' THEN NOT EXISTS (SELECT 1 FROM follows f
                WHERE f.tenant_id = p_tenant AND f.account_id = p_sender
                AND f.target_account_id = p_recipient AND f.created_at <= now() - interval '3 days')
            WHEN 'new_accounts' THEN NOT recipient_follows AND p_created_at > now() - interval '30 days'
            WHEN 'private_mentions' THEN NOT recipient_follows AND p_type = 'mention'
                AND EXISTS (SELECT 1 FROM statuses s WHERE s.tenant_id = p_tenant
                            AND s.id = p_status AND s.visibility = 3)
                AND NOT eunha_answers_private_mention(p_tenant, p_status, p_recipient, p_sender)
            ELSE NOT recipient_follows AND p_silenced_at IS NOT NULL END;
        IF holds THEN
            worst := CASE setting WHEN 'not_following' THEN pol.for_not_following
                WHEN 'not_followers' THEN pol.for_not_followers
                WHEN 'new_accounts' THEN pol.for_new_accounts
                WHEN 'private_mentions' THEN pol.for_private_mentions
                ELSE pol.for_limited_accounts END;
            EXIT WHEN worst = 'drop';
        END IF;
    END LOOP;
    -- An accepted request overrides the policy; read only when it matters.
    IF worst <> 'accept' AND EXISTS (SELECT 1 FROM notification_permissions pm
            WHERE pm.tenant_id = p_tenant AND pm.account_id = p_recipient
            AND pm.from_account_id = p_sender) THEN
        RETURN 'accept';
    END IF;
    -- So does a mention from staff: a local sender whose role outranks the
    -- recipient's (Mastodon's from_staff?, UserRole#overrides?). A
    -- recipient without a user row has the everyone role's -1.
    IF worst <> 'accept' AND p_type = 'mention' AND EXISTS (SELECT 1 FROM users su
            JOIN accounts sa ON sa.tenant_id = p_tenant AND sa.id = su.account_id
                AND sa.domain IS NULL
            CROSS JOIN LATERAL eunha_role(p_tenant, su.role_id) sr
            WHERE su.tenant_id = p_tenant AND su.account_id = p_sender
            AND sr.position > coalesce((SELECT rr.position FROM users ru
                CROSS JOIN LATERAL eunha_role(p_tenant, ru.role_id) rr
                WHERE ru.tenant_id = p_tenant AND ru.account_id = p_recipient), -1)) THEN
        RETURN 'accept';
    END IF;
    RETURN worst;
END
$$;
