/*
 * GET /api/oembed?url=: the oEmbed answer for a local status's URL, as
 * Mastodon's OEmbedSerializer gives it to sites that embed a post (a
 * "rich" type whose html is a blockquote linking to the post, by its
 * author and the tenant), for the URL forms a status has here:
 * BASE/@user/ID and BASE/users/user/statuses/ID. Only public and unlisted
 * statuses of available accounts embed; anything else is 404.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* Mastodon's DEFAULT_WIDTH and cache_age. */
#define OEMBED_WIDTH 400
#define OEMBED_CACHE_AGE 86400
#define USERNAME_MAX 64

enum { OEMBED_STATUS };

const struct eu_sql eu_oembed_sql[] = {
    /* $2 the status id, $3 its author's username as the URL names it. */
    [OEMBED_STATUS] = {"oembed.status",
                       "SELECT a.username, coalesce(a.display_name, '') FROM statuses s"
                       " JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
                       " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND s.local"
                       " AND s.deleted_at IS NULL AND s.visibility <= 1"
                       " AND s.reblog_of_id IS NULL AND a.domain IS NULL"
                       " AND lower(a.username) = lower($3) AND a.suspended_at IS NULL"},
    {0},
};

struct oembed {
    const char *id;
    long long width;
};

static void
on_status(struct eu_req *req, PGresult *res, void *arg)
{
    struct oembed *o = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *base = eu_req_base_url(req);
    const char *user = PQgetvalue(res, 0, 0);
    const char *display = PQgetvalue(res, 0, 1);
    const char *account_url = eu_arena_sprintf(req->arena, "%s/@%s", base, user);
    const char *status_url = eu_arena_sprintf(req->arena, "%s/%s", account_url, o->id);
    const char *html = eu_arena_sprintf(
        req->arena,
        "<blockquote class=\"mastodon-embed\" data-embed-url=\"%s/embed\" style=\"max-width: "
        "540px; min-width: 270px; border: 1px solid #C9C4DA; border-radius: 8px; overflow: "
        "hidden; margin: 0; padding: 0;\"><a href=\"%s\" target=\"_blank\" style=\"display: "
        "flex; flex-direction: column; align-items: center; padding: 24px; text-decoration: "
        "none;\"><div>Post by @%s@%s</div><div>View on %s</div></a></blockquote>",
        status_url, status_url, eu_html_escape(req, user), eu_html_escape(req, req->tenant->domain),
        eu_html_escape(req, req->tenant->domain));
    json_t *out = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:I, s:n}", "type", "rich", "version", "1.0",
        "author_name", *display ? display : user, "author_url", account_url, "provider_name",
        req->tenant->domain, "provider_url", eu_arena_sprintf(req->arena, "%s/", base), "cache_age",
        OEMBED_CACHE_AGE, "html", html, "width", (json_int_t)o->width, "height");
    eu_req_reply_json(req, 200, out);
}

/* The status id and author of a local status URL, or false. */
static bool
parse_url(struct eu_req *req, const char *url, const char **user, const char **id)
{
    const char *base = eu_req_base_url(req);
    size_t n = strlen(base);
    if (!url || strncmp(url, base, n) != 0)
        return false;
    const char *rest = url + n;
    const char *u, *end;
    if (strncmp(rest, "/@", 2) == 0) {
        u = rest + 2;
        end = strchr(u, '/');
        if (!end)
            return false;
        *id = end + 1;
    } else if (strncmp(rest, "/users/", 7) == 0) {
        u = rest + 7;
        end = strchr(u, '/');
        if (!end || strncmp(end, "/statuses/", 10) != 0)
            return false;
        *id = end + 10;
    } else {
        return false;
    }
    if (end == u || (size_t)(end - u) > USERNAME_MAX || !eu_id_is_valid(*id))
        return false;
    *user = eu_arena_strndup(req->arena, u, (size_t)(end - u));
    return true;
}

static void
oembed_show(struct eu_req *req)
{
    const char *user = NULL, *id = NULL;
    if (!parse_url(req, eu_req_query(req, "url"), &user, &id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct oembed *o = eu_arena_calloc(req->arena, sizeof(*o));
    o->id = id;
    const char *w = eu_req_query(req, "maxwidth");
    o->width = w && *w ? strtoll(w, NULL, 10) : OEMBED_WIDTH;
    if (o->width <= 0 || o->width > 10000)
        o->width = OEMBED_WIDTH;
    const char *p[] = {id, user};
    eu_req_stmt(req, &eu_oembed_sql[OEMBED_STATUS], 2, p, on_status, o);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_oembed_routes[] = {
    {EU_HTTP_GET, "/api/oembed", oembed_show, NULL, EU_ROUTE_API},
    {0},
};
