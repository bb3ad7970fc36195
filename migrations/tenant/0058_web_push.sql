-- Web Push (issue 29), as Mastodon's Web::PushSubscription: one
-- subscription per access token, replaced when the app subscribes again,
-- gone with its token (deleted, or revoked: the trigger below), and the
-- tenant's VAPID key pair that signs every push.

CREATE TABLE web_push_subscriptions (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    access_token_id bigint NOT NULL,
    user_id bigint NOT NULL,
    account_id bigint NOT NULL,
    -- The bearer token itself: Mastodon's payload hands it back to the
    -- app's service worker (access_token), and tokens are kept hashed.
    access_token text NOT NULL,
    endpoint text NOT NULL CHECK (length(endpoint) BETWEEN 1 AND 2048),
    key_p256dh text NOT NULL,
    key_auth text NOT NULL,
    -- {"mention": true, "admin.sign_up": false, ...}: Mastodon's data.alerts.
    alerts jsonb NOT NULL DEFAULT '{}',
    policy text NOT NULL DEFAULT 'all'
        CHECK (policy IN ('all', 'followed', 'follower', 'none')),
    -- true: RFC 8291 aes128gcm; false: the older aesgcm draft.
    standard boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, access_token_id),
    FOREIGN KEY (tenant_id, access_token_id) REFERENCES oauth_access_tokens (tenant_id, id)
        ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
-- The notification insert finds a recipient's subscriptions here.
CREATE INDEX web_push_subscriptions_account ON web_push_subscriptions (tenant_id, account_id);

-- A revoked token's subscription goes at once, as Doorkeeper's revoke
-- destroys Mastodon's.
CREATE FUNCTION eunha_web_push_token_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM web_push_subscriptions
    WHERE tenant_id = NEW.tenant_id AND access_token_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER oauth_access_tokens_web_push AFTER UPDATE OF revoked_at ON oauth_access_tokens
    FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
    EXECUTE FUNCTION eunha_web_push_token_revoked();

-- The tenant's VAPID key pair, made on first need: the private key as
-- PKCS#8 PEM (as accounts.private_key keeps actors' keys), the public one
-- as base64url of its uncompressed P-256 point, what clients are given.
CREATE TABLE web_push_keys (
    tenant_id bigint NOT NULL PRIMARY KEY,
    public_key text NOT NULL,
    private_key text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
