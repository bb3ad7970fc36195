/*
 * The public HTML pages: a local account's profile (/@username) with its
 * latest public and unlisted posts, one post (/@username/:id), and
 * /users/:username sending browsers to the profile. They exist so links
 * opened from clients land on something readable; Mastodon's web app is not
 * reproduced. Pages are server-rendered from one query each, every value is
 * escaped (posts are re-rendered from their plain source, never copied as
 * HTML), and the Content-Security-Policy forbids scripts altogether.
 *
 * The same addresses serve ActivityPub clients their actor and Note
 * documents (src/ap/), chosen by the Accept header, so every answer says
 * Vary: Accept.
 *
 * The router has no "@" prefix syntax, so "/:acct" and "/:acct/:id" catch
 * every one- and two-segment path no other route claims; anything not
 * starting with "@" gets the usual JSON 404.
 */
#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/ap.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "web_internal.h"

static void
reply_not_found(struct eu_req *req)
{
    eu_web_reply_page(req, 404, "Not found",
                      "<h1>404</h1><p>The page you are looking for isn't here.</p>");
}

/* The username of "@name" on this instance, or NULL (not an "@" path, or
 * a remote "@name@domain" which is not served yet). Arena-owned. */
static const char *
local_username(struct eu_req *req)
{
    const char *acct = eu_req_param(req, "acct");
    if (!acct || acct[0] != '@' || !acct[1] || strlen(acct) > 64)
        return NULL;
    for (const char *c = acct + 1; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return NULL;
    return acct + 1;
}

/* HTML of a post: local posts from their plain source; remote ones (whose
 * HTML came from elsewhere) with tags stripped, then escaped. */
static const char *
post_html(struct eu_req *req, bool local, const char *text, const char *content)
{
    if (local)
        return eu_text_to_simple_html(req, text);
    char *plain = eu_arena_strdup(req->arena, content), *o = plain;
    bool in_tag = false;
    for (const char *p = content; *p; p++) {
        if (*p == '<')
            in_tag = true;
        else if (*p == '>')
            in_tag = false;
        else if (!in_tag)
            *o++ = *p;
    }
    *o = '\0';
    return eu_text_to_simple_html(req, plain);
}

static const char *
display_name(struct eu_req *req, const PGresult *res, int row, int name_col, int user_col)
{
    const char *dn = PQgetvalue(res, row, name_col);
    return eu_html_escape(req, *dn ? dn : PQgetvalue(res, row, user_col));
}

/* Columns: account 0..5, then one post 6..11 (NULL id when none). */
#define PAGE_SQL_ACCOUNT                                                                           \
    "SELECT a.username, a.display_name, a.note,"                                                   \
    " a.followers_count, a.following_count, a.statuses_count,"                                     \
    " s.id, s.text, s.content, s.spoiler_text, eunha_ts(s.created_at), s.local"

enum {
    WEB_PROFILE,
    WEB_STATUS,
};

const struct eu_sql eu_web_sql[] = {
    [WEB_PROFILE] =
        {"web.profile", PAGE_SQL_ACCOUNT
         " FROM accounts a LEFT JOIN LATERAL (SELECT * FROM statuses s WHERE s.tenant_id = $1"
         " AND s.account_id = a.id AND s.deleted_at IS NULL AND s.visibility <= 1"
         " AND s.reblog_of_id IS NULL ORDER BY s.id DESC LIMIT 20) s ON true"
         " WHERE a.tenant_id = $1 AND lower(a.username) = lower($2) AND a.domain IS NULL"
         " AND a.suspended_at IS NULL"
         " ORDER BY s.id DESC"},
    [WEB_STATUS] = {"web.status", PAGE_SQL_ACCOUNT
                    " FROM accounts a JOIN statuses s ON s.tenant_id = $1 AND s.account_id = a.id"
                    " AND s.id = $3::bigint AND s.deleted_at IS NULL AND s.visibility <= 1"
                    " AND s.reblog_of_id IS NULL"
                    " WHERE a.tenant_id = $1 AND lower(a.username) = lower($2) AND a.domain IS NULL"
                    " AND a.suspended_at IS NULL"},
    {0},
};

static const char *
header_html(struct eu_req *req, const PGresult *res)
{
    const char *user = eu_html_escape(req, PQgetvalue(res, 0, 0));
    return eu_arena_sprintf(
        req->arena,
        "<header><h1><a href=\"/@%s\">%s</a></h1><p>@%s@%s</p>%s<p>%s posts, %s following, "
        "%s followers</p></header>",
        user, display_name(req, res, 0, 1, 0), user, eu_html_escape(req, req->tenant->domain),
        eu_text_to_simple_html(req, PQgetvalue(res, 0, 2)), PQgetvalue(res, 0, 5),
        PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 3));
}

static const char *
post_block(struct eu_req *req, const PGresult *res, int row)
{
    const char *user = eu_html_escape(req, PQgetvalue(res, row, 0));
    const char *id = PQgetvalue(res, row, 6);
    const char *spoiler = PQgetvalue(res, row, 9);
    const char *body = post_html(req, strcmp(PQgetvalue(res, row, 11), "t") == 0,
                                 PQgetvalue(res, row, 7), PQgetvalue(res, row, 8));
    if (*spoiler)
        body = eu_arena_sprintf(req->arena, "<details><summary>%s</summary>%s</details>",
                                eu_html_escape(req, spoiler), body);
    return eu_arena_sprintf(req->arena,
                            "<article class=\"status\">%s<p><a href=\"/@%s/%s\"><time "
                            "datetime=\"%s\">%s</time></a></p></article>",
                            body, user, id, PQgetvalue(res, row, 10), PQgetvalue(res, row, 10));
}

static void
on_profile(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) < 1) {
        reply_not_found(req);
        return;
    }
    const char *posts = "";
    for (int i = 0; i < PQntuples(res); i++)
        if (!PQgetisnull(res, i, 6))
            posts = eu_arena_sprintf(req->arena, "%s%s", posts, post_block(req, res, i));
    if (!*posts)
        posts = "<p>No posts yet.</p>";
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\">%s</div><section class=\"card\" aria-label=\"Posts\">%s</section>",
        header_html(req, res), posts);
    const char *title = eu_arena_sprintf(req->arena, "%s (@%s@%s)", PQgetvalue(res, 0, 1),
                                         PQgetvalue(res, 0, 0), req->tenant->domain);
    eu_web_reply_page(req, 200, title, body);
}

void
eu_web_profile(struct eu_req *req)
{
    const char *user = local_username(req);
    if (!user) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (eu_ap_accept_is_activity(req)) {
        eu_ap_actor_show(req, user);
        return;
    }
    eu_req_add_header(req, "Vary", "Accept");
    const char *p[] = {user};
    eu_req_stmt(req, &eu_web_sql[WEB_PROFILE], 1, p, on_profile, NULL);
}

static void
on_status(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) != 1) {
        reply_not_found(req);
        return;
    }
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\">%s</div><section class=\"card\" aria-label=\"Posts\">%s</section>",
        header_html(req, res), post_block(req, res, 0));
    const char *title = eu_arena_sprintf(req->arena, "%s (@%s@%s)", PQgetvalue(res, 0, 1),
                                         PQgetvalue(res, 0, 0), req->tenant->domain);
    eu_web_reply_page(req, 200, title, body);
}

void
eu_web_status(struct eu_req *req)
{
    const char *user = local_username(req);
    if (!user) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *id = eu_req_param(req, "id");
    if (eu_ap_accept_is_activity(req)) {
        eu_ap_note_show(req, user, id);
        return;
    }
    eu_req_add_header(req, "Vary", "Accept");
    if (!eu_id_is_valid(id)) {
        reply_not_found(req);
        return;
    }
    const char *p[] = {user, id};
    eu_req_stmt(req, &eu_web_sql[WEB_STATUS], 2, p, on_status, NULL);
}

void
eu_web_users(struct eu_req *req)
{
    const char *user = eu_req_param(req, "username");
    if (eu_ap_accept_is_activity(req)) {
        eu_ap_actor_show(req, user);
        return;
    }
    eu_req_add_header(req, "Vary", "Accept");
    char *location = eu_arena_sprintf(req->arena, "/@%s", user);
    for (const char *c = user; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_') {
            reply_not_found(req);
            return;
        }
    eu_req_add_header(req, "Location", location);
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_web_routes[] = {
    {EU_HTTP_GET, "/:acct", eu_web_profile, NULL, 0},
    {EU_HTTP_GET, "/:acct/:id", eu_web_status, NULL, 0},
    {EU_HTTP_GET, "/users/:username", eu_web_users, NULL, 0},
    {0},
};
