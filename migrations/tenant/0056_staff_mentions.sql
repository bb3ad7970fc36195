-- Mastodon never filters or drops a mention from staff: NotifyService's
-- from_staff? (a local sender whose user role overrides the recipient's)
-- skips the notification policy for messages. Migration 0053's verdict came
-- before roles (0043's eunha_role() gives a users row's role position in
-- every tenant); this is that function again with the staff check. The check
-- runs only when the policy would hold the mention back, so the common
-- all-accept path reads nothing more.
CREATE OR REPLACE FUNCTION eunha_notification_verdict(p_tenant bigint, p_recipient bigint, p_sender bigint,
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
