/*
 * Applying the viewer's filters to rendered statuses
 * (include/eunha/filters.h): the Filter entity, loading an account's
 * filters, compiling them and keeping the compiled copy across requests,
 * and matching. The REST handlers that write filters are src/api/filters.c.
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
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "kwmatch_internal.h"

enum {
    MATCH_LOAD,
};

const struct eu_sql eu_filters_match_sql[] = {
    [MATCH_LOAD] = {"filters.load",
                    "SELECT " EU_FILTER_COLUMNS
                    ", (SELECT stamp FROM eunha_filters_stamp($1, $2::bigint) stamp)"
                    " FROM filters f WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
                    " AND (f.expires_at IS NULL OR f.expires_at > now()) ORDER BY f.id"},
    {0},
};

static const char *const CONTEXTS[] = {"home", "notifications", "public", "thread", "account"};

/* ----------------------------------------------------------- the entity */

json_t *
eu_filters_json_cell(const PGresult *res, int row, int col)
{
    json_t *v = json_loads(PQgetvalue(res, row, col), JSON_DECODE_ANY, NULL);
    return v ? v : json_array();
}

json_t *
eu_filter_json(const PGresult *res, int row, int col, bool with_rules)
{
    json_t *expires =
        PQgetisnull(res, row, col + 3) ? json_null() : json_string(PQgetvalue(res, row, col + 3));
    json_t *f =
        json_pack("{s:s, s:s, s:o, s:o, s:s}", "id", PQgetvalue(res, row, col), "title",
                  PQgetvalue(res, row, col + 1), "context", eu_filters_json_cell(res, row, col + 2),
                  "expires_at", expires, "filter_action", PQgetvalue(res, row, col + 4));
    if (with_rules) {
        json_object_set_new(f, "keywords", eu_filters_json_cell(res, row, col + 5));
        json_object_set_new(f, "statuses", eu_filters_json_cell(res, row, col + 6));
    }
    return f;
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

void
eu_filters_forget(struct eu_req *req)
{
    cache_drop(cache_find(req->tenant->id, req->auth.account_id));
    eu_stream_filters_changed(req);
}

unsigned
eu_filters_context_bit(const char *name)
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
 * Builds the rules from filters.load's rows (EU_FILTER_COLUMNS, then the
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
        f->entity = eu_filter_json(res, i, 0, false);
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(f->entity, "context"), j, c)
        {
            if (json_is_string(c))
                f->contexts |= eu_filters_context_bit(json_string_value(c));
        }
        f->hide = strcmp(PQgetvalue(res, i, 4), "hide") == 0;
        keywords[i] = eu_filters_json_cell(res, i, 5);
        statuses[i] = eu_filters_json_cell(res, i, 6);
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
    eu_db_pool_stmt(eu_tenant_pool(req->app->registry, req->tenant),
                    &eu_filters_match_sql[MATCH_LOAD], 1, p, on_filters_loaded, l);
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
    unsigned ctx = eu_filters_context_bit(context);
    json_t *had = json_object_get(status, "filtered");
    if ((!set->rules || !ctx) && json_is_array(had) && json_array_size(had) == 0)
        return false; /* nothing can match: keep the empty array it has */
    json_t *results = json_array();
    bool hide = set->rules && ctx && match_status(set, base, ctx, results);
    json_object_set_new(status, "filtered", results);
    return hide;
}

/* ------------------------------------------------- without a request */

struct eu_filter_rules {
    struct filter_rules *rules; /* one reference */
    uint32_t *hits;             /* room for every keyword of rules */
};

struct rules_load {
    int64_t tenant, account;
    eu_filters_rules_cb done;
    void *arg;
};

static void
on_rules_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct rules_load *l = arg;
    struct eu_filter_rules *out = NULL;
    bool failed = st != EU_DB_OK;
    if (failed) {
        eu_log_warn("filters", "cannot load filters: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
    } else if (PQntuples(res) > 0) {
        struct filter_rules *r = cache_get(l->tenant, l->account, PQgetvalue(res, 0, 7));
        if (r) {
            r->refs++;
        } else {
            r = rules_build(res, l->tenant, l->account);
            cache_put(r);
        }
        out = eu_xcalloc(1, sizeof(*out));
        out->rules = r;
        size_t nkw = r->matcher ? eu_kwmatch_count(r->matcher) : 0;
        out->hits = eu_xmalloc((nkw ? nkw : 1) * sizeof(*out->hits));
    }
    eu_filters_rules_cb done = l->done;
    void *done_arg = l->arg;
    free(l);
    done(out, failed, done_arg);
}

void
eu_filters_rules_load(struct eu_app *app, struct eu_tenant *t, int64_t account_id,
                      eu_filters_rules_cb done, void *arg)
{
    struct rules_load *l = eu_xcalloc(1, sizeof(*l));
    l->tenant = t->id;
    l->account = account_id;
    l->done = done;
    l->arg = arg;
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)account_id);
    const char *p[] = {id};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_filters_match_sql[MATCH_LOAD], 1, p,
                    on_rules_loaded, l);
}

void
eu_filters_rules_free(struct eu_filter_rules *rules)
{
    if (!rules)
        return;
    rules_unref(rules->rules);
    free(rules->hits);
    free(rules);
}

bool
eu_filters_rules_match(struct eu_filter_rules *rules, json_t *base, const char *context,
                       json_t **results)
{
    *results = json_array();
    unsigned ctx = eu_filters_context_bit(context);
    if (!rules || !ctx || !json_is_object(base))
        return false;
    struct filter_set set = {.rules = rules->rules, .hits = rules->hits, .loaded = true};
    return match_status(&set, base, ctx, *results);
}
