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
CREATE INDEX statuses_public ON statuses (id DESC) WHERE deleted_at IS NULL AND visibility = 0 AND reblog_of_id IS NULL;
CREATE INDEX statuses_reblog_of ON statuses (reblog_of_id) WHERE reblog_of_id IS NOT NULL;
CREATE INDEX statuses_in_reply_to ON statuses (in_reply_to_id) WHERE in_reply_to_id IS NOT NULL;
CREATE INDEX statuses_conversation ON statuses (conversation_id);
CREATE SEQUENCE conversations_id_seq;

CREATE TABLE oauth_applications (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    name text NOT NULL,
    website text,
    redirect_uri text NOT NULL,          -- one URI per line
    scopes text NOT NULL DEFAULT 'read',
    client_id text NOT NULL UNIQUE,
    client_secret text NOT NULL,
    owner_account_id bigint REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Authorization codes. Only a hash of the code is stored.
CREATE TABLE oauth_access_grants (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    application_id bigint NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash text NOT NULL UNIQUE,
    redirect_uri text NOT NULL,
    scopes text NOT NULL,
    code_challenge text,
    code_challenge_method text,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Access tokens. Only a hash of the token is stored; user_id is NULL for
-- client_credentials tokens (app-only).
CREATE TABLE oauth_access_tokens (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    application_id bigint REFERENCES oauth_applications (id) ON DELETE CASCADE,
    user_id bigint REFERENCES users (id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    scopes text NOT NULL,
    revoked_at timestamptz,
    last_used_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Browser sessions of the OAuth sign-in pages.
CREATE TABLE web_sessions (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_hash text NOT NULL UNIQUE,
    csrf_token text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE follows (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    target_account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    show_reblogs boolean NOT NULL DEFAULT true,
    notify boolean NOT NULL DEFAULT false,
    languages text[],
    uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, target_account_id)
);
CREATE INDEX follows_target ON follows (target_account_id, id DESC);
CREATE INDEX follows_account ON follows (account_id, id DESC);

CREATE TABLE follow_requests (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    target_account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    show_reblogs boolean NOT NULL DEFAULT true,
    notify boolean NOT NULL DEFAULT false,
    languages text[],
    uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, target_account_id)
);
CREATE INDEX follow_requests_target ON follow_requests (target_account_id, id DESC);

CREATE TABLE blocks (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    target_account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, target_account_id)
);
CREATE INDEX blocks_target ON blocks (target_account_id);

CREATE TABLE mutes (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    target_account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    hide_notifications boolean NOT NULL DEFAULT true,
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, target_account_id)
);

CREATE TABLE account_notes (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    target_account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    comment text NOT NULL DEFAULT '',
    PRIMARY KEY (account_id, target_account_id)
);

CREATE TABLE favourites (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, status_id)
);
CREATE INDEX favourites_status ON favourites (status_id);

CREATE TABLE bookmarks (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, status_id)
);

CREATE TABLE status_pins (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, status_id)
);

-- Muted conversations (POST /api/v1/statuses/:id/mute).
CREATE TABLE conversation_mutes (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    conversation_id bigint NOT NULL,
    PRIMARY KEY (account_id, conversation_id)
);

CREATE TABLE mentions (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    silent boolean NOT NULL DEFAULT false,
    UNIQUE (status_id, account_id)
);
CREATE INDEX mentions_account ON mentions (account_id, status_id DESC);

CREATE TABLE tags (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tags_name ON tags (lower(name));

CREATE TABLE statuses_tags (
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE,
    tag_id bigint NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (tag_id, status_id)
);
CREATE INDEX statuses_tags_status ON statuses_tags (status_id);

CREATE TABLE tag_follows (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    tag_id bigint NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, tag_id)
);

-- Earlier versions of edited statuses (GET /api/v1/statuses/:id/history).
CREATE TABLE status_edits (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    text text NOT NULL,
    content text NOT NULL,
    spoiler_text text NOT NULL DEFAULT '',
    sensitive boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX status_edits_status ON status_edits (status_id, id);

CREATE TABLE notifications (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    from_account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type text NOT NULL,
    status_id bigint REFERENCES statuses (id) ON DELETE CASCADE,
    group_key text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_account ON notifications (account_id, id DESC);

-- Direct-message conversations per participant (/api/v1/conversations).
CREATE TABLE account_conversations (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    conversation_id bigint NOT NULL,
    participant_ids bigint[] NOT NULL DEFAULT '{}',
    last_status_id bigint REFERENCES statuses (id) ON DELETE SET NULL,
    unread boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, conversation_id)
);

CREATE TABLE lists (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    title text NOT NULL,
    replies_policy text NOT NULL DEFAULT 'list' CHECK (replies_policy IN ('followed', 'list', 'none')),
    exclusive boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE list_accounts (
    list_id bigint NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (list_id, account_id)
);
CREATE INDEX list_accounts_account ON list_accounts (account_id);

CREATE TABLE markers (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    timeline text NOT NULL CHECK (timeline IN ('home', 'notifications')),
    last_read_id bigint NOT NULL,
    version integer NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, timeline)
);

CREATE TABLE filters (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    title text NOT NULL,
    context text[] NOT NULL,
    action text NOT NULL DEFAULT 'warn' CHECK (action IN ('warn', 'hide', 'blur')),
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE filter_keywords (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    filter_id bigint NOT NULL REFERENCES filters (id) ON DELETE CASCADE,
    keyword text NOT NULL,
    whole_word boolean NOT NULL DEFAULT true
);

CREATE TABLE filter_statuses (
    id bigint PRIMARY KEY DEFAULT eunha_next_id(),
    filter_id bigint NOT NULL REFERENCES filters (id) ON DELETE CASCADE,
    status_id bigint NOT NULL REFERENCES statuses (id) ON DELETE CASCADE
);
