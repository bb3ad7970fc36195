/*
 * A status's surroundings and past: its thread (GET .../context, ancestors
 * and descendants in reading order), its source for editing and its edit
 * history with the media each version had. All read-only, one statement
 * each; the thread's statuses are rendered by status_render.c, which drops
 * what the viewer may not see.
 */
#include "statuses_internal.h"

#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "media_internal.h"

enum {
    THREAD_SOURCE,
    THREAD_HISTORY,
    THREAD_CONTEXT,
};

const struct eu_sql eu_statuses_thread_sql[] = {
    [THREAD_SOURCE] = {"statuses.source",
                       "SELECT id, text, spoiler_text FROM statuses WHERE tenant_id = $1"
                       " AND id = $2::bigint AND account_id = $3::bigint AND deleted_at IS NULL"},
    /* A status never edited has one version: itself. */
    /* Each version's media with the descriptions they had then. */
    [THREAD_HISTORY] =
        {"statuses.history",
         "SELECT v.content, v.spoiler_text, v.sensitive, eunha_ts(v.created_at) AS created_at,"
         " (SELECT coalesce(json_agg(eunha_media_json(hm)::jsonb"
         "  || jsonb_build_object('description', nullif(v.descs[x.i], '')) ORDER BY x.i), '[]')"
         "  ::text FROM unnest(v.ids) WITH ORDINALITY x(id, i) JOIN media_attachments hm"
         "  ON hm.tenant_id = $1 AND hm.id = x.id) AS media,"
         " (eunha_account(a)).* FROM statuses s JOIN accounts a ON a.tenant_id = $1"
         " AND a.id = s.account_id,"
         " LATERAL (SELECT e.content, e.spoiler_text, e.sensitive, e.created_at, e.id,"
         "  e.media_ids AS ids, e.media_descriptions AS descs"
         "  FROM status_edits e WHERE e.tenant_id = $1 AND e.status_id = s.id UNION ALL"
         "  SELECT s.content, s.spoiler_text, s.sensitive, s.created_at, 0,"
         "  coalesce(array_agg(cm.id ORDER BY cm.position, cm.id), '{}'),"
         "  coalesce(array_agg(coalesce(cm.description, '') ORDER BY cm.position, cm.id), '{}')"
         "  FROM media_attachments cm WHERE cm.tenant_id = $1 AND cm.status_id = s.id"
         "  AND cm.position >= 0 HAVING NOT EXISTS"
         "  (SELECT 1 FROM status_edits e2 WHERE e2.tenant_id = $1 AND e2.status_id = s.id)) v"
         " CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility, s.deleted_at,"
         " $3::bigint) vis"
         " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND s.reblog_of_id IS NULL AND vis.ok"
         " ORDER BY v.created_at, v.id"},
    /* Ancestors oldest first; descendants depth first, as a thread reads.
     * Hidden ones are dropped by the renderer. Like Mastodon's thread
     * (StatusFilter), statuses by a domain the viewer blocks, by a
     * silenced author the viewer does not follow, by an account the viewer
     * blocks or mutes or that blocks the viewer, are left out; the walk
     * still passes through them, so their replies stay. */
    [THREAD_CONTEXT] =
        {"statuses.context",
         "WITH RECURSIVE up(id, parent, depth, author) AS ("
         "  SELECT p.id, p.in_reply_to_id, 1, p.account_id FROM statuses p WHERE p.tenant_id = $1"
         "   AND p.id = (SELECT in_reply_to_id FROM statuses WHERE tenant_id = $1"
         "   AND id = $2::bigint)"
         "  UNION ALL SELECT p.id, p.in_reply_to_id, up.depth + 1, p.account_id FROM statuses p"
         "   JOIN up ON p.tenant_id = $1 AND p.id = up.parent WHERE up.depth < 40),"
         " down(id, path, author) AS ("
         "  SELECT c.id, ARRAY[c.id], c.account_id FROM statuses c WHERE c.tenant_id = $1"
         "   AND c.in_reply_to_id = $2::bigint AND c.deleted_at IS NULL"
         "  UNION ALL SELECT c.id, down.path || c.id, c.account_id FROM statuses c JOIN down"
         "   ON c.tenant_id = $1 AND c.in_reply_to_id = down.id WHERE c.deleted_at IS NULL"
         "   AND array_length(down.path, 1) < 40)"
         " SELECT 'r', s.id::text, 0 AS k, 0::bigint AS o FROM statuses s"
         "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
         "  s.deleted_at, $3::bigint) vis WHERE s.tenant_id = $1"
         "  AND s.id = $2::bigint AND vis.ok UNION ALL SELECT 'a',"
         " up.id::text, 1, -up.depth FROM up"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = up.author"
         "  CROSS JOIN LATERAL eunha_is_not_domain_hidden($1, a.id, a.domain, a.silenced_at,"
         "  $3::bigint) nh CROSS JOIN LATERAL eunha_is_not_shunned($1, up.author, $3::bigint) ns"
         "  WHERE nh.ok AND ns.ok"
         " UNION ALL SELECT 'd', dd.id::text, 2, dd.o"
         "  FROM (SELECT id, author, row_number() OVER (ORDER BY path) AS o FROM"
         "  (SELECT id, path, author FROM down ORDER BY path LIMIT 60) d0) dd"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = dd.author"
         "  CROSS JOIN LATERAL eunha_is_not_domain_hidden($1, a.id, a.domain, a.silenced_at,"
         "  $3::bigint) nh CROSS JOIN LATERAL eunha_is_not_shunned($1, dd.author, $3::bigint) ns"
         "  WHERE nh.ok AND ns.ok"
         " ORDER BY 3, 4"},
    {0},
};

/* ------------------------------------------------------- source, history */

static void
on_source(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:s, s:s}", "id", PQgetvalue(res, 0, 0), "text",
                                PQgetvalue(res, 0, 1), "spoiler_text", PQgetvalue(res, 0, 2)));
}

void
eu_statuses_source(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_statuses_thread_sql[THREAD_SOURCE], 2, params, on_source, NULL);
}

static void
on_history(struct eu_req *req, PGresult *res, void *arg)
{
    int n = PQntuples(res);
    if (n == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *out = json_array();
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    int c_content = PQfnumber(res, "content"), c_spoiler = PQfnumber(res, "spoiler_text");
    int c_sensitive = PQfnumber(res, "sensitive"), c_created = PQfnumber(res, "created_at");
    int c_media = PQfnumber(res, "media");
    for (int i = 0; i < n; i++) {
        json_t *rendered =
            eu_media_attachments_json(req->app, eu_req_base_url(req), PQgetvalue(res, i, c_media));
        json_t *v = json_pack(
            "{s:s, s:s, s:b, s:s, s:o, s:o, s:[]}", "content", PQgetvalue(res, i, c_content),
            "spoiler_text", PQgetvalue(res, i, c_spoiler), "sensitive",
            PQgetvalue(res, i, c_sensitive)[0] == 't', "created_at", PQgetvalue(res, i, c_created),
            "account", eu_account_json(req, res, i, &ac), "media_attachments", rendered, "emojis");
        json_array_append_new(out, v);
    }
    eu_req_reply_json(req, 200, out);
}

void
eu_statuses_history(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_statuses_thread_sql[THREAD_HISTORY], 2, params, on_history, NULL);
}

/* ---------------------------------------------------------------- context */

struct context_ctx {
    char **ancestors;
    size_t n_ancestors;
};

static bool
is_ancestor(const struct context_ctx *cx, const char *id)
{
    for (size_t i = 0; i < cx->n_ancestors; i++)
        if (strcmp(cx->ancestors[i], id) == 0)
            return true;
    return false;
}

static void
on_context_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct context_ctx *cx = arg;
    json_t *anc = json_array(), *desc = json_array();
    size_t i;
    json_t *st;
    json_array_foreach(array, i, st)
    {
        const char *id = json_string_value(json_object_get(st, "id"));
        json_array_append(is_ancestor(cx, id) ? anc : desc, st);
    }
    json_decref(array);
    eu_req_reply_json(req, 200, json_pack("{s:o, s:o}", "ancestors", anc, "descendants", desc));
}

static void
on_context_ids(struct eu_req *req, PGresult *res, void *arg)
{
    struct context_ctx *cx = arg;
    int n = PQntuples(res);
    if (n == 0 || strcmp(PQgetvalue(res, 0, 0), "r") != 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char **ids = eu_arena_alloc(req->arena, (size_t)n * sizeof(char *));
    cx->ancestors = eu_arena_alloc(req->arena, (size_t)n * sizeof(char *));
    size_t k = 0;
    for (int i = 1; i < n; i++) {
        ids[k++] = eu_arena_strdup(req->arena, PQgetvalue(res, i, 1));
        if (PQgetvalue(res, i, 0)[0] == 'a')
            cx->ancestors[cx->n_ancestors++] = (char *)ids[k - 1];
    }
    eu_statuses_render(req, ids, k, on_context_rendered, cx);
}

void
eu_statuses_context(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct context_ctx *cx = eu_arena_calloc(req->arena, sizeof(*cx));
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_statuses_thread_sql[THREAD_CONTEXT], 2, params, on_context_ids, cx);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_statuses_thread_routes[] = {
    {EU_HTTP_GET, "/api/v1/statuses/:id/history", eu_statuses_history, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/statuses/:id/source", eu_statuses_source, "read:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/statuses/:id/context", eu_statuses_context, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {0},
};
