/*
 * POST /api/v1/accounts: registration with an app token, as Mastodon
 * answers it (one 422 with details per field). The password is hashed and
 * the account's key pair made on the CPU pool; the account, its user and
 * its first token are written in one statement. With [mail] the user is
 * left unconfirmed and mailed the confirmation link (oauth_mail.c); its
 * token answers 403 until the link is opened, as Mastodon's does. Without
 * [mail] the same holds when confirm_without_mail is "operator" (the mail
 * goes to the log; the operator may confirm the account instead).
 */
#include "oauth_internal.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/apkeys.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mailer.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"

enum {
    OAUTH_SIGNUP_CHECK,
    OAUTH_SIGNUP,
};

const struct eu_sql eu_oauth_signup_sql[] = {
    /*
     * $2 username, $3 e-mail, $4 the app, $5 the client's address or NULL.
     * Besides the mode and what is taken, the staff's blocks (tenant
     * migration 0055, src/api/staff_blocks.c): whether the address's
     * domain or a domain above it is blocked, whether its canonical form
     * is, and the most severe live IP block covering the client (no_access,
     * then sign_up_block, then sign_up_requires_approval), or NULL.
     */
    [OAUTH_SIGNUP_CHECK] =
        {"oauth.signup_check",
         "SELECT coalesce((SELECT value #>> '{}' FROM settings"
         " WHERE tenant_id = $1 AND key = 'registrations_mode'), 'open'),"
         " EXISTS (SELECT 1 FROM accounts WHERE tenant_id = $1"
         " AND lower(username) = lower($2) AND domain IS NULL)"
         " OR EXISTS (SELECT 1 FROM reserved_usernames r WHERE r.tenant_id = $1"
         " AND r.username = lower($2)),"
         " EXISTS (SELECT 1 FROM users WHERE tenant_id = $1"
         " AND lower(email) = lower($3)),"
         " (SELECT scopes FROM oauth_applications WHERE tenant_id = $1"
         " AND id = $4::bigint),"
         " EXISTS (SELECT 1 FROM email_domain_blocks e WHERE e.tenant_id = $1"
         " AND e.domain = ANY(eunha_domain_suffixes(lower(substr($3, strpos($3, '@') + 1))))),"
         " EXISTS (SELECT 1 FROM canonical_email_blocks c WHERE c.tenant_id = $1"
         " AND c.canonical_email_hash = eunha_canonical_email_hash($3)),"
         " (SELECT i.severity FROM ip_blocks i WHERE i.tenant_id = $1 AND i.ip >>= $5::inet"
         " AND (i.expires_at IS NULL OR i.expires_at > now())"
         " ORDER BY i.severity = 'sign_up_requires_approval', i.severity = 'sign_up_block'"
         " LIMIT 1),"
         /* Mastodon 4.4's min_age (the instance description), or NULL. */
         " (SELECT (value ->> 'min_age')::int FROM settings WHERE tenant_id = $1"
         " AND key = 'instance' AND jsonb_typeof(value -> 'min_age') = 'number')"},
    /* $13 the confirmation token's hash, or NULL: with [mail] (or [mail]
     * confirm_without_mail = "operator") the user confirms through the
     * link in the mail, as on Mastodon; otherwise nobody could, so the
     * account is confirmed at once. */
    [OAUTH_SIGNUP] =
        {"oauth.signup",
         "WITH a AS (INSERT INTO accounts (tenant_id, username, public_key, private_key)"
         " VALUES ($1, $2, $11, $12) RETURNING id),"
         " u AS (INSERT INTO users (tenant_id, account_id, email, encrypted_password, confirmed_at,"
         " approved, locale, reason, confirmation_token_hash, confirmation_sent_at,"
         " created_by_application_id) SELECT $1::bigint, a.id, $3, $4,"
         " CASE WHEN $13::text IS NULL THEN now() END, $5::boolean, $6, $7, $13,"
         " CASE WHEN $13::text IS NOT NULL THEN now() END, $8::bigint"
         " FROM a RETURNING id),"
         " t AS (INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash,"
         " scopes) SELECT $1::bigint, $8::bigint, u.id, $9, $10 FROM u RETURNING created_at)"
         " SELECT extract(epoch FROM created_at)::bigint FROM t"},

    {0},
};

/* -------------------------------------------------- POST /api/v1/accounts */

/*
 * Registration. The tenant's `settings` row 'registrations_mode' decides:
 * "open" (the default when unset, so a fresh demo tenant can sign people
 * up), "approval" (the user is made unapproved and its token answers 403
 * until a moderator approves it) or "closed" (403). Operators change it
 * with PATCH /admin/v1/tenants/:domain {"registrations": "..."}.
 */
struct signup {
    struct eu_req *req;
    const char *username, *email, *locale, *reason, *date_of_birth;
    char *password; /* malloc'd; wiped and freed after hashing */
    char hash[crypto_pwhash_STRBYTES];
    int rc;
    /* The account's RSA key pair for federation (src/ap/keys.c), made on the
     * CPU pool with the hash; malloc'd there, moved to the arena after. */
    char *pub_pem, *priv_pem;
    bool approval;
    const char *scopes;
    char token[EU_AUTH_TOKEN_LEN];
    /* The confirmation link's token, with [mail] only (else ""). */
    char confirm[EU_AUTH_TOKEN_LEN];
};

/* Mastodon's 422 for sign-ups: one message plus details per field. */
struct field_errors {
    json_t *details;
    char msg[512];
};

static void
field_error(struct field_errors *fe, const char *field, const char *label, const char *code,
            const char *desc)
{
    json_t *list = json_object_get(fe->details, field);
    if (!list) {
        list = json_array();
        json_object_set_new(fe->details, field, list);
    }
    json_array_append_new(list, json_pack("{s:s, s:s}", "error", code, "description", desc));
    size_t n = strlen(fe->msg);
    snprintf(fe->msg + n, sizeof(fe->msg) - n, "%s%s %s", n ? ", " : "", label, desc);
}

static bool
username_is_reserved(const char *u)
{
    static const char *const reserved[] = {"admin",    "administrator",  "root",       "webmaster",
                                           "support",  "help",           "owner",      "moderator",
                                           "mod",      "staff",          "postmaster", "abuse",
                                           "security", "instance_actor", NULL};
    for (int i = 0; reserved[i]; i++)
        if (strcasecmp(u, reserved[i]) == 0)
            return true;
    return false;
}

static bool
email_looks_valid(const char *s)
{
    const char *at = strchr(s, '@');
    return at && at != s && at[1] && !strchr(at + 1, '@') && strchr(at + 1, '.') &&
           strlen(s) <= 254 && !strpbrk(s, " \t\r\n<>\"',;");
}

/* Whole years since dob ("YYYY-MM-DD"), today in UTC; -1 when dob is not
 * a date of the past. */
static int
age_of(const char *dob)
{
    int y, m, d, n = 0;
    if (sscanf(dob, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || dob[n] || m < 1 || m > 12 || d < 1 ||
        d > 31 || y < 1800)
        return -1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    int age = tm.tm_year + 1900 - y;
    if (tm.tm_mon + 1 < m || (tm.tm_mon + 1 == m && tm.tm_mday < d))
        age--;
    return age;
}

static void
on_signup_inserted(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    struct signup *su = arg;
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        /* Lost a race with another sign-up for the same name or address. */
        eu_req_reply_json(req, 422,
                          json_pack("{s:s, s:{s:[{s:s, s:s}]}}", "error",
                                    "Validation failed: Username is already taken", "details",
                                    "username", "error", "ERR_TAKEN", "description",
                                    "is already taken"));
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    eu_log_info("oauth", "account '%s' signed up%s%s", su->username,
                su->approval ? ", pending approval" : "",
                su->confirm[0] ? ", confirmation mailed" : "");
    if (su->confirm[0])
        eu_oauth_mail_confirmation(req, su->email, su->confirm, false);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:s, s:s, s:I}", "access_token", su->token, "token_type",
                                "Bearer", "scope", su->scopes, "created_at",
                                (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10)));
}

/* Wipes and frees the password copy; also run by the request's arena, so a
 * failed statement leaves nothing behind. */
static void
signup_free_password(struct signup *su)
{
    if (su->password)
        sodium_memzero(su->password, strlen(su->password));
    free(su->password);
    su->password = NULL;
}

static void
on_signup_freed(void *data)
{
    signup_free_password(data);
}

static void
signup_hash_work(void *arg)
{
    struct signup *su = arg;
    su->rc =
        crypto_pwhash_str_alg(su->hash, su->password, strlen(su->password), EU_OAUTH_PWHASH_OPS,
                              EU_OAUTH_PWHASH_MEM, crypto_pwhash_ALG_ARGON2ID13);
    sodium_memzero(su->password, strlen(su->password));
    if (su->rc == 0)
        eu_ap_rsa_generate(&su->pub_pem, &su->priv_pem); /* NULL on failure */
}

static void
signup_hash_done(void *arg)
{
    struct signup *su = arg;
    struct eu_req *req = su->req;
    signup_free_password(su);
    const char *pub = su->pub_pem ? eu_arena_strdup(req->arena, su->pub_pem) : NULL;
    const char *priv = su->priv_pem ? eu_arena_strdup(req->arena, su->priv_pem) : NULL;
    free(su->pub_pem);
    free(su->priv_pem);
    eu_req_enter(req);
    if (su->rc != 0 || !pub) {
        eu_req_reply_error(req, 500,
                           su->rc ? "Cannot hash the password" : "Cannot make the account's keys");
        return;
    }
    char hash[65], confirm_hash[65];
    eu_auth_token_new(su->token);
    eu_auth_token_hash(su->token, hash);
    if (eu_mail_confirmation_needed(req->app)) {
        eu_auth_token_new(su->confirm);
        eu_auth_token_hash(su->confirm, confirm_hash);
    }
    const char *app =
        req->auth.app_id ? eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id) : NULL;
    const char *p[] = {su->username, su->email,  su->hash, su->approval ? "f" : "t",
                       su->locale,   su->reason, app,      hash,
                       su->scopes,   pub,        priv,     su->confirm[0] ? confirm_hash : NULL};
    eu_req_stmt_or_error(req, &eu_oauth_signup_sql[OAUTH_SIGNUP], 12, p, on_signup_inserted, su);
}

static void
on_signup_checked(struct eu_req *req, PGresult *res, void *arg)
{
    struct signup *su = arg;
    const char *mode = PQgetvalue(res, 0, 0);
    if (strcmp(mode, "closed") == 0) {
        signup_free_password(su);
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    /* Mastodon's allowed_registration?: an address under an IP block that
     * refuses sign-ups may not register; one that asks for approval gets
     * it whatever the mode. */
    const char *ip_block = PQgetisnull(res, 0, 6) ? "" : PQgetvalue(res, 0, 6);
    if (strcmp(ip_block, "sign_up_block") == 0 || strcmp(ip_block, "no_access") == 0) {
        signup_free_password(su);
        eu_log_info("oauth", "sign-up refused: '%s' is under an IP block (%s)", req->remote_ip,
                    ip_block);
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    su->approval =
        strcmp(mode, "approval") == 0 || strcmp(ip_block, "sign_up_requires_approval") == 0;
    su->scopes = PQgetisnull(res, 0, 3) ? req->auth.scopes
                                        : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
    json_t *params = eu_req_params(req, NULL);
    struct field_errors fe = {.details = json_object()};
    const char *u = su->username;
    if (!u || !*u) {
        field_error(&fe, "username", "Username", "ERR_BLANK", "can't be blank");
    } else {
        bool ok = true;
        for (const char *c = u; *c && ok; c++)
            ok = isalnum((unsigned char)*c) || *c == '_';
        if (!ok)
            field_error(&fe, "username", "Username", "ERR_INVALID",
                        "must contain only letters, numbers and underscores");
        else if (strlen(u) > 30)
            field_error(&fe, "username", "Username", "ERR_TOO_LONG",
                        "is too long (maximum is 30 characters)");
        else if (username_is_reserved(u))
            field_error(&fe, "username", "Username", "ERR_RESERVED", "is reserved");
        else if (strcmp(PQgetvalue(res, 0, 1), "t") == 0)
            field_error(&fe, "username", "Username", "ERR_TAKEN", "is already taken");
    }
    if (!su->email || !*su->email)
        field_error(&fe, "email", "Email", "ERR_BLANK", "can't be blank");
    else if (!email_looks_valid(su->email))
        field_error(&fe, "email", "Email", "ERR_INVALID", "is invalid");
    else if (strcmp(PQgetvalue(res, 0, 4), "t") == 0)
        field_error(&fe, "email", "Email", "ERR_BLOCKED", "uses a disallowed e-mail provider");
    /* A blocked canonical address reads as taken, as Mastodon's
     * BlacklistedEmailValidator answers it: nothing says it is blocked. */
    else if (strcmp(PQgetvalue(res, 0, 2), "t") == 0 || strcmp(PQgetvalue(res, 0, 5), "t") == 0)
        field_error(&fe, "email", "Email", "ERR_TAKEN", "is already taken");
    size_t plen = su->password ? strlen(su->password) : 0;
    if (plen == 0)
        field_error(&fe, "password", "Password", "ERR_BLANK", "can't be blank");
    else if (plen < 8)
        field_error(&fe, "password", "Password", "ERR_TOO_SHORT",
                    "is too short (minimum is 8 characters)");
    else if (plen > 72)
        field_error(&fe, "password", "Password", "ERR_TOO_LONG",
                    "is too long (maximum is 72 characters)");
    bool agreed = false;
    if (eu_param_bool(params, "agreement", &agreed) != 1 || !agreed)
        field_error(&fe, "agreement", "Agreement", "ERR_ACCEPTED", "must be accepted");
    if (su->locale) {
        bool ok = strlen(su->locale) <= 10;
        for (const char *c = su->locale; *c && ok; c++)
            ok = isalpha((unsigned char)*c) || *c == '-' || *c == '_';
        if (!ok)
            field_error(&fe, "locale", "Locale", "ERR_INCLUSION", "is not included in the list");
    }
    /* Mastodon 4.4: with a min_age the sign-up gives a date of birth
     * (YYYY-MM-DD) at least that many years ago; it is checked, not kept. */
    if (!PQgetisnull(res, 0, 7)) {
        int min_age = atoi(PQgetvalue(res, 0, 7));
        if (!su->date_of_birth)
            field_error(&fe, "date_of_birth", "Date of birth", "ERR_BLANK", "can't be blank");
        else if (age_of(su->date_of_birth) < min_age)
            field_error(&fe, "date_of_birth", "Date of birth", "ERR_BELOW_LIMIT",
                        "is below the age limit");
    }
    if (su->reason && strlen(su->reason) > 1000)
        field_error(&fe, "reason", "Reason", "ERR_TOO_LONG",
                    "is too long (maximum is 1000 characters)");
    if (fe.msg[0]) {
        signup_free_password(su);
        const char *msg = eu_arena_sprintf(req->arena, "Validation failed: %s", fe.msg);
        eu_req_reply_json(req, 422, json_pack("{s:s, s:o}", "error", msg, "details", fe.details));
        return;
    }
    json_decref(fe.details);
    const struct eu_config *cfg = req->app->cfg;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, signup_hash_work,
                              signup_hash_done, su) < 0) {
        signup_free_password(su);
        eu_oauth_reply_cpu_busy(req, 503);
    }
}

void
eu_oauth_register(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct signup *su = eu_arena_calloc(req->arena, sizeof(*su));
    su->req = req;
    su->username = eu_oauth_str_or_null(eu_param_str(params, "username"));
    su->email = eu_oauth_str_or_null(eu_param_str(params, "email"));
    su->locale = eu_oauth_str_or_null(eu_param_str(params, "locale"));
    su->reason = eu_oauth_str_or_null(eu_param_str(params, "reason"));
    su->date_of_birth = eu_oauth_str_or_null(eu_param_str(params, "date_of_birth"));
    const char *password = eu_param_str(params, "password");
    su->password = strdup(password ? password : "");
    eu_arena_on_free(req->arena, on_signup_freed, su);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id);
    const char *p[] = {su->username ? su->username : "", su->email ? su->email : "", app,
                       eu_oauth_client_ip(req)};
    eu_req_stmt(req, &eu_oauth_signup_sql[OAUTH_SIGNUP_CHECK], 4, p, on_signup_checked, su);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_oauth_signup_routes[] = {
    {EU_HTTP_POST, "/api/v1/accounts", eu_oauth_register, "write:accounts",
     EU_ROUTE_APP_TOKEN | EU_ROUTE_API | EU_ROUTE_LIMIT_SIGNUP},
    {0},
};
