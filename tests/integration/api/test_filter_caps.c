/*
 * Caps on one account's filters (migrations/tenant/0015_filter_caps.sql):
 * 100 filters, 300 keywords and 16 KiB of keyword text. Past each, the API
 * answers 422 with the reason and nothing is written; other accounts are
 * not held to what one account holds.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "caps.example"

static struct eu_it_server *srv;
static char *tid, *db;

static long
count(const char *sql_fmt, const char *account)
{
    char sql[400];
    snprintf(sql, sizeof(sql), sql_fmt, tid, account);
    return eu_it_pg_exec_long(db, sql);
}

#define FILTERS_OF                                                                                 \
    "SELECT count(*) FROM filters f JOIN accounts a ON a.tenant_id = f.tenant_id"                  \
    " AND a.id = f.account_id WHERE f.tenant_id = %s AND a.username = '%s'"
#define KEYWORDS_OF                                                                                \
    "SELECT count(*) FROM filter_keywords k JOIN filters f ON f.tenant_id = k.tenant_id"           \
    " AND f.id = k.filter_id JOIN accounts a ON a.tenant_id = f.tenant_id AND a.id = f.account_id" \
    " WHERE k.tenant_id = %s AND a.username = '%s'"

/* POST /api/v2/filters with n keywords of len bytes each; returns the
 * status and leaves the filter's id in id (when 200). */
static long
create(const char *token, int n, int len, char *id, size_t idlen)
{
    size_t cap = 200 + (size_t)n * ((size_t)len + 40);
    char *body = malloc(cap), *o = body;
    o += sprintf(o, "{\"title\":\"t\",\"context\":[\"home\"],\"keywords_attributes\":[");
    for (int i = 0; i < n; i++) {
        o += sprintf(o, "%s{\"keyword\":\"%03d", i ? "," : "", i);
        for (int j = 3; j < len; j++)
            *o++ = 'k';
        o += sprintf(o, "\"}");
    }
    sprintf(o, "]}");
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "POST", token, body, "/api/v2/filters");
    long status = r.status;
    if (status == 200 && id)
        snprintf(id, idlen, "%s", eu_it_json_str(&r, "id"));
    if (status == 422)
        ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "Validation failed: "));
    eu_it_resp_free(&r);
    free(body);
    return status;
}

START_TEST(test_filter_caps)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Caps"));
    tid = eu_it_tenant_id(srv, HOST);
    db = eu_it_tenant_database(srv, HOST);
    const char *names[] = {"alice", "bob", "carol"};
    char *tok[3];
    for (int i = 0; i < 3; i++) {
        free(eu_it_account_seed(srv, HOST, names[i]));
        tok[i] = eu_it_user_token(srv, HOST, names[i], "read write");
    }

    /* 100 filters, then no more. */
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(create(tok[0], 0, 0, NULL, 0), 200);
    ck_assert_int_eq(create(tok[0], 0, 0, NULL, 0), 422);
    ck_assert_int_eq(count(FILTERS_OF, "alice"), 100);

    /* 300 keywords, then no more, by any path. */
    char id[32];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(create(tok[1], 100, 8, id, sizeof(id)), 200);
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "POST", tok[1], "{\"keyword\":\"one more\"}",
                "/api/v2/filters/%s/keywords", id);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "300 keywords"));
    ck_assert_int_eq(create(tok[1], 1, 8, NULL, 0), 422);
    ck_assert_int_eq(count(KEYWORDS_OF, "bob"), 300);
    ck_assert_int_eq(count(FILTERS_OF, "bob"), 3);

    /* 16 KiB of keyword text: 32 of 500 bytes fit, a 33rd does not. */
    ck_assert_int_eq(create(tok[2], 32, 500, id, sizeof(id)), 200);
    char big[560];
    snprintf(big, sizeof(big), "{\"keyword\":\"%0500d\"}", 7);
    eu_it_callf(srv, &r, HOST, "POST", tok[2], big, "/api/v2/filters/%s/keywords", id);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(count(KEYWORDS_OF, "carol"), 32);
    /* A short one still fits. */
    eu_it_callf(srv, &r, HOST, "POST", tok[2], "{\"keyword\":\"short\"}",
                "/api/v2/filters/%s/keywords", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);

    for (int i = 0; i < 3; i++)
        free(tok[i]);
    free(tid);
    free(db);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("filter_caps");
    EU_IT_ADD_TCASE(s, test_filter_caps, TIMEOUT);
    return eu_it_run_suite(s);
}
