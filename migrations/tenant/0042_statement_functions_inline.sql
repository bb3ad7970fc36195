-- The visibility and home-feed rules again, in the form the planner
-- flattens completely (issue 27).
--
-- Migration 0040's rules return a row only when they hold, which left
-- their cost in the plans: used as EXISTS (SELECT FROM rule(...)), each
-- became a subplan of its own per row, re-running its probes as init
-- plans under a Result node, where the text they replaced was a plain
-- condition; joined as CROSS JOIN LATERAL rule(...), the condition did
-- merge into the WHERE, but the empty FROM of the rule's SELECT stayed
-- behind as a Result relation in the join, and the planner chose another
-- join for it (timelines.public: a nested loop over two Results and a
-- Memoize of accounts, 22 buffers a page instead of 5, and a fifth more
-- PostgreSQL time).
--
-- These return exactly one row whatever the answer, with the rule's truth
-- value as its column ok. A statement joins one as
--
--     FROM statuses s CROSS JOIN LATERAL eunha_is_not_shunned($1, s.account_id, $5::bigint) ns
--     WHERE ... AND ns.ok
--
-- or reads ok in its select list. PostgreSQL inlines the function as a
-- subquery, pulls it up, finds no FROM and no WHERE left in it and drops
-- it, and puts the expression where ok was: the plan is the one the
-- pasted text had. ok is the rule's expression as it stands, so like the
-- text it is NULL where that is (a row the statement outer-joined and did
-- not find); a filter drops such a row either way.
--
-- Rules built on another join it in their own FROM rather than ask it in
-- a subquery, so they flatten too. Like 0040's: LANGUAGE sql, one SELECT,
-- STABLE, not STRICT, SETOF (only a set-returning function in FROM is
-- inlined as a subquery), the tenant first. 0040's versions stay for a
-- process of the release before, which calls them while a placement is
-- migrated under it.

-- eunha_status_audience()'s rule: may viewer p_viewer see status p_status
-- by p_author with visibility p_visibility, as far as the viewer is
-- concerned?
CREATE FUNCTION eunha_is_in_audience(p_tenant bigint, p_status bigint, p_author bigint,
                                     p_visibility smallint, p_viewer bigint)
RETURNS TABLE (ok boolean) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_author = p_viewer
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

-- eunha_status_visible()'s rule: not deleted, the author not suspended,
-- and the viewer in the audience. Where the author's row is joined
-- already, test its suspended_at in the statement and join
-- eunha_is_in_audience(): one index probe a status fewer.
CREATE FUNCTION eunha_is_visible(p_tenant bigint, p_status bigint, p_author bigint,
                                 p_visibility smallint, p_deleted_at timestamptz,
                                 p_viewer bigint)
RETURNS TABLE (ok boolean) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_deleted_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM accounts vsa WHERE vsa.tenant_id = p_tenant
                        AND vsa.id = p_author AND vsa.suspended_at IS NOT NULL)
        AND au.ok
    FROM eunha_is_in_audience(p_tenant, p_status, p_author, p_visibility, p_viewer) au
$$;

-- eunha_not_domain_hidden()'s rule: is the author p_author (of domain
-- p_domain, NULL for a local one, silenced at p_silenced_at) shown to
-- p_viewer in lists of statuses?
CREATE FUNCTION eunha_is_not_domain_hidden(p_tenant bigint, p_author bigint, p_domain text,
                                           p_silenced_at timestamptz, p_viewer bigint)
RETURNS TABLE (ok boolean) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_domain IS NULL
        OR (NOT EXISTS (SELECT 1 FROM account_domain_blocks xd WHERE xd.tenant_id = p_tenant
                        AND xd.account_id = p_viewer AND xd.domain = p_domain)
            AND (p_silenced_at IS NULL
                 OR EXISTS (SELECT 1 FROM follows xf WHERE xf.tenant_id = p_tenant
                            AND xf.account_id = p_viewer AND xf.target_account_id = p_author)))
$$;

-- eunha_not_shunned()'s rule: is a status by p_author shown to p_viewer in
-- threads, timelines and status search (no block either way, no mute)?
CREATE FUNCTION eunha_is_not_shunned(p_tenant bigint, p_author bigint, p_viewer bigint)
RETURNS TABLE (ok boolean) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_author = p_viewer
        OR (NOT EXISTS (SELECT 1 FROM blocks yb WHERE yb.tenant_id = p_tenant
                        AND ((yb.account_id = p_viewer AND yb.target_account_id = p_author)
                             OR (yb.account_id = p_author AND yb.target_account_id = p_viewer)))
            AND NOT EXISTS (SELECT 1 FROM mutes ym WHERE ym.tenant_id = p_tenant
                            AND ym.account_id = p_viewer AND ym.target_account_id = p_author
                            AND (ym.expires_at IS NULL OR ym.expires_at > now())))
$$;

-- eunha_home_feed_takes()'s rule: does the status belong in account
-- p_viewer's home feed? Shared by fan-out, rebuild and streaming so they
-- agree; statuses.insert_plain has its own case of it for a new status,
-- and test_timelines checks the two agree.
CREATE FUNCTION eunha_is_home_feed_status(p_tenant bigint, p_status bigint, p_author bigint,
                                          p_reblog_of bigint, p_visibility smallint,
                                          p_deleted_at timestamptz, p_reply_to_account bigint,
                                          p_viewer bigint)
RETURNS TABLE (ok boolean) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_deleted_at IS NULL AND (p_author = p_viewer OR (
        EXISTS (SELECT 1 FROM follows hf WHERE hf.tenant_id = p_tenant
                AND hf.account_id = p_viewer AND hf.target_account_id = p_author
                AND (p_reblog_of IS NULL OR hf.show_reblogs))
        AND vis.ok
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
    FROM eunha_is_visible(p_tenant, p_status, p_author, p_visibility, p_deleted_at, p_viewer) vis
$$;
