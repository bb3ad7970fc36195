/*
 * The inboxes (src/ap/inbox.c) against a real server and a fake remote
 * peer (ap_peer.h): signed deliveries are queued as ap_inbox jobs and
 * answered 202; unsigned, badly signed, tampered, stale, misattributed
 * ones are refused 401 and queue nothing; a rotated key is fetched again;
 * the key fetch is signed by the tenant's instance actor; a decoy tenant
 * in the same database gets nothing.
 *
 * Job rows are seen through a trigger the test puts on the placement's
 * jobs table, which copies each inserted row: the job itself may be
 * processed (and deleted) before the test looks.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ap_peer.h"
#include "eunha/httpsig.h"

#define TIMEOUT 180

struct env {
    struct eu_it_server *s;
    struct peer *peer;
    char *db, *tid, *decoy_tid;
    char peer_id[128], peer_key[160], other_key[160];
};

static void
install_job_copier(const char *db)
{
    eu_it_pg_exec(db, "CREATE TABLE it_inbox_jobs (tenant_id bigint NOT NULL, kind text,"
                      " payload jsonb)");
    eu_it_pg_exec(db, "CREATE FUNCTION it_copy_job() RETURNS trigger LANGUAGE plpgsql AS"
                      " $$BEGIN INSERT INTO it_inbox_jobs VALUES (NEW.tenant_id, NEW.kind,"
                      " NEW.payload); RETURN NEW; END$$");
    eu_it_pg_exec(db, "CREATE TRIGGER it_copy_job AFTER INSERT ON jobs FOR EACH ROW"
                      " EXECUTE FUNCTION it_copy_job()");
}

static long
job_count(struct env *e, const char *tid)
{
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM it_inbox_jobs WHERE tenant_id = %s AND kind = 'ap_inbox'", tid);
    return eu_it_pg_exec_long(e->db, sql);
}

/* Waits up to 20 s for the tenant's ap_inbox jobs to be done (their rows
 * gone). */
static void
wait_inbox_jobs_gone(struct env *e)
{
    long long until = eu_it_now_ms() + 20000;
    while (eu_it_now_ms() < until &&
           eu_it_pg_execf_long(e->db,
                               "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                               " AND kind = 'ap_inbox'",
                               e->tid) > 0)
        eu_it_sleep_ms(100);
}

/* A field of the newest copied job of tenant tid (caller frees). */
static char *
job_field(struct env *e, const char *expr)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT coalesce(%s, '(null)') FROM it_inbox_jobs WHERE tenant_id = %s"
             " AND kind = 'ap_inbox' AND payload->'activity'->>'id' = ("
             " SELECT payload->'activity'->>'id' FROM it_inbox_jobs WHERE tenant_id = %s"
             " ORDER BY ctid DESC LIMIT 1)",
             expr, e->tid, e->tid);
    return eu_it_pg_exec(e->db, sql);
}

static char *
activity(struct env *e, int n, const char *actor)
{
    char *s = NULL;
    int rc = asprintf(&s,
                      "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                      "\"id\":\"%s/activities/%d\",\"type\":\"Create\",\"actor\":\"%s\","
                      "\"object\":{\"id\":\"%s/notes/%d\",\"type\":\"Note\","
                      "\"attributedTo\":\"%s\",\"content\":\"hello %d\","
                      "\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"]}}",
                      e->peer->origin, n, actor, e->peer->origin, n, actor, n);
    ck_assert_int_ge(rc, 0);
    return s;
}

struct post {
    const char *host, *path;
    const char *body;      /* sent */
    const char *sign_body; /* signed (NULL: body) */
    const char *key_id, *priv;
    time_t now; /* 0: now */
    bool rfc9421;
    bool unsigned_;
};

/* The signature's header lines but Host (the harness sends its own), as
 * "Name: value" into lines (heap, the caller frees) and headers. Returns
 * how many. */
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

static void
post(struct env *e, const struct post *p, struct eu_it_resp *r)
{
    char url[256];
    snprintf(url, sizeof(url), "http://%s%s", p->host, p->path);
    const char *sb = p->sign_body ? p->sign_body : p->body;
    struct eu_httpsig_sign_args a = {
        .method = "POST",
        .url = url,
        .body = sb,
        .body_len = strlen(sb),
        .key_id = p->key_id,
        .key_pem = p->priv,
        .now = p->now ? p->now : time(NULL),
    };
    struct eu_httpsig_signed sg = {0};
    if (!p->unsigned_)
        ck_assert_int_eq(
            p->rfc9421 ? eu_httpsig_sign_rfc9421(&a, &sg) : eu_httpsig_sign_cavage(&a, &sg), 0);
    char *lines[EU_HTTPSIG_SIGNED_MAX + 1];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    int n = header_lines(&sg, lines, headers);
    headers[n] = "Content-Type: application/activity+json";
    headers[n + 1] = NULL;
    ck_assert_int_eq(
        eu_it_http_raw(r, "POST", e->s->public_port, p->host, p->path, headers, p->body), 0);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&sg);
}

static void
env_start_toml(struct env *e, const char *toml)
{
    memset(e, 0, sizeof(*e));
    struct eu_it_opts o = {.extra_toml = toml};
    e->s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(e->s, "a.test", "A"));
    json_decref(eu_it_tenant_create(e->s, "d.test", "Decoy"));
    free(eu_it_account_seed(e->s, "a.test", "alice"));
    free(eu_it_account_seed(e->s, "d.test", "alice"));
    e->db = eu_it_tenant_database(e->s, "a.test");
    char *ddb = eu_it_tenant_database(e->s, "d.test");
    ck_assert_str_eq(e->db, ddb); /* the decoy shares the database */
    free(ddb);
    e->tid = eu_it_tenant_id(e->s, "a.test");
    e->decoy_tid = eu_it_tenant_id(e->s, "d.test");
    install_job_copier(e->db);
    e->peer = peer_start();
    snprintf(e->peer_id, sizeof(e->peer_id), "%s/users/peer", e->peer->origin);
    snprintf(e->peer_key, sizeof(e->peer_key), "%s#main-key", e->peer_id);
    snprintf(e->other_key, sizeof(e->other_key), "%s/users/other#main-key", e->peer->origin);
}

static void
env_start(struct env *e)
{
    env_start_toml(e, PEER_TOML);
}

static void
env_end(struct env *e)
{
    peer_stop(e->peer);
    free(e->db);
    free(e->tid);
    free(e->decoy_tid);
    eu_it_server_free(e->s);
}

START_TEST(test_inbox_deliveries)
{
    struct env e;
    env_start(&e);
    struct eu_it_resp r = {0};
    char *body = activity(&e, 1, e.peer_id);

    /* unsigned */
    post(&e, &(struct post){"a.test", "/inbox", body, NULL, NULL, NULL, 0, false, true}, &r);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(job_count(&e, e.tid), 0);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 0);

    /* a valid draft-cavage delivery to the shared inbox */
    post(&e,
         &(struct post){"a.test", "/inbox", body, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_str_eq(r.body, "");
    ck_assert_int_eq(job_count(&e, e.tid), 1);
    char *v = job_field(&e, "payload->>'actor'");
    ck_assert_str_eq(v, e.peer_id);
    free(v);
    v = job_field(&e, "payload->'activity'->'object'->>'content'");
    ck_assert_str_eq(v, "hello 1");
    free(v);
    v = job_field(&e, "payload->>'recipient'");
    ck_assert_str_eq(v, "(null)");
    free(v);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 1);

    /* the key was fetched signed by a.test's instance actor */
    eu_it_public(e.s, "GET", "a.test", "/actor", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *ia_pem = json_string_value(eu_it_jpath(r.json, "publicKey.publicKeyPem"));
    ck_assert_ptr_nonnull(ia_pem);
    char *ia = strdup(ia_pem);
    peer_check_last_get(e.peer, 0, "http://a.test/actor#main-key", ia);
    free(ia);

    /* to alice's inbox: her id as the recipient; the key is cached now */
    char *body2 = activity(&e, 2, e.peer_id);
    post(&e,
         &(struct post){"a.test", "/users/alice/inbox", body2, NULL, e.peer_key,
                        e.peer->actors[0].priv, 0, false, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.tid), 2);
    char *alice = eu_it_account_id(e.s, "a.test", "alice");
    v = job_field(&e, "payload->>'recipient'");
    ck_assert_str_eq(v, alice);
    free(v);
    free(alice);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 1);

    /* RFC 9421 */
    char *body3 = activity(&e, 3, e.peer_id);
    post(&e,
         &(struct post){"a.test", "/inbox", body3, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        true, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.tid), 3);

    /* a body other than the one signed: the digest does not match */
    char *body4 = activity(&e, 4, e.peer_id);
    post(&e,
         &(struct post){"a.test", "/inbox", body4, body3, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 401);

    /* signed 13 hours ago */
    post(&e,
         &(struct post){"a.test", "/inbox", body4, NULL, e.peer_key, e.peer->actors[0].priv,
                        time(NULL) - 13 * 3600, false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 401);

    /* signed by "other", claiming to be "peer" */
    post(&e,
         &(struct post){"a.test", "/inbox", body4, NULL, e.other_key, e.peer->actors[1].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(peer_fetches(e.peer, 1), 1);

    /* nobody's inbox */
    post(&e,
         &(struct post){"a.test", "/users/nobody/inbox", body4, NULL, e.peer_key,
                        e.peer->actors[0].priv, 0, false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* not an activity */
    post(&e,
         &(struct post){"a.test", "/inbox", "{\"type\":\"Create\"}", NULL, e.peer_key,
                        e.peer->actors[0].priv, 0, false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 400);
    ck_assert_int_eq(job_count(&e, e.tid), 3);

    /* the peer rotates its key: the cached one fails, a refetch finds
     * the new one */
    peer_rotate(e.peer, 0);
    char *body5 = activity(&e, 5, e.peer_id);
    post(&e,
         &(struct post){"a.test", "/inbox", body5, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 2);
    ck_assert_int_eq(job_count(&e, e.tid), 4);
    v = job_field(&e, "payload->'activity'->>'id'");
    ck_assert(strstr(v, "/activities/5") != NULL);
    free(v);

    /* a key that is not the peer's: refused, and a refetch so soon after
     * the last is answered from the cache */
    char *pub3, *priv3;
    ck_assert_int_eq(eu_ap_rsa_generate(&pub3, &priv3), 0);
    post(&e, &(struct post){"a.test", "/inbox", body4, NULL, e.peer_key, priv3, 0, false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 2);
    free(pub3);
    free(priv3);

    ck_assert_int_eq(job_count(&e, e.tid), 4);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), 0);

    /* the decoy's own inbox works, and only for the decoy */
    char *body6 = activity(&e, 6, e.peer_id);
    post(&e,
         &(struct post){"d.test", "/inbox", body6, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), 1);
    ck_assert_int_eq(job_count(&e, e.tid), 4);

    free(body);
    free(body2);
    free(body3);
    free(body4);
    free(body5);
    free(body6);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* A GET of path on host with an ActivityPub Accept, signed with key_id and
 * priv unless both are NULL. */
static void
get_ap(struct env *e, const char *host, const char *path, const char *key_id, const char *priv,
       bool rfc9421, struct eu_it_resp *r)
{
    char url[256];
    snprintf(url, sizeof(url), "http://%s%s", host, path);
    struct eu_httpsig_sign_args a = {
        .method = "GET",
        .url = url,
        .key_id = key_id,
        .key_pem = priv,
        .now = time(NULL),
    };
    struct eu_httpsig_signed sg = {0};
    if (key_id)
        ck_assert_int_eq(
            rfc9421 ? eu_httpsig_sign_rfc9421(&a, &sg) : eu_httpsig_sign_cavage(&a, &sg), 0);
    char *lines[EU_HTTPSIG_SIGNED_MAX + 1];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    int n = header_lines(&sg, lines, headers);
    headers[n] = "Accept: application/activity+json";
    headers[n + 1] = NULL;
    eu_it_resp_free(r);
    ck_assert_int_eq(eu_it_http_raw(r, "GET", e->s->public_port, host, path, headers, NULL), 0);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&sg);
}

/*
 * Authorized fetch, turned on by the admin API for a.test only: its actors,
 * notes and collections need a signature that verifies; the instance actor
 * and WebFinger stay open; the decoy tenant in the same database is not
 * affected; turning it off opens them again.
 */
START_TEST(test_authorized_fetch)
{
    struct env e;
    env_start(&e);
    struct eu_it_resp r = {0};
    const char *priv = e.peer->actors[0].priv;

    /* Open by default. */
    get_ap(&e, "a.test", "/users/alice", NULL, NULL, false, &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_admin(e.s, "PATCH", "/admin/v1/tenants/a.test", "{\"authorized_fetch\": \"yes\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(e.s, "PATCH", "/admin/v1/tenants/a.test", "{\"authorized_fetch\": true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "authorized_fetch")));
    eu_it_admin(e.s, "GET", "/admin/v1/tenants/d.test", NULL, &r);
    ck_assert(json_is_false(json_object_get(r.json, "authorized_fetch")));

    const char *paths[] = {"/users/alice", "/@alice", "/users/alice/outbox",
                           "/users/alice/followers", "/users/alice/collections/featured"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        get_ap(&e, "a.test", paths[i], NULL, NULL, false, &r);
        EU_IT_EXPECT_ERROR(&r, 401);
        get_ap(&e, "a.test", paths[i], e.peer_key, priv, false, &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        get_ap(&e, "a.test", paths[i], e.peer_key, priv, true, &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        /* the decoy tenant answers unsigned requests as before */
        get_ap(&e, "d.test", paths[i], NULL, NULL, false, &r);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    get_ap(&e, "a.test", "/users/alice", e.peer_key, priv, false, &r);
    ck_assert_str_eq(json_string_value(json_object_get(r.json, "type")), "Person");

    /* Signed with a key that is not the one the actor publishes. */
    get_ap(&e, "a.test", "/users/alice", e.peer_key, e.peer->actors[1].priv, false, &r);
    EU_IT_EXPECT_ERROR(&r, 401);

    /* A status of alice's. */
    char *tok = eu_it_user_token(e.s, "a.test", "alice", "read write");
    eu_it_callf(e.s, &r, "a.test", "POST", tok, "{\"status\": \"secret-ish\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char path[128];
    snprintf(path, sizeof(path), "/users/alice/statuses/%s",
             json_string_value(json_object_get(r.json, "id")));
    get_ap(&e, "a.test", path, NULL, NULL, false, &r);
    EU_IT_EXPECT_ERROR(&r, 401);
    get_ap(&e, "a.test", path, e.peer_key, priv, false, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(json_string_value(json_object_get(r.json, "type")), "Note");

    /* Open whatever the mode: the instance actor and WebFinger. */
    get_ap(&e, "a.test", "/actor", NULL, NULL, false, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_public(e.s, "GET", "a.test", "/.well-known/webfinger?resource=acct:alice@a.test", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_admin(e.s, "PATCH", "/admin/v1/tenants/a.test", "{\"authorized_fetch\": false}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    get_ap(&e, "a.test", "/users/alice", NULL, NULL, false, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(tok);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* Jobs of tenant tid waiting from host, as the cap counts them. */
static long
waiting_from(struct env *e, const char *tid, const char *host)
{
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_inbox'"
             " AND payload->>'host' = '%s'",
             tid, host);
    return eu_it_pg_exec_long(e->db, sql);
}

/*
 * The per-sending-host cap ([federation] inbox_max_queued_per_host = 3):
 * with three of the peer's activities waiting for a.test (rows due in an
 * hour, so no worker takes them while the test looks), its next delivery
 * gets 429 with Retry-After and is not stored; a second peer (another
 * host) and the decoy tenant, same peer, are still accepted; once the
 * backlog is gone the peer is accepted again.
 */
START_TEST(test_inbox_host_cap)
{
    struct env e;
    env_start_toml(&e, PEER_TOML "inbox_max_queued_per_host = 3\n");
    struct peer *other = peer_start();
    struct eu_it_resp r = {0};
    char sql[512];
    for (int i = 0; i < 3; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO jobs (tenant_id, queue, kind, payload, run_at) VALUES (%s,"
                 " 'default', 'ap_inbox', '{\"host\": \"%s\", \"activity\": {}}',"
                 " now() + interval '1 hour')",
                 e.tid, e.peer->host);
        free(eu_it_pg_exec(e.db, sql));
    }
    ck_assert_int_eq(waiting_from(&e, e.tid, e.peer->host), 3);
    long before = job_count(&e, e.tid);

    char *body = activity(&e, 1, e.peer_id);
    post(&e,
         &(struct post){"a.test", "/inbox", body, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_ERROR(&r, 429);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
    ck_assert_int_eq(job_count(&e, e.tid), before);
    ck_assert_int_eq(waiting_from(&e, e.tid, e.peer->host), 3);
    /* refused before any key was fetched */
    ck_assert_int_eq(peer_fetches(e.peer, 0), 0);

    /* Another host is not held back by the first one's backlog. */
    char other_id[128], other_key[160];
    snprintf(other_id, sizeof(other_id), "%s/users/peer", other->origin);
    snprintf(other_key, sizeof(other_key), "%s#main-key", other_id);
    char *obody = NULL;
    ck_assert_int_ge(asprintf(&obody,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/activities/1\",\"type\":\"Like\",\"actor\":\"%s\","
                              "\"object\":\"http://a.test/users/alice/statuses/1\"}",
                              other->origin, other_id),
                     0);
    post(&e,
         &(struct post){"a.test", "/inbox", obody, NULL, other_key, other->actors[0].priv, 0, false,
                        false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.tid), before + 1);

    /* Nor is the decoy tenant, from the capped host itself. */
    long decoy_before = job_count(&e, e.decoy_tid);
    post(&e,
         &(struct post){"d.test", "/inbox", body, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), decoy_before + 1);

    /* The backlog drained: accepted again. */
    snprintf(sql, sizeof(sql),
             "DELETE FROM jobs WHERE tenant_id = %s AND kind = 'ap_inbox' AND run_at > now()",
             e.tid);
    free(eu_it_pg_exec(e.db, sql));
    post(&e,
         &(struct post){"a.test", "/inbox", body, NULL, e.peer_key, e.peer->actors[0].priv, 0,
                        false, false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.tid), before + 2);

    free(obody);
    free(body);
    peer_stop(other);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* Holds every ap_inbox job inserted into db's jobs table an hour, so the
 * backlog stays while the test looks. */
static void
install_job_delay(const char *db)
{
    free(eu_it_pg_exec(db, "CREATE FUNCTION it_delay_job() RETURNS trigger LANGUAGE plpgsql AS"
                           " $$BEGIN IF NEW.kind = 'ap_inbox' THEN"
                           " NEW.run_at := now() + interval '1 hour'; END IF; RETURN NEW; END$$"));
    free(eu_it_pg_exec(db, "CREATE TRIGGER it_delay_job BEFORE INSERT ON jobs FOR EACH ROW"
                           " EXECUTE FUNCTION it_delay_job()"));
}

/*
 * The per-sending-host cap of the whole process ([federation]
 * inbox_max_queued_per_host_process = 12, per tenant 10): the peer's
 * activities to three tenants (a.test, b.test and the decoy), held
 * unprocessed, are taken until the process holds 12 of them; then the
 * decoy, with only 2 waiting (under its own cap), gets 429 with
 * Retry-After and nothing stored, while another host is still taken. Once
 * the backlog is processed, the count comes down and the peer is taken
 * again.
 */
START_TEST(test_inbox_host_cap_process)
{
    struct env e;
    env_start_toml(&e, PEER_TOML "inbox_max_queued_per_host = 10\n"
                                 "inbox_max_queued_per_host_process = 12\n"
                                 "[workers]\nqueue_idle_poll_seconds = 1\n");
    json_decref(eu_it_tenant_create(e.s, "b.test", "B"));
    free(eu_it_account_seed(e.s, "b.test", "alice"));
    char *bdb = eu_it_tenant_database(e.s, "b.test");
    char *btid = eu_it_tenant_id(e.s, "b.test");
    install_job_delay(e.db);
    if (strcmp(bdb, e.db) != 0)
        install_job_delay(bdb);
    struct peer *other = peer_start();
    struct eu_it_resp r = {0};
    /* Each delivery its own activity: a repeat of one is taken once. */
    char *bodies[16] = {0};
    int nb = 0;
    struct post p = {"a.test", "/inbox", NULL, NULL, e.peer_key, e.peer->actors[0].priv,
                     0,        false,    false};

    const char *hosts[] = {"a.test", "b.test", "d.test"};
    const int n[] = {5, 5, 2};
    for (int h = 0; h < 3; h++) {
        p.host = hosts[h];
        for (int i = 0; i < n[h]; i++) {
            p.body = bodies[nb] = activity(&e, nb + 1, e.peer_id);
            nb++;
            post(&e, &p, &r);
            EU_IT_EXPECT_STATUS(&r, 202);
        }
    }
    p.body = bodies[nb++] = activity(&e, 100, e.peer_id);
    ck_assert_int_eq(waiting_from(&e, e.decoy_tid, e.peer->host), 2);

    /* The process holds 12: the decoy, under its own cap, is refused. */
    long before = job_count(&e, e.decoy_tid);
    p.host = "d.test";
    post(&e, &p, &r);
    EU_IT_EXPECT_ERROR(&r, 429);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
    ck_assert_int_eq(job_count(&e, e.decoy_tid), before);
    ck_assert_int_eq(waiting_from(&e, e.decoy_tid, e.peer->host), 2);
    p.host = "a.test";
    post(&e, &p, &r);
    EU_IT_EXPECT_ERROR(&r, 429);

    /* Another host is not held back. */
    char other_id[128], other_key[160];
    snprintf(other_id, sizeof(other_id), "%s/users/peer", other->origin);
    snprintf(other_key, sizeof(other_key), "%s#main-key", other_id);
    char *obody = NULL;
    ck_assert_int_ge(asprintf(&obody,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/activities/1\",\"type\":\"Like\",\"actor\":\"%s\","
                              "\"object\":\"http://d.test/users/alice/statuses/1\"}",
                              other->origin, other_id),
                     0);
    post(&e,
         &(struct post){"d.test", "/inbox", obody, NULL, other_key, other->actors[0].priv, 0, false,
                        false},
         &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), before + 1);

    /* The backlog is processed: the count comes down, the peer is taken. */
    const char *dbs[] = {e.db, bdb};
    for (int i = 0; i < 2; i++) {
        free(eu_it_pg_exec(dbs[i], "DROP TRIGGER IF EXISTS it_delay_job ON jobs"));
        free(eu_it_pg_execf(dbs[i],
                            "UPDATE jobs SET run_at = now() WHERE tenant_id IN (%s, %s, %s)"
                            " AND kind = 'ap_inbox'",
                            e.tid, btid, e.decoy_tid));
    }
    long long until = eu_it_now_ms() + 30000;
    while (eu_it_now_ms() < until &&
           (waiting_from(&e, e.tid, e.peer->host) + waiting_from(&e, e.decoy_tid, e.peer->host) +
            eu_it_pg_execf_long(bdb,
                                "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                " AND kind = 'ap_inbox'",
                                btid)) > 0)
        eu_it_sleep_ms(200);
    ck_assert_int_eq(waiting_from(&e, e.tid, e.peer->host), 0);
    p.host = "d.test";
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);

    free(obody);
    for (int i = 0; i < nb; i++)
        free(bodies[i]);
    free(bdb);
    free(btid);
    peer_stop(other);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* Polls token's notifications on host until one of type comes from the
 * account whose acct is acct, or 20 s pass; whether it came. */
static bool
wait_notification(struct env *e, const char *host, const char *token, const char *type,
                  const char *acct)
{
    struct eu_it_resp r = {0};
    bool found = false;
    long long until = eu_it_now_ms() + 20000;
    while (!found && eu_it_now_ms() < until) {
        eu_it_callf(e->s, &r, host, "GET", token, NULL, "/api/v1/notifications");
        EU_IT_EXPECT_STATUS(&r, 200);
        size_t i;
        json_t *n;
        json_array_foreach(r.json, i, n)
        {
            const char *t = json_string_value(json_object_get(n, "type"));
            const char *a = json_string_value(eu_it_jpath(n, "account.acct"));
            if (t && a && strcmp(t, type) == 0 && strcmp(a, acct) == 0)
                found = true;
        }
        if (!found)
            eu_it_sleep_ms(200);
    }
    eu_it_resp_free(&r);
    return found;
}

/*
 * The key cache is the process's, account rows are each tenant's: the
 * peer, known to a.test (its key cached there), then likes and follows
 * alice on b.test, a second tenant of the same process. b.test makes its
 * own row for the peer from the cached document (no fetch), processes
 * both, and alice sees the notifications through its API; a later
 * delivery finds the row. The decoy, to which nothing was sent, has no
 * row and no notification.
 */
START_TEST(test_cached_key_other_tenant)
{
    struct env e;
    env_start_toml(&e, PEER_TOML "[workers]\nqueue_idle_poll_seconds = 1\n");
    json_decref(eu_it_tenant_create(e.s, "b.test", "B"));
    char *balice = eu_it_user_new(e.s, "b.test", "alice", "read write", NULL);
    char *dalice = eu_it_user_token(e.s, "d.test", "alice", "read");
    char *bdb = eu_it_tenant_database(e.s, "b.test");
    char *btid = eu_it_tenant_id(e.s, "b.test");
    struct eu_it_resp r = {0};
    eu_it_callf(e.s, &r, "b.test", "POST", balice, "{\"status\":\"like me\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));

    /* a.test learns the peer: one fetch, its key cached */
    char *body = activity(&e, 1, e.peer_id);
    struct post p = {"a.test", "/inbox", body, NULL, e.peer_key, e.peer->actors[0].priv,
                     0,        false,    false};
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 1);
    const char *row = "SELECT count(*) FROM accounts WHERE tenant_id = %s AND uri = '%s'";
    ck_assert_int_eq(eu_it_pg_execf_long(bdb, row, btid, e.peer_id), 0);

    /* a Like to b.test: its row is made before the answer, not fetched */
    char *like = NULL;
    ck_assert_int_ge(asprintf(&like,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/likes/1\",\"type\":\"Like\",\"actor\":\"%s\","
                              "\"object\":\"http://b.test/users/alice/statuses/%s\"}",
                              e.peer->origin, e.peer_id, sid),
                     0);
    p.host = "b.test";
    p.body = like;
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 1);
    ck_assert_int_eq(eu_it_pg_execf_long(bdb, row, btid, e.peer_id), 1);
    ck_assert_int_eq(eu_it_pg_execf_long(bdb,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND uri = '%s' AND username = 'peer'"
                                         " AND inbox_url = '%s/inbox' AND public_key IS NOT NULL",
                                         btid, e.peer_id, e.peer_id),
                     1);
    char acct[96];
    snprintf(acct, sizeof(acct), "peer@%s", e.peer->host);
    ck_assert(wait_notification(&e, "b.test", balice, "favourite", acct));

    /* a Follow, now that the row is there: answered from the cache too */
    char *follow = NULL;
    ck_assert_int_ge(asprintf(&follow,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/follows/1\",\"type\":\"Follow\",\"actor\":\"%s\","
                              "\"object\":\"http://b.test/users/alice\"}",
                              e.peer->origin, e.peer_id),
                     0);
    p.path = "/users/alice/inbox";
    p.body = follow;
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert(wait_notification(&e, "b.test", balice, "follow", acct));
    ck_assert_int_eq(peer_fetches(e.peer, 0), 1);
    eu_it_callf(e.s, &r, "b.test", "GET", balice, NULL, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 1);

    /* the decoy: nothing */
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, row, e.decoy_tid, e.peer_id), 0);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), 0);
    eu_it_callf(e.s, &r, "d.test", "GET", dalice, NULL, "/api/v1/notifications");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(like);
    free(follow);
    free(body);
    free(sid);
    free(balice);
    free(dalice);
    free(bdb);
    free(btid);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/*
 * A key that cannot be fetched (a closed port, a 404 at the peer) is
 * refused with a fixed message: what the fetch met stays in the log, so an
 * unsigned-in sender cannot use the inbox to probe what this server can
 * reach. The status still says whether a retry is worthwhile.
 */
START_TEST(test_key_fetch_error_hidden)
{
    struct env e;
    env_start(&e);
    struct eu_it_resp r = {0};
    char closed[128], ghost[160];
    snprintf(closed, sizeof(closed), "http://127.0.0.1:1/users/probe");
    snprintf(ghost, sizeof(ghost), "%s/users/ghost", e.peer->origin);
    const char *actors[] = {closed, ghost};
    for (int i = 0; i < 2; i++) {
        char key[200];
        snprintf(key, sizeof(key), "%s#main-key", actors[i]);
        char *body = activity(&e, 10 + i, actors[i]);
        post(&e,
             &(struct post){"a.test", "/inbox", body, NULL, key, e.peer->actors[0].priv, 0, false,
                            false},
             &r);
        ck_assert_msg(r.status == 401 || r.status == 503, "%s: %ld %s", actors[i], r.status,
                      r.body);
        EU_IT_EXPECT_JSTR(&r, "error", "Signature verification failed");
        ck_assert_msg(!strstr(r.body, "127.0.0.1") && !strstr(r.body, "404") &&
                          !strstr(r.body, "connect"),
                      "detail leaked: %s", r.body);
        free(body);
    }
    ck_assert_int_eq(job_count(&e, e.tid), 0);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/*
 * One activity delivered to many inboxes of one tenant (a mention of two
 * local users sent to each one's inbox and to the shared inbox, then sent
 * again after it was processed, as a sender's retry would) is queued and
 * processed once: one job, one status, one mention notification each,
 * one key fetch; every delivery is answered 202. Another activity from
 * the same sender is still taken, and the same activity to the decoy
 * tenant is the decoy's own.
 */
START_TEST(test_inbox_duplicates)
{
    struct env e;
    env_start_toml(&e, PEER_TOML "[workers]\nqueue_idle_poll_seconds = 1\n");
    char *alice = eu_it_user_token(e.s, "a.test", "alice", "read");
    char *bob = eu_it_user_new(e.s, "a.test", "bob", "read", NULL);
    char *dalice = eu_it_user_token(e.s, "d.test", "alice", "read");
    struct eu_it_resp r = {0};
    char *body = NULL;
    ck_assert_int_ge(
        asprintf(&body,
                 "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                 "\"id\":\"%s/activities/dup\",\"type\":\"Create\",\"actor\":\"%s\","
                 "\"object\":{\"id\":\"%s/notes/dup\",\"type\":\"Note\","
                 "\"attributedTo\":\"%s\",\"content\":\"hi both\","
                 "\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],"
                 "\"cc\":[\"http://a.test/users/alice\",\"http://a.test/users/bob\"],"
                 "\"tag\":[{\"type\":\"Mention\",\"href\":\"http://a.test/users/alice\"},"
                 "{\"type\":\"Mention\",\"href\":\"http://a.test/users/bob\"}]}}",
                 e.peer->origin, e.peer_id, e.peer->origin, e.peer_id),
        0);
    struct post p = {"a.test",   "/users/alice/inbox",   body, NULL,
                     e.peer_key, e.peer->actors[0].priv, 0,    false,
                     false};
    const char *paths[] = {"/users/alice/inbox", "/users/bob/inbox", "/inbox"};
    for (int i = 0; i < 3; i++) {
        p.path = paths[i];
        post(&e, &p, &r);
        EU_IT_EXPECT_STATUS(&r, 202);
    }
    ck_assert_int_eq(job_count(&e, e.tid), 1);
    ck_assert_int_eq(peer_fetches(e.peer, 0), 1);

    char acct[96];
    snprintf(acct, sizeof(acct), "peer@%s", e.peer->host);
    ck_assert(wait_notification(&e, "a.test", alice, "mention", acct));
    ck_assert(wait_notification(&e, "a.test", bob, "mention", acct));
    /* Processed (the job row is gone): sent again, still nothing new. */
    wait_inbox_jobs_gone(&e);
    for (int i = 0; i < 3; i++) {
        p.path = paths[i];
        post(&e, &p, &r);
        EU_IT_EXPECT_STATUS(&r, 202);
    }
    ck_assert_int_eq(job_count(&e, e.tid), 1);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                         " AND uri = '%s/notes/dup'",
                                         e.tid, e.peer->origin),
                     1);
    const char *tokens[] = {alice, bob};
    for (int t = 0; t < 2; t++) {
        eu_it_callf(e.s, &r, "a.test", "GET", tokens[t], NULL, "/api/v1/notifications");
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_int_eq(json_array_size(r.json), 1);
        EU_IT_EXPECT_JSTR(&r, "0.type", "mention");
        ck_assert_ptr_nonnull(strstr(r.body, "hi both"));
    }

    /* Another activity of the same sender is taken. */
    char *other = activity(&e, 7, e.peer_id);
    p.body = other;
    p.path = "/inbox";
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.tid), 2);

    /* The decoy had nothing; the same activity sent to it is its own. */
    ck_assert_int_eq(job_count(&e, e.decoy_tid), 0);
    eu_it_callf(e.s, &r, "d.test", "GET", dalice, NULL, "/api/v1/notifications");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    p.body = body;
    p.host = "d.test";
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), 1);

    free(body);
    free(other);
    free(alice);
    free(bob);
    free(dalice);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

/* The peer's /notes/flaky: 500 until the test sets the peer's data. */
static bool
flaky_note(struct peer *p, struct evhttp_request *req)
{
    if (strcmp(evhttp_request_get_uri(req), "/notes/flaky") != 0)
        return false;
    if (!__atomic_load_n((int *)p->data, __ATOMIC_SEQ_CST)) {
        peer_reply(req, 500, "application/json", "{\"error\":\"down\"}");
        return true;
    }
    char *note = NULL;
    ck_assert_int_ge(asprintf(&note,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/notes/flaky\",\"type\":\"Note\","
                              "\"attributedTo\":\"%s/users/peer\",\"content\":\"back up\","
                              "\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],"
                              "\"cc\":[\"http://a.test/users/alice\"],\"tag\":[{\"type\":"
                              "\"Mention\",\"href\":\"http://a.test/users/alice\"}]}",
                              p->origin, p->origin),
                     0);
    peer_reply(req, 200, "application/activity+json", note);
    free(note);
    return true;
}

/*
 * A Create whose job died (its object's server answered 500 and the job
 * ran out of attempts) is taken again when the sender delivers it again:
 * the dead job's dedupe key and the inbox's six-hour mark stop copies of
 * work still to do, not of work given up. The decoy is untouched.
 */
START_TEST(test_inbox_dead_redelivered)
{
    struct env e;
    env_start_toml(&e, PEER_TOML "[workers]\nqueue_idle_poll_seconds = 1\njob_max_attempts = 1\n");
    static int up;
    __atomic_store_n(&up, 0, __ATOMIC_SEQ_CST);
    e.peer->data = &up;
    e.peer->intercept = flaky_note; /* before any request reaches the peer */
    struct eu_it_resp r = {0};
    char *body = NULL;
    ck_assert_int_ge(asprintf(&body,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s/activities/flaky\",\"type\":\"Create\",\"actor\":\"%s\","
                              "\"object\":\"%s/notes/flaky\"}",
                              e.peer->origin, e.peer_id, e.peer->origin),
                     0);
    struct post p = {"a.test", "/inbox", body, NULL, e.peer_key, e.peer->actors[0].priv,
                     0,        false,    false};
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    const char *dead = "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_inbox'"
                       " AND state = 'dead'";
    long long until = eu_it_now_ms() + 20000;
    while (eu_it_now_ms() < until && eu_it_pg_execf_long(e.db, dead, e.tid) == 0)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, dead, e.tid), 1);
    const char *notes =
        "SELECT count(*) FROM statuses WHERE tenant_id = %s AND uri = '%s/notes/flaky'";
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, notes, e.tid, e.peer->origin), 0);

    /* The server is back and the sender tries again: processed. */
    __atomic_store_n(&up, 1, __ATOMIC_SEQ_CST);
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    until = eu_it_now_ms() + 20000;
    while (eu_it_now_ms() < until && eu_it_pg_execf_long(e.db, notes, e.tid, e.peer->origin) == 0)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, notes, e.tid, e.peer->origin), 1);
    wait_inbox_jobs_gone(&e);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, dead, e.tid), 0);
    /* Taken once: a third copy after it is done is still answered unprocessed. */
    post(&e, &p, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db,
                                         "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                         " AND kind = 'ap_inbox'",
                                         e.tid),
                     0);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, notes, e.tid, e.peer->origin), 1);
    ck_assert_int_eq(job_count(&e, e.decoy_tid), 0);
    ck_assert_int_eq(eu_it_pg_execf_long(e.db, "SELECT count(*) FROM statuses WHERE tenant_id = %s",
                                         e.decoy_tid),
                     0);

    free(body);
    eu_it_resp_free(&r);
    env_end(&e);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_inbox");
    EU_IT_ADD_TCASE(s, test_inbox_deliveries, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_inbox_dead_redelivered, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_authorized_fetch, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_inbox_host_cap, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_inbox_host_cap_process, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_cached_key_other_tenant, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_key_fetch_error_hidden, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_inbox_duplicates, TIMEOUT);
    return eu_it_run_suite(s);
}
