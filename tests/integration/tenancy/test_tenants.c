/*
 * Tenants end to end: the admin API creates, lists, suspends and deletes
 * tenants, and the public listener answers each Host with that tenant's own
 * instance metadata and nobody else's. Each test starts its own server on
 * fresh databases; tenants share the default pooled placement unless a test
 * asks for a dedicated one.
 */
#include "ap_peer.h"
#include "harness.h"

#include <check.h>
#include <event2/buffer.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120

static void
expect_tenant_json(const struct eu_it_resp *r, const struct eu_it_server *s, const char *domain,
                   const char *title, const char *state)
{
    const char *id = eu_it_json_str(r, "id");
    char want_db[128];

    ck_assert_msg(id && *id, "tenant id is not a non-empty string: %s", r->body);
    EU_IT_EXPECT_JSTR(r, "domain", domain);
    EU_IT_EXPECT_JSTR(r, "title", title);
    EU_IT_EXPECT_JSTR(r, "state", state);
    /* Every tenant lands in the default pooled placement. */
    snprintf(want_db, sizeof(want_db), "%s_main", s->name);
    EU_IT_EXPECT_JSTR(r, "database", want_db);
    EU_IT_EXPECT_JSTR(r, "placement", "main");
    ck_assert_msg(json_is_integer(eu_it_jpath(r->json, "max_connections")), "%s", r->body);
    ck_assert_msg(json_is_integer(eu_it_jpath(r->json, "min_connections")), "%s", r->body);
    ck_assert_msg(json_is_integer(eu_it_jpath(r->json, "acquire_timeout_seconds")), "%s", r->body);
    ck_assert_msg(json_is_integer(eu_it_jpath(r->json, "idle_timeout_seconds")), "%s", r->body);
    ck_assert_msg(eu_it_json_str(r, "created_at") != NULL, "%s", r->body);
    ck_assert_msg(eu_it_json_str(r, "updated_at") != NULL, "%s", r->body);
}

static void
post_tenant(struct eu_it_server *s, const char *body, struct eu_it_resp *r)
{
    eu_it_admin(s, "POST", "/admin/v1/tenants", body, r);
}

START_TEST(test_create_tenant)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    const char *id_a;
    char *id_a_copy;

    post_tenant(s, "{\"domain\":\"a.example\",\"title\":\"Alpha\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    expect_tenant_json(&r, s, "a.example", "Alpha", "active");
    ck_assert_msg(eu_it_pg_db_exists(eu_it_json_str(&r, "database")),
                  "placement database %s does not exist", eu_it_json_str(&r, "database"));
    id_a = eu_it_json_str(&r, "id");
    id_a_copy = strdup(id_a);

    post_tenant(s, "{\"domain\":\"b.example\",\"title\":\"Beta\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    expect_tenant_json(&r, s, "b.example", "Beta", "active");
    ck_assert_str_ne(eu_it_json_str(&r, "id"), id_a_copy);
    ck_assert(eu_it_pg_db_exists(eu_it_json_str(&r, "database")));

    free(id_a_copy);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_create_validation)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    post_tenant(s, "{\"domain\":\"not a domain!\",\"title\":\"Bad\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    post_tenant(s, "{\"domain\":\"\",\"title\":\"Empty\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    /* An address is not a host name: a tenant's actors, keys and links
     * would name a bare IP, and IPv4 forms a resolver still accepts
     * (127.1, 0x7f.0.0.1, 2130706433) are the same address. */
    static const char *const literals[] = {
        "192.0.2.1", "127.1",         "0x7f.0.0.1",  "2130706433",       "1.2.3.04",   "::1",
        "[::1]",     "[2001:db8::1]", "2001:db8::1", "::ffff:192.0.2.1", "192.0.2.1.",
    };
    for (size_t i = 0; i < sizeof(literals) / sizeof(literals[0]); i++) {
        char body[160];
        snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"title\":\"IP\"}", literals[i]);
        post_tenant(s, body, &r);
        ck_assert_msg(r.status == 422, "'%s' was answered %ld: %s", literals[i], r.status, r.body);
        EU_IT_EXPECT_ERROR(&r, 422);
        ck_assert_msg(strstr(r.body, "host name"), "%s: %s", literals[i], r.body);
    }
    /* Names that merely hold digits are still host names. */
    post_tenant(s, "{\"domain\":\"1.example\",\"title\":\"Digits\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    post_tenant(s, "{\"domain\":\"a.example\",\"title\":\"Again\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 409);

    /* The rejected requests created nothing. */
    eu_it_admin(s, "GET", "/admin/v1/tenants", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_array(r.json), "%s", r.body);
    ck_assert_uint_eq(json_array_size(r.json), 2);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_create_accounts)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    const char *id;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_admin(s, "POST", "/admin/v1/tenants/a.example/accounts",
                "{\"username\":\"alice\",\"email\":\"alice@a.example\","
                "\"password\":\"correct horse battery\",\"role\":\"user\"}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    id = eu_it_json_str(&r, "id");
    ck_assert_msg(id && *id, "account id is not a non-empty string: %s", r.body);
    EU_IT_EXPECT_JSTR(&r, "username", "alice");
    EU_IT_EXPECT_JSTR(&r, "email", "alice@a.example");
    EU_IT_EXPECT_JSTR(&r, "role", "user");
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "confirmed")), "%s", r.body);
    ck_assert_msg(eu_it_json_str(&r, "created_at") != NULL, "%s", r.body);

    eu_it_admin(s, "POST", "/admin/v1/tenants/a.example/accounts",
                "{\"username\":\"alice\",\"email\":\"other@a.example\","
                "\"password\":\"correct horse battery\",\"role\":\"user\"}",
                &r);
    EU_IT_EXPECT_ERROR(&r, 409);

    eu_it_admin(s, "POST", "/admin/v1/tenants/a.example/accounts",
                "{\"username\":\"\",\"email\":\"x@a.example\","
                "\"password\":\"correct horse battery\",\"role\":\"user\"}",
                &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    eu_it_admin(s, "POST", "/admin/v1/tenants/a.example/accounts",
                "{\"username\":\"bob\",\"email\":\"bob@a.example\","
                "\"password\":\"correct horse battery\",\"role\":\"emperor\"}",
                &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* Asserts what each instance endpoint says about one tenant. */
static void
expect_instance(struct eu_it_server *s, const char *domain, const char *title, long users)
{
    struct eu_it_resp r = {0};
    char href[256];

    eu_it_public(s, "GET", domain, "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "uri", domain);
    EU_IT_EXPECT_JSTR(&r, "title", title);
    EU_IT_EXPECT_JSTR(&r, "version", "4.3.0 (compatible; Eunha 0.1.0)");
    EU_IT_EXPECT_JINT(&r, "stats.user_count", users);
    EU_IT_EXPECT_JINT(&r, "stats.status_count", 0);
    ck_assert_msg(json_is_integer(eu_it_jpath(r.json, "stats.domain_count")), "%s", r.body);

    eu_it_public(s, "GET", domain, "/api/v2/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "domain", domain);
    EU_IT_EXPECT_JSTR(&r, "title", title);
    ck_assert_msg(json_is_integer(eu_it_jpath(r.json, "usage.users.active_month")), "%s", r.body);

    eu_it_public(s, "GET", domain, "/nodeinfo/2.0", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "version", "2.0");
    EU_IT_EXPECT_JSTR(&r, "software.name", "mastodon");
    EU_IT_EXPECT_JINT(&r, "usage.users.total", users);

    eu_it_public(s, "GET", domain, "/.well-known/nodeinfo", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "links.0.rel", "http://nodeinfo.diaspora.software/ns/schema/2.0");
    snprintf(href, sizeof(href), "http://%s/nodeinfo/2.0", domain);
    EU_IT_EXPECT_JSTR(&r, "links.0.href", href);

    eu_it_resp_free(&r);
}

START_TEST(test_instance_per_host)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    json_decref(eu_it_tenant_create(s, "b.example", "Beta"));
    eu_it_account_create(s, "a.example", "alice");
    eu_it_account_create(s, "a.example", "amber");
    eu_it_account_create(s, "b.example", "bob");

    expect_instance(s, "a.example", "Alpha", 2);
    expect_instance(s, "b.example", "Beta", 1);

    /* Nothing of B leaks into A's answers. */
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    ck_assert_ptr_null(strstr(r.body, "b.example"));
    ck_assert_ptr_null(strstr(r.body, "Beta"));

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_host_meta)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_public(s, "GET", "a.example", "/.well-known/host-meta", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "XRD") != NULL, "host-meta is not XRD: %s", r.body);
    ck_assert_msg(strstr(r.body, "a.example") != NULL, "host-meta lacks the domain: %s", r.body);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_cors_on_api)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    const char *acao;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    acao = eu_it_resp_header(&r, "Access-Control-Allow-Origin");
    ck_assert_msg(acao != NULL, "no Access-Control-Allow-Origin in:\n%s", r.headers);
    ck_assert_str_eq(acao, "*");

    eu_it_public(s, "GET", "a.example", "/api/v2/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    acao = eu_it_resp_header(&r, "Access-Control-Allow-Origin");
    ck_assert_msg(acao != NULL, "no Access-Control-Allow-Origin in:\n%s", r.headers);
    ck_assert_str_eq(acao, "*");

    /* A path of Mastodon's CORS areas that no route takes: the 404 and the
     * preflight carry CORS too, so a browser client sees the 404. */
    static const char *const unknown[] = {"/api/v1/nothing", "/api/foo", "/nodeinfo/9.9",
                                          "/.well-known/nothing"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        eu_it_public(s, "GET", "a.example", unknown[i], &r);
        EU_IT_EXPECT_ERROR(&r, 404);
        acao = eu_it_resp_header(&r, "Access-Control-Allow-Origin");
        ck_assert_msg(acao != NULL, "no CORS on GET %s:\n%s", unknown[i], r.headers);
        eu_it_public(s, "OPTIONS", "a.example", unknown[i], &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_str_eq(eu_it_resp_header(&r, "Access-Control-Max-Age"), "7200");
    }
    /* A route's other method: 405 with CORS; its preflight answered. */
    eu_it_public(s, "DELETE", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 405);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Access-Control-Allow-Origin"));
    eu_it_public(s, "OPTIONS", "a.example", "/oauth/token", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Access-Control-Allow-Origin"));
    /* Outside them: no CORS, and OPTIONS is an ordinary method. */
    eu_it_public(s, "GET", "a.example", "/users/nobody/followers", &r);
    ck_assert_ptr_null(eu_it_resp_header(&r, "Access-Control-Allow-Origin"));
    eu_it_public(s, "OPTIONS", "a.example", "/oauth/authorize", &r);
    EU_IT_EXPECT_STATUS(&r, 405);
    ck_assert_ptr_null(eu_it_resp_header(&r, "Access-Control-Allow-Origin"));

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_unknown_host)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_public(s, "GET", "nobody.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", "Unknown domain");

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_unknown_path)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_public(s, "GET", "a.example", "/api/v1/no_such_thing", &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", "Record not found");

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_wrong_method)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    const char *allow;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_public(s, "POST", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 405);
    allow = eu_it_resp_header(&r, "Allow");
    ck_assert_msg(allow != NULL, "405 without Allow header:\n%s", r.headers);
    ck_assert_msg(strstr(allow, "GET") != NULL, "Allow is '%s'", allow);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_list_and_get)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    const char *link;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    json_decref(eu_it_tenant_create(s, "b.example", "Beta"));

    eu_it_admin(s, "GET", "/admin/v1/tenants", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_array(r.json), "%s", r.body);
    ck_assert_uint_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.domain", "a.example");
    EU_IT_EXPECT_JSTR(&r, "1.domain", "b.example");

    eu_it_admin(s, "GET", "/admin/v1/tenants?limit=1", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.domain", "a.example");
    link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "next"), "no next Link on a partial page:\n%s", r.headers);

    eu_it_admin(s, "GET", "/admin/v1/tenants?limit=1&offset=1", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.domain", "b.example");

    eu_it_admin(s, "GET", "/admin/v1/tenants/b.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_tenant_json(&r, s, "b.example", "Beta", "active");
    ck_assert_msg(json_is_object(eu_it_jpath(r.json, "pool")), "no pool object: %s", r.body);
    ck_assert_msg(json_is_integer(eu_it_jpath(r.json, "pool.open")), "%s", r.body);
    ck_assert_msg(json_is_integer(eu_it_jpath(r.json, "pool.busy")), "%s", r.body);
    ck_assert_msg(json_is_integer(eu_it_jpath(r.json, "pool.waiting")), "%s", r.body);

    eu_it_admin(s, "GET", "/admin/v1/tenants/nobody.example", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_suspend_and_resume)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    json_decref(eu_it_tenant_create(s, "b.example", "Beta"));

    eu_it_admin(s, "PATCH", "/admin/v1/tenants/a.example", "{\"state\":\"suspended\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "suspended");
    EU_IT_EXPECT_JSTR(&r, "domain", "a.example");

    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "This instance has been suspended");
    /* Other tenants are unaffected. */
    eu_it_public(s, "GET", "b.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_admin(s, "PATCH", "/admin/v1/tenants/a.example", "{\"state\":\"active\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "active");
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Alpha");

    /* Pool settings are stored and echoed; nonsense is refused. */
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/a.example",
                "{\"max_connections\":3,\"acquire_timeout_seconds\":2}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "max_connections", 3);
    EU_IT_EXPECT_JINT(&r, "acquire_timeout_seconds", 2);
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/a.example", "{\"state\":\"bogus\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/a.example", "{\"max_connections\":-1}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(s, "GET", "/admin/v1/tenants/a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "active");
    EU_IT_EXPECT_JINT(&r, "max_connections", 3);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_admin_requires_token)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    const char *create = "{\"domain\":\"a.example\",\"title\":\"Alpha\"}";

    ck_assert_int_eq(eu_it_http(&r, "GET", s->admin_port, NULL, "/admin/v1/tenants", NULL, NULL),
                     0);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(
        eu_it_http(&r, "GET", s->admin_port, NULL, "/admin/v1/tenants", "wrong-token", NULL), 0);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(eu_it_http(&r, "POST", s->admin_port, NULL, "/admin/v1/tenants", NULL, create),
                     0);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(eu_it_http(&r, "POST", s->admin_port, NULL, "/admin/v1/tenants",
                                "test-admin-token-but-longer", create),
                     0);
    EU_IT_EXPECT_ERROR(&r, 401);

    /* None of them created anything. */
    eu_it_admin(s, "GET", "/admin/v1/tenants", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_array(r.json), "%s", r.body);
    ck_assert_uint_eq(json_array_size(r.json), 0);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* Keys in Redis under the tenant's prefix "<server name>:{t<id>}:". */
static long
redis_keys_of(const struct eu_it_server *s, const char *id)
{
    const char *url = getenv("EUNHA_TEST_REDIS_URL");
    char host[128] = "127.0.0.1", match[200];
    int port = 6379;
    if (url)
        sscanf(url, "redis://%127[^:]:%d", host, &port);
    redisContext *c = redisConnect(host, port);
    ck_assert_msg(c && !c->err, "cannot connect to redis %s:%d", host, port);
    snprintf(match, sizeof(match), "%s:{t%s}:*", s->name, id);
    redisReply *r = redisCommand(c, "KEYS %s", match);
    ck_assert(r && r->type == REDIS_REPLY_ARRAY);
    long n = (long)r->elements;
    freeReplyObject(r);
    redisFree(c);
    return n;
}

/* Waits up to 20 s for the admin API to stop knowing domain. */
static void
wait_gone(struct eu_it_server *s, const char *domain)
{
    struct eu_it_resp r = {0};
    char path[256];
    long long deadline = eu_it_now_ms() + 20000;
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s", domain);
    do {
        eu_it_admin(s, "GET", path, NULL, &r);
        if (r.status == 404)
            break;
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "state", "deleting");
        eu_it_sleep_ms(100);
    } while (eu_it_now_ms() < deadline);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_resp_free(&r);
}

START_TEST(test_delete_tenant)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    json_t *t = eu_it_tenant_create(s, "a.example", "Alpha");
    json_decref(eu_it_tenant_create(s, "b.example", "Beta"));
    char db[128], id[32], sql[512];

    snprintf(db, sizeof(db), "%s", json_string_value(json_object_get(t, "database")));
    snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(t, "id")));
    json_decref(t);
    /* Both tenants hold rows in the shared placement. */
    eu_it_account_create(s, "a.example", "alice");
    eu_it_account_create(s, "b.example", "alice");
    char *token = eu_it_user_token(s, "a.example", "alice", "read write");
    ck_assert_int_eq(eu_it_http(&r, "POST", s->public_port, "a.example", "/api/v1/statuses", token,
                                "{\"status\":\"going away\"}"),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The home feed and rate-limit window live in Redis under its prefix. */
    ck_assert_int_eq(
        eu_it_http(&r, "GET", s->public_port, "a.example", "/api/v1/timelines/home", token, NULL),
        0);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(token);
    ck_assert_int_ge(eu_it_tenant_rows(db, id), 4);
    ck_assert_int_ge(redis_keys_of(s, id), 1);

    eu_it_admin(s, "DELETE", "/admin/v1/tenants/a.example", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(s, "DELETE", "/admin/v1/tenants/a.example?confirm=b.example", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    /* Refused deletes leave the tenant serving. */
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_admin(s, "DELETE", "/admin/v1/tenants/a.example?confirm=a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    EU_IT_EXPECT_JSTR(&r, "state", "deleting");

    /* It stops answering at once, while its rows are still going. */
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", "Unknown domain");
    wait_gone(s, "a.example");
    ck_assert_int_eq(eu_it_tenant_rows(db, id), 0);
    ck_assert_int_eq(redis_keys_of(s, id), 0);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM tenants WHERE id = %s", id);
    ck_assert_int_eq(eu_it_pg_exec_long(s->name, sql), 0);

    /* The neighbour in the same placement kept everything. */
    eu_it_public(s, "GET", "b.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);
    ck_assert(eu_it_pg_db_exists(db));

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ---- the Delete of a deleted tenant's accounts ---- */

/* What the remote follower's server got at its shared inbox. */
static struct {
    pthread_mutex_t mu;
    int status; /* the answer to a delivery */
    int posts;
    char actors[8][256];  /* each Delete's actor */
    char objects[8][256]; /* and object */
    bool signed_[8];
} inbox = {.mu = PTHREAD_MUTEX_INITIALIZER};

static bool
inbox_take(struct peer *p, struct evhttp_request *req)
{
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST ||
        strcmp(evhttp_request_get_uri(req), "/inbox") != 0)
        return false;
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    char *body = calloc(1, n + 1);
    evbuffer_copyout(in, body, n);
    json_t *a = json_loads(body, 0, NULL);
    free(body);
    const char *sig = evhttp_find_header(evhttp_request_get_input_headers(req), "Signature");
    pthread_mutex_lock(&inbox.mu);
    int status = inbox.status;
    if (status == 202 && inbox.posts < 8 && a &&
        strcmp(json_string_value(json_object_get(a, "type")) ?: "", "Delete") == 0) {
        int i = inbox.posts++;
        snprintf(inbox.actors[i], sizeof(inbox.actors[i]), "%s",
                 json_string_value(json_object_get(a, "actor")) ?: "");
        snprintf(inbox.objects[i], sizeof(inbox.objects[i]), "%s",
                 json_string_value(json_object_get(a, "object")) ?: "");
        inbox.signed_[i] = sig && strstr(sig, "keyId=\"http://a.example/users/alice#main-key\"");
    }
    pthread_mutex_unlock(&inbox.mu);
    json_decref(a);
    peer_reply(req, status, "application/json", "{}");
    return true;
}

static int
inbox_posts(void)
{
    pthread_mutex_lock(&inbox.mu);
    int n = inbox.posts;
    pthread_mutex_unlock(&inbox.mu);
    return n;
}

/*
 * Deleting a tenant: its local account's remote follower gets the Delete of
 * her actor, signed with her key, before the tenant's rows go. While the
 * follower's server fails, the rows wait (a grace of 60 s here) with the
 * actor answering 410 and the rest 404; once it takes the Delete the purge
 * completes. The decoy tenant in the same placement, whose alice has the
 * same follower, sends nothing and keeps everything.
 */
START_TEST(test_delete_tenant_sends_delete)
{
    struct peer *peer = peer_start();
    peer->intercept = inbox_take;
    inbox.status = 500;
    inbox.posts = 0;
    const char *toml = PEER_TOML "[workers]\ntenant_delete_grace_seconds = 60\n"
                                 "job_backoff_base_seconds = 1\nqueue_idle_poll_seconds = 1\n";
    struct eu_it_server *s = eu_it_server_start(toml);
    /* A second process of the fleet on the same databases. */
    struct eu_it_opts o2 = {.name = s->name, .extra_toml = toml};
    struct eu_it_server *s2 = eu_it_server_start_opts(&o2);
    s2->keep_databases = true; /* s drops them */
    struct eu_it_resp r = {0};
    char db[128], id[32], bid[32], uri[128];
    json_t *t = eu_it_tenant_create(s, "a.example", "Alpha");
    snprintf(db, sizeof(db), "%s", json_string_value(json_object_get(t, "database")));
    snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(t, "id")));
    json_decref(t);
    t = eu_it_tenant_create(s, "b.example", "Beta");
    snprintf(bid, sizeof(bid), "%s", json_string_value(json_object_get(t, "id")));
    json_decref(t);
    snprintf(uri, sizeof(uri), "%s/users/peer", peer->origin);
    const char *tids[] = {id, bid}, *hosts[] = {"a.example", "b.example"};
    for (int i = 0; i < 2; i++) {
        eu_it_account_create(s, hosts[i], "alice");
        char *alice = eu_it_account_id(s, hosts[i], "alice");
        char *fan = eu_it_remote_account(db, tids[i], uri, true);
        free(eu_it_pg_execf(db,
                            "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                            " VALUES (%s, %s, %s) RETURNING 1",
                            tids[i], fan, alice));
        free(fan);
        free(alice);
    }
    long decoy_rows = eu_it_tenant_rows(db, bid);

    eu_it_admin(s, "DELETE", "/admin/v1/tenants/a.example?confirm=a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    EU_IT_EXPECT_JSTR(&r, "state", "deleting");

    /* The follower's server fails the delivery: the rows wait. */
    long long until = eu_it_now_ms() + 20000;
    long failed = 0;
    while (eu_it_now_ms() < until && !failed) {
        failed =
            eu_it_pg_execf_long(db,
                                "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                " AND kind = 'ap_deliver' AND state = 'ready'"
                                " AND payload->'activity'->>'type' = 'Delete'"
                                " AND payload->>'inbox' = '%s/inbox' AND last_error IS NOT NULL",
                                id, peer->origin);
        if (!failed)
            eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(failed, 1);
    eu_it_sleep_ms(1500); /* a few of the farewell's looks */
    ck_assert_int_eq(inbox_posts(), 0);
    ck_assert_int_ge(eu_it_tenant_rows(db, id), 3);
    eu_it_admin(s, "GET", "/admin/v1/tenants/a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "deleting");
    EU_IT_EXPECT_JSTR(&r, "deletion.phase", "announcing");
    /* Its actor is gone for whoever checks the Delete, in either process
     * (the second learns the state from the control row); the rest is
     * unknown. */
    eu_it_public(s, "GET", "a.example", "/users/alice", &r);
    EU_IT_EXPECT_ERROR(&r, 410);
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", "Unknown domain");
    until = eu_it_now_ms() + 10000;
    do {
        eu_it_public(s2, "GET", "a.example", "/users/alice", &r);
        if (r.status != 410)
            eu_it_sleep_ms(100);
    } while (r.status != 410 && eu_it_now_ms() < until);
    EU_IT_EXPECT_ERROR(&r, 410);
    eu_it_public(s2, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_public(s2, "GET", "b.example", "/api/v1/accounts/lookup?acct=alice", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_server_free(s2);
    eu_it_public(s, "GET", "b.example", "/api/v1/accounts/lookup?acct=alice", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "alice");

    /* It takes the Delete now; then the purge completes. */
    pthread_mutex_lock(&inbox.mu);
    inbox.status = 202;
    pthread_mutex_unlock(&inbox.mu);
    /* Its retry is due (not in Mastodon's 16 s and more). */
    free(eu_it_pg_execf(db,
                        "UPDATE jobs SET run_at = now() WHERE tenant_id = %s"
                        " AND kind = 'ap_deliver' RETURNING 1",
                        id));
    wait_gone(s, "a.example");
    ck_assert_int_eq(inbox_posts(), 1);
    ck_assert_str_eq(inbox.actors[0], "http://a.example/users/alice");
    ck_assert_str_eq(inbox.objects[0], "http://a.example/users/alice");
    ck_assert_msg(inbox.signed_[0], "the Delete was not signed with alice's key");
    ck_assert_int_eq(eu_it_tenant_rows(db, id), 0);
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM tenants WHERE id = %s", id);
    ck_assert_int_eq(eu_it_pg_exec_long(s->name, sql), 0);
    eu_it_public(s, "GET", "a.example", "/users/alice", &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* The decoy sent nothing, and kept its rows. */
    ck_assert_int_eq(eu_it_tenant_rows(db, bid), decoy_rows);
    ck_assert_int_eq(eu_it_pg_execf_long(db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND delete_sent_at IS NOT NULL",
                                         bid),
                     0);
    eu_it_public(s, "GET", "b.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    peer_stop(peer);
}
END_TEST

/* A follower's server that never takes the Delete holds the rows for the
 * grace only (3 s here): the purge then completes all the same. */
START_TEST(test_delete_tenant_grace_ends)
{
    struct peer *peer = peer_start();
    peer->intercept = inbox_take;
    inbox.status = 500;
    inbox.posts = 0;
    struct eu_it_server *s = eu_it_server_start(
        PEER_TOML "[workers]\ntenant_delete_grace_seconds = 3\nqueue_idle_poll_seconds = 1\n");
    struct eu_it_resp r = {0};
    char db[128], id[32], uri[128];
    json_t *t = eu_it_tenant_create(s, "a.example", "Alpha");
    snprintf(db, sizeof(db), "%s", json_string_value(json_object_get(t, "database")));
    snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(t, "id")));
    json_decref(t);
    snprintf(uri, sizeof(uri), "%s/users/peer", peer->origin);
    eu_it_account_create(s, "a.example", "alice");
    char *alice = eu_it_account_id(s, "a.example", "alice");
    char *fan = eu_it_remote_account(db, id, uri, true);
    free(eu_it_pg_execf(db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                        " VALUES (%s, %s, %s) RETURNING 1",
                        id, fan, alice));
    free(fan);
    free(alice);

    long long t0 = eu_it_now_ms();
    eu_it_admin(s, "DELETE", "/admin/v1/tenants/a.example?confirm=a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    wait_gone(s, "a.example");
    ck_assert_int_ge(eu_it_now_ms() - t0, 2000);
    ck_assert_int_eq(inbox_posts(), 0);
    ck_assert_int_eq(eu_it_tenant_rows(db, id), 0);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    peer_stop(peer);
}
END_TEST

/* "placement": "dedicated" makes a database of the tenant's own from the
 * template; deleting the tenant drops it. A named placement that does not
 * exist is refused and makes nothing. */
START_TEST(test_dedicated_placement)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    char db[128], want[160];

    post_tenant(s, "{\"domain\":\"x.example\",\"placement\":\"nowhere\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(s, "GET", "/admin/v1/tenants/x.example", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    post_tenant(s, "{\"domain\":\"big.example\",\"placement\":\"dedicated\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    EU_IT_EXPECT_JSTR(&r, "placement", "dedicated-big.example");
    snprintf(db, sizeof(db), "%s", eu_it_json_str(&r, "database"));
    snprintf(want, sizeof(want), "%s_p", s->name);
    ck_assert_msg(strncmp(db, want, strlen(want)) == 0, "database %s", db);
    ck_assert(eu_it_pg_db_exists(db));
    /* A dedicated placement takes no second tenant. */
    post_tenant(s, "{\"domain\":\"small.example\",\"placement\":\"dedicated-big.example\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    eu_it_account_create(s, "big.example", "alice");
    eu_it_public(s, "GET", "big.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);
    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT count(*) FROM accounts"), 1);

    eu_it_admin(s, "DELETE", "/admin/v1/tenants/big.example?confirm=big.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    wait_gone(s, "big.example");
    ck_assert_msg(!eu_it_pg_db_exists(db), "database %s still exists after DELETE", db);
    ck_assert_int_eq(
        eu_it_pg_exec_long(s->name, "SELECT count(*) FROM placements WHERE kind = 'dedicated'"), 0);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_healthz)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    ck_assert_int_eq(eu_it_http(&r, "GET", s->admin_port, NULL, "/healthz", NULL, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "status", "ok");

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_metrics)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    double v;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    json_decref(eu_it_tenant_create(s, "b.example", "Beta"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    ck_assert_int_eq(eu_it_http(&r, "GET", s->admin_port, NULL, "/metrics", NULL, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 401);

    eu_it_admin(s, "GET", "/metrics", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_tenants_loaded", &v),
                  "no eunha_tenants_loaded in:\n%s", r.body);
    ck_assert_msg(v == 2.0, "eunha_tenants_loaded is %g, want 2", v);
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_process_threads", &v),
                  "no eunha_process_threads in:\n%s", r.body);
    /* The loop, the CPU pool and the two file threads, with one to spare. */
    ck_assert_msg(v >= 1.0 && v <= EU_IT_CPU_THREADS + 4,
                  "eunha_process_threads is %g with cpu_threads=%d", v, EU_IT_CPU_THREADS);
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_process_resident_bytes", &v) && v > 0,
                  "no positive eunha_process_resident_bytes in:\n%s", r.body);
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_tenant_pool_open{tenant=\"a.example\"}", &v),
                  "no pool gauge for a.example in:\n%s", r.body);
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_http_requests_total{class=\"2xx\"}", &v) &&
                      v >= 1.0,
                  "no 2xx request count in:\n%s", r.body);
    /* The outbound client is made at start-up and idle. */
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_fetch_requests_in_flight", &v) && v == 0,
                  "no idle eunha_fetch_requests_in_flight in:\n%s", r.body);
    ck_assert_msg(eu_it_metric_value(r.body, "eunha_fetch_failures_total{error=\"timeout\"}", &v) &&
                      v == 0,
                  "no eunha_fetch_failures_total in:\n%s", r.body);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static Suite *
tenants_suite(void)
{
    Suite *s = suite_create("integration.tenants");

    EU_IT_ADD_TCASE(s, test_create_tenant, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_create_validation, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_create_accounts, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_instance_per_host, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_host_meta, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_cors_on_api, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_unknown_host, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_unknown_path, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_wrong_method, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_list_and_get, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_suspend_and_resume, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_admin_requires_token, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_delete_tenant, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_delete_tenant_sends_delete, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_delete_tenant_grace_ends, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_dedicated_placement, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_healthz, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_metrics, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(tenants_suite());
}
