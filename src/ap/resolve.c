/*
 * Remote actors and keys as a tenant needs them (include/eunha/apresolve.h):
 * signed fetches by the tenant's instance actor, actors upserted into the
 * tenant's accounts, public keys by key id for the inbox, and WebFinger.
 *
 * Costs decide where work runs: signing (an RSA private-key operation) and
 * parsing an actor (its HTML is sanitized) run on the CPU pool; JSON
 * parsing of a capped body, lookups and the cache run on the loop. Two
 * tables live here for the whole process: the resolutions in flight (so a
 * burst of activities from one new actor costs one fetch) and the key cache
 * (public data, the same for every tenant, bounded by entries and bytes).
 */
#include "eunha/apresolve.h"

#include <ctype.h>
#include <event2/event.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/apingest.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/fetch.h"
#include "eunha/httpsig.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/tenant.h"
#include "sigform_internal.h"

#define ACCEPT_AP                                                                                  \
    "Accept: application/activity+json, application/ld+json; "                                     \
    "profile=\"https://www.w3.org/ns/activitystreams\""

enum {
    RESOLVE_ACTOR_ROW,
    RESOLVE_KEY_ROW,
    RESOLVE_ACCT_ROW,
    RESOLVE_KEY_ACCOUNT,
};

const struct eu_sql eu_ap_resolve_sql[] = {
    /* $2 the actor URI, $3 the local username it names (NULL when it is
     * not this tenant's BASE/users/NAME). */
    [RESOLVE_ACTOR_ROW] = {"ap_resolve.actor_row",
                           "SELECT id, domain IS NULL, uri, public_key_id, public_key, inbox_url,"
                           " shared_inbox_url, last_fetched_at > now() - interval '1 day', username"
                           " FROM accounts WHERE tenant_id = $1 AND suspended_at IS NULL"
                           " AND ((uri = $2 AND domain IS NOT NULL)"
                           "  OR ($3::text IS NOT NULL AND lower(username) = lower($3)"
                           "   AND coalesce(lower(domain), '') = ''))"
                           " LIMIT 1"},
    /* $2 the key id (migration 0021 indexes it). */
    [RESOLVE_KEY_ROW] = {"ap_resolve.key_row",
                         "SELECT uri, public_key FROM accounts WHERE tenant_id = $1"
                         " AND public_key_id = $2 AND domain IS NOT NULL"
                         " AND public_key IS NOT NULL AND suspended_at IS NULL LIMIT 1"},
    /* $2 username, $3 domain: a remote account fetched within a day,
     * which needs no WebFinger lookup (Mastodon's ResolveAccountService). */
    [RESOLVE_ACCT_ROW] = {"ap_resolve.acct_row",
                          "SELECT uri FROM accounts WHERE tenant_id = $1"
                          " AND lower(username) = lower($2)"
                          " AND coalesce(lower(domain), '') = lower($3) AND uri IS NOT NULL"
                          " AND last_fetched_at > now() - interval '1 day'"
                          " AND suspended_at IS NULL"},
    /* $2 a cached key's owner: whether this tenant has its row (suspended
     * or not, as the inbox's processing looks it up). */
    [RESOLVE_KEY_ACCOUNT] = {"ap_resolve.key_account",
                             "SELECT 1 FROM accounts WHERE tenant_id = $1 AND uri = $2"
                             " AND domain IS NOT NULL"},
    {0},
};

/* "scheme://domain" of tenant t; the caller frees it. */
static char *
base_url(const struct eu_app *app, const struct eu_tenant *t)
{
    return eu_xasprintf("%s://%s", app->cfg->scheme, t->domain);
}

static uint64_t
mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Whether url's host (port included) is h. */
static bool
host_is(const char *url, const char *h)
{
    char key[300];
    return eu_fetch_host_of(url, key, sizeof(key)) == 0 && strcasecmp(key, h) == 0;
}

/* ========================================================== signed fetch */

struct sfetch {
    struct eu_app *app;
    struct eu_tenant *t; /* one reference */
    eu_ap_fetch_cb cb;
    void *arg;
    char *url;
    char *base;
    char *key_id;
    char *priv_pem;
    char *expect_id; /* after an id refetch: the id that must come back */
    int redirects;
    time_t now;
    int sign_rc;
    bool rfc9421;         /* the form being sent */
    bool tried_both;      /* a 401 already made us switch forms */
    int timeout_s;        /* eu_ap_fetch_signed_within(); 0: none */
    uint64_t deadline_ms; /* mono_ms() by which it gives up, from its first request */
    char host[300];
    struct eu_httpsig_signed sig;
};

static void
sfetch_free(struct sfetch *op)
{
    eu_tenant_unref(op->t);
    eu_httpsig_signed_release(&op->sig);
    free(op->url);
    free(op->base);
    free(op->key_id);
    free(op->priv_pem);
    free(op->expect_id);
    free(op);
}

static void
sfetch_fail(struct sfetch *op, int status, const char *msg)
{
    struct eu_error err = {0};
    eu_error_set(&err, status, "%s", msg);
    eu_log_set_context(op->t->domain, NULL);
    eu_log_info("ap", "cannot fetch '%.300s': %s", op->url, err.message);
    op->cb(NULL, NULL, &err, op->arg);
    sfetch_free(op);
}

static void sfetch_sign(struct sfetch *op);
static void sfetch_start_host(struct sfetch *op);

static void
on_sfetch_resp(struct eu_fetch_resp *resp, void *arg)
{
    struct sfetch *op = arg;
    if (resp->error != EU_FETCH_OK) {
        int st = resp->error == EU_FETCH_TIMEOUT      ? 504
                 : resp->error == EU_FETCH_QUEUE_FULL ? 503
                                                      : 502;
        sfetch_fail(op, st, resp->message ? resp->message : eu_fetch_error_str(resp->error));
        return;
    }
    if (resp->status >= 300 && resp->status < 400 && resp->location) {
        if (++op->redirects > EU_AP_FETCH_MAX_REDIRECTS) {
            sfetch_fail(op, 502, "too many redirects");
            return;
        }
        free(op->url);
        op->url = eu_xstrdup(resp->location);
        sfetch_start_host(op);
        return;
    }
    if (resp->status == 401 && !op->tried_both) {
        /* Perhaps it reads only the other form. Whatever the answer, the
         * host's form stays as it was: how a server checks fetches says
         * nothing of how its inbox verifies (sigform_internal.h). */
        op->tried_both = true;
        op->rfc9421 = !op->rfc9421;
        sfetch_sign(op);
        return;
    }
    if (resp->status >= 400 && resp->status < 500) {
        struct eu_error err = {0};
        eu_error_set(&err, (int)resp->status, "the remote server answered %ld", resp->status);
        op->cb(NULL, NULL, &err, op->arg);
        sfetch_free(op);
        return;
    }
    if (resp->status != 200) {
        /* 503: unavailable for now, as a timeout is (504); an inbox job
         * retries the fetch on either, and gives up on the rest. */
        sfetch_fail(op, resp->status >= 500 ? 503 : 502, "the remote server did not answer 200");
        return;
    }
    if (resp->content_type && !strstr(resp->content_type, "json")) {
        sfetch_fail(op, 502, "the answer is not JSON");
        return;
    }
    json_t *doc = json_loadb(resp->body, resp->body_len, 0, NULL);
    const char *id = json_string_value(json_object_get(doc, "id"));
    if (!json_is_object(doc) || !id) {
        json_decref(doc);
        sfetch_fail(op, 502, "the answer is not a JSON object with an id");
        return;
    }
    char host[300];
    bool same_host = eu_fetch_host_of(op->url, host, sizeof(host)) == 0 && host_is(id, host);
    if (op->expect_id ? strcmp(id, op->expect_id) != 0 || !same_host : !same_host) {
        if (op->expect_id) {
            json_decref(doc);
            sfetch_fail(op, 502, "the document's id is not where it was fetched from");
            return;
        }
        /* Mastodon's answer to an id elsewhere: ask the id's own host. */
        op->expect_id = eu_xstrdup(id);
        free(op->url);
        op->url = eu_xstrdup(id);
        op->redirects = 0;
        json_decref(doc);
        sfetch_start_host(op);
        return;
    }
    op->cb(doc, op->url, NULL, op->arg);
    json_decref(doc);
    sfetch_free(op);
}

static void
sign_work(void *arg)
{
    struct sfetch *op = arg;
    struct eu_httpsig_sign_args a = {
        .method = "GET",
        .url = op->url,
        .key_id = op->key_id,
        .key_pem = op->priv_pem,
        .now = op->now,
    };
    op->sign_rc =
        op->rfc9421 ? eu_httpsig_sign_rfc9421(&a, &op->sig) : eu_httpsig_sign_cavage(&a, &op->sig);
}

static void
sign_done(void *arg)
{
    struct sfetch *op = arg;
    if (op->sign_rc < 0) {
        sfetch_fail(op, 502, "cannot sign a request for this URL");
        return;
    }
    /* A bounded fetch: each request gets what is left of the whole. */
    int timeout_ms = 0;
    /* Counted from the first request, not from the instance actor's key
     * (made on first use, seconds of CPU on a busy machine). */
    if (op->timeout_s && !op->deadline_ms)
        op->deadline_ms = mono_ms() + (uint64_t)op->timeout_s * 1000;
    if (op->deadline_ms) {
        uint64_t now = mono_ms();
        if (now >= op->deadline_ms) {
            sfetch_fail(op, 504, "timed out");
            return;
        }
        timeout_ms = (int)(op->deadline_ms - now);
    }
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    char *lines[EU_HTTPSIG_SIGNED_MAX];
    headers[0] = ACCEPT_AP;
    for (int i = 0; i < op->sig.n; i++) {
        lines[i] = eu_xasprintf("%s: %s", op->sig.headers[i].name, op->sig.headers[i].value);
        headers[i + 1] = lines[i];
    }
    headers[op->sig.n + 1] = NULL;
    struct eu_fetch_req req = {
        .method = EU_FETCH_GET,
        .url = op->url,
        .headers = headers,
        .owner = (uint64_t)op->t->id,
        .max_redirects = 0,
        .ua_base = op->base,
        .timeout_ms = timeout_ms,
    };
    eu_fetch_start(op->app->fetch, &req, on_sfetch_resp, op);
    for (int i = 0; i < op->sig.n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&op->sig);
}

static void
sfetch_sign(struct sfetch *op)
{
    op->now = time(NULL);
    eu_cpupool_submit(op->app->cpu, sign_work, sign_done, op);
}

/* A new URL (the first, a redirect's, an id's own host): its host's form. */
static void
sfetch_start_host(struct sfetch *op)
{
    if (eu_fetch_host_of(op->url, op->host, sizeof(op->host)) < 0)
        op->host[0] = '\0';
    op->rfc9421 = eu_ap_sigform_rfc9421_first(op->host);
    op->tried_both = false;
    sfetch_sign(op);
}

static void
on_instance_actor(const struct eu_ap_instance_actor *ia, enum eu_db_status st, void *arg)
{
    struct sfetch *op = arg;
    (void)st;
    if (!ia || !ia->private_key_pem) {
        sfetch_fail(op, 503, "the instance actor is not available");
        return;
    }
    op->priv_pem = eu_xstrdup(ia->private_key_pem);
    sfetch_start_host(op);
}

void
eu_ap_fetch_signed_within(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                          int timeout_s, eu_ap_fetch_cb cb, void *arg)
{
    struct sfetch *op = eu_xcalloc(1, sizeof(*op));
    op->timeout_s = timeout_s > 0 ? timeout_s : 0;
    op->app = app;
    op->t = tenant;
    eu_tenant_ref(tenant);
    op->cb = cb;
    op->arg = arg;
    /* The fragment names a part of the document, not something to ask for
     * (a key id's "#main-key"). */
    op->url = eu_xstrndup(url, strcspn(url, "#"));
    op->base = base_url(app, tenant);
    op->key_id = eu_xasprintf("%s/actor#main-key", op->base);
    eu_ap_instance_actor(app, tenant, on_instance_actor, op);
}

void
eu_ap_fetch_signed(struct eu_app *app, struct eu_tenant *tenant, const char *url, eu_ap_fetch_cb cb,
                   void *arg)
{
    eu_ap_fetch_signed_within(app, tenant, url, 0, cb, arg);
}

/* ============================================================ key cache */

#define KC_BUCKETS 8192

struct kc_entry {
    char *key_id, *owner, *pem;
    /* The owner's document as fetched (JSON text) and where from, or NULL:
     * what a second tenant makes its own account row from without asking
     * again while it is fresh. */
    char *doc, *doc_url;
    uint64_t doc_ms; /* when the document was fetched */
    size_t bytes;
    uint64_t refreshed_ms; /* when a refresh last fetched it; 0 never */
    struct kc_entry *hnext;
    struct kc_entry *prev, *next; /* LRU: head most recent */
};

static struct {
    struct kc_entry *buckets[KC_BUCKETS];
    struct kc_entry *head, *tail;
    size_t n, bytes;
} kc;

static size_t
kc_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)(h % KC_BUCKETS);
}

static void
kc_unlink(struct kc_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        kc.head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        kc.tail = e->prev;
    e->prev = e->next = NULL;
}

static void
kc_push_front(struct kc_entry *e)
{
    e->next = kc.head;
    if (kc.head)
        kc.head->prev = e;
    kc.head = e;
    if (!kc.tail)
        kc.tail = e;
}

static void
kc_remove(struct kc_entry *e)
{
    for (struct kc_entry **p = &kc.buckets[kc_hash(e->key_id)]; *p; p = &(*p)->hnext) {
        if (*p == e) {
            *p = e->hnext;
            break;
        }
    }
    kc_unlink(e);
    kc.n--;
    kc.bytes -= e->bytes;
    free(e->key_id);
    free(e->owner);
    free(e->pem);
    free(e->doc);
    free(e->doc_url);
    free(e);
}

static struct kc_entry *
kc_get(const char *key_id)
{
    for (struct kc_entry *e = kc.buckets[kc_hash(key_id)]; e; e = e->hnext) {
        if (strcmp(e->key_id, key_id) == 0) {
            kc_unlink(e);
            kc_push_front(e);
            return e;
        }
    }
    return NULL;
}

/* The owner's document for kc_put: text (taken), fetched from url at ms. */
struct kc_doc {
    char *text;
    const char *url;
    uint64_t ms;
};

/*
 * Puts key_id, owned by owner, into the cache. doc (NULL when there is none
 * to give) takes its text; without one, the entry keeps the document it
 * had if that still names the same owner and key.
 */
static void
kc_put(const char *key_id, const char *owner, const char *pem, bool refreshed, struct kc_doc *doc)
{
    struct kc_entry *old = kc_get(key_id);
    uint64_t refreshed_ms = refreshed ? mono_ms() : old ? old->refreshed_ms : 0;
    struct kc_doc kept = {0};
    if (doc && doc->text) {
        kept = *doc;
        doc->text = NULL;
    } else if (old && old->doc && strcmp(old->owner, owner) == 0 && strcmp(old->pem, pem) == 0) {
        kept = (struct kc_doc){.text = old->doc, .url = old->doc_url, .ms = old->doc_ms};
        old->doc = NULL;
    }
    struct kc_entry *e = eu_xcalloc(1, sizeof(*e));
    e->key_id = eu_xstrdup(key_id);
    e->owner = eu_xstrdup(owner);
    e->pem = eu_xstrdup(pem);
    e->doc = kept.text;
    e->doc_url = kept.text ? eu_xstrdup(kept.url) : NULL;
    e->doc_ms = kept.ms;
    if (old)
        kc_remove(old);
    e->bytes = sizeof(*e) + strlen(key_id) + strlen(owner) + strlen(pem) + 3;
    if (e->doc)
        e->bytes += strlen(e->doc) + strlen(e->doc_url) + 2;
    e->refreshed_ms = refreshed_ms;
    size_t b = kc_hash(key_id);
    e->hnext = kc.buckets[b];
    kc.buckets[b] = e;
    kc_push_front(e);
    kc.n++;
    kc.bytes += e->bytes;
    while (kc.tail && kc.tail != e &&
           (kc.n > EU_AP_KEY_CACHE_ENTRIES || kc.bytes > EU_AP_KEY_CACHE_BYTES))
        kc_remove(kc.tail);
}

void
eu_ap_key_cache_clear(void)
{
    while (kc.head)
        kc_remove(kc.head);
}

/* ====================================================== actor resolution */

struct waiter {
    eu_ap_actor_cb cb;
    void *arg;
    struct waiter *next;
};

struct aresolve {
    struct eu_app *app;
    struct eu_tenant *t; /* one reference */
    char *uri;
    char *base;
    bool force;
    bool doc_cached;   /* parsing the key cache's copy, not a fresh fetch */
    char *want_key_id; /* the key to keep when the actor has several; may be NULL */
    struct waiter *waiters;
    struct aresolve *next; /* in flight */
    /* parsing, on the CPU pool: only the pool thread touches these until
     * parse_done runs */
    json_t *doc;
    char *host;
    struct eu_arena *arena;
    struct eu_ap_actor ac;
    struct eu_error err;
    int parse_rc;
    char *doc_text; /* doc as text for the key cache, or NULL */
    char *final_url;
    uint64_t doc_ms; /* when doc was fetched */
};

static struct aresolve *resolving;

static bool
str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void
aresolve_unlink(struct aresolve *op)
{
    for (struct aresolve **p = &resolving; *p; p = &(*p)->next) {
        if (*p == op) {
            *p = op->next;
            return;
        }
    }
}

static void
aresolve_free(struct aresolve *op)
{
    for (struct waiter *w = op->waiters, *next; w; w = next) {
        next = w->next;
        free(w);
    }
    eu_tenant_unref(op->t);
    json_decref(op->doc);
    if (op->arena)
        eu_arena_free(op->arena);
    free(op->uri);
    free(op->base);
    free(op->want_key_id);
    free(op->host);
    free(op->doc_text);
    free(op->final_url);
    free(op);
}

/* Answers every waiter (r or err) and frees op. */
static void
aresolve_end(struct aresolve *op, const struct eu_ap_resolved *r, const struct eu_error *err)
{
    aresolve_unlink(op);
    eu_log_set_context(op->t->domain, NULL);
    if (err)
        eu_log_info("ap", "cannot resolve '%.300s': %s", op->uri, err->message);
    for (struct waiter *w = op->waiters; w; w = w->next)
        w->cb(r, err, w->arg);
    aresolve_free(op);
}

static void
aresolve_fail(struct aresolve *op, int status, const char *msg)
{
    struct eu_error err = {0};
    eu_error_set(&err, status, "%s", msg);
    aresolve_end(op, NULL, &err);
}

struct upsert_ctx {
    struct aresolve *op;
    struct eu_db_conn *conn;
};

static void
on_upserted(const char *id, int status, void *arg)
{
    struct upsert_ctx *u = arg;
    struct aresolve *op = u->op;
    eu_db_conn_release(u->conn);
    free(u);
    if (status != EU_DB_OK || !id) {
        aresolve_fail(op, status != EU_DB_OK ? 503 : 422,
                      status != EU_DB_OK ? "cannot store the actor"
                                         : "the actor is a local account");
        return;
    }
    const struct eu_ap_actor *ac = &op->ac;
    if (ac->n_emojis > 0) /* their emoji_fetch jobs (ingest_store.c) */
        eu_queue_wake(op->t, EU_QUEUE_MEDIA, 0);
    /* Its featured hashtags, read after it is stored, when freshly fetched. */
    if (!op->doc_cached && json_is_string(json_object_get(op->doc, "featuredTags")))
        eu_ap_featured_tags_fetch(op->app, op->t, id, ac->id,
                                  json_string_value(json_object_get(op->doc, "featuredTags")));
    if (ac->key_id && ac->public_key_pem) {
        struct kc_doc doc = {.text = op->doc_text, .url = op->final_url, .ms = op->doc_ms};
        op->doc_text = NULL;
        kc_put(ac->key_id, ac->id, ac->public_key_pem, false, &doc);
    }
    struct eu_ap_resolved r = {
        .account_id = id,
        .uri = ac->id,
        .key_id = ac->key_id,
        .public_key_pem = ac->public_key_pem,
        .inbox = ac->inbox,
        .shared_inbox = ac->shared_inbox,
    };
    aresolve_end(op, &r, NULL);
}

static void
on_upsert_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct aresolve *op = arg;
    if (st != EU_DB_OK) {
        aresolve_fail(op, 503, "the database is not available");
        return;
    }
    struct upsert_ctx *u = eu_xcalloc(1, sizeof(*u));
    u->op = op;
    u->conn = conn;
    eu_ingest_account_upsert(conn, &op->ac, on_upserted, u);
}

static void
parse_work(void *arg)
{
    struct aresolve *op = arg;
    op->parse_rc =
        eu_ap_actor_parse(op->arena, op->doc, op->host, op->want_key_id, &op->ac, &op->err);
    if (op->parse_rc < 0 || op->doc_cached || !op->ac.key_id || !op->ac.public_key_pem)
        return;
    /* Kept for the other tenants of the process (kc_entry.doc), unless it
     * would crowd the cache out. */
    op->doc_text = json_dumps(op->doc, JSON_COMPACT);
    if (op->doc_text && strlen(op->doc_text) > EU_AP_KEY_CACHE_DOC_MAX) {
        free(op->doc_text);
        op->doc_text = NULL;
    }
}

static void
parse_done(void *arg)
{
    struct aresolve *op = arg;
    if (op->parse_rc < 0) {
        struct eu_error err = op->err;
        aresolve_end(op, NULL, &err);
        return;
    }
    eu_db_pool_acquire(eu_tenant_pool(op->app->registry, op->t), on_upsert_conn, op);
}

/* Takes a reference to doc, fetched from final_url, and parses it. */
static void
aresolve_parse(struct aresolve *op, json_t *doc, const char *final_url)
{
    char host[300];
    if (eu_fetch_host_of(final_url, host, sizeof(host)) < 0) {
        aresolve_fail(op, 502, "the actor's URL has no host");
        return;
    }
    op->doc = json_incref(doc);
    op->host = eu_xstrdup(host);
    op->final_url = eu_xstrdup(final_url);
    op->doc_ms = mono_ms();
    op->arena = eu_arena_new();
    eu_cpupool_submit(op->app->cpu, parse_work, parse_done, op);
}

static void
on_actor_doc(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct aresolve *op = arg;
    if (err) {
        struct eu_error e = *err;
        aresolve_end(op, NULL, &e);
        return;
    }
    aresolve_parse(op, doc, final_url);
}

static void
on_actor_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct aresolve *op = arg;
    if (st != EU_DB_OK) {
        aresolve_fail(op, 503, "the database is not available");
        return;
    }
    if (PQntuples(res) == 1) {
        bool local = PQgetvalue(res, 0, 1)[0] == 't';
        bool fresh = PQgetvalue(res, 0, 7)[0] == 't';
        if (local) {
            char *uri = eu_xasprintf("%s/users/%s", op->base, PQgetvalue(res, 0, 8));
            char *key_id = eu_xasprintf("%s#main-key", uri);
            char *inbox = eu_xasprintf("%s/inbox", uri);
            char *shared = eu_xasprintf("%s/inbox", op->base);
            struct eu_ap_resolved r = {
                .account_id = PQgetvalue(res, 0, 0),
                .uri = uri,
                .key_id = PQgetisnull(res, 0, 4) ? NULL : key_id,
                .public_key_pem = PQgetisnull(res, 0, 4) ? NULL : PQgetvalue(res, 0, 4),
                .inbox = inbox,
                .shared_inbox = shared,
                .local = true,
            };
            aresolve_end(op, &r, NULL);
            free(uri);
            free(key_id);
            free(inbox);
            free(shared);
            return;
        }
        if (fresh) {
            struct eu_ap_resolved r = {
                .account_id = PQgetvalue(res, 0, 0),
                .uri = PQgetvalue(res, 0, 2),
                .key_id = PQgetisnull(res, 0, 3) ? NULL : PQgetvalue(res, 0, 3),
                .public_key_pem = PQgetisnull(res, 0, 4) ? NULL : PQgetvalue(res, 0, 4),
                .inbox = PQgetisnull(res, 0, 5) ? NULL : PQgetvalue(res, 0, 5),
                .shared_inbox = PQgetisnull(res, 0, 6) ? NULL : PQgetvalue(res, 0, 6),
            };
            aresolve_end(op, &r, NULL);
            return;
        }
    } else if (host_is(op->uri, op->t->domain)) {
        /* Our own host: a document we would serve, never one to store
         * as a remote account. */
        aresolve_fail(op, 404, "no such local actor");
        return;
    }
    eu_ap_fetch_signed(op->app, op->t, op->uri, on_actor_doc, op);
}

static void
on_refused_local(struct eu_fetch_resp *resp, void *arg)
{
    (void)resp;
    aresolve_fail(arg, 404, "no such local actor");
}

/* The NAME of BASE/users/NAME, or NULL. Allocated in a. */
static const char *
local_username(struct eu_arena *a, const char *base, const char *uri)
{
    size_t n = strlen(base);
    if (strncasecmp(uri, base, n) != 0 || strncmp(uri + n, "/users/", 7) != 0)
        return NULL;
    const char *name = uri + n + 7;
    if (!*name || strcspn(name, "/?#") != strlen(name))
        return NULL;
    return eu_arena_strdup(a, name);
}

/*
 * Resolves uri for (cb, arg): joins a resolution in flight with the same
 * aims, or starts one. force skips the row; doc (with final_url) is the
 * actor already fetched, parsed instead of fetching; doc_cached says it is
 * the key cache's copy (so no newer than what is in flight).
 */
static void
resolve_actor(struct eu_app *app, struct eu_tenant *t, const char *uri, bool force,
              const char *want_key_id, json_t *doc, const char *final_url, bool doc_cached,
              eu_ap_actor_cb cb, void *arg)
{
    struct waiter *w = eu_xcalloc(1, sizeof(*w));
    w->cb = cb;
    w->arg = arg;
    if (!doc || doc_cached) {
        for (struct aresolve *op = resolving; op; op = op->next) {
            if (op->t == t && op->force == force && strcmp(op->uri, uri) == 0 &&
                str_eq(op->want_key_id, want_key_id)) {
                w->next = op->waiters;
                op->waiters = w;
                return;
            }
        }
    }
    struct aresolve *op = eu_xcalloc(1, sizeof(*op));
    op->app = app;
    op->t = t;
    eu_tenant_ref(t);
    op->uri = eu_xstrdup(uri);
    op->base = base_url(app, t);
    op->force = force;
    op->doc_cached = doc && doc_cached;
    op->want_key_id = want_key_id ? eu_xstrdup(want_key_id) : NULL;
    op->waiters = w;
    op->next = resolving;
    resolving = op;
    if ((doc || force) && host_is(uri, t->domain)) {
        /* Our own host: a document we serve, never one to store as a
         * remote account. Answered later, as every answer is. */
        struct eu_fetch_req bad = {.method = EU_FETCH_GET, .url = "", .owner = (uint64_t)t->id};
        eu_fetch_start(app->fetch, &bad, on_refused_local, op);
        return;
    }
    if (doc) {
        aresolve_parse(op, doc, final_url);
        return;
    }
    if (force) {
        eu_ap_fetch_signed(app, t, uri, on_actor_doc, op);
        return;
    }
    struct eu_arena *a = eu_arena_new();
    const char *p[] = {uri, local_username(a, op->base, uri)};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_ap_resolve_sql[RESOLVE_ACTOR_ROW], 2, p,
                    on_actor_row, op);
    eu_arena_free(a);
}

void
eu_ap_resolve_actor(struct eu_app *app, struct eu_tenant *tenant, const char *uri,
                    eu_ap_actor_cb cb, void *arg)
{
    resolve_actor(app, tenant, uri, false, NULL, NULL, NULL, false, cb, arg);
}

void
eu_ap_resolve_actor_refresh(struct eu_app *app, struct eu_tenant *tenant, const char *uri,
                            eu_ap_actor_cb cb, void *arg)
{
    resolve_actor(app, tenant, uri, true, NULL, NULL, NULL, false, cb, arg);
}

/* ======================================================== key resolution */

struct kresolve {
    struct eu_app *app;
    struct eu_tenant *t; /* one reference */
    char *key_id;
    bool refresh;
    eu_ap_key_cb cb;
    void *arg;
    /* a cache answer, delivered from a zero-delay event or once the
     * tenant's row is known to be there */
    char *owner, *pem;
};

static void
kresolve_free(struct kresolve *op)
{
    eu_tenant_unref(op->t);
    free(op->key_id);
    free(op->owner);
    free(op->pem);
    free(op);
}

static void
kresolve_answer(struct kresolve *op, const char *owner, const char *pem)
{
    struct eu_ap_key k = {.key_id = op->key_id, .owner = owner, .public_key_pem = pem};
    op->cb(&k, NULL, op->arg);
    kresolve_free(op);
}

static void
kresolve_fail(struct kresolve *op, const struct eu_error *err)
{
    eu_log_set_context(op->t->domain, NULL);
    eu_log_info("ap", "cannot resolve key '%.300s': %s", op->key_id, err->message);
    op->cb(NULL, err, op->arg);
    kresolve_free(op);
}

static void
on_cached(evutil_socket_t fd, short what, void *arg)
{
    struct kresolve *op = arg;
    (void)fd;
    (void)what;
    char *owner = op->owner, *pem = op->pem;
    op->owner = op->pem = NULL;
    kresolve_answer(op, owner, pem);
    free(owner);
    free(pem);
}

/* Answers from a copy of e, later on the loop. */
static void
answer_later(struct kresolve *op, const struct kc_entry *e)
{
    op->owner = eu_xstrdup(e->owner);
    op->pem = eu_xstrdup(e->pem);
    struct timeval zero = {0, 0};
    event_base_once(op->app->base, -1, EV_TIMEOUT, on_cached, op, &zero);
}

static void on_key_owner(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg);
static void on_key_doc(json_t *doc, const char *final_url, const struct eu_error *err, void *arg);

static void
on_cached_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct kresolve *op = arg;
    if (st != EU_DB_OK) {
        struct eu_error e = {0};
        eu_error_set(&e, 503, "the database is not available");
        kresolve_fail(op, &e);
        return;
    }
    if (PQntuples(res) == 1) {
        char *owner = op->owner, *pem = op->pem;
        op->owner = op->pem = NULL;
        kresolve_answer(op, owner, pem);
        free(owner);
        free(pem);
        return;
    }
    /* Another tenant cached the key: this one makes its own row, from the
     * document the cache kept while it is fresh, else as if nothing were
     * cached. The entry may have gone or changed since the lookup. */
    struct kc_entry *e = kc_get(op->key_id);
    if (e && e->doc && strcmp(e->owner, op->owner) == 0 &&
        mono_ms() - e->doc_ms < (uint64_t)EU_AP_ACTOR_FRESH_S * 1000) {
        json_t *doc = json_loads(e->doc, 0, NULL);
        if (doc) {
            resolve_actor(op->app, op->t, op->owner, true, op->key_id, doc, e->doc_url, true,
                          on_key_owner, op);
            json_decref(doc);
            return;
        }
    }
    eu_ap_fetch_signed_within(op->app, op->t, op->key_id, EU_AP_KEY_FETCH_TIMEOUT_S, on_key_doc,
                              op);
}

/*
 * Answers from e once the tenant has the owner's account row: the cache is
 * the process's, the rows are each tenant's, and what the inbox queues is
 * processed against the row.
 */
static void
answer_cached(struct kresolve *op, const struct kc_entry *e)
{
    op->owner = eu_xstrdup(e->owner);
    op->pem = eu_xstrdup(e->pem);
    /* The key is not fetched on this path: nothing to mark refreshed. */
    op->refresh = false;
    const char *p[] = {op->owner};
    eu_db_pool_stmt(eu_tenant_pool(op->app->registry, op->t),
                    &eu_ap_resolve_sql[RESOLVE_KEY_ACCOUNT], 1, p, on_cached_row, op);
}

static void
on_key_owner(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct kresolve *op = arg;
    if (err) {
        kresolve_fail(op, err);
        return;
    }
    if (!r->key_id || !r->public_key_pem || strcmp(r->key_id, op->key_id) != 0) {
        struct eu_error e = {0};
        eu_error_set(&e, 401, "the key does not belong to its owner");
        kresolve_fail(op, &e);
        return;
    }
    /* The resolution filled the cache for a remote actor; a local one and
     * the time of a refresh are put here. */
    if (r->local || op->refresh)
        kc_put(op->key_id, r->uri, r->public_key_pem, op->refresh, NULL);
    kresolve_answer(op, r->uri, r->public_key_pem);
}

static void
on_key_doc(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct kresolve *op = arg;
    if (err) {
        kresolve_fail(op, err);
        return;
    }
    const char *id = json_string_value(json_object_get(doc, "id"));
    const char *owner = id;
    if (json_object_get(doc, "publicKeyPem")) {
        /* A key document of its own: its owner (controller in the newer
         * vocabulary) is the actor to resolve. */
        owner = json_string_value(json_object_get(doc, "owner"));
        if (!owner)
            owner = json_string_value(json_object_get(doc, "controller"));
        if (!owner || strncmp(owner, "http", 4) != 0) {
            struct eu_error e = {0};
            eu_error_set(&e, 401, "the key document names no owner");
            kresolve_fail(op, &e);
            return;
        }
    }
    if (strcmp(owner, id) == 0)
        resolve_actor(op->app, op->t, owner, true, op->key_id, doc, final_url, false, on_key_owner,
                      op);
    else
        resolve_actor(op->app, op->t, owner, true, op->key_id, NULL, NULL, false, on_key_owner, op);
}

static void
on_key_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct kresolve *op = arg;
    if (st != EU_DB_OK) {
        struct eu_error e = {0};
        eu_error_set(&e, 503, "the database is not available");
        kresolve_fail(op, &e);
        return;
    }
    if (PQntuples(res) == 1) {
        kc_put(op->key_id, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), false, NULL);
        kresolve_answer(op, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1));
        return;
    }
    eu_ap_fetch_signed_within(op->app, op->t, op->key_id, EU_AP_KEY_FETCH_TIMEOUT_S, on_key_doc,
                              op);
}

bool
eu_ap_key_is_cached(const char *key_id)
{
    return kc_get(key_id) != NULL;
}

void
eu_ap_resolve_key(struct eu_app *app, struct eu_tenant *tenant, const char *key_id, bool refresh,
                  eu_ap_key_cb cb, void *arg)
{
    struct kresolve *op = eu_xcalloc(1, sizeof(*op));
    op->app = app;
    op->t = tenant;
    eu_tenant_ref(tenant);
    op->key_id = eu_xstrdup(key_id);
    op->refresh = refresh;
    op->cb = cb;
    op->arg = arg;
    struct kc_entry *e = kc_get(key_id);
    if (e && (!refresh || (e->refreshed_ms &&
                           mono_ms() - e->refreshed_ms < (uint64_t)EU_AP_KEY_REFRESH_S * 1000))) {
        /* A refresh this soon after the last one would let a stream of bad
         * signatures turn into a stream of fetches. One of the tenant's
         * own accounts has its row whatever the cache says. */
        if (host_is(key_id, tenant->domain))
            answer_later(op, e);
        else
            answer_cached(op, e);
        return;
    }
    if (host_is(key_id, tenant->domain)) {
        /* One of our own accounts (a tenant's actor signing to itself):
         * its row has the key. */
        char *uri = eu_xstrndup(key_id, strcspn(key_id, "#"));
        resolve_actor(app, tenant, uri, false, NULL, NULL, NULL, false, on_key_owner, op);
        free(uri);
        return;
    }
    if (refresh) {
        eu_ap_fetch_signed_within(app, tenant, key_id, EU_AP_KEY_FETCH_TIMEOUT_S, on_key_doc, op);
        return;
    }
    const char *p[] = {key_id};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, tenant), &eu_ap_resolve_sql[RESOLVE_KEY_ROW], 1,
                    p, on_key_row, op);
}

/* ============================================================= WebFinger */

struct wfinger {
    struct eu_app *app;
    struct eu_tenant *t; /* one reference */
    bool bad;            /* the acct does not parse: answered from a refused fetch */
    eu_ap_actor_cb cb;
    void *arg;
    char *url; /* the lookup */
    char *base;
};

static void
wfinger_free(struct wfinger *op)
{
    eu_tenant_unref(op->t);
    free(op->url);
    free(op->base);
    free(op);
}

static void
wfinger_fail(struct wfinger *op, int status, const char *msg)
{
    struct eu_error err = {0};
    eu_error_set(&err, status, "%s", msg);
    eu_log_set_context(op->t->domain, NULL);
    eu_log_info("ap", "webfinger '%.300s': %s", op->url ? op->url : "", msg);
    op->cb(NULL, &err, op->arg);
    wfinger_free(op);
}

/* The href of the self link that is ActivityPub, borrowed from jrd. */
static const char *
self_link(json_t *jrd)
{
    json_t *links = json_object_get(jrd, "links");
    size_t i;
    json_t *l;
    json_array_foreach(links, i, l)
    {
        const char *rel = json_string_value(json_object_get(l, "rel"));
        const char *type = json_string_value(json_object_get(l, "type"));
        const char *href = json_string_value(json_object_get(l, "href"));
        if (rel && type && href && strcmp(rel, "self") == 0 &&
            (strstr(type, "application/activity+json") || strstr(type, "application/ld+json")))
            return href;
        if (i >= 64)
            break;
    }
    return NULL;
}

static void
on_wfinger_resp(struct eu_fetch_resp *resp, void *arg)
{
    struct wfinger *op = arg;
    if (op->bad) {
        wfinger_fail(op, 422, "not an account address (user@host)");
        return;
    }
    if (resp->error != EU_FETCH_OK) {
        wfinger_fail(op, resp->error == EU_FETCH_TIMEOUT ? 504 : 502,
                     "the WebFinger lookup failed");
        return;
    }
    if (resp->status == 404 || resp->status == 410) {
        wfinger_fail(op, 404, "no such account");
        return;
    }
    if (resp->status != 200) {
        wfinger_fail(op, 502, "the WebFinger lookup failed");
        return;
    }
    json_t *jrd = json_loadb(resp->body, resp->body_len, 0, NULL);
    const char *href = self_link(jrd);
    if (!href || (strncmp(href, "https://", 8) != 0 && strncmp(href, "http://", 7) != 0)) {
        json_decref(jrd);
        wfinger_fail(op, 404, "the account has no ActivityPub actor");
        return;
    }
    resolve_actor(op->app, op->t, href, false, NULL, NULL, NULL, false, op->cb, op->arg);
    json_decref(jrd);
    wfinger_free(op);
}

static void
on_acct_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct wfinger *op = arg;
    if (st == EU_DB_OK && PQntuples(res) == 1) {
        resolve_actor(op->app, op->t, PQgetvalue(res, 0, 0), false, NULL, NULL, NULL, false, op->cb,
                      op->arg);
        wfinger_free(op);
        return;
    }
    const char *headers[] = {"Accept: application/jrd+json, application/json", NULL};
    struct eu_fetch_req req = {
        .method = EU_FETCH_GET,
        .url = op->url,
        .headers = headers,
        .owner = (uint64_t)op->t->id,
        .max_redirects = EU_AP_FETCH_MAX_REDIRECTS,
        .max_bytes = 64 * 1024,
        .ua_base = op->base,
    };
    eu_fetch_start(op->app->fetch, &req, on_wfinger_resp, op);
}

static bool
acct_part_ok(const char *s, size_t n, const char *extra)
{
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
            return false;
    return true;
}

void
eu_ap_webfinger_lookup(struct eu_app *app, struct eu_tenant *tenant, const char *acct,
                       eu_ap_actor_cb cb, void *arg)
{
    struct wfinger *op = eu_xcalloc(1, sizeof(*op));
    op->app = app;
    op->t = tenant;
    eu_tenant_ref(tenant);
    op->cb = cb;
    op->arg = arg;
    if (*acct == '@')
        acct++;
    const char *at = strchr(acct, '@');
    if (!at || !acct_part_ok(acct, (size_t)(at - acct), "_.-") ||
        !acct_part_ok(at + 1, strlen(at + 1), ".-:[]")) {
        /* Failing through the same path keeps "never from inside the
         * call": the fetch client reports a refusal later. */
        struct eu_fetch_req bad = {
            .method = EU_FETCH_GET, .url = "", .owner = (uint64_t)tenant->id};
        op->bad = true;
        eu_fetch_start(app->fetch, &bad, on_wfinger_resp, op);
        return;
    }
    char *user = eu_xstrndup(acct, (size_t)(at - acct));
    const char *host = at + 1;
    char *base = base_url(app, tenant);
    if (strcasecmp(host, tenant->domain) == 0) {
        char *uri = eu_xasprintf("%s/users/%s", base, user);
        resolve_actor(app, tenant, uri, false, NULL, NULL, NULL, false, cb, arg);
        wfinger_free(op);
        free(uri);
    } else {
        op->url = eu_xasprintf("%s://%s/.well-known/webfinger?resource=acct:%s@%s",
                               app->cfg->fed_allow_http ? "http" : "https", host, user, host);
        op->base = eu_xstrdup(base);
        const char *p[] = {user, host};
        eu_db_pool_stmt(eu_tenant_pool(app->registry, tenant), &eu_ap_resolve_sql[RESOLVE_ACCT_ROW],
                        2, p, on_acct_row, op);
    }
    free(user);
    free(base);
}
