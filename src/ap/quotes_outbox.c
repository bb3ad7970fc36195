/*
 * The activities a local quote sends (FEP-044f, as Mastodon 4.5 sends
 * them; docs/quotes.md): the QuoteRequest of a quote of a remote post, to
 * the quoted author's inbox, and the Delete of a QuoteAuthorization when a
 * local author takes back the approval of a remote account's quote. Like
 * outbox.c's hooks, each runs after the action's statement committed and
 * never fails it: one statement, then eu_ap_deliver().
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "quotes_internal.h"

enum { QOUT_REQUEST, QOUT_REVOKED };

const struct eu_sql eu_ap_quotes_outbox_sql[] = {
    /* $2 the quoting status, $3 the base URL: its pending quote of a
     * remote post gets its QuoteRequest's id (under the quoting author),
     * so the answer can name it. Answers that id, the author's username,
     * the quoted post's URI and its author's id. */
    [QOUT_REQUEST] =
        {"ap_quotes_outbox.request",
         "UPDATE quotes q SET activity_uri = $3 || '/users/' || a.username"
         "  || '/quote_requests/' || q.id, updated_at = now()"
         " FROM accounts a WHERE q.tenant_id = $1 AND q.status_id = $2::bigint"
         " AND q.state = 'pending' AND q.quoted_uri IS NOT NULL"
         " AND a.tenant_id = $1 AND a.id = q.account_id AND a.domain IS NULL"
         " RETURNING q.activity_uri, a.username, q.quoted_uri, q.quoted_account_id::text"},
    /* $2 the quote: the authorization a revoke takes
     * back, when the quoting author is remote: the quoted author's name,
     * the quoting author's id. */
    [QOUT_REVOKED] = {"ap_quotes_outbox.revoked",
                      "SELECT qa.username, q.account_id::text FROM quotes q"
                      " JOIN accounts qa ON qa.tenant_id = $1 AND qa.id = q.quoted_account_id"
                      "  AND qa.domain IS NULL"
                      " JOIN accounts ra ON ra.tenant_id = $1 AND ra.id = q.account_id"
                      "  AND ra.domain IS NOT NULL"
                      " WHERE q.tenant_id = $1 AND q.id = $2::bigint"},
    {0},
};

struct qhook {
    struct eu_app *app;
    struct eu_tenant *t; /* a reference */
    int64_t actor;
    char *base, *status_id, *quote_id;
};

static struct qhook *
qhook_new(struct eu_app *app, struct eu_tenant *t, int64_t actor)
{
    struct qhook *h = eu_xcalloc(1, sizeof(*h));
    h->app = app;
    h->t = t;
    eu_tenant_ref(t);
    h->actor = actor;
    h->base = eu_xasprintf("%s://%s", app->cfg->scheme, t->domain);
    return h;
}

static void
qhook_free(struct qhook *h)
{
    eu_tenant_unref(h->t);
    free(h->base);
    free(h->status_id);
    free(h->quote_id);
    free(h);
}

static bool
qhook_ok(struct qhook *h, PGresult *res, enum eu_db_status st, const char *what)
{
    if (st == EU_DB_OK && PQntuples(res) == 1)
        return true;
    if (st != EU_DB_OK)
        eu_log_warn("ap", "cannot read %s to deliver it: %s", what,
                    res ? PQresultErrorMessage(res) : "database unavailable");
    qhook_free(h);
    return false;
}

static void
on_request(PGresult *res, enum eu_db_status st, void *arg)
{
    struct qhook *h = arg;
    if (!qhook_ok(h, res, st, "a quote request"))
        return;
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, 1));
    char *note = eu_xasprintf("%s/statuses/%s", actor, h->status_id);
    json_t *a = json_pack("{s:o, s:s, s:s, s:s, s:s, s:s}", "@context", eu_ap_quote_context(), "id",
                          PQgetvalue(res, 0, 0), "type", "QuoteRequest", "actor", actor, "object",
                          PQgetvalue(res, 0, 2), "instrument", note);
    free(note);
    free(actor);
    struct eu_ap_audience to = {.account = PQgetvalue(res, 0, 3)};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    qhook_free(h);
}

void
eu_ap_outbox_quote_request(struct eu_app *app, struct eu_tenant *t, int64_t author,
                           const char *status_id)
{
    struct qhook *h = qhook_new(app, t, author);
    h->status_id = eu_xstrdup(status_id);
    const char *params[] = {status_id, h->base};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_ap_quotes_outbox_sql[QOUT_REQUEST], 2,
                    params, on_request, h);
}

static void
on_revoked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct qhook *h = arg;
    if (!qhook_ok(h, res, st, "a revoked quote"))
        return;
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, 0));
    char *auth = eu_ap_quote_authorization_uri(h->base, PQgetvalue(res, 0, 0), h->quote_id);
    char *id = eu_xasprintf("%s#delete", auth);
    json_t *a = json_pack("{s:o, s:s, s:s, s:s, s:{s:s, s:s}}", "@context", eu_ap_quote_context(),
                          "id", id, "type", "Delete", "actor", actor, "object", "id", auth, "type",
                          "QuoteAuthorization");
    free(id);
    free(auth);
    free(actor);
    struct eu_ap_audience to = {.account = PQgetvalue(res, 0, 1)};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    qhook_free(h);
}

void
eu_ap_outbox_quote_revoked(struct eu_app *app, struct eu_tenant *t, int64_t actor,
                           const char *quoted_id, const char *quote_id)
{
    (void)quoted_id;
    struct qhook *h = qhook_new(app, t, actor);
    h->quote_id = eu_xstrdup(quote_id);
    const char *params[] = {quote_id};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_ap_quotes_outbox_sql[QOUT_REVOKED], 1,
                    params, on_revoked, h);
}
