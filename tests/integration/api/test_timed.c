/*
 * Timed work that must happen on time and cost nothing before: scheduled
 * statuses (published within a second of scheduled_at, with no connection
 * to the tenant database and no transaction of eunha's between creating one
 * and its publication; moved and cancelled ones follow the change) and polls
 * (vote rules, rendering in the status and on their own, closing at expiry
 * with "poll" notifications to the author and the voters).
 *
 * The minimum lead of a scheduled status and the minimum poll duration are
 * lowered through [workers] so the tests take seconds. Times are compared in
 * the database (created_at against the asked time), on one clock.
 */
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT 120
#define HOST "t.example"

/* A server whose job queue is idle but for what workers_toml adds. */
static void
world_start(struct world *w, const char *workers_toml)
{
    static char toml[512];
    static struct eu_it_world_opts o = {
        .host = HOST,
        .server = {.idle_timeout = 1, .placement_connections = 2},
        .users = {{"alice"}, {"bob"}, {"carol"}, {"dave"}},
    };
    snprintf(toml, sizeof(toml), "[workers]\nqueue_idle_poll_seconds = 3600\n%s", workers_toml);
    o.extra_toml = toml;
    eu_it_world_start(w, &o);
}

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *token,
    const char *body)
{
    ck_assert_int_eq(eu_it_http(r, method, w->s->public_port, HOST, path, token, body), 0);
}

/* Wall-clock milliseconds (what scheduled_at is compared with). */
static long long
wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ISO 8601 UTC of wall-clock ms, into buf. */
static const char *
iso(char *buf, size_t len, long long ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[32];
    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03dZ", s, (int)(ms % 1000));
    return buf;
}

/* Sleeps until wall-clock ms. */
static void
sleep_until(long long ms)
{
    long long d = ms - wall_ms();
    if (d > 0)
        eu_it_sleep_ms((long)d);
}

/* Schedules text at wall-clock ms as token's user; asserts 200 and returns
 * the scheduled status id (caller frees). */
static char *
schedule(struct world *w, const char *token, const char *text, long long at_ms, const char *extra)
{
    struct eu_it_resp r = {0};
    char when[40], body[1024];
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"scheduled_at\":\"%s\"%s}", text,
             iso(when, sizeof(when), at_ms), extra ? extra : "");
    api(w, &r, "POST", "/api/v1/statuses", token, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scheduled_at", when);
    EU_IT_EXPECT_JSTR(&r, "params.text", text);
    ck_assert(json_is_array(eu_it_jpath(r.json, "media_attachments")));
    ck_assert(json_is_null(eu_it_jpath(r.json, "params.media_ids")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "params.with_rate_limit")));
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* Waits (up to timeout_ms) until a status with this text exists; returns
 * how many ms after at_ms (wall clock) the database says it was created. */
static long
wait_published(struct world *w, const char *text, long long at_ms, long timeout_ms)
{
    long long t0 = eu_it_now_ms();
    while (eu_it_world_sql_long(
               w, "SELECT count(*) FROM statuses WHERE tenant_id = %s AND text = '%s'", w->tid,
               text) == 0) {
        ck_assert_msg(eu_it_now_ms() - t0 < timeout_ms, "'%s' was not published", text);
        eu_it_sleep_ms(50);
    }
    char when[40];
    return eu_it_world_sql_long(
        w,
        "SELECT (extract(epoch FROM created_at - '%s'::timestamptz) * 1000)::bigint"
        " FROM statuses WHERE tenant_id = %s AND text = '%s'",
        iso(when, sizeof(when), at_ms), w->tid, text);
}

static void
db_counters(const char *db, long *xacts, long *sessions)
{
    char q[300];
    snprintf(q, sizeof(q),
             "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '%s'", db);
    *xacts = eu_it_pg_exec_long("postgres", q);
    snprintf(q, sizeof(q), "SELECT sessions FROM pg_stat_database WHERE datname = '%s'", db);
    *sessions = eu_it_pg_exec_long("postgres", q);
}

/* ------------------------------------------------------ scheduled statuses */

START_TEST(test_scheduled_status_fires_on_time_and_quietly)
{
    struct world w;
    world_start(&w, "scheduled_status_min_lead_seconds = 2\n");
    struct eu_it_resp r = {0};
    char when[40];

    /* bob follows alice: the published status reaches his home feed. */
    free(eu_it_world_sql(
        &w, "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "bob"), eu_it_id(&w, "alice")));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "bob"), NULL); /* builds his feed */
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Too soon for the configured lead: Mastodon's 422. */
    char body[300];
    snprintf(body, sizeof(body), "{\"status\":\"soon\",\"scheduled_at\":\"%s\"}",
             iso(when, sizeof(when), wall_ms() + 1000));
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_str_eq(eu_it_json_str(&r, "error"),
                     "Validation failed: Scheduled at The scheduled date must be in the future");
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"),
        "{\"status\":\"bad\",\"scheduled_at\":\"tomorrow\"}");
    EU_IT_EXPECT_ERROR(&r, 422);

    long long due = wall_ms() + 7000;
    char *sid = schedule(&w, eu_it_tok(&w, "alice"), "later @bob #eunha", due,
                         ",\"visibility\":\"unlisted\",\"poll\":{\"options\":[\"yes\",\"no\"],"
                         "\"expires_in\":600}");
    api(&w, &r, "GET", "/api/v1/scheduled_statuses", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", sid);
    EU_IT_EXPECT_JSTR(&r, "0.params.visibility", "unlisted");
    EU_IT_EXPECT_JSTR(&r, "0.params.poll.options.1", "no");
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/scheduled_statuses/%s", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL); /* someone else's */
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", sid);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 0);

    /* Between creation and the due time: the placement's two connections
     * stay open and no new one is made. */
    long x0, s0, x1, s1;
    db_counters(w.db, &x0, &s0);
    while (wall_ms() < due - 400) {
        ck_assert_int_le(eu_it_pg_count_backends(w.db), 2);
        eu_it_sleep_ms(100);
    }
    db_counters(w.db, &x1, &s1);
    fprintf(stderr, "before the due time: %ld transactions, %ld sessions\n", x1 - x0, s1 - s0);
    /* Transactions may include autovacuum's visit (see test_idle.c), so
     * sessions are what is asserted. */
    ck_assert_msg(s1 == s0, "the tenant database was connected to %ld times", s1 - s0);

    long lag = wait_published(&w, "later @bob #eunha", due, 5000);
    fprintf(stderr, "published %ld ms after its scheduled time\n", lag);
    ck_assert_msg(lag >= 0 && lag < 1000, "published %ld ms after its time", lag);

    /* Published as a post would be: mention, tag, poll, feeds; and gone from
     * the scheduled list. */
    ck_assert_int_eq(eu_it_world_sql_long(
                         &w, "SELECT count(*) FROM scheduled_statuses WHERE tenant_id = %s", w.tid),
                     0);
    char q[160];
    snprintf(q, sizeof(q), "SELECT id::text FROM statuses WHERE tenant_id = %s", w.tid);
    char *status_id = eu_it_pg_exec(w.db, q);
    long long t0 = eu_it_now_ms();
    while (eu_it_world_sql_long(&w,
                                "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                " AND type = 'mention' AND account_id = %s AND status_id = %s",
                                w.tid, eu_it_id(&w, "bob"), status_id) == 0) {
        ck_assert_msg(eu_it_now_ms() - t0 < 3000, "bob was not notified of the mention");
        eu_it_sleep_ms(50);
    }
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", status_id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "visibility", "unlisted");
    EU_IT_EXPECT_JSTR(&r, "mentions.0.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "tags.0.name", "eunha");
    EU_IT_EXPECT_JSTR(&r, "poll.options.0.title", "yes");
    const char *content = json_string_value(eu_it_jpath(r.json, "content"));
    ck_assert_msg(content && strstr(content, "/@bob"), "no mention link: %s", r.body);
    t0 = eu_it_now_ms();
    for (;;) {
        api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "bob"), NULL);
        EU_IT_EXPECT_STATUS(&r, 200);
        if (json_array_size(r.json) == 1)
            break;
        ck_assert_msg(eu_it_now_ms() - t0 < 3000, "not in bob's home feed: %s", r.body);
        eu_it_sleep_ms(50);
    }
    EU_IT_EXPECT_JSTR(&r, "0.id", status_id);
    api(&w, &r, "GET", "/api/v1/scheduled_statuses", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(status_id);
    free(sid);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_scheduled_status_moved_and_cancelled)
{
    struct world w;
    world_start(&w, "scheduled_status_min_lead_seconds = 1\n");
    struct eu_it_resp r = {0};
    char when[40], body[200], path[128];

    long long old_due = wall_ms() + 3000, new_due = old_due + 3000;
    char *moved = schedule(&w, eu_it_tok(&w, "alice"), "moved", old_due, NULL);
    char *cancelled = schedule(&w, eu_it_tok(&w, "alice"), "cancelled", old_due, NULL);

    snprintf(path, sizeof(path), "/api/v1/scheduled_statuses/%s", moved);
    snprintf(body, sizeof(body), "{\"scheduled_at\":\"%s\"}", iso(when, sizeof(when), new_due));
    api(&w, &r, "PUT", path, eu_it_tok(&w, "bob"), body); /* not his */
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scheduled_at", when);
    EU_IT_EXPECT_JSTR(&r, "params.text", "moved");
    snprintf(body, sizeof(body), "{\"scheduled_at\":\"%s\"}", iso(when, sizeof(when), wall_ms()));
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);

    snprintf(path, sizeof(path), "/api/v1/scheduled_statuses/%s", cancelled);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Past the old time: nothing published. */
    sleep_until(old_due + 1500);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 0);
    long lag = wait_published(&w, "moved", new_due, 5000);
    fprintf(stderr, "moved status published %ld ms after its new time\n", lag);
    ck_assert_msg(lag >= 0 && lag < 1000, "published %ld ms after its new time", lag);
    eu_it_sleep_ms(500);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 1);

    /* Paging: three far ahead, two per page, newest first, with a Link. */
    char *far[3];
    for (int i = 0; i < 3; i++) {
        char text[16];
        snprintf(text, sizeof(text), "far%d", i);
        far[i] = schedule(&w, eu_it_tok(&w, "alice"), text, wall_ms() + 3600 * 1000, NULL);
    }
    api(&w, &r, "GET", "/api/v1/scheduled_statuses?limit=2", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", far[2]);
    EU_IT_EXPECT_JSTR(&r, "1.id", far[1]);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, far[1]) && strstr(link, "rel=\"next\""), "Link: %s",
                  link ? link : "(none)");
    snprintf(path, sizeof(path), "/api/v1/scheduled_statuses?max_id=%s", far[1]);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", far[0]);
    api(&w, &r, "GET", "/api/v1/scheduled_statuses", eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    for (int i = 0; i < 3; i++)
        free(far[i]);
    free(moved);
    free(cancelled);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------------ polls */

/* Posts a status with a poll; asserts 200 and returns the response. */
static void
post_poll(struct world *w, struct eu_it_resp *r, const char *token, const char *poll,
          const char *visibility)
{
    char body[600];
    snprintf(body, sizeof(body), "{\"status\":\"vote!\",\"visibility\":\"%s\",\"poll\":%s}",
             visibility, poll);
    api(w, r, "POST", "/api/v1/statuses", token, body);
    EU_IT_EXPECT_STATUS(r, 200);
}

static void
vote(struct world *w, struct eu_it_resp *r, const char *poll_id, const char *token,
     const char *choices)
{
    char path[128], body[128];
    snprintf(path, sizeof(path), "/api/v1/polls/%s/votes", poll_id);
    snprintf(body, sizeof(body), "{\"choices\":%s}", choices);
    api(w, r, "POST", path, token, body);
}

START_TEST(test_poll_votes_and_closing)
{
    struct world w;
    world_start(&w, "poll_min_expires_in_seconds = 1\n");
    struct eu_it_resp r = {0};
    char path[160];

    /* Validation. */
    const char *bad[] = {
        "{\"options\":[\"one\"],\"expires_in\":600}",
        "{\"options\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"expires_in\":600}",
        "{\"options\":[\"a\",\"a\"],\"expires_in\":600}",
        "{\"options\":[\"a\",\"b\"],\"expires_in\":0}",
        "{\"options\":[\"a\",\"b\"],\"expires_in\":2629747}",
        "{\"options\":[\"a\",\"b\"]}",
        "{\"options\":[\"a\",\"123456789012345678901234567890123456789012345678901\"],"
        "\"expires_in\":600}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char body[300];
        snprintf(body, sizeof(body), "{\"status\":\"x\",\"poll\":%s}", bad[i]);
        api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
        EU_IT_EXPECT_ERROR(&r, 422);
        ck_assert_msg(strncmp(eu_it_json_str(&r, "error"), "Validation failed: Poll", 23) == 0,
                      "%s", r.body);
    }
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 0);

    /* A form-encoded poll, as most clients send it. */
    const char *form[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    char auth[200];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", eu_it_tok(&w, "alice"));
    const char *hdrs[] = {form[0], auth, NULL};
    ck_assert_int_eq(
        eu_it_http_raw(&r, "POST", w.s->public_port, HOST, "/api/v1/statuses", hdrs,
                       "status=form&poll%5Boptions%5D%5B%5D=x&poll%5Boptions%5D%5B%5D=y"
                       "&poll%5Bexpires_in%5D=600&poll%5Bmultiple%5D=true"),
        0);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "poll.options.1.title", "y");
    ck_assert(json_is_true(eu_it_jpath(r.json, "poll.multiple")));

    /* A single-choice poll expiring in 3 s. */
    long long t_post = wall_ms();
    post_poll(&w, &r, eu_it_tok(&w, "alice"),
              "{\"options\":[\"red\",\"green\",\"blue\"],\"expires_in\":3}", "public");
    char *status_id = strdup(eu_it_json_str(&r, "id"));
    char *poll_id = strdup(json_string_value(eu_it_jpath(r.json, "poll.id")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "poll.expired")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "poll.multiple")));
    EU_IT_EXPECT_JINT(&r, "poll.votes_count", 0);
    ck_assert(json_is_null(eu_it_jpath(r.json, "poll.voters_count")));
    EU_IT_EXPECT_JSTR(&r, "poll.options.2.title", "blue");
    EU_IT_EXPECT_JINT(&r, "poll.options.2.votes_count", 0);
    ck_assert(json_is_array(eu_it_jpath(r.json, "poll.emojis")));
    ck_assert(json_is_true(eu_it_jpath(r.json, "poll.voted"))); /* the author's own */
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "poll.own_votes")), 0);
    ck_assert(json_is_string(eu_it_jpath(r.json, "poll.expires_at")));

    vote(&w, &r, poll_id, eu_it_tok(&w, "bob"), "[1]");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", poll_id);
    ck_assert(json_is_true(eu_it_jpath(r.json, "voted")));
    EU_IT_EXPECT_JINT(&r, "own_votes.0", 1);
    EU_IT_EXPECT_JINT(&r, "votes_count", 1);
    EU_IT_EXPECT_JINT(&r, "options.1.votes_count", 1);
    vote(&w, &r, poll_id, eu_it_tok(&w, "bob"), "[2]");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_str_eq(eu_it_json_str(&r, "error"),
                     "Validation failed: You have already voted on this poll");
    vote(&w, &r, poll_id, eu_it_tok(&w, "alice"), "[0]");
    EU_IT_EXPECT_ERROR(&r, 422);
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[0,2]"); /* single choice */
    EU_IT_EXPECT_ERROR(&r, 422);
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[3]");
    EU_IT_EXPECT_ERROR(&r, 422);
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[]");
    EU_IT_EXPECT_ERROR(&r, 422);
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[\"2\"]");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "votes_count", 2);
    vote(&w, &r, "999999", eu_it_tok(&w, "carol"), "[0]");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* The viewer's own votes in the status; nothing viewer-specific for an
     * anonymous reader. */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", status_id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "poll.own_votes.0", 2);
    EU_IT_EXPECT_JINT(&r, "poll.options.1.votes_count", 1);
    EU_IT_EXPECT_JINT(&r, "poll.options.2.votes_count", 1);
    snprintf(path, sizeof(path), "/api/v1/polls/%s", poll_id);
    api(&w, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "votes_count", 2);
    ck_assert_ptr_null(eu_it_jpath(r.json, "voted"));
    ck_assert_ptr_null(eu_it_jpath(r.json, "own_votes"));

    /* A followers-only poll is not there for dave. */
    post_poll(&w, &r, eu_it_tok(&w, "alice"), "{\"options\":[\"a\",\"b\"],\"expires_in\":600}",
              "private");
    char *private_poll = strdup(json_string_value(eu_it_jpath(r.json, "poll.id")));
    snprintf(path, sizeof(path), "/api/v1/polls/%s", private_poll);
    api(&w, &r, "GET", path, eu_it_tok(&w, "dave"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);
    vote(&w, &r, private_poll, eu_it_tok(&w, "dave"), "[0]");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Closing: at the expiry, notifications to the author and both voters. */
    long long expiry = t_post + 3000;
    long long t0 = eu_it_now_ms();
    while (eu_it_world_sql_long(&w,
                                "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                " AND type = 'poll'",
                                w.tid) < 3) {
        ck_assert_msg(eu_it_now_ms() - t0 < 8000, "poll notifications missing");
        eu_it_sleep_ms(50);
    }
    long late = eu_it_world_sql_long(
        &w,
        "SELECT (extract(epoch FROM max(n.created_at) - p.expires_at) * 1000)"
        "::bigint FROM notifications n JOIN polls p ON p.tenant_id = n.tenant_id"
        " AND p.status_id = n.status_id WHERE n.tenant_id = %s AND n.type = 'poll'"
        " GROUP BY p.expires_at",
        w.tid);
    fprintf(stderr, "poll notifications %ld ms after the expiry\n", late);
    ck_assert_msg(late >= 0 && late < 1000, "notified %ld ms after the expiry", late);
    ck_assert_int_lt(wall_ms() - expiry, 4000);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w,
                             "SELECT count(DISTINCT account_id) FROM notifications WHERE"
                             " tenant_id = %s AND type = 'poll' AND status_id = %s"
                             " AND from_account_id = %s AND account_id IN (%s, %s, %s)",
                             w.tid, status_id, eu_it_id(&w, "alice"), eu_it_id(&w, "alice"),
                             eu_it_id(&w, "bob"), eu_it_id(&w, "carol")),
        3);
    eu_it_sleep_ms(300);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                          " AND type = 'poll'",
                                          w.tid),
                     3);

    /* bob sees it through the API too. */
    api(&w, &r, "GET", "/api/v1/notifications?types[]=poll", eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.type", "poll");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", status_id);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.status.poll.expired")));

    vote(&w, &r, poll_id, eu_it_tok(&w, "dave"), "[0]");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "Validation failed: The poll has already ended");

    free(private_poll);
    free(poll_id);
    free(status_id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_poll_multiple_and_hidden_totals)
{
    struct world w;
    world_start(&w, "poll_min_expires_in_seconds = 1\n");
    struct eu_it_resp r = {0};
    char path[160];

    long long t_post = wall_ms();
    post_poll(&w, &r, eu_it_tok(&w, "alice"),
              "{\"options\":[\"a\",\"b\",\"c\"],\"expires_in\":2,\"multiple\":true,"
              "\"hide_totals\":true}",
              "public");
    char *poll_id = strdup(json_string_value(eu_it_jpath(r.json, "poll.id")));
    vote(&w, &r, poll_id, eu_it_tok(&w, "bob"), "[0,2]");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "own_votes.0", 0);
    EU_IT_EXPECT_JINT(&r, "own_votes.1", 2);
    EU_IT_EXPECT_JINT(&r, "votes_count", 2);
    EU_IT_EXPECT_JINT(&r, "voters_count", 1);
    ck_assert(json_is_null(eu_it_jpath(r.json, "options.0.votes_count")));
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[1,1]");
    EU_IT_EXPECT_ERROR(&r, 422);
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[1]");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "voters_count", 2);
    vote(&w, &r, poll_id, eu_it_tok(&w, "carol"), "[0]");
    EU_IT_EXPECT_ERROR(&r, 422);

    /* After expiry the totals show. */
    sleep_until(t_post + 2300);
    snprintf(path, sizeof(path), "/api/v1/polls/%s", poll_id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "dave"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(eu_it_jpath(r.json, "expired")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "voted")));
    EU_IT_EXPECT_JINT(&r, "options.0.votes_count", 1);
    EU_IT_EXPECT_JINT(&r, "options.1.votes_count", 1);
    EU_IT_EXPECT_JINT(&r, "options.2.votes_count", 1);

    free(poll_id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

static Suite *
timed_suite(void)
{
    Suite *s = suite_create("integration.timed");

    EU_IT_ADD_TCASE(s, test_scheduled_status_fires_on_time_and_quietly, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_scheduled_status_moved_and_cancelled, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_poll_votes_and_closing, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_poll_multiple_and_hidden_totals, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(timed_suite());
}
