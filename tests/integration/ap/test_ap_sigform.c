/*
 * Which HTTP signature form eunha signs with, against peers that behave as
 * real servers do (issue 26, items 3 and 4). Each peer is an ap_peer.h
 * server on its own port (so its own host in the process-wide form table)
 * whose inbox this file plays:
 *
 *  - a lazy peer answers 202 to every POST, as snac2 and the Misskey
 *    family do, and acts only on what verifies as draft-cavage: a remote
 *    follow gets its Accept on first contact, and a local user's follow
 *    and post reach it;
 *  - a strict peer answers 401 to an RFC 9421 POST, as a Fedify 1.5 peer
 *    does: its first Accept is read at once all the same;
 *  - a peer that signs its Follow with RFC 9421 gets its Accept signed RFC
 *    9421 (it showed it reads that form);
 *  - a peer that serves its actor only to RFC 9421 fetches (401 to
 *    draft-cavage, 200 to RFC 9421) still gets draft-cavage POSTs: a GET's
 *    200 says nothing of how an inbox verifies.
 *
 * Every test runs on a fresh server, so no host is known at the start.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ap_peer.h"
#include "eunha/httpsig.h"

#define TIMEOUT 240
#define WAIT_MS 30000
#define SIG_TOML PEER_TOML "[workers]\nqueue_idle_poll_seconds = 1\n"
#define MAX_POSTS 64

/* How a peer's inbox treats a POST. */
enum inbox_mode {
    LAZY,          /* 202 to all; acts on what verifies as draft-cavage */
    STRICT,        /* 401 to RFC 9421; 202 to the rest, acts as LAZY */
    BOTH,          /* 202 to all; acts on what verifies in either form */
    FETCH_RFC9421, /* as LAZY, and 401 to a GET not signed RFC 9421 */
};

/* One POST a peer's inbox got. */
struct post_rec {
    char path[128];
    char type[32];    /* the activity's type */
    char object[256]; /* its object's id, or the object when a string */
    enum eu_httpsig_form form;
    bool verified; /* the signature checked with alice's key */
    bool acted;    /* the peer took it (the mode allows its form) */
};

/* A peer with this file's inbox. */
struct sig_peer {
    struct peer *p;
    enum inbox_mode mode;
    const char *key_id, *pem; /* alice's: the only local signer here */
    pthread_mutex_t mu;
    int n;
    struct post_rec posts[MAX_POSTS];
    int gets_refused;
};

/* Checks req's signature with sp's key into rec. */
static void
check_post(struct sig_peer *sp, struct evhttp_request *req, const char *body, size_t len,
           struct post_rec *rec)
{
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    struct eu_httpsig_header h[PEER_MAX_HEADERS];
    size_t n = 0;
    for (struct evkeyval *kv = TAILQ_FIRST(in); kv && n < PEER_MAX_HEADERS;
         kv = TAILQ_NEXT(kv, next)) {
        h[n].name = kv->key;
        h[n].value = kv->value;
        n++;
    }
    struct eu_httpsig_request r = {
        .method = "POST",
        .scheme = "http",
        .authority = evhttp_find_header(in, "Host"),
        .target = evhttp_request_get_uri(req),
        .headers = h,
        .nheaders = n,
        .body = body,
        .body_len = len,
    };
    struct eu_httpsig *sig = NULL;
    if (r.authority && eu_httpsig_parse(&r, time(NULL), &sig) == EU_HTTPSIG_OK) {
        rec->form = eu_httpsig_form(sig);
        rec->verified = strcmp(eu_httpsig_key_id(sig), sp->key_id) == 0 &&
                        eu_httpsig_verify_pem(sig, sp->pem) == EU_HTTPSIG_OK;
    }
    eu_httpsig_free(sig);
}

static bool
on_inbox(struct peer *p, struct evhttp_request *req)
{
    struct sig_peer *sp = p->data;
    if (evhttp_request_get_command(req) == EVHTTP_REQ_GET) {
        if (sp->mode != FETCH_RFC9421 ||
            evhttp_find_header(evhttp_request_get_input_headers(req), "Signature-Input"))
            return false; /* ap_peer.h serves it */
        pthread_mutex_lock(&sp->mu);
        sp->gets_refused++;
        pthread_mutex_unlock(&sp->mu);
        peer_reply(req, 401, "application/json", "{\"error\":\"rfc9421 only\"}");
        return true;
    }
    struct evbuffer *b = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(b);
    char *body = calloc(1, len + 1);
    evbuffer_copyout(b, body, len);
    struct post_rec rec = {0};
    snprintf(rec.path, sizeof(rec.path), "%s", evhttp_request_get_uri(req));
    check_post(sp, req, body, len, &rec);
    json_t *j = json_loads(body, 0, NULL);
    const char *type = json_string_value(json_object_get(j, "type"));
    snprintf(rec.type, sizeof(rec.type), "%s", type ? type : "");
    json_t *o = json_object_get(j, "object");
    const char *oid =
        json_is_string(o) ? json_string_value(o) : json_string_value(json_object_get(o, "id"));
    snprintf(rec.object, sizeof(rec.object), "%s", oid ? oid : "");
    json_decref(j);
    free(body);
    rec.acted = rec.verified && (rec.form == EU_HTTPSIG_CAVAGE || sp->mode == BOTH);
    int status = sp->mode == STRICT && rec.form == EU_HTTPSIG_RFC9421 ? 401 : 202;
    pthread_mutex_lock(&sp->mu);
    if (sp->n < MAX_POSTS)
        sp->posts[sp->n++] = rec;
    pthread_mutex_unlock(&sp->mu);
    evhttp_send_reply(req, status, status == 202 ? "Accepted" : "Unauthorized", NULL);
    return true;
}

static struct sig_peer *
sig_peer_start(enum inbox_mode mode, const char *key_id, const char *pem)
{
    struct sig_peer *sp = calloc(1, sizeof(*sp));
    pthread_mutex_init(&sp->mu, NULL);
    sp->mode = mode;
    sp->key_id = key_id;
    sp->pem = pem;
    sp->p = peer_start();
    sp->p->data = sp;
    sp->p->intercept = on_inbox;
    return sp;
}

static void
sig_peer_stop(struct sig_peer *sp)
{
    peer_stop(sp->p);
    pthread_mutex_destroy(&sp->mu);
    free(sp);
}

/* A copy of the k-th POST (asserts it came within WAIT_MS). */
static struct post_rec
nth_post(struct sig_peer *sp, int k)
{
    long long until = eu_it_now_ms() + WAIT_MS;
    for (;;) {
        pthread_mutex_lock(&sp->mu);
        int n = sp->n;
        struct post_rec r = k < n ? sp->posts[k] : (struct post_rec){0};
        pthread_mutex_unlock(&sp->mu);
        if (k < n)
            return r;
        ck_assert_msg(eu_it_now_ms() < until, "the peer got %d POSTs, not %d", n, k + 1);
        eu_it_sleep_ms(100);
    }
}

/* The index of the first POST of type (with object, when given) the peer
 * acted on, waiting up to WAIT_MS; -1 when none came. */
static int
wait_acted(struct sig_peer *sp, const char *type, const char *object)
{
    long long until = eu_it_now_ms() + WAIT_MS;
    do {
        pthread_mutex_lock(&sp->mu);
        for (int i = 0; i < sp->n; i++) {
            struct post_rec *r = &sp->posts[i];
            if (r->acted && strcmp(r->type, type) == 0 &&
                (!object || strcmp(r->object, object) == 0)) {
                pthread_mutex_unlock(&sp->mu);
                return i;
            }
        }
        pthread_mutex_unlock(&sp->mu);
        eu_it_sleep_ms(100);
    } while (eu_it_now_ms() < until);
    return -1;
}

/* ------------------------------------------------------------ a world */

static const struct eu_it_world_opts world = {
    .host = "a.test",
    .extra_toml = SIG_TOML,
    .users = {{"alice"}},
};

/* Starts the world and returns alice's public key (caller frees). */
static char *
world_start(struct world *w)
{
    eu_it_world_start(w, &world);
    char *pem = eu_it_world_sql(w,
                                "SELECT public_key FROM accounts WHERE tenant_id = %s"
                                " AND id = %s AND public_key IS NOT NULL",
                                w->tid, eu_it_id(w, "alice"));
    ck_assert_ptr_nonnull(pem);
    return pem;
}

#define ALICE_KEY "http://a.test/users/alice#main-key"

/* The peer's actor "peer" POSTs a Follow of alice to a.test, signed in the
 * given form; asserts 202. Returns the Follow's id (caller frees). */
static char *
peer_follows_alice(struct world *w, struct sig_peer *sp, bool rfc9421)
{
    struct peer *p = sp->p;
    char actor[128], key_id[160], *id = NULL, *body = NULL;
    snprintf(actor, sizeof(actor), "%s/users/peer", p->origin);
    snprintf(key_id, sizeof(key_id), "%s#main-key", actor);
    ck_assert_int_ge(asprintf(&id, "%s/follows/%s", p->origin, rfc9421 ? "9421" : "cavage"), 0);
    ck_assert_int_ge(asprintf(&body,
                              "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                              "\"id\":\"%s\",\"type\":\"Follow\",\"actor\":\"%s\","
                              "\"object\":\"http://a.test/users/alice\"}",
                              id, actor),
                     0);
    struct eu_httpsig_sign_args a = {
        .method = "POST",
        .url = "http://a.test/users/alice/inbox",
        .body = body,
        .body_len = strlen(body),
        .key_id = key_id,
        .key_pem = p->actors[0].priv,
        .now = time(NULL),
    };
    struct eu_httpsig_signed sg = {0};
    ck_assert_int_eq(rfc9421 ? eu_httpsig_sign_rfc9421(&a, &sg) : eu_httpsig_sign_cavage(&a, &sg),
                     0);
    char *lines[EU_HTTPSIG_SIGNED_MAX];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    int n = 0;
    for (int i = 0; i < sg.n; i++) {
        if (strcasecmp(sg.headers[i].name, "Host") == 0)
            continue; /* the harness sends its own */
        ck_assert_int_ge(asprintf(&lines[n], "%s: %s", sg.headers[i].name, sg.headers[i].value), 0);
        headers[n] = lines[n];
        n++;
    }
    headers[n] = "Content-Type: application/activity+json";
    headers[n + 1] = NULL;
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w->s->public_port, "a.test", "/users/alice/inbox",
                                    headers, body),
                     0);
    EU_IT_EXPECT_STATUS(&r, 202);
    eu_it_resp_free(&r);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&sg);
    free(body);
    return id;
}

/* The Accept of follow_id reached the peer and was acted on; returns its
 * POST's index. */
static int
accept_taken(struct sig_peer *sp, const char *follow_id)
{
    int i = wait_acted(sp, "Accept", follow_id);
    ck_assert_msg(i >= 0, "the peer never took the Accept of %s", follow_id);
    return i;
}

/* -------------------------------------------------------------- tests */

/* (a) A peer that answers 202 to everything and reads only draft-cavage. */
START_TEST(test_lazy_peer)
{
    struct world w;
    char *pem = world_start(&w);
    struct sig_peer *sp = sig_peer_start(LAZY, ALICE_KEY, pem);
    char *follow = peer_follows_alice(&w, sp, false);
    /* The Accept is the first thing sent there, and the peer reads it. */
    ck_assert_int_eq(accept_taken(sp, follow), 0);

    /* alice follows back and posts: both reach it, readable. */
    char uri[128];
    snprintf(uri, sizeof(uri), "%s/users/peer", sp->p->origin);
    char *peer_id = eu_it_pg_execf(
        w.db, "SELECT id FROM accounts WHERE tenant_id = %s AND uri = '%s'", w.tid, uri);
    ck_assert_ptr_nonnull(peer_id);
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/%s/follow", peer_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_ge(wait_acted(sp, "Follow", uri), 0);
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"),
                "{\"status\":\"hello lazy peer\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char note[160];
    snprintf(note, sizeof(note), "http://a.test/users/alice/statuses/%s", eu_it_json_str(&r, "id"));
    ck_assert_int_ge(wait_acted(sp, "Create", note), 0);

    /* Nothing went out in a form it drops. */
    pthread_mutex_lock(&sp->mu);
    for (int i = 0; i < sp->n; i++)
        ck_assert_msg(sp->posts[i].acted, "POST %d (%s) was not readable", i, sp->posts[i].type);
    pthread_mutex_unlock(&sp->mu);

    eu_it_resp_free(&r);
    free(peer_id);
    free(follow);
    sig_peer_stop(sp);
    eu_it_world_stop(&w);
    free(pem);
}
END_TEST

/* (b) A peer that refuses RFC 9421 with 401 gets draft-cavage at once; (c)
 * a peer that signed to us with RFC 9421 gets RFC 9421. */
START_TEST(test_strict_and_rfc9421_peers)
{
    struct world w;
    char *pem = world_start(&w);
    struct sig_peer *strict = sig_peer_start(STRICT, ALICE_KEY, pem);
    struct sig_peer *modern = sig_peer_start(BOTH, ALICE_KEY, pem);

    char *f1 = peer_follows_alice(&w, strict, false);
    ck_assert_int_eq(accept_taken(strict, f1), 0);
    struct post_rec first = nth_post(strict, 0);
    ck_assert_int_eq(first.form, EU_HTTPSIG_CAVAGE);

    char *f2 = peer_follows_alice(&w, modern, true);
    ck_assert_int_eq(accept_taken(modern, f2), 0);
    first = nth_post(modern, 0);
    ck_assert(first.verified);
    ck_assert_int_eq(first.form, EU_HTTPSIG_RFC9421);

    free(f1);
    free(f2);
    sig_peer_stop(strict);
    sig_peer_stop(modern);
    eu_it_world_stop(&w);
    free(pem);
}
END_TEST

/* (d) A signed GET answered 200 (after a 401 to draft-cavage) does not put
 * the host on RFC 9421. */
START_TEST(test_fetch_teaches_nothing)
{
    struct world w;
    char *pem = world_start(&w);
    struct sig_peer *sp = sig_peer_start(FETCH_RFC9421, ALICE_KEY, pem);
    char *follow = peer_follows_alice(&w, sp, false);
    /* The key fetch for the Follow took RFC 9421 after a refusal. */
    pthread_mutex_lock(&sp->mu);
    int refused = sp->gets_refused;
    pthread_mutex_unlock(&sp->mu);
    ck_assert_int_ge(refused, 1);
    ck_assert_int_ge(peer_fetches(sp->p, 0), 1);
    ck_assert_int_eq(accept_taken(sp, follow), 0);
    ck_assert_int_eq(nth_post(sp, 0).form, EU_HTTPSIG_CAVAGE);
    free(follow);
    sig_peer_stop(sp);
    eu_it_world_stop(&w);
    free(pem);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_sigform");
    EU_IT_ADD_TCASE(s, test_lazy_peer, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_strict_and_rfc9421_peers, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_fetch_teaches_nothing, TIMEOUT);
    return eu_it_run_suite(s);
}
