-- OAuth sign-in pages: a browser gets a session (and its CSRF token) before
-- it signs in, so the sign-in form itself is CSRF-protected; such a session
-- has no user yet. Expired sessions are deleted as new ones are made.
ALTER TABLE web_sessions ALTER COLUMN user_id DROP NOT NULL;
CREATE INDEX web_sessions_expires ON web_sessions (tenant_id, expires_at);
CREATE INDEX oauth_access_tokens_user ON oauth_access_tokens (tenant_id, user_id) WHERE user_id IS NOT NULL;
