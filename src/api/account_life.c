/*
 * The account's own end and its password, as its owner asks for them:
 * GoToSocial's POST /api/v1/user/password_change and POST
 * /api/v1/accounts/delete, and the same as server-rendered pages for the
 * signed-in browser (/settings/password, /settings/delete; CSRF tokens as
 * every form). Each takes the current password, checked on the CPU pool as
 * at sign-in and counted against the same limits (oauth.c), so a stolen
 * token or an open browser cannot change or end the account alone.
 *
 * A password change ends the user's other browser sessions, as Mastodon's
 * RegistrationsController does (clear_other_sessions); its apps' tokens
 * stay, as on Mastodon, and the session or token that asked stays.
 *
 * A deletion suspends the account at once (its tokens, sessions and
 * streams stop working), queues the Delete of the actor to every server
 * that knows it (src/ap/delete_actor.c), and leaves its rows to the
 * existing purge (src/queue/accounts.c), due within the hour so the
 * Deletes go out, signed with the account's key, before the key goes.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"
#include "oauth_internal.h"
#include "web_internal.h"
#include "web_settings_internal.h"
#include "web_text.h"
#include "websession_internal.h"

/* The longest a deleted account's rows wait for its Deletes to go out
 * (both spellings say the same). */
#define DELETE_GRACE_S 3600
#define DELETE_GRACE_SQL "3600"

enum {
    LIFE_USER,
    LIFE_PASSWORD_SET,
    LIFE_DELETE,
};

const struct eu_sql eu_account_life_sql[] = {
    /* $2 user: its password hash and account, while it may use the tenant. */
    [LIFE_USER] = {"account_life.user",
                   "SELECT u.encrypted_password, u.account_id, a.username FROM users u"
                   " JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
                   " WHERE u.tenant_id = $1 AND u.id = $2 AND a.suspended_at IS NULL"},
    /* $2 user, $3 the new hash, $4 the session hash that stays (or NULL):
     * the other browser sessions end, those waiting for a code too. */
    [LIFE_PASSWORD_SET] = {"account_life.password_set",
                           "WITH s AS (DELETE FROM web_sessions WHERE tenant_id = $1"
                           "  AND (user_id = $2 OR otp_pending_user_id = $2)"
                           "  AND session_hash IS DISTINCT FROM $4)"
                           " UPDATE users SET encrypted_password = $3, updated_at = now()"
                           " WHERE tenant_id = $1 AND id = $2 RETURNING id"},
    /* $2 account, $3 the retention in seconds: suspended now, its purge
     * due in at most DELETE_GRACE_S. */
    /* The Delete of the actor goes out as an ap_delete_actor job
     * (src/ap/delete_actor.c), queued with the suspension. */
    [LIFE_DELETE] = {"account_life.delete",
                     "WITH a AS (UPDATE accounts SET suspended_at = now() - make_interval(secs =>"
                     " greatest($3::float8 - " DELETE_GRACE_SQL ", 0)),"
                     " delete_sent_at = now(), updated_at = now()"
                     " WHERE tenant_id = $1 AND id = $2::bigint AND domain IS NULL"
                     " AND suspended_at IS NULL RETURNING id),"
                     " j AS (INSERT INTO jobs (tenant_id, queue, kind, payload, dedupe_key)"
                     "  SELECT $1, 'default', 'ap_delete_actor',"
                     "  json_build_object('account_id', id::text), 'ap_delete_actor:' || id FROM a"
                     "  ON CONFLICT (tenant_id, dedupe_key) DO NOTHING)"
                     " SELECT id FROM a"},
    {0},
};

enum kind { PW_API, PW_PAGE, DEL_API, DEL_PAGE };

struct life {
    struct eu_req *req;
    json_t *params;
    enum kind kind;
    int64_t user_id, account_id;
    const char *username;
    const struct eu_web_session *s; /* the pages' */
    struct eu_oauth_flow f;         /* the password check */
    const char *stored, *new_password;
    char *new_hash; /* malloc'd, crypto_pwhash_STRBYTES */
    int hash_rc;
};

static bool
is_page(const struct life *l)
{
    return l->kind == PW_PAGE || l->kind == DEL_PAGE;
}

/* ------------------------------------------------------------- pages */

/* A text of the pages in the page's language, escaped. */
static const char *
t(struct eu_req *req, const char *english)
{
    return eu_html_escape(req, eu_web_t(req, english));
}

static void
reply_form(struct life *l, int status, const char *error)
{
    struct eu_req *req = l->req;
    const char *err = error
                          ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                             t(req, error))
                          : "";
    if (l->kind == PW_PAGE) {
        const char *body = eu_arena_sprintf(
            req->arena,
            "<h1>%s</h1>%s<form method=\"post\" action=\"/settings/password\" class=\"card\">%s"
            "<label for=\"old_password\">%s</label><input type=\"password\" id=\"old_password\" "
            "name=\"old_password\" autocomplete=\"current-password\" required>"
            "<label for=\"new_password\">%s</label><input type=\"password\" id=\"new_password\" "
            "name=\"new_password\" autocomplete=\"new-password\" required minlength=\"8\" "
            "maxlength=\"72\" aria-describedby=\"new_password_hint\"><p class=\"hint\" "
            "id=\"new_password_hint\">%s</p><button type=\"submit\">%s</button></form>"
            "<p class=\"muted\">%s</p>",
            t(req, "Change password"), err, eu_web_csrf_field(req, l->s),
            t(req, "Current password"), t(req, "New password"), t(req, "8 to 72 characters."),
            t(req, "Change password"), t(req, "Your other signed-in browsers will be signed out."));
        eu_web_settings_reply(req, status, "/settings/password", eu_web_t(req, "Change password"),
                              body);
        return;
    }
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1>%s<div class=\"card\"><p>%s <strong>@%s</strong></p><p>%s</p>"
        "<form method=\"post\" action=\"/settings/delete\">%s"
        "<label for=\"password\">%s</label><input type=\"password\" id=\"password\" "
        "name=\"password\" autocomplete=\"current-password\" required>"
        "<button type=\"submit\" class=\"danger\">%s</button></form></div>",
        t(req, "Delete account"), err, t(req, "This deletes the account for good:"),
        eu_html_escape(req, l->s->username),
        t(req, "Your posts, follows and media are removed, and other servers are told the "
               "account is gone. It cannot be undone."),
        eu_web_csrf_field(req, l->s), t(req, "Password"), t(req, "Delete my account"));
    eu_web_settings_reply(req, status, "/settings/delete", eu_web_t(req, "Delete account"), body);
}

/* An error: a JSON body for the API, the form again for the pages. */
static void
fail(struct life *l, int status, const char *message)
{
    if (is_page(l))
        reply_form(l, status, message);
    else
        eu_req_reply_error(l->req, status, "%s", message);
}

/* --------------------------------------------------------- deletion */

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    struct life *l = arg;
    if (PQntuples(res) != 1) {
        fail(l, 422, "The account is already suspended.");
        return;
    }
    /* Tokens answered from the cache, and open streams, stop now. */
    eu_auth_cache_clear(req->app, req->tenant);
    eu_stream_close_for(req->app, req->tenant, l->account_id, NULL);
    int retention = req->app->cfg->suspended_retention_s;
    int64_t due_s = retention < DELETE_GRACE_S ? retention : DELETE_GRACE_S;
    eu_queue_task_wake(req->tenant, EU_TASK_ACCOUNT_CLEANUP, due_s * 1000);
    eu_queue_wake(req->tenant, EU_QUEUE_DEFAULT, 0); /* the Delete's job */
    eu_log_info("api", "account %lld ('%s') deleted by its owner", (long long)l->account_id,
                l->username);
    if (is_page(l)) {
        eu_req_add_header(req, "Set-Cookie",
                          eu_arena_sprintf(req->arena,
                                           "%s=; Path=/; Max-Age=0; HttpOnly; "
                                           "SameSite=Lax",
                                           EU_WEB_SESSION_COOKIE));
        eu_web_reply_page(
            req, 200, eu_web_t(req, "Account deleted"),
            eu_arena_sprintf(req->arena, "<h1>%s</h1><p>%s</p>", t(req, "Account deleted"),
                             t(req, "Your account has been suspended and its data will be "
                                    "removed shortly.")));
    } else {
        eu_req_reply_json(req, 202, json_pack("{s:s}", "message", "accepted"));
    }
}

static void
delete_account(struct life *l)
{
    struct eu_req *req = l->req;
    const char *aid = eu_arena_sprintf(req->arena, "%lld", (long long)l->account_id);
    const char *ret = eu_arena_sprintf(req->arena, "%d", req->app->cfg->suspended_retention_s);
    const char *p[] = {aid, ret};
    eu_req_stmt(req, &eu_account_life_sql[LIFE_DELETE], 2, p, on_deleted, l);
}

/* --------------------------------------------------- password change */

static void
on_password_set(struct eu_req *req, PGresult *res, void *arg)
{
    struct life *l = arg;
    eu_log_info("api", "user %lld changed its password; other sessions ended",
                (long long)l->user_id);
    if (is_page(l))
        eu_web_settings_reply(
            req, 200, "/settings/password", eu_web_t(req, "Password changed"),
            eu_arena_sprintf(req->arena, "<h1>%s</h1><p class=\"notice\">%s</p>",
                             t(req, "Password changed"),
                             t(req, "Your password has been changed; your other browsers have "
                                    "been signed out.")));
    else
        eu_req_reply_json(req, 200, json_object());
}

static void
hash_work(void *arg)
{
    struct life *l = arg;
    l->hash_rc = crypto_pwhash_str_alg(l->new_hash, l->new_password, strlen(l->new_password),
                                       EU_OAUTH_PWHASH_OPS, EU_OAUTH_PWHASH_MEM,
                                       crypto_pwhash_ALG_ARGON2ID13);
}

static void
hash_done(void *arg)
{
    struct life *l = arg;
    struct eu_req *req = l->req;
    eu_req_enter(req);
    if (l->hash_rc != 0) {
        fail(l, 500, "Could not store the new password.");
        return;
    }
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)l->user_id);
    const char *hash = eu_arena_strdup(req->arena, l->new_hash);
    char sh[65];
    const char *keep = NULL;
    if (is_page(l)) {
        eu_auth_token_hash(eu_web_session_cookie(req), sh);
        keep = sh;
    }
    const char *p[] = {uid, hash, keep};
    eu_req_stmt(req, &eu_account_life_sql[LIFE_PASSWORD_SET], 3, p, on_password_set, l);
}

static void
free_hash(void *data)
{
    struct life *l = data;
    if (l->new_hash) {
        sodium_memzero(l->new_hash, crypto_pwhash_STRBYTES);
        free(l->new_hash);
        l->new_hash = NULL;
    }
}

static void
change_password(struct life *l)
{
    struct eu_req *req = l->req;
    l->new_hash = eu_xcalloc(1, crypto_pwhash_STRBYTES);
    eu_arena_on_free(req->arena, free_hash, l);
    eu_cpupool_submit_for(req->app->cpu, req->tenant->id, hash_work, hash_done, l);
}

/* ------------------------------------------------ the password check */

static void
password_checked(void *arg)
{
    struct eu_oauth_flow *f = arg;
    struct life *l = (struct life *)((char *)f - offsetof(struct life, f));
    eu_oauth_flow_free_password(f);
    eu_req_enter(l->req);
    if (f->verify_rc != 0) {
        if (l->kind == PW_API || l->kind == PW_PAGE)
            fail(l, 401, "Invalid current password.");
        else
            fail(l, 403, "Invalid password.");
        return;
    }
    if (l->kind == PW_API || l->kind == PW_PAGE)
        change_password(l);
    else
        delete_account(l);
}

static void
on_pw_freed(void *data)
{
    eu_oauth_flow_free_password(data);
}

static void
on_account_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct life *l = arg;
    if (retry_after_s > 0) {
        fail(l, 429, "Too many attempts; try again later.");
        return;
    }
    const char *pw = eu_param_str(
        l->params, l->kind == PW_API || l->kind == PW_PAGE ? "old_password" : "password");
    l->f.req = req;
    l->f.password = eu_xstrdup(pw);
    eu_arena_on_free(req->arena, on_pw_freed, &l->f);
    eu_oauth_verify_password(&l->f, l->stored, password_checked);
}

static void
on_ip_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct life *l = arg;
    if (retry_after_s > 0) {
        fail(l, 429, "Too many attempts; try again later.");
        return;
    }
    eu_oauth_count_account(req, l->user_id, NULL, on_account_counted, l);
}

static void
on_user(struct eu_req *req, PGresult *res, void *arg)
{
    struct life *l = arg;
    if (PQntuples(res) != 1) {
        fail(l, 403, "Your account is suspended.");
        return;
    }
    l->stored = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    l->account_id = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    l->username = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
    eu_oauth_count_sign_in(req, on_ip_counted, l);
}

/* Checks the input, then loads the user; every refusal here changes
 * nothing. */
static void
begin(struct life *l)
{
    struct eu_req *req = l->req;
    if (l->kind == PW_API || l->kind == PW_PAGE) {
        const char *old = eu_param_str(l->params, "old_password");
        const char *pw = eu_param_str(l->params, "new_password");
        if (!old || !*old || !pw || !*pw) {
            fail(l, is_page(l) ? 422 : 400, "Missing one or more required form values.");
            return;
        }
        size_t n = strlen(pw);
        if (n < 8 || n > 72 || strlen(old) > 1024) {
            fail(l, 422,
                 n < 8 ? "Validation failed: Password is too short (minimum is 8 characters)"
                       : "Validation failed: Password is too long (maximum is 72 characters)");
            return;
        }
        l->new_password = pw;
    } else {
        const char *pw = eu_param_str(l->params, "password");
        if (!pw || !*pw || strlen(pw) > 1024) {
            fail(l, is_page(l) ? 422 : 400, "No password provided in account delete request.");
            return;
        }
    }
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)l->user_id);
    const char *p[] = {uid};
    eu_req_stmt(req, &eu_account_life_sql[LIFE_USER], 1, p, on_user, l);
}

static struct life *
life_new(struct eu_req *req, enum kind kind)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return NULL;
    }
    struct life *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->req = req;
    l->params = params;
    l->kind = kind;
    return l;
}

/* ---------------------------------------------------------- the API */

static void
api_start(struct eu_req *req, enum kind kind)
{
    if (!req->auth.user_id) {
        eu_req_reply_error(req, 403, "This method requires an authenticated user");
        return;
    }
    struct life *l = life_new(req, kind);
    if (!l)
        return;
    l->user_id = req->auth.user_id;
    begin(l);
}

static void
password_change_api(struct eu_req *req)
{
    api_start(req, PW_API);
}

static void
delete_api(struct eu_req *req)
{
    api_start(req, DEL_API);
}

/* -------------------------------------------------------- the pages */

static void
on_session(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    struct life *l = arg;
    l->s = s;
    l->user_id = s->user_id;
    if (req->method == EU_HTTP_GET) {
        reply_form(l, 200, NULL);
        return;
    }
    if (!eu_web_session_csrf_ok(s, l->params)) {
        reply_form(l, 422,
                   "Invalid authenticity token: the page was open too long or came "
                   "from elsewhere.");
        return;
    }
    begin(l);
}

static void
page_start(struct eu_req *req, enum kind kind)
{
    struct life *l = life_new(req, kind);
    if (l)
        eu_web_session_require(req, on_session, l);
}

static void
password_page(struct eu_req *req)
{
    page_start(req, PW_PAGE);
}

static void
delete_page(struct eu_req *req)
{
    page_start(req, DEL_PAGE);
}

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)

const struct eu_route eu_account_life_routes[] = {
    {POST, "/api/v1/user/password_change", password_change_api, "write:accounts", AUTH},
    {POST, "/api/v1/accounts/delete", delete_api, "write:accounts", AUTH},
    {GET | POST, "/settings/password", password_page, NULL, 0},
    {GET | POST, "/settings/delete", delete_page, NULL, 0},
    {0},
};
