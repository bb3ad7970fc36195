/*
 * Asynchronous libpq connection pools: one per placement database (its
 * connections, shared by its tenants) and one for the control database;
 * each tenant has a child pool that borrows from its placement's. Connections
 * open on demand with PQconnectStart (or at once, eu_db_pool_warm()), are
 * kept down to min_connections and closed above it after idle_timeout; a
 * failed connect backs off (100 ms doubling to 5 s) before the next. A caller
 * waiting longer than acquire_timeout is told so and answers 503. Everything
 * here runs on the loop thread and never blocks.
 */
#ifndef EUNHA_DB_H
#define EUNHA_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct eu_db_budget;
struct eu_db_pool;
struct eu_db_conn;
struct pg_result;
struct eu_sql;

enum eu_db_status {
    EU_DB_OK = 0,
    EU_DB_TIMEOUT = -1,     /* no connection within acquire_timeout, or the
                               statement was cancelled (statement_timeout) */
    EU_DB_UNAVAILABLE = -2, /* cannot connect, or the connection broke */
    EU_DB_ERROR = -3,       /* the server answered with an error */
    EU_DB_CLOSED = -4,      /* the pool is shutting down */
};

struct eu_db_pool_limits {
    int max_connections;
    int min_connections;
    int acquire_timeout_s;
    int idle_timeout_s;
};

struct eu_db_pool_stats {
    int open;    /* connected or connecting */
    int busy;    /* lent out */
    int waiting; /* callers queued for a connection */
};

/* What the tenant pools of one process may hold together. */
struct eu_db_budget_limits {
    int max_open;       /* connections open or connecting, all pools; 0 = no cap */
    int max_connecting; /* connect attempts in flight at once; 0 = no cap */
};

struct eu_db_budget_stats {
    int open;
    int connecting;
    int pools_waiting;            /* pools queued for room */
    unsigned long long reclaimed; /* idle connections closed to make room */
};

/* conn is NULL unless status is EU_DB_OK; the caller then owns it until
 * eu_db_conn_release(). */
typedef void (*eu_db_acquire_cb)(struct eu_db_conn *conn, enum eu_db_status status, void *arg);
/* res is the last result of the statement (NULL when status is not EU_DB_OK
 * or EU_DB_ERROR); it belongs to the pool and is cleared after the callback
 * returns, so copy what you keep. */
typedef void (*eu_db_result_cb)(struct pg_result *res, enum eu_db_status status, void *arg);
/* Runs on a freshly connected connection before it is first lent, e.g. to
 * bring the schema up to date. Call done(conn, 0) when ready, or
 * done(conn, -1) to drop the connection and fail the waiters. */
typedef void (*eu_db_ready_fn)(struct eu_db_conn *conn, void *arg);
typedef void (*eu_db_ready_done_fn)(struct eu_db_conn *conn, int rc);

/*
 * Creates a pool for database dbname on the server described by conninfo (a
 * URL or key=value string; dbname overrides its database, NULL keeps it).
 * name is used in logs and metrics. Returns a pool freed with
 * eu_db_pool_free().
 */
struct eu_db_pool *eu_db_pool_new(struct event_base *base, const char *name, const char *conninfo,
                                  const char *dbname, const struct eu_db_pool_limits *limits);
/*
 * Creates a pool that owns no connections and borrows parent's: at most
 * limits->max_connections at once, its own waiters and acquire timeout
 * (min_connections and idle_timeout_s do not apply). It asks parent for one
 * connection at a time, so children waiting on one parent are served
 * round-robin. parent must outlive it. Freed with eu_db_pool_free().
 */
struct eu_db_pool *eu_db_pool_new_child(struct eu_db_pool *parent, const char *name,
                                        const struct eu_db_pool_limits *limits);
/* Opens connections up to min_connections now instead of on demand. */
void eu_db_pool_warm(struct eu_db_pool *pool);
/* Changes the limits; excess idle connections close at once. */
void eu_db_pool_set_limits(struct eu_db_pool *pool, const struct eu_db_pool_limits *limits);
/*
 * Binds a pool to a tenant whose rows share a placement with other tenants'.
 * Every statement sent on a connection this pool lent then gets the tenant id
 * as $1 (the caller's parameters follow as $2, $3, ...), and a statement
 * that reads or writes a tenant table without a predicate on its tenant_id is
 * refused (EU_DB_UNAVAILABLE, logged; debug builds abort) before it reaches
 * PostgreSQL. Call before the first acquire.
 */
void eu_db_pool_set_tenant(struct eu_db_pool *pool, int64_t tenant_id);
/* Named prepared statements (the default) are planned once per connection;
 * turn them off for a PgBouncer in transaction mode older than 1.21, which
 * cannot follow them across server connections. */
void eu_db_pool_set_prepared(struct eu_db_pool *pool, bool on);
/* What a connection runs when it re-plans its prepared statements, after 256
 * executions and each time that count doubles: by default DISCARD PLANS, so
 * plans made while tables were small are made again as they grow. Simple
 * protocol, so it may hold several statements. */
void eu_db_pool_set_replan(struct eu_db_pool *pool, const char *sql);
/* Creates a budget shared by the pools given it with eu_db_pool_set_budget().
 * The caller drops its reference with eu_db_budget_unref(); each pool keeps
 * its own until it is freed, so the budget outlives the last pool. */
struct eu_db_budget *eu_db_budget_new(const struct eu_db_budget_limits *limits);
void eu_db_budget_set_limits(struct eu_db_budget *b, const struct eu_db_budget_limits *limits);
void eu_db_budget_stats(const struct eu_db_budget *b, struct eu_db_budget_stats *out);
void eu_db_budget_unref(struct eu_db_budget *b);
/* Puts a new pool (before its first acquire) under a budget; a later call is
 * ignored. */
void eu_db_pool_set_budget(struct eu_db_pool *pool, struct eu_db_budget *b);
/* Sets a hook run once per pool on its first connection (see eu_db_ready_fn);
 * later connections skip it once it has succeeded. */
void eu_db_pool_set_ready_hook(struct eu_db_pool *pool, eu_db_ready_fn fn, void *arg);
void eu_db_pool_stats(const struct eu_db_pool *pool, struct eu_db_pool_stats *out);
/* Fails every waiter with EU_DB_CLOSED, closes idle connections, and frees
 * the pool once every lent connection has come back. */
void eu_db_pool_free(struct eu_db_pool *pool);

/* statement_timeout for connections opened from now on, in every pool
 * (0: none). Set at start and on reload. */
void eu_db_set_statement_timeout(int ms);

/*
 * The libpq "options" every pool connection starts with: generic plans only,
 * no JIT, and the statement_timeout set above. Written into buf (a
 * terminated string, truncated to size); returns buf. Tests open their
 * plan-checking connections with it, so they plan as eunha does.
 */
const char *eu_db_conn_options(char *buf, size_t size);
/* The database a connection string (URL or key=value) names, as a heap
 * string the caller frees; NULL when it names none or does not parse. */
char *eu_db_conninfo_dbname(const char *conninfo);

/* Asks for a connection; cb runs later (never from inside this call). */
void eu_db_pool_acquire(struct eu_db_pool *pool, eu_db_acquire_cb cb, void *arg);
/* Sends one statement with text parameters (NULL = SQL NULL) and calls cb
 * with its result. sql and params are copied before it returns. A SELECT,
 * INSERT, UPDATE, DELETE or WITH statement is prepared under a name derived
 * from its text on first use on a connection and reused after, so build SQL
 * from constant text and pass values as parameters. */
void eu_db_conn_query(struct eu_db_conn *conn, const char *sql, int nparams,
                      const char *const *params, eu_db_result_cb cb, void *arg);
/* Sends several ';'-separated statements without parameters (simple query
 * protocol: one implicit transaction); cb gets the last result. */
void eu_db_conn_exec(struct eu_db_conn *conn, const char *sql, eu_db_result_cb cb, void *arg);
/* Gives the connection back; a broken one or one left inside a transaction is
 * closed instead of reused. */
void eu_db_conn_release(struct eu_db_conn *conn);
/* Finishes the ready hook (see eu_db_ready_fn). */
void eu_db_conn_ready_done(struct eu_db_conn *conn, int rc);
/* The error message of the connection's last failure, for logs. Borrowed. */
const char *eu_db_conn_error(const struct eu_db_conn *conn);

/* acquire + one statement + release. */
void eu_db_pool_query(struct eu_db_pool *pool, const char *sql, int nparams,
                      const char *const *params, eu_db_result_cb cb, void *arg);
/*
 * The two above for a text that outlives every query made with it (a
 * registered statement's, see sql.h), with its eu_db_sql_hash(): the pool
 * then neither copies nor hashes the text again at each execution.
 */
void eu_db_conn_query_kept(struct eu_db_conn *conn, const char *sql, uint64_t hash, int nparams,
                           const char *const *params, eu_db_result_cb cb, void *arg);
void eu_db_pool_query_kept(struct eu_db_pool *pool, const char *sql, uint64_t hash, int nparams,
                           const char *const *params, eu_db_result_cb cb, void *arg);
/* The hash the pool names prepared statements by. */
uint64_t eu_db_sql_hash(const char *sql);

/* eu_db_conn_query() and eu_db_pool_query() of a registered statement (see
 * sql.h); a paged one must go through eu_req_stmt_page(). */
void eu_db_conn_stmt(struct eu_db_conn *conn, const struct eu_sql *s, int nparams,
                     const char *const *params, eu_db_result_cb cb, void *arg);
void eu_db_pool_stmt(struct eu_db_pool *pool, const struct eu_sql *s, int nparams,
                     const char *const *params, eu_db_result_cb cb, void *arg);

/* The tables whose rows belong to a tenant, NULL-terminated, each before the
 * tables it references (the order to empty them in). */
extern const char *const eu_db_tenant_tables[];

/*
 * True when every reference to a tenant table in sql is matched by a mention
 * of its tenant_id (see sqlcheck.c for the exact rule). On false, why gets a
 * message naming the table. May be called from any thread.
 */
bool eu_db_sql_check_tenant(const char *sql, char *why, size_t whylen);

/* True when the result is a successful command or rows. */
bool eu_db_result_is_ok(const struct pg_result *res);
/* The SQLSTATE of an error result ("23505"), or "" */
const char *eu_db_result_sqlstate(const struct pg_result *res);

/*
 * The elements of a bigint[] in PostgreSQL's text form ("{1,2,3}"; NULL or
 * "{}" is empty) into a new array; *n gets their count. Returns NULL when
 * there are none; the caller frees the array (free()).
 */
int64_t *eu_db_bigint_array(const char *text, size_t *n);

#endif
