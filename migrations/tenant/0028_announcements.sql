-- Announcements (Mastodon's): what the operator publishes to a tenant's
-- users through the admin API (src/admin/announcements.c), shown by
-- GET /api/v1/announcements (src/api/announcements.c). text is plain text
-- rendered to HTML when read; starts_at and ends_at come together or not at
-- all, as Mastodon validates; one whose ends_at has passed is no longer
-- listed. The caps repeat the admin API's checks so that no other path can
-- write past them.
CREATE TABLE announcements (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    text text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 5000),
    published boolean NOT NULL DEFAULT false,
    all_day boolean NOT NULL DEFAULT false,
    starts_at timestamptz,
    ends_at timestamptz,
    published_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CHECK ((starts_at IS NULL) = (ends_at IS NULL)),
    CHECK (ends_at IS NULL OR ends_at >= starts_at)
);

-- An account dismissed (read) an announcement: Mastodon's announcement_mutes.
CREATE TABLE announcement_dismissals (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    announcement_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id, announcement_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, announcement_id) REFERENCES announcements (tenant_id, id)
        ON DELETE CASCADE
);
CREATE INDEX announcement_dismissals_announcement
    ON announcement_dismissals (tenant_id, announcement_id);

-- One account's reaction (a Unicode emoji) to an announcement. Listed in
-- the entity grouped by name, in the order each name was first used.
CREATE TABLE announcement_reactions (
    tenant_id bigint NOT NULL,
    announcement_id bigint NOT NULL,
    name text NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 64),
    account_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant_id, announcement_id, name, account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, announcement_id) REFERENCES announcements (tenant_id, id)
        ON DELETE CASCADE
);
CREATE INDEX announcement_reactions_account ON announcement_reactions (tenant_id, account_id);

-- Mastodon's ReactionValidator: at most 8 different names per announcement
-- (each shown on every client's announcement). The announcement's row is
-- locked first, so two new names added at once are counted one after the
-- other; in a trigger each query sees what committed before it, which a
-- single statement's snapshot would not. SQLSTATE EU003: a 422 with this
-- message (src/http/query.c).
CREATE FUNCTION eunha_announcement_reaction_cap() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM announcements a WHERE a.tenant_id = NEW.tenant_id
        AND a.id = NEW.announcement_id FOR NO KEY UPDATE;
    IF NOT EXISTS (SELECT 1 FROM announcement_reactions r WHERE r.tenant_id = NEW.tenant_id
                   AND r.announcement_id = NEW.announcement_id AND r.name = NEW.name)
       AND (SELECT count(DISTINCT r.name) FROM announcement_reactions r
            WHERE r.tenant_id = NEW.tenant_id AND r.announcement_id = NEW.announcement_id) >= 8
    THEN
        RAISE EXCEPTION 'Limit of different reactions reached' USING ERRCODE = 'EU003';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER announcement_reactions_cap BEFORE INSERT ON announcement_reactions
    FOR EACH ROW EXECUTE FUNCTION eunha_announcement_reaction_cap();
