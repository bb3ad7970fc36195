/*
 * Featured hashtags and featured profiles as Mastodon's API shows them: the
 * hashtags an account puts on its profile (/api/v1/featured_tags, create,
 * delete, suggestions from the tags it used lately, 4.4's
 * /api/v1/tags/:name/feature and unfeature, and any account's list), and
 * the accounts it endorses (/api/v1/endorsements and 4.4's
 * /api/v1/accounts/:id/endorsements; endorsing itself is a relationship
 * action in relationships.c). A featured tag keeps no counter: its
 * statuses_count and last_status_at are read from the owner's public and
 * unlisted statuses when it is shown, so nothing has to follow every post.
 * Featuring and unfeaturing a hashtag tells followers with an Add or
 * Remove of the Hashtag (src/ap/outbox.c); the collections peers read are
 * served in src/ap/collections.c.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "accounts_internal.h"
#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "social_internal.h"

/* Mastodon's FeaturedTag::LIMIT, for local accounts. */
#define FEATURED_TAGS_LIMIT 10
/* Mastodon's Tag.recently_used(...).limit(10), and how far back it looks. */
#define SUGGESTIONS_LIMIT 10
#define SUGGESTIONS_RECENT 1000

enum {
    FEATURED_OF_ACCOUNT,
    FEATURED_ONE,
    FEATURED_CREATE,
    FEATURED_DELETE,
    FEATURED_DELETE_NAME,
    FEATURED_SUGGESTIONS,
    FEATURED_ENDORSEMENTS,
    FEATURED_ACCOUNT_USABLE,
};

/*
 * A featured tag's columns, f the featured_tags row and a its account: id,
 * name, the account's username and domain (the url is
 * BASE/@acct/tagged/name, as Mastodon's short_account_tag_url), the count
 * of the account's public and unlisted statuses with the tag, and the day
 * of the newest (ISO date, as Mastodon's last_status_at).
 */
#define FEATURED_COLUMNS                                                                           \
    "f.id::text, f.name, a.username, a.domain, u.n::text, to_char(u.last AT TIME ZONE 'UTC',"      \
    " 'YYYY-MM-DD')"
#define FEATURED_USAGE                                                                             \
    " LEFT JOIN LATERAL (SELECT count(*) AS n, max(s.created_at) AS last FROM statuses_tags st"    \
    "  JOIN statuses s ON s.tenant_id = $1 AND s.id = st.status_id"                                \
    "  WHERE st.tenant_id = $1 AND st.tag_id = f.tag_id AND s.account_id = f.account_id"           \
    "  AND s.deleted_at IS NULL AND s.visibility <= 1 AND s.reblog_of_id IS NULL) u ON true"

const struct eu_sql eu_featured_sql[] = {
    /* $2 the account: one row with a NULL id when it features nothing,
     * none when there is no such account. */
    [FEATURED_OF_ACCOUNT] =
        {"featured.of_account",
         "SELECT " FEATURED_COLUMNS " FROM accounts a"
         " LEFT JOIN featured_tags f ON f.tenant_id = $1 AND f.account_id = a.id" FEATURED_USAGE
         " WHERE a.tenant_id = $1 AND a.id = $2::bigint"
         " AND a.suspended_at IS NULL ORDER BY f.id"},
    /* $2 the account, $3 the featured tag. */
    [FEATURED_ONE] =
        {"featured.one",
         "SELECT " FEATURED_COLUMNS " FROM featured_tags f JOIN accounts a"
         " ON a.tenant_id = $1 AND a.id = f.account_id" FEATURED_USAGE
         " WHERE f.tenant_id = $1 AND f.account_id = $2::bigint AND f.id = $3::bigint"},
    /*
     * $2 the account features $3 (the name as typed) unless it already
     * features $4 of them: how many it had, the new row's id (NULL when
     * none was made) and whether the tag was featured already. The tag is
     * made on first use, as Mastodon's find_or_create_by_names.
     */
    [FEATURED_CREATE] =
        {"featured.create",
         "WITH cnt AS (SELECT count(*) AS n FROM featured_tags WHERE tenant_id = $1"
         "  AND account_id = $2::bigint),"
         " ins AS (INSERT INTO tags (tenant_id, name) VALUES ($1, lower($3))"
         "  ON CONFLICT (tenant_id, (lower(name))) DO NOTHING RETURNING id),"
         " t AS (SELECT id FROM ins UNION ALL SELECT id FROM tags WHERE tenant_id = $1"
         "  AND lower(name) = lower($3) LIMIT 1),"
         " had AS (SELECT 1 FROM featured_tags x JOIN t ON x.tag_id = t.id WHERE x.tenant_id = $1"
         "  AND x.account_id = $2::bigint),"
         " f AS (INSERT INTO featured_tags (tenant_id, account_id, tag_id, name)"
         "  SELECT $1, $2::bigint, t.id, $3 FROM t WHERE (SELECT n FROM cnt) < $4::int"
         "  AND NOT EXISTS (SELECT 1 FROM had) ON CONFLICT DO NOTHING RETURNING id)"
         " SELECT (SELECT n FROM cnt), (SELECT id::text FROM f), EXISTS (SELECT 1 FROM had)"},
    /* $2 the account, $3 the featured tag: its name when it was removed. */
    [FEATURED_DELETE] = {"featured.delete",
                         "DELETE FROM featured_tags WHERE tenant_id = $1"
                         " AND account_id = $2::bigint AND id = $3::bigint RETURNING name"},
    /* $2 the account, $3 a hashtag's name: unfeatures it. */
    [FEATURED_DELETE_NAME] = {"featured.delete_name",
                              "DELETE FROM featured_tags f USING tags t WHERE f.tenant_id = $1"
                              " AND f.account_id = $2::bigint AND t.tenant_id = $1"
                              " AND t.id = f.tag_id AND lower(t.name) = lower($3)"
                              " RETURNING f.name"},
    /* The tags of $2's latest $3 statuses it does not feature, the most
     * used first, then the latest used: Tag entities (id, name, followed). */
    [FEATURED_SUGGESTIONS] =
        {"featured.suggestions",
         "SELECT t.id::text, lower(t.name), EXISTS (SELECT 1 FROM tag_follows tf"
         "  WHERE tf.tenant_id = $1 AND tf.tag_id = t.id AND tf.account_id = $2::bigint)"
         " FROM (SELECT st.tag_id, count(*) AS n, max(s.id) AS latest FROM (SELECT id FROM"
         "  statuses WHERE tenant_id = $1 AND account_id = $2::bigint AND deleted_at IS NULL"
         "  ORDER BY id DESC LIMIT $3::int) s"
         "  JOIN statuses_tags st ON st.tenant_id = $1 AND st.status_id = s.id"
         "  GROUP BY st.tag_id) x"
         " JOIN tags t ON t.tenant_id = $1 AND t.id = x.tag_id"
         " WHERE NOT EXISTS (SELECT 1 FROM featured_tags f WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint AND f.tag_id = x.tag_id)"
         " ORDER BY x.n DESC, x.latest DESC LIMIT $4::int"},
    /* The accounts $2 endorses, paged by the endorsement; suspended ones
     * left out, as Mastodon's without_suspended. */
    [FEATURED_ENDORSEMENTS] = {"featured.endorsements",
                               "SELECT x.id, (eunha_account(a)).* FROM account_pins x"
                               " JOIN accounts a ON a.tenant_id = $1 AND a.id = x.target_account_id"
                               " WHERE x.tenant_id = $1 AND x.account_id = $2::bigint"
                               " AND a.suspended_at IS NULL",
                               "x.id", 3},
    [FEATURED_ACCOUNT_USABLE] = {"featured.account_usable",
                                 "SELECT suspended_at IS NOT NULL FROM accounts"
                                 " WHERE tenant_id = $1 AND id = $2::bigint"},
    {0},
};

/* ------------------------------------------------------- the entity */

/* The FeaturedTag entity at row of a FEATURED_COLUMNS result. */
static json_t *
featured_json(struct eu_req *req, const PGresult *res, int row)
{
    const char *acct = PQgetisnull(res, row, 3)
                           ? PQgetvalue(res, row, 2)
                           : eu_arena_sprintf(req->arena, "%s@%s", PQgetvalue(res, row, 2),
                                              PQgetvalue(res, row, 3));
    const char *name = PQgetvalue(res, row, 1);
    /* the tag's own (lower-case) name in the URL, as the tag pages have */
    char *lower = eu_arena_strdup(req->arena, name);
    for (char *c = lower; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s}", "id", PQgetvalue(res, row, 0), "name", name, "url",
        eu_arena_sprintf(req->arena, "%s/@%s/tagged/%s", eu_req_base_url(req), acct, lower),
        /* a string, as Mastodon's serializer writes it */
        "statuses_count", PQgetisnull(res, row, 4) ? "0" : PQgetvalue(res, row, 4));
    json_object_set_new(o, "last_status_at",
                        PQgetisnull(res, row, 5) ? json_null()
                                                 : json_string(PQgetvalue(res, row, 5)));
    return o;
}

/* A hashtag's name as Mastodon's FeaturedTag takes it: trimmed, one
 * leading '#' dropped. Arena-owned; NULL for NULL. */
static const char *
strip_name(struct eu_req *req, const char *name)
{
    if (!name)
        return NULL;
    while (*name == ' ' || *name == '\t' || *name == '\n' || *name == '\r')
        name++;
    if (*name == '#')
        name++;
    size_t n = strlen(name);
    while (n && (name[n - 1] == ' ' || name[n - 1] == '\t' || name[n - 1] == '\n' ||
                 name[n - 1] == '\r'))
        n--;
    return eu_arena_strndup(req->arena, name, n);
}

/* ------------------------------------------------------------ lists */

static void
on_featured_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        if (!PQgetisnull(res, i, 0))
            json_array_append_new(out, featured_json(req, res, i));
    eu_req_reply_json(req, 200, out);
}

/* GET /api/v1/featured_tags: the signed-in account's. */
static void
featured_index(struct eu_req *req)
{
    const char *p[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_OF_ACCOUNT], 1, p, on_featured_list, NULL);
}

/* GET /api/v1/accounts/:id/featured_tags: anyone's, local or remote. */
static void
account_featured_tags(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {id};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_OF_ACCOUNT], 1, p, on_featured_list, NULL);
}

/* ----------------------------------------------------------- create */

/* How a feature ends: the FeaturedTag (the API's create) or the Tag with
 * featuring (4.4's /tags/:name/feature). */
struct feature {
    const char *name;
    bool as_tag;
};

static void
on_tag_featuring(struct eu_req *req, PGresult *res, void *arg)
{
    struct feature *f = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *t = eu_social_tag_json(req, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
                                   PQgetvalue(res, 0, 2)[0] == 't');
    json_object_set_new(t, "featuring", json_boolean(f->as_tag));
    eu_req_reply_json(req, 200, t);
}

static void
on_created_one(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        /* unfeatured again between the two statements */
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, featured_json(req, res, 0));
}

static void
on_created(struct eu_req *req, PGresult *res, void *arg)
{
    struct feature *f = arg;
    bool had = PQntuples(res) == 1 && PQgetvalue(res, 0, 2)[0] == 't';
    const char *id = PQntuples(res) == 1 && !PQgetisnull(res, 0, 1) ? PQgetvalue(res, 0, 1) : NULL;
    if (had && !f->as_tag) {
        eu_req_reply_error(req, 422, "Validation failed: Name has already been taken");
        return;
    }
    if (!id && !had) {
        eu_req_reply_error(req, 422,
                           "Validation failed: You have already featured the maximum "
                           "number of hashtags");
        return;
    }
    if (id)
        eu_ap_outbox_featured_tag(req->app, req->tenant, req->auth.account_id, f->name, true);
    if (f->as_tag) {
        const char *p[] = {eu_req_viewer(req), f->name};
        eu_req_stmt(req, eu_social_tag_stmt(), 2, p, on_tag_featuring, f);
        return;
    }
    const char *p[] = {eu_req_viewer(req), eu_arena_strdup(req->arena, id)};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_ONE], 2, p, on_created_one, NULL);
}

static void
feature(struct eu_req *req, const char *raw, bool as_tag)
{
    const char *name = strip_name(req, raw);
    if (!name || !*name) {
        eu_req_reply_error(req, 422, "Validation failed: Name can't be blank");
        return;
    }
    if (!eu_social_tag_name_is_valid(name)) {
        eu_req_reply_error(req, as_tag ? 404 : 422,
                           as_tag ? "Record not found" : "Validation failed: Name is invalid");
        return;
    }
    struct feature *f = eu_arena_calloc(req->arena, sizeof(*f));
    f->name = name;
    f->as_tag = as_tag;
    char limit[12];
    snprintf(limit, sizeof(limit), "%d", FEATURED_TAGS_LIMIT);
    const char *p[] = {eu_req_viewer(req), name, eu_arena_strdup(req->arena, limit)};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_CREATE], 3, p, on_created, f);
}

/* POST /api/v1/featured_tags {name}. */
static void
featured_create(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    feature(req, eu_param_str(params, "name"), false);
}

/* POST /api/v1/tags/:name/feature (4.4): the Tag, featuring. Featuring
 * one already featured is no error here, as Mastodon's
 * find_or_create_by!. */
static void
tag_feature(struct eu_req *req)
{
    feature(req, eu_req_param(req, "name"), true);
}

/* ----------------------------------------------------------- delete */

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    bool by_name = arg != NULL;
    if (PQntuples(res) == 0 && !by_name) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    for (int i = 0; i < PQntuples(res); i++)
        eu_ap_outbox_featured_tag(req->app, req->tenant, req->auth.account_id,
                                  PQgetvalue(res, i, 0), false);
    if (!by_name) {
        eu_req_reply_json(req, 200, json_object());
        return;
    }
    struct feature *f = arg;
    const char *p[] = {eu_req_viewer(req), f->name};
    eu_req_stmt(req, eu_social_tag_stmt(), 2, p, on_tag_featuring, f);
}

/* DELETE /api/v1/featured_tags/:id: {} as Mastodon answers. */
static void
featured_delete(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_DELETE], 2, p, on_deleted, NULL);
}

/* POST /api/v1/tags/:name/unfeature (4.4): the Tag, not featuring. */
static void
tag_unfeature(struct eu_req *req)
{
    const char *name = strip_name(req, eu_req_param(req, "name"));
    if (!eu_social_tag_name_is_valid(name)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct feature *f = eu_arena_calloc(req->arena, sizeof(*f));
    f->name = name;
    const char *p[] = {eu_req_viewer(req), name};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_DELETE_NAME], 2, p, on_deleted, f);
}

/* ------------------------------------------------------ suggestions */

static void
on_suggestions(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out,
                              eu_social_tag_json(req, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
                                                 PQgetvalue(res, i, 2)[0] == 't'));
    eu_req_reply_json(req, 200, out);
}

/* GET /api/v1/featured_tags/suggestions: the tags the account used most
 * lately and does not feature, as Tag entities. */
static void
featured_suggestions(struct eu_req *req)
{
    char recent[12], limit[12];
    snprintf(recent, sizeof(recent), "%d", SUGGESTIONS_RECENT);
    snprintf(limit, sizeof(limit), "%d", SUGGESTIONS_LIMIT);
    const char *p[] = {eu_req_viewer(req), recent, limit};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_SUGGESTIONS], 3, p, on_suggestions, NULL);
}

/* ----------------------------------------------------- endorsements */

struct endorsements {
    const char *account;
    struct eu_page page;
};

static void
on_endorser(struct eu_req *req, PGresult *res, void *arg)
{
    struct endorsements *e = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* An unavailable account shows nobody, as Mastodon's. */
    if (PQgetvalue(res, 0, 0)[0] == 't') {
        eu_req_reply_json(req, 200, json_array());
        return;
    }
    const char *p[5] = {e->account};
    eu_page_params(&e->page, p + 1);
    eu_accounts_reply_page(req, &eu_featured_sql[FEATURED_ENDORSEMENTS], 5, p, &e->page);
}

static void
endorsements_of(struct eu_req *req, const char *account)
{
    if (!eu_id_is_valid(account)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct endorsements *e = eu_arena_calloc(req->arena, sizeof(*e));
    e->account = account;
    /* Mastodon's DEFAULT_ACCOUNTS_LIMIT, twice that at most. */
    if (eu_page_parse(req, &e->page, 40, 80) < 0)
        return;
    const char *p[] = {account};
    eu_req_stmt(req, &eu_featured_sql[FEATURED_ACCOUNT_USABLE], 1, p, on_endorser, e);
}

/* GET /api/v1/endorsements: the signed-in account's. */
static void
endorsements_index(struct eu_req *req)
{
    endorsements_of(req, eu_req_viewer(req));
}

/* GET /api/v1/accounts/:id/endorsements (4.4): anyone's. */
static void
account_endorsements(struct eu_req *req)
{
    endorsements_of(req, eu_req_param(req, "id"));
}

/* ------------------------------------------------------------ table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define DEL EU_HTTP_DELETE
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)
#define OPT (EU_ROUTE_AUTH_OPT | EU_ROUTE_API)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_featured_routes[] = {
    {GET, "/api/v1/featured_tags", featured_index, "read:accounts", AUTH},
    {POST, "/api/v1/featured_tags", featured_create, "write:accounts", AUTH},
    {DEL, "/api/v1/featured_tags/:id", featured_delete, "write:accounts", AUTH},
    {GET, "/api/v1/featured_tags/suggestions", featured_suggestions, "read:accounts", AUTH},
    {POST, "/api/v1/tags/:name/feature", tag_feature, "write:accounts", AUTH},
    {POST, "/api/v1/tags/:name/unfeature", tag_unfeature, "write:accounts", AUTH},
    {GET, "/api/v1/accounts/:id/featured_tags", account_featured_tags, NULL, OPT},
    {GET, "/api/v1/endorsements", endorsements_index, "read:accounts", AUTH},
    {GET, "/api/v1/accounts/:id/endorsements", account_endorsements, "read:accounts", OPT},
    {0},
};
