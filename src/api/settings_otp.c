/*
 * The two-factor settings page on the tenant's host (Mastodon's
 * /settings/otp_authentication), server-rendered for the signed-in
 * browser (websession_internal.h), every form with the session's CSRF
 * token. Set-up keeps a new secret in the browser's session until a code
 * from it and the password confirm it; only then does the user need a
 * code to sign in, and the ten recovery codes are shown, once. Disabling
 * takes the password and a code (or a recovery code). Passwords are
 * checked on the CPU pool as at sign-in, and wrong passwords and codes
 * count against the sign-in limits (oauth.c).
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "oauth_internal.h"
#include "otp_internal.h"
#include "web_internal.h"
#include "web_settings_internal.h"
#include "web_text.h"
#include "websession_internal.h"

#define PAGE_PATH "/settings/otp_authentication"

enum {
    SOTP_LOAD,
    SOTP_SETUP,
    SOTP_ENABLE,
    SOTP_DISABLE,
};

const struct eu_sql eu_settings_otp_sql[] = {
    /* $2 session hash, $3 its user: what the page shows and checks. */
    [SOTP_LOAD] = {"settings_otp.load",
                   "SELECT u.otp_required_for_login, u.encrypted_password, w.otp_setup_secret,"
                   " u.otp_secret, coalesce(u.otp_consumed_timestep, -1), u.email"
                   " FROM web_sessions w JOIN users u ON u.tenant_id = $1 AND u.id = $3"
                   " WHERE w.tenant_id = $1 AND w.session_hash = $2"},
    [SOTP_SETUP] = {"settings_otp.setup", "UPDATE web_sessions SET otp_setup_secret = $3"
                                          " WHERE tenant_id = $1 AND session_hash = $2"},
    /* $3 user, $4 secret, $5 the step its confirming code used, $6 the
     * recovery codes' hashes; only if not enabled meanwhile. */
    [SOTP_ENABLE] = {"settings_otp.enable",
                     "WITH s AS (UPDATE web_sessions SET otp_setup_secret = NULL"
                     "  WHERE tenant_id = $1 AND session_hash = $2)"
                     " UPDATE users SET otp_secret = $4, otp_required_for_login = true,"
                     " otp_consumed_timestep = $5, otp_backup_codes = $6::text[]"
                     " WHERE tenant_id = $1 AND id = $3 AND NOT otp_required_for_login"
                     " RETURNING id"},
    [SOTP_DISABLE] = {"settings_otp.disable",
                      "UPDATE users SET otp_secret = NULL, otp_required_for_login = false,"
                      " otp_consumed_timestep = NULL, otp_backup_codes = '{}'"
                      " WHERE tenant_id = $1 AND id = $2"},
    {0},
};

enum op { OP_SHOW, OP_SETUP, OP_CONFIRM, OP_DISABLE };

struct page {
    struct eu_req *req;
    const struct eu_web_session *s;
    json_t *params;
    enum op op;
    struct eu_oauth_flow f; /* the password check */
    bool enabled;
    const char *stored, *setup_secret, *otp_secret, *email;
    int64_t consumed, step;
    const char *codes[EU_OTP_RECOVERY_CODES];
};

static const char *
csrf_field(struct page *pg)
{
    return eu_web_csrf_field(pg->req, pg->s);
}

/* A text of the page in the page's language, escaped. */
static const char *
t(struct eu_req *req, const char *english)
{
    return eu_html_escape(req, eu_web_t(req, english));
}

static const char *
error_html(struct page *pg, const char *error)
{
    return error ? eu_arena_sprintf(pg->req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                    t(pg->req, error))
                 : "";
}

/* The code and password fields of a form that takes both. */
static const char *
code_and_password(struct eu_req *req, const char *code_label)
{
    return eu_arena_sprintf(
        req->arena,
        "<label for=\"code\">%s</label><input type=\"text\" id=\"code\" name=\"code\" "
        "inputmode=\"numeric\" autocomplete=\"one-time-code\" required>"
        "<label for=\"password\">%s</label><input type=\"password\" id=\"password\" "
        "name=\"password\" autocomplete=\"current-password\" required>",
        t(req, code_label), t(req, "Password"));
}

/* The page as the user's state has it, with error (or NULL) above. */
static void
reply_page(struct page *pg, int status, const char *error)
{
    struct eu_req *req = pg->req;
    struct eu_arena *a = req->arena;
    const char *title = eu_web_t(req, "Two-factor authentication");
    const char *body;
    if (pg->enabled) {
        body = eu_arena_sprintf(
            a,
            "<h1>%s</h1>%s<p>%s <strong>%s</strong>. %s</p><h2>%s</h2>"
            "<form method=\"post\" action=\"" PAGE_PATH "/disable\" class=\"card\">%s%s"
            "<button type=\"submit\" class=\"danger\">%s</button></form>",
            eu_html_escape(req, title), error_html(pg, error),
            t(req, "Two-factor authentication is"), t(req, "enabled"),
            t(req, "Signing in asks for a code from your authenticator app."), t(req, "Disable"),
            csrf_field(pg), code_and_password(req, "Code (or a recovery code)"), t(req, "Disable"));
    } else if (pg->setup_secret) {
        const char *uri =
            eu_otp_uri(a, req->tenant->domain, pg->email ? pg->email : "", pg->setup_secret);
        const char *svg = eu_otp_qr_svg(a, uri);
        body = eu_arena_sprintf(
            a,
            "<h1>%s</h1>%s<p>%s</p><div class=\"card\"><div class=\"qr\">%s</div><p>%s <code "
            "class=\"otp-secret\">%s</code></p></div>"
            "<form method=\"post\" action=\"" PAGE_PATH "/confirm\" class=\"card\">%s%s"
            "<button type=\"submit\">%s</button></form>",
            eu_html_escape(req, title), error_html(pg, error),
            t(req, "Scan this QR code with your authenticator app (or enter the key by hand), "
                   "then confirm with a code from it and your password."),
            svg ? svg : "", t(req, "Key:"), eu_html_escape(req, pg->setup_secret), csrf_field(pg),
            code_and_password(req, "Code"), t(req, "Enable"));
    } else {
        body = eu_arena_sprintf(
            a,
            "<h1>%s</h1>%s<p>%s <strong>%s</strong>. %s</p><form method=\"post\" "
            "action=\"" PAGE_PATH "\">%s<button type=\"submit\">%s</button></form>",
            eu_html_escape(req, title), error_html(pg, error),
            t(req, "Two-factor authentication is"), t(req, "disabled"),
            t(req, "With it, signing in asks for a code from an app on your phone as well as "
                   "your password."),
            csrf_field(pg), t(req, "Set up"));
    }
    eu_web_settings_reply(req, status, PAGE_PATH, title, body);
}

static void
redirect_to_page(struct eu_req *req)
{
    eu_req_add_header(req, "Location", PAGE_PATH);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
reply_throttled(struct page *pg, int retry_after_s)
{
    int minutes = (retry_after_s + 59) / 60;
    struct eu_req *req = pg->req;
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1><p class=\"error\" role=\"alert\">%s %d %s.</p><p><a href=\"" PAGE_PATH
        "\">%s</a></p>",
        t(req, "Too many attempts"), t(req, "Too many attempts. Try again in"), minutes,
        t(req, minutes == 1 ? "minute" : "minutes"), t(req, "Back"));
    eu_web_settings_reply(req, 429, PAGE_PATH, eu_web_t(req, "Too many attempts"), body);
}

/* ------------------------------------------------------------ enable */

static void
on_enabled(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *pg = arg;
    if (PQntuples(res) != 1) {
        redirect_to_page(req);
        return;
    }
    const char *list = "";
    for (int i = 0; i < EU_OTP_RECOVERY_CODES; i++)
        list = eu_arena_sprintf(req->arena, "%s<li><code class=\"recovery-code\">%s</code></li>",
                                list, pg->codes[i]);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1><p class=\"notice\">%s</p><p>%s</p><ul class=\"card\">%s</ul>"
        "<p><a href=\"" PAGE_PATH "\">%s</a></p>",
        t(req, "Two-factor authentication enabled"),
        t(req, "From now on, signing in asks for a code from your authenticator app."),
        t(req, "Keep these recovery codes somewhere safe: each signs you in once if you lose "
               "your phone. They are shown only now."),
        list, t(req, "Done"));
    eu_web_settings_reply(req, 200, PAGE_PATH, eu_web_t(req, "Two-factor authentication enabled"),
                          body);
}

static void
confirm_checked(struct page *pg)
{
    struct eu_req *req = pg->req;
    pg->step = eu_otp_match(pg->setup_secret, eu_param_str(pg->params, "code"), time(NULL), -1);
    if (pg->step < 0) {
        reply_page(pg, 401, "Invalid two-factor authentication code.");
        return;
    }
    const char *hashes;
    eu_otp_recovery_new(req->arena, pg->codes, &hashes);
    char hash[65];
    eu_auth_token_hash(eu_web_session_cookie(req), hash);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)pg->s->user_id);
    const char *step = eu_arena_sprintf(req->arena, "%lld", (long long)pg->step);
    /* Kept sealed under the host key (otp.c). */
    const char *p[] = {hash, uid, eu_otp_secret_stored(req->arena, pg->setup_secret), step, hashes};
    eu_req_stmt(req, &eu_settings_otp_sql[SOTP_ENABLE], 5, p, on_enabled, pg);
}

/* ----------------------------------------------------------- disable */

static void
on_disabled(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *pg = arg;
    pg->enabled = false;
    pg->setup_secret = NULL;
    reply_page(pg, 200, NULL);
}

static void
on_disable_code(struct eu_req *req, bool ok, void *arg)
{
    struct page *pg = arg;
    if (!ok) {
        reply_page(pg, 401, "Invalid two-factor authentication code.");
        return;
    }
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)pg->s->user_id);
    const char *p[] = {uid};
    eu_req_stmt(req, &eu_settings_otp_sql[SOTP_DISABLE], 1, p, on_disabled, pg);
}

/* -------------------------------------------------- password, counts */

static void
password_checked(void *arg)
{
    struct eu_oauth_flow *f = arg;
    struct page *pg = (struct page *)((char *)f - offsetof(struct page, f));
    eu_oauth_flow_free_password(f);
    eu_req_enter(pg->req);
    if (f->verify_rc != 0) {
        reply_page(pg, 401, "Invalid password.");
        return;
    }
    if (pg->op == OP_CONFIRM)
        confirm_checked(pg);
    else
        eu_otp_verify(pg->req, pg->s->user_id, pg->otp_secret, pg->consumed,
                      eu_param_str(pg->params, "code"), on_disable_code, pg);
}

static void
on_pw_freed(void *data)
{
    eu_oauth_flow_free_password(data);
}

static void
on_account_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct page *pg = arg;
    if (retry_after_s > 0) {
        reply_throttled(pg, retry_after_s);
        return;
    }
    pg->f.req = req;
    pg->f.password = strdup(eu_param_str(pg->params, "password"));
    eu_arena_on_free(req->arena, on_pw_freed, &pg->f);
    eu_oauth_verify_password(&pg->f, pg->stored, password_checked);
}

static void
on_ip_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct page *pg = arg;
    if (retry_after_s > 0) {
        reply_throttled(pg, retry_after_s);
        return;
    }
    eu_oauth_count_account(req, pg->s->user_id, NULL, on_account_counted, pg);
}

/* ------------------------------------------------------------- pages */

static void
on_setup_saved(struct eu_req *req, PGresult *res, void *arg)
{
    redirect_to_page(req);
}

static void
on_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *pg = arg;
    if (PQntuples(res) != 1) {
        redirect_to_page(req);
        return;
    }
    pg->enabled = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    pg->stored = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    pg->setup_secret =
        PQgetisnull(res, 0, 2) ? NULL : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
    pg->otp_secret =
        PQgetisnull(res, 0, 3) ? NULL : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
    pg->consumed = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
    pg->email = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 5));
    switch (pg->op) {
    case OP_SHOW:
        reply_page(pg, 200, NULL);
        return;
    case OP_SETUP: {
        if (pg->enabled) {
            redirect_to_page(req);
            return;
        }
        char secret[EU_OTP_SECRET_LEN + 1], hash[65];
        eu_otp_secret_new(secret);
        eu_auth_token_hash(eu_web_session_cookie(req), hash);
        const char *p[] = {hash, secret};
        eu_req_stmt(req, &eu_settings_otp_sql[SOTP_SETUP], 2, p, on_setup_saved, pg);
        return;
    }
    case OP_CONFIRM:
    case OP_DISABLE:
        break;
    }
    if (pg->op == OP_CONFIRM && (pg->enabled || !pg->setup_secret)) {
        reply_page(pg, 422, "Two-factor set-up has not been started, or is already done.");
        return;
    }
    if (pg->op == OP_DISABLE && !pg->enabled) {
        reply_page(pg, 422, "Two-factor authentication is not enabled.");
        return;
    }
    const char *code = eu_param_str(pg->params, "code");
    const char *password = eu_param_str(pg->params, "password");
    if (!code || !*code || strlen(code) > 64 || !password || !*password ||
        strlen(password) > 1024) {
        reply_page(pg, 422, "Enter a code and your password.");
        return;
    }
    eu_oauth_count_sign_in(req, on_ip_counted, pg);
}

static void
on_session(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    struct page *pg = arg;
    pg->s = s;
    if (pg->op != OP_SHOW && !eu_web_session_csrf_ok(s, pg->params)) {
        eu_web_settings_reply(
            req, 422, PAGE_PATH, eu_web_t(req, "Invalid authenticity token"),
            eu_arena_sprintf(
                req->arena,
                "<h1>%s</h1><p class=\"error\" role=\"alert\">%s</p><p><a href=\"" PAGE_PATH
                "\">%s</a></p>",
                t(req, "The form has expired"),
                t(req, "Invalid authenticity token: the page was open too long or "
                       "came from elsewhere."),
                t(req, "Start again")));
        return;
    }
    char hash[65];
    eu_auth_token_hash(eu_web_session_cookie(req), hash);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)s->user_id);
    const char *p[] = {hash, uid};
    eu_req_stmt(req, &eu_settings_otp_sql[SOTP_LOAD], 2, p, on_loaded, pg);
}

static void
start(struct eu_req *req, enum op op)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct page *pg = eu_arena_calloc(req->arena, sizeof(*pg));
    pg->req = req;
    pg->params = params;
    pg->op = op;
    eu_web_session_require(req, on_session, pg);
}

static void
otp_show(struct eu_req *req)
{
    start(req, OP_SHOW);
}

static void
otp_setup(struct eu_req *req)
{
    start(req, OP_SETUP);
}

static void
otp_confirm(struct eu_req *req)
{
    start(req, OP_CONFIRM);
}

static void
otp_disable(struct eu_req *req)
{
    start(req, OP_DISABLE);
}

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST

const struct eu_route eu_settings_otp_routes[] = {
    {GET, PAGE_PATH, otp_show, NULL, 0},
    {POST, PAGE_PATH, otp_setup, NULL, 0},
    {POST, PAGE_PATH "/confirm", otp_confirm, NULL, 0},
    {POST, PAGE_PATH "/disable", otp_disable, NULL, 0},
    {0},
};
