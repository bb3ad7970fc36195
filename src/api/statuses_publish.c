/*
 * Publishing a status (eu_status_publish(), statuses_internal.h): the
 * one statement that inserts it with its mentions, tags, media, poll and
 * quote, and what follows its commit: notifications, the home feeds, the
 * streams, the outbox, cards and polls. POST /api/v1/statuses and the
 * scheduled statuses' task both end here; the composing of a post (its
 * parameters, mentions and media) stays in statuses.c.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/audience.h"
#include "eunha/cards.h"
#include "eunha/db.h"
#include "eunha/feeds.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/notify.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "statuses_internal.h"

enum {
    PUBLISH_INSERT,
    PUBLISH_INSERT_PLAIN,
};

/*
 * The columns both insert statements answer with, as status_render.statuses's
 * row with the same names (eu_statuses_reply_inserted()): the new row s
 * (RETURNING *, and its xmin::text as sx) seen by its author $2, then
 * (each statement's own) mentions, tags and media, then a, the author's
 * row as the CTE a locks it (so that the counters trigger adds to this
 * version of it and no other, with what the trigger will add: the render
 * cache may keep it under the transaction's stamp), and the emojis. One
 * text for both, so a field the render gains cannot be forgotten in a
 * post's answer. Nobody can have favourited, boosted, bookmarked or
 * pinned a status not yet committed; its conversation may be muted. No
 * poll: a post with one is rendered by the render statement.
 */
#define PUBLISHED_STATUS_COLUMNS                                                                   \
    " SELECT s.id, true AS visible, false AS domain_blocked, s.reblog_of_id, s.sx AS sxmin,"       \
    " s.sx AS axmin, s.account_id AS author_id, s.visibility, false AS status_cached, false"       \
    " AS account_cached, false AS favourited, false AS reblogged, EXISTS (SELECT 1 FROM"           \
    " conversation_mutes cm WHERE cm.tenant_id = $1 AND cm.account_id = $2::bigint AND"            \
    " cm.conversation_id = coalesce(s.conversation_id, s.id)) AS muted, false AS bookmarked,"      \
    " false AS pinned, (SELECT json_build_object('name', oa.name, 'website',"                      \
    " oa.website)::text FROM oauth_applications oa WHERE oa.tenant_id = $1 AND oa.id ="            \
    " s.application_id) AS app, NULL AS poll, NULL AS filter_stamp, NULL AS source_text,"          \
    " eunha_ts(s.created_at) AS created_at, s.in_reply_to_id, s.in_reply_to_account_id,"           \
    " s.sensitive, s.spoiler_text, s.language, s.uri AS status_uri, s.url AS status_url,"          \
    " s.local, s.content, NULL AS edited_at, s.replies_count, s.reblogs_count,"                    \
    " s.favourites_count, s.quote_policy,"
/* The author's row as the post leaves it, locked for the counters trigger
 * (see PUBLISHED_STATUS_COLUMNS). */
#define PUBLISHED_AUTHOR_CTE                                                                       \
    " a AS (SELECT x.id, x.username, x.domain, x.display_name, x.note, x.url, x.uri, "             \
    " x.avatar_url, x.header_url, x.locked, x.bot, x.discoverable, x.fields, x.created_at, "       \
    " x.followers_count, x.following_count, x.statuses_count + 1 AS statuses_count, "              \
    " greatest(x.last_status_at, s.created_at) AS last_status_at, x.suspended_at, x.roles FROM"    \
    " accounts x, s WHERE x.tenant_id = $1 AND x.id = $2::bigint FOR NO KEY UPDATE OF x)"
#define PUBLISHED_AUTHOR_COLUMNS                                                                   \
    EU_STATUS_AUTHOR_COLUMNS_OF_A                                                                  \
    ", eunha_emojis_in($1, NULL, s.spoiler_text || ' ' || s.content) AS status_emojis"

const struct eu_sql eu_statuses_publish_sql[] = {
    /*
     * Inserts the status, its mentions, tags and poll in one statement. $15, a
     * scheduled status being published, is deleted by the same statement, and
     * the status inserted only if that row was still there: two processes
     * publishing it at once post it once. Mentioned accounts purged since it was
     * scheduled are skipped. Returns the status as the POST answers it
     * (with the render statement's columns, from the rows it inserted: the tables do
     * not show them to this statement), then the followers who asked to be
     * told.
     */
    [PUBLISH_INSERT] =
        {"statuses.insert",
         "WITH sch AS (DELETE FROM scheduled_statuses WHERE tenant_id = $1 AND id = $15::bigint"
         "  RETURNING id),"
         " s AS (INSERT INTO statuses (tenant_id, account_id, text, content,"
         " spoiler_text, sensitive,"
         "  visibility, language, in_reply_to_id, in_reply_to_account_id, conversation_id,"
         "  application_id, quote_policy)"
         " SELECT $1, $2::bigint, $3, $4, $5, $6::bool, $7::smallint, $8, $9::bigint, $10::bigint,"
         "  coalesce($11::bigint, nextval('conversations_id_seq')), $12::bigint,"
         "  CASE WHEN $7::smallint >= 2 THEN 2 ELSE coalesce($19::smallint, 0) END"
         "  WHERE $15::bigint IS NULL OR EXISTS (SELECT 1 FROM sch) RETURNING *, xmin::text AS sx),"
         " m AS (INSERT INTO mentions (tenant_id, status_id, account_id)"
         " SELECT $1, s.id, u.id FROM s,"
         "  unnest($13::bigint[]) u(id) WHERE EXISTS (SELECT 1 FROM accounts ma"
         "  WHERE ma.tenant_id = $1 AND ma.id = u.id) ON CONFLICT DO NOTHING"
         "  RETURNING id, account_id),"
         " nt AS (INSERT INTO tags (tenant_id, name) SELECT DISTINCT ON (lower(n)) $1, n"
         "  FROM unnest($14::text[]) n"
         " ON CONFLICT (tenant_id, lower(name)) DO NOTHING RETURNING id, name),"
         " tg AS (SELECT id, name FROM nt UNION SELECT id, name FROM tags WHERE tenant_id = $1"
         "  AND lower(name) IN (SELECT lower(n) FROM unnest($14::text[]) n)),"
         " st AS (INSERT INTO statuses_tags (tenant_id, status_id, tag_id) SELECT $1, s.id, tg.id"
         "  FROM s, tg ON CONFLICT DO NOTHING),"
         " pl AS (INSERT INTO polls (tenant_id, status_id, account_id, options,"
         " multiple, hide_totals,"
         "  expires_at) SELECT $1, s.id, $2::bigint,"
         "  ARRAY(SELECT jsonb_array_elements_text($16::jsonb -> 'options')),"
         "  ($16::jsonb ->> 'multiple')::bool, ($16::jsonb ->> 'hide_totals')::bool,"
         "  now() + make_interval(secs => ($16::jsonb ->> 'expires_in')::float8)"
         "  FROM s WHERE $16::jsonb IS NOT NULL),"
         /* $17 media ids in order: the author's, unattached, or held by the
          * scheduled status being published. */
         " md AS (UPDATE media_attachments ma SET status_id = s.id, position = x.i - 1,"
         "  scheduled_status_id = NULL, updated_at = now()"
         "  FROM s, unnest($17::bigint[]) WITH ORDINALITY x(id, i)"
         "  WHERE ma.tenant_id = $1 AND ma.id = x.id AND ma.account_id = $2::bigint"
         "  AND ma.status_id IS NULL AND (ma.scheduled_status_id IS NULL"
         "  OR ma.scheduled_status_id = $15::bigint) RETURNING ma.*),"
         /* $20 the quoted status, $21 its author, $22 the quote's state
          * (src/api/quotes.c decided it). */
         " qi AS (INSERT INTO quotes (tenant_id, status_id, account_id, quoted_status_id,"
         "  quoted_account_id, quoted_uri, state) SELECT $1, s.id, $2::bigint, $20::bigint,"
         "  $21::bigint, (SELECT qs.uri FROM statuses qs WHERE qs.tenant_id = $1"
         "  AND qs.id = $20::bigint), $22 FROM s WHERE $20::bigint IS NOT NULL),"
         /* The status as the POST answers it (PUBLISHED_STATUS_COLUMNS),
          * with mentions, tags and media the JSON arrays the statement
          * built from what it inserted; $18 the tenant's base URL, for
          * the mentions' and tags' URLs. */
         PUBLISHED_AUTHOR_CTE PUBLISHED_STATUS_COLUMNS
         " (SELECT coalesce(json_agg(eunha_mention_json(ma, $18) ORDER BY m.id), '[]')::text"
         "  FROM m JOIN accounts ma ON ma.tenant_id = $1 AND ma.id = m.account_id) AS mentions,"
         " (SELECT coalesce(json_agg(eunha_tag_json(tg.name, $18) ORDER BY tg.name), '[]')::text"
         "  FROM tg) AS tags,"
         " (SELECT coalesce(json_agg(eunha_media_json(md) ORDER BY md.position, md.id), '[]')::text"
         "  FROM md) AS media," PUBLISHED_AUTHOR_COLUMNS ","
         " (SELECT coalesce(array_agg(f.account_id), '{}') FROM follows f"
         "  WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint AND f.notify)::text"
         "  AS notify_ids"
         " FROM s, a"},
    /*
     * statuses.insert for a status with no mention, tag, poll or media that
     * is not a scheduled one being published ($1..$12 as there). Each of
     * statuses.insert's other parts is a table to open and a statement
     * trigger to fire (on polls and media_attachments) even when it changes
     * no row: a third of the post's PostgreSQL CPU in the profile of plain
     * posts, which are most posts. One row: the status as the POST answers
     * it (as statuses.insert does), so that rendering it is no second
     * statement; then the followers who asked to be told of it (Mastodon's
     * rule: not direct, not a reply to someone else); whether anyone remote
     * would receive it (ap_objects.notes' rule for a status with no mention
     * that is not a reblog: a remote follower, unless direct), so a tenant
     * without remote followers runs no outbox statement for it; and the
     * home feeds that take it, so the fan-out needs no statement either.
     * The author's local followers are read once for the bell and the
     * feeds; a remote one is one probe of an index. A NULL $6 or $7
     * takes the author's default, so posting needs no statement before
     * this one to read them. $13 is the stamp of the author's audience
     * this process keeps (include/eunha/audience.h), or NULL: when it
     * still holds, the followers are not read at all.
     */
    [PUBLISH_INSERT_PLAIN] =
        {"statuses.insert_plain",
         "WITH u AS (SELECT coalesce($7::smallint, CASE x.default_privacy WHEN 'unlisted' THEN 1"
         "  WHEN 'private' THEN 2 WHEN 'direct' THEN 3 ELSE 0 END)::smallint AS vis,"
         "  coalesce($6::bool, x.default_sensitive, false) AS sens"
         "  FROM (SELECT 1) one LEFT JOIN users x ON x.tenant_id = $1 AND x.account_id ="
         " $2::bigint),"
         " s AS (INSERT INTO statuses (tenant_id, account_id, text, content, spoiler_text,"
         "  sensitive, visibility, language, in_reply_to_id, in_reply_to_account_id,"
         "  conversation_id, application_id, quote_policy)"
         " SELECT $1, $2::bigint, $3, $4, $5, u.sens, u.vis, $8, $9::bigint, $10::bigint,"
         "  coalesce($11::bigint, nextval('conversations_id_seq')), $12::bigint,"
         "  CASE WHEN u.vis >= 2 THEN 2 ELSE 0 END FROM u"
         "  RETURNING *, xmin::text AS sx)," PUBLISHED_AUTHOR_CTE ","
         /* The local followers alone (migration 0074): remote ones get
          * the status by delivery, and reading them here made a post's
          * cost grow with followers it puts in no feed. */
         " fl AS (SELECT f.account_id, f.notify FROM follows f"
         "  WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint"
         "  AND f.local)" PUBLISHED_STATUS_COLUMNS
         " '[]' AS mentions, '[]' AS tags, '[]' AS media," PUBLISHED_AUTHOR_COLUMNS ","
         /* The audience: read only when the author's stamp moved since
          * the kept one ($13, src/social/audience.c) or the status is not
          * simple (a plain public, unlisted or private status that
          * replies to nobody else, by an author not suspended: what the
          * kept lists are true of); otherwise NULL, and the kept lists
          * serve. */
         " CASE WHEN k.fresh THEN CASE WHEN s.visibility < 3 AND (s.in_reply_to_account_id IS"
         "  NULL OR s.in_reply_to_account_id = s.account_id)"
         "  THEN (SELECT coalesce(array_agg(fl.account_id), '{}') FROM fl WHERE fl.notify)"
         "  ELSE '{}' END::text END AS notify_ids,"
         " CASE WHEN k.fresh THEN s.visibility < 3 AND EXISTS (SELECT 1 FROM follows rf"
         "  JOIN accounts ra ON ra.tenant_id = $1 AND ra.id = rf.account_id WHERE rf.tenant_id"
         "  = $1 AND rf.target_account_id = $2::bigint AND NOT rf.local AND ra.suspended_at IS"
         "  NULL) END AS remote,"
         /* For the kept audience: the remote followers' inboxes, as
          * ap_deliver.enqueue would find them, and when the first mute of
          * the author lapses. */
         " CASE WHEN k.fresh AND k.simple THEN (SELECT array_agg(DISTINCT"
         "  coalesce(ia.shared_inbox_url, ia.inbox_url)) FROM follows fi JOIN accounts ia"
         "  ON ia.tenant_id = $1 AND ia.id = fi.account_id WHERE fi.tenant_id = $1"
         "  AND fi.target_account_id = $2::bigint AND NOT fi.local AND ia.domain IS NOT NULL"
         "  AND ia.suspended_at IS NULL)::text END AS inboxes,"
         " CASE WHEN k.fresh AND k.simple THEN (SELECT (extract(epoch FROM min(mx.expires_at))"
         "  * 1000)::bigint FROM mutes mx WHERE mx.tenant_id = $1 AND mx.target_account_id ="
         "  $2::bigint AND mx.expires_at > now()) END AS audience_until,"
         " k.stamp AS audience_stamp, k.simple AS audience_simple, k.fresh AS audience_fresh,"
         /* The feeds: feeds.recipients and eunha_is_home_feed_status() for the
          * status just inserted, over the author's local followers fl read
          * once for the whole statement: as v(id), the author and every
          * local follower whose feed takes it. What the general rule tests
          * and cannot hold here is left out (a deleted status, a reblog and
          * its original's author, mentions, which a plain status has none
          * of); the rest is the same: direct reaches nobody else, a reply
          * only followers of the account replied to (or that account), and
          * no follower who blocks, is blocked by or mutes the author, nor
          * any of a suspended author. The blocks and mutes are read once
          * each as sets about the author ($2, not s.account_id, so that
          * PostgreSQL hashes each once rather than probing per follower),
          * which keeps a follower's share of the statement to its index
          * entry. */
         " CASE WHEN k.fresh THEN (SELECT array_agg(v.id) FROM (SELECT s.account_id AS id"
         " UNION ALL SELECT fl.account_id"
         " FROM fl WHERE fl.account_id <> s.account_id AND s.visibility < 3 AND"
         " a.suspended_at IS NULL AND"
         " (s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id IN (s.account_id,"
         " fl.account_id) OR EXISTS (SELECT 1 FROM follows hr WHERE hr.tenant_id = $1 AND"
         " hr.account_id = fl.account_id AND hr.target_account_id = s.in_reply_to_account_id)) AND"
         " fl.account_id NOT IN (SELECT hb.account_id FROM blocks hb WHERE hb.tenant_id = $1"
         " AND hb.target_account_id = $2::bigint) AND fl.account_id NOT IN (SELECT"
         " vb.target_account_id FROM blocks vb WHERE vb.tenant_id = $1 AND vb.account_id ="
         " $2::bigint) AND fl.account_id NOT IN (SELECT hu.account_id FROM mutes hu WHERE"
         " hu.tenant_id = $1 AND hu.target_account_id = $2::bigint AND (hu.expires_at IS NULL"
         " OR hu.expires_at > now()))) v)::text END AS feeds"
         /* The stamp as this statement's snapshot saw it, as the lists
          * did: a follow committed meanwhile moves it for the next post. */
         " FROM s, a, LATERAL (SELECT x.stamp, x.simple, x.stamp IS DISTINCT FROM $13::text OR"
         "  NOT x.simple AS fresh FROM (SELECT (SELECT y.audience_stamp::text FROM accounts y"
         "  WHERE y.tenant_id = $1 AND y.id = $2::bigint) AS stamp, s.visibility < 3 AND"
         "  (s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id = s.account_id) AND"
         "  a.suspended_at IS NULL AS simple) x) k"},
    {0},
};

struct publish {
    struct eu_app *app;
    struct eu_tenant *tenant; /* holds a ref: this may outlive a request */
    int64_t author;
    bool notify_followers;
    char *mention_ids;
    int64_t poll_ms;          /* the poll's lifetime, or -1 */
    bool plain;               /* sent statuses.insert_plain, whose row ends in NEW_FEEDS */
    bool card;                /* has a link that may get a preview card (src/social/cards.c) */
    int64_t quoted_author;    /* a local quoted author to tell, or 0 */
    bool quote_request;       /* a pending quote of a remote post: ask its author */
    struct eu_audience *kept; /* the author's kept audience whose stamp was sent, or NULL */
    eu_status_published_cb cb;
    void *arg;
};

static void
notify_ids(const struct publish *pb, const char *text, const char *type, int64_t status_id)
{
    size_t n;
    int64_t *ids = eu_db_bigint_array(text, &n);
    eu_notify_many(pb->app->registry, pb->tenant, ids, n, pb->author, type, status_id);
    free(ids);
}

/* What a plain post reaches: its statement's lists, or the kept ones
 * (include/eunha/audience.h). Strings borrowed from the result or from
 * pb->kept. inboxes NULL: the outbox finds the followers' inboxes itself. */
struct audience {
    const char *feeds, *notify, *inboxes;
    bool remote;
};

static const char *
value(const PGresult *res, int col)
{
    return col < 0 || PQgetisnull(res, 0, col) ? NULL : PQgetvalue(res, 0, col);
}

/* Fills au from statuses.insert_plain's row, and keeps a simple status's
 * freshly read audience for the author's next post. False when the row
 * has neither (not the plain statement's). */
static bool
audience_of(struct publish *pb, const PGresult *res, struct audience *au)
{
    const char *fresh = value(res, PQfnumber(res, "audience_fresh"));
    if (!fresh)
        return false;
    if (fresh[0] != 't') {
        /* The stamp held: pb->kept is what was sent. */
        if (!pb->kept)
            return false;
        eu_audience_count(true);
        *au = (struct audience){pb->kept->feeds, pb->kept->notify, pb->kept->inboxes,
                                pb->kept->remote};
        return true;
    }
    const char *feeds = value(res, PQfnumber(res, "feeds"));
    const char *remote = value(res, PQfnumber(res, "remote"));
    if (!feeds || !remote)
        return false;
    eu_audience_count(false);
    const char *simple = value(res, PQfnumber(res, "audience_simple"));
    const char *inboxes = value(res, PQfnumber(res, "inboxes"));
    *au =
        (struct audience){feeds, value(res, PQfnumber(res, "notify_ids")), NULL, remote[0] == 't'};
    if (simple && simple[0] == 't') {
        /* Simple: the lists hold for the author's next simple post while
         * the stamp does, and the inboxes are the followers' whole. */
        const char *until = value(res, PQfnumber(res, "audience_until"));
        eu_audience_put(pb->tenant->id, pb->author, value(res, PQfnumber(res, "audience_stamp")),
                        until ? strtoll(until, NULL, 10) : INT64_MAX, au->remote, feeds,
                        au->notify ? au->notify : "{}", inboxes);
        au->inboxes = inboxes;
    }
    return true;
}

static void
on_published(PGresult *res, enum eu_db_status st, void *arg)
{
    struct publish *pb = arg;
    if (st != EU_DB_OK) {
        pb->cb(NULL, st, res ? PQresultErrorMessage(res) : "database unavailable", NULL, pb->arg);
    } else if (PQntuples(res) == 0) {
        pb->cb(NULL, EU_DB_OK, NULL, NULL, pb->arg);
    } else {
        const char *id = PQgetvalue(res, 0, 0);
        int64_t sid = strtoll(id, NULL, 10);
        /* After the status they render, statuses.insert and
         * statuses.insert_plain name the followers to notify; the plain one
         * also lists the feeds and says when nobody remote would receive
         * the status. */
        int notify_col = PQfnumber(res, "notify_ids");
        struct audience au;
        bool plain = pb->plain && audience_of(pb, res, &au);
        notify_ids(pb, pb->mention_ids, "mention", sid);
        const char *notify = plain             ? au.notify
                             : notify_col >= 0 ? PQgetvalue(res, 0, notify_col)
                                               : NULL;
        if (pb->notify_followers && notify)
            notify_ids(pb, notify, "status", sid);
        if (plain)
            eu_feed_status_fanout_ids(pb->app, pb->tenant, sid, au.feeds);
        else
            eu_feed_status_fanout(pb->app, pb->tenant, sid, false);
        if (!plain)
            eu_ap_outbox_status(pb->app, pb->tenant, pb->author, id, EU_AP_STATUS_CREATE, NULL);
        else if (au.remote)
            eu_ap_outbox_status_to(pb->app, pb->tenant, pb->author, id, au.inboxes);
        if (pb->poll_ms >= 0)
            eu_queue_task_wake(pb->tenant, EU_TASK_POLLS, pb->poll_ms);
        if (pb->card)
            eu_card_enqueue(pb->app, pb->tenant, id, false);
        if (pb->quoted_author && pb->quoted_author != pb->author)
            eu_notify(pb->app->registry, pb->tenant, pb->quoted_author, pb->author, "quote", sid);
        if (pb->quote_request)
            eu_ap_outbox_quote_request(pb->app, pb->tenant, pb->author, id);
        /* The statement cannot build a poll it has just inserted. */
        pb->cb(id, EU_DB_OK, NULL, pb->poll_ms >= 0 ? NULL : res, pb->arg);
    }
    eu_tenant_unref(pb->tenant);
    eu_audience_unref(pb->kept);
    free(pb->mention_ids);
    free(pb);
}

void
eu_status_publish(struct eu_app *app, struct eu_tenant *t, struct eu_db_conn *conn,
                  const struct eu_status_draft *d, eu_status_published_cb cb, void *arg)
{
    struct publish *pb = eu_xcalloc(1, sizeof(*pb));
    pb->app = app;
    pb->tenant = t;
    eu_tenant_ref(t);
    pb->author = d->account_id;
    /* Followers who asked to be told, for anything but DMs and replies to
     * others (Mastodon's rule). */
    pb->notify_followers =
        d->visibility < 3 &&
        !(d->reply_account && strtoll(d->reply_account, NULL, 10) != d->account_id);
    pb->mention_ids = eu_xstrdup(d->mention_ids ? d->mention_ids : "{}");
    pb->poll_ms = -1;
    if (d->poll) {
        json_t *poll = json_loads(d->poll, 0, NULL);
        pb->poll_ms = json_integer_value(json_object_get(poll, "expires_in")) * 1000;
        json_decref(poll);
    }
    pb->cb = cb;
    pb->arg = arg;
    char author[24], vis[12], app_id[24], qpol[8];
    snprintf(qpol, sizeof(qpol), "%d", d->quote_policy);
    if (d->quoted_id && d->quoted_local && d->quote_state && !strcmp(d->quote_state, "accepted"))
        pb->quoted_author = strtoll(d->quoted_account, NULL, 10);
    pb->quote_request = d->quoted_id && !d->quoted_local;
    snprintf(author, sizeof(author), "%lld", (long long)d->account_id);
    snprintf(vis, sizeof(vis), "%d", d->visibility);
    snprintf(app_id, sizeof(app_id), "%lld", (long long)d->application_id);
    const char *params[] = {
        author,
        d->text,
        d->html,
        d->spoiler ? d->spoiler : "",
        d->sensitive_default ? NULL
        : d->sensitive       ? "true"
                             : "false",
        d->visibility < 0 ? NULL : vis,
        d->language,
        d->reply_to,
        d->reply_to ? d->reply_account : NULL,
        d->reply_to ? d->conversation : NULL,
        d->application_id ? app_id : NULL,
        pb->mention_ids,
        d->tags ? d->tags : "{}",
        d->scheduled_id,
        d->poll,
        d->media_ids ? d->media_ids : "{}",
        d->base_url,
        d->quote_policy >= 0 ? qpol : NULL,
        d->quoted_id,
        d->quoted_id ? d->quoted_account : NULL,
        d->quoted_id ? d->quote_state : NULL,
    };
    bool plain = !strcmp(params[11], "{}") && !strcmp(params[12], "{}") && !d->scheduled_id &&
                 !d->poll && !strcmp(params[15], "{}") && d->quote_policy < 0 && !d->quoted_id;
    if (!plain && (d->visibility < 0 || d->sensitive_default)) {
        /* Only statuses.insert_plain reads the author's defaults, and
         * prepare_scanned leaves them to it only for a plain post. */
        eu_log_warn("statuses", "a draft without defaults is not plain: public, not sensitive");
        snprintf(vis, sizeof(vis), "%d", d->visibility < 0 ? 0 : d->visibility);
        params[4] = d->sensitive ? "true" : "false";
        params[5] = vis;
    }
    pb->plain = plain;
    /* Mastodon shows media or a poll instead of a card. */
    pb->card = !d->poll && !strcmp(params[15], "{}") && eu_card_candidate(d->html);
    const struct eu_sql *insert =
        &eu_statuses_publish_sql[plain ? PUBLISH_INSERT_PLAIN : PUBLISH_INSERT];
    int nparams = plain ? 12 : 21;
    if (plain) {
        /* The plain statement's last parameter is the kept stamp. */
        pb->kept = eu_audience_get(t->id, d->account_id);
        params[11] = pb->kept ? pb->kept->stamp : NULL;
    }
    if (conn)
        eu_db_conn_stmt(conn, insert, nparams, params, on_published, pb);
    else
        eu_db_pool_stmt(eu_tenant_pool(app->registry, t), insert, nparams, params, on_published,
                        pb);
}
