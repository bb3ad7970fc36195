/*
 * Scheduled statuses: POST /api/v1/statuses with scheduled_at stores one
 * here (statuses.c prepares it as it would a post, then calls
 * eu_scheduled_create), /api/v1/scheduled_statuses lists, shows, moves and
 * cancels them, and a timed task publishes each when it falls due.
 *
 * What is stored is the prepared draft (HTML, mentioned account ids, tags,
 * reply parent, poll), so publishing needs no request: the task hands the
 * draft to eu_status_publish(), the same insert, notifications and feed
 * fan-out as a post made through the API. A quote is checked when it is
 * scheduled and again when it is published, as Mastodon's
 * PublishScheduledStatusWorker hands the quoted status to PostStatusService
 * afresh: one deleted meanwhile means no post at all, one its author no
 * longer lets the author quote a quote left pending. That statement also deletes the
 * scheduled row, so a status is published once however many processes run
 * the task, and a status cancelled at the last moment is not published.
 *
 * The task sleeps until the earliest scheduled_at. Creating or moving a
 * scheduled status wakes it for that time (free until then); cancelling
 * makes it look again at once, so it does not wake for nothing later.
 */

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/isotime.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "statuses_internal.h"

/* Mastodon's PostStatusService limits. */
#define TOTAL_LIMIT "300"
#define DAILY_LIMIT "25"
/* Statuses published per task run; more due ones make it run again at once. */
#define PUBLISH_BATCH 20
#define TOO_SOON "Validation failed: Scheduled at The scheduled date must be in the future"

/* The entity's columns, in this order, for scheduled_json(): the media it
 * holds last. */
#define ENTITY_COLUMNS                                                                             \
    "id::text, eunha_ts(scheduled_at), params::text, (SELECT "                                     \
    "coalesce(json_agg(eunha_media_json(sm) ORDER BY sm.position), '[]')::text FROM "              \
    "media_attachments sm"                                                                         \
    " WHERE sm.tenant_id = $1 AND "                                                                \
    "sm.scheduled_status_id = "                                                                    \
    "scheduled_statuses.id)"
#define ENTITY_COLUMNS_NEW "id::text, eunha_ts(scheduled_at), params::text"

enum {
    SCHEDULED_CREATE,
    SCHEDULED_INDEX,
    SCHEDULED_SHOW,
    SCHEDULED_UPDATE,
    SCHEDULED_DELETE,
    SCHEDULED_DUE,
    SCHEDULED_DROP,
};

const struct eu_sql eu_scheduled_sql[] = {
    /* Counts of the author's scheduled statuses (all, and on that UTC day)
     * before the insert, which happens only under Mastodon's limits; then the
     * new entity, or NULLs. $2 author, $3 time, $4 params, $5 draft, $6 the
     * media ids (checked by statuses.c), held by the new row from now on. */
    [SCHEDULED_CREATE] =
        {"scheduled.create",
         "WITH lim AS (SELECT count(*) AS total, count(*) FILTER (WHERE"
         "  (scheduled_at AT TIME ZONE 'UTC')::date = ($3::timestamptz AT TIME ZONE 'UTC')::date)"
         "  AS day FROM scheduled_statuses WHERE tenant_id = $1 AND account_id = $2::bigint),"
         " ins AS (INSERT INTO scheduled_statuses (tenant_id, account_id, scheduled_at, params,"
         " draft)"
         "  SELECT $1, $2::bigint, $3::timestamptz, $4::jsonb, $5::jsonb FROM lim"
         "  WHERE lim.total < " TOTAL_LIMIT " AND lim.day < " DAILY_LIMIT
         "  RETURNING " ENTITY_COLUMNS_NEW "),"
         " md AS (UPDATE media_attachments m SET scheduled_status_id = ins.id::bigint,"
         "  position = x.i - 1, updated_at = now() FROM ins, unnest($6::bigint[])"
         "  WITH ORDINALITY x(id, i) WHERE m.tenant_id = $1 AND m.id = x.id"
         "  AND m.account_id = $2::bigint AND m.status_id IS NULL"
         "  AND m.scheduled_status_id IS NULL RETURNING m.id)"
         " SELECT ins.*, (SELECT coalesce(json_agg(eunha_media_json(nm) ORDER BY x.i), '[]')"
         "  ::text FROM unnest($6::bigint[]) WITH ORDINALITY x(id, i) JOIN "
         "media_attachments nm"
         "  ON nm.tenant_id = $1 AND nm.id = x.id AND nm.id IN (SELECT id FROM md)),"
         " lim.total FROM lim LEFT JOIN ins ON true"},
    [SCHEDULED_INDEX] = {"scheduled.index",
                         "SELECT " ENTITY_COLUMNS " FROM scheduled_statuses"
                         " WHERE tenant_id = $1 AND account_id = $2::bigint",
                         "id", 3},
    [SCHEDULED_SHOW] = {"scheduled.show",
                        "SELECT " ENTITY_COLUMNS " FROM scheduled_statuses"
                        " WHERE tenant_id = $1 AND id = $2::bigint AND account_id = $3::bigint"},
    [SCHEDULED_UPDATE] =
        {"scheduled.update",
         "UPDATE scheduled_statuses SET scheduled_at ="
         " coalesce($4::timestamptz, scheduled_at) WHERE tenant_id = $1"
         " AND id = $2::bigint AND account_id = $3::bigint RETURNING " ENTITY_COLUMNS},
    /* Its media become unattached uploads again (Mastodon nullifies them). */
    [SCHEDULED_DELETE] = {"scheduled.delete",
                          "WITH d AS (DELETE FROM scheduled_statuses WHERE tenant_id = $1"
                          " AND id = $2::bigint AND account_id = $3::bigint RETURNING id),"
                          " m AS (UPDATE media_attachments SET scheduled_status_id = NULL"
                          " WHERE tenant_id = $1 AND scheduled_status_id IN (SELECT id FROM d))"
                          " SELECT id FROM d"},
    /* The due statuses (kind 0: id, draft), then one row (kind 1) with the
     * milliseconds until the next one not in this batch (NULL: none). */
    [SCHEDULED_DUE] =
        {"scheduled.due",
         "WITH due AS (SELECT id, draft FROM scheduled_statuses WHERE tenant_id = $1"
         "  AND scheduled_at <= now() ORDER BY scheduled_at LIMIT $2::int)"
         " SELECT 0, id::text, draft::text FROM due"
         " UNION ALL SELECT 1, (SELECT ceil(extract(epoch FROM min(scheduled_at) - now()) * 1000)"
         "  ::bigint FROM scheduled_statuses WHERE tenant_id = $1"
         "  AND id NOT IN (SELECT id FROM due))::text, NULL"},
    [SCHEDULED_DROP] = {"scheduled.drop", "DELETE FROM scheduled_statuses WHERE tenant_id = $1"
                                          " AND id = $2::bigint"},
    {0},
};

/* ------------------------------------------------------------------- time */

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "2025-01-31T12:00:00.000Z"; arena-owned. */
static const char *
format_time(struct eu_req *req, int64_t ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[40];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    return eu_arena_sprintf(req->arena, "%s.%03dZ", buf, (int)(ms % 1000));
}

int
eu_scheduled_at_read(struct eu_req *req, const char *text, const char **iso)
{
    int64_t at;
    if (eu_time_parse_iso8601(text, &at) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Scheduled at is invalid");
        return -1;
    }
    int64_t now = now_ms();
    if (at <= now)
        return 0;
    if (at - now < (int64_t)req->app->cfg->scheduled_min_lead_s * 1000) {
        eu_req_reply_error(req, 422, TOO_SOON);
        return -1;
    }
    *iso = format_time(req, at);
    return 1;
}

/* Wakes the publisher for a status due at iso. */
static void
wake_for(struct eu_req *req, const char *iso)
{
    int64_t at;
    if (eu_time_parse_iso8601(iso, &at) == 0)
        eu_queue_task_wake(req->tenant, EU_TASK_SCHEDULED, at - now_ms());
}

/* ----------------------------------------------------------------- entity */

static json_t *
scheduled_json(struct eu_req *req, const PGresult *res, int row, int col)
{
    json_t *params = json_loads(PQgetvalue(res, row, col + 2), 0, NULL);
    json_t *rendered =
        eu_media_attachments_json(req->app, eu_req_base_url(req), PQgetvalue(res, row, col + 3));
    return json_pack("{s:s, s:s, s:o, s:o}", "id", PQgetvalue(res, row, col), "scheduled_at",
                     PQgetvalue(res, row, col + 1), "params", params ? params : json_object(),
                     "media_attachments", rendered);
}

/* Answers with the one row's entity, or 404 when there is none. */
static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, scheduled_json(req, res, 0, 0));
}

/* ---------------------------------------------------------------- create */

static json_t *
draft_json(const struct eu_status_draft *d)
{
    json_t *o =
        json_pack("{s:I, s:I, s:s, s:s, s:s, s:b, s:i, s:s, s:s}", "account_id",
                  (json_int_t)d->account_id, "application_id", (json_int_t)d->application_id,
                  "text", d->text, "html", d->html, "spoiler", d->spoiler ? d->spoiler : "",
                  "sensitive", d->sensitive, "visibility", d->visibility, "mention_ids",
                  d->mention_ids ? d->mention_ids : "{}", "tags", d->tags ? d->tags : "{}");
    if (d->language)
        json_object_set_new(o, "language", json_string(d->language));
    if (d->reply_to) {
        json_object_set_new(o, "reply_to", json_string(d->reply_to));
        json_object_set_new(o, "reply_account", json_string(d->reply_account));
        json_object_set_new(o, "conversation", json_string(d->conversation));
    }
    if (d->poll)
        json_object_set_new(o, "poll", json_loads(d->poll, 0, NULL));
    if (d->media_ids && strcmp(d->media_ids, "{}") != 0)
        json_object_set_new(o, "media_ids", json_string(d->media_ids));
    if (d->quote_policy >= 0)
        json_object_set_new(o, "quote_policy", json_integer(d->quote_policy));
    /* The quote as checked when it was scheduled (src/api/quotes.c). The
     * publisher reads only quoted_id: it checks the quote again, then
     * makes it with the status, tells a local quoted author or asks a
     * remote one, as a post made then would. */
    if (d->quoted_id && d->quoted_account && d->quote_state) {
        json_object_set_new(o, "quoted_id", json_string(d->quoted_id));
        json_object_set_new(o, "quoted_account", json_string(d->quoted_account));
        json_object_set_new(o, "quote_state", json_string(d->quote_state));
        json_object_set_new(o, "quoted_local", json_boolean(d->quoted_local));
    }
    return o;
}

struct create {
    const char *iso;
};

static void
on_created(struct eu_req *req, PGresult *res, void *arg)
{
    struct create *cr = arg;
    if (PQgetisnull(res, 0, 0)) {
        bool total = atoi(PQgetvalue(res, 0, 4)) >= atoi(TOTAL_LIMIT);
        eu_req_reply_error(req, 422,
                           "Validation failed: You have exceeded the limit of %s scheduled posts%s",
                           total ? TOTAL_LIMIT : DAILY_LIMIT, total ? "" : " for today");
        return;
    }
    wake_for(req, cr->iso);
    eu_req_reply_json(req, 200, scheduled_json(req, res, 0, 0));
}

void
eu_scheduled_create(struct eu_req *req, const struct eu_status_draft *d, const char *iso,
                    const char *params)
{
    struct create *cr = eu_arena_calloc(req->arena, sizeof(*cr));
    cr->iso = iso;
    json_t *draft = draft_json(d);
    char *draft_text = json_dumps(draft, JSON_COMPACT);
    json_decref(draft);
    const char *sql_params[] = {eu_req_viewer(req), iso, params,
                                eu_arena_strdup(req->arena, draft_text),
                                d->media_ids ? d->media_ids : "{}"};
    free(draft_text);
    eu_req_stmt(req, &eu_scheduled_sql[SCHEDULED_CREATE], 5, sql_params, on_created, cr);
}

/* ------------------------------------------------------------- endpoints */

struct list_ctx {
    struct eu_page page;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list_ctx *lc = arg;
    int n = PQntuples(res);
    bool asc = eu_page_is_ascending(&lc->page);
    json_t *out = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(out, scheduled_json(req, res, asc ? n - 1 - i : i, 0));
    if (n)
        eu_page_link(req, PQgetvalue(res, asc ? n - 1 : 0, 0), PQgetvalue(res, asc ? 0 : n - 1, 0));
    eu_req_reply_json(req, 200, out);
}

static void
scheduled_index(struct eu_req *req)
{
    struct list_ctx *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    if (eu_page_parse(req, &lc->page, 20, 40) < 0)
        return;
    const char *params[5] = {eu_req_viewer(req)};
    eu_page_params(&lc->page, params + 1);
    eu_req_stmt_page(req, &eu_scheduled_sql[SCHEDULED_INDEX], &lc->page, 5, params, on_list, lc);
}

static void
scheduled_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_scheduled_sql[SCHEDULED_SHOW], 2, params, on_one, NULL);
}

struct move {
    const char *iso; /* NULL: nothing moved */
};

static void
on_moved(struct eu_req *req, PGresult *res, void *arg)
{
    struct move *mv = arg;
    if (PQntuples(res) && mv->iso)
        wake_for(req, mv->iso);
    on_one(req, res, NULL);
}

/* PUT: only scheduled_at can change, as in Mastodon. */
static void
scheduled_update(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct move *mv = eu_arena_calloc(req->arena, sizeof(*mv));
    const char *when = eu_param_str(p, "scheduled_at");
    if (when && *when) {
        int rc = eu_scheduled_at_read(req, when, &mv->iso);
        if (rc < 0)
            return;
        if (rc == 0) {
            eu_req_reply_error(req, 422, TOO_SOON);
            return;
        }
    }
    /* Moving later leaves the publisher's timer at the old time; it then
     * finds nothing due and sleeps until the new one. */
    const char *params[] = {id, eu_req_viewer(req), mv->iso};
    eu_req_stmt(req, &eu_scheduled_sql[SCHEDULED_UPDATE], 3, params, on_moved, mv);
}

static void
on_cancelled(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The publisher may sleep until this one; let it find the next. */
    eu_queue_task_wake(req->tenant, EU_TASK_SCHEDULED, -1);
    eu_req_reply_json(req, 200, json_object());
}

static void
scheduled_delete(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_scheduled_sql[SCHEDULED_DELETE], 2, params, on_cancelled, NULL);
}

/* ------------------------------------------------------------- publisher */

struct publishing {
    struct eu_task_run *run;
    json_t *drafts;  /* array of {"id":..., "draft":{...}} */
    size_t next;     /* index of the draft being published */
    int64_t next_ms; /* when the task should run again */
    int failed;
    /* The draft being published, its strings borrowed from drafts but for
     * poll (owned) and the quote the publish-time check found. */
    struct eu_status_draft d;
    char *poll;
    char quoted_id[24], quoted_account[24];
};

static void publish_next(struct publishing *pb);

static void
on_one_published(const char *status_id, enum eu_db_status st, const char *error,
                 const PGresult *res, void *arg)
{
    (void)res; /* nobody to answer */
    struct publishing *pb = arg;
    const char *sched =
        json_string_value(json_object_get(json_array_get(pb->drafts, pb->next), "id"));
    if (status_id)
        eu_log_info("scheduled", "published scheduled status %s as %s", sched, status_id);
    else if (st != EU_DB_OK) {
        eu_log_warn("scheduled", "cannot publish scheduled status %s: %s", sched, error);
        pb->failed++;
    }
    pb->next++;
    publish_next(pb);
}

static void
on_dropped(PGresult *res, enum eu_db_status st, void *arg)
{
    struct publishing *pb = arg;
    if (st != EU_DB_OK)
        pb->failed++;
    pb->next++;
    publish_next(pb);
}

/* Hands pb->d to eu_status_publish(), which copies what it keeps. */
static void
publish_draft(struct publishing *pb)
{
    struct eu_task_run *run = pb->run;
    eu_status_publish(eu_task_run_app(run), eu_task_run_tenant(run), eu_task_run_conn(run), &pb->d,
                      on_one_published, pb);
    free(pb->poll);
    pb->poll = NULL;
}

/* What the quote is now, checked as the API would check it at this moment
 * (src/api/quotes.c), as Mastodon's PublishScheduledStatusWorker does by
 * handing the quoted status to PostStatusService again. */
static void
on_quote_rechecked(enum eu_quote_recheck verdict, const struct eu_quote_target *q, void *arg)
{
    struct publishing *pb = arg;
    switch (verdict) {
    case EU_QUOTE_RECHECK_ERROR:
        /* Stays due: the task is failed and runs again later. */
        eu_log_warn("scheduled", "cannot check the quote of scheduled status %s",
                    pb->d.scheduled_id);
        pb->failed++;
        free(pb->poll);
        pb->poll = NULL;
        pb->next++;
        publish_next(pb);
        return;
    case EU_QUOTE_RECHECK_GONE: {
        /* The worker's Status.find raises RecordNotFound, which it rescues
         * after destroying the scheduled status: nothing is posted, and its
         * media become unattached uploads again (scheduled.delete). */
        eu_log_info("scheduled", "dropping scheduled status %s: the status it quotes is gone",
                    pb->d.scheduled_id);
        char author[24];
        snprintf(author, sizeof(author), "%lld", (long long)pb->d.account_id);
        const char *params[] = {pb->d.scheduled_id, author};
        free(pb->poll);
        pb->poll = NULL;
        eu_db_conn_stmt(eu_task_run_conn(pb->run), &eu_scheduled_sql[SCHEDULED_DELETE], 2, params,
                        on_dropped, pb);
        return;
    }
    case EU_QUOTE_RECHECK_ALLOWED:
    case EU_QUOTE_RECHECK_REFUSED:
        /* Refused, PostStatusService still makes the quote and leaves it
         * pending (quotes.c says so); the quoted author is told only of
         * an accepted one, as eu_status_publish() decides. */
        snprintf(pb->quoted_id, sizeof(pb->quoted_id), "%s", q->id);
        snprintf(pb->quoted_account, sizeof(pb->quoted_account), "%s", q->account_id);
        pb->d.quoted_id = pb->quoted_id;
        pb->d.quoted_account = pb->quoted_account;
        pb->d.quote_state = q->state; /* a string literal */
        pb->d.quoted_local = q->local;
        publish_draft(pb);
        return;
    }
}

static void
publish_next(struct publishing *pb)
{
    struct eu_task_run *run = pb->run;
    json_t *item = json_array_get(pb->drafts, pb->next);
    if (!item) {
        int64_t next = pb->next_ms;
        bool failed = pb->failed > 0;
        json_decref(pb->drafts);
        free(pb);
        /* A failed one stays due; retrying at once would spin on it. */
        if (failed)
            eu_task_run_fail(run);
        else
            eu_task_run_done(run, next);
        return;
    }
    json_t *o = json_object_get(item, "draft");
    pb->d = (struct eu_status_draft){
        .account_id = json_integer_value(json_object_get(o, "account_id")),
        .application_id = json_integer_value(json_object_get(o, "application_id")),
        .text = json_string_value(json_object_get(o, "text")),
        .html = json_string_value(json_object_get(o, "html")),
        .spoiler = json_string_value(json_object_get(o, "spoiler")),
        .language = json_string_value(json_object_get(o, "language")),
        .sensitive = json_is_true(json_object_get(o, "sensitive")),
        .visibility = (int)json_integer_value(json_object_get(o, "visibility")),
        .reply_to = json_string_value(json_object_get(o, "reply_to")),
        .reply_account = json_string_value(json_object_get(o, "reply_account")),
        .conversation = json_string_value(json_object_get(o, "conversation")),
        .mention_ids = json_string_value(json_object_get(o, "mention_ids")),
        .tags = json_string_value(json_object_get(o, "tags")),
        .media_ids = json_string_value(json_object_get(o, "media_ids")),
        .scheduled_id = json_string_value(json_object_get(item, "id")),
        .quote_policy = json_is_integer(json_object_get(o, "quote_policy"))
                            ? (int)json_integer_value(json_object_get(o, "quote_policy"))
                            : -1,
        /* What it quotes; what the quote is, is decided again below. */
        .quoted_id = json_string_value(json_object_get(o, "quoted_id")),
    };
    struct eu_status_draft *d = &pb->d;
    pb->poll = json_is_object(json_object_get(o, "poll"))
                   ? json_dumps(json_object_get(o, "poll"), JSON_COMPACT)
                   : NULL;
    d->poll = pb->poll;
    if (!d->text || !d->html || d->visibility < 0 || d->visibility > 3 ||
        (d->quoted_id && !eu_id_is_valid(d->quoted_id))) {
        /* Not something this version wrote; it would fail forever, so it is
         * dropped with a trace rather than left to block the task. */
        eu_log_warn("scheduled", "dropping scheduled status %s: its draft is unreadable",
                    d->scheduled_id);
        const char *params[] = {d->scheduled_id};
        free(pb->poll);
        pb->poll = NULL;
        eu_db_conn_stmt(eu_task_run_conn(run), &eu_scheduled_sql[SCHEDULED_DROP], 1, params,
                        on_dropped, pb);
        return;
    }
    if (d->quoted_id) {
        eu_statuses_quote_recheck(eu_task_run_conn(run), d->account_id, d->quoted_id,
                                  on_quote_rechecked, pb);
        return;
    }
    publish_draft(pb);
}

static void
on_due(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_task_run *run = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("scheduled", "cannot look for due scheduled statuses: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        eu_task_run_fail(run);
        return;
    }
    struct publishing *pb = eu_xcalloc(1, sizeof(*pb));
    pb->run = run;
    pb->drafts = json_array();
    pb->next_ms = -1; /* nothing scheduled: sleep the idle poll */
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        if (strcmp(PQgetvalue(res, i, 0), "1") == 0) {
            if (!PQgetisnull(res, i, 1)) {
                pb->next_ms = strtoll(PQgetvalue(res, i, 1), NULL, 10);
                if (pb->next_ms < 0)
                    pb->next_ms = 0;
            }
            continue;
        }
        json_t *draft = json_loads(PQgetvalue(res, i, 2), 0, NULL);
        json_array_append_new(pb->drafts, json_pack("{s:s, s:o}", "id", PQgetvalue(res, i, 1),
                                                    "draft", draft ? draft : json_object()));
    }
    if (json_array_size(pb->drafts) >= PUBLISH_BATCH)
        pb->next_ms = 0; /* a full batch: there may be more due */
    publish_next(pb);
}

void
eu_scheduled_task_run(struct eu_task_run *run)
{
    char batch[16];
    snprintf(batch, sizeof(batch), "%d", PUBLISH_BATCH);
    const char *params[] = {batch};
    eu_db_conn_stmt(eu_task_run_conn(run), &eu_scheduled_sql[SCHEDULED_DUE], 1, params, on_due,
                    run);
}

/* ------------------------------------------------------------------ table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PUT EU_HTTP_PUT
#define DEL EU_HTTP_DELETE
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)
#define OPT (EU_ROUTE_AUTH_OPT | EU_ROUTE_API)

const struct eu_route eu_scheduled_routes[] = {
    {GET, "/api/v1/scheduled_statuses", scheduled_index, "read:statuses", AUTH},
    {GET, "/api/v1/scheduled_statuses/:id", scheduled_show, "read:statuses", AUTH},
    {PUT, "/api/v1/scheduled_statuses/:id", scheduled_update, "write:statuses", AUTH},
    {DEL, "/api/v1/scheduled_statuses/:id", scheduled_delete, "write:statuses", AUTH},
    {0},
};
