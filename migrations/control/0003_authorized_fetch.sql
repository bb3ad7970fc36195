-- Authorized fetch ("secure mode"): the tenant's ActivityPub documents are
-- served only to signed requests (src/ap/authfetch.c). Off by default, as
-- in Mastodon.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS authorized_fetch boolean NOT NULL DEFAULT false;
