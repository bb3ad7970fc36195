/*
 * Moving a tenant between placements, and exporting it to an archive and
 * importing that under another domain.
 *
 * A tenant is filled through the API (three users who follow, post, reply,
 * write a direct message, favourite, reblog, bookmark, list, filter and mark,
 * so notifications and conversations exist too). What its users see (home,
 * public and account timelines, their accounts, notifications, lists,
 * filters, conversations) is kept as the answers' bodies, and what it holds
 * as a fingerprint of every table's rows without tenant_id. A move or an
 * import must give the same fingerprint and the same answers with the same
 * tokens; after a move the placement it left must hold nothing of it.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eunha/migrate.h"

#define TIMEOUT 240

/* One tenant of the server and the users populate() gives it: a test moves
 * or exports tenants, so it holds two of these on one server rather than a
 * world (world.h) with one tenant under test. */
struct population {
    struct eu_it_server *s;
    const char *host;
    char *alice, *bob, *carol; /* tokens */
    char *alice_id, *bob_id;
};

/* Sends a request to w's tenant and asserts the status; returns the body
 * (caller frees). */
static char *
call(struct population *w, const char *method, const char *path, const char *token,
     const char *body, long want)
{
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http(&r, method, w->s->public_port, w->host, path, token, body), 0);
    ck_assert_msg(r.status == want, "%s %s on %s: expected %ld, got %ld: %.600s", method, path,
                  w->host, want, r.status, r.body);
    char *out = strdup(r.body);
    eu_it_resp_free(&r);
    return out;
}

static char *
call_id(struct population *w, const char *method, const char *path, const char *token,
        const char *body)
{
    char *text = call(w, method, path, token, body, 200);
    json_t *j = json_loads(text, 0, NULL);
    const char *id = json_string_value(json_object_get(j, "id"));
    ck_assert_msg(id != NULL, "%s %s: no id in %.300s", method, path, text);
    char *out = strdup(id);
    json_decref(j);
    free(text);
    return out;
}

static void
expect(struct population *w, const char *method, const char *path, const char *token,
       const char *body, long want)
{
    free(call(w, method, path, token, body, want));
}

static void
populate(struct population *w)
{
    char body[512], path[256];
    w->alice = eu_it_user_new(w->s, w->host, "alice", "read write follow", &w->alice_id);
    w->bob = eu_it_user_new(w->s, w->host, "bob", "read write follow", &w->bob_id);
    w->carol = eu_it_user_new(w->s, w->host, "carol", "read write follow", NULL);

    snprintf(path, sizeof(path), "/api/v1/accounts/%s/follow", w->bob_id);
    expect(w, "POST", path, w->alice, NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/follow", w->alice_id);
    expect(w, "POST", path, w->bob, NULL, 200);
    expect(w, "POST", path, w->carol, NULL, 200);

    char *status = call_id(w, "POST", "/api/v1/statuses", w->alice,
                           "{\"status\":\"first public #moving hello @bob\"}");
    expect(w, "POST", "/api/v1/statuses", w->alice,
           "{\"status\":\"for followers\",\"visibility\":\"private\"}", 200);
    expect(w, "POST", "/api/v1/statuses", w->alice,
           "{\"status\":\"just us @bob\",\"visibility\":\"direct\"}", 200);
    snprintf(body, sizeof(body), "{\"status\":\"@alice a reply\",\"in_reply_to_id\":\"%s\"}",
             status);
    char *reply = call_id(w, "POST", "/api/v1/statuses", w->bob, body);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/favourite", status);
    expect(w, "POST", path, w->bob, NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/reblog", status);
    expect(w, "POST", path, w->carol, NULL, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/bookmark", reply);
    expect(w, "POST", path, w->alice, NULL, 200);
    char *list = call_id(w, "POST", "/api/v1/lists", w->alice, "{\"title\":\"friends\"}");
    snprintf(path, sizeof(path), "/api/v1/lists/%s/accounts", list);
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", w->bob_id);
    expect(w, "POST", path, w->alice, body, 200);
    expect(w, "POST", "/api/v2/filters", w->alice,
           "{\"title\":\"zoo\",\"context\":[\"home\"],\"filter_action\":\"warn\","
           "\"keywords_attributes\":[{\"keyword\":\"zebra\"}]}",
           200);
    expect(w, "POST", "/api/v1/markers", w->alice, "{\"home\":{\"last_read_id\":\"1\"}}", 200);
    free(status);
    free(reply);
    free(list);
}

static void
population_free(struct population *w)
{
    free(w->alice);
    free(w->bob);
    free(w->carol);
    free(w->alice_id);
    free(w->bob_id);
}

#define NVIEWS 14

/* The answers w's users get, in a fixed order; the caller frees each. */
static void
views(struct population *w, char *out[NVIEWS])
{
    char statuses[128];
    snprintf(statuses, sizeof(statuses), "/api/v1/accounts/%s/statuses", w->alice_id);
    const struct {
        const char *path;
        const char *token;
    } v[NVIEWS] = {
        {"/api/v1/accounts/verify_credentials", w->alice},
        {"/api/v1/accounts/verify_credentials", w->bob},
        {"/api/v1/accounts/verify_credentials", w->carol},
        {"/api/v1/timelines/home", w->alice},
        {"/api/v1/timelines/home", w->bob},
        {"/api/v1/timelines/public", NULL},
        {statuses, w->carol},
        {"/api/v1/notifications", w->alice},
        {"/api/v1/notifications", w->bob},
        {"/api/v1/conversations", w->bob},
        {"/api/v1/lists", w->alice},
        {"/api/v2/filters", w->alice},
        {"/api/v1/bookmarks", w->alice},
        {"/api/v1/favourites", w->bob},
    };
    for (int i = 0; i < NVIEWS; i++)
        out[i] = call(w, "GET", v[i].path, v[i].token, NULL, 200);
}

/* Returns s with every from replaced by to (caller frees). */
static char *
replace_all(const char *s, const char *from, const char *to)
{
    size_t cap = strlen(s) * (strlen(to) + 1) + 1, o = 0;
    char *out = malloc(cap);
    for (const char *p = s; *p;) {
        if (from[0] && strncmp(p, from, strlen(from)) == 0) {
            o += (size_t)sprintf(out + o, "%s", to);
            p += strlen(from);
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    return out;
}

/*
 * Asserts that after[i] is before[i] once every from (when not NULL) is
 * replaced by to on both sides: a copy under another domain shows its own
 * domain in the URLs the API makes, but HTML rendered when a status was
 * posted is stored, so it keeps the domain of the instance it was posted on.
 */
static void
views_expect_same(char *before[NVIEWS], char *after[NVIEWS], const char *from, const char *to)
{
    for (int i = 0; i < NVIEWS; i++) {
        char *want = replace_all(before[i], from ? from : "", from ? to : "");
        char *got = replace_all(after[i], from ? from : "", from ? to : "");
        ck_assert_msg(strcmp(want, got) == 0, "answer %d changed:\n%.1500s\n->\n%.1500s", i, want,
                      got);
        free(want);
        free(got);
    }
}

static void
views_free(char *v[NVIEWS])
{
    for (int i = 0; i < NVIEWS; i++)
        free(v[i]);
}

static char *fingerprint_rows(const char *db, const char *id);

/* Every table's rows of tenant id in database db, without tenant_id, as
 * "table=count:md5,..." (caller frees): equal for two tenants that hold the
 * same rows, wherever they are. instance_status_counts is its sum: which
 * shard a post counted in is the posting backend's (migration 0074), and a
 * copy's recount puts them elsewhere; only the total means anything. */
static char *
fingerprint(const char *db, const char *id)
{
    char *rows = fingerprint_rows(db, id);
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT coalesce(sum(n), 0) FROM instance_status_counts WHERE tenant_id = %s", id);
    char *sum = eu_it_pg_exec(db, sql);
    size_t n = strlen(rows) + strlen(sum) + 32;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    snprintf(out, n, "%s,instance_status_counts=%s", rows, sum);
    free(rows);
    free(sum);
    return out;
}

/* fingerprint()'s tables but the counts' shards, and without
 * accounts.audience_stamp: the follows a copy inserts move it, as any
 * follow does (migration 0075), and only its changes mean anything. */
static char *
fingerprint_rows(const char *db, const char *id)
{
    char sql[2048];
    snprintf(sql, sizeof(sql),
             "SELECT string_agg(c.relname || '=' || (xpath('/row/c/text()', query_to_xml(format("
             "'SELECT count(*) || '':'' || md5(coalesce(string_agg((to_jsonb(x) - ''tenant_id''"
             " - ''audience_stamp'')::text, '','' ORDER BY (to_jsonb(x) - ''tenant_id'' -"
             " ''audience_stamp'')::text), '''')) AS c"
             " FROM %%I x WHERE x.tenant_id = %s', c.relname), false, true, '')))[1]::text, ','"
             " ORDER BY c.relname) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid"
             " AND a.attname = 'tenant_id' JOIN pg_namespace n ON n.oid = c.relnamespace"
             " WHERE c.relkind = 'r' AND n.nspname = 'public'"
             " AND c.relname <> 'instance_status_counts'",
             id);
    return eu_it_pg_exec(db, sql);
}

static void
move(struct eu_it_server *s, const char *domain, const char *placement, struct eu_it_resp *r)
{
    char path[256], body[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/move", domain);
    snprintf(body, sizeof(body), "{\"placement\":\"%s\"}", placement);
    eu_it_admin(s, "POST", path, body, r);
}

/* ------------------------------------------------------------------ move */

/* pooled -> dedicated -> pooled: same rows, same answers, same tokens, and
 * nothing left behind; the neighbour in the pooled placement is untouched. */
START_TEST(test_move)
{
    struct population w = {.host = "m.example"}, n = {.host = "n.example"};
    struct eu_it_resp r = {0};
    w.s = n.s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(w.s, w.host, "Moving"));
    json_decref(eu_it_tenant_create(w.s, n.host, "Neighbour"));
    populate(&w);
    populate(&n);
    char *main_db = eu_it_tenant_database(w.s, w.host);
    char *id = eu_it_tenant_id(w.s, w.host);
    char *nid = eu_it_tenant_id(w.s, n.host);
    char *neighbour = fingerprint(main_db, nid);
    char *before[NVIEWS], *after[NVIEWS];
    views(&w, before);
    char *rows = fingerprint(main_db, id);

    move(w.s, w.host, "dedicated", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "placement", "dedicated-m.example");
    EU_IT_EXPECT_JSTR(&r, "id", id);
    EU_IT_EXPECT_JSTR(&r, "state", "active");
    ck_assert_ptr_null(eu_it_jpath(r.json, "moving"));
    char *ded_db = strdup(eu_it_json_str(&r, "database"));
    ck_assert_str_ne(ded_db, main_db);
    char *moved = fingerprint(ded_db, id);
    ck_assert_msg(strcmp(rows, moved) == 0, "rows changed in the move:\n%s\n->\n%s", rows, moved);
    ck_assert_int_eq(eu_it_tenant_rows(main_db, id), 0);
    views(&w, after);
    views_expect_same(before, after, NULL, NULL);
    views_free(after);
    free(moved);

    /* It takes writes where it is now. */
    expect(&w, "POST", "/api/v1/statuses", w.alice, "{\"status\":\"written while dedicated\"}",
           200);
    views_free(before);
    views(&w, before);
    free(rows);
    rows = fingerprint(ded_db, id);

    move(w.s, w.host, "main", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "placement", "main");
    EU_IT_EXPECT_JSTR(&r, "database", main_db);
    moved = fingerprint(main_db, id);
    ck_assert_msg(strcmp(rows, moved) == 0, "rows changed in the move:\n%s\n->\n%s", rows, moved);
    ck_assert_msg(!eu_it_pg_db_exists(ded_db), "database %s still exists", ded_db);
    ck_assert_int_eq(
        eu_it_pg_exec_long(w.s->name, "SELECT count(*) FROM placements WHERE kind = 'dedicated'"),
        0);
    views(&w, after);
    views_expect_same(before, after, NULL, NULL);
    views_free(after);
    free(moved);

    /* Where it is already, and where nothing is. */
    move(w.s, w.host, "main", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    move(w.s, w.host, "nowhere", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/m.example/move", "{}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    move(w.s, "unknown.example", "main", &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    /* A dedicated placement holding a tenant takes no second one. */
    move(w.s, n.host, "dedicated", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    move(w.s, w.host, "dedicated-n.example", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    move(w.s, n.host, "main", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    char *neighbour_after = fingerprint(main_db, nid);
    ck_assert_str_eq(neighbour, neighbour_after);

    free(neighbour_after);
    views_free(before);
    free(rows);
    free(ded_db);
    free(neighbour);
    free(nid);
    free(id);
    free(main_db);
    population_free(&w);
    population_free(&n);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(w.s), 0);
    eu_it_server_free(w.s);
}
END_TEST

/* ------------------------------------------------------- export, import */

START_TEST(test_export_import)
{
    struct population w = {.host = "src.example"};
    struct eu_it_resp r = {0};
    char want[400];
    w.s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(w.s, w.host, "Source"));
    populate(&w);
    char *db = eu_it_tenant_database(w.s, w.host);
    char *id = eu_it_tenant_id(w.s, w.host);
    char *rows = fingerprint(db, id);
    char *before[NVIEWS], *after[NVIEWS];
    views(&w, before);

    eu_it_admin(w.s, "POST", "/admin/v1/tenants/src.example/export", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    EU_IT_EXPECT_JINT(&r, "tables.accounts", 3);
    EU_IT_EXPECT_JINT(&r, "tables.follows", 3);
    ck_assert_int_gt(json_integer_value(json_object_get(r.json, "rows")), 20);
    const char *path = eu_it_json_str(&r, "path");
    snprintf(want, sizeof(want), "%s/archives/src.example-", w.s->dir);
    ck_assert_msg(path && strncmp(path, want, strlen(want)) == 0, "archive at %s", path);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    json_error_t jerr;
    json_t *archive = json_load_file(path, 0, &jerr);
    ck_assert_msg(archive != NULL, "%s: %s", path, jerr.text);
    ck_assert_str_eq(json_string_value(json_object_get(archive, "format")), "eunha-tenant-archive");
    ck_assert_int_eq(json_integer_value(json_object_get(archive, "schema_version")),
                     eu_migrate_tenant_latest());
    ck_assert_str_eq(json_string_value(eu_it_jpath(archive, "tenant.domain")), "src.example");
    ck_assert_int_eq(json_array_size(eu_it_jpath(archive, "tables.accounts")), 3);
    json_decref(archive);
    /* Exporting changes nothing. */
    char *still = fingerprint(db, id);
    ck_assert_str_eq(rows, still);
    free(still);

    /* By name in the archive directory, under another domain. */
    char body[600];
    snprintf(body, sizeof(body), "{\"path\":\"%s\",\"domain\":\"Copy.Example\"}",
             strrchr(path, '/') + 1);
    char *file = strdup(path);
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/import", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    EU_IT_EXPECT_JSTR(&r, "domain", "copy.example");
    EU_IT_EXPECT_JSTR(&r, "title", "Source");
    EU_IT_EXPECT_JSTR(&r, "placement", "main");
    ck_assert_str_ne(eu_it_json_str(&r, "id"), id);
    char *copy_id = strdup(eu_it_json_str(&r, "id"));
    char *copied = fingerprint(db, copy_id);
    ck_assert_msg(strcmp(rows, copied) == 0, "the copy differs:\n%s\n->\n%s", rows, copied);

    /* Same content and tokens under the new domain; the original goes on. */
    struct population c = w;
    c.host = "copy.example";
    views(&c, after);
    views_expect_same(before, after, "src.example", "copy.example");
    views_free(after);
    views(&w, after);
    views_expect_same(before, after, NULL, NULL);
    views_free(after);
    expect(&c, "POST", "/api/v1/statuses", c.alice, "{\"status\":\"only in the copy\"}", 200);
    char *src_after = fingerprint(db, id);
    ck_assert_str_eq(rows, src_after);
    free(src_after);

    /* Its own domain is taken, and so is the one just imported. */
    snprintf(body, sizeof(body), "{\"path\":\"%s\"}", file);
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/import", body, &r);
    EU_IT_EXPECT_ERROR(&r, 409);
    /* Into a dedicated placement, by absolute path. */
    snprintf(body, sizeof(body),
             "{\"path\":\"%s\",\"domain\":\"big.example\",\"placement\":\"dedicated\"}", file);
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/import", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    EU_IT_EXPECT_JSTR(&r, "placement", "dedicated-big.example");
    char *big = fingerprint(eu_it_json_str(&r, "database"), eu_it_json_str(&r, "id"));
    ck_assert_str_eq(rows, big);
    free(big);

    free(copied);
    free(copy_id);
    free(file);
    views_free(before);
    free(rows);
    free(id);
    free(db);
    population_free(&w);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(w.s), 0);
    eu_it_server_free(w.s);
}
END_TEST

/* Writes text to NAME in the server's archive directory. */
static void
put_archive(struct eu_it_server *s, const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/archives", s->dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/archives/%s", s->dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void
import_refused(struct eu_it_server *s, const char *body, const char *error)
{
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", "/admin/v1/tenants/import", body, &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    if (error)
        EU_IT_EXPECT_JSTR(&r, "error", error);
    eu_it_admin(s, "GET", "/admin/v1/tenants/new.example", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(eu_it_pg_exec_long(s->name, "SELECT count(*) FROM tenants"), 1);
    ck_assert_int_eq(eu_it_pg_exec_long(s->name, "SELECT count(*) FROM placements"), 1);
    eu_it_resp_free(&r);
}

/* Archives that must not be imported create nothing. */
START_TEST(test_import_refused)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    char body[600], msg[200];
    json_decref(eu_it_tenant_create(s, "here.example", "Here"));

    put_archive(s, "future.json",
                "{\"format\":\"eunha-tenant-archive\",\"version\":1,\"schema_version\":9999,"
                "\"tenant\":{\"domain\":\"new.example\"},\"tables\":{\"accounts\":[]}}");
    snprintf(msg, sizeof(msg),
             "Validation failed: the archive's schema version 9999 is newer than this server's %d",
             eu_migrate_tenant_latest());
    import_refused(s, "{\"path\":\"future.json\"}", msg);
    import_refused(s, "{\"path\":\"future.json\",\"placement\":\"dedicated\"}", msg);

    /* Outside the archive directory, however it is named. */
    import_refused(s, "{\"path\":\"../eunha.toml\",\"domain\":\"new.example\"}", NULL);
    snprintf(body, sizeof(body), "{\"path\":\"%s\",\"domain\":\"new.example\"}", s->config_path);
    import_refused(s, body, NULL);
    import_refused(s, "{\"path\":\"missing.json\",\"domain\":\"new.example\"}", NULL);

    put_archive(s, "junk.json", "[1, 2");
    import_refused(s, "{\"path\":\"junk.json\",\"domain\":\"new.example\"}", NULL);
    put_archive(s, "table.json",
                "{\"format\":\"eunha-tenant-archive\",\"version\":1,\"schema_version\":1,"
                "\"tenant\":{\"domain\":\"new.example\"},\"tables\":{\"pg_authid\":[]}}");
    import_refused(s, "{\"path\":\"table.json\"}", NULL);
    /* A column that is not one: found once the tenant exists, which goes
     * again. */
    put_archive(s, "column.json",
                "{\"format\":\"eunha-tenant-archive\",\"version\":1,\"schema_version\":1,"
                "\"tenant\":{\"domain\":\"new.example\"},\"tables\":{\"accounts\":[{\"id\":1,"
                "\"username\":\"a\",\"x\\\") SELECT 1; DROP TABLE accounts; --\":1}]}}");
    import_refused(s, "{\"path\":\"column.json\"}", NULL);
    /* Rows the schema refuses: a status whose account is not there. */
    put_archive(s, "orphan.json",
                "{\"format\":\"eunha-tenant-archive\",\"version\":1,\"schema_version\":1,"
                "\"tenant\":{\"domain\":\"new.example\"},\"tables\":{\"statuses\":[{\"id\":1,"
                "\"account_id\":2}]}}");
    import_refused(s, "{\"path\":\"orphan.json\"}", NULL);
    ck_assert_int_eq(eu_it_pg_exec_long(s->name, "SELECT count(*) FROM tenants"), 1);

    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static Suite *
lifecycle_suite(void)
{
    Suite *s = suite_create("integration.lifecycle");
    EU_IT_ADD_TCASE(s, test_move, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_export_import, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_import_refused, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(lifecycle_suite());
}
