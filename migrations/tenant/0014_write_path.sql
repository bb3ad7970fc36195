-- Write path (issue 11): what a post costs must not grow with the tables.

-- A young placement's first statistics. Autovacuum first visits a new
-- database up to autovacuum_naptime (a minute) after it fills, and until then
-- the planner has none: it takes tenant_id = $1 for one row in two hundred,
-- so the plans a placement's connections make and keep scan a tenant's whole
-- statuses where they meant to look one up (a post cost 20 ms of PostgreSQL
-- CPU instead of 4 after 5,000 statuses in a posting benchmark). The pool
-- calls this whenever a connection re-plans (src/db/pool.c); a table that
-- autovacuum has analyzed once is left to autovacuum.
CREATE FUNCTION eunha_analyze_new_tables() RETURNS void
LANGUAGE plpgsql SET lock_timeout = '50ms' AS $$
DECLARE
    t regclass;
BEGIN
    -- Only tables this role may analyze (it owns them when it migrated).
    FOR t IN SELECT s.relid FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
             WHERE s.last_analyze IS NULL AND s.last_autoanalyze IS NULL
               AND s.n_mod_since_analyze >= 1000 AND pg_has_role(c.relowner, 'USAGE') LOOP
        BEGIN
            EXECUTE format('ANALYZE %s', t);
        EXCEPTION
            WHEN lock_not_available THEN
                NULL; -- being vacuumed or analyzed already
            WHEN OTHERS THEN
                RAISE WARNING 'cannot analyze %: %', t, SQLERRM;
        END;
    END LOOP;
END
$$;

-- Posting a status lists the author's followers who asked to be told of new
-- posts (statuses.insert); follows_target made that read every follower of
-- the author to keep the few with notify set, so a post by a popular account
-- cost in proportion to its followers (386 buffers for 20,000 followers,
-- against 2). Few follows have notify, so this index stays small.
CREATE INDEX follows_notify ON follows (tenant_id, target_account_id) WHERE notify;
