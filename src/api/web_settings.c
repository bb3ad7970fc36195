/*
 * The settings pages of a signed-in browser (Mastodon's /settings/...):
 * one layout, a navigation list of every settings page with the current
 * one marked, shared by the pages of other files (password and deletion
 * in account_life.c, two-factor in settings_otp.c, exports and imports in
 * takeout.c), and the pages this file owns: the profile (the update of
 * PATCH /api/v1/accounts/update_credentials, accounts.c), the applications the user has
 * authorized, each revocable, the browsers signed in, each revocable,
 * this one marked, and the account's migration (its aliases and a move,
 * through migration.c's code).
 *
 * Revoking an application revokes every token the user gave it, as
 * Mastodon's authorized applications page does, and forgets them in every
 * process's token cache at once; revoking a browser ends its session.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "accounts_internal.h"
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
    SETTINGS_MIGRATION,
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
    /* $2 account: its aliases (a JSON array) and where it moved, if it did. */
    [SETTINGS_MIGRATION] = {"web_settings.migration",
                            "SELECT array_to_json(coalesce(a.also_known_as, '{}'))::text,"
                            " coalesce(m.uri, '') FROM accounts a LEFT JOIN accounts m"
                            "  ON m.tenant_id = $1 AND m.id = a.moved_to_account_id"
                            " WHERE a.tenant_id = $1 AND a.id = $2::bigint"},
    {0},
};

/* ------------------------------------------------------------ the layout */

static const struct {
    const char *path, *name;
} NAV[] = {
    {"/settings/profile", "Profile"},
    {"/settings/email", "E-mail address"},
    {"/settings/password", "Password"},
    {"/settings/otp_authentication", "Two-factor authentication"},
    {"/settings/applications", "Authorized apps"},
    {"/settings/sessions", "Sessions"},
    {"/settings/export", "Export"},
    {"/settings/imports", "Import"},
    {"/settings/migration", "Account migration"},
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
    const char *error; /* the last change's, shown above the form */
    int status;        /* the page's status with error */
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

/* ------------------------------------------------------------ profile */

#define PROFILE_PATH "/settings/profile"
/* Rows of the fields table the form offers (Mastodon's four). */
#define PROFILE_FIELDS 4

/* A checkbox that says false when unchecked: the hidden field goes first
 * and the box, when checked, comes later and wins (Rack's rule). */
static const char *
checkbox(struct eu_req *req, const char *name, bool on, const char *label, const char *hint)
{
    return eu_arena_sprintf(req->arena,
                            "<input type=\"hidden\" name=\"%s\" value=\"0\"><label class=\"check\" "
                            "for=\"%s\"><input type=\"checkbox\" id=\"%s\" name=\"%s\" "
                            "value=\"1\"%s aria-describedby=\"%s-hint\"><span>%s</span></label>"
                            "<p class=\"hint\" id=\"%s-hint\">%s</p>",
                            name, name, name, name, on ? " checked" : "", name, t(req, label), name,
                            t(req, hint));
}

/* The avatar and header as they are, each with its file input (PNG, JPEG,
 * GIF or WebP, as the API takes them; made into WebP by the same code). */
static const char *
images(struct eu_req *req, json_t *o)
{
    static const char *const accept = "image/png,image/jpeg,image/gif,image/webp";
    return eu_arena_sprintf(
        req->arena,
        "<div class=\"field-row\"><div><img class=\"avatar\" src=\"%s\" alt=\"%s\" width=\"80\" "
        "height=\"80\"><label for=\"avatar\">%s</label><input type=\"file\" id=\"avatar\" "
        "name=\"avatar\" accept=\"%s\" aria-describedby=\"avatar-hint\"><p class=\"hint\" "
        "id=\"avatar-hint\">%s</p></div><div><label for=\"header\">%s</label><input "
        "type=\"file\" id=\"header\" name=\"header\" accept=\"%s\" "
        "aria-describedby=\"header-hint\"><p class=\"hint\" id=\"header-hint\">%s</p></div></div>",
        eu_html_escape(req, json_string_value(json_object_get(o, "avatar_static"))),
        t(req, "Your avatar"), t(req, "Avatar"), accept,
        t(req, "PNG, JPEG, GIF or WebP, at most 8 MB; cut to a square of 400 px."),
        t(req, "Header"), accept, t(req, "PNG, JPEG, GIF or WebP, at most 8 MB; 1500 by 500 px."));
}

static void
on_profile(struct eu_req *req, json_t *o, void *arg)
{
    struct page *pg = arg;
    json_t *source = json_object_get(o, "source");
    const char *dn = json_string_value(json_object_get(o, "display_name"));
    const char *note = json_string_value(json_object_get(source, "note"));
    json_t *fields = json_object_get(source, "fields");
    const char *rows = "";
    for (size_t i = 0; i < PROFILE_FIELDS; i++) {
        json_t *f = json_array_get(fields, i);
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *value = json_string_value(json_object_get(f, "value"));
        rows = eu_arena_sprintf(
            req->arena,
            "%s<div class=\"field-row\"><div><label for=\"field-%zu-name\">%s %zu</label>"
            "<input type=\"text\" id=\"field-%zu-name\" name=\"fields_attributes[%zu][name]\" "
            "value=\"%s\" maxlength=\"255\"></div><div><label for=\"field-%zu-value\">%s "
            "%zu</label>"
            "<input type=\"text\" id=\"field-%zu-value\" name=\"fields_attributes[%zu][value]\" "
            "value=\"%s\" maxlength=\"255\"></div></div>",
            rows, i, t(req, "Label"), i + 1, i, i, eu_html_escape(req, name ? name : ""), i,
            t(req, "Content"), i + 1, i, i, eu_html_escape(req, value ? value : ""));
    }
    const char *notice =
        eu_param_str(pg->params, "saved")
            ? eu_arena_sprintf(req->arena, "<p class=\"notice\" role=\"status\">%s</p>",
                               t(req, "Your profile has been saved."))
            : "";
    const char *err = pg->error
                          ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                             eu_html_escape(req, pg->error))
                          : "";
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1>%s%s<p><a href=\"/@%s\">%s</a></p><form method=\"post\" action=\"" PROFILE_PATH
        "\" class=\"card\" enctype=\"multipart/form-data\">%s%s<label for=\"display_name\">%s"
        "</label><input type=\"text\" "
        "id=\"display_name\" name=\"display_name\" value=\"%s\" maxlength=\"30\">"
        "<label for=\"note\">%s</label><textarea id=\"note\" name=\"note\" maxlength=\"500\">%s"
        "</textarea><fieldset><legend>%s</legend><p class=\"hint\">%s</p>%s</fieldset>%s%s%s"
        "<button type=\"submit\">%s</button></form>",
        t(req, "Profile"), notice, err, eu_html_escape(req, pg->s->username),
        t(req, "See your public profile"), eu_web_csrf_field(req, pg->s), images(req, o),
        t(req, "Display name"), eu_html_escape(req, dn ? dn : ""), t(req, "Bio"),
        eu_html_escape(req, note ? note : ""), t(req, "Extra fields"),
        t(req, "Up to four items shown as a table on your profile; a link is verified when "
               "that page links back to your profile with rel=\"me\"."),
        rows,
        checkbox(req, "locked", json_is_true(json_object_get(o, "locked")),
                 "Require follow requests", "You approve each new follower by hand."),
        checkbox(req, "bot", json_is_true(json_object_get(o, "bot")), "This is a bot account",
                 "The account mainly acts on its own and may not be watched."),
        checkbox(req, "discoverable", json_is_true(json_object_get(o, "discoverable")),
                 "Suggest the account to others",
                 "It may appear in recommendations and "
                 "directories."),
        t(req, "Save changes"));
    eu_web_settings_reply(req, pg->error ? 422 : 200, PROFILE_PATH, eu_web_t(req, "Profile"), body);
}

static void
drop_json(void *p)
{
    json_decref(p);
}

static void
on_profile_saved(struct eu_req *req, int status, const char *error, void *arg)
{
    struct page *pg = arg;
    if (status == 200) {
        redirect(req, PROFILE_PATH "?saved=1");
        return;
    }
    pg->error = error;
    eu_accounts_credentials_load(req, on_profile, pg);
}

static void
profile(struct eu_req *req, struct page *pg)
{
    /* The API's code acts as the token's account; here the session's. */
    req->auth.user_id = pg->s->user_id;
    req->auth.account_id = pg->s->account_id;
    if (req->method != EU_HTTP_POST) {
        eu_accounts_credentials_load(req, on_profile, pg);
        return;
    }
    if (!eu_web_session_csrf_ok(pg->s, pg->params)) {
        reply_bad_token(req, PROFILE_PATH);
        return;
    }
    /* Only the profile's own fields and images reach the update: nothing
     * the form does not show. */
    json_t *p = json_object();
    static const char *const keys[] = {"display_name", "note",         "locked",
                                       "bot",          "discoverable", "fields_attributes",
                                       "avatar",       "header"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(pg->params, keys[i]);
        if (v)
            json_object_set(p, keys[i], v);
    }
    eu_arena_on_free(req->arena, drop_json, p);
    eu_accounts_update(req, p, on_profile_saved, pg);
}

static void
profile_page(struct eu_req *req)
{
    start(req, profile);
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

/* ----------------------------------------------------------- migration */

#define MIGRATION_PATH "/settings/migration"

static void
on_migration(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *pg = arg;
    json_t *aliases = PQntuples(res) ? json_loads(PQgetvalue(res, 0, 0), 0, NULL) : NULL;
    const char *moved = PQntuples(res) ? PQgetvalue(res, 0, 1) : "";
    const char *inputs = "";
    for (size_t i = 0; i < EU_MIGRATION_ALIASES_MAX; i++) {
        const char *v = json_string_value(json_array_get(aliases, i));
        inputs = eu_arena_sprintf(
            req->arena,
            "%s<label for=\"alias-%zu\">%s %zu</label><input type=\"url\" id=\"alias-%zu\" "
            "name=\"also_known_as_uris[]\" value=\"%s\" placeholder=\"https://\">",
            inputs, i, t(req, "Old account"), i + 1, i, eu_html_escape(req, v ? v : ""));
    }
    json_decref(aliases);
    const char *me =
        eu_arena_sprintf(req->arena, "%s/users/%s", eu_req_base_url(req), pg->s->username);
    const char *notice = "";
    const char *done = eu_param_str(pg->params, "done");
    if (done && strcmp(done, "aliases") == 0)
        notice = t(req, "Your aliases have been saved.");
    else if (done && strcmp(done, "moved") == 0)
        notice = t(req, "Your account is moving: your followers are being told.");
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1>%s%s%s<h2>%s</h2><p>%s <code>%s</code></p><form method=\"post\" "
        "action=\"" MIGRATION_PATH "\" class=\"card\">%s<input type=\"hidden\" name=\"do\" "
        "value=\"alias\">%s<button type=\"submit\">%s</button></form><h2>%s</h2><p>%s</p>"
        "<form method=\"post\" action=\"" MIGRATION_PATH "\" class=\"card\">%s<input "
        "type=\"hidden\" name=\"do\" value=\"move\"><label for=\"moved_to_uri\">%s</label>"
        "<input type=\"url\" id=\"moved_to_uri\" name=\"moved_to_uri\" required "
        "placeholder=\"https://\"><label for=\"password\">%s</label><input type=\"password\" "
        "id=\"password\" name=\"password\" autocomplete=\"current-password\" required>"
        "<button type=\"submit\" class=\"danger\">%s</button></form>",
        t(req, "Account migration"),
        *notice ? eu_arena_sprintf(req->arena, "<p class=\"notice\" role=\"status\">%s</p>", notice)
                : "",
        pg->error ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                     eu_html_escape(req, pg->error))
                  : "",
        *moved ? eu_arena_sprintf(req->arena, "<p>%s <code>%s</code></p>",
                                  t(req, "This account has moved to"), eu_html_escape(req, moved))
               : "",
        t(req, "Moving from another account"),
        t(req, "To move an old account here, list it below first; its server then lets the old "
               "account move to this one, which is"),
        eu_html_escape(req, me), eu_web_csrf_field(req, pg->s), inputs, t(req, "Save aliases"),
        t(req, "Moving to another account"),
        t(req, "Your followers are moved to the new account, which must list this one as an "
               "alias. This account then only points there. You can move once every 30 days."),
        eu_web_csrf_field(req, pg->s), t(req, "The new account's address"), t(req, "Password"),
        t(req, "Move to this account"));
    eu_web_settings_reply(req, pg->error ? pg->status : 200, MIGRATION_PATH,
                          eu_web_t(req, "Account migration"), body);
}

static void
show_migration(struct eu_req *req, struct page *pg)
{
    const char *aid = eu_arena_sprintf(req->arena, "%lld", (long long)pg->s->account_id);
    const char *p[] = {aid};
    eu_req_stmt(req, &eu_web_settings_sql[SETTINGS_MIGRATION], 1, p, on_migration, pg);
}

static void
on_migrated(struct eu_req *req, int status, const char *error, void *arg)
{
    struct page *pg = arg;
    if (status == 200 || status == 202) {
        redirect(req,
                 status == 200 ? MIGRATION_PATH "?done=aliases" : MIGRATION_PATH "?done=moved");
        return;
    }
    pg->error = error;
    pg->status = status < 500 ? 422 : status;
    show_migration(req, pg);
}

static void
migration(struct eu_req *req, struct page *pg)
{
    /* The API's code acts as the token's account; here the session's. */
    req->auth.user_id = pg->s->user_id;
    req->auth.account_id = pg->s->account_id;
    if (req->method != EU_HTTP_POST) {
        show_migration(req, pg);
        return;
    }
    if (!eu_web_session_csrf_ok(pg->s, pg->params)) {
        reply_bad_token(req, MIGRATION_PATH);
        return;
    }
    const char *what = eu_param_str(pg->params, "do");
    if (what && strcmp(what, "move") == 0)
        eu_migration_move_run(req, pg->params, on_migrated, pg);
    else
        eu_migration_alias_run(req, pg->params, on_migrated, pg);
}

static void
migration_page(struct eu_req *req)
{
    start(req, migration);
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
    /* The form may carry an avatar and a header. */
    {GET | POST, PROFILE_PATH, profile_page, NULL, EU_ROUTE_UPLOAD},
    {GET | POST, APPS_PATH, apps_page, NULL, 0},
    {GET | POST, SESSIONS_PATH, sessions_page, NULL, 0},
    {GET | POST, MIGRATION_PATH, migration_page, NULL, 0},
    {0},
};
