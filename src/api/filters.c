/*
 * Filters: the v2 API (/api/v2/filters with its keywords and statuses
 * subresources), the v1 API (/api/v1/filters, where every keyword shows as
 * a filter of its own, as Mastodon 4 maps them), and applying the viewer's
 * filters to rendered statuses (include/eunha/filters.h).
 *
 * Applying runs in C on rendered statuses rather than in SQL, because the
 * text to match is the rendered content with its HTML taken out, and a
 * page holds at most a few dozen statuses. An account's keywords are
 * compiled into one automaton (kwmatch.c), so a status costs one pass over
 * its text however many keywords there are, and the compiled filters are
 * kept across requests until the account's filters change. The filters
 * loaded for a request are found by request pointer in a small hash table:
 * struct eu_req has no slot for them, and the arena's cleanup removes the
 * entry when the request ends, so a finished request never leaves one
 * behind.
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
#include "kwmatch_internal.h"
#include "social_internal.h"

/* Mastodon's limits (CustomFilter::TITLE_LENGTH_LIMIT, KEYWORD_LENGTH_LIMIT). */
#define TITLE_MAX 256
#define KEYWORD_MAX 512
/* Keywords one request may add or change: bounds the JSON we send to SQL. */
#define KEYWORDS_MAX 100

/*
 * The Filter entity's columns for a filters row aliased f: id, title,
 * context (JSON), expires_at, action, keywords (JSON), statuses (JSON).
 */
#define FILTER_COLUMNS                                                                             \
    "f.id::text, f.title, array_to_json(f.context)::text, CASE WHEN f.expires_at IS NULL"          \
    " THEN NULL ELSE eunha_ts(f.expires_at) END, f.action,"                                        \
    " (SELECT coalesce(json_agg(json_build_object('id', k.id::text, "                              \
    "'keyword', k.keyword,"                                                                        \
    "  'whole_word', k.whole_word) ORDER BY k.id), '[]') FROM "                                    \
    "filter_keywords k"                                                                            \
    "  WHERE k.tenant_id = $1 AND k.filter_id = f.id)::text,"                                      \
    " (SELECT coalesce(json_agg(json_build_object('id', fs.id::text, "                             \
    "'status_id',"                                                                                 \
    "  fs.status_id::text) ORDER BY fs.id), '[]') FROM filter_statuses fs"                         \
    "  WHERE fs.tenant_id = $1 AND fs.filter_id = f.id)::text"

/* A v1 filter is one keyword with its filter's settings; k and f aliased. */
#define V1_COLUMNS                                                                                 \
    "k.id::text, k.keyword, array_to_json(f.context)::text, k.whole_word, CASE WHEN"               \
    " f.expires_at IS NULL THEN NULL ELSE eunha_ts(f.expires_at) END, f.action = 'hide'"

#define KEYWORD_COLUMNS(k) k ".id::text, " k ".keyword, " k ".whole_word"
#define FSTATUS_COLUMNS "fs.id::text, fs.status_id::text"

enum {
    FILTERS_LOAD,
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
    [FILTERS_LOAD] = {"filters.load", "SELECT " FILTER_COLUMNS
                                      ", (SELECT stamp FROM eunha_filters_stamp($1, $2::bigint) "
                                      "stamp) FROM filters f WHERE f.tenant_id = $1"
                                      " AND f.account_id = $2::bigint"
                                      " AND (f.expires_at IS NULL OR f.expires_at > now())"
                                      " ORDER BY f.id"},
    [FILTERS_INDEX] = {"filters.index",
                       "SELECT " FILTER_COLUMNS " FROM filters f WHERE f.tenant_id = $1"
                       " AND f.account_id = $2::bigint ORDER BY f.id DESC"},
    [FILTERS_SHOW] = {"filters.show",
                      "SELECT " FILTER_COLUMNS " FROM filters f WHERE f.tenant_id = $1"
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

static const char *const CONTEXTS[] = {"home", "notifications", "public", "thread", "account"};

/* ------------------------------------------------------------ entities */

static json_t *
parse_json_cell(const PGresult *res, int row, int col)
{
    json_t *v = json_loads(PQgetvalue(res, row, col), JSON_DECODE_ANY, NULL);
    return v ? v : json_array();
}

static json_t *
null_or_string(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* The v2 Filter entity from FILTER_COLUMNS at col; with_rules adds keywords
 * and statuses (a FilterResult's filter has neither, as in Mastodon). New
 * reference. */
static json_t *
filter_json(const PGresult *res, int row, int col, bool with_rules)
{
    json_t *f = json_pack(
        "{s:s, s:s, s:o, s:o, s:s}", "id", PQgetvalue(res, row, col), "title",
        PQgetvalue(res, row, col + 1), "context", parse_json_cell(res, row, col + 2), "expires_at",
        null_or_string(res, row, col + 3), "filter_action", PQgetvalue(res, row, col + 4));
    if (with_rules) {
        json_object_set_new(f, "keywords", parse_json_cell(res, row, col + 5));
        json_object_set_new(f, "statuses", parse_json_cell(res, row, col + 6));
    }
    return f;
}

static json_t *
v1_json(const PGresult *res, int row, int col)
{
    return json_pack("{s:s, s:s, s:o, s:b, s:o, s:b}", "id", PQgetvalue(res, row, col), "phrase",
                     PQgetvalue(res, row, col + 1), "context", parse_json_cell(res, row, col + 2),
                     "whole_word", PQgetvalue(res, row, col + 3)[0] == 't', "expires_at",
                     null_or_string(res, row, col + 4), "irreversible",
                     PQgetvalue(res, row, col + 5)[0] == 't');
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
    return filter_json(res, row, col, true);
}

/* -------------------------------------------------------------- loading */

struct loaded_filter {
    json_t *entity;    /* Filter without rules, as FilterResult shows it */
    unsigned contexts; /* bit i: CONTEXTS[i] */
    bool hide;
};

/* A status some filter names; sorted by status, then filter. */
struct rule_status {
    int64_t status;
    uint32_t filter;
};

/*
 * One account's active filters, ready for matching: keywords compiled into
 * one automaton, pattern i being keyword kw[i] of filter kw_filter[i], with
 * patterns numbered in (filter, keyword id) order so that the automaton's
 * ascending hits come out grouped by filter, in the order of the old scan.
 * One automaton serves every context: a filter outside the context is
 * skipped when hits are read, which costs nothing per keyword. Shared by
 * the cache and by every request using it, hence counted; immutable once
 * built. Loop thread only.
 */
struct filter_rules {
    int refs;
    int64_t tenant, account;
    char stamp[EU_FILTERS_STAMP_LEN + 1];
    struct loaded_filter *filters;
    size_t n;
    struct eu_kwmatch *matcher; /* NULL: no keywords */
    json_t **kw;                /* keyword strings, for keyword_matches */
    uint32_t *kw_filter;
    unsigned kw_contexts; /* contexts in which some keyword applies */
    struct rule_status *statuses;
    size_t nstatuses;
    size_t bytes; /* what the cache charges for it, roughly */
    struct filter_rules *lru_prev, *lru_next, *hash_next;
    bool cached;
};

static void
rules_unref(struct filter_rules *r)
{
    if (!r || --r->refs > 0)
        return;
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->filters[i].entity);
    size_t nkw = r->matcher ? eu_kwmatch_count(r->matcher) : 0;
    for (size_t i = 0; i < nkw; i++)
        json_decref(r->kw[i]);
    eu_kwmatch_free(r->matcher);
    free(r->kw);
    free(r->kw_filter);
    free(r->statuses);
    free(r->filters);
    free(r);
}

/*
 * The compiled rules of recently seen accounts, so that a page does not
 * reload and recompile keywords that have not changed. Entries are checked
 * against the stamp the page's own statement returns
 * (eunha_filters_stamp()), which changes with any write to the account's
 * filters, keywords or filtered statuses (migration 0016) and when one
 * expires; writes through this process also drop the entry at once. The
 * budget bounds the whole process: an account at the caps (300 keywords,
 * 16 KiB) costs under 1 MiB, a typical one a few KiB; the least
 * recently used entries go first, and rules over the budget are used by
 * their request and not kept.
 */
#define RULES_BUDGET ((size_t)8 << 20)
#define RULES_BUCKETS 1024

static struct filter_rules *rules_hash[RULES_BUCKETS];
static struct filter_rules *lru_first, *lru_last; /* most recent first */
static size_t rules_bytes, rules_entries;
static unsigned long long rules_hits, rules_compiles;

static size_t
rules_bucket(int64_t tenant, int64_t account)
{
    uint64_t h = (uint64_t)tenant * 0x9e3779b97f4a7c15u ^ (uint64_t)account;
    return (size_t)((h ^ (h >> 29)) % RULES_BUCKETS);
}

static struct filter_rules *
cache_find(int64_t tenant, int64_t account)
{
    for (struct filter_rules *r = rules_hash[rules_bucket(tenant, account)]; r; r = r->hash_next)
        if (r->tenant == tenant && r->account == account)
            return r;
    return NULL;
}

static void
lru_unlink(struct filter_rules *r)
{
    if (r->lru_prev)
        r->lru_prev->lru_next = r->lru_next;
    else
        lru_first = r->lru_next;
    if (r->lru_next)
        r->lru_next->lru_prev = r->lru_prev;
    else
        lru_last = r->lru_prev;
    r->lru_prev = r->lru_next = NULL;
}

static void
lru_push(struct filter_rules *r)
{
    r->lru_next = lru_first;
    if (lru_first)
        lru_first->lru_prev = r;
    lru_first = r;
    if (!lru_last)
        lru_last = r;
}

static void
cache_drop(struct filter_rules *r)
{
    if (!r || !r->cached)
        return;
    for (struct filter_rules **p = &rules_hash[rules_bucket(r->tenant, r->account)]; *p;
         p = &(*p)->hash_next) {
        if (*p == r) {
            *p = r->hash_next;
            break;
        }
    }
    lru_unlink(r);
    rules_bytes -= r->bytes;
    rules_entries--;
    r->cached = false;
    rules_unref(r);
}

/* Keeps r (taking a reference of its own) in place of any entry for its
 * account, then evicts from the cold end down to the budget. */
static void
cache_put(struct filter_rules *r)
{
    cache_drop(cache_find(r->tenant, r->account));
    if (r->bytes > RULES_BUDGET)
        return;
    size_t b = rules_bucket(r->tenant, r->account);
    r->hash_next = rules_hash[b];
    rules_hash[b] = r;
    lru_push(r);
    r->refs++;
    r->cached = true;
    rules_bytes += r->bytes;
    rules_entries++;
    while (rules_bytes > RULES_BUDGET && lru_last)
        cache_drop(lru_last);
}

/* The cached rules for the account when they carry stamp, marked recently
 * used; NULL otherwise. Borrowed. */
static struct filter_rules *
cache_get(int64_t tenant, int64_t account, const char *stamp)
{
    struct filter_rules *r = cache_find(tenant, account);
    if (!r || strcmp(r->stamp, stamp) != 0)
        return NULL;
    lru_unlink(r);
    lru_push(r);
    rules_hits++;
    return r;
}

void
eu_filters_cache_stats(struct eu_filters_cache_stats *out)
{
    out->entries = rules_entries;
    out->bytes = rules_bytes;
    out->hits = rules_hits;
    out->compiles = rules_compiles;
}

void
eu_filters_cache_free(void)
{
    while (lru_last)
        cache_drop(lru_last);
}

/* Called by every handler that writes the viewer's filters: the stamp
 * would catch the change too, but this frees the stale copy now. */
static void
forget_rules(struct eu_req *req)
{
    cache_drop(cache_find(req->tenant->id, req->auth.account_id));
    eu_stream_filters_changed(req);
}

static unsigned
context_bit(const char *name)
{
    for (size_t c = 0; c < sizeof(CONTEXTS) / sizeof(CONTEXTS[0]); c++)
        if (strcmp(name, CONTEXTS[c]) == 0)
            return 1u << c;
    return 0;
}

static int
by_status(const void *a, const void *b)
{
    const struct rule_status *x = a, *y = b;
    if (x->status != y->status)
        return x->status < y->status ? -1 : 1;
    return x->filter < y->filter ? -1 : x->filter > y->filter;
}

/* Per filter row, the fixed part of the bytes charged for it: its entity
 * and the bookkeeping around it. */
#define FILTER_COST 512

/*
 * Builds the rules from filters.load's rows (FILTER_COLUMNS, then the
 * stamp), compiling every keyword once. One reference, the caller's.
 */
static struct filter_rules *
rules_build(const PGresult *res, int64_t tenant, int64_t account)
{
    int n = PQntuples(res);
    struct filter_rules *r = eu_xcalloc(1, sizeof(*r));
    rules_compiles++;
    r->refs = 1;
    r->tenant = tenant;
    r->account = account;
    snprintf(r->stamp, sizeof(r->stamp), "%s", PQgetvalue(res, 0, 7));
    r->filters = eu_xcalloc((size_t)n, sizeof(*r->filters));
    r->n = (size_t)n;
    json_t **keywords = eu_xcalloc((size_t)n, sizeof(*keywords));
    json_t **statuses = eu_xcalloc((size_t)n, sizeof(*statuses));
    size_t nkw = 0, nst = 0;
    r->bytes = sizeof(*r) + (size_t)n * FILTER_COST;
    for (int i = 0; i < n; i++) {
        struct loaded_filter *f = &r->filters[i];
        f->entity = filter_json(res, i, 0, false);
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(f->entity, "context"), j, c)
        {
            if (json_is_string(c))
                f->contexts |= context_bit(json_string_value(c));
        }
        f->hide = strcmp(PQgetvalue(res, i, 4), "hide") == 0;
        keywords[i] = parse_json_cell(res, i, 5);
        statuses[i] = parse_json_cell(res, i, 6);
        nkw += json_array_size(keywords[i]);
        nst += json_array_size(statuses[i]);
    }
    struct eu_kwmatch_pattern *pats = eu_xcalloc(nkw ? nkw : 1, sizeof(*pats));
    r->kw = eu_xcalloc(nkw ? nkw : 1, sizeof(*r->kw));
    r->kw_filter = eu_xcalloc(nkw ? nkw : 1, sizeof(*r->kw_filter));
    r->statuses = eu_xcalloc(nst ? nst : 1, sizeof(*r->statuses));
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        size_t j;
        json_t *o;
        json_array_foreach(keywords[i], j, o)
        {
            json_t *s = json_object_get(o, "keyword");
            if (!json_is_string(s))
                continue;
            /* pats[k] borrows the string, which r->kw keeps alive. */
            r->kw[k] = json_incref(s);
            r->kw_filter[k] = (uint32_t)i;
            pats[k].text = json_string_value(s);
            pats[k].whole_word = json_is_true(json_object_get(o, "whole_word"));
            r->bytes += json_string_length(s) + 64;
            r->kw_contexts |= r->filters[i].contexts;
            k++;
        }
        json_array_foreach(statuses[i], j, o)
        {
            const char *sid = json_string_value(json_object_get(o, "status_id"));
            if (sid)
                r->statuses[r->nstatuses++] =
                    (struct rule_status){strtoll(sid, NULL, 10), (uint32_t)i};
        }
        json_decref(keywords[i]);
        json_decref(statuses[i]);
    }
    free(keywords);
    free(statuses);
    qsort(r->statuses, r->nstatuses, sizeof(*r->statuses), by_status);
    r->bytes += r->nstatuses * sizeof(*r->statuses);
    if (k > 0) {
        r->matcher = eu_kwmatch_new(pats, k);
        r->bytes += eu_kwmatch_size(r->matcher);
    }
    free(pats);
    return r;
}

struct filter_set {
    struct filter_set *next;
    const struct eu_req *req;
    struct filter_rules *rules;           /* one reference; NULL: no filters */
    uint32_t *hits;                       /* room for every keyword of rules */
    char stamp[EU_FILTERS_STAMP_LEN + 1]; /* from the page's statement; "": unknown */
    bool loaded;
};

#define SET_BUCKETS 64
/* Requests run on the loop thread only, so this needs no lock. */
static struct filter_set *sets[SET_BUCKETS];

static size_t
bucket_of(const struct eu_req *req)
{
    return ((uintptr_t)req >> 4) % SET_BUCKETS;
}

static struct filter_set *
find_set(const struct eu_req *req)
{
    for (struct filter_set *s = sets[bucket_of(req)]; s; s = s->next)
        if (s->req == req)
            return s;
    return NULL;
}

static void
on_set_freed(void *data)
{
    struct filter_set *set = data;
    for (struct filter_set **p = &sets[bucket_of(set->req)]; *p; p = &(*p)->next) {
        if (*p == set) {
            *p = set->next;
            break;
        }
    }
    rules_unref(set->rules);
    free(set->hits);
    free(set);
}

static void
set_rules(struct filter_set *set, struct filter_rules *r)
{
    if (r) {
        r->refs++;
        size_t nkw = r->matcher ? eu_kwmatch_count(r->matcher) : 0;
        set->hits = eu_xmalloc((nkw ? nkw : 1) * sizeof(*set->hits));
    }
    set->rules = r;
    set->loaded = true;
}

struct load {
    struct eu_req *req;
    void (*done)(struct eu_req *req, void *arg);
    void *arg;
};

static void
on_filters_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct load *l = arg;
    struct eu_req *req = l->req;
    eu_req_enter(req);
    struct filter_set *set = find_set(req);
    if (st != EU_DB_OK) {
        eu_log_warn("filters", "cannot load filters: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
    } else if (set && !set->loaded && PQntuples(res) == 0) {
        set_rules(set, NULL);
    } else if (set && !set->loaded) {
        int64_t tenant = req->tenant->id, account = req->auth.account_id;
        /* Unchanged since a request compiled them: only the statement was
         * spent. */
        struct filter_rules *r = cache_get(tenant, account, PQgetvalue(res, 0, 7));
        if (r) {
            set_rules(set, r);
        } else {
            r = rules_build(res, tenant, account);
            cache_put(r);
            set_rules(set, r);
            rules_unref(r);
        }
    }
    l->done(req, l->arg);
}

static void
on_already_loaded(evutil_socket_t fd, short what, void *arg)
{
    struct load *l = arg;
    eu_req_enter(l->req);
    l->done(l->req, l->arg);
}

/* The request's set, made empty and not loaded if it has none. */
static struct filter_set *
set_of(struct eu_req *req)
{
    struct filter_set *set = find_set(req);
    if (!set) {
        set = eu_xcalloc(1, sizeof(*set));
        set->req = req;
        set->next = sets[bucket_of(req)];
        sets[bucket_of(req)] = set;
        eu_arena_on_free(req->arena, on_set_freed, set);
    }
    return set;
}

void
eu_filters_known_stamp(struct eu_req *req, const char *stamp)
{
    struct filter_set *set = set_of(req);
    if (set->loaded)
        return;
    if (!stamp)
        set_rules(set, NULL);
    else
        snprintf(set->stamp, sizeof(set->stamp), "%s", stamp);
}

void
eu_filters_load(struct eu_req *req, void (*done)(struct eu_req *req, void *arg), void *arg)
{
    struct load *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->req = req;
    l->done = done;
    l->arg = arg;
    struct filter_set *set = set_of(req);
    if (!set->loaded && set->stamp[0]) {
        struct filter_rules *r = cache_get(req->tenant->id, req->auth.account_id, set->stamp);
        if (r)
            set_rules(set, r);
    }
    if (set->loaded) {
        /* The contract says done runs later; a zero timeout keeps it so. */
        struct timeval zero = {0, 0};
        event_base_once(req->app->base, -1, EV_TIMEOUT, on_already_loaded, l, &zero);
        return;
    }
    const char *p[] = {eu_req_viewer(req)};
    /* Not eu_req_stmt(): a failure here is logged and the caller goes on
     * without filters, it does not answer the request. */
    eu_db_pool_stmt(eu_tenant_pool(req->app->registry, req->tenant), &eu_filters_sql[FILTERS_LOAD],
                    1, p, on_filters_loaded, l);
}

/* ------------------------------------------------------------- matching */

static const struct {
    const char *name;
    char c;
} ENTITIES[] = {{"&amp;", '&'},  {"&lt;", '<'},   {"&gt;", '>'},
                {"&quot;", '"'}, {"&#39;", '\''}, {"&apos;", '\''}};

/*
 * The text filters match: the content warning, a blank line, then the
 * content with tags taken out (paragraph and line breaks become newlines,
 * so words on either side stay apart) and entities decoded. Caller frees.
 */
static char *
searchable_text(json_t *status)
{
    const char *spoiler = json_string_value(json_object_get(status, "spoiler_text"));
    const char *html = json_string_value(json_object_get(status, "content"));
    spoiler = spoiler ? spoiler : "";
    html = html ? html : "";
    size_t sl = strlen(spoiler);
    char *out = eu_xmalloc(sl + strlen(html) + 3);
    memcpy(out, spoiler, sl);
    char *o = out + sl;
    *o++ = '\n';
    *o++ = '\n';
    for (const char *p = html; *p;) {
        if (*p == '<') {
            const char *end = strchr(p, '>');
            if (!end)
                break;
            if (strncasecmp(p, "<br", 3) == 0 || strncasecmp(p, "</p", 3) == 0)
                *o++ = '\n';
            p = end + 1;
            continue;
        }
        if (*p == '&') {
            size_t i;
            for (i = 0; i < sizeof(ENTITIES) / sizeof(ENTITIES[0]); i++) {
                size_t l = strlen(ENTITIES[i].name);
                if (strncmp(p, ENTITIES[i].name, l) == 0) {
                    *o++ = ENTITIES[i].c;
                    p += l;
                    break;
                }
            }
            if (i < sizeof(ENTITIES) / sizeof(ENTITIES[0]))
                continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
    return out;
}

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

/* The filters' entries for status id (a range of rules->statuses). */
static const struct rule_status *
statuses_of(const struct filter_rules *r, const char *id, size_t *n)
{
    *n = 0;
    if (!id || r->nstatuses == 0)
        return NULL;
    int64_t want = strtoll(id, NULL, 10);
    size_t lo = 0, hi = r->nstatuses;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->statuses[mid].status < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < r->nstatuses && r->statuses[end].status == want)
        end++;
    *n = end - lo;
    return r->statuses + lo;
}

/*
 * Appends to results the FilterResult of each of set's filters in context
 * ctx that status matches, in filter order, stopping after a "hide" one;
 * returns whether one was "hide".
 */
static bool
match_status(struct filter_set *set, json_t *status, unsigned ctx, json_t *results)
{
    const struct filter_rules *r = set->rules;
    const char *status_id = json_string_value(json_object_get(status, "id"));
    /* One pass over the text finds every keyword of every filter. */
    size_t nh = 0;
    if (r->matcher && (r->kw_contexts & ctx)) {
        char *text = searchable_text(status);
        nh = eu_kwmatch_run(r->matcher, text, set->hits);
        free(text);
    }
    size_t ns;
    const struct rule_status *st = statuses_of(r, status_id, &ns);
    /* Both lists are in filter order: merge them a filter at a time. */
    size_t i = 0, j = 0;
    while (i < nh || j < ns) {
        uint32_t f = UINT32_MAX;
        if (i < nh)
            f = r->kw_filter[set->hits[i]];
        if (j < ns && st[j].filter < f)
            f = st[j].filter;
        bool applies = (r->filters[f].contexts & ctx) != 0;
        json_t *kw_matches = NULL, *st_matches = NULL;
        for (; i < nh && r->kw_filter[set->hits[i]] == f; i++) {
            if (!applies)
                continue;
            if (!kw_matches)
                kw_matches = json_array();
            json_array_append(kw_matches, r->kw[set->hits[i]]);
        }
        for (; j < ns && st[j].filter == f; j++) {
            if (!applies)
                continue;
            if (!st_matches)
                st_matches = json_array();
            json_array_append_new(st_matches, json_string(status_id));
        }
        if (!applies)
            continue;
        json_array_append_new(results,
                              json_pack("{s:O, s:o, s:o}", "filter", r->filters[f].entity,
                                        "keyword_matches", kw_matches ? kw_matches : json_null(),
                                        "status_matches", st_matches ? st_matches : json_null()));
        if (r->filters[f].hide)
            return true;
    }
    return false;
}

bool
eu_filters_apply(struct eu_req *req, json_t *status, const char *context)
{
    return eu_filters_apply_to(req, status, status, context);
}

bool
eu_filters_apply_to(struct eu_req *req, json_t *base, json_t *status, const char *context)
{
    struct filter_set *set = find_set(req);
    if (!set || !set->loaded || !json_is_object(status) || !json_is_object(base))
        return false;
    unsigned ctx = context_bit(context);
    json_t *had = json_object_get(status, "filtered");
    if ((!set->rules || !ctx) && json_is_array(had) && json_array_size(had) == 0)
        return false; /* nothing can match: keep the empty array it has */
    json_t *results = json_array();
    bool hide = set->rules && ctx && match_status(set, base, ctx, results);
    json_object_set_new(status, "filtered", results);
    return hide;
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
        bool ok = false;
        for (size_t c = 0; s && c < sizeof(CONTEXTS) / sizeof(CONTEXTS[0]); c++)
            ok = ok || strcmp(s, CONTEXTS[c]) == 0;
        if (!ok) {
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
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
    json_t *items = parse_json_cell(res, 0, 0);
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
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
    forget_rules(req);
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    query_reply(req, &eu_filters_sql[FILTERS_V1_DESTROY], 2, p, NULL, false);
}

/* ===================================================== route table: begin
 * The routes of this file's handlers, as one block so that they can move
 * with their handlers when the file is split. Flags: include/eunha/router.h. */

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
/* ======================================================= route table: end */
