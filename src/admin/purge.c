/*
 * Removing a deleted tenant's rows. The tenant already answers 404 (its
 * state is 'deleting'); what is left is data, removed here in batches so
 * that no statement holds locks or a connection for long and the tenants
 * sharing the placement keep their share of it. The tables are emptied in
 * eu_db_tenant_tables order, children first, so no batch waits on a cascade.
 * A dedicated placement's database is dropped whole instead. Its files
 * go first (media in batches with their rows, then local avatars and
 * headers), since only its rows say which keys are its own; its Redis keys
 * go last, then its control row.
 *
 * First comes its farewell, as for a purged account (src/queue/accounts.c):
 * an "ap_delete_actor" job per local account (src/ap/delete_actor.c), its
 * job queues left running (src/queue/queue.c, does_work) until those jobs
 * and their deliveries are done, or [workers] tenant_delete_grace_seconds
 * after the deletion,
 * whichever comes first; a delivery still failing then is given up. The
 * grace counts from the row's updated_at (the deletion: a deleting tenant
 * takes no PATCH), so a restart neither extends it nor repeats what was
 * announced, and the rows always go in the end. Its actor URLs answer 410
 * from the deletion on, in every process (src/http/server.c reads the
 * state the control row gives the registry).
 *
 * The work runs through the tenant's own pool, so it counts against that
 * tenant's connection quota and nobody else's. Any failure pauses and
 * resumes where it stopped; a process that dies mid-way finds the tenant
 * still 'deleting' at start-up and starts again (eu_admin_purge_resume).
 */
#include "admin_internal.h"

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/admin.h"
#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/redis.h"
#include "eunha/tenant.h"

/* Rows per statement: a few milliseconds of work each. */
#define BATCH 500
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x) /* a number macro as SQL text */
#define RETRY_SECONDS 5
/* How often the farewell looks whether its jobs are done. */
#define FAREWELL_POLL_MS 500
/* After the farewell, how long the purge waits for the tenant's turn in the
 * queue and its deliveries in flight to end (they time out sooner). */
#define FAREWELL_DRAIN_MS 120000
/* Failed statements after which the farewell is given up (RETRY_SECONDS
 * apart). */
#define FAREWELL_TRIES 6

enum { PHASE_ANNOUNCE, PHASE_WAIT, PHASE_DRAIN, PHASE_PURGE };

struct purge {
    struct eu_app *app;
    struct eu_tenant *t; /* holds a ref */
    int table;           /* index into eu_db_tenant_tables */
    long long rows;
    char sql[256];
    char cursor[32]; /* of the Redis SCAN */
    struct event *retry;
    struct purge *next;
    int files;         /* FILES_MEDIA, FILES_ACCOUNTS, then FILES_DONE */
    int files_pending; /* store deletions of the current batch */
    long files_rows;   /* media rows the current batch removed */
    /* The process is stopping: what is in flight still calls back (pools
     * and Redis fail their waiters, the CPU pool runs its completions), and
     * finds this set instead of a freed record. */
    bool stopped;
    /* A statement of this purge is under way: a stopping process keeps the
     * tenant (and its pool) until it answers, and waits for that (app.c). */
    bool querying;
    int phase;           /* PHASE_ANNOUNCE, ... */
    int drained_ms;      /* in PHASE_DRAIN */
    int farewell_errors; /* failed statements of the farewell */
    long long announced; /* Delete jobs queued by this process */
};

enum { FILES_MEDIA, FILES_ACCOUNTS, FILES_DONE };

/* Purges under way in this process; a handful at most. */
static struct purge *purges;
/* Purges cut short by eu_admin_purge_stop_all(), kept (reachable) for the
 * callbacks still in flight; the process is exiting. */
static struct purge *stopped_purges;

static struct purge *
find(const struct eu_tenant *t)
{
    for (struct purge *p = purges; p; p = p->next)
        if (p->t == t)
            return p;
    return NULL;
}

static void
purge_free(struct purge *p)
{
    for (struct purge **pp = &purges; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    if (p->retry)
        event_free(p->retry);
    eu_tenant_unref(p->t);
    free(p);
}

static void step(struct purge *p);

static void
query(struct purge *p, struct eu_db_pool *pool, const char *sql, int nparams,
      const char *const *params, eu_db_result_cb cb)
{
    p->querying = true;
    eu_db_pool_query(pool, sql, nparams, params, cb, p);
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
    if (((struct purge *)arg)->stopped)
        return;
    step(arg);
}

static void
step_in(struct purge *p, int ms)
{
    if (!p->retry)
        p->retry = evtimer_new(p->app->base, on_retry, p);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(p->retry, &tv);
}

static void
retry_later(struct purge *p, const char *why)
{
    eu_log_warn("admin", "deleting tenant '%s' paused: %s", p->t->domain, why);
    step_in(p, RETRY_SECONDS * 1000);
}

/*
 * The purge a statement answered for, or NULL when it cannot go on: the
 * process is stopping (eu_admin_purge_stop_all), or the statement failed,
 * and the purge resumes from the same step in RETRY_SECONDS.
 */
static struct purge *
answered(PGresult *res, enum eu_db_status st, void *arg, const char *unavailable)
{
    struct purge *p = arg;
    p->querying = false;
    if (p->stopped) {
        if (p->t)
            eu_tenant_unref(p->t);
        p->t = NULL;
        return NULL;
    }
    if (st != EU_DB_OK) {
        if (p->phase != PHASE_PURGE)
            p->farewell_errors++;
        retry_later(p, res ? PQresultErrorMessage(res) : unavailable);
        return NULL;
    }
    return p;
}

static void
on_row_gone(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = answered(res, st, arg, "control database unavailable");
    if (!p)
        return;
    eu_log_info("admin", "deleted tenant '%s' (%lld rows)", p->t->domain, p->rows);
    eu_registry_remove(p->app->registry, p->t);
    purge_free(p);
}

static void
remove_row(struct purge *p)
{
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)p->t->id);
    const char *params[] = {id, p->t->placement};
    /* A dedicated placement goes with its tenant. */
    query(p, p->app->control,
          "WITH t AS (DELETE FROM tenants WHERE id = $1 RETURNING placement_id)"
          " DELETE FROM placements WHERE name = $2 AND kind = 'dedicated'"
          " AND id IN (SELECT placement_id FROM t)",
          2, params, on_row_gone);
}

/* ---- the tenant's Redis keys ---- */

/*
 * Its keys (home feeds, rate-limit windows, idempotency keys) all start with
 * its prefix, "<prefix>:{t<ID>}:": SCAN them in slices and DEL each slice.
 * With Redis away they are left behind (each carries a TTL of at most two
 * weeks), which is not worth holding the deletion for.
 */
static void scan_keys(struct purge *p);

static void
on_keys_deleted(redisReply *reply, void *arg)
{
    struct purge *p = arg;
    if (p->stopped)
        return;
    if (strcmp(p->cursor, "0") == 0)
        remove_row(p);
    else
        scan_keys(p);
}

static void
on_keys(redisReply *reply, void *arg)
{
    struct purge *p = arg;
    if (p->stopped)
        return;
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
        reply->element[0]->type != REDIS_REPLY_STRING ||
        reply->element[1]->type != REDIS_REPLY_ARRAY) {
        eu_log_warn("admin", "tenant '%s': Redis keys left to expire", p->t->domain);
        remove_row(p);
        return;
    }
    snprintf(p->cursor, sizeof(p->cursor), "%s", reply->element[0]->str);
    redisReply *keys = reply->element[1];
    if (keys->elements == 0) {
        on_keys_deleted(NULL, p);
        return;
    }
    /* hiredis copies the arguments before eu_redis_command() returns, so
     * the reply's strings may be passed as they are. */
    const char **argv = eu_xcalloc(keys->elements + 1, sizeof(*argv));
    argv[0] = "DEL";
    for (size_t i = 0; i < keys->elements; i++)
        argv[i + 1] = keys->element[i]->str;
    eu_redis_command(eu_tenant_redis(p->app, p->t), on_keys_deleted, p, (int)keys->elements + 1,
                     argv, NULL);
    free(argv);
}

static void
scan_keys(struct purge *p)
{
    /* The prefix is the config's and may hold glob characters: escape them. */
    char match[2 * EU_TENANT_KEY_PREFIX_SIZE + 2], *o = match;
    for (const char *c = p->t->key_prefix; *c && o < match + sizeof(match) - 3; c++) {
        if (strchr("*?[]\\", *c))
            *o++ = '\\';
        *o++ = *c;
    }
    *o++ = '*';
    *o = '\0';
    const char *argv[] = {"SCAN", p->cursor, "MATCH", match, "COUNT", "500"};
    eu_redis_command(eu_tenant_redis(p->app, p->t), on_keys, p, 6, argv, NULL);
}

static void
finish(struct purge *p)
{
    snprintf(p->cursor, sizeof(p->cursor), "0");
    scan_keys(p);
}

static void
on_batch(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = answered(res, st, arg, "placement unavailable");
    if (!p)
        return;
    long n = atol(PQcmdTuples(res));
    p->rows += n;
    if (n < BATCH)
        p->table++;
    step(p);
}

/* ---- the tenant's files ---- */

/* A batch of media rows and their keys: first row the number of rows, then
 * one row per stored key (remote files have URLs, not keys). */
static const char files_media_sql[] =
    "WITH m AS (DELETE FROM media_attachments WHERE tenant_id = $1 AND ctid = ANY (ARRAY("
    "SELECT ctid FROM media_attachments WHERE tenant_id = $1 LIMIT " TEXT(
        BATCH) "))"
               " RETURNING file_key, preview_key)"
               " SELECT count(*)::text FROM m UNION ALL SELECT k FROM m, unnest(ARRAY[m.file_key,"
               " m.preview_key]) k WHERE k IS NOT NULL AND k NOT LIKE '%://%'";
/* Local accounts' avatars and headers (store keys; a URL is a default). */
static const char files_accounts_sql[] =
    "SELECT NULL UNION ALL SELECT k FROM accounts a, unnest(ARRAY[a.avatar_url, a.header_url]) k"
    " WHERE a.tenant_id = $1 AND a.domain IS NULL AND k IS NOT NULL AND k NOT LIKE '%://%'";

static void
files_next(struct purge *p)
{
    if (p->files == FILES_MEDIA && p->files_rows >= BATCH)
        ; /* more media rows: another batch */
    else
        p->files++;
    step(p);
}

static void
on_file_deleted(int rc, void *arg)
{
    struct purge *p = arg;
    if (p->stopped)
        return;
    /* A file that cannot be deleted now is left behind (logged by the
     * store); holding the tenant's deletion for it would not bring it back. */
    (void)rc;
    if (--p->files_pending == 0)
        files_next(p);
}

static void
on_files(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = answered(res, st, arg, "placement unavailable");
    if (!p)
        return;
    int n = PQntuples(res);
    p->files_rows = n > 0 && !PQgetisnull(res, 0, 0) ? atol(PQgetvalue(res, 0, 0)) : 0;
    /* Only the tenant's own keys: a row restored from an archive may name
     * another tenant's file, which this deletion must leave alone. */
    p->files_pending = 0;
    for (int i = 1; i < n; i++) {
        const char *key = PQgetvalue(res, i, 0);
        if (eu_store_key_is_tenants(key, p->t->id))
            p->files_pending++;
        else
            eu_log_warn("admin", "purge: not deleting '%s': not a key of this tenant", key);
    }
    if (!p->files_pending) {
        files_next(p);
        return;
    }
    for (int i = 1; i < n; i++)
        if (eu_store_key_is_tenants(PQgetvalue(res, i, 0), p->t->id))
            eu_store_del(p->app->store, PQgetvalue(res, i, 0), on_file_deleted, p);
}

static void
on_dropped(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = answered(res, st, arg, "control database unavailable");
    if (!p)
        return;
    p->table = -1; /* nothing left to count */
    finish(p);
}

/* ---- the farewell ---- */

/* $2 the deletion's time, $3 the grace in seconds: whether the grace is
 * still open. */
#define GRACE_OPEN "$2::timestamptz + make_interval(secs => $3::float8) > now()"

/* Marks each local account not announced yet and queues the Delete of its
 * actor, as the suspended accounts' cleanup does (the same dedupe key, so
 * a Delete already queued is not sent twice); its other jobs go, so that
 * only the farewell's run. Returns whether the grace is open and how many
 * Delete jobs were queued. */
static const char farewell_sql[] =
    "WITH g AS (SELECT " GRACE_OPEN " AS open),"
    " mark AS (UPDATE accounts SET delete_sent_at = now() WHERE tenant_id = $1"
    "  AND domain IS NULL AND delete_sent_at IS NULL AND (SELECT open FROM g) RETURNING id),"
    " ann AS (INSERT INTO jobs (tenant_id, queue, kind, payload, dedupe_key)"
    "  SELECT $1, 'default', 'ap_delete_actor', json_build_object('account_id', id::text),"
    "  'ap_delete_actor:' || id FROM mark ON CONFLICT (tenant_id, dedupe_key) DO NOTHING"
    "  RETURNING 1),"
    " other AS (DELETE FROM jobs WHERE tenant_id = $1"
    "  AND kind NOT IN ('ap_delete_actor', 'ap_deliver') AND (SELECT open FROM g) RETURNING 1)"
    " SELECT (SELECT open FROM g), (SELECT count(*) FROM ann)";

/* Whether the grace is open and the farewell's jobs are still to run (a
 * dead one is given up). */
static const char farewell_left_sql[] =
    "SELECT " GRACE_OPEN " AND EXISTS (SELECT 1 FROM jobs WHERE tenant_id = $1"
    " AND kind IN ('ap_delete_actor', 'ap_deliver') AND state = 'ready')";

static void
farewell_over(struct purge *p)
{
    if (p->t->farewell)
        eu_log_info("admin",
                    "tenant '%s': its accounts' Delete delivered or its grace over; purging",
                    p->t->domain);
    p->t->farewell = false;
    p->phase = PHASE_DRAIN;
    step(p);
}

static void
on_farewell_left(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = answered(res, st, arg, "placement unavailable");
    if (!p)
        return;
    if (strcmp(PQgetvalue(res, 0, 0), "t") == 0)
        step_in(p, FAREWELL_POLL_MS);
    else
        farewell_over(p);
}

static void
on_farewell(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = answered(res, st, arg, "placement unavailable");
    if (!p)
        return;
    if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
        farewell_over(p); /* the grace passed (a restart after it) */
        return;
    }
    p->announced = atoll(PQgetvalue(res, 0, 1));
    eu_log_info("admin", "tenant '%s': Delete of %lld accounts queued before its purge",
                p->t->domain, p->announced);
    p->t->farewell = true;
    p->phase = PHASE_WAIT;
    eu_queue_wake(p->t, EU_QUEUE_DEFAULT, 0);
    eu_queue_wake(p->t, EU_QUEUE_DELIVER, 0);
    step_in(p, FAREWELL_POLL_MS);
}

/* The grace's start and length as the farewell statements' $2 and $3 (the
 * pool copies the parameters). */
static void
farewell_query(struct purge *p, const char *sql, eu_db_result_cb cb)
{
    char grace[16];
    snprintf(grace, sizeof(grace), "%d", p->app->cfg->tenant_delete_grace_s);
    const char *params[] = {p->t->updated_at ? p->t->updated_at : "now", grace};
    query(p, eu_tenant_pool(p->app->registry, p->t), sql, 2, params, cb);
}

/* Returns true when the farewell is over and the purge proper may go on. */
static bool
farewell_step(struct purge *p)
{
    /* A placement that keeps failing (or a dedicated database dropped
     * before a restart) must not hold the purge forever: the Delete is
     * given up after a few tries, the rows are not. */
    if (p->phase < PHASE_DRAIN && p->farewell_errors >= FAREWELL_TRIES) {
        eu_log_warn("admin", "tenant '%s': the Delete of its accounts is given up", p->t->domain);
        p->t->farewell = false;
        p->phase = PHASE_DRAIN;
    }
    switch (p->phase) {
    case PHASE_ANNOUNCE:
        farewell_query(p, farewell_sql, on_farewell);
        return false;
    case PHASE_WAIT:
        farewell_query(p, farewell_left_sql, on_farewell_left);
        return false;
    case PHASE_DRAIN:
        /* A job of the farewell still running could write a row behind the
         * purge: wait for the tenant's turn to end, boundedly. */
        if (eu_queue_busy(p->t) && p->drained_ms < FAREWELL_DRAIN_MS) {
            p->drained_ms += FAREWELL_POLL_MS;
            step_in(p, FAREWELL_POLL_MS);
            return false;
        }
        p->phase = PHASE_PURGE;
        return true;
    default:
        return true;
    }
}

static void
step(struct purge *p)
{
    if (p->phase != PHASE_PURGE && !farewell_step(p))
        return;
    if (p->files < FILES_DONE && p->app->store) {
        const char *sql = p->files == FILES_MEDIA ? files_media_sql : files_accounts_sql;
        query(p, eu_tenant_pool(p->app->registry, p->t), sql, 0, NULL, on_files);
        return;
    }
    if (p->t->dedicated) {
        /* FORCE: the tenant's own pool may still hold an idle connection.
         * The name was made by the admin API ("<control>_p<ID>"), but quote
         * it all the same. */
        char *quoted = eu_xcalloc(1, 2 * strlen(p->t->database) + 1), *o = quoted;
        for (const char *c = p->t->database; *c; c++) {
            if (*c == '"')
                *o++ = '"';
            *o++ = *c;
        }
        char *sql = eu_xasprintf("DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", quoted);
        free(quoted);
        query(p, p->app->control, sql, 0, NULL, on_dropped);
        free(sql);
        return;
    }
    const char *table = eu_db_tenant_tables[p->table];
    if (!table) {
        finish(p);
        return;
    }
    snprintf(p->sql, sizeof(p->sql),
             "DELETE FROM %s WHERE tenant_id = $1 AND ctid = ANY (ARRAY(SELECT ctid FROM %s"
             " WHERE tenant_id = $1 LIMIT %d))",
             table, table, BATCH);
    query(p, eu_tenant_pool(p->app->registry, p->t), p->sql, 0, NULL, on_batch);
}

void
eu_admin_purge_start(struct eu_app *app, struct eu_tenant *t)
{
    if (find(t))
        return;
    struct purge *p = eu_xcalloc(1, sizeof(*p));
    p->app = app;
    p->t = t;
    eu_tenant_ref(t);
    p->next = purges;
    purges = p;
    step(p);
}

json_t *
eu_admin_purge_json(const struct eu_tenant *t)
{
    const struct purge *p = find(t);
    if (!p)
        return NULL;
    int left = 0;
    if (p->table >= 0)
        for (int i = p->table; eu_db_tenant_tables[i]; i++)
            left++;
    /* "announcing": the Delete of its accounts is going out (the farewell);
     * "purging": its rows are going. */
    return json_pack("{s:s, s:I, s:i}", "phase", p->phase == PHASE_PURGE ? "purging" : "announcing",
                     "rows_deleted", (json_int_t)p->rows, "tables_left", left);
}

static void
resume_one(struct eu_tenant *t, void *arg)
{
    if (t->state == EU_TENANT_DELETING)
        eu_admin_purge_start(arg, t);
}

void
eu_admin_purge_resume(struct eu_app *app)
{
    eu_registry_each(app->registry, resume_one, app);
}

void
eu_admin_purge_stop_all(void)
{
    while (purges) {
        struct purge *p = purges;
        purges = p->next;
        if (p->retry)
            event_free(p->retry);
        p->retry = NULL;
        if (!p->querying) {
            eu_tenant_unref(p->t);
            p->t = NULL;
        }
        p->stopped = true;
        p->next = stopped_purges;
        stopped_purges = p;
    }
}
