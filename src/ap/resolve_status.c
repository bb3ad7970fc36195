/*
 * A remote status by URL into the tenant's rows (eu_ap_resolve_status in
 * apresolve.h), for search with resolve=true: fetch it signed, parse it on
 * the CPU pool (its HTML is sanitized there), resolve its author, store it.
 * The note must come from the host its id names (eu_ap_fetch_signed checks
 * that) and its author must live on the same host, so a server can only
 * speak for its own accounts. A Note that quotes gets its quote as one
 * received in an inbox does (process_quote.c); a post fetched as another's
 * quoted post does not fetch what it quotes in turn.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apingest.h"
#include "eunha/app.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/fetch.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/tenant.h"
#include "quotes_internal.h"

struct rstatus {
    struct eu_app *app;
    struct eu_tenant *t; /* one reference */
    eu_ap_status_cb cb;
    void *arg;
    char *base;
    struct eu_arena *arena;
    json_t *doc;
    const char *host;
    struct eu_ap_note note;
    struct eu_error err;
    int parse_rc;
    const char *author_id;
    struct eu_db_conn *conn;
    const char *status_id; /* arena: the stored status, while its quote is kept */
    bool shallow;          /* fetched as a quoted post: what it quotes is not fetched */
};

static void
rstatus_end(struct rstatus *op, const char *id, int status, const char *msg)
{
    if (op->conn)
        eu_db_conn_release(op->conn);
    if (id) {
        op->cb(id, NULL, op->arg);
    } else {
        struct eu_error err = {0};
        eu_error_set(&err, status, "%s", msg);
        op->cb(NULL, &err, op->arg);
    }
    json_decref(op->doc);
    eu_arena_free(op->arena);
    eu_tenant_unref(op->t);
    free(op->base);
    free(op);
}

static void
on_quote_kept(void *arg)
{
    struct rstatus *op = arg;
    char *copy = eu_xstrdup(op->status_id);
    rstatus_end(op, copy, 0, NULL);
    free(copy);
}

static void
on_stored(const char *id, int status, void *arg)
{
    struct rstatus *op = arg;
    if (status != EU_DB_OK || !id) {
        rstatus_end(op, NULL, 503, "cannot store the status");
        return;
    }
    if (op->note.n_emojis > 0) /* their emoji_fetch jobs (ingest_store.c) */
        eu_queue_wake(op->t, EU_QUEUE_MEDIA, 0);
    /* Its quote and quote policy, as an inbox Note's (process_quote.c),
     * on the same connection before it is answered. */
    op->status_id = eu_arena_strdup(op->arena, id);
    eu_ap_quote_fetched_note(op->app, op->t, op->conn, op->base, op->doc, op->status_id,
                             op->author_id, !op->shallow, on_quote_kept, op);
}

static void
on_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct rstatus *op = arg;
    if (st != EU_DB_OK) {
        rstatus_end(op, NULL, 503, "the database is not available");
        return;
    }
    op->conn = conn;
    eu_ingest_status_store(conn, &op->note, op->author_id, op->base, on_stored, op);
}

static void
on_author(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct rstatus *op = arg;
    if (err || r->local) {
        rstatus_end(op, NULL, err ? err->status : 422, "the status's author cannot be resolved");
        return;
    }
    op->author_id = eu_arena_strdup(op->arena, r->account_id);
    eu_db_pool_acquire(eu_tenant_pool(op->app->registry, op->t), on_conn, op);
}

static void
parse_work(void *arg)
{
    struct rstatus *op = arg;
    op->parse_rc = eu_ap_note_parse(op->arena, op->doc, op->host, NULL, NULL, &op->note, &op->err);
}

static void
parse_done(void *arg)
{
    struct rstatus *op = arg;
    if (op->parse_rc != 0) {
        rstatus_end(op, NULL, 422, op->err.message);
        return;
    }
    const char *author_host =
        op->note.attributed_to ? eu_ap_uri_host(op->arena, op->note.attributed_to) : NULL;
    if (!author_host || strcmp(author_host, op->host) != 0) {
        rstatus_end(op, NULL, 422, "the status's author is not on its host");
        return;
    }
    eu_ap_resolve_actor(op->app, op->t, op->note.attributed_to, on_author, op);
}

static void
on_doc(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct rstatus *op = arg;
    if (err) {
        rstatus_end(op, NULL, err->status, err->message);
        return;
    }
    if (!eu_ap_is_note_type(json_string_value(json_object_get(doc, "type")))) {
        rstatus_end(op, NULL, 422, "the document is not a status");
        return;
    }
    char host[300];
    if (eu_fetch_host_of(final_url, host, sizeof(host)) < 0) {
        rstatus_end(op, NULL, 502, "the status's URL has no host");
        return;
    }
    op->doc = json_incref(doc);
    op->host = eu_arena_strdup(op->arena, host);
    eu_cpupool_submit(op->app->cpu, parse_work, parse_done, op);
}

static void
resolve(struct eu_app *app, struct eu_tenant *tenant, const char *url, eu_ap_status_cb cb,
        void *arg, bool shallow)
{
    struct rstatus *op = eu_xcalloc(1, sizeof(*op));
    op->shallow = shallow;
    op->app = app;
    op->t = tenant;
    eu_tenant_ref(tenant);
    op->cb = cb;
    op->arg = arg;
    op->base = eu_xasprintf("%s://%s", app->cfg->scheme, tenant->domain);
    op->arena = eu_arena_new();
    eu_ap_fetch_signed(app, tenant, url, on_doc, op);
}

void
eu_ap_resolve_status(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                     eu_ap_status_cb cb, void *arg)
{
    resolve(app, tenant, url, cb, arg, false);
}

/* quotes_internal.h */
void
eu_ap_resolve_status_shallow(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                             eu_ap_status_cb cb, void *arg)
{
    resolve(app, tenant, url, cb, arg, true);
}
