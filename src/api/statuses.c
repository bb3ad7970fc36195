/*
 * /api/v1/statuses: posting (with Idempotency-Key), reading, deleting and
 * editing statuses. Each write is one SQL statement (data-modifying CTEs)
 * so it is atomic without a transaction held open across callbacks;
 * notifications and feed fan-out follow it, fire and forget, as Mastodon
 * does. The viewer's interactions with a status live in statuses_actions.c,
 * its thread, source and edit history in statuses_thread.c. The route
 * table at the end carries all of them, and the timelines, whose handlers
 * live in timelines.c.
 */
#include "eunha/api.h"

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/cards.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mediaclean.h"
#include "eunha/mem.h"
#include "eunha/notify.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "eunha/text.h"
#include "eunha/utf8.h"
#include "media_internal.h"
#include "statuses_internal.h"

#define MAX_CHARS 500
#define IDEMPOTENCY_TTL "3600"
/* Mastodon's Status::MEDIA_ATTACHMENTS_LIMIT and its messages. */
#define MAX_MEDIA 4
#define TOO_MANY_MEDIA "Cannot attach more than 4 files"
#define MEDIA_NOT_FOUND "Media %s not found or already attached to another post"
#define MEDIA_NOT_READY                                                                            \
    "Cannot attach files that have not finished processing. Try again in a moment!"

enum {
    STATUSES_PREPARE,
    STATUSES_PREPARE_PLAIN,
    STATUSES_EDIT,
    STATUSES_DELETE,
    STATUSES_MEDIA_CHECK,
};

const struct eu_sql eu_statuses_sql[] = {
    /*
     * $2 local mention usernames, $3 parent id, $4 author, $5 edited status
     * id, $6 remote mentions ("user@domain", lower-cased). The mentioned
     * accounts come as [id, username, domain, profile URL]; each remote one
     * is one probe of accounts_username_domain.
     */
    [STATUSES_PREPARE] =
        {"statuses.prepare",
         "SELECT (SELECT coalesce(json_agg(json_build_array(m.id::text, m.username, m.domain,"
         "  m.url)), '[]')::text FROM ("
         "  SELECT a.id, a.username, a.domain, NULL AS url FROM accounts a WHERE a.tenant_id = $1"
         "  AND a.domain IS NULL AND a.suspended_at IS NULL AND lower(a.username) = ANY($2::text[])"
         "  UNION ALL"
         "  SELECT a.id, a.username, a.domain, coalesce(a.url, a.uri)"
         "  FROM unnest($6::text[]) x JOIN accounts a ON a.tenant_id = $1"
         "  AND lower(a.username) = split_part(x, '@', 1)"
         "  AND coalesce(lower(a.domain), '') = split_part(x, '@', 2)"
         "  WHERE a.domain IS NOT NULL AND a.suspended_at IS NULL) m),"
         " (SELECT json_build_array(s.account_id::text,"
         " coalesce(s.conversation_id, s.id)::text)::text"
         "  FROM statuses s CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id,"
         "  s.visibility, s.deleted_at, $4::bigint) vis"
         "  WHERE s.tenant_id = $1 AND s.id = $3::bigint AND s.reblog_of_id IS NULL AND vis.ok),"
         " (SELECT u.default_privacy FROM users u WHERE u.tenant_id = $1"
         " AND u.account_id = $4::bigint),"
         " (SELECT u.default_sensitive FROM users u WHERE u.tenant_id = $1"
         "  AND u.account_id = $4::bigint),"
         " EXISTS (SELECT 1 FROM statuses s WHERE s.tenant_id = $1 AND s.id = $5::bigint"
         "  AND s.account_id = $4::bigint AND s.deleted_at IS NULL AND s.reblog_of_id IS NULL)"},
    /*
     * What statuses.prepare answers for a new post that mentions and replies
     * to nobody, $2 its author. With an empty list and NULL ids to fold away,
     * statuses.prepare's custom plans always looked cheaper than its generic
     * one, so PostgreSQL planned it again for every post (0.3 to 0.6 ms, more
     * than running it); this one has nothing to fold and keeps one plan.
     */
    [STATUSES_PREPARE_PLAIN] =
        {"statuses.prepare_plain",
         "SELECT '[]', NULL::text, u.default_privacy, u.default_sensitive, false"
         " FROM (SELECT 1) one LEFT JOIN users u ON u.tenant_id = $1 AND u.account_id = "
         "$2::bigint"},
    /* $2 id, $3 author, $4 text, $5 html, $6 spoiler, $7 sensitive, $8 language,
     * $9 mention ids, $10 tags, $11 media ids in order, $12 media_attributes
     * as a JSON object {id: {description?, fx?, fy?}} for some of $11, $13
     * the quote policy (Mastodon 4.5 takes quote_approval_policy on edit;
     * a private or direct status stays nobody's); NULL spoiler, sensitive,
     * language or policy keep the current value, as Mastodon does. The
     * quote itself is not the edit's to change: Mastodon 4.5's update
     * takes no quoted_status_id. Answers, besides the mentions and the
     * rebloggers, the local authors of accepted quotes of it with their
     * quoting statuses (quoters, [[account, status], ...]) for
     * quoted_update. The first edit also records the original. Each version keeps
     * its media and the descriptions it showed (the new ones for this
     * edit); media taken off stay on the status at position -1 so the
     * history still shows them. */
    [STATUSES_EDIT] =
        {"statuses.edit",
         "WITH cur AS (SELECT * FROM statuses WHERE tenant_id = $1 AND id = $2::bigint"
         "  AND account_id = $3::bigint AND deleted_at IS NULL FOR UPDATE),"
         " cm AS (SELECT coalesce(array_agg(m.id ORDER BY m.position, m.id), '{}') AS ids,"
         "  coalesce(array_agg(coalesce(m.description, '') ORDER BY m.position, m.id), '{}')"
         "  AS descs FROM media_attachments m WHERE m.tenant_id = $1 AND m.status_id = $2::bigint"
         "  AND m.position >= 0),"
         " ma AS (SELECT a.key::bigint AS id, a.value ? 'description' AS set_desc,"
         "  a.value ->> 'description' AS description, (a.value ->> 'fx')::real AS fx,"
         "  (a.value ->> 'fy')::real AS fy FROM jsonb_each($12::jsonb) a),"
         " nm AS (SELECT x.id, x.i, CASE WHEN ma.set_desc THEN ma.description"
         "  ELSE m.description END AS description, coalesce(ma.set_desc, false) AS set_desc,"
         "  ma.fx, ma.fy FROM unnest($11::bigint[]) WITH ORDINALITY"
         "  x(id, i) JOIN media_attachments m ON m.tenant_id = $1 AND m.id = x.id"
         "  JOIN cur ON m.account_id = cur.account_id AND (m.status_id IS NULL"
         "  OR m.status_id = cur.id) AND m.scheduled_status_id IS NULL"
         "  LEFT JOIN ma ON ma.id = x.id),"
         " orig AS (INSERT INTO status_edits (tenant_id, status_id, account_id, text, content,"
         "  spoiler_text, sensitive, created_at, media_ids, media_descriptions)"
         "  SELECT $1, id, account_id, text, content,"
         "  spoiler_text, sensitive, created_at, cm.ids, cm.descs FROM cur, cm WHERE NOT EXISTS"
         "  (SELECT 1 FROM status_edits e WHERE e.tenant_id = $1 AND e.status_id = cur.id)),"
         " ed AS (INSERT INTO status_edits (tenant_id, status_id, account_id, text, content,"
         "  spoiler_text, sensitive, media_ids, media_descriptions)"
         "  SELECT $1, id, account_id, $4, $5, coalesce($6, spoiler_text),"
         "  coalesce($7::bool, sensitive),"
         "  coalesce((SELECT array_agg(nm.id ORDER BY nm.i) FROM nm), '{}'),"
         "  coalesce((SELECT array_agg(coalesce(nm.description, '') ORDER BY nm.i) FROM nm), '{}')"
         "  FROM cur),"
         " up AS (UPDATE statuses s SET text = $4, content = $5,"
         "  spoiler_text = coalesce($6, s.spoiler_text),"
         "  sensitive = coalesce($7::bool, s.sensitive), language = coalesce($8, s.language),"
         "  quote_policy = CASE WHEN $13::smallint IS NULL THEN s.quote_policy"
         "  WHEN s.visibility >= 2 THEN 2 ELSE $13::smallint END,"
         "  edited_at = now(),"
         "  updated_at = now() FROM cur WHERE s.tenant_id = $1 AND s.id = cur.id RETURNING s.id),"
         " m AS (INSERT INTO mentions (tenant_id, status_id, account_id) SELECT $1, up.id, u.id"
         "  FROM up, unnest($9::bigint[]) u(id) ON CONFLICT DO NOTHING RETURNING account_id),"
         " det AS (UPDATE media_attachments m SET position = -1, updated_at = now() FROM up"
         "  WHERE m.tenant_id = $1 AND m.status_id = up.id AND m.position >= 0"
         "  AND m.id NOT IN (SELECT id FROM nm)),"
         " att AS (UPDATE media_attachments m SET status_id = up.id, position = nm.i - 1,"
         "  description = CASE WHEN nm.set_desc THEN nm.description ELSE m.description END,"
         "  focus_x = coalesce(nm.fx, m.focus_x), focus_y = coalesce(nm.fy, m.focus_y),"
         "  updated_at = now() FROM up, nm WHERE m.tenant_id = $1 AND m.id = nm.id),"
         " dt AS (DELETE FROM statuses_tags WHERE tenant_id = $1"
         " AND status_id IN (SELECT id FROM up)"
         "  AND tag_id NOT IN (SELECT id FROM tags WHERE tenant_id = $1"
         "  AND lower(name) IN (SELECT lower(n) FROM unnest($10::text[]) n))),"
         " nt AS (INSERT INTO tags (tenant_id, name) SELECT DISTINCT ON (lower(n)) $1, n"
         "  FROM unnest($10::text[]) n"
         " ON CONFLICT (tenant_id, lower(name)) DO NOTHING RETURNING id),"
         " st AS (INSERT INTO statuses_tags (tenant_id, status_id, tag_id) SELECT $1, up.id, t.id"
         "  FROM up, (SELECT id FROM nt UNION SELECT id FROM tags WHERE tenant_id = $1"
         "  AND lower(name) IN (SELECT lower(n) FROM unnest($10::text[]) n)) t"
         "  ON CONFLICT DO NOTHING)"
         " SELECT up.id, (SELECT coalesce(array_agg(account_id), '{}') FROM m)::text,"
         "  (SELECT coalesce(array_agg(DISTINCT r.account_id), '{}') FROM statuses r"
         "   WHERE r.tenant_id = $1 AND r.reblog_of_id = up.id AND r.deleted_at IS NULL)::text,"
         "  (SELECT coalesce(json_agg(json_build_array(q.account_id::text, q.status_id::text)),"
         "   '[]') FROM quotes q JOIN accounts qa ON qa.tenant_id = $1 AND qa.id = q.account_id"
         "   AND qa.domain IS NULL JOIN statuses qs ON qs.tenant_id = $1 AND qs.id = q.status_id"
         "   AND qs.deleted_at IS NULL WHERE q.tenant_id = $1 AND q.quoted_status_id = up.id"
         "   AND q.state = 'accepted')::text AS quoters"
         "  FROM up"},
    /* Reblogs of a deleted status go with it, as in Mastodon. Its media rows
     * go now, their bytes off the tenant's usage in the same statement, and
     * their files in a media_files_delete job (src/media/cleanup.c): md
     * and mj, EU_MEDIA_DELETE_CTES of eunha/mediaclean.h written out.
     * Returns the statuses deleted and the jobs queued. */
    /* The authors of the status and of its boosts, each a counters
     * trigger will lock, are locked first in id order: in trigger order
     * (the author, then each booster) two deletes of statuses the other's
     * author boosted could each hold what the other wanted. d reads lk
     * whole, so lk runs before any row changes. */
    [STATUSES_DELETE] =
        {"statuses.delete",
         "WITH lk AS (SELECT a.id FROM accounts a WHERE a.tenant_id = $1 AND a.id IN"
         "  (SELECT x.account_id FROM statuses x WHERE x.tenant_id = $1"
         "   AND (x.id = $2::bigint OR x.reblog_of_id = $2::bigint) AND x.deleted_at IS NULL)"
         "  AND EXISTS (SELECT 1 FROM statuses o WHERE o.tenant_id = $1 AND o.id = $2::bigint"
         "   AND o.account_id = $3::bigint AND o.deleted_at IS NULL)"
         "  ORDER BY a.id FOR NO KEY UPDATE),"
         " d AS (UPDATE statuses SET deleted_at = now() WHERE tenant_id = $1"
         "  AND id = $2::bigint AND account_id = $3::bigint AND deleted_at IS NULL"
         "  AND (SELECT count(*) FROM lk) >= 0 RETURNING id),"
         " r AS (UPDATE statuses SET deleted_at = now() WHERE tenant_id = $1"
         "  AND reblog_of_id IN (SELECT id FROM d) AND deleted_at IS NULL),"
         " md AS (DELETE FROM media_attachments WHERE tenant_id = $1"
         "  AND status_id IN (SELECT id FROM d) RETURNING file_key, preview_key),"
         " mj AS (INSERT INTO jobs (tenant_id, queue, kind, payload) SELECT $1, 'default',"
         "  'media_files_delete', jsonb_build_object('keys', jsonb_agg(k.key))"
         "  FROM (SELECT unnest(ARRAY[md.file_key, md.preview_key]) FROM md) k(key)"
         "  WHERE k.key IS NOT NULL AND k.key NOT LIKE '%://%' HAVING count(*) > 0"
         "  RETURNING id)"
         " SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM mj)"},
    /*
     * $2 author, $3 media ids, $4 the status being edited or NULL: the ids
     * the author may not attach (not theirs, gone, attached elsewhere or
     * held by a scheduled status), comma-separated in the order given, and
     * whether any of the others failed processing.
     */
    [STATUSES_MEDIA_CHECK] =
        {"statuses.media_check",
         "SELECT string_agg(x.id::text, ', ' ORDER BY x.i) FILTER (WHERE m.id IS NULL),"
         " coalesce(bool_or(m.state = 'failed'), false)"
         " FROM unnest($3::bigint[]) WITH ORDINALITY x(id, i) LEFT JOIN media_attachments m"
         " ON m.tenant_id = $1 AND m.id = x.id AND m.account_id = $2::bigint"
         " AND m.scheduled_status_id IS NULL AND m.remote_url IS NULL"
         " AND (m.status_id IS NULL OR m.status_id = $4::bigint)"},
    {0},
};

/* ---------------------------------------------------------------- helpers */

/* Calls fn for each element of a PostgreSQL bigint[]'s text ("{1,2}"). */
void
eu_statuses_each_array_id(const char *text, void (*fn)(struct eu_req *, int64_t, void *),
                          struct eu_req *req, void *arg)
{
    size_t n;
    int64_t *ids = eu_db_bigint_array(text, &n);
    for (size_t i = 0; i < n; i++)
        fn(req, ids[i], arg);
    free(ids);
}

/* A text[] literal of strings that hold no quote or backslash. Arena-owned. */
static const char *
text_array(struct eu_req *req, char **items, size_t n)
{
    size_t len = 3;
    for (size_t i = 0; i < n; i++)
        len += strlen(items[i]) + 3;
    char *out = eu_arena_alloc(req->arena, len), *o = out;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        o += sprintf(o, "%s\"%s\"", i ? "," : "", items[i]);
    }
    *o++ = '}';
    *o = '\0';
    return out;
}

static void
notify_each(struct eu_req *req, int64_t recipient, void *arg)
{
    const char **what = arg; /* {type, status id} */
    eu_notify(req->app->registry, req->tenant, recipient, req->auth.account_id, what[0],
              strtoll(what[1], NULL, 10));
}

/* The Redis key of an Idempotency-Key; arena-owned, so no key is cut. */
static const char *
idempotency_key(struct eu_req *req, const char *key)
{
    return eu_arena_sprintf(req->arena, "%sidempotency:status:%lld:%s", req->tenant->key_prefix,
                            (long long)req->auth.account_id, key);
}

/* ------------------------------------------------------- text preparation */

/*
 * What posting and editing share: the mentions in the text resolved to
 * local accounts, the parent of a reply, the author's defaults; then the
 * formatted HTML.
 */
struct compose {
    struct eu_req *req;
    const char *text, *spoiler, *language;
    bool spoiler_given;       /* an edit keeps the old content warning otherwise */
    const char *reply_to;     /* in_reply_to_id or NULL */
    const char *edit_id;      /* the status being edited, or NULL */
    int visibility;           /* -1: the author's default */
    int sensitive;            /* -1: the author's default */
    const char *idem;         /* Idempotency-Key or NULL */
    const char *poll;         /* the draft's poll JSON, or NULL */
    const char *scheduled_at; /* UTC ISO time to publish at, or NULL: now */
    const char *sched_params; /* ScheduledStatus.params JSON, with scheduled_at */
    struct eu_text_scan scan;
    const char *html;
    const char *mention_ids;           /* bigint[] literal */
    const char *media_ids;             /* bigint[] literal, in the order given; "{}" for none */
    const char *media_list[MAX_MEDIA]; /* the same ids, one string each */
    size_t n_media;
    const char *media_attrs; /* an edit's media_attributes: JSON text, "{}" for none */
    bool media_checked;
    const char *reply_account, *conversation;
    char status_id[24];
    void (*next)(struct compose *c);
    int quote_policy;      /* EU_QUOTE_POLICY_*, or -1: the default */
    const char *quoted_id; /* quoted_status_id; once checked, the quoted status's own id */
    const char *quoted_account, *quote_state; /* what eu_statuses_quote_check() found */
    bool quoted_local;
    bool resolved; /* unknown remote mentions were looked up once */
    int resolving; /* WebFinger lookups still running */
};

static void prepare_scanned(struct compose *c);

/* At most this many unknown remote accounts are looked up for one status:
 * each costs a WebFinger request and an actor fetch. */
#define MAX_MENTION_LOOKUPS 5

static void
on_mention_resolved(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct compose *c = arg;
    /* An account that cannot be found stays text, as in Mastodon. */
    (void)r;
    (void)err;
    if (--c->resolving > 0)
        return;
    eu_req_enter(c->req);
    prepare_scanned(c);
}

/*
 * Looks up the remote mentions the prepare statement did not find (known,
 * a JSON array of [id, username, domain, url]) through WebFinger, at most
 * MAX_MENTION_LOOKUPS of them, all at once on the loop. Returns true when
 * some are under way: prepare runs again once they all answered.
 */
static bool
resolve_mentions(struct compose *c, json_t *known)
{
    struct eu_req *req = c->req;
    c->resolved = true;
    const char *todo[MAX_MENTION_LOOKUPS];
    int n = 0;
    for (size_t i = 0; i < c->scan.n_remote && n < MAX_MENTION_LOOKUPS; i++) {
        const char *want = c->scan.remote[i];
        bool found = false;
        size_t j;
        json_t *row;
        json_array_foreach(known, j, row)
        {
            const char *d = json_string_value(json_array_get(row, 2));
            const char *u = json_string_value(json_array_get(row, 1));
            size_t ul = u ? strlen(u) : 0;
            if (d && u && strncasecmp(want, u, ul) == 0 && want[ul] == '@' &&
                strcasecmp(want + ul + 1, d) == 0) {
                found = true;
                break;
            }
        }
        if (!found)
            todo[n++] = want;
    }
    if (!n)
        return false;
    /* Counted first: a lookup never calls back from inside the call, but
     * the count must be whole before the first answer. */
    c->resolving = n;
    for (int i = 0; i < n; i++)
        eu_ap_webfinger_lookup(req->app, req->tenant, todo[i], on_mention_resolved, c);
    return true;
}

static void
on_prepared(struct eu_req *req, PGresult *res, void *arg)
{
    struct compose *c = arg;
    if (c->edit_id && PQgetvalue(res, 0, 4)[0] != 't') {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (c->reply_to) {
        json_t *parent = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
        if (!json_is_array(parent)) {
            json_decref(parent);
            eu_req_reply_error(req, 404, "Record not found");
            return;
        }
        c->reply_account =
            eu_arena_strdup(req->arena, json_string_value(json_array_get(parent, 0)));
        c->conversation = eu_arena_strdup(req->arena, json_string_value(json_array_get(parent, 1)));
        json_decref(parent);
    }
    if (c->visibility < 0) {
        int v = PQgetisnull(res, 0, 2) ? 0 : eu_status_visibility_code(PQgetvalue(res, 0, 2));
        c->visibility = v < 0 ? 0 : v;
    }
    if (c->sensitive < 0 && !c->edit_id)
        c->sensitive = !PQgetisnull(res, 0, 3) && PQgetvalue(res, 0, 3)[0] == 't';
    if (*c->spoiler)
        c->sensitive = 1; /* Mastodon: a content warning implies sensitive */

    json_t *accts = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
    if (c->scan.n_remote && !c->resolved && resolve_mentions(c, accts)) {
        json_decref(accts);
        return;
    }
    size_t n = json_array_size(accts);
    struct eu_text_account *ta = eu_arena_alloc(req->arena, (n ? n : 1) * sizeof(*ta));
    char *ids = eu_arena_alloc(req->arena, n * 21 + 3), *o = ids;
    const char *base = eu_req_base_url(req);
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        json_t *pair = json_array_get(accts, i);
        const char *aid = json_string_value(json_array_get(pair, 0));
        ta[i].username = eu_arena_strdup(req->arena, json_string_value(json_array_get(pair, 1)));
        const char *domain = json_string_value(json_array_get(pair, 2));
        const char *url = json_string_value(json_array_get(pair, 3));
        ta[i].domain = domain ? eu_arena_strdup(req->arena, domain) : NULL;
        ta[i].url = domain && url ? eu_arena_strdup(req->arena, url)
                                  : eu_arena_sprintf(req->arena, "%s/@%s", base, ta[i].username);
        o += sprintf(o, "%s%s", i ? "," : "", aid);
    }
    *o++ = '}';
    *o = '\0';
    json_decref(accts);
    c->mention_ids = ids;
    c->html = eu_text_format(req->arena, c->text, req->host, base, ta, n);
    c->next(c);
}

static void insert_status(struct compose *c);

static void
prepare_scanned(struct compose *c)
{
    struct eu_req *req = c->req;
    if (!c->scan.n_mentions && !c->scan.n_remote && !c->reply_to && !c->edit_id &&
        c->next == insert_status && !c->scan.n_tags && !c->poll && !c->n_media) {
        /* A plain post: statuses.insert_plain reads the author's defaults
         * itself (c->visibility and c->sensitive stay -1 where not given). */
        if (*c->spoiler)
            c->sensitive = 1; /* Mastodon: a content warning implies sensitive */
        c->mention_ids = "{}";
        c->html = eu_text_format(req->arena, c->text, req->host, eu_req_base_url(req), NULL, 0);
        c->next(c);
        return;
    }
    if (!c->scan.n_mentions && !c->scan.n_remote && !c->reply_to && !c->edit_id) {
        const char *params[] = {eu_req_viewer(req)};
        eu_req_stmt(req, &eu_statuses_sql[STATUSES_PREPARE_PLAIN], 1, params, on_prepared, c);
        return;
    }
    const char *params[] = {text_array(req, c->scan.mentions, c->scan.n_mentions), c->reply_to,
                            eu_req_viewer(req), c->edit_id,
                            text_array(req, c->scan.remote, c->scan.n_remote)};
    eu_req_stmt(req, &eu_statuses_sql[STATUSES_PREPARE], 5, params, on_prepared, c);
}

static void prepare(struct compose *c);

static void
on_media_checked(struct eu_req *req, PGresult *res, void *arg)
{
    struct compose *c = arg;
    if (!PQgetisnull(res, 0, 0)) {
        eu_req_reply_error(req, 422, MEDIA_NOT_FOUND, PQgetvalue(res, 0, 0));
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] == 't') {
        eu_req_reply_error(req, 422, MEDIA_NOT_READY);
        return;
    }
    c->media_checked = true;
    prepare(c);
}

static void
prepare(struct compose *c)
{
    if (c->n_media && !c->media_checked) {
        const char *params[] = {eu_req_viewer(c->req), c->media_ids, c->edit_id};
        eu_req_stmt(c->req, &eu_statuses_sql[STATUSES_MEDIA_CHECK], 3, params, on_media_checked, c);
        return;
    }
    eu_text_scan(c->req->arena, c->text, c->req->host, &c->scan);
    prepare_scanned(c);
}

/*
 * Reads media_ids[] into c (at most MAX_MEDIA, none with a poll), as a
 * bigint[] literal without repeats. Whether the author may attach them is
 * the database's to say (prepare). Returns -1 after answering 422.
 */
static int
read_media_ids(struct eu_req *req, struct compose *c, json_t *media)
{
    size_t n = json_array_size(media);
    c->media_ids = "{}";
    if (!n)
        return 0;
    if (n > MAX_MEDIA || c->poll) {
        eu_req_reply_error(req, 422, TOO_MANY_MEDIA);
        return -1;
    }
    char *ids = eu_arena_alloc(req->arena, n * 22 + 3), *o = ids;
    const char **seen = c->media_list;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(media, i);
        const char *id = json_is_integer(v) ? eu_arena_sprintf(req->arena, "%lld",
                                                               (long long)json_integer_value(v))
                                            : json_string_value(v);
        if (!eu_id_is_valid(id)) {
            eu_req_reply_error(req, 422, MEDIA_NOT_FOUND, "0");
            return -1;
        }
        bool again = false;
        for (size_t j = 0; j < c->n_media; j++)
            again = again || strcmp(seen[j], id) == 0;
        if (again)
            continue;
        seen[c->n_media++] = id;
        o += sprintf(o, "%s%s", c->n_media > 1 ? "," : "", id);
    }
    *o++ = '}';
    *o = '\0';
    c->media_ids = ids;
    return 0;
}

/*
 * Reads an edit's media_attributes[] ({id, description, focus}, as
 * Mastodon's docs list them) into c->media_attrs, a JSON object keyed by
 * media id; the first entry for an id wins, as Mastodon's lookup does.
 * "thumbnail" is ignored: Mastodon's docs do not list it for edits and
 * eunha takes no custom thumbnails. Each id must be one of the edit's
 * media_ids (read first); description and focus are checked as
 * PUT /api/v1/media/:id checks them. Returns -1 after answering 422, with
 * nothing changed.
 */
static int
read_media_attributes(struct eu_req *req, struct compose *c, json_t *p)
{
    c->media_attrs = "{}";
    json_t *attrs = eu_param_array(p, "media_attributes");
    if (!attrs)
        return 0;
    json_t *out = json_object();
    int rc = 0;
    size_t i;
    json_t *a;
    json_array_foreach(attrs, i, a)
    {
        if (!json_is_object(a)) {
            eu_req_reply_error(req, 422, "Validation failed: Media attributes must be objects");
            rc = -1;
            break;
        }
        const char *id = eu_param_str(a, "id");
        bool known = false;
        for (size_t j = 0; id && j < c->n_media; j++)
            known = known || strcmp(c->media_list[j], id) == 0;
        if (!known) {
            eu_req_reply_error(req, 422,
                               "Validation failed: Media attributes name media %s,"
                               " which is not among the media_ids",
                               id && eu_id_is_valid(id) ? id : "0");
            rc = -1;
            break;
        }
        const char *desc, *fx, *fy;
        if (eu_media_read_meta(req, a, &desc, &fx, &fy) < 0) {
            rc = -1;
            break;
        }
        if (json_object_get(out, id))
            continue;
        json_t *v = json_object();
        if (json_object_get(a, "description"))
            json_object_set_new(v, "description", desc ? json_string(desc) : json_null());
        if (fx) {
            json_object_set_new(v, "fx", json_string(fx));
            json_object_set_new(v, "fy", json_string(fy));
        }
        json_object_set_new(out, id, v);
    }
    if (rc == 0) {
        char *text = json_dumps(out, JSON_COMPACT);
        c->media_attrs = eu_arena_strdup(req->arena, text);
        free(text);
    }
    json_decref(out);
    json_decref(attrs);
    return rc;
}

/* Mastodon's ScheduledStatus "params": the request's values as given (null
 * when absent). Arena-owned JSON text. */
static const char *
scheduled_params(struct eu_req *req, json_t *p, const struct compose *c)
{
    const char *str_keys[] = {"visibility", "spoiler_text", "in_reply_to_id", "language"};
    json_t *o = json_object();
    json_object_set_new(o, "text", json_string(c->text));
    for (size_t i = 0; i < sizeof(str_keys) / sizeof(str_keys[0]); i++) {
        const char *v = eu_param_str(p, str_keys[i]);
        json_object_set_new(o, str_keys[i], v && *v ? json_string(v) : json_null());
    }
    bool b;
    json_object_set_new(o, "sensitive",
                        eu_param_bool(p, "sensitive", &b) > 0 ? json_boolean(b) : json_null());
    json_object_set_new(o, "poll", c->poll ? json_loads(c->poll, 0, NULL) : json_null());
    json_t *media = eu_param_array(p, "media_ids");
    json_object_set_new(o, "media_ids", json_array_size(media) ? media : json_null());
    if (!json_array_size(media))
        json_decref(media);
    json_object_set_new(o, "scheduled_at", json_null());
    /* Mastodon 4.5's params also name the quote and its policy. */
    json_object_set_new(o, "quoted_status_id",
                        c->quoted_id ? json_string(c->quoted_id) : json_null());
    const char *qpol = eu_param_str(p, "quote_approval_policy");
    json_object_set_new(o, "quote_approval_policy",
                        qpol && *qpol ? json_string(qpol) : json_null());
    json_object_set_new(o, "idempotency", c->idem ? json_string(c->idem) : json_null());
    json_object_set_new(o, "with_rate_limit", json_false());
    json_object_set_new(o, "application_id",
                        req->auth.app_id ? json_integer(req->auth.app_id) : json_null());
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    const char *out = eu_arena_strdup(req->arena, text);
    free(text);
    return out;
}

/*
 * Reads status, spoiler_text, sensitive, language (and visibility and
 * in_reply_to_id when posting) into c. Returns -1 after answering 422.
 */
static int
read_compose_params(struct eu_req *req, struct compose *c, bool posting)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return -1;
    }
    c->req = req;
    c->visibility = -1;
    c->sensitive = -1;
    c->quote_policy = -1;
    const char *text = eu_param_str(p, "status");
    c->spoiler = eu_param_str(p, "spoiler_text");
    c->spoiler_given = c->spoiler != NULL;
    c->spoiler = c->spoiler ? c->spoiler : "";
    c->language = eu_param_str(p, "language");
    if (c->language && !*c->language)
        c->language = NULL;
    const char *when = eu_param_str(p, "scheduled_at");
    if (posting && when && *when && eu_scheduled_at_read(req, when, &c->scheduled_at) < 0)
        return -1;
    if (!posting && eu_param_object(p, "poll")) {
        eu_req_reply_error(req, 422, "Validation failed: Editing polls is not supported yet");
        return -1;
    }
    if (posting && eu_poll_params_read(req, eu_param_object(p, "poll"), &c->poll) < 0)
        return -1;
    json_t *media = eu_param_array(p, "media_ids");
    int mrc = read_media_ids(req, c, media);
    json_decref(media);
    if (mrc < 0 || (!posting && read_media_attributes(req, c, p) < 0))
        return -1;
    /* Mastodon keeps the text as typed but ignores surrounding blanks. */
    text = text ? text : "";
    while (*text == ' ' || *text == '\n' || *text == '\r' || *text == '\t')
        text++;
    char *t = eu_arena_strdup(req->arena, text);
    size_t tl = strlen(t);
    while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\n' || t[tl - 1] == '\r' || t[tl - 1] == '\t'))
        t[--tl] = '\0';
    c->text = t;
    if (!*c->text && !c->n_media) {
        eu_req_reply_error(req, 422, "Validation failed: Text can't be blank");
        return -1;
    }
    if (eu_utf8_chars(c->text) + eu_utf8_chars(c->spoiler) > MAX_CHARS) {
        eu_req_reply_error(req, 422, "Validation failed: Text character limit of %d exceeded",
                           MAX_CHARS);
        return -1;
    }
    bool b;
    int rc = eu_param_bool(p, "sensitive", &b);
    if (rc < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Sensitive is not a boolean");
        return -1;
    }
    if (rc > 0)
        c->sensitive = b;
    const char *qpol = eu_param_str(p, "quote_approval_policy");
    if (qpol && *qpol) {
        c->quote_policy = eu_quote_policy_code(qpol);
        if (c->quote_policy < 0) {
            eu_req_reply_error(req, 422, EU_QUOTE_BAD_POLICY);
            return -1;
        }
    }
    if (!posting)
        return 0;
    const char *vis = eu_param_str(p, "visibility");
    if (vis && *vis) {
        c->visibility = eu_status_visibility_code(vis);
        if (c->visibility < 0) {
            eu_req_reply_error(req, 422, EU_STATUS_BAD_VISIBILITY);
            return -1;
        }
    }
    const char *quoted = eu_param_str(p, "quoted_status_id");
    if (quoted && *quoted) {
        if (!eu_id_is_valid(quoted)) {
            eu_req_reply_error(req, 404, EU_QUOTE_NOT_FOUND);
            return -1;
        }
        c->quoted_id = eu_arena_strdup(req->arena, quoted);
    }
    const char *reply = eu_param_str(p, "in_reply_to_id");
    if (reply && *reply) {
        if (!eu_id_is_valid(reply)) {
            eu_req_reply_error(req, 404, "Record not found");
            return -1;
        }
        c->reply_to = reply;
    }
    if (c->scheduled_at)
        c->sched_params = scheduled_params(req, p, c);
    return 0;
}

/* The draft of what c resolved. Strings borrowed from c and the arena. */
static void
draft_of(struct compose *c, struct eu_status_draft *d)
{
    struct eu_req *req = c->req;
    memset(d, 0, sizeof(*d));
    d->account_id = req->auth.account_id;
    d->application_id = req->auth.app_id;
    d->text = c->text;
    d->html = c->html;
    d->spoiler = c->spoiler;
    d->language = c->language;
    d->sensitive = c->sensitive > 0;
    d->sensitive_default = c->sensitive < 0;
    d->visibility = c->visibility;
    d->reply_to = c->reply_to;
    d->reply_account = c->reply_account;
    d->conversation = c->conversation;
    d->mention_ids = c->mention_ids;
    d->tags = text_array(req, c->scan.tags, c->scan.n_tags);
    d->poll = c->poll;
    d->media_ids = c->media_ids;
    d->base_url = eu_req_base_url(req);
    d->quote_policy = c->quote_policy;
    d->quoted_id = c->quoted_id;
    d->quoted_account = c->quoted_account;
    d->quote_state = c->quote_state;
    d->quoted_local = c->quoted_local;
}

static void
on_inserted(const char *status_id, enum eu_db_status st, const char *error, const PGresult *res,
            void *arg)
{
    struct compose *c = arg;
    struct eu_req *req = c->req;
    eu_req_enter(req);
    if (!status_id) {
        eu_log_warn("statuses", "cannot insert status: %s", error ? error : "no row");
        eu_req_reply_db_error(req, st == EU_DB_OK ? EU_DB_ERROR : st);
        return;
    }
    snprintf(c->status_id, sizeof(c->status_id), "%s", status_id);
    if (c->idem) {
        const char *key = idempotency_key(req, c->idem);
        const char *argv[] = {"SET", key, c->status_id, "EX", IDEMPOTENCY_TTL};
        eu_redis_command(eu_tenant_redis(req->app, req->tenant), NULL, NULL, 5, argv, NULL);
    }
    if (c->quoted_id) {
        /* The insert's answer has no quote: the render statement's has. */
        eu_statuses_reply_one(req, c->status_id);
        return;
    }
    eu_statuses_reply_inserted(req, c->status_id, res);
}

static void
insert_status(struct compose *c)
{
    struct eu_status_draft d;
    draft_of(c, &d);
    eu_status_publish(c->req->app, c->req->tenant, NULL, &d, on_inserted, c);
}

static void
schedule_status(struct compose *c)
{
    struct eu_status_draft d;
    draft_of(c, &d);
    eu_scheduled_create(c->req, &d, c->scheduled_at, c->sched_params);
}

static void
on_quote_checked(struct eu_req *req, const struct eu_quote_target *q, void *arg)
{
    struct compose *c = arg;
    (void)req;
    c->quoted_id = q->id;
    c->quoted_account = q->account_id;
    c->quoted_local = q->local;
    c->quote_state = q->state;
    prepare(c);
}

/* A quote is checked before anything else: a post that may not be quoted
 * is refused before its text is prepared. */
static void
prepare_quoted(struct compose *c)
{
    if (c->quoted_id && !c->quote_state) {
        eu_statuses_quote_check(c->req, c->quoted_id, on_quote_checked, c);
        return;
    }
    prepare(c);
}

static void
on_idempotency(redisReply *reply, void *arg)
{
    struct compose *c = arg;
    eu_req_enter(c->req);
    if (reply && reply->type == REDIS_REPLY_STRING && eu_id_is_valid(reply->str)) {
        eu_statuses_reply_one(c->req, eu_arena_strdup(c->req->arena, reply->str));
        return;
    }
    /* Missing, or Redis down: post without idempotency. */
    prepare_quoted(c);
}

static void
statuses_create(struct eu_req *req)
{
    struct compose *c = eu_arena_calloc(req->arena, sizeof(*c));
    const char *idem = eu_req_header(req, "Idempotency-Key");
    if (idem && *idem && strlen(idem) <= 128)
        c->idem = eu_arena_strdup(req->arena, idem);
    if (read_compose_params(req, c, true) < 0)
        return;
    c->next = c->scheduled_at ? schedule_status : insert_status;
    /* A scheduled status is not a status yet: Mastodon's idempotency cache
     * holds statuses, so the key is only recorded in its params. */
    if (c->idem && !c->scheduled_at) {
        const char *key = idempotency_key(req, c->idem);
        const char *argv[] = {"GET", key};
        eu_redis_command(eu_tenant_redis(req->app, req->tenant), on_idempotency, c, 2, argv, NULL);
        return;
    }
    prepare_quoted(c);
}

/* ------------------------------------------------------------------- edit */

static void
on_edited(struct eu_req *req, PGresult *res, void *arg)
{
    struct compose *c = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *mention[] = {"mention", c->edit_id};
    eu_statuses_each_array_id(PQgetvalue(res, 0, 1), notify_each, req, mention);
    const char *update[] = {"update", c->edit_id};
    eu_statuses_each_array_id(PQgetvalue(res, 0, 2), notify_each, req, update);
    /* Mastodon 4.5's quoted_update: each local quoter is told about their
     * own quote of the edited status. */
    json_t *quoters = json_loads(PQgetvalue(res, 0, PQfnumber(res, "quoters")), 0, NULL);
    size_t i;
    json_t *pair;
    json_array_foreach(quoters, i, pair)
    {
        eu_notify(req->app->registry, req->tenant,
                  strtoll(json_string_value(json_array_get(pair, 0)), NULL, 10),
                  req->auth.account_id, "quoted_update",
                  strtoll(json_string_value(json_array_get(pair, 1)), NULL, 10));
    }
    json_decref(quoters);
    eu_ap_outbox_status(req->app, req->tenant, req->auth.account_id, c->edit_id,
                        EU_AP_STATUS_UPDATE, NULL);
    eu_stream_status_edited(req->app, req->tenant, strtoll(c->edit_id, NULL, 10));
    /* Its card follows its new text, as Mastodon fetches it again. */
    eu_card_enqueue(req->app, req->tenant, c->edit_id, true);
    eu_statuses_reply_one(req, c->edit_id);
}

static void
update_status(struct compose *c)
{
    struct eu_req *req = c->req;
    const char *params[] = {
        c->edit_id,
        eu_req_viewer(req),
        c->text,
        c->html,
        c->spoiler_given ? c->spoiler : NULL,
        c->sensitive < 0 ? NULL
        : c->sensitive   ? "true"
                         : "false",
        c->language,
        c->mention_ids,
        text_array(req, c->scan.tags, c->scan.n_tags),
        c->media_ids,
        c->media_attrs,
        c->quote_policy >= 0 ? eu_arena_sprintf(req->arena, "%d", c->quote_policy) : NULL,
    };
    eu_req_stmt(req, &eu_statuses_sql[STATUSES_EDIT], 12, params, on_edited, c);
}

static void
statuses_update(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct compose *c = eu_arena_calloc(req->arena, sizeof(*c));
    if (read_compose_params(req, c, false) < 0)
        return;
    c->edit_id = id;
    c->next = update_status;
    prepare(c);
}

/* -------------------------------------------------------------- get, delete */

static void
statuses_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (id)
        eu_statuses_reply_one(req, id);
}

static void
on_many_rendered(struct eu_req *req, json_t *array, void *arg)
{
    eu_req_reply_json(req, 200, array);
}

/* GET /api/v1/statuses?id[]=...: several statuses at once (Mastodon 4.3);
 * unknown and hidden ones are left out. */
static void
statuses_index(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *arr = eu_param_array(p, "id");
    size_t n = json_array_size(arr);
    if (n > 40) {
        json_decref(arr);
        eu_req_reply_error(req, 422, "Validation failed: too many ids (at most 40)");
        return;
    }
    const char **ids = eu_arena_alloc(req->arena, (n ? n : 1) * sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_array_get(arr, i));
        if (eu_id_is_valid(id))
            ids[k++] = eu_arena_strdup(req->arena, id);
    }
    json_decref(arr);
    eu_statuses_render(req, ids, k, on_many_rendered, NULL);
}

struct delete_ctx {
    json_t *status; /* released with the request's arena */
    const char *id;
};

static void
decref_json(void *p)
{
    json_decref(p);
}

static void
on_delete_done(struct eu_req *req, PGresult *res, void *arg)
{
    struct delete_ctx *d = arg;
    if (PQntuples(res) == 0 || atoi(PQgetvalue(res, 0, 0)) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (atoi(PQgetvalue(res, 0, 1)) > 0)
        eu_queue_wake(req->tenant, EU_QUEUE_DEFAULT, 0);
    eu_feed_status_fanout(req->app, req->tenant, strtoll(d->id, NULL, 10), true);
    eu_ap_outbox_status_deleted(req->app, req->tenant, req->auth.account_id, d->id);
    eu_req_reply_json(req, 200, json_incref(d->status));
}

static void
on_delete_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct delete_ctx *d = arg;
    json_t *st = json_array_get(array, 0);
    const char *owner =
        st ? json_string_value(json_object_get(json_object_get(st, "account"), "id")) : NULL;
    if (!owner || strtoll(owner, NULL, 10) != req->auth.account_id) {
        json_decref(array);
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The arena holds it: when the delete fails, on_delete_done never runs
     * and the status goes with the request. */
    d->status = json_incref(st);
    eu_arena_on_free(req->arena, decref_json, d->status);
    json_decref(array);
    const char *params[] = {d->id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_statuses_sql[STATUSES_DELETE], 2, params, on_delete_done, d);
}

static void
statuses_delete(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct delete_ctx *d = eu_arena_calloc(req->arena, sizeof(*d));
    d->id = id;
    const char *ids[] = {id};
    eu_statuses_render_opts(req, ids, 1, EU_RENDER_SOURCE, on_delete_rendered, d);
}

/* Flags: include/eunha/router.h. The thread's and the interactions' routes
 * are in statuses_thread.c and statuses_actions.c, beside their handlers. */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PUT EU_HTTP_PUT
#define DEL EU_HTTP_DELETE
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)
#define OPT (EU_ROUTE_AUTH_OPT | EU_ROUTE_API)

const struct eu_route eu_statuses_routes[] = {
    {POST, "/api/v1/statuses", statuses_create, "write:statuses", AUTH},
    {GET, "/api/v1/statuses", statuses_index, "read:statuses", OPT},
    {GET, "/api/v1/statuses/:id", statuses_show, "read:statuses", OPT},
    {DEL, "/api/v1/statuses/:id", statuses_delete, "write:statuses", AUTH},
    {PUT, "/api/v1/statuses/:id", statuses_update, "write:statuses", AUTH},
    {0},
};
/* ======================================================= route table: end */
