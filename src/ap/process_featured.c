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
 */
#include "process_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "eunha/apingest.h"
#include "eunha/approcess.h"
#include "eunha/arena.h"
#include "eunha/sql.h"

/* A remote account's featured hashtags kept at most: Mastodon lets its own
 * accounts feature 10; other servers may allow more. */
#define REMOTE_FEATURED_MAX 20
#define TAG_NAME_MAX 200

enum { FEATURED_ADD, FEATURED_REMOVE };

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
