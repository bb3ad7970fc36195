/*
 * Two eunha processes federating: each with its own config, control
 * database, placement and Redis prefix, a.test on one and b.test on the
 * other, reaching each other through [federation] hosts (the static host
 * map, as curl's --connect-to) over real HTTP with signatures. Follow,
 * post and favourite, each checked on the other process's REST API.
 */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT 300
#define WAIT_MS 20000
/* [federation] last: the host map is appended to it once the other
 * process's port is known. */
#define FED_TOML                                                                                   \
    "[workers]\nqueue_idle_poll_seconds = 1\n"                                                     \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"

static bool
following(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 &&
           json_is_true(json_object_get(json_array_get(r->json, 0), "following"));
}

static bool
favourited_once(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 &&
           json_integer_value(json_object_get(r->json, "favourites_count")) == 1;
}

/* Appends text to s's config file. */
static void
append_config(struct eu_it_server *s, const char *text)
{
    FILE *f = fopen(s->config_path, "a");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Waits until s's log says its config was reloaded n times. */
static void
wait_reloaded(struct eu_it_server *s, int n)
{
    long long deadline = eu_it_now_ms() + WAIT_MS;
    while (eu_it_now_ms() < deadline) {
        FILE *f = fopen(s->log_path, "r");
        int seen = 0;
        char line[4096];
        while (f && fgets(line, sizeof(line), f))
            seen += strstr(line, "config reloaded") != NULL;
        if (f)
            fclose(f);
        if (seen >= n)
            return;
        eu_it_sleep_ms(50);
    }
    eu_it_server_print_log(s);
    ck_abort_msg("config not reloaded");
}

START_TEST(test_two_processes_federate)
{
    /* B first, then A with B's address; then B learns A's. */
    struct eu_it_opts ob = {.extra_toml = FED_TOML};
    struct eu_it_server *sb = eu_it_server_start_opts(&ob);
    char toml[512];
    snprintf(toml, sizeof(toml), FED_TOML "hosts = [\"b.test=127.0.0.1:%d\"]\n", sb->public_port);
    struct eu_it_opts oa = {.extra_toml = toml};
    struct eu_it_server *sa = eu_it_server_start_opts(&oa);
    ck_assert_str_ne(sa->name, sb->name);
    snprintf(toml, sizeof(toml), "hosts = [\"a.test=127.0.0.1:%d\"]\n", sa->public_port);
    append_config(sb, toml);
    eu_it_server_signal(sb, SIGHUP);
    wait_reloaded(sb, 1);

    json_decref(eu_it_tenant_create(sa, "a.test", "A"));
    json_decref(eu_it_tenant_create(sb, "b.test", "B"));
    free(eu_it_account_seed(sa, "a.test", "alice"));
    free(eu_it_account_seed(sb, "b.test", "bob"));
    char *alice = eu_it_user_token(sa, "a.test", "alice", "read write follow");
    char *bob = eu_it_user_token(sb, "b.test", "bob", "read write follow");
    char *bob_id = eu_it_account_id(sb, "b.test", "bob");
    struct eu_it_resp r = {0};

    /* Neither process holds the other's tenant. */
    eu_it_public(sa, "GET", "b.test", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 404);

    /* alice finds bob on the other process and follows him. */
    eu_it_callf(sa, &r, "a.test", "GET", alice, NULL,
                "/api/v2/search?q=%%40bob%%40b.test&resolve=true&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 1);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", "bob@b.test");
    char *bob_a = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));
    eu_it_callf(sa, &r, "a.test", "POST", alice, NULL, "/api/v1/accounts/%s/follow", bob_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, following, NULL, "alice follows bob",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob_a);
    eu_it_wait_get(sb, &r, "b.test", bob, WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's follow notification", "/api/v1/notifications?types%%5B%%5D=follow");
    eu_it_wait_get(sb, &r, "b.test", bob, WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "alice among bob's followers", "/api/v1/accounts/%s/followers", bob_id);

    /* bob posts: in alice's home; she favourites it: bob hears of it. */
    eu_it_callf(sb, &r, "b.test", "POST", bob, "{\"status\": \"across processes\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *post_b = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(sa, &r, "a.test", alice, WAIT_MS, eu_it_has_acct, "bob@b.test",
                   "bob's post at alice's", "/api/v1/timelines/home");
    json_t *st = eu_it_find(r.json, "account.acct", "bob@b.test");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(st, "content")), "across processes"));
    char *post_a = strdup(json_string_value(json_object_get(st, "id")));
    eu_it_callf(sa, &r, "a.test", "POST", alice, NULL, "/api/v1/statuses/%s/favourite", post_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(sb, &r, "b.test", bob, WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's favourite notification", "/api/v1/notifications?types%%5B%%5D=favourite");
    eu_it_wait_get(sb, &r, "b.test", bob, WAIT_MS, favourited_once, NULL, "favourites_count on b",
                   "/api/v1/statuses/%s", post_b);

    free(post_a);
    free(post_b);
    free(bob_a);
    free(bob_id);
    free(alice);
    free(bob);
    eu_it_resp_free(&r);
    eu_it_server_free(sa);
    eu_it_server_free(sb);
}
END_TEST

/* A bad host map entry stops the server at start with a clear message. */
START_TEST(test_host_map_is_checked)
{
    const char *bad[] = {"b.test", "b.test=localhost:80", "=127.0.0.1:80", "b.test=127.0.0.1",
                         "b.test:80=127.0.0.1:80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char toml[256];
        snprintf(toml, sizeof(toml), "[federation]\nhosts = [\"%s\"]\n", bad[i]);
        char path[] = "/tmp/eunha-hostmap-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, toml, strlen(toml)), (ssize_t)strlen(toml));
        close(fd);
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s check-config -c %s 2>&1", getenv("EUNHA_BIN"), path);
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        char out[4096] = "";
        size_t n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = '\0';
        int rc = pclose(p);
        unlink(path);
        ck_assert_msg(rc != 0, "'%s' was accepted: %s", bad[i], out);
        ck_assert_msg(strstr(out, "federation.hosts"), "'%s': %s", bad[i], out);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_two_processes");
    EU_IT_ADD_TCASE(s, test_two_processes_federate, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_host_map_is_checked, TIMEOUT);
    return eu_it_run_suite(s);
}
