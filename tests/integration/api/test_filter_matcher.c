/*
 * Filters compiled once per account (src/social/kwmatch.c, the rules cache in
 * src/social/filters_match.c): an account at the 300-keyword cap has a status
 * filtered by its last keyword with the right keyword_matches, page after
 * page from one compile (as /metrics counts), and a change to a keyword
 * shows on the very next page, whether it came through the API (this
 * process drops its copy) or straight into the database as another
 * process would write it (the stamp changes).
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "matcher.example"

static struct eu_it_server *srv;

/* POST /api/v2/filters in the public context with 100 whole-word keywords
 * kwd<first>..kwd<first+99>; returns the response (caller frees). */
static void
create_filter(struct eu_it_resp *r, const char *token, const char *title, int first)
{
    char body[8192];
    size_t len = (size_t)snprintf(body, sizeof(body),
                                  "{\"title\":\"%s\",\"context\":[\"public\"],"
                                  "\"filter_action\":\"warn\",\"keywords_attributes\":[",
                                  title);
    for (int i = first; i < first + 100; i++)
        len += (size_t)snprintf(body + len, sizeof(body) - len, "%s{\"keyword\":\"kwd%03d\"}",
                                i > first ? "," : "", i);
    snprintf(body + len, sizeof(body) - len, "]}");
    eu_it_callf(srv, r, HOST, "POST", token, body, "/api/v2/filters");
    EU_IT_EXPECT_STATUS(r, 200);
}

/* The public timeline's entry for status id; NULL when absent. Borrowed
 * from r. */
static json_t *
entry(struct eu_it_resp *r, const char *token, const char *id)
{
    eu_it_callf(srv, r, HOST, "GET", token, NULL, "/api/v1/timelines/public?limit=40");
    EU_IT_EXPECT_STATUS(r, 200);
    size_t i;
    json_t *st;
    json_array_foreach(r->json, i, st)
    {
        if (strcmp(json_string_value(json_object_get(st, "id")), id) == 0)
            return st;
    }
    return NULL;
}

/* The one keyword st was filtered for ("" when not filtered). */
static const char *
matched(json_t *st)
{
    ck_assert_ptr_nonnull(st);
    json_t *f = json_object_get(st, "filtered");
    ck_assert(json_is_array(f));
    if (json_array_size(f) == 0)
        return "";
    ck_assert_int_eq(json_array_size(f), 1);
    json_t *kw = eu_it_jpath(f, "0.keyword_matches");
    ck_assert_int_eq(json_array_size(kw), 1);
    return json_string_value(json_array_get(kw, 0));
}

static char *
post(const char *token, const char *text)
{
    struct eu_it_resp r = {0};
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"%s\"}", text);
    eu_it_callf(srv, &r, HOST, "POST", token, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

START_TEST(test_filter_matcher)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Matcher"));
    char *tid = eu_it_tenant_id(srv, HOST);
    char *db = eu_it_tenant_database(srv, HOST);
    free(eu_it_account_seed(srv, HOST, "alice"));
    free(eu_it_account_seed(srv, HOST, "bob"));
    char *alice = eu_it_user_token(srv, HOST, "alice", "read write");
    char *bob = eu_it_user_token(srv, HOST, "bob", "read write");

    char *plain = post(bob, "nothing to see here");
    char *last = post(bob, "this one says KWD299, loudly");
    char *near = post(bob, "kwd2990 and xkwd299 are not whole words");

    struct eu_it_resp r = {0};
    char fid[3][32];
    for (int i = 0; i < 3; i++) {
        char title[16];
        snprintf(title, sizeof(title), "f%d", i);
        create_filter(&r, alice, title, 100 * i);
        snprintf(fid[i], sizeof(fid[i]), "%s", eu_it_json_str(&r, "id"));
    }
    /* The 300th keyword: the last of the last filter. */
    EU_IT_EXPECT_JSTR(&r, "keywords.99.keyword", "kwd299");
    char *kid = strdup(json_string_value(eu_it_jpath(r.json, "keywords.99.id")));

    /* Six pages: the first compiles alice's filters, the other five use
     * them as kept. */
    double compiles = eu_it_metric(srv, "eunha_filter_compiles_total");
    double hits = eu_it_metric(srv, "eunha_filter_cache_hits_total");
    for (int round = 0; round < 2; round++) {
        json_t *st = entry(&r, alice, last);
        ck_assert_str_eq(matched(st), "kwd299");
        ck_assert_str_eq(json_string_value(eu_it_jpath(st, "filtered.0.filter.id")), fid[2]);
        ck_assert_str_eq(json_string_value(eu_it_jpath(st, "filtered.0.filter.title")), "f2");
        ck_assert(json_is_null(eu_it_jpath(st, "filtered.0.status_matches")));
        ck_assert_str_eq(matched(entry(&r, alice, plain)), "");
        ck_assert_str_eq(matched(entry(&r, alice, near)), "");
    }
    ck_assert_double_eq(eu_it_metric(srv, "eunha_filter_compiles_total"), compiles + 1);
    ck_assert_double_eq(eu_it_metric(srv, "eunha_filter_cache_hits_total"), hits + 5);
    ck_assert_double_ge(eu_it_metric(srv, "eunha_filter_cache_entries"), 1);
    /* Another viewer's pages carry none of alice's filters. */
    ck_assert_str_eq(matched(entry(&r, bob, last)), "");

    /* An edit through the API shows on the next page. */
    eu_it_callf(srv, &r, HOST, "PUT", alice, "{\"keyword\":\"loudly\"}",
                "/api/v2/filters/keywords/%s", kid);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(matched(entry(&r, alice, last)), "loudly");
    ck_assert_str_eq(matched(entry(&r, alice, plain)), "");
    ck_assert_double_eq(eu_it_metric(srv, "eunha_filter_compiles_total"), compiles + 2);

    /* So does one written straight to the database, as another process
     * sharing it would: nothing told this process, the stamp changed. */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "UPDATE filter_keywords SET keyword = 'nothing' WHERE tenant_id = %s AND id = %s"
             " RETURNING 1",
             tid, kid);
    free(eu_it_pg_exec(db, sql));
    ck_assert_str_eq(matched(entry(&r, alice, plain)), "nothing");
    ck_assert_str_eq(matched(entry(&r, alice, last)), "");
    ck_assert_double_eq(eu_it_metric(srv, "eunha_filter_compiles_total"), compiles + 3);

    /* And a filter deleted behind its back. */
    snprintf(sql, sizeof(sql), "DELETE FROM filters WHERE tenant_id = %s AND id = %s RETURNING 1",
             tid, fid[2]);
    free(eu_it_pg_exec(db, sql));
    ck_assert_str_eq(matched(entry(&r, alice, plain)), "");

    eu_it_resp_free(&r);
    free(kid);
    free(plain);
    free(last);
    free(near);
    free(alice);
    free(bob);
    free(tid);
    free(db);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("filter_matcher");
    EU_IT_ADD_TCASE(s, test_filter_matcher, TIMEOUT);
    return eu_it_run_suite(s);
}
