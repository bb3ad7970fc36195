-- The Mastodon client API's data: OAuth, the social graph, status
-- interactions, notifications, lists, markers, filters. Remote accounts and
-- statuses share these tables with local ones (federation fills uri/url).

-- Per-user preferences behind Account.source and /api/v1/preferences.
ALTER TABLE users
    ADD COLUMN default_privacy text NOT NULL DEFAULT 'public'
        CHECK (default_privacy IN ('public', 'unlisted', 'private', 'direct')),
    ADD COLUMN default_sensitive boolean NOT NULL DEFAULT false,
    ADD COLUMN default_language text,
    ADD COLUMN reason text;

ALTER TABLE statuses
    ADD COLUMN conversation_id bigint,
    ADD COLUMN application_id bigint,
    ADD COLUMN pinned_at timestamptz;
CREATE INDEX statuses_public ON statuses (tenant_id, id DESC) WHERE deleted_at IS NULL AND visibility = 0 AND reblog_of_id IS NULL;
CREATE INDEX statuses_reblog_of ON statuses (tenant_id, reblog_of_id) WHERE reblog_of_id IS NOT NULL;
CREATE INDEX statuses_in_reply_to ON statuses (tenant_id, in_reply_to_id) WHERE in_reply_to_id IS NOT NULL;
CREATE INDEX statuses_conversation ON statuses (tenant_id, conversation_id);
CREATE SEQUENCE conversations_id_seq;

CREATE TABLE oauth_applications (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    name text NOT NULL,
    website text,
    redirect_uri text NOT NULL,          -- one URI per line
    scopes text NOT NULL DEFAULT 'read',
    client_id text NOT NULL,
    client_secret text NOT NULL,
    owner_account_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, client_id),
    FOREIGN KEY (tenant_id, owner_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

-- Authorization codes. Only a hash of the code is stored.
CREATE TABLE oauth_access_grants (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    application_id bigint NOT NULL,
    user_id bigint NOT NULL,
    code_hash text NOT NULL,
    redirect_uri text NOT NULL,
    scopes text NOT NULL,
    code_challenge text,
    code_challenge_method text,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, application_id) REFERENCES oauth_applications (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    UNIQUE (tenant_id, code_hash)
);

-- Access tokens. Only a hash of the token is stored; user_id is NULL for
-- client_credentials tokens (app-only).
CREATE TABLE oauth_access_tokens (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    application_id bigint,
    user_id bigint,
    token_hash text NOT NULL,
    scopes text NOT NULL,
    revoked_at timestamptz,
    last_used_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, application_id) REFERENCES oauth_applications (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    UNIQUE (tenant_id, token_hash)
);

-- Browser sessions of the OAuth sign-in pages.
CREATE TABLE web_sessions (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    user_id bigint NOT NULL,
    session_hash text NOT NULL,
    csrf_token text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    UNIQUE (tenant_id, session_hash)
);

CREATE TABLE follows (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    show_reblogs boolean NOT NULL DEFAULT true,
    notify boolean NOT NULL DEFAULT false,
    languages text[],
    uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, target_account_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX follows_target ON follows (tenant_id, target_account_id, id DESC);
CREATE INDEX follows_account ON follows (tenant_id, account_id, id DESC);

CREATE TABLE follow_requests (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    show_reblogs boolean NOT NULL DEFAULT true,
    notify boolean NOT NULL DEFAULT false,
    languages text[],
    uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, target_account_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX follow_requests_target ON follow_requests (tenant_id, target_account_id, id DESC);

CREATE TABLE blocks (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, target_account_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX blocks_target ON blocks (tenant_id, target_account_id);

CREATE TABLE mutes (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    hide_notifications boolean NOT NULL DEFAULT true,
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, target_account_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE account_notes (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    comment text NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, account_id, target_account_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE favourites (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    status_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, status_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX favourites_status ON favourites (tenant_id, status_id);

CREATE TABLE bookmarks (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    status_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, status_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE status_pins (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    status_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, status_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);

-- Muted conversations (POST /api/v1/statuses/:id/mute).
CREATE TABLE conversation_mutes (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    conversation_id bigint NOT NULL,
    PRIMARY KEY (tenant_id, account_id, conversation_id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE mentions (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    status_id bigint NOT NULL,
    account_id bigint NOT NULL,
    silent boolean NOT NULL DEFAULT false,
    UNIQUE (tenant_id, status_id, account_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX mentions_account ON mentions (tenant_id, account_id, status_id DESC);

CREATE TABLE tags (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX tags_name ON tags (tenant_id, lower(name));

CREATE TABLE statuses_tags (
    tenant_id bigint NOT NULL,
    status_id bigint NOT NULL,
    tag_id bigint NOT NULL,
    PRIMARY KEY (tenant_id, tag_id, status_id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, tag_id) REFERENCES tags (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX statuses_tags_status ON statuses_tags (tenant_id, status_id);

CREATE TABLE tag_follows (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    tag_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, tag_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, tag_id) REFERENCES tags (tenant_id, id) ON DELETE CASCADE
);

-- Earlier versions of edited statuses (GET /api/v1/statuses/:id/history).
CREATE TABLE status_edits (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    status_id bigint NOT NULL,
    account_id bigint NOT NULL,
    text text NOT NULL,
    content text NOT NULL,
    spoiler_text text NOT NULL DEFAULT '',
    sensitive boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX status_edits_status ON status_edits (tenant_id, status_id, id);

CREATE TABLE notifications (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    from_account_id bigint NOT NULL,
    type text NOT NULL,
    status_id bigint,
    group_key text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, from_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX notifications_account ON notifications (tenant_id, account_id, id DESC);

-- Direct-message conversations per participant (/api/v1/conversations).
CREATE TABLE account_conversations (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    conversation_id bigint NOT NULL,
    participant_ids bigint[] NOT NULL DEFAULT '{}',
    last_status_id bigint,
    unread boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, account_id, conversation_id),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, last_status_id) REFERENCES statuses (tenant_id, id) ON DELETE SET NULL (last_status_id)
);

CREATE TABLE lists (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    title text NOT NULL,
    replies_policy text NOT NULL DEFAULT 'list' CHECK (replies_policy IN ('followed', 'list', 'none')),
    exclusive boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE list_accounts (
    tenant_id bigint NOT NULL,
    list_id bigint NOT NULL,
    account_id bigint NOT NULL,
    PRIMARY KEY (tenant_id, list_id, account_id),
    FOREIGN KEY (tenant_id, list_id) REFERENCES lists (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX list_accounts_account ON list_accounts (tenant_id, account_id);

CREATE TABLE markers (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    timeline text NOT NULL CHECK (timeline IN ('home', 'notifications')),
    last_read_id bigint NOT NULL,
    version integer NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id, timeline),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE filters (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    title text NOT NULL,
    context text[] NOT NULL,
    action text NOT NULL DEFAULT 'warn' CHECK (action IN ('warn', 'hide', 'blur')),
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE filter_keywords (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    filter_id bigint NOT NULL,
    keyword text NOT NULL,
    whole_word boolean NOT NULL DEFAULT true,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, filter_id) REFERENCES filters (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE filter_statuses (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    filter_id bigint NOT NULL,
    status_id bigint NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, filter_id) REFERENCES filters (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);
