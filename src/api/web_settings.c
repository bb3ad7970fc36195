/*
 * The settings pages of a signed-in browser (Mastodon's /settings/...):
 * one layout, a navigation list of every settings page with the current
 * one marked, shared by the pages of other files (password and deletion
 * in account_life.c, two-factor in settings_otp.c, exports and imports in
 * takeout.c), and the pages this file owns: the applications the user has
 * authorized, each revocable, and the browsers signed in, each revocable,
 * this one marked.
 *
 * Revoking an application revokes every token the user gave it, as
 * Mastodon's authorized applications page does, and forgets them in every
 * process's token cache at once; revoking a browser ends its session.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "web_internal.h"
#include "web_settings_internal.h"
#include "web_text.h"
#include "websession_internal.h"

enum {
    SETTINGS_APPS,
    SETTINGS_APP_REVOKE,
    SETTINGS_SESSIONS,
    SETTINGS_SESSION_REVOKE,
};

const struct eu_sql eu_web_settings_sql[] = {
    /* $2 user: the applications holding its live tokens, one row each. */
    [SETTINGS_APPS] = {"web_settings.apps",
                       "SELECT a.id, a.name, coalesce(a.website, ''),"
                       " string_agg(DISTINCT t.scopes, ' '), eunha_ts(min(t.created_at)),"
                       " coalesce(eunha_ts(max(t.last_used_at)), '')"
                       " FROM oauth_access_tokens t JOIN oauth_applications a"
                       "  ON a.tenant_id = $1 AND a.id = t.application_id"
                       " WHERE t.tenant_id = $1 AND t.user_id = $2 AND t.revoked_at IS NULL"
                       " GROUP BY a.id, a.name, a.website ORDER BY a.name, a.id"},
    /* $2 user, $3 application: every token it gave the application,
     * revoked; their hashes, for the caches. */
    [SETTINGS_APP_REVOKE] = {"web_settings.app_revoke",
                             "UPDATE oauth_access_tokens SET revoked_at = now()"
                             " WHERE tenant_id = $1 AND user_id = $2"
                             " AND application_id = $3::bigint AND revoked_at IS NULL"
                             " RETURNING token_hash"},
    /* $2 user, $3 this browser's session hash. */
    [SETTINGS_SESSIONS] = {"web_settings.sessions",
                           "SELECT id, eunha_ts(created_at), eunha_ts(expires_at),"
                           " session_hash = $3 FROM web_sessions"
                           " WHERE tenant_id = $1 AND user_id = $2 AND expires_at > now()"
                           " ORDER BY (session_hash = $3) DESC, created_at DESC LIMIT 100"},
    /* $2 user, $3 session id; this browser's own stays (sign out for it). */
    [SETTINGS_SESSION_REVOKE] = {"web_settings.session_revoke",
                                 "DELETE FROM web_sessions WHERE tenant_id = $1 AND user_id = $2"
                                 " AND id = $3::bigint AND session_hash <> $4 RETURNING id"},
    {0},
};

/* ------------------------------------------------------------ the layout */

static const struct {
    const char *path, *name;
} NAV[] = {
    {"/settings/password", "Password"},
    {"/settings/otp_authentication", "Two-factor authentication"},
    {"/settings/applications", "Authorized apps"},
    {"/settings/sessions", "Sessions"},
    {"/settings/export", "Export"},
    {"/settings/imports", "Import"},
    {"/settings/delete", "Delete account"},
};

static const char *
t(struct eu_req *req, const char *english)
{
    return eu_html_escape(req, eu_web_t(req, english));
}

void
eu_web_settings_reply(struct eu_req *req, int status, const char *current, const char *title,
                      const char *body)
{
    const char *items = "";
    for (size_t i = 0; i < sizeof(NAV) / sizeof(NAV[0]); i++)
        items = eu_arena_sprintf(
            req->arena, "%s<li><a href=\"%s\"%s>%s</a></li>", items, NAV[i].path,
            strcmp(NAV[i].path, current) == 0 ? " aria-current=\"page\"" : "", t(req, NAV[i].name));
    eu_web_reply_page(
        req, status, title,
        eu_arena_sprintf(req->arena, "<nav class=\"subnav\" aria-label=\"%s\"><ul>%s</ul></nav>%s",
                         t(req, "Settings"), items, body));
}

const char *
eu_web_csrf_field(struct eu_req *req, const struct eu_web_session *s)
{
    return eu_arena_sprintf(req->arena,
                            "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">",
                            eu_html_escape(req, s->csrf));
}

static void
redirect(struct eu_req *req, const char *location)
{
    eu_req_add_header(req, "Location", location);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 303, "text/html; charset=utf-8", "", 0);
}

/* A form refused for its missing or stale CSRF token. */
static void
reply_bad_token(struct eu_req *req, const char *current)
{
    eu_web_settings_reply(
        req, 422, current, eu_web_t(req, "Invalid authenticity token"),
        eu_arena_sprintf(req->arena, "<h1>%s</h1><p class=\"error\">%s</p>",
                         t(req, "Invalid authenticity token"),
                         t(req, "The page was open too long or came from elsewhere; nothing was "
                                "changed.")));
}

struct page {
    const struct eu_web_session *s;
    json_t *params;
    void (*then)(struct eu_req *req, struct page *pg);
};

static void
on_session(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    struct page *pg = arg;
    pg->s = s;
    pg->then(req, pg);
}

/* Loads the form's fields and the session, then calls then. */
static void
start(struct eu_req *req, void (*then)(struct eu_req *req, struct page *pg))
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct page *pg = eu_arena_calloc(req->arena, sizeof(*pg));
    pg->params = params;
    pg->then = then;
    eu_web_session_require(req, on_session, pg);
}

static const char *
user_id(struct eu_req *req, const struct page *pg)
{
    return eu_arena_sprintf(req->arena, "%lld", (long long)pg->s->user_id);
}

/* ------------------------------------------------- authorized apps */

#define APPS_PATH "/settings/applications"

static void
on_apps(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *pg = arg;
    const char *rows = "";
    for (int i = 0; i < PQntuples(res); i++) {
        const char *website = PQgetvalue(res, i, 2);
        const char *name = eu_html_escape(req, PQgetvalue(res, i, 1));
        const char *used = PQgetvalue(res, i, 5);
        rows = eu_arena_sprintf(
            req->arena,
            "%s<li class=\"card\" data-app=\"%s\"><h2>%s</h2><p class=\"muted\">%s"
            " <code>%s</code></p><p class=\"muted\">%s %s%s%s</p>"
            "<form method=\"post\" action=\"" APPS_PATH "\">%s"
            "<input type=\"hidden\" name=\"application_id\" value=\"%s\">"
            "<button type=\"submit\" class=\"danger\" aria-label=\"%s %s\">%s</button></form></li>",
            rows, PQgetvalue(res, i, 0),
            strncmp(website, "https://", 8) == 0
                ? eu_arena_sprintf(req->arena, "<a href=\"%s\" rel=\"noopener noreferrer\">%s</a>",
                                   eu_html_escape(req, website), name)
                : name,
            t(req, "Permissions:"), eu_html_escape(req, PQgetvalue(res, i, 3)),
            t(req, "Authorized"), eu_html_escape(req, PQgetvalue(res, i, 4)),
            *used ? eu_arena_sprintf(req->arena, "; %s ", t(req, "last used")) : "",
            *used ? eu_html_escape(req, used) : "", eu_web_csrf_field(req, pg->s),
            PQgetvalue(res, i, 0), t(req, "Revoke"), name, t(req, "Revoke"));
    }
    const char *body = eu_arena_sprintf(
        req->arena, "<h1>%s</h1><p>%s</p>%s", t(req, "Authorized apps"),
        t(req, "These applications can use your account. Revoking one signs it out at once."),
        *rows ? eu_arena_sprintf(req->arena, "<ul class=\"plain\">%s</ul>", rows)
              : eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                 t(req, "You have not authorized any application.")));
    eu_web_settings_reply(req, 200, APPS_PATH, eu_web_t(req, "Authorized apps"), body);
}

static void
show_apps(struct eu_req *req, struct page *pg)
{
    const char *p[] = {user_id(req, pg)};
    eu_req_stmt(req, &eu_web_settings_sql[SETTINGS_APPS], 1, p, on_apps, pg);
}

static void
on_app_revoked(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    for (int i = 0; i < PQntuples(res); i++)
        eu_auth_cache_forget(req->app, req->tenant, PQgetvalue(res, i, 0));
    redirect(req, APPS_PATH);
}

static void
apps(struct eu_req *req, struct page *pg)
{
    if (req->method != EU_HTTP_POST) {
        show_apps(req, pg);
        return;
    }
    if (!eu_web_session_csrf_ok(pg->s, pg->params)) {
        reply_bad_token(req, APPS_PATH);
        return;
    }
    const char *app = eu_param_str(pg->params, "application_id");
    if (!app || !eu_id_is_valid(app)) {
        redirect(req, APPS_PATH);
        return;
    }
    const char *p[] = {user_id(req, pg), app};
    eu_req_stmt(req, &eu_web_settings_sql[SETTINGS_APP_REVOKE], 2, p, on_app_revoked, pg);
}

static void
apps_page(struct eu_req *req)
{
    start(req, apps);
}

/* ------------------------------------------------------------ sessions */

#define SESSIONS_PATH "/settings/sessions"

static void
on_sessions(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *pg = arg;
    const char *rows = "";
    for (int i = 0; i < PQntuples(res); i++) {
        bool current = PQgetvalue(res, i, 3)[0] == 't';
        const char *act =
            current
                ? eu_arena_sprintf(req->arena, "<p><strong>%s</strong></p>", t(req, "This browser"))
                : eu_arena_sprintf(req->arena,
                                   "<form method=\"post\" action=\"" SESSIONS_PATH "\">%s"
                                   "<input type=\"hidden\" name=\"session_id\" value=\"%s\">"
                                   "<button type=\"submit\" class=\"secondary\">%s</button>"
                                   "</form>",
                                   eu_web_csrf_field(req, pg->s), PQgetvalue(res, i, 0),
                                   t(req, "Sign out this browser"));
        rows = eu_arena_sprintf(req->arena,
                                "%s<li class=\"card\"%s><p>%s %s</p><p class=\"muted\">%s "
                                "%s</p>%s</li>",
                                rows, current ? " aria-current=\"true\"" : "", t(req, "Signed in"),
                                eu_html_escape(req, PQgetvalue(res, i, 1)), t(req, "Expires"),
                                eu_html_escape(req, PQgetvalue(res, i, 2)), act);
    }
    const char *body = eu_arena_sprintf(
        req->arena, "<h1>%s</h1><p>%s</p><ul class=\"plain\">%s</ul>", t(req, "Sessions"),
        t(req, "The browsers signed in to your account. Applications are under Authorized "
               "apps."),
        rows);
    eu_web_settings_reply(req, 200, SESSIONS_PATH, eu_web_t(req, "Sessions"), body);
}

static void
on_session_revoked(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    (void)arg;
    redirect(req, SESSIONS_PATH);
}

static void
sessions(struct eu_req *req, struct page *pg)
{
    char hash[65];
    eu_auth_token_hash(eu_web_session_cookie(req), hash);
    const char *mine = eu_arena_strdup(req->arena, hash);
    if (req->method != EU_HTTP_POST) {
        const char *p[] = {user_id(req, pg), mine};
        eu_req_stmt(req, &eu_web_settings_sql[SETTINGS_SESSIONS], 2, p, on_sessions, pg);
        return;
    }
    if (!eu_web_session_csrf_ok(pg->s, pg->params)) {
        reply_bad_token(req, SESSIONS_PATH);
        return;
    }
    const char *id = eu_param_str(pg->params, "session_id");
    if (!id || !eu_id_is_valid(id)) {
        redirect(req, SESSIONS_PATH);
        return;
    }
    const char *p[] = {user_id(req, pg), id, mine};
    eu_req_stmt(req, &eu_web_settings_sql[SETTINGS_SESSION_REVOKE], 3, p, on_session_revoked, pg);
}

static void
sessions_page(struct eu_req *req)
{
    start(req, sessions);
}

/* GET /settings: the first settings page. */
static void
settings_home(struct eu_req *req)
{
    redirect(req, NAV[0].path);
}

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_web_settings_routes[] = {
    {GET, "/settings", settings_home, NULL, 0},
    {GET | POST, APPS_PATH, apps_page, NULL, 0},
    {GET | POST, SESSIONS_PATH, sessions_page, NULL, 0},
    {0},
};
