-- The Account entity's roles (migration 0045's accounts.roles, a local
-- user's highlighted role) join the fields eunha_account() gives, under the
-- name the C side reads (account_roles), so every statement that selects
-- (eunha_account(a)).* renders the badge. The three statements that write
-- the fields out (status_render.statuses, statuses.insert and
-- statuses.insert_plain) name it the same way.
ALTER TYPE eunha_account_entity ADD ATTRIBUTE account_roles text;

CREATE OR REPLACE FUNCTION eunha_account(a accounts) RETURNS eunha_account_entity
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT ROW(a.id, a.username, a.domain, a.display_name, a.note, a.url, a.uri, a.avatar_url,
               a.header_url, a.locked, a.bot, a.discoverable, a.fields::text,
               to_char(date_trunc('day', a.created_at AT TIME ZONE 'UTC'),
                       'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               a.followers_count, a.following_count, a.statuses_count,
               to_char(a.last_status_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
               a.suspended_at IS NOT NULL, a.roles::text)::eunha_account_entity
$$;
