/*
 * Quote posts as Mastodon 4.5 has them (docs/quotes.md): whether a viewer
 * may quote a status (posting with quoted_status_id asks here first), the
 * author's quote policy of a posted status (PUT .../interaction_policy),
 * the quotes of one's own status (GET .../quotes) and taking one's
 * approval back (POST .../quotes/:quoting_status_id/revoke). The quote
 * itself is inserted with its status (statuses.insert) and rendered with
 * it (status_render.c); the federation is src/ap/process_quote.c's.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "statuses_internal.h"

enum {
    QUOTES_CHECK,
    QUOTES_SET_POLICY,
    QUOTES_OWNER,
    QUOTES_LIST,
    QUOTES_REVOKE,
};

const struct eu_sql eu_quotes_sql[] = {
    /* $2 the viewer, $3 the status to quote: its original when it is a
     * reblog, while it is not deleted, with what the policy needs and
     * whether the viewer may see it. A status there but not shown is
     * told apart from one gone for the scheduled statuses' publisher:
     * Mastodon publishes the first with a quote left pending and not
     * the second (eu_statuses_quote_recheck()). */
    [QUOTES_CHECK] =
        {"quotes.check",
         "SELECT p.id::text, p.account_id::text, pa.domain IS NULL AS local, p.visibility,"
         " p.quote_policy, EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint AND f.target_account_id = p.account_id) AS follows,"
         " vis.ok AND pa.suspended_at IS NULL AS shown"
         " FROM statuses s0 JOIN statuses p ON p.tenant_id = $1"
         "  AND p.id = coalesce(s0.reblog_of_id, s0.id)"
         " JOIN accounts pa ON pa.tenant_id = $1 AND pa.id = p.account_id"
         " CROSS JOIN LATERAL eunha_is_visible($1, p.id, p.account_id, p.visibility,"
         "  p.deleted_at, $2::bigint) vis"
         " WHERE s0.tenant_id = $1 AND s0.id = $3::bigint AND p.deleted_at IS NULL"},
    /* $2 the status, $3 its author, $4 the policy; a private or direct
     * status stays quotable by nobody. */
    [QUOTES_SET_POLICY] = {"quotes.set_policy",
                           "UPDATE statuses SET quote_policy = CASE WHEN visibility >= 2 THEN 2"
                           " ELSE $4::smallint END"
                           " WHERE tenant_id = $1 AND id = $2::bigint AND account_id = $3::bigint"
                           " AND deleted_at IS NULL AND reblog_of_id IS NULL RETURNING id::text"},
    /* $2 the status, $3 the viewer: whether it is the viewer's own. */
    [QUOTES_OWNER] =
        {"quotes.owner",
         "SELECT account_id = $3::bigint FROM statuses WHERE tenant_id = $1 AND id = $2::bigint"
         " AND deleted_at IS NULL"},
    /* $2 the quoted status: its approved quotes by quote id, newest
     * first, with the quoting statuses still there. */
    [QUOTES_LIST] = {"quotes.list",
                     "SELECT q.id::text, q.status_id::text FROM quotes q"
                     " JOIN statuses qs ON qs.tenant_id = $1 AND qs.id = q.status_id"
                     " WHERE q.tenant_id = $1 AND q.quoted_status_id = $2::bigint"
                     " AND q.state = 'accepted' AND qs.deleted_at IS NULL",
                     "q.id", 3},
    /* $2 the viewer's quoted status, $3 the quoting one: the approval
     * taken back. Answers the quoting status, its author and whether that
     * author is remote (told by a Delete of the authorization). */
    [QUOTES_REVOKE] = {"quotes.revoke",
                       "UPDATE quotes q SET state = 'revoked', updated_at = now() FROM statuses o"
                       " WHERE q.tenant_id = $1 AND q.status_id = $3::bigint"
                       " AND q.quoted_status_id = $2::bigint AND q.state IN ('accepted', 'pending')"
                       " AND o.tenant_id = $1 AND o.id = $2::bigint AND o.account_id = $4::bigint"
                       " RETURNING q.status_id::text, q.account_id::text, q.id::text"},
    {0},
};

/* ------------------------------------------------------------ the check */

/*
 * Whether viewer may quote the status of quotes.check's row (Mastodon's
 * StatusPolicy#quote? as its controller asks it), filling q from the row
 * (strings borrowed from res) with the state the quote starts in. The
 * API and the scheduled statuses' publisher both decide here, so a quote
 * published later is judged as one posted then would be.
 */
static bool
quote_allowed(const PGresult *res, int64_t viewer, struct eu_quote_target *q)
{
    *q = (struct eu_quote_target){
        .id = PQgetvalue(res, 0, 0),
        .account_id = PQgetvalue(res, 0, 1),
        .local = PQgetvalue(res, 0, 2)[0] == 't',
        .state = "accepted",
    };
    int vis = atoi(PQgetvalue(res, 0, 3));
    int policy = PQgetisnull(res, 0, 4) ? -1 : atoi(PQgetvalue(res, 0, 4));
    bool follows = PQgetvalue(res, 0, 5)[0] == 't';
    bool own = eu_id_parse(q->account_id, NULL) == viewer;
    bool ok;
    if (PQgetvalue(res, 0, 6)[0] != 't')
        ok = false; /* not shown to the viewer: blocked, suspended, not in its audience */
    else if (own)
        ok = vis < 3;
    else if (vis >= 2)
        ok = false; /* Mastodon quotes only public and unlisted posts of others */
    else if (!q->local)
        ok = policy != EU_QUOTE_POLICY_NOBODY; /* its author answers our QuoteRequest */
    else
        ok = policy == EU_QUOTE_POLICY_PUBLIC || (policy == EU_QUOTE_POLICY_FOLLOWERS && follows);
    if (ok && !q->local && !own)
        q->state = "pending";
    return ok;
}

struct check {
    eu_quote_checked_cb cb;
    void *arg;
};

static void
on_checked(struct eu_req *req, PGresult *res, void *arg)
{
    struct check *ck = arg;
    struct eu_quote_target q;
    /* Mastodon's controller answers a quote its policy refuses as one of
     * a post that is not there. */
    if (PQntuples(res) == 0 || !quote_allowed(res, req->auth.account_id, &q)) {
        eu_req_reply_error(req, 404, EU_QUOTE_NOT_FOUND);
        return;
    }
    q.id = eu_arena_strdup(req->arena, q.id);
    q.account_id = eu_arena_strdup(req->arena, q.account_id);
    ck->cb(req, &q, ck->arg);
}

void
eu_statuses_quote_check(struct eu_req *req, const char *id, eu_quote_checked_cb cb, void *arg)
{
    struct check *ck = eu_arena_calloc(req->arena, sizeof(*ck));
    ck->cb = cb;
    ck->arg = arg;
    const char *params[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_quotes_sql[QUOTES_CHECK], 2, params, on_checked, ck);
}

struct recheck {
    eu_quote_rechecked_cb cb;
    void *arg;
    int64_t viewer;
};

static void
on_rechecked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct recheck rc = *(struct recheck *)arg;
    free(arg);
    struct eu_quote_target q = {0};
    if (st != EU_DB_OK) {
        rc.cb(EU_QUOTE_RECHECK_ERROR, NULL, rc.arg);
    } else if (PQntuples(res) == 0) {
        rc.cb(EU_QUOTE_RECHECK_GONE, NULL, rc.arg);
    } else if (quote_allowed(res, rc.viewer, &q)) {
        rc.cb(EU_QUOTE_RECHECK_ALLOWED, &q, rc.arg);
    } else {
        /* Mastodon's PostStatusService#attach_quote! makes the quote
         * whatever the policy says and accepts it only when the policy
         * lets it: refused, it stays pending. */
        q.state = "pending";
        rc.cb(EU_QUOTE_RECHECK_REFUSED, &q, rc.arg);
    }
}

void
eu_statuses_quote_recheck(struct eu_db_conn *conn, int64_t viewer, const char *id,
                          eu_quote_rechecked_cb cb, void *arg)
{
    struct recheck *rc = eu_xcalloc(1, sizeof(*rc));
    rc->cb = cb;
    rc->arg = arg;
    rc->viewer = viewer;
    char v[24];
    snprintf(v, sizeof(v), "%lld", (long long)viewer);
    const char *params[] = {v, id};
    eu_db_conn_stmt(conn, &eu_quotes_sql[QUOTES_CHECK], 2, params, on_rechecked, rc);
}

/* ------------------------------------------------------ interaction_policy */

static void
on_policy_set(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *id = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    /* Remote servers learn the new policy from the Note's Update, as
     * Mastodon sends one. */
    eu_ap_outbox_status(req->app, req->tenant, req->auth.account_id, id, EU_AP_STATUS_UPDATE, NULL);
    eu_statuses_reply_one(req, id);
}

static void
quotes_interaction_policy(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    int policy = eu_quote_policy_code(eu_param_str(p, "quote_approval_policy"));
    if (policy < 0) {
        eu_req_reply_error(req, 422, EU_QUOTE_BAD_POLICY);
        return;
    }
    char pol[12];
    snprintf(pol, sizeof(pol), "%d", policy);
    const char *params[] = {id, eu_req_viewer(req), eu_arena_strdup(req->arena, pol)};
    eu_req_stmt(req, &eu_quotes_sql[QUOTES_SET_POLICY], 3, params, on_policy_set, NULL);
}

/* ------------------------------------------------------------ the quotes */

struct list_ctx {
    const char *params[5];
    struct eu_page page;
};

static void
on_quotes(struct eu_req *req, PGresult *res, void *arg)
{
    struct list_ctx *lc = arg;
    int n = PQntuples(res);
    const char **ids = eu_arena_alloc(req->arena, ((size_t)n + 1) * sizeof(*ids));
    bool asc = eu_page_is_ascending(&lc->page);
    for (int i = 0; i < n; i++)
        ids[i] = eu_arena_strdup(req->arena, PQgetvalue(res, asc ? n - 1 - i : i, 1));
    const char *first = NULL, *last = NULL;
    if (n) {
        first = PQgetvalue(res, asc ? n - 1 : 0, 0);
        last = PQgetvalue(res, asc ? 0 : n - 1, 0);
    }
    eu_statuses_reply_list(req, ids, (size_t)n, first, last, NULL);
}

static void
on_list_owner(struct eu_req *req, PGresult *res, void *arg)
{
    struct list_ctx *lc = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] != 't') {
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    eu_req_stmt_page(req, &eu_quotes_sql[QUOTES_LIST], &lc->page, 5, lc->params, on_quotes, lc);
}

/* Mastodon lists a status's quotes to its author only. */
static void
quotes_index(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct list_ctx *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    if (eu_page_parse(req, &lc->page, 20, 40) < 0)
        return;
    lc->params[0] = id;
    eu_page_params(&lc->page, lc->params + 1);
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_quotes_sql[QUOTES_OWNER], 2, params, on_list_owner, lc);
}

/* ---------------------------------------------------------------- revoke */

static void
on_revoked(struct eu_req *req, PGresult *res, void *arg)
{
    const char *quoted = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *quoting = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    eu_ap_outbox_quote_revoked(req->app, req->tenant, req->auth.account_id, quoted,
                               PQgetvalue(res, 0, 2));
    eu_statuses_reply_one(req, quoting);
}

static void
quotes_revoke(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    const char *quoting = id ? eu_req_id_param(req, "quoting_status_id") : NULL;
    if (!quoting)
        return;
    const char *params[] = {id, quoting, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_quotes_sql[QUOTES_REVOKE], 3, params, on_revoked, (void *)id);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_quotes_routes[] = {
    {EU_HTTP_PUT, "/api/v1/statuses/:id/interaction_policy", quotes_interaction_policy,
     "write:statuses", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/statuses/:id/quotes", quotes_index, "read:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/quotes/:quoting_status_id/revoke", quotes_revoke,
     "write:statuses", EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
