/*
 * POST /admin/v1/tenants/:domain/move: a tenant moves to another placement.
 * It is marked moving (public requests answer 503, admin writes 409, its
 * workers take no turn), its requests and background turns in flight are
 * let end, a snapshot of its rows is restored into the target under the
 * same tenant id (lifecycle.c), the control row is pointed at the target
 * and only then are the rows removed from the source. Ids, tokens and
 * Redis keys (named by the tenant id) do not change; since nothing writes
 * while it moves, whichever copy the control row names is the tenant, the
 * other is garbage.
 */
#include "lifecycle_internal.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admin_internal.h"
#include "eunha/admin.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/migrate.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* How long a move waits for the tenant's requests and background turns in
 * flight, polling every DRAIN_POLL_MS. */
#define DRAIN_MS 10000
#define DRAIN_POLL_MS 10
/* Tries, a second apart, to learn whether a switch the control database
 * did not answer took effect. */
#define RESOLVE_TRIES 30
/* A move holds the registry's reference and its request's; more are
 * requests or background turns still running. */
#define IDLE_REFS 2

enum {
    MOVE_TARGET,
};

/* On the control database (see eu_admin_control_sql[]). */
const struct eu_sql eu_admin_move_control_sql[] = {
    /* The target placement, unless it is a dedicated one holding another
     * tenant. $1 its name, $2 the tenant moving. */
    [MOVE_TARGET] = {"admin_move.target",
                     "SELECT p.database, p.database_url, p.kind = 'dedicated' FROM placements p"
                     " WHERE p.name = $1 AND NOT (p.kind = 'dedicated' AND EXISTS (SELECT 1"
                     " FROM tenants x WHERE x.placement_id = p.id AND x.id <> $2::bigint))"},
    {0},
};

static long long
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- POST /admin/v1/tenants/:domain/move ---- */

/* Where a tenant's rows live. Owned by the request's arena. */
struct place {
    const char *name, *url, *db;
    bool dedicated;
};

struct move {
    struct eu_req *req;
    struct eu_tenant *t; /* req->tenant */
    struct place from, to;
    bool made;     /* to is a dedicated placement made for this move */
    bool restored; /* to holds a committed copy */
    /* Set while this move holds t: moving, and its state kept here while
     * t->state reads suspended, since the queue takes turns for active
     * tenants only (the upsert that switches it sets the real one again). */
    bool held;
    enum eu_tenant_state state;
    struct event *timer;
    long long drain_until;
    int resolve_tries;
    struct eu_admin_tables *rows;
    struct eu_error err;
};

/* Stops t's requests and background work from starting; see struct move. */
static void
move_hold(struct move *m)
{
    m->held = true;
    m->t->moving = true;
    m->state = m->t->state;
    m->t->state = EU_TENANT_SUSPENDED;
}

/* Lets t serve again. Its workers skipped it meanwhile: what fell due runs
 * now rather than at the next poll. */
static void
move_release(struct move *m)
{
    struct eu_tenant *t = m->t;
    if (!m->held)
        return;
    m->held = false;
    t->moving = false;
    for (int q = 0; q < EU_QUEUE_MAX; q++)
        eu_queue_wake(t, (enum eu_queue_id)q, 0);
    for (int k = 0; k < EU_TASK_MAX; k++)
        eu_queue_task_wake(t, (enum eu_task_id)k, -1);
}

static void
on_move_undone(int rc, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    eu_admin_reply_eu_error(m->req, &m->err);
}

/* The move failed before the control row named the target: the tenant goes
 * on where it was, and the target's copy (if any) is removed. m->err says
 * why. */
static void
move_undo(struct move *m)
{
    struct eu_req *req = m->req;
    struct eu_tenant *t = m->t;
    eu_log_warn("admin", "moving tenant '%s' to '%s' failed: %s", t->domain, m->to.name,
                m->err.message);
    if (m->held)
        t->state = m->state;
    move_release(m);
    if (m->made) {
        eu_admin_placement_drop(req->app, m->to.name, m->to.db, on_move_undone, m);
        return;
    }
    if (m->restored) {
        eu_admin_removal_start(req->app, m->to.url, m->to.db, t->id, on_move_undone, m);
        return;
    }
    on_move_undone(0, m);
}

static void
on_source_removed(int rc, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (rc < 0)
        eu_log_error("admin", "tenant '%s' moved, but its rows in '%s' could not all be removed",
                     m->t->domain, m->from.db);
    eu_req_reply_json(req, 200, eu_admin_tenant_json(req->app->registry, m->t, false));
}

/* The control row names the target (res holds it): the move took effect. */
static void
move_switched(struct move *m, PGresult *res)
{
    struct eu_req *req = m->req;
    struct eu_tenant row;
    eu_tenant_from_row(res, 0, &row);
    /* Closes its pool over the source and sets its state from the row; the
     * next request opens a pool over the target. */
    struct eu_tenant *t = eu_registry_upsert(req->app->registry, &row);
    move_release(m);
    eu_log_info("admin", "moved tenant '%s' from placement '%s' to '%s'", t->domain, m->from.name,
                m->to.name);
    if (m->from.dedicated)
        eu_admin_placement_drop(req->app, m->from.name, m->from.db, on_source_removed, m);
    else
        eu_admin_removal_start(req->app, m->from.url, m->from.db, t->id, on_source_removed, m);
}

static void move_resolve(struct move *m);

static void
on_resolve_tick(evutil_socket_t fd, short what, void *arg)
{
    move_resolve(arg);
}

static void
on_resolved(PGresult *res, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (st == EU_DB_OK && PQntuples(res) == 1) {
        struct eu_tenant row;
        eu_tenant_from_row(res, 0, &row);
        if (strcmp(row.placement, m->to.name) == 0) {
            move_switched(m, res);
        } else {
            eu_error_set(&m->err, 503, "The control database was unavailable; try again");
            move_undo(m);
        }
        return;
    }
    if (st != EU_DB_OK && ++m->resolve_tries < RESOLVE_TRIES) {
        struct timeval tv = {1, 0};
        evtimer_add(m->timer, &tv);
        return;
    }
    /* Serving from either copy now could lose whatever is written next, so
     * it stays unavailable; a start reads the control row afresh. */
    eu_log_error("admin",
                 "cannot tell whether tenant '%s' moved to '%s'; it stays unavailable "
                 "until the server restarts",
                 m->t->domain, m->to.name);
    m->held = false; /* for good */
    eu_req_add_header(req, "Retry-After", "60");
    eu_req_reply_error(req, 503, "Cannot tell whether the move took effect; restart the server");
}

/* The switch was sent but not answered: ask the control row which
 * placement the tenant is in now. */
static void
move_resolve(struct move *m)
{
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)m->t->id);
    const char *params[] = {id};
    eu_db_pool_query(m->req->app->control,
                     "SELECT " EU_TENANT_COLUMNS " FROM " EU_TENANT_FROM " WHERE t.id = $1", 1,
                     params, on_resolved, m);
}

static void
on_switch(PGresult *res, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    if (st == EU_DB_OK && PQntuples(res) == 1) {
        move_switched(m, res);
        return;
    }
    if (st == EU_DB_OK) {
        eu_error_set(&m->err, 409, "Tenant '%s' is being deleted", m->t->domain);
    } else if (st == EU_DB_UNAVAILABLE || st == EU_DB_CLOSED) {
        /* The statement may have committed before the connection broke. */
        evtimer_assign(m->timer, m->req->app->base, on_resolve_tick, m);
        move_resolve(m);
        return;
    } else {
        eu_admin_error_set_db(&m->err, st, res, "point the tenant at its new placement");
    }
    move_undo(m);
}

static void
on_move_restored(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    eu_admin_tables_free(m->rows);
    m->rows = NULL;
    if (err->status) {
        m->err = *err;
        move_undo(m);
        return;
    }
    m->restored = true;
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)m->t->id);
    const char *params[] = {id, m->to.name};
    eu_db_pool_query(m->req->app->control,
                     "WITH t AS (UPDATE tenants SET placement_id = (SELECT p.id FROM placements p"
                     " WHERE p.name = $2), updated_at = now() WHERE id = $1 AND state <> 'deleting'"
                     " RETURNING *)"
                     " SELECT " EU_TENANT_COLUMNS
                     " FROM t JOIN placements p ON p.id = t.placement_id",
                     2, params, on_switch, m);
}

static void
on_move_snapshot(struct eu_admin_tables *rows, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    if (st != EU_DB_OK) {
        eu_admin_error_set_db(&m->err, st, NULL, "read the tenant's rows");
        move_undo(m);
        return;
    }
    m->rows = rows;
    eu_admin_restore_start(m->req->app, m->to.url, m->to.db, m->t->id, rows, on_move_restored, m);
}

static void
on_drain_tick(evutil_socket_t fd, short what, void *arg)
{
    struct move *m = arg;
    struct eu_tenant *t = m->t;
    eu_req_enter(m->req);
    if (t->refs > IDLE_REFS) {
        if (now_ms() < m->drain_until) {
            struct timeval tv = {0, DRAIN_POLL_MS * 1000};
            evtimer_add(m->timer, &tv);
            return;
        }
        eu_error_set(&m->err, 503, "Tenant '%s' is still busy; try again", t->domain);
        move_undo(m);
        return;
    }
    /* Nothing of the tenant runs now (a queue waiting for or taking a turn
     * holds a reference too), and nothing new starts. */
    eu_admin_snapshot_start(eu_tenant_pool(m->req->app->registry, t), on_move_snapshot, m);
}

static void
free_event_cleanup(void *p)
{
    event_free(p);
}

/* The target is known (and made): mark the tenant moving and wait for what
 * is running to end. */
static void
move_begin(struct move *m)
{
    struct eu_req *req = m->req;
    struct eu_tenant *t = m->t;
    /* A move, delete or rename may have come while the target was made. */
    if (t->moving || t->removed || t->state == EU_TENANT_DELETING) {
        eu_error_set(&m->err, 409, "Tenant '%s' is being moved or deleted", t->domain);
        move_undo(m);
        return;
    }
    m->from.name = eu_arena_strdup(req->arena, t->placement);
    m->from.url = eu_arena_strdup(req->arena,
                                  t->database_url ? t->database_url : req->app->cfg->database_url);
    m->from.db = eu_arena_strdup(req->arena, t->database);
    m->from.dedicated = t->dedicated;
    /* Clearing the target's rows of the tenant would clear the source's. */
    if (strcmp(m->from.url, m->to.url) == 0 && strcmp(m->from.db, m->to.db) == 0) {
        eu_error_set(&m->err, 422,
                     "Validation failed: placement '%s' is the database '%s' "
                     "tenant '%s' is in",
                     m->to.name, m->to.db, t->domain);
        move_undo(m);
        return;
    }
    move_hold(m);
    eu_log_info("admin", "moving tenant '%s' from placement '%s' to '%s'", t->domain, m->from.name,
                m->to.name);
    m->timer = evtimer_new(req->app->base, on_drain_tick, m);
    eu_arena_on_free(req->arena, free_event_cleanup, m->timer);
    m->drain_until = now_ms() + DRAIN_MS;
    on_drain_tick(-1, 0, m);
}

static void
on_dedicated_target(struct eu_req *req, const char *name, const char *database, void *arg)
{
    struct move *m = arg;
    m->to.name = name;
    m->to.db = database;
    m->to.url = req->app->cfg->database_url;
    m->to.dedicated = true;
    m->made = true;
    move_begin(m);
}

static void
on_target_row(struct eu_req *req, PGresult *res, void *arg)
{
    struct move *m = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 422,
                           "Validation failed: placement '%s' does not exist or is a dedicated "
                           "placement that already holds a tenant",
                           m->to.name);
        return;
    }
    m->to.db = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    m->to.url = PQgetisnull(res, 0, 1) ? req->app->cfg->database_url
                                       : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    m->to.dedicated = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
    move_begin(m);
}

static void
move_cleanup(void *p)
{
    struct move *m = p;
    eu_admin_tables_free(m->rows);
}

void
eu_admin_tenants_move(struct eu_req *req)
{
    struct eu_tenant *t = eu_admin_tenant_writable(req);
    if (!t)
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *target = json_string_value(json_object_get(body, "placement"));
    if (!target || !target[0]) {
        eu_req_reply_error(req, 422, "Validation failed: placement is required");
        return;
    }
    if (strcmp(target, t->placement) == 0 || (strcmp(target, "dedicated") == 0 && t->dedicated)) {
        eu_req_reply_error(req, 422, "Validation failed: tenant '%s' is already in placement '%s'",
                           t->domain, t->placement);
        return;
    }
    struct move *m = eu_arena_calloc(req->arena, sizeof(*m));
    m->req = req;
    m->t = t;
    m->to.name = eu_arena_strdup(req->arena, target);
    eu_arena_on_free(req->arena, move_cleanup, m);
    /* A new database is made before the tenant stops answering: copying
     * the template takes a while, and nobody need wait for it. */
    if (strcmp(target, "dedicated") == 0) {
        eu_admin_placement_make_dedicated(req, t->domain, on_dedicated_target, m);
        return;
    }
    const char *params[] = {target, eu_arena_sprintf(req->arena, "%lld", (long long)t->id)};
    eu_req_control_stmt(req, &eu_admin_move_control_sql[MOVE_TARGET], 2, params, on_target_row, m);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_admin_lifecycle_move_routes[] = {
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/move", eu_admin_tenants_move, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
