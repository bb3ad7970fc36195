-- A move's write pause without a gap (issue 30, src/admin/lifecycle_live.c).
-- The trigger (0064) refused the tenant's writes once the pause was
-- committed, but a write that had passed its check just before, in another
-- process's transaction, could commit after the move's last catch-up and
-- stay behind on the source. Now every noted write holds a shared advisory
-- lock on the tenant until its transaction ends, taken before the pause is
-- checked, and the mover, once the pause is committed, takes that lock
-- exclusively on its own connection and keeps it until the move ends: the
-- writes in flight finish (and are noted) before the last catch-up, and
-- any later one is refused.

CREATE OR REPLACE FUNCTION eunha_move.note() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r jsonb;
    k jsonb := '{}';
    old_k jsonb := '{}';
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := to_jsonb(OLD);
    ELSE
        r := to_jsonb(NEW);
    END IF;
    -- Held to the end of the writer's transaction: the mover's exclusive
    -- hold (eunha_move.hold_writers) waits for it. A writer that finds the
    -- hold taken or asked for is refused at once rather than queued behind
    -- it: it may hold a row a writer in flight needs, and waiting would be
    -- a deadlock. (A transaction that holds the lock already gets it again.)
    IF NOT pg_try_advisory_xact_lock_shared(hashtextextended('eunha_move_w',
                                                             (r ->> 'tenant_id')::bigint)) THEN
        RAISE query_canceled USING MESSAGE = 'the tenant is moving to another placement';
    END IF;
    IF EXISTS (SELECT 1 FROM eunha_move.paused p WHERE p.tenant = (r ->> 'tenant_id')::bigint
               AND p.since > now() - interval '1 minute') THEN
        RAISE query_canceled USING MESSAGE = 'the tenant is moving to another placement';
    END IF;
    FOR i IN 0 .. TG_NARGS - 1 LOOP
        k := k || jsonb_build_object(TG_ARGV[i], r -> TG_ARGV[i]);
    END LOOP;
    INSERT INTO eunha_move.changes (tenant, tbl, pk)
        VALUES ((r ->> 'tenant_id')::bigint, TG_TABLE_NAME, k);
    IF TG_OP = 'UPDATE' THEN
        r := to_jsonb(OLD);
        FOR i IN 0 .. TG_NARGS - 1 LOOP
            old_k := old_k || jsonb_build_object(TG_ARGV[i], r -> TG_ARGV[i]);
        END LOOP;
        IF old_k <> k THEN
            INSERT INTO eunha_move.changes (tenant, tbl, pk)
                VALUES ((r ->> 'tenant_id')::bigint, TG_TABLE_NAME, old_k);
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- Waits for the tenant's writes in flight on the source and holds back the
-- next ones until the calling session ends (the move's own connection).
CREATE FUNCTION eunha_move.hold_writers(tid bigint) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_advisory_lock(hashtextextended('eunha_move_w', tid))
$$;
