/*
 * Mastodon's admin API for reports, for a tenant's own staff
 * (/api/v1/admin/reports): list (open ones unless resolved is given, by
 * reporter or target), show, assign to oneself, unassign, resolve and
 * reopen, and edit (PUT: the category and the rules it cites). Every
 * route needs admin:read:reports or admin:write:reports and a role with
 * manage_reports (Mastodon's ReportPolicy). Each change writes its
 * admin_action_logs row in the same statement.
 *
 * An Admin::Report embeds four Admin::Accounts and the reported statuses,
 * so a page is three statements whatever its size: the reports, the
 * accounts they name (staff_accounts.c), the statuses (the status
 * renderer). The statuses are shown whatever their visibility, deleted
 * ones too, as Mastodon's admin serializer shows them: a moderator judges
 * what was reported, and the report's creation already checked that the
 * reporter could see each one.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "staff_internal.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 200
/* Reports name at most this many statuses each (src/api/reports.c). */
#define STATUSES_PER_REPORT 100

enum {
    STAFF_REPORTS_LIST,
    STAFF_REPORTS_SHOW,
    STAFF_REPORTS_CHANGE,
    STAFF_REPORTS_UPDATE,
};

/* The columns of the two reading statements, named as struct cols reads them. */
#define REPORT_COLS                                                                                \
    "r.id::text AS id, r.action_taken_at IS NOT NULL AS action_taken,"                             \
    " eunha_ts(r.action_taken_at) AS action_taken_at, r.category, r.comment, r.forwarded,"         \
    " eunha_ts(r.created_at) AS created_at, eunha_ts(r.updated_at) AS updated_at,"                 \
    " r.account_id::text AS account, r.target_account_id::text AS target_account,"                 \
    " r.assigned_account_id::text AS assigned_account,"                                            \
    " r.action_taken_by_account_id::text AS action_taken_by_account,"                              \
    " array_to_json(r.status_ids::text[])::text AS status_ids,"                                    \
    " (SELECT json_agg(json_build_object('id', ru.id::text, 'text', ru.text, 'hint', ru.hint)"     \
    "  ORDER BY ru.priority, ru.id) FROM instance_rules ru WHERE ru.tenant_id = $1"                \
    "  AND ru.id = ANY(r.rule_ids))::text AS rules"

const struct eu_sql eu_staff_reports_sql[] = {
    /* $2 resolved ones (else open ones), $3 reporter, $4 target, NULL when
     * not asked; the page's four from $5. */
    [STAFF_REPORTS_LIST] = {"staff_reports.list",
                            "SELECT " REPORT_COLS " FROM reports r WHERE r.tenant_id = $1"
                            " AND (r.action_taken_at IS NOT NULL) = coalesce($2::bool, false)"
                            " AND ($3::bigint IS NULL OR r.account_id = $3::bigint)"
                            " AND ($4::bigint IS NULL OR r.target_account_id = $4::bigint)",
                            "r.id", 5},
    [STAFF_REPORTS_SHOW] = {"staff_reports.show",
                            "SELECT " REPORT_COLS
                            " FROM reports r WHERE r.tenant_id = $1 AND r.id = $2::bigint"},
    /*
     * $2 the report, $3 the moderator, $4 what: assign, unassign, resolve
     * or reopen (Mastodon's resolve! and unresolve!). A row when the report
     * exists, with its audit row written.
     */
    [STAFF_REPORTS_CHANGE] =
        {"staff_reports.change",
         "WITH c AS (UPDATE reports SET"
         "  assigned_account_id = CASE $4 WHEN 'assign' THEN $3::bigint"
         "   WHEN 'unassign' THEN NULL ELSE assigned_account_id END,"
         "  action_taken_at = CASE $4 WHEN 'resolve' THEN now() WHEN 'reopen' THEN NULL"
         "   ELSE action_taken_at END,"
         "  action_taken_by_account_id = CASE $4 WHEN 'resolve' THEN $3::bigint"
         "   WHEN 'reopen' THEN NULL ELSE action_taken_by_account_id END,"
         "  updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint RETURNING id)"
         " INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id)"
         " SELECT $1, $3::bigint, CASE $4 WHEN 'assign' THEN 'assigned_to_self'"
         "  WHEN 'unassign' THEN 'unassigned' ELSE $4 END, 'Report', c.id FROM c"
         " RETURNING target_id"},
    /*
     * Mastodon's PUT: $2 the report, $3 the moderator, $4 the category and
     * $5 the rules (bigint[] text), each NULL to keep it. Rules stay only
     * on a violation report, and must all be the tenant's. One row when the
     * report exists: valid says whether it was changed (and logged).
     */
    [STAFF_REPORTS_UPDATE] =
        {"staff_reports.update",
         "WITH cur AS (SELECT r.id, coalesce($4, r.category) AS category,"
         "  CASE WHEN coalesce($4, r.category) <> 'violation' THEN '{}'::bigint[]"
         "   ELSE ARRAY(SELECT DISTINCT x FROM unnest(coalesce($5::bigint[], r.rule_ids)) x"
         "   ORDER BY x) END AS rule_ids"
         "  FROM reports r WHERE r.tenant_id = $1 AND r.id = $2::bigint),"
         " ok AS (SELECT cur.*, (SELECT count(*) FROM instance_rules ru WHERE ru.tenant_id = $1"
         "  AND ru.id = ANY(cur.rule_ids)) = cardinality(cur.rule_ids) AS valid FROM cur),"
         " u AS (UPDATE reports r SET category = ok.category, rule_ids = ok.rule_ids,"
         "  updated_at = now() FROM ok WHERE ok.valid AND r.tenant_id = $1 AND r.id = ok.id"
         "  RETURNING r.id),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id) SELECT $1, $3::bigint, 'update', 'Report', u.id FROM u)"
         " SELECT ok.valid FROM ok"},
    {0},
};

/* Where REPORT_COLS' columns are in a result, looked up once per result. */
struct cols {
    int id, action_taken, action_taken_at, category, comment, forwarded, created_at, updated_at,
        status_ids, rules;
    int accounts[4]; /* account, target, assigned, action taken by: as ACCOUNT_KEYS */
};

/* The Admin::Report keys that hold an Admin::Account, REPORT_COLS' names too. */
static const char *const ACCOUNT_KEYS[] = {"account", "target_account", "assigned_account",
                                           "action_taken_by_account"};

static void
cols_find(const PGresult *res, struct cols *c)
{
    c->id = PQfnumber(res, "id");
    c->action_taken = PQfnumber(res, "action_taken");
    c->action_taken_at = PQfnumber(res, "action_taken_at");
    c->category = PQfnumber(res, "category");
    c->comment = PQfnumber(res, "comment");
    c->forwarded = PQfnumber(res, "forwarded");
    c->created_at = PQfnumber(res, "created_at");
    c->updated_at = PQfnumber(res, "updated_at");
    c->status_ids = PQfnumber(res, "status_ids");
    c->rules = PQfnumber(res, "rules");
    for (size_t i = 0; i < 4; i++)
        c->accounts[i] = PQfnumber(res, ACCOUNT_KEYS[i]);
}

/* A page of reports on its way to its answer; arena-owned, its JSON held
 * by the arena's cleanup list until it is answered. */
struct render {
    json_t *reports;     /* the Admin::Reports so far, accounts and statuses to fill */
    json_t *accounts;    /* Admin::Account by id */
    bool one;            /* answer the one report, not the array */
    bool ascending;      /* rows came oldest first (a min_id page) */
    eu_staff_json_cb cb; /* a page's, instead of the JSON answer; NULL for the API */
    void *cb_arg;
};

static void
drop_json(void *data)
{
    json_decref(data);
}

static json_t *
text_or_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* The account with id in the loaded set, or null (a NULL id, or gone). */
static json_t *
account_ref(const struct render *r, json_t *id)
{
    json_t *a = json_is_string(id) ? json_object_get(r->accounts, json_string_value(id)) : NULL;
    return a ? json_incref(a) : json_null();
}

static void
on_statuses(struct eu_req *req, json_t *statuses, void *arg)
{
    struct render *r = arg;
    json_t *by_id = json_object();
    size_t i;
    json_t *s;
    json_array_foreach(statuses, i, s)
    {
        json_t *id = json_object_get(s, "id");
        if (json_is_string(id))
            json_object_set(by_id, json_string_value(id), s);
    }
    json_t *rep;
    json_array_foreach(r->reports, i, rep)
    {
        json_t *ids = json_object_get(rep, "_status_ids"), *list = json_array(), *id;
        size_t k;
        json_array_foreach(ids, k, id)
        {
            json_t *st = json_is_string(id) ? json_object_get(by_id, json_string_value(id)) : NULL;
            if (st)
                json_array_append(list, st);
        }
        json_object_del(rep, "_status_ids");
        json_object_set_new(rep, "statuses", list);
        for (size_t j = 0; j < 4; j++)
            json_object_set_new(rep, ACCOUNT_KEYS[j],
                                account_ref(r, json_object_get(rep, ACCOUNT_KEYS[j])));
    }
    json_decref(by_id);
    json_decref(statuses);
    json_t *out = r->one ? json_array_get(r->reports, 0) : r->reports;
    if (r->cb)
        r->cb(req, out, r->cb_arg);
    else
        eu_req_reply_json(req, 200, json_incref(out));
}

static void
on_accounts(struct eu_req *req, json_t *by_id, void *arg)
{
    struct render *r = arg;
    r->accounts = by_id;
    eu_arena_on_free(req->arena, drop_json, by_id);
    size_t n = 0, i;
    json_t *rep;
    json_array_foreach(r->reports, i, rep) n +=
        json_array_size(json_object_get(rep, "_status_ids"));
    const char **ids = eu_arena_alloc(req->arena, (n + 1) * sizeof(*ids));
    n = 0;
    json_array_foreach(r->reports, i, rep)
    {
        size_t k;
        json_t *id;
        json_array_foreach(json_object_get(rep, "_status_ids"), k, id)
        {
            if (json_is_string(id))
                ids[n++] = json_string_value(id);
        }
    }
    if (n == 0) {
        on_statuses(req, json_array(), r);
        return;
    }
    eu_statuses_render_opts(req, ids, n, EU_RENDER_KEEP_HIDDEN, on_statuses, r);
}

/* Reads the rows into r->reports, with the accounts' ids where their
 * entities go, then loads the accounts. */
static void
on_reports(struct eu_req *req, PGresult *res, void *arg)
{
    struct render *r = arg;
    int n = PQntuples(res);
    if (r->one && n == 0) {
        if (r->cb)
            r->cb(req, NULL, r->cb_arg);
        else
            eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    r->reports = json_array();
    eu_arena_on_free(req->arena, drop_json, r->reports);
    const char **ids = eu_arena_alloc(req->arena, (4 * (size_t)n + 1) * sizeof(*ids));
    size_t nids = 0;
    struct cols c;
    cols_find(res, &c);
    for (int k = 0; k < n; k++) {
        int row = r->ascending ? n - 1 - k : k;
        json_t *sids = json_loads(PQgetvalue(res, row, c.status_ids), 0, NULL);
        if (!json_is_array(sids)) {
            json_decref(sids);
            sids = json_array();
        }
        json_t *rules = PQgetisnull(res, row, c.rules)
                            ? json_array()
                            : json_loads(PQgetvalue(res, row, c.rules), 0, NULL);
        json_array_append_new(
            r->reports,
            json_pack("{s:s, s:b, s:o, s:s, s:s, s:b, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}",
                      "id", PQgetvalue(res, row, c.id), "action_taken",
                      PQgetvalue(res, row, c.action_taken)[0] == 't', "action_taken_at",
                      text_or_null(res, row, c.action_taken_at), "category",
                      PQgetvalue(res, row, c.category), "comment", PQgetvalue(res, row, c.comment),
                      "forwarded", PQgetvalue(res, row, c.forwarded)[0] == 't', "created_at",
                      PQgetvalue(res, row, c.created_at), "updated_at",
                      PQgetvalue(res, row, c.updated_at), ACCOUNT_KEYS[0],
                      text_or_null(res, row, c.accounts[0]), ACCOUNT_KEYS[1],
                      text_or_null(res, row, c.accounts[1]), ACCOUNT_KEYS[2],
                      text_or_null(res, row, c.accounts[2]), ACCOUNT_KEYS[3],
                      text_or_null(res, row, c.accounts[3]), "_status_ids", sids, "rules",
                      rules ? rules : json_array()));
        for (size_t j = 0; j < 4; j++)
            if (!PQgetisnull(res, row, c.accounts[j]))
                ids[nids++] = eu_arena_strdup(req->arena, PQgetvalue(res, row, c.accounts[j]));
    }
    if (n > 0 && !r->one && !r->cb)
        eu_page_link(req, PQgetvalue(res, r->ascending ? n - 1 : 0, c.id),
                     PQgetvalue(res, r->ascending ? 0 : n - 1, c.id));
    if (nids == 0) {
        on_accounts(req, json_object(), r);
        return;
    }
    eu_staff_accounts_load(req, ids, nids, on_accounts, r);
}

/* ------------------------------------------------------------ handlers */

struct list {
    struct eu_page page;
    struct render render;
};

static void
list(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_REPORTS))
        return;
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *resolved = eu_param_str(p, "resolved");
    const char *account = eu_param_str(p, "account_id");
    const char *target = eu_param_str(p, "target_account_id");
    if ((account && *account && !eu_id_is_valid(account)) ||
        (target && *target && !eu_id_is_valid(target))) {
        eu_req_reply_json(req, 200, json_array());
        return;
    }
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    if (eu_page_parse(req, &l->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *params[7] = {resolved && *resolved ? "true" : NULL,
                             account && *account ? account : NULL,
                             target && *target ? target : NULL};
    eu_page_params(&l->page, params + 3);
    l->render.ascending = eu_page_is_ascending(&l->page);
    eu_req_stmt_page(req, &eu_staff_reports_sql[STAFF_REPORTS_LIST], &l->page, 7, params,
                     on_reports, &l->render);
}

static void
reply_report(struct eu_req *req, const char *id)
{
    struct render *r = eu_arena_calloc(req->arena, sizeof(*r));
    r->one = true;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_staff_reports_sql[STAFF_REPORTS_SHOW], 1, params, on_reports, r);
}

static void
show(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_REPORTS))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (id)
        reply_report(req, id);
}

static void
on_changed(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    reply_report(req, arg);
}

/* ------------------------------------------------------ for the pages */

void
eu_staff_reports_load(struct eu_req *req, bool resolved, const char *id, eu_staff_json_cb cb,
                      void *arg)
{
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->render.cb = cb;
    l->render.cb_arg = arg;
    if (id) {
        l->render.one = true;
        const char *params[] = {id};
        eu_req_stmt(req, &eu_staff_reports_sql[STAFF_REPORTS_SHOW], 1, params, on_reports,
                    &l->render);
        return;
    }
    l->page.limit = PAGE_DEFAULT;
    snprintf(l->page.limit_s, sizeof(l->page.limit_s), "%d", PAGE_DEFAULT);
    const char *params[7] = {resolved ? "true" : NULL};
    eu_page_params(&l->page, params + 3);
    eu_req_stmt_page(req, &eu_staff_reports_sql[STAFF_REPORTS_LIST], &l->page, 7, params,
                     on_reports, &l->render);
}

struct page_change {
    eu_staff_done_cb done;
    void *arg;
};

static void
on_page_changed(struct eu_req *req, PGresult *res, void *arg)
{
    struct page_change *c = arg;
    c->done(req, PQntuples(res) ? 200 : 404, c->arg);
}

void
eu_staff_report_change(struct eu_req *req, const char *id, const char *what, eu_staff_done_cb done,
                       void *arg)
{
    if (!(req->auth.permissions & EU_PERM_MANAGE_REPORTS)) {
        done(req, 403, arg);
        return;
    }
    struct page_change *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->done = done;
    c->arg = arg;
    const char *params[] = {id, eu_req_viewer(req), what};
    eu_req_stmt(req, &eu_staff_reports_sql[STAFF_REPORTS_CHANGE], 3, params, on_page_changed, c);
}

static void
change(struct eu_req *req, const char *what)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_REPORTS))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req), what};
    eu_req_stmt(req, &eu_staff_reports_sql[STAFF_REPORTS_CHANGE], 3, params, on_changed,
                (void *)id);
}

static void
assign_to_self(struct eu_req *req)
{
    change(req, "assign");
}

static void
unassign(struct eu_req *req)
{
    change(req, "unassign");
}

static void
resolve(struct eu_req *req)
{
    change(req, "resolve");
}

static void
reopen(struct eu_req *req)
{
    change(req, "reopen");
}

static bool
is_category(const char *c)
{
    static const char *const known[] = {"spam", "legal", "violation", "other"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(c, known[i]) == 0)
            return true;
    return false;
}

static void
on_updated(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] != 't') {
        eu_req_reply_error(req, 422, "Validation failed: Rule ids does not reference valid rules");
        return;
    }
    reply_report(req, arg);
}

/* PUT /api/v1/admin/reports/:id: Mastodon's category and rule_ids[]. */
static void
update(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_REPORTS))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *category = eu_param_str(p, "category");
    if (category && !*category)
        category = NULL;
    if (category && !is_category(category)) {
        eu_req_reply_error(req, 422, "Validation failed: Category is not included in the list");
        return;
    }
    /* The rules as a bigint[] literal; NULL when not given. */
    const char *rules = NULL;
    json_t *arr = eu_param_array(p, "rule_ids");
    bool given = json_object_get(p, "rule_ids") || json_object_get(p, "rule_ids[]");
    size_t n = json_array_size(arr);
    if (given || n > 0) {
        char *w = eu_arena_alloc(req->arena, n * 21 + 3);
        rules = w;
        *w++ = '{';
        for (size_t i = 0; i < n; i++) {
            json_t *v = json_array_get(arr, i);
            char num[24];
            const char *s = json_string_value(v);
            if (json_is_integer(v)) {
                snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
                s = num;
            }
            if (!s || !eu_id_is_valid(s) || n > STATUSES_PER_REPORT) {
                json_decref(arr);
                eu_req_reply_error(req, 422,
                                   "Validation failed: Rule ids does not reference valid rules");
                return;
            }
            w += sprintf(w, "%s%s", i ? "," : "", s);
        }
        *w++ = '}';
        *w = '\0';
    }
    json_decref(arr);
    const char *params[] = {id, eu_req_viewer(req), category, rules};
    eu_req_stmt(req, &eu_staff_reports_sql[STAFF_REPORTS_UPDATE], 4, params, on_updated,
                (void *)id);
}

/* ------------------------------------------------------------ route table */

#define READ "admin:read:reports"
#define WRITE "admin:write:reports"
#define STAFF (EU_ROUTE_AUTH | EU_ROUTE_API)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_staff_reports_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/reports", list, READ, STAFF},
    {EU_HTTP_GET, "/api/v1/admin/reports/:id", show, READ, STAFF},
    {EU_HTTP_PUT, "/api/v1/admin/reports/:id", update, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/reports/:id/assign_to_self", assign_to_self, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/reports/:id/unassign", unassign, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/reports/:id/resolve", resolve, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/reports/:id/reopen", reopen, WRITE, STAFF},
    {0},
};
