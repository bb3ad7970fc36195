/*
 * Which notifications a user also hears of by mail (tenant migration
 * 0062; the mails are src/social/notification_mail.c), as Mastodon's
 * preferences page keeps them:
 *
 *   GET/POST /settings/preferences/notifications   the signed-in user's
 *        choices, one box a kind (follow, follow_request, mention, reblog,
 *        favourite); the form carries the session's CSRF token.
 *   GET /unsubscribe?token=&type=    the link each mail carries: a page
 *        that asks before turning that kind off.
 *   POST /unsubscribe?token=&type=   turns it off: the page's button, and
 *        RFC 8058's one-click unsubscribe a mail client sends
 *        ("List-Unsubscribe=One-Click").
 *
 * The token is the user's unsubscribe token, looked up under the request's
 * tenant: one of another tenant does nothing here.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "web_internal.h"
#include "websession_internal.h"

#define PAGE_PATH "/settings/preferences/notifications"

enum {
    NMP_LOAD,
    NMP_SAVE,
    NMP_UNSUBSCRIBE,
};

const struct eu_sql eu_notification_mail_prefs_sql[] = {
    [NMP_LOAD] = {"notification_mail_prefs.load",
                  "SELECT notification_emails::text FROM users WHERE tenant_id = $1"
                  " AND id = $2::bigint"},
    /* $3 the choices, a JSON object of the five kinds. */
    [NMP_SAVE] = {"notification_mail_prefs.save",
                  "UPDATE users SET notification_emails = notification_emails || $3::jsonb,"
                  " updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint"},
    /* $2 the token, $3 the kind. */
    [NMP_UNSUBSCRIBE] = {"notification_mail_prefs.unsubscribe",
                         "UPDATE users SET notification_emails = notification_emails"
                         " || jsonb_build_object($3::text, false), updated_at = now()"
                         " WHERE tenant_id = $1 AND unsubscribe_token = $2 RETURNING 1"},
    {0},
};

static const char *const kinds[] = {"follow", "follow_request", "mention", "reblog", "favourite"};
static const char *const labels[] = {
    "Someone followed you",      "Someone requested to follow you", "Someone mentioned you",
    "Someone boosted your post", "Someone favorited your post",
};
#define NKINDS (sizeof(kinds) / sizeof(*kinds))

static const char *
kind_label(const char *type)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (type && strcmp(type, kinds[i]) == 0)
            return labels[i];
    return NULL;
}

/* ----------------------------------------------------- the preferences */

struct prefs {
    json_t *params;
    bool save;
    const struct eu_web_session *s;
};

static void
on_prefs(struct eu_req *req, PGresult *res, void *arg)
{
    struct prefs *p = arg;
    if (PQntuples(res) != 1) {
        eu_web_reply_page(req, 404, "Not found", "<h1>Not found</h1>");
        return;
    }
    json_t *on = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
    const char *boxes = "";
    for (size_t i = 0; i < NKINDS; i++)
        boxes = eu_arena_sprintf(
            req->arena, "%s<label><input type=\"checkbox\" name=\"%s\" value=\"1\"%s> %s</label>",
            boxes, kinds[i], json_is_true(json_object_get(on, kinds[i])) ? " checked" : "",
            labels[i]);
    json_decref(on);
    const char *body =
        eu_arena_sprintf(req->arena,
                         "<h1>E-mail notifications</h1>%s<p>Send an e-mail when:</p>"
                         "<form method=\"post\" action=\"" PAGE_PATH "\">"
                         "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">%s"
                         "<button type=\"submit\">Save</button></form>",
                         p->save ? "<p class=\"status\">Your preferences were saved.</p>" : "",
                         eu_html_escape(req, p->s->csrf), boxes);
    eu_web_reply_page(req, 200, "E-mail notifications", body);
}

static void
load_prefs(struct eu_req *req, struct prefs *p)
{
    char uid[24];
    snprintf(uid, sizeof uid, "%lld", (long long)p->s->user_id);
    const char *params[] = {uid};
    eu_req_stmt(req, &eu_notification_mail_prefs_sql[NMP_LOAD], 1, params, on_prefs, p);
}

static void
on_saved(struct eu_req *req, PGresult *res, void *arg)
{
    load_prefs(req, arg);
}

static void
on_session(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    struct prefs *p = arg;
    p->s = s;
    if (!p->save) {
        load_prefs(req, p);
        return;
    }
    if (!eu_web_session_csrf_ok(s, p->params)) {
        eu_web_reply_page(req, 422, "Invalid authenticity token",
                          "<h1>The form has expired</h1><p class=\"error\">Invalid authenticity "
                          "token: reload the page and try again.</p>");
        return;
    }
    /* An unticked box is not sent: every kind is set, on or off. */
    json_t *choices = json_object();
    for (size_t i = 0; i < NKINDS; i++)
        json_object_set_new(choices, kinds[i],
                            json_boolean(eu_param_str(p->params, kinds[i]) != NULL));
    char *text = json_dumps(choices, JSON_COMPACT);
    json_decref(choices);
    char uid[24];
    snprintf(uid, sizeof uid, "%lld", (long long)s->user_id);
    const char *params[] = {uid, eu_arena_strdup(req->arena, text)};
    free(text);
    eu_req_stmt(req, &eu_notification_mail_prefs_sql[NMP_SAVE], 2, params, on_saved, p);
}

static void
prefs_page(struct eu_req *req, bool save)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct prefs *p = eu_arena_calloc(req->arena, sizeof(*p));
    p->params = params;
    p->save = save;
    eu_web_session_require(req, on_session, p);
}

static void
prefs_show(struct eu_req *req)
{
    prefs_page(req, false);
}

static void
prefs_save(struct eu_req *req)
{
    prefs_page(req, true);
}

/* ------------------------------------------------------- unsubscribe */

/* The token and kind of an unsubscribe request, or NULL after answering. */
static json_t *
unsubscribe_params(struct eu_req *req, const char **token, const char **type)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return NULL;
    }
    *token = eu_param_str(params, "token");
    *type = eu_param_str(params, "type");
    if (!*token || !**token || strlen(*token) > 128 || !kind_label(*type)) {
        eu_web_reply_page(req, 422, "Unsubscribe",
                          "<h1>Unsubscribe</h1><p class=\"error\">This link is not complete: "
                          "open the one in the e-mail.</p>");
        return NULL;
    }
    return params;
}

static void
unsubscribe_ask(struct eu_req *req)
{
    const char *token, *type;
    if (!unsubscribe_params(req, &token, &type))
        return;
    const char *action = eu_arena_sprintf(req->arena, "/unsubscribe?token=%s&type=%s", token, type);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>Unsubscribe</h1><p>Stop e-mails about this from %s: <strong>%s</strong>?</p>"
        "<form method=\"post\" action=\"%s\"><button type=\"submit\">Unsubscribe</button></form>",
        eu_html_escape(req, req->tenant->title), eu_html_escape(req, kind_label(type)),
        eu_html_escape(req, action));
    eu_web_reply_page(req, 200, "Unsubscribe", body);
}

static void
on_unsubscribed(struct eu_req *req, PGresult *res, void *arg)
{
    const char *type = arg;
    if (PQntuples(res) != 1) {
        eu_web_reply_page(req, 404, "Unsubscribe",
                          "<h1>Unsubscribe</h1><p class=\"error\">This link is not valid "
                          "here.</p>");
        return;
    }
    const char *body = eu_arena_sprintf(req->arena,
                                        "<h1>Unsubscribed</h1><p>You will no longer get e-mails "
                                        "about this: <strong>%s</strong>.</p>",
                                        eu_html_escape(req, kind_label(type)));
    eu_web_reply_page(req, 200, "Unsubscribed", body);
}

static void
unsubscribe_do(struct eu_req *req)
{
    const char *token, *type;
    if (!unsubscribe_params(req, &token, &type))
        return;
    const char *params[] = {token, type};
    eu_req_stmt(req, &eu_notification_mail_prefs_sql[NMP_UNSUBSCRIBE], 2, params, on_unsubscribed,
                (void *)type);
}

const struct eu_route eu_notification_mail_prefs_routes[] = {
    {EU_HTTP_GET, PAGE_PATH, prefs_show, NULL, 0},
    {EU_HTTP_POST, PAGE_PATH, prefs_save, NULL, 0},
    {EU_HTTP_GET, "/unsubscribe", unsubscribe_ask, NULL, 0},
    {EU_HTTP_POST, "/unsubscribe", unsubscribe_do, NULL, 0},
    {0},
};
