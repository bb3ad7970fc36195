/*
 * Authorized fetch ("secure mode" in Mastodon): a tenant that turns it on
 * (admin PATCH authorized_fetch) serves its actors, objects and collections
 * only to requests signed by a remote actor whose key verifies, so what it
 * publishes reaches only servers that identify themselves. The instance
 * actor (/actor), WebFinger and NodeInfo stay open, as in Mastodon: other
 * servers fetch the instance actor to verify the signed fetches made to
 * them, and requiring a signature there would loop.
 *
 * The check is the inbox's (inbox.c), and lives here for both
 * (eu_ap_verify_signature): eu_httpsig_parse on the loop, the key's host
 * against the tenant's suspended domains (403, as Mastodon answers, before
 * any key is fetched), the key from the cache, the tenant's rows or a
 * signed fetch, one refetch when the signature fails. A GET has no body,
 * so no digest is involved. A host whose RFC 9421 signature verifies is
 * remembered as one that takes that form (sigform_internal.h).
 */
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <libpq-fe.h>
#include <string.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/domainblock.h"
#include "eunha/error.h"
#include "eunha/fetch.h"
#include "eunha/http.h"
#include "eunha/httpsig.h"
#include "eunha/log.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"
#include "sigform_internal.h"

bool
eu_ap_request_for_signature(struct eu_req *req, const char *method, struct eu_httpsig_request *out)
{
    if (!req->ev)
        return false;
    struct evkeyvalq *in = evhttp_request_get_input_headers(req->ev);
    size_t n = 0;
    for (struct evkeyval *kv = TAILQ_FIRST(in); kv; kv = TAILQ_NEXT(kv, next))
        n++;
    struct eu_httpsig_header *h = eu_arena_alloc(req->arena, sizeof(*h) * (n ? n : 1));
    n = 0;
    for (struct evkeyval *kv = TAILQ_FIRST(in); kv; kv = TAILQ_NEXT(kv, next)) {
        h[n].name = kv->key;
        h[n].value = kv->value;
        n++;
    }
    size_t len = 0;
    const char *body = eu_req_body(req, &len);
    *out = (struct eu_httpsig_request){
        .method = method,
        .scheme = req->scheme,
        .authority = eu_req_header(req, "Host"),
        .target = evhttp_request_get_uri(req->ev),
        .headers = h,
        .nheaders = n,
        .body = len ? body : NULL,
        .body_len = len,
    };
    return out->authority && out->target;
}

/* ------------------------------------------------ the tenant's blocks */

enum {
    DOMAIN_POLICY_SUSPENDED,
};

const struct eu_sql eu_ap_domain_policy_sql[] = {
    /* $2 a host (as eu_fetch_host_of() writes it): whether the tenant
     * suspended it or a domain above it, or, in limited-federation mode,
     * allowed neither (EU_DOMAIN_REFUSED). One probe of a unique index per
     * label. */
    [DOMAIN_POLICY_SUSPENDED] = {"ap_domain_policy.suspended", "SELECT " EU_DOMAIN_REFUSED("$2")},
    {0},
};

/* ------------------------------------------------ verifying a signature */

struct verify {
    struct eu_req *req;
    struct eu_httpsig *sig;
    eu_ap_verified_fn done;
    void *arg;
    bool refreshed;
};

static void
on_key(const struct eu_ap_key *k, const struct eu_error *err, void *arg)
{
    struct verify *v = arg;
    struct eu_req *req = v->req;
    eu_req_enter(req);
    if (err) {
        /* The detail (what the fetch met: refused connections, addresses,
         * remote statuses) goes to the log only: in the body it would make
         * any unauthenticated sender a prober of hosts and ports reachable
         * from here. The status still says whether a retry is worthwhile. */
        eu_log_info("ap", "signature key '%.300s' not usable: %s", eu_httpsig_key_id(v->sig),
                    err->message);
        if (err->status >= 500)
            eu_req_add_header(req, "Retry-After", "60");
        eu_req_reply_error(req, err->status >= 500 ? 503 : 401, "Signature verification failed");
        return;
    }
    enum eu_httpsig_result r = eu_httpsig_verify_pem(v->sig, k->public_key_pem);
    if (r != EU_HTTPSIG_OK) {
        if (!v->refreshed) {
            /* The sender may have rotated its key: fetch it once more. */
            v->refreshed = true;
            eu_ap_resolve_key(req->app, req->tenant, k->key_id, true, on_key, v);
            return;
        }
        eu_req_reply_error(req, 401, "Verification failed: %s", eu_httpsig_result_str(r));
        return;
    }
    if (eu_httpsig_form(v->sig) == EU_HTTPSIG_RFC9421) {
        /* A server that signs RFC 9421 verifies it too: the one sure sign
         * that our RFC 9421 POSTs will be read there (sigform_internal.h). */
        char host[300];
        if (eu_fetch_host_of(k->key_id, host, sizeof(host)) == 0)
            eu_ap_sigform_learn(host, true);
    }
    v->done(req, k->owner, v->arg);
}

static void
on_domain_checked(struct eu_req *req, PGresult *res, void *arg)
{
    struct verify *v = arg;
    if (PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't') {
        /* Mastodon's actor_from_key_id: 403 before any key is fetched. */
        eu_req_reply_error(req, 403, "Requests from this domain are not allowed");
        return;
    }
    eu_ap_resolve_key(req->app, req->tenant, eu_httpsig_key_id(v->sig), false, on_key, v);
}

void
eu_ap_verify_signature(struct eu_req *req, struct eu_httpsig *sig, eu_ap_verified_fn done,
                       void *arg)
{
    struct verify *v = eu_arena_calloc(req->arena, sizeof(*v));
    v->req = req;
    v->sig = sig;
    v->done = done;
    v->arg = arg;
    /* A domain the tenant suspended is refused by its key's host (the
     * key's owner must be the actor, so that is the sender's server). A
     * key id that is no URL goes on to fail in the lookup. */
    char host[300];
    if (eu_fetch_host_of(eu_httpsig_key_id(sig), host, sizeof(host)) == 0) {
        const char *p[] = {host};
        eu_req_stmt(req, &eu_ap_domain_policy_sql[DOMAIN_POLICY_SUSPENDED], 1, p, on_domain_checked,
                    v);
        return;
    }
    eu_ap_resolve_key(req->app, req->tenant, eu_httpsig_key_id(sig), false, on_key, v);
}

/* ------------------------------------------------------------ the gate */

struct gate {
    eu_ap_resume_fn resume;
    void *arg;
};

static void
free_sig(void *p)
{
    eu_httpsig_free(p);
}

static void
on_signer(struct eu_req *req, const char *owner, void *arg)
{
    struct gate *g = arg;
    req->ap_signer = eu_arena_strdup(req->arena, owner);
    g->resume(req, g->arg);
}

bool
eu_ap_fetch_allowed(struct eu_req *req, eu_ap_resume_fn resume, void *arg)
{
    if (!req->tenant || !req->tenant->authorized_fetch || req->ap_signer)
        return true;
    struct eu_httpsig_request hr;
    if (!eu_ap_request_for_signature(req, req->method == EU_HTTP_HEAD ? "HEAD" : "GET", &hr)) {
        eu_req_reply_error(req, 401, "Request not signed");
        return false;
    }
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result r = eu_httpsig_parse(&hr, time(NULL), &sig);
    if (r != EU_HTTPSIG_OK) {
        eu_httpsig_free(sig);
        eu_req_reply_error(req, 401, "%s",
                           r == EU_HTTPSIG_NONE ? "Request not signed" : eu_httpsig_result_str(r));
        return false;
    }
    eu_arena_on_free(req->arena, free_sig, sig);
    struct gate *g = eu_arena_calloc(req->arena, sizeof(*g));
    g->resume = resume;
    g->arg = arg;
    /* Which answers depend on the signature, for caches (as Mastodon). */
    eu_req_add_header(req, "Vary", "Signature");
    eu_ap_verify_signature(req, sig, on_signer, g);
    return false;
}
