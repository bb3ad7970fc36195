/*
 * A tenant's roles (issue 28): Mastodon's built-in everyone, Moderator,
 * Admin and Owner (migration 0043 knows them without rows) and the
 * tenant's custom roles, with Mastodon's permission bits. Mastodon edits
 * roles in its web admin only; these paths are eunha's:
 *
 *   GET/POST       /api/v1/admin/roles      (manage_roles)
 *   GET/PUT/DELETE /api/v1/admin/roles/:id
 *
 * and the operator's /admin/v1/tenants/:domain/roles (src/admin/staff.c)
 * calls the eu_staff_roles_* functions below. Mastodon's UserRole checks
 * hold for the staff: a role at or above the editor's own position can be
 * neither edited nor deleted, nor given such a position or permissions the
 * editor lacks, and one's own role keeps its position and permissions.
 * The operator is above every role. A built-in role is edited by writing
 * the row that overrides it; it cannot be deleted.
 *
 * The entity is Mastodon's Role (id, name, color, permissions as a
 * string, highlighted) with its position. A role's permissions ride in
 * every cached token, so each change clears the tenant's token cache.
 */
#include "eunha/api.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/utf8.h"

/* Every bit of Mastodon's UserRole::FLAGS (the operator's, in EDITOR_CTE
 * too). */
#define PERMS_ALL 1048575LL
/* Mastodon's UserRole validates the name's length to 255. */
#define NAME_MAX_CHARS 255

enum {
    ROLES_LIST,
    ROLES_SHOW,
    ROLES_SAVE,
    ROLES_DELETE,
};

#define ROLE_COLUMNS                                                                               \
    "r.id::text AS id, r.name, r.color, r.position, r.permissions::text AS permissions,"           \
    " r.highlighted"

/*
 * The editor's role as the checks need it, for account $3 (NULL: the
 * operator, above every role): position, computed permissions, role id.
 */
#define EDITOR_CTE                                                                                 \
    "me AS (SELECT CASE WHEN $3::bigint IS NULL THEN 2147483647"                                   \
    "  ELSE coalesce(r.position, -1) END AS position,"                                             \
    "  CASE WHEN $3::bigint IS NULL THEN 1048575 ELSE coalesce(r.permissions, 0)"                  \
    "  END AS permissions, mu.role_id"                                                             \
    "  FROM (SELECT 1) one LEFT JOIN users mu ON mu.tenant_id = $1 AND mu.account_id = $3::bigint" \
    "  LEFT JOIN LATERAL eunha_role($1, mu.role_id) r ON true)"

const struct eu_sql eu_staff_roles_sql[] = {
    /* The built-ins (by their Mastodon ids) and every custom role. */
    [ROLES_LIST] = {"staff_roles.list",
                    "SELECT " ROLE_COLUMNS " FROM (SELECT b.id FROM (VALUES (-99::bigint), (1),"
                    " (2), (3)) b(id) UNION SELECT u.id FROM user_roles u WHERE u.tenant_id = $1)"
                    " ids CROSS JOIN LATERAL eunha_role($1, ids.id) r ORDER BY r.position, r.id"},
    /* eunha_role() falls back to the everyone role: only the id asked. */
    [ROLES_SHOW] = {"staff_roles.show", "SELECT " ROLE_COLUMNS " FROM eunha_role($1, $2::bigint) r"
                                        " WHERE r.id = $2::bigint"},
    /*
     * Creates ($2 NULL) or updates role $2 for editor $3: $4 name, $5
     * color, $6 position, $7 permissions, $8 highlighted, each NULL to
     * keep it (or take the default). One row: the verdict (ok, not_found,
     * forbidden: the role is not below the editor's, own_role, position,
     * permissions) and the role's id; the role written and logged only
     * when ok.
     */
    [ROLES_SAVE] =
        {"staff_roles.save",
         "WITH " EDITOR_CTE ","
         " cur AS (SELECT r.* FROM eunha_role($1, $2::bigint) r WHERE r.id = $2::bigint),"
         " want AS (SELECT coalesce($2::bigint, eunha_next_id()) AS id,"
         "  coalesce($4, cur.name, '') AS name, coalesce($5, cur.color, '') AS color,"
         "  coalesce($6::int, cur.position, 0) AS position,"
         "  coalesce($7::bigint, cur.permissions, 0) AS permissions,"
         "  coalesce($8::bool, cur.highlighted, false) AS highlighted"
         "  FROM (SELECT 1) one LEFT JOIN cur ON true),"
         " v AS (SELECT want.*, CASE"
         "  WHEN $2::bigint IS NOT NULL AND NOT EXISTS (SELECT 1 FROM cur) THEN 'not_found'"
         "  WHEN $2::bigint IS NOT NULL AND $2::bigint <> -99"
         "   AND (SELECT position FROM cur) >= me.position THEN 'forbidden'"
         "  WHEN $2::bigint IS NOT NULL AND $2::bigint = coalesce(me.role_id, -99)"
         "   AND $3::bigint IS NOT NULL AND ($6::int IS NOT NULL OR $7::bigint IS NOT NULL)"
         "   THEN 'own_role'"
         "  WHEN want.position >= me.position AND ($2::bigint IS NULL OR $6::int IS NOT NULL)"
         "   THEN 'position'"
         "  WHEN want.permissions & ~me.permissions <> 0 THEN 'permissions'"
         "  ELSE 'ok' END AS verdict FROM want, me),"
         " w AS (INSERT INTO user_roles (tenant_id, id, name, color, position, permissions,"
         "  highlighted) SELECT $1, v.id, v.name, v.color, v.position, v.permissions,"
         "  v.highlighted FROM v WHERE v.verdict = 'ok'"
         "  ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name,"
         "  color = excluded.color, position = excluded.position,"
         "  permissions = excluded.permissions, highlighted = excluded.highlighted,"
         "  updated_at = now() RETURNING id, name),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $3::bigint,"
         "  CASE WHEN $2::bigint IS NULL THEN 'create' ELSE 'update' END, 'UserRole', w.id,"
         "  w.name FROM w WHERE $3::bigint IS NOT NULL)"
         " SELECT v.verdict, v.id::text AS id FROM v"},
    /*
     * Deletes custom role $2 for editor $3; its holders fall back to the
     * everyone role (Mastodon's dependent: :nullify). A row when the role
     * exists: ok or forbidden.
     */
    [ROLES_DELETE] =
        {"staff_roles.delete",
         "WITH " EDITOR_CTE ","
         " v AS (SELECT r.id, r.name, CASE WHEN r.position >= me.position THEN 'forbidden'"
         "  ELSE 'ok' END AS verdict FROM user_roles r, me WHERE r.tenant_id = $1"
         "  AND r.id = $2::bigint),"
         " d AS (DELETE FROM user_roles r USING v WHERE v.verdict = 'ok' AND r.tenant_id = $1"
         "  AND r.id = v.id RETURNING r.id, r.name),"
         " u AS (UPDATE users SET role_id = NULL, updated_at = now() WHERE tenant_id = $1"
         "  AND role_id IN (SELECT id FROM d)),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $3::bigint, 'destroy', 'UserRole', d.id,"
         "  d.name FROM d WHERE $3::bigint IS NOT NULL)"
         " SELECT v.verdict, v.id::text AS id FROM v"},
    {0},
};

/* ------------------------------------------------------------ rendering */

static json_t *
role_json(const PGresult *res, int i)
{
    return json_pack("{s:s, s:s, s:s, s:i, s:s, s:b}", "id", PQgetvalue(res, i, 0), "name",
                     PQgetvalue(res, i, 1), "color", PQgetvalue(res, i, 2), "position",
                     atoi(PQgetvalue(res, i, 3)), "permissions", PQgetvalue(res, i, 4),
                     "highlighted", PQgetvalue(res, i, 5)[0] == 't');
}

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, role_json(res, i));
    eu_req_reply_json(req, 200, out);
}

static void
on_show(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, role_json(res, 0));
}

static void
reply_role(struct eu_req *req, const char *id)
{
    const char *params[] = {id};
    eu_req_stmt(req, &eu_staff_roles_sql[ROLES_SHOW], 1, params, on_show, NULL);
}

/* The :id parameter: a snowflake or a built-in's id (-99 included); NULL
 * after answering 404. */
static const char *
role_id(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    const char *digits = id && *id == '-' ? id + 1 : id;
    if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits) ||
        strlen(digits) > 18) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

static bool
is_builtin(const char *id)
{
    return strcmp(id, "-99") == 0 || strcmp(id, "1") == 0 || strcmp(id, "2") == 0 ||
           strcmp(id, "3") == 0;
}

/* The editor's account id, NULL for the operator (no token). */
static const char *
editor(struct eu_req *req)
{
    return req->auth.account_id ? eu_req_viewer(req) : NULL;
}

void
eu_staff_roles_list(struct eu_req *req)
{
    eu_req_stmt(req, &eu_staff_roles_sql[ROLES_LIST], 0, NULL, on_list, NULL);
}

void
eu_staff_roles_show(struct eu_req *req)
{
    const char *id = role_id(req);
    if (id)
        reply_role(req, id);
}

/* The verdict of a save or delete: answered here unless ok. */
static bool
verdict_ok(struct eu_req *req, const PGresult *res)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return false;
    }
    const char *v = PQgetvalue(res, 0, 0);
    if (strcmp(v, "ok") == 0)
        return true;
    if (strcmp(v, "not_found") == 0)
        eu_req_reply_error(req, 404, "Record not found");
    else if (strcmp(v, "forbidden") == 0)
        eu_req_reply_error(req, 403, "This action is not allowed");
    else if (strcmp(v, "own_role") == 0)
        eu_req_reply_error(req, 422,
                           "Validation failed: Permissions cannot be changed with your"
                           " current role");
    else if (strcmp(v, "position") == 0)
        eu_req_reply_error(req, 422,
                           "Validation failed: Position cannot be higher than your current role");
    else
        eu_req_reply_error(req, 422,
                           "Validation failed: Permissions cannot include permissions"
                           " your current role does not possess");
    return false;
}

static void
on_saved(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (!verdict_ok(req, res))
        return;
    const char *id = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    /* The holders' cached tokens carry the old permissions. */
    eu_auth_cache_clear(req->app, req->tenant);
    eu_log_info("staff", "role %s saved by account %lld", id, (long long)req->auth.account_id);
    reply_role(req, id);
}

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (!verdict_ok(req, res))
        return;
    eu_auth_cache_clear(req->app, req->tenant);
    eu_log_info("staff", "role %s deleted by account %lld", PQgetvalue(res, 0, 1),
                (long long)req->auth.account_id);
    eu_req_reply_json(req, 200, json_object());
}

static bool
is_color(const char *c)
{
    const char *h = *c == '#' ? c + 1 : c;
    size_t n = strlen(h);
    if (n != 3 && n != 6)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)h[i]))
            return false;
    return true;
}

/* Reads a role's fields into params[2..6] ($4..$8); answers 422 and
 * returns -1 on bad input. A create needs a name. */
static int
read_role(struct eu_req *req, const char *id, const char **params)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return -1;
    }
    const char *name = eu_param_str(p, "name");
    bool everyone = id && strcmp(id, "-99") == 0;
    if (((!id && !name) || (name && !*name)) && !everyone) {
        eu_req_reply_error(req, 422, "Validation failed: Name can't be blank");
        return -1;
    }
    if (name && eu_utf8_chars(name) > NAME_MAX_CHARS) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Name is too long (maximum is %d characters)",
                           NAME_MAX_CHARS);
        return -1;
    }
    const char *color = eu_param_str(p, "color");
    if (color && *color && !is_color(color)) {
        eu_req_reply_error(req, 422, "Validation failed: Color is invalid");
        return -1;
    }
    long long position, perms;
    int rc = eu_param_int(p, "position", &position);
    if (rc < 0 || (rc == 1 && (position < -1000000 || position > 1000000))) {
        eu_req_reply_error(req, 422, "Validation failed: Position is not a number");
        return -1;
    }
    params[4] = rc == 1 ? eu_arena_sprintf(req->arena, "%lld", position) : NULL;
    rc = eu_param_int(p, "permissions", &perms);
    if (rc < 0 || (rc == 1 && (perms < 0 || perms > PERMS_ALL))) {
        eu_req_reply_error(req, 422, "Validation failed: Permissions is invalid");
        return -1;
    }
    params[5] = rc == 1 ? eu_arena_sprintf(req->arena, "%lld", perms) : NULL;
    bool highlighted;
    rc = eu_param_bool(p, "highlighted", &highlighted);
    if (rc < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Highlighted is not a boolean");
        return -1;
    }
    params[6] = rc == 1 ? (highlighted ? "true" : "false") : NULL;
    params[2] = name;
    params[3] = color;
    return 0;
}

void
eu_staff_roles_create(struct eu_req *req)
{
    const char *params[7] = {NULL, editor(req)};
    if (read_role(req, NULL, params) < 0)
        return;
    eu_req_stmt(req, &eu_staff_roles_sql[ROLES_SAVE], 7, params, on_saved, NULL);
}

void
eu_staff_roles_update(struct eu_req *req)
{
    const char *id = role_id(req);
    if (!id)
        return;
    const char *params[7] = {id, editor(req)};
    if (read_role(req, id, params) < 0)
        return;
    eu_req_stmt(req, &eu_staff_roles_sql[ROLES_SAVE], 7, params, on_saved, NULL);
}

void
eu_staff_roles_delete(struct eu_req *req)
{
    const char *id = role_id(req);
    if (!id)
        return;
    if (is_builtin(id)) {
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    const char *params[] = {id, editor(req)};
    eu_req_stmt(req, &eu_staff_roles_sql[ROLES_DELETE], 2, params, on_deleted, NULL);
}

/* ------------------------------------------------- the staff's permission */

static void
staff_list(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_ROLES))
        eu_staff_roles_list(req);
}

static void
staff_show(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_ROLES))
        eu_staff_roles_show(req);
}

static void
staff_create(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_ROLES))
        eu_staff_roles_create(req);
}

static void
staff_update(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_ROLES))
        eu_staff_roles_update(req);
}

static void
staff_delete(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_ROLES))
        eu_staff_roles_delete(req);
}

/* ------------------------------------------------------------ route table */

#define STAFF (EU_ROUTE_AUTH | EU_ROUTE_API)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_staff_roles_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/roles", staff_list, "admin:read", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/roles", staff_create, "admin:write", STAFF},
    {EU_HTTP_GET, "/api/v1/admin/roles/:id", staff_show, "admin:read", STAFF},
    {EU_HTTP_PUT, "/api/v1/admin/roles/:id", staff_update, "admin:write", STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/roles/:id", staff_delete, "admin:write", STAFF},
    {0},
};
