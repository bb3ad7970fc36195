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
 */
#include "followers_sync_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/httpsig.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

enum {
    FSYNC_URIS,
    FSYNC_PARTIAL,
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
    [FSYNC_PARTIAL] =
        {"ap_followers_sync.partial",
         "SELECT a.suspended_at IS NOT NULL, (SELECT coalesce(json_agg(x.uri"
         "  ORDER BY f.id), '[]')::text FROM follows f JOIN accounts x"
         "  ON x.tenant_id = $1 AND x.id = f.account_id AND x.domain IS NOT NULL"
         "  WHERE f.tenant_id = $1 AND f.target_account_id = a.id"
         "  AND" ON_SERVER(
             "x.uri") ")"
                      " FROM accounts a WHERE a.tenant_id = $1 AND a.domain IS NULL"
                      " AND lower(a.username) = lower($2) AND a.username <> 'instance.actor'"},
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

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_followers_sync_routes[] = {
    {EU_HTTP_GET, "/users/:username/followers_synchronization", followers_synchronization, NULL, 0},
    {0},
};
