/*
 * The streaming API's rendering: what one listener gets of an event that
 * src/social/stream_events.c published. It runs the REST handler of the
 * timeline in question on a detached request (eu_req_new_detached())
 * bounded to the one id, so the listener gets exactly what a REST page
 * would hold for that viewer, or nothing: the public timeline's shunning,
 * the render's visibility rule, the viewer's filters in the stream's
 * context ("hide" drops, others add "filtered") and the viewer's flags.
 * The hub (src/http/stream_deliver.c) calls it through the callbacks the
 * wiring gave eu_stream_start(): the hub stands below the REST handlers
 * and includes none of them.
 *
 * A new status on the public, hashtag and user streams is rendered once
 * for all their listeners instead (eu_stream_shared_render()): the Status
 * rendered without a viewer, cut where the viewer's members go, and each
 * listener's payload spliced from the pieces (eu_stream_shared_payload()),
 * as Mastodon's streaming server sends one payload with "filtered" set per
 * listener. What decides whether a listener gets it at all, past what the
 * publisher chose (the public facts, the home rules), is the REST
 * timelines' shunning: the viewer's blocks (either way), mutes and domain
 * blocks, and its filters, all held in memory per stream (struct
 * eu_stream_vstate, reloaded when the viewer changes them). A status whose
 * render has viewer members that cannot be known without a statement (a
 * reply, which may sit in a muted conversation; a reblog, a poll, a quote;
 * an author silenced, shown to followers only; a followers-only quote
 * policy) or a listener who is its author is rendered per listener as
 * before.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announcements_internal.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/filters.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"
#include "social_internal.h"
#include "statuses_internal.h"

enum {
    SR_FACTS,
    SR_VIEWER,
};

const struct eu_sql eu_stream_render_sql[] = {
    /* $2 status: its author, the author's domain (NULL: local), whether the
     * author is silenced (shown to followers only), and whether nobody may
     * see it any more. */
    [SR_FACTS] = {"stream_render.facts",
                  "SELECT a.id::text, a.domain, a.silenced_at IS NOT NULL,"
                  " s.deleted_at IS NOT NULL OR a.suspended_at IS NOT NULL"
                  " FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
                  " WHERE s.tenant_id = $1 AND s.id = $2::bigint"},
    /* $2 viewer: what eunha_is_not_shunned() and eunha_is_not_domain_hidden()
     * read of the viewer, as bigint[] texts and a JSON array: accounts it
     * blocks, accounts blocking it, accounts it mutes (with their mute's
     * end in epoch seconds, 0: none), domains it blocks, and when the first
     * of its filters expires (epoch seconds, 0: none). */
    [SR_VIEWER] = {"stream_render.viewer",
                   "SELECT (SELECT coalesce(array_agg(b.target_account_id), '{}') FROM blocks b"
                   "  WHERE b.tenant_id = $1 AND b.account_id = $2::bigint)::text,"
                   " (SELECT coalesce(array_agg(b.account_id), '{}') FROM blocks b"
                   "  WHERE b.tenant_id = $1 AND b.target_account_id = $2::bigint)::text,"
                   " (SELECT coalesce(array_agg(m.target_account_id ORDER BY m.target_account_id),"
                   "  '{}') FROM mutes m WHERE m.tenant_id = $1 AND m.account_id = $2::bigint"
                   "  AND (m.expires_at IS NULL OR m.expires_at > now()))::text,"
                   " (SELECT coalesce(array_agg(coalesce(ceil(extract(epoch FROM m.expires_at)),"
                   "  0)::bigint ORDER BY m.target_account_id), '{}') FROM mutes m"
                   "  WHERE m.tenant_id = $1 AND m.account_id = $2::bigint"
                   "  AND (m.expires_at IS NULL OR m.expires_at > now()))::text,"
                   " (SELECT coalesce(json_agg(d.domain), '[]') FROM account_domain_blocks d"
                   "  WHERE d.tenant_id = $1 AND d.account_id = $2::bigint)::text,"
                   " (SELECT coalesce(ceil(extract(epoch FROM min(f.expires_at))), 0)::bigint"
                   "  FROM filters f WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
                   "  AND f.expires_at > now())::text"},
    {0},
};

/* -------------------------------------------------------------- rendering */

struct render {
    eu_stream_rendered_cb cb;
    void *arg;
    bool array; /* the handler answers a list: take its one element */
};

static void
on_sink(int status, const char *body, size_t len, void *arg)
{
    struct render *r = arg;
    eu_stream_rendered_cb cb = r->cb;
    void *cb_arg = r->arg;
    bool array = r->array;
    free(r);
    if (status != 200 || len < 2) {
        /* 404 and 403 say this viewer must not see it; a 5xx or 429 that
         * the event could not be rendered now. */
        cb(NULL, 0, status >= 500 || status == 429, cb_arg);
        return;
    }
    if (array) {
        /* "[{...}]": one element at most, as the page was bounded to one id. */
        if (len <= 2 || body[0] != '[' || body[len - 1] != ']') {
            cb(NULL, 0, false, cb_arg);
            return;
        }
        body++;
        len -= 2;
    }
    cb(body, len, false, cb_arg);
}

/* The announcement as GET /api/v1/announcements shows it to this viewer
 * (read, reactions' me), or nothing once it is no longer shown. */
static void
render_announcement(struct eu_req *req, const char *id)
{
    req->params.n = 1;
    req->params.p[0].name = "id";
    req->params.p[0].value = eu_arena_strdup(req->arena, id);
    eu_announcements_show_one(req);
}

void
eu_stream_render(struct eu_app *app, struct eu_tenant *t, const struct eu_stream_viewer *v,
                 const char *stream, const char *param, const char *event, const char *id,
                 eu_stream_rendered_cb cb, void *arg)
{
    struct render *r = eu_xcalloc(1, sizeof(*r));
    r->cb = cb;
    r->arg = arg;
    long long n = strtoll(id, NULL, 10);
    char qs[200];
    /* The page holds this id alone: since_id and max_id are exclusive. */
    int is_local = strcmp(stream, "public:local") == 0 || strcmp(stream, "hashtag:local") == 0;
    int is_remote = strcmp(stream, "public:remote") == 0;
    snprintf(qs, sizeof(qs), "since_id=%lld&max_id=%lld&limit=1%s%s", n - 1, n + 1,
             is_local ? "&local=true" : "", is_remote ? "&remote=true" : "");
    struct eu_req *req = eu_req_new_detached(app, t, qs, on_sink, r);
    req->auth.present = v->account_id != 0;
    req->auth.token_id = v->token_id;
    req->auth.app_id = v->app_id;
    req->auth.user_id = v->user_id;
    req->auth.account_id = v->account_id;
    req->auth.scopes = v->scopes ? eu_arena_strdup(req->arena, v->scopes) : "";
    eu_req_enter(req);
    if (strcmp(event, "announcement") == 0) {
        render_announcement(req, id);
    } else if (strcmp(event, "notification") == 0) {
        req->params.n = 1;
        req->params.p[0].name = "id";
        req->params.p[0].value = eu_arena_strdup(req->arena, id);
        eu_notifications_show(req);
    } else if (strcmp(stream, "direct") == 0) {
        /* The viewer's conversation holding the status, as GET
         * /api/v1/conversations renders it; 404 (nothing sent) when the
         * viewer has none or must not hear of this status. */
        req->params.n = 1;
        req->params.p[0].name = "id";
        req->params.p[0].value = eu_arena_strdup(req->arena, id);
        eu_conversations_stream(req);
    } else if (strncmp(stream, "public", 6) == 0) {
        r->array = true;
        eu_timelines_public(req);
    } else if (strcmp(stream, "list") == 0) {
        /* The list timeline: 404 (nothing sent) unless the viewer owns it. */
        r->array = true;
        req->params.n = 1;
        req->params.p[0].name = "id";
        req->params.p[0].value = eu_arena_strdup(req->arena, param ? param : "0");
        eu_timelines_list(req);
    } else if (strncmp(stream, "hashtag", 7) == 0) {
        r->array = true;
        req->params.n = 1;
        req->params.p[0].name = "hashtag";
        req->params.p[0].value = eu_arena_strdup(req->arena, param ? param : "");
        eu_timelines_tag(req);
    } else {
        /* user: the recipients were chosen by the home rules already; the
         * render adds visibility, filters ("home") and flags. */
        r->array = true;
        const char *ids[] = {id};
        eu_statuses_reply_list(req, ids, 1, NULL, NULL, "home");
    }
    eu_log_set_context(NULL, NULL);
}

/* ------------------------------------------------------ render once, send many */

/*
 * A status rendered for nobody in particular, cut into three pieces around
 * the two places a viewer changes: before ,"filtered": (where the
 * viewer's flags go, then its FilterResults) and quote_approval's
 * current_user. Each piece is kept as it is (SSE) and escaped as a JSON
 * string's content (a WebSocket message's "payload"), so a listener costs
 * a few copies and no escaping of the whole status. Immutable once built.
 */
struct eu_stream_shared {
    int64_t author;
    char *domain; /* the author's, NULL: local */
    bool serves;  /* false: every listener is rendered for alone */
    json_t *entity;
    const char *current_user; /* what a signed-in non-author sees */
    char *raw[3], *esc[3];
    size_t raw_len[3], esc_len[3];
};

/* What shunning and filters need of one viewer, held by its stream. */
struct eu_stream_vstate {
    int64_t *blocks, *blocked_by, *mutes, *mute_ends; /* sorted; mutes with their ends */
    size_t nblocks, nblocked_by, nmutes;
    char **domains;
    size_t ndomains;
    struct eu_filter_rules *filters; /* NULL: none */
    int64_t stale_at;                /* a filter expires then (epoch seconds; 0: never) */
};

/* Appends src (n bytes) to *buf escaped as JSON string content: what
 * jansson writes for it, without the quotes. */
static void
esc_append(char **buf, size_t *len, size_t *cap, const char *src, size_t n)
{
    if (*len + n * 6 + 1 > *cap) {
        *cap = (*len + n * 6 + 1) * 2;
        *buf = eu_xrealloc(*buf, *cap);
    }
    char *o = *buf + *len;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch == '"' || ch == '\\') {
            *o++ = '\\';
            *o++ = (char)ch;
        } else if (ch == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        } else if (ch < 0x20) {
            static const char hex[] = "0123456789abcdef";
            const char *named = ch == '\b'   ? "b"
                                : ch == '\f' ? "f"
                                : ch == '\r' ? "r"
                                : ch == '\t' ? "t"
                                             : NULL;
            *o++ = '\\';
            if (named) {
                *o++ = named[0];
            } else {
                memcpy(o, "u00", 3);
                o += 3;
                *o++ = hex[ch >> 4];
                *o++ = hex[ch & 15];
            }
        } else {
            *o++ = (char)ch;
        }
    }
    *len = (size_t)(o - *buf);
    (*buf)[*len] = '\0';
}

static void
raw_append(char **buf, size_t *len, size_t *cap, const char *src, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = eu_xrealloc(*buf, *cap);
    }
    memcpy(*buf + *len, src, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* The one occurrence of needle in hay (hay_len bytes), or NULL when there
 * is none or more than one. A needle holding a quote occurs only as JSON
 * structure: in a string every quote is escaped. */
static const char *
find_once(const char *hay, size_t hay_len, const char *needle)
{
    size_t n = strlen(needle);
    const char *first = NULL;
    for (const char *p = hay; p + n <= hay + hay_len; p++) {
        p = memchr(p, needle[0], (size_t)(hay + hay_len - p));
        if (!p || p + n > hay + hay_len)
            break;
        if (memcmp(p, needle, n) == 0) {
            if (first)
                return NULL;
            first = p;
        }
    }
    return first;
}

static void
shared_set_piece(struct eu_stream_shared *sh, int i, const char *from, size_t n)
{
    size_t cap = 0;
    sh->raw[i] = NULL;
    sh->raw_len[i] = 0;
    raw_append(&sh->raw[i], &sh->raw_len[i], &cap, from, n);
    cap = 0;
    sh->esc[i] = NULL;
    sh->esc_len[i] = 0;
    esc_append(&sh->esc[i], &sh->esc_len[i], &cap, from, n);
}

/* Whether the anonymous render o (its text, len bytes) can serve every
 * viewer but its author with the pieces cut; cuts them. */
static bool
shared_cut(struct eu_stream_shared *sh, const char *text, size_t len)
{
    json_t *o = sh->entity;
    if (!json_is_null(json_object_get(o, "reblog")) ||
        !json_is_null(json_object_get(o, "in_reply_to_id")) ||
        !json_is_null(json_object_get(o, "poll")) || !json_is_null(json_object_get(o, "quote")))
        return false;
    json_t *automatic = json_object_get(json_object_get(o, "quote_approval"), "automatic");
    if (!json_is_array(automatic))
        return false;
    sh->current_user = "denied";
    size_t i;
    json_t *v;
    json_array_foreach(automatic, i, v)
    {
        const char *who = json_string_value(v);
        if (who && strcmp(who, "public") == 0)
            sh->current_user = "automatic";
        else
            return false; /* followers: it depends on whom the viewer follows */
    }
    static const char filtered[] = ",\"filtered\":[]", current[] = "\"current_user\":\"unknown\"";
    const char *f = find_once(text, len, filtered);
    const char *c = find_once(text, len, current);
    if (!f || !c || c < f)
        return false;
    const char *c_value = c + strlen("\"current_user\":");
    const char *after_f = f + sizeof(filtered) - 1;
    const char *after_c = c + sizeof(current) - 1;
    shared_set_piece(sh, 0, text, (size_t)(f - text));
    shared_set_piece(sh, 1, after_f, (size_t)(c_value - after_f));
    shared_set_piece(sh, 2, after_c, (size_t)(text + len - after_c));
    return true;
}

void
eu_stream_shared_free(struct eu_stream_shared *sh)
{
    if (!sh)
        return;
    json_decref(sh->entity);
    free(sh->domain);
    for (int i = 0; i < 3; i++) {
        free(sh->raw[i]);
        free(sh->esc[i]);
    }
    free(sh);
}

struct shared_job {
    eu_stream_shared_cb cb;
    void *arg;
    char id[24];
    bool gone; /* the status is deleted, or its author suspended */
    struct eu_stream_shared *sh;
};

static void
on_shared_sink(int status, const char *body, size_t len, void *arg)
{
    struct shared_job *j = arg;
    eu_stream_shared_cb cb = j->cb;
    void *cb_arg = j->arg;
    struct eu_stream_shared *sh = j->sh;
    bool gone = j->gone;
    free(j);
    if (status != 200) {
        eu_stream_shared_free(sh);
        cb(NULL, true, cb_arg);
        return;
    }
    if (gone || !sh) {
        eu_stream_shared_free(sh);
        cb(NULL, false, cb_arg);
        return;
    }
    /* "[{...}]", or "[]" when it is gone meanwhile. */
    if (len <= 2 || body[0] != '[' || body[len - 1] != ']') {
        eu_stream_shared_free(sh);
        cb(NULL, false, cb_arg);
        return;
    }
    sh->entity = json_loadb(body + 1, len - 2, 0, NULL);
    if (!json_is_object(sh->entity)) {
        eu_stream_shared_free(sh);
        cb(NULL, true, cb_arg);
        return;
    }
    sh->serves = sh->serves && shared_cut(sh, body + 1, len - 2);
    cb(sh, false, cb_arg);
}

static void
on_shared_entity(struct eu_req *req, json_t *array, void *arg)
{
    (void)arg;
    eu_req_reply_json(req, 200, array);
}

static void
on_shared_facts(struct eu_req *req, PGresult *res, void *arg)
{
    struct shared_job *j = arg;
    if (PQntuples(res) != 1 || PQgetvalue(res, 0, 3)[0] == 't') {
        j->gone = true;
        eu_req_reply_raw(req, 200, "application/json", "[]", 2);
        return;
    }
    struct eu_stream_shared *sh = eu_xcalloc(1, sizeof(*sh));
    sh->author = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    sh->domain = PQgetisnull(res, 0, 1) ? NULL : eu_xstrdup(PQgetvalue(res, 0, 1));
    /* A silenced author is shown to its followers only. */
    sh->serves = PQgetvalue(res, 0, 2)[0] != 't';
    j->sh = sh;
    const char *ids[] = {j->id};
    /* Who gets it was the publisher's choice and is each listener's check
     * below: the render is nobody's. */
    eu_statuses_render_opts(req, ids, 1, EU_RENDER_KEEP_HIDDEN, on_shared_entity, j);
}

void
eu_stream_shared_render(struct eu_app *app, struct eu_tenant *t, const char *id,
                        eu_stream_shared_cb cb, void *arg)
{
    struct shared_job *j = eu_xcalloc(1, sizeof(*j));
    j->cb = cb;
    j->arg = arg;
    snprintf(j->id, sizeof(j->id), "%s", id);
    struct eu_req *req = eu_req_new_detached(app, t, NULL, on_shared_sink, j);
    eu_req_enter(req);
    const char *p[] = {j->id};
    eu_req_stmt(req, &eu_stream_render_sql[SR_FACTS], 1, p, on_shared_facts, j);
    eu_log_set_context(NULL, NULL);
}

static bool
has_id(const int64_t *ids, size_t n, int64_t id, size_t *at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (at)
        *at = lo;
    return lo < n && ids[lo] == id;
}

/* eunha_is_not_shunned() and eunha_is_not_domain_hidden() (for an author
 * who is not silenced), from memory. */
static bool
shunned(const struct eu_stream_vstate *vs, const struct eu_stream_shared *sh)
{
    size_t at;
    if (has_id(vs->blocks, vs->nblocks, sh->author, NULL) ||
        has_id(vs->blocked_by, vs->nblocked_by, sh->author, NULL))
        return true;
    if (has_id(vs->mutes, vs->nmutes, sh->author, &at) &&
        (vs->mute_ends[at] == 0 || vs->mute_ends[at] > (int64_t)time(NULL)))
        return true;
    if (sh->domain)
        for (size_t i = 0; i < vs->ndomains; i++)
            if (strcmp(vs->domains[i], sh->domain) == 0)
                return true;
    return false;
}

/* A signed-in viewer's flags on a status nobody has touched yet, in the
 * order the REST render writes them; pinned is its author's only. */
static const char FLAGS[] =
    ",\"favourited\":false,\"reblogged\":false,\"muted\":false,\"bookmarked\":false";

int
eu_stream_shared_payload(const struct eu_stream_shared *sh, struct eu_stream_vstate *vs,
                         int64_t account_id, const char *stream, bool escaped, char **out,
                         size_t *len)
{
    if (!sh->serves || (account_id && (!vs || account_id == sh->author)))
        return -1;
    json_t *results = NULL;
    if (account_id) {
        /* The filters held are no longer the active ones. */
        if (vs->stale_at && (int64_t)time(NULL) >= vs->stale_at)
            return -2;
        if (shunned(vs, sh))
            return 0;
        /* The contexts of the REST timelines these streams mirror. */
        const char *ctx = strcmp(stream, "user") == 0 ? "home" : "public";
        if (eu_filters_rules_match(vs->filters, sh->entity, ctx, &results)) {
            json_decref(results);
            return 0;
        }
    }
    char *mid = NULL;
    size_t mid_len = 0, mid_cap = 0;
    if (account_id)
        raw_append(&mid, &mid_len, &mid_cap, FLAGS, sizeof(FLAGS) - 1);
    raw_append(&mid, &mid_len, &mid_cap, ",\"filtered\":", 12);
    if (results && json_array_size(results)) {
        char *f = json_dumps(results, JSON_COMPACT);
        raw_append(&mid, &mid_len, &mid_cap, f, strlen(f));
        free(f);
    } else {
        raw_append(&mid, &mid_len, &mid_cap, "[]", 2);
    }
    json_decref(results);
    char cu[32];
    int cu_len = snprintf(cu, sizeof(cu), "\"%s\"", account_id ? sh->current_user : "unknown");
    char *const *piece = escaped ? sh->esc : sh->raw;
    const size_t *piece_len = escaped ? sh->esc_len : sh->raw_len;
    char *buf = NULL;
    size_t n = 0, cap = piece_len[0] + piece_len[1] + piece_len[2] + mid_len * 2 + 64;
    buf = eu_xmalloc(cap);
    raw_append(&buf, &n, &cap, piece[0], piece_len[0]);
    if (escaped)
        esc_append(&buf, &n, &cap, mid, mid_len);
    else
        raw_append(&buf, &n, &cap, mid, mid_len);
    raw_append(&buf, &n, &cap, piece[1], piece_len[1]);
    if (escaped)
        esc_append(&buf, &n, &cap, cu, (size_t)cu_len);
    else
        raw_append(&buf, &n, &cap, cu, (size_t)cu_len);
    raw_append(&buf, &n, &cap, piece[2], piece_len[2]);
    free(mid);
    *out = buf;
    *len = n;
    return 1;
}

/* ------------------------------------------------------------ viewer state */

void
eu_stream_vstate_free(struct eu_stream_vstate *vs)
{
    if (!vs)
        return;
    free(vs->blocks);
    free(vs->blocked_by);
    free(vs->mutes);
    free(vs->mute_ends);
    for (size_t i = 0; i < vs->ndomains; i++)
        free(vs->domains[i]);
    free(vs->domains);
    eu_filters_rules_free(vs->filters);
    free(vs);
}

static int
by_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A bigint[]'s text ("{1,2}") as a malloc'd array; *n its length. */
static int64_t *
parse_ids(const char *text, size_t *n, bool sort)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    int64_t *ids = eu_xcalloc(cap, sizeof(*ids));
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        if (*p >= '0' && *p <= '9') {
            ids[(*n)++] = strtoll(p, &end, 10);
            p = end;
        } else {
            p++;
        }
    }
    if (sort)
        qsort(ids, *n, sizeof(*ids), by_id);
    return ids;
}

struct vstate_job {
    eu_stream_vstate_cb cb;
    void *arg;
    struct eu_stream_vstate *vs;
    int pending;
    bool failed;
};

static void
vstate_step(struct vstate_job *j)
{
    if (--j->pending > 0)
        return;
    struct eu_stream_vstate *vs = j->vs;
    if (j->failed) {
        eu_stream_vstate_free(vs);
        vs = NULL;
    }
    eu_stream_vstate_cb cb = j->cb;
    void *arg = j->arg;
    free(j);
    cb(vs, arg);
}

static void
on_vstate_rows(PGresult *res, enum eu_db_status st, void *arg)
{
    struct vstate_job *j = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        eu_log_warn("stream", "cannot load a stream's viewer: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        j->failed = true;
        vstate_step(j);
        return;
    }
    struct eu_stream_vstate *vs = j->vs;
    vs->blocks = parse_ids(PQgetvalue(res, 0, 0), &vs->nblocks, true);
    vs->blocked_by = parse_ids(PQgetvalue(res, 0, 1), &vs->nblocked_by, true);
    /* Both in the order of the muted accounts, which the statement sorts. */
    size_t nends;
    vs->mutes = parse_ids(PQgetvalue(res, 0, 2), &vs->nmutes, false);
    vs->mute_ends = parse_ids(PQgetvalue(res, 0, 3), &nends, false);
    if (nends != vs->nmutes)
        j->failed = true;
    json_t *domains = json_loads(PQgetvalue(res, 0, 4), 0, NULL);
    vs->domains = eu_xcalloc(json_array_size(domains) + 1, sizeof(*vs->domains));
    size_t i;
    json_t *d;
    json_array_foreach(domains, i, d)
    {
        if (json_is_string(d))
            vs->domains[vs->ndomains++] = eu_xstrdup(json_string_value(d));
    }
    json_decref(domains);
    vs->stale_at = strtoll(PQgetvalue(res, 0, 5), NULL, 10);
    vstate_step(j);
}

static void
on_vstate_filters(struct eu_filter_rules *rules, bool failed, void *arg)
{
    struct vstate_job *j = arg;
    j->vs->filters = rules;
    j->failed = j->failed || failed;
    vstate_step(j);
}

void
eu_stream_vstate_load(struct eu_app *app, struct eu_tenant *t, int64_t account_id,
                      eu_stream_vstate_cb cb, void *arg)
{
    struct vstate_job *j = eu_xcalloc(1, sizeof(*j));
    j->cb = cb;
    j->arg = arg;
    j->vs = eu_xcalloc(1, sizeof(*j->vs));
    j->pending = 2;
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)account_id);
    const char *p[] = {id};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_stream_render_sql[SR_VIEWER], 1, p,
                    on_vstate_rows, j);
    eu_filters_rules_load(app, t, account_id, on_vstate_filters, j);
}

const struct eu_stream_ops eu_stream_ops = {
    .render = eu_stream_render,
    .shared_render = eu_stream_shared_render,
    .shared_payload = eu_stream_shared_payload,
    .shared_free = eu_stream_shared_free,
    .vstate_load = eu_stream_vstate_load,
    .vstate_free = eu_stream_vstate_free,
};
