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

-- How long a host's refusal holds back a tenant's deliveries there
-- (EU_AP_REFUSAL_HOLD_S in include/eunha/apdeliver.h, which says why; the
-- two must agree). A constant, inlined as one.
CREATE FUNCTION eunha_refusal_hold() RETURNS interval
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT interval '21600 seconds'
$$;

-- t as the literal text of a LIKE pattern: its backslashes, % and _
-- escaped (the default escape character, the backslash).
CREATE FUNCTION eunha_like_text(t text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT replace(replace(replace(t, '\', '\\'), '%', '\%'), '_', '\_')
$$;

-- Is p_domain (an account's, NULL for a local one) p_block's domain or
-- below it? For the accounts a tenant's domain block marks.
CREATE FUNCTION eunha_in_domain(p_domain text, p_block text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_domain IS NOT NULL
        AND (p_domain = p_block OR right(p_domain, length(p_block) + 1) = '.' || p_block)
$$;

-- Mastodon's Admin::DomainBlock entity's columns of a domain_blocks row b,
-- as the admin API reads them by name; a named type for the reason
-- eunha_account_entity is one. The digest is the SHA-256 of the domain.
CREATE TYPE eunha_domain_block_entity AS (
    id text,
    domain text,
    digest text,
    created_at text,
    severity text,
    reject_media boolean,
    reject_reports boolean,
    private_comment text,
    public_comment text,
    obfuscate boolean
);

CREATE FUNCTION eunha_domain_block(b domain_blocks) RETURNS eunha_domain_block_entity
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT ROW(b.id::text, b.domain, encode(sha256(convert_to(b.domain, 'UTF8')), 'hex'),
               eunha_ts(b.created_at), b.severity, b.reject_media, b.reject_reports,
               b.private_comment, b.public_comment, b.obfuscate)::eunha_domain_block_entity
$$;

-- Is an announcement (published p_published, ending at p_ends_at) shown to
-- clients? Published and not ended.
CREATE FUNCTION eunha_announcement_shown(p_published boolean, p_ends_at timestamptz)
RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_published AND (p_ends_at IS NULL OR p_ends_at > now())
$$;

-- Does a local account follow p_account? One row per such follow (call it
-- as EXISTS (SELECT FROM eunha_local_follower($1, ...))), so that it is
-- inlined into the EXISTS it was pasted as: inbox processing asks it to
-- tell what concerns the tenant.
CREATE FUNCTION eunha_local_follower(p_tenant bigint, p_account bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true FROM follows lf JOIN accounts lfa ON lfa.tenant_id = p_tenant
        AND lfa.id = lf.account_id AND lfa.domain IS NULL
    WHERE lf.tenant_id = p_tenant AND lf.target_account_id = p_account
$$;

-- The status an interaction of p_viewer with status p_status acts on: a
-- reblog's original, or the status itself; no row unless the viewer may
-- see both. Its id, author, visibility and conversation (the status's own
-- id when it starts one). A statement names it as a CTE,
--
--     WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)), ...
--
-- where it is inlined as the text it replaces.
CREATE FUNCTION eunha_action_target(p_tenant bigint, p_status bigint, p_viewer bigint)
RETURNS TABLE (id bigint, account_id bigint, visibility smallint, conv bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT o.id, o.account_id, o.visibility, coalesce(o.conversation_id, o.id)
    FROM statuses s JOIN statuses o ON o.tenant_id = p_tenant
        AND o.id = coalesce(s.reblog_of_id, s.id)
    WHERE s.tenant_id = p_tenant AND s.id = p_status
        AND EXISTS (SELECT FROM eunha_status_visible(p_tenant, s.id, s.account_id, s.visibility,
                                                     s.deleted_at, p_viewer))
        AND EXISTS (SELECT FROM eunha_status_visible(p_tenant, o.id, o.account_id, o.visibility,
                                                     o.deleted_at, p_viewer))
$$;
