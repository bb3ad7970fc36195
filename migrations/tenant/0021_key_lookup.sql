-- The inbox finds a signature's key by its id (src/ap/resolve.c) before it
-- knows the actor: index the key ids of remote accounts.
CREATE INDEX IF NOT EXISTS accounts_public_key_id ON accounts (tenant_id, public_key_id)
    WHERE public_key_id IS NOT NULL;
