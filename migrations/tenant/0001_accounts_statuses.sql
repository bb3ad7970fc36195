-- A placement database: the rows of one tenant (dedicated) or of many
-- (pooled), in one schema. Every tenant-owned table starts its primary key
-- with tenant_id, and every foreign key and unique constraint includes it, so
-- the database itself refuses a reference from one tenant's row to another's.
-- tenant_id is the control database's tenants.id.
--
-- Ids are Mastodon-style: milliseconds since the epoch in the high bits and a
-- sequence in the low 16, so they sort by creation time and leak no count.
-- Moving a tenant to another placement keeps its ids; they only need to be
-- unique within the tenant, which (tenant_id, id) keys enforce.
CREATE SEQUENCE eunha_id_seq;

CREATE FUNCTION eunha_next_id() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 16)
           | (nextval('eunha_id_seq') & 65535)
$$;

-- Local and remote accounts alike: domain is NULL for local ones; remote ones
-- carry their ActivityPub addresses.
CREATE TABLE accounts (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    username text NOT NULL,
    domain text,
    display_name text NOT NULL DEFAULT '',
    note text NOT NULL DEFAULT '',
    uri text,
    url text,
    inbox_url text,
    shared_inbox_url text,
    outbox_url text,
    followers_url text,
    following_url text,
    public_key text,
    private_key text,
    avatar_url text,
    header_url text,
    fields jsonb NOT NULL DEFAULT '[]',
    locked boolean NOT NULL DEFAULT false,
    bot boolean NOT NULL DEFAULT false,
    discoverable boolean NOT NULL DEFAULT true,
    suspended_at timestamptz,
    last_fetched_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX accounts_username_domain
    ON accounts (tenant_id, lower(username), coalesce(lower(domain), ''));
CREATE UNIQUE INDEX accounts_uri ON accounts (tenant_id, uri) WHERE uri IS NOT NULL;

-- Sign-in data of local accounts only.
CREATE TABLE users (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    email text NOT NULL,
    encrypted_password text NOT NULL,
    role text NOT NULL DEFAULT 'user' CHECK (role IN ('owner', 'admin', 'user')),
    confirmed_at timestamptz,
    approved boolean NOT NULL DEFAULT true,
    locale text,
    last_sign_in_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX users_email ON users (tenant_id, lower(email));

CREATE TABLE statuses (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    uri text,
    url text,
    local boolean NOT NULL DEFAULT true,
    text text NOT NULL DEFAULT '',
    content text NOT NULL DEFAULT '',
    spoiler_text text NOT NULL DEFAULT '',
    sensitive boolean NOT NULL DEFAULT false,
    visibility smallint NOT NULL DEFAULT 0, -- 0 public, 1 unlisted, 2 private, 3 direct
    language text,
    in_reply_to_id bigint,
    in_reply_to_account_id bigint,
    reblog_of_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    edited_at timestamptz,
    deleted_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, reblog_of_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX statuses_account ON statuses (tenant_id, account_id, id DESC);
CREATE UNIQUE INDEX statuses_uri ON statuses (tenant_id, uri) WHERE uri IS NOT NULL;

-- Instance-wide settings, one row per tenant and key, so an export of the
-- tenant's rows is the whole instance.
CREATE TABLE settings (
    tenant_id bigint NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
