/*
 * POST /admin/v1/tenants/:domain/move: a tenant moves to another placement
 * while it keeps serving, with a short write pause at the end.
 *
 * The move first takes the tenant's move lock on the source and starts
 * noting the rows it changes (lifecycle_live.c: triggers of tenant
 * migration 0064). Then, the tenant serving all along, a snapshot of its
 * rows is restored into the target under the same tenant id (lifecycle.c)
 * and the rows changed meanwhile are copied again, round after round, while
 * each round has fewer to copy. Then the write pause: the tenant is marked
 * moving (public requests answer 503 with Retry-After, admin writes 409,
 * its workers take no turn), its requests and turns in flight are let end,
 * the last changed rows are copied, its Redis keys are copied to the
 * target placement's Redis when that is another server, and the control row
 * is pointed at the target. Only then are the triggers dropped and the rows
 * removed from the source. Ids, tokens and Redis key names do not change.
 *
 * Until the control row names the target, the source is the tenant and the
 * target's rows are garbage that a failed move removes where it can reach
 * them. The pause holds the tenant in this process; another process
 * serving it hears of the switch within moments (the registry's LISTEN),
 * and until a little after that the source's triggers refuse its writes.
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
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* How long a move waits for the tenant's requests and background turns in
 * flight, polling every DRAIN_POLL_MS. */
#define DRAIN_MS 10000
#define DRAIN_POLL_MS 10
/* Catch-up rounds while the tenant serves: the pause comes once a round
 * copies at most PAUSE_ROWS rows, copies no fewer than the one before it,
 * or after MAX_ROUNDS. */
#define PAUSE_ROWS 200
#define MAX_ROUNDS 8
/* After the switch, the source refuses the tenant's writes this long more
 * before its triggers go: other processes hear of the switch (the control
 * row's NOTIFY) within moments, and write to the target after. */
#define SWITCH_GRACE_MS 500
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
     * tenant, and its Redis. $1 its name, $2 the tenant moving. */
    [MOVE_TARGET] = {"admin_move.target",
                     "SELECT p.database, p.database_url, p.kind = 'dedicated', p.redis_url"
                     " FROM placements p"
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

/* ---- figures for /metrics ---- */

/* Upper bounds of the write pause histogram's buckets, in seconds. */
static const double pause_buckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define NBUCKETS (sizeof(pause_buckets) / sizeof(pause_buckets[0]))

static struct {
    unsigned long long moved, failed;
    unsigned long long pause_count, pause_le[NBUCKETS];
    double pause_sum, pause_last;
} stats;

static void
stats_pause(long long ms)
{
    double s = (double)ms / 1000;
    stats.pause_count++;
    stats.pause_sum += s;
    stats.pause_last = s;
    for (size_t i = 0; i < NBUCKETS; i++)
        if (s <= pause_buckets[i])
            stats.pause_le[i]++;
}

char *
eu_admin_move_metrics(void)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    fprintf(f,
            "# HELP eunha_tenant_moves_total Tenant moves between placements, by result.\n"
            "# TYPE eunha_tenant_moves_total counter\n"
            "eunha_tenant_moves_total{result=\"moved\"} %llu\n"
            "eunha_tenant_moves_total{result=\"failed\"} %llu\n"
            "# HELP eunha_tenant_move_last_write_pause_seconds The last move's write pause.\n"
            "# TYPE eunha_tenant_move_last_write_pause_seconds gauge\n"
            "eunha_tenant_move_last_write_pause_seconds %.3f\n"
            "# HELP eunha_tenant_move_write_pause_seconds How long moves kept their tenant "
            "from writing.\n"
            "# TYPE eunha_tenant_move_write_pause_seconds histogram\n",
            stats.moved, stats.failed, stats.pause_last);
    for (size_t i = 0; i < NBUCKETS; i++)
        fprintf(f, "eunha_tenant_move_write_pause_seconds_bucket{le=\"%g\"} %llu\n",
                pause_buckets[i], stats.pause_le[i]);
    fprintf(f,
            "eunha_tenant_move_write_pause_seconds_bucket{le=\"+Inf\"} %llu\n"
            "eunha_tenant_move_write_pause_seconds_sum %.3f\n"
            "eunha_tenant_move_write_pause_seconds_count %llu\n",
            stats.pause_count, stats.pause_sum, stats.pause_count);
    fclose(f);
    return out;
}

/* ---- POST /admin/v1/tenants/:domain/move ---- */

/* Where a tenant's rows live. Owned by the request's arena. */
struct place {
    const char *name, *url, *db;
    const char *redis; /* the placement's Redis URL, NULL when there is no Redis */
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
    struct eu_admin_live *live; /* from move_begin until the move ends */
    bool listed;                /* in the moves list below */
    struct move *next;
    int rounds;
    long long last_round;
    long long started, paused; /* now_ms() at the start and at the pause */
    long long pause_ms;
    long long rows_copied, redis_keys, redis_keys_removed;
    bool redis_moved; /* its keys were copied to another Redis */
};

/* The moves under way in this process (the source's advisory lock stops a
 * second from another process): a second move of a tenant answers 409. */
static struct move *moves;

static bool
move_listed(int64_t tenant_id)
{
    for (struct move *m = moves; m; m = m->next)
        if (m->t->id == tenant_id)
            return true;
    return false;
}

static void
move_unlist(struct move *m)
{
    if (!m->listed)
        return;
    m->listed = false;
    for (struct move **p = &moves; *p; p = &(*p)->next) {
        if (*p == m) {
            *p = m->next;
            break;
        }
    }
}

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
    move_unlist(m);
    eu_admin_reply_eu_error(m->req, &m->err);
}

/* The source's triggers are gone: remove the target's copy. */
static void
on_undo_unwatched(int rc, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    struct eu_tenant *t = m->t;
    eu_req_enter(req);
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

/* The move failed before the control row named the target: the tenant goes
 * on where it was (it has served from there all along but for the pause),
 * and the target's copy (if any) is removed. m->err says why. */
static void
move_undo(struct move *m)
{
    struct eu_tenant *t = m->t;
    eu_log_warn("admin", "moving tenant '%s' to '%s' failed: %s", t->domain, m->to.name,
                m->err.message);
    stats.failed++;
    if (m->held)
        t->state = m->state;
    move_release(m);
    struct eu_admin_live *live = m->live;
    m->live = NULL;
    eu_admin_live_end(live, true, on_undo_unwatched, m);
}

/* The move is over: the answer. */
static void
move_reply(struct move *m)
{
    struct eu_req *req = m->req;
    move_unlist(m);
    json_t *j = eu_admin_tenant_json(req->app->registry, m->t, false);
    json_object_set_new(j, "write_pause_ms", json_integer(m->pause_ms));
    json_object_set_new(j, "total_ms", json_integer(now_ms() - m->started));
    json_object_set_new(j, "rows_copied", json_integer(m->rows_copied));
    json_object_set_new(j, "catch_up_rounds", json_integer(m->rounds));
    json_object_set_new(j, "redis_keys_copied", json_integer(m->redis_keys));
    json_object_set_new(j, "redis_keys_removed", json_integer(m->redis_keys_removed));
    eu_req_reply_json(req, 200, j);
}

static void
on_source_keys_removed(const struct eu_error *err, long long keys, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    /* The move took effect: keys left behind are only clutter. */
    if (err->status)
        eu_log_error("admin",
                     "tenant '%s' moved, but its keys on the source's Redis could not "
                     "all be removed: %s",
                     m->t->domain, err->message);
    m->redis_keys_removed = keys;
    move_reply(m);
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
    /* Its keys were copied to another Redis, which serves it now. */
    if (m->redis_moved) {
        eu_admin_redis_remove(req->app, m->from.redis, m->t->key_prefix, on_source_keys_removed, m);
        return;
    }
    move_reply(m);
}

/* The source's triggers are gone (and its connections closed, which a
 * dedicated placement's database must have before it is dropped). */
static void
on_switch_unwatched(int rc, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (m->from.dedicated)
        eu_admin_placement_drop(req->app, m->from.name, m->from.db, on_source_removed, m);
    else
        eu_admin_removal_start(req->app, m->from.url, m->from.db, m->t->id, on_source_removed, m);
}

static void
on_switch_grace_over(evutil_socket_t fd, short what, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    struct eu_admin_live *live = m->live;
    m->live = NULL;
    eu_admin_live_end(live, false, on_switch_unwatched, m);
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
    m->pause_ms = now_ms() - m->paused;
    stats.moved++;
    stats_pause(m->pause_ms);
    eu_log_info("admin",
                "moved tenant '%s' from placement '%s' to '%s': %lld rows, writes paused %lld ms",
                t->domain, m->from.name, m->to.name, m->rows_copied, m->pause_ms);
    struct timeval tv = {0, SWITCH_GRACE_MS * 1000};
    event_base_once(req->app->base, -1, EV_TIMEOUT, on_switch_grace_over, m, &tv);
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
    eu_admin_live_end(m->live, false, NULL, NULL);
    m->live = NULL;
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

/* Points the control row at the target: the move takes effect. */
static void
move_switch(struct move *m)
{
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

/* A step of the move ended with err: true, and the move undone, when it
 * failed. Enters the request's log context either way. */
static bool
step_failed(struct move *m, const struct eu_error *err)
{
    eu_req_enter(m->req);
    if (!err->status)
        return false;
    m->err = *err;
    move_undo(m);
    return true;
}
static void
on_redis_copied(const struct eu_error *err, long long keys, void *arg)
{
    struct move *m = arg;
    if (step_failed(m, err))
        return;
    m->redis_keys = keys;
    m->redis_moved = true;
    move_switch(m);
}

/* Whether two Redis URLs name one server and database however they are
 * written (a password or a trailing "/0" more or less): copying to itself
 * and then removing the source's keys would lose them. Names that differ
 * but reach one server (localhost and 127.0.0.1) are not told apart. */
static bool
redis_same(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return true;
    struct eu_redis_target ta = {0}, tb = {0};
    char err[256];
    bool same = false;
    if (eu_redis_url_parse(a, &ta, err, sizeof(err)) == 0) {
        if (eu_redis_url_parse(b, &tb, err, sizeof(err)) == 0) {
            same = ta.db == tb.db && ta.port == tb.port &&
                   strcmp(ta.host ? ta.host : "", tb.host ? tb.host : "") == 0 &&
                   strcmp(ta.unix_path ? ta.unix_path : "", tb.unix_path ? tb.unix_path : "") == 0;
            eu_redis_target_release(&tb);
        }
        eu_redis_target_release(&ta);
    }
    return same;
}

static void
on_target_finished(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    if (step_failed(m, err))
        return;
    /* Two placements on one Redis share its keys already. */
    if (m->from.redis && m->to.redis && !redis_same(m->from.redis, m->to.redis)) {
        eu_admin_redis_copy(m->req->app, m->from.redis, m->to.redis, m->t->key_prefix,
                            on_redis_copied, m);
        return;
    }
    move_switch(m);
}

/* Nothing of the tenant writes now, and the target has every row. */
static void
on_last_caught_up(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    if (step_failed(m, err))
        return;
    m->rows_copied += eu_admin_live_round_rows(m->live);
    eu_admin_live_finish_target(m->live, on_target_finished, m);
}

/* The notes left are the last. */
static void
on_source_paused(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    if (step_failed(m, err))
        return;
    eu_admin_live_catch_up(m->live, true, on_last_caught_up, m);
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
    /* Nothing of the tenant runs here now (a queue waiting for or taking a
     * turn holds a reference too), and nothing new starts; the source
     * refuses other processes' writes from now on. */
    eu_admin_live_pause(m->live, on_source_paused, m);
}

/* The write pause: mark the tenant moving and wait for what is running to
 * end. */
static void
move_pause(struct move *m)
{
    move_hold(m);
    m->paused = now_ms();
    m->drain_until = m->paused + DRAIN_MS;
    on_drain_tick(-1, 0, m);
}

static void
on_caught_up(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    if (step_failed(m, err))
        return;
    long long n = eu_admin_live_round_rows(m->live);
    m->rows_copied += n;
    m->rounds++;
    /* Another round while the backlog shrinks and is worth it. */
    if (n > PAUSE_ROWS && m->rounds < MAX_ROUNDS && (m->rounds == 1 || n < m->last_round)) {
        m->last_round = n;
        eu_admin_live_catch_up(m->live, false, on_caught_up, m);
        return;
    }
    move_pause(m);
}

static void
on_move_restored(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    eu_admin_tables_free(m->rows);
    m->rows = NULL;
    if (step_failed(m, err))
        return;
    m->restored = true;
    eu_admin_live_catch_up(m->live, false, on_caught_up, m);
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
    m->rows_copied = eu_admin_tables_rows(rows);
    eu_admin_restore_start(m->req->app, m->to.url, m->to.db, m->t->id, rows, on_move_restored, m);
}

/* Changes are noted from now on: the snapshot, taken after, misses none. */
static void
on_watching(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    if (step_failed(m, err))
        return;
    if (m->t->removed || m->t->state == EU_TENANT_DELETING) {
        eu_error_set(&m->err, 409, "Tenant '%s' is being deleted", m->t->domain);
        move_undo(m);
        return;
    }
    eu_admin_snapshot_start(eu_tenant_pool(m->req->app->registry, m->t), on_move_snapshot, m);
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
    if (t->moving || t->removed || t->state == EU_TENANT_DELETING || move_listed(t->id)) {
        eu_error_set(&m->err, 409, "Tenant '%s' is being moved or deleted", t->domain);
        move_undo(m);
        return;
    }
    m->from.name = eu_arena_strdup(req->arena, t->placement);
    m->from.url = eu_arena_strdup(req->arena,
                                  t->database_url ? t->database_url : req->app->cfg->database_url);
    m->from.db = eu_arena_strdup(req->arena, t->database);
    m->from.dedicated = t->dedicated;
    /* Whichever Redis the tenant used: its placement's, else the main one
     * (a move to a dedicated placement reads no placement row of its own). */
    m->from.redis =
        eu_arena_strdup(req->arena, t->redis_url ? t->redis_url : req->app->cfg->redis_url);
    /* Clearing the target's rows of the tenant would clear the source's. */
    if (strcmp(m->from.url, m->to.url) == 0 && strcmp(m->from.db, m->to.db) == 0) {
        eu_error_set(&m->err, 422,
                     "Validation failed: placement '%s' is the database '%s' "
                     "tenant '%s' is in",
                     m->to.name, m->to.db, t->domain);
        move_undo(m);
        return;
    }
    eu_log_info("admin", "moving tenant '%s' from placement '%s' to '%s'", t->domain, m->from.name,
                m->to.name);
    m->listed = true;
    m->next = moves;
    moves = m;
    m->started = now_ms();
    m->timer = evtimer_new(req->app->base, on_drain_tick, m);
    eu_arena_on_free(req->arena, free_event_cleanup, m->timer);
    m->live = eu_admin_live_new(req->app, m->from.url, m->from.db, m->to.url, m->to.db, t->id);
    eu_admin_live_watch(m->live, on_watching, m);
}

static void
on_dedicated_target(struct eu_req *req, const char *name, const char *database, void *arg)
{
    struct move *m = arg;
    m->to.name = name;
    m->to.db = database;
    m->to.url = req->app->cfg->database_url;
    m->to.dedicated = true;
    m->to.redis = req->app->cfg->redis_url;
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
    m->to.redis = PQgetisnull(res, 0, 3) ? req->app->cfg->redis_url
                                         : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
    move_begin(m);
}

static void
move_cleanup(void *p)
{
    struct move *m = p;
    eu_admin_tables_free(m->rows);
    move_unlist(m);
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
