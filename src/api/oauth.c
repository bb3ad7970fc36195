/*
 * OAuth 2 as Mastodon (Doorkeeper) serves it, the browser's side: the
 * authorization-code flow through server-rendered HTML (sign-in, then
 * consent, with PKCE) and the browser sessions behind it, and what the
 * OAuth files share (oauth_internal.h). App registration is in
 * oauth_apps.c, the token and revocation endpoints in oauth_token.c,
 * account registration in oauth_signup.c; the route table at the end
 * carries them all.
 *
 * Secrets never reach the database in the clear: access tokens,
 * authorization codes, client secrets and browser sessions are stored as
 * SHA-256 hashes (they are 32 random bytes, so no slow hash is needed).
 * Passwords are checked with argon2id on the CPU pool.
 *
 * The sign-in pages keep a browser session in web_sessions (cookie
 * "_eunha_session", HttpOnly, SameSite=Lax, Secure under https). A browser
 * gets a session before signing in, so the sign-in form carries a CSRF token
 * like every other form; signing in replaces the session id (no fixation),
 * and so does a failed attempt, whose form and token are then spent.
 *
 * Sign-in attempts, through the form and the password grant alike, are
 * counted in Redis per client IP before anything is looked up, then per
 * account and client IP together before anything is hashed ([limits]
 * sign_in_attempts_*), so guessing is slow and a flood of guesses costs
 * the CPU pool nothing. The account's counter is its user id, so its
 * e-mail address and username share it; pairing it with the IP means a
 * guesser elsewhere cannot lock the owner out. Guesses spread over many
 * addresses meet a per-account cap in all, which addresses the account
 * has signed in from lately are not held to.
 *
 * The same form signs in without an OAuth client (GET /auth/sign_in, for
 * the settings pages), going back to a local path afterwards; POST
 * /auth/sign_out ends the session. An account with two-factor sign-in
 * (otp.c) is not signed in by its password: the session, under a new id,
 * holds the user as pending for a few minutes and the form asks for a
 * code, which is counted like a password against the same limits.
 */
#include "oauth_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
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
#include "eunha/params.h"
#include "eunha/ratelimit.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "otp_internal.h"
#include "pwgate_internal.h"
#include "web_internal.h"
#include "web_text.h"
#include "websession_internal.h"

enum {
    OAUTH_AUTHZ_LOAD,
    OAUTH_SESSION_ANONYMOUS,
    OAUTH_SIGN_IN,
    OAUTH_SESSION_ROTATE,
    OAUTH_USER_BY_LOGIN,
    OAUTH_GRANT_CREATE,
    OAUTH_SESSION_LOAD,
    OAUTH_OTP_PENDING,
    OAUTH_OTP_PENDING_LOAD,
    OAUTH_SIGN_OUT,
};
/* How long a browser may take between its password and its code. */
#define OTP_PENDING_INTERVAL "interval '5 minutes'"

const struct eu_sql eu_oauth_sql[] = {
    /* $2 client_id, $3 session hash: the app, and the browser's session
     * (found) with its user when signed in. */
    [OAUTH_AUTHZ_LOAD] =
        {"oauth.authz_load",
         "SELECT a.id, a.name, a.scopes, a.redirect_uri, s.found, s.user_id, s.csrf_token,"
         " s.username"
         " FROM oauth_applications a LEFT JOIN ("
         "  SELECT true AS found, w.user_id, w.csrf_token, ac.username FROM web_sessions w"
         "  LEFT JOIN users u ON u.tenant_id = $1 AND u.id = w.user_id"
         "  LEFT JOIN accounts ac ON ac.tenant_id = $1 AND ac.id = u.account_id"
         "  WHERE w.tenant_id = $1 AND w.session_hash = $3 AND w.expires_at > now()"
         "  AND (w.user_id IS NULL OR (ac.suspended_at IS NULL AND u.approved))) s ON true"
         " WHERE a.tenant_id = $1 AND a.client_id = $2"},
    /* Old sessions are swept here, as a new one starts. */
    [OAUTH_SESSION_ANONYMOUS] =
        {"oauth.session_anonymous",
         "WITH gc AS (DELETE FROM web_sessions WHERE tenant_id = $1 AND expires_at < now()) "
         "INSERT INTO web_sessions (tenant_id, user_id, session_hash, csrf_token, "
         "expires_at) VALUES ($1, NULL, $2, $3, now() + interval '1 hour')"},
    [OAUTH_SIGN_IN] =
        {"oauth.sign_in",
         "WITH u AS (UPDATE users SET last_sign_in_at = now() WHERE tenant_id = $1 AND id = $3) "
         "UPDATE web_sessions SET user_id = $3, session_hash = $4, csrf_token = $5, "
         "expires_at = now() + interval '14 days', otp_pending_user_id = NULL, "
         "otp_pending_until = NULL WHERE tenant_id = $1 AND session_hash = $2"},
    /* After a failed sign-in: same user (if any) and expiry, new id and token. */
    [OAUTH_SESSION_ROTATE] = {"oauth.session_rotate",
                              "UPDATE web_sessions SET session_hash = $3, csrf_token = $4"
                              " WHERE tenant_id = $1 AND session_hash = $2"},
    /* $2 the login, $3 the client's address or NULL. One row always: the
     * user's columns (NULL for nobody), then whether a live no_access IP
     * block of the staff (tenant migration 0055) covers the client, then
     * whether the user signs in with a second factor (0060). */
    [OAUTH_USER_BY_LOGIN] =
        {"oauth.user_by_login",
         "SELECT x.id, x.encrypted_password, x.approved, x.suspended, x.username,"
         " EXISTS (SELECT 1 FROM ip_blocks i WHERE i.tenant_id = $1 AND i.severity = 'no_access'"
         "  AND i.ip >>= $3::inet AND (i.expires_at IS NULL OR i.expires_at > now())),"
         " x.otp_required_for_login"
         " FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT u.id, u.encrypted_password, u.approved,"
         "  a.suspended_at IS NOT NULL AS suspended, a.username, u.otp_required_for_login"
         "  FROM users u JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
         "  WHERE u.tenant_id = $1 AND a.domain IS NULL"
         "  AND (lower(u.email) = lower($2) OR lower(a.username) = lower($2))"
         "  ORDER BY lower(u.email) = lower($2) DESC LIMIT 1) x ON true"},
    [OAUTH_GRANT_CREATE] =
        {"oauth.grant_create",
         "INSERT INTO oauth_access_grants (tenant_id, application_id, user_id, code_hash, "
         "redirect_uri, scopes, code_challenge, code_challenge_method, expires_at) "
         "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + interval '10 minutes')"},
    /* $2 session hash: the browser's session laid out as OAUTH_AUTHZ_LOAD's
     * row with no app (the sign-in page without a client). */
    [OAUTH_SESSION_LOAD] =
        {"oauth.session_load",
         "SELECT NULL, NULL, NULL, NULL, s.found, s.user_id, s.csrf_token, s.username"
         " FROM (SELECT 1) one LEFT JOIN ("
         "  SELECT true AS found, w.user_id, w.csrf_token, ac.username FROM web_sessions w"
         "  LEFT JOIN users u ON u.tenant_id = $1 AND u.id = w.user_id"
         "  LEFT JOIN accounts ac ON ac.tenant_id = $1 AND ac.id = u.account_id"
         "  WHERE w.tenant_id = $1 AND w.session_hash = $2 AND w.expires_at > now()"
         "  AND (w.user_id IS NULL OR (ac.suspended_at IS NULL AND u.approved))) s ON true"},
    /* A right password for an account with two-factor sign-in: new id and
     * token ($3, $4), the user ($5) pending, not signed in. */
    [OAUTH_OTP_PENDING] =
        {"oauth.otp_pending",
         "UPDATE web_sessions SET session_hash = $3, csrf_token = $4,"
         " otp_pending_user_id = $5, otp_pending_until = now() + " OTP_PENDING_INTERVAL
         " WHERE tenant_id = $1 AND session_hash = $2"},
    /* $2 session hash: the user it is pending for, if not expired, with
     * what checking a code needs. */
    [OAUTH_OTP_PENDING_LOAD] =
        {"oauth.otp_pending_load",
         "SELECT u.id, u.otp_secret, coalesce(u.otp_consumed_timestep, -1), u.approved,"
         " a.suspended_at IS NOT NULL, a.username FROM web_sessions w"
         " JOIN users u ON u.tenant_id = $1 AND u.id = w.otp_pending_user_id"
         " JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
         " WHERE w.tenant_id = $1 AND w.session_hash = $2 AND w.expires_at > now()"
         " AND w.otp_pending_until > now() AND u.otp_required_for_login"},
    [OAUTH_SIGN_OUT] = {"oauth.sign_out",
                        "DELETE FROM web_sessions WHERE tenant_id = $1 AND session_hash = $2"},
    {0},
};
/* ------------------------------------------------------------ helpers */

/* Doorkeeper's error body: {"error": code, "error_description": text}. */
void
eu_oauth_reply_error(struct eu_req *req, int status, const char *code, const char *desc)
{
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_json(req, status,
                      json_pack("{s:s, s:s}", "error", code, "error_description", desc));
}

/* Constant-time equality of two strings of any lengths (compared through
 * their hashes so neither length nor content leaks). */
bool
eu_oauth_secret_equal(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    unsigned char ha[32], hb[32];
    crypto_generichash(ha, sizeof(ha), (const unsigned char *)a, strlen(a), NULL, 0);
    crypto_generichash(hb, sizeof(hb), (const unsigned char *)b, strlen(b), NULL, 0);
    return sodium_memcmp(ha, hb, sizeof(ha)) == 0;
}

const char *
eu_oauth_url_encode(struct eu_arena *a, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = eu_arena_alloc(a, strlen(s) * 3 + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}

const char *
eu_oauth_str_or_null(const char *s)
{
    return s && *s ? s : NULL;
}

const char *
eu_oauth_client_ip(const struct eu_req *req)
{
    unsigned char buf[16];
    const char *ip = req->remote_ip;
    if (ip && (inet_pton(AF_INET, ip, buf) == 1 || inet_pton(AF_INET6, ip, buf) == 1))
        return ip;
    return NULL;
}

/*
 * Splits a scope list on spaces and '+' (query strings use either), drops
 * duplicates and joins with single spaces. Returns NULL when a scope is
 * unknown or the list is empty. Arena-owned.
 */
const char *
eu_oauth_scopes_normalize(struct eu_arena *a, const char *raw)
{
    size_t n = strlen(raw);
    char *out = eu_arena_alloc(a, n + 2), *o = out;
    *o = '\0';
    const char *p = raw;
    while (*p) {
        while (*p == ' ' || *p == '+' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        size_t len = strcspn(p, " +\t\r\n");
        if (!len)
            break;
        /* Skip a scope already in out. */
        bool dup = false;
        for (const char *q = out; *q && !dup;) {
            size_t ql = strcspn(q, " ");
            dup = ql == len && strncmp(q, p, len) == 0;
            q += ql;
            while (*q == ' ')
                q++;
        }
        if (!dup) {
            if (o != out)
                *o++ = ' ';
            memcpy(o, p, len);
            o += len;
            *o = '\0';
        }
        p += len;
    }
    return out[0] && eu_auth_scopes_are_valid(out) ? out : NULL;
}

/* True when every scope of want is allowed by the app's granted list. */
bool
eu_oauth_scopes_within(const char *want, const char *app_scopes)
{
    const char *p = want;
    char one[64];
    while (*p) {
        size_t len = strcspn(p, " ");
        if (len >= sizeof(one))
            return false;
        memcpy(one, p, len);
        one[len] = '\0';
        if (!eu_auth_scope_allows(app_scopes, one))
            return false;
        p += len;
        while (*p == ' ')
            p++;
    }
    return true;
}

/*
 * True for a URI a browser would run or render instead of leaving for:
 * javascript:, data: and vbscript:, in any case. Browsers skip leading
 * spaces and control characters before the scheme, so this does too,
 * whatever the caller already trimmed.
 */
bool
eu_oauth_redirect_uri_is_forbidden(const char *u)
{
    static const char *const schemes[] = {"javascript", "data", "vbscript", NULL};
    while (*u && (unsigned char)*u <= ' ')
        u++;
    size_t n = strcspn(u, ":");
    if (!u[n])
        return false;
    for (int i = 0; schemes[i]; i++)
        if (strlen(schemes[i]) == n && strncasecmp(u, schemes[i], n) == 0)
            return true;
    return false;
}

/* True when uri is one of the newline-separated registered URIs. */
static bool
redirect_uri_is_registered(const char *registered, const char *uri)
{
    size_t ulen = strlen(uri);
    for (const char *p = registered; *p;) {
        size_t len = strcspn(p, "\n");
        if (len == ulen && strncmp(p, uri, len) == 0)
            return true;
        p += len;
        if (*p == '\n')
            p++;
    }
    return false;
}

const char *
eu_oauth_local_path(const char *return_to)
{
    if (!return_to || return_to[0] != '/' || return_to[1] == '/' || return_to[1] == '\\')
        return "/";
    for (const char *p = return_to; *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f || *p == '\\')
            return "/";
    return return_to;
}

/* ---------------------------------------------------- HTML pages */

/* Whether the client asked for JSON rather than a page (API clients that
 * call /oauth/authorize directly to probe it). */
static bool
wants_json(struct eu_req *req)
{
    const char *accept = eu_req_header(req, "Accept");
    return accept && strstr(accept, "application/json") && !strstr(accept, "text/html");
}

/* An error that cannot go back to the client (unknown client, bad redirect
 * URI): shown to the user. */
static void
reply_authz_error_page(struct eu_req *req, int status, const char *code, const char *desc)
{
    if (wants_json(req)) {
        eu_oauth_reply_error(req, status, code, desc);
        return;
    }
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p class=\"error\">%s</p><p><code>%s</code></p></div>",
        eu_web_th(req, "An error has occurred"), eu_web_th(req, desc), eu_html_escape(req, code));
    eu_web_reply_page(req, status, eu_web_t(req, "Authorization error"), body);
}

static const char *
hidden(struct eu_req *req, const char *name, const char *value)
{
    if (!value)
        return "";
    return eu_arena_sprintf(req->arena, "<input type=\"hidden\" name=\"%s\" value=\"%s\">", name,
                            eu_html_escape(req, value));
}

static const char *
hidden_fields(struct eu_oauth_flow *f)
{
    struct eu_req *req = f->req;
    if (f->standalone)
        return eu_arena_sprintf(req->arena, "%s%s", hidden(req, "authenticity_token", f->csrf),
                                hidden(req, "return_to", f->return_to));
    return eu_arena_sprintf(
        req->arena, "%s%s%s%s%s%s%s%s", hidden(req, "authenticity_token", f->csrf),
        hidden(req, "client_id", f->a.client_id), hidden(req, "redirect_uri", f->a.redirect_uri),
        hidden(req, "response_type", f->a.response_type), hidden(req, "scope", f->a.scope),
        hidden(req, "state", f->a.state), hidden(req, "code_challenge", f->a.code_challenge),
        hidden(req, "code_challenge_method", f->a.code_challenge_method));
}

/* The authorize URL of this request, for going back to it after sign-in. */
static const char *
authorize_url(struct eu_oauth_flow *f)
{
    struct eu_arena *a = f->req->arena;
    if (f->standalone)
        return eu_arena_sprintf(a, "/auth/sign_in?return_to=%s",
                                eu_oauth_url_encode(a, f->return_to ? f->return_to : "/"));
    const char *names[] = {"client_id", "redirect_uri",   "response_type",        "scope",
                           "state",     "code_challenge", "code_challenge_method"};
    const char *vals[] = {
        f->a.client_id, f->a.redirect_uri,   f->a.response_type,        f->a.scope,
        f->a.state,     f->a.code_challenge, f->a.code_challenge_method};
    const char *url = "/oauth/authorize";
    char sep = '?';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!vals[i])
            continue;
        url = eu_arena_sprintf(a, "%s%c%s=%s", url, sep, names[i], eu_oauth_url_encode(a, vals[i]));
        sep = '&';
    }
    return url;
}

static void
reply_sign_in(struct eu_oauth_flow *f, int status, const char *error)
{
    struct eu_req *req = f->req;
    const char *err = error
                          ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                             eu_web_th(req, error))
                          : "";
    if (f->otp_pending) {
        const char *body = eu_arena_sprintf(
            req->arena,
            "<div class=\"card\"><h1>%s</h1><p>%s</p>%s"
            "<form method=\"post\" action=\"/auth/sign_in\">%s"
            "<label for=\"code\">%s</label><input type=\"text\" id=\"code\" name=\"code\" "
            "inputmode=\"numeric\" autocomplete=\"one-time-code\" required autofocus>"
            "<button type=\"submit\">%s</button></form></div>",
            eu_web_th(req, "Two-factor authentication"),
            eu_web_th(req, "Enter the code from your authenticator app, or one of your recovery "
                           "codes."),
            err, hidden_fields(f), eu_web_th(req, "Code"), eu_web_th(req, "Sign in"));
        eu_web_reply_page(req, status, eu_web_t(req, "Two-factor authentication"), body);
        return;
    }
    const char *title = eu_html_escape(req, req->tenant->title);
    const char *intro =
        f->standalone
            ? eu_arena_sprintf(req->arena, eu_web_th(req, "Sign in to %s."), title)
            : eu_arena_sprintf(req->arena, eu_web_th(req, "Sign in to %s to authorize %s."), title,
                               eu_arena_sprintf(req->arena, "<strong>%s</strong>",
                                                eu_html_escape(req, f->app_name)));
    /* Registrations open or by approval: the way to an account. */
    const char *sign_up =
        strcmp(eu_web_registrations(req), "closed") != 0
            ? eu_arena_sprintf(req->arena, "<p>%s <a href=\"/auth/sign_up\">%s</a></p>",
                               eu_web_th(req, "No account yet?"), eu_web_th(req, "Sign up"))
            : "";
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p>%s</p>%s"
        "<form method=\"post\" action=\"/auth/sign_in\">%s"
        "<label for=\"login\">%s</label><input type=\"text\" "
        "id=\"login\" name=\"email\" autocomplete=\"username\" required value=\"%s\">"
        "<label for=\"password\">%s</label><input type=\"password\" id=\"password\" "
        "name=\"password\" autocomplete=\"current-password\" required>"
        "<button type=\"submit\">%s</button></form>"
        "<p><a href=\"/auth/password/new\">%s</a></p>%s</div>",
        eu_web_th(req, "Sign in"), intro, err, hidden_fields(f),
        eu_web_th(req, "E-mail address or username"), eu_html_escape(req, f->login ? f->login : ""),
        eu_web_th(req, "Password"), eu_web_th(req, "Sign in"),
        eu_web_th(req, "Forgot your password?"), sign_up);
    eu_web_reply_page(req, status, eu_web_t(req, "Sign in"), body);
}

/* What a scope lets an application do, in words, for the consent page.
 * Scopes the server does not know never reach it (eu_oauth_scopes_valid). */
static const char *
scope_words(const char *scope)
{
    static const struct {
        const char *scope, *words;
    } words[] = {
        {"read", "read everything in your account"},
        {"write", "change everything in your account"},
        {"follow", "follow, block and mute accounts"},
        {"push", "receive your push notifications"},
        {"profile", "read your profile only"},
        {"read:accounts", "see accounts' information"},
        {"read:blocks", "see your blocks"},
        {"read:bookmarks", "see your bookmarks"},
        {"read:favourites", "see your favourites"},
        {"read:filters", "see your filters"},
        {"read:follows", "see whom you follow"},
        {"read:lists", "see your lists"},
        {"read:mutes", "see your mutes"},
        {"read:notifications", "see your notifications"},
        {"read:reports", "see your reports"},
        {"read:search", "search on your behalf"},
        {"read:statuses", "see all posts"},
        {"write:accounts", "change your profile"},
        {"write:blocks", "block accounts and domains"},
        {"write:bookmarks", "bookmark posts"},
        {"write:conversations", "mute and delete conversations"},
        {"write:favourites", "favourite posts"},
        {"write:filters", "create filters"},
        {"write:follows", "follow accounts"},
        {"write:lists", "create lists"},
        {"write:media", "upload media"},
        {"write:mutes", "mute accounts and conversations"},
        {"write:notifications", "clear your notifications"},
        {"write:reports", "report accounts"},
        {"write:statuses", "publish posts"},
        {"admin:read", "read all moderation data of the server"},
        {"admin:write", "take moderation actions on the server"},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(words[i].scope, scope) == 0)
            return words[i].words;
    if (strncmp(scope, "admin:read:", 11) == 0)
        return "read moderation data of the server";
    if (strncmp(scope, "admin:write:", 12) == 0)
        return "take moderation actions on the server";
    return scope;
}

static void
reply_consent(struct eu_oauth_flow *f)
{
    struct eu_req *req = f->req;
    const char *items = "";
    for (const char *p = f->a.scope; *p;) {
        size_t len = strcspn(p, " ");
        const char *one = eu_arena_strndup(req->arena, p, len);
        items = eu_arena_sprintf(req->arena,
                                 "%s<li>%s <span class=\"muted\">(<code>%s</code>)"
                                 "</span></li>",
                                 items, eu_web_th(req, scope_words(one)), eu_html_escape(req, one));
        p += len;
        while (*p == ' ')
            p++;
    }
    const char *user = eu_html_escape(req, f->username ? f->username : "");
    const char *asks = eu_arena_sprintf(
        req->arena,
        eu_web_th(req, "%s would like permission to access your account %s. It is a third-party "
                       "application; if you do not trust it, do not authorize it."),
        eu_arena_sprintf(req->arena, "<strong>%s</strong>", eu_html_escape(req, f->app_name)),
        eu_arena_sprintf(req->arena, "<strong>@%s</strong>", user));
    const char *not_you = eu_arena_sprintf(req->arena, eu_web_th(req, "Not @%s?"), user);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p>%s</p><p>%s</p>"
        "<ul class=\"scopes\">%s</ul>"
        "<form method=\"post\" action=\"/oauth/authorize\">%s<div class=\"actions\">"
        "<button type=\"submit\" name=\"decision\" value=\"approve\">%s</button>"
        "<button type=\"submit\" class=\"secondary\" name=\"decision\" value=\"deny\">%s"
        "</button></div></form>"
        "<form method=\"post\" action=\"/auth/sign_out\">%s%s<p class=\"muted\">%s "
        "<button type=\"submit\" class=\"secondary\">%s</button></p></form></div>",
        eu_web_th(req, "Authorization required"), asks, eu_web_th(req, "It asks to:"), items,
        hidden_fields(f), eu_web_th(req, "Authorize"), eu_web_th(req, "Deny"),
        hidden(req, "authenticity_token", f->csrf), hidden(req, "return_to", authorize_url(f)),
        not_you, eu_web_th(req, "Sign out"));
    eu_web_reply_page(req, 200, eu_web_t(req, "Authorization required"), body);
}

/* Sends the browser back to the client: redirect_uri with the query
 * parameters appended (after any it already has), or, for the out-of-band
 * URI, a page showing them. */
static void
redirect_to_client(struct eu_oauth_flow *f, const char *code, const char *error, const char *desc)
{
    struct eu_req *req = f->req;
    struct eu_arena *a = req->arena;
    if (strcmp(f->a.redirect_uri, EU_OAUTH_OOB_URI) == 0) {
        if (code) {
            const char *body = eu_arena_sprintf(
                a,
                "<div class=\"card\"><h1>%s</h1><p>%s</p><label for=\"code\">%s</label>"
                "<input class=\"code\" id=\"code\" type=\"text\" readonly value=\"%s\"></div>",
                eu_web_th(req, "Authorization code"),
                eu_web_th(req, "Copy this authorization code and paste it into the application."),
                eu_web_th(req, "Your code"), eu_html_escape(req, code));
            eu_web_reply_page(req, 200, eu_web_t(req, "Authorization code"), body);
        } else {
            reply_authz_error_page(req, 400, error, desc);
        }
        return;
    }
    const char *url = f->a.redirect_uri;
    char sep = strchr(url, '?') ? '&' : '?';
    if (code)
        url = eu_arena_sprintf(a, "%s%ccode=%s", url, sep, eu_oauth_url_encode(a, code));
    else
        url = eu_arena_sprintf(a, "%s%cerror=%s&error_description=%s", url, sep,
                               eu_oauth_url_encode(a, error), eu_oauth_url_encode(a, desc));
    if (f->a.state)
        url = eu_arena_sprintf(a, "%s&state=%s", url, eu_oauth_url_encode(a, f->a.state));
    eu_req_add_header(req, "Location", url);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
read_authz(struct eu_req *req, json_t *params, struct eu_oauth_authz *a)
{
    a->client_id = eu_oauth_str_or_null(eu_param_str(params, "client_id"));
    a->redirect_uri = eu_oauth_str_or_null(eu_param_str(params, "redirect_uri"));
    a->response_type = eu_oauth_str_or_null(eu_param_str(params, "response_type"));
    a->scope = eu_oauth_str_or_null(eu_param_str(params, "scope"));
    a->state = eu_oauth_str_or_null(eu_param_str(params, "state"));
    a->code_challenge = eu_oauth_str_or_null(eu_param_str(params, "code_challenge"));
    a->code_challenge_method = eu_oauth_str_or_null(eu_param_str(params, "code_challenge_method"));
    bool force = false;
    eu_param_bool(params, "force_login", &force);
    a->force_login = force;
}

static void
set_session_cookie(struct eu_req *req, const char *token)
{
    eu_req_add_header(req, "Set-Cookie",
                      eu_arena_sprintf(req->arena, "%s=%s; Path=/; HttpOnly; SameSite=Lax%s",
                                       EU_WEB_SESSION_COOKIE, token,
                                       strcmp(req->scheme, "https") == 0 ? "; Secure" : ""));
}

/*
 * Checks the request against its app (already loaded). Answers the request
 * itself and returns false on an error: the ones that cannot be sent to
 * the client are shown as a page, the others go back to redirect_uri.
 */
static bool
validate_authz(struct eu_oauth_flow *f)
{
    struct eu_req *req = f->req;
    if (!f->app_id) {
        reply_authz_error_page(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return false;
    }
    /* With one registered URI, leaving redirect_uri out means that one. */
    if (!f->a.redirect_uri && !strchr(f->app_redirects, '\n'))
        f->a.redirect_uri = f->app_redirects;
    /* Apps registered before such URIs were refused still hold them; an
     * error page is all they get, never a redirect. */
    if (!f->a.redirect_uri || !redirect_uri_is_registered(f->app_redirects, f->a.redirect_uri) ||
        eu_oauth_redirect_uri_is_forbidden(f->a.redirect_uri)) {
        reply_authz_error_page(req, 400, "invalid_redirect_uri",
                               "The requested redirect uri is malformed or doesn't match client "
                               "redirect URI.");
        return false;
    }
    if (!f->a.response_type || strcmp(f->a.response_type, "code") != 0) {
        redirect_to_client(f, NULL, "unsupported_response_type",
                           "The authorization server does not support this response type.");
        return false;
    }
    const char *scope = eu_oauth_scopes_normalize(req->arena, f->a.scope ? f->a.scope : "read");
    if (!scope || !eu_oauth_scopes_within(scope, f->app_scopes)) {
        redirect_to_client(f, NULL, "invalid_scope", EU_OAUTH_INVALID_SCOPE);
        return false;
    }
    f->a.scope = scope;
    if (f->a.code_challenge) {
        /* No method means "plain" (RFC 7636 4.3), refused like it: the
         * metadata offers S256 alone, as Mastodon does. */
        size_t n = strlen(f->a.code_challenge);
        if (!f->a.code_challenge_method || strcmp(f->a.code_challenge_method, "S256") != 0 ||
            n < 43 || n > 128) {
            redirect_to_client(f, NULL, "invalid_request",
                               "The code challenge or its method is not supported.");
            return false;
        }
    } else {
        f->a.code_challenge_method = NULL;
    }
    return true;
}

/* Fills f from a row of OAUTH_AUTHZ_LOAD. */
static void
read_authz_row(struct eu_oauth_flow *f, const PGresult *res)
{
    struct eu_arena *a = f->req->arena;
    if (PQntuples(res) != 1)
        return;
    f->app_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    f->app_name = eu_arena_strdup(a, PQgetvalue(res, 0, 1));
    f->app_scopes = eu_arena_strdup(a, PQgetvalue(res, 0, 2));
    f->app_redirects = eu_arena_strdup(a, PQgetvalue(res, 0, 3));
    f->have_session = !PQgetisnull(res, 0, 4);
    if (f->have_session) {
        f->user_id = PQgetisnull(res, 0, 5) ? 0 : strtoll(PQgetvalue(res, 0, 5), NULL, 10);
        f->csrf = eu_arena_strdup(a, PQgetvalue(res, 0, 6));
        f->username = PQgetisnull(res, 0, 7) ? NULL : eu_arena_strdup(a, PQgetvalue(res, 0, 7));
    }
}

/* Loads app and session for the request's authorize parameters; calls cb.
 * With standalone_ok, a request without client_id is the sign-in page
 * without a client: the session alone is loaded, in the same row. */
static struct eu_oauth_flow *
flow_start(struct eu_req *req, bool standalone_ok, eu_req_rows_cb cb)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return NULL;
    }
    struct eu_oauth_flow *f = eu_arena_calloc(req->arena, sizeof(*f));
    f->req = req;
    f->params = params;
    read_authz(req, params, &f->a);
    if (!f->a.client_id && standalone_ok) {
        f->standalone = true;
        f->return_to = eu_oauth_local_path(eu_param_str(params, "return_to"));
        char shash[65];
        eu_auth_token_hash(eu_web_session_cookie(req), shash);
        const char *p[] = {shash};
        eu_req_stmt(req, &eu_oauth_sql[OAUTH_SESSION_LOAD], 1, p, cb, f);
        return f;
    }
    if (!f->a.client_id) {
        reply_authz_error_page(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return NULL;
    }
    char hash[65];
    eu_auth_token_hash(eu_web_session_cookie(req), hash);
    const char *p[] = {f->a.client_id, hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_AUTHZ_LOAD], 2, p, cb, f);
    return f;
}

static void
on_anon_session(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    reply_sign_in(f, 200, NULL);
}

/* Gives a browser without a session an anonymous one, so the sign-in form
 * can carry a CSRF token bound to it. */
static void
start_anonymous_session(struct eu_oauth_flow *f)
{
    struct eu_req *req = f->req;
    char token[EU_AUTH_TOKEN_LEN], hash[65], csrf[EU_AUTH_TOKEN_LEN];
    eu_auth_token_new(token);
    eu_auth_token_hash(token, hash);
    eu_auth_token_new(csrf);
    f->csrf = eu_arena_strdup(req->arena, csrf);
    set_session_cookie(req, token);
    const char *p[] = {hash, csrf};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SESSION_ANONYMOUS], 2, p, on_anon_session, f);
}

struct browser_session {
    eu_oauth_session_cb cb;
    void *arg;
    bool create;
    const char *csrf;
};

static void
on_browser_session_made(struct eu_req *req, PGresult *res, void *arg)
{
    struct browser_session *b = arg;
    b->cb(req, b->csrf, b->arg);
}

static void
on_browser_session(struct eu_req *req, PGresult *res, void *arg)
{
    struct browser_session *b = arg;
    /* OAUTH_SESSION_LOAD's row: found (4), csrf_token (6). */
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 4)) {
        b->cb(req, eu_arena_strdup(req->arena, PQgetvalue(res, 0, 6)), b->arg);
        return;
    }
    if (!b->create) {
        b->cb(req, NULL, b->arg);
        return;
    }
    char token[EU_AUTH_TOKEN_LEN], hash[65], csrf[EU_AUTH_TOKEN_LEN];
    eu_auth_token_new(token);
    eu_auth_token_hash(token, hash);
    eu_auth_token_new(csrf);
    b->csrf = eu_arena_strdup(req->arena, csrf);
    set_session_cookie(req, token);
    const char *p[] = {hash, csrf};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SESSION_ANONYMOUS], 2, p, on_browser_session_made, b);
}

void
eu_oauth_browser_session(struct eu_req *req, bool create, eu_oauth_session_cb cb, void *arg)
{
    struct browser_session *b = eu_arena_calloc(req->arena, sizeof(*b));
    b->cb = cb;
    b->arg = arg;
    b->create = create;
    char hash[65];
    eu_auth_token_hash(eu_web_session_cookie(req), hash);
    const char *p[] = {hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SESSION_LOAD], 1, p, on_browser_session, b);
}

/* ------------------------------------------------ GET /oauth/authorize */

static void
on_authorize_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    read_authz_row(f, res);
    if (!validate_authz(f))
        return;
    if (!f->have_session) {
        start_anonymous_session(f);
        return;
    }
    if (!f->user_id || f->a.force_login) {
        reply_sign_in(f, 200, NULL);
        return;
    }
    reply_consent(f);
}

static void
authorize_show(struct eu_req *req)
{
    flow_start(req, false, on_authorize_loaded);
}

/* ------------------------------------------------ POST /auth/sign_in */

/* The login the form names (arena), or NULL. */
static const char *
form_login(json_t *params)
{
    const char *login = eu_oauth_str_or_null(eu_param_str(params, "email"));
    return login ? login : eu_oauth_str_or_null(eu_param_str(params, "username"));
}

static bool
csrf_ok(struct eu_oauth_flow *f)
{
    return f->have_session && f->csrf &&
           eu_oauth_secret_equal(eu_param_str(f->params, "authenticity_token"), f->csrf);
}

static void
reply_csrf_failure(struct eu_oauth_flow *f)
{
    struct eu_req *req = f->req;
    eu_web_reply_expired_form(req, authorize_url(f));
}

static void
on_signed_in(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    /* Post/redirect/get: the consent page is the authorize URL again; the
     * page without a client goes where it was asked to. */
    eu_req_add_header(req, "Location", f->standalone ? f->return_to : authorize_url(f));
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

/* The tenant or this client already has its share of password checks in
 * flight (429), or the whole pool is full (503): answered at once rather
 * than queued behind them. */
void
eu_oauth_reply_cpu_busy(struct eu_req *req, int status)
{
    eu_req_add_header(req, "Retry-After", "1");
    eu_req_reply_error(req, status,
                       "Too many sign-in attempts are being checked; try again shortly");
}

static void
verify_work(void *arg)
{
    struct eu_oauth_flow *f = arg;
    if (f->stored_hash) {
        f->verify_rc = crypto_pwhash_str_verify(f->stored_hash, f->password, strlen(f->password));
    } else {
        /* No such user: hash anyway, so the answer takes as long as for a
         * real one and does not tell which logins exist. */
        char unused[crypto_pwhash_STRBYTES];
        if (crypto_pwhash_str_alg(unused, f->password, strlen(f->password), EU_OAUTH_PWHASH_OPS,
                                  EU_OAUTH_PWHASH_MEM, crypto_pwhash_ALG_ARGON2ID13) == 0)
            sodium_memzero(unused, sizeof(unused));
        f->verify_rc = -1;
    }
    sodium_memzero(f->password, strlen(f->password));
}

void
eu_oauth_flow_free_password(struct eu_oauth_flow *f)
{
    if (f->password)
        sodium_memzero(f->password, strlen(f->password));
    free(f->password);
    f->password = NULL;
    free(f->stored_hash);
    f->stored_hash = NULL;
}

/* Gives the browser a new session id (cookie set on the reply) and f a new
 * CSRF token; old_hash gets the hash of the id being replaced, hash that of
 * the new one, for the statement that moves the row. */
static void
renew_session(struct eu_oauth_flow *f, char old_hash[65], char hash[65])
{
    struct eu_req *req = f->req;
    char token[EU_AUTH_TOKEN_LEN], csrf[EU_AUTH_TOKEN_LEN];
    eu_auth_token_hash(eu_web_session_cookie(req), old_hash);
    eu_auth_token_new(token);
    eu_auth_token_hash(token, hash);
    eu_auth_token_new(csrf);
    f->csrf = eu_arena_strdup(req->arena, csrf);
    set_session_cookie(req, token);
}

static void
on_session_rotated(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    reply_sign_in(f, f->fail_status, f->fail_message);
}

/*
 * Answers a failed attempt with the form again, under a new session id and
 * CSRF token: the request that failed cannot be sent again as it was (a
 * replayed or resubmitted form), and a pre-sign-in session id someone else
 * has seen stops working at its owner's first failure.
 */
static void
fail_sign_in(struct eu_oauth_flow *f, int status, const char *message)
{
    char old_hash[65], hash[65];
    renew_session(f, old_hash, hash);
    f->fail_status = status;
    f->fail_message = message;
    const char *p[] = {old_hash, hash, f->csrf};
    eu_req_stmt(f->req, &eu_oauth_sql[OAUTH_SESSION_ROTATE], 3, p, on_session_rotated, f);
}

static void
on_code_asked(struct eu_req *req, PGresult *res, void *arg)
{
    reply_sign_in(arg, 200, NULL);
}

/* A right password for an account with two-factor sign-in: the session,
 * under a new id and token as at sign-in, holds the user as pending and
 * the form asks for the code. */
static void
ask_for_code(struct eu_oauth_flow *f)
{
    char old_hash[65], hash[65];
    renew_session(f, old_hash, hash);
    f->otp_pending = true;
    const char *uid = eu_arena_sprintf(f->req->arena, "%lld", (long long)f->user_id);
    const char *p[] = {old_hash, hash, f->csrf, uid};
    eu_req_stmt(f->req, &eu_oauth_sql[OAUTH_OTP_PENDING], 4, p, on_code_asked, f);
}

static void complete_sign_in(struct eu_oauth_flow *f);

static void
sign_in_verified(void *arg)
{
    struct eu_oauth_flow *f = arg;
    struct eu_req *req = f->req;
    eu_oauth_flow_free_password(f);
    eu_req_enter(req);
    if (f->verify_rc != 0 || !f->user_id) {
        fail_sign_in(f, 401, "Invalid e-mail address or password.");
        return;
    }
    if (f->suspended) {
        fail_sign_in(f, 403, "Your account has been suspended.");
        return;
    }
    if (!f->approved) {
        fail_sign_in(f, 403, "Your account is pending review by the staff.");
        return;
    }
    if (f->otp_required) {
        ask_for_code(f);
        return;
    }
    complete_sign_in(f);
}

/* The password (and code, if any) was right: the session signs the user
 * in. A new session id and CSRF token at sign-in, so an id planted before
 * it (session fixation) is worth nothing. */
static void
complete_sign_in(struct eu_oauth_flow *f)
{
    struct eu_req *req = f->req;
    eu_oauth_remember_address(req, f->user_id);
    char old_hash[65], hash[65];
    renew_session(f, old_hash, hash);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)f->user_id);
    const char *p[] = {old_hash, uid, hash, f->csrf};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SIGN_IN], 4, p, on_signed_in, f);
}

static void
on_verify_done(void *arg)
{
    struct eu_oauth_flow *f = arg;
    eu_pwgate_leave(f->req->tenant->id, f->gate_client);
    f->verified(f);
}

/* Runs the password check on the CPU pool; stored is NULL for an unknown
 * login (see verify_work). The gate (pwgate_internal.h) comes first, so a
 * flood over one tenant or from one address, however many tenants it
 * spreads over, is refused here and never queues in front of others. */
void
eu_oauth_verify_password(struct eu_oauth_flow *f, const char *stored, eu_cpupool_done_cb done)
{
    struct eu_req *req = f->req;
    const struct eu_config *cfg = req->app->cfg;
    f->gate_client = eu_ratelimit_client(req);
    if (!eu_pwgate_enter(req->tenant->id, f->gate_client, cfg->cpu_jobs_per_tenant,
                         cfg->cpu_threads)) {
        eu_oauth_flow_free_password(f);
        eu_oauth_reply_cpu_busy(req, 429);
        return;
    }
    f->stored_hash = stored ? strdup(stored) : NULL;
    f->verified = done;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, verify_work,
                              on_verify_done, f) < 0) {
        eu_pwgate_leave(req->tenant->id, f->gate_client);
        eu_oauth_flow_free_password(f);
        eu_oauth_reply_cpu_busy(req, 503);
    }
}

/* Fills the user part of f from an OAUTH_USER_BY_LOGIN row at column col; the
 * stored hash goes to *stored (arena). */
void
eu_oauth_read_user_row(struct eu_oauth_flow *f, const PGresult *res, int col, const char **stored)
{
    *stored = NULL;
    if (PQntuples(res) < 1 || PQgetisnull(res, 0, col))
        return;
    f->user_id = strtoll(PQgetvalue(res, 0, col), NULL, 10);
    *stored = eu_arena_strdup(f->req->arena, PQgetvalue(res, 0, col + 1));
    f->approved = strcmp(PQgetvalue(res, 0, col + 2), "t") == 0;
    f->suspended = strcmp(PQgetvalue(res, 0, col + 3), "t") == 0;
    f->username = eu_arena_strdup(f->req->arena, PQgetvalue(res, 0, col + 4));
    f->otp_required = strcmp(PQgetvalue(res, 0, col + 6), "t") == 0;
}

static void
on_flow_freed(void *data)
{
    eu_oauth_flow_free_password(data);
}

/* The user's row is found: a client under a no_access IP block is refused
 * (Mastodon refuses it everything; here, signing in), else found runs. */
static void
on_user_found(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 5), "t") == 0) {
        eu_oauth_flow_free_password(f);
        eu_log_info("oauth", "sign-in refused: '%s' is under a no_access IP block", req->remote_ip);
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    f->found(req, res, f->found_arg);
}

/* Copies password into f and looks the user of f->login up; cb gets the
 * OAUTH_USER_BY_LOGIN row (its user columns NULL for nobody), unless the
 * client is under a no_access IP block (answered 403 here). The copy is
 * wiped and freed with the request at the latest, so a failed statement,
 * answered by eu_req_stmt(), leaves nothing behind. */
void
eu_oauth_find_user(struct eu_oauth_flow *f, const char *password, eu_req_rows_cb cb, void *arg)
{
    f->password = strdup(password);
    eu_arena_on_free(f->req->arena, on_flow_freed, f);
    f->found = cb;
    f->found_arg = arg;
    const char *p[] = {f->login, eu_oauth_client_ip(f->req)};
    eu_req_stmt(f->req, &eu_oauth_sql[OAUTH_USER_BY_LOGIN], 2, p, on_user_found, f);
}

static void reply_sign_in_throttled(struct eu_req *req, int retry_after_s);

static void
on_sign_in_account_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct eu_oauth_flow *f = arg;
    if (retry_after_s > 0) {
        eu_oauth_flow_free_password(f);
        reply_sign_in_throttled(req, retry_after_s);
        return;
    }
    eu_oauth_verify_password(f, f->stored, sign_in_verified);
}

static void
on_sign_in_user(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    const char *stored;
    eu_oauth_read_user_row(f, res, 0, &stored);
    f->stored = stored;
    eu_oauth_count_account(f->req, f->user_id, f->login, on_sign_in_account_counted, f);
}

static void
on_code_checked(struct eu_req *req, bool ok, void *arg)
{
    struct eu_oauth_flow *f = arg;
    if (!ok) {
        fail_sign_in(f, 401, "Invalid two-factor authentication code.");
        return;
    }
    if (f->suspended) {
        f->otp_pending = false;
        fail_sign_in(f, 403, "Your account has been suspended.");
        return;
    }
    if (!f->approved) {
        f->otp_pending = false;
        fail_sign_in(f, 403, "Your account is pending review by the staff.");
        return;
    }
    complete_sign_in(f);
}

static void
on_code_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct eu_oauth_flow *f = arg;
    if (retry_after_s > 0) {
        reply_sign_in_throttled(req, retry_after_s);
        return;
    }
    eu_otp_verify(req, f->user_id, f->otp_secret, f->otp_consumed, eu_param_str(f->params, "code"),
                  on_code_checked, f);
}

/* The session is pending for a user (or has expired, and the password is
 * asked for again); the code counts against the same limits as a
 * password, per address (already) and per account. */
static void
on_pending_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    if (PQntuples(res) != 1) {
        fail_sign_in(f, 401, "The sign-in has expired; enter your password again.");
        return;
    }
    f->otp_pending = true;
    f->user_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    f->otp_secret = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    f->otp_consumed = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
    f->approved = strcmp(PQgetvalue(res, 0, 3), "t") == 0;
    f->suspended = strcmp(PQgetvalue(res, 0, 4), "t") == 0;
    f->username = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 5));
    const char *code = eu_param_str(f->params, "code");
    if (!*code || strlen(code) > 64) {
        fail_sign_in(f, 401, "Invalid two-factor authentication code.");
        return;
    }
    eu_oauth_count_account(req, f->user_id, NULL, on_code_counted, f);
}

static void
on_sign_in_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    read_authz_row(f, res);
    if (!f->standalone && !validate_authz(f))
        return;
    if (!csrf_ok(f)) {
        reply_csrf_failure(f);
        return;
    }
    if (eu_param_str(f->params, "code") && f->have_session) {
        char hash[65];
        eu_auth_token_hash(eu_web_session_cookie(req), hash);
        const char *p[] = {hash};
        eu_req_stmt(req, &eu_oauth_sql[OAUTH_OTP_PENDING_LOAD], 1, p, on_pending_loaded, f);
        return;
    }
    f->user_id = 0;
    f->login = form_login(f->params);
    const char *password = eu_param_str(f->params, "password");
    if (!f->login || !password || !*password || strlen(password) > 1024) {
        fail_sign_in(f, 401, "Invalid e-mail address or password.");
        return;
    }
    eu_oauth_find_user(f, password, on_sign_in_user, f);
}

/* Over a sign-in limit: a page saying so rather than the form, which would
 * only be refused again, with the way back to it. Retry-After is set. */
static void
reply_sign_in_throttled(struct eu_req *req, int retry_after_s)
{
    if (wants_json(req)) {
        eu_req_reply_error(req, 429, "Too many requests");
        return;
    }
    struct eu_oauth_flow f = {.req = req};
    json_t *params = eu_req_params(req, NULL);
    read_authz(req, params, &f.a);
    f.standalone = !f.a.client_id;
    f.return_to = eu_oauth_local_path(eu_param_str(params, "return_to"));
    int minutes = (retry_after_s + 59) / 60;
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p class=\"error\">%s</p><p><a "
        "href=\"%s\">%s</a></p></div>",
        eu_web_th(req, "Too many sign-in attempts"),
        eu_arena_sprintf(req->arena,
                         eu_web_th(req, minutes == 1 ? "Too many sign-in attempts. Try again in %d "
                                                       "minute."
                                                     : "Too many sign-in attempts. Try again in %d "
                                                       "minutes."),
                         minutes),
        eu_html_escape(req, authorize_url(&f)), eu_web_th(req, "Back to sign-in"));
    eu_web_reply_page(req, 429, eu_web_t(req, "Too many sign-in attempts"), body);
}

static void
sign_in_framed(struct eu_req *req, void *arg)
{
    const int *retry_after_s = arg;
    if (*retry_after_s > 0) {
        reply_sign_in_throttled(req, *retry_after_s);
        return;
    }
    flow_start(req, true, on_sign_in_loaded);
}

/* The frame (the page's language) is read once the attempt is counted. */
static void
on_sign_in_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    int *retry = eu_arena_alloc(req->arena, sizeof(*retry));
    *retry = retry_after_s;
    eu_web_frame_then(req, sign_in_framed, retry);
}

/* Counted before the session, the CSRF token or the login is looked at, so
 * a throttled client costs one Redis round trip and nothing else. */
static void
sign_in(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    eu_oauth_count_sign_in(req, on_sign_in_counted, NULL);
}

/* ------------------------------------------------ POST /oauth/authorize */

static void
on_grant_created(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    redirect_to_client(f, f->login /* the code */, NULL, NULL);
}

static void
on_decide_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    read_authz_row(f, res);
    if (!validate_authz(f))
        return;
    if (!csrf_ok(f)) {
        reply_csrf_failure(f);
        return;
    }
    if (!f->user_id) {
        reply_sign_in(f, 200, NULL);
        return;
    }
    const char *decision = eu_param_str(f->params, "decision");
    if (!decision || strcmp(decision, "approve") != 0) {
        redirect_to_client(f, NULL, "access_denied",
                           "The resource owner or authorization server denied the request.");
        return;
    }
    char code[EU_AUTH_TOKEN_LEN], hash[65];
    eu_auth_token_new(code);
    eu_auth_token_hash(code, hash);
    f->login = eu_arena_strdup(req->arena, code);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)f->app_id);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)f->user_id);
    const char *p[] = {app,
                       uid,
                       hash,
                       f->a.redirect_uri,
                       f->a.scope,
                       f->a.code_challenge,
                       f->a.code_challenge_method};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_GRANT_CREATE], 7, p, on_grant_created, f);
}

static void
authorize_decide(struct eu_req *req)
{
    flow_start(req, false, on_decide_loaded);
}

/* ------------------------------------ GET /auth/sign_in, POST /auth/sign_out */

static void
redirect_local(struct eu_req *req, const char *path)
{
    eu_req_add_header(req, "Location", path);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
on_sign_in_page_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    read_authz_row(f, res);
    if (!f->have_session) {
        start_anonymous_session(f);
        return;
    }
    /* Already signed in: straight on. */
    if (f->user_id) {
        redirect_local(req, f->return_to);
        return;
    }
    reply_sign_in(f, 200, NULL);
}

/* The sign-in page without an OAuth client: the settings pages send a
 * signed-out browser here with return_to (a local path; anything else
 * means "/"). Client parameters are ignored. */
static void
sign_in_page(struct eu_req *req)
{
    json_t *params = eu_req_params(req, NULL);
    if (params && json_object_get(params, "client_id"))
        json_object_del(params, "client_id");
    flow_start(req, true, on_sign_in_page_loaded);
}

static void
on_signed_out(struct eu_req *req, PGresult *res, void *arg)
{
    eu_req_add_header(req, "Set-Cookie",
                      eu_arena_sprintf(req->arena,
                                       "%s=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax%s",
                                       EU_WEB_SESSION_COOKIE,
                                       strcmp(req->scheme, "https") == 0 ? "; Secure" : ""));
    /* The consent page's "not you?" comes back to its authorize URL, to
     * sign in as someone else; otherwise the sign-in page. */
    const struct eu_oauth_flow *f = arg;
    redirect_local(req,
                   f->return_to && strcmp(f->return_to, "/") != 0 ? f->return_to : "/auth/sign_in");
}

static void
on_sign_out_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct eu_oauth_flow *f = arg;
    read_authz_row(f, res);
    if (!csrf_ok(f)) {
        reply_csrf_failure(f);
        return;
    }
    char hash[65];
    eu_auth_token_hash(eu_web_session_cookie(req), hash);
    const char *p[] = {hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SIGN_OUT], 1, p, on_signed_out, f);
}

/* Ends the browser's session (the row goes, the cookie is cleared); the
 * form's CSRF token is the session's, so no other site can sign one out. */
static void
sign_out(struct eu_req *req)
{
    json_t *params = eu_req_params(req, NULL);
    if (params && json_object_get(params, "client_id"))
        json_object_del(params, "client_id");
    flow_start(req, true, on_sign_out_loaded);
}

/* Flags: include/eunha/router.h. The apps', tokens' and sign-up's routes
 * are in oauth_apps.c, oauth_token.c and oauth_signup.c. */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST

/* The pages read their frame first (web_page.c); POST /auth/sign_in reads
 * it once the attempt is counted. */
EU_WEB_PAGE(authorize_show_page, authorize_show)
EU_WEB_PAGE(authorize_decide_page, authorize_decide)
EU_WEB_PAGE(sign_in_form_page, sign_in_page)
EU_WEB_PAGE(sign_out_page, sign_out)

const struct eu_route eu_oauth_routes[] = {
    {GET, "/oauth/authorize", authorize_show_page, NULL, EU_ROUTE_LIMIT_API},
    {POST, "/oauth/authorize", authorize_decide_page, NULL, EU_ROUTE_LIMIT_API},
    {GET, "/auth/sign_in", sign_in_form_page, NULL, EU_ROUTE_LIMIT_API},
    {POST, "/auth/sign_in", sign_in, NULL, EU_ROUTE_LIMIT_API},
    {POST, "/auth/sign_out", sign_out_page, NULL, EU_ROUTE_LIMIT_API},
    {0},
};
