/*
 * WebFinger (RFC 7033) as Mastodon answers it: /.well-known/webfinger?
 * resource= names a local account by "acct:user@domain" (the "acct:" may
 * be left out, the user's case does not matter) or by the URI of its actor
 * or profile page, and the answer links its actor document. The domain or
 * host must be this tenant's: a tenant never answers for another, even one
 * in the same database. The instance actor answers to acct:DOMAIN@DOMAIN,
 * as Mastodon's does.
 */
#include "eunha/ap.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

#define JRD_CONTENT_TYPE "application/jrd+json; charset=utf-8"

/* What a resource names. */
enum target { NOT_FOUND, BAD, USER, INSTANCE };

static bool
is_our_host(const struct eu_req *req, const char *host, size_t len)
{
    const char *domain = req->tenant->domain;
    return (strlen(domain) == len && strncasecmp(domain, host, len) == 0) ||
           (req->host && strlen(req->host) == len && strncasecmp(req->host, host, len) == 0);
}

/* An http(s) URI: BASE/users/NAME, BASE/@NAME or BASE/actor of this
 * tenant. *user gets NAME (arena). */
static enum target
parse_uri(struct eu_req *req, const char *uri, const char **user)
{
    const char *host = strstr(uri, "://") + 3;
    size_t hlen = strcspn(host, "/?#");
    if (!is_our_host(req, host, hlen))
        return NOT_FOUND;
    const char *path = host + hlen;
    size_t plen = strcspn(path, "?#");
    char *p = eu_arena_strndup(req->arena, path, plen);
    if (strcmp(p, "/actor") == 0)
        return INSTANCE;
    if (strncmp(p, "/users/", 7) == 0)
        *user = p + 7;
    else if (strncmp(p, "/@", 2) == 0)
        *user = p + 2;
    else
        return NOT_FOUND;
    return eu_ap_username_is_valid(*user) ? USER : NOT_FOUND;
}

/* "user@domain" (after "acct:"). */
static enum target
parse_acct(struct eu_req *req, const char *acct, const char **user)
{
    const char *at = strrchr(acct, '@');
    if (!at)
        return BAD;
    if (!is_our_host(req, at + 1, strlen(at + 1)))
        return NOT_FOUND;
    char *name = eu_arena_strndup(req->arena, acct, (size_t)(at - acct));
    if (strcasecmp(name, req->tenant->domain) == 0)
        return INSTANCE;
    *user = name;
    return eu_ap_username_is_valid(name) ? USER : NOT_FOUND;
}

static enum target
parse_resource(struct eu_req *req, const char *resource, const char **user)
{
    if (!resource || !*resource)
        return BAD;
    if (strncasecmp(resource, "https://", 8) == 0 || strncasecmp(resource, "http://", 7) == 0)
        return parse_uri(req, resource, user);
    if (strncasecmp(resource, "acct:", 5) == 0)
        resource += 5;
    return parse_acct(req, resource, user);
}

static json_t *
link(const char *rel, const char *type, const char *href)
{
    return json_pack("{s:s, s:s, s:s}", "rel", rel, "type", type, "href", href);
}

static void
on_account(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) != 1 || PQgetvalue(res, 0, EU_AP_ACTOR_USABLE)[0] != 't') {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* A suspended account is still found, as in Mastodon until the account
     * is deleted: its actor says it is suspended (actors.c). */
    const char *base = eu_req_base_url(req);
    const char *username = PQgetvalue(res, 0, EU_AP_ACTOR_USERNAME);
    const char *actor = eu_ap_actor_uri(req, username);
    const char *page = eu_arena_sprintf(req->arena, "%s/@%s", base, username);
    json_t *jrd = json_pack(
        "{s:s, s:[s, s], s:[o, o, {s:s, s:s}]}", "subject",
        eu_arena_sprintf(req->arena, "acct:%s@%s", username, req->tenant->domain), "aliases", page,
        actor, "links", link("http://webfinger.net/rel/profile-page", "text/html", page),
        link("self", "application/activity+json", actor), "rel",
        "http://ostatus.org/schema/1.0/subscribe", "template",
        eu_arena_sprintf(req->arena, "%s/authorize_interaction?uri={uri}", base));
    eu_req_reply_json_typed(req, 200, JRD_CONTENT_TYPE, jrd);
}

static void
on_instance_actor(const struct eu_ap_instance_actor *ia, enum eu_db_status st, void *arg)
{
    struct eu_req *req = arg;
    eu_req_enter(req);
    if (!ia) {
        eu_req_reply_db_error(req, st);
        return;
    }
    const char *base = eu_req_base_url(req), *domain = req->tenant->domain;
    const char *actor = eu_arena_sprintf(req->arena, "%s/actor", base);
    json_t *jrd = json_pack(
        "{s:s, s:[s], s:[o, o]}", "subject",
        eu_arena_sprintf(req->arena, "acct:%s@%s", domain, domain), "aliases", actor, "links",
        link("http://webfinger.net/rel/profile-page", "text/html",
             eu_arena_sprintf(req->arena, "%s/about/more?instance_actor=true", base)),
        link("self", "application/activity+json", actor));
    eu_req_reply_json_typed(req, 200, JRD_CONTENT_TYPE, jrd);
}

void
eu_ap_webfinger(struct eu_req *req)
{
    const char *user = NULL;
    switch (parse_resource(req, eu_req_query(req, "resource"), &user)) {
    case BAD:
        eu_req_reply_error(req, 400, "The resource parameter must be acct:user@domain or a URI");
        return;
    case NOT_FOUND:
        eu_req_reply_error(req, 404, "Record not found");
        return;
    case INSTANCE:
        eu_ap_instance_actor(req->app, req->tenant, on_instance_actor, req);
        return;
    case USER: {
        const char *p[] = {user, eu_req_base_url(req)};
        eu_req_stmt(req, eu_ap_actor_stmt, 2, p, on_account, NULL);
        return;
    }
    }
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_webfinger_routes[] = {
    {EU_HTTP_GET, "/.well-known/webfinger", eu_ap_webfinger, NULL, EU_ROUTE_CORS},
    {0},
};
