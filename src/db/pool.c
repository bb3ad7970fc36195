/*
 * The asynchronous libpq pool.
 *
 * Every hand-over of a connection to a waiter goes through one deferred
 * "pump" event, never straight from acquire() or release(): callbacks then
 * never re-enter the pool, and a waiter's callback may acquire or release
 * again freely. Idle connections keep a read watch so a server restart (which
 * sends a FATAL message and closes) is noticed at once and the connection
 * dropped, instead of being found broken by the next request.
 *
 * A pool either owns connections or borrows them from a parent. A placement
 * (one database many tenants share) owns a small set of connections in a
 * parent pool; each tenant has a child pool over it, with its own limit on
 * connections held at once, its own FIFO of waiters and acquire timeout, and
 * its own figures. A child asks its parent for one connection at a time and
 * goes to the back of the parent's queue for the next, so tenants waiting on
 * one placement are served round-robin: a tenant with a hundred requests
 * queued gets one connection per turn, like a tenant with one. A connection
 * a child lent keeps the child as its lender until released, which is how
 * statements on it get the child's tenant as $1.
 *
 * Pools that own connections may share a budget: a cap on the connections they hold
 * together and on how many may be connecting at once. Without it a host
 * restart or a burst over many tenants asks PostgreSQL for every pool's
 * connections at the same moment, and on a small machine the forks, catalog
 * loads and first plans starve each other until every request times out. A
 * pool that finds no room queues (FIFO, one place per pool, so a tenant
 * wanting many connections cannot crowd out the others) and is served when a
 * connect finishes or a connection closes; at the cap, the least recently
 * used idle connection of a pool nobody is waiting on is closed to make room.
 */
#include "eunha/db.h"

#include <ctype.h>
#include <event2/event.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include "eunha/log.h"
#include "eunha/mem.h"

enum conn_state { C_CONNECTING, C_HOOK, C_IDLE, C_LENT };

/* Statements a connection keeps prepared. PostgreSQL plans an unnamed
 * statement on every execution, which for the API's larger queries costs more
 * than running them; a named one is planned once per connection. */
#define EU_DB_PREPARED_MAX 96

/*
 * Executions of prepared statements after which a connection first re-plans
 * (eu_db_pool_set_replan(), by default DISCARD PLANS), then again each time
 * that count doubles. PostgreSQL keeps a statement's generic plan until an
 * ANALYZE or VACUUM of a table it reads invalidates it, and makes it for the
 * table sizes of that moment: a placement's connections plan while its
 * tables are nearly empty, when every index that starts with tenant_id looks
 * as cheap as the primary key, and went on finding a status by id by walking
 * the tenant's statuses through one of those (20,000 index entries per post
 * with 20,000 statuses, against 4 re-planned). Re-planning at doubling
 * intervals keeps every plan within about a factor of two of the traffic it
 * was made under, for a few plans per statement over a connection's life.
 */
#define EU_DB_REPLAN_FIRST 256

/* pg_type.oid of bigint, the type of a tenant statement's $1. */
#define INT8_OID 20

struct eu_db_conn {
    struct eu_db_pool *pool;
    struct eu_db_pool *lender; /* the child pool it is lent through, or NULL */
    struct eu_db_conn *prev, *next;
    /* In the budget's idle list (least recently used first) while idle. */
    TAILQ_ENTRY(eu_db_conn) idle_entry;
    bool in_idle_list;
    PGconn *pg;
    struct event *ev; /* socket watch; recreated when libpq changes socket */
    int ev_fd;
    short ev_what;
    struct event *timer; /* connect timeout, then idle timeout */
    enum conn_state state;
    bool querying;
    eu_db_result_cb qcb;
    void *qarg;
    PGresult *last;
    char error[256];
    /* Named statements prepared on this connection, by hash of their text
     * (0 = free slot). A full table just means later statements go unnamed. */
    uint64_t prepared[EU_DB_PREPARED_MAX];
    /* While a statement is being prepared (or the connection re-plans):
     * what to run once it is. */
    struct pending_exec *pending;
    /* Prepared executions so far, and the count at which the connection
     * next re-plans (EU_DB_REPLAN_FIRST). */
    uint64_t executed, replan_at;
};

struct pending_exec {
    uint64_t hash;
    bool prepared; /* already prepared: the answer is the re-plan's */
    int nparams;
    char **params;
};

struct waiter {
    struct waiter *prev, *next;
    struct eu_db_pool *pool;
    eu_db_acquire_cb cb;
    void *arg;
    struct event *timer;
};

struct eu_db_budget {
    int refs; /* the creator and every pool using it */
    struct eu_db_budget_limits limits;
    int n_open, n_connecting;
    unsigned long long reclaimed;
    TAILQ_HEAD(, eu_db_pool) wanting; /* pools waiting for room, FIFO */
    int n_wanting;
    TAILQ_HEAD(, eu_db_conn) idle; /* least recently used first */
    bool kicking;                  /* budget_kick is running: closing a victim must not re-enter */
};

struct eu_db_pool {
    struct event_base *base;
    struct eu_db_budget *budget; /* NULL: only the pool's own limits apply */
    TAILQ_ENTRY(eu_db_pool) want_entry;
    bool wanting; /* in budget->wanting */
    char *name;
    char *conninfo;
    char *dbname;
    struct eu_db_pool_limits limits;
    struct eu_db_conn *conns;
    int n_open, n_connecting, n_lent, n_waiting;
    struct waiter *wait_head, *wait_tail;
    struct event *pump;
    eu_db_ready_fn hook;
    void *hook_arg;
    bool hook_done, hook_running;
    bool freeing;
    bool prepare; /* use named prepared statements */
    /* Non-zero for a tenant's pool: sent as $1 of every statement. */
    int64_t tenant_id;
    char tenant_param[24];
    /* Sent when a connection re-plans; NULL: DISCARD PLANS. */
    char *replan_sql;
    /* A child pool: owns no connections, borrows them from parent. */
    struct eu_db_pool *parent;
    bool requesting; /* one acquire outstanding at the parent */
    int n_children;  /* a parent's children not freed yet (child_cap) */
    /* After a failed connect: no new attempt until the backoff timer, and
     * then one at a time (a probe) until one succeeds, so a server that is
     * down, or a standby that refuses writes, costs one connection attempt
     * per backoff rather than one per waiter each time. */
    struct event *backoff;
    int backoff_ms;      /* the wait under way; 0 once it is over */
    int backoff_last_ms; /* the last wait, doubled by the next failure */
    bool failing;
};

static void pump_later(struct eu_db_pool *pool);
static void pending_free(struct pending_exec *p);
static void conn_close(struct eu_db_conn *c);
static void on_conn_socket(evutil_socket_t fd, short what, void *arg);
static void conn_start(struct eu_db_pool *pool);
static void backoff_start(struct eu_db_pool *pool);

/* ---- the shared budget ---- */

static void
want_remove(struct eu_db_pool *pool)
{
    if (!pool->wanting)
        return;
    TAILQ_REMOVE(&pool->budget->wanting, pool, want_entry);
    pool->wanting = false;
    pool->budget->n_wanting--;
}

static void
want_append(struct eu_db_pool *pool)
{
    if (pool->wanting)
        return;
    TAILQ_INSERT_TAIL(&pool->budget->wanting, pool, want_entry);
    pool->wanting = true;
    pool->budget->n_wanting++;
}

static void
idle_list_remove(struct eu_db_conn *c)
{
    if (!c->in_idle_list)
        return;
    TAILQ_REMOVE(&c->pool->budget->idle, c, idle_entry);
    c->in_idle_list = false;
}

/* Moves c to the most recently used end. */
static void
idle_list_append(struct eu_db_conn *c)
{
    if (!c->pool->budget)
        return;
    idle_list_remove(c);
    TAILQ_INSERT_TAIL(&c->pool->budget->idle, c, idle_entry);
    c->in_idle_list = true;
}

static bool
pool_needs_conn(const struct eu_db_pool *pool)
{
    return !pool->freeing && !pool->parent && pool->backoff_ms == 0 &&
           !(pool->failing && pool->n_connecting > 0) && pool->n_waiting > pool->n_connecting &&
           pool->n_open < pool->limits.max_connections;
}

/* True when one more connection fits now. At the cap it closes the least
 * recently used idle connection of a pool with nobody waiting, if any. */
static bool
budget_room(struct eu_db_budget *b)
{
    if (b->limits.max_connecting > 0 && b->n_connecting >= b->limits.max_connecting)
        return false;
    if (b->limits.max_open <= 0 || b->n_open < b->limits.max_open)
        return true;
    struct eu_db_conn *v = TAILQ_FIRST(&b->idle);
    while (v && v->pool->n_waiting > 0)
        v = TAILQ_NEXT(v, idle_entry);
    if (!v)
        return false;
    eu_log_debug("db", "closing idle connection to '%s' to make room", v->pool->name);
    b->reclaimed++;
    conn_close(v);
    return b->n_open < b->limits.max_open;
}

/* Room may have appeared: serve waiting pools in turn, one connection each
 * per round, while it lasts. */
static void
budget_kick(struct eu_db_budget *b)
{
    if (!b || b->kicking)
        return;
    b->kicking = true;
    struct eu_db_pool *p;
    while ((p = TAILQ_FIRST(&b->wanting))) {
        if (pool_needs_conn(p) && !budget_room(b))
            break; /* the head keeps its place */
        want_remove(p);
        if (!pool_needs_conn(p))
            continue;
        conn_start(p);
        if (pool_needs_conn(p))
            want_append(p); /* one connection per round: to the back */
    }
    b->kicking = false;
}

/* A connect attempt ended, whichever way. */
static void
connecting_done(struct eu_db_conn *c)
{
    c->pool->n_connecting--;
    if (c->pool->budget)
        c->pool->budget->n_connecting--;
}

struct eu_db_budget *
eu_db_budget_new(const struct eu_db_budget_limits *limits)
{
    struct eu_db_budget *b = eu_xcalloc(1, sizeof(*b));
    b->refs = 1;
    b->limits = *limits;
    TAILQ_INIT(&b->wanting);
    TAILQ_INIT(&b->idle);
    return b;
}

void
eu_db_budget_set_limits(struct eu_db_budget *b, const struct eu_db_budget_limits *limits)
{
    b->limits = *limits;
    budget_kick(b);
}

void
eu_db_budget_stats(const struct eu_db_budget *b, struct eu_db_budget_stats *out)
{
    out->open = b->n_open;
    out->connecting = b->n_connecting;
    out->pools_waiting = b->n_wanting;
    out->reclaimed = b->reclaimed;
}

void
eu_db_budget_unref(struct eu_db_budget *b)
{
    if (b && --b->refs == 0)
        free(b);
}

void
eu_db_pool_set_budget(struct eu_db_pool *pool, struct eu_db_budget *b)
{
    /* Only before the pool's first connection: counts are not moved. */
    if (pool->budget || pool->n_open || !b)
        return;
    b->refs++;
    pool->budget = b;
}

/* ---- waiters ---- */

static void
waiter_unlink(struct eu_db_pool *pool, struct waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        pool->wait_head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        pool->wait_tail = w->prev;
    pool->n_waiting--;
    event_free(w->timer);
}

static void
waiter_fail(struct eu_db_pool *pool, struct waiter *w, enum eu_db_status st)
{
    waiter_unlink(pool, w);
    eu_db_acquire_cb cb = w->cb;
    void *arg = w->arg;
    free(w);
    cb(NULL, st, arg);
}

static void
fail_all_waiters(struct eu_db_pool *pool, enum eu_db_status st)
{
    while (pool->wait_head)
        waiter_fail(pool, pool->wait_head, st);
}

static void
on_waiter_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct waiter *w = arg;
    eu_log_warn("db", "no connection for '%s' within %d s", w->pool->name,
                w->pool->limits.acquire_timeout_s);
    waiter_fail(w->pool, w, EU_DB_TIMEOUT);
}

/* ---- socket watching ---- */

static void
watch(struct eu_db_conn *c, short what)
{
    int fd = PQsocket(c->pg);
    if (c->ev && (c->ev_fd != fd || c->ev_what != what)) {
        event_free(c->ev);
        c->ev = NULL;
    }
    if (!c->ev) {
        c->ev = event_new(c->pool->base, fd, what | EV_PERSIST, on_conn_socket, c);
        c->ev_fd = fd;
        c->ev_what = what;
    }
    event_add(c->ev, NULL);
}

static void
set_timer(struct eu_db_conn *c, int seconds)
{
    struct timeval tv = {seconds, 0};
    event_add(c->timer, &tv);
}

static void
conn_save_error(struct eu_db_conn *c)
{
    const char *msg = c->pg ? PQerrorMessage(c->pg) : "out of memory";
    snprintf(c->error, sizeof(c->error), "%s", msg && *msg ? msg : "connection failed");
    size_t n = strlen(c->error);
    while (n && (c->error[n - 1] == '\n' || c->error[n - 1] == ' '))
        c->error[--n] = '\0';
}

/* ---- connection life ---- */

static void
conn_become_idle(struct eu_db_conn *c)
{
    c->state = C_IDLE;
    watch(c, EV_READ);
    if (c->pool->n_open > c->pool->limits.min_connections)
        set_timer(c, c->pool->limits.idle_timeout_s);
    else
        event_del(c->timer);
    idle_list_append(c);
    pump_later(c->pool);
    /* A pool waiting at the cap can now take this one's place, unless this
     * pool's own waiters claim it first (budget_room skips those). */
    if (c->pool->budget && c->pool->budget->n_wanting > 0 && c->pool->n_waiting == 0)
        budget_kick(c->pool->budget);
}

static void
conn_connected(struct eu_db_conn *c)
{
    struct eu_db_pool *pool = c->pool;
    connecting_done(c);
    pool->backoff_ms = 0;
    pool->backoff_last_ms = 0;
    pool->failing = false;
    if (pool->backoff)
        evtimer_del(pool->backoff);
    budget_kick(pool->budget);
    event_del(c->timer);
    PQsetnonblocking(c->pg, 1);
    eu_log_debug("db", "connected to '%s'", pool->name);
    if (pool->hook && !pool->hook_done && !pool->hook_running) {
        pool->hook_running = true;
        c->state = C_HOOK;
        pool->hook(c, pool->hook_arg);
        return;
    }
    conn_become_idle(c);
}

static void
conn_connect_failed(struct eu_db_conn *c)
{
    struct eu_db_pool *pool = c->pool;
    conn_save_error(c);
    eu_log_warn("db", "cannot connect to '%s': %s", pool->name, c->error);
    connecting_done(c);
    conn_close(c);
    backoff_start(pool);
    /* Nobody can be served soon: answer now rather than at the timeout. */
    if (pool->n_open == 0)
        fail_all_waiters(pool, EU_DB_UNAVAILABLE);
}

static void
finish_query(struct eu_db_conn *c, enum eu_db_status st)
{
    PGresult *res = c->last;
    c->last = NULL;
    c->querying = false;
    pending_free(c->pending); /* a PREPARE cut short by a broken connection */
    c->pending = NULL;
    eu_db_result_cb cb = c->qcb;
    void *arg = c->qarg;
    c->qcb = NULL;
    if (st == EU_DB_OK && res) {
        ExecStatusType rs = PQresultStatus(res);
        if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK)
            st = EU_DB_ERROR;
    } else if (st == EU_DB_OK) {
        st = EU_DB_UNAVAILABLE;
    }
    /* Cancelled by statement_timeout (or a cancel): the database is too busy
     * for this work now. Every caller, in a request, a transaction or a job,
     * treats that like waiting too long for a connection: a 503 or a retry,
     * not a server error. */
    if (st == EU_DB_ERROR && res && strcmp(eu_db_result_sqlstate(res), "57014") == 0) {
        eu_log_warn("db", "statement cancelled on '%s': %s", c->pool->name,
                    PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
        st = EU_DB_TIMEOUT;
    }
    if (st == EU_DB_ERROR && res)
        eu_log_debug("db", "query failed on '%s': %s", c->pool->name, PQresultErrorMessage(res));
    if (st == EU_DB_UNAVAILABLE) {
        conn_save_error(c);
        eu_log_warn("db", "connection to '%s' broke: %s", c->pool->name, c->error);
    }
    cb(st == EU_DB_OK || st == EU_DB_ERROR ? res : NULL, st, arg);
    PQclear(res);
}

static void
pending_free(struct pending_exec *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nparams; i++)
        free(p->params[i]);
    free(p->params);
    free(p);
}

static void
statement_name(uint64_t hash, char *buf, size_t len)
{
    snprintf(buf, len, "eu%016llx", (unsigned long long)hash);
}

/* The PREPARE (or the re-plan) answered: remember it and run the
 * statement, or report the PREPARE's error (the statement itself would fail
 * the same way). A re-plan that failed is only logged: the statement can run
 * on its old plan. */
static void
run_prepared(struct eu_db_conn *c)
{
    struct pending_exec *p = c->pending;
    c->pending = NULL;
    ExecStatusType rs = c->last ? PQresultStatus(c->last) : PGRES_FATAL_ERROR;
    bool ok = rs == PGRES_COMMAND_OK || (p->prepared && rs == PGRES_TUPLES_OK);
    if (!ok && p->prepared && PQstatus(c->pg) == CONNECTION_OK) {
        eu_log_warn("db", "cannot re-plan on '%s': %s", c->pool->name,
                    c->last ? PQresultErrorMessage(c->last) : "no result");
        ok = true;
    }
    if (!ok) {
        pending_free(p);
        finish_query(c, PQstatus(c->pg) == CONNECTION_OK ? EU_DB_OK : EU_DB_UNAVAILABLE);
        return;
    }
    PQclear(c->last);
    c->last = NULL;
    for (int i = 0; i < EU_DB_PREPARED_MAX && !p->prepared; i++) {
        if (!c->prepared[i]) {
            c->prepared[i] = p->hash;
            break;
        }
    }
    char name[24];
    statement_name(p->hash, name, sizeof(name));
    int sent =
        PQsendQueryPrepared(c->pg, name, p->nparams, (const char *const *)p->params, NULL, NULL, 0);
    pending_free(p);
    if (!sent) {
        finish_query(c, EU_DB_UNAVAILABLE);
        return;
    }
    watch(c, PQflush(c->pg) == 0 ? EV_READ : EV_READ | EV_WRITE);
}

static void
read_results(struct eu_db_conn *c)
{
    if (!PQconsumeInput(c->pg)) {
        finish_query(c, EU_DB_UNAVAILABLE);
        return;
    }
    while (!PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        if (!r && c->pending) {
            run_prepared(c);
            return;
        }
        if (!r) {
            finish_query(c, PQstatus(c->pg) == CONNECTION_OK ? EU_DB_OK : EU_DB_UNAVAILABLE);
            return;
        }
        /* Keep the first error of a multi-statement batch, else the last. */
        if (c->last && PQresultStatus(c->last) == PGRES_FATAL_ERROR) {
            PQclear(r);
        } else {
            PQclear(c->last);
            c->last = r;
        }
    }
}

static void
on_conn_socket(evutil_socket_t fd, short what, void *arg)
{
    struct eu_db_conn *c = arg;
    switch (c->state) {
    case C_CONNECTING:
        /* While connecting, libpq may close its socket and open another
         * (the next host of a multi-host conninfo: a dead primary, a
         * standby that target_session_attrs refuses), and the new one
         * often gets the same number. epoll forgot the closed one, but an
         * event for the same fd and flags would only be re-added, never
         * registered again, and the connect would wait for its timeout:
         * a new event after every step. Connects are rare; this is cheap. */
        if (c->ev) {
            event_free(c->ev);
            c->ev = NULL;
        }
        switch (PQconnectPoll(c->pg)) {
        case PGRES_POLLING_READING:
            watch(c, EV_READ);
            return;
        case PGRES_POLLING_WRITING:
            watch(c, EV_WRITE);
            return;
        case PGRES_POLLING_OK:
            conn_connected(c);
            return;
        default:
            conn_connect_failed(c);
            return;
        }
    case C_IDLE:
        /* An idle connection has nothing to read unless the server is
         * closing it (restart, terminate) or sent a notice. */
        if (!PQconsumeInput(c->pg) || PQstatus(c->pg) != CONNECTION_OK) {
            conn_save_error(c);
            eu_log_info("db", "idle connection to '%s' closed by server: %s", c->pool->name,
                        c->error);
            struct eu_db_pool *pool = c->pool;
            conn_close(c);
            pump_later(pool);
            return;
        }
        PGnotify *n;
        while ((n = PQnotifies(c->pg)))
            PQfreemem(n);
        return;
    case C_LENT:
    case C_HOOK:
        if (!c->querying) {
            /* The socket stays watched between queries (taking it off and
             * on again was two epoll_ctl calls a query): what arrives now
             * is a notice, or the server closing, which the next query
             * reports; a dead socket is taken off so it cannot spin. */
            if (!PQconsumeInput(c->pg) || PQstatus(c->pg) != CONNECTION_OK) {
                if (c->ev)
                    event_del(c->ev);
                return;
            }
            PGnotify *note;
            while ((note = PQnotifies(c->pg)))
                PQfreemem(note);
            return;
        }
        if (what & EV_WRITE) {
            int f = PQflush(c->pg);
            if (f < 0) {
                finish_query(c, EU_DB_UNAVAILABLE);
                return;
            }
            if (f == 0)
                watch(c, EV_READ);
        }
        if (what & EV_READ)
            read_results(c);
        return;
    }
}

static void
on_conn_timer(evutil_socket_t fd, short what, void *arg)
{
    struct eu_db_conn *c = arg;
    if (c->state == C_CONNECTING) {
        snprintf(c->error, sizeof(c->error), "connect timeout");
        connecting_done(c);
        eu_log_warn("db", "cannot connect to '%s': timeout", c->pool->name);
        struct eu_db_pool *pool = c->pool;
        conn_close(c);
        backoff_start(pool);
        if (pool->n_open == 0)
            fail_all_waiters(pool, EU_DB_UNAVAILABLE);
        return;
    }
    if (c->state == C_IDLE && c->pool->n_open > c->pool->limits.min_connections) {
        eu_log_debug("db", "closing idle connection to '%s'", c->pool->name);
        conn_close(c);
    }
}

static int statement_timeout_ms;

void
eu_db_set_statement_timeout(int ms)
{
    statement_timeout_ms = ms > 0 ? ms : 0;
}

char *
eu_db_conninfo_dbname(const char *conninfo)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
    if (!opts) {
        PQfreemem(err);
        return NULL;
    }
    char *name = NULL;
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "dbname") == 0 && o->val && *o->val && !name)
            name = eu_xstrdup(o->val);
    PQconninfoFree(opts);
    return name;
}

const char *
eu_db_conn_options(char *buf, size_t size)
{
    /* Generic plans only: statements are prepared once per connection, and
     * a custom plan would be planned again at every execution (milliseconds
     * for the render statement). The statements are written so a generic
     * plan is as good (see the page variants in sql.c). */
    /* No JIT: every statement here is short OLTP work, and a plan whose
     * estimate passes jit_above_cost (a scan of a table the statistics
     * think big) would spend hundreds of milliseconds compiling for a
     * statement that runs in one. test_plans checks every registered
     * statement's generic plan stays far below that estimate anyway. */
    /* And a statement that runs too long (a heavy search, a lock held
     * elsewhere) is cancelled rather than holding a tenant's connection:
     * the request answers 503 (query.c). No planner method is switched
     * off: a session-wide override mis-costs every plan that has no other
     * way (a small table without a usable index) by orders of magnitude. */
    snprintf(buf, size, "-c plan_cache_mode=force_generic_plan -c jit=off -c statement_timeout=%d",
             statement_timeout_ms);
    return buf;
}

static void
conn_start(struct eu_db_pool *pool)
{
    struct eu_db_conn *c = eu_xcalloc(1, sizeof(*c));
    c->pool = pool;
    c->ev_fd = -1;
    c->replan_at = EU_DB_REPLAN_FIRST;
    c->timer = evtimer_new(pool->base, on_conn_timer, c);
    char options[128];
    eu_db_conn_options(options, sizeof(options));
    const char *keys[] = {"dbname", "dbname", "application_name", "options", NULL};
    const char *vals[] = {pool->conninfo, pool->dbname, "eunha", options, NULL};
    if (!pool->dbname) {
        keys[1] = "application_name";
        vals[1] = "eunha";
        keys[2] = "options";
        vals[2] = options;
        keys[3] = NULL;
    }
    c->pg = PQconnectStartParams(keys, vals, 1);
    c->next = pool->conns;
    if (pool->conns)
        pool->conns->prev = c;
    pool->conns = c;
    pool->n_open++;
    pool->n_connecting++;
    if (pool->budget) {
        pool->budget->n_open++;
        pool->budget->n_connecting++;
    }
    c->state = C_CONNECTING;
    if (!c->pg || PQstatus(c->pg) == CONNECTION_BAD || PQsocket(c->pg) < 0) {
        /* Report from the loop, not from inside pump's caller. */
        set_timer(c, 0);
        return;
    }
    int t = pool->limits.acquire_timeout_s > 5 ? pool->limits.acquire_timeout_s : 5;
    set_timer(c, t);
    watch(c, EV_WRITE);
}

static void
conn_close(struct eu_db_conn *c)
{
    struct eu_db_pool *pool = c->pool;
    if (c->prev)
        c->prev->next = c->next;
    else
        pool->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pool->n_open--;
    idle_list_remove(c);
    if (c->ev)
        event_free(c->ev);
    event_free(c->timer);
    PQclear(c->last);
    pending_free(c->pending);
    if (c->pg)
        PQfinish(c->pg);
    free(c);
    if (pool->freeing && pool->n_open == 0)
        pump_later(pool); /* the pump frees a drained pool */
    if (pool->budget) {
        pool->budget->n_open--;
        budget_kick(pool->budget);
    }
}

/* ---- the pump ---- */

static void
pool_destroy(struct eu_db_pool *pool)
{
    if (pool->budget) {
        want_remove(pool);
        eu_db_budget_unref(pool->budget);
    }
    event_free(pool->pump);
    if (pool->backoff)
        event_free(pool->backoff);
    free(pool->name);
    free(pool->conninfo);
    free(pool->dbname);
    free(pool->replan_sql);
    free(pool);
}

/* ---- child pools ---- */

static void
on_granted(struct eu_db_conn *c, enum eu_db_status st, void *arg)
{
    struct eu_db_pool *child = arg;
    child->requesting = false;
    if (st == EU_DB_OK && (child->freeing || !child->wait_head)) {
        /* Its waiters gave up (or it is closing) while it queued. */
        eu_db_conn_release(c);
        pump_later(child);
        return;
    }
    if (st != EU_DB_OK) {
        /* The placement cannot serve now: tell the first in line. */
        if (child->wait_head)
            waiter_fail(child, child->wait_head, st == EU_DB_CLOSED ? EU_DB_UNAVAILABLE : st);
        pump_later(child);
        return;
    }
    struct waiter *w = child->wait_head;
    waiter_unlink(child, w);
    c->lender = child;
    child->n_lent++;
    eu_db_acquire_cb cb = w->cb;
    void *warg = w->arg;
    free(w);
    pump_later(child); /* the next turn, at the back of the parent's queue */
    cb(c, EU_DB_OK, warg);
}

/*
 * The connections a child may hold at once: its own limit, but while it
 * shares its parent with other children never the parent's last quarter
 * (at least one): a tenant whose statements run into statement_timeout,
 * or whose limit an operator raised to the placement's size, must leave
 * connections that only the other tenants can take, or they wait the
 * whole statement and answer 503. Never below 2, which work that holds
 * one connection and asks for another (a job's turn and its enqueue)
 * needs.
 */
static int
child_cap(const struct eu_db_pool *child)
{
    int cap = child->limits.max_connections;
    const struct eu_db_pool *parent = child->parent;
    if (parent->n_children > 1) {
        int keep = parent->limits.max_connections / 4;
        int most = parent->limits.max_connections - (keep > 1 ? keep : 1);
        if (most < 2)
            most = 2;
        if (cap > most)
            cap = most;
    }
    return cap;
}

static void
pump_child(struct eu_db_pool *child)
{
    if (child->freeing) {
        if (child->n_lent == 0 && !child->requesting)
            pool_destroy(child);
        return;
    }
    if (child->wait_head && !child->requesting && child->n_lent < child_cap(child)) {
        child->requesting = true;
        eu_db_pool_acquire(child->parent, on_granted, child);
    }
}

static void
on_backoff_over(evutil_socket_t fd, short what, void *arg)
{
    struct eu_db_pool *pool = arg;
    pool->backoff_ms = 0;
    pump_later(pool);
}

/* A connect failed: wait before the next, 100 ms doubling to 5 s until a
 * connect succeeds, so a server that is down is not hammered by every
 * request that arrives. The doubling follows the last wait, not the one
 * under way: that one is over (0) when its probe fails, and starting again
 * at 100 ms each time made a stopped server (and, behind a multi-host
 * URL, its standby) take ten connection attempts a second per pool. */
static void
backoff_start(struct eu_db_pool *pool)
{
    if (pool->freeing)
        return;
    pool->failing = true;
    int ms = pool->backoff_last_ms ? pool->backoff_last_ms * 2 : 100;
    if (ms > 5000)
        ms = 5000;
    if (!pool->backoff)
        pool->backoff = evtimer_new(pool->base, on_backoff_over, pool);
    pool->backoff_ms = ms;
    pool->backoff_last_ms = ms;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(pool->backoff, &tv);
}

static void
on_pump(evutil_socket_t fd, short what, void *arg)
{
    struct eu_db_pool *pool = arg;
    if (pool->parent) {
        pump_child(pool);
        return;
    }
    if (pool->freeing) {
        if (pool->n_open == 0)
            pool_destroy(pool);
        return;
    }
    struct eu_db_conn *c;
    if (pool->hook && !pool->hook_done) {
        if (pool->hook_running)
            return;
        for (c = pool->conns; c; c = c->next)
            if (c->state == C_IDLE)
                break;
        if (c) {
            pool->hook_running = true;
            c->state = C_HOOK;
            idle_list_remove(c);
            event_del(c->timer);
            pool->hook(c, pool->hook_arg);
            return;
        }
    } else {
        for (c = pool->conns; c && pool->wait_head; c = c->next) {
            if (c->state != C_IDLE)
                continue;
            struct waiter *w = pool->wait_head;
            waiter_unlink(pool, w);
            c->state = C_LENT;
            idle_list_remove(c);
            event_del(c->timer);
            pool->n_lent++;
            eu_db_acquire_cb cb = w->cb;
            void *warg = w->arg;
            free(w);
            cb(c, EU_DB_OK, warg);
            /* The callback may have changed the list; start over later. */
            pump_later(pool);
            return;
        }
    }
    /* Backing off with nothing open: nobody can be served for a while. */
    if (pool->backoff_ms && pool->n_open == 0 && pool->wait_head) {
        fail_all_waiters(pool, EU_DB_UNAVAILABLE);
        return;
    }
    while (pool_needs_conn(pool)) {
        if (pool->budget) {
            /* Pools already queued go first; this one joins the queue. */
            if (pool->wanting)
                return;
            if (pool->budget->n_wanting > 0 || !budget_room(pool->budget)) {
                want_append(pool);
                return;
            }
        }
        conn_start(pool);
    }
}

static void
pump_later(struct eu_db_pool *pool)
{
    event_active(pool->pump, EV_TIMEOUT, 0);
}

/* ---- public ---- */

struct eu_db_pool *
eu_db_pool_new(struct event_base *base, const char *name, const char *conninfo, const char *dbname,
               const struct eu_db_pool_limits *limits)
{
    struct eu_db_pool *pool = eu_xcalloc(1, sizeof(*pool));
    pool->base = base;
    pool->name = eu_xstrdup(name);
    pool->conninfo = eu_xstrdup(conninfo);
    pool->dbname = eu_xstrdup(dbname);
    pool->limits = *limits;
    pool->prepare = true;
    pool->pump = event_new(base, -1, 0, on_pump, pool);
    return pool;
}

struct eu_db_pool *
eu_db_pool_new_child(struct eu_db_pool *parent, const char *name,
                     const struct eu_db_pool_limits *limits)
{
    struct eu_db_pool *pool = eu_xcalloc(1, sizeof(*pool));
    pool->base = parent->base;
    pool->parent = parent;
    parent->n_children++;
    pool->name = eu_xstrdup(name);
    pool->limits = *limits;
    pool->prepare = parent->prepare;
    pool->pump = event_new(pool->base, -1, 0, on_pump, pool);
    return pool;
}

void
eu_db_pool_warm(struct eu_db_pool *pool)
{
    if (pool->parent || pool->freeing)
        return;
    while (pool->n_open < pool->limits.min_connections) {
        if (pool->budget && !budget_room(pool->budget))
            break;
        conn_start(pool);
    }
}

void
eu_db_pool_set_limits(struct eu_db_pool *pool, const struct eu_db_pool_limits *limits)
{
    pool->limits = *limits;
    struct eu_db_conn *c = pool->conns, *next;
    for (; c; c = next) {
        next = c->next;
        if (c->state == C_IDLE && pool->n_open > pool->limits.max_connections)
            conn_close(c);
        else if (c->state == C_IDLE)
            set_timer(c, pool->limits.idle_timeout_s);
    }
    pump_later(pool);
}

void
eu_db_pool_set_tenant(struct eu_db_pool *pool, int64_t tenant_id)
{
    pool->tenant_id = tenant_id;
    snprintf(pool->tenant_param, sizeof(pool->tenant_param), "%lld", (long long)tenant_id);
}

void
eu_db_pool_set_prepared(struct eu_db_pool *pool, bool on)
{
    pool->prepare = on;
}

void
eu_db_pool_set_replan(struct eu_db_pool *pool, const char *sql)
{
    free(pool->replan_sql);
    pool->replan_sql = sql ? eu_xstrdup(sql) : NULL;
}

void
eu_db_pool_set_ready_hook(struct eu_db_pool *pool, eu_db_ready_fn fn, void *arg)
{
    pool->hook = fn;
    pool->hook_arg = arg;
    pool->hook_done = false;
}

void
eu_db_pool_stats(const struct eu_db_pool *pool, struct eu_db_pool_stats *out)
{
    /* A child's open connections are the ones it holds. */
    out->open = pool->parent ? pool->n_lent : pool->n_open;
    out->busy = pool->n_lent;
    out->waiting = pool->n_waiting;
}

void
eu_db_pool_free(struct eu_db_pool *pool)
{
    if (!pool)
        return;
    pool->freeing = true;
    if (pool->parent) /* the parent is still there: it outlives its children */
        pool->parent->n_children--;
    fail_all_waiters(pool, EU_DB_CLOSED);
    if (pool->backoff)
        evtimer_del(pool->backoff);
    struct eu_db_conn *c = pool->conns, *next;
    for (; c; c = next) {
        next = c->next;
        if (c->state == C_IDLE || c->state == C_CONNECTING) {
            if (c->state == C_CONNECTING)
                connecting_done(c);
            conn_close(c);
        }
    }
    if (pool->budget)
        want_remove(pool);
    pump_later(pool);
}

void
eu_db_pool_acquire(struct eu_db_pool *pool, eu_db_acquire_cb cb, void *arg)
{
    struct waiter *w = eu_xcalloc(1, sizeof(*w));
    w->pool = pool;
    w->cb = cb;
    w->arg = arg;
    w->timer = evtimer_new(pool->base, on_waiter_timeout, w);
    struct timeval tv = {pool->limits.acquire_timeout_s, 0};
    event_add(w->timer, &tv);
    w->prev = pool->wait_tail;
    if (pool->wait_tail)
        pool->wait_tail->next = w;
    else
        pool->wait_head = w;
    pool->wait_tail = w;
    pool->n_waiting++;
    if (pool->freeing) {
        waiter_fail(pool, w, EU_DB_CLOSED); /* shutting down: refuse */
        return;
    }
    pump_later(pool);
}

struct deferred_fail {
    eu_db_result_cb cb;
    void *arg;
};

static void
on_deferred_fail(evutil_socket_t fd, short what, void *arg)
{
    struct deferred_fail *d = arg;
    d->cb(NULL, EU_DB_UNAVAILABLE, d->arg);
    free(d);
}

static void
after_send(struct eu_db_conn *c, int sent, eu_db_result_cb cb, void *arg)
{
    if (!sent) {
        conn_save_error(c);
        eu_log_warn("db", "cannot send query to '%s': %s", c->pool->name, c->error);
        struct deferred_fail *d = eu_xmalloc(sizeof(*d));
        d->cb = cb;
        d->arg = arg;
        event_base_once(c->pool->base, -1, EV_TIMEOUT, on_deferred_fail, d, NULL);
        return;
    }
    c->querying = true;
    c->qcb = cb;
    c->qarg = arg;
    watch(c, PQflush(c->pg) == 0 ? EV_READ : EV_READ | EV_WRITE);
}

uint64_t
eu_db_sql_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

/* Only plannable statements can be PREPAREd; utility statements (CREATE
 * DATABASE, LOCK, BEGIN) go unnamed. */
static bool
is_preparable(const char *sql)
{
    while (isspace((unsigned char)*sql))
        sql++;
    static const char *const verbs[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", NULL};
    for (int i = 0; verbs[i]; i++) {
        size_t n = strlen(verbs[i]);
        if (strncasecmp(sql, verbs[i], n) == 0 && !isalnum((unsigned char)sql[n]))
            return true;
    }
    return false;
}

/* Statements that passed the tenant-predicate check, by hash of their text:
 * checked once per process, not per connection or execution. Open
 * addressing; when full, statements are simply checked again. */
#define CHECKED_MAX 1024
static uint64_t checked[CHECKED_MAX];

static bool
tenant_statement_ok(const char *sql, uint64_t h)
{
    for (size_t i = h % CHECKED_MAX, n = 0; n < CHECKED_MAX; i = (i + 1) % CHECKED_MAX, n++) {
        if (checked[i] == h)
            return true;
        if (!checked[i])
            break;
    }
    char why[160];
    if (!eu_db_sql_check_tenant(sql, why, sizeof(why))) {
        eu_log_error("db", "refusing a statement that could reach other tenants' rows: %s: %.300s",
                     why, sql);
#ifndef NDEBUG
        abort(); /* a programming error: fail the test that ran it, loudly */
#endif
        return false;
    }
    for (size_t i = h % CHECKED_MAX, n = 0; n < CHECKED_MAX; i = (i + 1) % CHECKED_MAX, n++) {
        if (!checked[i]) {
            checked[i] = h;
            break;
        }
    }
    return true;
}

static void query_send(struct eu_db_conn *c, const char *sql, uint64_t h, int nparams,
                       const Oid *types, const char *const *params, eu_db_result_cb cb, void *arg);

void
eu_db_conn_query(struct eu_db_conn *c, const char *sql, int nparams, const char *const *params,
                 eu_db_result_cb cb, void *arg)
{
    eu_db_conn_query_kept(c, sql, eu_db_sql_hash(sql), nparams, params, cb, arg);
}

void
eu_db_conn_query_kept(struct eu_db_conn *c, const char *sql, uint64_t h, int nparams,
                      const char *const *params, eu_db_result_cb cb, void *arg)
{
    const struct eu_db_pool *tp = c->lender ? c->lender : c->pool;
    if (!tp->tenant_id) {
        query_send(c, sql, h, nparams, NULL, params, cb, arg);
        return;
    }
    /* A tenant's statement: its tenant goes first, as $1. */
    if (!tenant_statement_ok(sql, h)) {
        after_send(c, 0, cb, arg);
        return;
    }
    /* $1 is declared bigint, so a statement that needs no tenant (none of
     * its tables is a tenant's) may leave it unused; the rest are inferred. */
    const char *with_tenant[nparams + 1];
    Oid types[nparams + 1];
    with_tenant[0] = tp->tenant_param;
    types[0] = INT8_OID;
    for (int i = 0; i < nparams; i++) {
        with_tenant[i + 1] = params[i];
        types[i + 1] = 0;
    }
    query_send(c, sql, h, nparams + 1, types, with_tenant, cb, arg);
}

static void
query_send(struct eu_db_conn *c, const char *sql, uint64_t h, int nparams, const Oid *types,
           const char *const *params, eu_db_result_cb cb, void *arg)
{
    if (!c->pool->prepare || !is_preparable(sql)) {
        after_send(c, PQsendQueryParams(c->pg, sql, nparams, types, params, NULL, NULL, 0), cb,
                   arg);
        return;
    }
    char name[24];
    statement_name(h, name, sizeof(name));
    int free_slot = -1;
    bool prepared = false;
    for (int i = 0; i < EU_DB_PREPARED_MAX; i++) {
        if (c->prepared[i] == h) {
            prepared = true;
            break;
        }
        if (!c->prepared[i] && free_slot < 0)
            free_slot = i;
    }
    bool replan = prepared && ++c->executed >= c->replan_at;
    if (prepared && !replan) {
        after_send(c, PQsendQueryPrepared(c->pg, name, nparams, params, NULL, NULL, 0), cb, arg);
        return;
    }
    if (!prepared && free_slot < 0) {
        after_send(c, PQsendQueryParams(c->pg, sql, nparams, types, params, NULL, NULL, 0), cb,
                   arg);
        return;
    }
    /* First use on this connection: prepare, then run; or time to re-plan:
     * re-plan, then run (read_results sends the execution when the first
     * answer is in). The parameters must outlive this call, so they are
     * copied. */
    struct pending_exec *p = eu_xcalloc(1, sizeof(*p));
    p->hash = h;
    p->prepared = prepared;
    p->nparams = nparams;
    p->params = eu_xcalloc((size_t)(nparams ? nparams : 1), sizeof(char *));
    for (int i = 0; i < nparams; i++)
        p->params[i] = eu_xstrdup(params[i]);
    int sent;
    if (replan) {
        c->replan_at *= 2;
        sent = PQsendQuery(c->pg, c->pool->replan_sql ? c->pool->replan_sql : "DISCARD PLANS");
    } else {
        sent = PQsendPrepare(c->pg, name, sql, nparams, types);
    }
    if (sent)
        c->pending = p;
    else
        pending_free(p);
    after_send(c, sent, cb, arg);
}

void
eu_db_conn_exec(struct eu_db_conn *c, const char *sql, eu_db_result_cb cb, void *arg)
{
    after_send(c, PQsendQuery(c->pg, sql), cb, arg);
}

void
eu_db_conn_release(struct eu_db_conn *c)
{
    if (c->lender) {
        c->lender->n_lent--;
        pump_later(c->lender);
        c->lender = NULL;
    }
    struct eu_db_pool *pool = c->pool;
    pool->n_lent--;
    if (c->querying || PQstatus(c->pg) != CONNECTION_OK ||
        PQtransactionStatus(c->pg) != PQTRANS_IDLE || pool->freeing ||
        pool->n_open > pool->limits.max_connections) {
        c->querying = false;
        conn_close(c);
        pump_later(pool);
        return;
    }
    conn_become_idle(c);
}

void
eu_db_conn_ready_done(struct eu_db_conn *c, int rc)
{
    struct eu_db_pool *pool = c->pool;
    pool->hook_running = false;
    if (rc == 0) {
        pool->hook_done = true;
        conn_become_idle(c);
        return;
    }
    conn_close(c);
    fail_all_waiters(pool, EU_DB_UNAVAILABLE);
}

const char *
eu_db_conn_error(const struct eu_db_conn *c)
{
    return c->error;
}

/* ---- acquire + one statement + release ---- */

struct oneshot {
    eu_db_result_cb cb;
    void *arg;
    struct eu_db_conn *conn;
    const char *sql;
    uint64_t hash;
    bool owned; /* sql is a copy of ours */
    int nparams;
    char **params;
};

static void
oneshot_free(struct oneshot *o)
{
    for (int i = 0; i < o->nparams; i++)
        free(o->params[i]);
    free(o->params);
    if (o->owned)
        free((char *)o->sql);
    free(o);
}

static void
on_oneshot_result(PGresult *res, enum eu_db_status st, void *arg)
{
    struct oneshot *o = arg;
    /* Give the connection back before the caller's callback runs, so that
     * callback may acquire again without waiting for itself. The result does
     * not depend on the connection. */
    eu_db_conn_release(o->conn);
    o->cb(res, st, o->arg);
    oneshot_free(o);
}

static void
on_oneshot_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct oneshot *o = arg;
    if (!conn) {
        o->cb(NULL, st, o->arg);
        oneshot_free(o);
        return;
    }
    o->conn = conn;
    eu_db_conn_query_kept(conn, o->sql, o->hash, o->nparams, (const char *const *)o->params,
                          on_oneshot_result, o);
}

static void
pool_query(struct eu_db_pool *pool, const char *sql, uint64_t hash, bool copy, int nparams,
           const char *const *params, eu_db_result_cb cb, void *arg)
{
    struct oneshot *o = eu_xcalloc(1, sizeof(*o));
    o->cb = cb;
    o->arg = arg;
    o->sql = copy ? eu_xstrdup(sql) : sql;
    o->owned = copy;
    o->hash = hash;
    o->nparams = nparams;
    o->params = eu_xcalloc((size_t)(nparams ? nparams : 1), sizeof(char *));
    for (int i = 0; i < nparams; i++)
        o->params[i] = eu_xstrdup(params[i]);
    eu_db_pool_acquire(pool, on_oneshot_conn, o);
}

void
eu_db_pool_query(struct eu_db_pool *pool, const char *sql, int nparams, const char *const *params,
                 eu_db_result_cb cb, void *arg)
{
    pool_query(pool, sql, eu_db_sql_hash(sql), true, nparams, params, cb, arg);
}

void
eu_db_pool_query_kept(struct eu_db_pool *pool, const char *sql, uint64_t hash, int nparams,
                      const char *const *params, eu_db_result_cb cb, void *arg)
{
    pool_query(pool, sql, hash, false, nparams, params, cb, arg);
}

bool
eu_db_result_is_ok(const PGresult *res)
{
    if (!res)
        return false;
    ExecStatusType s = PQresultStatus(res);
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

const char *
eu_db_result_sqlstate(const PGresult *res)
{
    const char *s = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return s ? s : "";
}

int64_t *
eu_db_bigint_array(const char *text, size_t *n)
{
    *n = 0;
    /* As many elements as commas and one, at most. */
    size_t cap = 1;
    for (const char *p = text; p && *p; p++)
        cap += *p == ',';
    int64_t *out = NULL;
    for (const char *p = text; p && *p;) {
        if ((*p >= '0' && *p <= '9') || *p == '-') {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p) {
                p++;
                continue;
            }
            if (!out)
                out = eu_xcalloc(cap, sizeof(*out));
            if (*n < cap)
                out[(*n)++] = v;
            p = end;
        } else {
            p++;
        }
    }
    return out;
}
