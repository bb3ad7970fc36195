/*
 * A remote actor's featured hashtags as it tells them: an Add or Remove
 * whose object is a Hashtag ({type: Hashtag, name: "#tag"}) and whose
 * target is its featuredTags collection, as Mastodon sends when an account
 * features or unfeatures a tag. The tag becomes (or stops being) one of the
 * actor's featured_tags rows, which /api/v1/accounts/:id/featured_tags
 * shows (src/api/featured.c). Add/Remove of a status to the featured
 * collection (pins) stay in process_status.c.
 *
 * We keep no featuredTags URL per account, so the target is only checked to
 * be on the actor's own host: a server can change its own actors' lists
 * only.
 *
 * When an actor is fetched (src/ap/resolve.c), its featuredTags collection
 * is read too, as Mastodon's FetchFeaturedTagsCollectionService does, and
 * replaces what we knew: one more signed GET, after the actor is stored,
 * which nothing waits for.
 */
#include "process_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "eunha/apingest.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* A remote account's featured hashtags kept at most: Mastodon lets its own
 * accounts feature 10; other servers may allow more. */
#define REMOTE_FEATURED_MAX 20
#define TAG_NAME_MAX 200

enum { FEATURED_ADD, FEATURED_REMOVE, FEATURED_SYNC };

const struct eu_sql eu_ap_process_featured_sql[] = {
    /* $2 the actor features $3 (the name as sent), unless it has $4. */
    [FEATURED_ADD] =
        {"ap_process_featured.add",
         "WITH ins AS (INSERT INTO tags (tenant_id, name) VALUES ($1, lower($3))"
         "  ON CONFLICT (tenant_id, (lower(name))) DO NOTHING RETURNING id),"
         " t AS (SELECT id FROM ins UNION ALL SELECT id FROM tags WHERE tenant_id = $1"
         "  AND lower(name) = lower($3) LIMIT 1)"
         " INSERT INTO featured_tags (tenant_id, account_id, tag_id, name)"
         " SELECT $1, $2::bigint, t.id, $3 FROM t WHERE (SELECT count(*) FROM featured_tags"
         "  WHERE tenant_id = $1 AND account_id = $2::bigint) < $4::int"
         " ON CONFLICT DO NOTHING"},
    [FEATURED_REMOVE] = {"ap_process_featured.remove",
                         "DELETE FROM featured_tags f USING tags t WHERE f.tenant_id = $1"
                         " AND f.account_id = $2::bigint AND t.tenant_id = $1 AND t.id = f.tag_id"
                         " AND lower(t.name) = lower($3)"},
    /* $2 the actor's featured tags are the names of JSON array $3 (at
     * most REMOTE_FEATURED_MAX, checked by the caller): the others go, the
     * new ones come, tags made on first use. */
    [FEATURED_SYNC] =
        {"ap_process_featured.sync",
         "WITH n AS (SELECT DISTINCT ON (lower(x)) x AS name FROM "
         "json_array_elements_text($3::json)"
         "  x),"
         " d AS (DELETE FROM featured_tags f USING tags t WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint AND t.tenant_id = $1 AND t.id = f.tag_id"
         "  AND lower(t.name) NOT IN (SELECT lower(name) FROM n)),"
         " ins AS (INSERT INTO tags (tenant_id, name) SELECT $1, lower(name) FROM n"
         "  ON CONFLICT (tenant_id, (lower(name))) DO NOTHING RETURNING id, name),"
         " t AS (SELECT id, name FROM ins UNION ALL SELECT id, name FROM tags WHERE tenant_id = $1"
         "  AND lower(name) IN (SELECT lower(name) FROM n))"
         " INSERT INTO featured_tags (tenant_id, account_id, tag_id, name)"
         " SELECT DISTINCT ON (t.id) $1, $2::bigint, t.id, n.name FROM t"
         "  JOIN n ON lower(n.name) = lower(t.name)"
         " ON CONFLICT DO NOTHING"},
    {0},
};

/* A hashtag's name as the formatter indexes them: letters, digits, '_'
 * and any non-ASCII character, not only digits. */
static bool
name_is_valid(const char *s)
{
    if (!*s || strlen(s) > TAG_NAME_MAX)
        return false;
    bool digits_only = true;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        bool digit = *c >= '0' && *c <= '9';
        bool letter =
            (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c >= 0x80;
        if (!digit && !letter)
            return false;
        digits_only = digits_only && digit;
    }
    return !digits_only;
}

static void
on_featured_tag(struct eu_proc *p, PGresult *res)
{
    (void)res;
    eu_proc_finish(p, NULL);
}

void
eu_proc_featured_tag(struct eu_proc *p, bool add)
{
    const char *target = eu_proc_json_id(json_object_get(p->activity, "target"));
    const char *name = json_string_value(json_object_get(p->object, "name"));
    const char *host = target ? eu_ap_uri_host(p->arena, target) : NULL;
    if (!host || !p->actor_host || strcasecmp(host, p->actor_host) != 0 || !name) {
        eu_proc_skip(p, "not about the actor's featured hashtags");
        return;
    }
    if (*name == '#')
        name++;
    if (!name_is_valid(name)) {
        eu_proc_skip(p, "not a hashtag");
        return;
    }
    char cap[12];
    snprintf(cap, sizeof(cap), "%d", REMOTE_FEATURED_MAX);
    const char *params[] = {p->actor_id, eu_arena_strdup(p->arena, name),
                            eu_arena_strdup(p->arena, cap)};
    eu_proc_stmt(p, &eu_ap_process_featured_sql[add ? FEATURED_ADD : FEATURED_REMOVE], add ? 3 : 2,
                 params, on_featured_tag);
}

/* ------------------------------------------------- the collection read */

struct tags_sync {
    struct eu_app *app;
    struct eu_tenant *t; /* a reference */
    char *account_id;
};

static void
tags_sync_free(struct tags_sync *s)
{
    eu_tenant_unref(s->t);
    free(s->account_id);
    free(s);
}

static void
on_synced(PGresult *res, enum eu_db_status st, void *arg)
{
    struct tags_sync *s = arg;
    if (st != EU_DB_OK)
        eu_log_warn("ap", "cannot store the featured tags of account %s: %s", s->account_id,
                    res ? PQresultErrorMessage(res) : "database unavailable");
    tags_sync_free(s);
}

/* The collection's items: inline, or in an inline first page (Mastodon
 * serves them inline; a paged one's later pages are not followed). */
static json_t *
collection_items(json_t *doc)
{
    json_t *items = json_object_get(doc, "orderedItems");
    if (!json_is_array(items))
        items = json_object_get(doc, "items");
    json_t *first = json_object_get(doc, "first");
    if (!json_is_array(items) && json_is_object(first)) {
        items = json_object_get(first, "orderedItems");
        if (!json_is_array(items))
            items = json_object_get(first, "items");
    }
    return json_is_array(items) ? items : NULL;
}

static void
on_collection(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    (void)final_url;
    struct tags_sync *s = arg;
    json_t *items = err ? NULL : collection_items(doc);
    if (!items) {
        if (err)
            eu_log_debug("ap", "featured tags of account %s not read: %s", s->account_id,
                         err->message);
        tags_sync_free(s);
        return;
    }
    json_t *names = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        const char *type = json_string_value(json_object_get(it, "type"));
        const char *name = json_string_value(json_object_get(it, "name"));
        if (!type || strcmp(type, "Hashtag") != 0 || !name)
            continue;
        if (*name == '#')
            name++;
        if (name_is_valid(name) && json_array_size(names) < REMOTE_FEATURED_MAX)
            json_array_append_new(names, json_string(name));
    }
    char *text = json_dumps(names, JSON_COMPACT);
    json_decref(names);
    const char *params[] = {s->account_id, text};
    eu_db_pool_stmt(eu_tenant_pool(s->app->registry, s->t),
                    &eu_ap_process_featured_sql[FEATURED_SYNC], 2, params, on_synced, s);
    free(text);
}

void
eu_ap_featured_tags_fetch(struct eu_app *app, struct eu_tenant *t, const char *account_id,
                          const char *actor_uri, const char *url)
{
    struct eu_arena *a = eu_arena_new();
    const char *host = url ? eu_ap_uri_host(a, url) : NULL;
    const char *actor_host = actor_uri ? eu_ap_uri_host(a, actor_uri) : NULL;
    bool same = host && actor_host && strcasecmp(host, actor_host) == 0;
    eu_arena_free(a);
    if (!same)
        return;
    struct tags_sync *s = eu_xcalloc(1, sizeof(*s));
    s->app = app;
    s->t = t;
    eu_tenant_ref(t);
    s->account_id = eu_xstrdup(account_id);
    eu_ap_fetch_signed(app, t, url, on_collection, s);
}
