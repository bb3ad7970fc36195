/*
 * Each tenant's instance actor: the Application at BASE/actor that signs
 * the tenant's own fetches (Mastodon's "representative" account). It is an
 * accounts row like any local account, username 'instance.actor' (no
 * sign-up name holds a dot), with no users row, kept out of the user count
 * (migration 0019) and out of search and the directory; the settings row
 * 'instance_actor_id' names it.
 *
 * It is made on first need rather than with the tenant, so a tenant that
 * never federates never pays for an RSA key. Making it: read; if absent,
 * generate the key on the CPU pool; one statement inserts the account and
 * the setting together, doing nothing if another request (in any process)
 * got there first; read again. The unique username and the settings key
 * decide the race, so every caller ends with the same actor. Within this
 * process the first request makes the key and the others wait for it, so
 * a burst of first requests costs one key, not one each.
 */
#include "eunha/ap.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apkeys.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

enum {
    INSTANCE_ACTOR_GET,
    INSTANCE_ACTOR_CREATE,
};

const struct eu_sql eu_ap_instance_actor_sql[] = {
    [INSTANCE_ACTOR_GET] = {"ap_instance_actor.get",
                            "SELECT a.id, a.public_key, a.private_key FROM settings st"
                            " JOIN accounts a ON a.tenant_id = $1"
                            " AND a.id = (st.value #>> '{}')::bigint"
                            " WHERE st.tenant_id = $1 AND st.key = 'instance_actor_id'"},
    /* $2 public key, $3 private key. Nothing when the setting or the
     * username exists already (the insert waits for a concurrent one to
     * commit, then does nothing); the caller reads again either way. */
    [INSTANCE_ACTOR_CREATE] =
        {"ap_instance_actor.create",
         "WITH ins AS (INSERT INTO accounts (tenant_id, username, locked, discoverable,"
         " public_key, private_key) SELECT $1, 'instance.actor', true, false, $2, $3"
         " WHERE NOT EXISTS (SELECT 1 FROM settings WHERE tenant_id = $1"
         " AND key = 'instance_actor_id')"
         " ON CONFLICT DO NOTHING RETURNING id)"
         " INSERT INTO settings (tenant_id, key, value)"
         " SELECT $1, 'instance_actor_id', to_jsonb(id::text) FROM ins"
         " ON CONFLICT (tenant_id, key) DO NOTHING"},
    {0},
};

/* One lookup in flight; heap-owned (it may outlive any request), freed by
 * finish(). */
struct op {
    struct eu_app *app;
    struct eu_tenant *tenant; /* one reference */
    eu_ap_instance_actor_cb cb;
    void *arg;
    bool created; /* it made or waited for a creation: its next read is its last */
    char *pub, *priv;
    int rc;
    struct op *next; /* in a creation's waiters */
};

/* A creation in flight in this process, and who waits for it. Loop thread
 * only; few at once (one per tenant being set up), so a list will do. */
struct creation {
    int64_t tenant_id;
    struct op *waiters;
    struct creation *next;
};
static struct creation *creations;

static struct creation *
creation_of(int64_t tenant_id)
{
    for (struct creation *c = creations; c; c = c->next)
        if (c->tenant_id == tenant_id)
            return c;
    return NULL;
}

static void
finish(struct op *op, const struct eu_ap_instance_actor *ia, enum eu_db_status st)
{
    op->cb(ia, st, op->arg);
    eu_tenant_unref(op->tenant);
    free(op->pub);
    free(op->priv);
    free(op);
}

static void read_actor(struct op *op);

/* The creation op led is over, however it went: its waiters read what it
 * left (their own read is their last). */
static void
creation_end(struct op *op)
{
    for (struct creation **p = &creations; *p; p = &(*p)->next) {
        if ((*p)->tenant_id != op->tenant->id)
            continue;
        struct creation *c = *p;
        *p = c->next;
        for (struct op *w = c->waiters, *next; w; w = next) {
            next = w->next;
            read_actor(w);
        }
        free(c);
        return;
    }
}

static void
on_created(PGresult *res, enum eu_db_status st, void *arg)
{
    struct op *op = arg;
    creation_end(op);
    if (st != EU_DB_OK) {
        finish(op, NULL, st);
        return;
    }
    read_actor(op);
}

static void
keygen_work(void *arg)
{
    struct op *op = arg;
    op->rc = eu_ap_rsa_generate(&op->pub, &op->priv);
}

static void
keygen_done(void *arg)
{
    struct op *op = arg;
    if (op->rc < 0) {
        eu_log_error("ap", "cannot generate the instance actor's key");
        creation_end(op);
        finish(op, NULL, EU_DB_ERROR);
        return;
    }
    const char *p[] = {op->pub, op->priv};
    eu_db_pool_stmt(eu_tenant_pool(op->app->registry, op->tenant),
                    &eu_ap_instance_actor_sql[INSTANCE_ACTOR_CREATE], 2, p, on_created, op);
}

static void
on_read(PGresult *res, enum eu_db_status st, void *arg)
{
    struct op *op = arg;
    if (st != EU_DB_OK) {
        finish(op, NULL, st);
        return;
    }
    if (PQntuples(res) == 1) {
        struct eu_ap_instance_actor ia = {
            .account_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10),
            .public_key_pem = PQgetisnull(res, 0, 1) ? NULL : PQgetvalue(res, 0, 1),
            .private_key_pem = PQgetisnull(res, 0, 2) ? NULL : PQgetvalue(res, 0, 2),
        };
        finish(op, &ia, EU_DB_OK);
        return;
    }
    if (op->created) {
        /* Only an 'instance.actor' row left without its setting gets
         * here: a tenant's data edited by hand. */
        eu_log_error("ap", "cannot create the instance actor: username 'instance.actor' is taken");
        finish(op, NULL, EU_DB_ERROR);
        return;
    }
    op->created = true;
    struct creation *c = creation_of(op->tenant->id);
    if (c) {
        op->next = c->waiters;
        c->waiters = op;
        return;
    }
    const struct eu_config *cfg = op->app->cfg;
    /* Counted with the tenant's password checks, so a tenant cannot fill
     * the pool however many tenants it is set up for at once. */
    if (eu_cpupool_try_submit(op->app->cpu, op->tenant->id, &op->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, keygen_work,
                              keygen_done, op) < 0) {
        finish(op, NULL, EU_DB_TIMEOUT);
        return;
    }
    c = eu_xcalloc(1, sizeof(*c));
    c->tenant_id = op->tenant->id;
    c->next = creations;
    creations = c;
}

static void
read_actor(struct op *op)
{
    eu_db_pool_stmt(eu_tenant_pool(op->app->registry, op->tenant),
                    &eu_ap_instance_actor_sql[INSTANCE_ACTOR_GET], 0, NULL, on_read, op);
}

void
eu_ap_instance_actor(struct eu_app *app, struct eu_tenant *t, eu_ap_instance_actor_cb cb, void *arg)
{
    struct op *op = eu_xcalloc(1, sizeof(*op));
    op->app = app;
    op->tenant = t;
    eu_tenant_ref(t);
    op->cb = cb;
    op->arg = arg;
    read_actor(op);
}

/* ------------------------------------------------------------- BASE/actor */

static void
on_actor(const struct eu_ap_instance_actor *ia, enum eu_db_status st, void *arg)
{
    struct eu_req *req = arg;
    eu_req_enter(req);
    if (!ia) {
        eu_req_reply_db_error(req, st);
        return;
    }
    const char *base = eu_req_base_url(req);
    const char *id = eu_arena_sprintf(req->arena, "%s/actor", base);
    json_t *o =
        json_pack("{s:[s, s, {s:s}], s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:{s:s}}", "@context",
                  "https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1",
                  "manuallyApprovesFollowers", "as:manuallyApprovesFollowers", "id", id, "type",
                  "Application", "inbox", eu_arena_sprintf(req->arena, "%s/inbox", id), "outbox",
                  eu_arena_sprintf(req->arena, "%s/outbox", id), "preferredUsername",
                  req->tenant->domain, "name", req->tenant->domain, "url",
                  eu_arena_sprintf(req->arena, "%s/about/more?instance_actor=true", base),
                  "manuallyApprovesFollowers", 1, "endpoints", "sharedInbox",
                  eu_arena_sprintf(req->arena, "%s/inbox", base));
    if (ia->public_key_pem)
        json_object_set_new(o, "publicKey",
                            json_pack("{s:s, s:s, s:s}", "id",
                                      eu_arena_sprintf(req->arena, "%s#main-key", id), "owner", id,
                                      "publicKeyPem", ia->public_key_pem));
    eu_ap_reply(req, 200, o);
}

void
eu_ap_instance_actor_show(struct eu_req *req)
{
    eu_ap_instance_actor(req->app, req->tenant, on_actor, req);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_instance_actor_routes[] = {
    {EU_HTTP_GET, "/actor", eu_ap_instance_actor_show, NULL, 0},
    {0},
};
