/*
 * The staff's dashboard (issue 28): POST /api/v1/admin/measures,
 * dimensions and retention counted from activity seeded through the API
 * (statuses, favourites, a reblog, a reply, reports) and in the database
 * where the API cannot date it (sign-ins, sign-ups of earlier days, a
 * remote server's account), with the exact numbers each key must give;
 * refusals without view_dashboard or the admin:read scope, bad input, and
 * a decoy tenant in the same placement whose activity is never counted.
 * Trends (scored by the timed task, a second after activity here): a tag
 * and a status trending only once the staff approved them, gone when
 * rejected, with audit rows and the same refusals.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "dash.example"
#define DECOY "decoy.example"
#define REMOTE "remote.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

/* olga the owner, mick a custom role with manage_reports only, adam an
 * admin whose token lacks the admin scopes, bob and rita users; dora owns
 * the decoy, dan is a user there. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    /* Trends scored a second after activity, from two accounts on. */
    .extra_toml = "[workers]\ntrends_refresh_seconds = 1\ntrends_min_accounts = 2\n",
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"mick", NULL, NULL, ADMIN_SCOPES},
              {"adam", NULL, NULL, "read write follow"},
              {"bob"},
              {"rita"},
              {"dora", DECOY, NULL, ADMIN_SCOPES},
              {"dan", DECOY}},
};

/* A request on host as the world's user who (NULL: nobody). */
#define call_on(w, r, host, method, who, json, ...)                                                \
    eu_it_callf((w)->s, r, host, method, eu_it_tok(w, who), json, __VA_ARGS__)

static void
expect_error_text(const struct eu_it_resp *r, long status, const char *text)
{
    EU_IT_EXPECT_ERROR(r, status);
    EU_IT_EXPECT_JSTR(r, "error", text);
}

/* The day n days before today (UTC), as YYYY-MM-DD. */
static void
day(struct world *w, int n, char out[11])
{
    char *d = eu_it_world_sql(w, "SELECT ((now() AT TIME ZONE 'UTC')::date - %d)::text", n);
    snprintf(out, 11, "%s", d);
    free(d);
}

/* Appoints olga and dora owners through the operator's API, mick a role
 * with manage_reports only and adam an admin, before their first use. */
static void
appoint(struct world *w)
{
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(w, "olga"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", DECOY,
             eu_it_id(w, "dora"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    free(eu_it_world_sql(w,
                         "INSERT INTO user_roles (tenant_id, id, name, position, permissions,"
                         " highlighted) VALUES (%s, 77, 'Reports desk', 5, 16, false)",
                         w->tid));
    free(eu_it_world_sql(w,
                         "UPDATE users SET role_id = 77 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mick")));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 2 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "adam")));
}

/* Posts text as who on host with language en; returns its id (caller
 * frees). */
static char *
post(struct world *w, const char *host, const char *who, const char *text, const char *reply_to)
{
    struct eu_it_resp r = {0};
    char body[512];
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"language\":\"en\"%s%s%s}", text,
             reply_to ? ",\"in_reply_to_id\":\"" : "", reply_to ? reply_to : "",
             reply_to ? "\"" : "");
    call_on(w, &r, host, "POST", who, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    return id;
}

/* A user of an earlier day: account and user rows whose snowflake ids
 * fall days_ago days back. Returns the user id (caller frees). */
static char *
old_user(struct world *w, const char *name, int days_ago, int n)
{
    return eu_it_world_sql(
        w,
        "WITH a AS (INSERT INTO accounts (tenant_id, id, username) VALUES (%s,"
        " eunha_day_first_id((now() AT TIME ZONE 'UTC')::date - %d) + %d, '%s') RETURNING id)"
        " INSERT INTO users (tenant_id, id, account_id, email, encrypted_password)"
        " SELECT %s, a.id, a.id, '%s@dash.example', 'x' FROM a RETURNING id",
        w->tid, days_ago, n, name, w->tid, name);
}

static void
signed_in(struct world *w, const char *user_id, int days_ago)
{
    free(eu_it_world_sql(w,
                         "INSERT INTO user_sign_in_days (tenant_id, user_id, day) VALUES (%s, %s,"
                         " (now() AT TIME ZONE 'UTC')::date - %d)",
                         w->tid, user_id, days_ago));
}

/* The user id of account name. Caller frees. */
static char *
user_of(struct world *w, const char *name)
{
    return eu_it_world_sql(w, "SELECT id FROM users WHERE tenant_id = %s AND account_id = %s",
                           w->tid, eu_it_id(w, name));
}

/*
 * The host's activity: two users of two days ago (one signs in the day
 * after), sign-ins of bob and rita, bob's status with a favourite, a
 * reblog and a reply, three statuses tagged #dashtag by two people, a
 * report resolved, and zed of remote.example with two statuses in
 * German, following bob and followed by him. The decoy's activity
 * (a status, its favourite, a report) must count nowhere on the host.
 */
static void
seed(struct world *w, char **tag_id)
{
    struct eu_it_resp r = {0};
    char *old1 = old_user(w, "old1", 2, 1), *old2 = old_user(w, "old2", 2, 2);
    signed_in(w, old1, 1);
    char *bob = user_of(w, "bob"), *rita = user_of(w, "rita"), *olga = user_of(w, "olga");
    signed_in(w, bob, 1);
    signed_in(w, bob, 2);
    signed_in(w, rita, 1);
    signed_in(w, olga, 0);
    signed_in(w, bob, 10); /* the week before: previous_total */

    char *s1 = post(w, HOST, "bob", "hello", NULL);
    call_on(w, &r, HOST, "POST", "rita", NULL, "/api/v1/statuses/%s/favourite", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(w, &r, HOST, "POST", "olga", NULL, "/api/v1/statuses/%s/reblog", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(post(w, HOST, "rita", "hi bob", s1));
    free(post(w, HOST, "bob", "one #dashtag", NULL));
    free(post(w, HOST, "rita", "two #dashtag", NULL));
    free(post(w, HOST, "bob", "three #dashtag", NULL));
    *tag_id =
        eu_it_world_sql(w, "SELECT id FROM tags WHERE tenant_id = %s AND name = 'dashtag'", w->tid);
    ck_assert_ptr_nonnull(*tag_id);

    char body[256];
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"comment\":\"spam\"}",
             eu_it_id(w, "bob"));
    call_on(w, &r, HOST, "POST", "rita", body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/reports/%s/resolve",
            json_string_value(json_object_get(r.json, "id")));
    EU_IT_EXPECT_STATUS(&r, 200);

    char *zed = eu_it_world_sql(w,
                                "INSERT INTO accounts (tenant_id, username, domain, uri) VALUES"
                                " (%s, 'zed', '" REMOTE "', 'https://" REMOTE "/users/zed')"
                                " RETURNING id",
                                w->tid);
    free(eu_it_world_sql(w,
                         "INSERT INTO statuses (tenant_id, account_id, local, language, uri)"
                         " SELECT %s, %s, false, 'de', 'https://" REMOTE "/s/' || g"
                         " FROM generate_series(1, 2) g",
                         w->tid, zed));
    free(eu_it_world_sql(w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                         " VALUES (%s, %s, %s), (%s, %s, %s)",
                         w->tid, zed, eu_it_id(w, "bob"), w->tid, eu_it_id(w, "bob"), zed));
    free(eu_it_world_sql(w,
                         "INSERT INTO reports (tenant_id, account_id, target_account_id)"
                         " VALUES (%s, %s, %s)",
                         w->tid, eu_it_id(w, "rita"), zed));

    char *d1 = post(w, DECOY, "dan", "decoy #dashtag", NULL);
    call_on(w, &r, DECOY, "POST", "dora", NULL, "/api/v1/statuses/%s/favourite", d1);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\"}", eu_it_id(w, "dora"));
    call_on(w, &r, DECOY, "POST", "dan", body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);

    free(old1);
    free(old2);
    free(bob);
    free(rita);
    free(olga);
    free(s1);
    free(zed);
    free(d1);
    eu_it_resp_free(&r);
}

/* The measure of key in r's answer. */
static json_t *
measure(const struct eu_it_resp *r, const char *key)
{
    json_t *m = eu_it_find(r->json, "key", key);
    ck_assert_msg(m != NULL, "no measure %s in %.2000s", key, r->body);
    return m;
}

/* Asserts measure key's total, previous total and the value of the day
 * days_ago back. */
static void
expect_measure(const struct eu_it_resp *r, const char *key, const char *total, const char *prev,
               const char *date, const char *value)
{
    json_t *m = measure(r, key);
    ck_assert_msg(json_array_size(json_object_get(m, "data")) == 7, "%s has %zu days", key,
                  json_array_size(json_object_get(m, "data")));
    const char *t = json_string_value(json_object_get(m, "total"));
    ck_assert_msg(t && strcmp(t, total) == 0, "%s total %s, not %s", key, t ? t : "?", total);
    const char *p = json_string_value(json_object_get(m, "previous_total"));
    ck_assert_msg(p && strcmp(p, prev) == 0, "%s previous %s, not %s", key, p ? p : "?", prev);
    if (!date)
        return;
    char stamp[32];
    snprintf(stamp, sizeof(stamp), "%sT00:00:00Z", date);
    json_t *d = eu_it_find(json_object_get(m, "data"), "date", stamp);
    ck_assert_msg(d != NULL, "%s has no %s", key, stamp);
    const char *v = json_string_value(json_object_get(d, "value"));
    ck_assert_msg(v && strcmp(v, value) == 0, "%s on %s is %s, not %s", key, date, v ? v : "?",
                  value);
}

START_TEST(test_measures)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    char *tag = NULL;
    seed(&w, &tag);
    char today[11], d1[11], d2[11], d6[11];
    day(&w, 0, today);
    day(&w, 1, d1);
    day(&w, 2, d2);
    day(&w, 6, d6);

    char body[1024];
    snprintf(body, sizeof(body),
             "{\"keys\":[\"active_users\",\"new_users\",\"interactions\",\"opened_reports\","
             "\"resolved_reports\",\"tag_accounts\",\"tag_uses\",\"tag_servers\","
             "\"instance_accounts\",\"instance_statuses\",\"instance_follows\","
             "\"instance_followers\",\"instance_reports\",\"instance_media_attachments\","
             "\"no_such_key\"],\"start_at\":\"%s\",\"end_at\":\"%sT23:59:59Z\","
             "\"tag_accounts\":{\"id\":\"%s\"},\"tag_uses\":{\"id\":\"%s\"},"
             "\"tag_servers\":{\"id\":\"%s\"},\"instance_accounts\":{\"domain\":\"" REMOTE "\"},"
             "\"instance_statuses\":{\"domain\":\"" REMOTE "\"},"
             "\"instance_follows\":{\"domain\":\"" REMOTE "\"},"
             "\"instance_followers\":{\"domain\":\"REMOTE.example\"},"
             "\"instance_reports\":{\"domain\":\"" REMOTE "\"},"
             "\"instance_media_attachments\":{\"domain\":\"" REMOTE "\"}}",
             d6, today, tag, tag, tag);
    call_on(&w, &r, HOST, "POST", "olga", body, "/api/v1/admin/measures");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 14);
    EU_IT_EXPECT_JSTR(&r, "0.key", "active_users");
    EU_IT_EXPECT_JSTR(&r, "13.key", "instance_media_attachments");
    EU_IT_EXPECT_JSTR(&r, "13.unit", "bytes");
    char first[32];
    snprintf(first, sizeof(first), "%sT00:00:00Z", d6);
    EU_IT_EXPECT_JSTR(&r, "0.data.0.date", first);
    /* old1, bob, rita, olga signed in; bob the week before too. */
    expect_measure(&r, "active_users", "4", "1", d1, "3");
    expect_measure(&r, "active_users", "4", "1", d2, "1");
    /* The five of the world and the two of two days ago. */
    expect_measure(&r, "new_users", "7", "0", d2, "2");
    expect_measure(&r, "new_users", "7", "0", today, "5");
    /* Rita's favourite and reply, olga's reblog. */
    expect_measure(&r, "interactions", "3", "0", today, "3");
    expect_measure(&r, "opened_reports", "2", "0", today, "2");
    expect_measure(&r, "resolved_reports", "1", "0", today, "1");
    expect_measure(&r, "tag_accounts", "2", "0", today, "2");
    expect_measure(&r, "tag_uses", "3", "0", today, "3");
    expect_measure(&r, "tag_servers", "1", "0", today, "1");
    expect_measure(&r, "instance_accounts", "1", "0", today, "1");
    expect_measure(&r, "instance_statuses", "2", "0", today, "2");
    expect_measure(&r, "instance_follows", "1", "0", today, "1");
    expect_measure(&r, "instance_followers", "1", "0", today, "1");
    expect_measure(&r, "instance_reports", "1", "0", today, "1");
    expect_measure(&r, "instance_media_attachments", "0", "0", today, "0");

    /* The decoy's owner sees the decoy's: two users, one favourite, one
     * report, nothing of the host's tag. */
    snprintf(body, sizeof(body),
             "{\"keys\":[\"new_users\",\"interactions\",\"opened_reports\",\"tag_uses\"],"
             "\"start_at\":\"%s\",\"end_at\":\"%s\",\"tag_uses\":{\"id\":\"%s\"}}",
             d6, today, tag);
    call_on(&w, &r, DECOY, "POST", "dora", body, "/api/v1/admin/measures");
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_measure(&r, "new_users", "2", "0", today, "2");
    expect_measure(&r, "interactions", "1", "0", today, "1");
    expect_measure(&r, "opened_reports", "1", "0", today, "1");
    expect_measure(&r, "tag_uses", "0", "0", today, "0");
    /* The host's staff have nothing on the decoy's host. */
    call_on(&w, &r, DECOY, "POST", "olga", body, "/api/v1/admin/measures");
    EU_IT_EXPECT_ERROR(&r, 401);

    free(tag);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The value of key in dimension dim of r's answer, or NULL. */
static const char *
dimension_value(const struct eu_it_resp *r, const char *dim, const char *key)
{
    json_t *d = eu_it_find(r->json, "key", dim);
    ck_assert_msg(d != NULL, "no dimension %s in %.2000s", dim, r->body);
    json_t *e = eu_it_find(json_object_get(d, "data"), "key", key);
    return e ? json_string_value(json_object_get(e, "value")) : NULL;
}

static void
expect_dimension(const struct eu_it_resp *r, const char *dim, const char *key, const char *want)
{
    const char *v = dimension_value(r, dim, key);
    ck_assert_msg(v && strcmp(v, want) == 0, "%s[%s] is %s, not %s in %.2000s", dim, key,
                  v ? v : "absent", want, r->body);
}

START_TEST(test_dimensions_and_retention)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    char *tag = NULL;
    seed(&w, &tag);
    char today[11], d2[11], d6[11];
    day(&w, 0, today);
    day(&w, 2, d2);
    day(&w, 6, d6);

    char body[1024];
    snprintf(body, sizeof(body),
             "{\"keys\":[\"languages\",\"sources\",\"servers\",\"space_usage\","
             "\"software_versions\",\"tag_servers\",\"tag_languages\",\"instance_accounts\","
             "\"instance_languages\"],\"start_at\":\"%s\",\"end_at\":\"%s\",\"limit\":5,"
             "\"tag_servers\":{\"id\":\"%s\"},\"tag_languages\":{\"id\":\"%s\"},"
             "\"instance_accounts\":{\"domain\":\"" REMOTE "\"},"
             "\"instance_languages\":{\"domain\":\"" REMOTE "\"}}",
             d6, today, tag, tag);
    call_on(&w, &r, HOST, "POST", "olga", body, "/api/v1/admin/dimensions");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 9);
    /* old1, bob, rita and olga signed in; no locale is English. */
    expect_dimension(&r, "languages", "en", "4");
    expect_dimension(&r, "servers", REMOTE, "2");
    ck_assert_ptr_null(dimension_value(&r, "servers", DECOY));
    expect_dimension(&r, "space_usage", "media", "0");
    EU_IT_EXPECT_JSTR(&r, "3.data.0.unit", "bytes");
    ck_assert_ptr_nonnull(dimension_value(&r, "software_versions", "eunha"));
    ck_assert_ptr_nonnull(dimension_value(&r, "software_versions", "postgresql"));
    ck_assert_ptr_nonnull(dimension_value(&r, "software_versions", "redis"));
    expect_dimension(&r, "tag_servers", HOST, "3");
    expect_dimension(&r, "tag_languages", "en", "3");
    expect_dimension(&r, "instance_accounts", "zed", "1");
    expect_dimension(&r, "instance_languages", "de", "2");
    /* Sign-ups of the range, by the application they came through. */
    json_t *sources = json_object_get(eu_it_find(r.json, "key", "sources"), "data");
    long signups = 0;
    size_t i;
    json_t *e;
    json_array_foreach(sources, i, e) signups +=
        atol(json_string_value(json_object_get(e, "value")));
    ck_assert_int_eq(signups, 7);

    /* Retention by day from two days ago: old1 and old2's cohort, old1
     * back the next day; today's cohort of five, all active today. */
    snprintf(body, sizeof(body), "{\"start_at\":\"%s\",\"end_at\":\"%s\",\"frequency\":\"day\"}",
             d2, today);
    call_on(&w, &r, HOST, "POST", "olga", body, "/api/v1/admin/retention");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3);
    char stamp[32];
    snprintf(stamp, sizeof(stamp), "%sT00:00:00Z", d2);
    EU_IT_EXPECT_JSTR(&r, "0.period", stamp);
    EU_IT_EXPECT_JSTR(&r, "0.frequency", "day");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.data")), 3);
    EU_IT_EXPECT_JSTR(&r, "0.data.0.value", "2");
    EU_IT_EXPECT_JSTR(&r, "0.data.1.value", "1");
    ck_assert(json_real_value(eu_it_jpath(r.json, "0.data.1.rate")) == 0.5);
    EU_IT_EXPECT_JSTR(&r, "0.data.2.value", "0");
    EU_IT_EXPECT_JSTR(&r, "1.data.0.value", "0");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "2.data")), 1);
    EU_IT_EXPECT_JSTR(&r, "2.data.0.value", "5");
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"start_at\":\"2026-01-01\",\"end_at\":\"2026-03-31\","
            "\"frequency\":\"month\"}",
            "/api/v1/admin/retention");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3);
    EU_IT_EXPECT_JSTR(&r, "1.period", "2026-02-01T00:00:00Z");
    EU_IT_EXPECT_JSTR(&r, "1.frequency", "month");

    /* The decoy's owner: the decoy's one status of its own, nothing else. */
    snprintf(body, sizeof(body),
             "{\"keys\":[\"servers\",\"tag_languages\"],\"tag_languages\":{\"id\":\"%s\"}}", tag);
    call_on(&w, &r, DECOY, "POST", "dora", body, "/api/v1/admin/dimensions");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.data")), 0);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "1.data")), 0);
    call_on(&w, &r, DECOY, "POST", "dora",
            "{\"start_at\":\"2020-01-01\",\"end_at\":\"2020-01-03\"}", "/api/v1/admin/retention");
    EU_IT_EXPECT_STATUS(&r, 200);

    free(tag);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_refusals)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *paths[] = {"/api/v1/admin/measures", "/api/v1/admin/dimensions",
                           "/api/v1/admin/retention"};
    const char *body = "{\"keys\":[\"new_users\"],\"start_at\":\"2026-01-01\","
                       "\"end_at\":\"2026-01-02\"}";
    for (size_t i = 0; i < 3; i++) {
        /* No view_dashboard in the role; a user's admin scopes give nothing. */
        call_on(&w, &r, HOST, "POST", "mick", body, "%s", paths[i]);
        expect_error_text(&r, 403, "This action is not allowed");
        call_on(&w, &r, HOST, "POST", "bob", body, "%s", paths[i]);
        EU_IT_EXPECT_ERROR(&r, 403);
        /* An admin whose token lacks admin:read. */
        call_on(&w, &r, HOST, "POST", "adam", body, "%s", paths[i]);
        expect_error_text(&r, 403, "This action is outside the authorized scopes");
        call_on(&w, &r, HOST, "POST", NULL, body, "%s", paths[i]);
        EU_IT_EXPECT_ERROR(&r, 401);
        /* The decoy's owner on the host. */
        call_on(&w, &r, HOST, "POST", "dora", body, "%s", paths[i]);
        EU_IT_EXPECT_ERROR(&r, 401);
    }

    /* Bad input: Mastodon's error bodies. */
    call_on(&w, &r, HOST, "POST", "olga", "{\"start_at\":\"2026-01-01\",\"end_at\":\"2026-01-02\"}",
            "/api/v1/admin/measures");
    expect_error_text(&r, 400, "param is missing or the value is empty: keys");
    call_on(&w, &r, HOST, "POST", "olga", "{\"keys\":[\"new_users\"],\"start_at\":\"2026-01-01\"}",
            "/api/v1/admin/measures");
    expect_error_text(&r, 400, "param is missing or the value is empty: end_at");
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"keys\":[\"new_users\"],\"start_at\":\"yesterday\",\"end_at\":\"2026-01-02\"}",
            "/api/v1/admin/measures");
    EU_IT_EXPECT_ERROR(&r, 422);
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"keys\":[\"new_users\"],\"start_at\":\"2026-01-05\",\"end_at\":\"2026-01-02\"}",
            "/api/v1/admin/measures");
    EU_IT_EXPECT_ERROR(&r, 422);
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"keys\":[\"new_users\"],\"start_at\":\"2020-01-01\",\"end_at\":\"2026-01-02\"}",
            "/api/v1/admin/measures");
    EU_IT_EXPECT_ERROR(&r, 422);
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"keys\":[\"tag_uses\"],\"start_at\":\"2026-01-01\",\"end_at\":\"2026-01-02\","
            "\"tag_uses\":{\"id\":\"x'; DROP\"}}",
            "/api/v1/admin/measures");
    EU_IT_EXPECT_ERROR(&r, 422);
    call_on(&w, &r, HOST, "POST", "olga", "{\"keys\":[\"languages\"],\"limit\":0}",
            "/api/v1/admin/dimensions");
    EU_IT_EXPECT_ERROR(&r, 422);
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"start_at\":\"2026-01-01\",\"end_at\":\"2026-01-02\",\"frequency\":\"week\"}",
            "/api/v1/admin/retention");
    EU_IT_EXPECT_ERROR(&r, 422);
    call_on(&w, &r, HOST, "POST", "olga",
            "{\"start_at\":\"2020-01-01\",\"end_at\":\"2026-01-02\",\"frequency\":\"month\"}",
            "/api/v1/admin/retention");
    EU_IT_EXPECT_ERROR(&r, 422);
    /* Form encoding, as Mastodon's web dashboard sends it. */
    call_on(&w, &r, HOST, "POST", "olga", NULL,
            "/api/v1/admin/measures?keys[]=new_users&start_at=2026-01-01&end_at=2026-01-02");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.key", "new_users");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.data")), 2);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The audit rows of action on target. */
static long
audit_rows(struct world *w, const char *action, const char *type, const char *target)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM admin_action_logs WHERE tenant_id = %s"
                                " AND action = '%s' AND target_type = '%s' AND target_id = %s",
                                w->tid, action, type, target);
}

/* A 200 with a non-empty array: the trends task has scored. */
static bool
listed(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_array_size(r->json) > 0;
}

START_TEST(test_trends)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    /* Three accounts use #trendy today, none before: it trends (this
     * world's threshold is two accounts; two against an expected one
     * would score exactly Mastodon's floor and fade at once). The
     * decoy's one use does not make it trend there, nor count here. */
    char *s1 = post(&w, HOST, "bob", "first #trendy", NULL);
    free(post(&w, HOST, "rita", "second #trendy", NULL));
    free(post(&w, HOST, "olga", "third #trendy", NULL));
    free(post(&w, HOST, "bob", "a lone #quiet", NULL));
    free(post(&w, DECOY, "dan", "decoy #trendy", NULL));
    call_on(&w, &r, HOST, "POST", "rita", NULL, "/api/v1/statuses/%s/favourite", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/statuses/%s/reblog", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "POST", "bob", "{\"status\":\"secret\",\"visibility\":\"private\"}",
            "/api/v1/statuses");
    char *hidden = strdup(json_string_value(json_object_get(r.json, "id")));
    /* The trends task scores them a second later. */
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "olga"), 30000, listed, NULL, "a trending tag",
                   "/api/v1/admin/trends/tags");
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "olga"), 30000, listed, NULL, "a trending status",
                   "/api/v1/admin/trends/statuses");

    /* Not shown before the staff approve. */
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, HOST, "GET", "bob", NULL, "/api/v1/trends");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* The staff see the candidates, awaiting review. */
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.name", "trendy");
    char *tag = strdup(json_string_value(eu_it_jpath(r.json, "0.id")));
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.requires_review")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "0.trendable")));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.history")), 7);
    EU_IT_EXPECT_JSTR(&r, "0.history.0.uses", "3");
    EU_IT_EXPECT_JSTR(&r, "0.history.0.accounts", "3");
    EU_IT_EXPECT_JSTR(&r, "0.history.1.uses", "0");
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", s1);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.requires_review")));

    /* Refusals: no manage_taxonomies, no admin scope, another tenant. */
    call_on(&w, &r, HOST, "GET", "mick", NULL, "/api/v1/admin/trends/tags");
    expect_error_text(&r, 403, "This action is not allowed");
    call_on(&w, &r, HOST, "POST", "mick", NULL, "/api/v1/admin/trends/tags/%s/approve", tag);
    expect_error_text(&r, 403, "This action is not allowed");
    call_on(&w, &r, HOST, "POST", "adam", NULL, "/api/v1/admin/trends/statuses/%s/approve", s1);
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call_on(&w, &r, DECOY, "POST", "dora", NULL, "/api/v1/admin/trends/tags/%s/approve", tag);
    expect_error_text(&r, 404, "Record not found");
    call_on(&w, &r, DECOY, "POST", "dora", NULL, "/api/v1/admin/trends/statuses/%s/approve", s1);
    expect_error_text(&r, 404, "Record not found");
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/trends/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    EU_IT_EXPECT_ERROR(&r, 401);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/approve", hidden);
    expect_error_text(&r, 404, "Record not found");
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/x1/approve");
    expect_error_text(&r, 404, "Record not found");
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM tags WHERE trendable IS NOT NULL"), 0);

    /* Approved: shown to everyone, with an audit row each. */
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/%s/approve", tag);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", tag);
    ck_assert(json_is_true(eu_it_jpath(r.json, "trendable")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "requires_review")));
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/approve", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", s1);
    ck_assert_int_eq(audit_rows(&w, "approve", "Tag", tag), 1);
    ck_assert_int_eq(audit_rows(&w, "approve", "Status", s1), 1);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/tags");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.name", "trendy");
    EU_IT_EXPECT_JSTR(&r, "0.id", tag);
    EU_IT_EXPECT_JSTR(&r, "0.history.0.accounts", "3");
    ck_assert_ptr_null(eu_it_jpath(r.json, "0.requires_review"));
    call_on(&w, &r, HOST, "GET", "rita", NULL, "/api/v1/trends/statuses");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", s1);
    /* The decoy's trends show none of the host's. */
    call_on(&w, &r, DECOY, "GET", NULL, NULL, "/api/v1/trends/tags");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "GET", NULL, NULL, "/api/v1/trends/statuses");
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Rejected: gone again. */
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/%s/reject", tag);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(eu_it_jpath(r.json, "trendable")));
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/reject", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(audit_rows(&w, "reject", "Tag", tag), 1);
    ck_assert_int_eq(audit_rows(&w, "reject", "Status", s1), 1);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/tags");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/statuses");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    ck_assert(json_is_false(eu_it_jpath(r.json, "0.requires_review")));

    free(s1);
    free(hidden);
    free(tag);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("dashboard");
    EU_IT_ADD_TCASE(s, test_measures, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_dimensions_and_retention, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_refusals, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_trends, TIMEOUT);
    return eu_it_run_suite(s);
}
