-- Roles and moderation by a tenant's own staff (issue 28), as Mastodon has
-- them: a user has a role (UserRole), a role has Mastodon's permission bits,
-- and every moderator's action leaves an audit log row, and an action on an
-- account a strike (AccountWarning).
--
-- Mastodon's built-in roles keep Mastodon's ids so clients that know them
-- recognise them: -99 the everyone role (a user without a role), 1
-- Moderator, 2 Admin, 3 Owner. They need no row: eunha_role() knows their
-- defaults, and a row with the same id in user_roles overrides them, so a
-- new tenant starts with the built-ins and nothing to seed. Custom roles are
-- rows with snowflake ids.
CREATE TABLE user_roles (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    name text NOT NULL DEFAULT '',
    color text NOT NULL DEFAULT '',
    position integer NOT NULL DEFAULT 0,
    permissions bigint NOT NULL DEFAULT 0,
    highlighted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

-- No foreign key: the built-in roles have no row. NULL is the everyone
-- role, as Mastodon's users.role_id.
ALTER TABLE users ADD COLUMN role_id bigint,
    ADD COLUMN disabled boolean NOT NULL DEFAULT false;
UPDATE users SET role_id = CASE role WHEN 'owner' THEN 3 WHEN 'admin' THEN 2 END
    WHERE role <> 'user';
ALTER TABLE users DROP COLUMN role;
CREATE INDEX users_role ON users (tenant_id, role_id) WHERE role_id IS NOT NULL;

-- Mastodon's sensitized accounts (their media is marked sensitive).
ALTER TABLE accounts ADD COLUMN sensitized_at timestamptz;

-- Who took a report on and who acted on it (Admin::Report).
ALTER TABLE reports ADD COLUMN assigned_account_id bigint,
    ADD COLUMN action_taken_by_account_id bigint;
CREATE INDEX reports_open ON reports (tenant_id, id) WHERE action_taken_at IS NULL;

-- Mastodon's Admin::ActionLog: who did what to which record. The target's
-- human identifier is kept, so the row still reads after the target goes.
CREATE TABLE admin_action_logs (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    action text NOT NULL,
    target_type text NOT NULL,
    target_id bigint NOT NULL,
    human_identifier text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX admin_action_logs_target ON admin_action_logs (tenant_id, target_type, target_id);

-- Mastodon's AccountWarning (a strike): what was done to the account, why
-- (the moderator's text), and the report it answered.
CREATE TABLE account_warnings (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint,
    target_account_id bigint NOT NULL,
    action text NOT NULL
        CHECK (action IN ('none', 'disable', 'sensitive', 'silence', 'suspend')),
    text text NOT NULL DEFAULT '',
    report_id bigint,
    status_ids bigint[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id)
        ON DELETE CASCADE
);
CREATE INDEX account_warnings_target ON account_warnings (tenant_id, target_account_id);

-- The role p_role (NULL: the everyone role) of tenant p_tenant as
-- Mastodon's Role entity shows it: its row, else the built-in's defaults,
-- else (a role deleted under a user) the everyone role. permissions are
-- Mastodon's computed_permissions: the everyone role's added, and every
-- bit for an administrator. One row, always.
CREATE FUNCTION eunha_role(p_tenant bigint, p_role bigint)
RETURNS TABLE (id bigint, name text, color text, "position" integer, permissions bigint,
               highlighted boolean)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH builtin (id, name, color, "position", permissions, highlighted) AS (VALUES
        (-99::bigint, '', '', -1, 65536::bigint, false),
        (1, 'Moderator', '', 10, 1308, true),
        (2, 'Admin', '', 100, 983036, true),
        (3, 'Owner', '', 1000, 1, true)),
    found AS (
        SELECT r.id, r.name, r.color, r.position, r.permissions, r.highlighted, 0 AS pri
            FROM user_roles r WHERE r.tenant_id = p_tenant AND r.id = coalesce(p_role, -99)
        UNION ALL
        SELECT b.*, 1 FROM builtin b WHERE b.id = coalesce(p_role, -99)
        UNION ALL
        SELECT b.*, 2 FROM builtin b WHERE b.id = -99),
    everyone AS (
        SELECT coalesce((SELECT r.permissions FROM user_roles r
                         WHERE r.tenant_id = p_tenant AND r.id = -99), 65536) AS permissions)
    SELECT f.id, f.name, f.color, f.position,
           CASE WHEN (f.permissions | e.permissions) & 1 <> 0 THEN 1048575
                ELSE f.permissions | e.permissions END,
           f.highlighted
    FROM (SELECT * FROM found ORDER BY pri LIMIT 1) f CROSS JOIN everyone e
$$;

-- The same as the JSON of Mastodon's Role entity (CredentialAccount.role,
-- Admin::Account.role).
CREATE FUNCTION eunha_role_json(p_tenant bigint, p_role bigint) RETURNS SETOF json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object('id', r.id::text, 'name', r.name, 'permissions',
                             r.permissions::text, 'color', r.color, 'highlighted', r.highlighted)
    FROM eunha_role(p_tenant, p_role) r
$$;
