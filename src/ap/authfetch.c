/*
 * Authorized fetch ("secure mode" in Mastodon): a tenant that turns it on
 * (admin PATCH authorized_fetch) serves its actors, objects and collections
 * only to requests signed by a remote actor whose key verifies, so what it
 * publishes reaches only servers that identify themselves. The instance
 * actor (/actor), WebFinger and NodeInfo stay open, as in Mastodon: other
 * servers fetch the instance actor to verify the signed fetches made to
 * them, and requiring a signature there would loop.
 *
 * The check is the inbox's (inbox.c): eu_httpsig_parse on the loop, the key
 * from the cache, the tenant's rows or a signed fetch, one refetch when the
 * signature fails. A GET has no body, so no digest is involved.
 */
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <string.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/httpsig.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

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

struct gate {
    struct eu_req *req;
    struct eu_httpsig *sig;
    eu_ap_resume_fn resume;
    void *arg;
    bool refreshed;
};

static void
free_sig(void *p)
{
    eu_httpsig_free(p);
}

static void
refuse(struct eu_req *req, const char *why)
{
    /* Mastodon answers 401 with the reason, and says which headers vary. */
    eu_req_add_header(req, "Vary", "Accept, Signature");
    eu_req_reply_error(req, 401, "%s", why);
}

static void
on_key(const struct eu_ap_key *k, const struct eu_error *err, void *arg)
{
    struct gate *g = arg;
    struct eu_req *req = g->req;
    eu_req_enter(req);
    if (err) {
        if (err->status >= 500) {
            eu_req_add_header(req, "Retry-After", "60");
            eu_req_reply_error(req, 503, "Cannot fetch the signature's key: %s", err->message);
        } else {
            refuse(req, "Cannot verify the signature's key");
        }
        return;
    }
    enum eu_httpsig_result r = eu_httpsig_verify_pem(g->sig, k->public_key_pem);
    if (r != EU_HTTPSIG_OK) {
        if (!g->refreshed) {
            g->refreshed = true;
            eu_ap_resolve_key(req->app, req->tenant, k->key_id, true, on_key, g);
            return;
        }
        refuse(req, "Verification failed");
        return;
    }
    req->ap_signer = eu_arena_strdup(req->arena, k->owner);
    g->resume(req, g->arg);
}

bool
eu_ap_fetch_allowed(struct eu_req *req, eu_ap_resume_fn resume, void *arg)
{
    if (!req->tenant || !req->tenant->authorized_fetch || req->ap_signer)
        return true;
    struct eu_httpsig_request hr;
    if (!eu_ap_request_for_signature(req, req->method == EU_HTTP_HEAD ? "HEAD" : "GET", &hr)) {
        refuse(req, "Request not signed");
        return false;
    }
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result r = eu_httpsig_parse(&hr, time(NULL), &sig);
    if (r != EU_HTTPSIG_OK) {
        eu_httpsig_free(sig);
        refuse(req, r == EU_HTTPSIG_NONE ? "Request not signed" : eu_httpsig_result_str(r));
        return false;
    }
    eu_arena_on_free(req->arena, free_sig, sig);
    struct gate *g = eu_arena_calloc(req->arena, sizeof(*g));
    g->req = req;
    g->sig = sig;
    g->resume = resume;
    g->arg = arg;
    eu_ap_resolve_key(req->app, req->tenant, eu_httpsig_key_id(sig), false, on_key, g);
    return false;
}
