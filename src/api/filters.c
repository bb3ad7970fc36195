/*
 * Filters: the v2 API (/api/v2/filters with its keywords and statuses
 * subresources) and the v1 API (/api/v1/filters, where every keyword shows
 * as a filter of its own, as Mastodon 4 maps them). Every write forgets the
 * viewer's compiled filters; applying them to rendered statuses
 * (include/eunha/filters.h) is the social core's
 * (src/social/filters_match.c).
 */
#include "eunha/filters.h"

#include <event2/event.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "social_internal.h"

/* Mastodon's limits (CustomFilter::TITLE_LENGTH_LIMIT, KEYWORD_LENGTH_LIMIT). */
#define TITLE_MAX 256
#define KEYWORD_MAX 512
/* Keywords one request may add or change: bounds the JSON we send to SQL. */
#define KEYWORDS_MAX 100

/* A v1 filter is one keyword with its filter's settings; k and f aliased. */
#define V1_COLUMNS                                                                                 \
    "k.id::text, k.keyword, array_to_json(f.context)::text, k.whole_word, CASE WHEN"               \
    " f.expires_at IS NULL THEN NULL ELSE eunha_ts(f.expires_at) END, f.action = 'hide'"

#define KEYWORD_COLUMNS(k) k ".id::text, " k ".keyword, " k ".whole_word"
#define FSTATUS_COLUMNS "fs.id::text, fs.status_id::text"

enum {
    FILTERS_INDEX,
    FILTERS_SHOW,
    FILTERS_CREATE,
    FILTERS_UPDATE,
    FILTERS_DESTROY,
    FILTERS_KEYWORDS,
    FILTERS_KEYWORD_CREATE,
    FILTERS_KEYWORD_SHOW,
    FILTERS_KEYWORD_UPDATE,
    FILTERS_KEYWORD_DESTROY,
    FILTERS_STATUSES,
    FILTERS_STATUS_CREATE,
    FILTERS_STATUS_SHOW,
    FILTERS_STATUS_DESTROY,
    FILTERS_V1_INDEX,
    FILTERS_V1_SHOW,
    FILTERS_V1_CREATE,
    FILTERS_V1_UPDATE,
    FILTERS_V1_DESTROY,
};

const struct eu_sql eu_filters_sql[] = {
    [FILTERS_INDEX] = {"filters.index",
                       "SELECT " EU_FILTER_COLUMNS " FROM filters f WHERE f.tenant_id = $1"
                       " AND f.account_id = $2::bigint ORDER BY f.id DESC"},
    [FILTERS_SHOW] = {"filters.show",
                      "SELECT " EU_FILTER_COLUMNS " FROM filters f WHERE f.tenant_id = $1"
                      " AND f.account_id = $2::bigint AND f.id = $3::bigint"},
    /* One statement: the final SELECT sees what the CTEs returned. */
    [FILTERS_CREATE] =
        {"filters.create",
         "WITH f AS (INSERT INTO filters (tenant_id, account_id, title, context, action,"
         " expires_at) VALUES ($1, $2::bigint, $3,"
         " ARRAY(SELECT json_array_elements_text($4::json)),"
         " coalesce($5, 'warn'), now() + make_interval(secs => $6::int)) RETURNING *),"
         " k AS (INSERT INTO filter_keywords (tenant_id, filter_id, keyword, whole_word)"
         " SELECT $1::bigint, f.id, x.keyword, coalesce(x.whole_word, true) FROM f,"
         " json_to_recordset($7::json) AS x(keyword text, whole_word boolean,"
         " destroy boolean) WHERE NOT x.destroy RETURNING *)"
         " SELECT f.id::text, f.title, array_to_json(f.context)::text,"
         " CASE WHEN f.expires_at IS NULL THEN NULL ELSE eunha_ts(f.expires_at) END, f.action, "
         "(SELECT "
         "coalesce(json_agg(json_build_object('id', k.id::text,"
         " 'keyword', k.keyword, 'whole_word', k.whole_word) ORDER BY "
         "k.id), '[]')"
         " FROM k)::text, '[]' FROM f"},
    /* Keywords with an id are changed or (with _destroy) deleted, others
     * added; ids of another filter's keywords match nothing. */
    [FILTERS_UPDATE] =
        {"filters.update",
         "WITH f AS (UPDATE filters SET title = coalesce($4, title),"
         " context = CASE WHEN $5::json IS NULL THEN context"
         "  ELSE ARRAY(SELECT json_array_elements_text($5::json)) END,"
         " action = coalesce($6, action),"
         " expires_at = CASE WHEN $7::boolean THEN now() + make_interval(secs => $8::int)"
         "  ELSE expires_at END"
         " WHERE tenant_id = $1 AND id = $3::bigint AND account_id = $2::bigint RETURNING id),"
         " x AS (SELECT * FROM json_to_recordset($9::json) AS x(id bigint, keyword text,"
         "  whole_word boolean, destroy boolean)),"
         " d AS (DELETE FROM filter_keywords k USING f, x WHERE k.tenant_id = $1"
         "  AND k.filter_id = f.id"
         "  AND k.id = x.id AND x.destroy),"
         " u AS (UPDATE filter_keywords k SET keyword = coalesce(x.keyword, k.keyword),"
         "  whole_word = coalesce(x.whole_word, k.whole_word) FROM f, x"
         "  WHERE k.tenant_id = $1 AND k.filter_id = f.id AND k.id = x.id AND NOT x.destroy),"
         " i AS (INSERT INTO filter_keywords (tenant_id, filter_id, keyword, whole_word)"
         "  SELECT $1::bigint, f.id, x.keyword, coalesce(x.whole_word, true) FROM f, x"
         "  WHERE x.id IS NULL AND NOT x.destroy)"
         " SELECT id FROM f"},
    [FILTERS_DESTROY] = {"filters.destroy",
                         "DELETE FROM filters WHERE tenant_id = $1 AND account_id = $2::bigint"
                         " AND id = $3::bigint"
                         " RETURNING id"},
    [FILTERS_KEYWORDS] =
        {"filters.keywords",
         "SELECT (SELECT coalesce(json_agg(json_build_object('id', k.id::text,"
         " 'keyword', k.keyword, 'whole_word', k.whole_word) ORDER BY k.id), '[]')"
         " FROM filter_keywords k WHERE k.tenant_id = $1 AND k.filter_id = f.id)::text"
         " FROM filters f"
         " WHERE f.tenant_id = $1 AND f.account_id = $2::bigint AND f.id = $3::bigint"},
    /* No "AS k" on the target: the pool's tenant check wants the column
     * list right after the table name. */
    [FILTERS_KEYWORD_CREATE] =
        {"filters.keyword_create",
         "INSERT INTO filter_keywords (tenant_id, filter_id, keyword, whole_word)"
         " SELECT $1::bigint, f.id, $4, $5::boolean FROM filters f WHERE f.tenant_id = $1"
         " AND f.account_id = $2::bigint AND f.id = $3::bigint"
         " RETURNING " KEYWORD_COLUMNS("filter_keywords")},
    [FILTERS_KEYWORD_SHOW] =
        {"filters.keyword_show",
         "SELECT " KEYWORD_COLUMNS(
             "k") " FROM filter_keywords k JOIN filters f"
                  " ON f.tenant_id = $1 AND f.id = k.filter_id WHERE k.tenant_id = $1"
                  " AND f.account_id = $2::bigint AND k.id = $3::bigint"},
    [FILTERS_KEYWORD_UPDATE] =
        {"filters.keyword_update",
         "UPDATE filter_keywords k SET keyword = coalesce($4, k.keyword),"
         " whole_word = coalesce($5::boolean, k.whole_word) FROM filters f"
         " WHERE k.tenant_id = $1 AND f.tenant_id = $1 AND f.id = k.filter_id"
         " AND f.account_id = $2::bigint AND k.id = $3::bigint"
         " RETURNING " KEYWORD_COLUMNS("k")},
    [FILTERS_KEYWORD_DESTROY] =
        {"filters.keyword_destroy",
         "DELETE FROM filter_keywords k USING filters f WHERE k.tenant_id = $1"
         " AND f.tenant_id = $1 AND f.id = k.filter_id"
         " AND f.account_id = $2::bigint AND k.id = $3::bigint RETURNING k.id"},
    [FILTERS_STATUSES] =
        {"filters.statuses",
         "SELECT (SELECT coalesce(json_agg(json_build_object('id', fs.id::text,"
         " 'status_id', fs.status_id::text) ORDER BY fs.id), '[]')"
         " FROM filter_statuses fs WHERE fs.tenant_id = $1 AND fs.filter_id = f.id)::text"
         " FROM filters f"
         " WHERE f.tenant_id = $1 AND f.account_id = $2::bigint AND f.id = $3::bigint"},
    /* Adding a status twice returns the existing row, as Mastodon's
     * uniqueness validation would refuse a duplicate. */
    [FILTERS_STATUS_CREATE] =
        {"filters.status_create",
         "WITH old AS (SELECT fs.id, fs.status_id FROM filter_statuses fs JOIN filters f"
         " ON f.tenant_id = $1 AND f.id = fs.filter_id WHERE fs.tenant_id = $1"
         " AND f.account_id = $2::bigint AND f.id = $3::bigint"
         " AND fs.status_id = $4::bigint),"
         " ins AS (INSERT INTO filter_statuses (tenant_id, filter_id, status_id)"
         " SELECT $1::bigint, f.id, s.id FROM filters f, statuses s WHERE f.tenant_id = $1"
         " AND s.tenant_id = $1 AND f.account_id = $2::bigint"
         " AND f.id = $3::bigint AND s.id = $4::bigint AND s.deleted_at IS NULL"
         " AND NOT EXISTS (SELECT 1 FROM old) RETURNING id, status_id)"
         " SELECT fs.id::text, fs.status_id::text FROM (SELECT * FROM old UNION ALL"
         " SELECT * FROM ins) fs"},
    [FILTERS_STATUS_SHOW] = {"filters.status_show",
                             "SELECT " FSTATUS_COLUMNS " FROM filter_statuses fs JOIN filters f"
                             " ON f.tenant_id = $1 AND f.id = fs.filter_id WHERE fs.tenant_id = $1"
                             " AND f.account_id = $2::bigint AND fs.id = $3::bigint"},
    [FILTERS_STATUS_DESTROY] =
        {"filters.status_destroy",
         "DELETE FROM filter_statuses fs USING filters f WHERE fs.tenant_id = $1"
         " AND f.tenant_id = $1 AND f.id = fs.filter_id"
         " AND f.account_id = $2::bigint AND fs.id = $3::bigint RETURNING fs.id"},
    [FILTERS_V1_INDEX] =
        {"filters.v1_index",
         "SELECT " V1_COLUMNS " FROM filter_keywords k JOIN filters f ON f.tenant_id = $1"
         " AND f.id = k.filter_id WHERE k.tenant_id = $1 AND f.account_id = $2::bigint"
         " ORDER BY k.id DESC"},
    [FILTERS_V1_SHOW] =
        {"filters.v1_show",
         "SELECT " V1_COLUMNS " FROM filter_keywords k JOIN filters f ON f.tenant_id = $1"
         " AND f.id = k.filter_id WHERE k.tenant_id = $1 AND f.account_id = $2::bigint"
         " AND k.id = $3::bigint"},
    [FILTERS_V1_CREATE] =
        {"filters.v1_create",
         "WITH f AS (INSERT INTO filters (tenant_id, account_id, title, context, action,"
         " expires_at) VALUES ($1, $2::bigint, $3,"
         " ARRAY(SELECT json_array_elements_text($4::json)),"
         " coalesce($5, 'warn'), now() + make_interval(secs => $6::int)) RETURNING *),"
         " k AS (INSERT INTO filter_keywords (tenant_id, filter_id, keyword, whole_word)"
         " SELECT $1::bigint, f.id, $3, coalesce($7::boolean, true) FROM f RETURNING *)"
         " SELECT " V1_COLUMNS " FROM f, k"},
    [FILTERS_V1_UPDATE] =
        {"filters.v1_update",
         "WITH k AS (UPDATE filter_keywords k SET keyword = coalesce($4, k.keyword),"
         " whole_word = coalesce($9::boolean, k.whole_word) FROM filters f"
         " WHERE k.tenant_id = $1 AND f.tenant_id = $1 AND f.id = k.filter_id"
         " AND f.account_id = $2::bigint AND k.id = $3::bigint"
         " RETURNING k.filter_id)"
         " UPDATE filters f SET context = CASE WHEN $5::json IS NULL THEN f.context"
         "  ELSE ARRAY(SELECT json_array_elements_text($5::json)) END,"
         " action = coalesce($6, f.action),"
         " expires_at = CASE WHEN $7::boolean THEN now() + make_interval(secs => $8::int)"
         "  ELSE f.expires_at END FROM k WHERE f.tenant_id = $1 AND f.id = k.filter_id"
         " RETURNING f.id"},
    /* The filter goes with its last keyword, so no empty v2 filter is left
     * behind by a v1 client. */
    [FILTERS_V1_DESTROY] =
        {"filters.v1_destroy",
         "WITH k AS (DELETE FROM filter_keywords k USING filters f WHERE k.tenant_id = $1"
         " AND f.tenant_id = $1 AND f.id = k.filter_id"
         " AND f.account_id = $2::bigint AND k.id = $3::bigint RETURNING k.filter_id),"
         " f AS (DELETE FROM filters f USING k WHERE f.tenant_id = $1"
         " AND f.id = k.filter_id AND NOT EXISTS"
         " (SELECT 1 FROM filter_keywords o WHERE o.tenant_id = $1 AND o.filter_id = f.id"
         "  AND o.id <> $3::bigint)"
         " AND NOT EXISTS (SELECT 1 FROM filter_statuses o WHERE o.tenant_id = $1"
         "  AND o.filter_id = f.id)"
         " RETURNING f.id)"
         " SELECT filter_id FROM k"},
    {0},
};

/* ------------------------------------------------------------ entities */

/* The v2 Filter entity is eu_filter_json(), the social core's: a
 * FilterResult in a rendered status carries it too. */

static json_t *
null_or_string(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

static json_t *
v1_json(const PGresult *res, int row, int col)
{
    return json_pack(
        "{s:s, s:s, s:o, s:b, s:o, s:b}", "id", PQgetvalue(res, row, col), "phrase",
        PQgetvalue(res, row, col + 1), "context", eu_filters_json_cell(res, row, col + 2),
        "whole_word", PQgetvalue(res, row, col + 3)[0] == 't', "expires_at",
        null_or_string(res, row, col + 4), "irreversible", PQgetvalue(res, row, col + 5)[0] == 't');
}

static json_t *
keyword_json(const PGresult *res, int row, int col)
{
    return json_pack("{s:s, s:s, s:b}", "id", PQgetvalue(res, row, col), "keyword",
                     PQgetvalue(res, row, col + 1), "whole_word",
                     PQgetvalue(res, row, col + 2)[0] == 't');
}

static json_t *
fstatus_json(const PGresult *res, int row, int col)
{
    return json_pack("{s:s, s:s}", "id", PQgetvalue(res, row, col), "status_id",
                     PQgetvalue(res, row, col + 1));
}

static json_t *
filter_full_json(const PGresult *res, int row, int col)
{
    return eu_filter_json(res, row, col, true);
}

/* Whether the JSON array contexts holds the string context. */
static bool
context_has(json_t *contexts, const char *context)
{
    size_t i;
    json_t *c;
    json_array_foreach(contexts, i, c)
    {
        if (json_is_string(c) && strcmp(json_string_value(c), context) == 0)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------- replies */

typedef json_t *(*row_json_fn)(const PGresult *res, int row, int col);

struct reply {
    row_json_fn build; /* NULL: answer {} when a row came back */
    bool many;         /* an array of every row, rather than the one row or 404 */
};

static void
on_rows(struct eu_req *req, PGresult *res, void *arg)
{
    struct reply *r = arg;
    int n = PQntuples(res);
    if (r->many) {
        json_t *out = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(out, r->build(res, i, 0));
        eu_req_reply_json(req, 200, out);
        return;
    }
    if (n == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, r->build ? r->build(res, 0, 0) : json_object());
}

static void
query_reply(struct eu_req *req, const struct eu_sql *s, int n, const char *const *p,
            row_json_fn build, bool many)
{
    struct reply *r = eu_arena_calloc(req->arena, sizeof(*r));
    r->build = build;
    r->many = many;
    eu_req_stmt(req, s, n, p, on_rows, r);
}

static json_t *
read_params(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params)
        eu_req_reply_eu_error(req, &err);
    return params;
}

/* --------------------------------------------------------- validation */

struct filter_input {
    const char *title;    /* NULL: absent */
    const char *context;  /* JSON array text, NULL: absent */
    const char *action;   /* NULL: absent */
    bool expires_given;   /* expires_in present (empty or null clears it) */
    const char *expires;  /* seconds as text, NULL for never */
    const char *keywords; /* JSON [{id, keyword, whole_word, destroy}], NULL: absent */
};

/* Reads "context" (array or single string) into a JSON array text after
 * checking every value. Returns 0 (absent: *out NULL), or -1 after 422. */
static int
read_context(struct eu_req *req, json_t *params, bool required, const char **out)
{
    *out = NULL;
    json_t *arr = eu_param_array(params, "context");
    if (!arr) {
        if (required) {
            eu_req_reply_error(req, 422, "Validation failed: Context can't be blank");
            return -1;
        }
        return 0;
    }
    json_t *clean = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || !eu_filters_context_bit(s)) {
            json_decref(arr);
            json_decref(clean);
            eu_req_reply_error(req, 422, "Validation failed: Context contains invalid values");
            return -1;
        }
        if (!context_has(clean, s))
            json_array_append(clean, v);
    }
    json_decref(arr);
    if (json_array_size(clean) == 0) {
        json_decref(clean);
        eu_req_reply_error(req, 422, "Validation failed: Context can't be blank");
        return -1;
    }
    char *text = json_dumps(clean, JSON_COMPACT);
    *out = eu_arena_strdup(req->arena, text);
    free(text);
    json_decref(clean);
    return 0;
}

static int
read_expires(struct eu_req *req, json_t *params, struct filter_input *in)
{
    json_t *v = json_object_get(params, "expires_in");
    if (!v)
        return 0;
    in->expires_given = true;
    if (json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0))
        return 0;
    long long secs;
    if (eu_param_int(params, "expires_in", &secs) < 0 || secs < 0 || secs > 10LL * 365 * 86400) {
        eu_req_reply_error(req, 422, "Validation failed: Expires in is not a valid duration");
        return -1;
    }
    if (secs > 0)
        in->expires = eu_arena_sprintf(req->arena, "%lld", secs);
    return 0;
}

static int
check_keyword(struct eu_req *req, const char *kw)
{
    if (!kw || !*kw) {
        eu_req_reply_error(req, 422, "Validation failed: Keyword can't be blank");
        return -1;
    }
    if (strlen(kw) > KEYWORD_MAX) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Keyword is too long (maximum is %d characters)",
                           KEYWORD_MAX);
        return -1;
    }
    return 0;
}

/* A boolean member of obj, as JSON or form text; def when absent. */
static int
member_bool(json_t *obj, const char *key, bool def, bool *out)
{
    *out = def;
    if (!json_object_get(obj, key) || json_is_null(json_object_get(obj, key)))
        return 0;
    return eu_param_bool(obj, key, out) < 0 ? -1 : 0;
}

/* keywords_attributes: an array of objects (JSON) or an object keyed by
 * index (keywords_attributes[0][keyword]=... in a form). */
static int
read_keywords(struct eu_req *req, json_t *params, struct filter_input *in)
{
    json_t *attrs = json_object_get(params, "keywords_attributes");
    if (!attrs || json_is_null(attrs))
        return 0;
    json_t *list = json_array();
    if (json_is_array(attrs)) {
        json_array_extend(list, attrs);
    } else if (json_is_object(attrs)) {
        const char *k;
        json_t *v;
        json_object_foreach(attrs, k, v) json_array_append(list, v);
    } else {
        json_decref(list);
        eu_req_reply_error(req, 422, "Validation failed: Keywords attributes is invalid");
        return -1;
    }
    if (json_array_size(list) > KEYWORDS_MAX) {
        json_decref(list);
        eu_req_reply_error(req, 422, "Validation failed: Too many keywords");
        return -1;
    }
    json_t *clean = json_array();
    size_t i;
    json_t *a;
    int rc = 0;
    json_array_foreach(list, i, a)
    {
        if (!json_is_object(a)) {
            eu_req_reply_error(req, 422, "Validation failed: Keywords attributes is invalid");
            rc = -1;
            break;
        }
        const char *id = eu_param_str(a, "id");
        const char *kw = eu_param_str(a, "keyword");
        bool whole, destroy;
        if (member_bool(a, "whole_word", true, &whole) < 0 ||
            member_bool(a, "_destroy", false, &destroy) < 0) {
            eu_req_reply_error(req, 422, "Validation failed: Whole word is not a boolean");
            rc = -1;
            break;
        }
        if (id && !eu_id_is_valid(id)) {
            eu_req_reply_error(req, 404, "Record not found");
            rc = -1;
            break;
        }
        /* A new keyword needs its text; an existing one keeps it if absent. */
        if (!destroy && (!id || kw) && check_keyword(req, kw) < 0) {
            rc = -1;
            break;
        }
        json_t *o = json_pack("{s:b, s:b}", "destroy", destroy, "whole_word", whole);
        json_object_set_new(o, "id", id ? json_string(id) : json_null());
        json_object_set_new(o, "keyword", kw ? json_string(kw) : json_null());
        /* Absent whole_word keeps an existing keyword's setting. */
        if (!json_object_get(a, "whole_word") || json_is_null(json_object_get(a, "whole_word")))
            json_object_set_new(o, "whole_word", id ? json_null() : json_true());
        json_array_append_new(clean, o);
    }
    json_decref(list);
    if (rc == 0) {
        char *text = json_dumps(clean, JSON_COMPACT);
        in->keywords = eu_arena_strdup(req->arena, text);
        free(text);
    }
    json_decref(clean);
    return rc;
}

/* Reads a v2 filter's parameters; create requires title and context. */
static int
read_filter_input(struct eu_req *req, json_t *params, bool create, struct filter_input *in)
{
    memset(in, 0, sizeof(*in));
    in->title = eu_param_str(params, "title");
    if ((create || in->title) && (!in->title || !*in->title)) {
        eu_req_reply_error(req, 422, "Validation failed: Title can't be blank");
        return -1;
    }
    if (in->title && strlen(in->title) > TITLE_MAX) {
        eu_req_reply_error(
            req, 422, "Validation failed: Title is too long (maximum is %d characters)", TITLE_MAX);
        return -1;
    }
    if (read_context(req, params, create, &in->context) < 0)
        return -1;
    in->action = eu_param_str(params, "filter_action");
    if (in->action && !*in->action)
        in->action = NULL;
    if (in->action && strcmp(in->action, "warn") != 0 && strcmp(in->action, "hide") != 0 &&
        strcmp(in->action, "blur") != 0) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Filter action is not included in the list");
        return -1;
    }
    if (read_expires(req, params, in) < 0)
        return -1;
    return read_keywords(req, params, in);
}

/* ------------------------------------------------------------- v2 CRUD */

void
eu_filters_v2_index(struct eu_req *req)
{
    const char *p[] = {eu_req_viewer(req)};
    query_reply(req, &eu_filters_sql[FILTERS_INDEX], 1, p, filter_full_json, true);
}

void
eu_filters_v2_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_SHOW], 2, p, filter_full_json, false);
}

void
eu_filters_v2_create(struct eu_req *req)
{
    eu_filters_forget(req);
    json_t *params = read_params(req);
    struct filter_input in;
    if (!params || read_filter_input(req, params, true, &in) < 0)
        return;
    const char *p[] = {eu_req_viewer(req), in.title,   in.context,
                       in.action,          in.expires, in.keywords ? in.keywords : "[]"};
    query_reply(req, &eu_filters_sql[FILTERS_CREATE], 6, p, filter_full_json, false);
}

struct update {
    const char *id;
};

static void
on_filter_updated(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    struct update *u = arg;
    if (st != EU_DB_OK) {
        if (strcmp(eu_db_result_sqlstate(res), "23502") == 0)
            eu_req_reply_error(req, 422, "Validation failed: Keyword can't be blank");
        else
            eu_req_reply_db_error(req, st);
        return;
    }
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), u->id};
    query_reply(req, &eu_filters_sql[FILTERS_SHOW], 2, p, filter_full_json, false);
}

void
eu_filters_v2_update(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    json_t *params = read_params(req);
    struct filter_input in;
    if (!params || read_filter_input(req, params, false, &in) < 0)
        return;
    struct update *u = eu_arena_calloc(req->arena, sizeof(*u));
    u->id = id;
    const char *p[] = {eu_req_viewer(req), id,
                       in.title,           in.context,
                       in.action,          in.expires_given ? "t" : "f",
                       in.expires,         in.keywords ? in.keywords : "[]"};
    eu_req_stmt_or_error(req, &eu_filters_sql[FILTERS_UPDATE], 8, p, on_filter_updated, u);
}

void
eu_filters_v2_destroy(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_DESTROY], 2, p, NULL, false);
}

/* ------------------------------------------------- keywords subresource */

/* The JSON array in the one row, or 404 when the filter is not the viewer's. */
static void
on_filter_owned(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *items = eu_filters_json_cell(res, 0, 0);
    eu_req_reply_json(req, 200, items);
}

void
eu_filters_keywords_index(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "filter_id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_filters_sql[FILTERS_KEYWORDS], 2, p, on_filter_owned, NULL);
}

void
eu_filters_keywords_create(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "filter_id");
    if (!id)
        return;
    json_t *params = read_params(req);
    if (!params)
        return;
    const char *kw = eu_param_str(params, "keyword");
    bool whole;
    if (check_keyword(req, kw) < 0)
        return;
    if (member_bool(params, "whole_word", true, &whole) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Whole word is not a boolean");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id, kw, whole ? "t" : "f"};
    query_reply(req, &eu_filters_sql[FILTERS_KEYWORD_CREATE], 4, p, keyword_json, false);
}

void
eu_filters_keywords_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_KEYWORD_SHOW], 2, p, keyword_json, false);
}

void
eu_filters_keywords_update(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    json_t *params = read_params(req);
    if (!params)
        return;
    const char *kw = eu_param_str(params, "keyword");
    if (kw && check_keyword(req, kw) < 0)
        return;
    bool whole;
    if (member_bool(params, "whole_word", true, &whole) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Whole word is not a boolean");
        return;
    }
    bool has_whole = json_object_get(params, "whole_word") != NULL;
    const char *p[] = {eu_req_viewer(req), id, kw, has_whole ? (whole ? "t" : "f") : NULL};
    query_reply(req, &eu_filters_sql[FILTERS_KEYWORD_UPDATE], 4, p, keyword_json, false);
}

void
eu_filters_keywords_destroy(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_KEYWORD_DESTROY], 2, p, NULL, false);
}

/* ------------------------------------------------- statuses subresource */

void
eu_filters_statuses_index(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "filter_id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_filters_sql[FILTERS_STATUSES], 2, p, on_filter_owned, NULL);
}

void
eu_filters_statuses_create(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "filter_id");
    if (!id)
        return;
    json_t *params = read_params(req);
    if (!params)
        return;
    const char *sid = eu_param_str(params, "status_id");
    if (!eu_id_is_valid(sid)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id, sid};
    query_reply(req, &eu_filters_sql[FILTERS_STATUS_CREATE], 3, p, fstatus_json, false);
}

void
eu_filters_statuses_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_STATUS_SHOW], 2, p, fstatus_json, false);
}

void
eu_filters_statuses_destroy(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_STATUS_DESTROY], 2, p, NULL, false);
}

/* ------------------------------------------------------------------- v1 */

void
eu_filters_v1_index(struct eu_req *req)
{
    const char *p[] = {eu_req_viewer(req)};
    query_reply(req, &eu_filters_sql[FILTERS_V1_INDEX], 1, p, v1_json, true);
}

void
eu_filters_v1_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_V1_SHOW], 2, p, v1_json, false);
}

/* phrase, context, irreversible, whole_word, expires_in of a v1 filter. */
struct v1_input {
    const char *phrase, *context, *hide, *whole, *expires;
    bool expires_given;
};

static int
read_v1_input(struct eu_req *req, json_t *params, bool create, struct v1_input *in)
{
    memset(in, 0, sizeof(*in));
    in->phrase = eu_param_str(params, "phrase");
    if ((create || in->phrase) && check_keyword(req, in->phrase) < 0)
        return -1;
    if (read_context(req, params, create, &in->context) < 0)
        return -1;
    bool b;
    int rc = eu_param_bool(params, "irreversible", &b);
    if (rc < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Irreversible is not a boolean");
        return -1;
    }
    in->hide = rc ? (b ? "hide" : "warn") : NULL;
    rc = eu_param_bool(params, "whole_word", &b);
    if (rc < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Whole word is not a boolean");
        return -1;
    }
    in->whole = rc ? (b ? "t" : "f") : NULL;
    struct filter_input fi = {0};
    if (read_expires(req, params, &fi) < 0)
        return -1;
    in->expires = fi.expires;
    in->expires_given = fi.expires_given;
    return 0;
}

void
eu_filters_v1_create(struct eu_req *req)
{
    eu_filters_forget(req);
    json_t *params = read_params(req);
    struct v1_input in;
    if (!params || read_v1_input(req, params, true, &in) < 0)
        return;
    const char *p[] = {eu_req_viewer(req), in.phrase, in.context, in.hide, in.expires, in.whole};
    query_reply(req, &eu_filters_sql[FILTERS_V1_CREATE], 6, p, v1_json, false);
}

static void
on_v1_updated(struct eu_req *req, PGresult *res, void *arg)
{
    struct update *u = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), u->id};
    query_reply(req, &eu_filters_sql[FILTERS_V1_SHOW], 2, p, v1_json, false);
}

void
eu_filters_v1_update(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    json_t *params = read_params(req);
    struct v1_input in;
    if (!params || read_v1_input(req, params, false, &in) < 0)
        return;
    struct update *u = eu_arena_calloc(req->arena, sizeof(*u));
    u->id = id;
    const char *p[] = {eu_req_viewer(req),           id,         in.phrase, in.context, in.hide,
                       in.expires_given ? "t" : "f", in.expires, in.whole};
    eu_req_stmt(req, &eu_filters_sql[FILTERS_V1_UPDATE], 8, p, on_v1_updated, u);
}

void
eu_filters_v1_destroy(struct eu_req *req)
{
    eu_filters_forget(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_V1_DESTROY], 2, p, NULL, false);
}

/* Flags: include/eunha/router.h. */

const struct eu_route eu_filters_routes[] = {
    {EU_HTTP_GET, "/api/v1/filters", eu_filters_v1_index, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/filters", eu_filters_v1_create, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/filters/:id", eu_filters_v1_show, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_PUT, "/api/v1/filters/:id", eu_filters_v1_update, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v1/filters/:id", eu_filters_v1_destroy, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/filters", eu_filters_v2_index, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v2/filters", eu_filters_v2_create, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/filters/keywords/:id", eu_filters_keywords_show, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_PUT, "/api/v2/filters/keywords/:id", eu_filters_keywords_update, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v2/filters/keywords/:id", eu_filters_keywords_destroy, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/filters/statuses/:id", eu_filters_statuses_show, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v2/filters/statuses/:id", eu_filters_statuses_destroy, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/filters/:id", eu_filters_v2_show, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_PUT, "/api/v2/filters/:id", eu_filters_v2_update, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v2/filters/:id", eu_filters_v2_destroy, "write:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/filters/:filter_id/keywords", eu_filters_keywords_index, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v2/filters/:filter_id/keywords", eu_filters_keywords_create,
     "write:filters", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/filters/:filter_id/statuses", eu_filters_statuses_index, "read:filters",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v2/filters/:filter_id/statuses", eu_filters_statuses_create,
     "write:filters", EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
