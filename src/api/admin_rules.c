/*
 * The instance's rules as its staff edit them: /api/v1/admin/rules (list,
 * show, create, PUT, DELETE), and the same operations for the operator's
 * /admin/v1/tenants/:domain/rules (src/admin/instance.c), which call the
 * eu_instance_rules_* functions below once they have named the tenant.
 * Mastodon edits rules in its web admin only; the JSON shape here is its
 * Rule entity (id, text, hint) with the priority that orders it.
 *
 * Rules are never removed: a deleted one keeps its row (deleted_at), since
 * reports cite rules by id, as Mastodon's Rule#discard does.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/utf8.h"
#include "staff_internal.h"

/* Mastodon's Rule validates text (1000) and hint (1000) the same way. */
#define RULE_TEXT_MAX 1000

enum {
    RULES_LIST,
    RULES_SHOW,
    RULES_CREATE,
    RULES_UPDATE,
    RULES_DELETE,
};

/* The admin Rule's columns, read by name (struct rule_cols). */
#define RULE_COLUMNS "r.id::text AS id, r.text, r.hint, r.priority"

const struct eu_sql eu_admin_rules_sql[] = {
    [RULES_LIST] = {"admin_rules.list",
                    "SELECT " RULE_COLUMNS " FROM instance_rules r WHERE r.tenant_id = $1"
                    " AND r.deleted_at IS NULL ORDER BY r.priority, r.id"},
    [RULES_SHOW] = {"admin_rules.show",
                    "SELECT " RULE_COLUMNS " FROM instance_rules r WHERE r.tenant_id = $1"
                    " AND r.id = $2::bigint AND r.deleted_at IS NULL"},
    /* $2 text, $3 hint, $4 priority or NULL: after the last rule. */
    [RULES_CREATE] =
        {"admin_rules.create",
         "WITH r AS (INSERT INTO instance_rules (tenant_id, text, hint, priority)"
         " VALUES ($1, $2, coalesce($3, ''), coalesce($4::int, (SELECT coalesce(max(x.priority)"
         " + 1, 0) FROM instance_rules x WHERE x.tenant_id = $1 AND x.deleted_at IS NULL)))"
         " RETURNING *) SELECT " RULE_COLUMNS " FROM r"},
    /* $2 id; $3 text, $4 hint, $5 priority, each NULL to keep it. */
    [RULES_UPDATE] =
        {"admin_rules.update",
         "WITH r AS (UPDATE instance_rules SET text = coalesce($3, text),"
         " hint = coalesce($4, hint), priority = coalesce($5::int, priority), updated_at = now()"
         " WHERE tenant_id = $1 AND id = $2::bigint AND deleted_at IS NULL RETURNING *)"
         " SELECT " RULE_COLUMNS " FROM r"},
    [RULES_DELETE] =
        {"admin_rules.delete",
         "WITH r AS (UPDATE instance_rules SET deleted_at = now() WHERE tenant_id = $1"
         " AND id = $2::bigint AND deleted_at IS NULL RETURNING *) SELECT " RULE_COLUMNS " FROM r"},
    {0},
};

/* Where a result holds RULE_COLUMNS, found by name once per result. */
struct rule_cols {
    int id, text, hint, priority;
};

static void
rule_cols_find(struct rule_cols *c, const PGresult *res)
{
    c->id = PQfnumber(res, "id");
    c->text = PQfnumber(res, "text");
    c->hint = PQfnumber(res, "hint");
    c->priority = PQfnumber(res, "priority");
}

/* The admin Rule of row i, its columns where c says. Caller owns it. */
static json_t *
rule_json(const PGresult *res, int i, const struct rule_cols *c)
{
    return json_pack("{s:s, s:s, s:s, s:{}, s:i}", "id", PQgetvalue(res, i, c->id), "text",
                     PQgetvalue(res, i, c->text), "hint", PQgetvalue(res, i, c->hint),
                     "translations", "priority", atoi(PQgetvalue(res, i, c->priority)));
}

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    struct rule_cols c;
    rule_cols_find(&c, res);
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, rule_json(res, i, &c));
    eu_req_reply_json(req, 200, out);
}

/* arg: NULL for a read, else the action of the change ("create"). */
static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct rule_cols c;
    rule_cols_find(&c, res);
    json_t *rule = rule_json(res, 0, &c);
    if (arg)
        eu_staff_reply_audited(req, 200, rule, arg, "Rule", PQgetvalue(res, 0, c.id),
                               PQgetvalue(res, 0, c.text));
    else
        eu_req_reply_json(req, 200, rule);
}

void
eu_instance_rules_list(struct eu_req *req)
{
    eu_req_stmt(req, &eu_admin_rules_sql[RULES_LIST], 0, NULL, on_list, NULL);
}

/* The :id parameter when it is a number; NULL after answering 404. */
static const char *
rule_id(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!id || !*id || strspn(id, "0123456789") != strlen(id) || strlen(id) > 19) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

void
eu_instance_rules_show(struct eu_req *req)
{
    const char *id = rule_id(req);
    if (!id)
        return;
    const char *p[] = {id};
    eu_req_stmt(req, &eu_admin_rules_sql[RULES_SHOW], 1, p, on_one, NULL);
}

/* What a create or update says; NULL members are left as they are. */
struct rule_input {
    const char *text, *hint, *priority;
};

/* Reads text, hint and priority; on bad input replies 422 and returns -1.
 * A create needs text. */
static int
read_rule(struct eu_req *req, bool creating, struct rule_input *in)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return -1;
    }
    in->text = eu_param_str(params, "text");
    in->hint = eu_param_str(params, "hint");
    if ((creating && (!in->text || !*in->text)) || (in->text && !*in->text)) {
        eu_req_reply_error(req, 422, "Validation failed: Text can't be blank");
        return -1;
    }
    if ((in->text && eu_utf8_chars(in->text) > RULE_TEXT_MAX) ||
        (in->hint && eu_utf8_chars(in->hint) > RULE_TEXT_MAX)) {
        eu_req_reply_error(req, 422, "Validation failed: text and hint are at most %d characters",
                           RULE_TEXT_MAX);
        return -1;
    }
    long long prio;
    int rc = eu_param_int(params, "priority", &prio);
    if (rc < 0 || (rc == 1 && (prio < -1000000 || prio > 1000000))) {
        eu_req_reply_error(req, 422, "Validation failed: priority must be an integer");
        return -1;
    }
    in->priority = rc == 1 ? eu_arena_sprintf(req->arena, "%lld", prio) : NULL;
    return 0;
}

void
eu_instance_rules_create(struct eu_req *req)
{
    struct rule_input in = {0};
    if (read_rule(req, true, &in) < 0)
        return;
    const char *p[] = {in.text, in.hint, in.priority};
    eu_req_stmt(req, &eu_admin_rules_sql[RULES_CREATE], 3, p, on_one, (void *)"create");
}

void
eu_instance_rules_update(struct eu_req *req)
{
    const char *id = rule_id(req);
    if (!id)
        return;
    struct rule_input in = {0};
    if (read_rule(req, false, &in) < 0)
        return;
    const char *p[] = {id, in.text, in.hint, in.priority};
    eu_req_stmt(req, &eu_admin_rules_sql[RULES_UPDATE], 4, p, on_one, (void *)"update");
}

void
eu_instance_rules_delete(struct eu_req *req)
{
    const char *id = rule_id(req);
    if (!id)
        return;
    const char *p[] = {id};
    eu_req_stmt(req, &eu_admin_rules_sql[RULES_DELETE], 1, p, on_one, (void *)"destroy");
}

/* ------------------------------------------------------ for the pages */

struct page_rules {
    const char *action; /* NULL for the list */
    eu_staff_json_cb cb;
    eu_staff_done_cb done;
    void *arg;
};

static void
on_page_rules(struct eu_req *req, PGresult *res, void *arg)
{
    struct page_rules *pr = arg;
    struct rule_cols c;
    rule_cols_find(&c, res);
    if (!pr->action) {
        json_t *out = json_array();
        for (int i = 0; i < PQntuples(res); i++)
            json_array_append_new(out, rule_json(res, i, &c));
        pr->cb(req, out, pr->arg);
        json_decref(out);
        return;
    }
    if (PQntuples(res) == 0) {
        pr->done(req, 404, pr->arg);
        return;
    }
    eu_staff_audit(req, pr->action, "Rule", PQgetvalue(res, 0, c.id), PQgetvalue(res, 0, c.text),
                   pr->done, pr->arg);
}

void
eu_staff_rules_load(struct eu_req *req, eu_staff_json_cb cb, void *arg)
{
    struct page_rules *pr = eu_arena_calloc(req->arena, sizeof(*pr));
    pr->cb = cb;
    pr->arg = arg;
    eu_req_stmt(req, &eu_admin_rules_sql[RULES_LIST], 0, NULL, on_page_rules, pr);
}

void
eu_staff_rules_change(struct eu_req *req, const char *what, const char *id, const char *text,
                      const char *hint, eu_staff_done_cb done, void *arg)
{
    if (!(req->auth.permissions & EU_PERM_MANAGE_RULES)) {
        done(req, 403, arg);
        return;
    }
    bool creating = strcmp(what, "create") == 0, destroying = strcmp(what, "destroy") == 0;
    if (!destroying && ((creating && (!text || !*text)) || (text && !*text) ||
                        (text && eu_utf8_chars(text) > RULE_TEXT_MAX) ||
                        (hint && eu_utf8_chars(hint) > RULE_TEXT_MAX))) {
        done(req, 422, arg);
        return;
    }
    struct page_rules *pr = eu_arena_calloc(req->arena, sizeof(*pr));
    pr->action = what;
    pr->done = done;
    pr->arg = arg;
    if (creating) {
        const char *p[] = {text, hint, NULL};
        eu_req_stmt(req, &eu_admin_rules_sql[RULES_CREATE], 3, p, on_page_rules, pr);
    } else if (destroying) {
        const char *p[] = {id};
        eu_req_stmt(req, &eu_admin_rules_sql[RULES_DELETE], 1, p, on_page_rules, pr);
    } else {
        const char *p[] = {id, text, hint, NULL};
        eu_req_stmt(req, &eu_admin_rules_sql[RULES_UPDATE], 4, p, on_page_rules, pr);
    }
}

/* ------------------------------------------------- the staff's permission */

/*
 * Mastodon's manage_rules, from the user's role (src/http/auth.c); the
 * token's admin:read / admin:write scope is the route's, checked before the
 * handler runs. Answers 403 itself when the role lacks it.
 */
static void
may_manage(struct eu_req *req, int64_t permission, void (*then)(struct eu_req *req))
{
    if (eu_auth_permit(req, permission))
        then(req);
}

static void
staff_list(struct eu_req *req)
{
    may_manage(req, EU_PERM_MANAGE_RULES, eu_instance_rules_list);
}

static void
staff_show(struct eu_req *req)
{
    may_manage(req, EU_PERM_MANAGE_RULES, eu_instance_rules_show);
}

static void
staff_create(struct eu_req *req)
{
    may_manage(req, EU_PERM_MANAGE_RULES, eu_instance_rules_create);
}

static void
staff_update(struct eu_req *req)
{
    may_manage(req, EU_PERM_MANAGE_RULES, eu_instance_rules_update);
}

static void
staff_delete(struct eu_req *req)
{
    may_manage(req, EU_PERM_MANAGE_RULES, eu_instance_rules_delete);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_rules_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/rules", staff_list, "admin:read", EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_POST, "/api/v1/admin/rules", staff_create, "admin:write",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_GET, "/api/v1/admin/rules/:id", staff_show, "admin:read",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_PUT, "/api/v1/admin/rules/:id", staff_update, "admin:write",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_DELETE, "/api/v1/admin/rules/:id", staff_delete, "admin:write",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {0},
};
