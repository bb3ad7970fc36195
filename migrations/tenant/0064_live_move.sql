-- A tenant moves between placements while it keeps serving (issue 30,
-- src/admin/lifecycle_move.c): its rows are copied in bulk from a
-- snapshot, then what changed meanwhile is copied again from the list
-- kept here, and only the last changes are copied under a short write
-- pause. For the length of a move, row triggers on the source's tenant
-- tables, filtered on the moving tenant's id so the placement's other
-- tenants pay nothing but the WHEN test, note each changed row's primary
-- key; the move takes the notes and copies those rows as they are then.
--
-- In a schema of its own: these are no tenant's rows (the public schema
-- holds only tenant tables, each led by tenant_id), and placements'
-- snapshots, restores and removals read the public schema only. Every
-- placement has it, so any can be a move's source or target.
CREATE SCHEMA eunha_move;

-- The rows of tenant `tenant` changed since its move began, by table and
-- primary key (a JSON object of the key's columns). A row changed twice
-- is noted twice; a note is taken (deleted) when its row is copied.
CREATE TABLE eunha_move.changes (
    id bigserial PRIMARY KEY,
    tenant bigint NOT NULL,
    tbl text NOT NULL,
    pk jsonb NOT NULL
);
CREATE INDEX changes_tenant ON eunha_move.changes (tenant, id);

-- Tenants in their move's write pause. The process running the move holds
-- its own requests and workers; a write of the tenant from any other
-- process (which keeps serving it until it hears of the move) is refused
-- by the trigger with query_canceled, which eunha answers as a busy
-- database (503, or a job's retry), rather than taken and left behind. A
-- pause older than a minute is over whatever happened to its move: a
-- move that died mid-pause must not keep its tenant from writing. A write
-- that passed the check just before the pause began is not left behind:
-- every noted write holds a shared advisory lock on the tenant to the end
-- of its transaction, and the mover, once the pause is committed, takes
-- it exclusively (hold_writers) and keeps it until the move ends, so the
-- writes in flight are noted before the last catch-up and later ones are
-- refused.
CREATE TABLE eunha_move.paused (
    tenant bigint PRIMARY KEY,
    since timestamptz NOT NULL DEFAULT now()
);

-- A table's primary key columns, in the key's order, from the catalog.
CREATE FUNCTION eunha_move.key_columns(tbl text) RETURNS text[]
LANGUAGE sql STABLE AS $$
    SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
    FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
    WHERE i.indrelid = ('public.' || quote_ident(tbl))::regclass AND i.indisprimary
$$;

-- "mv_x.a = mv_k.a AND mv_x.b = mv_k.b" over a table's key: a row mv_x
-- of the table matched with a key mv_k read from a note. (Names no
-- table's column will have: a column named like an alias would win.)
CREATE FUNCTION eunha_move.key_match(tbl text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT string_agg(format('mv_x.%1$I = mv_k.%1$I', c), ' AND ')
    FROM unnest(eunha_move.key_columns(tbl)) c
$$;

-- The trigger: notes the changed row's key (its columns are the trigger's
-- arguments), and on an update that changed the key the old key too; or,
-- during the tenant's write pause, refuses the write.
CREATE FUNCTION eunha_move.note() RETURNS trigger
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

-- Stops noting tenant tid's changes of table tbl. One table per call (and
-- transaction): the trigger's lock is held only as long as that table's.
CREATE FUNCTION eunha_move.unwatch(tid bigint, tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['eunha_move_' || tid || '_w', 'eunha_move_' || tid || '_d'] LOOP
        IF EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgname = name
                   AND g.tgrelid = ('public.' || quote_ident(tbl))::regclass) THEN
            EXECUTE format('DROP TRIGGER %I ON public.%I', name, tbl);
        END IF;
    END LOOP;
END
$$;

-- Starts noting tenant tid's changes of table tbl (a move that stopped
-- without cleaning up left its triggers: they are made afresh).
CREATE FUNCTION eunha_move.watch(tid bigint, tbl text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    args text;
BEGIN
    PERFORM eunha_move.unwatch(tid, tbl);
    SELECT string_agg(quote_literal(c), ', ') INTO args
        FROM unnest(eunha_move.key_columns(tbl)) c;
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE ON public.%I FOR EACH ROW'
                   ' WHEN (NEW.tenant_id = %s) EXECUTE FUNCTION eunha_move.note(%s)',
                   'eunha_move_' || tid || '_w', tbl, tid, args);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON public.%I FOR EACH ROW'
                   ' WHEN (OLD.tenant_id = %s) EXECUTE FUNCTION eunha_move.note(%s)',
                   'eunha_move_' || tid || '_d', tbl, tid, args);
END
$$;

-- Takes up to lim of tenant tid's oldest notes and returns the rows they
-- name as they are now: a JSON array of {"t": table, "k": key, "r": row or
-- null when it is gone}, one per distinct row. The rows are read after the
-- notes are taken, so a change committed later than that read has a note
-- still to be taken; a note not yet committed is not seen, and stays.
CREATE FUNCTION eunha_move.take(tid bigint, lim int) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    keys jsonb;
    q text;
    rows jsonb;
BEGIN
    WITH d AS (
        DELETE FROM eunha_move.changes c WHERE c.id IN (
            SELECT x.id FROM eunha_move.changes x WHERE x.tenant = tid ORDER BY x.id LIMIT lim)
        RETURNING c.tbl, c.pk)
    SELECT jsonb_agg(DISTINCT jsonb_build_object('t', d.tbl, 'k', d.pk)) INTO keys FROM d;
    IF keys IS NULL THEN
        RETURN '[]';
    END IF;
    -- One statement, so one snapshot, over every table named.
    SELECT string_agg(format(
               'SELECT jsonb_build_object(''t'', mv_e.value->>''t'', ''k'', mv_e.value->''k'','
               ' ''r'', (SELECT to_jsonb(mv_x) FROM public.%1$I mv_x WHERE %2$s)) AS c'
               ' FROM jsonb_array_elements($1) mv_e,'
               ' LATERAL jsonb_populate_record(NULL::public.%1$I, mv_e.value->''k'') mv_k'
               ' WHERE mv_e.value->>''t'' = %3$L',
               n.tbl, eunha_move.key_match(n.tbl), n.tbl), ' UNION ALL ')
        INTO q
        FROM (SELECT DISTINCT e->>'t' AS tbl FROM jsonb_array_elements(keys) e) n;
    EXECUTE 'SELECT coalesce(jsonb_agg(u.c), ''[]'') FROM (' || q || ') u' INTO rows USING keys;
    RETURN rows;
END
$$;

-- Starts tenant tid's write pause (see eunha_move.paused).
CREATE FUNCTION eunha_move.pause(tid bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO eunha_move.paused (tenant) VALUES (tid)
        ON CONFLICT (tenant) DO UPDATE SET since = now()
$$;

-- Waits for the tenant's writes in flight on the source and holds back the
-- next ones until the calling session ends (the move's own connection).
CREATE FUNCTION eunha_move.hold_writers(tid bigint) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_advisory_lock(hashtextextended('eunha_move_w', tid))
$$;

-- Drops tenant tid's notes and pause (its move ended).
CREATE FUNCTION eunha_move.forget(tid bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM eunha_move.changes WHERE tenant = tid;
    DELETE FROM eunha_move.paused WHERE tenant = tid
$$;

-- On the target: makes tenant tid's rows named in changes (what take
-- returned on the source) as they are there: the gone ones deleted
-- children first, the others inserted or updated parents first, tables
-- given in the order children first (eu_db_tenant_tables). Returns the
-- rows written.
CREATE FUNCTION eunha_move.apply(tid bigint, changes jsonb, tables text[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    present text[];
    tbl text;
    cols text[];
    keys text[];
    upd text;
    uniq text;
    n bigint := 0;
    m bigint;
BEGIN
    SELECT array_agg(DISTINCT e->>'t') INTO present FROM jsonb_array_elements(changes) e;
    IF present IS NULL THEN
        RETURN 0;
    END IF;
    FOREACH tbl IN ARRAY tables LOOP
        CONTINUE WHEN NOT tbl = ANY (present);
        EXECUTE format('DELETE FROM public.%1$I mv_x USING jsonb_array_elements($1) mv_e,'
                       ' LATERAL jsonb_populate_record(NULL::public.%1$I, mv_e.value->''k'') mv_k'
                       ' WHERE mv_e.value->>''t'' = %2$L'
                       ' AND jsonb_typeof(mv_e.value->''r'') <> ''object'''
                       ' AND mv_x.tenant_id = $2 AND %3$s',
                       tbl, tbl, eunha_move.key_match(tbl)) USING changes, tid;
        GET DIAGNOSTICS m = ROW_COUNT;
        n := n + m;
    END LOOP;
    FOR i IN REVERSE array_upper(tables, 1) .. 1 LOOP
        tbl := tables[i];
        CONTINUE WHEN NOT tbl = ANY (present);
        SELECT array_agg(a.attname::text ORDER BY a.attnum) INTO cols
            FROM pg_attribute a
            WHERE a.attrelid = ('public.' || quote_ident(tbl))::regclass AND a.attnum > 0
            AND NOT a.attisdropped AND a.attgenerated = '';
        keys := eunha_move.key_columns(tbl);
        SELECT string_agg(format('%1$I = EXCLUDED.%1$I', c), ', ') INTO upd
            FROM unnest(cols) c WHERE NOT c = ANY (keys);
        -- A row the target's own triggers wrote as the copied rows went in
        -- (account_conversations, under an id of its own) may hold a unique
        -- value a copied row brings: it goes, when no table refers to its
        -- table (so nothing cascades from it).
        IF NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f'
                       AND f.confrelid = ('public.' || quote_ident(tbl))::regclass) THEN
            FOR uniq IN
                SELECT string_agg(format('mv_x.%1$I = mv_r.%1$I', a.attname), ' AND ')
                FROM pg_index i
                JOIN pg_attribute a ON a.attrelid = i.indrelid
                    AND a.attnum = ANY (i.indkey::int2[])
                WHERE i.indrelid = ('public.' || quote_ident(tbl))::regclass AND i.indisunique
                AND NOT i.indisprimary AND i.indexprs IS NULL AND i.indpred IS NULL
                GROUP BY i.indexrelid
            LOOP
                EXECUTE format('DELETE FROM public.%1$I mv_x USING jsonb_array_elements($1) mv_e,'
                               ' LATERAL jsonb_populate_record(NULL::public.%1$I,'
                               ' mv_e.value->''r'') mv_r'
                               ' WHERE mv_e.value->>''t'' = %2$L'
                               ' AND jsonb_typeof(mv_e.value->''r'') = ''object'''
                               ' AND mv_x.tenant_id = $2 AND %3$s AND NOT (%4$s)',
                               tbl, tbl, uniq,
                               replace(eunha_move.key_match(tbl), 'mv_k.', 'mv_r.'))
                    USING changes, tid;
            END LOOP;
        END IF;
        EXECUTE format('INSERT INTO public.%1$I (%2$s) SELECT %3$s'
                       ' FROM jsonb_array_elements($1) mv_e,'
                       ' LATERAL jsonb_populate_record(NULL::public.%1$I, mv_e.value->''r'') mv_r'
                       ' WHERE mv_e.value->>''t'' = %4$L'
                       ' AND jsonb_typeof(mv_e.value->''r'') = ''object'''
                       ' AND mv_r.tenant_id = $2 ON CONFLICT (%5$s) %6$s',
                       tbl,
                       (SELECT string_agg(quote_ident(c), ', ') FROM unnest(cols) c),
                       (SELECT string_agg('mv_r.' || quote_ident(c), ', ') FROM unnest(cols) c),
                       tbl,
                       (SELECT string_agg(quote_ident(c), ', ') FROM unnest(keys) c),
                       CASE WHEN upd IS NULL THEN 'DO NOTHING' ELSE 'DO UPDATE SET ' || upd END)
            USING changes, tid;
        GET DIAGNOSTICS m = ROW_COUNT;
        n := n + m;
    END LOOP;
    RETURN n;
END
$$;
