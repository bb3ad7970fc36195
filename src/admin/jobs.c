/*
 * The admin API of a tenant's background work: its jobs (list, show,
 * enqueue, retry a dead one, delete) and account suspension, whose cleanup
 * is a timed task. Everything goes through the tenant's pool like a request;
 * the workers are only woken (include/eunha/queue.h).
 */
#include "eunha/admin.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"

#define TS(col) "to_char((" col ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* "running" is a live lock: a worker (here or in another process) has it. */
#define JOB_STATE                                                                                  \
    "CASE WHEN state = 'dead' THEN 'dead' WHEN locked_until > now() THEN 'running'"                \
    " ELSE 'ready' END"

/* The select list job_json() reads, in this order. */
#define JOB_COLUMNS                                                                                \
    "id::text, queue, kind, payload::text, " JOB_STATE ", attempts, last_error, " TS(              \
        "run_at") ", " TS("locked_until") ", " TS("created_at") ", " TS("updated_at")

/* A purge job that is not running goes: a dead one would keep a later
 * suspension from ever being purged, a waiting one belongs to an old one. */
#define DROP_PURGE_JOB                                                                             \
    " d AS (DELETE FROM jobs WHERE tenant_id = $1"                                                 \
    "  AND dedupe_key = 'purge_account:' || $2::bigint"                                            \
    "  AND (locked_until IS NULL OR locked_until <= now()) AND EXISTS (SELECT 1 FROM a))"

/* When a suspended account's purge is due; $3 is the retention in seconds. */
#define PURGE_AT "suspended_at + make_interval(secs => $3::float8)"

/* The select list on_suspended() reads, in this order. */
#define SUSPENSION_COLUMNS                                                                         \
    "id::text, username, domain, " TS("suspended_at") ", " TS(                                     \
        PURGE_AT) ", (extract(epoch FROM " PURGE_AT " - now()) * 1000)::bigint"

enum {
    ADMIN_JOBS_LIST,
    ADMIN_JOBS_SHOW,
    ADMIN_JOBS_RETRY,
    ADMIN_JOBS_DELETE,
    ADMIN_JOBS_SUSPEND,
    ADMIN_JOBS_UNSUSPEND,
};

const struct eu_sql eu_admin_jobs_sql[] = {
    [ADMIN_JOBS_LIST] =
        {"admin_jobs.list",
         "SELECT " JOB_COLUMNS " FROM jobs WHERE tenant_id = $1"
         " AND ($2::text IS NULL OR " JOB_STATE " = $2)"
         " AND ($3::text IS NULL OR queue = $3) AND ($4::text IS NULL OR kind = $4)"
         " AND ($5::bigint IS NULL OR id < $5::bigint) ORDER BY id DESC LIMIT $6::int"},
    [ADMIN_JOBS_SHOW] = {"admin_jobs.show", "SELECT " JOB_COLUMNS
                                            " FROM jobs WHERE tenant_id = $1 AND id = $2::bigint"},
    /* The jobs scan sees the row as it was before u changed it. */
    [ADMIN_JOBS_RETRY] =
        {"admin_jobs.retry",
         "WITH u AS (UPDATE jobs SET state = 'ready', attempts = 0, run_at = now(),"
         " locked_until = NULL, updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint"
         " AND state = 'dead' RETURNING *)"
         " SELECT (SELECT " JOB_STATE " FROM jobs WHERE tenant_id = $1 AND id = $2::bigint), x.*"
         " FROM (SELECT 1) one LEFT JOIN (SELECT " JOB_COLUMNS " FROM u) x ON true"},
    [ADMIN_JOBS_DELETE] =
        {"admin_jobs.delete",
         "WITH d AS (DELETE FROM jobs WHERE tenant_id = $1 AND id = $2::bigint"
         " AND (state = 'dead' OR locked_until IS NULL OR locked_until <= now()) RETURNING 1)"
         " SELECT (SELECT count(*) FROM jobs WHERE tenant_id = $1 AND id = $2::bigint),"
         " (SELECT count(*) FROM d)"},
    [ADMIN_JOBS_SUSPEND] =
        {"admin_jobs.suspend",
         "WITH a AS (UPDATE accounts SET suspended_at = coalesce(suspended_at, now()),"
         " updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint"
         " RETURNING id, username, domain, suspended_at)," DROP_PURGE_JOB
         " SELECT " SUSPENSION_COLUMNS " FROM a"},
    [ADMIN_JOBS_UNSUSPEND] =
        {"admin_jobs.unsuspend",
         "WITH a AS (UPDATE accounts SET suspended_at = NULL, updated_at = now()"
         " WHERE tenant_id = $1 AND id = $2::bigint RETURNING id, username, domain)," DROP_PURGE_JOB
         " SELECT id::text, username, domain FROM a"},
    {0},
};

static json_t *
nullable(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* A job as JSON from JOB_COLUMNS starting at column c0. Caller owns it. */
static json_t *
job_json(const PGresult *res, int row, int c0)
{
    json_t *payload = json_loads(PQgetvalue(res, row, c0 + 3), 0, NULL);
    return json_pack(
        "{s:s, s:s, s:s, s:o, s:s, s:i, s:o, s:s, s:o, s:s, s:s}", "id", PQgetvalue(res, row, c0),
        "queue", PQgetvalue(res, row, c0 + 1), "kind", PQgetvalue(res, row, c0 + 2), "payload",
        payload ? payload : json_object(), "state", PQgetvalue(res, row, c0 + 4), "attempts",
        atoi(PQgetvalue(res, row, c0 + 5)), "last_error", nullable(res, row, c0 + 6), "run_at",
        PQgetvalue(res, row, c0 + 7), "locked_until", nullable(res, row, c0 + 8), "created_at",
        PQgetvalue(res, row, c0 + 9), "updated_at", PQgetvalue(res, row, c0 + 10));
}

/* The tenant and a numeric :id; NULL after replying. */
static struct eu_tenant *
tenant_and_id(struct eu_req *req, const char **id)
{
    struct eu_tenant *t = eu_admin_tenant_writable(req);
    if (!t)
        return NULL;
    *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(*id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return t;
}

int
eu_admin_list_page(struct eu_req *req, const char *what, long max, const char **max_id,
                   const char **limit)
{
    *max_id = eu_req_query(req, "max_id");
    if (*max_id && !eu_id_is_valid(*max_id)) {
        eu_req_reply_error(req, 422, "max_id must be a %s id", what);
        return -1;
    }
    const char *s = eu_req_query(req, "limit");
    long n = 40;
    if (s) {
        char *end;
        n = strtol(s, &end, 10);
        if (!*s || *end || n < 1 || n > max) {
            eu_req_reply_error(req, 422, "limit must be an integer from 1 to %ld", max);
            return -1;
        }
    }
    *limit = eu_arena_sprintf(req->arena, "%ld", n);
    return 0;
}

/* ---- GET /admin/v1/tenants/:domain/jobs?state=&queue=&kind=&max_id=&limit= ---- */

static void
on_jobs(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(arr, job_json(res, i, 0));
    eu_req_reply_json(req, 200, arr);
}

void
eu_admin_jobs_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *state = eu_req_query(req, "state");
    if (state && strcmp(state, "ready") && strcmp(state, "running") && strcmp(state, "dead")) {
        eu_req_reply_error(req, 422, "state must be ready, running or dead");
        return;
    }
    const char *max_id, *lim;
    if (eu_admin_list_page(req, "job", 1000, &max_id, &lim) < 0)
        return;
    const char *params[] = {state, eu_req_query(req, "queue"), eu_req_query(req, "kind"), max_id,
                            lim};
    eu_req_stmt(req, &eu_admin_jobs_sql[ADMIN_JOBS_LIST], 5, params, on_jobs, NULL);
}

/* ---- GET /admin/v1/tenants/:domain/jobs/:id ---- */

static void
on_job(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, job_json(res, 0, 0));
}

void
eu_admin_jobs_show(struct eu_req *req)
{
    const char *id;
    if (!tenant_and_id(req, &id))
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_jobs_sql[ADMIN_JOBS_SHOW], 1, params, on_job, NULL);
}

/* ---- POST /admin/v1/tenants/:domain/jobs {"kind", "payload", "delay_seconds"} ---- */

static void
on_enqueued(const char *job_id, int status, void *arg)
{
    struct eu_req *req = arg;
    eu_req_enter(req);
    if (!job_id) {
        eu_req_reply_db_error(req, status);
        return;
    }
    eu_req_reply_json(req, 201, json_pack("{s:s}", "id", job_id));
}

void
eu_admin_jobs_create(struct eu_req *req)
{
    struct eu_tenant *t = eu_admin_tenant_writable(req);
    if (!t)
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *kind = json_string_value(json_object_get(body, "kind"));
    json_t *payload = json_object_get(body, "payload");
    json_t *delay = json_object_get(body, "delay_seconds");
    if (payload && !json_is_object(payload)) {
        eu_req_reply_error(req, 422, "Validation failed: payload must be an object");
        return;
    }
    if (delay && (!json_is_integer(delay) || json_integer_value(delay) < 0 ||
                  json_integer_value(delay) > 365 * 86400)) {
        eu_req_reply_error(req, 422, "Validation failed: delay_seconds must be 0 to 31536000");
        return;
    }
    char *text = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
    const char *ptext = text ? eu_arena_strdup(req->arena, text) : NULL;
    free(text);
    if (!kind ||
        eu_queue_enqueue(req->app, t, kind, ptext, delay ? (int)json_integer_value(delay) : 0, NULL,
                         on_enqueued, req) < 0)
        eu_req_reply_error(req, 422, "Validation failed: kind must name a known job kind");
}

/* ---- POST /admin/v1/tenants/:domain/jobs/:id/retry ---- */

static void
on_retried(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQgetisnull(res, 0, 0)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetisnull(res, 0, 1)) {
        eu_req_reply_error(req, 422, "Only a dead job can be retried; this one is %s",
                           PQgetvalue(res, 0, 0));
        return;
    }
    int queue = eu_queue_id_from_name(PQgetvalue(res, 0, 2));
    if (queue >= 0)
        eu_queue_wake(req->tenant, (enum eu_queue_id)queue, 0);
    eu_log_info("admin", "job %s (%s) retried", PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 3));
    eu_req_reply_json(req, 200, job_json(res, 0, 1));
}

void
eu_admin_jobs_retry(struct eu_req *req)
{
    const char *id;
    if (!tenant_and_id(req, &id))
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_jobs_sql[ADMIN_JOBS_RETRY], 1, params, on_retried, NULL);
}

/* ---- DELETE /admin/v1/tenants/:domain/jobs/:id ---- */

static void
on_job_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (strcmp(PQgetvalue(res, 0, 0), "0") == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 1), "0") == 0) {
        eu_req_reply_error(req, 409, "The job is running");
        return;
    }
    eu_req_reply_json(req, 200, json_object());
}

void
eu_admin_jobs_delete(struct eu_req *req)
{
    const char *id;
    if (!tenant_and_id(req, &id))
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_jobs_sql[ADMIN_JOBS_DELETE], 1, params, on_job_deleted, NULL);
}

/* ---- POST /admin/v1/tenants/:domain/accounts/:id/suspend and /unsuspend ---- */

/* A local account's followers get its actor again (Mastodon's suspension
 * and unsuspension send an Update): suspended and blanked, or restored.
 * Nothing goes for a remote account (the outbox finds no local actor). */
static void
announce_actor(struct eu_req *req, const PGresult *res)
{
    eu_ap_outbox_profile(req->app, req->tenant, strtoll(PQgetvalue(res, 0, 0), NULL, 10));
}

static void
on_suspended(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* Its tokens stop working now, in every process, not when the cache
     * expires. */
    eu_auth_cache_clear(req->app, req->tenant);
    eu_stream_close_for(req->app, req->tenant, strtoll(PQgetvalue(res, 0, 0), NULL, 10), NULL);
    announce_actor(req, res);
    int64_t due_ms = strtoll(PQgetvalue(res, 0, 5), NULL, 10);
    eu_queue_task_wake(req->tenant, EU_TASK_ACCOUNT_CLEANUP, due_ms > 0 ? due_ms : 0);
    eu_log_info("admin", "suspended account %s ('%s'); purge at %s", PQgetvalue(res, 0, 0),
                PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 4));
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:s, s:o, s:s, s:s}", "id", PQgetvalue(res, 0, 0),
                                "username", PQgetvalue(res, 0, 1), "domain", nullable(res, 0, 2),
                                "suspended_at", PQgetvalue(res, 0, 3), "purge_at",
                                PQgetvalue(res, 0, 4)));
}

void
eu_admin_accounts_suspend(struct eu_req *req)
{
    const char *id;
    if (!tenant_and_id(req, &id))
        return;
    const char *retention =
        eu_arena_sprintf(req->arena, "%d", req->app->cfg->suspended_retention_s);
    const char *params[] = {id, retention};
    eu_req_stmt(req, &eu_admin_jobs_sql[ADMIN_JOBS_SUSPEND], 2, params, on_suspended, NULL);
}

static void
on_unsuspended(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The next purge may now be later: let the task look again. */
    eu_queue_task_wake(req->tenant, EU_TASK_ACCOUNT_CLEANUP, -1);
    announce_actor(req, res);
    eu_log_info("admin", "unsuspended account %s ('%s')", PQgetvalue(res, 0, 0),
                PQgetvalue(res, 0, 1));
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:s, s:o, s:n}", "id", PQgetvalue(res, 0, 0), "username",
                                PQgetvalue(res, 0, 1), "domain", nullable(res, 0, 2),
                                "suspended_at"));
}

void
eu_admin_accounts_unsuspend(struct eu_req *req)
{
    const char *id;
    if (!tenant_and_id(req, &id))
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_jobs_sql[ADMIN_JOBS_UNSUSPEND], 1, params, on_unsuspended, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_jobs_routes[] = {
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/accounts/:id/suspend", eu_admin_accounts_suspend,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/accounts/:id/unsuspend", eu_admin_accounts_unsuspend,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/jobs", eu_admin_jobs_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/jobs", eu_admin_jobs_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/jobs/:id", eu_admin_jobs_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/jobs/:id", eu_admin_jobs_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/jobs/:id/retry", eu_admin_jobs_retry, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
