/*
 * POST /admin/v1/tenants/:domain/accounts: a confirmed local account made by
 * the operator; PUT .../accounts/:id/role: the operator appoints a user's
 * role (the tenant's owner, most often). The password is hashed with argon2id and the account's RSA
 * key pair made on the CPU pool (never on the loop), then the account and
 * its user row go in with one statement. POST .../accounts/:id/confirm:
 * the operator confirms a sign-up that waits for its confirmation link,
 * which is how accounts get confirmed on a host without [mail] and with
 * confirm_without_mail = "operator" (docs/mail.md). Mastodon's admin API
 * has no such call for a tenant's staff, so neither has eunha's.
 */
#include "eunha/admin.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/apkeys.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* argon2id at OWASP's minimum (19 MiB, 2 passes): interactive presets would
 * cost 64 MiB per concurrent hash, which a host of small tenants cannot
 * spare. */
#define PWHASH_OPS 2
#define PWHASH_MEM (19u * 1024u * 1024u)

enum {
    ADMIN_ACCOUNTS_CREATE,
    ADMIN_ACCOUNTS_ROLE,
    ADMIN_ACCOUNTS_CONFIRM,
};

const struct eu_sql eu_admin_accounts_sql[] = {
    [ADMIN_ACCOUNTS_CREATE] =
        {"admin_accounts.create",
         "WITH a AS (INSERT INTO accounts (tenant_id, username, public_key, private_key)"
         " VALUES ($1, $2, $6, $7) RETURNING id, created_at) INSERT INTO users (tenant_id, "
         "account_id, email,"
         " encrypted_password, role_id, confirmed_at) SELECT $1, a.id, $3, $4, $5::bigint, now()"
         " FROM a RETURNING account_id, "
         "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"},
    /* $2 the account, $3 its new role id (NULL: the everyone role), a
     * built-in's or one of the tenant's custom roles (src/api/staff_roles.c).
     * No row for an account without a user (a remote one) or a role that
     * is not there. */
    [ADMIN_ACCOUNTS_ROLE] = {"admin_accounts.role",
                             "UPDATE users SET role_id = $3::bigint, updated_at = now()"
                             " WHERE tenant_id = $1 AND account_id = $2::bigint"
                             " AND ($3::bigint IS NULL OR $3::bigint IN (1, 2, 3)"
                             " OR EXISTS (SELECT 1 FROM user_roles r WHERE r.tenant_id = $1"
                             " AND r.id = $3::bigint))"
                             " RETURNING account_id::text"},
    /* $2 the account: its user confirmed (the link it was sent stops
     * working); no row for an account of another tenant or without a
     * user. An address change waiting for its own link is left to it. */
    [ADMIN_ACCOUNTS_CONFIRM] = {"admin_accounts.confirm",
                                "UPDATE users SET confirmed_at = coalesce(confirmed_at, now()),"
                                " confirmation_token_hash = CASE WHEN confirmed_at IS NULL"
                                " THEN NULL ELSE confirmation_token_hash END, updated_at = now()"
                                " WHERE tenant_id = $1 AND account_id = $2::bigint"
                                " RETURNING account_id::text"},
    {0},
};

struct create_account {
    struct eu_req *req;
    const char *username, *email, *role;
    char *password; /* wiped and freed after hashing */
    char hash[crypto_pwhash_STRBYTES];
    int rc;
    char *pub_pem, *priv_pem; /* malloc'd on the pool thread; NULL on failure */
};

static bool
username_is_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 30)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

static bool
email_is_valid(const char *s)
{
    const char *at = strchr(s, '@');
    return at && at != s && at[1] && !strchr(at + 1, '@') && strlen(s) <= 254 &&
           !strpbrk(s, " \t\r\n<>");
}

/* The operator names Mastodon's built-in roles; their ids are Mastodon's
 * (migration 0043). NULL for "user" (no role: Mastodon's everyone role) and
 * for an unknown name, which *known tells apart. */
static const char *
role_id_of(const char *name, bool *known)
{
    static const struct {
        const char *name, *id;
    } roles[] = {{"owner", "3"}, {"admin", "2"}, {"moderator", "1"}, {"user", NULL}};
    for (size_t i = 0; name && i < sizeof(roles) / sizeof(roles[0]); i++)
        if (strcmp(name, roles[i].name) == 0) {
            *known = true;
            return roles[i].id;
        }
    *known = false;
    return NULL;
}

static void
on_inserted(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    struct create_account *c = arg;
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        eu_req_reply_error(req, 409, "Validation failed: username or e-mail is already taken");
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    eu_log_info("admin", "created account '%s'", c->username);
    eu_req_reply_json(req, 201,
                      json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "id", PQgetvalue(res, 0, 0),
                                "username", c->username, "email", c->email, "role", c->role,
                                "confirmed", 1, "created_at", PQgetvalue(res, 0, 1)));
}

static void
hash_work(void *arg)
{
    struct create_account *c = arg;
    c->rc = crypto_pwhash_str_alg(c->hash, c->password, strlen(c->password), PWHASH_OPS, PWHASH_MEM,
                                  crypto_pwhash_ALG_ARGON2ID13);
    sodium_memzero(c->password, strlen(c->password));
    if (c->rc == 0)
        eu_ap_rsa_generate(&c->pub_pem, &c->priv_pem);
}

static void
hash_done(void *arg)
{
    struct create_account *c = arg;
    struct eu_req *req = c->req;
    free(c->password);
    c->password = NULL;
    const char *pub = c->pub_pem ? eu_arena_strdup(req->arena, c->pub_pem) : NULL;
    const char *priv = c->priv_pem ? eu_arena_strdup(req->arena, c->priv_pem) : NULL;
    free(c->pub_pem);
    free(c->priv_pem);
    eu_req_enter(req);
    if (c->rc != 0 || !pub) {
        eu_req_reply_error(req, 500,
                           c->rc ? "Cannot hash the password" : "Cannot make the account's keys");
        return;
    }
    bool known;
    const char *params[] = {c->username, c->email, c->hash, role_id_of(c->role, &known), pub, priv};
    eu_req_stmt_or_error(req, &eu_admin_accounts_sql[ADMIN_ACCOUNTS_CREATE], 6, params, on_inserted,
                         c);
}

void
eu_admin_accounts_create(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *username = json_string_value(json_object_get(body, "username"));
    const char *email = json_string_value(json_object_get(body, "email"));
    const char *password = json_string_value(json_object_get(body, "password"));
    json_t *role_j = json_object_get(body, "role");
    const char *role = role_j ? json_string_value(role_j) : "user";
    if (!username || !username_is_valid(username)) {
        eu_req_reply_error(req, 422,
                           "Validation failed: username must be 1 to 30 letters, digits or _");
        return;
    }
    if (!email || !email_is_valid(email)) {
        eu_req_reply_error(req, 422, "Validation failed: e-mail is not a valid address");
        return;
    }
    if (!password || strlen(password) < 8 || strlen(password) > 72) {
        eu_req_reply_error(req, 422, "Validation failed: password must be 8 to 72 characters");
        return;
    }
    bool known;
    role_id_of(role, &known);
    if (!known) {
        eu_req_reply_error(req, 422,
                           "Validation failed: role must be owner, admin, moderator or user");
        return;
    }
    struct create_account *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->req = req;
    c->username = eu_arena_strdup(req->arena, username);
    c->email = eu_arena_strdup(req->arena, email);
    c->role = eu_arena_strdup(req->arena, role);
    /* Off the arena: the pool thread writes to it and it is wiped. */
    c->password = strdup(password);
    /* Bounded like sign-ups: a script creating accounts in a loop gets 503
     * instead of a queue that delays every tenant's sign-ins. */
    const struct eu_config *cfg = req->app->cfg;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, hash_work, hash_done,
                              c) < 0) {
        free(c->password);
        eu_req_add_header(req, "Retry-After", "1");
        eu_req_reply_error(req, 503, "Too many accounts are being created; try again shortly");
    }
}

/* ------------------------- PUT /admin/v1/tenants/:domain/accounts/:id/role */

static void
on_role_set(struct eu_req *req, PGresult *res, void *arg)
{
    const char *role = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The role's permissions ride in every cached token of the tenant: a
     * demoted admin loses them now, in every process. */
    eu_auth_cache_clear(req->app, req->tenant);
    eu_log_info("admin", "account %s now has role '%s'", PQgetvalue(res, 0, 0), role);
    eu_req_reply_json(req, 200, json_pack("{s:s, s:s}", "id", PQgetvalue(res, 0, 0), "role", role));
}

/* How the operator appoints a tenant's owner (or any staff role): the
 * tenant's own staff cannot make the first owner. {"role": name} names a
 * built-in; {"role_id": id} any role of the tenant, custom ones too. */
void
eu_admin_accounts_set_role(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *role = json_string_value(json_object_get(body, "role"));
    const char *custom = json_string_value(json_object_get(body, "role_id"));
    bool known;
    const char *role_id = role_id_of(role, &known);
    if (!role && custom && eu_id_is_valid(custom)) {
        role = custom;
        role_id = custom;
        known = true;
    }
    if (!known) {
        eu_req_reply_error(req, 422,
                           "Validation failed: role must be owner, admin, moderator or user");
        return;
    }
    const char *params[] = {id, role_id};
    eu_req_stmt(req, &eu_admin_accounts_sql[ADMIN_ACCOUNTS_ROLE], 2, params, on_role_set,
                eu_arena_strdup(req->arena, role));
}

/* ---------------------- POST /admin/v1/tenants/:domain/accounts/:id/confirm */

static void
on_confirmed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_log_info("admin", "tenant %s: account %s confirmed by the operator", req->tenant->domain,
                PQgetvalue(res, 0, 0));
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:b}", "id", PQgetvalue(res, 0, 0), "confirmed", 1));
}

void
eu_admin_accounts_confirm(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_accounts_sql[ADMIN_ACCOUNTS_CONFIRM], 1, params, on_confirmed, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_accounts_routes[] = {
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/accounts", eu_admin_accounts_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_PUT, "/admin/v1/tenants/:domain/accounts/:id/role", eu_admin_accounts_set_role, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/accounts/:id/confirm", eu_admin_accounts_confirm,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
