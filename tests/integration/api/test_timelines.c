/*
 * Timelines end to end: the home feed fanned out into Redis on write and
 * rebuilt from PostgreSQL after FLUSHALL, with its rules (own statuses,
 * follows, show_reblogs, replies, direct, mutes, blocks) and pagination;
 * the public and hashtag timelines with their parameters; an account's
 * statuses with theirs. Follows, mutes and blocks are written straight into
 * the tenant database (dropping the feed as the accounts endpoints do).
 */
#include "world.h"

#include <check.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "t.example"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .users = {{"alice"}, {"bob"}, {"carol"}},
};

/* A synchronous Redis connection to EUNHA_TEST_REDIS_URL. */
static redisContext *
redis(void)
{
    const char *url = getenv("EUNHA_TEST_REDIS_URL");
    char host[128] = "127.0.0.1";
    int port = 6379;
    if (url)
        sscanf(url, "redis://%127[^:]:%d", host, &port);
    redisContext *c = redisConnect(host, port);
    ck_assert_msg(c && !c->err, "cannot connect to redis %s:%d", host, port);
    return c;
}

static void
redis_flushall(void)
{
    redisContext *c = redis();
    freeReplyObject(redisCommand(c, "FLUSHALL"));
    redisFree(c);
}

/* Whether member is in account_id's home feed in Redis; -1 when the feed is missing. */
static int
feed_has(struct world *w, const char *account_id, const char *member)
{
    char key[256];
    snprintf(key, sizeof(key), "%s:{t%s}:feed:home:%s", w->s->name, w->tid, account_id);
    redisContext *c = redis();
    redisReply *e = redisCommand(c, "EXISTS %s", key);
    int exists = (int)e->integer;
    freeReplyObject(e);
    int out = -1;
    if (exists) {
        redisReply *r = redisCommand(c, "ZSCORE %s %s", key, member);
        out = r->type != REDIS_REPLY_NIL;
        freeReplyObject(r);
    }
    redisFree(c);
    return out;
}

/* Fan-out runs after the post is answered: waits up to 3 s for member to be
 * in the feed (want 1), or gives it 300 ms to wrongly arrive (want 0). */
static void
expect_in_feed(struct world *w, const char *account_id, const char *member, int want)
{
    int got = feed_has(w, account_id, member);
    if (want == 1) {
        for (int i = 0; i < 60 && got != 1; i++) {
            eu_it_sleep_ms(50);
            got = feed_has(w, account_id, member);
        }
    } else {
        eu_it_sleep_ms(300);
        got = feed_has(w, account_id, member);
    }
    ck_assert_msg(got == want, "status %s in the feed of %s: want %d, got %d", member, account_id,
                  want, got);
}

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *token,
    const char *body)
{
    ck_assert_int_eq(eu_it_http(r, method, w->s->public_port, HOST, path, token, body), 0);
}

static char *
post(struct world *w, const char *token, const char *body)
{
    struct eu_it_resp r = {0};
    api(w, &r, "POST", "/api/v1/statuses", token, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* Asserts that r is an array of statuses with exactly these ids, in order
 * (NULL-terminated). */
static void
expect_ids(const struct eu_it_resp *r, ...)
{
    va_list ap;
    va_start(ap, r);
    ck_assert_msg(json_is_array(r->json), "not an array: %.800s", r->body);
    size_t i = 0;
    for (const char *id; (id = va_arg(ap, const char *)); i++) {
        json_t *st = json_array_get(r->json, i);
        const char *got = json_string_value(json_object_get(st, "id"));
        ck_assert_msg(got && strcmp(got, id) == 0, "item %zu: want %s, got %s in %.1500s", i, id,
                      got ? got : "(none)", r->body);
    }
    va_end(ap);
    ck_assert_msg(json_array_size(r->json) == i, "want %zu items, got %zu: %.1500s", i,
                  json_array_size(r->json), r->body);
}

static void
follow(struct world *w, const char *who, const char *whom, bool reblogs)
{
    free(eu_it_world_sql(
        w,
        "INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs)"
        " VALUES (%s, %s, %s, %s)",
        w->tid, who, whom, reblogs ? "true" : "false"));
}

/* What the accounts endpoints do after a follow, mute or block. */
static void
drop_feed(struct world *w, const char *account_id)
{
    char key[256];
    snprintf(key, sizeof(key), "%s:{t%s}:feed:home:%s", w->s->name, w->tid, account_id);
    redisContext *c = redis();
    freeReplyObject(redisCommand(c, "DEL %s", key));
    redisFree(c);
}

START_TEST(test_home_fanout_and_rebuild)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    follow(&w, eu_it_id(&w, "alice"), eu_it_id(&w, "bob"), true);

    char *b1 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"bob one\"}");
    char *c1 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"carol, not followed\"}");
    /* No feed yet: the first read builds it from PostgreSQL. */
    ck_assert_int_eq(feed_has(&w, eu_it_id(&w, "alice"), b1), -1);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_ids(&r, b1, NULL);
    expect_in_feed(&w, eu_it_id(&w, "alice"), b1, 1);
    /* an idle feed expires from Redis (reads renew it) */
    {
        char key[256];
        snprintf(key, sizeof(key), "%s:{t%s}:feed:home:%s", w.s->name, w.tid,
                 eu_it_id(&w, "alice"));
        redisContext *c = redis();
        redisReply *ttl = redisCommand(c, "TTL %s", key);
        ck_assert_msg(ttl->integer > 86400, "feed TTL %lld", (long long)ttl->integer);
        freeReplyObject(ttl);
        redisFree(c);
    }

    /* Now writes fan out into the feed. */
    char *b2 =
        post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"bob two\",\"visibility\":\"private\"}");
    char *a1 = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"alice own\"}");
    char *dm =
        post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"@carol secret\",\"visibility\":\"direct\"}");
    char *reply = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"@carol hi\"}");
    char body[200];
    snprintf(body, sizeof(body), "{\"status\":\"@carol reply\",\"in_reply_to_id\":\"%s\"}", c1);
    char *to_carol = post(&w, eu_it_tok(&w, "bob"), body);
    expect_in_feed(&w, eu_it_id(&w, "alice"), b2, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), a1, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), dm, 0);
    expect_in_feed(&w, eu_it_id(&w, "alice"), to_carol,
                   0); /* a reply to someone alice does not follow */
    expect_in_feed(&w, eu_it_id(&w, "alice"), c1, 0);
    expect_in_feed(&w, eu_it_id(&w, "alice"), reply, 1);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, reply, a1, b2, b1, NULL);

    /* Pagination with Link headers */
    api(&w, &r, "GET", "/api/v1/timelines/home?limit=2", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, reply, a1, NULL);
    const char *link = eu_it_resp_header(&r, "Link");
    char want[256];
    snprintf(want, sizeof(want), "/api/v1/timelines/home?limit=2&max_id=%s>; rel=\"next\"", a1);
    ck_assert_msg(link && strstr(link, want), "Link: %s", link ? link : "(none)");
    snprintf(want, sizeof(want), "/api/v1/timelines/home?limit=2&min_id=%s>; rel=\"prev\"", reply);
    ck_assert_msg(strstr(link, want), "Link: %s", link);
    char path[200];
    snprintf(path, sizeof(path), "/api/v1/timelines/home?limit=2&max_id=%s", a1);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, b2, b1, NULL);
    snprintf(path, sizeof(path), "/api/v1/timelines/home?limit=2&min_id=%s", b1);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, a1, b2, NULL);
    snprintf(path, sizeof(path), "/api/v1/timelines/home?since_id=%s", b2);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, reply, a1, NULL);

    /* Redis loses everything: nothing is lost. */
    redis_flushall();
    ck_assert_int_eq(feed_has(&w, eu_it_id(&w, "alice"), b1), -1);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_ids(&r, reply, a1, b2, b1, NULL);
    expect_in_feed(&w, eu_it_id(&w, "alice"), b2, 1);

    /* A deleted status leaves the feed. */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", b2);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, reply, a1, b1, NULL);

    /* Redis down: the home timeline is read from PostgreSQL. */
    if (getenv("EUNHA_TEST_REDIS_STOP")) {
        eu_it_sh("EUNHA_TEST_REDIS_STOP");
        api(&w, &r, "GET", "/api/v1/timelines/home?limit=2", eu_it_tok(&w, "alice"), NULL);
        EU_IT_EXPECT_STATUS(&r, 200);
        expect_ids(&r, reply, a1, NULL);
        eu_it_sh("EUNHA_TEST_REDIS_START");
    }

    /* Reading home needs a user. */
    api(&w, &r, "GET", "/api/v1/timelines/home", NULL, NULL);
    EU_IT_EXPECT_ERROR(&r, 401);

    free(b1);
    free(c1);
    free(b2);
    free(a1);
    free(dm);
    free(reply);
    free(to_carol);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_home_reblogs_mutes_blocks)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    /* alice follows bob without his reblogs, and carol with hers */
    follow(&w, eu_it_id(&w, "alice"), eu_it_id(&w, "bob"), false);
    follow(&w, eu_it_id(&w, "alice"), eu_it_id(&w, "carol"), true);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL); /* build the feed */
    expect_ids(&r, NULL);

    char *a1 = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"alice writes\"}");
    char *b1 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"bob writes\"}");
    char path[200];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/reblog", a1);
    api(&w, &r, "POST", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *bob_reblog = strdup(eu_it_json_str(&r, "id"));
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/reblog", b1);
    api(&w, &r, "POST", path, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *carol_reblog = strdup(eu_it_json_str(&r, "id"));

    expect_in_feed(&w, eu_it_id(&w, "alice"), bob_reblog, 0);
    expect_in_feed(&w, eu_it_id(&w, "alice"), carol_reblog, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), b1, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), a1, 1);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, carol_reblog, b1, a1, NULL);
    EU_IT_EXPECT_JSTR(&r, "0.reblog.id", b1);
    EU_IT_EXPECT_JSTR(&r, "0.account.id", eu_it_id(&w, "carol"));
    /* the same after a rebuild */
    redis_flushall();
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, carol_reblog, b1, a1, NULL);

    /* alice mutes carol: carol's statuses and reblogs leave, new ones stay out */
    free(eu_it_world_sql(
        &w, "INSERT INTO mutes (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "carol")));
    drop_feed(&w, eu_it_id(&w, "alice"));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, b1, a1, NULL);
    char *c2 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"muted\"}");
    expect_in_feed(&w, eu_it_id(&w, "alice"), c2, 0);

    /* bob blocks alice: his statuses leave her feed */
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "bob"), eu_it_id(&w, "alice")));
    drop_feed(&w, eu_it_id(&w, "alice"));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    expect_ids(&r, a1, NULL);
    char *b2 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"blocked\"}");
    expect_in_feed(&w, eu_it_id(&w, "alice"), b2, 0);

    free(a1);
    free(b1);
    free(b2);
    free(c2);
    free(bob_reblog);
    free(carol_reblog);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* A plain status (no mention, tag, poll or media) fans out by the rules
 * written for it in the statement that inserts it (statuses.insert_plain's feeds column):
 * each case here is one the general rule decides, and the rebuilt feeds
 * must agree. */
/*
 * A remote follower is reached by delivery, never through a home feed: its
 * follows row says it is not local (migration 0074's trigger, whoever
 * wrote the row), and neither a plain post nor one with a mention (the
 * general recipients statement) touches a feed under its id, even one
 * that exists. Its presence still makes the plain post delivered; a post
 * by an author without remote followers queues no delivery.
 */
START_TEST(test_home_remote_followers)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *rem = eu_it_remote_account(w.db, w.tid, "https://far.example/users/rem", true);
    const char *bob = eu_it_id(&w, "bob");
    follow(&w, eu_it_id(&w, "alice"), bob, true);
    follow(&w, rem, bob, true);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s AND"
                                         " target_account_id = %s AND local = (account_id = %s)",
                                         w.tid, bob, eu_it_id(&w, "alice")),
                     2);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* A feed under the remote account's id, as if one had been built. */
    char key[256];
    snprintf(key, sizeof(key), "%s:{t%s}:feed:home:%s", w.s->name, w.tid, rem);
    redisContext *c = redis();
    freeReplyObject(redisCommand(c, "ZADD %s 0 0", key));
    redisFree(c);

    /* Deliveries are seen through copies: a job may be done and gone before
     * the test looks. */
    free(eu_it_world_sql(&w, "CREATE TABLE it_jobs (tenant_id bigint, kind text)"));
    free(eu_it_world_sql(&w, "CREATE FUNCTION it_copy_job() RETURNS trigger LANGUAGE plpgsql AS"
                             " $$BEGIN INSERT INTO it_jobs VALUES (NEW.tenant_id, NEW.kind);"
                             " RETURN NEW; END$$"));
    free(eu_it_world_sql(&w, "CREATE TRIGGER it_copy_job AFTER INSERT ON jobs FOR EACH ROW"
                             " EXECUTE FUNCTION it_copy_job()"));
    const char *deliveries =
        "SELECT count(*) FROM it_jobs WHERE tenant_id = %s AND kind = 'ap_deliver'";
    long before = eu_it_pg_execf_long(w.db, deliveries, w.tid);
    char *plain = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"to all my followers\"}");
    char *mention = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"hi @carol\"}");
    expect_in_feed(&w, eu_it_id(&w, "alice"), plain, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), mention, 1);
    expect_in_feed(&w, rem, plain, 0);
    expect_in_feed(&w, rem, mention, 0);
    long long until = eu_it_now_ms() + 5000;
    while (eu_it_now_ms() < until && eu_it_pg_execf_long(w.db, deliveries, w.tid) == before)
        eu_it_sleep_ms(50);
    long after_bob = eu_it_pg_execf_long(w.db, deliveries, w.tid);
    ck_assert_msg(after_bob > before, "no delivery queued for the remote follower");

    /* carol has no remote follower: her post queues nothing. */
    char *lone = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"nobody far away\"}");
    eu_it_sleep_ms(300);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db, deliveries, w.tid), after_bob);

    free(lone);
    free(plain);
    free(mention);
    free(rem);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

START_TEST(test_home_plain_status_rules)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    follow(&w, eu_it_id(&w, "alice"), eu_it_id(&w, "bob"), true);
    follow(&w, eu_it_id(&w, "carol"), eu_it_id(&w, "bob"), true);
    const char *tok[] = {eu_it_tok(&w, "alice"), eu_it_tok(&w, "bob"), eu_it_tok(&w, "carol")};
    for (int i = 0; i < 3; i++)
        api(&w, &r, "GET", "/api/v1/timelines/home", tok[i], NULL); /* build the feeds */

    char *b0 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"bob starts\"}");
    char *c0 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"carol starts\"}");
    /* Direct without a mention: its author's feed only. */
    char *dm =
        post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"a note to self\",\"visibility\":\"direct\"}");
    char body[300];
    /* A reply to carol, whom alice does not follow: carol's, not alice's. */
    snprintf(body, sizeof(body), "{\"status\":\"to carol\",\"in_reply_to_id\":\"%s\"}", c0);
    char *to_c = post(&w, eu_it_tok(&w, "bob"), body);
    /* A reply to himself reaches every follower. */
    snprintf(body, sizeof(body), "{\"status\":\"to myself\",\"in_reply_to_id\":\"%s\"}", b0);
    char *to_b = post(&w, eu_it_tok(&w, "bob"), body);
    /* carol blocks bob (the follower blocks the author). */
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "carol"), eu_it_id(&w, "bob")));
    char *blocked = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"carol blocks me\"}");
    /* alice's mute of bob that has run out hides nothing; one that has not
     * hides. */
    free(eu_it_world_sql(&w,
                         "INSERT INTO mutes (tenant_id, account_id, target_account_id, expires_at)"
                         " VALUES (%s, %s, %s, now() - interval '1 minute')",
                         w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "bob")));
    char *expired = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"mute ran out\"}");
    free(eu_it_world_sql(
        &w,
        "UPDATE mutes SET expires_at = now() + interval '1 hour' WHERE tenant_id = %s"
        " AND account_id = %s",
        w.tid, eu_it_id(&w, "alice")));
    char *muted = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"muted for now\"}");

    expect_in_feed(&w, eu_it_id(&w, "bob"), dm, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), dm, 0);
    expect_in_feed(&w, eu_it_id(&w, "carol"), dm, 0);
    expect_in_feed(&w, eu_it_id(&w, "carol"), to_c, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), to_c, 0);
    expect_in_feed(&w, eu_it_id(&w, "alice"), to_b, 1);
    expect_in_feed(&w, eu_it_id(&w, "carol"), to_b, 1);
    expect_in_feed(&w, eu_it_id(&w, "carol"), blocked, 0);
    expect_in_feed(&w, eu_it_id(&w, "alice"), blocked, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), expired, 1);
    expect_in_feed(&w, eu_it_id(&w, "alice"), muted, 0);
    expect_in_feed(&w, eu_it_id(&w, "bob"), muted, 1);

    /* The general rule, as a rebuild applies it now, agrees for every
     * status posted since the last change of blocks or mutes. */
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "bob"), NULL);
    expect_ids(&r, muted, expired, blocked, to_b, to_c, dm, b0, NULL);
    drop_feed(&w, eu_it_id(&w, "bob"));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "bob"), NULL);
    expect_ids(&r, muted, expired, blocked, to_b, to_c, dm, b0, NULL);
    drop_feed(&w, eu_it_id(&w, "carol"));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "carol"), NULL);
    expect_ids(&r, c0, NULL); /* blocking bob hides his older statuses too */

    free(b0);
    free(c0);
    free(dm);
    free(to_c);
    free(to_b);
    free(blocked);
    free(expired);
    free(muted);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Waits up to 3 s for the count that sql (one %s: the tenant id) answers
 * to reach want; returns the last count. */
static long
count_reaches(struct world *w, long want, const char *sql)
{
    long got = eu_it_pg_execf_long(w->db, sql, w->tid);
    for (int i = 0; i < 60 && got != want; i++) {
        eu_it_sleep_ms(50);
        got = eu_it_pg_execf_long(w->db, sql, w->tid);
    }
    return got;
}

/*
 * A plain post keeps its author's audience (include/eunha/audience.h), so
 * the author's next post reads no follower while accounts.audience_stamp
 * (migration 0075) holds. Whatever changes the audience moves the stamp:
 * a new follower, a follower's bell, a mute (and its running out, which
 * no write announces), a remote follower's new inbox. Each post here
 * reaches exactly whom it would had nothing been kept, and /metrics
 * counts which posts used the kept audience. The decoy tenant's author,
 * posting in between, keeps its own.
 */
START_TEST(test_home_kept_audience)
{
    static const struct eu_it_world_opts opts = {
        .host = HOST,
        .decoy = "decoy.example",
        .users = {{"alice"}, {"bob"}, {"carol"}, {"dave", "decoy.example"}},
    };
    struct world w;
    eu_it_world_start(&w, &opts);
    struct eu_it_resp r = {0};
    const char *alice = eu_it_id(&w, "alice"), *bob = eu_it_id(&w, "bob");
    const char *carol = eu_it_id(&w, "carol");
    follow(&w, alice, bob, true);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "carol"), NULL);
    const char *kept = "eunha_post_audiences_total{source=\"kept\"}";
    const char *read = "eunha_post_audiences_total{source=\"read\"}";
    double kept0 = eu_it_metric(w.s, kept), read0 = eu_it_metric(w.s, read);

    char *p1 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"one\"}");
    char *p2 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"two\"}");
    expect_in_feed(&w, alice, p1, 1);
    expect_in_feed(&w, alice, p2, 1);
    ck_assert_double_eq(eu_it_metric(w.s, read), read0 + 1);
    ck_assert_double_eq(eu_it_metric(w.s, kept), kept0 + 1);
    /* The decoy's author reads its own audience, bob's stays kept. */
    ck_assert_int_eq(eu_it_http(&r, "POST", w.s->public_port, "decoy.example", "/api/v1/statuses",
                                eu_it_tok(&w, "dave"), "{\"status\":\"elsewhere\"}"),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *p3 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"three\"}");
    expect_in_feed(&w, alice, p3, 1);
    ck_assert_double_eq(eu_it_metric(w.s, read), read0 + 2);
    ck_assert_double_eq(eu_it_metric(w.s, kept), kept0 + 2);

    /* A new follower: the next post reads again and reaches her. */
    follow(&w, carol, bob, true);
    char *p4 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"four\"}");
    char *p5 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"five\"}");
    expect_in_feed(&w, carol, p3, 0);
    expect_in_feed(&w, carol, p4, 1);
    expect_in_feed(&w, carol, p5, 1);
    ck_assert_double_eq(eu_it_metric(w.s, read), read0 + 3);
    ck_assert_double_eq(eu_it_metric(w.s, kept), kept0 + 3);

    /* alice rings the bell: both posts after it tell her. */
    free(eu_it_world_sql(&w,
                         "UPDATE follows SET notify = true WHERE tenant_id = %s AND account_id = %s"
                         " AND target_account_id = %s",
                         w.tid, alice, bob));
    char *p6 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"six\"}");
    char *p7 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"seven\"}");
    char sql[400];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE tenant_id = %%s AND account_id = %s"
             " AND type = 'status' AND status_id IN (%s, %s, %s)",
             alice, p5, p6, p7);
    ck_assert_int_eq(count_reaches(&w, 2, sql), 2);

    /* carol mutes bob for two seconds: hidden while it lasts, kept or
     * not; once it runs out, with no write to say so, the next post
     * reaches her again. */
    free(eu_it_world_sql(&w,
                         "INSERT INTO mutes (tenant_id, account_id, target_account_id, expires_at)"
                         " VALUES (%s, %s, %s, now() + interval '2 seconds')",
                         w.tid, carol, bob));
    long long lapse = eu_it_now_ms() + 2000;
    char *p8 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"eight\"}");
    char *p9 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"nine\"}");
    expect_in_feed(&w, carol, p8, 0);
    expect_in_feed(&w, carol, p9, 0);
    expect_in_feed(&w, alice, p9, 1);
    double read_muted = eu_it_metric(w.s, read);
    while (eu_it_now_ms() < lapse + 300)
        eu_it_sleep_ms(100);
    char *p10 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"ten\"}");
    expect_in_feed(&w, carol, p10, 1);
    ck_assert_double_eq(eu_it_metric(w.s, read), read_muted + 1);

    /* A remote follower: its shared inbox gets the kept post too, and
     * its new inbox the post after it moved. */
    free(eu_it_world_sql(&w, "CREATE TABLE it_inboxes (tenant_id bigint, inbox text)"));
    free(eu_it_world_sql(&w, "CREATE FUNCTION it_copy_inbox() RETURNS trigger LANGUAGE plpgsql"
                             " AS $$BEGIN INSERT INTO it_inboxes VALUES (NEW.tenant_id,"
                             " NEW.payload->>'inbox'); RETURN NEW; END$$"));
    free(eu_it_world_sql(&w, "CREATE TRIGGER it_copy_inbox AFTER INSERT ON jobs FOR EACH ROW"
                             " WHEN (NEW.kind = 'ap_deliver') EXECUTE FUNCTION it_copy_inbox()"));
    char *rem = eu_it_remote_account(w.db, w.tid, "https://far.example/users/rem", true);
    follow(&w, rem, bob, true);
    const char *old_inbox = "SELECT count(*) FROM it_inboxes WHERE tenant_id = %s"
                            " AND inbox = 'https://far.example/inbox'";
    const char *new_inbox = "SELECT count(*) FROM it_inboxes WHERE tenant_id = %s"
                            " AND inbox = 'https://far.example/new-inbox'";
    char *p11 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"eleven\"}");
    ck_assert_int_eq(count_reaches(&w, 1, old_inbox), 1);
    double kept_far = eu_it_metric(w.s, kept);
    char *p12 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"twelve\"}");
    ck_assert_int_eq(count_reaches(&w, 2, old_inbox), 2);
    ck_assert_double_eq(eu_it_metric(w.s, kept), kept_far + 1);
    free(eu_it_world_sql(&w,
                         "UPDATE accounts SET shared_inbox_url = 'https://far.example/new-inbox'"
                         " WHERE tenant_id = %s AND id = %s",
                         w.tid, rem));
    char *p13 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"thirteen\"}");
    ck_assert_int_eq(count_reaches(&w, 1, new_inbox), 1);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db, old_inbox, w.tid), 2);
    /* No delivery from the decoy's tenant, none for alice's posts. */
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM it_inboxes WHERE tenant_id <> %s", w.tid),
        0);
    /* carol's feed as the posts filled it: from her follow on, less what
     * the mute hid. */
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "carol"), NULL);
    expect_ids(&r, p13, p12, p11, p10, p7, p6, p5, p4, NULL);

    char *ps[] = {p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, rem};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        free(ps[i]);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* POST /api/v1/statuses answers with the status rendered by the statement
 * that inserted it; GET must answer the same, and the author's counters in
 * it are those after the post. */
START_TEST(test_post_answer_is_the_status)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0}, g = {0};
    char *c0 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"carol starts\"}");
    /* alice muted carol's conversation: her reply in it says so. */
    free(eu_it_world_sql(
        &w,
        "INSERT INTO conversation_mutes (tenant_id, account_id, conversation_id)"
        " SELECT %s, %s, coalesce(conversation_id, id) FROM statuses WHERE tenant_id = %s"
        " AND id = %s",
        w.tid, eu_it_id(&w, "alice"), w.tid, c0));
    char *pic = eu_it_pg_execf(
        w.db,
        "WITH n AS (SELECT eunha_next_id() AS id) INSERT INTO media_attachments"
        " (tenant_id, id, account_id, type, state, description, blurhash, meta, file_key,"
        " file_content_type, file_size, preview_key, preview_size, focus_x, focus_y)"
        " SELECT %s, n.id, %s, 'image', 'ready', 'a cat', 'LEHV6nWB2yk8pyo0adR*.7kCMdnj',"
        " '{\"original\":{\"width\":640,\"height\":480}}',"
        " '%s/media_attachments/' || n.id || '/original.jpg', 'image/jpeg', 1000,"
        " '%s/media_attachments/' || n.id || '/small.webp', 100, 0.5, -0.25 FROM n"
        " RETURNING id::text",
        w.tid, eu_it_id(&w, "alice"), w.tid, w.tid);
    /* Plain ones (statuses.insert_plain), a reply in the muted
     * conversation, then statuses.insert's: mentions and tags, media, and a
     * poll (rendered by the render statement). */
    char reply[200], media[200];
    snprintf(reply, sizeof(reply), "{\"status\":\"quietly\",\"in_reply_to_id\":\"%s\"}", c0);
    snprintf(media, sizeof(media), "{\"status\":\"a picture\",\"media_ids\":[\"%s\"]}", pic);
    const char *bodies[] = {
        "{\"status\":\"first <b>words</b>\",\"spoiler_text\":\"cw\",\"sensitive\":true,"
        "\"language\":\"en\"}",
        "{\"status\":\"again\",\"visibility\":\"private\"}",
        reply,
        "{\"status\":\"@bob and @carol see #Zebra #apple #ZEBRA\"}",
        media,
        "{\"status\":\"which?\",\"poll\":{\"options\":[\"a\",\"b\"],\"expires_in\":600}}",
    };
    enum { N = sizeof(bodies) / sizeof(bodies[0]) };
    json_t *posted[N];
    for (int i = 0; i < N; i++) {
        api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), bodies[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JINT(&r, "account.statuses_count", i + 1);
        EU_IT_EXPECT_JINT(&r, "replies_count", 0);
        ck_assert(json_is_false(eu_it_jpath(r.json, "favourited")));
        ck_assert(json_is_false(eu_it_jpath(r.json, "pinned")));
        ck_assert(json_is_boolean(eu_it_jpath(r.json, "muted")));
        ck_assert(json_is_true(eu_it_jpath(r.json, "muted")) == (i == 2));
        posted[i] = json_incref(r.json);
        /* Read back through the render cache the POST filled. */
        char path[100];
        snprintf(path, sizeof(path), "/api/v1/statuses/%s", eu_it_json_str(&r, "id"));
        api(&w, &g, "GET", path, eu_it_tok(&w, "alice"), NULL);
        EU_IT_EXPECT_STATUS(&g, 200);
        ck_assert_msg(json_equal(r.json, g.json), "POST answered %.2000s\nGET answers %.2000s",
                      r.body, g.body);
    }
    ck_assert_int_eq(json_array_size(json_object_get(posted[3], "mentions")), 2);
    ck_assert_int_eq(json_array_size(json_object_get(posted[3], "tags")), 2);
    ck_assert_int_eq(json_array_size(json_object_get(posted[4], "media_attachments")), 1);
    ck_assert_int_eq(json_array_size(eu_it_jpath(posted[5], "poll.options")), 2);
    api(&w, &g, "GET", "/api/v1/accounts/verify_credentials", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JINT(&g, "statuses_count", N);
    /* And rendered afresh by the render statement, with an empty cache: the
     * same status; the account too for the last post, which the later
     * ones have not counted on since. */
    eu_it_server_restart(w.s);
    for (int i = 0; i < N; i++) {
        char path[100];
        snprintf(path, sizeof(path), "/api/v1/statuses/%s",
                 json_string_value(json_object_get(posted[i], "id")));
        api(&w, &g, "GET", path, eu_it_tok(&w, "alice"), NULL);
        EU_IT_EXPECT_STATUS(&g, 200);
        json_t *got = json_copy(g.json);
        if (i < N - 1) {
            json_object_del(posted[i], "account");
            json_object_del(got, "account");
        }
        char *a = json_dumps(posted[i], JSON_SORT_KEYS), *b = json_dumps(got, JSON_SORT_KEYS);
        ck_assert_msg(json_equal(posted[i], got), "POST answered %s\nafresh %s", a, b);
        free(a);
        free(b);
        json_decref(got);
        json_decref(posted[i]);
    }
    /* The answer's account is the author's row as it committed: a follower
     * gained since shows in the next post's answer. */
    follow(&w, eu_it_id(&w, "bob"), eu_it_id(&w, "alice"), true);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), "{\"status\":\"four\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "account.statuses_count", N + 1);
    EU_IT_EXPECT_JINT(&r, "account.followers_count", 1);
    free(c0);
    free(pic);
    eu_it_resp_free(&r);
    eu_it_resp_free(&g);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_public_and_tag)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *p1 = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"#Cats are great\"}");
    char *p2 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"#cats and #dogs\"}");
    char *p3 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"only #dogs\"}");
    char *un = post(&w, eu_it_tok(&w, "alice"),
                    "{\"status\":\"#cats quietly\",\"visibility\":\"unlisted\"}");
    char *pr = post(&w, eu_it_tok(&w, "alice"),
                    "{\"status\":\"#cats privately\",\"visibility\":\"private\"}");
    char body[200];
    snprintf(body, sizeof(body), "{\"status\":\"@alice a reply\",\"in_reply_to_id\":\"%s\"}", p1);
    char *rep = post(&w, eu_it_tok(&w, "bob"), body);

    api(&w, &r, "GET", "/api/v1/timelines/public", NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_ids(&r, p3, p2, p1, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/public?local=true", eu_it_tok(&w, "carol"), NULL);
    expect_ids(&r, p3, p2, p1, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/public?remote=true", eu_it_tok(&w, "carol"), NULL);
    expect_ids(&r, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/public?only_media=true", eu_it_tok(&w, "carol"), NULL);
    expect_ids(&r, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/public?local=maybe", eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "GET", "/api/v1/timelines/public?limit=1", NULL, NULL);
    expect_ids(&r, p3, NULL);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "rel=\"next\""), "Link: %s", link ? link : "(none)");
    char path[300];
    snprintf(path, sizeof(path), "/api/v1/timelines/public?limit=1&max_id=%s", p3);
    api(&w, &r, "GET", path, NULL, NULL);
    expect_ids(&r, p2, NULL);
    /* carol mutes bob */
    free(eu_it_world_sql(
        &w, "INSERT INTO mutes (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "carol"), eu_it_id(&w, "bob")));
    api(&w, &r, "GET", "/api/v1/timelines/public", eu_it_tok(&w, "carol"), NULL);
    expect_ids(&r, p3, p1, NULL);

    api(&w, &r, "GET", "/api/v1/timelines/tag/cats", NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_ids(&r, p2, p1, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/tag/CATS?any[]=dogs", NULL, NULL);
    expect_ids(&r, p3, p2, p1, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/tag/cats?all[]=dogs", NULL, NULL);
    expect_ids(&r, p2, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/tag/cats?none[]=dogs", NULL, NULL);
    expect_ids(&r, p1, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/tag/nothing", NULL, NULL);
    expect_ids(&r, NULL);
    api(&w, &r, "GET", "/api/v1/timelines/tag/no%20such", NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_ids(&r, NULL);

    free(p1);
    free(p2);
    free(p3);
    free(un);
    free(pr);
    free(rep);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_account_statuses)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *c1 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"carol\"}");
    char *a1 = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"plain\"}");
    char *a2 = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"#tagged post\"}");
    char body[200];
    snprintf(body, sizeof(body), "{\"status\":\"@carol reply\",\"in_reply_to_id\":\"%s\"}", c1);
    char *a3 = post(&w, eu_it_tok(&w, "alice"), body);
    snprintf(body, sizeof(body), "{\"status\":\"thread\",\"in_reply_to_id\":\"%s\"}", a1);
    char *a4 = post(&w, eu_it_tok(&w, "alice"), body);
    char path[300];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/reblog", c1);
    api(&w, &r, "POST", path, eu_it_tok(&w, "alice"), NULL);
    char *a5 = strdup(eu_it_json_str(&r, "id"));

    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses", eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_ids(&r, a5, a4, a3, a2, a1, NULL);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses?exclude_replies=true",
             eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, NULL, NULL);
    expect_ids(&r, a5, a4, a2, a1, NULL); /* a self-reply stays */
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses?exclude_reblogs=1&limit=2",
             eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, NULL, NULL);
    expect_ids(&r, a4, a3, NULL);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses?tagged=TAGGED",
             eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, NULL, NULL);
    expect_ids(&r, a2, NULL);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses?only_media=true",
             eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, NULL, NULL);
    expect_ids(&r, NULL);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses?min_id=%s&limit=2",
             eu_it_id(&w, "alice"), a1);
    api(&w, &r, "GET", path, NULL, NULL);
    expect_ids(&r, a3, a2, NULL);

    free(c1);
    free(a1);
    free(a2);
    free(a3);
    free(a4);
    free(a5);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("integration.timelines");
    EU_IT_ADD_TCASE(s, test_home_fanout_and_rebuild, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_home_reblogs_mutes_blocks, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_home_plain_status_rules, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_home_remote_followers, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_home_kept_audience, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_post_answer_is_the_status, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_public_and_tag, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_account_statuses, TIMEOUT);
    return eu_it_run_suite(s);
}
