/*
 * Registration, by the API and by the sign-up page, through one set of
 * checks. POST /api/v1/accounts registers with an app token, as Mastodon
 * answers it (one 422 with details per field); GET and POST /auth/sign_up
 * are the page a person signs up on in a browser, showing the same checks'
 * answers beside the form's fields. The password is hashed and the
 * account's key pair made on the CPU pool; the account, its user and (for
 * the API) its first token are written in one statement. With [mail] the
 * user is left unconfirmed and mailed the confirmation link (oauth_mail.c);
 * its token answers 403 until the link is opened, as Mastodon's does.
 * Without [mail] the same holds when confirm_without_mail is "operator"
 * (the mail goes to the log; the operator may confirm the account instead).
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
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mailer.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "web_internal.h"
#include "web_text.h"

enum {
    OAUTH_SIGNUP_CHECK,
    OAUTH_SIGNUP,
    OAUTH_SIGNUP_FORM,
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
     * account is confirmed at once. $8 the app, or NULL for the sign-up
     * page, which gets no token. */
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
         " scopes) SELECT $1::bigint, $8::bigint, u.id, $9, $10 FROM u"
         " WHERE $8::bigint IS NOT NULL RETURNING created_at)"
         " SELECT extract(epoch FROM coalesce((SELECT created_at FROM t), now()))::bigint FROM u"},
    /* What the sign-up page shows: the rules to accept, and Mastodon
     * 4.4's min_age (NULL: no date of birth is asked). */
    [OAUTH_SIGNUP_FORM] =
        {"oauth.signup_form",
         "SELECT (SELECT coalesce(json_agg(json_build_object('text', r.text, 'hint', r.hint)"
         "  ORDER BY r.priority, r.id), '[]') FROM instance_rules r"
         "  WHERE r.tenant_id = $1 AND r.deleted_at IS NULL)::text,"
         " (SELECT (value ->> 'min_age')::int FROM settings WHERE tenant_id = $1"
         "  AND key = 'instance' AND jsonb_typeof(value -> 'min_age') = 'number')"},

    {0},
};

/* ----------------------------------------------------- the shared checks */

/*
 * Registration. The tenant's `settings` row 'registrations_mode' decides:
 * "open" (the default when unset, so a fresh demo tenant can sign people
 * up), "approval" (the user is made unapproved and its token answers 403
 * until a moderator approves it) or "closed" (403). Operators change it
 * with PATCH /admin/v1/tenants/:domain {"registrations": "..."}.
 *
 * The API and the page fill a struct signup from their parameters and call
 * signup_start(); its ops answer as each of them answers.
 */
struct signup;
struct signup_ops {
    /* Registrations are closed, or an IP block refuses the client. */
    void (*refused)(struct signup *su, bool closed);
    /* Some field failed: details as Mastodon's 422 lays them out ({field:
     * [{error, description}]}, a new reference for the callee), msg its
     * one-line summary. */
    void (*invalid)(struct signup *su, json_t *details, const char *msg);
    /* The account is written; created_at of its token (the API's). */
    void (*done)(struct signup *su, long long created_at);
};

struct signup {
    struct eu_req *req;
    const struct signup_ops *ops;
    const char *username, *email, *locale, *reason, *date_of_birth;
    /* The page's second password, checked against the first; NULL from the
     * API, which has none. */
    const char *confirmation;
    bool agreed;
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
    /* The page's own: its CSRF token, to show the form again. */
    const char *csrf;
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
        su->ops->invalid(su,
                         json_pack("{s:[{s:s, s:s}]}", "username", "error", "ERR_TAKEN",
                                   "description", "is already taken"),
                         "Validation failed: Username is already taken");
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
    su->ops->done(su, strtoll(PQgetvalue(res, 0, 0), NULL, 10));
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
        su->ops->refused(su, true);
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
        su->ops->refused(su, false);
        return;
    }
    su->approval =
        strcmp(mode, "approval") == 0 || strcmp(ip_block, "sign_up_requires_approval") == 0;
    su->scopes = PQgetisnull(res, 0, 3) ? req->auth.scopes
                                        : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
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
    if (su->confirmation && plen && strcmp(su->confirmation, su->password) != 0)
        field_error(&fe, "password_confirmation", "Password confirmation", "ERR_CONFIRMATION",
                    "doesn't match Password");
    if (!su->agreed)
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
        su->ops->invalid(su, fe.details,
                         eu_arena_sprintf(req->arena, "Validation failed: %s", fe.msg));
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

/* Runs the checks, then writes the account; su's ops answer. */
static void
signup_start(struct signup *su)
{
    struct eu_req *req = su->req;
    eu_arena_on_free(req->arena, on_signup_freed, su);
    const char *app =
        req->auth.app_id ? eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id) : NULL;
    const char *p[] = {su->username ? su->username : "", su->email ? su->email : "", app,
                       eu_oauth_client_ip(req)};
    eu_req_stmt(req, &eu_oauth_signup_sql[OAUTH_SIGNUP_CHECK], 4, p, on_signup_checked, su);
}

/* -------------------------------------------------- POST /api/v1/accounts */

static void
api_refused(struct signup *su, bool closed)
{
    (void)closed;
    eu_req_reply_error(su->req, 403, "This action is not allowed");
}

static void
api_invalid(struct signup *su, json_t *details, const char *msg)
{
    eu_req_reply_json(su->req, 422, json_pack("{s:s, s:o}", "error", msg, "details", details));
}

static void
api_done(struct signup *su, long long created_at)
{
    eu_req_add_header(su->req, "Cache-Control", "no-store");
    eu_req_reply_json(su->req, 200,
                      json_pack("{s:s, s:s, s:s, s:I}", "access_token", su->token, "token_type",
                                "Bearer", "scope", su->scopes, "created_at",
                                (json_int_t)created_at));
}

static const struct signup_ops api_ops = {api_refused, api_invalid, api_done};

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
    su->ops = &api_ops;
    su->username = eu_oauth_str_or_null(eu_param_str(params, "username"));
    su->email = eu_oauth_str_or_null(eu_param_str(params, "email"));
    su->locale = eu_oauth_str_or_null(eu_param_str(params, "locale"));
    su->reason = eu_oauth_str_or_null(eu_param_str(params, "reason"));
    su->date_of_birth = eu_oauth_str_or_null(eu_param_str(params, "date_of_birth"));
    bool agreed = false;
    su->agreed = eu_param_bool(params, "agreement", &agreed) == 1 && agreed;
    const char *password = eu_param_str(params, "password");
    su->password = strdup(password ? password : "");
    signup_start(su);
}

/* ------------------------------------------ GET and POST /auth/sign_up */

/* A page of one message (catalogue keys), with a link onwards or none. */
static void
reply_note(struct eu_req *req, int status, const char *title, const char *text, const char *label,
           const char *href)
{
    const char *link = label ? eu_arena_sprintf(req->arena, "<p><a href=\"%s\">%s</a></p>", href,
                                                eu_web_th(req, label))
                             : "";
    const char *body =
        eu_arena_sprintf(req->arena, "<div class=\"card\"><h1>%s</h1><p>%s</p>%s</div>",
                         eu_web_th(req, title), eu_web_th(req, text), link);
    eu_web_reply_page(req, status, eu_web_t(req, title), body);
}

static void
reply_closed(struct eu_req *req)
{
    reply_note(req, 403, "Registrations are closed",
               "This server is not accepting new accounts at the moment.", "About this server",
               "/about");
}

/* The form again with what the person typed (never the passwords). */
struct form {
    struct signup *su;
    json_t *details; /* field errors, or NULL */
};

/* The error shown under field, and the attributes tying its input to it;
 * "" when it has none. */
static const char *
field_message(struct eu_req *req, json_t *details, const char *field, const char *label)
{
    json_t *list = details ? json_object_get(details, field) : NULL;
    if (!list || !json_array_size(list))
        return "";
    const char *desc = json_string_value(json_object_get(json_array_get(list, 0), "description"));
    return eu_arena_sprintf(req->arena, "<p class=\"field-error\" id=\"%s-error\">%s</p>", field,
                            eu_arena_sprintf(req->arena, eu_web_th(req, "%s %s"),
                                             eu_web_th(req, label),
                                             eu_web_th(req, desc ? desc : "is invalid")));
}

static const char *
invalid_attrs(struct eu_req *req, json_t *details, const char *field)
{
    if (!details || !json_object_get(details, field))
        return "";
    return eu_arena_sprintf(req->arena, " aria-invalid=\"true\" aria-describedby=\"%s-error\"",
                            field);
}

static const char *
value_attr(struct eu_req *req, const char *v)
{
    return v ? eu_arena_sprintf(req->arena, " value=\"%s\"", eu_html_escape(req, v)) : "";
}

static void
on_form_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct form *fm = arg;
    struct signup *su = fm->su;
    json_t *d = fm->details;
    json_t *rules = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
    const char *items = "";
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        const char *hint = json_string_value(json_object_get(r, "hint"));
        items = eu_arena_sprintf(
            req->arena, "%s<li>%s%s</li>", items,
            eu_html_escape(req, json_string_value(json_object_get(r, "text"))),
            hint && *hint ? eu_arena_sprintf(req->arena, "<br><span class=\"muted\">%s</span>",
                                             eu_html_escape(req, hint))
                          : "");
    }
    bool have_rules = json_array_size(rules) > 0;
    json_decref(rules);
    const char *rules_html =
        have_rules ? eu_arena_sprintf(req->arena, "<h2>%s</h2><ol class=\"rules\">%s</ol>",
                                      eu_web_th(req, "Server rules"), items)
                   : "";
    const char *dob = "";
    if (!PQgetisnull(res, 0, 1))
        dob = eu_arena_sprintf(
            req->arena,
            "<label for=\"date_of_birth\">%s</label><p class=\"hint\" id=\"dob-hint\">%s</p>"
            "<input type=\"date\" id=\"date_of_birth\" name=\"date_of_birth\" "
            "autocomplete=\"bday\" required%s%s>%s",
            eu_web_th(req, "Date of birth"),
            eu_arena_sprintf(req->arena,
                             eu_web_th(req, "You must be at least %d years old to sign up here. "
                                            "It is checked, not kept."),
                             atoi(PQgetvalue(res, 0, 1))),
            value_attr(req, su->date_of_birth), invalid_attrs(req, d, "date_of_birth"),
            field_message(req, d, "date_of_birth", "Date of birth"));
    const char *reason = "";
    if (strcmp(eu_web_registrations(req), "approval") == 0)
        reason = eu_arena_sprintf(
            req->arena,
            "<label for=\"reason\">%s</label><p class=\"hint\">%s</p>"
            "<textarea id=\"reason\" name=\"reason\" rows=\"3\" "
            "maxlength=\"1000\"%s>%s</textarea>%s",
            eu_web_th(req, "Why do you want to join?"),
            eu_web_th(req, "The moderators review new accounts here before they can be used."),
            invalid_attrs(req, d, "reason"), eu_html_escape(req, su->reason ? su->reason : ""),
            field_message(req, d, "reason", "Reason"));
    const char *summary =
        d ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                             eu_web_th(req, "Some fields need your attention."))
          : "";
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p>%s</p>%s"
        "<form method=\"post\" action=\"/auth/sign_up\" novalidate>"
        "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">"
        "<label for=\"username\">%s</label><p class=\"hint\">%s</p>"
        "<input type=\"text\" id=\"username\" name=\"username\" autocomplete=\"username\" "
        "maxlength=\"30\" required%s%s>%s"
        "<label for=\"email\">%s</label>"
        "<input type=\"email\" id=\"email\" name=\"email\" autocomplete=\"email\" required%s%s>%s"
        "<label for=\"password\">%s</label><p class=\"hint\">%s</p>"
        "<input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"new-password\" "
        "minlength=\"8\" maxlength=\"72\" required%s>%s"
        "<label for=\"password_confirmation\">%s</label>"
        "<input type=\"password\" id=\"password_confirmation\" name=\"password_confirmation\" "
        "autocomplete=\"new-password\" required%s>%s"
        "%s%s%s"
        "<div class=\"check\"><input type=\"checkbox\" id=\"agreement\" name=\"agreement\" "
        "value=\"1\"%s><label for=\"agreement\">%s</label></div>%s"
        "<button type=\"submit\">%s</button></form>"
        "<p>%s <a href=\"/auth/sign_in\">%s</a></p></div>",
        eu_web_th(req, "Create an account"),
        eu_arena_sprintf(req->arena, eu_web_th(req, "Join %s."),
                         eu_html_escape(req, req->tenant->title)),
        summary, su->csrf, eu_web_th(req, "Username"),
        eu_web_th(req, "Letters, numbers and underscores; at most 30."),
        value_attr(req, su->username), invalid_attrs(req, d, "username"),
        field_message(req, d, "username", "Username"), eu_web_th(req, "E-mail address"),
        value_attr(req, su->email), invalid_attrs(req, d, "email"),
        field_message(req, d, "email", "Email"), eu_web_th(req, "Password"),
        eu_web_th(req, "8 to 72 characters."), invalid_attrs(req, d, "password"),
        field_message(req, d, "password", "Password"), eu_web_th(req, "Confirm password"),
        invalid_attrs(req, d, "password_confirmation"),
        field_message(req, d, "password_confirmation", "Password confirmation"), dob, reason,
        rules_html, invalid_attrs(req, d, "agreement"),
        eu_web_th(req, "I have read and agree to the server rules, the privacy policy and the "
                       "terms of service."),
        field_message(req, d, "agreement", "Agreement"), eu_web_th(req, "Sign up"),
        eu_web_th(req, "Already have an account?"), eu_web_th(req, "Sign in"));
    int status = d ? 422 : 200;
    json_decref(d);
    eu_web_reply_page(req, status, eu_web_t(req, "Create an account"), body);
}

static void
show_form(struct signup *su, json_t *details)
{
    struct form *fm = eu_arena_calloc(su->req->arena, sizeof(*fm));
    fm->su = su;
    fm->details = details;
    eu_req_stmt(su->req, &eu_oauth_signup_sql[OAUTH_SIGNUP_FORM], 0, NULL, on_form_loaded, fm);
}

static void
page_refused(struct signup *su, bool closed)
{
    if (closed)
        reply_closed(su->req);
    else
        reply_note(su->req, 403, "Sign-up not allowed",
                   "New accounts cannot be created from your network.", "About this server",
                   "/about");
}

static void
page_invalid(struct signup *su, json_t *details, const char *msg)
{
    (void)msg;
    show_form(su, details);
}

static void
page_done(struct signup *su, long long created_at)
{
    (void)created_at;
    struct eu_req *req = su->req;
    if (su->confirm[0])
        reply_note(req, 200, "Check your e-mail",
                   su->approval ? "We sent you a link to confirm your e-mail address. Once you "
                                  "confirm it, the moderators will review your account."
                                : "We sent you a link to confirm your e-mail address. Open it "
                                  "to activate your account.",
                   NULL, NULL);
    else if (su->approval)
        reply_note(req, 200, "Awaiting approval",
                   "Your account was created. The moderators will review it; you can sign in "
                   "once they approve it.",
                   NULL, NULL);
    else
        reply_note(req, 200, "Welcome!", "Your account is ready.", "Sign in", "/auth/sign_in");
}

static const struct signup_ops page_ops = {page_refused, page_invalid, page_done};

static void
on_page_session(struct eu_req *req, const char *csrf, void *arg)
{
    struct signup *su = eu_arena_calloc(req->arena, sizeof(*su));
    su->req = req;
    su->ops = &page_ops;
    su->csrf = csrf;
    show_form(su, NULL);
}

static void
sign_up_page(struct eu_req *req)
{
    if (strcmp(eu_web_registrations(req), "closed") == 0) {
        reply_closed(req);
        return;
    }
    eu_oauth_browser_session(req, true, on_page_session, NULL);
}

static void
on_post_session(struct eu_req *req, const char *csrf, void *arg)
{
    json_t *params = arg;
    if (!csrf || !eu_oauth_secret_equal(eu_param_str(params, "authenticity_token"), csrf)) {
        eu_web_reply_expired_form(req, "/auth/sign_up");
        return;
    }
    struct signup *su = eu_arena_calloc(req->arena, sizeof(*su));
    su->req = req;
    su->ops = &page_ops;
    su->csrf = csrf;
    su->username = eu_oauth_str_or_null(eu_param_str(params, "username"));
    su->email = eu_oauth_str_or_null(eu_param_str(params, "email"));
    su->locale = eu_web_lang(req);
    su->reason = eu_oauth_str_or_null(eu_param_str(params, "reason"));
    su->date_of_birth = eu_oauth_str_or_null(eu_param_str(params, "date_of_birth"));
    const char *again = eu_param_str(params, "password_confirmation");
    su->confirmation = again ? again : "";
    bool agreed = false;
    su->agreed = eu_param_bool(params, "agreement", &agreed) == 1 && agreed;
    const char *password = eu_param_str(params, "password");
    su->password = strdup(password ? password : "");
    signup_start(su);
}

static void
sign_up(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    if (strcmp(eu_web_registrations(req), "closed") == 0) {
        reply_closed(req);
        return;
    }
    eu_oauth_browser_session(req, false, on_post_session, params);
}

EU_WEB_PAGE(sign_up_show, sign_up_page)
EU_WEB_PAGE(sign_up_create, sign_up)

/* Flags: include/eunha/router.h. */
const struct eu_route eu_oauth_signup_routes[] = {
    {EU_HTTP_POST, "/api/v1/accounts", eu_oauth_register, "write:accounts",
     EU_ROUTE_APP_TOKEN | EU_ROUTE_API | EU_ROUTE_LIMIT_SIGNUP},
    {EU_HTTP_GET, "/auth/sign_up", sign_up_show, NULL, EU_ROUTE_LIMIT_API},
    {EU_HTTP_POST, "/auth/sign_up", sign_up_create, NULL,
     EU_ROUTE_LIMIT_API | EU_ROUTE_LIMIT_SIGNUP},
    {0},
};
