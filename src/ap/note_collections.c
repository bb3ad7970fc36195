/*
 * The collections of a local status as Mastodon serves them beside its
 * Note: replies (BASE/users/NAME/statuses/ID/replies), a Collection whose
 * first page lists the URIs of the public and unlisted replies, oldest
 * first, 60 a page, walked by min_id; likes and shares (.../likes,
 * .../shares), Collections with only totalItems, the status's counters,
 * as Mastodon 4.4's LikesController and SharesController answer (who
 * liked is nobody else's business).
 *
 * Each is served under the rules of the Note's own GET: only a public or
 * unlisted status of a local account, under its author's address, to
 * whoever authorized fetch lets through; a suspended author's are 403.
 */
#include "eunha/ap.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

/* Mastodon's RepliesController page (DESCENDANTS_LIMIT). */
#define REPLIES_PAGE 60
#define REPLIES_PAGE_SQL "60"

enum {
    NOTE_COLL_STATUS,
    NOTE_COLL_REPLIES,
};

const struct eu_sql eu_ap_note_collections_sql[] = {
    /* $2 the status id, $3 the username the address names (any case). */
    [NOTE_COLL_STATUS] = {"ap_note_collections.status",
                          "SELECT s.favourites_count, s.reblogs_count,"
                          " a.suspended_at IS NOT NULL FROM statuses s JOIN accounts a"
                          " ON a.tenant_id = $1 AND a.id = s.account_id AND a.domain IS NULL"
                          " AND lower(a.username) = lower($3)"
                          " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND s.local"
                          " AND s.deleted_at IS NULL AND s.visibility <= 1"
                          " AND s.reblog_of_id IS NULL"},
    /* $2 the status id, $3 base URL, $4 the cursor (the last id seen) or
     * NULL: the next page of its public and unlisted replies by accounts
     * that are not suspended, as (id, URI). */
    [NOTE_COLL_REPLIES] =
        {"ap_note_collections.replies",
         "SELECT r.id::text, eunha_status_uri(r.local, r.id, r.uri, ra.username,"
         " $3) FROM statuses r JOIN accounts ra ON ra.tenant_id = $1"
         " AND ra.id = r.account_id AND ra.suspended_at IS NULL"
         " WHERE r.tenant_id = $1 AND r.in_reply_to_id = $2::bigint"
         " AND r.deleted_at IS NULL AND r.visibility <= 1"
         " AND r.reblog_of_id IS NULL AND ($4::bigint IS NULL OR r.id > $4::bigint)"
         " ORDER BY r.id LIMIT " REPLIES_PAGE_SQL},
    {0},
};

enum kind { REPLIES, LIKES, SHARES };

struct note_coll {
    enum kind kind;
    const char *username, *id;
    const char *uri; /* the collection's */
    const char *min_id;
    bool page; /* a page was asked for, not the collection */
};

static json_t *
with_context(json_t *o)
{
    json_t *doc = json_pack("{s:s}", "@context", "https://www.w3.org/ns/activitystreams");
    json_object_update(doc, o);
    json_decref(o);
    return doc;
}

static void
on_replies(struct eu_req *req, PGresult *res, void *arg)
{
    struct note_coll *c = arg;
    int n = PQntuples(res);
    json_t *items = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(items, json_string(PQgetvalue(res, i, 1)));
    json_t *page = json_object();
    if (c->page)
        json_object_set_new(
            page, "id",
            json_string(c->min_id ? eu_arena_sprintf(req->arena, "%s?min_id=%s&page=true", c->uri,
                                                     c->min_id)
                                  : eu_arena_sprintf(req->arena, "%s?page=true", c->uri)));
    json_object_set_new(page, "type", json_string("CollectionPage"));
    if (n == REPLIES_PAGE)
        json_object_set_new(page, "next",
                            json_string(eu_arena_sprintf(req->arena, "%s?min_id=%s&page=true",
                                                         c->uri, PQgetvalue(res, n - 1, 0))));
    json_object_set_new(page, "partOf", json_string(c->uri));
    json_object_set_new(page, "items", items);
    if (c->page) {
        eu_ap_reply(req, 200, with_context(page));
        return;
    }
    json_t *o = json_pack("{s:s, s:s, s:o}", "id", c->uri, "type", "Collection", "first", page);
    eu_ap_reply(req, 200, with_context(o));
}

static void
on_status(struct eu_req *req, PGresult *res, void *arg)
{
    struct note_coll *c = arg;
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The author is suspended but not purged, as the Note's own GET. */
    if (PQgetvalue(res, 0, 2)[0] == 't') {
        eu_req_reply_error(req, 403, "This account has been suspended");
        return;
    }
    if (c->kind != REPLIES) {
        const char *count = PQgetvalue(res, 0, c->kind == LIKES ? 0 : 1);
        json_t *o = json_pack("{s:s, s:s, s:I}", "id", c->uri, "type", "Collection", "totalItems",
                              (json_int_t)strtoll(count, NULL, 10));
        eu_ap_reply(req, 200, with_context(o));
        return;
    }
    const char *p[] = {c->id, eu_req_base_url(req), c->min_id};
    eu_req_stmt(req, &eu_ap_note_collections_sql[NOTE_COLL_REPLIES], 3, p, on_replies, c);
}

static void
resume(struct eu_req *req, void *arg)
{
    struct note_coll *c = arg;
    const char *p[] = {c->id, c->username};
    eu_req_stmt(req, &eu_ap_note_collections_sql[NOTE_COLL_STATUS], 2, p, on_status, c);
}

static void
serve(struct eu_req *req, enum kind kind)
{
    const char *user = eu_req_param(req, "username"), *id = eu_req_param(req, "id");
    if (!eu_ap_username_is_valid(user) || !eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct note_coll *c = eu_arena_calloc(req->arena, sizeof(*c));
    static const char *const names[] = {
        [REPLIES] = "replies", [LIKES] = "likes", [SHARES] = "shares"};
    c->kind = kind;
    c->username = user;
    c->id = id;
    c->uri = eu_arena_sprintf(req->arena, "%s/statuses/%s/%s", eu_ap_actor_uri(req, user), id,
                              names[kind]);
    const char *page = eu_req_query(req, "page");
    c->page = page && *page && strcmp(page, "false") != 0 && strcmp(page, "0") != 0;
    const char *min_id = eu_req_query(req, "min_id");
    if (min_id && *min_id) {
        if (!eu_id_is_valid(min_id)) {
            eu_req_reply_error(req, 400, "min_id is not an id");
            return;
        }
        c->min_id = min_id;
    }
    if (eu_ap_fetch_allowed(req, resume, c))
        resume(req, c);
}

static void
replies(struct eu_req *req)
{
    serve(req, REPLIES);
}

static void
likes(struct eu_req *req)
{
    serve(req, LIKES);
}

static void
shares(struct eu_req *req)
{
    serve(req, SHARES);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_note_collections_routes[] = {
    {EU_HTTP_GET, "/users/:username/statuses/:id/replies", replies, NULL, 0},
    {EU_HTTP_GET, "/users/:username/statuses/:id/likes", likes, NULL, 0},
    {EU_HTTP_GET, "/users/:username/statuses/:id/shares", shares, NULL, 0},
    {0},
};
