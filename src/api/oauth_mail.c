/*
 * The account's e-mail flows, as Mastodon (Devise) serves them: the
 * confirmation link of a sign-up or an address change, resending it
 * (POST /api/v1/emails/confirmations), the password reset pages, and
 * GoToSocial's POST /api/v1/user/email_change with its page for the
 * signed-in browser (/settings/email). Each mail is queued as a
 * job (src/social/mailer.c), so a mail server that is down never holds a
 * request.
 *
 * Tokens are 32 random bytes sent in the mail and stored only as their
 * SHA-256 hash in the user's row (tenant migration 0059), one live token
 * of each kind per user; a new one replaces the old. Every statement that
 * reads a token is keyed by the tenant, so a link of one tenant does
 * nothing on another's host. A confirmation link lasts two days and a
 * reset link six hours (Mastodon's confirm_within and
 * reset_password_within); a reset link is spent when used.
 *
 * The reset forms carry a CSRF token that must match a cookie the form's
 * page set (double submit): a page elsewhere can neither read the cookie
 * nor set it on this host.
 */
#include "oauth_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
#include "eunha/tenant.h"
#include "mail_internal.h"
#include "pwgate_internal.h"
#include "web_internal.h"
#include "web_settings_internal.h"
#include "web_text.h"
#include "websession_internal.h"

#define FORM_COOKIE "_eunha_form"

enum {
    MF_CONFIRM,
    MF_RESEND_LOAD,
    MF_RESEND_SET,
    MF_RESET_REQUEST,
    MF_RESET_CHECK,
    MF_RESET_DO,
    MF_CHANGE_LOAD,
    MF_CHANGE_SET,
};

const struct eu_sql eu_oauth_mail_sql[] = {
    /* $2 the token's hash. Confirms the user and, for an address change,
     * makes the new address the user's. A new address taken meanwhile
     * fails on users_email (23505). */
    [MF_CONFIRM] = {"oauth_mail.confirm",
                    "UPDATE users SET confirmed_at = coalesce(confirmed_at, now()),"
                    " email = coalesce(unconfirmed_email, email), unconfirmed_email = NULL,"
                    " confirmation_token_hash = NULL, updated_at = now()"
                    " WHERE tenant_id = $1 AND confirmation_token_hash = $2"
                    " AND confirmation_sent_at > now() - interval '2 days'"
                    " RETURNING email"},
    /* $2 the user, $3 the token's app. */
    [MF_RESEND_LOAD] = {"oauth_mail.resend_load",
                        "SELECT email, confirmed_at IS NOT NULL, unconfirmed_email,"
                        " coalesce(created_by_application_id = $3::bigint, false)"
                        " FROM users WHERE tenant_id = $1 AND id = $2::bigint"},
    /* $2 the user, $3 the new token's hash, $4 a new address or NULL: it
     * replaces the address of a user never confirmed, and is the address
     * waiting for confirmation of a confirmed one. No row when $4 is
     * another user's. Returns where the link goes. */
    [MF_RESEND_SET] =
        {"oauth_mail.resend_set",
         "UPDATE users SET"
         " email = CASE WHEN confirmed_at IS NULL THEN coalesce($4, email) ELSE email END,"
         " unconfirmed_email = CASE WHEN confirmed_at IS NOT NULL AND $4::text IS NOT NULL"
         "  THEN $4 ELSE unconfirmed_email END,"
         " confirmation_token_hash = $3, confirmation_sent_at = now(), updated_at = now()"
         " WHERE tenant_id = $1 AND id = $2::bigint AND ($4::text IS NULL OR NOT EXISTS"
         " (SELECT 1 FROM users o WHERE o.tenant_id = $1 AND lower(o.email) = lower($4)"
         "  AND o.id <> $2::bigint))"
         " RETURNING coalesce(unconfirmed_email, email)"},
    /* $2 the address asked for, $3 the new token's hash. At most one link
     * a minute per user, so the form cannot be used to flood a mailbox. */
    [MF_RESET_REQUEST] = {"oauth_mail.reset_request",
                          "UPDATE users SET reset_password_token_hash = $3,"
                          " reset_password_sent_at = now()"
                          " WHERE tenant_id = $1 AND lower(email) = lower($2)"
                          " AND (reset_password_sent_at IS NULL"
                          "  OR reset_password_sent_at < now() - interval '1 minute')"
                          " RETURNING email"},
    [MF_RESET_CHECK] = {"oauth_mail.reset_check",
                        "SELECT 1 FROM users WHERE tenant_id = $1"
                        " AND reset_password_token_hash = $2"
                        " AND reset_password_sent_at > now() - interval '6 hours'"},
    /* $2 the token's hash, $3 the new password's hash. Spends the token and
     * ends every session and token of the user, as Mastodon's reset does. */
    [MF_RESET_DO] = {"oauth_mail.reset",
                     "WITH u AS (UPDATE users SET encrypted_password = $3,"
                     "  reset_password_token_hash = NULL, reset_password_sent_at = NULL,"
                     "  updated_at = now()"
                     "  WHERE tenant_id = $1 AND reset_password_token_hash = $2"
                     "  AND reset_password_sent_at > now() - interval '6 hours'"
                     "  RETURNING id, email),"
                     " t AS (UPDATE oauth_access_tokens SET revoked_at = now()"
                     "  WHERE tenant_id = $1 AND user_id = (SELECT id FROM u)"
                     "  AND revoked_at IS NULL RETURNING 1),"
                     " s AS (DELETE FROM web_sessions WHERE tenant_id = $1"
                     "  AND user_id = (SELECT id FROM u) RETURNING 1)"
                     " SELECT email, (SELECT count(*) FROM t), (SELECT count(*) FROM s) FROM u"},
    [MF_CHANGE_LOAD] = {"oauth_mail.change_load",
                        "SELECT encrypted_password, email, unconfirmed_email FROM users"
                        " WHERE tenant_id = $1 AND id = $2::bigint"},
    /* $2 the user, $3 the new address, $4 the token's hash. No row when the
     * address is taken. */
    [MF_CHANGE_SET] = {"oauth_mail.change_set",
                       "UPDATE users SET unconfirmed_email = $3, confirmation_token_hash = $4,"
                       " confirmation_sent_at = now(), updated_at = now()"
                       " WHERE tenant_id = $1 AND id = $2::bigint AND NOT EXISTS"
                       " (SELECT 1 FROM users o WHERE o.tenant_id = $1"
                       "  AND lower(o.email) = lower($3))"
                       " RETURNING email"},
    {0},
};

/* ------------------------------------------------------------ the mails */

/*
 * Queues a mail of one action: a greeting, what happened, a link to act
 * on (or none), and why the reader got it.
 */
void
eu_api_mail(struct eu_req *req, const char *to, const char *subject, const char *heading,
            const char *body, const char *link_label, const char *url, const char *footer)
{
    struct eu_arena *a = req->arena;
    const char *title = req->tenant->title ? req->tenant->title : req->tenant->domain;
    const char *base = eu_req_base_url(req);
    const char *text = eu_arena_sprintf(a, "%s\n\n%s\n\n%s%s%s%s%s\n\n-- \n%s\n%s\n", heading, body,
                                        link_label ? link_label : "", link_label ? ":\n" : "",
                                        url ? url : "", url ? "\n\n" : "", footer, title, base);
    const char *link_html =
        url ? eu_arena_sprintf(a, "<p><a href=\"%s\">%s</a></p>", eu_html_escape(req, url),
                               eu_html_escape(req, link_label))
            : "";
    const char *html = eu_arena_sprintf(
        a,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>"
        "<h1>%s</h1><p>%s</p>%s<p>%s</p><hr><p><a href=\"%s\">%s</a></p></body></html>",
        eu_html_escape(req, heading), eu_html_escape(req, body), link_html,
        eu_html_escape(req, footer), eu_html_escape(req, base), eu_html_escape(req, title));
    eu_mail_enqueue(req->app, req->tenant, to, subject, text, html, NULL);
}

static const char *
instance_name(struct eu_req *req)
{
    return req->tenant->title && *req->tenant->title ? req->tenant->title : req->tenant->domain;
}

void
eu_oauth_mail_confirmation(struct eu_req *req, const char *to, const char *token, bool change)
{
    struct eu_arena *a = req->arena;
    const char *url = eu_arena_sprintf(a, "%s/auth/confirmation?confirmation_token=%s",
                                       eu_req_base_url(req), token);
    const char *name = instance_name(req);
    if (change)
        eu_api_mail(req, to, eu_arena_sprintf(a, "%s: Confirm email for %s", name, name),
                    "Verify email address",
                    eu_arena_sprintf(a,
                                     "You requested a change of the email address of your "
                                     "account on %s. Click the link below to confirm this address.",
                                     name),
                    "Verify email address", url,
                    "If you did not request this change, you can ignore this email: your "
                    "address stays as it was. The link expires in two days.");
    else
        eu_api_mail(
            req, to,
            eu_arena_sprintf(a, "%s: Confirmation instructions for %s", name, req->tenant->domain),
            "One last step!",
            eu_arena_sprintf(a,
                             "You created an account on %s with this email address. "
                             "Click the link below to confirm it and activate the account.",
                             name),
            "Verify email address", url,
            "If you did not sign up, please ignore this email. The link expires in two "
            "days.");
}

void
eu_api_mail_staff(struct eu_req *req, const char *to, const char *username, const char *kind,
                  const char *text)
{
    struct eu_arena *a = req->arena;
    const char *name = instance_name(req);
    const char *acct = eu_arena_sprintf(a, "@%s@%s", username, req->tenant->domain);
    const char *base = eu_req_base_url(req);
    const char *footer = "If you believe this is a mistake, you can reply to this email to reach "
                         "the moderators of the server.";
    if (strcmp(kind, "approve") == 0) {
        eu_api_mail(req, to, eu_arena_sprintf(a, "Welcome to %s", name), "Welcome aboard!",
                    eu_arena_sprintf(a,
                                     "Your sign-up on %s was approved: your account %s is ready "
                                     "to use from your app.",
                                     name, acct),
                    eu_arena_sprintf(a, "Open %s", name), base,
                    "You get this email because you signed up on this server.");
        return;
    }
    if (strcmp(kind, "reject") == 0) {
        eu_api_mail(req, to, eu_arena_sprintf(a, "%s: Your sign-up was not approved", name),
                    "Sign-up declined",
                    eu_arena_sprintf(a,
                                     "The moderators of %s reviewed your sign-up and declined "
                                     "it. The account %s and its data were removed.",
                                     name, acct),
                    NULL, NULL, "You get this email because you signed up on this server.");
        return;
    }
    /* Mastodon's user_mailer.warning subjects, titles and explanations. */
    static const struct {
        const char *kind, *subject, *title, *explanation;
    } strikes[] = {
        {"none", "Warning for %s", "Warning", ""},
        {"sensitive", "Your posts on %s will be marked as sensitive from now on",
         "Account marked as sensitive",
         "From now on, all your uploaded media files will be marked as sensitive and hidden "
         "behind a click-through warning."},
        {"disable", "Your account %s has been frozen", "Account frozen",
         "You can no longer use your account, but your profile and other data remain intact."},
        {"silence", "Your account %s has been limited", "Account limited",
         "You can still use your account, but only people who already follow you will see your "
         "posts on this server, and you may be left out of public listings."},
        {"suspend", "Your account %s has been suspended", "Account suspended",
         "You can no longer use your account, and your profile and other data are no longer "
         "accessible. Your data will be removed after a while unless the suspension is lifted."},
    };
    for (size_t i = 0; i < sizeof strikes / sizeof strikes[0]; i++) {
        if (strcmp(strikes[i].kind, kind) != 0)
            continue;
        const char *body = text && *text
                               ? eu_arena_sprintf(a, "%s%s%s", strikes[i].explanation,
                                                  *strikes[i].explanation ? "\n\n" : "", text)
                               : strikes[i].explanation;
        if (!*body)
            body = "The moderators of the server sent you a warning.";
        eu_api_mail(req, to, eu_arena_sprintf(a, strikes[i].subject, acct), strikes[i].title, body,
                    NULL, NULL, footer);
        return;
    }
}

/* ------------------------------------------------------------ pages */

/* A page of one message (title and message are catalogue keys), with a
 * link onwards (label a key, href a local path) or none. */
static void
reply_message_link(struct eu_req *req, int status, const char *title, const char *message,
                   bool is_error, const char *label, const char *href)
{
    const char *link = label ? eu_arena_sprintf(req->arena, "<p><a href=\"%s\">%s</a></p>",
                                                eu_html_escape(req, href), eu_web_th(req, label))
                             : "";
    const char *body = eu_arena_sprintf(
        req->arena, "<div class=\"card\"><h1>%s</h1><p%s>%s</p>%s</div>", eu_web_th(req, title),
        is_error ? " class=\"error\" role=\"alert\"" : "", eu_web_th(req, message), link);
    eu_web_reply_page(req, status, eu_web_t(req, title), body);
}

static void
reply_message(struct eu_req *req, int status, const char *title, const char *message, bool is_error)
{
    reply_message_link(req, status, title, message, is_error, NULL, NULL);
}

/* The value of cookie name, or "" (never matches a CSRF token). */
static const char *
cookie(struct eu_req *req, const char *name)
{
    const char *h = eu_req_header(req, "Cookie");
    size_t nlen = strlen(name);
    for (const char *p = h; p && *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        if (strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
            const char *v = p + nlen + 1;
            return eu_arena_strndup(req->arena, v, strcspn(v, ";"));
        }
        p += strcspn(p, ";");
    }
    return "";
}

/* A fresh CSRF token, set as the form cookie; returns it (arena). */
static const char *
form_token(struct eu_req *req)
{
    char *tok = eu_arena_alloc(req->arena, EU_AUTH_TOKEN_LEN);
    eu_auth_token_new(tok);
    eu_req_add_header(
        req, "Set-Cookie",
        eu_arena_sprintf(req->arena, "%s=%s; Path=/auth/; HttpOnly; SameSite=Strict%s", FORM_COOKIE,
                         tok, strcmp(req->scheme, "https") == 0 ? "; Secure" : ""));
    return tok;
}

static bool
form_token_ok(struct eu_req *req, json_t *params)
{
    const char *c = cookie(req, FORM_COOKIE);
    const char *f = eu_param_str(params, "authenticity_token");
    return *c && f && eu_oauth_secret_equal(c, f);
}

static void
reply_csrf_failure(struct eu_req *req, const char *again)
{
    eu_web_reply_expired_form(req, again);
}

/* ------------------------------------------- GET /auth/confirmation */

static void
on_confirmed(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        reply_message(req, 422, "Confirmation failed",
                      "This email address is already taken by another account.", true);
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    if (PQntuples(res) == 0) {
        reply_message_link(req, 404, "Confirmation failed",
                           "This confirmation link is invalid or has expired, or was already used. "
                           "Ask your app for a new one.",
                           true, "Sign in", "/auth/sign_in");
        return;
    }
    eu_log_info("oauth", "an e-mail address was confirmed");
    reply_message_link(req, 200, "Email confirmed",
                       "Your email address has been successfully confirmed. You can now use "
                       "your account from your app.",
                       false, "Sign in", "/auth/sign_in");
}

static void
confirmation_show(struct eu_req *req)
{
    const char *token = eu_req_query(req, "confirmation_token");
    if (!token || !*token || strlen(token) > 128) {
        reply_message(req, 400, "Confirmation failed", "The confirmation link is incomplete.",
                      true);
        return;
    }
    char hash[65];
    eu_auth_token_hash(token, hash);
    const char *p[] = {hash};
    eu_req_stmt_or_error(req, &eu_oauth_mail_sql[MF_CONFIRM], 1, p, on_confirmed, NULL);
}

/* ------------------------------- POST /api/v1/emails/confirmations */

struct resend {
    const char *email; /* the new address asked for, or NULL */
    char token[EU_AUTH_TOKEN_LEN];
    bool change; /* the user is confirmed: the link confirms a new address */
};

static bool
email_ok(const char *s)
{
    const char *at = strchr(s, '@');
    return at && at != s && at[1] && !strchr(at + 1, '@') && strchr(at + 1, '.') &&
           strlen(s) <= 254 && !strpbrk(s, " \t\r\n<>\"',;()[]\\:");
}

static void
on_resend_set(struct eu_req *req, PGresult *res, void *arg)
{
    struct resend *r = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 422, "Validation failed: Email has already been taken");
        return;
    }
    eu_oauth_mail_confirmation(req, PQgetvalue(res, 0, 0), r->token, r->change);
    eu_req_reply_json(req, 200, json_object());
}

static void
on_resend_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct resend *r = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 3), "t") != 0) {
        eu_req_reply_error(req, 403,
                           "This method is only available to the application the "
                           "user originally signed-up with");
        return;
    }
    bool confirmed = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
    if (confirmed && PQgetisnull(res, 0, 2)) {
        eu_req_reply_error(req, 403,
                           "This method is only available while the e-mail is "
                           "awaiting confirmation");
        return;
    }
    r->change = confirmed;
    eu_auth_token_new(r->token);
    char hash[65];
    eu_auth_token_hash(r->token, hash);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.user_id);
    const char *p[] = {uid, eu_arena_strdup(req->arena, hash), r->email};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_RESEND_SET], 3, p, on_resend_set, r);
}

static void
confirmations_create(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct resend *r = eu_arena_calloc(req->arena, sizeof(*r));
    r->email = eu_oauth_str_or_null(eu_param_str(params, "email"));
    if (r->email && !email_ok(r->email)) {
        eu_req_reply_error(req, 422, "Validation failed: Email is invalid");
        return;
    }
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.user_id);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id);
    const char *p[] = {uid, app};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_RESEND_LOAD], 2, p, on_resend_loaded, r);
}

/* ------------------------------------------- password reset pages */

static const char *
error_para(struct eu_req *req, const char *error)
{
    return error ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                    eu_web_th(req, error))
                 : "";
}

static void
reply_reset_request_form(struct eu_req *req, int status, const char *error)
{
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1>%s<p>%s</p>"
        "<form method=\"post\" action=\"/auth/password\">"
        "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">"
        "<label for=\"email\">%s</label><input type=\"email\" id=\"email\" name=\"email\" "
        "autocomplete=\"email\" required><button type=\"submit\">%s</button></form>"
        "<p><a href=\"/auth/sign_in\">%s</a></p></div>",
        eu_web_th(req, "Forgot your password?"), error_para(req, error),
        eu_arena_sprintf(req->arena,
                         eu_web_th(req, "Enter the email address of your account on %s: we will "
                                        "send you a link to set a new password."),
                         eu_html_escape(req, instance_name(req))),
        form_token(req), eu_web_th(req, "E-mail address"), eu_web_th(req, "Send instructions"),
        eu_web_th(req, "Back to sign-in"));
    eu_web_reply_page(req, status, eu_web_t(req, "Forgot your password?"), body);
}

static void
password_new(struct eu_req *req)
{
    reply_reset_request_form(req, 200, NULL);
}

/* The same answer whether or not the address has an account. */
static void
reply_reset_requested(struct eu_req *req)
{
    reply_message_link(req, 200, "Check your inbox",
                       "If your email address exists in our database, you will receive a password "
                       "recovery link at your email address in a few minutes.",
                       false, "Back to sign-in", "/auth/sign_in");
}

struct reset_req {
    char token[EU_AUTH_TOKEN_LEN];
};

static void
on_reset_requested(struct eu_req *req, PGresult *res, void *arg)
{
    struct reset_req *r = arg;
    if (PQntuples(res) == 1) {
        const char *name = instance_name(req);
        const char *url =
            eu_arena_sprintf(req->arena, "%s/auth/password/edit?reset_password_token=%s",
                             eu_req_base_url(req), r->token);
        eu_api_mail(req, PQgetvalue(res, 0, 0),
                    eu_arena_sprintf(req->arena, "%s: Reset password instructions", name),
                    "Password reset",
                    eu_arena_sprintf(req->arena,
                                     "Someone asked for a new password for your account on %s. "
                                     "Click the link below to choose one.",
                                     name),
                    "Change password", url,
                    "If you did not ask for this, please ignore this email: your password will "
                    "not change unless you open the link and choose a new one. The link expires "
                    "in six hours.");
    }
    reply_reset_requested(req);
}

static void
password_create(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    if (!form_token_ok(req, params)) {
        reply_csrf_failure(req, "/auth/password/new");
        return;
    }
    const char *email = eu_param_str(params, "email");
    if (!email || !*email || strlen(email) > 254) {
        reply_reset_request_form(req, 422, "Enter your email address.");
        return;
    }
    struct reset_req *r = eu_arena_calloc(req->arena, sizeof(*r));
    eu_auth_token_new(r->token);
    char hash[65];
    eu_auth_token_hash(r->token, hash);
    const char *p[] = {email, eu_arena_strdup(req->arena, hash)};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_RESET_REQUEST], 2, p, on_reset_requested, r);
}

static void
reply_reset_form(struct eu_req *req, int status, const char *token, const char *error)
{
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1>%s<form method=\"post\" action=\"/auth/password/edit\">"
        "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">"
        "<input type=\"hidden\" name=\"reset_password_token\" value=\"%s\">"
        "<label for=\"password\">%s</label><input type=\"password\" id=\"password\" "
        "name=\"password\" autocomplete=\"new-password\" minlength=\"8\" maxlength=\"72\" "
        "required><p class=\"hint\">%s</p>"
        "<label for=\"password_confirmation\">%s</label><input type=\"password\" "
        "id=\"password_confirmation\" name=\"password_confirmation\" "
        "autocomplete=\"new-password\" required>"
        "<button type=\"submit\">%s</button></form></div>",
        eu_web_th(req, "Set a new password"), error_para(req, error), form_token(req),
        eu_html_escape(req, token), eu_web_th(req, "New password"),
        eu_web_th(req, "8 to 72 characters."), eu_web_th(req, "Confirm new password"),
        eu_web_th(req, "Set new password"));
    eu_web_reply_page(req, status, eu_web_t(req, "Set a new password"), body);
}

static void
reply_reset_invalid(struct eu_req *req)
{
    reply_message_link(req, 404, "Password reset failed",
                       "This password reset link is invalid, already used or has expired.", true,
                       "Ask for a new link", "/auth/password/new");
}

static void
on_reset_checked(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        reply_reset_invalid(req);
        return;
    }
    reply_reset_form(req, 200, arg, NULL);
}

static void
password_edit(struct eu_req *req)
{
    const char *token = eu_req_query(req, "reset_password_token");
    if (!token || !*token || strlen(token) > 128) {
        reply_reset_invalid(req);
        return;
    }
    char hash[65];
    eu_auth_token_hash(token, hash);
    const char *p[] = {eu_arena_strdup(req->arena, hash)};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_RESET_CHECK], 1, p, on_reset_checked,
                (void *)eu_arena_strdup(req->arena, token));
}

struct reset {
    struct eu_req *req;
    char *password; /* malloc'd; wiped and freed after hashing */
    char hash[crypto_pwhash_STRBYTES];
    char token_hash[65];
    int rc;
};

static void
reset_free_password(void *data)
{
    struct reset *r = data;
    if (r->password)
        sodium_memzero(r->password, strlen(r->password));
    free(r->password);
    r->password = NULL;
}

static void
on_reset_done(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        reply_reset_invalid(req);
        return;
    }
    /* Every cached token of the tenant goes: the user's were revoked. */
    eu_auth_cache_clear(req->app, req->tenant);
    const char *name = instance_name(req);
    eu_api_mail(req, PQgetvalue(res, 0, 0),
                eu_arena_sprintf(req->arena, "%s: Password changed", name), "Password changed",
                eu_arena_sprintf(req->arena,
                                 "The password of your account on %s was changed, and every app "
                                 "and browser signed in to it was signed out.",
                                 name),
                NULL, NULL,
                "If you did not change your password, someone else may have access to your "
                "email: secure it and reset your password again.");
    eu_log_info("oauth", "a password was reset; %s tokens revoked", PQgetvalue(res, 0, 1));
    reply_message_link(req, 200, "Password changed",
                       "Your password has been changed successfully. Sign in again from your "
                       "apps with the new password.",
                       false, "Sign in", "/auth/sign_in");
}

static void
reset_hash_work(void *arg)
{
    struct reset *r = arg;
    r->rc = crypto_pwhash_str_alg(r->hash, r->password, strlen(r->password), EU_OAUTH_PWHASH_OPS,
                                  EU_OAUTH_PWHASH_MEM, crypto_pwhash_ALG_ARGON2ID13);
    sodium_memzero(r->password, strlen(r->password));
}

static void
reset_hash_done(void *arg)
{
    struct reset *r = arg;
    struct eu_req *req = r->req;
    reset_free_password(r);
    eu_req_enter(req);
    if (r->rc != 0) {
        eu_req_reply_error(req, 500, "Cannot hash the password");
        return;
    }
    const char *p[] = {r->token_hash, eu_arena_strdup(req->arena, r->hash)};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_RESET_DO], 2, p, on_reset_done, r);
}

static void
password_update(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *token = eu_param_str(params, "reset_password_token");
    if (!token || !*token || strlen(token) > 128) {
        reply_reset_invalid(req);
        return;
    }
    if (!form_token_ok(req, params)) {
        reply_csrf_failure(
            req,
            eu_arena_sprintf(req->arena, "/auth/password/edit?reset_password_token=%s", token));
        return;
    }
    const char *pw = eu_param_str(params, "password");
    const char *again = eu_param_str(params, "password_confirmation");
    size_t plen = pw ? strlen(pw) : 0;
    const char *error = NULL;
    if (plen < 8)
        error = "Password is too short (minimum is 8 characters)";
    else if (plen > 72)
        error = "Password is too long (maximum is 72 characters)";
    else if (!again || strcmp(pw, again) != 0)
        error = "Password confirmation doesn't match Password";
    if (error) {
        reply_reset_form(req, 422, token, error);
        return;
    }
    struct reset *r = eu_arena_calloc(req->arena, sizeof(*r));
    r->req = req;
    r->password = strdup(pw);
    eu_arena_on_free(req->arena, reset_free_password, r);
    eu_auth_token_hash(token, r->token_hash);
    const struct eu_config *cfg = req->app->cfg;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, reset_hash_work,
                              reset_hash_done, r) < 0) {
        reset_free_password(r);
        eu_oauth_reply_cpu_busy(req, 503);
    }
}

/* ------------------------- POST /api/v1/user/email_change, /settings/email */

#define EMAIL_PATH "/settings/email"

struct change {
    struct eu_req *req;
    const struct eu_web_session *s; /* the page's; NULL for the API */
    const char *new_email;
    char *password; /* malloc'd; wiped and freed after the check */
    char *stored;   /* malloc'd copy of the stored hash */
    const char *old_email;
    const char *gate_client;
    const char *error; /* the page's: shown above the form */
    int status;        /* the page's answer */
    int rc;
    char token[EU_AUTH_TOKEN_LEN];
};

static void
change_free(void *data)
{
    struct change *c = data;
    if (c->password)
        sodium_memzero(c->password, strlen(c->password));
    free(c->password);
    c->password = NULL;
    free(c->stored);
    c->stored = NULL;
}

static const char *
t(struct eu_req *req, const char *english)
{
    return eu_html_escape(req, eu_web_t(req, english));
}

/* The page: the address in use, one waiting for confirmation, the form. */
static void
on_page_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct change *c = arg;
    if (PQntuples(res) == 0) {
        eu_web_reply_page(req, 404, eu_web_t(req, "Not found"),
                          eu_arena_sprintf(req->arena, "<h1>%s</h1>", t(req, "Not found")));
        return;
    }
    const char *pending = PQgetisnull(res, 0, 2) ? NULL : PQgetvalue(res, 0, 2);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1>%s<p>%s <strong>%s</strong></p>%s"
        "<form method=\"post\" action=\"" EMAIL_PATH "\" class=\"card\">%s"
        "<label for=\"new_email\">%s</label><input type=\"email\" id=\"new_email\" "
        "name=\"new_email\" autocomplete=\"email\" required maxlength=\"254\">"
        "<label for=\"password\">%s</label><input type=\"password\" id=\"password\" "
        "name=\"password\" autocomplete=\"current-password\" required>"
        "<button type=\"submit\">%s</button></form><p class=\"muted\">%s</p>",
        t(req, "E-mail address"),
        c->error ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                    t(req, c->error))
                 : "",
        t(req, "Your address is"), eu_html_escape(req, PQgetvalue(res, 0, 1)),
        pending
            ? eu_arena_sprintf(req->arena, "<p class=\"notice\">%s <strong>%s</strong></p>",
                               t(req, "Waiting for confirmation:"), eu_html_escape(req, pending))
            : "",
        eu_web_csrf_field(req, c->s), t(req, "New address"), t(req, "Current password"),
        t(req, "Change address"),
        t(req, "A confirmation link is sent to the new address; the change takes effect once "
               "it is opened."));
    eu_web_settings_reply(req, c->status, EMAIL_PATH, eu_web_t(req, "E-mail address"), body);
}

static void
page_show(struct change *c, int status, const char *error)
{
    struct eu_req *req = c->req;
    c->status = status;
    c->error = error;
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)c->s->user_id);
    const char *p[] = {uid};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_CHANGE_LOAD], 1, p, on_page_loaded, c);
}

/* A refusal: the API's error, or the page again with its text. */
static void
change_fail(struct change *c, int status, const char *message)
{
    change_free(c);
    if (c->s) {
        page_show(c, status, message);
        return;
    }
    if (status == 429 || status == 503) {
        eu_oauth_reply_cpu_busy(c->req, status);
        return;
    }
    eu_req_reply_error(c->req, status, "%s", message);
}

static void
on_change_set(struct eu_req *req, PGresult *res, void *arg)
{
    struct change *c = arg;
    if (PQntuples(res) == 0) {
        change_fail(c, 422, "Validation failed: Email has already been taken");
        return;
    }
    const char *name = instance_name(req);
    eu_oauth_mail_confirmation(req, c->new_email, c->token, true);
    /* Devise's email_changed notice, to the address in use now. */
    eu_api_mail(req, c->old_email, eu_arena_sprintf(req->arena, "%s: Email changing", name),
                "Email changing",
                eu_arena_sprintf(req->arena,
                                 "The email address of your account on %s is being changed to "
                                 "%s. The change takes effect once the new address is confirmed.",
                                 name, c->new_email),
                NULL, NULL,
                "If you did not ask for this, change your password at once and contact the "
                "administrators of the server.");
    if (c->s) {
        eu_web_settings_reply(
            req, 200, EMAIL_PATH, eu_web_t(req, "Check your inbox"),
            eu_arena_sprintf(req->arena,
                             "<h1>%s</h1><p class=\"notice\">%s <strong>%s</strong></p>",
                             t(req, "Check your inbox"), t(req, "A confirmation link was sent to"),
                             eu_html_escape(req, c->new_email)));
        return;
    }
    eu_req_reply_json(
        req, 202,
        json_pack("{s:s, s:s}", "email", c->old_email, "unconfirmed_email", c->new_email));
}

static void
change_verify_work(void *arg)
{
    struct change *c = arg;
    c->rc = c->stored ? crypto_pwhash_str_verify(c->stored, c->password, strlen(c->password)) : -1;
    sodium_memzero(c->password, strlen(c->password));
}

static void
change_verify_done(void *arg)
{
    struct change *c = arg;
    struct eu_req *req = c->req;
    eu_pwgate_leave(req->tenant->id, c->gate_client);
    change_free(c);
    eu_req_enter(req);
    if (c->rc != 0) {
        change_fail(c, 422, "Invalid password");
        return;
    }
    eu_auth_token_new(c->token);
    char hash[65];
    eu_auth_token_hash(c->token, hash);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.user_id);
    const char *p[] = {uid, c->new_email, eu_arena_strdup(req->arena, hash)};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_CHANGE_SET], 3, p, on_change_set, c);
}

static void
on_change_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct change *c = arg;
    if (PQntuples(res) == 0) {
        change_fail(c, 404, "Record not found");
        return;
    }
    c->old_email = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    if (strcasecmp(c->old_email, c->new_email) == 0) {
        change_fail(c, 422, "new email address cannot be the same as current email address");
        return;
    }
    c->stored = strdup(PQgetvalue(res, 0, 0));
    const struct eu_config *cfg = req->app->cfg;
    c->gate_client = eu_arena_strdup(req->arena, eu_ratelimit_client(req));
    if (!eu_pwgate_enter(req->tenant->id, c->gate_client, cfg->cpu_jobs_per_tenant,
                         cfg->cpu_threads)) {
        change_fail(c, 429, "Too many attempts are being checked; try again shortly");
        return;
    }
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, change_verify_work,
                              change_verify_done, c) < 0) {
        eu_pwgate_leave(req->tenant->id, c->gate_client);
        change_fail(c, 503, "Too many attempts are being checked; try again shortly");
    }
}

/* The change, for the API (s NULL, req->auth the token's user) or the page. */
static void
change_begin(struct eu_req *req, json_t *params, const struct eu_web_session *s)
{
    struct change *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->req = req;
    c->s = s;
    eu_arena_on_free(req->arena, change_free, c);
    const char *pw = eu_param_str(params, "password");
    const char *email = eu_oauth_str_or_null(eu_param_str(params, "new_email"));
    if (!pw || !*pw) {
        change_fail(c, s ? 422 : 400, "password not provided");
        return;
    }
    if (!email) {
        change_fail(c, s ? 422 : 400, "new_email not provided");
        return;
    }
    if (!email_ok(email)) {
        change_fail(c, 422, "Validation failed: Email is invalid");
        return;
    }
    c->new_email = email;
    c->password = strdup(pw);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.user_id);
    const char *p[] = {uid};
    eu_req_stmt(req, &eu_oauth_mail_sql[MF_CHANGE_LOAD], 1, p, on_change_loaded, c);
}

static void
email_change(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    change_begin(req, params, NULL);
}

static void
on_email_session(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    json_t *params = arg;
    /* The flow acts as the session's user, as it would as a token's. */
    req->auth.user_id = s->user_id;
    req->auth.account_id = s->account_id;
    if (req->method == EU_HTTP_GET) {
        struct change *c = eu_arena_calloc(req->arena, sizeof(*c));
        c->req = req;
        c->s = s;
        page_show(c, 200, NULL);
        return;
    }
    if (!eu_web_session_csrf_ok(s, params)) {
        struct change *c = eu_arena_calloc(req->arena, sizeof(*c));
        c->req = req;
        c->s = s;
        page_show(c, 422,
                  "Invalid authenticity token: the page was open too long or came from "
                  "elsewhere.");
        return;
    }
    change_begin(req, params, s);
}

/* GET and POST /settings/email: the signed-in browser's change of address. */
static void
email_page(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    eu_web_session_require(req, on_email_session, params);
}

/* Flags: include/eunha/router.h. */
/* The pages read their frame (the tenant's language) first (web_page.c). */
EU_WEB_PAGE(confirmation_page, confirmation_show)
EU_WEB_PAGE(password_new_page, password_new)
EU_WEB_PAGE(password_create_page, password_create)
EU_WEB_PAGE(password_edit_page, password_edit)
EU_WEB_PAGE(password_update_page, password_update)

const struct eu_route eu_oauth_mail_routes[] = {
    {EU_HTTP_GET, "/auth/confirmation", confirmation_page, NULL, EU_ROUTE_LIMIT_API},
    {EU_HTTP_POST, "/api/v1/emails/confirmations", confirmations_create, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_UNCONFIRMED_OK | EU_ROUTE_API},
    {EU_HTTP_GET, "/auth/password/new", password_new_page, NULL, EU_ROUTE_LIMIT_API},
    {EU_HTTP_POST, "/auth/password", password_create_page, NULL, EU_ROUTE_LIMIT_API},
    {EU_HTTP_GET, "/auth/password/edit", password_edit_page, NULL, EU_ROUTE_LIMIT_API},
    {EU_HTTP_POST, "/auth/password/edit", password_update_page, NULL, EU_ROUTE_LIMIT_API},
    {EU_HTTP_POST, "/api/v1/user/email_change", email_change, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET | EU_HTTP_POST, EMAIL_PATH, email_page, NULL, 0},
    {0},
};
