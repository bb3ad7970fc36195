-- What the accounts API needs beyond 0002: the profile fields as their owner
-- typed them, ids on list memberships so they page like every other list,
-- and the indexes behind account search and the blocks/mutes pages.

-- accounts.fields holds the rendered fields (value as HTML) that every
-- Account shows; fields_source keeps the plain text for
-- CredentialAccount.source.fields. NULL means "same as fields" (remote
-- accounts, and accounts that never edited their fields).
ALTER TABLE accounts ADD COLUMN fields_source jsonb;

ALTER TABLE list_accounts ADD COLUMN id bigint NOT NULL DEFAULT eunha_next_id();
CREATE UNIQUE INDEX list_accounts_id ON list_accounts (tenant_id, id);

-- Prefix search on usernames (LIKE 'q%').
CREATE INDEX accounts_username_prefix ON accounts (tenant_id, lower(username) text_pattern_ops);

CREATE INDEX blocks_account ON blocks (tenant_id, account_id, id DESC);
CREATE INDEX mutes_account ON mutes (tenant_id, account_id, id DESC);
