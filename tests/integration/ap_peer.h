/*
 * A fake remote ActivityPub server for integration tests: an evhttp server
 * on 127.0.0.1 in a thread of the test process, serving two actors
 * ("peer" and "other", each with its own RSA key) and WebFinger for them,
 * counting the requests it gets and keeping the headers of the last GET
 * of each actor so a test can check how it was signed; a test may take
 * any request first (struct peer's intercept). Header-only (static
 * functions) so each test file that needs it includes it.
 *
 * The server under test reaches it with [federation] allow_http and
 * allow_private_addresses (PEER_TOML).
 */
#ifndef EUNHA_TESTS_AP_PEER_H
#define EUNHA_TESTS_AP_PEER_H

#include <arpa/inet.h>
#include <check.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "eunha/apkeys.h"
#include "eunha/httpsig.h"

#define PEER_TOML "[federation]\nallow_http = true\nallow_private_addresses = true\n"
#define PEER_MAX_HEADERS 32

/* One actor the peer serves. */
struct peer_actor {
    const char *name; /* "peer", "other" */
    char *pub, *priv; /* PEM */
    int fetches;      /* GETs of the actor document */
    /* the last GET's request line and headers */
    char target[512];
    int nheaders;
    char hname[PEER_MAX_HEADERS][64];
    char hvalue[PEER_MAX_HEADERS][1024];
};

struct peer {
    pthread_t thread;
    pthread_mutex_t mu;
    struct event_base *base;
    struct evhttp *http;
    struct event *stop;
    int port;
    char origin[64]; /* "http://127.0.0.1:PORT" */
    char host[32];   /* "127.0.0.1:PORT" */
    struct peer_actor actors[2];
    int webfingers;
    /* When set (before any request comes), sees every request first, on
     * the peer's thread without mu; returns true when it answered it (a
     * test's own inbox, a refusal). */
    bool (*intercept)(struct peer *p, struct evhttp_request *req);
    void *data; /* the intercept's */
};

static char *
peer_actor_json(struct peer *p, struct peer_actor *a)
{
    char id[128];
    snprintf(id, sizeof(id), "%s/users/%s", p->origin, a->name);
    char key_id[160], inbox[160];
    snprintf(key_id, sizeof(key_id), "%s#main-key", id);
    snprintf(inbox, sizeof(inbox), "%s/inbox", id);
    char shared[128];
    snprintf(shared, sizeof(shared), "%s/inbox", p->origin);
    json_t *doc = json_pack(
        "{s:[s,s], s:s, s:s, s:s, s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s}}", "@context",
        "https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1", "id", id, "type",
        "Person", "preferredUsername", a->name, "name", a->name, "inbox", inbox, "endpoints",
        "sharedInbox", shared, "publicKey", "id", key_id, "owner", id, "publicKeyPem", a->pub);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

static void
peer_reply(struct evhttp_request *req, int status, const char *type, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    if (body)
        evbuffer_add(b, body, strlen(body));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", type);
    evhttp_send_reply(req, status, status == 200 ? "OK" : "Not Found", b);
    evbuffer_free(b);
}

static void
peer_on_request(struct evhttp_request *req, void *arg)
{
    struct peer *p = arg;
    if (p->intercept && p->intercept(p, req))
        return;
    const char *uri = evhttp_request_get_uri(req);
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < 2; i++) {
        struct peer_actor *a = &p->actors[i];
        char path[64];
        snprintf(path, sizeof(path), "/users/%s", a->name);
        if (strcmp(uri, path) != 0)
            continue;
        a->fetches++;
        snprintf(a->target, sizeof(a->target), "%s", uri);
        a->nheaders = 0;
        struct evkeyvalq *in = evhttp_request_get_input_headers(req);
        for (struct evkeyval *kv = TAILQ_FIRST(in); kv && a->nheaders < PEER_MAX_HEADERS;
             kv = TAILQ_NEXT(kv, next)) {
            snprintf(a->hname[a->nheaders], 64, "%s", kv->key);
            snprintf(a->hvalue[a->nheaders], 1024, "%s", kv->value);
            a->nheaders++;
        }
        char *doc = peer_actor_json(p, a);
        pthread_mutex_unlock(&p->mu);
        peer_reply(req, 200, "application/activity+json", doc);
        free(doc);
        return;
    }
    if (strncmp(uri, "/.well-known/webfinger?resource=acct:", 37) == 0) {
        p->webfingers++;
        const char *acct = uri + 37;
        for (int i = 0; i < 2; i++) {
            char want[128];
            snprintf(want, sizeof(want), "%s@%s", p->actors[i].name, p->host);
            if (strcmp(acct, want) != 0)
                continue;
            char href[128];
            snprintf(href, sizeof(href), "%s/users/%s", p->origin, p->actors[i].name);
            json_t *jrd = json_pack("{s:s, s:[{s:s, s:s, s:s}]}", "subject", acct, "links", "rel",
                                    "self", "type", "application/activity+json", "href", href);
            char *text = json_dumps(jrd, JSON_COMPACT);
            json_decref(jrd);
            pthread_mutex_unlock(&p->mu);
            peer_reply(req, 200, "application/jrd+json", text);
            free(text);
            return;
        }
    }
    pthread_mutex_unlock(&p->mu);
    peer_reply(req, 404, "application/json", "{\"error\":\"Not found\"}");
}

static void *
peer_main(void *arg)
{
    struct peer *p = arg;
    event_base_dispatch(p->base);
    return NULL;
}

static void
peer_on_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(arg);
}

/* Starts the peer with a fresh key for each actor. Free with peer_stop(). */
static struct peer *
peer_start(void)
{
    struct peer *p = calloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    evthread_use_pthreads();
    p->base = event_base_new();
    p->http = evhttp_new(p->base);
    struct evhttp_bound_socket *h = evhttp_bind_socket_with_handle(p->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(h);
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&sin, &len);
    p->port = ntohs(sin.sin_port);
    snprintf(p->host, sizeof(p->host), "127.0.0.1:%d", p->port);
    snprintf(p->origin, sizeof(p->origin), "http://%s", p->host);
    p->actors[0].name = "peer";
    p->actors[1].name = "other";
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(eu_ap_rsa_generate(&p->actors[i].pub, &p->actors[i].priv), 0);
    evhttp_set_gencb(p->http, peer_on_request, p);
    p->stop = event_new(p->base, -1, 0, peer_on_stop, p->base);
    ck_assert_int_eq(pthread_create(&p->thread, NULL, peer_main, p), 0);
    return p;
}

static void
peer_stop(struct peer *p)
{
    event_active(p->stop, EV_TIMEOUT, 1);
    pthread_join(p->thread, NULL);
    event_free(p->stop);
    evhttp_free(p->http);
    event_base_free(p->base);
    for (int i = 0; i < 2; i++) {
        free(p->actors[i].pub);
        free(p->actors[i].priv);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Actor i's fetch count. */
__attribute__((unused)) static int
peer_fetches(struct peer *p, int i)
{
    pthread_mutex_lock(&p->mu);
    int n = p->actors[i].fetches;
    pthread_mutex_unlock(&p->mu);
    return n;
}

__attribute__((unused)) static int
peer_webfingers(struct peer *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->webfingers;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* Gives actor i a new key pair (a rotation: the same key id). */
__attribute__((unused)) static void
peer_rotate(struct peer *p, int i)
{
    char *pub, *priv;
    ck_assert_int_eq(eu_ap_rsa_generate(&pub, &priv), 0);
    pthread_mutex_lock(&p->mu);
    free(p->actors[i].pub);
    free(p->actors[i].priv);
    p->actors[i].pub = pub;
    p->actors[i].priv = priv;
    pthread_mutex_unlock(&p->mu);
}

/*
 * Checks the signature of the last GET of actor i with pem (the public key
 * expected to have signed it) and that its key id is key_id.
 */
__attribute__((unused)) static void
peer_check_last_get(struct peer *p, int i, const char *key_id, const char *pem)
{
    pthread_mutex_lock(&p->mu);
    struct peer_actor *a = &p->actors[i];
    struct eu_httpsig_header h[PEER_MAX_HEADERS];
    const char *host = NULL;
    for (int k = 0; k < a->nheaders; k++) {
        h[k].name = a->hname[k];
        h[k].value = a->hvalue[k];
        if (strcasecmp(a->hname[k], "Host") == 0)
            host = a->hvalue[k];
    }
    struct eu_httpsig_request r = {
        .method = "GET",
        .scheme = "http",
        .authority = host,
        .target = a->target,
        .headers = h,
        .nheaders = (size_t)a->nheaders,
    };
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result res = eu_httpsig_parse(&r, time(NULL), &sig);
    pthread_mutex_unlock(&p->mu);
    ck_assert_msg(res == EU_HTTPSIG_OK, "the peer's GET was not signed well: %s",
                  eu_httpsig_result_str(res));
    ck_assert_str_eq(eu_httpsig_key_id(sig), key_id);
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, pem), EU_HTTPSIG_OK);
    eu_httpsig_free(sig);
}

#endif
