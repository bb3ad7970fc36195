/*
 * Pooled placement: many tenants in one database.
 *
 * The catalog test reads the placement schema itself: every tenant table
 * leads its primary key, unique indexes and foreign keys with tenant_id, and
 * the list the server uses (eu_db_tenant_tables) names exactly those tables.
 *
 * The statement test walks the statement registry: every registered
 * statement has a tenant predicate for each tenant table it names, and
 * PostgreSQL prepares it (both directions of a paged one) against the
 * placement schema with $1 a bigint, as the tenant pools send it.
 *
 * The isolation test fills three tenants of one placement the same way
 * through the API (same usernames, statuses, follows, favourites, lists,
 * filters), then runs the API as the first tenant's users: no id or text of
 * the two decoys may appear in any answer, ids of theirs are 404s, and no
 * write of the first tenant changes a decoy's rows. A statement that forgot
 * its tenant would show up here, since the decoys' rows sit in the same
 * tables under the same names.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/sql.h"

#define TIMEOUT 240

/* ---------------------------------------------------------------- catalog */

START_TEST(test_catalog)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_t *t = eu_it_tenant_create(s, "a.example", "A");
    const char *db = json_string_value(json_object_get(t, "database"));
    PGconn *pg = eu_it_pg_connect(db);

    /* The tables with a tenant_id column are the server's tenant tables. */
    char *have = eu_it_pg_query(pg, "SELECT string_agg(c.relname, ',' ORDER BY c.relname)"
                                    " FROM pg_class c JOIN pg_namespace n ON n.oid ="
                                    " c.relnamespace WHERE n.nspname = 'public' AND"
                                    " c.relkind = 'r' AND c.relname <> 'eunha_schema'");
    char *with_tid = eu_it_pg_query(pg, "SELECT string_agg(c.relname, ',' ORDER BY c.relname)"
                                        " FROM pg_class c JOIN pg_attribute a ON a.attrelid ="
                                        " c.oid AND a.attname = 'tenant_id' AND a.attnotnull"
                                        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE"
                                        " n.nspname = 'public' AND c.relkind = 'r'");
    ck_assert_msg(strcmp(have, with_tid) == 0,
                  "tables without a NOT NULL tenant_id: all %s, with %s", have, with_tid);
    size_t n = 0;
    for (const char *const *name = eu_db_tenant_tables; *name; name++) {
        char needle[80];
        snprintf(needle, sizeof(needle), ",%s,", *name);
        char *hay = malloc(strlen(have) + 3);
        sprintf(hay, ",%s,", have);
        ck_assert_msg(strstr(hay, needle) != NULL, "%s is not a table", *name);
        free(hay);
        n++;
    }
    size_t tables = 1;
    for (const char *p = have; *p; p++)
        tables += *p == ',';
    ck_assert_msg(n == tables, "eu_db_tenant_tables has %zu names, the schema %zu tables (%s)", n,
                  tables, have);

    /* Every table has a primary key. */
    char *no_pk = eu_it_pg_query(pg, "SELECT string_agg(c.relname, ',') FROM pg_class c JOIN"
                                     " pg_namespace n ON n.oid = c.relnamespace WHERE"
                                     " n.nspname = 'public' AND c.relkind = 'r' AND NOT EXISTS"
                                     " (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid"
                                     " AND k.contype = 'p')");
    ck_assert_msg(no_pk == NULL, "tables without a primary key: %s", no_pk);
    /* Primary keys, unique constraints and foreign keys start with tenant_id,
     * on both sides of a foreign key. */
    char *bad_con = eu_it_pg_query(
        pg, "SELECT string_agg(k.conname, ',') FROM pg_constraint k JOIN pg_class c ON c.oid ="
            " k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname ="
            " 'public' AND c.relname <> 'eunha_schema' AND k.contype IN ('p', 'u', 'f') AND"
            " ((SELECT attname FROM pg_attribute WHERE attrelid = k.conrelid AND attnum ="
            " k.conkey[1]) <> 'tenant_id' OR (k.contype = 'f' AND (SELECT attname FROM"
            " pg_attribute WHERE attrelid = k.confrelid AND attnum = k.confkey[1]) <>"
            " 'tenant_id'))");
    ck_assert_msg(bad_con == NULL, "constraints not led by tenant_id: %s", bad_con);
    /* So do unique indexes made without a constraint (expression ones). */
    char *bad_idx = eu_it_pg_query(
        pg, "SELECT string_agg(i.relname, ',') FROM pg_index x JOIN pg_class i ON i.oid ="
            " x.indexrelid JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid ="
            " c.relnamespace WHERE n.nspname = 'public' AND c.relname <> 'eunha_schema' AND"
            " x.indisunique AND (x.indkey[0] = 0 OR (SELECT attname FROM pg_attribute WHERE"
            " attrelid = x.indrelid AND attnum = x.indkey[0]) <> 'tenant_id')");
    ck_assert_msg(bad_idx == NULL, "unique indexes not led by tenant_id: %s", bad_idx);

    free(have);
    free(with_tid);
    PQfinish(pg);
    json_decref(t);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------ statements */

START_TEST(test_statements)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_t *t = eu_it_tenant_create(s, "a.example", "A");
    const char *db = json_string_value(json_object_get(t, "database"));
    PGconn *pg = eu_it_pg_connect(db);
    const Oid int8 = 20;
    int n = 0;
    for (size_t i = 0; eu_sql_tables[i]; i++) {
        for (const struct eu_sql *st = eu_sql_tables[i]; st->name; st++) {
            ck_assert_msg(st->text != NULL, "%s has no text", st->name);
            ck_assert_msg(eu_sql_find(st->name) == st, "%s is registered twice", st->name);
            for (unsigned v = 0; v < (st->page_col ? EU_SQL_PAGE_VARIANTS : 1); v++) {
                const char *sql = eu_sql_text(st, v);
                char why[160];
                ck_assert_msg(st->cross_tenant || eu_db_sql_check_tenant(sql, why, sizeof(why)),
                              "%s could reach other tenants' rows: %s", st->name, why);
                PGresult *r = PQprepare(pg, "", sql, st->cross_tenant ? 0 : 1, &int8);
                ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s does not prepare: %s",
                              st->name, PQresultErrorMessage(r));
                PQclear(r);
                /* $1 is the tenant id and nothing else. */
                r = PQdescribePrepared(pg, "");
                ck_assert_int_eq(PQresultStatus(r), PGRES_COMMAND_OK);
                ck_assert_msg(st->cross_tenant || (PQnparams(r) >= 1 && PQparamtype(r, 0) == int8),
                              "%s does not take the tenant id as $1", st->name);
                PQclear(r);
                n++;
            }
        }
    }
    ck_assert_int_gt(n, 5);
    eu_sql_free();
    PQfinish(pg);
    json_decref(t);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------- isolation */

#define NT 3
static const char *const hosts[NT] = {"a.example", "b.example", "c.example"};
static const char *const marks[NT] = {"subjectmark", "decoybmark", "decoycmark"};

/* NT identical tenants in one placement, each with the same users and
 * posts: not a world (world.h) with one tenant under test and a decoy, but
 * tenant 0 under test and every other one a decoy. */
struct placement {
    struct eu_it_server *s;
    char *db;
    char *tid[NT];
    char *alice[NT], *bob[NT], *carol[NT]; /* tokens */
    char *alice_id[NT], *bob_id[NT];
    char *status[NT];   /* alice's public status */
    char *private_[NT]; /* alice's followers-only status */
    char *reply[NT];    /* bob's reply to it */
    char *list[NT];
    /* Ids and texts no answer to tenant 0 may hold. */
    char *banned[64];
    int nbanned;
};

static void
ban(struct placement *w, const char *s)
{
    ck_assert_int_lt(w->nbanned, 64);
    w->banned[w->nbanned++] = strdup(s);
}

/* Sends a request and asserts the status; returns the parsed body (caller
 * frees) and, for tenant 0, checks that no decoy id or text is in it. */
static json_t *
call(struct placement *w, int ti, const char *method, const char *path, const char *token,
     const char *body, long want)
{
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http(&r, method, w->s->public_port, hosts[ti], path, token, body), 0);
    ck_assert_msg(r.status == want, "%s %s on %s: expected %ld, got %ld: %.600s", method, path,
                  hosts[ti], want, r.status, r.body);
    if (ti == 0)
        for (int i = 0; i < w->nbanned; i++)
            ck_assert_msg(strstr(r.body, w->banned[i]) == NULL,
                          "%s %s answered with '%s' of a decoy tenant: %.800s", method, path,
                          w->banned[i], r.body);
    json_t *j = r.json ? json_incref(r.json) : NULL;
    eu_it_resp_free(&r);
    return j;
}

static char *
call_id(struct placement *w, int ti, const char *method, const char *path, const char *token,
        const char *body, long want)
{
    json_t *j = call(w, ti, method, path, token, body, want);
    const char *id = json_string_value(json_object_get(j, "id"));
    ck_assert_msg(id != NULL, "%s %s: no id", method, path);
    char *out = strdup(id);
    json_decref(j);
    return out;
}

static void
expect(struct placement *w, int ti, const char *method, const char *path, const char *token,
       const char *body, long want)
{
    json_decref(call(w, ti, method, path, token, body, want));
}

/* The same small instance in each tenant: three users who follow, post,
 * reply, favourite, list and filter. */
static void
populate(struct placement *w, int ti)
{
    char body[512], path[256];
    const char *h = hosts[ti];
    w->alice[ti] = eu_it_user_new(w->s, h, "alice", "read write follow", &w->alice_id[ti]);
    w->bob[ti] = eu_it_user_new(w->s, h, "bob", "read write follow", &w->bob_id[ti]);
    w->carol[ti] = eu_it_user_new(w->s, h, "carol", "read write follow", NULL);
    w->tid[ti] = eu_it_tenant_id(w->s, h);

    snprintf(path, sizeof(path), "/api/v1/accounts/%s/follow", w->bob_id[ti]);
    expect(w, ti, "POST", path, w->alice[ti], NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/follow", w->alice_id[ti]);
    expect(w, ti, "POST", path, w->bob[ti], NULL, 200);
    expect(w, ti, "POST", path, w->carol[ti], NULL, 200);

    snprintf(body, sizeof(body), "{\"status\":\"%s public #shared hello @bob\"}", marks[ti]);
    w->status[ti] = call_id(w, ti, "POST", "/api/v1/statuses", w->alice[ti], body, 200);
    snprintf(body, sizeof(body), "{\"status\":\"%s private\",\"visibility\":\"private\"}",
             marks[ti]);
    w->private_[ti] = call_id(w, ti, "POST", "/api/v1/statuses", w->alice[ti], body, 200);
    snprintf(body, sizeof(body), "{\"status\":\"%s direct @bob\",\"visibility\":\"direct\"}",
             marks[ti]);
    expect(w, ti, "POST", "/api/v1/statuses", w->alice[ti], body, 200);
    snprintf(body, sizeof(body), "{\"status\":\"@alice %s reply\",\"in_reply_to_id\":\"%s\"}",
             marks[ti], w->status[ti]);
    w->reply[ti] = call_id(w, ti, "POST", "/api/v1/statuses", w->bob[ti], body, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/favourite", w->status[ti]);
    expect(w, ti, "POST", path, w->bob[ti], NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/reblog", w->status[ti]);
    expect(w, ti, "POST", path, w->carol[ti], NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/bookmark", w->reply[ti]);
    expect(w, ti, "POST", path, w->alice[ti], NULL, 200);
    snprintf(body, sizeof(body), "{\"title\":\"%s list\"}", marks[ti]);
    w->list[ti] = call_id(w, ti, "POST", "/api/v1/lists", w->alice[ti], body, 200);
    snprintf(path, sizeof(path), "/api/v1/lists/%s/accounts", w->list[ti]);
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", w->bob_id[ti]);
    expect(w, ti, "POST", path, w->alice[ti], body, 200);
    snprintf(body, sizeof(body),
             "{\"title\":\"%s filter\",\"context\":[\"home\"],\"filter_action\":\"warn\","
             "\"keywords_attributes\":[{\"keyword\":\"zebra\"}]}",
             marks[ti]);
    expect(w, ti, "POST", "/api/v2/filters", w->alice[ti], body, 200);
    expect(w, ti, "POST", "/api/v1/markers", w->alice[ti], "{\"home\":{\"last_read_id\":\"1\"}}",
           200);
}

/* Rows per table of tenant ti, as one string "table=n,...". Caller frees. */
static char *
rows_of(struct placement *w, int ti)
{
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "SELECT string_agg(c.relname || '=' || (xpath('/row/c/text()', query_to_xml("
             "format('SELECT count(*) AS c FROM %%I WHERE tenant_id = %s', c.relname), false,"
             " true, '')))[1]::text, ',' ORDER BY c.relname) FROM pg_class c JOIN pg_attribute a"
             " ON a.attrelid = c.oid AND a.attname = 'tenant_id' JOIN pg_namespace n"
             " ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = 'public'",
             w->tid[ti]);
    return eu_it_pg_exec(w->db, sql);
}

/* Reads as tenant 0: every list and lookup its users have. */
static void
read_everything(struct placement *w)
{
    static const char *const paths[] = {
        "/api/v1/accounts/verify_credentials",
        "/api/v1/accounts/lookup?acct=bob",
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        "/api/v1/timelines/public?local=true",
        "/api/v1/timelines/tag/shared",
        "/api/v1/notifications",
        "/api/v2/notifications",
        "/api/v1/notifications/unread_count",
        "/api/v1/conversations",
        "/api/v1/lists",
        "/api/v2/filters",
        "/api/v1/filters",
        "/api/v1/markers?timeline[]=home",
        "/api/v1/bookmarks",
        "/api/v1/favourites",
        "/api/v1/blocks",
        "/api/v1/mutes",
        "/api/v1/follow_requests",
        "/api/v1/directory",
        "/api/v1/followed_tags",
        "/api/v1/scheduled_statuses",
        "/api/v2/search?q=bob",
        "/api/v2/search?q=shared",
        "/api/v2/search?q=hello&type=statuses",
        "/api/v1/accounts/search?q=bo",
        "/api/v1/instance",
        "/api/v2/instance",
        "/api/v1/preferences",
        "/api/v1/custom_emojis",
    };
    char path[256];
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        expect(w, 0, "GET", paths[i], w->alice[0], NULL, 200);
        expect(w, 0, "GET", paths[i], w->bob[0], NULL, 200);
    }
    const char *ids[] = {w->alice_id[0], w->bob_id[0]};
    for (int i = 0; i < 2; i++) {
        static const char *const fmts[] = {
            "/api/v1/accounts/%s",
            "/api/v1/accounts/%s/statuses",
            "/api/v1/accounts/%s/followers",
            "/api/v1/accounts/%s/following",
            "/api/v1/accounts/relationships?id[]=%s",
            "/api/v1/accounts/familiar_followers?id[]=%s",
        };
        for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
            snprintf(path, sizeof(path), fmts[f], ids[i]);
            expect(w, 0, "GET", path, w->carol[0], NULL, 200);
        }
    }
    const char *sts[] = {w->status[0], w->private_[0], w->reply[0]};
    for (int i = 0; i < 3; i++) {
        static const char *const fmts[] = {
            "/api/v1/statuses/%s",
            "/api/v1/statuses/%s/context",
            "/api/v1/statuses/%s/favourited_by",
            "/api/v1/statuses/%s/reblogged_by",
            "/api/v1/statuses/%s/history",
        };
        for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
            snprintf(path, sizeof(path), fmts[f], sts[i]);
            expect(w, 0, "GET", path, w->bob[0], NULL, 200);
        }
    }
    snprintf(path, sizeof(path), "/api/v1/timelines/list/%s", w->list[0]);
    expect(w, 0, "GET", path, w->alice[0], NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/lists/%s/accounts", w->list[0]);
    expect(w, 0, "GET", path, w->alice[0], NULL, 200);
    /* Anonymous readers too. */
    expect(w, 0, "GET", "/api/v1/timelines/public", NULL, NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses", w->alice_id[0]);
    expect(w, 0, "GET", path, NULL, NULL, 200);
    expect(w, 0, "GET", "/@alice", NULL, NULL, 200);
}

/* Tenant 0's users name a decoy's ids: each is unknown here. */
static void
reach_for_decoys(struct placement *w)
{
    char path[256], body[256];
    for (int ti = 1; ti < NT; ti++) {
        static const char *const st_get[] = {"/api/v1/statuses/%s", "/api/v1/statuses/%s/context",
                                             "/api/v1/statuses/%s/favourited_by"};
        static const char *const st_post[] = {
            "/api/v1/statuses/%s/favourite", "/api/v1/statuses/%s/reblog",
            "/api/v1/statuses/%s/bookmark", "/api/v1/statuses/%s/pin"};
        for (size_t i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), st_get[i], w->status[ti]);
            expect(w, 0, "GET", path, w->alice[0], NULL, 404);
        }
        for (size_t i = 0; i < 4; i++) {
            snprintf(path, sizeof(path), st_post[i], w->status[ti]);
            expect(w, 0, "POST", path, w->alice[0], NULL, 404);
        }
        snprintf(path, sizeof(path), "/api/v1/statuses/%s", w->reply[ti]);
        expect(w, 0, "DELETE", path, w->bob[0], NULL, 404);
        snprintf(path, sizeof(path), "/api/v1/accounts/%s", w->bob_id[ti]);
        expect(w, 0, "GET", path, w->alice[0], NULL, 404);
        snprintf(path, sizeof(path), "/api/v1/accounts/%s/follow", w->bob_id[ti]);
        expect(w, 0, "POST", path, w->alice[0], NULL, 404);
        snprintf(path, sizeof(path), "/api/v1/accounts/%s/block", w->bob_id[ti]);
        expect(w, 0, "POST", path, w->alice[0], NULL, 404);
        snprintf(path, sizeof(path), "/api/v1/lists/%s", w->list[ti]);
        expect(w, 0, "GET", path, w->alice[0], NULL, 404);
        snprintf(body, sizeof(body), "{\"status\":\"x\",\"in_reply_to_id\":\"%s\"}", w->status[ti]);
        expect(w, 0, "POST", "/api/v1/statuses", w->alice[0], body, 404);
        /* A decoy's token is no token here. */
        expect(w, 0, "GET", "/api/v1/accounts/verify_credentials", w->alice[ti], NULL, 401);
    }
}

/* Writes as tenant 0 that touch the same usernames the decoys have. */
static void
write_things(struct placement *w)
{
    char path[256], body[256];
    snprintf(body, sizeof(body), "{\"status\":\"%s again @bob @carol #shared\"}", marks[0]);
    char *id = call_id(w, 0, "POST", "/api/v1/statuses", w->alice[0], body, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/favourite", id);
    expect(w, 0, "POST", path, w->carol[0], NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", id);
    expect(w, 0, "PUT", path, w->alice[0], "{\"status\":\"edited #shared\"}", 200);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/unfollow", w->alice_id[0]);
    expect(w, 0, "POST", path, w->carol[0], NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/mute", w->bob_id[0]);
    expect(w, 0, "POST", path, w->carol[0], NULL, 200);
    expect(w, 0, "PATCH", "/api/v1/accounts/update_credentials", w->bob[0],
           "{\"display_name\":\"Bob Zero\",\"note\":\"zero\"}", 200);
    expect(w, 0, "POST", "/api/v1/notifications/clear", w->bob[0], NULL, 200);
    expect(w, 0, "POST", "/api/v1/tags/shared/follow", w->carol[0], NULL, 200);
    snprintf(body, sizeof(body), "{\"status\":\"%s short-lived\"}", marks[0]);
    char *gone = call_id(w, 0, "POST", "/api/v1/statuses", w->bob[0], body, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", gone);
    expect(w, 0, "DELETE", path, w->bob[0], NULL, 200);
    free(gone);
    free(id);
}

START_TEST(test_decoys)
{
    struct placement w = {0};
    w.s = eu_it_server_start(NULL);
    for (int ti = 0; ti < NT; ti++)
        json_decref(eu_it_tenant_create(w.s, hosts[ti], hosts[ti]));
    w.db = eu_it_tenant_database(w.s, hosts[0]);
    for (int ti = 1; ti < NT; ti++) {
        char *db = eu_it_tenant_database(w.s, hosts[ti]);
        ck_assert_msg(strcmp(db, w.db) == 0, "decoy %s is in %s, not %s", hosts[ti], db, w.db);
        free(db);
    }
    /* The decoys first, so the subject's rows are the newest. */
    for (int ti = NT - 1; ti >= 0; ti--)
        populate(&w, ti);
    for (int ti = 1; ti < NT; ti++) {
        ban(&w, marks[ti]);
        ban(&w, w.alice_id[ti]);
        ban(&w, w.bob_id[ti]);
        ban(&w, w.status[ti]);
        ban(&w, w.private_[ti]);
        ban(&w, w.reply[ti]);
        ban(&w, w.list[ti]);
        ban(&w, hosts[ti]);
    }
    char *before[NT];
    for (int ti = 1; ti < NT; ti++)
        before[ti] = rows_of(&w, ti);

    read_everything(&w);
    reach_for_decoys(&w);
    write_things(&w);
    read_everything(&w);

    for (int ti = 1; ti < NT; ti++) {
        char *after = rows_of(&w, ti);
        ck_assert_msg(strcmp(before[ti], after) == 0, "decoy %s changed:\n%s\n->\n%s", hosts[ti],
                      before[ti], after);
        free(after);
        free(before[ti]);
    }
    /* And the decoys still see their own world, unchanged. */
    for (int ti = 1; ti < NT; ti++) {
        char path[128];
        snprintf(path, sizeof(path), "/api/v1/statuses/%s", w.private_[ti]);
        expect(&w, ti, "GET", path, w.bob[ti], NULL, 200);
        json_t *home = call(&w, ti, "GET", "/api/v1/timelines/home", w.bob[ti], NULL, 200);
        ck_assert_msg(json_array_size(home) >= 2, "decoy home has %zu", json_array_size(home));
        json_decref(home);
    }

    for (int ti = 0; ti < NT; ti++) {
        free(w.tid[ti]);
        free(w.alice[ti]);
        free(w.bob[ti]);
        free(w.carol[ti]);
        free(w.alice_id[ti]);
        free(w.bob_id[ti]);
        free(w.status[ti]);
        free(w.private_[ti]);
        free(w.reply[ti]);
        free(w.list[ti]);
    }
    for (int i = 0; i < w.nbanned; i++)
        free(w.banned[i]);
    free(w.db);
    ck_assert_int_eq(eu_it_server_stop(w.s), 0);
    eu_it_server_free(w.s);
}
END_TEST

/* ------------------------------------------------------------ template */

/* Sessions PostgreSQL counted on db (pg_stat_database), once its counters
 * settle: a backend's session is counted when it ends. */
static long
template_sessions(const char *db)
{
    char sql[200];
    snprintf(sql, sizeof(sql), "SELECT sessions FROM pg_stat_database WHERE datname = '%s'", db);
    long last = -1;
    for (int i = 0; i < 20; i++) {
        free(eu_it_pg_exec("postgres", "SELECT pg_stat_clear_snapshot()"));
        long n = eu_it_pg_exec_long("postgres", sql);
        if (n == last)
            return n;
        last = n;
        eu_it_sleep_ms(200);
    }
    return last;
}

/*
 * A server migrates its template once and stamps it (its comment names the
 * migrations); a start that finds the stamp current does not connect to the
 * template at all, which also kept other processes from copying it.
 */
START_TEST(test_template_stamp)
{
    /* A template of the server's own, not the run's migrated one. */
    unsetenv("EUNHA_TEST_PG_GOLDEN");
    struct eu_it_server *s = eu_it_server_start(NULL);
    char tpl[128], sql[256];
    snprintf(tpl, sizeof(tpl), "%s_tpl", s->name);
    snprintf(sql, sizeof(sql),
             "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = '%s'",
             tpl);
    char *stamp = eu_it_pg_exec("postgres", sql);
    ck_assert_msg(strncmp(stamp, "eunha schema ", 13) == 0, "template comment: '%s'", stamp);
    long before = template_sessions(tpl);
    ck_assert_int_gt(before, 0);

    eu_it_server_restart(s);
    ck_assert_int_eq(template_sessions(tpl), before);
    char *again = eu_it_pg_exec("postgres", sql);
    ck_assert_str_eq(again, stamp);

    /* A stale stamp (another binary's migrations) is migrated and
     * stamped anew. */
    snprintf(sql, sizeof(sql), "COMMENT ON DATABASE \"%s\" IS 'eunha schema 1 0'", tpl);
    free(eu_it_pg_exec("postgres", sql));
    eu_it_server_restart(s);
    ck_assert_int_gt(template_sessions(tpl), before);
    snprintf(sql, sizeof(sql),
             "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = '%s'",
             tpl);
    char *restamped = eu_it_pg_exec("postgres", sql);
    ck_assert_str_eq(restamped, stamp);
    free(restamped);
    free(again);
    free(stamp);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("placement");
    EU_IT_ADD_TCASE(s, test_catalog, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_statements, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_decoys, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_template_stamp, TIMEOUT);
    return eu_it_run_suite(s);
}
