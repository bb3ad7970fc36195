/*
 * Quote posts (docs/quotes.md): posting a quote and how it renders for
 * each viewer (Mastodon's Quote and ShallowQuote, quote_approval), the
 * author's policy refusing one (Mastodon's 404 and its text), changing the
 * policy, the quotes list, revoking, the quote notification, and a decoy
 * tenant in the same placement that can neither quote, list nor revoke
 * the host's quotes. An edit of a quoted post tells its quoters
 * (quoted_update) and may change its policy, not a quote. Then two eunha
 * processes (as test_ap_two_processes
 * starts them): a quote of a remote post asks its author (QuoteRequest),
 * is accepted or, under a nobody policy, rejected, an edit of the quoted
 * post tells the quoter (a received Update's quoted_update), an edited
 * quoting post keeps its quote as it was unless the edit takes it away,
 * and a revoke on the quoted side reaches the quoting one. A scheduled
 * quote is checked again when it is published (test_scheduled_recheck).
 */
#include "world.h"

#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT 120
#define HOST "q.example"
#define DECOY "decoy.example"
#define NOT_FOUND "The post you are trying to quote does not appear to exist."

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .extra_toml = "[workers]\nscheduled_status_min_lead_seconds = 1\n",
    .users = {{"alice"}, {"bob"}, {"carol"}, {"dave", DECOY, "bob"}},
};

static void api(struct world *w, struct eu_it_resp *r, const char *method, const char *tok,
                const char *json, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *tok, const char *json,
    const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    const char *host = HOST;
    for (size_t i = 0; i < w->nusers; i++)
        if (w->users[i].tok && tok && strcmp(w->users[i].tok, tok) == 0)
            host = w->users[i].host;
    eu_it_callf(w->s, r, host, method, tok, json, "%s", path);
}

/* Posts body as user; asserts 200 and returns the id (caller frees). */
static char *
post(struct world *w, const char *user, const char *body)
{
    struct eu_it_resp r = {0};
    api(w, &r, "POST", eu_it_tok(w, user), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

static char *
post_quote(struct world *w, const char *user, const char *text, const char *quoted)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"quoted_status_id\":\"%s\"}", text, quoted);
    return post(w, user, body);
}

static void
expect_null(const struct eu_it_resp *r, const char *path)
{
    json_t *v = eu_it_jpath(r->json, path);
    ck_assert_msg(v && json_is_null(v), "%s is not null in %.800s", path, r->body);
}

static long
count_reaches(struct world *w, long want, const char *sql)
{
    long got = -1;
    for (int i = 0; i < 200 && got != want; i++) {
        if (i)
            eu_it_sleep_ms(50);
        got = eu_it_world_sql_long(w, "%s", sql);
    }
    return got;
}

START_TEST(test_quote_render_list_revoke)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *p = post(&w, "bob", "{\"status\":\"a post to quote\"}");

    /* The default policy: anyone may quote a public post. */
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", p);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.automatic.0", "public");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "quote_approval.manual")), 0);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "automatic");
    expect_null(&r, "quote");
    api(&w, &r, "GET", NULL, NULL, "/api/v1/statuses/%s", p);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "unknown");

    /* alice quotes it: accepted at once, the quoted post nested. */
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"look\",\"quoted_status_id\":\"%s\"}", p);
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *q = strdup(eu_it_json_str(&r, "id"));
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", p);
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.account.username", "bob");
    expect_null(&r, "quote.quoted_status.quote");

    /* bob is told, as Mastodon 4.5 tells the quoted author. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE type = 'quote' AND account_id = %s"
             " AND from_account_id = %s AND status_id = %s",
             eu_it_id(&w, "bob"), eu_it_id(&w, "alice"), q);
    ck_assert_int_eq(count_reaches(&w, 1, sql), 1);

    /* A quote of the quote: the inner one is a ShallowQuote. */
    char *q2 = post_quote(&w, "carol", "and this", q);
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", q2);
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", q);
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.quote.quoted_status_id", p);

    /* In a timeline too (the list render, its cache), for another viewer. */
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/%s/statuses",
        eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.id", q);
    EU_IT_EXPECT_JSTR(&r, "0.quote.quoted_status.id", p);

    /* The quotes of bob's post: his to see. */
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/quotes", p);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", q);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/quotes", p);
    EU_IT_EXPECT_ERROR(&r, 403);

    /* bob takes his approval back: the quote shows revoked, without the
     * post, to everyone, the render cache notwithstanding. */
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", q);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/quotes/%s/revoke", p, q);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/quotes/%s/revoke", p, q);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", q);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "revoked");
    expect_null(&r, "quote.quoted_status");
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", q);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "revoked");
    expect_null(&r, "quote.quoted_status");
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/quotes", p);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* The quoted post deleted: a quote of it says so. */
    char *p2 = post(&w, "bob", "{\"status\":\"soon gone\"}");
    char *q3 = post_quote(&w, "alice", "quoting the gone", p2);
    api(&w, &r, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", p2);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", q3);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "deleted");
    expect_null(&r, "quote.quoted_status");

    free(p);
    free(q);
    free(q2);
    free(p2);
    free(q3);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/*
 * An edit of a quoted post, Mastodon 4.5's way: each local author of an
 * accepted quote of it gets quoted_update about their own quote (a
 * revoked quote's author does not); quote_approval_policy may change with
 * the edit, a bad one is 422 and changes nothing; quoted_status_id is not
 * the edit's to change (Mastodon's update takes none). The decoy's user
 * is told nothing.
 */
START_TEST(test_edit)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *p = post(&w, "bob", "{\"status\":\"first words\"}");
    char *other = post(&w, "bob", "{\"status\":\"another\"}");
    char *qa = post_quote(&w, "alice", "alice quotes", p);
    char *qc = post_quote(&w, "carol", "carol quotes", p);
    api(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/quotes/%s/revoke", p, qc);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* A bad policy: 422, the post as it was. */
    api(&w, &r, "PUT", eu_it_tok(&w, "bob"),
        "{\"status\":\"never\",\"quote_approval_policy\":\"everyone\"}", "/api/v1/statuses/%s", p);
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", p);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>first words</p>");
    expect_null(&r, "edited_at");

    /* The edit, with a new policy. */
    api(&w, &r, "PUT", eu_it_tok(&w, "bob"),
        "{\"status\":\"better words\",\"quote_approval_policy\":\"nobody\"}", "/api/v1/statuses/%s",
        p);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>better words</p>");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "quote_approval.automatic")), 0);
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", p);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "denied");
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"again\",\"quoted_status_id\":\"%s\"}", p);
    api(&w, &r, "POST", eu_it_tok(&w, "carol"), body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", NOT_FOUND);

    /* alice is told about her quote; carol, revoked, is not. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE type = 'quoted_update'"
             " AND account_id = %s AND from_account_id = %s AND status_id = %s",
             eu_it_id(&w, "alice"), eu_it_id(&w, "bob"), qa);
    ck_assert_int_eq(count_reaches(&w, 1, sql), 1);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications?types[]=quoted_update");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.type", "quoted_update");
    EU_IT_EXPECT_JSTR(&r, "0.account.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", qa);
    EU_IT_EXPECT_JSTR(&r, "0.status.quote.quoted_status.content", "<p>better words</p>");
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/notifications?types[]=quoted_update");
    ck_assert_int_eq(json_array_size(r.json), 0);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM notifications"
                                          " WHERE type = 'quoted_update' AND tenant_id = %s",
                                          w.decoy_tid),
                     0);

    /* alice edits her quote naming another post: the quote stays. */
    snprintf(body, sizeof(body), "{\"status\":\"alice again\",\"quoted_status_id\":\"%s\"}", other);
    api(&w, &r, "PUT", eu_it_tok(&w, "alice"), body, "/api/v1/statuses/%s", qa);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>alice again</p>");
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", p);

    free(p);
    free(other);
    free(qa);
    free(qc);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ISO 8601 UTC of wall-clock now + ms, into buf. */
static const char *
iso_in(char *buf, size_t len, long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long at = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + ms;
    time_t t = (time_t)(at / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[32];
    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03dZ", s, (int)(at % 1000));
    return buf;
}

/*
 * A quote given with scheduled_at: checked when scheduled (a post its
 * policy refuses is 404 then, nothing scheduled), kept in the scheduled
 * status (Mastodon's params name it), and made when it is published,
 * the quoted author told as for a quote posted at once.
 */
START_TEST(test_scheduled)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *p = post(&w, "bob", "{\"status\":\"quote me later\"}");
    char *closed = post(&w, "bob", "{\"status\":\"not me\",\"quote_approval_policy\":\"nobody\"}");
    char when[40], body[512];

    snprintf(body, sizeof(body),
             "{\"status\":\"no\",\"quoted_status_id\":\"%s\",\"scheduled_at\":\"%s\"}", closed,
             iso_in(when, sizeof(when), 60000));
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", NOT_FOUND);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/scheduled_statuses");
    ck_assert_int_eq(json_array_size(r.json), 0);

    snprintf(body, sizeof(body),
             "{\"status\":\"later quote\",\"quoted_status_id\":\"%s\","
             "\"quote_approval_policy\":\"followers\",\"scheduled_at\":\"%s\"}",
             p, iso_in(when, sizeof(when), 1500));
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "params.quoted_status_id", p);
    EU_IT_EXPECT_JSTR(&r, "params.quote_approval_policy", "followers");
    EU_IT_EXPECT_JSTR(&r, "params.text", "later quote");

    /* Published: the quote made, accepted, bob told. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM statuses WHERE tenant_id = %s AND account_id = %s"
             " AND text = 'later quote'",
             w.tid, eu_it_id(&w, "alice"));
    ck_assert_int_eq(count_reaches(&w, 1, sql), 1);
    char *q =
        eu_it_world_sql(&w,
                        "SELECT id::text FROM statuses WHERE tenant_id = %s AND account_id = %s"
                        " AND text = 'later quote'",
                        w.tid, eu_it_id(&w, "alice"));
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", q);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", p);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.automatic.0", "followers");
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE type = 'quote' AND account_id = %s"
             " AND from_account_id = %s AND status_id = %s",
             eu_it_id(&w, "bob"), eu_it_id(&w, "alice"), q);
    ck_assert_int_eq(count_reaches(&w, 1, sql), 1);
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/quotes", p);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", q);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/scheduled_statuses");
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(p);
    free(closed);
    free(q);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The id of user's status whose text is text, once there is one (NULL
 * after waiting: none was published). Caller frees. */
static char *
published(struct world *w, const char *user, const char *text)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM statuses WHERE tenant_id = %s AND account_id = %s"
             " AND text = '%s'",
             w->tid, eu_it_id(w, user), text);
    if (count_reaches(w, 1, sql) != 1)
        return NULL;
    return eu_it_world_sql(w,
                           "SELECT id::text FROM statuses WHERE tenant_id = %s AND account_id = %s"
                           " AND text = '%s'",
                           w->tid, eu_it_id(w, user), text);
}

/*
 * A scheduled quote is checked again when it is published, as Mastodon's
 * PublishScheduledStatusWorker hands the quoted status to
 * PostStatusService afresh: alice schedules four quotes, then before they
 * fall due bob closes one post to quotes (nobody), carol blocks alice
 * (the author of the second), and bob deletes the third. The untouched
 * one is published accepted, bob told; the closed and the blocked one are
 * published with the quote pending and no quoted post shown (Mastodon's
 * attach_quote! makes the quote and does not accept it), nobody told; the
 * deleted one is not published at all, its scheduled status gone
 * (Mastodon's Status.find raises RecordNotFound, which the worker
 * rescues after destroying it). The decoy tenant gains nothing.
 */
START_TEST(test_scheduled_recheck)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *ctl = post(&w, "bob", "{\"status\":\"stays open\"}");
    char *pol = post(&w, "bob", "{\"status\":\"closes later\"}");
    char *blk = post(&w, "carol", "{\"status\":\"blocks later\"}");
    char *del = post(&w, "bob", "{\"status\":\"deleted later\"}");
    long decoy_statuses =
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.decoy_tid);
    const char *quoted[] = {ctl, pol, blk, del};
    const char *texts[] = {"q ctl", "q pol", "q blk", "q del"};
    char when[40], body[512];
    iso_in(when, sizeof(when), 4000);
    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof(body),
                 "{\"status\":\"%s\",\"quoted_status_id\":\"%s\",\"scheduled_at\":\"%s\"}",
                 texts[i], quoted[i], when);
        api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "params.quoted_status_id", quoted[i]);
    }

    /* Before they fall due. */
    api(&w, &r, "PUT", eu_it_tok(&w, "bob"), "{\"quote_approval_policy\":\"nobody\"}",
        "/api/v1/statuses/%s/interaction_policy", pol);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/%s/block",
        eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", del);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/scheduled_statuses");
    ck_assert_msg(json_array_size(r.json) == 4, "published too soon for the test: %s", r.body);

    /* Nothing changed: accepted, as when it was scheduled. */
    char *q_ctl = published(&w, "alice", "q ctl");
    ck_assert_ptr_nonnull(q_ctl);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", q_ctl);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", ctl);

    /* Closed to quotes meanwhile: published, the quote pending. */
    char *q_pol = published(&w, "alice", "q pol");
    ck_assert_ptr_nonnull(q_pol);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", q_pol);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "pending");
    expect_null(&r, "quote.quoted_status");
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/quotes", pol);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Its author blocked the quoter meanwhile: the same. */
    char *q_blk = published(&w, "alice", "q blk");
    ck_assert_ptr_nonnull(q_blk);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", q_blk);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "pending");
    expect_null(&r, "quote.quoted_status");

    /* Deleted meanwhile: not published, the scheduled status gone. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM scheduled_statuses WHERE tenant_id = %s AND account_id = %s",
             w.tid, eu_it_id(&w, "alice"));
    ck_assert_int_eq(count_reaches(&w, 0, sql), 0);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                          " AND text = 'q del'",
                                          w.tid),
                     0);
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/scheduled_statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Only the accepted quote tells its author. */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE tenant_id = %s AND type = 'quote'"
             " AND from_account_id = %s",
             w.tid, eu_it_id(&w, "alice"));
    ck_assert_int_eq(count_reaches(&w, 1, sql), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                          " AND type = 'quote' AND status_id = %s",
                                          w.tid, q_ctl),
                     1);

    /* The decoy: nothing made there. */
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.decoy_tid),
        decoy_statuses);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM quotes WHERE tenant_id = %s", w.decoy_tid),
        0);

    free(ctl);
    free(pol);
    free(blk);
    free(del);
    free(q_ctl);
    free(q_pol);
    free(q_blk);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_policies)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char body[256];

    /* nobody: others are refused as Mastodon refuses them, the author
     * may quote it. */
    char *nobody =
        post(&w, "bob", "{\"status\":\"mine only\",\"quote_approval_policy\":\"nobody\"}");
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", nobody);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "quote_approval.automatic")), 0);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "denied");
    snprintf(body, sizeof(body), "{\"status\":\"no\",\"quoted_status_id\":\"%s\"}", nobody);
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", NOT_FOUND);
    ck_assert_int_eq(eu_it_world_sql_long(&w, "SELECT count(*) FROM quotes"), 0);
    char *self = post_quote(&w, "bob", "myself", nobody);
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", self);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");

    /* A private post is nobody's to quote but its author's. */
    char *priv = post(&w, "bob", "{\"status\":\"followers\",\"visibility\":\"private\"}");
    snprintf(body, sizeof(body), "{\"status\":\"no\",\"quoted_status_id\":\"%s\"}", priv);
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* followers: alice once she follows bob. */
    char *fol =
        post(&w, "bob", "{\"status\":\"followers quote\",\"quote_approval_policy\":\"followers\"}");
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", fol);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.automatic.0", "followers");
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "denied");
    snprintf(body, sizeof(body), "{\"status\":\"hm\",\"quoted_status_id\":\"%s\"}", fol);
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                         " VALUES (%s, %s, %s) RETURNING id",
                         w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "bob")));
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", fol);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "automatic");
    api(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");

    /* The author opens the nobody post: alice may quote it now. Not
     * alice's to change; not a policy Mastodon knows. */
    snprintf(body, sizeof(body), "{\"quote_approval_policy\":\"public\"}");
    api(&w, &r, "PUT", eu_it_tok(&w, "alice"), body, "/api/v1/statuses/%s/interaction_policy",
        nobody);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "PUT", eu_it_tok(&w, "bob"), "{\"quote_approval_policy\":\"anyone\"}",
        "/api/v1/statuses/%s/interaction_policy", nobody);
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "PUT", eu_it_tok(&w, "bob"), body, "/api/v1/statuses/%s/interaction_policy",
        nobody);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.automatic.0", "public");
    api(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", nobody);
    EU_IT_EXPECT_JSTR(&r, "quote_approval.current_user", "automatic");
    char *now_ok = post_quote(&w, "alice", "now", nobody);

    /* A quote of a boost quotes the boosted post. */
    api(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s/reblog", fol);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *boost = strdup(eu_it_json_str(&r, "id"));
    char *via = post_quote(&w, "bob", "via the boost", boost);
    api(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", via);
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", fol);

    /* Unknown ids: Mastodon's answer. */
    api(&w, &r, "POST", eu_it_tok(&w, "alice"),
        "{\"status\":\"x\",\"quoted_status_id\":\"123456789\"}", "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", NOT_FOUND);

    free(nobody);
    free(self);
    free(priv);
    free(fol);
    free(now_ok);
    free(boost);
    free(via);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_decoy_tenant)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char body[256];
    char *p = post(&w, "bob", "{\"status\":\"the host's\"}");
    char *q = post_quote(&w, "alice", "quoted", p);
    const char *dave = eu_it_tok(&w, "dave");

    snprintf(body, sizeof(body), "{\"status\":\"from afar\",\"quoted_status_id\":\"%s\"}", p);
    api(&w, &r, "POST", dave, body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", dave, NULL, "/api/v1/statuses/%s/quotes", p);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "POST", dave, NULL, "/api/v1/statuses/%s/quotes/%s/revoke", p, q);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "PUT", dave, "{\"quote_approval_policy\":\"nobody\"}",
        "/api/v1/statuses/%s/interaction_policy", p);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", dave, NULL, "/api/v1/statuses/%s", q);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Nothing of the host's changed, nothing of the decoy's made. */
    api(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s", q);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote_approval.automatic.0", "public");
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM quotes WHERE tenant_id = %s", w.decoy_tid),
        0);

    free(p);
    free(q);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------ two processes */

#define WAIT_MS 20000
#define FED_TOML                                                                                   \
    "[workers]\nqueue_idle_poll_seconds = 1\n"                                                     \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"

static bool
quote_state_is(const struct eu_it_resp *r, const void *arg)
{
    json_t *st = json_object_get(json_object_get(r->json, "quote"), "state");
    return r->status == 200 && json_is_string(st) && strcmp(json_string_value(st), arg) == 0;
}

static bool
content_is(const struct eu_it_resp *r, const void *arg)
{
    const char *c = json_string_value(json_object_get(r->json, "content"));
    return r->status == 200 && c && strcmp(c, arg) == 0;
}

static bool
one_status(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_array_size(r->json) == 1;
}

static bool
following_true(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_true(eu_it_jpath(r->json, "0.following"));
}

static void
wait_reloaded(struct eu_it_server *s)
{
    long long deadline = eu_it_now_ms() + WAIT_MS;
    while (eu_it_now_ms() < deadline) {
        FILE *f = fopen(s->log_path, "r");
        char line[4096];
        bool seen = false;
        while (f && fgets(line, sizeof(line), f))
            seen = seen || strstr(line, "config reloaded") != NULL;
        if (f)
            fclose(f);
        if (seen)
            return;
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("config not reloaded");
}

/* bob's post on b.test as alice's server knows it (its id there). */
static char *
resolve_on_a(struct eu_it_server *sa, const char *alice, const char *url)
{
    struct eu_it_resp r = {0};
    char *q = eu_it_urlencode(url);
    eu_it_callf(sa, &r, "a.test", "GET", alice, NULL,
                "/api/v2/search?q=%s&resolve=true&type=statuses", q);
    free(q);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(json_string_value(eu_it_jpath(r.json, "statuses.0.id")));
    eu_it_resp_free(&r);
    return id;
}

START_TEST(test_two_processes)
{
    struct eu_it_opts ob = {.extra_toml = FED_TOML};
    struct eu_it_server *sb = eu_it_server_start_opts(&ob);
    char toml[512];
    snprintf(toml, sizeof(toml), FED_TOML "hosts = [\"b.test=127.0.0.1:%d\"]\n", sb->public_port);
    struct eu_it_opts oa = {.extra_toml = toml};
    struct eu_it_server *sa = eu_it_server_start_opts(&oa);
    snprintf(toml, sizeof(toml), "hosts = [\"a.test=127.0.0.1:%d\"]\n", sa->public_port);
    FILE *f = fopen(sb->config_path, "a");
    ck_assert_ptr_nonnull(f);
    fputs(toml, f);
    fclose(f);
    eu_it_server_signal(sb, SIGHUP);
    wait_reloaded(sb);

    json_decref(eu_it_tenant_create(sa, "a.test", "A"));
    json_decref(eu_it_tenant_create(sb, "b.test", "B"));
    free(eu_it_account_seed(sa, "a.test", "alice"));
    free(eu_it_account_seed(sb, "b.test", "bob"));
    char *alice = eu_it_user_token(sa, "a.test", "alice", "read write follow");
    char *bob = eu_it_user_token(sb, "b.test", "bob", "read write follow");
    struct eu_it_resp r = {0};

    /* bob's two posts, one anyone may quote, one nobody. */
    eu_it_callf(sb, &r, "b.test", "POST", bob, "{\"status\":\"quote me\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *open_b = strdup(eu_it_json_str(&r, "id"));
    char *open_url = strdup(eu_it_json_str(&r, "uri"));
    eu_it_callf(sb, &r, "b.test", "POST", bob,
                "{\"status\":\"do not\",\"quote_approval_policy\":\"nobody\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *closed_url = strdup(eu_it_json_str(&r, "uri"));
    char *open_a = resolve_on_a(sa, alice, open_url);
    char *closed_a = resolve_on_a(sa, alice, closed_url);

    /* alice quotes the open one: pending until bob's server accepts. */
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"from a\",\"quoted_status_id\":\"%s\"}", open_a);
    eu_it_callf(sa, &r, "a.test", "POST", alice, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *q1 = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, quote_state_is, "accepted",
                   "the QuoteRequest accepted", "/api/v1/statuses/%s", q1);
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", open_a);

    /* bob's server has the quote, approved, in bob's list. */
    eu_it_wait_get(sb, &r, "b.test", bob, WAIT_MS, one_status, NULL, "alice's quote at bob's",
                   "/api/v1/statuses/%s/quotes", open_b);
    EU_IT_EXPECT_JSTR(&r, "0.account.acct", "alice@a.test");
    EU_IT_EXPECT_JSTR(&r, "0.quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "0.quote.quoted_status.id", open_b);
    char *q1_b = strdup(json_string_value(eu_it_jpath(r.json, "0.id")));

    /* Statuses fetched by search get their quotes as inbox ones do (alice
     * follows nobody yet, so only search brings these): bob quotes his
     * own open post (known at alice's) and a post alice's server never
     * saw (fetched when the quote is kept). */
    snprintf(body, sizeof(body), "{\"status\":\"self quote\",\"quoted_status_id\":\"%s\"}", open_b);
    eu_it_callf(sb, &r, "b.test", "POST", bob, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *self_b = strdup(eu_it_json_str(&r, "id"));
    char *self_url = strdup(eu_it_json_str(&r, "uri"));
    eu_it_callf(sb, &r, "b.test", "POST", bob, "{\"status\":\"unseen at a\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(body, sizeof(body), "{\"status\":\"quoting unseen\",\"quoted_status_id\":\"%s\"}",
             eu_it_json_str(&r, "id"));
    eu_it_callf(sb, &r, "b.test", "POST", bob, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *unseen_url = strdup(eu_it_json_str(&r, "uri"));
    char *self_a = resolve_on_a(sa, alice, self_url);
    eu_it_callf(sa, &r, "a.test", "GET", alice, NULL, "/api/v1/statuses/%s", self_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", open_a);
    char *unseen_a = resolve_on_a(sa, alice, unseen_url);
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, quote_state_is, "accepted",
                   "the searched quote of an unseen post", "/api/v1/statuses/%s", unseen_a);
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.content", "<p>unseen at a</p>");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.account.acct", "bob@b.test");
    free(self_url);
    free(unseen_url);
    free(unseen_a);

    /* alice follows bob, so his edits reach her server; bob edits the
     * post she quoted: a received Update tells her (quoted_update, about
     * her quote). */
    eu_it_callf(sa, &r, "a.test", "GET", alice, NULL, "/api/v1/statuses/%s", open_a);
    char *bob_a = strdup(json_string_value(eu_it_jpath(r.json, "account.id")));
    eu_it_callf(sa, &r, "a.test", "POST", alice, NULL, "/api/v1/accounts/%s/follow", bob_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, following_true, NULL, "alice follows bob",
                   "/api/v1/accounts/relationships?id[]=%s", bob_a);
    eu_it_callf(sb, &r, "b.test", "PUT", bob, "{\"status\":\"quote me, edited\"}",
                "/api/v1/statuses/%s", open_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, one_status, NULL, "quoted_update at alice's",
                   "/api/v1/notifications?types[]=quoted_update");
    EU_IT_EXPECT_JSTR(&r, "0.type", "quoted_update");
    EU_IT_EXPECT_JSTR(&r, "0.account.acct", "bob@b.test");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", q1);
    EU_IT_EXPECT_JSTR(&r, "0.status.quote.quoted_status.content", "<p>quote me, edited</p>");
    free(bob_a);

    /* bob edits his self quote keeping the quote: alice's server keeps the
     * quote as it was (the same row, still accepted). */
    char *db_qa = eu_it_tenant_database(sa, "a.test");
    char *self_quote_row =
        eu_it_pg_execf(db_qa, "SELECT id::text || state FROM quotes WHERE status_id = %s", self_a);
    ck_assert_ptr_nonnull(self_quote_row);
    eu_it_callf(sb, &r, "b.test", "PUT", bob, "{\"status\":\"self quote, edited\"}",
                "/api/v1/statuses/%s", self_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, content_is, "<p>self quote, edited</p>",
                   "the kept-quote edit at alice's", "/api/v1/statuses/%s", self_a);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    EU_IT_EXPECT_JSTR(&r, "quote.quoted_status.id", open_a);
    char *row_after =
        eu_it_pg_execf(db_qa, "SELECT id::text || state FROM quotes WHERE status_id = %s", self_a);
    ck_assert_str_eq(row_after, self_quote_row);
    free(row_after);
    free(self_quote_row);

    /* An edit that takes the quote away, as another server may send one
     * (eunha's edit API cannot, so bob's server has the row dropped
     * first): its Update's Note quotes nothing, and alice's server drops
     * the quote, as Mastodon 4.5's update_quote! does on an explicit
     * edit. */
    char *db_qb = eu_it_tenant_database(sb, "b.test");
    free(eu_it_pg_execf(db_qb, "DELETE FROM quotes WHERE status_id = %s", self_b));
    free(db_qb);
    /* First an implicit Update (a changed policy: its Note's updated is
     * the last edit's, not newer): the quote stays, as Mastodon keeps it. */
    long self_pol = eu_it_pg_execf_long(
        db_qa, "SELECT coalesce(quote_policy, -1) FROM statuses WHERE id = %s", self_a);
    ck_assert_int_ne(self_pol, 2); /* 2: nobody (statuses.quote_policy) */
    eu_it_callf(sb, &r, "b.test", "PUT", bob, "{\"quote_approval_policy\":\"nobody\"}",
                "/api/v1/statuses/%s/interaction_policy", self_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    long long self_until = eu_it_now_ms() + WAIT_MS;
    while (eu_it_now_ms() < self_until &&
           eu_it_pg_execf_long(db_qa, "SELECT quote_policy FROM statuses WHERE id = %s", self_a) !=
               2)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(
        eu_it_pg_execf_long(db_qa, "SELECT quote_policy FROM statuses WHERE id = %s", self_a), 2);
    eu_it_callf(sa, &r, "a.test", "GET", alice, NULL, "/api/v1/statuses/%s", self_a);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    /* A Note's updated is to the second, and an edit must be newer than
     * the last one to be taken (Mastodon's rule too). */
    eu_it_sleep_ms(1100);
    eu_it_callf(sb, &r, "b.test", "PUT", bob, "{\"status\":\"self quote, unquoted\"}",
                "/api/v1/statuses/%s", self_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_null(&r, "quote");
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, content_is, "<p>self quote, unquoted</p>",
                   "the unquoting edit at alice's", "/api/v1/statuses/%s", self_a);
    expect_null(&r, "quote");
    ck_assert_int_eq(
        eu_it_pg_execf_long(db_qa, "SELECT count(*) FROM quotes WHERE status_id = %s", self_a), 0);
    free(db_qa);
    free(self_a);
    free(self_b);

    /* bob closes the post alice quoted to new quotes: his server sends an
     * Update that edits nothing, as Mastodon 4.5 does, and alice's server
     * takes the policy, refusing a second quote at once; the quote made
     * stays accepted. */
    char *db_pol = eu_it_tenant_database(sa, "a.test");
    long nobody =
        eu_it_pg_execf_long(db_pol, "SELECT quote_policy FROM statuses WHERE id = %s", closed_a);
    ck_assert_int_ne(
        eu_it_pg_execf_long(db_pol, "SELECT quote_policy FROM statuses WHERE id = %s", open_a),
        nobody);
    eu_it_callf(sb, &r, "b.test", "PUT", bob, "{\"quote_approval_policy\":\"nobody\"}",
                "/api/v1/statuses/%s/interaction_policy", open_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    long long until = eu_it_now_ms() + WAIT_MS;
    while (eu_it_now_ms() < until &&
           eu_it_pg_execf_long(db_pol, "SELECT quote_policy FROM statuses WHERE id = %s", open_a) !=
               nobody)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(
        eu_it_pg_execf_long(db_pol, "SELECT quote_policy FROM statuses WHERE id = %s", open_a),
        nobody);
    free(db_pol);
    snprintf(body, sizeof(body), "{\"status\":\"again\",\"quoted_status_id\":\"%s\"}", open_a);
    eu_it_callf(sa, &r, "a.test", "POST", alice, body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(sa, &r, "a.test", "GET", alice, NULL, "/api/v1/statuses/%s", q1);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");

    /* Its authorization is served while it holds. */
    char *db_b = eu_it_tenant_database(sb, "b.test");
    char *auth = eu_it_pg_execf(db_b, "SELECT id::text FROM quotes WHERE status_id = %s", q1_b);
    ck_assert_ptr_nonnull(auth);
    char path[160];
    snprintf(path, sizeof(path), "/users/bob/quote_authorizations/%s", auth);
    eu_it_public(sb, "GET", "b.test", path, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "QuoteAuthorization");
    EU_IT_EXPECT_JSTR(&r, "interactionTarget", open_url);
    snprintf(path, sizeof(path), "/users/alice/quote_authorizations/%s", auth);
    eu_it_public(sb, "GET", "b.test", path, &r);
    EU_IT_EXPECT_STATUS(&r, 404);

    /* The nobody post: its fetched Note says so, so alice's server
     * refuses the quote at once, as Mastodon does. */
    snprintf(body, sizeof(body), "{\"status\":\"try\",\"quoted_status_id\":\"%s\"}", closed_a);
    eu_it_callf(sa, &r, "a.test", "POST", alice, body, "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 404);
    /* Known without its policy (as one fetched before it had one), the
     * quote is asked for and rejected by bob's server. */
    char *db_a = eu_it_tenant_database(sa, "a.test");
    free(eu_it_pg_execf(db_a, "UPDATE statuses SET quote_policy = NULL WHERE id = %s", closed_a));
    free(db_a);
    eu_it_callf(sa, &r, "a.test", "POST", alice, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "pending");
    expect_null(&r, "quote.quoted_status");
    char *q2 = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, quote_state_is, "rejected",
                   "the QuoteRequest rejected", "/api/v1/statuses/%s", q2);
    expect_null(&r, "quote.quoted_status");

    /* bob takes back his approval of the first: alice's server hears. */
    eu_it_callf(sb, &r, "b.test", "POST", bob, NULL, "/api/v1/statuses/%s/quotes/%s/revoke", open_b,
                q1_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "revoked");
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, quote_state_is, "revoked",
                   "the revoke at alice's", "/api/v1/statuses/%s", q1);

    /* Revoked, the authorization is gone. */
    snprintf(path, sizeof(path), "/users/bob/quote_authorizations/%s", auth);
    eu_it_public(sb, "GET", "b.test", path, &r);
    EU_IT_EXPECT_STATUS(&r, 404);

    free(db_b);
    free(auth);
    free(q1);
    free(q1_b);
    free(q2);
    free(open_b);
    free(open_url);
    free(closed_url);
    free(open_a);
    free(closed_a);
    free(alice);
    free(bob);
    eu_it_resp_free(&r);
    eu_it_server_free(sa);
    eu_it_server_free(sb);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("integration.ap.quotes");
    EU_IT_ADD_TCASE(s, test_quote_render_list_revoke, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_policies, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_edit, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_scheduled, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_scheduled_recheck, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_decoy_tenant, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_two_processes, 300);
    return eu_it_run_suite(s);
}
