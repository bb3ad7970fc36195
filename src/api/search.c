/*
 * GET /api/v2/search: accounts, statuses and hashtags. Without a search
 * cluster, Eunha answers from PostgreSQL what Mastodon answers from
 * Elasticsearch by default: accounts of the tenant by username prefix or
 * display name; statuses the caller wrote, was mentioned in, favourited or
 * bookmarked, by the words of their text (full text, plus a plain
 * substring match for queries full-text search splits badly); hashtags by
 * prefix. With resolve=true and a user's token, a query naming a remote
 * account ("@user@host", "user@host" or an actor URL) is resolved first
 * (WebFinger, a signed fetch) and the account leads the results, as
 * Mastodon does; without it only accounts already known are found.
 *
 * One query finds the matching status ids and hashtags, a second renders
 * the accounts, then eu_statuses_render() renders the statuses.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/api.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "social_internal.h"

#define SEARCH_LIMIT 20
#define SEARCH_LIMIT_MAX 40
/* Mastodon caps offset paging the same way for everyone. */
#define SEARCH_OFFSET_MAX 10000
#define QUERY_MAX 1000

enum {
    SEARCH_MATCHES,
    SEARCH_ACCOUNTS,
    SEARCH_ACCOUNT_BY_ID,
};

/* eunha_like_text() (tenant migration 0041) makes the query ($3 without a
 * leading '@' or '#', $11 as typed) the literal text of a LIKE pattern. */
const struct eu_sql eu_search_sql[] = {
    [SEARCH_MATCHES] =
        {"search.matches",
         "SELECT (SELECT coalesce(json_agg(x.id::text ORDER BY x.id DESC), '[]') FROM"
         "  (SELECT s.id FROM statuses s"
         "   CROSS JOIN LATERAL eunha_is_not_shunned($1, s.account_id, $2::bigint) ns"
         "   WHERE s.tenant_id = $1 AND $6::boolean"
         "   AND s.deleted_at IS NULL"
         "   AND s.reblog_of_id IS NULL"
         /* Mastodon's status search drops what its StatusFilter hides */
         "   AND EXISTS (SELECT 1 FROM accounts a CROSS JOIN LATERAL eunha_is_not_domain_hidden($1,"
         "    a.id, a.domain, a.silenced_at, $2::bigint) nh"
         "    WHERE a.tenant_id = $1 AND a.id = s.account_id AND nh.ok)"
         "   AND ns.ok AND"
         " (s.account_id = $2::bigint"
         "    OR EXISTS (SELECT 1 FROM mentions m WHERE m.tenant_id = $1 AND m.status_id = s.id"
         "     AND m.account_id = $2::bigint)"
         "    OR EXISTS (SELECT 1 FROM favourites f WHERE f.tenant_id = $1 AND f.status_id = s.id"
         "     AND f.account_id = $2::bigint)"
         "    OR EXISTS (SELECT 1 FROM bookmarks b WHERE b.tenant_id = $1 AND b.status_id = s.id"
         "     AND b.account_id = $2::bigint))"
         "   AND (to_tsvector('simple', s.spoiler_text || ' ' || s.text)"
         "     @@ websearch_to_tsquery('simple', $11)"
         "    OR s.text ILIKE '%' || eunha_like_text($11) || '%'"
         "    OR s.spoiler_text ILIKE '%' || eunha_like_text($11) || '%')"
         "   AND ($8::bigint IS NULL OR s.account_id = $8::bigint)"
         "   AND ($9::bigint IS NULL OR s.id < $9::bigint)"
         "   AND ($10::bigint IS NULL OR s.id > $10::bigint)"
         "   ORDER BY s.id DESC LIMIT $4::int OFFSET $5::int) x)::text,"
         " (SELECT coalesce(json_agg(json_build_array(t.id::text, lower(t.name),"
         "   EXISTS (SELECT 1 FROM tag_follows tf WHERE tf.tenant_id = $1"
         "   AND tf.tag_id = t.id AND tf.account_id = $2::bigint))"
         "   ORDER BY length(t.name), lower(t.name)), '[]') FROM"
         "  (SELECT * FROM tags t WHERE t.tenant_id = $1 AND $7::boolean"
         "   AND lower(t.name) LIKE lower(eunha_like_text($3)) || '%'"
         "   ORDER BY length(t.name), lower(t.name) LIMIT $4::int OFFSET $5::int) t)::text"},
    /* "user@this.host" and "@user" find the local user; "user@other.host"
     * the remote accounts of that host already known. */
    [SEARCH_ACCOUNTS] =
        {"search.accounts",
         "WITH q AS (SELECT CASE WHEN position('@' IN $3) > 0 THEN split_part($3, '@', 1)"
         "  ELSE $3 END AS u, CASE WHEN position('@' IN $3) > 0 THEN split_part($3, '@', 2)"
         "  END AS d)"
         " SELECT (eunha_account(a)).* FROM accounts a, q"
         " WHERE a.tenant_id = $1 AND a.suspended_at IS NULL"
         " AND a.username <> 'instance.actor'" /* src/ap/instance_actor.c */
         /* local accounts, or known remote ones whose domain the query names */
         " AND ((a.domain IS NULL AND (q.d IS NULL OR lower(q.d) = lower($7)))"
         "  OR (a.domain IS NOT NULL AND lower(a.domain) = lower(q.d)))"
         " AND (lower(a.username) LIKE lower(eunha_like_text(q.u)) || '%'"
         "  OR (q.d IS NULL AND a.display_name ILIKE '%' || eunha_like_text(q.u) || '%'))"
         " AND (NOT $6::boolean OR EXISTS (SELECT 1 FROM follows f"
         "  WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
         "  AND f.target_account_id = a.id))"
         " AND NOT EXISTS (SELECT 1 FROM blocks b"
         "  WHERE b.tenant_id = $1 AND b.account_id = a.id"
         "  AND b.target_account_id = $2::bigint)"
         " ORDER BY lower(a.username) = lower(q.u) DESC,"
         " a.followers_count DESC, a.id"
         " LIMIT $4::int OFFSET $5::int"},
    /* $2 the viewer, $3 the account a resolve found. */
    [SEARCH_ACCOUNT_BY_ID] = {"search.account_by_id",
                              "SELECT (eunha_account(a)).* FROM accounts a"
                              " WHERE a.tenant_id = $1 AND a.id = $3::bigint"
                              " AND a.suspended_at IS NULL"
                              " AND NOT EXISTS (SELECT 1 FROM blocks b"
                              "  WHERE b.tenant_id = $1 AND b.account_id = a.id"
                              "  AND b.target_account_id = $2::bigint)"},
    {0},
};

struct search {
    struct eu_req *req;
    const char *q, *type, *limit, *offset, *following, *account_id, *max_id, *min_id;
    const char *raw_q;           /* q as sent */
    const char *resolved_id;     /* the account a resolve found, or NULL */
    const char *resolved_shown;  /* the same once rendered */
    const char *resolved_status; /* the status a resolve found, or NULL */
    bool want_accounts, want_statuses, want_hashtags;
    json_t *accounts, *hashtags;
    const char **status_ids;
    size_t n_status;
};

static void
decref_json(void *p)
{
    json_decref(p);
}

static void
on_statuses(struct eu_req *req, json_t *array, void *arg)
{
    struct search *s = arg;
    eu_req_enter(req);
    eu_req_reply_json(req, 200,
                      json_pack("{s:O, s:o, s:O}", "accounts", s->accounts, "statuses", array,
                                "hashtags", s->hashtags));
}

static void
on_accounts(struct eu_req *req, PGresult *res, void *arg)
{
    struct search *s = arg;
    struct eu_account_cols ac;
    if (res)
        eu_account_cols_find(&ac, res);
    for (int i = 0; res && i < PQntuples(res); i++) {
        /* The account a resolve put first is not listed twice. */
        if (s->resolved_shown && strcmp(PQgetvalue(res, i, ac.col[0]), s->resolved_shown) == 0)
            continue;
        json_array_append_new(s->accounts, eu_account_json(req, res, i, &ac));
    }
    if (s->n_status == 0) {
        on_statuses(req, json_array(), s);
        return;
    }
    eu_statuses_render(req, s->status_ids, s->n_status, on_statuses, s);
}

static void query_accounts(struct search *s);

static void
on_resolved_row(struct eu_req *req, PGresult *res, void *arg)
{
    struct search *s = arg;
    if (PQntuples(res) == 1) {
        struct eu_account_cols ac;
        eu_account_cols_find(&ac, res);
        json_array_append_new(s->accounts, eu_account_json(req, res, 0, &ac));
    }
    s->resolved_shown = s->resolved_id;
    s->resolved_id = NULL;
    query_accounts(s);
}

static void
query_accounts(struct search *s)
{
    struct eu_req *req = s->req;
    if (!s->want_accounts) {
        on_accounts(req, NULL, s);
        return;
    }
    if (s->resolved_id) {
        const char *p[] = {eu_req_viewer(req), s->resolved_id};
        eu_req_stmt(req, &eu_search_sql[SEARCH_ACCOUNT_BY_ID], 2, p, on_resolved_row, s);
        return;
    }
    const char *p[] = {eu_req_viewer(req), s->q, s->limit, s->offset, s->following, req->host};
    eu_req_stmt(req, &eu_search_sql[SEARCH_ACCOUNTS], 6, p, on_accounts, s);
}

static void
on_found(struct eu_req *req, PGresult *res, void *arg)
{
    struct search *s = arg;
    json_t *ids = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
    json_t *tags = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
    size_t n = json_array_size(ids) + 1;
    s->status_ids = eu_arena_alloc(req->arena, sizeof(char *) * n);
    /* The status a resolve found comes first, once. */
    if (s->resolved_status && s->want_statuses)
        s->status_ids[s->n_status++] = s->resolved_status;
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v)
    {
        if (json_is_string(v) &&
            !(s->resolved_status && strcmp(json_string_value(v), s->resolved_status) == 0))
            s->status_ids[s->n_status++] = eu_arena_strdup(req->arena, json_string_value(v));
    }
    json_decref(ids);
    json_array_foreach(tags, i, v)
    {
        const char *name = json_string_value(json_array_get(v, 1));
        json_t *t = json_pack(
            "{s:s, s:s, s:s, s:[]}", "id", json_string_value(json_array_get(v, 0)), "name",
            name ? name : "", "url",
            eu_arena_sprintf(req->arena, "%s/tags/%s", eu_req_base_url(req), name ? name : ""),
            "history");
        if (req->auth.account_id)
            json_object_set(t, "following", json_array_get(v, 2));
        json_array_append_new(s->hashtags, t);
    }
    json_decref(tags);
    query_accounts(s);
}

static void start_matches(struct search *s);
static bool start_resolve(struct search *s);

void
eu_search_v2(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct search *s = eu_arena_calloc(req->arena, sizeof(*s));
    s->req = req;
    s->q = eu_param_str(params, "q");
    if (!s->q || !*s->q) {
        eu_req_reply_error(req, 400, "q is missing");
        return;
    }
    if (strlen(s->q) > QUERY_MAX) {
        eu_req_reply_error(req, 422, "Validation failed: q is too long");
        return;
    }
    s->type = eu_param_str(params, "type");
    if (s->type && *s->type && strcmp(s->type, "accounts") != 0 &&
        strcmp(s->type, "statuses") != 0 && strcmp(s->type, "hashtags") != 0) {
        eu_req_reply_error(req, 422, "Validation failed: type is not included in the list");
        return;
    }
    bool any = !s->type || !*s->type;
    s->want_accounts = any || strcmp(s->type, "accounts") == 0;
    s->want_statuses = (any || strcmp(s->type, "statuses") == 0) && req->auth.account_id;
    s->want_hashtags = any || strcmp(s->type, "hashtags") == 0;
    long long limit = SEARCH_LIMIT, offset = 0;
    if (eu_param_int(params, "limit", &limit) < 0 || limit < 1)
        limit = SEARCH_LIMIT;
    if (limit > SEARCH_LIMIT_MAX)
        limit = SEARCH_LIMIT_MAX;
    if (eu_param_int(params, "offset", &offset) < 0 || offset < 0)
        offset = 0;
    if (offset > 0 && !req->auth.account_id) {
        eu_req_reply_error(req, 401,
                           "Search queries pagination is not supported without "
                           "authentication");
        return;
    }
    if (offset > SEARCH_OFFSET_MAX)
        offset = SEARCH_OFFSET_MAX;
    s->limit = eu_arena_sprintf(req->arena, "%lld", limit);
    s->offset = eu_arena_sprintf(req->arena, "%lld", offset);
    bool following = false;
    eu_param_bool(params, "following", &following);
    s->following = following ? "t" : "f";
    s->account_id = eu_param_str(params, "account_id");
    if (s->account_id && !eu_id_is_valid(s->account_id))
        s->account_id = "0";
    s->max_id = eu_param_str(params, "max_id");
    s->min_id = eu_param_str(params, "min_id");
    if (s->max_id && !eu_id_is_valid(s->max_id))
        s->max_id = NULL;
    if (s->min_id && !eu_id_is_valid(s->min_id))
        s->min_id = NULL;
    s->raw_q = s->q;
    /* Clients send "@user" and "#tag"; the sigil is not part of the name. */
    if (s->q[0] == '@' || s->q[0] == '#')
        s->q++;
    s->accounts = json_array();
    s->hashtags = json_array();
    eu_arena_on_free(req->arena, decref_json, s->accounts);
    eu_arena_on_free(req->arena, decref_json, s->hashtags);

    bool resolve = false;
    eu_param_bool(params, "resolve", &resolve);
    if (resolve && req->auth.account_id && (s->want_accounts || s->want_statuses) && offset == 0 &&
        start_resolve(s))
        return;
    start_matches(s);
}

static void
start_matches(struct search *s)
{
    struct eu_req *req = s->req;
    const char *p[] = {eu_req_viewer(req),
                       s->q,
                       s->limit,
                       s->offset,
                       s->want_statuses ? "t" : "f",
                       s->want_hashtags ? "t" : "f",
                       s->account_id,
                       s->max_id,
                       s->min_id,
                       s->raw_q};
    eu_req_stmt(req, &eu_search_sql[SEARCH_MATCHES], 10, p, on_found, s);
}

static void
on_status_resolved(const char *id, const struct eu_error *err, void *arg)
{
    struct search *s = arg;
    eu_req_enter(s->req);
    (void)err; /* as for accounts: no error, just nothing found */
    if (id)
        s->resolved_status = eu_arena_strdup(s->req->arena, id);
    start_matches(s);
}

static void
on_resolved(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct search *s = arg;
    eu_req_enter(s->req);
    /* A URL that is no actor may be a status (422 from the actor parser):
     * Mastodon's search resolves both. */
    if (err && err->status == 422 && s->want_statuses &&
        (strncmp(s->raw_q, "https://", 8) == 0 || strncmp(s->raw_q, "http://", 7) == 0)) {
        eu_ap_resolve_status(s->req->app, s->req->tenant, s->raw_q, on_status_resolved, s);
        return;
    }
    /* A name that does not resolve is no error: the search finds what it
     * finds without it, as Mastodon's does. */
    if (r && !r->local)
        s->resolved_id = eu_arena_strdup(s->req->arena, r->account_id);
    start_matches(s);
}

/* Starts resolving a remote account the query names; false when it names
 * none (the search goes on as usual). */
static bool
start_resolve(struct search *s)
{
    struct eu_req *req = s->req;
    const char *q = s->raw_q;
    if (strncmp(q, "https://", 8) == 0 || strncmp(q, "http://", 7) == 0) {
        eu_ap_resolve_actor(req->app, req->tenant, q, on_resolved, s);
        return true;
    }
    if (!s->want_accounts)
        return false;
    const char *acct = q[0] == '@' ? q + 1 : q;
    const char *at = strchr(acct, '@');
    if (!at || at == acct || !at[1] || strchr(at + 1, '@') || strcasecmp(at + 1, req->host) == 0)
        return false;
    eu_ap_webfinger_lookup(req->app, req->tenant, acct, on_resolved, s);
    return true;
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_search_routes[] = {
    {EU_HTTP_GET, "/api/v2/search", eu_search_v2, "read:search", EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {0},
};
