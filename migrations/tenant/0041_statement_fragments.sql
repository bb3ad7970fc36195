-- The fragments statements still pasted in as C macros (issue 27).
--
-- After 0040 moved the shared rules into functions, a few select lists,
-- conditions and constants were still C macros (the Account entity's
-- columns, a domain block's, whether an account is of a blocked domain,
-- the hold of a refused delivery, ...), so the statements that used them
-- could not be read as one string and needed a hand layout. They are
-- functions here, under 0040's conventions: LANGUAGE sql, one SELECT,
-- STABLE, not STRICT, no SECURITY DEFINER and no SET, so PostgreSQL
-- inlines them; the tenant first in any that reads a tenant's rows.

-- The Account entity's columns, as eu_account_json() reads them by name.
-- A named type (not OUT parameters, which make a function return record,
-- and a function returning record is never inlined), so that
--
--     SELECT x.id, (eunha_account(a)).* FROM ... JOIN accounts a ...
--
-- expands to one column per field, each inlined to the expression it
-- stands for: the plan is the one of the columns written out. The names
-- say whose they are, so a row can hold them beside its own columns.
CREATE TYPE eunha_account_entity AS (
    account_id bigint,
    account_username text,
    account_domain text,
    account_display_name text,
    account_note text,
    account_url text,
    account_uri text,
    account_avatar text,
    account_header text,
    account_locked boolean,
    account_bot boolean,
    account_discoverable boolean,
    account_fields text,
    account_created_at text,
    account_followers_count bigint,
    account_following_count bigint,
    account_statuses_count bigint,
    account_last_status_at text,
    account_suspended boolean
);

-- The Account entity's columns of an accounts row a. Give it a row the
-- statement reads at its own level, which the planner then reads the
-- fields straight from; an outer query's row (in a LATERAL subquery) would
-- be built whole for every row to pass it in, so status_render.statuses
-- writes the fields out instead. Mastodon shows an account's creation day
-- at midnight UTC and its last status's day without a time.
CREATE FUNCTION eunha_account(a accounts) RETURNS eunha_account_entity
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT ROW(a.id, a.username, a.domain, a.display_name, a.note, a.url, a.uri, a.avatar_url,
               a.header_url, a.locked, a.bot, a.discoverable, a.fields::text,
               to_char(date_trunc('day', a.created_at AT TIME ZONE 'UTC'),
                       'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               a.followers_count, a.following_count, a.statuses_count,
               to_char(a.last_status_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
               a.suspended_at IS NOT NULL)::eunha_account_entity
$$;
