-- Which authorization code an access token was issued for, so a code
-- presented a second time can take back what it was first exchanged for
-- (RFC 6749 4.1.2: the code has probably leaked, and whoever redeemed it
-- first may not be the client). NULL for tokens from other grants and
-- for tokens issued before this column existed. Not a foreign key: the
-- grant row may be cleaned away while its token lives on.
ALTER TABLE oauth_access_tokens ADD COLUMN grant_id bigint;
CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (tenant_id, grant_id)
    WHERE grant_id IS NOT NULL;
