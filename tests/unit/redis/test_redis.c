/*
 * Tests for Redis URL parsing (host, port, database, AUTH credentials, and
 * errors that never show the password) and for the redaction helper every
 * log line that names a server goes through; and for the Redis that is
 * never up (eu_redis_new_down()), which a placement's unusable URL gets.
 */
#include <check.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/log.h"
#include "eunha/redis.h"

struct url_case {
    const char *url;
    const char *host, *unix_path, *user, *password;
    int port, db;
};

static const struct url_case good[] = {
    {"redis://127.0.0.1:6380/2", "127.0.0.1", NULL, NULL, NULL, 6380, 2},
    {"redis://cache", "cache", NULL, NULL, NULL, 6379, 0},
    {"redis://:s3cret@cache:7000/1", "cache", NULL, NULL, "s3cret", 7000, 1},
    {"redis://eunha:s3cret@cache/3", "cache", NULL, "eunha", "s3cret", 6379, 3},
    /* The last '@' ends the userinfo; escapes are decoded. */
    {"redis://:p@ss%3Aw%2Fd@h:1/0", "h", NULL, NULL, "p@ss:w/d", 1, 0},
    {"redis://us%40er:pw@h", "h", NULL, "us@er", "pw", 6379, 0},
    {"unix:///run/redis.sock", NULL, "/run/redis.sock", NULL, NULL, 0, 0},
};

START_TEST(test_parse_good)
{
    const struct url_case *c = &good[_i];
    struct eu_redis_target t;
    char err[256] = "";
    ck_assert_msg(eu_redis_url_parse(c->url, &t, err, sizeof(err)) == 0, "%s: %s", c->url, err);
    if (c->host)
        ck_assert_str_eq(t.host, c->host);
    else
        ck_assert_ptr_null(t.host);
    if (c->unix_path)
        ck_assert_str_eq(t.unix_path, c->unix_path);
    else
        ck_assert_ptr_null(t.unix_path);
    if (c->user)
        ck_assert_str_eq(t.user, c->user);
    else
        ck_assert_ptr_null(t.user);
    if (c->password)
        ck_assert_str_eq(t.password, c->password);
    else
        ck_assert_ptr_null(t.password);
    if (!c->unix_path) {
        ck_assert_int_eq(t.port, c->port);
        ck_assert_int_eq(t.db, c->db);
    }
    eu_redis_target_release(&t);
}
END_TEST

struct bad_case {
    const char *url, *err;
};

static const struct bad_case bad[] = {
    {"http://h:1", "redis url 'http://h:1' must start with redis:// or unix://"},
    {"redis://:hunter2@h:99999/0", "redis url 'redis://:********@h:99999/0' has a bad port"},
    {"redis://u:hunter2@:1/0", "redis url 'redis://u:********@:1/0' has no host"},
    {"redis://hunter2@h/0",
     "redis url has a user but no password (write ':password@' or 'user:password@')"},
    {"redis://:hun%zzter2@h/0", "redis url 'redis://:********@h/0' has a bad %-escape in its "
                                "password"},
    {"redis://u:@h/0", "redis url 'redis://u:********@h/0' has an empty password"},
    {"unix://", "redis url 'unix://' has no socket path"},
};

START_TEST(test_parse_bad)
{
    struct eu_redis_target t;
    char err[256] = "";
    ck_assert_int_eq(eu_redis_url_parse(bad[_i].url, &t, err, sizeof(err)), -1);
    ck_assert_str_eq(err, bad[_i].err);
    ck_assert_ptr_null(t.password);
}
END_TEST

struct redact_case {
    const char *in, *out;
};

static const struct redact_case redact[] = {
    {"redis://:pw@h:1/0", "redis://:********@h:1/0"},
    {"redis://user:pw@h", "redis://user:********@h"},
    {"postgresql://eunha:p%40ss@db:5432/eunha", "postgresql://eunha:********@db:5432/eunha"},
    {"postgresql://db/eunha?user=u&password=secret&sslmode=require",
     "postgresql://db/eunha?user=u&password=********&sslmode=require"},
    {"host=db dbname=eunha password='a b\\'c' user=u",
     "host=db dbname=eunha password=******** user=u"},
    {"password=x", "password=********"},
    {"postgresql://db/eunha", "postgresql://db/eunha"},
};

START_TEST(test_redact)
{
    char *out = eu_log_redact_url(redact[_i].in);
    ck_assert_str_eq(out, redact[_i].out);
    free(out);
}
END_TEST

static void
on_reply(struct redisReply *reply, void *arg)
{
    int *calls = arg;
    ck_assert_ptr_null(reply);
    (*calls)++;
}

/* Commands fail as with a Redis that is down: -1, and the callback later
 * with NULL, never at once (callers may not be ready for it yet). */
START_TEST(test_down)
{
    struct event_base *base = event_base_new();
    struct eu_redis *r = eu_redis_new_down(base);
    ck_assert(!eu_redis_is_connected(r));
    int calls = 0;
    const char *argv[] = {"GET", "k"};
    ck_assert_int_eq(eu_redis_command(r, on_reply, &calls, 2, argv, NULL), -1);
    ck_assert_int_eq(calls, 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(calls, 1);
    ck_assert_int_eq(eu_redis_psubscribe(r, "p*", NULL, NULL, NULL), 0);
    ck_assert(!eu_redis_is_subscribed(r));
    ck_assert_int_eq(eu_redis_subscribe(r, "c"), -1);
    eu_redis_unsubscribe(r, "c");
    event_base_loop(base, EVLOOP_NONBLOCK);
    eu_redis_free(r);
    event_base_free(base);
}
END_TEST

static Suite *
redis_suite(void)
{
    Suite *s = suite_create("redis");
    TCase *tc = tcase_create("url");
    tcase_add_loop_test(tc, test_parse_good, 0, (int)(sizeof(good) / sizeof(good[0])));
    tcase_add_loop_test(tc, test_parse_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
    suite_add_tcase(s, tc);
    tc = tcase_create("redact");
    tcase_add_loop_test(tc, test_redact, 0, (int)(sizeof(redact) / sizeof(redact[0])));
    suite_add_tcase(s, tc);
    tc = tcase_create("down");
    tcase_add_test(tc, test_down);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(redis_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
