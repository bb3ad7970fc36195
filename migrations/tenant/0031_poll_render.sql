-- Polls rendered only where there is one (issue 11).
--
-- The status render statement used to carry the Poll entity as a
-- subquery per row. Even on a page without a single poll that subquery,
-- with its five nested ones, was probed and re-initialised for every
-- status: about a third of the statement's CPU on a page of 20 cached
-- statuses. A status now says whether it has a poll, and the entity is
-- built by a function the statement calls only for those that do.

ALTER TABLE statuses ADD COLUMN has_poll boolean NOT NULL DEFAULT false;

UPDATE statuses s SET has_poll = true FROM polls p
WHERE p.tenant_id = s.tenant_id AND p.status_id = s.id;

-- Kept by the polls table itself, so every path that adds or removes a
-- poll (posting, scheduled statuses, edits, federation) keeps the flag
-- without knowing about it. Changing the flag gives the status a new row
-- version, which is what the rendered-entity cache watches. A row trigger,
-- not a statement one: posting inserts into polls in every post's
-- statement, and a statement trigger would run for the posts without one.
CREATE FUNCTION eunha_poll_flag() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE statuses SET has_poll = true
        WHERE tenant_id = NEW.tenant_id AND id = NEW.status_id AND NOT has_poll;
    ELSE
        -- An edit may replace a poll in one statement: the new row keeps it.
        UPDATE statuses SET has_poll = false
        WHERE tenant_id = OLD.tenant_id AND id = OLD.status_id AND has_poll
        AND NOT EXISTS (SELECT 1 FROM polls p WHERE p.tenant_id = OLD.tenant_id
                        AND p.status_id = OLD.status_id);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER polls_flag AFTER INSERT OR DELETE ON polls
    FOR EACH ROW EXECUTE FUNCTION eunha_poll_flag();

-- The Poll entity (JSON text) of status p_status's poll as p_viewer (0:
-- anonymous) sees it, or NULL when it has none. Mastodon's rules: option
-- counts are null while hide_totals hides them before expiry, voters_count
-- is null for a single-choice poll, and the author counts as having voted.
-- "voted" and "own_votes" are meant for signed-in viewers; callers drop
-- them for anonymous ones. PL/pgSQL, not SQL, so the planner never inlines
-- it back into the statement that calls it and its plan is kept per
-- connection.
CREATE FUNCTION eunha_poll_json(p_tenant bigint, p_status bigint, p_viewer bigint)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
    entity text;
BEGIN
    SELECT json_build_object(
        'id', p.id::text,
        -- A remote poll without an end is stored as 'infinity' (0030).
        'expires_at', CASE WHEN p.expires_at < 'infinity' THEN
            to_char(p.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END,
        'expired', p.expires_at <= now(),
        'multiple', p.multiple,
        -- A remote poll's counts are those its origin reported (0030); a
        -- local one's are counted from poll_votes.
        'votes_count', CASE WHEN p.cached_tallies IS NOT NULL
                            THEN (SELECT coalesce(sum(x), 0) FROM unnest(p.cached_tallies) x)
                            ELSE (SELECT coalesce(sum(cardinality(pv.choices)), 0)
                                  FROM poll_votes pv
                                  WHERE pv.tenant_id = p_tenant AND pv.poll_id = p.id) END,
        'voters_count', CASE WHEN p.multiple THEN coalesce(p.cached_voters,
                            (SELECT count(*) FROM poll_votes pv
                             WHERE pv.tenant_id = p_tenant AND pv.poll_id = p.id)) END,
        'options', (SELECT json_agg(json_build_object(
                        'title', po.title,
                        'votes_count', CASE WHEN p.hide_totals AND p.expires_at > now() THEN NULL
                            ELSE coalesce(p.cached_tallies[po.i],
                                (SELECT count(*) FROM poll_votes pv
                                 WHERE pv.tenant_id = p_tenant AND pv.poll_id = p.id
                                 AND (po.i - 1)::int = ANY (pv.choices))) END) ORDER BY po.i)
                    FROM unnest(p.options) WITH ORDINALITY po(title, i)),
        'emojis', '[]'::json,
        'voted', p.account_id = p_viewer OR EXISTS (SELECT 1 FROM poll_votes pv
                 WHERE pv.tenant_id = p_tenant AND pv.poll_id = p.id
                 AND pv.account_id = p_viewer),
        'own_votes', coalesce((SELECT to_json(pv.choices) FROM poll_votes pv
                               WHERE pv.tenant_id = p_tenant AND pv.poll_id = p.id
                               AND pv.account_id = p_viewer), '[]'::json))::text
    INTO entity
    FROM polls p WHERE p.tenant_id = p_tenant AND p.status_id = p_status;
    RETURN entity;
END
$$;
