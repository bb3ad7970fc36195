/*
 * Finding remote actors and their keys (src/ap/resolve.c): signed GETs of
 * ActivityPub documents, remote actors made into this tenant's accounts
 * rows, public keys by key id for the inbox, and WebFinger lookups.
 *
 * A tenant fetches as its instance actor (BASE/actor#main-key), signing
 * each request draft-cavage on the CPU pool. Public keys are public and the
 * same for every tenant, so one bounded LRU cache (key id -> owner actor
 * URI, PEM and the owner's document as fetched) serves the whole process;
 * account rows stay per tenant, and a tenant that finds a key cached but
 * has no row for its owner makes one from the cached document (fresh for
 * EU_AP_ACTOR_FRESH_S) without fetching it again.
 *
 * Every function here runs on the loop thread. Callbacks run later on the
 * loop, never from inside the call; each call holds a reference to the
 * tenant until its callback has run. What a callback receives is borrowed
 * and valid during the callback only.
 */
#ifndef EUNHA_APRESOLVE_H
#define EUNHA_APRESOLVE_H

#include <stdbool.h>
#include <stddef.h>

#include "eunha/sql.h"

struct eu_app;
struct eu_error;
struct eu_tenant;
struct json_t;

/* How long a remote account row counts as fresh: Mastodon refetches after
 * a day too. */
#define EU_AP_ACTOR_FRESH_S (24 * 60 * 60)
/* Redirects a signed GET follows, re-signing each. */
#define EU_AP_FETCH_MAX_REDIRECTS 3
/* The process-wide key cache's bounds; it keeps an owner's document up
 * to EU_AP_KEY_CACHE_DOC_MAX bytes long (a few KB is usual). */
#define EU_AP_KEY_CACHE_ENTRIES 4096
#define EU_AP_KEY_CACHE_BYTES (32u * 1024 * 1024)
#define EU_AP_KEY_CACHE_DOC_MAX (64u * 1024)

/*
 * doc is the fetched JSON object (borrowed: json_incref() it to keep it)
 * and final_url where it came from, after redirects; both NULL when err is
 * set. err->status says what went wrong: the remote status for a 4xx
 * answer (404, 410, 401...), 502 for anything else (5xx, not JSON, id on
 * another host, network), 504 for a timeout, 503 when this tenant's
 * outbound queue is full or its instance actor cannot be had.
 */
typedef void (*eu_ap_fetch_cb)(struct json_t *doc, const char *final_url,
                               const struct eu_error *err, void *arg);

/*
 * GETs url as ActivityPub JSON, signed by tenant's instance actor, and
 * follows up to EU_AP_FETCH_MAX_REDIRECTS redirects by signing again. The
 * document must be a JSON object whose "id" is on the final URL's host;
 * when it is not, the id is fetched once more (as Mastodon does) and must
 * then be. The body is capped by the fetch client.
 */
void eu_ap_fetch_signed(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                        eu_ap_fetch_cb cb, void *arg);
/* The same, giving up timeout_s seconds after its first request (504),
 * redirects, the other signature form and the id's own host included; 0:
 * each request has the fetch client's timeout and nothing bounds the
 * whole. */
void eu_ap_fetch_signed_within(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                               int timeout_s, eu_ap_fetch_cb cb, void *arg);

/* A remote actor as this tenant knows it. */
struct eu_ap_resolved {
    const char *account_id; /* accounts.id in this tenant, decimal */
    const char *uri;        /* the actor's id */
    const char *key_id;     /* NULL when the actor has no key */
    const char *public_key_pem;
    const char *inbox;        /* may be NULL */
    const char *shared_inbox; /* may be NULL */
    bool local;               /* a local account of this tenant */
};

/* r is NULL when err is set (status as for eu_ap_fetch_cb, or 422 for a
 * document that is not an acceptable actor). */
typedef void (*eu_ap_actor_cb)(const struct eu_ap_resolved *r, const struct eu_error *err,
                               void *arg);

/*
 * The actor uri as an accounts row of tenant: the row if there is one
 * fetched less than EU_AP_ACTOR_FRESH_S ago (or a local account of the
 * tenant, BASE/users/NAME), else a signed fetch, eu_ap_actor_parse() on the
 * CPU pool and eu_ingest_account_upsert(). Concurrent calls for the same
 * uri in one tenant share one fetch. The key found goes into the key
 * cache.
 */
void eu_ap_resolve_actor(struct eu_app *app, struct eu_tenant *tenant, const char *uri,
                         eu_ap_actor_cb cb, void *arg);
/* The same, fetching the document whatever the row's age (a Move's target
 * whose row may predate the alias it just added). A uri on the tenant's own host answers 404. */
void eu_ap_resolve_actor_refresh(struct eu_app *app, struct eu_tenant *tenant, const char *uri,
                                 eu_ap_actor_cb cb, void *arg);

/* A public key and the actor it belongs to. */
struct eu_ap_key {
    const char *key_id;
    const char *owner; /* the actor URI */
    const char *public_key_pem;
};

/* k is NULL when err is set: 401 when the key does not belong to the actor
 * that names it, else as for eu_ap_actor_cb. */
typedef void (*eu_ap_key_cb)(const struct eu_ap_key *k, const struct eu_error *err, void *arg);

/*
 * The public key named key_id: from the key cache, else from tenant's
 * accounts (public_key_id), else by fetching key_id (the actor itself, or a
 * key document whose owner is the actor), resolving the owner into the
 * tenant and checking the owner publishes that key. Whichever answers, the
 * owner has an accounts row in tenant when cb runs with k (a cached key
 * whose owner the tenant does not know is resolved into it first). refresh skips the
 * cache and the rows (the key may have been rotated: the inbox asks once
 * when a signature fails); it fetches at most once per key id every
 * EU_AP_KEY_REFRESH_S, answering from the cache in between. A fetch of the
 * key gives up after EU_AP_KEY_FETCH_TIMEOUT_S in all (redirects and
 * retries included): an inbox delivery waits on it, and a slow host must
 * not hold the inbox's room for long.
 */
#define EU_AP_KEY_REFRESH_S 30
#define EU_AP_KEY_FETCH_TIMEOUT_S 10
void eu_ap_resolve_key(struct eu_app *app, struct eu_tenant *tenant, const char *key_id,
                       bool refresh, eu_ap_key_cb cb, void *arg);
/* Whether key_id is in the process's key cache (eu_ap_resolve_key() then
 * answers without fetching it, unless asked to refresh). */
bool eu_ap_key_is_cached(const char *key_id);

/*
 * WebFinger: acct ("user@host", a leading '@' allowed) to its actor, then
 * eu_ap_resolve_actor() of the self link (type application/activity+json).
 * The lookup goes to https://host/.well-known/webfinger, or http:// when
 * [federation] allow_http is set. err 404 when the host knows no such
 * user, 422 for an acct that does not parse.
 */
void eu_ap_webfinger_lookup(struct eu_app *app, struct eu_tenant *tenant, const char *acct,
                            eu_ap_actor_cb cb, void *arg);

/* id is the status's id in the tenant (decimal), or NULL with err set. */
typedef void (*eu_ap_status_cb)(const char *id, const struct eu_error *err, void *arg);

/*
 * A remote status by its URL (src/ap/resolve_status.c): fetched signed by
 * the tenant's instance actor, parsed and sanitized on the CPU pool, its
 * author resolved (and required to live on the status's host), stored or
 * refreshed in the tenant's rows. err 422 when the document is not a
 * status, else as for eu_ap_fetch_cb. cb runs on the loop, never inside
 * this call.
 */
void eu_ap_resolve_status(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                          eu_ap_status_cb cb, void *arg);

/* Empties the key cache (for tests and a reload). */
void eu_ap_key_cache_clear(void);

/* The statements of resolve.c (see sql.h). */
extern const struct eu_sql eu_ap_resolve_sql[];

#endif
