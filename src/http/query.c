/*
 * Statements run for a request: the one place that picks the pool (the
 * tenant's, or the control database's for the operator's API),
 * takes the log context back when the result arrives and turns a database
 * failure into the request's answer, so route handlers' callbacks start at
 * their rows (nginx finalizes a request in one place in the same way).
 */
#include "eunha/http.h"

#include <assert.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* One pending statement. It lives on the request's arena: the request cannot
 * be finished while the statement is pending (nothing else answers it), so
 * the arena outlives the pool's callback. Exactly one of rows and result is
 * set. */
struct req_query {
    struct eu_req *req;
    eu_req_rows_cb rows;
    eu_req_result_cb result;
    void *arg;
};

static void
on_result(struct pg_result *res, enum eu_db_status st, void *arg)
{
    struct req_query *q = arg;
    /* Nothing here touches q after a callback or reply: either may finish
     * the request and free the arena q lives on. */
    eu_req_enter(q->req);
    /* A statement that refused its input (a cap enforced in the schema,
     * SQLSTATE class EU) says why in its message: the client's 422. */
    if (st == EU_DB_ERROR && strncmp(eu_db_result_sqlstate(res), "EU", 2) == 0) {
        const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        eu_req_reply_error(q->req, 422, "Validation failed: %s", msg ? msg : "invalid input");
        return;
    }
    if (st == EU_DB_OK && q->rows)
        q->rows(q->req, res, q->arg);
    else if ((st == EU_DB_OK || st == EU_DB_ERROR) && q->result)
        q->result(q->req, res, st, q->arg);
    else
        eu_req_reply_db_error(q->req, st);
}

/* Sends variant of registered statement s on pool. */
static void
send_on(struct eu_req *req, struct eu_db_pool *pool, const struct eu_sql *s, unsigned variant,
        int nparams, const char *const *params, eu_req_rows_cb rows, eu_req_result_cb result,
        void *arg)
{
    assert(!req->finished);
    struct req_query *q = eu_arena_alloc(req->arena, sizeof(*q));
    q->req = req;
    q->rows = rows;
    q->result = result;
    q->arg = arg;
    uint64_t hash;
    const char *sql = eu_sql_text_hashed(s, variant, &hash);
    eu_db_pool_query_kept(pool, sql, hash, nparams, params, on_result, q);
}

/* Sends variant of registered statement s on the pool of req's tenant. */
static void
send_query(struct eu_req *req, const struct eu_sql *s, unsigned variant, int nparams,
           const char *const *params, eu_req_rows_cb rows, eu_req_result_cb result, void *arg)
{
    assert(req->tenant);
    send_on(req, eu_tenant_pool(req->app->registry, req->tenant), s, variant, nparams, params, rows,
            result, arg);
}

void
eu_req_stmt(struct eu_req *req, const struct eu_sql *s, int nparams, const char *const *params,
            eu_req_rows_cb cb, void *arg)
{
    send_query(req, s, 0, nparams, params, cb, NULL, arg);
}

void
eu_req_stmt_page(struct eu_req *req, const struct eu_sql *s, const struct eu_page *page,
                 int nparams, const char *const *params, eu_req_rows_cb cb, void *arg)
{
    assert(s->page_col);
    unsigned variant = (page->max_id ? EU_SQL_PAGE_MAX : 0) |
                       (page->since_id ? EU_SQL_PAGE_SINCE : 0) |
                       (page->min_id ? EU_SQL_PAGE_MIN : 0);
    send_query(req, s, variant, nparams, params, cb, NULL, arg);
}

void
eu_req_stmt_or_error(struct eu_req *req, const struct eu_sql *s, int nparams,
                     const char *const *params, eu_req_result_cb cb, void *arg)
{
    send_query(req, s, 0, nparams, params, NULL, cb, arg);
}

void
eu_req_control_stmt(struct eu_req *req, const struct eu_sql *s, int nparams,
                    const char *const *params, eu_req_rows_cb cb, void *arg)
{
    send_on(req, req->app->control, s, 0, nparams, params, cb, NULL, arg);
}

void
eu_req_control_stmt_or_error(struct eu_req *req, const struct eu_sql *s, int nparams,
                             const char *const *params, eu_req_result_cb cb, void *arg)
{
    send_on(req, req->app->control, s, 0, nparams, params, NULL, cb, arg);
}

const char *
eu_req_viewer(struct eu_req *req)
{
    return eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.account_id);
}
