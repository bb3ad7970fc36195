/*
 * The viewer's interactions with a status (favourite, reblog, bookmark,
 * pin, conversation mute, and their undoing) and the lists of who
 * favourited or reblogged one. Each interaction is one statement that
 * checks visibility and changes the relation at once; what follows it
 * (a notification, fan-out, an activity to the author's server) is fire
 * and forget, as in statuses.c.
 */
#include "statuses_internal.h"

#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/notify.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/trends.h"

enum {
    ACTION_FAVOURITE,
    ACTION_UNFAVOURITE,
    ACTION_BOOKMARK,
    ACTION_UNBOOKMARK,
    ACTION_MUTE,
    ACTION_UNMUTE,
    ACTION_PIN,
    ACTION_UNPIN,
    ACTION_REBLOG,
    ACTION_UNREBLOG,
    ACTION_VISIBLE,
    ACTION_FAVOURITED_BY,
    ACTION_REBLOGGED_BY,
};

/*
 * An interaction is one statement that checks the status is visible to the
 * viewer, changes the viewer's relation to it and returns one row
 * (target id, target author, rows changed, extra...), or no row when the
 * status is not visible. $2 status id, $3 viewer; the target is the CTE t
 * of eunha_action_target() (tenant migration 0041).
 */
const struct eu_sql eu_statuses_actions_sql[] = {
    [ACTION_FAVOURITE] =
        {"statuses.favourite",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (INSERT INTO favourites (tenant_id, account_id, status_id) SELECT $1,"
         " $3::bigint, id FROM t ON CONFLICT DO NOTHING RETURNING id) SELECT t.id,"
         " t.account_id, (SELECT count(*) FROM x) FROM t"},
    [ACTION_UNFAVOURITE] =
        {"statuses.unfavourite",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (DELETE FROM favourites f USING t WHERE f.tenant_id = $1 AND f.status_id ="
         " t.id AND f.account_id = $3::bigint RETURNING f.id) SELECT t.id, t.account_id,"
         " (SELECT count(*) FROM x) FROM t"},
    [ACTION_BOOKMARK] =
        {"statuses.bookmark",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (INSERT INTO bookmarks (tenant_id, account_id, status_id) SELECT $1,"
         " $3::bigint, id FROM t ON CONFLICT DO NOTHING RETURNING id) SELECT t.id,"
         " t.account_id, (SELECT count(*) FROM x) FROM t"},
    [ACTION_UNBOOKMARK] =
        {"statuses.unbookmark",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (DELETE FROM bookmarks b USING t WHERE b.tenant_id = $1 AND b.status_id ="
         " t.id AND b.account_id = $3::bigint RETURNING b.id) SELECT t.id, t.account_id,"
         " (SELECT count(*) FROM x) FROM t"},
    [ACTION_MUTE] =
        {"statuses.mute",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (INSERT INTO conversation_mutes (tenant_id, account_id, conversation_id)"
         " SELECT $1, $3::bigint, conv FROM t ON CONFLICT DO NOTHING RETURNING 1) SELECT"
         " t.id, t.account_id, (SELECT count(*) FROM x) FROM t"},
    [ACTION_UNMUTE] =
        {"statuses.unmute",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (DELETE FROM conversation_mutes c USING t WHERE c.tenant_id = $1 AND"
         " c.conversation_id = t.conv AND c.account_id = $3::bigint RETURNING 1) SELECT"
         " t.id, t.account_id, (SELECT count(*) FROM x) FROM t"},
    /* Pins apply to the status itself, not a reblog's original. Extra
     * columns: visibility, is a reblog, pins held, already pinned. */
    [ACTION_PIN] =
        {"statuses.pin",
         "WITH t AS (SELECT s.id, s.account_id, s.visibility, s.reblog_of_id FROM statuses s"
         "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
         "  s.deleted_at, $3::bigint) vis"
         "  WHERE s.tenant_id = $1 AND s.id = $2::bigint AND vis.ok),"
         " x AS (INSERT INTO status_pins (tenant_id, account_id, status_id)"
         "  SELECT $1, $3::bigint, id FROM t WHERE t.account_id = $3::bigint"
         "  AND t.reblog_of_id IS NULL AND t.visibility < 3 AND (SELECT count(*)"
         "  FROM status_pins WHERE tenant_id = $1 AND account_id = $3::bigint) < 5"
         "  ON CONFLICT DO NOTHING RETURNING id)"
         " SELECT t.id, t.account_id, (SELECT count(*) FROM x), t.visibility,"
         "  t.reblog_of_id IS NOT NULL, (SELECT count(*) FROM status_pins"
         "  WHERE tenant_id = $1 AND account_id = $3::bigint), EXISTS (SELECT 1"
         "  FROM status_pins WHERE tenant_id = $1 AND account_id = $3::bigint"
         "  AND status_id = t.id) FROM t"},
    [ACTION_UNPIN] = {"statuses.unpin",
                      "WITH t AS (SELECT s.id, s.account_id FROM statuses s"
                      "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
                      "  s.deleted_at, $3::bigint) vis"
                      "  WHERE s.tenant_id = $1 AND s.id = $2::bigint AND vis.ok),"
                      " x AS (DELETE FROM status_pins p USING t WHERE p.tenant_id = $1"
                      "  AND p.status_id = t.id AND p.account_id = $3::bigint RETURNING p.id)"
                      " SELECT t.id, t.account_id, (SELECT count(*) FROM x) FROM t"},
    /* Extra columns: the reblog's id (NULL when not allowed). $4 visibility. */
    [ACTION_REBLOG] =
        {"statuses.reblog",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " ex AS (SELECT r.id FROM statuses r, t WHERE r.tenant_id = $1 AND r.reblog_of_id"
         " = t.id AND r.account_id = $3::bigint AND r.deleted_at IS NULL), x AS (INSERT"
         " INTO statuses (tenant_id, account_id, reblog_of_id, visibility, application_id)"
         " SELECT $1, $3::bigint, t.id, greatest($4::smallint, t.visibility), $5::bigint"
         " FROM t WHERE NOT EXISTS (SELECT 1 FROM ex) AND (t.visibility <= 1 OR"
         " (t.visibility = 2 AND t.account_id = $3::bigint)) ON CONFLICT DO NOTHING"
         " RETURNING id) SELECT t.id, t.account_id, (SELECT count(*) FROM x),"
         " coalesce((SELECT id FROM x), (SELECT id FROM ex)) FROM t"},
    /* Extra column: the withdrawn reblogs' ids. */
    [ACTION_UNREBLOG] =
        {"statuses.unreblog",
         "WITH t AS (SELECT * FROM eunha_action_target($1, $2::bigint, $3::bigint)),"
         " x AS (UPDATE statuses r SET deleted_at = now() FROM t WHERE r.tenant_id = $1"
         " AND r.reblog_of_id = t.id AND r.account_id = $3::bigint AND r.deleted_at IS"
         " NULL RETURNING r.id) SELECT t.id, t.account_id, (SELECT count(*) FROM x),"
         " (SELECT coalesce(array_agg(id), '{}') FROM x)::text FROM t"},
    [ACTION_VISIBLE] =
        {"statuses.visible",
         "SELECT 1 FROM statuses s CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id,"
         " s.visibility, s.deleted_at, $3::bigint) vis"
         " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND vis.ok"},
    [ACTION_FAVOURITED_BY] =
        {"statuses.favourited_by",
         "SELECT x.id, (eunha_account(a)).*"
         " FROM favourites x JOIN accounts a ON a.tenant_id = $1 AND a.id = x.account_id"
         " WHERE x.tenant_id = $1 AND x.status_id = $2::bigint"
         " AND a.suspended_at IS NULL",
         "x.id", 3},
    [ACTION_REBLOGGED_BY] =
        {"statuses.reblogged_by",
         "SELECT x.id, (eunha_account(a)).*"
         " FROM statuses x JOIN accounts a ON a.tenant_id = $1 AND a.id = x.account_id"
         " WHERE x.tenant_id = $1 AND x.reblog_of_id = $2::bigint AND x.deleted_at IS NULL"
         " AND a.suspended_at IS NULL",
         "x.id", 3},
    {0},
};

/* ----------------------------------------------------------- interactions */

/* The action is named by its statement (ACTION_FAVOURITE...). */
struct action_ctx {
    int stmt;
};

static void
unfan_each(struct eu_req *req, int64_t id, void *arg)
{
    eu_feed_status_fanout(req->app, req->tenant, id, true);
    char sid[24];
    snprintf(sid, sizeof(sid), "%lld", (long long)id);
    eu_ap_outbox_status_deleted(req->app, req->tenant, req->auth.account_id, sid);
}

static void
on_action(struct eu_req *req, PGresult *res, void *arg)
{
    struct action_ctx *ax = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *target = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    int64_t author = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    bool changed = atoi(PQgetvalue(res, 0, 2)) > 0;
    switch (ax->stmt) {
    case ACTION_FAVOURITE:
        if (changed) {
            eu_notify(req->app->registry, req->tenant, author, req->auth.account_id, "favourite",
                      strtoll(target, NULL, 10));
            eu_trends_touch(req->app, req->tenant);
            eu_ap_outbox_account(req->app, req->tenant, req->auth.account_id, target, EU_AP_LIKE,
                                 NULL);
        }
        break;
    case ACTION_UNFAVOURITE:
        if (changed)
            eu_ap_outbox_account(req->app, req->tenant, req->auth.account_id, target, EU_AP_UNLIKE,
                                 NULL);
        break;
    case ACTION_PIN:
        if (!changed && PQgetvalue(res, 0, 6)[0] != 't') {
            const char *why = author != req->auth.account_id
                                  ? "Someone else's post cannot be pinned"
                              : PQgetvalue(res, 0, 4)[0] == 't' ? "A boost cannot be pinned"
                              : atoi(PQgetvalue(res, 0, 3)) == 3
                                  ? "Posts that are only visible to mentioned users cannot be "
                                    "pinned"
                                  : "You have already pinned the maximum number of posts";
            eu_req_reply_error(req, 422, "Validation failed: %s", why);
            return;
        }
        if (changed)
            eu_ap_outbox_pin(req->app, req->tenant, req->auth.account_id, target, true);
        break;
    case ACTION_UNPIN:
        if (changed)
            eu_ap_outbox_pin(req->app, req->tenant, req->auth.account_id, target, false);
        break;
    case ACTION_REBLOG: {
        if (PQgetisnull(res, 0, 3)) {
            eu_req_reply_error(req, 403, "This action is not allowed");
            return;
        }
        const char *reblog = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
        if (changed) {
            eu_notify(req->app->registry, req->tenant, author, req->auth.account_id, "reblog",
                      strtoll(target, NULL, 10));
            eu_feed_status_fanout(req->app, req->tenant, strtoll(reblog, NULL, 10), false);
            eu_ap_outbox_status(req->app, req->tenant, req->auth.account_id, reblog,
                                EU_AP_STATUS_CREATE, PQgetvalue(res, 0, 1));
        }
        eu_statuses_reply_one(req, reblog);
        return;
    }
    case ACTION_UNREBLOG:
        eu_statuses_each_array_id(PQgetvalue(res, 0, 3), unfan_each, req, NULL);
        break;
    default:
        break;
    }
    eu_statuses_reply_one(req, target);
}

static void
run_action(struct eu_req *req, int stmt)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct action_ctx *ax = eu_arena_calloc(req->arena, sizeof(*ax));
    ax->stmt = stmt;
    const char *params[4] = {id, eu_req_viewer(req)};
    int n = 2;
    if (stmt == ACTION_REBLOG) {
        struct eu_error err = {0};
        json_t *p = eu_req_params(req, &err);
        if (!p) {
            eu_req_reply_eu_error(req, &err);
            return;
        }
        const char *vis = eu_param_str(p, "visibility");
        int v = vis && *vis ? eu_status_visibility_code(vis) : 0;
        if (v < 0 || v == 3) {
            eu_req_reply_error(req, 422, EU_STATUS_BAD_VISIBILITY);
            return;
        }
        params[2] = eu_arena_sprintf(req->arena, "%d", v);
        params[3] = req->auth.app_id
                        ? eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id)
                        : NULL;
        n = 4;
    }
    eu_req_stmt(req, &eu_statuses_actions_sql[stmt], n, params, on_action, ax);
}

void
eu_statuses_favourite(struct eu_req *req)
{
    run_action(req, ACTION_FAVOURITE);
}
void
eu_statuses_unfavourite(struct eu_req *req)
{
    run_action(req, ACTION_UNFAVOURITE);
}
void
eu_statuses_bookmark(struct eu_req *req)
{
    run_action(req, ACTION_BOOKMARK);
}
void
eu_statuses_unbookmark(struct eu_req *req)
{
    run_action(req, ACTION_UNBOOKMARK);
}
void
eu_statuses_mute(struct eu_req *req)
{
    run_action(req, ACTION_MUTE);
}
void
eu_statuses_unmute(struct eu_req *req)
{
    run_action(req, ACTION_UNMUTE);
}
void
eu_statuses_pin(struct eu_req *req)
{
    run_action(req, ACTION_PIN);
}
void
eu_statuses_unpin(struct eu_req *req)
{
    run_action(req, ACTION_UNPIN);
}
void
eu_statuses_reblog(struct eu_req *req)
{
    run_action(req, ACTION_REBLOG);
}
void
eu_statuses_unreblog(struct eu_req *req)
{
    run_action(req, ACTION_UNREBLOG);
}

/* ------------------------------------------- favourited_by, reblogged_by */

struct who_ctx {
    const struct eu_sql *stmt;
    const char *params[6];
    struct eu_page page;
};

static void
on_who(struct eu_req *req, PGresult *res, void *arg)
{
    struct who_ctx *w = arg;
    int n = PQntuples(res);
    json_t *out = json_array();
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    for (int i = 0; i < n; i++)
        json_array_append_new(out, eu_account_json(req, res, i, &ac));
    if (eu_page_is_ascending(&w->page))
        for (size_t i = 0, j = json_array_size(out); i + 1 < j; i++, j--) {
            json_t *a = json_incref(json_array_get(out, i));
            json_array_set(out, i, json_array_get(out, j - 1));
            json_array_set_new(out, j - 1, a);
        }
    if (n) {
        int first = eu_page_is_ascending(&w->page) ? n - 1 : 0, last = n - 1 - first;
        eu_page_link(req, PQgetvalue(res, first, 0), PQgetvalue(res, last, 0));
    }
    eu_req_reply_json(req, 200, out);
}

static void
on_who_visible(struct eu_req *req, PGresult *res, void *arg)
{
    struct who_ctx *w = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_stmt_page(req, w->stmt, &w->page, 5, w->params, on_who, w);
}

/* stmt: the page of accounts, once the status is known to be visible. */
static void
list_who(struct eu_req *req, const struct eu_sql *stmt)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct who_ctx *w = eu_arena_calloc(req->arena, sizeof(*w));
    eu_page_parse(req, &w->page, 40, 80);
    w->stmt = stmt;
    w->params[0] = id;
    eu_page_params(&w->page, w->params + 1);
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_statuses_actions_sql[ACTION_VISIBLE], 2, params, on_who_visible, w);
}

void
eu_statuses_favourited_by(struct eu_req *req)
{
    list_who(req, &eu_statuses_actions_sql[ACTION_FAVOURITED_BY]);
}

void
eu_statuses_reblogged_by(struct eu_req *req)
{
    list_who(req, &eu_statuses_actions_sql[ACTION_REBLOGGED_BY]);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_statuses_actions_routes[] = {
    {EU_HTTP_POST, "/api/v1/statuses/:id/favourite", eu_statuses_favourite, "write:favourites",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/unfavourite", eu_statuses_unfavourite, "write:favourites",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/reblog", eu_statuses_reblog, "write:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/unreblog", eu_statuses_unreblog, "write:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/bookmark", eu_statuses_bookmark, "write:bookmarks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/unbookmark", eu_statuses_unbookmark, "write:bookmarks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/pin", eu_statuses_pin, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/unpin", eu_statuses_unpin, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/mute", eu_statuses_mute, "write:mutes",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/statuses/:id/unmute", eu_statuses_unmute, "write:mutes",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/statuses/:id/favourited_by", eu_statuses_favourited_by, "read:accounts",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/statuses/:id/reblogged_by", eu_statuses_reblogged_by, "read:accounts",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {0},
};
