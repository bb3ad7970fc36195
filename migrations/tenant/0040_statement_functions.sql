-- The rules statements share, as functions (issue 27).
--
-- The visibility rules, the home feed's rule, the filters' stamp and the
-- timestamp format used to be C macros that pasted SQL text into the
-- statements that use them, so no statement could be read as one string.
-- They live here now, and every registered statement is a plain literal
-- that calls them.
--
-- They are written for the planner to see through, since they run on
-- every timeline page: LANGUAGE sql, one SELECT, STABLE, not STRICT, no
-- SECURITY DEFINER and no SET, so PostgreSQL inlines them into the
-- statement. A scalar function whose body holds a subquery is never
-- inlined (it would run as a function call per row), so the rules that
-- probe other tables return a set instead: one row (true) when the rule
-- holds, none when it does not. A set-returning SQL function is inlined
-- as a subquery. A statement uses one of them either in its FROM list,
--
--     FROM statuses s CROSS JOIN LATERAL eunha_not_shunned($1, s.account_id, $5::bigint) ns
--
-- where the planner merges the condition into the statement's WHERE (the
-- plan is the one the pasted text had), or as a truth value,
--
--     EXISTS (SELECT FROM eunha_status_visible($1, s.id, ...))
--
-- a subplan per row. Pass columns, not whole rows: a whole row of an outer
-- query is built for every row to pass it in.
--
-- Each takes the tenant first, and src/db/sqlcheck.c refuses a statement
-- that calls one with anything but $1 there, so the tenant check keeps
-- meaning what it did when the text was pasted in.

-- An ISO 8601 UTC timestamp with milliseconds, as Mastodon writes them.
-- to_char() is STABLE, so this is too (an IMMUTABLE wrapper would not be
-- inlined).
CREATE FUNCTION eunha_ts(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- May viewer p_viewer (0: anonymous) see status p_status by p_author with
-- visibility p_visibility, as far as the viewer is concerned? The author
-- sees everything of their own; anyone the author blocks sees nothing;
-- public and unlisted are for everyone else, private for followers and
-- mentioned accounts, direct for mentioned accounts only. Deletion and a
-- suspended author are eunha_status_visible()'s part.
CREATE FUNCTION eunha_status_audience(p_tenant bigint, p_status bigint, p_author bigint,
                                      p_visibility smallint, p_viewer bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true WHERE p_author = p_viewer
        OR (NOT EXISTS (SELECT 1 FROM blocks vsb WHERE vsb.tenant_id = p_tenant
                        AND vsb.account_id = p_author AND vsb.target_account_id = p_viewer)
            AND (p_visibility <= 1
                 OR (p_visibility = 2
                     AND EXISTS (SELECT 1 FROM follows vsf WHERE vsf.tenant_id = p_tenant
                                 AND vsf.account_id = p_viewer
                                 AND vsf.target_account_id = p_author))
                 OR EXISTS (SELECT 1 FROM mentions vsm WHERE vsm.tenant_id = p_tenant
                            AND vsm.status_id = p_status AND vsm.account_id = p_viewer)))
$$;

-- May viewer p_viewer see the status? Not when it is deleted
-- (p_deleted_at) or its author suspended, else as eunha_status_audience().
-- A reblog's original must be checked on its own. Where the author's row
-- is joined already, test its suspended_at and deleted_at in the statement
-- and call eunha_status_audience(): one index probe a status fewer.
CREATE FUNCTION eunha_status_visible(p_tenant bigint, p_status bigint, p_author bigint,
                                     p_visibility smallint, p_deleted_at timestamptz,
                                     p_viewer bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true FROM eunha_status_audience(p_tenant, p_status, p_author, p_visibility, p_viewer)
    WHERE p_deleted_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM accounts vsa WHERE vsa.tenant_id = p_tenant
                        AND vsa.id = p_author AND vsa.suspended_at IS NOT NULL)
$$;

-- Is the author p_author (of domain p_domain, NULL for a local one, and
-- silenced at p_silenced_at) shown to p_viewer in lists of statuses? Not
-- when the viewer blocks the author's domain (Mastodon's
-- domain_blocking?), nor when the tenant silenced the author and the
-- viewer does not follow them: the domain half of Mastodon's StatusFilter.
-- Only a remote author costs the probes, each a primary-key lookup.
-- Timelines, threads and status search use it; a status asked for by id
-- does not, as in Mastodon.
CREATE FUNCTION eunha_not_domain_hidden(p_tenant bigint, p_author bigint, p_domain text,
                                        p_silenced_at timestamptz, p_viewer bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true WHERE p_domain IS NULL
        OR (NOT EXISTS (SELECT 1 FROM account_domain_blocks xd WHERE xd.tenant_id = p_tenant
                        AND xd.account_id = p_viewer AND xd.domain = p_domain)
            AND (p_silenced_at IS NULL
                 OR EXISTS (SELECT 1 FROM follows xf WHERE xf.tenant_id = p_tenant
                            AND xf.account_id = p_viewer AND xf.target_account_id = p_author)))
$$;

-- Is a status by p_author shown to p_viewer in threads, timelines and
-- status search? Not when the viewer blocks the author or mutes them (a
-- mute not yet expired), nor when the author blocks the viewer: the
-- account half of Mastodon's StatusFilter, which never hides the viewer's
-- own statuses. It goes in the statements that choose a page, so a page
-- is not cut short afterwards.
CREATE FUNCTION eunha_not_shunned(p_tenant bigint, p_author bigint, p_viewer bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true WHERE p_author = p_viewer
        OR (NOT EXISTS (SELECT 1 FROM blocks yb WHERE yb.tenant_id = p_tenant
                        AND ((yb.account_id = p_viewer AND yb.target_account_id = p_author)
                             OR (yb.account_id = p_author AND yb.target_account_id = p_viewer)))
            AND NOT EXISTS (SELECT 1 FROM mutes ym WHERE ym.tenant_id = p_tenant
                            AND ym.account_id = p_viewer AND ym.target_account_id = p_author
                            AND (ym.expires_at IS NULL OR ym.expires_at > now())))
$$;

-- Does the status belong in account p_viewer's home feed? Shared by
-- fan-out, rebuild and streaming so they agree; the plain insert's
-- statement (statuses.insert_plain) has its own case of it for a new
-- status, and test_timelines checks the two agree. Its author's own
-- statuses always; else those of accounts the viewer follows (a reblog
-- only if the follow shows reblogs) that the viewer may see, direct ones
-- only where the viewer is mentioned, replies only to the author, the
-- viewer or an account the viewer follows, and nothing whose author or
-- reblogged author the viewer mutes or blocks, or whose reblogged author
-- blocks the viewer.
CREATE FUNCTION eunha_home_feed_takes(p_tenant bigint, p_status bigint, p_author bigint,
                                      p_reblog_of bigint, p_visibility smallint,
                                      p_deleted_at timestamptz, p_reply_to_account bigint,
                                      p_viewer bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true WHERE p_deleted_at IS NULL AND (p_author = p_viewer OR (
        EXISTS (SELECT 1 FROM follows hf WHERE hf.tenant_id = p_tenant
                AND hf.account_id = p_viewer AND hf.target_account_id = p_author
                AND (p_reblog_of IS NULL OR hf.show_reblogs))
        AND EXISTS (SELECT FROM eunha_status_visible(p_tenant, p_status, p_author, p_visibility,
                                                     p_deleted_at, p_viewer))
        AND (p_visibility < 3
             OR EXISTS (SELECT 1 FROM mentions hm WHERE hm.tenant_id = p_tenant
                        AND hm.status_id = p_status AND hm.account_id = p_viewer))
        AND (p_reply_to_account IS NULL OR p_reply_to_account = p_author
             OR p_reply_to_account = p_viewer
             OR EXISTS (SELECT 1 FROM follows hr WHERE hr.tenant_id = p_tenant
                        AND hr.account_id = p_viewer AND hr.target_account_id = p_reply_to_account))
        AND NOT EXISTS (SELECT 1 FROM mutes hu WHERE hu.tenant_id = p_tenant
                        AND hu.account_id = p_viewer
                        AND hu.target_account_id IN (p_author,
                            (SELECT ro.account_id FROM statuses ro WHERE ro.tenant_id = p_tenant
                             AND ro.id = p_reblog_of))
                        AND (hu.expires_at IS NULL OR hu.expires_at > now()))
        AND NOT EXISTS (SELECT 1 FROM blocks hb WHERE hb.tenant_id = p_tenant
                        AND ((hb.account_id = p_viewer AND hb.target_account_id IN (p_author,
                                (SELECT ro.account_id FROM statuses ro
                                 WHERE ro.tenant_id = p_tenant AND ro.id = p_reblog_of)))
                             OR (hb.target_account_id = p_viewer AND hb.account_id =
                                (SELECT ro.account_id FROM statuses ro
                                 WHERE ro.tenant_id = p_tenant AND ro.id = p_reblog_of))))))
$$;

-- The stamp of account p_account's active filters, for
-- eu_filters_known_stamp(): one row, NULL when there are none, else an md5
-- (in hex, EU_FILTERS_STAMP_LEN characters) of their ids and row versions.
-- The row version of a filter changes with its keywords and filtered
-- statuses too (migration 0016), and an expiry drops the filter from the
-- list, so any change gives a new stamp. A set, so that it is inlined:
-- call it as (SELECT stamp FROM eunha_filters_stamp($1, ...) stamp), which
-- PostgreSQL runs once per statement.
CREATE FUNCTION eunha_filters_stamp(p_tenant bigint, p_account bigint)
RETURNS SETOF text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT md5(string_agg(fx.id::text || ':' || fx.xmin::text, ',' ORDER BY fx.id))
    FROM filters fx WHERE fx.tenant_id = p_tenant AND fx.account_id = p_account
        AND (fx.expires_at IS NULL OR fx.expires_at > now())
$$;

-- The pieces of entities that several statements build, each from the row
-- it describes; plain expressions, so they are inlined like the macros
-- they replace. Whole rows are fine here: the row is the one the
-- statement scans at the same level, and the planner reads the fields
-- straight from it.

-- One media_attachments row as eu_media_attachment_json() reads it.
CREATE FUNCTION eunha_media_json(m media_attachments) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object('id', m.id::text, 'type', m.type, 'state', m.state,
                             'file', m.file_key, 'preview', m.preview_key,
                             'remote', m.remote_url, 'description', m.description,
                             'blurhash', m.blurhash, 'meta', m.meta, 'fx', m.focus_x,
                             'fy', m.focus_y, 'mime', m.file_content_type)
$$;

-- An element of the Status entity's mentions for the account ma names, with
-- base the tenant's base URL.
CREATE FUNCTION eunha_mention_json(ma accounts, base text) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object('id', ma.id::text, 'username', ma.username,
                             'url', coalesce(ma.url, base || '/@' || ma.username),
                             'acct', ma.username || coalesce('@' || ma.domain, ''))
$$;

-- An element of the Status entity's tags for the tag called name.
CREATE FUNCTION eunha_tag_json(name text, base text) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object('name', lower(name), 'url', base || '/tags/' || lower(name))
$$;

-- The group key a notification (stored key p_key, type p_type, id p_id)
-- has in a grouped list: its stored key when its type is one of the
-- grouped types p_grouped (a JSON array; NULL: Mastodon's default
-- favourite, reblog and follow), else ungrouped-<id>. Without a subquery
-- (jsonb's ? asks whether the array holds the string), so it is inlined.
CREATE FUNCTION eunha_group_key(p_key text, p_type text, p_id bigint, p_grouped json)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_key IS NOT NULL
                     AND coalesce(p_grouped::jsonb, '["favourite", "reblog", "follow"]') ? p_type
                THEN p_key ELSE 'ungrouped-' || p_id END
$$;

-- ActivityPub's timestamps: ISO 8601 UTC without fractions, as Mastodon's
-- documents write them ("2024-05-01T12:00:00Z").
CREATE FUNCTION eunha_ap_ts(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
$$;

-- The actor URI of an account (its domain, username and stored uri), with
-- base the tenant's base URL: a local one's is derived, so it follows the
-- tenant's domain; a remote one's is what its server said.
CREATE FUNCTION eunha_actor_uri(p_domain text, p_username text, p_uri text, base text)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_domain IS NULL THEN base || '/users/' || p_username ELSE p_uri END
$$;

-- The object URI of a status (local or not, its id and stored uri) written
-- by the account called p_username, likewise.
CREATE FUNCTION eunha_status_uri(p_local boolean, p_id bigint, p_uri text, p_username text,
                                 base text)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_local THEN base || '/users/' || p_username || '/statuses/' || p_id
                ELSE p_uri END
$$;
