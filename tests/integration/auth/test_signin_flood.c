/*
 * Floods of password guesses cannot fill the CPU pool that every tenant's
 * password checks share: they are refused 429 with Retry-After before they
 * are queued, while another tenant's correct password grant still
 * succeeds. A flood on one tenant from many addresses stops at that
 * tenant's share ([server] cpu_jobs_per_tenant checks in flight); a flood
 * from one address spread over 40 tenants, each within its share, stops at
 * that address's share of the whole process (as many checks in flight as
 * the pool has threads), so an untouched tenant's sign-in does not wait
 * behind it. Clients are told apart by X-Forwarded-For behind a trusted
 * proxy. Nothing here stops or pauses the shared PostgreSQL or Redis.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 300
#define PASSWORD "correct horse battery staple"
#define PROXY "trusted_proxies = [\"127.0.0.1\"]"
#define BUSY "Too many sign-in attempts are being checked; try again shortly"

static struct eu_it_server *srv;

static struct eu_it_app
make_app(const char *host)
{
    return eu_it_app_create(
        srv, host,
        "{\"client_name\":\"F\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\","
        "\"scopes\":\"read\"}");
}

/* POST /oauth/token, password grant for alice, from address xff; returns
 * the status. */
static long
grant(const char *host, const struct eu_it_app *a, const char *xff, const char *password,
      struct eu_it_resp *r)
{
    char body[512], xff_line[96];
    snprintf(body, sizeof(body),
             "{\"grant_type\":\"password\",\"client_id\":\"%s\",\"client_secret\":\"%s\","
             "\"username\":\"alice@%s\",\"password\":\"%s\",\"scope\":\"read\"}",
             a->id, a->secret, host, password);
    snprintf(xff_line, sizeof(xff_line), "X-Forwarded-For: %s", xff);
    const char *h[] = {"Content-Type: application/json", xff_line, NULL};
    int rc = eu_it_http_raw(r, "POST", srv->public_port, host, "/oauth/token", h, body);
    return rc == 0 ? r->status : 0;
}

struct guess {
    const char *host;
    const struct eu_it_app *a;
    char xff[48];
    long status;
    bool retry_after, busy_message;
};

static void *
guess_main(void *arg)
{
    struct guess *g = arg;
    struct eu_it_resp r = {0};
    g->status = grant(g->host, g->a, g->xff, "wrong guess", &r);
    g->retry_after = eu_it_resp_header(&r, "Retry-After") != NULL;
    g->busy_message = r.body && strstr(r.body, BUSY) != NULL;
    eu_it_resp_free(&r);
    return NULL;
}

/* Joins n guesses: each was either refused 429 before being checked (with
 * Retry-After and the reason) or checked and found wrong (400). Returns how
 * many were refused. */
static int
join_guesses(pthread_t *th, struct guess *g, int n, int *checked)
{
    int refused = 0;
    *checked = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        if (g[i].status == 429) {
            ck_assert(g[i].retry_after);
            ck_assert(g[i].busy_message);
            refused++;
        } else {
            ck_assert_int_eq(g[i].status, 400); /* the wrong password, checked */
            (*checked)++;
        }
    }
    return refused;
}

/* The neighbour's correct grant: 200 with a token; returns how long it took. */
static long long
quiet_grant(const struct eu_it_app *qa)
{
    struct eu_it_resp r = {0};
    long long t0 = eu_it_now_ms();
    ck_assert_int_eq(grant("quiet.example", qa, "192.0.2.9", PASSWORD, &r), 200);
    long long ms = eu_it_now_ms() - t0;
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return ms;
}

#define FLOOD 24

START_TEST(test_flood_waits_behind_itself)
{
    /* This flood is as big as the sign-in limits allow from one address
     * (25), and a bigger one would be answered 429 before the pool saw
     * it; here it comes from 24 addresses, so only the tenant's share
     * stops it. The limits are off: the share is for floods they cannot
     * stop (many addresses and logins, or Redis away). */
    struct eu_it_opts o = {.server_toml = PROXY,
                           .extra_toml = "[limits]\nsign_in_attempts_per_ip_per_5min = 0\n"
                                         "sign_in_attempts_per_login_per_hour = 0\n"};
    srv = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(srv, "flood.example", "Flood"));
    json_decref(eu_it_tenant_create(srv, "quiet.example", "Quiet"));
    eu_it_account_create(srv, "flood.example", "alice");
    eu_it_account_create(srv, "quiet.example", "alice");
    struct eu_it_app fa = make_app("flood.example"), qa = make_app("quiet.example");

    pthread_t threads[FLOOD];
    struct guess g[FLOOD];
    for (int i = 0; i < FLOOD; i++) {
        g[i] = (struct guess){.host = "flood.example", .a = &fa};
        snprintf(g[i].xff, sizeof(g[i].xff), "203.0.113.%d", i + 1);
        ck_assert_int_eq(pthread_create(&threads[i], NULL, guess_main, &g[i]), 0);
    }
    /* The neighbour's sign-in, while the guesses are being checked. */
    eu_it_sleep_ms(50);
    long long quiet_ms = quiet_grant(&qa);

    int checked, refused = join_guesses(threads, g, FLOOD, &checked);
    fprintf(stderr, "flood: %d checked, %d refused with 429; the neighbour's grant took %lld ms\n",
            checked, refused, quiet_ms);
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(checked, 0);

    /* The flooded tenant's own sign-in works again. */
    struct eu_it_resp r = {0};
    ck_assert_int_eq(grant("flood.example", &fa, "203.0.113.1", PASSWORD, &r), 200);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

#define TENANTS 40
#define PER_TENANT 4 /* cpu_jobs_per_tenant's default: each tenant within its share */

/*
 * The probe's flood: one address, 40 tenants, each sent as many guesses at
 * once as its share allows, with the sign-in limits at their defaults
 * (25 per address per 5 minutes per tenant, more than this). Queued, 160
 * checks would stand in front of the untouched tenant's; refused past the
 * address's share, at most as many as the pool has threads do.
 */
START_TEST(test_flood_over_many_tenants)
{
    struct eu_it_opts o = {.server_toml = PROXY};
    srv = eu_it_server_start_opts(&o);
    static struct eu_it_app apps[TENANTS];
    char hosts[TENANTS][32];
    for (int i = 0; i < TENANTS; i++) {
        snprintf(hosts[i], sizeof(hosts[i]), "f%d.example", i);
        json_decref(eu_it_tenant_create(srv, hosts[i], "Flooded"));
        eu_it_account_create(srv, hosts[i], "alice");
        apps[i] = make_app(hosts[i]);
    }
    json_decref(eu_it_tenant_create(srv, "quiet.example", "Quiet"));
    eu_it_account_create(srv, "quiet.example", "alice");
    struct eu_it_app qa = make_app("quiet.example");
    /* The untouched tenant's sign-in on an idle server, for comparison. */
    long long idle_ms = quiet_grant(&qa);

    enum { N = TENANTS * PER_TENANT };
    static pthread_t threads[N];
    static struct guess g[N];
    for (int i = 0; i < N; i++) {
        g[i] = (struct guess){.host = hosts[i % TENANTS], .a = &apps[i % TENANTS]};
        snprintf(g[i].xff, sizeof(g[i].xff), "198.51.100.1");
        ck_assert_int_eq(pthread_create(&threads[i], NULL, guess_main, &g[i]), 0);
    }
    eu_it_sleep_ms(200);
    long long quiet_ms = quiet_grant(&qa);

    int checked, refused = join_guesses(threads, g, N, &checked);
    fprintf(stderr,
            "flood over %d tenants: %d checked, %d refused with 429; the untouched tenant's "
            "grant took %lld ms (%lld ms idle)\n",
            TENANTS, checked, refused, quiet_ms, idle_ms);
    /* Every guess was within its tenant's share: only the address's share
     * refuses them. */
    ck_assert_int_gt(refused, 0);
    /* Generous: the flood, had it been queued, puts 160 checks (seconds of
     * the pool's time) in front; refused, a couple at most. */
    ck_assert_msg(quiet_ms < 2000 + 4 * idle_ms, "the untouched tenant waited %lld ms (idle %lld)",
                  quiet_ms, idle_ms);

    /* The flooded tenants' owners sign in from their own addresses. */
    struct eu_it_resp r = {0};
    ck_assert_int_eq(grant(hosts[0], &apps[0], "192.0.2.10", PASSWORD, &r), 200);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("signin_flood");
    EU_IT_ADD_TCASE(s, test_flood_waits_behind_itself, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_flood_over_many_tenants, TIMEOUT);
    return eu_it_run_suite(s);
}
