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
 * A new status on the public, hashtag, user and list streams is rendered
 * once for all their listeners instead (eu_stream_shared_render()): the Status
 * rendered without a viewer, cut where the viewer's members go, and each
 * listener's payload spliced from the pieces (eu_stream_shared_payload()),
 * as Mastodon's streaming server sends one payload with "filtered" set per
 * listener. What decides whether a listener gets it at all, past what the
 * publisher chose (the public facts, the home rules), is the REST
 * timelines' shunning: the viewer's blocks (either way), mutes and domain
 * blocks, and its filters, all held in memory per stream (struct
 * eu_stream_vstate, reloaded when the viewer changes them).
 *
 * Where a viewer's members need the database, they are read for all the
 * listeners at once: a reblog (the flags of the wrapper and of its
 * original), a reply (a conversation a listener may have muted), a
 * followers-only quote policy (whom the listener follows), a poll (the
 * listener's votes), a quote (the quoted status's flags) have one
 * statement (stream_render.flags) take the listeners the hub counted
 * (struct eu_stream_audience) and answer, per flag, which of them have it.
 * A reblog is shunned for its booster and its original's author alike, and
 * filtered by its original, as the REST home timeline does. A quote's
 * shown status is read as a reblog's original is (its flags, whom the
 * listener follows for its quote_approval), a level deeper in a reblog
 * of a quote. What stays per listener: a quote of a status not public or
 * unlisted, or whose author the listener shuns or is blocked by (the REST
 * render says what it shows); a reblog not public or unlisted, or of one
 * that is not; an author silenced, shown
 * to followers only; a listener who is its author (or the original's); and
 * a listener the event reached after the flags were read. On a list stream
 * also a status not public or unlisted, a reply to someone else (the
 * list's replies_policy), one whose author the viewer shuns, and one on a
 * list the viewer's state does not hold as its own: the list timeline
 * decides those.
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
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"
#include "social_internal.h"
#include "statuses_internal.h"

enum {
    SR_FACTS,
    SR_VIEWER,
    SR_FLAGS,
};

/* stream_render.flags's columns of level l: the listeners that have each
 * flag on that level's status. */
#define SR_FLAG_OF(cte, l)                                                                         \
    " (SELECT coalesce(array_agg(account_id), '{}') FROM " cte " WHERE lvl = " l ")::text"
#define SR_LEVEL_FLAGS(l)                                                                          \
    SR_FLAG_OF("fav", l) "," SR_FLAG_OF("reb", l) "," SR_FLAG_OF("mut", l) "," SR_FLAG_OF("bm", l)
/* ... and the listeners that follow author p. */
#define SR_FOLLOWERS(p)                                                                            \
    " (SELECT coalesce(array_agg(account_id), '{}') FROM fol WHERE target = " p "::bigint)::text"
/* Per level its flags, then per level its author's followers. */
#define SR_FLAGS_LEVELS SR_LEVEL_FLAGS("0") "," SR_LEVEL_FLAGS("1") "," SR_LEVEL_FLAGS("2")
#define SR_FLAGS_FOLLOWS SR_FOLLOWERS("$5") "," SR_FOLLOWERS("$6") "," SR_FOLLOWERS("$8")
/* Each listener's choices in the one poll, by its id. */
#define SR_FLAGS_VOTES                                                                             \
    " (SELECT coalesce(json_object_agg(pv.account_id::text, pv.choices), '{}')"                    \
    "  FROM polls p JOIN poll_votes pv ON pv.tenant_id = $1"                                       \
    "  AND pv.poll_id = p.id AND pv.account_id IN (SELECT id FROM v)"                              \
    "  WHERE p.tenant_id = $1 AND p.status_id IN ($3::bigint, $4::bigint, $7::bigint))::text"

const struct eu_sql eu_stream_render_sql[] = {
    /* $2 status: its author, the author's domain (NULL: local), whether the
     * author is silenced (shown to followers only), and whether nobody may
     * see it any more. */
    [SR_FACTS] = {"stream_render.facts",
                  "SELECT a.id::text, a.domain, a.silenced_at IS NOT NULL,"
                  " s.deleted_at IS NOT NULL OR a.suspended_at IS NOT NULL"
                  /* A reblog's original the same way (NULLs: none). */
                  " OR o.deleted_at IS NOT NULL OR oa.suspended_at IS NOT NULL,"
                  " oa.id::text, oa.domain, oa.silenced_at IS NOT NULL,"
                  /* The author of the status its accepted quote (or its
                   * original's) shows (NULL: none), its domain, and whether
                   * it is suspended (the quoted status then shown to
                   * nobody). */
                  " qa.id::text, qa.domain, qa.suspended_at IS NOT NULL"
                  " FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
                  " LEFT JOIN statuses o ON o.tenant_id = $1 AND o.id = s.reblog_of_id"
                  " LEFT JOIN accounts oa ON oa.tenant_id = $1 AND oa.id = o.account_id"
                  " LEFT JOIN quotes q ON q.tenant_id = $1"
                  "  AND q.status_id = coalesce(s.reblog_of_id, s.id)"
                  "  AND q.state = 'accepted'"
                  " LEFT JOIN statuses qs ON qs.tenant_id = $1 AND qs.id = q.quoted_status_id"
                  " LEFT JOIN accounts qa ON qa.tenant_id = $1 AND qa.id = qs.account_id"
                  " WHERE s.tenant_id = $1 AND s.id = $2::bigint"},
    /* $2 viewer: what eunha_is_not_shunned() and eunha_is_not_domain_hidden()
     * read of the viewer, as bigint[] texts and a JSON array: accounts it
     * blocks, accounts blocking it, accounts it mutes (with their mute's
     * end in epoch seconds, 0: none), domains it blocks, when the first
     * of its filters expires (epoch seconds, 0: none), and its lists. */
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
                   "  AND f.expires_at > now())::text,"
                   " (SELECT coalesce(array_agg(l.id), '{}') FROM lists l"
                   "  WHERE l.tenant_id = $1 AND l.account_id = $2::bigint)::text"},
    /* $2 the listeners (bigint[]), $3 a status, $4 the original it
     * reblogs or the status its quote shows, $7 the status the original's
     * quote shows (0: none), $5, $6 and $8 their authors whose followers
     * matter to quote_approval (0: none): of those listeners, as bigint[]
     * texts, who favourited, reblogged, muted the conversation of and
     * bookmarked $3, then the same of $4 and of $7, then who follows $5,
     * $6 and $8, then their votes in the poll of any of them. What
     * status_render.statuses's flags read for one viewer, for all of them
     * at once: each a probe per listener on the table's key. */
    [SR_FLAGS] = {"stream_render.flags",
                  "WITH v AS (SELECT DISTINCT unnest($2::bigint[]) AS id),"
                  " st AS (SELECT x.id, coalesce(x.conversation_id, x.id) AS conv,"
                  "  CASE x.id WHEN $3::bigint THEN 0 WHEN $4::bigint THEN 1 ELSE 2 END AS lvl"
                  "  FROM statuses x WHERE x.tenant_id = $1"
                  "  AND x.id IN ($3::bigint, $4::bigint, $7::bigint)),"
                  " fav AS (SELECT st.lvl, f.account_id FROM st JOIN favourites f"
                  "  ON f.tenant_id = $1 AND f.status_id = st.id"
                  "  AND f.account_id IN (SELECT id FROM v)),"
                  " reb AS (SELECT st.lvl, b.account_id FROM st JOIN statuses b"
                  "  ON b.tenant_id = $1 AND b.reblog_of_id = st.id AND b.deleted_at IS NULL"
                  "  AND b.account_id IN (SELECT id FROM v)),"
                  " mut AS (SELECT st.lvl, cm.account_id FROM st JOIN conversation_mutes cm"
                  "  ON cm.tenant_id = $1 AND cm.conversation_id = st.conv"
                  "  AND cm.account_id IN (SELECT id FROM v)),"
                  " bm AS (SELECT st.lvl, k.account_id FROM st JOIN bookmarks k"
                  "  ON k.tenant_id = $1 AND k.status_id = st.id"
                  "  AND k.account_id IN (SELECT id FROM v)),"
                  " fol AS (SELECT fo.target_account_id AS target, fo.account_id FROM follows fo"
                  "  WHERE fo.tenant_id = $1"
                  "  AND fo.target_account_id IN ($5::bigint, $6::bigint, $8::bigint)"
                  "  AND fo.account_id IN (SELECT id FROM v))"
                  " SELECT" SR_FLAGS_LEVELS "," SR_FLAGS_FOLLOWS "," SR_FLAGS_VOTES},
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

/* Who may quote a status without asking, as its anonymous render's
 * quote_approval says (a private or direct one: nobody). */
enum { QP_NOBODY, QP_PUBLIC, QP_FOLLOWERS, QP_OTHER };

/* The viewer flags one statement reads for a reblog's listeners, per
 * level: what the REST render writes, and who follows the level's author
 * (for quote_approval). */
enum { RF_FAV, RF_REB, RF_MUTE, RF_BM, RF_FOLLOWS, RF_N };

/* A place in the render where a viewer's members go: its flags and
 * "filtered", quote_approval's current_user, a poll's voted and
 * own_votes. */
enum { CUT_FLAGS, CUT_CURRENT, CUT_POLL };
/* A status, the original it reblogs, the status the original quotes. */
#define LEVELS 3
#define MAX_CUTS (2 * LEVELS + 1)

/*
 * A status rendered for nobody in particular, cut into pieces around the
 * places a viewer changes: before ,"filtered": (where the viewer's flags
 * go, then its FilterResults) and quote_approval's current_user, once for
 * a status and twice for a reblog (the wrapper's and its original's, in
 * text order: the wrapper's flags, the original's flags, the original's
 * current_user, the wrapper's). Each piece is kept as it is (SSE) and
 * escaped as a JSON string's content (a WebSocket message's "payload"),
 * so a listener costs a few copies and no escaping of the whole status.
 * Immutable once built. Level 0 is the status, level 1 a reblog's
 * original.
 */
struct eu_stream_shared {
    int64_t author;
    char *domain; /* the author's, NULL: local */
    /* A reblog's original's author and its domain (0: not a reblog). */
    int64_t orig_author;
    char *orig_domain;
    /* The author of the status a quote shows and its domain (0: none). */
    int64_t quoted_author;
    char *quoted_domain;
    bool serves; /* false: every listener is rendered for alone */
    /* Whether a list stream may have it spliced: public or unlisted (the
     * list timeline's visibility rule for anyone), and no reply but to
     * its author (the list's replies_policy needs statements). */
    bool list_ok;
    json_t *entity;
    json_t *shown; /* what filters match: the entity, or a reblog's original */
    int policy[LEVELS];
    int ncuts;
    unsigned char cut_kind[MAX_CUTS], cut_level[MAX_CUTS];
    char *raw[MAX_CUTS + 1], *esc[MAX_CUTS + 1];
    size_t raw_len[MAX_CUTS + 1], esc_len[MAX_CUTS + 1];
    /* A reblog's: the listeners whose flags were read (sorted), and of
     * them who has each flag at each level (sorted). A listener not among
     * them is rendered for alone. */
    bool has_flags;
    int64_t *viewers;
    size_t nviewers;
    int64_t *flags[LEVELS][RF_N];
    size_t nflags[LEVELS][RF_N];
    /* The listeners' votes in its poll: their choices (a JSON array) by
     * account id; NULL without flags. */
    json_t *votes;
};

/* What shunning and filters need of one viewer, held by its stream. */
struct eu_stream_vstate {
    int64_t *blocks, *blocked_by, *mutes, *mute_ends; /* sorted; mutes with their ends */
    size_t nblocks, nblocked_by, nmutes;
    char **domains;
    size_t ndomains;
    struct eu_filter_rules *filters; /* NULL: none */
    int64_t stale_at;                /* a filter expires then (epoch seconds; 0: never) */
    /* The viewer's lists when loaded (sorted): a list stream's events are
     * spliced only for the list's owner, and a list made since is
     * rendered by the list timeline, which knows. */
    int64_t *lists;
    size_t nlists;
};

static int64_t *parse_ids(const char *text, size_t *n, bool sort);

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

/* The occurrences of needle in hay (hay_len bytes), their places in at[]
 * (max of them); counts past max. A needle holding a quote occurs only
 * as JSON structure: in a string every quote is escaped. */
static int
find_all(const char *hay, size_t hay_len, const char *needle, const char **at, int max)
{
    size_t n = strlen(needle);
    int found = 0;
    for (const char *p = hay; p + n <= hay + hay_len; p++) {
        p = memchr(p, needle[0], (size_t)(hay + hay_len - p));
        if (!p || p + n > hay + hay_len)
            break;
        if (memcmp(p, needle, n) == 0) {
            if (found < max)
                at[found] = p;
            found++;
        }
    }
    return found;
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

static int
quote_policy(json_t *status)
{
    json_t *automatic = json_object_get(json_object_get(status, "quote_approval"), "automatic");
    if (!json_is_array(automatic) || json_array_size(automatic) > 1)
        return QP_OTHER;
    if (json_array_size(automatic) == 0)
        return QP_NOBODY;
    const char *who = json_string_value(json_array_get(automatic, 0));
    return !who                            ? QP_OTHER
           : strcmp(who, "public") == 0    ? QP_PUBLIC
           : strcmp(who, "followers") == 0 ? QP_FOLLOWERS
                                           : QP_OTHER;
}

static bool
public_or_unlisted(json_t *st)
{
    const char *vis = json_string_value(json_object_get(st, "visibility"));
    return vis && (strcmp(vis, "public") == 0 || strcmp(vis, "unlisted") == 0);
}

/* The status st's quote shows (an accepted quote's), or NULL. */
static json_t *
quoted_of(json_t *st)
{
    json_t *q = json_object_get(json_object_get(st, "quote"), "quoted_status");
    return json_is_object(q) ? q : NULL;
}

/* Whether a status of the render has no member that differs by viewer
 * beyond the flags, quote_approval and a poll's votes (those three read
 * for its listeners when read): not a reply (a muted conversation)
 * unless the flags were read, no poll unless they were, and a quote
 * only with them and of a status anyone may see (the quoted status's own
 * flags are read as a reblog's original's are). A quote that shows no status (pending, refused,
 * gone) is the same for everyone. A reblog's two also shown to anyone: the publisher chose the
 * listeners by the reblog's visibility, and the original's rule for one
 * viewer (a self-boost of a followers-only status) is the REST render's. */
static bool
plain_status(json_t *st, bool flags, bool in_reblog)
{
    json_t *quoted = quoted_of(st);
    return (flags || json_is_null(json_object_get(st, "in_reply_to_id"))) &&
           (flags || json_is_null(json_object_get(st, "poll"))) &&
           (!quoted || (flags && public_or_unlisted(quoted))) &&
           (!in_reblog || public_or_unlisted(st));
}

/* The closing brace of the JSON object that opens at p (its '{'), or
 * NULL when end comes first. */
static const char *
object_end(const char *p, const char *end)
{
    int depth = 0;
    bool in_string = false;
    for (; p < end; p++) {
        if (in_string) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            return *p == '}' ? p : NULL;
        }
    }
    return NULL;
}

/* Whether the anonymous render (its text, len bytes) can serve every
 * viewer but its authors with the pieces cut; cuts them. A reblog, a
 * quote or a poll only with its listeners' flags (and votes) read. Level
 * 0 is the status, 1 a reblog's original or the status a quote shows, 2
 * the status a reblog's original quotes. */
static bool
shared_cut(struct eu_stream_shared *sh, const char *text, size_t len)
{
    json_t *o = sh->entity;
    json_t *orig = json_object_get(o, "reblog");
    bool reblog = json_is_object(orig);
    if (reblog ? !sh->has_flags || !plain_status(o, false, true) || !plain_status(orig, true, true)
               : !json_is_null(orig) || !plain_status(o, sh->has_flags, false))
        return false;
    json_t *quoted = quoted_of(reblog ? orig : o);
    if (quoted && !sh->quoted_author)
        return false;
    if (!quoted) {
        /* Shows nothing (gone since, say): nothing to check it for. */
        sh->quoted_author = 0;
        free(sh->quoted_domain);
        sh->quoted_domain = NULL;
    }
    sh->shown = reblog ? orig : o;
    json_t *to = json_object_get(o, "in_reply_to_account_id");
    sh->list_ok =
        public_or_unlisted(o) &&
        (json_is_null(to) || json_equal(to, json_object_get(json_object_get(o, "account"), "id")));
    json_t *level[LEVELS] = {o, reblog ? orig : quoted, reblog ? quoted : NULL};
    int levels = 1 + (level[1] != NULL) + (level[2] != NULL);
    for (int l = 0; l < LEVELS; l++) {
        sh->policy[l] = l < levels ? quote_policy(level[l]) : QP_NOBODY;
        /* Followers: whom the viewer follows, read with the flags. */
        if (sh->policy[l] == QP_OTHER || (!sh->has_flags && sh->policy[l] == QP_FOLLOWERS))
            return false;
    }
    static const char filtered[] = ",\"filtered\":[]", current[] = "\"current_user\":\"unknown\"";
    const char *f[LEVELS + 1], *c[LEVELS + 1];
    if (find_all(text, len, filtered, f, LEVELS + 1) != levels ||
        find_all(text, len, current, c, LEVELS + 1) != levels)
        return false;
    /* In text order: a status's flags, then what it nests (a reblog's
     * original, a quote's status), then its quote_approval; so the flags
     * of each level in turn, then the quote_approvals the other way. */
    const char *at[MAX_CUTS];
    sh->ncuts = 2 * levels;
    for (int l = 0; l < levels; l++) {
        if ((l && f[l] < f[l - 1]) || (l && c[l] < c[l - 1]) || c[0] < f[levels - 1])
            return false;
        at[l] = f[l];
        sh->cut_kind[l] = CUT_FLAGS;
        sh->cut_level[l] = (unsigned char)l;
        at[levels + l] = c[l];
        sh->cut_kind[levels + l] = CUT_CURRENT;
        sh->cut_level[levels + l] = (unsigned char)(levels - 1 - l);
    }
    /* The viewer's voted and own_votes go last in a poll, as the REST
     * render writes them (eunha_poll_json()): before its closing brace.
     * One poll at most (the votes are read by account), in the status, a
     * reblog's original or a quote's status. */
    const char *p[2];
    int polls = find_all(text, len, "\"poll\":{", p, 2);
    if (polls > 1)
        return false;
    if (polls == 1) {
        const char *end = object_end(p[0] + strlen("\"poll\":"), text + len);
        if (!end)
            return false;
        int i = sh->ncuts++;
        for (; i > 0 && at[i - 1] > end; i--) {
            at[i] = at[i - 1];
            sh->cut_kind[i] = sh->cut_kind[i - 1];
            sh->cut_level[i] = sh->cut_level[i - 1];
        }
        at[i] = end;
        sh->cut_kind[i] = CUT_POLL;
        sh->cut_level[i] = 0; /* unused: the votes are by account */
    }
    const char *from = text;
    for (int i = 0; i < sh->ncuts; i++) {
        /* A flags cut replaces the whole ,"filtered":[]; a current_user one
         * its value only; a poll's adds before the brace. */
        int kind = sh->cut_kind[i];
        const char *start = kind == CUT_CURRENT ? at[i] + strlen("\"current_user\":") : at[i];
        shared_set_piece(sh, i, from, (size_t)(start - from));
        from = kind == CUT_FLAGS     ? at[i] + sizeof(filtered) - 1
               : kind == CUT_CURRENT ? at[i] + sizeof(current) - 1
                                     : at[i];
    }
    shared_set_piece(sh, sh->ncuts, from, (size_t)(text + len - from));
    return true;
}

void
eu_stream_shared_free(struct eu_stream_shared *sh)
{
    if (!sh)
        return;
    json_decref(sh->entity);
    free(sh->domain);
    free(sh->orig_domain);
    free(sh->quoted_domain);
    for (int i = 0; i <= MAX_CUTS; i++) {
        free(sh->raw[i]);
        free(sh->esc[i]);
    }
    json_decref(sh->votes);
    free(sh->viewers);
    for (int l = 0; l < LEVELS; l++)
        for (int k = 0; k < RF_N; k++)
            free(sh->flags[l][k]);
    free(sh);
}

struct shared_job {
    eu_stream_shared_cb cb;
    void *arg;
    char id[24];
    bool gone; /* the status is deleted, or its author suspended */
    const struct eu_stream_audience *aud;
    struct eu_stream_shared *sh;
    json_t *array; /* the render, while a reblog's flags are read */
};

static void
on_shared_sink(int status, const char *body, size_t len, void *arg)
{
    struct shared_job *j = arg;
    eu_stream_shared_cb cb = j->cb;
    void *cb_arg = j->arg;
    struct eu_stream_shared *sh = j->sh;
    bool gone = j->gone;
    json_decref(j->array); /* only when the flags' statement failed */
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
on_flags(struct eu_req *req, PGresult *res, void *arg)
{
    struct shared_job *j = arg;
    struct eu_stream_shared *sh = j->sh;
    /* Per level its four flags, then per level its author's followers,
     * then the votes. */
    if (PQntuples(res) == 1 && PQnfields(res) == LEVELS * RF_N + 1) {
        for (int l = 0; l < LEVELS; l++)
            for (int k = 0; k < RF_FOLLOWS; k++)
                sh->flags[l][k] =
                    parse_ids(PQgetvalue(res, 0, l * RF_FOLLOWS + k), &sh->nflags[l][k], true);
        for (int l = 0; l < LEVELS; l++)
            sh->flags[l][RF_FOLLOWS] = parse_ids(PQgetvalue(res, 0, LEVELS * RF_FOLLOWS + l),
                                                 &sh->nflags[l][RF_FOLLOWS], true);
        sh->votes = json_loads(PQgetvalue(res, 0, LEVELS * RF_N), 0, NULL);
        sh->has_flags = json_is_object(sh->votes);
    }
    json_t *array = j->array;
    j->array = NULL;
    eu_req_reply_json(req, 200, array);
}

static int
by_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A status whose listeners' flags may differ (a reblog: its original's;
 * a quote: its status's; a reply: a muted conversation; a poll: their
 * votes; a followers-only quote policy: whom they follow) has them read
 * for all its listeners in one statement. Whom it is for is what the hub knows by now (every
 * listener the event reached at once has it queued); a listener that comes later is rendered for
 * alone. */
static void
on_shared_entity(struct eu_req *req, json_t *array, void *arg)
{
    struct shared_job *j = arg;
    struct eu_stream_shared *sh = j->sh;
    json_t *st = json_array_get(array, 0);
    json_t *orig = json_object_get(st, "reblog");
    const char *orig_id = json_string_value(json_object_get(orig, "id"));
    /* Level 1 a reblog's original or else the status a quote shows;
     * level 2 the status a reblog's original quotes (shared_cut()). */
    json_t *quoted = quoted_of(orig_id ? orig : st);
    json_t *level[LEVELS] = {st, orig_id ? orig : quoted, orig_id ? quoted : NULL};
    int64_t author[LEVELS] = {sh->author, orig_id ? sh->orig_author : sh->quoted_author,
                              sh->quoted_author};
    bool reply = !json_is_null(json_object_get(st, "in_reply_to_id"));
    bool poll = false;
    for (int l = 0; l < LEVELS; l++)
        poll = poll || (level[l] && !json_is_null(json_object_get(level[l], "poll")));
    bool needs = level[1] || reply || poll || quote_policy(st) == QP_FOLLOWERS;
    if (!sh->serves || !needs || !json_is_object(st) || (sh->orig_author != 0) != !!orig_id ||
        (quoted && !sh->quoted_author) || !j->aud || !j->aud->n) {
        eu_req_reply_json(req, 200, array);
        return;
    }
    sh->nviewers = j->aud->n;
    sh->viewers = eu_xmalloc(sh->nviewers * sizeof(*sh->viewers));
    memcpy(sh->viewers, j->aud->ids, sh->nviewers * sizeof(*sh->viewers));
    qsort(sh->viewers, sh->nviewers, sizeof(*sh->viewers), by_id);
    char *list = eu_arena_alloc(req->arena, sh->nviewers * 21 + 3), *p = list;
    *p++ = '{';
    for (size_t i = 0; i < sh->nviewers; i++) {
        if (i)
            *p++ = ',';
        p += eu_id_text(sh->viewers[i], p);
    }
    *p++ = '}';
    *p = '\0';
    /* Each level's id (the first is j->id) and its author where whom the
     * listener follows decides its quote_approval; "0" for none. */
    const char *ids[LEVELS], *follow[LEVELS];
    for (int l = 0; l < LEVELS; l++) {
        const char *id = level[l] ? json_string_value(json_object_get(level[l], "id")) : NULL;
        ids[l] = id ? eu_arena_strdup(req->arena, id) : "0";
        follow[l] = level[l] && quote_policy(level[l]) == QP_FOLLOWERS
                        ? eu_arena_sprintf(req->arena, "%lld", (long long)author[l])
                        : "0";
    }
    j->array = array;
    const char *params[] = {list, j->id, ids[1], follow[0], follow[1], ids[2], follow[2]};
    eu_req_stmt(req, &eu_stream_render_sql[SR_FLAGS], 7, params, on_flags, j);
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
    if (!PQgetisnull(res, 0, 4)) {
        sh->orig_author = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
        sh->orig_domain = PQgetisnull(res, 0, 5) ? NULL : eu_xstrdup(PQgetvalue(res, 0, 5));
        sh->serves = sh->serves && PQgetvalue(res, 0, 6)[0] != 't';
    }
    if (!PQgetisnull(res, 0, 7)) {
        sh->quoted_author = strtoll(PQgetvalue(res, 0, 7), NULL, 10);
        sh->quoted_domain = PQgetisnull(res, 0, 8) ? NULL : eu_xstrdup(PQgetvalue(res, 0, 8));
        /* Nobody sees a suspended author's status: the REST render says
         * so per viewer ("unauthorized"), and the shared one would not. */
        sh->serves = sh->serves && PQgetvalue(res, 0, 9)[0] != 't';
    }
    j->sh = sh;
    const char *ids[] = {j->id};
    /* Who gets it was the publisher's choice and is each listener's check
     * below: the render is nobody's. */
    eu_statuses_render_opts(req, ids, 1, EU_RENDER_KEEP_HIDDEN, on_shared_entity, j);
}

void
eu_stream_shared_render(struct eu_app *app, struct eu_tenant *t, const char *id,
                        const struct eu_stream_audience *aud, eu_stream_shared_cb cb, void *arg)
{
    struct shared_job *j = eu_xcalloc(1, sizeof(*j));
    j->cb = cb;
    j->arg = arg;
    j->aud = aud;
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
 * who is not silenced) of author, from memory. */
static bool
shunned(const struct eu_stream_vstate *vs, int64_t author, const char *domain)
{
    size_t at;
    if (has_id(vs->blocks, vs->nblocks, author, NULL) ||
        has_id(vs->blocked_by, vs->nblocked_by, author, NULL))
        return true;
    if (has_id(vs->mutes, vs->nmutes, author, &at) &&
        (vs->mute_ends[at] == 0 || vs->mute_ends[at] > (int64_t)time(NULL)))
        return true;
    if (domain)
        for (size_t i = 0; i < vs->ndomains; i++)
            if (strcmp(vs->domains[i], domain) == 0)
                return true;
    return false;
}

/* Appends ,"name":true or ,"name":false. */
static void
flag_append(char **buf, size_t *len, size_t *cap, const char *name, bool v)
{
    char m[40];
    int n = snprintf(m, sizeof(m), ",\"%s\":%s", name, v ? "true" : "false");
    raw_append(buf, len, cap, m, (size_t)n);
}

/* The members of the cut i for account_id (0: signed out) with filter
 * results (a JSON text) for the status filters match, as JSON. */
static void
cut_members(const struct eu_stream_shared *sh, int i, int64_t account_id, const char *results,
            char **buf, size_t *len, size_t *cap)
{
    int l = sh->cut_level[i];
    bool reblog = sh->orig_author != 0;
    if (sh->cut_kind[i] == CUT_POLL) {
        /* What a signed-in non-author sees; the signed-out see neither. */
        if (!account_id)
            return;
        char key[24];
        snprintf(key, sizeof(key), "%lld", (long long)account_id);
        json_t *choices = json_object_get(sh->votes, key);
        char *own = choices ? json_dumps(choices, JSON_COMPACT) : NULL;
        raw_append(buf, len, cap, ",\"voted\":", 9);
        raw_append(buf, len, cap, own ? "true" : "false", own ? 4 : 5);
        raw_append(buf, len, cap, ",\"own_votes\":", 13);
        raw_append(buf, len, cap, own ? own : "[]", own ? strlen(own) : 2);
        free(own);
        return;
    }
    if (sh->cut_kind[i] == CUT_CURRENT) {
        /* What a signed-in non-author sees (quote_approval_json()). */
        const char *cu =
            !account_id                  ? "unknown"
            : sh->policy[l] == QP_PUBLIC ? "automatic"
            : sh->policy[l] == QP_FOLLOWERS &&
                    has_id(sh->flags[l][RF_FOLLOWS], sh->nflags[l][RF_FOLLOWS], account_id, NULL)
                ? "automatic"
                : "denied";
        raw_append(buf, len, cap, "\"", 1);
        raw_append(buf, len, cap, cu, strlen(cu));
        raw_append(buf, len, cap, "\"", 1);
        return;
    }
    if (account_id) {
        /* In the order the REST render writes them; pinned is its author's
         * only, and never a reblog's. A status nobody has seen yet has
         * none set; a reblog's are read. */
        static const char *const names[] = {"favourited", "reblogged", "muted", "bookmarked"};
        for (int k = 0; k < RF_FOLLOWS; k++)
            flag_append(buf, len, cap, names[k],
                        has_id(sh->flags[l][k], sh->nflags[l][k], account_id, NULL));
    }
    raw_append(buf, len, cap, ",\"filtered\":", 12);
    /* A reblog's FilterResults are its original's (on_filters_loaded()). */
    const char *f = l == (int)reblog && results ? results : "[]";
    raw_append(buf, len, cap, f, strlen(f));
}

int
eu_stream_shared_payload(const struct eu_stream_shared *sh, struct eu_stream_vstate *vs,
                         int64_t account_id, const char *stream, const char *param, bool escaped,
                         char **out, size_t *len)
{
    bool list = strcmp(stream, "list") == 0;
    if (!sh->serves || (list && !account_id) ||
        (account_id && (!vs || account_id == sh->author || account_id == sh->orig_author ||
                        account_id == sh->quoted_author)))
        return -1;
    /* A listener whose flags were not read (it came later). */
    if (sh->has_flags && account_id && !has_id(sh->viewers, sh->nviewers, account_id, NULL))
        return -1;
    char *results = NULL;
    if (account_id) {
        /* The filters held are no longer the active ones. */
        if (vs->stale_at && (int64_t)time(NULL) >= vs->stale_at)
            return -2;
        /* Whether a quote's status is shown to a viewer who shuns its
         * author (or is blocked by it) is the REST render's to say. */
        if (sh->quoted_author && shunned(vs, sh->quoted_author, sh->quoted_domain))
            return -1;
        bool shuns = shunned(vs, sh->author, sh->domain) ||
                     (sh->orig_author && shunned(vs, sh->orig_author, sh->orig_domain));
        if (list) {
            /* Someone else's list holds nothing for this viewer, and what
             * its own holds of a shunned author is the list timeline's
             * own rule (a status of a muted booster): both rendered by it. */
            if (!sh->list_ok || shuns || !param ||
                !has_id(vs->lists, vs->nlists, strtoll(param, NULL, 10), NULL))
                return -1;
        } else if (shuns) {
            return 0;
        }
        /* The contexts of the REST timelines these streams mirror: home
         * covers the lists, as Mastodon's filter contexts say. */
        const char *ctx = strcmp(stream, "user") == 0 || list ? "home" : "public";
        json_t *matched = NULL;
        bool hide = eu_filters_rules_match(vs->filters, sh->shown, ctx, &matched);
        if (!hide && json_array_size(matched))
            results = json_dumps(matched, JSON_COMPACT);
        json_decref(matched);
        if (hide)
            return 0;
    }
    char *const *piece = escaped ? sh->esc : sh->raw;
    const size_t *piece_len = escaped ? sh->esc_len : sh->raw_len;
    size_t n = 0, cap = 64 + (results ? strlen(results) * 6 : 0);
    for (int i = 0; i <= sh->ncuts; i++)
        cap += piece_len[i] + 120;
    char *buf = eu_xmalloc(cap);
    char *mid = NULL;
    size_t mid_cap = 0;
    for (int i = 0; i < sh->ncuts; i++) {
        raw_append(&buf, &n, &cap, piece[i], piece_len[i]);
        size_t mid_len = 0;
        cut_members(sh, i, account_id, results, &mid, &mid_len, &mid_cap);
        if (escaped)
            esc_append(&buf, &n, &cap, mid, mid_len);
        else
            raw_append(&buf, &n, &cap, mid, mid_len);
    }
    raw_append(&buf, &n, &cap, piece[sh->ncuts], piece_len[sh->ncuts]);
    free(mid);
    free(results);
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
    free(vs->lists);
    for (size_t i = 0; i < vs->ndomains; i++)
        free(vs->domains[i]);
    free(vs->domains);
    eu_filters_rules_free(vs->filters);
    free(vs);
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
    vs->lists = parse_ids(PQgetvalue(res, 0, 6), &vs->nlists, true);
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
