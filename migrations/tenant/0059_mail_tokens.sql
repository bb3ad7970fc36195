-- E-mail confirmation, password reset and e-mail change (src/api/mail_flows.c),
-- as Devise keeps them for Mastodon: one live token of each kind per user,
-- stored as its SHA-256 hash (the token is 32 random bytes, so no slow hash
-- is needed), with the time it was sent, from which it expires.
ALTER TABLE users
    ADD COLUMN confirmation_token_hash text,
    ADD COLUMN confirmation_sent_at timestamptz,
    -- A new address waiting for confirmation (e-mail change, or a resend
    -- with a new address); the change takes effect when it is confirmed.
    ADD COLUMN unconfirmed_email text,
    ADD COLUMN reset_password_token_hash text,
    ADD COLUMN reset_password_sent_at timestamptz,
    -- The app the user signed up with: only it may ask to resend the
    -- confirmation (Mastodon's created_by_application_id).
    ADD COLUMN created_by_application_id bigint;
CREATE UNIQUE INDEX users_confirmation_token ON users (tenant_id, confirmation_token_hash)
    WHERE confirmation_token_hash IS NOT NULL;
CREATE UNIQUE INDEX users_reset_password_token ON users (tenant_id, reset_password_token_hash)
    WHERE reset_password_token_hash IS NOT NULL;
-- A password reset ends the user's browser sessions, as Mastodon's does.
CREATE INDEX web_sessions_user ON web_sessions (tenant_id, user_id) WHERE user_id IS NOT NULL;
