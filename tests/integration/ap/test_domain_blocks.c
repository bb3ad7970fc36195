/*
 * Domain blocks against a real server, a fake remote server (ap_peer.h:
 * actors "peer" and "other" on 127.0.0.1:PORT) and a recording inbox:
 *
 * - a user's block (/api/v1/domain_blocks) hides the domain's statuses from
 *   the public, hashtag, home, list and account timelines, ends follows
 *   both ways, removes its notifications and refuses new ones, makes
 *   Relationship.domain_blocking true and forbids following there; another
 *   domain is untouched; unblocking shows the statuses again; the list is
 *   paged with a Link header; invalid domains and the cap are 422s;
 * - the operator's suspend (/admin/v1/tenants/{domain}/domain_blocks)
 *   makes the inbox answer 403 to a signed activity from that domain and
 *   authorized fetch refuse its key, suspends its known accounts and the
 *   ones seen later, and lifting it gives them back; reject_reports drops
 *   its Flags; the decoy tenant in the same database is unaffected;
 * - a host that refused a tenant's delivery (403) gets no new deliveries
 *   from that tenant for a while (counted, shown by the admin API), then
 *   one again, which ends the refusal; the decoy tenant still delivers
 *   there; nothing is sent to a suspended domain.
 */
#include "harness.h"

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ap_peer.h"
#include "eunha/apdeliver.h"
#include "eunha/httpsig.h"

#define TIMEOUT 240
#define HOST "a.test"
#define DECOY "d.test"

struct env {
    struct eu_it_server *s;
    struct peer *peer;
    char *db, *tid, *decoy_tid;
    char peer_id[128], peer_key[160];
    char *alice, *bob, *carol; /* tokens: alice and bob on HOST, carol on DECOY */
    char *alice_id, *bob_id, *carol_id;
};

static void
env_start(struct env *e, const char *extra_toml)
{
    memset(e, 0, sizeof(*e));
    char toml[512];
    snprintf(toml, sizeof(toml), "%s[workers]\nqueue_idle_poll_seconds = 1\n%s", PEER_TOML,
             extra_toml ? extra_toml : "");
    struct eu_it_opts o = {.extra_toml = toml};
    e->s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(e->s, HOST, "A"));
    json_decref(eu_it_tenant_create(e->s, DECOY, "Decoy"));
    e->alice = eu_it_user_new(e->s, HOST, "alice", "read write follow", &e->alice_id);
    e->bob = eu_it_user_new(e->s, HOST, "bob", "read write follow", &e->bob_id);
    e->carol = eu_it_user_new(e->s, DECOY, "carol", "read write follow", &e->carol_id);
    e->db = eu_it_tenant_database(e->s, HOST);
    char *ddb = eu_it_tenant_database(e->s, DECOY);
    ck_assert_str_eq(e->db, ddb); /* the decoy shares the database */
    free(ddb);
    e->tid = eu_it_tenant_id(e->s, HOST);
    e->decoy_tid = eu_it_tenant_id(e->s, DECOY);
    e->peer = peer_start();
    snprintf(e->peer_id, sizeof(e->peer_id), "%s/users/peer", e->peer->origin);
    snprintf(e->peer_key, sizeof(e->peer_key), "%s#main-key", e->peer_id);
}

static void
env_end(struct env *e)
{
    peer_stop(e->peer);
    free(e->alice);
    free(e->bob);
    free(e->carol);
    free(e->alice_id);
    free(e->bob_id);
    free(e->carol_id);
    free(e->db);
    free(e->tid);
    free(e->decoy_tid);
    ck_assert_int_eq(eu_it_server_stop(e->s), 0);
    eu_it_server_free(e->s);
}

/* Signature header lines but Host (the harness sends its own). */
static int
header_lines(const struct eu_httpsig_signed *sg, char **lines, const char **headers)
{
    int n = 0;
    for (int i = 0; i < sg->n; i++) {
        if (strcasecmp(sg->headers[i].name, "Host") == 0)
            continue;
        ck_assert_int_ge(asprintf(&lines[n], "%s: %s", sg->headers[i].name, sg->headers[i].value),
                         0);
        headers[n] = lines[n];
        n++;
    }
    return n;
}

/* method (POST with body, or GET) of path on host, signed by the peer's
 * actor "peer" with a draft-cavage signature. */
static void
signed_request(struct env *e, const char *method, const char *host, const char *path,
               const char *body, struct eu_it_resp *r)
{
    char url[256];
    snprintf(url, sizeof(url), "http://%s%s", host, path);
    struct eu_httpsig_sign_args a = {
        .method = method,
        .url = url,
        .body = body,
        .body_len = body ? strlen(body) : 0,
        .key_id = e->peer_key,
        .key_pem = e->peer->actors[0].priv,
        .now = time(NULL),
    };
    struct eu_httpsig_signed sg = {0};
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &sg), 0);
    char *lines[EU_HTTPSIG_SIGNED_MAX + 1];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    int n = header_lines(&sg, lines, headers);
    headers[n] =
        body ? "Content-Type: application/activity+json" : "Accept: application/activity+json";
    headers[n + 1] = NULL;
    eu_it_resp_free(r);
    ck_assert_int_eq(eu_it_http_raw(r, method, e->s->public_port, host, path, headers, body), 0);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&sg);
}

/* The peer's Like (id n) of status_id of user on host, delivered to host's
 * shared inbox; returns the answer's status. */
static long
deliver_like(struct env *e, const char *host, const char *user, const char *status_id, int n)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"%s/likes/%d\","
             "\"type\":\"Like\",\"actor\":\"%s\",\"object\":\"http://%s/users/%s/statuses/%s\"}",
             e->peer->origin, n, e->peer_id, host, user, status_id);
    struct eu_it_resp r = {0};
    signed_request(e, "POST", host, "/inbox", body, &r);
    long st = r.status;
    if (st != 202)
        ck_assert_msg(eu_it_json_str(&r, "error") != NULL, "no error body: %s", r.body);
    eu_it_resp_free(&r);
    return st;
}

static char *
post_status(struct env *e, const char *host, const char *token, const char *text)
{
    char body[512];
    snprintf(body, sizeof(body), "{\"status\":\"%s\"}", text);
    struct eu_it_resp r = {0};
    eu_it_callf(e->s, &r, host, "POST", token, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* Runs the statement made from fmt until it returns a row or ms pass; the
 * row's first cell (caller frees) or NULL. */
static char *wait_row(struct env *e, long ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *
wait_row(struct env *e, long ms, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    long long until = eu_it_now_ms() + ms;
    char *v;
    while (!(v = eu_it_pg_exec(e->db, q)) && eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    return v;
}

/* A public status by account_id of tenant tid, as ingestion stores a
 * remote one, with hashtag tag (NULL: none); returns its id. */
static char *
remote_status(struct env *e, const char *tid, const char *account_id, const char *uri,
              const char *tag)
{
    char *id = eu_it_pg_execf(e->db,
                              "INSERT INTO statuses (tenant_id, account_id, uri, local, content)"
                              " VALUES (%s, %s, '%s', false, '<p>remote %s</p>') RETURNING id",
                              tid, account_id, uri, uri);
    if (tag)
        free(eu_it_pg_execf(e->db,
                            "WITH t AS (INSERT INTO tags (tenant_id, name) VALUES (%s, '%s')"
                            " ON CONFLICT (tenant_id, (lower(name))) DO UPDATE SET name = '%s'"
                            " RETURNING id) INSERT INTO statuses_tags (tenant_id, status_id,"
                            " tag_id) SELECT %s, %s, id FROM t",
                            tid, tag, tag, tid, id));
    return id;
}

/* Whether the JSON array at the answer holds a status with id (or a
 * reblog of it). */
static bool
has_status(const struct eu_it_resp *r, const char *id)
{
    ck_assert_msg(json_is_array(r->json), "not an array: %s", r->body);
    size_t i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        const char *sid = json_string_value(json_object_get(v, "id"));
        const char *rid = json_string_value(eu_it_jpath(v, "reblog.id"));
        if ((sid && strcmp(sid, id) == 0) || (rid && strcmp(rid, id) == 0))
            return true;
    }
    return false;
}

/* GET path on HOST with token; asserts 200. */
static void
get(struct env *e, const char *token, const char *path, struct eu_it_resp *r)
{
    eu_it_callf(e->s, r, HOST, "GET", token, NULL, "%s", path);
    EU_IT_EXPECT_STATUS(r, 200);
}

static bool
relationship_flag(struct env *e, const char *account_id)
{
    struct eu_it_resp r = {0};
    eu_it_callf(e->s, &r, HOST, "GET", e->alice, NULL, "/api/v1/accounts/relationships?id[]=%s",
                account_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *b = eu_it_jpath(json_array_get(r.json, 0), "domain_blocking");
    ck_assert_msg(json_is_boolean(b), "no domain_blocking: %s", r.body);
    bool v = json_is_true(b);
    eu_it_resp_free(&r);
    return v;
}

/* What the five timelines show of status id: public, tag, home, list
 * and the author's account timeline, one bit each. */
static int
seen_in_timelines(struct env *e, const char *id, const char *author, const char *list)
{
    struct eu_it_resp r = {0};
    char path[256];
    int seen = 0;
    get(e, e->alice, "/api/v1/timelines/public", &r);
    seen |= has_status(&r, id) ? 1 : 0;
    get(e, e->alice, "/api/v1/timelines/tag/dbtag", &r);
    seen |= has_status(&r, id) ? 2 : 0;
    get(e, e->alice, "/api/v1/timelines/home", &r);
    seen |= has_status(&r, id) ? 4 : 0;
    snprintf(path, sizeof(path), "/api/v1/timelines/list/%s", list);
    get(e, e->alice, path, &r);
    seen |= has_status(&r, id) ? 8 : 0;
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses", author);
    get(e, e->alice, path, &r);
    seen |= has_status(&r, id) ? 16 : 0;
    eu_it_resp_free(&r);
    return seen;
}

static long
notifications_from(struct env *e, const char *account_id)
{
    return eu_it_pg_execf_long(e->db,
                               "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                               " AND account_id = %s AND from_account_id = %s",
                               e->tid, e->alice_id, account_id);
}

/* Copies every job inserted into the placement's jobs table into it_jobs:
 * a delivery may run and go before the test looks. */
static void
install_job_copier(const char *db)
{
    free(eu_it_pg_exec(db, "CREATE TABLE it_jobs (tenant_id bigint NOT NULL, kind text,"
                           " payload jsonb)"));
    free(eu_it_pg_exec(db, "CREATE FUNCTION it_copy_job() RETURNS trigger LANGUAGE plpgsql AS"
                           " $$BEGIN INSERT INTO it_jobs VALUES (NEW.tenant_id, NEW.kind,"
                           " NEW.payload); RETURN NEW; END$$"));
    free(eu_it_pg_exec(db, "CREATE TRIGGER it_copy_job AFTER INSERT ON jobs FOR EACH ROW"
                           " EXECUTE FUNCTION it_copy_job()"));
}

/* --------------------------------------------------------- a user's block */

START_TEST(test_user_domain_block)
{
    struct env e;
    env_start(&e, NULL);
    struct eu_it_resp r = {0};
    const char *phost = e.peer->host;

    /* The peer likes alice's status: its account comes to be, and so does
     * alice's notification. */
    char *mine = post_status(&e, HOST, e.alice, "mine");
    ck_assert_int_eq(deliver_like(&e, HOST, "alice", mine, 1), 202);
    char *peer_acc = wait_row(&e, 15000,
                              "SELECT id FROM accounts WHERE tenant_id = %s AND uri = '%s'"
                              " AND EXISTS (SELECT 1 FROM notifications n WHERE n.tenant_id = %s"
                              " AND n.from_account_id = accounts.id)",
                              e.tid, e.peer_id, e.tid);
    ck_assert_ptr_nonnull(peer_acc);
    ck_assert_int_eq(notifications_from(&e, peer_acc), 1);

    /* Statuses of the peer's domain and of another one, public and tagged;
     * bob boosts the peer's, alice follows bob and lists him. */
    char *far = eu_it_remote_account(e.db, e.tid, "http://far.example/users/far", true);
    char puri[192];
    snprintf(puri, sizeof(puri), "%s/notes/1", e.peer->origin);
    char *pst = remote_status(&e, e.tid, peer_acc, puri, "dbtag");
    char *fst = remote_status(&e, e.tid, far, "http://far.example/notes/1", "dbtag");
    eu_it_callf(e.s, &r, HOST, "POST", e.bob, NULL, "/api/v1/statuses/%s/reblog", pst);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(e.s, &r, HOST, "POST", e.bob, NULL, "/api/v1/statuses/%s/reblog", fst);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, NULL, "/api/v1/accounts/%s/follow", e.bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, "{\"title\":\"l\"}", "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *list = strdup(eu_it_json_str(&r, "id"));
    char body[512];
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", e.bob_id);
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Follows both ways with the peer, and a pending request to "other". */
    free(eu_it_pg_execf(e.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id, uri)"
                        " VALUES (%s, %s, %s, NULL), (%s, %s, %s, '%s/follows/1')",
                        e.tid, e.alice_id, peer_acc, e.tid, peer_acc, e.alice_id, e.peer->origin));
    ck_assert_int_eq(seen_in_timelines(&e, pst, peer_acc, list), 31);
    ck_assert_int_eq(seen_in_timelines(&e, fst, far, list), 31);
    ck_assert(!relationship_flag(&e, peer_acc));

    /* Invalid domains are 422s and change nothing. */
    const char *bad[] = {"{}",
                         "{\"domain\":\"\"}",
                         "{\"domain\":\"not a domain\"}",
                         "{\"domain\":\"-x.example\"}",
                         "{\"domain\":\"a..b\"}",
                         "{\"domain\":\"x.example:99999\"}",
                         "{\"domain\":\"bücher.example\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        eu_it_callf(e.s, &r, HOST, "POST", e.alice, bad[i], "/api/v1/domain_blocks");
        EU_IT_EXPECT_ERROR(&r, 422);
    }

    /* Block the peer's domain (blanks around it are dropped). */
    install_job_copier(e.db);
    snprintf(body, sizeof(body), "{\"domain\":\" %s \"}", phost);
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, body, "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    /* again: still one block */
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, body, "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&e, e.alice, "/api/v1/domain_blocks", &r);
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_str_eq(json_string_value(json_array_get(r.json, 0)), phost);

    ck_assert_int_eq(seen_in_timelines(&e, pst, peer_acc, list), 0);
    ck_assert_int_eq(seen_in_timelines(&e, fst, far, list), 31);
    /* asked for by id, it is still there (Mastodon's show ignores it) */
    eu_it_callf(e.s, &r, HOST, "GET", e.alice, NULL, "/api/v1/statuses/%s", pst);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* bob blocks nothing: he still sees it */
    eu_it_callf(e.s, &r, HOST, "GET", e.bob, NULL, "/api/v1/timelines/public");
    ck_assert(has_status(&r, pst));
    ck_assert(relationship_flag(&e, peer_acc));
    ck_assert(!relationship_flag(&e, far));
    /* follows both ways ended, the notification went, following is refused */
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s"
                                         " AND %s IN (account_id, target_account_id)",
                                         e.tid, peer_acc),
                     0);
    ck_assert_int_eq(notifications_from(&e, peer_acc), 0);
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, NULL, "/api/v1/accounts/%s/follow", peer_acc);
    EU_IT_EXPECT_ERROR(&r, 403);
    /* the peer hears of both ends: an Undo of alice's follow and a Reject
     * of its own */
    char *sent = wait_row(&e, 10000,
                          "SELECT string_agg(t, ' ' ORDER BY t) FROM (SELECT"
                          " payload->'activity'->>'type' AS t FROM it_jobs WHERE tenant_id = %s"
                          " AND kind = 'ap_deliver') x HAVING count(*) >= 2",
                          e.tid);
    ck_assert_ptr_nonnull(sent);
    ck_assert_str_eq(sent, "Reject Undo");
    free(sent);

    /* A new like from there is stored but notifies nobody. */
    char *mine2 = post_status(&e, HOST, e.alice, "mine too");
    ck_assert_int_eq(deliver_like(&e, HOST, "alice", mine2, 2), 202);
    char *fav = wait_row(&e, 15000,
                         "SELECT 1 FROM favourites WHERE tenant_id = %s AND status_id = %s"
                         " AND account_id = %s",
                         e.tid, mine2, peer_acc);
    ck_assert_ptr_nonnull(fav);
    free(fav);
    eu_it_sleep_ms(300);
    ck_assert_int_eq(notifications_from(&e, peer_acc), 0);
    get(&e, e.alice, "/api/v1/notifications", &r);
    char acct[160];
    snprintf(acct, sizeof(acct), "peer@%s", phost);
    ck_assert(!eu_it_has_acct(&r, acct));

    /* The decoy tenant's carol blocks far.example on her server: alice's
     * timelines do not change. */
    eu_it_callf(e.s, &r, DECOY, "POST", e.carol, "{\"domain\":\"far.example\"}",
                "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(seen_in_timelines(&e, fst, far, list), 31);
    eu_it_callf(e.s, &r, DECOY, "GET", e.carol, NULL, "/api/v1/domain_blocks");
    ck_assert_int_eq(json_array_size(r.json), 1);

    /* Paging: three blocks, two a page, the Link header leads on. */
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, "{\"domain\":\"Far2.Example.\"}",
                "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(e.s, &r, HOST, "POST", e.alice, "{\"domain\":\"far3.example:8443\"}",
                "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&e, e.alice, "/api/v1/domain_blocks?limit=2", &r);
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_str_eq(json_string_value(json_array_get(r.json, 0)), "far3.example:8443");
    ck_assert_str_eq(json_string_value(json_array_get(r.json, 1)), "far2.example");
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_ptr_nonnull(link);
    const char *max = strstr(link, "max_id=");
    ck_assert_ptr_nonnull(max);
    char next[64];
    snprintf(next, sizeof(next), "%.*s", (int)strspn(max + 7, "0123456789"), max + 7);
    eu_it_callf(e.s, &r, HOST, "GET", e.alice, NULL, "/api/v1/domain_blocks?limit=2&max_id=%s",
                next);
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_str_eq(json_string_value(json_array_get(r.json, 0)), phost);

    /* Unblock: the statuses show again; the follows stay ended. */
    snprintf(body, sizeof(body), "{\"domain\":\"%s\"}", phost);
    eu_it_callf(e.s, &r, HOST, "DELETE", e.alice, body, "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(seen_in_timelines(&e, pst, peer_acc, list), 31);
    ck_assert(!relationship_flag(&e, peer_acc));
    get(&e, e.alice, "/api/v1/domain_blocks", &r);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* The cap: bob at 4999 blocks may add one, not two. */
    free(eu_it_pg_execf(e.db,
                        "INSERT INTO account_domain_blocks (tenant_id, account_id, domain)"
                        " SELECT %s, %s, 'd' || g || '.example' FROM generate_series(1, 4999) g",
                        e.tid, e.bob_id));
    eu_it_callf(e.s, &r, HOST, "POST", e.bob, "{\"domain\":\"last.example\"}",
                "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(e.s, &r, HOST, "POST", e.bob, "{\"domain\":\"over.example\"}",
                "/api/v1/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "5000"));

    /* Scopes: reading needs read:blocks. */
    char *weak = eu_it_user_token(e.s, HOST, "alice", "read:statuses");
    eu_it_callf(e.s, &r, HOST, "GET", weak, NULL, "/api/v1/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 403);
    free(weak);

    eu_it_resp_free(&r);
    free(list);
    free(mine);
    free(mine2);
    free(pst);
    free(fst);
    free(far);
    free(peer_acc);
    env_end(&e);
}
END_TEST

/* ------------------------------------------------------ the tenant's block */

static long
reports_of(struct env *e, const char *tid)
{
    return eu_it_pg_execf_long(e->db, "SELECT count(*) FROM reports WHERE tenant_id = %s", tid);
}

static long
flag(struct env *e, const char *host, int n)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"%s/flags/%d\","
             "\"type\":\"Flag\",\"actor\":\"%s\",\"object\":[\"http://%s/users/carol\"],"
             "\"content\":\"spam %d\"}",
             e->peer->origin, n, e->peer_id, host, n);
    struct eu_it_resp r = {0};
    signed_request(e, "POST", host, "/inbox", body, &r);
    long st = r.status;
    eu_it_resp_free(&r);
    return st;
}

/* Waits until tenant tid has no inbox job left to process. */
static void
wait_inbox_done(struct env *e, const char *tid)
{
    long long until = eu_it_now_ms() + 15000;
    while (eu_it_pg_execf_long(
               e->db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_inbox'", tid) >
               0 &&
           eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
}

START_TEST(test_admin_suspend)
{
    struct env e;
    env_start(&e, NULL);
    struct eu_it_resp r = {0};
    const char *phost = e.peer->host;
    char path[256], body[512];

    char *sfx = eu_it_pg_exec(e.db, "SELECT eunha_domain_suffixes('a.b.example')::text");
    ck_assert_str_eq(sfx, "{a.b.example,b.example,example}");
    free(sfx);

    /* Before: the peer's deliveries are taken by both tenants. */
    char *mine = post_status(&e, HOST, e.alice, "mine");
    char *cmine = post_status(&e, DECOY, e.carol, "hers");
    ck_assert_int_eq(deliver_like(&e, HOST, "alice", mine, 1), 202);
    ck_assert_int_eq(deliver_like(&e, DECOY, "carol", cmine, 2), 202);
    char *peer_acc = wait_row(
        &e, 15000, "SELECT id FROM accounts WHERE tenant_id = %s AND uri = '%s'", e.tid, e.peer_id);
    ck_assert_ptr_nonnull(peer_acc);
    char puri[192];
    snprintf(puri, sizeof(puri), "%s/notes/1", e.peer->origin);
    char *pst = remote_status(&e, e.tid, peer_acc, puri, NULL);
    get(&e, e.alice, "/api/v1/timelines/public", &r);
    ck_assert(has_status(&r, pst));

    /* Refusals of bad input. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", HOST);
    eu_it_admin(e.s, "POST", path, "{\"domain\":\"x.example\",\"severity\":\"ban\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(e.s, "POST", path, "{\"domain\":\"not valid\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(e.s, "POST", path, "{\"domain\":\"x.example\",\"reject_media\":\"yes\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(e.s, "POST", "/admin/v1/tenants/nosuch.test/domain_blocks",
                "{\"domain\":\"x.example\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Suspend the peer's domain on HOST. */
    snprintf(body, sizeof(body),
             "{\"domain\":\"%s\",\"severity\":\"suspend\",\"reject_media\":true,"
             "\"private_comment\":\"spam\",\"public_comment\":\"Spam source\"}",
             phost);
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_json_str(&r, "domain"), phost);
    ck_assert_str_eq(eu_it_json_str(&r, "severity"), "suspend");
    ck_assert(json_is_true(json_object_get(r.json, "reject_media")));
    ck_assert(json_is_false(json_object_get(r.json, "reject_reports")));
    ck_assert(json_is_false(json_object_get(r.json, "obfuscate")));
    ck_assert_str_eq(eu_it_json_str(&r, "private_comment"), "spam");
    ck_assert_str_eq(eu_it_json_str(&r, "public_comment"), "Spam source");
    ck_assert_int_eq(strlen(eu_it_json_str(&r, "digest")), 64);
    char *block = strdup(eu_it_json_str(&r, "id"));
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_ERROR(&r, 422); /* already blocked */
    eu_it_admin(e.s, "GET", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks/%s", HOST, block);
    eu_it_admin(e.s, "GET", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_json_str(&r, "id"), block);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", DECOY);
    eu_it_admin(e.s, "GET", path, NULL, &r);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Its accounts are suspended and their statuses gone from view. */
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND id = %s AND suspended_at IS NOT NULL",
                                         e.tid, peer_acc),
                     1);
    get(&e, e.alice, "/api/v1/timelines/public", &r);
    ck_assert(!has_status(&r, pst));
    eu_it_callf(e.s, &r, HOST, "GET", e.alice, NULL, "/api/v1/statuses/%s", pst);
    EU_IT_EXPECT_ERROR(&r, 404);
    /* one seen later starts suspended */
    char ouri[160];
    snprintf(ouri, sizeof(ouri), "%s/users/other", e.peer->origin);
    char *other = eu_it_remote_account(e.db, e.tid, ouri, true);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND id = %s AND suspended_at IS NOT NULL",
                                         e.tid, other),
                     1);

    /* The inboxes answer 403 to a signed delivery from there (Mastodon's
     * answer) before any key is fetched; the decoy tenant still takes it. */
    int fetched = peer_fetches(e.peer, 0);
    ck_assert_int_eq(deliver_like(&e, HOST, "alice", mine, 3), 403);
    char *likeb = NULL;
    ck_assert_int_ge(asprintf(&likeb,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/likes/4\",\"type\":\"Like\",\"actor\":\"%s\","
                              "\"object\":\"http://%s/users/alice/statuses/%s\"}",
                              e.peer->origin, e.peer_id, HOST, mine),
                     0);
    signed_request(&e, "POST", HOST, "/users/alice/inbox", likeb, &r);
    EU_IT_EXPECT_ERROR(&r, 403);
    free(likeb);
    ck_assert_int_eq(peer_fetches(e.peer, 0), fetched);
    ck_assert_int_eq(deliver_like(&e, DECOY, "carol", cmine, 5), 202);

    /* Authorized fetch: its key is refused on HOST, taken on the decoy. */
    eu_it_admin(e.s, "PATCH", "/admin/v1/tenants/" HOST, "{\"authorized_fetch\": true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(e.s, "PATCH", "/admin/v1/tenants/" DECOY, "{\"authorized_fetch\": true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    signed_request(&e, "GET", HOST, "/users/alice", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 403);
    signed_request(&e, "GET", DECOY, "/users/carol", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_json_str(&r, "type"), "Person");

    /* reject_reports (with noop) on the decoy: its first Flag made a
     * report, the next ones make none, and the inbox still takes them. The
     * like above made the peer's account there, from the key HOST cached. */
    ck_assert_int_eq(flag(&e, DECOY, 1), 202);
    free(wait_row(&e, 15000, "SELECT 1 FROM reports WHERE tenant_id = %s", e.decoy_tid));
    ck_assert_int_eq(reports_of(&e, e.decoy_tid), 1);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", DECOY);
    snprintf(body, sizeof(body),
             "{\"domain\":\"%s\",\"severity\":\"noop\",\"reject_reports\":true}", phost);
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_json_str(&r, "severity"), "noop");
    ck_assert_int_eq(flag(&e, DECOY, 2), 202);
    wait_inbox_done(&e, e.decoy_tid);
    ck_assert_int_eq(reports_of(&e, e.decoy_tid), 1);

    /* Lifting the suspension gives back what it took. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks/%s", HOST, block);
    eu_it_admin(e.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(e.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND id IN (%s, %s) AND suspended_at IS NULL",
                                         e.tid, peer_acc, other),
                     2);
    get(&e, e.alice, "/api/v1/timelines/public", &r);
    ck_assert(has_status(&r, pst));
    ck_assert_int_eq(deliver_like(&e, HOST, "alice", mine, 6), 202);
    signed_request(&e, "GET", HOST, "/users/alice", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Silence covers subdomains: their public statuses leave the public
     * timeline of those who do not follow the author. */
    char *far = eu_it_remote_account(e.db, e.tid, "http://far.example/users/far", true);
    char *sub = eu_it_remote_account(e.db, e.tid, "http://sub.far.example/users/sub", true);
    char *fst = remote_status(&e, e.tid, far, "http://far.example/notes/1", NULL);
    char *sst = remote_status(&e, e.tid, sub, "http://sub.far.example/notes/1", NULL);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", HOST);
    eu_it_admin(e.s, "POST", path, "{\"domain\":\"far.example\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_json_str(&r, "severity"), "silence"); /* Mastodon's default */
    free(block);
    block = strdup(eu_it_json_str(&r, "id"));
    free(eu_it_pg_execf(e.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                        " VALUES (%s, %s, %s)",
                        e.tid, e.alice_id, far));
    get(&e, e.alice, "/api/v1/timelines/public", &r);
    ck_assert(has_status(&r, fst));
    ck_assert(!has_status(&r, sst));
    get(&e, e.bob, "/api/v1/timelines/public", &r);
    ck_assert(!has_status(&r, fst));
    ck_assert(has_status(&r, pst));
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks/%s", HOST, block);
    eu_it_admin(e.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&e, e.bob, "/api/v1/timelines/public", &r);
    ck_assert(has_status(&r, fst));
    ck_assert(has_status(&r, sst));
    free(far);
    free(sub);
    free(fst);
    free(sst);

    eu_it_resp_free(&r);
    free(block);
    free(other);
    free(pst);
    free(mine);
    free(cmine);
    free(peer_acc);
    env_end(&e);
}
END_TEST

/* --------------------------------------------------- delivery refusals */

enum { P_REFUSE, P_OK, P_SUSP, N_PORTS };

static struct {
    pthread_mutex_t mu;
    struct event_base *base;
    struct evhttp *http[N_PORTS];
    int port[N_PORTS];
    int status[N_PORTS];
    int posts[N_PORTS];
    pthread_t thread;
} inbox = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void
on_inbox(struct evhttp_request *req, void *arg)
{
    int idx = (int)(intptr_t)arg;
    pthread_mutex_lock(&inbox.mu);
    inbox.posts[idx]++;
    int status = inbox.status[idx];
    pthread_mutex_unlock(&inbox.mu);
    evhttp_send_reply(req, status, status < 300 ? "OK" : "No", NULL);
}

static void *
inbox_main(void *arg)
{
    (void)arg;
    event_base_dispatch(inbox.base);
    return NULL;
}

static void
inbox_start(void)
{
    inbox.base = event_base_new();
    for (int i = 0; i < N_PORTS; i++) {
        inbox.http[i] = evhttp_new(inbox.base);
        evhttp_set_gencb(inbox.http[i], on_inbox, (void *)(intptr_t)i);
        struct evhttp_bound_socket *bs =
            evhttp_bind_socket_with_handle(inbox.http[i], "127.0.0.1", 0);
        ck_assert_ptr_nonnull(bs);
        struct sockaddr_in sin;
        socklen_t len = sizeof sin;
        getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &len);
        inbox.port[i] = ntohs(sin.sin_port);
        inbox.status[i] = 202;
    }
    inbox.status[P_REFUSE] = 403;
    pthread_create(&inbox.thread, NULL, inbox_main, NULL);
}

static int
inbox_posts(int idx)
{
    pthread_mutex_lock(&inbox.mu);
    int n = inbox.posts[idx];
    pthread_mutex_unlock(&inbox.mu);
    return n;
}

static int
inbox_wait(int idx, int want, long ms)
{
    long long until = eu_it_now_ms() + ms;
    int n;
    while ((n = inbox_posts(idx)) < want && eu_it_now_ms() < until)
        eu_it_sleep_ms(50);
    return n;
}

static long
deliveries_left(struct env *e, const char *tid)
{
    return eu_it_pg_execf_long(
        e->db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'", tid);
}

static void
wait_deliveries_done(struct env *e, const char *tid)
{
    long long until = eu_it_now_ms() + 20000;
    while (deliveries_left(e, tid) > 0 && eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(deliveries_left(e, tid), 0);
}

/* A remote follower of local account target on inbox port idx. */
static char *
remote_follower(struct env *e, const char *tid, const char *user, int idx, const char *target)
{
    char uri[128];
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/users/%s", inbox.port[idx], user);
    char *id = eu_it_remote_account(e->db, tid, uri, false);
    free(eu_it_pg_execf(e->db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                        " VALUES (%s, %s, %s)",
                        tid, id, target));
    return id;
}

START_TEST(test_delivery_refusals)
{
    inbox_start();
    struct env e;
    env_start(&e, NULL);
    struct eu_it_resp r = {0};
    char refuse_host[64], susp_host[64], path[256], body[512];
    snprintf(refuse_host, sizeof(refuse_host), "127.0.0.1:%d", inbox.port[P_REFUSE]);
    snprintf(susp_host, sizeof(susp_host), "127.0.0.1:%d", inbox.port[P_SUSP]);
    free(remote_follower(&e, e.tid, "no", P_REFUSE, e.alice_id));
    free(remote_follower(&e, e.tid, "yes", P_OK, e.alice_id));
    free(remote_follower(&e, e.decoy_tid, "no", P_REFUSE, e.carol_id));

    /* The first post: refused (403) by one host, recorded. */
    free(post_status(&e, HOST, e.alice, "one"));
    ck_assert_int_eq(inbox_wait(P_OK, 1, 15000), 1);
    ck_assert_int_eq(inbox_wait(P_REFUSE, 1, 15000), 1);
    wait_deliveries_done(&e, e.tid);
    char *v = wait_row(&e, 10000,
                       "SELECT refusals || ' ' || skipped FROM delivery_refusals"
                       " WHERE tenant_id = %s AND host = '%s'",
                       e.tid, refuse_host);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v, "1 0");
    free(v);

    /* The next two: held back from that host, counted; the other host
     * gets them. */
    free(post_status(&e, HOST, e.alice, "two"));
    free(post_status(&e, HOST, e.alice, "three"));
    ck_assert_int_eq(inbox_wait(P_OK, 3, 15000), 3);
    wait_deliveries_done(&e, e.tid);
    ck_assert_int_eq(inbox_posts(P_REFUSE), 1);
    v = eu_it_pg_execf(e.db,
                       "SELECT refusals || ' ' || skipped FROM delivery_refusals"
                       " WHERE tenant_id = %s AND host = '%s'",
                       e.tid, refuse_host);
    ck_assert_str_eq(v, "1 2");
    free(v);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/delivery_refusals", HOST);
    eu_it_admin(e.s, "GET", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    json_t *row = json_array_get(r.json, 0);
    ck_assert_str_eq(json_string_value(json_object_get(row, "host")), refuse_host);
    ck_assert_int_eq(json_integer_value(json_object_get(row, "status")), 403);
    ck_assert_int_eq(json_integer_value(json_object_get(row, "refusals")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(row, "skipped")), 2);
    ck_assert(json_is_string(json_object_get(row, "held_until")));
    ck_assert(json_is_string(json_object_get(row, "last_skipped_at")));

    /* The decoy tenant is not held back there: its refusal is its own. */
    free(post_status(&e, DECOY, e.carol, "decoy"));
    ck_assert_int_eq(inbox_wait(P_REFUSE, 2, 15000), 2);
    wait_deliveries_done(&e, e.decoy_tid);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/delivery_refusals", DECOY);
    eu_it_admin(e.s, "GET", path, NULL, &r);
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_int_eq(json_integer_value(eu_it_jpath(json_array_get(r.json, 0), "skipped")), 0);

    /* After the hold one delivery goes out; the host takes it now, so the
     * refusal ends and the next goes out too. */
    free(eu_it_pg_execf(e.db,
                        "UPDATE delivery_refusals SET last_at = now() - interval '%d seconds'"
                        " WHERE tenant_id = %s AND host = '%s'",
                        EU_AP_REFUSAL_HOLD_S + 60, e.tid, refuse_host));
    pthread_mutex_lock(&inbox.mu);
    inbox.status[P_REFUSE] = 202;
    pthread_mutex_unlock(&inbox.mu);
    eu_it_admin(e.s, "GET", "/admin/v1/tenants/" HOST "/delivery_refusals", NULL, &r);
    ck_assert(json_is_null(eu_it_jpath(json_array_get(r.json, 0), "held_until")));
    free(post_status(&e, HOST, e.alice, "four"));
    ck_assert_int_eq(inbox_wait(P_REFUSE, 3, 15000), 3);
    wait_deliveries_done(&e, e.tid);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM delivery_refusals"
                                         " WHERE tenant_id = %s",
                                         e.tid),
                     0);
    free(post_status(&e, HOST, e.alice, "five"));
    ck_assert_int_eq(inbox_wait(P_REFUSE, 4, 15000), 4);

    /* The operator clears the decoy's refusal by hand. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/delivery_refusals/%s", DECOY, refuse_host);
    eu_it_admin(e.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(e.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* A suspended domain is sent nothing, even a job queued by hand. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", HOST);
    snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"severity\":\"suspend\"}", susp_host);
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(body, sizeof(body),
             "{\"kind\":\"ap_deliver\",\"payload\":{\"inbox\":\"http://%s/inbox\","
             "\"actor_id\":\"%s\",\"activity\":{\"type\":\"Note\",\"id\":\"x\"}}}",
             susp_host, e.alice_id);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/jobs", HOST);
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    wait_deliveries_done(&e, e.tid);
    ck_assert_int_eq(inbox_posts(P_SUSP), 0);
    /* the decoy's job to the same host goes */
    snprintf(body, sizeof(body),
             "{\"kind\":\"ap_deliver\",\"payload\":{\"inbox\":\"http://%s/inbox\","
             "\"actor_id\":\"%s\",\"activity\":{\"type\":\"Note\",\"id\":\"y\"}}}",
             susp_host, e.carol_id);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/jobs", DECOY);
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    ck_assert_int_eq(inbox_wait(P_SUSP, 1, 15000), 1);

    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* ------------------------------------------- a user's block, elsewhere */

/* A remote status by account of tenant tid replying to parent, with text
 * (what status search reads); returns its id. */
static char *
remote_reply(struct env *e, const char *tid, const char *account, const char *uri,
             const char *parent, const char *text)
{
    return eu_it_pg_execf(e->db,
                          "INSERT INTO statuses (tenant_id, account_id, uri, local, text, content,"
                          " in_reply_to_id, in_reply_to_account_id)"
                          " SELECT %s, %s, '%s', false, '%s', '<p>%s</p>', p.id, p.account_id"
                          " FROM statuses p WHERE p.tenant_id = %s AND p.id = %s RETURNING id",
                          tid, account, uri, text, text, tid, parent);
}

/* Whether the JSON array at key of the answer (NULL: the answer) holds an
 * object with id. */
static bool
has_id(const struct eu_it_resp *r, const char *key, const char *id)
{
    json_t *arr = key ? json_object_get(r->json, key) : r->json;
    ck_assert_msg(json_is_array(arr), "not an array: %s", r->body);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *sid = json_string_value(json_object_get(v, "id"));
        if (sid && strcmp(sid, id) == 0)
            return true;
    }
    return false;
}

/*
 * Where else a user's domain block applies, as in Mastodon: a thread
 * (/context) leaves out the domain's ancestors and descendants but keeps
 * the replies below them (StatusFilter on the thread's ids); status search
 * leaves them out (StatusesSearchService); the directory leaves out the
 * domain's accounts. Where Mastodon does not filter, neither do we:
 * favourites, bookmarks, favourited_by, another account's followers and
 * account search still show them. The decoy tenant, whose carol blocks
 * nothing, sees its own copy of the domain's account.
 */
START_TEST(test_user_domain_block_elsewhere)
{
    struct env e;
    env_start(&e, NULL);
    struct eu_it_resp r = {0};
    char *x = eu_it_remote_account(e.db, e.tid, "http://blocked.example/users/x", true);
    char *f = eu_it_remote_account(e.db, e.tid, "http://far.example/users/f", true);
    char *cx = eu_it_remote_account(e.db, e.decoy_tid, "http://blocked.example/users/x", true);
    free(eu_it_pg_execf(e.db,
                        "UPDATE accounts SET discoverable = true WHERE tenant_id IN (%s, %s)"
                        " AND domain IS NOT NULL",
                        e.tid, e.decoy_tid));

    /* A thread: alice's root; x's reply and f's reply to it; bob's reply
     * to x's; x's reply to bob's. */
    char *root = post_status(&e, HOST, e.alice, "root");
    char *xr = remote_reply(&e, e.tid, x, "http://blocked.example/notes/1", root, "zebra one");
    char *fr = remote_reply(&e, e.tid, f, "http://far.example/notes/1", root, "zebra two");
    char body[512];
    snprintf(body, sizeof(body), "{\"status\":\"bob here\",\"in_reply_to_id\":\"%s\"}", xr);
    eu_it_callf(e.s, &r, HOST, "POST", e.bob, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *br = strdup(eu_it_json_str(&r, "id"));
    char *xr2 = remote_reply(&e, e.tid, x, "http://blocked.example/notes/2", br, "zebra three");
    /* alice favourites and bookmarks x's reply (search then finds it) and
     * f's; x favourites alice's root and follows bob. */
    const char *acts[] = {"favourite", "bookmark"};
    for (int i = 0; i < 2; i++) {
        eu_it_callf(e.s, &r, HOST, "POST", e.alice, NULL, "/api/v1/statuses/%s/%s", xr, acts[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
        eu_it_callf(e.s, &r, HOST, "POST", e.alice, NULL, "/api/v1/statuses/%s/%s", fr, acts[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    free(eu_it_pg_execf(e.db,
                        "INSERT INTO favourites (tenant_id, account_id, status_id)"
                        " VALUES (%s, %s, %s)",
                        e.tid, x, root));
    free(eu_it_pg_execf(e.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id, uri)"
                        " VALUES (%s, %s, %s, 'http://blocked.example/follows/1')",
                        e.tid, x, e.bob_id));

    char path[256];
    for (int blocked = 0; blocked < 2; blocked++) {
        if (blocked) {
            eu_it_callf(e.s, &r, HOST, "POST", e.alice, "{\"domain\":\"blocked.example\"}",
                        "/api/v1/domain_blocks");
            EU_IT_EXPECT_STATUS(&r, 200);
        }
        bool shown = !blocked;
        /* the thread from the root: x's replies go, bob's reply below x's
         * stays, f's stays */
        snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", root);
        get(&e, e.alice, path, &r);
        ck_assert_int_eq(has_id(&r, "descendants", xr), shown);
        ck_assert_int_eq(has_id(&r, "descendants", xr2), shown);
        ck_assert(has_id(&r, "descendants", br));
        ck_assert(has_id(&r, "descendants", fr));
        /* and from bob's reply: x's ancestor goes, the root stays */
        snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", br);
        get(&e, e.alice, path, &r);
        ck_assert_int_eq(has_id(&r, "ancestors", xr), shown);
        ck_assert(has_id(&r, "ancestors", root));
        ck_assert_int_eq(has_id(&r, "descendants", xr2), shown);
        /* bob blocks nothing */
        eu_it_callf(e.s, &r, HOST, "GET", e.bob, NULL, "/api/v1/statuses/%s/context", br);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert(has_id(&r, "ancestors", xr));
        /* status search */
        get(&e, e.alice, "/api/v2/search?q=zebra&type=statuses", &r);
        ck_assert_int_eq(has_id(&r, "statuses", xr), shown);
        ck_assert(has_id(&r, "statuses", fr));
        /* the directory */
        get(&e, e.alice, "/api/v1/directory?limit=80", &r);
        ck_assert_int_eq(has_id(&r, NULL, x), shown);
        ck_assert(has_id(&r, NULL, f));
        /* Not filtered by Mastodon, nor here. */
        get(&e, e.alice, "/api/v1/favourites", &r);
        ck_assert(has_id(&r, NULL, xr));
        get(&e, e.alice, "/api/v1/bookmarks", &r);
        ck_assert(has_id(&r, NULL, xr));
        snprintf(path, sizeof(path), "/api/v1/statuses/%s/favourited_by", root);
        get(&e, e.alice, path, &r);
        ck_assert(has_id(&r, NULL, x));
        snprintf(path, sizeof(path), "/api/v1/accounts/%s/followers", e.bob_id);
        get(&e, e.alice, path, &r);
        ck_assert(has_id(&r, NULL, x));
        get(&e, e.alice, "/api/v2/search?q=x@blocked.example&type=accounts", &r);
        ck_assert(has_id(&r, "accounts", x));
    }
    /* The decoy's directory still lists its own x. */
    eu_it_callf(e.s, &r, DECOY, "GET", e.carol, NULL, "/api/v1/directory?limit=80");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(has_id(&r, NULL, cx));

    free(x);
    free(f);
    free(cx);
    free(root);
    free(xr);
    free(fr);
    free(br);
    free(xr2);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* ------------------------------------------------------- reject_media */

/* The first media attachment of status id as user token on host sees it. */
static json_t *
first_media(struct env *e, const char *host, const char *token, const char *id,
            struct eu_it_resp *r)
{
    eu_it_callf(e->s, r, host, "GET", token, NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(r, 200);
    json_t *m = json_array_get(json_object_get(r->json, "media_attachments"), 0);
    ck_assert_msg(json_is_object(m), "no media: %s", r->body);
    return m;
}

/* A remote image attachment of status, as ingestion stores one. */
static void
remote_image(struct env *e, const char *tid, const char *account, const char *status,
             const char *url)
{
    free(eu_it_pg_execf(e->db,
                        "INSERT INTO media_attachments (tenant_id, account_id, status_id,"
                        " position, type, state, remote_url, blurhash) VALUES (%s, %s, %s, 0,"
                        " 'image', 'ready', '%s', 'LEHV6nWB2yk8pyo0adR*.7kCMdnj')",
                        tid, account, status, url));
}

static void
expect_rejected(json_t *m, const char *url)
{
    ck_assert_str_eq(json_string_value(json_object_get(m, "type")), "unknown");
    ck_assert(json_is_null(json_object_get(m, "url")));
    ck_assert(json_is_null(json_object_get(m, "preview_url")));
    ck_assert_str_eq(json_string_value(json_object_get(m, "remote_url")), url);
}

static void
expect_shown(json_t *m, const char *url)
{
    ck_assert_str_eq(json_string_value(json_object_get(m, "type")), "image");
    ck_assert_str_eq(json_string_value(json_object_get(m, "url")), url);
    ck_assert_str_eq(json_string_value(json_object_get(m, "remote_url")), url);
}

/* The avatar account id shows on host, as token sees it (caller frees). */
static char *
avatar_of(struct env *e, const char *host, const char *token, const char *id)
{
    struct eu_it_resp r = {0};
    eu_it_callf(e->s, &r, host, "GET", token, NULL, "/api/v1/accounts/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *v = strdup(eu_it_json_str(&r, "avatar"));
    eu_it_resp_free(&r);
    return v;
}

/*
 * The operator's reject_media (noop severity): what the domain's rows
 * already hold stops pointing clients there (attachments become type
 * unknown with no url and their remote_url, as Mastodon's unfetched media;
 * avatars and headers go back to the default), and so do rows written
 * later, by SQL as ingestion writes them and by a real Create with an
 * attachment through the inbox. Another domain, and the decoy tenant
 * (same peer, no block), keep their media.
 */
START_TEST(test_admin_reject_media)
{
    struct env e;
    env_start(&e, NULL);
    struct eu_it_resp r = {0};
    const char *avatar = "http://media.example/avatar.png";
    const char *img1 = "http://media.example/1.png", *img2 = "http://media.example/2.png";
    char *m = eu_it_remote_account(e.db, e.tid, "http://media.example/users/m", true);
    char *f = eu_it_remote_account(e.db, e.tid, "http://far.example/users/f", true);
    char *cm = eu_it_remote_account(e.db, e.decoy_tid, "http://media.example/users/m", true);
    free(eu_it_pg_execf(e.db,
                        "UPDATE accounts SET avatar_url = '%s', header_url = '%s'"
                        " WHERE tenant_id IN (%s, %s) AND domain IS NOT NULL",
                        avatar, avatar, e.tid, e.decoy_tid));
    char *ms = remote_status(&e, e.tid, m, "http://media.example/notes/1", NULL);
    char *fs = remote_status(&e, e.tid, f, "http://far.example/notes/1", NULL);
    char *cms = remote_status(&e, e.decoy_tid, cm, "http://media.example/notes/1", NULL);
    remote_image(&e, e.tid, m, ms, img1);
    remote_image(&e, e.tid, f, fs, "http://far.example/1.png");
    remote_image(&e, e.decoy_tid, cm, cms, img1);
    expect_shown(first_media(&e, HOST, e.alice, ms, &r), img1);
    char *av = avatar_of(&e, HOST, e.alice, m);
    ck_assert_str_eq(av, avatar);
    free(av);

    /* Block media.example's media on HOST; the peer's too. */
    char path[256], body[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", HOST);
    eu_it_admin(e.s, "POST", path,
                "{\"domain\":\"media.example\",\"severity\":\"noop\",\"reject_media\":true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "reject_media")));
    snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"severity\":\"noop\",\"reject_media\":true}",
             e.peer->host);
    eu_it_admin(e.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* What was there: no longer shown, though the account is not limited. */
    expect_rejected(first_media(&e, HOST, e.alice, ms, &r), img1);
    av = avatar_of(&e, HOST, e.alice, m);
    ck_assert_str_ne(av, avatar);
    free(av);
    ck_assert_int_eq(
        eu_it_pg_execf_long(e.db,
                            "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                            " AND id = %s AND avatar_url IS NULL AND header_url IS NULL"
                            " AND silenced_at IS NULL AND suspended_at IS NULL",
                            e.tid, m),
        1);
    get(&e, e.alice, "/api/v1/timelines/public", &r);
    ck_assert(has_status(&r, ms));
    expect_shown(first_media(&e, HOST, e.alice, fs, &r), "http://far.example/1.png");
    /* the decoy's copy is untouched */
    expect_shown(first_media(&e, DECOY, e.carol, cms, &r), img1);
    av = avatar_of(&e, DECOY, e.carol, cm);
    ck_assert_str_eq(av, avatar);
    free(av);

    /* What comes later: a new attachment and a new avatar. */
    char *ms2 = remote_status(&e, e.tid, m, "http://media.example/notes/2", NULL);
    remote_image(&e, e.tid, m, ms2, img2);
    expect_rejected(first_media(&e, HOST, e.alice, ms2, &r), img2);
    free(eu_it_pg_execf(e.db,
                        "UPDATE accounts SET avatar_url = '%s' WHERE tenant_id = %s AND id = %s",
                        avatar, e.tid, m));
    av = avatar_of(&e, HOST, e.alice, m);
    ck_assert_str_ne(av, avatar);
    free(av);

    /* A Create with an image, through the inbox of both tenants, from the
     * peer alice and carol follow. Its likes make its account in each (the
     * decoy's from the key HOST's fetch cached). */
    char *mine = post_status(&e, HOST, e.alice, "mine");
    char *cmine = post_status(&e, DECOY, e.carol, "mine");
    ck_assert_int_eq(deliver_like(&e, HOST, "alice", mine, 1), 202);
    ck_assert_int_eq(deliver_like(&e, DECOY, "carol", cmine, 2), 202);
    const char *followers[] = {e.alice_id, e.carol_id};
    const char *tids[] = {e.tid, e.decoy_tid};
    for (int i = 0; i < 2; i++) {
        char *acc =
            wait_row(&e, 15000, "SELECT id FROM accounts WHERE tenant_id = %s AND uri = '%s'",
                     tids[i], e.peer_id);
        ck_assert_ptr_nonnull(acc);
        free(eu_it_pg_execf(e.db,
                            "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                            " VALUES (%s, %s, %s)",
                            tids[i], followers[i], acc));
        free(acc);
    }
    free(mine);
    free(cmine);
    char act[1024];
    snprintf(act, sizeof(act),
             "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
             "\"id\":\"%s/activities/rm1\",\"type\":\"Create\",\"actor\":\"%s\","
             "\"object\":{\"id\":\"%s/notes/rm1\",\"type\":\"Note\",\"attributedTo\":\"%s\","
             "\"content\":\"with media\",\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],"
             "\"attachment\":[{\"type\":\"Document\",\"mediaType\":\"image/png\","
             "\"url\":\"%s/pic.png\",\"name\":\"a picture\"}]}}",
             e.peer->origin, e.peer_id, e.peer->origin, e.peer_id, e.peer->origin);
    signed_request(&e, "POST", HOST, "/inbox", act, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    signed_request(&e, "POST", DECOY, "/inbox", act, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    char pic[192];
    snprintf(pic, sizeof(pic), "%s/pic.png", e.peer->origin);
    char *ids[2];
    for (int i = 0; i < 2; i++) {
        ids[i] = wait_row(&e, 15000,
                          "SELECT s.id FROM statuses s WHERE s.tenant_id = %s AND s.uri ="
                          " '%s/notes/rm1' AND EXISTS (SELECT 1 FROM media_attachments a"
                          " WHERE a.tenant_id = %s AND a.status_id = s.id)",
                          tids[i], e.peer->origin, tids[i]);
        ck_assert_ptr_nonnull(ids[i]);
    }
    json_t *rm = first_media(&e, HOST, e.alice, ids[0], &r);
    expect_rejected(rm, pic);
    ck_assert_str_eq(json_string_value(json_object_get(rm, "description")), "a picture");
    expect_shown(first_media(&e, DECOY, e.carol, ids[1], &r), pic);

    free(ids[0]);
    free(ids[1]);
    free(m);
    free(f);
    free(cm);
    free(ms);
    free(fs);
    free(cms);
    free(ms2);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("domain_blocks");
    EU_IT_ADD_TCASE(s, test_user_domain_block, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_admin_suspend, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_delivery_refusals, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_user_domain_block_elsewhere, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_admin_reject_media, TIMEOUT);
    return eu_it_run_suite(s);
}
