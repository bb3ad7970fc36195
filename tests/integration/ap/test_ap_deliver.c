/*
 * Outgoing delivery against a fake remote server in this process (evhttp on
 * 127.0.0.1, one port per "host", answering as each test sets): a post
 * reaches three followers on one shared inbox as one signed Create (the
 * signature checked with the author's public key, the Digest with the
 * body); a direct status reaches only the mentioned account; Delete, Like,
 * Follow (requested: true) and Undo; a 500 is retried later and goes
 * through once the peer recovers, and after the last attempt the job is
 * dead with its error in the admin API; a 410 drops the delivery; a peer
 * gets draft-cavage first (one that refuses RFC 9421 is never sent it),
 * and one that refuses draft-cavage with 401 gets RFC 9421 next and from
 * then on; one that refuses both is recorded; a decoy tenant's followers get
 * nothing; and tenant A's 300 deliveries to a slow peer do not hold up
 * tenant B's one. One activity to many inboxes is digested once and its
 * signer's key read once, with a signature per inbox (/metrics counts
 * them); deliveries claimed and deleted in batches each arrive exactly once.
 * Sixty deliveries queued behind a hanging host's cap leave the same
 * tenant's delivery to a healthy host unhindered; the signer statement's
 * answer is kept per signer and host, yet a suspension made through the
 * admin API stops the very next delivery.
 */
#include "world.h"

#include "eunha/apdeliver.h"

#include <arpa/inet.h>
#include <check.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "eunha/httpsig.h"

#define TIMEOUT 240
#define HOST "dl.example"
#define DECOY "decoy.example"
#define PUBLIC "https://www.w3.org/ns/activitystreams#Public"

/* ------------------------------------------------------- the fake peer */

enum {
    P_MAIN,
    P_FAIL,
    P_GONE,
    P_CAVAGE,
    P_MODERN,
    P_REFUSE,
    P_SLOW,
    P_OTHER,
    P_HANG,
    P_NEVER,
    N_PORTS
};

struct rec {
    int port; /* index */
    char path[256];
    char *body;
    size_t body_len;
    char *host;
    int nh;
    struct eu_httpsig_header h[32];
    long long at_ms;
};

#define MAX_RECS 1024

static struct {
    pthread_mutex_t mu;
    struct event_base *base;
    struct evhttp *http[N_PORTS];
    int port[N_PORTS];
    int status[N_PORTS]; /* what each port answers */
    int delay_ms[N_PORTS];
    struct rec recs[MAX_RECS];
    int n;
    pthread_t thread;
} peer = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void
on_delayed(evutil_socket_t fd, short what, void *arg)
{
    struct evhttp_request *req = arg;
    evhttp_send_reply(req, 202, "Accepted", NULL);
}

static void
on_peer(struct evhttp_request *req, void *arg)
{
    int idx = (int)(intptr_t)arg;
    struct rec r = {.port = idx, .at_ms = eu_it_now_ms()};
    snprintf(r.path, sizeof(r.path), "%s", evhttp_request_get_uri(req));
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    r.body_len = evbuffer_get_length(in);
    r.body = calloc(1, r.body_len + 1);
    evbuffer_remove(in, r.body, r.body_len);
    bool has_input = false;
    struct evkeyvalq *hs = evhttp_request_get_input_headers(req);
    for (struct evkeyval *h = hs->tqh_first; h && r.nh < 32; h = h->next.tqe_next) {
        r.h[r.nh].name = strdup(h->key);
        r.h[r.nh].value = strdup(h->value);
        if (strcasecmp(h->key, "Signature-Input") == 0)
            has_input = true;
        if (strcasecmp(h->key, "Host") == 0)
            r.host = strdup(h->value);
        r.nh++;
    }
    pthread_mutex_lock(&peer.mu);
    int status = peer.status[idx], delay = peer.delay_ms[idx];
    if (peer.n < MAX_RECS)
        peer.recs[peer.n++] = r;
    pthread_mutex_unlock(&peer.mu);
    if (idx == P_CAVAGE)
        status = has_input ? 401 : 202; /* reads draft-cavage only */
    if (idx == P_MODERN)
        status = has_input ? 202 : 401; /* reads RFC 9421 only */
    if (delay > 0) {
        struct timeval tv = {delay / 1000, (delay % 1000) * 1000};
        event_base_once(peer.base, -1, EV_TIMEOUT, on_delayed, req, &tv);
        return;
    }
    evhttp_send_reply(req, status, status < 300 ? "OK" : "No", NULL);
}

static void *
peer_main(void *arg)
{
    event_base_dispatch(peer.base);
    return NULL;
}

static void
peer_start(void)
{
    peer.base = event_base_new();
    for (int i = 0; i < N_PORTS; i++) {
        peer.http[i] = evhttp_new(peer.base);
        evhttp_set_allowed_methods(peer.http[i], EVHTTP_REQ_GET | EVHTTP_REQ_POST);
        evhttp_set_gencb(peer.http[i], on_peer, (void *)(intptr_t)i);
        struct evhttp_bound_socket *bs =
            evhttp_bind_socket_with_handle(peer.http[i], "127.0.0.1", 0);
        ck_assert_ptr_nonnull(bs);
        struct sockaddr_in sin;
        socklen_t len = sizeof sin;
        getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &len);
        peer.port[i] = ntohs(sin.sin_port);
        peer.status[i] = 202;
    }
    peer.status[P_FAIL] = 500;
    peer.status[P_GONE] = 410;
    peer.status[P_REFUSE] = 401;
    peer.delay_ms[P_SLOW] = 300;
    peer.delay_ms[P_HANG] = 8000;
    peer.delay_ms[P_NEVER] = 120000; /* past the shutdown drain and the POST's timeout */
    pthread_create(&peer.thread, NULL, peer_main, NULL);
}

static void
peer_set_status(int idx, int status)
{
    pthread_mutex_lock(&peer.mu);
    peer.status[idx] = status;
    pthread_mutex_unlock(&peer.mu);
}

/* Requests received on port idx whose path is path (NULL: any). */
static int
peer_count(int idx, const char *path)
{
    int n = 0;
    pthread_mutex_lock(&peer.mu);
    for (int i = 0; i < peer.n; i++)
        if (peer.recs[i].port == idx && (!path || strcmp(peer.recs[i].path, path) == 0))
            n++;
    pthread_mutex_unlock(&peer.mu);
    return n;
}

/* Waits up to ms for at least want such requests; returns how many came. */
static int
peer_wait(int idx, const char *path, int want, long ms)
{
    long long until = eu_it_now_ms() + ms;
    int n;
    while ((n = peer_count(idx, path)) < want && eu_it_now_ms() < until)
        eu_it_sleep_ms(50);
    return n;
}

/* The k-th (0-based) request on port idx to path; stable once received. */
static struct rec *
peer_rec(int idx, const char *path, int k)
{
    struct rec *out = NULL;
    pthread_mutex_lock(&peer.mu);
    for (int i = 0; i < peer.n && !out; i++)
        if (peer.recs[i].port == idx && (!path || strcmp(peer.recs[i].path, path) == 0) && k-- == 0)
            out = &peer.recs[i];
    pthread_mutex_unlock(&peer.mu);
    ck_assert_msg(out != NULL, "no request %d to %s", k, path ? path : "*");
    return out;
}

static const char *
rec_header(const struct rec *r, const char *name)
{
    for (int i = 0; i < r->nh; i++)
        if (strcasecmp(r->h[i].name, name) == 0)
            return r->h[i].value;
    return NULL;
}

/* ------------------------------------------------------------- a world */

/* carol lives on the decoy tenant; deliveries go to the fake peer. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .extra_toml = "[federation]\nallow_http = true\nallow_private_addresses = true\n"
                  "[workers]\nqueue_idle_poll_seconds = 1\n",
    .users = {{"alice"}, {"carol", DECOY}},
};

static void
world_start(struct world *w)
{
    peer_start();
    eu_it_world_start(w, &world);
}

/* A remote account user@127.0.0.1:PORT of tenant tid on peer port idx, with
 * a shared inbox at /inbox when shared; returns its id (caller frees). */
static char *
remote_account(struct world *w, const char *tid, const char *user, int idx, bool shared)
{
    char uri[128];
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/users/%s", peer.port[idx], user);
    return eu_it_remote_account(w->db, tid, uri, shared);
}

/* Runs the statement made from fmt until it returns a row or ms pass;
 * returns the row's first cell (caller frees) or NULL. */
static char *wait_row(struct world *w, long ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *
wait_row(struct world *w, long ms, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    long long until = eu_it_now_ms() + ms;
    char *v;
    while (!(v = eu_it_pg_exec(w->db, q)) && eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    return v;
}

static void
follow(struct world *w, const char *tid, const char *follower, const char *target)
{
    free(eu_it_pg_execf(w->db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                        " VALUES (%s, %s, %s)",
                        tid, follower, target));
}

static char *
post(struct world *w, const char *token, const char *text, const char *visibility)
{
    char body[512];
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"visibility\":\"%s\"}", text, visibility);
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", token, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* The request's signature verifies with the public key of local account
 * id, and its digest matches the body. Returns the signature's form. */
static enum eu_httpsig_form
check_signed(struct world *w, const struct rec *r, const char *account_id, const char *key_id)
{
    struct eu_httpsig_request hr = {
        .method = "POST",
        .scheme = "http",
        .authority = r->host,
        .target = r->path,
        .headers = r->h,
        .nheaders = (size_t)r->nh,
        .body = r->body,
        .body_len = r->body_len,
    };
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result pr = eu_httpsig_parse(&hr, time(NULL), &sig);
    ck_assert_msg(pr == EU_HTTPSIG_OK, "signature: %s", eu_httpsig_result_str(pr));
    ck_assert_str_eq(eu_httpsig_key_id(sig), key_id);
    char *pem =
        eu_it_pg_execf(w->db, "SELECT public_key FROM accounts WHERE tenant_id = %s AND id = %s",
                       w->tid, account_id);
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, pem), EU_HTTPSIG_OK);
    free(pem);
    enum eu_httpsig_form form = eu_httpsig_form(sig);
    eu_httpsig_free(sig);
    if (form == EU_HTTPSIG_CAVAGE) {
        const char *digest = rec_header(r, "Digest");
        ck_assert_ptr_nonnull(digest);
        ck_assert_int_eq(eu_httpsig_digest_check(digest, r->body, r->body_len), EU_HTTPSIG_OK);
    } else {
        const char *digest = rec_header(r, "Content-Digest");
        ck_assert_ptr_nonnull(digest);
        ck_assert_int_eq(eu_httpsig_content_digest_check(digest, r->body, r->body_len),
                         EU_HTTPSIG_OK);
    }
    ck_assert_ptr_nonnull(strstr(rec_header(r, "Content-Type"), "application/activity+json"));
    return form;
}

static json_t *
rec_json(const struct rec *r)
{
    json_t *j = json_loads(r->body, 0, NULL);
    ck_assert_msg(json_is_object(j), "not JSON: %s", r->body);
    return j;
}

static bool
array_has(json_t *a, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

static long
jobs_left(struct world *w, const char *tid)
{
    return eu_it_pg_execf_long(
        w->db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'", tid);
}

/* Waits until tenant tid has no delivery job left. */
static void
wait_jobs_gone(struct world *w, const char *tid)
{
    long long until = eu_it_now_ms() + 20000;
    while (jobs_left(w, tid) > 0 && eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(jobs_left(w, tid), 0);
}

/* -------------------------------------------------------------- tests */

START_TEST(test_statuses_and_follows)
{
    struct world w;
    world_start(&w);
    char want[256];
    /* Three followers on one server share its inbox; the decoy tenant's
     * carol has a follower of her own there. */
    char *f1 = remote_account(&w, w.tid, "f1", P_MAIN, true);
    char *f2 = remote_account(&w, w.tid, "f2", P_MAIN, true);
    char *f3 = remote_account(&w, w.tid, "f3", P_MAIN, true);
    follow(&w, w.tid, f1, eu_it_id(&w, "alice"));
    follow(&w, w.tid, f2, eu_it_id(&w, "alice"));
    follow(&w, w.tid, f3, eu_it_id(&w, "alice"));
    char *d1 = remote_account(&w, w.decoy_tid, "d1", P_OTHER, false);
    follow(&w, w.decoy_tid, d1, eu_it_id(&w, "carol"));

    char *id = post(&w, eu_it_tok(&w, "alice"), "hello fediverse", "public");
    ck_assert_int_eq(peer_wait(P_MAIN, "/inbox", 1, 15000), 1);
    struct rec *r = peer_rec(P_MAIN, "/inbox", 0);
    /* A host not known yet gets draft-cavage, as Mastodon signs. */
    ck_assert_int_eq(
        check_signed(&w, r, eu_it_id(&w, "alice"), "http://dl.example/users/alice#main-key"),
        EU_HTTPSIG_CAVAGE);
    json_t *j = rec_json(r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Create");
    ck_assert_str_eq(json_string_value(json_object_get(j, "actor")),
                     "http://dl.example/users/alice");
    json_t *note = json_object_get(j, "object");
    ck_assert_str_eq(json_string_value(json_object_get(note, "type")), "Note");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(note, "content")), "hello fediverse"));
    ck_assert(array_has(json_object_get(note, "to"), PUBLIC));
    ck_assert(array_has(json_object_get(note, "cc"), "http://dl.example/users/alice/followers"));
    snprintf(want, sizeof(want), "http://dl.example/users/alice/statuses/%s", id);
    ck_assert_str_eq(json_string_value(json_object_get(note, "id")), want);
    json_decref(j);
    wait_jobs_gone(&w, w.tid);
    eu_it_sleep_ms(500);
    ck_assert_int_eq(peer_count(P_MAIN, "/inbox"), 1); /* one POST for three followers */

    /* Deleted: a Delete with a Tombstone. */
    struct eu_it_resp resp = {0};
    eu_it_callf(w.s, &resp, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s",
                id);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert_int_eq(peer_wait(P_MAIN, "/inbox", 2, 15000), 2);
    j = rec_json(peer_rec(P_MAIN, "/inbox", 1));
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Delete");
    ck_assert_str_eq(json_string_value(eu_it_jpath(j, "object.type")), "Tombstone");
    ck_assert_str_eq(json_string_value(eu_it_jpath(j, "object.id")), want);
    json_decref(j);

    /* A direct status goes to the mentioned account alone. Remote mentions
     * are not resolved by posting yet: the mention is added by SQL, and the
     * edit (Update) and the deletion are what go out. */
    char *m1 = remote_account(&w, w.tid, "m1", P_MAIN, false);
    char *dm = post(&w, eu_it_tok(&w, "alice"), "psst", "direct");
    free(eu_it_pg_execf(
        w.db, "INSERT INTO mentions (tenant_id, status_id, account_id) VALUES (%s, %s, %s)", w.tid,
        dm, m1));
    eu_it_callf(w.s, &resp, HOST, "PUT", eu_it_tok(&w, "alice"), "{\"status\":\"psst again\"}",
                "/api/v1/statuses/%s", dm);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert_int_eq(peer_wait(P_MAIN, "/users/m1/inbox", 1, 15000), 1);
    j = rec_json(peer_rec(P_MAIN, "/users/m1/inbox", 0));
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Update");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(j, "object.content")), "psst again"));
    ck_assert(!array_has(json_object_get(j, "to"), PUBLIC));
    json_decref(j);
    eu_it_callf(w.s, &resp, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s",
                dm);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert_int_eq(peer_wait(P_MAIN, "/users/m1/inbox", 2, 15000), 2);
    wait_jobs_gone(&w, w.tid);
    ck_assert_int_eq(peer_count(P_MAIN, "/inbox"), 2); /* the followers heard nothing */

    /* A like of a remote status goes to its author's inbox. */
    char *author = remote_account(&w, w.tid, "author", P_MAIN, true);
    char *rs =
        eu_it_pg_execf(w.db,
                       "INSERT INTO statuses (tenant_id, account_id, uri, local, text, content)"
                       " VALUES (%s, %s, 'http://127.0.0.1:%d/users/author/statuses/1', false, 'x',"
                       " '<p>x</p>') RETURNING id",
                       w.tid, author, peer.port[P_MAIN]);
    eu_it_callf(w.s, &resp, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/statuses/%s/favourite", rs);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert_int_eq(peer_wait(P_MAIN, "/users/author/inbox", 1, 15000), 1);
    r = peer_rec(P_MAIN, "/users/author/inbox", 0);
    check_signed(&w, r, eu_it_id(&w, "alice"), "http://dl.example/users/alice#main-key");
    j = rec_json(r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Like");
    snprintf(want, sizeof(want), "http://127.0.0.1:%d/users/author/statuses/1", peer.port[P_MAIN]);
    ck_assert_str_eq(json_string_value(json_object_get(j, "object")), want);
    json_decref(j);
    eu_it_callf(w.s, &resp, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/statuses/%s/unfavourite", rs);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert_int_eq(peer_wait(P_MAIN, "/users/author/inbox", 2, 15000), 2);
    j = rec_json(peer_rec(P_MAIN, "/users/author/inbox", 1));
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Undo");
    ck_assert_str_eq(json_string_value(eu_it_jpath(j, "object.type")), "Like");
    json_decref(j);

    /* Following a remote account: a request until their Accept, and a
     * Follow whose id the request keeps; unfollowing sends its Undo. */
    char *target = remote_account(&w, w.tid, "target", P_MAIN, true);
    eu_it_callf(w.s, &resp, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/%s/follow", target);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert(json_is_true(eu_it_jpath(resp.json, "requested")));
    ck_assert(json_is_false(eu_it_jpath(resp.json, "following")));
    ck_assert_int_eq(peer_wait(P_MAIN, "/users/target/inbox", 1, 15000), 1);
    j = rec_json(peer_rec(P_MAIN, "/users/target/inbox", 0));
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Follow");
    snprintf(want, sizeof(want), "http://127.0.0.1:%d/users/target", peer.port[P_MAIN]);
    ck_assert_str_eq(json_string_value(json_object_get(j, "object")), want);
    char *uri = eu_it_pg_execf(
        w.db, "SELECT uri FROM follow_requests WHERE tenant_id = %s AND account_id = %s", w.tid,
        eu_it_id(&w, "alice"));
    ck_assert_str_eq(json_string_value(json_object_get(j, "id")), uri);
    ck_assert_ptr_nonnull(strstr(uri, "http://dl.example/users/alice#follows/"));
    json_decref(j);
    eu_it_callf(w.s, &resp, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/relationships?id[]=%s", target);
    ck_assert(json_is_true(eu_it_jpath(resp.json, "0.requested")));
    eu_it_callf(w.s, &resp, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/%s/unfollow", target);
    EU_IT_EXPECT_STATUS(&resp, 200);
    ck_assert(json_is_false(eu_it_jpath(resp.json, "requested")));
    ck_assert_int_eq(peer_wait(P_MAIN, "/users/target/inbox", 2, 15000), 2);
    j = rec_json(peer_rec(P_MAIN, "/users/target/inbox", 1));
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), "Undo");
    ck_assert_str_eq(json_string_value(eu_it_jpath(j, "object.type")), "Follow");
    ck_assert_str_eq(json_string_value(eu_it_jpath(j, "object.id")), uri);
    json_decref(j);

    wait_jobs_gone(&w, w.tid);
    ck_assert_int_eq(peer_count(P_OTHER, NULL), 0); /* the decoy's follower */

    /* The other tenant of this process is a peer like any other: carol of
     * decoy.example follows alice, and alice's post reaches decoy.example's
     * shared inbox through this server's own listener (its name resolves
     * nowhere). */
    char *carol = eu_it_remote_account(w.db, w.tid, "http://" DECOY "/users/carol", true);
    follow(&w, w.tid, carol, eu_it_id(&w, "alice"));
    free(post(&w, eu_it_tok(&w, "alice"), "hello neighbour", "public"));
    long long until = eu_it_now_ms() + 15000;
    bool arrived = false;
    while (!arrived && eu_it_now_ms() < until) {
        eu_it_sleep_ms(200);
        FILE *f = fopen(w.s->log_path, "r");
        char line[2048];
        while (f && fgets(line, sizeof(line), f))
            if (strstr(line, "tenant=" DECOY) && strstr(line, "POST /inbox "))
                arrived = true;
        if (f)
            fclose(f);
    }
    ck_assert_msg(arrived, "no POST /inbox reached " DECOY);
    free(carol);

    free(uri);
    free(target);
    free(rs);
    free(author);
    free(dm);
    free(m1);
    free(id);
    free(f1);
    free(f2);
    free(f3);
    free(d1);
    eu_it_resp_free(&resp);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_failures)
{
    struct world w;
    world_start(&w);
    char *fail = remote_account(&w, w.tid, "fail", P_FAIL, false);
    char *gone = remote_account(&w, w.tid, "gone", P_GONE, false);
    char *cavage = remote_account(&w, w.tid, "cavage", P_CAVAGE, false);
    char *modern = remote_account(&w, w.tid, "modern", P_MODERN, false);
    char *refuse = remote_account(&w, w.tid, "refuse", P_REFUSE, false);
    follow(&w, w.tid, fail, eu_it_id(&w, "alice"));
    follow(&w, w.tid, gone, eu_it_id(&w, "alice"));
    follow(&w, w.tid, cavage, eu_it_id(&w, "alice"));
    follow(&w, w.tid, modern, eu_it_id(&w, "alice"));
    follow(&w, w.tid, refuse, eu_it_id(&w, "alice"));
    free(post(&w, eu_it_tok(&w, "alice"), "first", "public"));

    /* 410: dropped, no job left for it. */
    ck_assert_int_eq(peer_wait(P_GONE, NULL, 1, 15000), 1);

    /* 401 to RFC 9421, 202 to draft-cavage: one POST, draft-cavage. */
    ck_assert_int_eq(peer_wait(P_CAVAGE, NULL, 1, 15000), 1);
    const char *key = "http://dl.example/users/alice#main-key";
    ck_assert_int_eq(check_signed(&w, peer_rec(P_CAVAGE, NULL, 0), eu_it_id(&w, "alice"), key),
                     EU_HTTPSIG_CAVAGE);

    /* 401 to draft-cavage, 202 to RFC 9421: the second POST is RFC 9421. */
    ck_assert_int_eq(peer_wait(P_MODERN, NULL, 2, 15000), 2);
    ck_assert_int_eq(check_signed(&w, peer_rec(P_MODERN, NULL, 0), eu_it_id(&w, "alice"), key),
                     EU_HTTPSIG_CAVAGE);
    ck_assert_int_eq(check_signed(&w, peer_rec(P_MODERN, NULL, 1), eu_it_id(&w, "alice"), key),
                     EU_HTTPSIG_RFC9421);

    /* 401 to both: dropped, and the refusal recorded for this tenant. */
    ck_assert_int_eq(peer_wait(P_REFUSE, NULL, 2, 15000), 2);
    char *v = wait_row(
        &w, 10000,
        "SELECT refusals FROM delivery_refusals WHERE tenant_id = %s AND host = '127.0.0.1:%d'",
        w.tid, peer.port[P_REFUSE]);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v, "1");
    free(v);

    /* 500: retried later, one job left, its error said. */
    ck_assert_int_eq(peer_wait(P_FAIL, NULL, 1, 15000), 1);
    long long until = eu_it_now_ms() + 10000;
    while (jobs_left(&w, w.tid) > 1 && eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(jobs_left(&w, w.tid), 1);
    char *job = eu_it_pg_execf(w.db,
                               "SELECT id FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'"
                               " AND attempts = 1 AND run_at > now() + interval '10 seconds'"
                               " AND state = 'ready' AND last_error LIKE '%%HTTP 500%%'",
                               w.tid);
    ck_assert_ptr_nonnull(job);
    /* The next attempt (made due now) fails too, and comes later still. */
    free(eu_it_pg_execf(w.db, "UPDATE jobs SET run_at = now() WHERE tenant_id = %s AND id = %s",
                        w.tid, job));
    ck_assert_int_eq(peer_wait(P_FAIL, NULL, 2, 15000), 2);
    eu_it_sleep_ms(500);
    char *att =
        eu_it_pg_execf(w.db,
                       "SELECT attempts::text || ' ' || (run_at > now() + interval '25 seconds')"
                       " FROM jobs WHERE tenant_id = %s AND id = %s",
                       w.tid, job);
    ck_assert_str_eq(att, "2 true");
    free(att);
    /* The peer recovers: the next attempt goes through and the job ends. */
    peer_set_status(P_FAIL, 202);
    free(eu_it_pg_execf(w.db, "UPDATE jobs SET run_at = now() WHERE tenant_id = %s AND id = %s",
                        w.tid, job));
    ck_assert_int_eq(peer_wait(P_FAIL, NULL, 3, 15000), 3);
    wait_jobs_gone(&w, w.tid);

    /* The next delivery to the cavage-only host is still cavage, and the
     * RFC 9421-only host, now known, gets RFC 9421 first. */
    int before = peer_count(P_CAVAGE, NULL);
    int before_modern = peer_count(P_MODERN, NULL);
    peer_set_status(P_FAIL, 500);
    free(post(&w, eu_it_tok(&w, "alice"), "second", "public"));
    ck_assert_int_eq(peer_wait(P_CAVAGE, NULL, before + 1, 15000), before + 1);
    ck_assert_int_eq(check_signed(&w, peer_rec(P_CAVAGE, NULL, before), eu_it_id(&w, "alice"), key),
                     EU_HTTPSIG_CAVAGE);
    ck_assert_int_eq(peer_wait(P_MODERN, NULL, before_modern + 1, 15000), before_modern + 1);
    ck_assert_int_eq(
        check_signed(&w, peer_rec(P_MODERN, NULL, before_modern), eu_it_id(&w, "alice"), key),
        EU_HTTPSIG_RFC9421);

    /* The last attempt fails: the job stays dead with its error, shown by
     * the admin API. */
    ck_assert_int_eq(peer_wait(P_FAIL, NULL, 4, 15000), 4);
    free(job);
    job = wait_row(&w, 10000,
                   "SELECT id FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'"
                   " AND attempts = 1 AND locked_until IS NULL",
                   w.tid);
    ck_assert_ptr_nonnull(job);
    free(eu_it_pg_execf(
        w.db, "UPDATE jobs SET attempts = %d, run_at = now() WHERE tenant_id = %s AND id = %s",
        EU_AP_DELIVER_ATTEMPTS - 1, w.tid, job));
    ck_assert_int_eq(peer_wait(P_FAIL, NULL, 5, 15000), 5);
    struct eu_it_resp resp = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/" HOST "/jobs/%s", job);
    until = eu_it_now_ms() + 10000;
    do {
        eu_it_sleep_ms(100);
        eu_it_admin(w.s, "GET", path, NULL, &resp);
        EU_IT_EXPECT_STATUS(&resp, 200);
    } while (strcmp(eu_it_json_str(&resp, "state"), "dead") != 0 && eu_it_now_ms() < until);
    ck_assert_str_eq(eu_it_json_str(&resp, "state"), "dead");
    ck_assert_int_eq(json_integer_value(json_object_get(resp.json, "attempts")),
                     EU_AP_DELIVER_ATTEMPTS);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&resp, "last_error"), "HTTP 500"));
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&resp, "last_error"), "/users/fail/inbox"));
    eu_it_resp_free(&resp);
    ck_assert_int_eq(peer_wait(P_GONE, NULL, 2, 5000), 2); /* once per post: never retried */
    eu_it_sleep_ms(300);
    ck_assert_int_eq(peer_count(P_GONE, NULL), 2);

    free(job);
    free(fail);
    free(gone);
    free(cavage);
    free(modern);
    free(refuse);
    eu_it_world_stop(&w);
}
END_TEST

/* n deliveries of alice's to http://127.0.0.1:PORT<prefix>1..n on peer port
 * idx, queued by SQL as a backlog. */
static void
queue_deliveries(struct world *w, int n, int idx, const char *prefix)
{
    free(eu_it_pg_execf(w->db,
                        "INSERT INTO jobs (tenant_id, queue, kind, payload) SELECT %s, 'deliver',"
                        " 'ap_deliver', jsonb_build_object('inbox', 'http://127.0.0.1:%d%s' || g,"
                        " 'actor_id', '%s', 'activity', jsonb_build_object('type', 'Note', 'n', g))"
                        " FROM generate_series(1, %d) g",
                        w->tid, peer.port[idx], prefix, eu_it_id(w, "alice"), n));
}

/* One delivery by actor_id of tenant domain to path on peer port idx,
 * queued through the admin API (asserts 201). */
static void
admin_delivery(struct world *w, const char *domain, const char *actor_id, int idx, const char *path)
{
    char body[512], url[256];
    snprintf(body, sizeof(body),
             "{\"kind\":\"ap_deliver\",\"payload\":{\"inbox\":\"http://127.0.0.1:%d%s\","
             "\"actor_id\":\"%s\",\"activity\":{\"type\":\"Note\"}}}",
             peer.port[idx], path, actor_id);
    snprintf(url, sizeof(url), "/admin/v1/tenants/%s/jobs", domain);
    struct eu_it_resp resp = {0};
    eu_it_admin(w->s, "POST", url, body, &resp);
    EU_IT_EXPECT_STATUS(&resp, 201);
    eu_it_resp_free(&resp);
}

/* Tenant A's 300 deliveries to a slow peer, tenant B's one to another. */
START_TEST(test_fairness)
{
    struct world w;
    world_start(&w);
    queue_deliveries(&w, 300, P_SLOW, "/inbox/");
    ck_assert_int_ge(peer_wait(P_SLOW, NULL, 3, 15000), 3);
    long long t0 = eu_it_now_ms();
    admin_delivery(&w, DECOY, eu_it_id(&w, "carol"), P_OTHER, "/b");
    ck_assert_int_eq(peer_wait(P_OTHER, "/b", 1, 5000), 1);
    long long took = eu_it_now_ms() - t0;
    ck_assert_msg(took < 5000, "tenant B waited %lld ms", took);
    /* A is far from done: its backlog is its own. */
    ck_assert_int_lt(peer_count(P_SLOW, NULL), 250);
    eu_it_world_stop(&w);
}
END_TEST

/* A peer that takes 8 s to answer holds only its own deliveries: the same
 * tenant's delivery to another host, queued behind them, arrives at once
 * (the jobs detach from the tenant's turn while their POST is out). */
START_TEST(test_hanging_peer)
{
    struct world w;
    world_start(&w);
    queue_deliveries(&w, 12, P_HANG, "/hang/");
    ck_assert_int_ge(peer_wait(P_HANG, NULL, 1, 15000), 1);
    long long t0 = eu_it_now_ms();
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_OTHER, "/own");
    ck_assert_int_eq(peer_wait(P_OTHER, "/own", 1, 5000), 1);
    long long took = eu_it_now_ms() - t0;
    ck_assert_msg(took < 4000, "the tenant's own delivery waited %lld ms behind a hanging peer",
                  took);

    /* Stopping with POSTs out to a peer that answers after the drain gives
     * up: they are cancelled, and their jobs stay, unrecorded, to run again
     * here or in another process (eu_queues_abandon()). */
    queue_deliveries(&w, 3, P_NEVER, "/never/");
    ck_assert_int_ge(peer_wait(P_NEVER, NULL, 3, 15000), 3);
    t0 = eu_it_now_ms();
    ck_assert_int_eq(eu_it_server_stop(w.s), 0);
    took = eu_it_now_ms() - t0;
    ck_assert_msg(took < 20000, "stopping waited %lld ms on the hanging peer", took);
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db,
                            "SELECT count(*) FROM jobs WHERE tenant_id = %s AND"
                            " payload->>'inbox' LIKE '%%/never/%%' AND last_error IS NULL",
                            w.tid),
        3);
    eu_it_world_free(&w);
}
END_TEST

/* Sixty deliveries to a peer that takes 8 s to answer: 8 go out (the
 * per-host cap, less once it adapts) and the rest wait in the fetch
 * client's queue for that host. Waiting there holds none of the tenant's
 * 32 detached-job slots, so the same tenant's delivery to a healthy host
 * still leaves its turn and arrives at once; before, the 32 slots filled
 * with the waiting ones and the turn ran the next hanging delivery itself. */
START_TEST(test_hanging_backlog)
{
    struct world w;
    world_start(&w);
    queue_deliveries(&w, 60, P_HANG, "/backlog/");
    ck_assert_int_ge(peer_wait(P_HANG, NULL, 1, 15000), 1);
    /* Time for the turn to claim the sixty and queue them behind the cap. */
    eu_it_sleep_ms(1500);
    long long t0 = eu_it_now_ms();
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_OTHER, "/healthy");
    ck_assert_int_eq(peer_wait(P_OTHER, "/healthy", 1, 6000), 1);
    long long took = eu_it_now_ms() - t0;
    ck_assert_msg(took < 4000, "a healthy host's delivery waited %lld ms behind a hanging one",
                  took);
    /* The hanging host never had more than its cap at once. */
    ck_assert_int_le(peer_count(P_HANG, NULL), 8);
    eu_it_world_stop(&w);
}
END_TEST

/* The signer statement's answer is kept per signer and host for a few
 * seconds: five deliveries in one claim ask once. A suspension of the
 * host made through the admin API stops the very next delivery (the kept
 * answer is dropped with it) while the decoy tenant's delivery to the same
 * host still goes; lifting it lets the next one through at once. */
START_TEST(test_kept_signer)
{
    struct world w;
    world_start(&w);
    double kept0 = eu_it_metric(w.s, "eunha_ap_delivery_signers_kept_total");
    queue_deliveries(&w, 5, P_OTHER, "/kept/");
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_OTHER, "/kept/wake");
    ck_assert_int_eq(peer_wait(P_OTHER, NULL, 6, 15000), 6);
    wait_jobs_gone(&w, w.tid);
    ck_assert_double_ge(eu_it_metric(w.s, "eunha_ap_delivery_signers_kept_total") - kept0, 3);

    char path[256], body[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks", HOST);
    snprintf(body, sizeof(body), "{\"domain\":\"127.0.0.1:%d\",\"severity\":\"suspend\"}",
             peer.port[P_OTHER]);
    struct eu_it_resp r = {0};
    eu_it_admin(w.s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *block = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_OTHER, "/blocked");
    admin_delivery(&w, DECOY, eu_it_id(&w, "carol"), P_OTHER, "/decoy");
    ck_assert_int_eq(peer_wait(P_OTHER, "/decoy", 1, 10000), 1);
    wait_jobs_gone(&w, w.tid);
    eu_it_sleep_ms(300);
    ck_assert_int_eq(peer_count(P_OTHER, "/blocked"), 0);

    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks/%s", HOST, block);
    eu_it_admin(w.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_OTHER, "/lifted");
    ck_assert_int_eq(peer_wait(P_OTHER, "/lifted", 1, 10000), 1);
    free(block);
    eu_it_world_stop(&w);
}
END_TEST

/* One activity to 24 inboxes on two hosts: 24 signatures, each verifying
 * for its own inbox, over one digest and one parse of alice's key; the
 * decoy tenant's counters are the process's, so its silence shows as
 * nothing more counted. Then 300 deliveries, claimed in batches and deleted
 * in batches, each arrive exactly once. */
START_TEST(test_shared_work)
{
    struct world w;
    world_start(&w);
    double sig0 = eu_it_metric(w.s, "eunha_ap_delivery_signatures_total");
    double key0 = eu_it_metric(w.s, "eunha_ap_delivery_key_parses_total");
    double dig0 = eu_it_metric(w.s, "eunha_ap_delivery_digests_total");
    free(eu_it_pg_execf(
        w.db,
        "INSERT INTO jobs (tenant_id, queue, kind, payload) SELECT %s, 'deliver', 'ap_deliver',"
        " jsonb_build_object('inbox', 'http://127.0.0.1:' || CASE WHEN g %% 2 = 0 THEN %d ELSE %d"
        " END || '/many/' || g, 'actor_id', '%s', 'activity', jsonb_build_object('id',"
        " 'http://dl.example/users/alice/statuses/1/activity', 'type', 'Create', 'actor',"
        " 'http://dl.example/users/alice', 'object', jsonb_build_object('type', 'Note',"
        " 'content', repeat('shared ', 100))))"
        " FROM generate_series(1, 24) g",
        w.tid, peer.port[P_MAIN], peer.port[P_OTHER], eu_it_id(&w, "alice")));
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_MAIN, "/wake");
    ck_assert_int_eq(peer_wait(P_MAIN, NULL, 13, 15000), 13);
    ck_assert_int_eq(peer_wait(P_OTHER, NULL, 12, 15000), 12);
    wait_jobs_gone(&w, w.tid);
    /* 25 signatures: the 24 and the wake-up's own (another activity, so a
     * second digest); alice's key read once for all of them. */
    ck_assert_double_eq(eu_it_metric(w.s, "eunha_ap_delivery_signatures_total") - sig0, 25);
    ck_assert_double_eq(eu_it_metric(w.s, "eunha_ap_delivery_digests_total") - dig0, 2);
    ck_assert_double_le(eu_it_metric(w.s, "eunha_ap_delivery_key_parses_total") - key0, 1);
    const char *digest = NULL, *first_sig = NULL;
    for (int k = 0; k < 13; k++) {
        struct rec *r = peer_rec(P_MAIN, NULL, k);
        if (strncmp(r->path, "/many/", 6) != 0)
            continue;
        check_signed(&w, r, eu_it_id(&w, "alice"), "http://dl.example/users/alice#main-key");
        if (!digest) {
            digest = rec_header(r, "Digest");
            first_sig = rec_header(r, "Signature");
            continue;
        }
        ck_assert_str_eq(rec_header(r, "Digest"), digest);
        ck_assert_str_ne(rec_header(r, "Signature"), first_sig); /* its own inbox signed */
    }
    for (int g = 1; g <= 24; g++) {
        char path[32];
        snprintf(path, sizeof(path), "/many/%d", g);
        ck_assert_int_eq(peer_count(g % 2 == 0 ? P_MAIN : P_OTHER, path), 1);
    }

    queue_deliveries(&w, 300, P_OTHER, "/once/");
    admin_delivery(&w, HOST, eu_it_id(&w, "alice"), P_MAIN, "/wake");
    wait_jobs_gone(&w, w.tid);
    eu_it_sleep_ms(300);
    for (int g = 1; g <= 300; g++) {
        char path[32];
        snprintf(path, sizeof(path), "/once/%d", g);
        ck_assert_msg(peer_count(P_OTHER, path) == 1, "%s arrived %d times", path,
                      peer_count(P_OTHER, path));
    }
    ck_assert_int_eq(peer_count(P_OTHER, NULL), 12 + 300);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_deliver");
    EU_IT_ADD_TCASE(s, test_statuses_and_follows, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_failures, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_fairness, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_hanging_peer, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_shared_work, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_hanging_backlog, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_kept_signer, TIMEOUT);
    return eu_it_run_suite(s);
}
