/*
 * The process's life: start-up (config, control database, template, tenant
 * registry), the listeners, signals, and a bounded drain on SIGTERM.
 *
 * Start-up talks to PostgreSQL with blocking libpq calls: the loop is not
 * running yet and nothing can wait on it. From the moment the listeners are
 * up, every database call goes through the asynchronous pools.
 */
#include "eunha/app.h"
#include "eunha/serve.h"

#include <errno.h>
#include <event2/event.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef EUNHA_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "eunha/admin.h"
#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/audience.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/dblisten.h"
#include "eunha/fetch.h"
#include "eunha/filters.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mail.h"
#include "eunha/mediaemoji.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/migrate.h"
#include "eunha/notify.h"
#include "eunha/push.h"
#include "eunha/queue.h"
#include "eunha/redis.h"
#include "eunha/router.h"
#include "eunha/routes.h"
#include "eunha/secrets.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/stream.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"

/* How long SIGTERM waits for in-flight requests before closing anyway. */
#define DRAIN_SECONDS 10
/* app->io: its jobs wait on the disk, not the CPU; two, so a read need not
 * wait for one slow fsync. */
#define IO_THREADS 2

/* The background-work scheduler (src/queue/); kept here because struct
 * eu_app predates it. */
static struct eu_queues *queues;

static void
notify(const char *state)
{
#ifdef EUNHA_HAVE_SYSTEMD
    sd_notify(0, state);
#else
    (void)state;
#endif
}

/* Returns a blocking connection to dbname on conninfo's server (caller
 * PQfinish-es it), or NULL after logging. */
static PGconn *
connect_blocking(const char *conninfo, const char *dbname)
{
    const char *keys[] = {"dbname", "dbname", "application_name", NULL};
    const char *vals[] = {conninfo, dbname, "eunha", NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (PQstatus(pg) != CONNECTION_OK) {
        eu_log_debug("app", "cannot connect to '%s': %s", dbname, PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

/*
 * The "postgres" database of the control database's server, opened once
 * for the start-up's checks and creations: a connection attempt to a
 * database that does not exist yet costs the server a backend as much as
 * one that succeeds, and a new installation (or a test server) creates
 * several.
 */
struct db_admin {
    const char *conninfo;
    PGconn *pg;
    bool tried;
};

static PGconn *
db_admin_conn(struct db_admin *a)
{
    if (!a)
        return NULL;
    if (!a->tried) {
        a->tried = true;
        a->pg = connect_blocking(a->conninfo, "postgres");
    }
    return a->pg;
}

/* 1 when dbname exists, 0 when it does not, -1 when that is unknown. */
static int
db_exists(PGconn *admin, const char *dbname)
{
    if (!admin)
        return -1;
    const char *params[] = {dbname};
    PGresult *r = PQexecParams(admin, "SELECT 1 FROM pg_database WHERE datname = $1", 1, NULL,
                               params, NULL, NULL, 0);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) > 0 : -1;
    PQclear(r);
    return rc;
}

/* Creates dbname (optionally from a template) through admin, or through
 * a "postgres" connection of its own when admin is NULL. Another process
 * creating it at the same time is fine. */
static int
create_database(const char *conninfo, PGconn *admin, const char *dbname, const char *template_db,
                const char *clause)
{
    PGconn *pg = admin ? admin : connect_blocking(conninfo, "postgres");
    if (!pg) {
        eu_log_error("app", "cannot connect to the PostgreSQL server to create '%s'", dbname);
        return -1;
    }
    char *qname = PQescapeIdentifier(pg, dbname, strlen(dbname));
    char *qtpl = template_db ? PQescapeIdentifier(pg, template_db, strlen(template_db)) : NULL;
    char *sql = eu_xasprintf("CREATE DATABASE %s%s%s%s", qname, qtpl ? " TEMPLATE " : "",
                             qtpl ? qtpl : "", clause);
    PGresult *r = PQexec(pg, sql);
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    int rc = 0;
    if (PQresultStatus(r) != PGRES_COMMAND_OK && !(state && strcmp(state, "42P04") == 0)) {
        eu_log_error("app", "cannot create database '%s': %s", dbname, PQresultErrorMessage(r));
        rc = -1;
    } else {
        eu_log_info("app", "created database '%s'", dbname);
    }
    PQclear(r);
    free(sql);
    PQfreemem(qname);
    PQfreemem(qtpl);
    if (pg != admin)
        PQfinish(pg);
    return rc;
}

/* Connects to dbname, creating it first if it does not exist: as a copy of
 * template_db when one is given (a copy of a migrated template takes a
 * fraction of the time of running every migration again), empty when it is
 * NULL or the copy fails (another process is connected to the template).
 * admin (NULL for a server other than the control database's) tells
 * whether it exists without a connection attempt. */
static PGconn *
open_or_create(const char *conninfo, struct db_admin *admin, const char *dbname,
               const char *template_db, const char *clause)
{
    PGconn *apg = db_admin_conn(admin);
    int exists = db_exists(apg, dbname);
    if (exists != 0) {
        PGconn *pg = connect_blocking(conninfo, dbname);
        if (pg || exists == 1)
            return pg;
    }
    if ((!template_db || create_database(conninfo, apg, dbname, template_db, clause) < 0) &&
        create_database(conninfo, apg, dbname, NULL, clause) < 0)
        return NULL;
    PGconn *pg = connect_blocking(conninfo, dbname);
    if (!pg)
        eu_log_error("app", "cannot connect to database '%s'", dbname);
    return pg;
}

/* With no pooled placement yet (a new installation), adds the default one:
 * database "<control>_main" on the control database's server. */
static int
ensure_default_placement(struct eu_app *app, PGconn *pg)
{
    char *db = eu_xasprintf("%s_main", app->control_dbname);
    const char *params[] = {db};
    PGresult *r = PQexecParams(pg,
                               "INSERT INTO placements (name, kind, database) SELECT 'main',"
                               " 'pooled', $1 WHERE NOT EXISTS (SELECT 1 FROM placements"
                               " WHERE kind = 'pooled') ON CONFLICT DO NOTHING",
                               1, NULL, params, NULL, NULL, 0);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : -1;
    if (rc < 0)
        eu_log_error("app", "cannot add the default placement: %s", PQresultErrorMessage(r));
    PQclear(r);
    free(db);
    return rc;
}

/* Creates (if missing) and migrates every placement's database. One on the
 * control database's server starts as a copy of the migrated template. */
static int
migrate_placements(struct eu_app *app, PGconn *control, struct db_admin *admin)
{
    PGresult *r =
        PQexec(control, "SELECT name, database, database_url FROM placements ORDER BY id");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        eu_log_error("app", "cannot list placements: %s", PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    int rc = 0;
    const char *clause = eu_config_create_db_clause(app->cfg);
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        bool here = PQgetisnull(r, i, 2);
        const char *url = here ? app->cfg->database_url : PQgetvalue(r, i, 2);
        PGconn *pg = here ? open_or_create(url, admin, PQgetvalue(r, i, 1),
                                           app->cfg->database_template, clause)
                          : open_or_create(url, NULL, PQgetvalue(r, i, 1), NULL, clause);
        if (!pg || eu_migrate_blocking(pg, eu_tenant_migrations, eu_tenant_migrations_count,
                                       PQgetvalue(r, i, 1)) < 0) {
            eu_log_error("app", "cannot migrate placement '%s'", PQgetvalue(r, i, 0));
            rc = -1;
        }
        if (pg)
            PQfinish(pg);
    }
    PQclear(r);
    return rc;
}

/* Whether the template's comment says it holds every tenant migration of
 * this binary (eu_migrate_stamp), read on the admin connection: the
 * processes of a fleet (and every test server) start without connecting
 * to it, which would also hold off another process copying it. */
static bool
template_is_current(struct db_admin *admin, const char *dbname, const char *stamp)
{
    PGconn *apg = db_admin_conn(admin);
    if (!apg)
        return false;
    const char *params[] = {dbname};
    PGresult *r = PQexecParams(apg,
                               "SELECT shobj_description(oid, 'pg_database') FROM pg_database"
                               " WHERE datname = $1",
                               1, NULL, params, NULL, NULL, 0);
    bool current = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
                   !PQgetisnull(r, 0, 0) && strcmp(PQgetvalue(r, 0, 0), stamp) == 0;
    PQclear(r);
    return current;
}

/* Migrates the template unless its comment says it is current, and then
 * stamps it. A stamp that cannot be written only costs the next start a
 * connection. */
static int
prepare_template(const struct eu_config *cfg, struct db_admin *admin)
{
    char *stamp = eu_migrate_stamp(eu_tenant_migrations, eu_tenant_migrations_count);
    int rc = 0;
    if (!template_is_current(admin, cfg->database_template, stamp)) {
        PGconn *pg = open_or_create(cfg->database_url, admin, cfg->database_template, NULL,
                                    eu_config_create_db_clause(cfg));
        rc = pg ? eu_migrate_blocking(pg, eu_tenant_migrations, eu_tenant_migrations_count,
                                      cfg->database_template)
                : -1;
        if (rc == 0) {
            char *q =
                PQescapeIdentifier(pg, cfg->database_template, strlen(cfg->database_template));
            char *lit = PQescapeLiteral(pg, stamp, strlen(stamp));
            char *sql = eu_xasprintf("COMMENT ON DATABASE %s IS %s", q, lit);
            PGresult *r = PQexec(pg, sql);
            if (PQresultStatus(r) != PGRES_COMMAND_OK)
                eu_log_warn("app", "cannot stamp template '%s': %s", cfg->database_template,
                            PQresultErrorMessage(r));
            PQclear(r);
            free(sql);
            PQfreemem(lit);
            PQfreemem(q);
        }
        /* CREATE DATABASE ... TEMPLATE refuses while anyone is connected to it. */
        if (pg)
            PQfinish(pg);
    }
    free(stamp);
    return rc;
}

/* Brings the template, the control database and every placement up to
 * date. The template goes first, so a new placement is a copy of it. With
 * keep, the control database's connection is handed over on success (the
 * caller PQfinish-es it) for the tenants' first read: one backend fewer. */
static int
prepare_databases(struct eu_app *app, PGconn **keep)
{
    const struct eu_config *cfg = app->cfg;
    struct db_admin admin = {.conninfo = cfg->database_url};
    PGconn *pg = NULL;
    int rc = prepare_template(cfg, &admin);
    if (rc < 0)
        goto out;
    rc = -1;
    pg = open_or_create(cfg->database_url, &admin, app->control_dbname, NULL,
                        eu_config_create_db_clause(cfg));
    if (!pg)
        goto out;
    rc = eu_migrate_blocking(pg, eu_control_migrations, eu_control_migrations_count,
                             app->control_dbname);
    if (rc == 0)
        rc = ensure_default_placement(app, pg);
    if (rc == 0)
        rc = migrate_placements(app, pg, &admin);
    if (rc == 0 && keep)
        *keep = pg;
    else
        PQfinish(pg);
out:
    if (admin.pg)
        PQfinish(admin.pg);
    return rc;
}

/* Reads every tenant over pg, the control database's connection, which it
 * closes. */
static int
load_tenants_blocking(struct eu_app *app, PGconn *pg)
{
    PGresult *r = PQexec(pg, "SELECT " EU_TENANT_COLUMNS " FROM " EU_TENANT_FROM " ORDER BY t.id");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        eu_log_error("app", "cannot load tenants: %s", PQresultErrorMessage(r));
        PQclear(r);
        PQfinish(pg);
        return -1;
    }
    for (int i = 0; i < PQntuples(r); i++) {
        struct eu_tenant row;
        eu_tenant_from_row(r, i, &row);
        eu_registry_upsert(app->registry, &row);
    }
    eu_log_info("app", "loaded %d tenants", PQntuples(r));
    PQclear(r);
    PQfinish(pg);
    return 0;
}

/* ---- tenants changed by any process (control migration 0005) ---- */

/*
 * Changed tenants' ids wait here a moment and are read in one statement,
 * one at a time: a burst of changes (thousands of tenants made by a
 * script) is a few reads, not one each at once. Past SYNC_MAX waiting ids
 * everything is read again instead.
 */
#define SYNC_DELAY_MS 20
#define SYNC_MAX 1000

static struct {
    struct eu_app *app;
    int64_t ids[SYNC_MAX];
    size_t n;
    bool all;  /* read every tenant */
    bool busy; /* a read is under way */
    struct event *timer;
} sync_state;

static void sync_later(void);

/* Applies rows of every tenant (reload); true when it could. */
static bool
apply_all(struct eu_app *app, PGresult *res, enum eu_db_status st)
{
    if (app->stopping)
        return false;
    if (st != EU_DB_OK) {
        eu_log_error("app", "cannot reload tenants: %s",
                     res ? PQresultErrorMessage(res) : "database unavailable");
        return false;
    }
    eu_registry_mark_all(app->registry);
    for (int i = 0; i < PQntuples(res); i++) {
        struct eu_tenant row;
        eu_tenant_from_row(res, i, &row);
        eu_registry_upsert(app->registry, &row);
    }
    eu_registry_sweep(app->registry);
    eu_log_info("app", "reloaded %d tenants", PQntuples(res));
    return true;
}

static void
sync_done(bool ok)
{
    sync_state.busy = false;
    if (!ok)
        sync_state.all = true; /* try everything again in a moment */
    if (sync_state.all || sync_state.n)
        sync_later();
}

static void
on_all_read(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_app *app = arg;
    if (app->stopping)
        return;
    sync_done(apply_all(app, res, st));
}

/* The rows of the ids read (ids, a heap copy, is freed here). */
struct sync_read {
    struct eu_app *app;
    int64_t *ids;
    size_t n;
};

static void
on_some_read(PGresult *res, enum eu_db_status st, void *arg)
{
    struct sync_read *r = arg;
    struct eu_app *app = r->app;
    if (app->stopping) {
        free(r->ids);
        free(r);
        return;
    }
    if (st != EU_DB_OK) {
        eu_log_warn("app", "cannot read changed tenants: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        free(r->ids);
        free(r);
        sync_done(false);
        return;
    }
    for (int i = 0; i < PQntuples(res); i++) {
        struct eu_tenant row;
        eu_tenant_from_row(res, i, &row);
        eu_registry_upsert(app->registry, &row);
        for (size_t k = 0; k < r->n; k++)
            if (r->ids[k] == row.id)
                r->ids[k] = 0; /* seen */
    }
    /* Asked for and not there: deleted. */
    for (size_t k = 0; k < r->n; k++) {
        struct eu_tenant *t = r->ids[k] ? eu_registry_find_id(app->registry, r->ids[k]) : NULL;
        if (t) {
            eu_log_info("app", "tenant '%s' is gone from the control database", t->domain);
            eu_registry_remove(app->registry, t);
        }
    }
    free(r->ids);
    free(r);
    sync_done(true);
}

static void
on_sync_timer(evutil_socket_t fd, short what, void *arg)
{
    struct eu_app *app = sync_state.app;
    if (app->stopping || sync_state.busy)
        return;
    sync_state.busy = true;
    if (sync_state.all) {
        sync_state.all = false;
        sync_state.n = 0;
        eu_db_pool_query(app->control,
                         "SELECT " EU_TENANT_COLUMNS " FROM " EU_TENANT_FROM " ORDER BY t.id", 0,
                         NULL, on_all_read, app);
        return;
    }
    struct sync_read *r = eu_xmalloc(sizeof(*r));
    r->app = app;
    r->n = sync_state.n;
    r->ids = eu_xmalloc(r->n * sizeof(*r->ids));
    memcpy(r->ids, sync_state.ids, r->n * sizeof(*r->ids));
    sync_state.n = 0;
    char *list = eu_xmalloc(r->n * 21 + 3), *o = list;
    *o++ = '{';
    for (size_t k = 0; k < r->n; k++)
        o += sprintf(o, "%s%lld", k ? "," : "", (long long)r->ids[k]);
    *o++ = '}';
    *o = '\0';
    const char *p[] = {list};
    eu_db_pool_query(app->control,
                     "SELECT " EU_TENANT_COLUMNS " FROM " EU_TENANT_FROM
                     " WHERE t.id = ANY($1::bigint[])",
                     1, p, on_some_read, r);
    free(list);
}

static void
sync_later(void)
{
    if (sync_state.busy || evtimer_pending(sync_state.timer, NULL))
        return;
    struct timeval tv = {0, SYNC_DELAY_MS * 1000};
    evtimer_add(sync_state.timer, &tv);
}

/* A tenant's row changed, in this process or another (payload its id),
 * or the listener (re)connected (NULL): what was announced before may
 * have been missed, so every tenant is read again. */
static void
on_tenants_changed(const char *payload, void *arg)
{
    static bool first = true;
    if (!payload) {
        /* The first connection comes right after the start-up load. */
        if (!first)
            sync_state.all = true;
        first = false;
    } else {
        char *end;
        long long id = strtoll(payload, &end, 10);
        if (*end || id <= 0)
            return;
        bool known = false;
        for (size_t k = 0; k < sync_state.n && !known; k++)
            known = sync_state.ids[k] == id;
        if (!known && sync_state.n < SYNC_MAX)
            sync_state.ids[sync_state.n++] = id;
        else if (!known)
            sync_state.all = true;
    }
    if (sync_state.all || sync_state.n)
        sync_later();
}

void
eu_app_reload_tenants(struct eu_app *app)
{
    /* The same read as after the listener reconnects. */
    sync_state.all = true;
    sync_later();
}

static void
reload_config(struct eu_app *app)
{
    struct eu_config *cfg = eu_xcalloc(1, sizeof(*cfg));
    char err[512];
    eu_config_init_defaults(cfg);
    if (eu_config_load(cfg, app->config_path, err, sizeof(err)) < 0) {
        eu_log_error("app", "config reload refused, keeping the old one: %s", err);
        eu_config_release(cfg);
        free(cfg);
        return;
    }
    enum eu_log_level lvl;
    if (eu_log_level_parse(cfg->log_level, &lvl) == 0)
        eu_log_set_level(lvl);
    struct eu_config *old = app->cfg;
    /* The Redis connection and the invalidation subscription were made
     * with the old prefix; keys under a new one would not match it. */
    if (strcmp(cfg->redis_prefix, old->redis_prefix) != 0) {
        eu_log_warn("app", "[redis] prefix changes apply on restart; keeping '%s'",
                    old->redis_prefix);
        free(cfg->redis_prefix);
        cfg->redis_prefix = eu_xstrdup(old->redis_prefix);
    }
    app->cfg = cfg;
    eu_db_set_statement_timeout(cfg->statement_timeout_ms);
    eu_registry_set_config(app->registry, cfg);
    if (app->http)
        eu_http_server_apply_limits(app->http);
    if (app->fetch) {
        struct eu_fetch_config fc;
        eu_fetch_config_from(&fc, cfg);
        eu_fetch_client_configure(app->fetch, &fc);
    }
    eu_config_release(old);
    free(old);
    eu_log_info("app", "config reloaded (listen addresses, databases and redis apply on restart)");
}

static void on_drain_tick(evutil_socket_t fd, short what, void *arg);

static void
begin_shutdown(struct eu_app *app)
{
    if (app->stopping)
        return;
    app->stopping = true;
    notify("STOPPING=1");
    eu_log_info("app", "stopping: %d requests in flight", app->inflight);
    eu_http_server_stop_accepting(app->http);
    eu_stream_close_all();  /* streams never end by themselves */
    eu_queues_stop(queues); /* turns under way finish their job */
    struct timeval tv = {0, 50000};
    event_base_once(app->base, -1, EV_TIMEOUT, on_drain_tick, app, &tv);
}

static void
on_drain_tick(evutil_socket_t fd, short what, void *arg)
{
    struct eu_app *app = arg;
    static int ticks;
    if ((app->inflight > 0 || eu_queues_active(queues) > 0) && ++ticks < DRAIN_SECONDS * 20) {
        struct timeval tv = {0, 50000};
        event_base_once(app->base, -1, EV_TIMEOUT, on_drain_tick, app, &tv);
        return;
    }
    if (app->inflight > 0)
        eu_log_warn("app", "closing with %d requests unfinished", app->inflight);
    event_base_loopexit(app->base, NULL);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct eu_app *app = arg;
    if (sig == SIGHUP) {
        eu_log_info("app", "SIGHUP: reloading config and tenants");
        reload_config(app);
        eu_app_reload_tenants(app);
        return;
    }
    begin_shutdown(app);
}

static int
write_ready_file(struct eu_app *app, const char *path)
{
    char *tmp = eu_xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        eu_log_error("app", "cannot write '%s': %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    fprintf(f, "public=%s\nadmin=%s\npid=%d\n", eu_http_server_public_addr(app->http),
            eu_http_server_admin_addr(app->http), (int)getpid());
    fclose(f);
    int rc = rename(tmp, path);
    free(tmp);
    return rc;
}

static struct eu_router *
build_router(void)
{
    char err[256];
    struct eu_router *r = eu_routes_router_new(err, sizeof(err));
    if (!r)
        eu_log_error("app", "bad route table: %s", err);
    return r;
}

static int
load_config(struct eu_app *app, const char *path)
{
    char err[512];
    app->cfg = eu_xcalloc(1, sizeof(*app->cfg));
    eu_config_init_defaults(app->cfg);
    if (eu_config_load(app->cfg, path, err, sizeof(err)) < 0) {
        fprintf(stderr, "eunha: %s\n", err);
        return -1;
    }
    enum eu_log_level lvl;
    if (eu_log_level_parse(app->cfg->log_level, &lvl) == 0)
        eu_log_set_level(lvl);
    app->config_path = eu_xstrdup(path);
    /* Before anything reads a sealed secret (include/eunha/secrets.h). */
    if (eu_secrets_load(app->cfg->secrets_key_file, err, sizeof(err)) < 0) {
        fprintf(stderr, "eunha: %s\n", err);
        return -1;
    }
    app->control_dbname = eu_db_conninfo_dbname(app->cfg->database_url);
    if (!app->control_dbname) {
        char *shown = eu_log_redact_url(app->cfg->database_url);
        fprintf(stderr, "eunha: [database] url '%s' names no database\n", shown);
        free(shown);
        return -1;
    }
    return 0;
}

static void
app_release(struct eu_app *app)
{
    /* The pools' last completions first, while what they touch is there: a
     * completion may take a tenant's pool (a password just hashed goes on
     * to its insert), answer a request or queue work on the other pool.
     * Run after the registry was freed, one made a pool nothing freed. */
    while (eu_cpupool_drain(app->cpu) + eu_cpupool_drain(app->io) > 0)
        ;
    eu_http_server_free(app->http);
    eu_db_listener_free(app->tenant_listener);
    app->tenant_listener = NULL;
    if (sync_state.timer) {
        event_free(sync_state.timer);
        sync_state.timer = NULL;
    }
    eu_admin_purge_stop_all();
    /* The jobs still waiting on the network (deliveries, pushes, emoji)
     * and the mail being sent: nothing of them outlives the tenants. */
    eu_queues_abandon(queues);
    eu_mail_client_abandon_all(app->mail);
    eu_registry_free(app->registry);
    /* Statements still under way may ask for a tenant's Redis: the main
     * one then (eu_tenant_redis()), which outlives them. */
    app->registry = NULL;
    eu_queues_stop(queues);
    /* Statements under way still hold tenants (and through them their
     * pools and placements): a delivery being queued, a request the drain
     * gave up on. Their answers come within moments even on a busy
     * machine, and each frees what it held; wait for them a little while,
     * with everything they may touch still there. */
    for (int i = 0; i < 60 && eu_registry_tenants_alive() > 0; i++) {
        struct timeval tv = {0, 50000};
        event_base_loopexit(app->base, &tv);
        event_base_dispatch(app->base);
    }
    if (eu_registry_tenants_alive() > 0)
        eu_log_warn("app", "closing with %d tenants still held by statements under way",
                    eu_registry_tenants_alive());
    /* After the tenants, which own their workers and leave the due lists
     * as they go. */
    eu_queues_free(queues);
    queues = NULL;
    /* After everything that may hold or cancel a fetch; its callbacks do
     * not run. */
    eu_fetch_client_free(app->fetch);
    app->fetch = NULL;
    eu_mail_client_free(app->mail);
    app->mail = NULL;
    eu_db_pool_free(app->control);
    eu_redis_free(app->redis);
    /* Its operations still queued carry their own paths and finish in
     * eu_cpupool_free() below. */
    eu_store_free(app->store);
    app->store = NULL;
    /* Let deferred frees (pool pumps, hiredis callbacks) run. */
    if (app->base)
        for (int i = 0; i < 4; i++)
            event_base_loop(app->base, EVLOOP_NONBLOCK);
    eu_cpupool_free(app->cpu);
    eu_cpupool_free(app->io);
    eu_router_free(app->router);
    if (app->base)
        event_base_free(app->base);
    if (app->cfg) {
        eu_config_release(app->cfg);
        free(app->cfg);
    }
    free(app->config_path);
    free(app->control_dbname);
}

/* For the fetch client: whether host is a tenant this process serves. */
static bool
is_local_tenant(const char *host, void *arg)
{
    struct eu_app *app = arg;
    struct eu_tenant *t = eu_registry_find(app->registry, host);
    return t && t->state != EU_TENANT_DELETING;
}

int
eu_app_serve(const char *config_path, const char *ready_file)
{
    struct eu_app app = {0};
    int code = 1;
    signal(SIGPIPE, SIG_IGN);
    if (sodium_init() < 0) {
        fprintf(stderr, "eunha: cannot initialise libsodium\n");
        return 1;
    }
    if (load_config(&app, config_path) < 0) {
        app_release(&app);
        return 2;
    }
    /* With the changelist, the event changes a loop iteration makes to one
     * descriptor reach epoll as one call: a reply re-arms its connection
     * for reading and writing at once, which was two epoll_ctl calls of
     * four per request. Its one hazard, descriptors made by dup(), eunha
     * does not have. */
    struct event_config *evcfg = event_config_new();
    if (evcfg) {
        event_config_set_flag(evcfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
        app.base = event_base_new_with_config(evcfg);
        event_config_free(evcfg);
    }
    if (!app.base)
        app.base = event_base_new();
    app.registry = eu_registry_new(app.base, app.cfg);
    PGconn *control = NULL;
    if (prepare_databases(&app, &control) < 0 || load_tenants_blocking(&app, control) < 0)
        goto out;
    if (!(app.router = build_router()))
        goto out;
    struct eu_db_pool_limits lim = {
        .max_connections = 2,
        .min_connections = 0,
        .acquire_timeout_s = app.cfg->pool_acquire_timeout_s,
        .idle_timeout_s = app.cfg->pool_idle_timeout_s,
    };
    eu_db_set_statement_timeout(app.cfg->statement_timeout_ms);
    app.control = eu_db_pool_new(app.base, "control", app.cfg->database_url, NULL, &lim);
    char err[256];
    app.redis =
        eu_redis_new(app.base, app.cfg->redis_url, app.cfg->redis_timeout_ms, err, sizeof(err));
    if (!app.redis) {
        eu_log_error("app", "%s", err);
        goto out;
    }
    eu_auth_listen(&app);
    eu_stream_start(&app, &eu_stream_ops);
    eu_stream_publish_start(&app);
    app.cpu = eu_cpupool_new(app.base, app.cfg->cpu_threads);
    app.io = eu_cpupool_new(app.base, IO_THREADS);
    struct eu_fetch_config fetch_cfg;
    eu_fetch_config_from(&fetch_cfg, app.cfg);
    if (!(app.fetch = eu_fetch_client_new(app.base, &fetch_cfg)))
        goto out;
    /* NULL without [mail]: mail is then written to the log. */
    app.mail = eu_mail_client_new(app.base, app.cfg);
    eu_notify_set_mail(app.mail != NULL);
    if (!(app.store = eu_store_new(&app)))
        goto out;
    if (!(app.http = eu_http_server_new(&app)))
        goto out;
    /* Tenants of this process federate with each other through the public
     * listener, signed and verified like any peer (fetch.h). */
    eu_fetch_client_set_local(app.fetch, is_local_tenant, &app,
                              eu_http_server_public_addr(app.http));
    queues = eu_queues_new(&app);
    eu_registry_warm(app.registry);
    sync_state.app = &app;
    sync_state.timer = evtimer_new(app.base, on_sync_timer, NULL);
    app.tenant_listener = eu_db_listener_new(app.base, app.cfg->database_url, app.control_dbname,
                                             "eunha_tenants", on_tenants_changed, &app);
    eu_admin_purge_resume(&app);
    struct event *sigs[4];
    int signums[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        sigs[i] = evsignal_new(app.base, signums[i], on_signal, &app);
        event_add(sigs[i], NULL);
    }
    if (ready_file && write_ready_file(&app, ready_file) < 0)
        goto out_signals;
    notify("READY=1");
    eu_log_info("app", "eunha %s serving %zu tenants", EUNHA_VERSION,
                eu_registry_count(app.registry));
    event_base_dispatch(app.base);
    code = 0;
    eu_log_info("app", "stopped");
out_signals:
    for (int i = 0; i < 3; i++)
        event_free(sigs[i]);
out:
    eu_stream_publish_stop();
    eu_stream_free();
    app_release(&app);
    eu_sql_free();
    eu_rc_free();
    eu_filters_cache_free();
    eu_audience_clear();
    return code;
}

int
eu_app_migrate(const char *config_path)
{
    struct eu_app app = {0};
    if (load_config(&app, config_path) < 0) {
        app_release(&app);
        return 2;
    }
    app.registry = eu_registry_new(NULL, app.cfg);
    int code = prepare_databases(&app, NULL) < 0 ? 1 : 0;
    app_release(&app);
    return code;
}
