/*
 * Lists (/api/v1/lists): named sets of followed accounts whose statuses make
 * the list timeline (served by the social group). A list belongs to one
 * account; anyone else's list id answers 404, as Mastodon does. Members must
 * be accounts the owner follows (or asked to follow); unfollowing or
 * blocking takes them out again (relationships.c).
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts_internal.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* Mastodon's limit of lists per account. */
#define LISTS_MAX 50
#define TITLE_MAX 256

#define LIST_COLUMNS "l.id::text, l.title, l.replies_policy, l.exclusive"

enum {
    LISTS_INDEX,
    LISTS_SHOW,
    LISTS_CREATE,
    LISTS_UPDATE,
    LISTS_DESTROY,
    LISTS_OWNED,
    LISTS_MEMBERS,
    LISTS_ADD_MEMBERS,
    LISTS_REMOVE_MEMBERS,
    LISTS_OF_ACCOUNT,
};

const struct eu_sql eu_lists_sql[] = {
    [LISTS_INDEX] = {"lists.index", "SELECT " LIST_COLUMNS " FROM lists l WHERE l.tenant_id = $1"
                                    " AND l.account_id = $2::bigint ORDER BY l.id"},
    [LISTS_SHOW] = {"lists.show", "SELECT " LIST_COLUMNS " FROM lists l WHERE l.tenant_id = $1"
                                  " AND l.account_id = $2::bigint AND l.id = $3::bigint"},
    /* The insert is a CTE named l for LIST_COLUMNS: the tenant check cannot
     * see the column list of an INSERT whose table has an alias. */
    [LISTS_CREATE] = {"lists.create",
                      "WITH l AS (INSERT INTO lists (tenant_id, account_id, title, replies_policy,"
                      " exclusive) SELECT $1, $2::bigint, $3, coalesce($4, 'list'),"
                      " coalesce($5::boolean, false) WHERE (SELECT count(*) FROM lists"
                      " WHERE tenant_id = $1 AND account_id = $2::bigint) < $6::int RETURNING *)"
                      " SELECT " LIST_COLUMNS " FROM l"},
    [LISTS_UPDATE] = {"lists.update",
                      "UPDATE lists AS l SET title = coalesce($4, title),"
                      " replies_policy = coalesce($5, replies_policy),"
                      " exclusive = coalesce($6::boolean, exclusive)"
                      " WHERE l.tenant_id = $1 AND l.account_id = $2::bigint AND l.id = $3::bigint"
                      " RETURNING " LIST_COLUMNS},
    [LISTS_DESTROY] = {"lists.destroy",
                       "DELETE FROM lists WHERE tenant_id = $1 AND account_id = $2::bigint"
                       " AND id = $3::bigint RETURNING exclusive"},
    [LISTS_OWNED] = {"lists.owned", "SELECT 1 FROM lists WHERE tenant_id = $1"
                                    " AND account_id = $2::bigint AND id = $3::bigint"},
    [LISTS_MEMBERS] = {"lists.members",
                       "SELECT x.id, (eunha_account(a)).* FROM list_accounts x"
                       " JOIN accounts a ON a.tenant_id = $1 AND a.id = x.account_id"
                       " WHERE x.tenant_id = $1 AND x.list_id = $2::bigint",
                       "x.id", 3},
    /* All or nothing: unknown accounts are 404, accounts not followed (nor
     * asked to follow) 422, and then nothing is added. */
    [LISTS_ADD_MEMBERS] = {"lists.add_members",
                           "WITH want AS (SELECT DISTINCT w.id FROM unnest($4::bigint[]) AS w(id)),"
                           " missing AS (SELECT w.id FROM want w WHERE NOT EXISTS (SELECT 1"
                           "  FROM accounts a WHERE a.tenant_id = $1 AND a.id = w.id)),"
                           " unfollowed AS (SELECT w.id FROM want w WHERE NOT EXISTS (SELECT 1"
                           "  FROM follows f WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
                           "  AND f.target_account_id = w.id) AND NOT EXISTS (SELECT 1"
                           "  FROM follow_requests r WHERE r.tenant_id = $1"
                           "  AND r.account_id = $2::bigint AND r.target_account_id = w.id)),"
                           " ins AS (INSERT INTO list_accounts (tenant_id, list_id, account_id)"
                           "  SELECT $1, $3::bigint, w.id FROM want w WHERE NOT EXISTS (SELECT 1"
                           "  FROM missing) AND NOT EXISTS (SELECT 1 FROM unfollowed)"
                           "  ON CONFLICT DO NOTHING)"
                           " SELECT (SELECT count(*) FROM missing),"
                           " (SELECT count(*) FROM unfollowed)"},
    [LISTS_REMOVE_MEMBERS] = {"lists.remove_members",
                              "DELETE FROM list_accounts WHERE tenant_id = $1"
                              " AND list_id = $2::bigint AND account_id = ANY($3::bigint[])"},
    /* One row per list, or one row of NULLs when the account exists in no
     * list of the viewer; no row at all when the account does not exist. */
    [LISTS_OF_ACCOUNT] = {"lists.of_account",
                          "SELECT " LIST_COLUMNS " FROM accounts a LEFT JOIN (list_accounts la"
                          " JOIN lists l ON l.tenant_id = $1 AND l.id = la.list_id"
                          " AND l.account_id = $2::bigint)"
                          " ON la.tenant_id = $1 AND la.account_id = a.id"
                          " WHERE a.tenant_id = $1 AND a.id = $3::bigint ORDER BY l.id"},
    {0},
};

/* The List entity from LIST_COLUMNS at col. New reference. */
static json_t *
list_json(const PGresult *r, int row, int col)
{
    return json_pack("{s:s, s:s, s:s, s:b}", "id", PQgetvalue(r, row, col), "title",
                     PQgetvalue(r, row, col + 1), "replies_policy", PQgetvalue(r, row, col + 2),
                     "exclusive", PQgetvalue(r, row, col + 3)[0] == 't');
}

static bool
replies_policy_is_valid(const char *s)
{
    return strcmp(s, "followed") == 0 || strcmp(s, "list") == 0 || strcmp(s, "none") == 0;
}

static void
on_lists(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, list_json(res, i, 0));
    eu_req_reply_json(req, 200, out);
}

/* Replies with the one list of the result, or 404 when there is none. */
static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, list_json(res, 0, 0));
}

void
eu_lists_index(struct eu_req *req)
{
    const char *p[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_lists_sql[LISTS_INDEX], 1, p, on_lists, NULL);
}

void
eu_lists_show(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_lists_sql[LISTS_SHOW], 2, p, on_list, NULL);
}

/* Reads title, replies_policy and exclusive. title_required for create.
 * Returns 0, or -1 after answering 422. Outputs are NULL when absent. */
static int
read_list_params(struct eu_req *req, bool title_required, const char **title, const char **policy,
                 const char **exclusive)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return -1;
    }
    *title = eu_param_str(params, "title");
    *policy = eu_param_str(params, "replies_policy");
    if ((title_required || *title) && (!*title || !**title)) {
        eu_req_reply_error(req, 422, "Validation failed: Title can't be blank");
        return -1;
    }
    if (*title && strlen(*title) > TITLE_MAX) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Title is too long (maximum is %d "
                           "characters)",
                           TITLE_MAX);
        return -1;
    }
    if (*policy && !replies_policy_is_valid(*policy)) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Replies policy is not included in the "
                           "list");
        return -1;
    }
    bool b;
    int rc = eu_param_bool(params, "exclusive", &b);
    if (rc < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Exclusive is not a boolean");
        return -1;
    }
    *exclusive = rc == 0 ? NULL : b ? "true" : "false";
    return 0;
}

static void
on_list_created(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 422,
                           "Validation failed: You have reached the maximum number "
                           "of lists (%d)",
                           LISTS_MAX);
        return;
    }
    on_list(req, res, NULL);
}

void
eu_lists_create(struct eu_req *req)
{
    const char *title, *policy, *exclusive;
    if (read_list_params(req, true, &title, &policy, &exclusive) < 0)
        return;
    const char *p[] = {eu_req_viewer(req), title, policy, exclusive,
                       eu_arena_sprintf(req->arena, "%d", LISTS_MAX)};
    eu_req_stmt(req, &eu_lists_sql[LISTS_CREATE], 5, p, on_list_created, NULL);
}

void
eu_lists_update(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *title, *policy, *exclusive;
    if (read_list_params(req, false, &title, &policy, &exclusive) < 0)
        return;
    /* An exclusive list takes its members out of the home feed. */
    if (exclusive)
        eu_feed_home_invalidate(req->app, req->tenant, req->auth.account_id);
    const char *p[] = {eu_req_viewer(req), id, title, policy, exclusive};
    eu_req_stmt(req, &eu_lists_sql[LISTS_UPDATE], 5, p, on_list, NULL);
}

static void
on_list_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] == 't')
        eu_feed_home_invalidate(req->app, req->tenant, req->auth.account_id);
    eu_req_reply_json(req, 200, json_object());
}

void
eu_lists_destroy(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_lists_sql[LISTS_DESTROY], 2, p, on_list_deleted, NULL);
}

/* ------------------------------------------------------------ membership */

typedef void (*list_step_cb)(struct eu_req *req, const char *list_id);

struct list_check {
    const char *list_id;
    list_step_cb next;
};

static void
on_list_owned(struct eu_req *req, PGresult *res, void *arg)
{
    struct list_check *lc = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    lc->next(req, lc->list_id);
}

/* Calls next when the :id list exists and belongs to the viewer; 404
 * otherwise. */
static void
with_own_list(struct eu_req *req, list_step_cb next)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct list_check *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    lc->list_id = id;
    lc->next = next;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_lists_sql[LISTS_OWNED], 2, p, on_list_owned, lc);
}

static void
accounts_page(struct eu_req *req, const char *list_id)
{
    struct eu_page *page = eu_arena_calloc(req->arena, sizeof(*page));
    /* limit=0 means every member (Mastodon), which the page parser would
     * clamp to 1. */
    const char *limit = eu_req_query(req, "limit");
    bool all = limit && strcmp(limit, "0") == 0;
    if (eu_page_parse(req, page, 40, 80) < 0)
        return;
    if (all) {
        page->limit = 1000000;
        snprintf(page->limit_s, sizeof(page->limit_s), "%d", page->limit);
    }
    const char *params[5] = {list_id};
    eu_page_params(page, params + 1);
    eu_accounts_reply_page(req, &eu_lists_sql[LISTS_MEMBERS], 5, params, page);
}

void
eu_lists_accounts_index(struct eu_req *req)
{
    with_own_list(req, accounts_page);
}

static void
on_members_added(struct eu_req *req, PGresult *res, void *arg)
{
    if (strcmp(PQgetvalue(res, 0, 0), "0") != 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 1), "0") != 0) {
        eu_req_reply_error(req, 422, "Validation failed: Account follow relationship missing");
        return;
    }
    eu_feed_home_invalidate(req->app, req->tenant, req->auth.account_id);
    eu_req_reply_json(req, 200, json_object());
}

static void
add_members(struct eu_req *req, const char *list_id)
{
    json_t *params = eu_req_params(req, NULL); /* parsed by the caller already */
    const char *ids = eu_accounts_ids_param(req, params, "account_ids");
    if (!ids)
        return;
    const char *p[] = {eu_req_viewer(req), list_id, ids};
    eu_req_stmt(req, &eu_lists_sql[LISTS_ADD_MEMBERS], 3, p, on_members_added, NULL);
}

void
eu_lists_accounts_add(struct eu_req *req)
{
    struct eu_error err = {0};
    if (!eu_req_params(req, &err)) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    with_own_list(req, add_members);
}

static void
on_members_removed(struct eu_req *req, PGresult *res, void *arg)
{
    eu_feed_home_invalidate(req->app, req->tenant, req->auth.account_id);
    eu_req_reply_json(req, 200, json_object());
}

static void
remove_members(struct eu_req *req, const char *list_id)
{
    json_t *params = eu_req_params(req, NULL);
    const char *ids = eu_accounts_ids_param(req, params, "account_ids");
    if (!ids)
        return;
    const char *p[] = {list_id, ids};
    eu_req_stmt(req, &eu_lists_sql[LISTS_REMOVE_MEMBERS], 2, p, on_members_removed, NULL);
}

void
eu_lists_accounts_remove(struct eu_req *req)
{
    struct eu_error err = {0};
    if (!eu_req_params(req, &err)) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    with_own_list(req, remove_members);
}

/* ------------------------------------------------- lists of one account */

static void
on_account_lists(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        if (!PQgetisnull(res, i, 0))
            json_array_append_new(out, list_json(res, i, 0));
    eu_req_reply_json(req, 200, out);
}

void
eu_lists_of_account(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_lists_sql[LISTS_OF_ACCOUNT], 2, p, on_account_lists, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_lists_routes[] = {
    {EU_HTTP_GET, "/api/v1/lists", eu_lists_index, "read:lists", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/lists", eu_lists_create, "write:lists", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/lists/:id", eu_lists_show, "read:lists", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_PUT, "/api/v1/lists/:id", eu_lists_update, "write:lists",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v1/lists/:id", eu_lists_destroy, "write:lists",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/lists/:id/accounts", eu_lists_accounts_index, "read:lists",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/lists/:id/accounts", eu_lists_accounts_add, "write:lists",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v1/lists/:id/accounts", eu_lists_accounts_remove, "write:lists",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/accounts/:id/lists", eu_lists_of_account, "read:lists",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
