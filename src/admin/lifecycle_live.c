/*
 * What makes a move live (lifecycle_move.c): while the tenant keeps
 * serving from its source placement, the changes to its rows are noted and
 * copied to the target in rounds, so that the write pause at the end only
 * has the last few to copy; and its Redis keys are copied to the target
 * placement's Redis when that is another server.
 *
 * The noting is PostgreSQL's own (tenant migration 0064): row triggers on
 * the source's tenant tables, filtered on the tenant's id, record the
 * primary key of each row written, and eunha_move.take() hands the rows as
 * they are now for the keys noted, which eunha_move.apply() writes into the
 * target. Both are idempotent, so a row copied twice (in the bulk snapshot
 * and again from a note) comes out right. The triggers are made and dropped
 * one table per transaction: each holds its table's lock for a moment only.
 *
 * During the write pause the triggers refuse the tenant's writes instead
 * (eunha_move.pause()): the process running the move holds the tenant
 * itself, but another process serving it writes on until it hears of the
 * switch, and its writes must fail rather than be left behind. A write
 * that passed the trigger's check just before the pause began is waited
 * for (eunha_move.hold_writers(), tenant migration 0064) before the last
 * catch-up, so it is noted and copied too.
 *
 * A move holds one connection to the source for its whole length, with a
 * session advisory lock on the tenant's id: a second move of the tenant,
 * from any process, finds it taken. If the process dies the lock goes with
 * the connection; the triggers it left are made afresh by the next move.
 */
#include "lifecycle_internal.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/redis.h"

/* Notes taken per round trip: a few hundred kilobytes of rows at most. */
#define TAKE_BATCH 2000
/* How long a trigger waits for its table's lock before the move gives up
 * (a waiting lock would hold up every tenant of the placement). */
#define LOCK_TIMEOUT "SET lock_timeout = '3s'"

struct eu_admin_live {
    struct eu_app *app;
    int64_t tenant_id;
    char id[24];
    struct eu_db_pool *src_pool, *dst_pool;
    struct eu_db_conn *src, *dst; /* held from first use to the end */
    char *tables;                 /* eu_db_tenant_tables as a SQL array literal */
    int table;                    /* index into eu_db_tenant_tables */
    bool watching;                /* triggers may exist on the source */
    bool forgotten;               /* the notes and pause are cleared */
    long long round;              /* rows copied in this round */
    int last;                     /* rows the last take returned */
    bool until_empty;             /* the round ends only when no note is left */
    struct eu_error err;
    eu_admin_live_cb done;
    void *arg;
    eu_admin_done_cb end_done;
};

struct eu_admin_live *
eu_admin_live_new(struct eu_app *app, const char *src_url, const char *src_db, const char *dst_url,
                  const char *dst_db, int64_t tenant_id)
{
    struct eu_admin_live *l = eu_xcalloc(1, sizeof(*l));
    l->app = app;
    l->tenant_id = tenant_id;
    snprintf(l->id, sizeof(l->id), "%lld", (long long)tenant_id);
    l->src_pool = eu_admin_placement_pool_new(app, src_url, src_db, 0);
    l->dst_pool = eu_admin_placement_pool_new(app, dst_url, dst_db, 0);
    size_t len = 3;
    for (int i = 0; eu_db_tenant_tables[i]; i++)
        len += strlen(eu_db_tenant_tables[i]) + 1;
    l->tables = eu_xmalloc(len);
    char *p = l->tables;
    *p++ = '{';
    for (int i = 0; eu_db_tenant_tables[i]; i++) {
        if (i)
            *p++ = ',';
        size_t n = strlen(eu_db_tenant_tables[i]);
        memcpy(p, eu_db_tenant_tables[i], n);
        p += n;
    }
    *p++ = '}';
    *p = '\0';
    return l;
}

/* Calls the step's callback with l->err (status 0: it went well). */
static void
live_done(struct eu_admin_live *l)
{
    eu_admin_live_cb done = l->done;
    l->done = NULL;
    struct eu_error err = l->err;
    memset(&l->err, 0, sizeof(l->err));
    done(&err, l->arg);
}

static void
live_fail(struct eu_admin_live *l, PGresult *res, enum eu_db_status st, const char *what)
{
    eu_admin_error_set_db(&l->err, st, res, what);
    /* Rows that do not fit are an archive's fault in a restore; here they
     * came from a placement of ours, so the fault is the server's. */
    if (l->err.status == 422) {
        eu_log_error("admin", "cannot %s: %s", what, eu_admin_db_message(res, "bad data"));
        eu_error_set(&l->err, 500, "Cannot %s", what);
    }
    live_done(l);
}

/* --------------------------------------------------------------- watch */

static void watch_next(struct eu_admin_live *l);

static void
on_watched(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        char what[96];
        snprintf(what, sizeof(what), "note the changes of table '%s'",
                 eu_db_tenant_tables[l->table]);
        live_fail(l, res, st, what);
        return;
    }
    l->table++;
    watch_next(l);
}

static void
watch_next(struct eu_admin_live *l)
{
    if (!eu_db_tenant_tables[l->table]) {
        live_done(l);
        return;
    }
    const char *params[] = {l->id, eu_db_tenant_tables[l->table]};
    eu_db_conn_query(l->src, "SELECT eunha_move.watch($1::bigint, $2)", 2, params, on_watched, l);
}

static void
on_forgotten(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "clear the notes of an earlier move");
        return;
    }
    l->watching = true;
    l->table = 0;
    watch_next(l);
}

static void
on_lock_timeout_set(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "set the move's lock timeout");
        return;
    }
    const char *params[] = {l->id};
    eu_db_conn_query(l->src, "SELECT eunha_move.forget($1::bigint)", 1, params, on_forgotten, l);
}

static void
on_locked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "lock the tenant for its move");
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
        eu_error_set(&l->err, 409, "The tenant is being moved already");
        live_done(l);
        return;
    }
    eu_db_conn_exec(l->src, LOCK_TIMEOUT, on_lock_timeout_set, l);
}

static void
on_src_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (!conn) {
        live_fail(l, NULL, st, "connect to the source placement");
        return;
    }
    l->src = conn;
    const char *params[] = {l->id};
    eu_db_conn_query(conn,
                     "SELECT pg_try_advisory_lock(hashtextextended('eunha_move', $1::bigint))", 1,
                     params, on_locked, l);
}

void
eu_admin_live_watch(struct eu_admin_live *l, eu_admin_live_cb done, void *arg)
{
    l->done = done;
    l->arg = arg;
    eu_db_pool_acquire(l->src_pool, on_src_conn, l);
}

/* --------------------------------------------------------------- pause */

static void
on_writers_held(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "wait for the tenant's writes in flight on the source");
        return;
    }
    live_done(l);
}

/* The pause is committed: writes that passed the trigger's check before it
 * may still be open in other processes' transactions. Holding the writers'
 * lock (tenant migration 0064) waits for them, so they are noted before
 * the last catch-up, and refuses any later one until this connection goes
 * with the move. */
static void
on_paused(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "pause the tenant's writes on the source");
        return;
    }
    const char *params[] = {l->id};
    eu_db_conn_query(l->src, "SELECT eunha_move.hold_writers($1::bigint)", 1, params,
                     on_writers_held, l);
}

void
eu_admin_live_pause(struct eu_admin_live *l, eu_admin_live_cb done, void *arg)
{
    l->done = done;
    l->arg = arg;
    const char *params[] = {l->id};
    eu_db_conn_query(l->src, "SELECT eunha_move.pause($1::bigint)", 1, params, on_paused, l);
}

/* ------------------------------------------------------------ catch up */

static void take_next(struct eu_admin_live *l);

static void
on_applied(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "copy the changed rows to the target");
        return;
    }
    /* A batch less than full took every note there was a moment ago. */
    if (l->last < TAKE_BATCH && !l->until_empty) {
        live_done(l);
        return;
    }
    take_next(l);
}

static void
on_taken(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "read the changed rows");
        return;
    }
    int n = atoi(PQgetvalue(res, 0, 1));
    l->last = n;
    if (n == 0) {
        live_done(l);
        return;
    }
    l->round += n;
    /* The rows are in res until this returns: the query copies them. */
    const char *params[] = {l->id, PQgetvalue(res, 0, 0), l->tables};
    eu_db_conn_query(l->dst, "SELECT eunha_move.apply($1::bigint, $2::jsonb, $3::text[])", 3,
                     params, on_applied, l);
}

/* Takes a batch of notes; the round ends when one comes back empty. */
static void
take_next(struct eu_admin_live *l)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", TAKE_BATCH);
    const char *params[] = {l->id, lim};
    eu_db_conn_query(l->src,
                     "SELECT c::text, jsonb_array_length(c) FROM"
                     " eunha_move.take($1::bigint, $2::int) c",
                     2, params, on_taken, l);
}

static void
on_dst_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (!conn) {
        live_fail(l, NULL, st, "connect to the target placement");
        return;
    }
    l->dst = conn;
    take_next(l);
}

void
eu_admin_live_catch_up(struct eu_admin_live *l, bool until_empty, eu_admin_live_cb done, void *arg)
{
    l->until_empty = until_empty;
    l->done = done;
    l->arg = arg;
    l->round = 0;
    if (!l->dst) {
        eu_db_pool_acquire(l->dst_pool, on_dst_conn, l);
        return;
    }
    take_next(l);
}

long long
eu_admin_live_round_rows(const struct eu_admin_live *l)
{
    return l->round;
}

static void
on_target_finished(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        live_fail(l, res, st, "recount the tenant's rows on the target");
        return;
    }
    live_done(l);
}

void
eu_admin_live_finish_target(struct eu_admin_live *l, eu_admin_live_cb done, void *arg)
{
    l->done = done;
    l->arg = arg;
    const char *params[] = {l->id};
    eu_db_conn_query(l->dst, eu_admin_sequence_sql, 1, params, on_target_finished, l);
}

/* ----------------------------------------------------------------- end */

static void
live_free(struct eu_admin_live *l)
{
    eu_admin_done_cb done = l->end_done;
    void *arg = l->arg;
    /* Closing the source connection releases the advisory lock. */
    if (l->src)
        eu_db_conn_release(l->src);
    if (l->dst)
        eu_db_conn_release(l->dst);
    eu_db_pool_free(l->src_pool);
    eu_db_pool_free(l->dst_pool);
    free(l->tables);
    free(l);
    if (done)
        done(0, arg);
}

static void unwatch_next(struct eu_admin_live *l);

static void
on_forgotten_at_end(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("admin", "cannot clear the move notes of tenant %s: %s", l->id,
                    eu_admin_db_message(res, "placement unavailable"));
        live_free(l);
        return;
    }
    if (!l->forgotten) {
        /* A failed move: its pause is over before its triggers go. */
        l->forgotten = true;
        unwatch_next(l);
        return;
    }
    live_free(l);
}

static void
on_unwatched(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_admin_live *l = arg;
    if (st != EU_DB_OK) {
        /* Left in place, the triggers note changes nobody takes; the next
         * move of the tenant makes them afresh. Say so, go on. */
        eu_log_warn("admin", "cannot drop the move trigger of table '%s' for tenant %s: %s",
                    eu_db_tenant_tables[l->table], l->id,
                    eu_admin_db_message(res, "placement unavailable"));
        if (st != EU_DB_ERROR && st != EU_DB_TIMEOUT) {
            live_free(l);
            return;
        }
    }
    l->table++;
    unwatch_next(l);
}

static void
unwatch_next(struct eu_admin_live *l)
{
    if (!eu_db_tenant_tables[l->table]) {
        /* Notes other processes added meanwhile go too. */
        l->forgotten = true;
        const char *params[] = {l->id};
        eu_db_conn_query(l->src, "SELECT eunha_move.forget($1::bigint)", 1, params,
                         on_forgotten_at_end, l);
        return;
    }
    const char *params[] = {l->id, eu_db_tenant_tables[l->table]};
    eu_db_conn_query(l->src, "SELECT eunha_move.unwatch($1::bigint, $2)", 2, params, on_unwatched,
                     l);
}

void
eu_admin_live_end(struct eu_admin_live *l, bool failed, eu_admin_done_cb done, void *arg)
{
    if (!l) {
        if (done)
            done(0, arg);
        return;
    }
    l->end_done = done;
    l->arg = arg;
    if (!l->watching || !l->src) {
        live_free(l);
        return;
    }
    l->table = 0;
    /* A move that took effect refuses the source's writes until its
     * triggers are gone; one that failed lets the tenant write first. */
    if (failed) {
        const char *params[] = {l->id};
        eu_db_conn_query(l->src, "SELECT eunha_move.forget($1::bigint)", 1, params,
                         on_forgotten_at_end, l);
        return;
    }
    l->forgotten = true;
    unwatch_next(l);
}

/* ---------------------------------------------------------------- Redis */

/* Keys per SCAN and per MIGRATE. */
#define REDIS_BATCH 500
/* How long the source Redis may take to connect, and MIGRATE to answer. */
#define REDIS_CONNECT_MS 5000
#define REDIS_MIGRATE_MS 10000

struct redis_copy {
    struct eu_app *app;
    struct eu_redis *src;
    struct eu_redis_target dst;
    char *pattern;
    char cursor[32];
    bool connected;
    struct event *deadline;
    long long copied;
    bool remove; /* UNLINK the keys found instead of copying them */
    bool ping;   /* only PING: is the server there? */
    eu_admin_redis_cb done;
    void *arg;
};

static void
on_redis_freed(evutil_socket_t fd, short what, void *arg)
{
    eu_redis_free(arg);
}

/* Frees rc (its Redis connection on a later turn of the loop: this may run
 * inside one of its callbacks). */
static void
redis_copy_free(struct redis_copy *rc)
{
    if (rc->src) {
        eu_redis_on_connect(rc->src, NULL, NULL);
        event_base_once(rc->app->base, -1, EV_TIMEOUT, on_redis_freed, rc->src, NULL);
    }
    if (rc->deadline)
        event_free(rc->deadline);
    eu_redis_target_release(&rc->dst);
    free(rc->pattern);
    free(rc);
}

static void
redis_copy_finish(struct redis_copy *rc, const char *failure)
{
    struct eu_error err = {0};
    if (failure) {
        const char *what = rc->remove ? "remove" : "copy";
        if (rc->ping)
            eu_error_set(&err, 422, "%s", failure);
        else {
            eu_log_warn("admin", "cannot %s the tenant's Redis keys: %s", what, failure);
            eu_error_set(&err, 503, "Cannot %s the tenant's Redis keys: %s", what, failure);
        }
    }
    rc->done(&err, rc->copied, rc->arg);
    redis_copy_free(rc);
}

static void redis_scan(struct redis_copy *rc);

static void
on_migrated(struct redisReply *reply, void *arg)
{
    struct redis_copy *rc = arg;
    if (!reply || reply->type == REDIS_REPLY_ERROR) {
        char why[160];
        snprintf(why, sizeof(why), "%s: %s", rc->remove ? "UNLINK" : "MIGRATE",
                 reply ? reply->str : "no answer");
        redis_copy_finish(rc, why);
        return;
    }
    if (strcmp(rc->cursor, "0") == 0) {
        redis_copy_finish(rc, NULL);
        return;
    }
    redis_scan(rc);
}

static void
on_scanned(struct redisReply *reply, void *arg)
{
    struct redis_copy *rc = arg;
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
        reply->element[0]->type != REDIS_REPLY_STRING ||
        reply->element[1]->type != REDIS_REPLY_ARRAY) {
        redis_copy_finish(rc,
                          reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "SCAN failed");
        return;
    }
    snprintf(rc->cursor, sizeof(rc->cursor), "%s", reply->element[0]->str);
    struct redisReply *keys = reply->element[1];
    if (keys->elements == 0) {
        if (strcmp(rc->cursor, "0") == 0)
            redis_copy_finish(rc, NULL);
        else
            redis_scan(rc);
        return;
    }
    if (rc->remove) {
        /* UNLINK k...: freed off the server's main thread. */
        const char **argv = eu_xcalloc(1 + keys->elements, sizeof(*argv));
        size_t *lens = eu_xcalloc(1 + keys->elements, sizeof(*lens));
        argv[0] = "UNLINK";
        lens[0] = 6;
        for (size_t i = 0; i < keys->elements; i++) {
            argv[1 + i] = keys->element[i]->str;
            lens[1 + i] = keys->element[i]->len;
        }
        rc->copied += (long long)keys->elements;
        eu_redis_command(rc->src, on_migrated, rc, (int)(1 + keys->elements), argv, lens);
        free(argv);
        free(lens);
        return;
    }
    /* MIGRATE host port "" db timeout COPY REPLACE [AUTH2 user pass | AUTH
     * pass] KEYS k...: the source server sends them itself. COPY: the source
     * keeps its keys until the move has taken effect. */
    size_t max = 12 + keys->elements;
    const char **argv = eu_xcalloc(max, sizeof(*argv));
    size_t *lens = eu_xcalloc(max, sizeof(*lens));
    char port[16], db[16], timeout[16];
    snprintf(port, sizeof(port), "%d", rc->dst.port);
    snprintf(db, sizeof(db), "%d", rc->dst.db);
    snprintf(timeout, sizeof(timeout), "%d", REDIS_MIGRATE_MS);
    int argc = 0;
    argv[argc++] = "MIGRATE";
    argv[argc++] = rc->dst.host;
    argv[argc++] = port;
    argv[argc++] = "";
    argv[argc++] = db;
    argv[argc++] = timeout;
    argv[argc++] = "COPY";
    argv[argc++] = "REPLACE";
    if (rc->dst.password && rc->dst.user) {
        argv[argc++] = "AUTH2";
        argv[argc++] = rc->dst.user;
        argv[argc++] = rc->dst.password;
    } else if (rc->dst.password) {
        argv[argc++] = "AUTH";
        argv[argc++] = rc->dst.password;
    }
    argv[argc++] = "KEYS";
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    for (size_t i = 0; i < keys->elements; i++) {
        struct redisReply *k = keys->element[i];
        argv[argc] = k->str;
        lens[argc++] = k->len;
    }
    rc->copied += (long long)keys->elements;
    eu_redis_command(rc->src, on_migrated, rc, argc, argv, lens);
    free(argv);
    free(lens);
}

static void
redis_scan(struct redis_copy *rc)
{
    char count[16];
    snprintf(count, sizeof(count), "%d", REDIS_BATCH);
    const char *argv[] = {"SCAN", rc->cursor, "MATCH", rc->pattern, "COUNT", count};
    eu_redis_command(rc->src, on_scanned, rc, 6, argv, NULL);
}

static void
on_pinged(struct redisReply *reply, void *arg)
{
    struct redis_copy *rc = arg;
    if (reply && (reply->type == REDIS_REPLY_STATUS || reply->type == REDIS_REPLY_STRING) &&
        strcmp(reply->str, "PONG") == 0) {
        redis_copy_finish(rc, NULL);
        return;
    }
    char why[200];
    snprintf(why, sizeof(why), "it answered PING with %s",
             reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "no PONG");
    redis_copy_finish(rc, why);
}

static void
on_redis_connected(void *arg)
{
    struct redis_copy *rc = arg;
    if (rc->connected)
        return; /* a reconnect later in the copy: the SCAN goes on */
    rc->connected = true;
    eu_redis_on_connect(rc->src, NULL, NULL);
    if (rc->ping) {
        /* The deadline stays: a server that takes the connection but
         * never answers is no better. */
        const char *argv[] = {"PING"};
        eu_redis_command(rc->src, on_pinged, rc, 1, argv, NULL);
        return;
    }
    event_del(rc->deadline);
    redis_scan(rc);
}

static void
on_redis_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct redis_copy *rc = arg;
    redis_copy_finish(rc, rc->ping ? "it did not answer PING" : "the source Redis did not answer");
}

/* Writes s into out with glob's special characters escaped. */
static char *
glob_escape(const char *s)
{
    char *out = eu_xmalloc(2 * strlen(s) + 2), *o = out;
    for (; *s; s++) {
        if (strchr("*?[]\\", *s))
            *o++ = '\\';
        *o++ = *s;
    }
    *o++ = '*';
    *o = '\0';
    return out;
}

/* Scans src_url for the keys under prefix and copies them to dst_url, or
 * (dst_url NULL) removes them; without a prefix only PINGs src_url. */
static void
redis_keys_walk(struct eu_app *app, const char *src_url, const char *dst_url, const char *prefix,
                eu_admin_redis_cb done, void *arg)
{
    struct redis_copy *rc = eu_xcalloc(1, sizeof(*rc));
    rc->app = app;
    rc->done = done;
    rc->arg = arg;
    rc->ping = !prefix;
    rc->remove = !dst_url && prefix;
    rc->pattern = glob_escape(prefix ? prefix : "");
    snprintf(rc->cursor, sizeof(rc->cursor), "0");
    char err[256];
    if (dst_url && eu_redis_url_parse(dst_url, &rc->dst, err, sizeof(err)) < 0) {
        redis_copy_finish(rc, err);
        return;
    }
    if (dst_url && !rc->dst.host) {
        redis_copy_finish(rc, "the target Redis is a unix socket, which MIGRATE cannot reach");
        return;
    }
    rc->src = eu_redis_new(app->base, src_url, REDIS_MIGRATE_MS + 2000, err, sizeof(err));
    if (!rc->src) {
        redis_copy_finish(rc, err);
        return;
    }
    rc->deadline = evtimer_new(app->base, on_redis_deadline, rc);
    struct timeval tv = {REDIS_CONNECT_MS / 1000, 0};
    evtimer_add(rc->deadline, &tv);
    eu_redis_on_connect(rc->src, on_redis_connected, rc);
}

void
eu_admin_redis_copy(struct eu_app *app, const char *src_url, const char *dst_url,
                    const char *prefix, eu_admin_redis_cb done, void *arg)
{
    redis_keys_walk(app, src_url, dst_url, prefix, done, arg);
}

void
eu_admin_redis_remove(struct eu_app *app, const char *url, const char *prefix,
                      eu_admin_redis_cb done, void *arg)
{
    redis_keys_walk(app, url, NULL, prefix, done, arg);
}

void
eu_admin_redis_ping(struct eu_app *app, const char *url, eu_admin_redis_cb done, void *arg)
{
    redis_keys_walk(app, url, NULL, NULL, done, arg);
}
