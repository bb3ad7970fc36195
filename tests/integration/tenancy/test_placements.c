/*
 * Placements on more than one PostgreSQL server (issue 30, item 1): the
 * test starts a second PostgreSQL of its own (scripts/lib/services.sh, as
 * scripts/test.sh starts the first), registers a placement on it through
 * /admin/v1/placements, and checks that:
 *   - bad registrations are refused with 422 (bad fields, a server or a
 *     Redis that does not answer) or 409 (a name taken) and add nothing;
 *   - a good one creates and migrates its database on that server;
 *   - new tenants go to the open pooled placement with the most room, a
 *     draining or full one takes none (named or not), capacity and state
 *     change through PATCH;
 *   - a tenant there keeps its rows on that server only, beside a decoy
 *     tenant in the same placement that sees none of them;
 *   - a placement holding tenants cannot be retired, an empty one can.
 */
#include "fleet.h"
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eunha/migrate.h"

#define TIMEOUT 240

static struct eu_it_extra pg2;

static void
post_placement(struct eu_it_server *s, struct eu_it_resp *r, const char *body)
{
    eu_it_admin(s, "POST", "/admin/v1/placements", body, r);
}

static long
placements_count(struct eu_it_server *s)
{
    struct eu_it_resp r = {0};
    eu_it_admin(s, "GET", "/admin/v1/placements", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    long n = (long)json_array_size(r.json);
    eu_it_resp_free(&r);
    return n;
}

/* Creates tenant domain (in placement when not NULL); returns the status
 * and, on 201, its placement's name in out. */
static int
create_tenant(struct eu_it_server *s, const char *domain, const char *placement, char *out,
              size_t outlen)
{
    char body[256];
    if (placement)
        snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"placement\":\"%s\"}", domain, placement);
    else
        snprintf(body, sizeof(body), "{\"domain\":\"%s\"}", domain);
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", "/admin/v1/tenants", body, &r);
    int status = (int)r.status;
    if (out)
        snprintf(out, outlen, "%s", status == 201 ? eu_it_json_str(&r, "placement") : "");
    eu_it_resp_free(&r);
    return status;
}

START_TEST(test_second_server)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    char placement[64];

    eu_it_admin(s, "GET", "/admin/v1/placements", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.name", "main");
    EU_IT_EXPECT_JSTR(&r, "0.kind", "pooled");
    EU_IT_EXPECT_JSTR(&r, "0.state", "open");
    ck_assert(json_is_null(eu_it_jpath(r.json, "0.capacity")));

    /* Bad registrations: nothing added. */
    static const char *const bad[] = {
        "{\"name\":\"Bad Name\",\"database_url\":\"postgresql://127.0.0.1/x\"}",
        "{\"name\":\"dedicated-x\",\"database_url\":\"postgresql://127.0.0.1/x\"}",
        "{\"name\":\"x\",\"kind\":\"huge\",\"database_url\":\"postgresql://127.0.0.1/x\"}",
        "{\"name\":\"x\",\"database_url\":\"host=127.0.0.1\"}",
        "{\"name\":\"x\",\"database_url\":\"not a url at all ===\"}",
        "{\"name\":\"x\",\"database_url\":\"postgresql://127.0.0.1/x\",\"capacity\":0}",
        "{\"name\":\"x\",\"database_url\":\"postgresql://127.0.0.1/x\",\"redis_url\":\"http://x\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        post_placement(s, &r, bad[i]);
        ck_assert_msg(r.status == 422, "%s: %ld %s", bad[i], r.status, r.body);
        ck_assert_msg(strstr(eu_it_json_str(&r, "error"), "Validation failed"), "%s", r.body);
    }
    post_placement(s, &r, "{\"name\":\"main\",\"database_url\":\"postgresql://127.0.0.1/x\"}");
    EU_IT_EXPECT_STATUS(&r, 409);
    /* A server that does not answer. */
    int closed = eu_it_services("eu_free_port");
    char body[512];
    snprintf(body, sizeof(body),
             "{\"name\":\"dead\",\"database_url\":\"postgresql://postgres@127.0.0.1:%d/x\"}",
             closed);
    post_placement(s, &r, body);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_msg(strstr(eu_it_json_str(&r, "error"), "cannot connect"), "%s", r.body);
    ck_assert_int_eq(placements_count(s), 1);

    /* A placement on the second server, for two tenants: not with a Redis
     * that does not answer PING. */
    eu_it_extra_pg_start(&pg2);
    snprintf(body, sizeof(body),
             "{\"name\":\"second\",\"database_url\":\"postgresql://postgres:secret@127.0.0.1:%d/"
             "eunha_second\",\"redis_url\":\"redis://127.0.0.1:%d/0\",\"capacity\":2}",
             pg2.port, closed);
    post_placement(s, &r, body);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_msg(strstr(eu_it_json_str(&r, "error"), "redis_url"), "%s", r.body);
    ck_assert_int_eq(placements_count(s), 1);
    const char *main_redis = getenv("EUNHA_TEST_REDIS_URL");
    if (!main_redis || !*main_redis)
        main_redis = "redis://127.0.0.1:6379/0";
    snprintf(body, sizeof(body),
             "{\"name\":\"second\",\"database_url\":\"postgresql://postgres:secret@127.0.0.1:%d/"
             "eunha_second\",\"redis_url\":\"%s\",\"capacity\":2}",
             pg2.port, main_redis);
    post_placement(s, &r, body);
    EU_IT_EXPECT_STATUS(&r, 201);
    EU_IT_EXPECT_JSTR(&r, "name", "second");
    EU_IT_EXPECT_JSTR(&r, "kind", "pooled");
    EU_IT_EXPECT_JSTR(&r, "database", "eunha_second");
    EU_IT_EXPECT_JSTR(&r, "state", "open");
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "capacity")), 2);
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "tenants")), 0);
    ck_assert_msg(!strstr(r.body, "secret"), "password shown: %s", r.body);
    PGconn *c2 = eu_it_extra_pg_connect(&pg2, "eunha_second");
    char *latest = eu_it_pg_query(c2, "SELECT max(version) FROM eunha_schema");
    ck_assert_int_eq(atoi(latest), eu_migrate_tenant_latest());
    free(latest);
    post_placement(s, &r, body);
    EU_IT_EXPECT_STATUS(&r, 409);

    /* main drains: new tenants go to second, until it is full. */
    eu_it_admin(s, "PATCH", "/admin/v1/placements/main", "{\"state\":\"draining\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "draining");
    eu_it_admin(s, "PATCH", "/admin/v1/placements/main", "{\"state\":\"gone\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_admin(s, "PATCH", "/admin/v1/placements/nope", "{\"state\":\"open\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(create_tenant(s, "far.example", NULL, placement, sizeof placement), 201);
    ck_assert_str_eq(placement, "second");
    ck_assert_int_eq(create_tenant(s, "decoy.example", NULL, placement, sizeof placement), 201);
    ck_assert_str_eq(placement, "second");
    ck_assert_int_eq(create_tenant(s, "third.example", NULL, NULL, 0), 422);
    ck_assert_int_eq(create_tenant(s, "third.example", "main", NULL, 0), 422);
    ck_assert_int_eq(create_tenant(s, "third.example", "second", NULL, 0), 422);
    eu_it_admin(s, "PATCH", "/admin/v1/placements/second", "{\"capacity\":3}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "tenants")), 2);
    ck_assert_int_eq(create_tenant(s, "third.example", NULL, placement, sizeof placement), 201);
    ck_assert_str_eq(placement, "second");
    /* Open again, main has the most room. */
    eu_it_admin(s, "PATCH", "/admin/v1/placements/main", "{\"state\":\"open\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(create_tenant(s, "near.example", NULL, placement, sizeof placement), 201);
    ck_assert_str_eq(placement, "main");

    /* A tenant on the second server: its rows are there and nowhere else,
     * and its decoy in the same placement sees none of them. */
    eu_it_account_create(s, "far.example", "alice");
    char *tid = eu_it_tenant_id(s, "far.example");
    char *decoy_tid = eu_it_tenant_id(s, "decoy.example");
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "WITH app AS (INSERT INTO oauth_applications (tenant_id, name, redirect_uri, scopes,"
             " client_id, client_secret_hash) VALUES (%s, 'it', 'urn:ietf:wg:oauth:2.0:oob',"
             " 'read write', 'it-far', 'secret') RETURNING id)"
             " INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash,"
             " scopes) SELECT %s, app.id, u.id, encode(sha256('far-token'), 'hex'), 'read write'"
             " FROM app, users u WHERE u.tenant_id = %s RETURNING id",
             tid, tid, tid);
    free(eu_it_pg_query(c2, sql));
    eu_it_callf(s, &r, "far.example", "POST", "far-token", "{\"status\":\"from afar\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>from afar</p>");
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", tid);
    char *n = eu_it_pg_query(c2, sql);
    ck_assert_str_eq(n, "1");
    free(n);
    char *main_db = eu_it_tenant_database(s, "near.example");
    n = eu_it_pg_exec(main_db, sql);
    ck_assert_str_eq(n, "0");
    free(n);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", decoy_tid);
    n = eu_it_pg_query(c2, sql);
    ck_assert_str_eq(n, "0");
    free(n);
    eu_it_callf(s, &r, "decoy.example", "GET", "far-token", NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_callf(s, &r, "far.example", "GET", "far-token", NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.content", "<p>from afar</p>");

    /* Several hosts with target_session_attrs=read-write (libpq's own
     * failover): the first host's database only accepts reads, as a
     * standby would, so the placement's connections go to the second. */
    {
        PGconn *c1 = eu_it_pg_connect("postgres");
        free(eu_it_pg_query(c1, "DROP DATABASE IF EXISTS eunha_multi"));
        free(eu_it_pg_query(c1, "CREATE DATABASE eunha_multi"));
        free(eu_it_pg_query(c1,
                            "ALTER DATABASE eunha_multi SET default_transaction_read_only = on"));
        PQfinish(c1);
        PGconn *c = eu_it_extra_pg_connect(&pg2, "postgres");
        free(eu_it_pg_query(c, "CREATE DATABASE eunha_multi"));
        PQfinish(c);
        char *url1 = eu_it_pg_url("postgres");
        const char *hostport = strstr(url1, "@") ? strstr(url1, "@") + 1 : url1 + 13;
        char first[64];
        snprintf(first, sizeof(first), "%.*s", (int)strcspn(hostport, "/"), hostport);
        snprintf(body, sizeof(body),
                 "{\"name\":\"multi\",\"database_url\":\"postgresql://postgres@%s,127.0.0.1:%d/"
                 "eunha_multi?target_session_attrs=read-write\",\"capacity\":1}",
                 first, pg2.port);
        free(url1);
        post_placement(s, &r, body);
        EU_IT_EXPECT_STATUS(&r, 201);
        PGconn *m2 = eu_it_extra_pg_connect(&pg2, "eunha_multi");
        latest = eu_it_pg_query(m2, "SELECT max(version) FROM eunha_schema");
        ck_assert_int_eq(atoi(latest), eu_migrate_tenant_latest());
        free(latest);
        PQfinish(m2);
        char *none =
            eu_it_pg_exec("eunha_multi", "SELECT 1 WHERE to_regclass('eunha_schema') IS NOT NULL");
        ck_assert_ptr_null(none);
        ck_assert_int_eq(create_tenant(s, "multi.example", "multi", placement, sizeof placement),
                         201);
        eu_it_callf(s, &r, "multi.example", "GET", NULL, NULL, "/api/v1/instance");
        EU_IT_EXPECT_STATUS(&r, 200);
    }

    /* Retiring: not while it holds tenants; an empty one goes. */
    eu_it_admin(s, "DELETE", "/admin/v1/placements/second", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 409);
    snprintf(body, sizeof(body),
             "{\"name\":\"spare\",\"database_url\":\"postgresql://postgres@127.0.0.1:%d/"
             "eunha_spare\"}",
             pg2.port);
    post_placement(s, &r, body);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_admin(s, "DELETE", "/admin/v1/placements/spare", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(s, "GET", "/admin/v1/placements/spare", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_admin(s, "GET", "/admin/v1/placements/second", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "tenants")), 3);

    free(tid);
    free(decoy_tid);
    free(main_db);
    PQfinish(c2);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(eu_it_pg_exec("postgres", "DROP DATABASE IF EXISTS eunha_multi WITH (FORCE)"));
    eu_it_extra_pg_stop(&pg2);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("placements");
    EU_IT_ADD_TCASE(s, test_second_server, TIMEOUT);
    return eu_it_run_suite(s);
}
