/*
 * An account's collections as Mastodon pages them: the outbox (Create and
 * Announce activities of its public and unlisted statuses, 20 a page,
 * newest first), followers and following (actor URIs), featured (pinned
 * statuses as Notes), featured tags (Hashtags) and endorsements (the
 * accounts it features, Mastodon 4.4's), plus the instance actor's empty
 * outbox. Totals come from the counter columns and pages walk an index
 * from a cursor (max_id / min_id), so no read grows with how much an
 * account has written or how many follow it.
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
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

/* Mastodon's page sizes: outbox 20, followers and following 12. */
#define OUTBOX_PAGE 20
#define FOLLOWS_PAGE 12
/* Mastodon lets an account pin 5; the cap only bounds the page. */
#define FEATURED_MAX 20
/* Mastodon features 10 hashtags; a remote account's learnt ones are
 * capped the same in the answer. */
#define FEATURED_TAGS_MAX 20
/* Endorsements have no limit in Mastodon; the collection shows the
 * newest this many (Mastodon's largest API page of accounts). */
#define ENDORSEMENTS_MAX 80

enum {
    COLLECTIONS_OUTBOX,
    COLLECTIONS_FOLLOWERS,
    COLLECTIONS_FOLLOWING,
    COLLECTIONS_FEATURED,
    COLLECTIONS_FEATURED_TAGS,
    COLLECTIONS_ENDORSEMENTS,
};

const struct eu_sql eu_ap_collections_sql[] = {
    /* $2 account id, $3 base URL, then the page's four. */
    [COLLECTIONS_OUTBOX] = {"ap_collections.outbox",
                            "SELECT " EU_AP_NOTE_COLUMNS EU_AP_NOTE_FROM
                            " WHERE s.tenant_id = $1 AND s.account_id = $2::bigint AND s.local"
                            " AND s.deleted_at IS NULL AND s.visibility <= 1" EU_AP_REBLOG_SHOWN,
                            "s.id", 4},
    [COLLECTIONS_FOLLOWERS] =
        {"ap_collections.followers",
         "SELECT f.id, eunha_actor_uri(x.domain, x.username, x.uri, $3) FROM follows f JOIN"
         " accounts x"
         " ON x.tenant_id = $1 AND x.id = f.account_id"
         " WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint",
         "f.id", 4},
    [COLLECTIONS_FOLLOWING] =
        {"ap_collections.following",
         "SELECT f.id, eunha_actor_uri(x.domain, x.username, x.uri, $3) FROM follows f JOIN"
         " accounts x"
         " ON x.tenant_id = $1 AND x.id = f.target_account_id"
         " WHERE f.tenant_id = $1 AND f.account_id = $2::bigint",
         "f.id", 4},
    /* $2 account id, $3 base URL, $4 the cap. */
    [COLLECTIONS_FEATURED] =
        {"ap_collections.featured",
         "SELECT " EU_AP_NOTE_COLUMNS EU_AP_NOTE_FROM
         " JOIN status_pins sp ON sp.tenant_id = $1 AND sp.status_id = s.id"
         " AND sp.account_id = s.account_id"
         " WHERE s.tenant_id = $1 AND s.account_id = $2::bigint AND s.local"
         " AND s.deleted_at IS NULL AND s.visibility <= 1 AND s.reblog_of_id IS NULL"
         " ORDER BY sp.id DESC LIMIT $4::int"},
    /* $2 account id, $3 the cap: featured hashtags' names (the API's
     * limit is 10; the cap only bounds the answer). */
    [COLLECTIONS_FEATURED_TAGS] = {"ap_collections.featured_tags",
                                   "SELECT f.name FROM featured_tags f WHERE f.tenant_id = $1"
                                   " AND f.account_id = $2::bigint ORDER BY f.id LIMIT $3::int"},
    /* $2 account id, $3 base URL, $4 the cap: endorsed accounts' URIs. */
    [COLLECTIONS_ENDORSEMENTS] =
        {"ap_collections.endorsements",
         "SELECT eunha_actor_uri(x.domain, x.username, x.uri, $3) FROM account_pins p"
         " JOIN accounts x ON x.tenant_id = $1 AND x.id = p.target_account_id"
         " AND x.suspended_at IS NULL"
         " WHERE p.tenant_id = $1 AND p.account_id = $2::bigint ORDER BY p.id DESC"
         " LIMIT $4::int"},
    {0},
};

enum kind { OUTBOX, FOLLOWERS, FOLLOWING, FEATURED, FEATURED_TAGS, ENDORSEMENTS };

struct coll {
    enum kind kind;
    const char *id; /* the collection's URI */
    const char *account_id;
    struct eu_page page;
};

static json_t *
with_context(json_t *o)
{
    json_t *doc = json_pack("{s:s}", "@context", "https://www.w3.org/ns/activitystreams");
    json_object_update(doc, o);
    json_decref(o);
    return doc;
}

static bool
page_requested(struct eu_req *req)
{
    const char *p = eu_req_query(req, "page");
    return p && *p && strcmp(p, "false") != 0 && strcmp(p, "0") != 0;
}

/* A page's URI: the collection's with page and the page's cursor. */
static const char *
page_uri(struct eu_req *req, const char *coll, const char *page, const char *key,
         const char *cursor)
{
    if (!cursor)
        return eu_arena_sprintf(req->arena, "%s?page=%s", coll, page);
    return eu_arena_sprintf(req->arena, "%s?%s=%s&page=%s", coll, key, cursor, page);
}

/* The URI this page was asked by, for its "id". */
static const char *
this_page_uri(struct eu_req *req, struct coll *c, const char *page)
{
    if (c->page.max_id)
        return page_uri(req, c->id, page, "max_id", c->page.max_id);
    if (c->page.min_id)
        return page_uri(req, c->id, page, "min_id", c->page.min_id);
    return page_uri(req, c->id, page, NULL, NULL);
}

/* Newest first whatever the direction the page was read in. */
static int
row_at(const PGresult *res, const struct coll *c, int i)
{
    return eu_page_is_ascending(&c->page) ? PQntuples(res) - 1 - i : i;
}

static json_t *
page_json(struct eu_req *req, struct coll *c, const char *page, json_t *items, const char *newest,
          const char *oldest, int limit)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(this_page_uri(req, c, page)));
    json_object_set_new(o, "type", json_string("OrderedCollectionPage"));
    if (oldest && json_array_size(items) == (size_t)limit)
        json_object_set_new(o, "next", json_string(page_uri(req, c->id, "true", "max_id", oldest)));
    if (newest)
        json_object_set_new(o, "prev", json_string(page_uri(req, c->id, "true", "min_id", newest)));
    json_object_set_new(o, "partOf", json_string(c->id));
    json_object_set_new(o, "orderedItems", items);
    return with_context(o);
}

static void
on_outbox_page(struct eu_req *req, PGresult *res, void *arg)
{
    struct coll *c = arg;
    const char *base = eu_req_base_url(req);
    json_t *items = json_array();
    int n = PQntuples(res);
    for (int i = 0; i < n; i++) {
        int row = row_at(res, c, i);
        /* A boost of something since deleted has nothing to announce. */
        json_t *a = eu_ap_activity_json(req->app, base, req->tenant->domain, res, row);
        if (json_is_null(json_object_get(a, "object")))
            json_decref(a);
        else
            json_array_append_new(items, a);
    }
    const char *newest = n ? eu_ap_note_row_id(res, row_at(res, c, 0)) : NULL;
    const char *oldest = n ? eu_ap_note_row_id(res, row_at(res, c, n - 1)) : NULL;
    json_t *doc = page_json(req, c, "true", items, newest, oldest, OUTBOX_PAGE);
    /* Items may hold Notes: their terms are the Note's. */
    json_object_set_new(doc, "@context", eu_ap_note_context());
    eu_ap_reply(req, 200, doc);
}

static void
on_follows_page(struct eu_req *req, PGresult *res, void *arg)
{
    struct coll *c = arg;
    json_t *items = json_array();
    int n = PQntuples(res);
    for (int i = 0; i < n; i++)
        json_array_append_new(items, json_string(PQgetvalue(res, row_at(res, c, i), 1)));
    const char *newest = n ? PQgetvalue(res, row_at(res, c, 0), 0) : NULL;
    const char *oldest = n ? PQgetvalue(res, row_at(res, c, n - 1), 0) : NULL;
    const char *page = eu_req_query(req, "page");
    eu_ap_reply(req, 200, page_json(req, c, page, items, newest, oldest, FOLLOWS_PAGE));
}

static void
on_featured(struct eu_req *req, PGresult *res, void *arg)
{
    struct coll *c = arg;
    const char *base = eu_req_base_url(req);
    json_t *items = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        json_t *note = eu_ap_note_json(req->app, base, req->tenant->domain, res, i);
        if (note)
            json_array_append_new(items, note);
    }
    json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "id", c->id, "type", "OrderedCollection",
                          "totalItems", (json_int_t)json_array_size(items), "orderedItems", items);
    eu_ap_reply(req, 200, eu_ap_note_with_context(o));
}

/* Featured hashtags as Mastodon's featuredTags collection: an unordered
 * Collection of Hashtag objects whose href is the account's page of the
 * tag. */
static void
on_featured_tags(struct eu_req *req, PGresult *res, void *arg)
{
    struct coll *c = arg;
    const char *user = eu_req_param(req, "username");
    json_t *items = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        const char *name = PQgetvalue(res, i, 0);
        char *lower = eu_arena_strdup(req->arena, name);
        for (char *p = lower; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        json_array_append_new(items, json_pack("{s:s, s:s, s:s}", "type", "Hashtag", "href",
                                               eu_arena_sprintf(req->arena, "%s/@%s/tagged/%s",
                                                                eu_req_base_url(req), user, lower),
                                               "name", eu_arena_sprintf(req->arena, "#%s", name)));
    }
    json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "id", c->id, "type", "Collection", "totalItems",
                          (json_int_t)json_array_size(items), "items", items);
    eu_ap_reply(req, 200, with_context(o));
}

/* Endorsed accounts: a Collection of actor URIs. */
static void
on_endorsements(struct eu_req *req, PGresult *res, void *arg)
{
    struct coll *c = arg;
    json_t *items = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(items, json_string(PQgetvalue(res, i, 0)));
    json_t *o = json_pack("{s:s, s:s, s:I, s:o}", "id", c->id, "type", "Collection", "totalItems",
                          (json_int_t)json_array_size(items), "items", items);
    eu_ap_reply(req, 200, with_context(o));
}

/* The collection itself, without a page: its total and first page. */
static void
reply_collection(struct eu_req *req, struct coll *c, const PGresult *actor)
{
    int col = c->kind == OUTBOX      ? EU_AP_ACTOR_STATUSES
              : c->kind == FOLLOWERS ? EU_AP_ACTOR_FOLLOWERS
                                     : EU_AP_ACTOR_FOLLOWING;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(c->id));
    json_object_set_new(o, "type", json_string("OrderedCollection"));
    json_object_set_new(o, "totalItems",
                        json_integer(strtoll(PQgetvalue(actor, 0, col), NULL, 10)));
    if (c->kind == OUTBOX) {
        json_object_set_new(o, "first", json_string(page_uri(req, c->id, "true", NULL, NULL)));
        json_object_set_new(o, "last", json_string(page_uri(req, c->id, "true", "min_id", "0")));
    } else {
        json_object_set_new(o, "first", json_string(page_uri(req, c->id, "1", NULL, NULL)));
    }
    eu_ap_reply(req, 200, with_context(o));
}

static void
on_account(struct eu_req *req, PGresult *res, void *arg)
{
    struct coll *c = arg;
    if (PQntuples(res) != 1 || PQgetvalue(res, 0, EU_AP_ACTOR_USABLE)[0] != 't') {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* Mastodon's answer for an account suspended but not yet purged. */
    if (PQgetvalue(res, 0, EU_AP_ACTOR_SUSPENDED)[0] == 't') {
        eu_req_reply_error(req, 403, "This account has been suspended");
        return;
    }
    c->account_id = eu_arena_strdup(req->arena, PQgetvalue(res, 0, EU_AP_ACTOR_ID));
    const char *base = eu_req_base_url(req);
    if (c->kind == FEATURED) {
        char cap[12];
        snprintf(cap, sizeof(cap), "%d", FEATURED_MAX);
        const char *p[] = {c->account_id, base, cap};
        eu_req_stmt(req, &eu_ap_collections_sql[COLLECTIONS_FEATURED], 3, p, on_featured, c);
        return;
    }
    if (c->kind == FEATURED_TAGS) {
        char cap[12];
        snprintf(cap, sizeof(cap), "%d", FEATURED_TAGS_MAX);
        const char *p[] = {c->account_id, cap};
        eu_req_stmt(req, &eu_ap_collections_sql[COLLECTIONS_FEATURED_TAGS], 2, p, on_featured_tags,
                    c);
        return;
    }
    if (c->kind == ENDORSEMENTS) {
        char cap[12];
        snprintf(cap, sizeof(cap), "%d", ENDORSEMENTS_MAX);
        const char *p[] = {c->account_id, base, cap};
        eu_req_stmt(req, &eu_ap_collections_sql[COLLECTIONS_ENDORSEMENTS], 3, p, on_endorsements,
                    c);
        return;
    }
    if (!page_requested(req)) {
        reply_collection(req, c, res);
        return;
    }
    int size = c->kind == OUTBOX ? OUTBOX_PAGE : FOLLOWS_PAGE;
    eu_page_parse(req, &c->page, size, size);
    c->page.since_id = NULL;
    const char *p[6] = {c->account_id, base};
    eu_page_params(&c->page, p + 2);
    if (c->kind == OUTBOX)
        eu_req_stmt_page(req, &eu_ap_collections_sql[COLLECTIONS_OUTBOX], &c->page, 6, p,
                         on_outbox_page, c);
    else
        eu_req_stmt_page(req,
                         &eu_ap_collections_sql[c->kind == FOLLOWERS ? COLLECTIONS_FOLLOWERS
                                                                     : COLLECTIONS_FOLLOWING],
                         &c->page, 6, p, on_follows_page, c);
}

struct serve_args {
    enum kind kind;
    const char *suffix;
};

static void serve_resume(struct eu_req *req, void *arg);

static void
serve(struct eu_req *req, enum kind kind, const char *suffix)
{
    struct serve_args *sa = eu_arena_calloc(req->arena, sizeof(*sa));
    sa->kind = kind;
    sa->suffix = suffix;
    if (eu_ap_fetch_allowed(req, serve_resume, sa))
        serve_resume(req, sa);
}

static void
serve_resume(struct eu_req *req, void *arg)
{
    const struct serve_args *sa = arg;
    enum kind kind = sa->kind;
    const char *suffix = sa->suffix;
    const char *user = eu_req_param(req, "username");
    if (!eu_ap_username_is_valid(user)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct coll *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->kind = kind;
    c->id = eu_arena_sprintf(req->arena, "%s/%s", eu_ap_actor_uri(req, user), suffix);
    const char *p[] = {user, eu_req_base_url(req)};
    eu_req_stmt(req, eu_ap_actor_stmt, 2, p, on_account, c);
}

void
eu_ap_outbox(struct eu_req *req)
{
    serve(req, OUTBOX, "outbox");
}

void
eu_ap_followers(struct eu_req *req)
{
    serve(req, FOLLOWERS, "followers");
}

void
eu_ap_following(struct eu_req *req)
{
    serve(req, FOLLOWING, "following");
}

void
eu_ap_featured(struct eu_req *req)
{
    serve(req, FEATURED, "collections/featured");
}

void
eu_ap_featured_tags(struct eu_req *req)
{
    serve(req, FEATURED_TAGS, "collections/tags");
}

void
eu_ap_endorsements(struct eu_req *req)
{
    serve(req, ENDORSEMENTS, "collections/endorsements");
}

/* The instance actor writes nothing: its outbox is empty, in Mastodon's
 * shape so a peer that pages it finds the end at once. */
void
eu_ap_instance_outbox(struct eu_req *req)
{
    struct coll c = {.id = eu_arena_sprintf(req->arena, "%s/actor/outbox", eu_req_base_url(req))};
    json_t *o;
    if (page_requested(req))
        o = json_pack("{s:s, s:s, s:s, s:[]}", "id", page_uri(req, c.id, "true", NULL, NULL),
                      "type", "OrderedCollectionPage", "partOf", c.id, "orderedItems");
    else
        o = json_pack("{s:s, s:s, s:i, s:s, s:s}", "id", c.id, "type", "OrderedCollection",
                      "totalItems", 0, "first", page_uri(req, c.id, "true", NULL, NULL), "last",
                      page_uri(req, c.id, "true", "min_id", "0"));
    eu_ap_reply(req, 200, with_context(o));
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_collections_routes[] = {
    {EU_HTTP_GET, "/actor/outbox", eu_ap_instance_outbox, NULL, 0},
    {EU_HTTP_GET, "/users/:username/outbox", eu_ap_outbox, NULL, 0},
    {EU_HTTP_GET, "/users/:username/followers", eu_ap_followers, NULL, 0},
    {EU_HTTP_GET, "/users/:username/following", eu_ap_following, NULL, 0},
    {EU_HTTP_GET, "/users/:username/collections/featured", eu_ap_featured, NULL, 0},
    {EU_HTTP_GET, "/users/:username/collections/tags", eu_ap_featured_tags, NULL, 0},
    {EU_HTTP_GET, "/users/:username/collections/endorsements", eu_ap_endorsements, NULL, 0},
    {0},
};
