-- Featured hashtags and featured profiles (issue 32, src/api/featured.c):
-- the hashtags an account shows on its profile, local ones made through
-- /api/v1/featured_tags and remote ones learnt from an actor's
-- featuredTags collection or its Add/Remove of a Hashtag; and the
-- accounts an account endorses (Mastodon's account_pins). A featured
-- tag's name keeps the case its owner typed, as Mastodon displays it;
-- its count and last date are read from the owner's statuses when shown.
CREATE TABLE featured_tags (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    tag_id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, tag_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, tag_id) REFERENCES tags (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE account_pins (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, target_account_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX account_pins_target ON account_pins (tenant_id, target_account_id);

