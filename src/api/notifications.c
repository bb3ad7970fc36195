/*
 * Notifications: the v1 list (/api/v1/notifications and its single,
 * dismiss, clear and unread_count endpoints) and Mastodon 4.3's grouped
 * notifications (/api/v2/notifications), which Mastodon's web client and
 * Phanpy read. Rows are written by eu_notify() (notify.c), which also gives
 * favourites, reblogs and follows their group_key.
 *
 * A page is one query for the notifications (with their accounts), then
 * eu_statuses_render() for the statuses they point at: a notification whose
 * status the viewer can no longer see (deleted, or hidden by a block since)
 * is left out, as is one whose status a "hide" filter for the
 * "notifications" context matches. A moderation_warning notification
 * (a strike, src/api/staff_accounts.c) carries Mastodon 4.3's
 * AccountWarning, rendered by eunha_account_warning_json() (migration
 * 0057) with the notification's own account as its target_account.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/filters.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "social_internal.h"

/* Mastodon's page sizes for notifications and the unread counters. */
#define NOTES_LIMIT 40
#define NOTES_LIMIT_MAX 80
#define UNREAD_LIMIT 100
#define UNREAD_LIMIT_MAX 1000

/* $1 tenant, $2 viewer, $3 types (JSON array or NULL), $4 exclude_types, $5 account_id. The
 * tenant predicates of notifications n and of the subqueries are here. */
#define NOTE_WHERE                                                                                 \
    " n.tenant_id = $1 AND n.account_id = $2::bigint"                                              \
    " AND ($3::json IS NULL OR n.type IN (SELECT json_array_elements_text($3::json)))"             \
    " AND ($4::json IS NULL OR n.type NOT IN (SELECT json_array_elements_text($4::json)))"         \
    " AND ($5::bigint IS NULL OR n.from_account_id = $5::bigint)"                                  \
    " AND NOT EXISTS (SELECT 1 FROM accounts fa WHERE fa.tenant_id = $1"                           \
    "  AND fa.id = n.from_account_id AND fa.suspended_at IS NOT NULL)"                             \
    " AND (n.status_id IS NULL OR EXISTS (SELECT 1 FROM statuses ns WHERE ns.tenant_id = $1"       \
    "  AND ns.id = n.status_id AND ns.deleted_at IS NULL))"

/* A strike's AccountWarning (without target_account) as JSON text, on a
 * notifications row n; NULL on every other kind. */
#define WARNING_COLUMN                                                                             \
    "CASE WHEN n.account_warning_id IS NOT NULL THEN"                                              \
    " eunha_account_warning_json($1, n.account_warning_id)::text END AS moderation_warning"

/* The notification's columns, read by name, before the account's. */
#define NOTE_COLUMNS                                                                               \
    "n.id::text AS id, n.type, eunha_ts(n.created_at) AS created_at,"                              \
    " coalesce(n.group_key, 'ungrouped-' || n.id) AS group_key, n.status_id::text AS status_id,"   \
    " " WARNING_COLUMN ", "

/* Statement text is fixed at compile time: constants go into it as
 * literals. */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Unread means newer than the "notifications" marker (all when unset). */
#define AFTER_MARKER                                                                               \
    " AND n.id > coalesce((SELECT m.last_read_id FROM markers m WHERE m.tenant_id = $1"            \
    "  AND m.account_id = $2::bigint AND m.timeline = 'notifications'), 0)"

/*
 * After deleting notifications d (from_account_id, filtered, type) of $2:
 * each filtered mention was counted in its sender's notification request
 * (src/social/notify.c), so the request loses as many, and goes when none
 * is left, as Mastodon's NotificationRequest#reconsider_existence!.
 */
#define REQUESTS_DECREMENT                                                                         \
    ", c AS (SELECT from_account_id, count(*) AS n FROM d WHERE filtered AND type = 'mention'"     \
    "  GROUP BY from_account_id),"                                                                 \
    " u AS (UPDATE notification_requests r SET notifications_count = r.notifications_count - c.n," \
    "  updated_at = now() FROM c WHERE r.tenant_id = $1 AND r.account_id = $2::bigint"             \
    "  AND r.from_account_id = c.from_account_id AND r.notifications_count > c.n RETURNING r.id)"  \
    " DELETE FROM notification_requests r USING c WHERE r.tenant_id = $1"                          \
    " AND r.account_id = $2::bigint AND r.from_account_id = c.from_account_id"                     \
    " AND r.notifications_count <= c.n"

enum {
    NOTIFICATIONS_INDEX,
    NOTIFICATIONS_SHOW,
    NOTIFICATIONS_DISMISS,
    NOTIFICATIONS_CLEAR,
    NOTIFICATIONS_UNREAD_COUNT,
    NOTIFICATIONS_GROUPS,
    NOTIFICATIONS_GROUP_SAMPLES,
    NOTIFICATIONS_GROUP_DISMISS,
    NOTIFICATIONS_GROUP_ACCOUNTS,
    NOTIFICATIONS_GROUPS_UNREAD_COUNT,
};

const struct eu_sql eu_notifications_sql[] = {
    [NOTIFICATIONS_INDEX] = {"notifications.index",
                             "SELECT " NOTE_COLUMNS
                             "(eunha_account(a)).* FROM notifications n JOIN accounts a"
                             " ON a.tenant_id = $1 AND a.id = n.from_account_id"
                             " WHERE" NOTE_WHERE " AND (NOT n.filtered OR $10::boolean)",
                             "n.id", 6},
    [NOTIFICATIONS_SHOW] =
        {"notifications.show",
         "SELECT " NOTE_COLUMNS
         "(eunha_account(a)).* FROM notifications n JOIN accounts a ON a.tenant_id = $1"
         " AND a.id = n.from_account_id"
         " WHERE" NOTE_WHERE " AND n.id = $6::bigint"},
    [NOTIFICATIONS_DISMISS] =
        {"notifications.dismiss",
         "WITH d AS (DELETE FROM notifications WHERE tenant_id = $1 AND account_id = $2::bigint"
         " AND id = $3::bigint RETURNING from_account_id, filtered, type)" REQUESTS_DECREMENT},
    [NOTIFICATIONS_CLEAR] =
        {"notifications.clear",
         "WITH d AS (DELETE FROM notifications WHERE tenant_id = $1 AND account_id = $2::bigint"
         " RETURNING from_account_id, filtered, type)" REQUESTS_DECREMENT},
    [NOTIFICATIONS_UNREAD_COUNT] =
        {"notifications.unread_count",
         "SELECT count(*) FROM (SELECT 1 FROM notifications n WHERE" NOTE_WHERE AFTER_MARKER
         " AND NOT n.filtered LIMIT $6::int) x"},
    /*
     * One row per group: key, count, type, most recent id, oldest id in the
     * page, latest time, status id, sample account ids (JSON array of strings,
     * most recent first). $7..$10 are the page (max_id, since_id, min_id, limit);
     * $11 an exact group key or NULL. As in Mastodon 4.3, the page is the
     * `limit` groups whose newest notification lies inside the bounds; a
     * group's count and samples take every notification of it up to the
     * newest head of the page, and page_min_id its oldest one down to the
     * oldest head.
     */
    [NOTIFICATIONS_GROUPS] =
        {"notifications.groups",
         "WITH base AS (SELECT n.id, eunha_group_key(n.group_key, n.type, n.id, $6::json) AS gk"
         " FROM notifications n WHERE" NOTE_WHERE " AND ($7::bigint IS NULL OR n.id < $7::bigint)"
         " AND ($8::bigint IS NULL OR n.id > $8::bigint)"
         " AND ($9::bigint IS NULL OR n.id > $9::bigint)"
         " AND ($11::text IS NULL OR eunha_group_key(n.group_key, n.type, n.id, $6::json) = $11)"
         " AND (NOT n.filtered OR $12::boolean)"
         /* At most 2,000 notifications a page looks at: bounds the work of
          * one page for an account with a very large number of them. */
         " ORDER BY CASE WHEN $9::bigint IS NULL THEN -n.id ELSE n.id END LIMIT 2000),"
         " heads AS (SELECT gk, max(id) AS head FROM base GROUP BY gk"
         "  ORDER BY CASE WHEN $9::bigint IS NULL THEN -max(id) ELSE max(id) END"
         "  LIMIT $10::int),"
         " range AS (SELECT min(head) AS lo, max(head) AS hi FROM heads)"
         " SELECT h.gk AS group_key,"
         "  (SELECT count(*) FROM notifications g WHERE g.tenant_id = $1"
         "   AND g.account_id = $2::bigint AND (g.group_key = h.gk OR g.id = h.head)"
         "   AND g.id <= r.hi AND (NOT g.filtered OR $12::boolean)) AS notifications_count,"
         "  hn.type, h.head::text AS most_recent_id,"
         "  (SELECT min(g.id) FROM notifications g WHERE g.tenant_id = $1"
         "   AND g.account_id = $2::bigint AND (g.group_key = h.gk OR g.id = h.head)"
         "   AND g.id >= r.lo AND (NOT g.filtered OR $12::boolean))::text AS page_min_id,"
         "  eunha_ts(hn.created_at) AS latest_at, hn.status_id::text AS status_id,"
         "  CASE WHEN hn.account_warning_id IS NOT NULL THEN"
         "   eunha_account_warning_json($1, hn.account_warning_id)::text END AS moderation_warning,"
         /* 8 sample accounts, the most recent first (Mastodon's
          * sample_account_ids). */
         "  (SELECT json_agg(x.a::text ORDER BY x.last DESC) FROM (SELECT"
         "   g.from_account_id AS a, max(g.id) AS last FROM notifications g"
         "   WHERE g.tenant_id = $1 AND g.account_id = $2::bigint"
         "   AND (g.group_key = h.gk OR g.id = h.head) AND g.id <= r.hi"
         "   AND (NOT g.filtered OR $12::boolean)"
         "   GROUP BY g.from_account_id ORDER BY max(g.id) DESC LIMIT 8) x)::text AS samples"
         " FROM heads h JOIN notifications hn ON hn.tenant_id = $1 AND hn.id = h.head, range r"
         " ORDER BY h.head DESC"},
    /* The sample accounts of a page of groups, in the order of $2. */
    [NOTIFICATIONS_GROUP_SAMPLES] =
        {"notifications.group_samples",
         "SELECT (eunha_account(a)).* FROM json_array_elements_text($2::json)"
         " WITH ORDINALITY x(id, ord) JOIN accounts a ON a.tenant_id = $1"
         " AND a.id = x.id::bigint"
         " ORDER BY x.ord"},
    /* Every notification of the group (for ungrouped-<id>, that one). */
    [NOTIFICATIONS_GROUP_DISMISS] = {"notifications.group_dismiss",
                                     "DELETE FROM notifications n WHERE n.tenant_id = $1"
                                     " AND n.account_id = $2::bigint AND"
                                     " (n.group_key = $3 OR 'ungrouped-' || n.id = $3)"},
    [NOTIFICATIONS_GROUP_ACCOUNTS] =
        {"notifications.group_accounts",
         "SELECT (eunha_account(a)).* FROM (SELECT n.from_account_id AS id,"
         " max(n.id) AS last FROM notifications n WHERE n.tenant_id = $1"
         " AND n.account_id = $2::bigint AND (n.group_key = $3 OR "
         "'ungrouped-' || n.id = $3) AND NOT n.filtered"
         " GROUP BY n.from_account_id) x JOIN accounts a ON a.tenant_id = $1"
         " AND a.id = x.id"
         " WHERE a.suspended_at IS NULL ORDER BY x.last DESC LIMIT 80"},
    [NOTIFICATIONS_GROUPS_UNREAD_COUNT] = {"notifications.groups_unread_count",
                                           "SELECT count(*) FROM (SELECT DISTINCT"
                                           " eunha_group_key(n.group_key, n.type, n.id, $6::json)"
                                           " FROM notifications n WHERE" NOTE_WHERE AFTER_MARKER
                                           " AND NOT n.filtered LIMIT $7::int) x"},
    {0},
};

static void
decref_json(void *p)
{
    json_decref(p);
}

/* A JSON value the request owns: released with it, whatever path ends it. */
static json_t *
arena_json(struct eu_req *req, json_t *v)
{
    eu_arena_on_free(req->arena, decref_json, v);
    return v;
}

static bool
reply_params_error(struct eu_req *req, json_t **params)
{
    struct eu_error err = {0};
    *params = eu_req_params(req, &err);
    if (!*params) {
        eu_req_reply_eu_error(req, &err);
        return true;
    }
    return false;
}

/* An array parameter as JSON text (NULL when absent), arena-owned. */
static const char *
array_param_json(struct eu_req *req, json_t *params, const char *key)
{
    json_t *a = eu_param_array(params, key);
    if (!a)
        return NULL;
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    const char *out = eu_arena_strdup(req->arena, s);
    free(s);
    return out;
}

struct type_filters {
    const char *types, *exclude, *account;
};

static void
read_type_filters(struct eu_req *req, json_t *params, struct type_filters *tf)
{
    tf->types = array_param_json(req, params, "types");
    tf->exclude = array_param_json(req, params, "exclude_types");
    tf->account = eu_param_str(params, "account_id");
    if (tf->account && !eu_id_is_valid(tf->account))
        tf->account = "0"; /* matches nothing, as an unknown account would */
}

/* Filtered notifications (a sender the recipient's policy holds back, see
 * notification_requests.c) stay out of lists unless include_filtered=true,
 * as in Mastodon 4.3; unread counters never count them. */
static const char *
include_filtered(json_t *params)
{
    bool on = false;
    return eu_param_bool(params, "include_filtered", &on) == 1 && on ? "true" : "false";
}

/* ------------------------------------------------------------------ v1 */

struct note {
    const char *id, *type, *created_at, *group_key, *status_id;
    json_t *account; /* borrowed from the page's accounts */
    json_t *warning; /* a strike's AccountWarning, or NULL; held by the arena */
};

/* The AccountWarning JSON text of column col of row i, or NULL; the
 * request's arena holds it. */
static json_t *
warning_of(struct eu_req *req, const PGresult *res, int i, int col)
{
    if (col < 0 || PQgetisnull(res, i, col))
        return NULL;
    json_t *w = json_loads(PQgetvalue(res, i, col), 0, NULL);
    if (!json_is_object(w)) {
        json_decref(w);
        return NULL;
    }
    return arena_json(req, w);
}

/* A copy of warning with target_account set (both borrowed); new reference. */
static json_t *
warning_with_target(json_t *warning, json_t *target)
{
    json_t *w = json_copy(warning);
    json_object_set(w, "target_account", target ? target : json_null());
    return w;
}

struct note_page {
    struct eu_page page;
    struct note *notes;
    size_t n;
    const char *first_id, *last_id; /* for the Link header; NULL: none */
    bool single;                    /* GET /:id: one object or 404 */
    json_t *statuses;               /* id -> Status, once rendered */
};

static json_t *
note_json(struct note_page *np, const struct note *nt)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:O}", "id", nt->id, "type", nt->type, "created_at",
                          nt->created_at, "group_key", nt->group_key, "account", nt->account);
    if (nt->status_id)
        json_object_set(o, "status", json_object_get(np->statuses, nt->status_id));
    if (nt->warning)
        json_object_set_new(o, "moderation_warning", warning_with_target(nt->warning, nt->account));
    return o;
}

static void
finish_notes(struct eu_req *req, void *arg)
{
    struct note_page *np = arg;
    json_t *out = json_array();
    for (size_t i = 0; i < np->n; i++) {
        struct note *nt = &np->notes[i];
        if (nt->status_id) {
            json_t *st = json_object_get(np->statuses, nt->status_id);
            if (!st)
                continue; /* no longer visible to the viewer */
            json_t *reblog = json_object_get(st, "reblog");
            if (eu_filters_apply(req, json_is_object(reblog) ? reblog : st, "notifications"))
                continue;
        }
        json_array_append_new(out, note_json(np, nt));
    }
    if (np->single) {
        if (json_array_size(out) == 0)
            eu_req_reply_error(req, 404, "Record not found");
        else
            eu_req_reply_json(req, 200, json_incref(json_array_get(out, 0)));
        json_decref(out);
        return;
    }
    eu_page_link(req, np->first_id, np->last_id);
    eu_req_reply_json(req, 200, out);
}

static void
on_note_statuses(struct eu_req *req, json_t *array, void *arg)
{
    struct note_page *np = arg;
    eu_req_enter(req);
    arena_json(req, array);
    size_t i;
    json_t *st;
    json_array_foreach(array, i, st)
    {
        const char *id = json_string_value(json_object_get(st, "id"));
        if (id)
            json_object_set(np->statuses, id, st);
    }
    eu_filters_load(req, finish_notes, np);
}

/* Renders the statuses of np's notifications, then finishes the page. */
static void
render_note_statuses(struct eu_req *req, struct note_page *np)
{
    np->statuses = arena_json(req, json_object());
    const char **ids = eu_arena_alloc(req->arena, sizeof(char *) * (np->n ? np->n : 1));
    size_t k = 0;
    for (size_t i = 0; i < np->n; i++)
        if (np->notes[i].status_id)
            ids[k++] = np->notes[i].status_id;
    if (k == 0) {
        finish_notes(req, np);
        return;
    }
    eu_statuses_render(req, ids, k, on_note_statuses, np);
}

static void
on_notes(struct eu_req *req, PGresult *res, void *arg)
{
    struct note_page *np = arg;
    int n = PQntuples(res);
    bool asc = !np->single && eu_page_is_ascending(&np->page);
    json_t *accounts = arena_json(req, json_array());
    np->notes = eu_arena_calloc(req->arena, sizeof(struct note) * (size_t)(n ? n : 1));
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    int c_id = PQfnumber(res, "id"), c_type = PQfnumber(res, "type");
    int c_created = PQfnumber(res, "created_at"), c_key = PQfnumber(res, "group_key");
    int c_status = PQfnumber(res, "status_id"), c_warning = PQfnumber(res, "moderation_warning");
    for (int k = 0; k < n; k++) {
        int i = asc ? n - 1 - k : k;
        struct note *nt = &np->notes[np->n++];
        nt->id = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_id));
        nt->type = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_type));
        nt->created_at = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_created));
        nt->group_key = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_key));
        nt->status_id = PQgetisnull(res, i, c_status)
                            ? NULL
                            : eu_arena_strdup(req->arena, PQgetvalue(res, i, c_status));
        nt->account = eu_account_json(req, res, i, &ac);
        nt->warning = warning_of(req, res, i, c_warning);
        json_array_append_new(accounts, nt->account);
    }
    if (n) {
        np->first_id = np->notes[0].id;
        np->last_id = np->notes[n - 1].id;
    }
    render_note_statuses(req, np);
}

void
eu_notifications_index(struct eu_req *req)
{
    json_t *params;
    if (reply_params_error(req, &params))
        return;
    struct note_page *np = eu_arena_calloc(req->arena, sizeof(*np));
    eu_page_parse(req, &np->page, NOTES_LIMIT, NOTES_LIMIT_MAX);
    struct type_filters tf;
    read_type_filters(req, params, &tf);
    const char *p[9] = {eu_req_viewer(req), tf.types, tf.exclude, tf.account};
    eu_page_params(&np->page, p + 4);
    p[8] = include_filtered(params);
    eu_req_stmt_page(req, &eu_notifications_sql[NOTIFICATIONS_INDEX], &np->page, 9, p, on_notes,
                     np);
}

void
eu_notifications_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct note_page *np = eu_arena_calloc(req->arena, sizeof(*np));
    np->single = true;
    const char *p[] = {eu_req_viewer(req), NULL, NULL, NULL, id};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_SHOW], 5, p, on_notes, np);
}

static void
on_empty_reply(struct eu_req *req, PGresult *res, void *arg)
{
    eu_req_reply_json(req, 200, json_object());
}

/* Mastodon answers {} whether or not there was such a notification. */
void
eu_notifications_dismiss(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_DISMISS], 2, p, on_empty_reply, NULL);
}

void
eu_notifications_clear(struct eu_req *req)
{
    const char *p[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_CLEAR], 1, p, on_empty_reply, NULL);
}

static void
on_count(struct eu_req *req, PGresult *res, void *arg)
{
    json_int_t n = PQntuples(res) ? atoll(PQgetvalue(res, 0, 0)) : 0;
    eu_req_reply_json(req, 200, json_pack("{s:I}", "count", n));
}

/* The limit of an unread counter: it counts up to this many. */
static const char *
unread_limit(struct eu_req *req, json_t *params)
{
    long long limit = UNREAD_LIMIT;
    if (eu_param_int(params, "limit", &limit) < 0 || limit < 1)
        limit = UNREAD_LIMIT;
    if (limit > UNREAD_LIMIT_MAX)
        limit = UNREAD_LIMIT_MAX;
    return eu_arena_sprintf(req->arena, "%lld", limit);
}

void
eu_notifications_unread_count(struct eu_req *req)
{
    json_t *params;
    if (reply_params_error(req, &params))
        return;
    struct type_filters tf;
    read_type_filters(req, params, &tf);
    const char *p[] = {eu_req_viewer(req), tf.types, tf.exclude, tf.account,
                       unread_limit(req, params)};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_UNREAD_COUNT], 5, p, on_count, NULL);
}

/* ------------------------------------------------------------- grouped */

struct group {
    const char *key, *type, *head, *min, *at, *status_id;
    long long count;
    json_t *samples; /* owned by the page's holder array */
    json_t *warning; /* a strike's AccountWarning, or NULL; held by the arena */
};

/* The page's Account entity with id, or NULL. */
static json_t *
account_by_id(json_t *accounts, const char *id)
{
    size_t i;
    json_t *a;
    json_array_foreach(accounts, i, a)
    {
        const char *aid = json_string_value(json_object_get(a, "id"));
        if (aid && id && strcmp(aid, id) == 0)
            return a;
    }
    return NULL;
}

struct group_page {
    struct eu_page page;
    struct group *groups;
    size_t n;
    bool single;      /* GET /:group_key: 404 when empty */
    json_t *accounts; /* Account entities in first-seen order */
    json_t *statuses; /* id -> Status */
    json_t *holder;   /* keeps the groups' JSON alive */
};

static void
finish_groups(struct eu_req *req, void *arg)
{
    struct group_page *gp = arg;
    json_t *groups = json_array();
    json_t *statuses = json_array();
    json_t *seen = json_object();
    for (size_t i = 0; i < gp->n; i++) {
        struct group *g = &gp->groups[i];
        if (g->status_id) {
            json_t *st = json_object_get(gp->statuses, g->status_id);
            if (!st)
                continue;
            json_t *reblog = json_object_get(st, "reblog");
            if (eu_filters_apply(req, json_is_object(reblog) ? reblog : st, "notifications"))
                continue;
            if (!json_object_get(seen, g->status_id)) {
                json_object_set_new(seen, g->status_id, json_true());
                json_array_append(statuses, st);
            }
        }
        json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:O}", "group_key", g->key,
                              "notifications_count", (json_int_t)g->count, "type", g->type,
                              "most_recent_notification_id", g->head, "page_min_id", g->min,
                              "page_max_id", g->head, "latest_page_notification_at", g->at,
                              "sample_account_ids", g->samples);
        if (g->status_id)
            json_object_set_new(o, "status_id", json_string(g->status_id));
        /* A strike's notification is from its target, the one sample. */
        if (g->warning)
            json_object_set_new(
                o, "moderation_warning",
                warning_with_target(
                    g->warning,
                    account_by_id(gp->accounts, json_string_value(json_array_get(g->samples, 0)))));
        json_array_append_new(groups, o);
    }
    json_decref(seen);
    if (gp->single && json_array_size(groups) == 0) {
        json_decref(groups);
        json_decref(statuses);
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (!gp->single && gp->n)
        eu_page_link(req, gp->groups[0].head, gp->groups[gp->n - 1].head);
    eu_req_reply_json(req, 200,
                      json_pack("{s:O, s:o, s:o}", "accounts", gp->accounts, "statuses", statuses,
                                "notification_groups", groups));
}

static void
on_group_statuses(struct eu_req *req, json_t *array, void *arg)
{
    struct group_page *gp = arg;
    eu_req_enter(req);
    arena_json(req, array);
    size_t i;
    json_t *st;
    json_array_foreach(array, i, st)
    {
        const char *id = json_string_value(json_object_get(st, "id"));
        if (id)
            json_object_set(gp->statuses, id, st);
    }
    eu_filters_load(req, finish_groups, gp);
}

static void
on_group_accounts(struct eu_req *req, PGresult *res, void *arg)
{
    struct group_page *gp = arg;
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(gp->accounts, eu_account_json(req, res, i, &ac));
    const char **ids = eu_arena_alloc(req->arena, sizeof(char *) * (gp->n ? gp->n : 1));
    size_t k = 0;
    for (size_t i = 0; i < gp->n; i++)
        if (gp->groups[i].status_id)
            ids[k++] = gp->groups[i].status_id;
    if (k == 0) {
        finish_groups(req, gp);
        return;
    }
    eu_statuses_render(req, ids, k, on_group_statuses, gp);
}

static void
on_groups(struct eu_req *req, PGresult *res, void *arg)
{
    struct group_page *gp = arg;
    int n = PQntuples(res);
    gp->groups = eu_arena_calloc(req->arena, sizeof(struct group) * (size_t)(n ? n : 1));
    gp->holder = arena_json(req, json_array());
    gp->accounts = arena_json(req, json_array());
    gp->statuses = arena_json(req, json_object());
    json_t *all = json_array(); /* distinct sample ids, first seen first */
    json_t *seen = json_object();
    int c_key = PQfnumber(res, "group_key"), c_count = PQfnumber(res, "notifications_count");
    int c_type = PQfnumber(res, "type"), c_head = PQfnumber(res, "most_recent_id");
    int c_min = PQfnumber(res, "page_min_id"), c_at = PQfnumber(res, "latest_at");
    int c_status = PQfnumber(res, "status_id"), c_samples = PQfnumber(res, "samples");
    int c_warning = PQfnumber(res, "moderation_warning");
    for (int i = 0; i < n; i++) {
        struct group *g = &gp->groups[gp->n++];
        g->key = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_key));
        g->count = atoll(PQgetvalue(res, i, c_count));
        g->type = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_type));
        g->head = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_head));
        g->min = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_min));
        g->at = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_at));
        g->status_id = PQgetisnull(res, i, c_status)
                           ? NULL
                           : eu_arena_strdup(req->arena, PQgetvalue(res, i, c_status));
        g->warning = warning_of(req, res, i, c_warning);
        g->samples = json_loads(PQgetvalue(res, i, c_samples), 0, NULL);
        if (!json_is_array(g->samples)) {
            json_decref(g->samples);
            g->samples = json_array();
        }
        json_array_append_new(gp->holder, g->samples);
        size_t j;
        json_t *v;
        json_array_foreach(g->samples, j, v)
        {
            if (!json_object_get(seen, json_string_value(v))) {
                json_object_set_new(seen, json_string_value(v), json_true());
                json_array_append(all, v);
            }
        }
    }
    json_decref(seen);
    char *ids = json_dumps(all, JSON_COMPACT);
    json_decref(all);
    const char *p[] = {eu_arena_strdup(req->arena, ids)};
    free(ids);
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_GROUP_SAMPLES], 1, p, on_group_accounts,
                gp);
}

static void
query_groups(struct eu_req *req, struct group_page *gp, json_t *params, const char *key)
{
    struct type_filters tf = {0};
    const char *grouped = NULL;
    if (params) {
        read_type_filters(req, params, &tf);
        grouped = array_param_json(req, params, "grouped_types");
    }
    const char *p[11] = {eu_req_viewer(req), tf.types, tf.exclude, tf.account, grouped};
    eu_page_params(&gp->page, p + 5);
    p[9] = key;
    p[10] = params ? include_filtered(params) : "false";
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_GROUPS], 11, p, on_groups, gp);
}

void
eu_notifications_groups_index(struct eu_req *req)
{
    json_t *params;
    if (reply_params_error(req, &params))
        return;
    struct group_page *gp = eu_arena_calloc(req->arena, sizeof(*gp));
    eu_page_parse(req, &gp->page, NOTES_LIMIT, NOTES_LIMIT_MAX);
    query_groups(req, gp, params, NULL);
}

/* A group key as the API shows it: ungrouped-<id> or <type>-...-<hour>. */
static const char *
group_key_param(struct eu_req *req)
{
    const char *key = eu_req_param(req, "group_key");
    if (!key || !*key || strlen(key) > 200) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return key;
}

void
eu_notifications_groups_show(struct eu_req *req)
{
    const char *key = group_key_param(req);
    if (!key)
        return;
    struct group_page *gp = eu_arena_calloc(req->arena, sizeof(*gp));
    gp->single = true;
    gp->page.limit = 1;
    snprintf(gp->page.limit_s, sizeof(gp->page.limit_s), "1");
    query_groups(req, gp, NULL, key);
}

void
eu_notifications_groups_dismiss(struct eu_req *req)
{
    const char *key = group_key_param(req);
    if (!key)
        return;
    const char *p[] = {eu_req_viewer(req), key};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_GROUP_DISMISS], 2, p, on_empty_reply,
                NULL);
}

static void
on_accounts(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *out = json_array();
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, eu_account_json(req, res, i, &ac));
    eu_req_reply_json(req, 200, out);
}

/* GET /api/v2/notifications/:group_key/accounts: everyone in the group,
 * most recent first. */
void
eu_notifications_groups_accounts(struct eu_req *req)
{
    const char *key = group_key_param(req);
    if (!key)
        return;
    const char *p[] = {eu_req_viewer(req), key};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_GROUP_ACCOUNTS], 2, p, on_accounts, NULL);
}

void
eu_notifications_groups_unread_count(struct eu_req *req)
{
    json_t *params;
    if (reply_params_error(req, &params))
        return;
    struct type_filters tf;
    read_type_filters(req, params, &tf);
    const char *p[] = {eu_req_viewer(req),
                       tf.types,
                       tf.exclude,
                       tf.account,
                       array_param_json(req, params, "grouped_types"),
                       unread_limit(req, params)};
    eu_req_stmt(req, &eu_notifications_sql[NOTIFICATIONS_GROUPS_UNREAD_COUNT], 6, p, on_count,
                NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_notifications_routes[] = {
    {EU_HTTP_GET, "/api/v1/notifications", eu_notifications_index, "read:notifications",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/notifications/unread_count", eu_notifications_unread_count,
     "read:notifications", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/notifications/clear", eu_notifications_clear, "write:notifications",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/notifications/:id", eu_notifications_show, "read:notifications",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/notifications/:id/dismiss", eu_notifications_dismiss,
     "write:notifications", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/notifications", eu_notifications_groups_index, "read:notifications",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/notifications/unread_count", eu_notifications_groups_unread_count,
     "read:notifications", EU_ROUTE_AUTH | EU_ROUTE_API},
    /* Mastodon 4.3's grouped API clears all the same way. */
    {EU_HTTP_POST, "/api/v2/notifications/clear", eu_notifications_clear, "write:notifications",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/notifications/:group_key", eu_notifications_groups_show,
     "read:notifications", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/notifications/:group_key/accounts", eu_notifications_groups_accounts,
     "read:notifications", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v2/notifications/:group_key/dismiss", eu_notifications_groups_dismiss,
     "write:notifications", EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
