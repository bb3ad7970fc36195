/*
 * The Status entity. One query loads the asked statuses and the originals of
 * the reblogs among them, with their authors, counts, mentions, tags and the
 * viewer's flags, and applies the visibility rule to each row; the rows are
 * then assembled in the caller's order with reblogs nested. List endpoints
 * end with eu_statuses_reply_list(), which adds filters and the Link header.
 */
#include "eunha/statuses.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/cards.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/filters.h"
#include "eunha/http.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "render_cache_internal.h"

/* The fields of status_render.statuses's rows, found by name (see
 * col_names): first what every render needs (visibility, stamps, the
 * viewer's flags, the poll), then the status's own columns and its
 * author's, which are NULL when the cache holds the row's current version
 * (see render_cache.c). status_render.cached has those up to C_TEXT;
 * C_ACCOUNT is the first of the author's eunha_account_entity fields,
 * which eu_account_json() finds itself. */
enum {
    C_ID,
    C_VISIBLE,
    C_DOMAIN_BLOCKED,
    C_REBLOG_OF,
    C_SXMIN,
    C_AXMIN,
    C_AUTHOR,
    C_VISIBILITY,
    C_SCACHED,
    C_ACACHED,
    C_FAVOURITED,
    C_REBLOGGED,
    C_MUTED,
    C_BOOKMARKED,
    C_PINNED,
    C_APP,
    C_POLL,
    C_FILTER_STAMP,
    C_TEXT,
    C_CREATED,
    C_REPLY_ID,
    C_REPLY_ACCT,
    C_SENSITIVE,
    C_SPOILER,
    C_LANGUAGE,
    C_URI,
    C_URL,
    C_LOCAL,
    C_CONTENT,
    C_EDITED,
    C_REPLIES,
    C_REBLOGS,
    C_FAVS,
    C_MENTIONS,
    C_TAGS,
    C_MEDIA,
    C_EMOJIS,
    C_CARD,
    C_QUOTE_STATE,
    C_QUOTED_ID,
    C_QUOTE_POLICY,
    C_FOLLOWS_AUTHOR,
    C_GONE,
    C_ACCOUNT,
    C_NFIELDS
};

/* The names the render statements and the insert that answers with its
 * status (statuses.insert and statuses.insert_plain) give those fields. None is the name of
 * a field of eunha_account_entity but "account_id", which comes first. */
static const char *const col_names[C_NFIELDS] = {
    [C_ID] = "id",
    [C_VISIBLE] = "visible",
    [C_DOMAIN_BLOCKED] = "domain_blocked",
    [C_REBLOG_OF] = "reblog_of_id",
    [C_SXMIN] = "sxmin",
    [C_AXMIN] = "axmin",
    [C_AUTHOR] = "author_id",
    [C_VISIBILITY] = "visibility",
    [C_SCACHED] = "status_cached",
    [C_ACACHED] = "account_cached",
    [C_FAVOURITED] = "favourited",
    [C_REBLOGGED] = "reblogged",
    [C_MUTED] = "muted",
    [C_BOOKMARKED] = "bookmarked",
    [C_PINNED] = "pinned",
    [C_APP] = "app",
    [C_POLL] = "poll",
    [C_FILTER_STAMP] = "filter_stamp",
    [C_TEXT] = "source_text",
    [C_CREATED] = "created_at",
    [C_REPLY_ID] = "in_reply_to_id",
    [C_REPLY_ACCT] = "in_reply_to_account_id",
    [C_SENSITIVE] = "sensitive",
    [C_SPOILER] = "spoiler_text",
    [C_LANGUAGE] = "language",
    [C_URI] = "status_uri",
    [C_URL] = "status_url",
    [C_LOCAL] = "local",
    [C_CONTENT] = "content",
    [C_EDITED] = "edited_at",
    [C_REPLIES] = "replies_count",
    [C_REBLOGS] = "reblogs_count",
    [C_FAVS] = "favourites_count",
    [C_MENTIONS] = "mentions",
    [C_TAGS] = "tags",
    [C_MEDIA] = "media",
    [C_EMOJIS] = "status_emojis",
    [C_CARD] = "card",
    [C_QUOTE_STATE] = "quote_state",
    [C_QUOTED_ID] = "quoted_id",
    [C_QUOTE_POLICY] = "quote_policy",
    [C_FOLLOWS_AUTHOR] = "follows_author",
    [C_GONE] = "gone",
    [C_ACCOUNT] = "account_id",
};

enum {
    STATUS_RENDER_STATUSES,
    STATUS_RENDER_CACHED,
};

/*
 * The first part both render statements share ($2 the ids, $3 the viewer):
 * the page's ids; whether the viewer may see each status (au: each
 * statement joins the audience rule, migration 0042, so that it is a plain
 * expression and not a subplan a status); the viewer's flags for the whole
 * page, each one index range read once rather than a probe per status; the
 * author's domain blocked by the viewer (one primary-key probe, only for a
 * remote author); the poll, built only where there is one (as a subquery it
 * was probed for every row, migration 0031); and whether the viewer has
 * filters to load at all and the compiled ones are current. One text, so
 * the two statements cannot drift apart.
 */
#define RENDER_PAGE_HEAD                                                                           \
    "WITH want0 AS (SELECT unnest($2::bigint[]) AS id"                                             \
    " UNION SELECT x.reblog_of_id FROM statuses x WHERE x.tenant_id = $1"                          \
    " AND x.id = ANY($2::bigint[]) AND x.reblog_of_id IS NOT NULL),"                               \
    " want AS (SELECT id FROM want0 UNION SELECT wq.quoted_status_id FROM quotes wq"               \
    "  WHERE wq.tenant_id = $1 AND wq.status_id IN (SELECT id FROM want0)"                         \
    "  AND wq.state = 'accepted' AND wq.quoted_status_id IS NOT NULL),"                            \
    " fav AS (SELECT f.status_id FROM favourites f WHERE f.tenant_id = $1"                         \
    "  AND f.account_id = $3::bigint AND f.status_id IN (SELECT id FROM want)),"                   \
    " reb AS (SELECT r.reblog_of_id FROM statuses r WHERE r.tenant_id = $1"                        \
    "  AND r.account_id = $3::bigint AND r.deleted_at IS NULL"                                     \
    "  AND r.reblog_of_id IN (SELECT id FROM want)),"                                              \
    " bm AS (SELECT b.status_id FROM bookmarks b WHERE b.tenant_id = $1"                           \
    "  AND b.account_id = $3::bigint AND b.status_id IN (SELECT id FROM want)),"                   \
    " pin AS (SELECT p.status_id FROM status_pins p WHERE p.tenant_id = $1"                        \
    "  AND p.account_id = $3::bigint AND p.status_id IN (SELECT id FROM want)),"                   \
    " cmute AS (SELECT cm.conversation_id FROM conversation_mutes cm WHERE cm.tenant_id = $1"      \
    "  AND cm.account_id = $3::bigint)"                                                            \
    " SELECT s.id, (s.deleted_at IS NULL AND a.suspended_at IS NULL AND au.ok) AS visible,"        \
    " a.domain IS NOT NULL AND EXISTS (SELECT 1 FROM account_domain_blocks adb"                    \
    "  WHERE adb.tenant_id = $1 AND adb.account_id = $3::bigint AND adb.domain = a.domain)"        \
    "  AS domain_blocked,"                                                                         \
    " s.reblog_of_id, s.xmin::text AS sxmin, a.xmin::text AS axmin,"                               \
    " s.account_id AS author_id, s.visibility, k.status_cached, k.account_cached,"                 \
    " s.id IN (SELECT status_id FROM fav) AS favourited,"                                          \
    " s.id IN (SELECT reblog_of_id FROM reb) AS reblogged,"                                        \
    " coalesce(s.conversation_id, s.id) IN (SELECT conversation_id FROM cmute) AS muted,"          \
    " s.id IN (SELECT status_id FROM bm) AS bookmarked,"                                           \
    " s.id IN (SELECT status_id FROM pin) AS pinned,"                                              \
    " (SELECT json_build_object('name', oa.name, 'website', oa.website)::text"                     \
    "  FROM oauth_applications oa WHERE oa.tenant_id = $1 AND oa.id = s.application_id"            \
    "  AND s.account_id = $3::bigint) AS app,"                                                     \
    " CASE WHEN s.has_poll THEN eunha_poll_json($1, s.id, $3::bigint) END AS poll,"                \
    " (SELECT stamp FROM eunha_filters_stamp($1, $3::bigint) stamp) AS filter_stamp,"              \
    " s.deleted_at IS NOT NULL AS gone, q.state AS quote_state, q.quoted_status_id::text AS "      \
    "quoted_id, s.quote_policy,"                                                                   \
    " CASE WHEN s.quote_policy = 1 AND $3::bigint <> 0 THEN EXISTS (SELECT 1 FROM follows qf"      \
    "  WHERE qf.tenant_id = $1 AND qf.account_id = $3::bigint"                                     \
    "  AND qf.target_account_id = s.account_id) END AS follows_author,"

/*
 * The two render statements, with $2 the ids as an array literal and $3
 * the viewer's account id (0 anonymous). They share their first part
 * (RENDER_PAGE_HEAD); test_render_cache renders the same page through
 * both.
 */
const struct eu_sql eu_status_render_sql[] = {
    /*
     * $4 the base URL, $5 and $6 the "id:xmin" stamps of the statuses and
     * accounts the cache holds, $7 whether to return the source text. The
     * LATERAL parts with the status's and its author's columns run only
     * for rows whose stamp is not among those: a cached row costs its
     * visibility, the viewer's flags and its poll.
     */
    [STATUS_RENDER_STATUSES] =
        {"status_render.statuses", RENDER_PAGE_HEAD
         " CASE WHEN $7::boolean THEN s.text END AS source_text, sx.*, ax.*"
         " FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         " LEFT JOIN quotes q ON q.tenant_id = $1 AND q.status_id = s.id"
         " CROSS JOIN LATERAL eunha_is_in_audience($1, s.id, s.account_id, s.visibility,"
         "  $3::bigint) au"
         " CROSS JOIN LATERAL (SELECT (s.id::text || ':' || s.xmin::text) = ANY($5::text[])"
         "  AS status_cached, (a.id::text || ':' || a.xmin::text) = ANY($6::text[])"
         "  AS account_cached) k"
         " LEFT JOIN LATERAL (SELECT eunha_ts(s.created_at) AS created_at, s.in_reply_to_id,"
         "  s.in_reply_to_account_id, s.sensitive, s.spoiler_text, s.language,"
         "  s.uri AS status_uri, s.url AS status_url, s.local, s.content,"
         "  CASE WHEN s.edited_at IS NULL THEN NULL ELSE eunha_ts(s.edited_at) END AS edited_at,"
         "  s.replies_count, s.reblogs_count, s.favourites_count,"
         "  (SELECT coalesce(json_agg(eunha_mention_json(ma, $4) ORDER BY m.id), '[]')::text"
         "   FROM mentions m"
         "   JOIN accounts ma ON ma.tenant_id = $1 AND ma.id = m.account_id WHERE m.tenant_id = $1"
         "   AND m.status_id = s.id AND NOT m.silent) AS mentions,"
         "  (SELECT coalesce(json_agg(eunha_tag_json(t.name, $4) ORDER BY t.name), '[]')::text"
         "   FROM statuses_tags st JOIN tags t ON t.tenant_id = $1 AND t.id = st.tag_id"
         "   WHERE st.tenant_id = $1 AND st.status_id = s.id) AS tags,"
         /* Media removed by an edit keep position -1 for the history. */
         "  (SELECT coalesce(json_agg(eunha_media_json(mda) ORDER BY mda.position, mda.id),"
         "   '[]')::text FROM media_attachments mda WHERE mda.tenant_id = $1"
         "   AND mda.status_id = s.id AND mda.position >= 0) AS media,"
         /* The custom emoji its text uses, its author's server's. */
         "  eunha_emojis_in($1, a.domain, s.spoiler_text || ' ' || s.content) AS status_emojis,"
         /* Its preview card (src/social/cards.c), attached after the
          * status was stored: the attaching statement touches the status
          * row, so a cached status is built again with it. */
         "  (SELECT eunha_card_json(pc)::text FROM preview_cards_statuses ps"
         "   JOIN preview_cards pc ON pc.tenant_id = $1 AND pc.id = ps.preview_card_id"
         "   WHERE ps.tenant_id = $1 AND ps.status_id = s.id) AS card"
         /* OFFSET 0 keeps each LATERAL a subquery of its own, so the stamp
          * test gates it (a one-time filter) instead of becoming a join
          * filter applied after its columns were computed. */
         "  WHERE NOT k.status_cached OFFSET 0) sx ON true"
         /* The author's Account: eunha_account(a)'s fields, its first
          * named for C_ACCOUNT, as columns (include/eunha/statuses.h)
          * because a is the outer row here and the function would take it
          * whole for every row. */
         " LEFT JOIN LATERAL (SELECT" EU_STATUS_AUTHOR_COLUMNS_OF_A
         "  WHERE NOT k.account_cached OFFSET 0) ax ON true"
         /* ANY(ARRAY(...)): fetched by primary key whatever the statistics
          * say, so no plan can compute the costly columns for rows it then
          * drops. */
         " WHERE s.tenant_id = $1 AND s.id = ANY(ARRAY(SELECT id FROM want))"},
    /*
     * For a page whose statuses and authors the cache holds, all of them:
     * the same rows without the columns the cache has, $4 and $5 the
     * stamps, $6 the source flag. Even never run, the LATERAL parts above
     * cost every execution their set-up (a tenth of the statement); a row
     * found stale here makes the render ask again with the statement above.
     */
    [STATUS_RENDER_CACHED] =
        {"status_render.cached", RENDER_PAGE_HEAD
         " CASE WHEN $6::boolean THEN s.text END AS source_text"
         " FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         " LEFT JOIN quotes q ON q.tenant_id = $1 AND q.status_id = s.id"
         " CROSS JOIN LATERAL eunha_is_in_audience($1, s.id, s.account_id, s.visibility,"
         "  $3::bigint) au"
         " CROSS JOIN LATERAL (SELECT (s.id::text || ':' || s.xmin::text) = ANY($4::text[])"
         "  AS status_cached, (a.id::text || ':' || a.xmin::text) = ANY($5::text[])"
         "  AS account_cached) k"
         " WHERE s.tenant_id = $1 AND s.id = ANY(ARRAY(SELECT id FROM want))"},
    {0},
};

/*
 * Statuses a list reply writes without copying their cached part: each
 * slim object holds only the viewer's members and is written after its
 * base's cached text (eu_req_json_extend()); base is what filters read.
 * The map holds a reference to each base until the request ends.
 */
struct slim_map {
    json_t **slim, **base;
    size_t n, cap;
};

struct render {
    struct eu_req *req;
    char **ids; /* arena copies of the asked ids */
    size_t n;
    unsigned flags;
    bool full;     /* the statement with every column, even for a page the cache holds */
    bool no_cache; /* a last try after a cached entry went meanwhile */
    eu_statuses_rendered_cb cb;
    void *arg;
    struct slim_map *slim; /* a list reply's, or NULL: every status a full object */
    json_t *no_filters;    /* the "filtered" array of every status, empty: see no_filters() */
    int col[C_NFIELDS];    /* where the result being read has each field; -1: not there */
    struct eu_account_cols account; /* the author's fields, when col[C_ACCOUNT] >= 0 */
};

static const char *const VISIBILITIES[] = {"public", "unlisted", "private", "direct"};

/* The Poll entity for req's viewer; see statuses.h. */
json_t *
eu_poll_json_finish(struct eu_req *req, const char *text)
{
    json_t *poll = json_loads(text, 0, NULL);
    if (poll && !req->auth.account_id) {
        json_object_del(poll, "voted");
        json_object_del(poll, "own_votes");
    }
    return poll;
}

const char *
eu_status_visibility_name(int v)
{
    return v >= 0 && v < 4 ? VISIBILITIES[v] : NULL;
}

int
eu_status_visibility_code(const char *name)
{
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, VISIBILITIES[i]) == 0)
            return i;
    return -1;
}

int
eu_quote_policy_code(const char *name)
{
    static const char *const names[] = {"public", "followers", "nobody"};
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static const char *
col_str(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static bool
col_bool(const PGresult *r, int row, int col)
{
    return !PQgetisnull(r, row, col) && PQgetvalue(r, row, col)[0] == 't';
}

/* Finds the fields of a render row in r by name, into rd's col (-1 for
 * one it does not have) and account. True when r has them all. Once a
 * result: a few dozen name comparisons a page. */
static bool
cols_find(const PGresult *r, struct render *rd)
{
    bool all = true;
    for (int i = 0; i < C_NFIELDS; i++) {
        rd->col[i] = PQfnumber(r, col_names[i]);
        /* The inserts that answer with their status have no card (a new
         * status has none yet), no quote (a quote is answered by the
         * render statement) and no viewer's relationship to its author. */
        all = all && (rd->col[i] >= 0 || i == C_CARD || i == C_QUOTE_STATE || i == C_QUOTED_ID ||
                      i == C_QUOTE_POLICY || i == C_FOLLOWS_AUTHOR || i == C_GONE);
    }
    if (rd->col[C_ACCOUNT] >= 0)
        eu_account_cols_find(&rd->account, r);
    return all;
}

static json_t *
str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *
parse_array(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_array(v)) {
        json_decref(v);
        v = json_array();
    }
    return v;
}

/* The part of a row's entity that is the same for every viewer (what the
 * cache keeps): no account, no viewer's flags, no poll, no reblog. The
 * author's username comes from the account entity, not the row: when the
 * cache holds the author the statement leaves the author's columns empty,
 * while a changed count still has the status built again. New reference. */
static json_t *
status_base_json(struct eu_req *req, const int *col, const PGresult *r, int row,
                 const char *username)
{
    const char *id = PQgetvalue(r, row, col[C_ID]);
    const char *base = eu_req_base_url(req);
    bool is_reblog = !PQgetisnull(r, row, col[C_REBLOG_OF]);
    const char *uri = col_str(r, row, col[C_URI]), *url = col_str(r, row, col[C_URL]);
    if (col_bool(r, row, col[C_LOCAL])) {
        /* Local addresses are derived, not stored, so they follow the tenant. */
        uri = eu_arena_sprintf(req->arena, "%s/users/%s/statuses/%s%s", base, username, id,
                               is_reblog ? "/activity" : "");
        url = is_reblog ? uri : eu_arena_sprintf(req->arena, "%s/@%s/%s", base, username, id);
    }
    int vis = atoi(PQgetvalue(r, row, col[C_VISIBILITY]));
    const char *vname = eu_status_visibility_name(vis);
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "created_at", json_string(PQgetvalue(r, row, col[C_CREATED])));
    json_object_set_new(o, "in_reply_to_id", str_or_null(col_str(r, row, col[C_REPLY_ID])));
    json_object_set_new(o, "in_reply_to_account_id",
                        str_or_null(col_str(r, row, col[C_REPLY_ACCT])));
    json_object_set_new(o, "sensitive", json_boolean(col_bool(r, row, col[C_SENSITIVE])));
    json_object_set_new(o, "spoiler_text", json_string(PQgetvalue(r, row, col[C_SPOILER])));
    json_object_set_new(o, "visibility", json_string(vname ? vname : "public"));
    json_object_set_new(o, "language", str_or_null(col_str(r, row, col[C_LANGUAGE])));
    json_object_set_new(o, "uri", str_or_null(uri));
    json_object_set_new(o, "url", str_or_null(url));
    json_object_set_new(o, "replies_count",
                        json_integer(atoll(PQgetvalue(r, row, col[C_REPLIES]))));
    json_object_set_new(o, "reblogs_count",
                        json_integer(atoll(PQgetvalue(r, row, col[C_REBLOGS]))));
    json_object_set_new(o, "favourites_count",
                        json_integer(atoll(PQgetvalue(r, row, col[C_FAVS]))));
    json_object_set_new(o, "edited_at", str_or_null(col_str(r, row, col[C_EDITED])));
    json_object_set_new(o, "content",
                        json_string(is_reblog ? "" : PQgetvalue(r, row, col[C_CONTENT])));
    json_object_set_new(o, "media_attachments",
                        eu_media_attachments_json(req->app, base, col_str(r, row, col[C_MEDIA])));
    json_object_set_new(o, "mentions", parse_array(col_str(r, row, col[C_MENTIONS])));
    json_object_set_new(o, "tags", parse_array(col_str(r, row, col[C_TAGS])));
    json_object_set_new(o, "emojis", eu_custom_emojis_json(req, col_str(r, row, col[C_EMOJIS])));
    json_t *card = NULL;
    if (col[C_CARD] >= 0 && !is_reblog)
        card = eu_card_json(req->app, base, col_str(r, row, col[C_CARD]));
    json_object_set_new(o, "card", card ? card : json_null());
    return o;
}

/* What a render found for one row: the status's and the author's shared
 * parts, borrowed from the cache or owned by the render. */
struct parts {
    json_t *status, *account;
    json_t *status_text, *account_text; /* their JSON from the cache, or NULL; owned */
};

/* The cache's object for (kind, id) if it holds the version stamped xmin,
 * and its JSON text into *text. */
static json_t *
cached(const struct render *rd, int kind, int64_t id, const char *xmin, uint32_t base,
       json_t **text)
{
    struct eu_rc_hit hit;
    if (!eu_rc_peek(rd->req->tenant->id, kind, id, base, &hit) || strcmp(hit.xmin, xmin) != 0)
        return NULL;
    *text = json_incref(hit.text);
    return hit.obj;
}

/*
 * The shared parts of row: from the cache when the statement skipped the
 * columns (or an earlier row of this render already built them), else
 * built from the row and kept. False when the statement skipped columns
 * the cache no longer holds (evicted while the statement ran, or changed
 * since a page was asked with status_render.cached).
 */
static bool
row_parts(struct render *rd, const PGresult *r, int row, uint32_t base, struct parts *out)
{
    const int *col = rd->col;
    struct eu_req *req = rd->req;
    size_t cap = (size_t)req->app->cfg->render_cache_entries;
    int64_t id = eu_id_parse(PQgetvalue(r, row, col[C_ID]), NULL);
    int64_t author = eu_id_parse(PQgetvalue(r, row, col[C_AUTHOR]), NULL);
    const char *sx = PQgetvalue(r, row, col[C_SXMIN]), *ax = PQgetvalue(r, row, col[C_AXMIN]);
    /* status_render.cached has no columns to build from. */
    bool built = col[C_ACCOUNT] >= 0;
    out->account_text = out->status_text = NULL;
    out->account = cached(rd, EU_RC_ACCOUNT, author, ax, base, &out->account_text);
    if (out->account) {
        json_incref(out->account);
    } else if (col_bool(r, row, col[C_ACACHED]) || !built) {
        return false;
    } else {
        out->account = eu_account_json(req, r, row, &rd->account);
        out->account_text = json_incref(
            eu_rc_put(cap, req->tenant->id, EU_RC_ACCOUNT, author, ax, base, 0, 0, out->account));
    }
    out->status = cached(rd, EU_RC_STATUS, id, sx, base, &out->status_text);
    eu_rc_count(out->status != NULL);
    if (out->status) {
        json_incref(out->status);
    } else if (col_bool(r, row, col[C_SCACHED]) || !built) {
        json_decref(out->account);
        json_decref(out->account_text);
        return false;
    } else {
        const char *username = json_string_value(json_object_get(out->account, "username"));
        out->status = status_base_json(req, rd->col, r, row, username ? username : "");
        const char *orig = col_str(r, row, col[C_REBLOG_OF]);
        out->status_text =
            json_incref(eu_rc_put(cap, req->tenant->id, EU_RC_STATUS, id, sx, base, author,
                                  orig ? eu_id_parse(orig, NULL) : 0, out->status));
    }
    return true;
}

static void
slim_free(void *data)
{
    struct slim_map *m = data;
    for (size_t i = 0; i < m->n; i++)
        json_decref(m->base[i]);
}

/* Remembers that slim is written after base's cached text; takes base's
 * reference. */
static void
slim_add(struct eu_req *req, struct slim_map *m, json_t *slim, json_t *base)
{
    if (m->n == m->cap) {
        if (!m->cap)
            eu_arena_on_free(req->arena, slim_free, m);
        size_t cap = m->cap ? 2 * m->cap : 32;
        json_t **s = eu_arena_alloc(req->arena, cap * sizeof(*s));
        json_t **b = eu_arena_alloc(req->arena, cap * sizeof(*b));
        if (m->n) {
            memcpy(s, m->slim, m->n * sizeof(*s));
            memcpy(b, m->base, m->n * sizeof(*b));
        }
        m->slim = s;
        m->base = b;
        m->cap = cap;
    }
    m->slim[m->n] = slim;
    m->base[m->n++] = base;
}

/* The base slim is written after, or NULL for a full object. A page holds
 * at most a few dozen: a linear search is cheaper than an index. */
static json_t *
slim_base(const struct slim_map *m, const json_t *slim)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->slim[i] == slim)
            return m->base[i];
    return NULL;
}

static void
decref_json(void *data)
{
    json_decref(data);
}

/* One empty array shared by every status of the render as its "filtered"
 * member: two allocations a status fewer. Nothing appends to it; a
 * filter that matches puts an array of its own in its place. */
static json_t *
no_filters(struct render *rd)
{
    if (!rd->no_filters) {
        rd->no_filters = json_array();
        eu_arena_on_free(rd->req->arena, decref_json, rd->no_filters);
    }
    return rd->no_filters;
}

/* Mastodon only says "pinned" where pinning is possible: own, non-direct,
 * not a reblog. */
static bool
shows_pinned(const struct eu_req *req, const int *col, const PGresult *r, int row)
{
    return PQgetisnull(r, row, col[C_REBLOG_OF]) &&
           atoi(PQgetvalue(r, row, col[C_VISIBILITY])) < 3 &&
           eu_id_parse(PQgetvalue(r, row, col[C_AUTHOR]), NULL) == req->auth.account_id;
}

/* Appends ,"name":true or ,"name":false at *p. */
static void
put_flag(char **p, const char *name, bool v)
{
    size_t n = strlen(name);
    memcpy(*p, ",\"", 2);
    memcpy(*p + 2, name, n);
    *p += 2 + n;
    memcpy(*p, v ? "\":true" : "\":false", v ? 6 : 7);
    *p += v ? 6 : 7;
}

/* The viewer's flags of row as members' JSON, the same bytes as the
 * members status_json() sets otherwise, or NULL for an anonymous viewer.
 * In the request's arena. Written by hand: printf cost more than the
 * objects it replaces. */
static const char *
viewer_flags_text(const struct render *rd, const PGresult *r, int row)
{
    const int *col = rd->col;
    struct eu_req *req = rd->req;
    if (!req->auth.account_id)
        return NULL;
    char *buf = eu_arena_alloc(req->arena, 5 * 22 + 1), *p = buf;
    put_flag(&p, "favourited", col_bool(r, row, col[C_FAVOURITED]));
    put_flag(&p, "reblogged", col_bool(r, row, col[C_REBLOGGED]));
    put_flag(&p, "muted", col_bool(r, row, col[C_MUTED]));
    put_flag(&p, "bookmarked", col_bool(r, row, col[C_BOOKMARKED]));
    if (shows_pinned(req, rd->col, r, row))
        put_flag(&p, "pinned", col_bool(r, row, col[C_PINNED]));
    *p = '\0';
    return buf + 1; /* without the first comma */
}

/* The entity of one row for this viewer, without its nested reblog: the
 * shared parts plus the viewer's. Takes parts' references. New reference. */
/*
 * The application of a viewer's own status, from the JSON text the
 * statement wrote, parsed once: a few applications serve most statuses,
 * and json_loads() for each was 2% of a home page. Direct-mapped by a
 * hash of the text, so an entry is only ever replaced, never stale; the
 * objects are shared and never changed. Loop thread only; what the table
 * holds lives as long as the process (64 small entries at most).
 */
struct app_entry {
    char *src;
    json_t *obj; /* NULL when src is not JSON: no application shown */
    char *text;  /* obj's JSON as the reply writes it */
    size_t text_len;
};
static struct app_entry apps[64];

static const struct app_entry *
app_of(const char *src)
{
    uint32_t h = 2166136261u;
    for (const char *p = src; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    struct app_entry *e = &apps[h % (sizeof(apps) / sizeof(apps[0]))];
    if (!e->src || strcmp(e->src, src) != 0) {
        free(e->src);
        json_decref(e->obj);
        free(e->text);
        e->src = eu_xstrdup(src);
        e->obj = json_loads(src, 0, NULL);
        e->text = e->obj ? json_dumps(e->obj, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        e->text_len = e->text ? strlen(e->text) : 0;
        if (!e->text) {
            json_decref(e->obj);
            e->obj = NULL;
        }
    }
    return e->obj ? e : NULL;
}

/* The members after "reblog" as text ("application" if app, "account" and
 * "poll"), in the arena, when the account's JSON is at hand and there is
 * no poll or source text to add; else NULL. */
static const char *
trailer_text(const struct render *rd, const PGresult *r, int row, const struct parts *parts,
             const struct app_entry *app)
{
    const int *col = rd->col;
    if (!parts->account_text || col_str(r, row, col[C_POLL]) || (rd->flags & EU_RENDER_SOURCE))
        return NULL;
    static const char app_head[] = "\"application\":", head[] = "\"account\":",
                      foot[] = ",\"poll\":null";
    size_t n = json_string_length(parts->account_text);
    size_t an = app ? sizeof(app_head) - 1 + app->text_len + 1 : 0;
    char *t = eu_arena_alloc(rd->req->arena, an + sizeof(head) - 1 + n + sizeof(foot)), *p = t;
    if (app) {
        memcpy(p, app_head, sizeof(app_head) - 1);
        p += sizeof(app_head) - 1;
        memcpy(p, app->text, app->text_len);
        p += app->text_len;
        *p++ = ',';
    }
    memcpy(p, head, sizeof(head) - 1);
    p += sizeof(head) - 1;
    memcpy(p, json_string_value(parts->account_text), n);
    memcpy(p + n, foot, sizeof(foot)); /* with its NUL */
    return t;
}

/*
 * Mastodon's quote_approval for row as this viewer sees it: who may quote
 * it without asking (the author's policy; a private or direct status
 * nobody but its author), nobody by hand (the API offers no manual
 * policy), and what the viewer may do: quote it ("automatic"), not
 * ("denied"), or "unknown" signed out. A status without a policy (older
 * than quotes, or remote without interactionPolicy) is not quotable by
 * others, as in Mastodon. New reference.
 */
static json_t *
quote_approval_json(const struct render *rd, const PGresult *r, int row)
{
    const int *col = rd->col;
    const char *pol = col[C_QUOTE_POLICY] >= 0 ? col_str(r, row, col[C_QUOTE_POLICY]) : NULL;
    int policy = pol ? atoi(pol) : EU_QUOTE_POLICY_NOBODY;
    int vis = atoi(PQgetvalue(r, row, col[C_VISIBILITY]));
    if (vis >= 2)
        policy = EU_QUOTE_POLICY_NOBODY;
    json_t *automatic = json_array();
    if (policy == EU_QUOTE_POLICY_PUBLIC)
        json_array_append_new(automatic, json_string("public"));
    else if (policy == EU_QUOTE_POLICY_FOLLOWERS)
        json_array_append_new(automatic, json_string("followers"));
    int64_t viewer = rd->req->auth.account_id;
    const char *current = "denied";
    if (!viewer)
        current = "unknown";
    else if (eu_id_parse(PQgetvalue(r, row, col[C_AUTHOR]), NULL) == viewer)
        current = vis < 3 ? "automatic" : "denied";
    else if (policy == EU_QUOTE_POLICY_PUBLIC ||
             (policy == EU_QUOTE_POLICY_FOLLOWERS && col[C_FOLLOWS_AUTHOR] >= 0 &&
              col_bool(r, row, col[C_FOLLOWS_AUTHOR])))
        current = "automatic";
    json_t *o = json_object();
    json_object_set_new(o, "automatic", automatic);
    json_object_set_new(o, "manual", json_array());
    json_object_set_new(o, "current_user", json_string(current));
    return o;
}

/* Mastodon's ShallowQuote of row (a quote nested in a quoted status), or
 * null: its state and the quoted status's id once approved. */
static json_t *
shallow_quote_json(const struct render *rd, const PGresult *r, int row)
{
    const int *col = rd->col;
    const char *state = col[C_QUOTE_STATE] >= 0 ? col_str(r, row, col[C_QUOTE_STATE]) : NULL;
    if (!state)
        return json_null();
    const char *qid = col_str(r, row, col[C_QUOTED_ID]);
    bool accepted = strcmp(state, "accepted") == 0;
    json_t *o = json_object();
    json_object_set_new(o, "state", json_string(accepted && !qid ? "deleted" : state));
    json_object_set_new(o, "quoted_status_id", str_or_null(accepted ? qid : NULL));
    return o;
}

static json_t *
status_json(struct render *rd, const PGresult *r, int row, struct parts *parts)
{
    const int *col = rd->col;
    struct eu_req *req = rd->req;
    json_t *o;
    bool slim = rd->slim && parts->status_text;
    const char *trailer = NULL;
    const char *app_src = col_str(r, row, col[C_APP]);
    const struct app_entry *app = app_src ? app_of(app_src) : NULL;
    if (slim) {
        /* A list reply: only what filters and reblogs change is an object
         * member, written between the cached text with the viewer's flags
         * and the trailer with the application and the account's cached
         * text (objects were most of a page's allocations); the filters
         * read the base. */
        o = json_object();
        trailer = trailer_text(rd, r, row, parts, app);
        eu_req_json_extend(req, o, parts->status_text, viewer_flags_text(rd, r, row), trailer);
        slim_add(req, rd->slim, o, parts->status); /* takes the reference */
    } else {
        o = json_copy(parts->status); /* shallow: members are shared, not changed */
        /* The copy starts with the cached object's members, unchanged from
         * here on: the reply copies their JSON and writes only what follows. */
        if (parts->status_text)
            eu_req_json_splice(req, o, parts->status_text, json_object_size(parts->status));
        json_decref(parts->status);
    }
    if (parts->account_text && !trailer)
        eu_req_json_splice(req, parts->account, parts->account_text, 0);
    json_decref(parts->status_text);
    json_decref(parts->account_text);
    if (req->auth.account_id && !slim) {
        json_object_set_new(o, "favourited", json_boolean(col_bool(r, row, col[C_FAVOURITED])));
        json_object_set_new(o, "reblogged", json_boolean(col_bool(r, row, col[C_REBLOGGED])));
        json_object_set_new(o, "muted", json_boolean(col_bool(r, row, col[C_MUTED])));
        json_object_set_new(o, "bookmarked", json_boolean(col_bool(r, row, col[C_BOOKMARKED])));
        if (shows_pinned(req, rd->col, r, row))
            json_object_set_new(o, "pinned", json_boolean(col_bool(r, row, col[C_PINNED])));
    }
    json_object_set(o, "filtered", no_filters(rd));
    json_object_set_new(o, "reblog", json_null());
    json_object_set_new(o, "quote", shallow_quote_json(rd, r, row));
    json_object_set_new(o, "quote_approval", quote_approval_json(rd, r, row));
    if (trailer) {
        json_decref(parts->account); /* in the trailer */
        return o;
    }
    if (app)
        json_object_set(o, "application", app->obj);
    json_object_set_new(o, "account", parts->account);
    json_t *poll = col_str(r, row, col[C_POLL])
                       ? eu_poll_json_finish(req, col_str(r, row, col[C_POLL]))
                       : NULL;
    json_object_set_new(o, "poll", poll ? poll : json_null());
    if (rd->flags & EU_RENDER_SOURCE)
        json_object_set_new(o, "text", json_string(PQgetvalue(r, row, col[C_TEXT])));
    return o;
}

/* The row of id among the result's ids (row_ids, n of them), or -1. A page
 * is at most a few dozen rows, so a linear lookup is cheaper than building
 * an index; numbers, not strings, as strcmp was 1% of a home page. */
static int
find_row(const int64_t *row_ids, int n, int64_t id)
{
    for (int i = 0; i < n; i++)
        if (row_ids[i] == id)
            return i;
    return -1;
}

static bool
row_is_visible(const struct render *rd, const PGresult *r, int row)
{
    const int *col = rd->col;
    if (row < 0)
        return false;
    if ((rd->flags & EU_RENDER_HIDE_DOMAIN_BLOCKED) && col_bool(r, row, col[C_DOMAIN_BLOCKED]))
        return false;
    return (rd->flags & EU_RENDER_KEEP_HIDDEN) || col_bool(r, row, col[C_VISIBLE]);
}

static void send_render(struct render *rd);

/*
 * Replaces o's "quote" (row's) with Mastodon's Quote entity: its state
 * and, once approved, the quoted status as this viewer may see it, whose
 * own quote stays shallow. An approved quote of a status gone says
 * "deleted", of one the viewer may not see "unauthorized", as Mastodon's
 * QuoteSerializer does. False when the cache lost the quoted status's
 * parts meanwhile (the render starts again).
 */
static bool
set_quote(struct render *rd, const PGresult *r, int row, json_t *o, const int64_t *row_ids,
          int nrows, uint32_t base)
{
    const int *col = rd->col;
    const char *state = col[C_QUOTE_STATE] >= 0 ? col_str(r, row, col[C_QUOTE_STATE]) : NULL;
    if (!state)
        return true;
    json_t *q = json_object();
    json_t *quoted = NULL;
    if (strcmp(state, "accepted") == 0) {
        const char *qid = col_str(r, row, col[C_QUOTED_ID]);
        int qrow = qid ? find_row(row_ids, nrows, eu_id_parse(qid, NULL)) : -1;
        if (qrow < 0 || col_bool(r, qrow, col[C_GONE])) {
            state = "deleted";
        } else if (!row_is_visible(rd, r, qrow)) {
            state = "unauthorized";
        } else {
            struct parts qp;
            if (!row_parts(rd, r, qrow, base, &qp)) {
                json_decref(q);
                return false;
            }
            quoted = status_json(rd, r, qrow, &qp);
        }
    }
    json_object_set_new(q, "state", json_string(state));
    json_object_set_new(q, "quoted_status", quoted ? quoted : json_null());
    json_object_set_new(o, "quote", q);
    return true;
}

static void
on_rows(struct eu_req *req, PGresult *res, void *arg)
{
    struct render *rd = arg;
    const int *col = rd->col;
    cols_find(res, rd);
    uint32_t base = eu_rc_hash(eu_req_base_url(req));
    /* No filters, or the same as last time: the list reply then needs no
     * statement to load them. */
    if (PQntuples(res) > 0)
        eu_filters_known_stamp(req, col_str(res, 0, col[C_FILTER_STAMP]));
    json_t *out = json_array();
    int nrows = PQntuples(res);
    int64_t *row_ids = eu_arena_alloc(req->arena, ((size_t)nrows + 1) * sizeof(*row_ids));
    for (int i = 0; i < nrows; i++)
        row_ids[i] = eu_id_parse(PQgetvalue(res, i, col[C_ID]), NULL);
    for (size_t i = 0; i < rd->n; i++) {
        int row = find_row(row_ids, nrows, eu_id_parse(rd->ids[i], NULL));
        if (!row_is_visible(rd, res, row))
            continue;
        int orig = -1;
        if (!PQgetisnull(res, row, col[C_REBLOG_OF])) {
            orig =
                find_row(row_ids, nrows, eu_id_parse(PQgetvalue(res, row, col[C_REBLOG_OF]), NULL));
            if (!row_is_visible(rd, res, orig))
                continue;
        }
        struct parts p, op;
        if (!row_parts(rd, res, row, base, &p))
            goto lost;
        if (orig >= 0 && !row_parts(rd, res, orig, base, &op)) {
            json_decref(p.status);
            json_decref(p.account);
            json_decref(p.status_text);
            json_decref(p.account_text);
            goto lost;
        }
        json_t *o = status_json(rd, res, row, &p);
        json_t *shown = o;
        if (orig >= 0) {
            shown = status_json(rd, res, orig, &op);
            json_object_set_new(o, "reblog", shown);
        }
        json_array_append_new(out, o);
        if (!set_quote(rd, res, orig >= 0 ? orig : row, shown, row_ids, nrows, base))
            goto lost;
    }
    rd->cb(req, out, rd->arg);
    return;
lost:
    /* The cache held an older version of a row than the statement found
     * (an edit, a counter moved), or dropped an entry the statement counted
     * on: again, with the columns of what changed, then of every row. */
    json_decref(out);
    if (rd->full)
        rd->no_cache = true;
    rd->full = true;
    send_render(rd);
}

/* An array literal of "id:xmin" stamps, built in place: room for two
 * entries (a status and its original, or their authors) per asked id. */
struct stamps {
    char *buf;
    size_t len;
};

/* Longest entry: a bigint id, ':', an xmin (at most 10 digits), quotes and
 * a comma. */
#define STAMP_MAX 40

static void
stamps_init(struct stamps *st, struct eu_arena *a, size_t n)
{
    st->buf = eu_arena_alloc(a, 2 * n * STAMP_MAX + 3);
    st->buf[0] = '{';
    st->len = 1;
}

static const char *
stamps_close(struct stamps *st)
{
    st->buf[st->len++] = '}';
    st->buf[st->len] = '\0';
    return st->buf;
}

/* Appends the stamp of the cache's entry for (kind, id), if any; returns
 * the entry's status details. */
static bool
add_stamp(struct render *rd, int kind, int64_t id, uint32_t base, struct stamps *st,
          struct eu_rc_hit *hit)
{
    if (!eu_rc_peek(rd->req->tenant->id, kind, id, base, hit))
        return false;
    /* By hand: snprintf was 2% of a home page's CPU. The cache keeps
     * xmins shorter than 16 bytes, so an entry fits STAMP_MAX. */
    char *p = st->buf + st->len;
    if (st->len > 1)
        *p++ = ',';
    *p++ = '"';
    p += eu_id_text(id, p);
    *p++ = ':';
    size_t xl = strlen(hit->xmin);
    memcpy(p, hit->xmin, xl);
    p += xl;
    *p++ = '"';
    st->len = (size_t)(p - st->buf);
    return true;
}

static void
send_render(struct render *rd)
{
    struct eu_req *req = rd->req;
    struct eu_arena *a = req->arena;
    char *list = eu_arena_alloc(a, rd->n * 21 + 3), *o = list;
    *o++ = '{';
    for (size_t i = 0; i < rd->n; i++) {
        if (i)
            *o++ = ',';
        size_t l = strlen(rd->ids[i]);
        memcpy(o, rd->ids[i], l);
        o += l;
    }
    *o++ = '}';
    *o = '\0';
    /* The stamps of what the cache holds for these statuses, their
     * originals and their authors: the statement skips those columns. */
    struct stamps ss, as;
    stamps_init(&ss, a, rd->n);
    stamps_init(&as, a, rd->n);
    bool all_cached = false;
    if (!rd->no_cache && req->app->cfg->render_cache_entries > 0) {
        uint32_t base = eu_rc_hash(eu_req_base_url(req));
        all_cached = rd->n > 0;
        for (size_t i = 0; i < rd->n; i++) {
            struct eu_rc_hit hit, ah, oh;
            int64_t id = eu_id_parse(rd->ids[i], NULL);
            if (!add_stamp(rd, EU_RC_STATUS, id, base, &ss, &hit)) {
                all_cached = false;
                continue;
            }
            int64_t author = hit.account_id, orig = hit.reblog_of;
            bool held = add_stamp(rd, EU_RC_ACCOUNT, author, base, &as, &ah);
            if (orig && add_stamp(rd, EU_RC_STATUS, orig, base, &ss, &oh))
                held = add_stamp(rd, EU_RC_ACCOUNT, oh.account_id, base, &as, &ah) && held;
            else if (orig)
                held = false;
            all_cached = all_cached && held;
        }
    }
    const char *source = (rd->flags & EU_RENDER_SOURCE) ? "true" : "false";
    if (all_cached && !rd->full) {
        const char *params[] = {list, eu_req_viewer(req), stamps_close(&ss), stamps_close(&as),
                                source};
        eu_req_stmt(req, &eu_status_render_sql[STATUS_RENDER_CACHED], 5, params, on_rows, rd);
        return;
    }
    const char *params[] = {
        list,  eu_req_viewer(req), eu_req_base_url(req), stamps_close(&ss), stamps_close(&as),
        source};
    eu_req_stmt(req, &eu_status_render_sql[STATUS_RENDER_STATUSES], 6, params, on_rows, rd);
}

static void
render_start(struct eu_req *req, const char *const *ids, size_t n, unsigned flags,
             struct slim_map *slim, eu_statuses_rendered_cb cb, void *arg)
{
    struct render *rd = eu_arena_calloc(req->arena, sizeof(*rd));
    rd->req = req;
    rd->flags = flags;
    rd->cb = cb;
    rd->arg = arg;
    rd->slim = slim;
    rd->ids = eu_arena_alloc(req->arena, (n ? n : 1) * sizeof(char *));
    for (size_t i = 0; i < n; i++)
        if (eu_id_is_valid(ids[i]))
            rd->ids[rd->n++] = eu_arena_strdup(req->arena, ids[i]);
    send_render(rd);
}

void
eu_statuses_render_opts(struct eu_req *req, const char *const *ids, size_t n, unsigned flags,
                        eu_statuses_rendered_cb cb, void *arg)
{
    render_start(req, ids, n, flags, NULL, cb, arg);
}

void
eu_statuses_render(struct eu_req *req, const char *const *ids, size_t n, eu_statuses_rendered_cb cb,
                   void *arg)
{
    eu_statuses_render_opts(req, ids, n, 0, cb, arg);
}

static void
on_one_rendered(struct eu_req *req, json_t *array, void *arg)
{
    (void)arg;
    json_t *st = json_array_get(array, 0);
    if (!st) {
        json_decref(array);
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_incref(st);
    json_decref(array);
    eu_req_reply_json(req, 200, st);
}

void
eu_statuses_reply_one(struct eu_req *req, const char *id)
{
    const char *ids[] = {id};
    eu_statuses_render(req, ids, 1, on_one_rendered, NULL);
}

void
eu_statuses_reply_inserted(struct eu_req *req, const char *status_id, const PGresult *res)
{
    struct render rd = {.req = req};
    struct parts p;
    /* statuses.insert names the fields of status_render.statuses's
     * row. */
    if (!res || PQntuples(res) < 1 || !cols_find(res, &rd) ||
        !row_parts(&rd, res, 0, eu_rc_hash(eu_req_base_url(req)), &p)) {
        eu_statuses_reply_one(req, status_id);
        return;
    }
    eu_req_reply_json(req, 200, status_json(&rd, res, 0, &p));
}

/* ------------------------------------------------------------ list replies */

struct list_reply {
    const char *first_id, *last_id;
    const char *context;
    json_t *array;
    struct slim_map slim;
};

static void
send_list(struct eu_req *req, struct list_reply *lr)
{
    eu_page_link(req, lr->first_id, lr->last_id);
    eu_req_reply_json(req, 200, lr->array);
}

static void
on_filters_loaded(struct eu_req *req, void *arg)
{
    struct list_reply *lr = arg;
    eu_req_enter(req);
    json_t *kept = json_array();
    size_t i;
    json_t *st;
    json_array_foreach(lr->array, i, st)
    {
        /* A reblog is filtered by what it carries. */
        json_t *target =
            json_is_object(json_object_get(st, "reblog")) ? json_object_get(st, "reblog") : st;
        json_t *base = slim_base(&lr->slim, target);
        if (!eu_filters_apply_to(req, base ? base : target, target, lr->context))
            json_array_append(kept, st);
    }
    json_decref(lr->array);
    lr->array = kept;
    send_list(req, lr);
}

static void
on_list_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct list_reply *lr = arg;
    lr->array = array;
    if (lr->context && req->auth.account_id && json_array_size(array)) {
        eu_filters_load(req, on_filters_loaded, lr);
        return;
    }
    send_list(req, lr);
}

void
eu_statuses_reply_list(struct eu_req *req, const char *const *ids, size_t n, const char *first_id,
                       const char *last_id, const char *filter_context)
{
    struct list_reply *lr = eu_arena_calloc(req->arena, sizeof(*lr));
    lr->first_id = first_id ? eu_arena_strdup(req->arena, first_id) : NULL;
    lr->last_id = last_id ? eu_arena_strdup(req->arena, last_id) : NULL;
    lr->context = filter_context;
    /* Every list with a filter context is a timeline or a stream, where
     * Mastodon's StatusFilter hides what a blocked domain posted. */
    render_start(req, ids, n, filter_context ? EU_RENDER_HIDE_DOMAIN_BLOCKED : 0, &lr->slim,
                 on_list_rendered, lr);
}
