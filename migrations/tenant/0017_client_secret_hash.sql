-- OAuth client secrets were kept in the clear, so a database dump or a
-- backup was enough to act as any registered app. Like access tokens and
-- authorization codes they are now stored only as the lower-case hex
-- SHA-256 of the secret (a secret is 32 random bytes, so no slow hash is
-- needed); the clear secret is shown once, when the app is registered.
ALTER TABLE oauth_applications ADD COLUMN client_secret_hash text;
UPDATE oauth_applications
    SET client_secret_hash = encode(sha256(convert_to(client_secret, 'UTF8')), 'hex');
ALTER TABLE oauth_applications ALTER COLUMN client_secret_hash SET NOT NULL;
ALTER TABLE oauth_applications DROP COLUMN client_secret;
