-- Two-factor sign-in with TOTP (RFC 6238), as Mastodon's devise-two-factor
-- keeps it on the user (issue 29). Eunha has no per-tenant or host secret
-- to seal the TOTP secret with, so it is stored as is (base32); the
-- recovery codes are stored as SHA-256 hashes and each works once.

-- otp_secret: base32, set when two-factor sign-in is confirmed.
-- otp_consumed_timestep: the last 30 s step a code was accepted for, so a
-- code is never accepted twice (devise-two-factor's consumed_timestep).
-- otp_backup_codes: hashes of the recovery codes not used yet.
ALTER TABLE users ADD COLUMN otp_secret text,
    ADD COLUMN otp_required_for_login boolean NOT NULL DEFAULT false,
    ADD COLUMN otp_consumed_timestep bigint,
    ADD COLUMN otp_backup_codes text[] NOT NULL DEFAULT '{}';

-- A browser between its password and its code: the user it named, until
-- otp_pending_until (minutes); it is not signed in meanwhile. And a secret
-- being set up on the settings page, not yet confirmed with a code.
ALTER TABLE web_sessions ADD COLUMN otp_pending_user_id bigint,
    ADD COLUMN otp_pending_until timestamptz,
    ADD COLUMN otp_setup_secret text,
    ADD FOREIGN KEY (tenant_id, otp_pending_user_id) REFERENCES users (tenant_id, id)
        ON DELETE CASCADE;
