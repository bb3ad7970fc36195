/*
 * Followers collection synchronization (FEP-8fcf), as Mastodon does it.
 *
 * Sending: the delivery of a followers-only activity carries
 * Collection-Synchronization: collectionId (the followers collection),
 * url (the partial collection below) and digest, the XOR of the SHA-256 of
 * the URIs of the followers on the receiving server, so that server can
 * tell whether it holds follows we do not know of (deliver.c adds it; the
 * helpers are here).
 *
 * Serving: BASE/users/NAME/followers_synchronization lists the followers
 * on the asking server only, which is why the request must be signed
 * whatever the tenant's authorized fetch: the signer's server prefix
 * (scheme://host) picks them, as Mastodon's
 * FollowersSynchronizationsController does. Nobody else learns who
 * follows from elsewhere.
 *
 * Receiving: a verified delivery whose header names the sender's own
 * followers collection queues an "ap_followers_sync" job (one per sender
 * while it waits), never work in the request. The job compares the digest
 * with that of the local accounts following the sender; when they differ
 * it fetches the partial collection (walking its pages, first then next,
 * within bounds) and does what Mastodon's
 * SynchronizeFollowersService does: a local follow the sender does not
 * list ends (with an Undo, as an unfollow), a listed request it still has
 * pending becomes a follow (its Accept was lost), and a listed account
 * that follows nobody there sends an Undo of the follow the sender thinks
 * it has.
 */
#include "followers_sync_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/httpsig.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

/* Entries of a partial collection read; Mastodon's page is all of them,
 * and nobody has this many accounts following one actor on one server. */
#define SYNC_MAX_ITEMS 5000
/* Pages of a paged collection walked (first, then next...), as Mastodon's
 * collection fetches stop after a bounded number; one more page than
 * this, or a page that cannot be read, and nothing is applied, since a
 * partial list would end follows that are listed further on. */
#define SYNC_MAX_PAGES 10
/* A job that could not leave its turn to fetch runs again this much later. */
#define SYNC_DEFER_S 30

enum {
    FSYNC_URIS,
    FSYNC_PARTIAL,
    FSYNC_ACTOR,
    FSYNC_APPLY,
};

/* A follower's URI is on the server of prefix $3: the URI is the prefix
 * itself or continues it with a path (so https://a.example does not take
 * https://a.example.org's). */
#define ON_SERVER(uri) " (" uri " = $3 OR left(" uri ", length($3) + 1) = $3 || '/')"

const struct eu_sql eu_ap_followers_sync_sql[] = {
    [FSYNC_URIS] = {"ap_followers_sync.uris",
                    "SELECT string_agg(x.uri, E'\\n') FROM follows f JOIN accounts x"
                    " ON x.tenant_id = $1 AND x.id = f.account_id AND x.domain IS NOT NULL"
                    " WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint"
                    " AND" ON_SERVER("x.uri")},
    /* $2 the username (any case), $3 the asking server's prefix: the
     * account, whether it is suspended, and its followers there. */
    [FSYNC_PARTIAL] = {"ap_followers_sync.partial",
                       "SELECT a.suspended_at IS NOT NULL, (SELECT coalesce(json_agg(x.uri"
                       "  ORDER BY f.id), '[]')::text FROM follows f JOIN accounts x"
                       "  ON x.tenant_id = $1 AND x.id = f.account_id AND x.domain IS NOT NULL"
                       "  WHERE f.tenant_id = $1 AND f.target_account_id = a.id AND" ON_SERVER(
                           "x.uri") ") FROM accounts a WHERE a.tenant_id = $1"
                                    " AND a.domain IS NULL AND lower(a.username) = lower($2)"
                                    " AND a.username <> 'instance.actor'"},
    /* $2 the sender's actor URI, $3 base URL: the sender, its followers
     * collection and inbox, and the URIs of the local accounts following
     * it, newline-separated (NULL for none). */
    [FSYNC_ACTOR] = {"ap_followers_sync.actor",
                     "SELECT a.id::text, a.followers_url, coalesce(a.inbox_url,"
                     " a.shared_inbox_url), (SELECT string_agg($3 || '/users/' || l.username,"
                     " E'\\n') FROM follows f JOIN accounts l ON l.tenant_id = $1"
                     " AND l.id = f.account_id AND l.domain IS NULL WHERE f.tenant_id = $1"
                     " AND f.target_account_id = a.id)"
                     " FROM accounts a WHERE a.tenant_id = $1 AND a.uri = $2"
                     " AND a.domain IS NOT NULL AND a.suspended_at IS NULL"},
    /*
     * $2 the sender's id, $3 the local usernames it lists (JSON array):
     * the local follows of it it does not list end, the listed requests
     * become follows, and the listed accounts that neither follow nor ask
     * are returned to send an Undo. Rows: (what, local account, username,
     * the follow's id): 'unfollow', 'accepted' or 'undo'.
     */
    [FSYNC_APPLY] =
        {"ap_followers_sync.apply",
         "WITH ex AS (SELECT l.id, l.username FROM accounts l WHERE l.tenant_id = $1"
         "  AND l.domain IS NULL AND lower(l.username) IN (SELECT lower(x)"
         "  FROM jsonb_array_elements_text($3::jsonb) x)),"
         " gone AS (DELETE FROM follows f USING accounts l WHERE f.tenant_id = $1"
         "  AND f.target_account_id = $2::bigint AND l.tenant_id = $1 AND l.id = f.account_id"
         "  AND l.domain IS NULL AND f.account_id NOT IN (SELECT id FROM ex)"
         "  RETURNING f.account_id, l.username, f.uri),"
         " rq AS (DELETE FROM follow_requests r WHERE r.tenant_id = $1"
         "  AND r.target_account_id = $2::bigint AND r.account_id IN (SELECT id FROM ex)"
         "  RETURNING account_id, show_reblogs, notify, languages, uri),"
         " ins AS (INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs,"
         "  notify, languages, uri) SELECT $1, account_id, $2::bigint, show_reblogs, notify,"
         "  languages, uri FROM rq ON CONFLICT (tenant_id, account_id, target_account_id)"
         "  DO NOTHING RETURNING account_id)"
         " SELECT 'unfollow', account_id::text, username, uri FROM gone"
         " UNION ALL SELECT 'accepted', account_id::text, NULL, NULL FROM ins"
         " UNION ALL SELECT 'undo', ex.id::text, ex.username, NULL FROM ex"
         " WHERE ex.id NOT IN (SELECT account_id FROM rq) AND NOT EXISTS (SELECT 1"
         " FROM follows f WHERE f.tenant_id = $1 AND f.account_id = ex.id"
         " AND f.target_account_id = $2::bigint)"},
    {0},
};

const struct eu_sql *
eu_ap_followers_sync_uris_stmt(void)
{
    return &eu_ap_followers_sync_sql[FSYNC_URIS];
}

/* ------------------------------------------------------------ digest */

void
eu_ap_followers_digest(const char *uris, char out[EU_AP_FOLLOWERS_DIGEST_LEN])
{
    unsigned char acc[crypto_hash_sha256_BYTES] = {0};
    for (const char *p = uris; p && *p;) {
        size_t n = strcspn(p, "\n");
        unsigned char h[crypto_hash_sha256_BYTES];
        crypto_hash_sha256(h, (const unsigned char *)p, n);
        for (size_t i = 0; i < sizeof(acc); i++)
            acc[i] ^= h[i];
        p += n;
        if (*p == '\n')
            p++;
    }
    sodium_bin2hex(out, EU_AP_FOLLOWERS_DIGEST_LEN, acc, sizeof(acc));
}

bool
eu_ap_url_prefix(const char *url, char *out, size_t n)
{
    size_t skip;
    if (!url)
        return false;
    if (strncasecmp(url, "https://", 8) == 0)
        skip = 8;
    else if (strncasecmp(url, "http://", 7) == 0)
        skip = 7;
    else
        return false;
    size_t len = skip + strcspn(url + skip, "/?#");
    if (len == skip || len + 1 > n)
        return false;
    memcpy(out, url, len);
    out[len] = '\0';
    return true;
}

/* Whether the to or cc value v names Public; *followers set when it names
 * the followers collection f. */
static bool
names_public(json_t *v, const char *f, bool *followers)
{
    json_t *one = json_is_array(v) ? NULL : v, *e;
    size_t i, n = one ? 1 : json_array_size(v);
    bool pub = false;
    for (i = 0; i < n; i++) {
        e = one ? one : json_array_get(v, i);
        const char *s = json_string_value(e);
        if (!s)
            continue;
        if (strcmp(s, EU_AP_PUBLIC) == 0 || strcmp(s, "as:Public") == 0 || strcmp(s, "Public") == 0)
            pub = true;
        else if (strcmp(s, f) == 0)
            *followers = true;
    }
    return pub;
}

bool
eu_ap_followers_only(json_t *activity, const char *base, const char *username)
{
    char f[600];
    if (snprintf(f, sizeof(f), "%s/users/%s/followers", base, username) >= (int)sizeof(f))
        return false;
    json_t *object = json_object_get(activity, "object");
    json_t *docs[] = {activity, json_is_object(object) ? object : NULL};
    bool followers = false;
    for (size_t i = 0; i < 2; i++) {
        if (!docs[i])
            continue;
        if (names_public(json_object_get(docs[i], "to"), f, &followers) ||
            names_public(json_object_get(docs[i], "cc"), f, &followers))
            return false;
    }
    return followers;
}

/* ------------------------------------------- the partial collection */

struct partial {
    const char *username;
    char prefix[300];
};

static void
on_partial(struct eu_req *req, PGresult *res, void *arg)
{
    struct partial *p = arg;
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] == 't') {
        eu_req_reply_error(req, 403, "This account has been suspended");
        return;
    }
    json_t *items = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
    if (!json_is_array(items)) {
        json_decref(items);
        items = json_array();
    }
    json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:o}", "@context",
                            "https://www.w3.org/ns/activitystreams", "id",
                            eu_arena_sprintf(req->arena, "%s/followers_synchronization",
                                             eu_ap_actor_uri(req, p->username)),
                            "type", "OrderedCollection", "totalItems",
                            (json_int_t)json_array_size(items), "orderedItems", items);
    eu_ap_reply(req, 200, doc);
}

static void
on_signed(struct eu_req *req, const char *owner, void *arg)
{
    struct partial *p = arg;
    req->ap_signer = eu_arena_strdup(req->arena, owner);
    if (!eu_ap_url_prefix(owner, p->prefix, sizeof(p->prefix))) {
        eu_req_reply_error(req, 401, "The signer is not an http(s) actor");
        return;
    }
    const char *params[] = {p->username, p->prefix};
    eu_req_stmt(req, &eu_ap_followers_sync_sql[FSYNC_PARTIAL], 2, params, on_partial, p);
}

static void
free_sig(void *s)
{
    eu_httpsig_free(s);
}

static void
followers_synchronization(struct eu_req *req)
{
    const char *user = eu_req_param(req, "username");
    if (!eu_ap_username_is_valid(user)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct partial *p = eu_arena_calloc(req->arena, sizeof(*p));
    p->username = user;
    /* Signed whatever the tenant's authorized fetch: the signer decides
     * what is listed. */
    struct eu_httpsig_request hr;
    if (!eu_ap_request_for_signature(req, "GET", &hr)) {
        eu_req_reply_error(req, 401, "Request not signed");
        return;
    }
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result r = eu_httpsig_parse(&hr, time(NULL), &sig);
    if (r != EU_HTTPSIG_OK) {
        eu_httpsig_free(sig);
        eu_req_reply_error(req, 401, "%s",
                           r == EU_HTTPSIG_NONE ? "Request not signed" : eu_httpsig_result_str(r));
        return;
    }
    eu_arena_on_free(req->arena, free_sig, sig);
    eu_req_add_header(req, "Vary", "Signature");
    eu_ap_verify_signature(req, sig, on_signed, p);
}

/* ------------------------------------------------------ receiving */

/* The value of key in a Collection-Synchronization header (key="value",
 * comma-separated, as a signature's parameters), in a; NULL when absent. */
static const char *
header_param(struct eu_arena *a, const char *h, const char *key)
{
    size_t klen = strlen(key);
    const char *p = h;
    while (*p) {
        p += strspn(p, " \t,");
        const char *name = p;
        p += strcspn(p, "=,");
        size_t nlen = (size_t)(p - name);
        while (nlen && (name[nlen - 1] == ' ' || name[nlen - 1] == '\t'))
            nlen--;
        if (*p != '=')
            continue;
        p++;
        p += strspn(p, " \t");
        if (*p != '"')
            return NULL;
        const char *v = ++p;
        p += strcspn(p, "\"");
        if (*p != '"')
            return NULL;
        size_t vlen = (size_t)(p - v);
        p++;
        if (nlen == klen && strncasecmp(name, key, klen) == 0)
            return eu_arena_strndup(a, v, vlen);
    }
    return NULL;
}

void
eu_ap_followers_sync_received(struct eu_app *app, struct eu_tenant *t, const char *actor,
                              const char *header)
{
    if (!header || !*header || strlen(header) > 4096 || !actor || strlen(actor) > 2048)
        return;
    struct eu_arena *a = eu_arena_new();
    const char *coll = header_param(a, header, "collectionId");
    const char *url = header_param(a, header, "url");
    const char *digest = header_param(a, header, "digest");
    char actor_prefix[300], url_prefix[300];
    /* Mastodon's checks before it queues anything: the sender's own
     * collection, and a url on the sender's server. */
    if (coll && url && digest && strlen(url) <= 2048 && strlen(digest) == 64 &&
        eu_ap_url_prefix(actor, actor_prefix, sizeof(actor_prefix)) &&
        eu_ap_url_prefix(url, url_prefix, sizeof(url_prefix)) &&
        strcasecmp(actor_prefix, url_prefix) == 0 &&
        eu_ap_url_prefix(coll, url_prefix, sizeof(url_prefix)) &&
        strcasecmp(actor_prefix, url_prefix) == 0) {
        json_t *payload = json_pack("{s:s, s:s, s:s, s:s}", "actor", actor, "collection", coll,
                                    "url", url, "digest", digest);
        char *text = json_dumps(payload, JSON_COMPACT);
        json_decref(payload);
        /* One waiting job per sender: a burst of deliveries checks once. */
        char *dedupe = eu_xasprintf("followers_sync:%s", actor);
        eu_queue_enqueue(app, t, "ap_followers_sync", text, 0, dedupe, NULL, NULL);
        free(dedupe);
        free(text);
    }
    eu_arena_free(a);
}

/* One run of the job. */
struct sync {
    struct eu_job *job;
    struct eu_app *app;
    struct eu_tenant *t;
    struct eu_arena *arena;
    const char *actor, *collection, *url, *digest, *base;
    const char *actor_id, *inbox;
    json_t *names;    /* the local usernames listed so far; owned */
    size_t seen;      /* items read so far, of every server */
    int pages;        /* documents fetched */
    char prefix[300]; /* the collection's scheme://host: its pages must share it */
};

static void
sync_end(struct sync *s, const char *error)
{
    struct eu_job *job = s->job;
    json_decref(s->names);
    eu_arena_free(s->arena);
    free(s);
    eu_job_done(job, error);
}

/* The Undo of a follow the sender thinks local account (id, name) has. */
static void
send_undo(struct sync *s, const char *account_id, const char *name, const char *follow_id)
{
    const char *local = eu_arena_sprintf(s->arena, "%s/users/%s", s->base, name);
    json_t *follow =
        json_pack("{s:s, s:s, s:s}", "type", "Follow", "actor", local, "object", s->actor);
    if (follow_id)
        json_object_set_new(follow, "id", json_string(follow_id));
    json_t *undo = json_pack(
        "{s:s, s:s, s:s, s:s, s:o}", "@context", "https://www.w3.org/ns/activitystreams", "id",
        eu_arena_sprintf(s->arena, "%s#follows/sync/%s/undo", local, eu_job_id(s->job)), "type",
        "Undo", "actor", local, "object", follow);
    eu_ap_deliver_to_inbox(s->app, s->t, strtoll(account_id, NULL, 10), undo, s->inbox);
}

static void
on_applied(PGresult *res, enum eu_db_status st, void *arg)
{
    struct sync *s = arg;
    if (st != EU_DB_OK) {
        sync_end(s, res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    int removed = 0;
    for (int i = 0; i < PQntuples(res); i++) {
        const char *what = PQgetvalue(res, i, 0), *id = PQgetvalue(res, i, 1);
        int64_t account = strtoll(id, NULL, 10);
        if (strcmp(what, "accepted") == 0) {
            eu_feed_home_invalidate(s->app, s->t, account);
            continue;
        }
        if (strcmp(what, "unfollow") == 0) {
            eu_feed_home_invalidate(s->app, s->t, account);
            removed++;
        }
        if (s->inbox)
            send_undo(s, id, PQgetvalue(res, i, 2),
                      PQgetisnull(res, i, 3) ? NULL : PQgetvalue(res, i, 3));
    }
    eu_log_info("ap", "followers of '%s' synchronized: %d local follows it did not list ended",
                s->actor, removed);
    sync_end(s, NULL);
}

/* Adds the local usernames among a page's items (ours: BASE/users/NAME) to
 * s->names; the rest is other servers'. At most SYNC_MAX_ITEMS items are
 * read over all pages. */
static void
add_local_names(struct sync *s, json_t *items)
{
    json_t *e;
    size_t i;
    char prefix[600];
    int n = snprintf(prefix, sizeof(prefix), "%s/users/", s->base);
    json_array_foreach(items, i, e)
    {
        if (s->seen >= SYNC_MAX_ITEMS)
            break;
        s->seen++;
        if (json_is_object(e))
            e = json_object_get(e, "id");
        const char *u = json_string_value(e);
        if (!u || n <= 0 || strncmp(u, prefix, (size_t)n) != 0)
            continue;
        const char *name = u + n;
        if (eu_ap_username_is_valid(name))
            json_array_append_new(s->names, json_string(name));
    }
}

/* A collection's or page's items, or NULL. */
static json_t *
items_of(json_t *doc)
{
    json_t *items = json_object_get(doc, "orderedItems");
    if (!items)
        items = json_object_get(doc, "items");
    return json_is_array(items) ? items : NULL;
}

static void
apply(struct sync *s)
{
    char *names = json_dumps(s->names, JSON_COMPACT);
    const char *params[] = {s->actor_id, eu_arena_strdup(s->arena, names)};
    free(names);
    eu_job_stmt(s->job, &eu_ap_followers_sync_sql[FSYNC_APPLY], 2, params, on_applied, s);
}

static void on_collection(json_t *doc, const char *final_url, const struct eu_error *err,
                          void *arg);

/* Fetches the page at url (a string member of the last document), which
 * must be on the collection's server; false when it may not be fetched. */
static bool
fetch_page(struct sync *s, json_t *url)
{
    const char *u = json_string_value(url);
    char prefix[300];
    if (!u || s->pages >= SYNC_MAX_PAGES || !eu_ap_url_prefix(u, prefix, sizeof(prefix)) ||
        strcasecmp(prefix, s->prefix) != 0)
        return false;
    s->pages++;
    s->url = eu_arena_strdup(s->arena, u);
    eu_ap_fetch_signed_within(s->app, s->t, s->url, s->app->cfg->fed_request_timeout_s,
                              on_collection, s);
    return true;
}

/* Gives up without applying anything: the list is not whole. */
static void
give_up(struct sync *s, const char *why)
{
    eu_log_info("ap", "followers synchronization of '%s': %s (%s)", s->actor, why, s->url);
    sync_end(s, NULL);
}

/*
 * A document of the collection: the collection itself (its items inline,
 * or a first page inline or by URL) or one of its pages (items and maybe
 * next). Pages are walked first, next, next... up to SYNC_MAX_PAGES
 * documents and SYNC_MAX_ITEMS items, then the names are applied.
 */
static void
on_collection(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct sync *s = arg;
    (void)final_url;
    if (!doc) {
        /* Mastodon gives up on a collection it cannot read; so do we,
         * until the next delivery says the digests differ again. */
        eu_log_info("ap", "followers synchronization of '%s': cannot read %s: %s", s->actor, s->url,
                    err ? err->message : "?");
        sync_end(s, NULL);
        return;
    }
    json_t *items = items_of(doc), *next = json_object_get(doc, "next");
    json_t *first = json_object_get(doc, "first");
    if (!items && json_is_object(first)) {
        items = items_of(first);
        next = json_object_get(first, "next");
    } else if (!items && json_is_string(first)) {
        if (!fetch_page(s, first))
            give_up(s, "its first page cannot be fetched");
        return;
    }
    if (!items) {
        give_up(s, "it lists nothing readable");
        return;
    }
    add_local_names(s, items);
    if (json_is_object(next))
        next = json_object_get(next, "id");
    if (json_is_string(next) && s->seen < SYNC_MAX_ITEMS) {
        if (!fetch_page(s, next))
            give_up(s, "it has more pages than are read");
        return;
    }
    apply(s);
}

static void
on_actor(PGresult *res, enum eu_db_status st, void *arg)
{
    struct sync *s = arg;
    if (st != EU_DB_OK) {
        sync_end(s, res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    if (PQntuples(res) != 1 || PQgetisnull(res, 0, 1) ||
        strcmp(PQgetvalue(res, 0, 1), s->collection) != 0) {
        /* Unknown here, suspended, or not its followers collection. */
        sync_end(s, NULL);
        return;
    }
    s->actor_id = eu_arena_strdup(s->arena, PQgetvalue(res, 0, 0));
    s->inbox = PQgetisnull(res, 0, 2) ? NULL : eu_arena_strdup(s->arena, PQgetvalue(res, 0, 2));
    char digest[EU_AP_FOLLOWERS_DIGEST_LEN];
    eu_ap_followers_digest(PQgetisnull(res, 0, 3) ? NULL : PQgetvalue(res, 0, 3), digest);
    if (strcasecmp(digest, s->digest) == 0) {
        sync_end(s, NULL);
        return;
    }
    /* The fetch holds neither the tenant's turn nor a connection. */
    if (!eu_job_detach(s->job)) {
        struct eu_job *job = s->job;
        eu_arena_free(s->arena);
        free(s);
        eu_job_retry_in(job, "too many jobs waiting on remote servers", SYNC_DEFER_S, false);
        return;
    }
    s->pages = 1;
    eu_ap_fetch_signed_within(s->app, s->t, s->url, s->app->cfg->fed_request_timeout_s,
                              on_collection, s);
}

void
eu_ap_followers_sync_run(struct eu_job *job)
{
    struct sync *s = eu_xcalloc(1, sizeof(*s));
    s->job = job;
    s->app = eu_job_app(job);
    s->t = eu_job_tenant(job);
    s->arena = eu_arena_new();
    json_t *p = eu_job_payload(job);
    s->actor = json_string_value(json_object_get(p, "actor"));
    s->collection = json_string_value(json_object_get(p, "collection"));
    s->url = json_string_value(json_object_get(p, "url"));
    s->digest = json_string_value(json_object_get(p, "digest"));
    if (!s->actor || !s->collection || !s->url || !s->digest) {
        sync_end(s, NULL); /* nothing to do with it, nothing to retry */
        return;
    }
    s->base = eu_arena_sprintf(s->arena, "%s://%s", s->app->cfg->scheme, s->t->domain);
    s->names = json_array();
    if (!eu_ap_url_prefix(s->url, s->prefix, sizeof(s->prefix))) {
        sync_end(s, NULL);
        return;
    }
    const char *params[] = {s->actor, s->base};
    eu_job_stmt(job, &eu_ap_followers_sync_sql[FSYNC_ACTOR], 2, params, on_actor, s);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_followers_sync_routes[] = {
    {EU_HTTP_GET, "/users/:username/followers_synchronization", followers_synchronization, NULL, 0},
    {0},
};
