/*
 * Received activities about statuses: Create, Update and Delete of notes
 * (and Update of the actor itself), Like, Announce, Flag, and Add/Remove of
 * the actor's featured (pinned) statuses.
 *
 * A note is stored only when it concerns the tenant, as Mastodon decides:
 * a local account follows its author, it addresses or mentions a local
 * account, or it replies to a local status or one whose author a local
 * account follows. The author must be the actor. Stored notes fan out into
 * the local followers' home feeds the way local posts do, and mentioned
 * local accounts are notified. A note that is already stored makes a
 * redelivered Create a no-op; an Update must be newer than the last edit.
 */
#include "process_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/cards.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/fetch.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/notify.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/stream.h"
#include "eunha/trends.h"

enum {
    STATUS_RELEVANT,
    STATUS_NEW_NOTIFY,
    STATUS_MINE,
    STATUS_REBLOGGERS,
    STATUS_LIKE,
    STATUS_ANNOUNCE,
    STATUS_ANNOUNCE_UNKNOWN,
    STATUS_FLAG,
    STATUS_PIN,
    STATUS_UNPIN,
};

/* Notifications are capped per status: the rows come from local accounts,
 * but one status should not queue an unbounded burst. */
#define NOTIFY_CAP "10000"

const struct eu_sql eu_ap_process_status_sql[] = {
    /* $2 author, $3 local usernames it addresses (JSON), $4/$5 its
     * parent's uri and local id, $6 its uri: (relevant, already stored). */
    [STATUS_RELEVANT] =
        {"ap_process.status_relevant",
         "SELECT EXISTS (SELECT FROM eunha_local_follower($1, $2::bigint))"
         " OR EXISTS (SELECT 1 FROM accounts a WHERE a.tenant_id = $1 AND a.domain IS NULL"
         "  AND lower(a.username) IN (SELECT lower(u) FROM jsonb_array_elements_text($3::jsonb) u))"
         " OR EXISTS (SELECT 1 FROM statuses p WHERE p.tenant_id = $1 AND p.deleted_at IS NULL"
         "  AND (p.uri = $4 OR (p.local AND p.id = $5::bigint))"
         "  AND (p.local OR EXISTS (SELECT FROM eunha_local_follower($1, p.account_id)))),"
         " EXISTS (SELECT 1 FROM statuses s WHERE s.tenant_id = $1 AND s.uri = $6)"},
    /* Who a new status $2 by $3 notifies: mentioned local accounts, and
     * local followers who asked for its author's posts. */
    [STATUS_NEW_NOTIFY] =
        {"ap_process.status_new_notify",
         "SELECT 'mention', m.account_id::text FROM mentions m JOIN accounts a"
         " ON a.tenant_id = $1 AND a.id = m.account_id AND a.domain IS NULL"
         " WHERE m.tenant_id = $1 AND m.status_id = $2::bigint"
         " UNION ALL SELECT 'status', f.account_id::text FROM follows f JOIN accounts a"
         " ON a.tenant_id = $1 AND a.id = f.account_id AND a.domain IS NULL"
         " WHERE f.tenant_id = $1 AND f.target_account_id = $3::bigint AND f.notify"
         " AND EXISTS (SELECT 1 FROM statuses s WHERE s.tenant_id = $1 AND s.id = $2::bigint"
         "  AND s.visibility < 3 AND s.in_reply_to_id IS NULL)"
         " AND NOT EXISTS (SELECT 1 FROM mentions m WHERE m.tenant_id = $1"
         "  AND m.status_id = $2::bigint AND m.account_id = f.account_id)"
         " LIMIT " NOTIFY_CAP},
    /* $2 uri, $3 author: the author's stored status. */
    [STATUS_MINE] = {"ap_process.status_mine",
                     "SELECT id::text FROM statuses WHERE tenant_id = $1 AND uri = $2"
                     " AND account_id = $3::bigint AND deleted_at IS NULL"},
    /* Local accounts that boosted status $2 (told of its edits: account,
     * "update", the status) and those whose accepted quotes quote it
     * (account, "quoted_update", their quoting status). */
    [STATUS_REBLOGGERS] =
        {"ap_process.status_rebloggers",
         "SELECT x.account_id::text, x.type, x.status_id::text FROM ("
         " SELECT DISTINCT r.account_id, 'update' AS type, $2::bigint AS status_id"
         "  FROM statuses r JOIN accounts a"
         "  ON a.tenant_id = $1 AND a.id = r.account_id AND a.domain IS NULL"
         "  WHERE r.tenant_id = $1 AND r.reblog_of_id = $2::bigint AND r.deleted_at IS NULL"
         " UNION ALL SELECT q.account_id, 'quoted_update', q.status_id FROM quotes q"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = q.account_id AND a.domain IS NULL"
         "  JOIN statuses qs ON qs.tenant_id = $1 AND qs.id = q.status_id"
         "  AND qs.deleted_at IS NULL WHERE q.tenant_id = $1"
         "  AND q.quoted_status_id = $2::bigint AND q.state = 'accepted') x"
         " LIMIT " NOTIFY_CAP},
    /* $2 actor, $3/$4 the status's uri or local id, $5 the Like's id. A
     * status the actor may not see cannot be liked. Returns the status,
     * its author and whether the author is local, when it was new. */
    [STATUS_LIKE] =
        {"ap_process.like",
         "WITH s AS (SELECT s.id, s.account_id FROM statuses s"
         "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
         "  s.deleted_at, $2::bigint) vis WHERE s.tenant_id = $1"
         "  AND (s.uri = $3 OR (s.local AND s.id = $4::bigint)) AND s.reblog_of_id IS NULL"
         "  AND vis.ok LIMIT 1),"
         " i AS (INSERT INTO favourites (tenant_id, account_id, status_id, uri)"
         "  SELECT $1, $2::bigint, id, $5 FROM s ON CONFLICT DO NOTHING RETURNING status_id)"
         " SELECT i.status_id::text, s.account_id::text, a.domain IS NULL FROM i"
         " JOIN s ON s.id = i.status_id JOIN accounts a ON a.tenant_id = $1 AND a.id ="
         " s.account_id"},
    /* $2 actor, $3/$4 the boosted status, $5 the Announce's id, $6 its
     * visibility. Only public and unlisted statuses are boosted, and only
     * when it concerns the tenant (a local status, or a local account
     * follows the booster). Returns the boost, the original, its author and
     * whether that author is local. */
    [STATUS_ANNOUNCE] =
        {"ap_process.announce",
         "WITH o AS (SELECT s.id, s.account_id, s.local FROM statuses s"
         "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
         "  s.deleted_at, $2::bigint) vis WHERE s.tenant_id = $1"
         "  AND (s.uri = $3 OR (s.local AND s.id = $4::bigint)) AND s.reblog_of_id IS NULL"
         "  AND s.visibility <= 1 AND vis.ok LIMIT 1),"
         " ok AS (SELECT o.* FROM o WHERE (o.local"
         "  OR EXISTS (SELECT FROM eunha_local_follower($1, $2::bigint)))"
         "  AND NOT EXISTS (SELECT 1 FROM statuses r WHERE r.tenant_id = $1"
         "  AND r.reblog_of_id = o.id AND r.account_id = $2::bigint AND r.deleted_at IS NULL)),"
         " i AS (INSERT INTO statuses (tenant_id, account_id, uri, local, reblog_of_id,"
         "  visibility) SELECT $1, $2::bigint, $5, false, ok.id, $6::smallint FROM ok"
         "  ON CONFLICT (tenant_id, uri) WHERE uri IS NOT NULL DO NOTHING RETURNING id)"
         " SELECT i.id::text, ok.id::text, ok.account_id::text, ok.local FROM i, ok"},
    /* $2 the booster, $3 the boosted status's uri: true when the status is
     * not here and the boost concerns the tenant (a local account follows
     * the booster), so the status is worth fetching. */
    [STATUS_ANNOUNCE_UNKNOWN] =
        {"ap_process.announce_unknown",
         "SELECT NOT EXISTS (SELECT 1 FROM statuses s WHERE s.tenant_id = $1 AND s.uri = $3)"
         " AND EXISTS (SELECT FROM eunha_local_follower($1, $2::bigint))"},
    /* $2 reporter, $3 local usernames named (JSON), $4 local status ids
     * named (JSON), $5 comment, $6 the Flag's id. The reported account is
     * a named local account or the author of a named local status. */
    [STATUS_FLAG] =
        {"ap_process.flag",
         "WITH ids AS (SELECT x::bigint AS id FROM jsonb_array_elements_text($4::jsonb) x),"
         " t AS (SELECT a.id FROM accounts a WHERE a.tenant_id = $1 AND a.domain IS NULL"
         "  AND a.username <> 'instance.actor' AND (lower(a.username) IN (SELECT lower(n)"
         "  FROM jsonb_array_elements_text($3::jsonb) n) OR a.id IN (SELECT s.account_id"
         "  FROM statuses s WHERE s.tenant_id = $1 AND s.local AND s.id IN (SELECT id FROM ids)))"
         /* Not from a domain the tenant rejects reports of. */
         "  AND NOT EXISTS (SELECT 1 FROM accounts r JOIN domain_blocks db ON db.tenant_id = $1"
         "  AND db.reject_reports AND db.domain = ANY(eunha_domain_suffixes(r.domain))"
         "  WHERE r.tenant_id = $1 AND r.id = $2::bigint)"
         "  ORDER BY a.id LIMIT 1),"
         " i AS (INSERT INTO reports (tenant_id, account_id, target_account_id, status_ids,"
         "  comment, uri) SELECT $1, $2::bigint, t.id, ARRAY(SELECT s.id FROM statuses s"
         "  WHERE s.tenant_id = $1 AND s.account_id = t.id AND s.id IN (SELECT id FROM ids)"
         "  ORDER BY s.id), $5, $6 FROM t"
         "  ON CONFLICT (tenant_id, uri) WHERE uri IS NOT NULL DO NOTHING RETURNING id)"
         " SELECT id::text FROM i"},
    /* $2 actor, $3 the status's uri: pin or unpin the actor's own. */
    [STATUS_PIN] =
        {"ap_process.pin",
         "INSERT INTO status_pins (tenant_id, account_id, status_id) SELECT $1, $2::bigint, s.id"
         " FROM statuses s WHERE s.tenant_id = $1 AND s.uri = $3 AND s.account_id = $2::bigint"
         " AND s.deleted_at IS NULL AND s.reblog_of_id IS NULL ON CONFLICT DO NOTHING"},
    [STATUS_UNPIN] = {"ap_process.unpin",
                      "DELETE FROM status_pins WHERE tenant_id = $1 AND account_id = $2::bigint"
                      " AND status_id IN (SELECT id FROM statuses WHERE tenant_id = $1 AND uri = $3"
                      " AND account_id = $2::bigint)"},
    {0},
};

static bool
is_actor_type(const char *t)
{
    return t && (strcmp(t, "Person") == 0 || strcmp(t, "Service") == 0 ||
                 strcmp(t, "Application") == 0 || strcmp(t, "Group") == 0 ||
                 strcmp(t, "Organization") == 0);
}

static void
notify_rows(struct eu_proc *p, PGresult *res, int type_col, int id_col, const char *type,
            int64_t status_id)
{
    int64_t from = strtoll(p->actor_id, NULL, 10);
    for (int i = 0; i < PQntuples(res); i++)
        eu_notify(p->app->registry, p->t, strtoll(PQgetvalue(res, i, id_col), NULL, 10), from,
                  type_col >= 0 ? PQgetvalue(res, i, type_col) : type, status_id);
}

/* Parse failures are the document's fault: dropped, not retried. */
static bool
parsed_ok(struct eu_proc *p)
{
    if (p->parse_rc != 0) {
        eu_proc_skip(p, p->err.message);
        return false;
    }
    return true;
}

/* The statement queued an emoji_fetch job for each emoji it added or
 * changed (src/ap/ingest_store.c): they run now, not at the next poll. */
static void
wake_emoji_fetch(struct eu_proc *p, size_t n_emojis)
{
    if (n_emojis > 0)
        eu_queue_wake(p->t, EU_QUEUE_MEDIA, 0);
}

static bool
on_stored_status(struct eu_proc *p, const char *id, int status)
{
    if (status != EU_DB_OK) {
        eu_proc_finish(p, "cannot store a remote status");
        return false;
    }
    if (!id) {
        eu_proc_skip(p, "nothing to change");
        return false;
    }
    p->s1 = eu_arena_strdup(p->arena, id);
    wake_emoji_fetch(p, p->note.n_emojis);
    return true;
}

/* -------------------------------------------------------------- Create */

static void
on_new_notify(struct eu_proc *p, PGresult *res)
{
    notify_rows(p, res, 0, 1, NULL, strtoll(p->s1, NULL, 10));
    eu_proc_finish(p, NULL);
}

static void
created_fanout(struct eu_proc *p)
{
    eu_feed_status_fanout(p->app, p->t, strtoll(p->s1, NULL, 10), false);
    const char *params[] = {p->s1, p->actor_id};
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_NEW_NOTIFY], 2, params, on_new_notify);
}

/* What it quotes (src/ap/process_quote.c), before it is fanned out. */
static void
created_quote(struct eu_proc *p)
{
    eu_proc_quote_note(p, p->s1, created_fanout);
}

static void
on_created(const char *id, int status, void *arg)
{
    struct eu_proc *p = arg;
    if (!on_stored_status(p, id, status))
        return;
    /* Its link's preview card, as a remote status gets one in Mastodon. */
    if (eu_card_candidate(p->note.content))
        eu_card_enqueue(p->app, p->t, p->s1, false);
    eu_proc_poll_store(p, p->s1, created_quote);
}

static void
on_relevance(struct eu_proc *p, PGresult *res)
{
    if (PQgetvalue(res, 0, 1)[0] == 't') {
        eu_proc_skip(p, "already stored");
        return;
    }
    /* A quote of a local post concerns its author, as in Mastodon. */
    if (PQgetvalue(res, 0, 0)[0] != 't' && !eu_proc_quotes_local(p)) {
        eu_proc_skip(p, "concerns nobody here");
        return;
    }
    eu_ingest_status_store(eu_proc_conn(p), &p->note, p->actor_id, p->base, on_created, p);
}

/* Adds the local usernames among v (a string or an array of them) to names,
 * up to its cap. */
static void
add_local_names(struct eu_proc *p, json_t *names, json_t *v)
{
    if (json_is_string(v)) {
        const char *n = eu_proc_local_name(p, json_string_value(v));
        if (n && json_array_size(names) < EU_PROC_MAX_LOCAL_NAMES)
            json_array_append_new(names, json_string(n));
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        if (i >= EU_AP_MAX_RECIPIENTS)
            break;
        add_local_names(p, names, json_is_string(e) ? e : NULL);
    }
}

static void
on_create_parsed(struct eu_proc *p)
{
    if (!parsed_ok(p))
        return;
    if (!p->note.attributed_to || strcmp(p->note.attributed_to, p->actor_uri) != 0) {
        eu_proc_skip(p, "the note is not the actor's");
        return;
    }
    json_t *names = json_array();
    for (size_t i = 0; i < p->note.n_mentions; i++) {
        const char *n = eu_proc_local_name(p, p->note.mentions[i].href);
        if (n && json_array_size(names) < EU_PROC_MAX_LOCAL_NAMES)
            json_array_append_new(names, json_string(n));
    }
    add_local_names(p, names, json_object_get(p->object, "to"));
    add_local_names(p, names, json_object_get(p->object, "cc"));
    char *text = json_dumps(names, JSON_COMPACT);
    json_decref(names);
    const char *params[] = {p->actor_id, eu_arena_strdup(p->arena, text), p->note.in_reply_to,
                            eu_proc_local_status_id(p, p->note.in_reply_to), p->note.id};
    free(text);
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_RELEVANT], 5, params, on_relevance);
}

static void
decref_doc(void *doc)
{
    json_decref(doc);
}

/*
 * What a signed fetch of p->object_id brought (eu_ap_fetch_cb's arguments),
 * made the activity's object, kept until p ends. The fetch checked the id
 * is on the host it came from; here it must be the note that was named.
 * false: p was skipped (nothing fetched, or not that note) or finished
 * with an error to retry (its server unavailable for now).
 */
static bool
take_fetched_note(struct eu_proc *p, json_t *doc, const struct eu_error *err)
{
    if (err && (err->status == 503 || err->status == 504)) {
        /* Its server is down or slow for now: the job is retried with the
         * queue's backoff, and when it runs out of attempts the sender's
         * next delivery of it is taken again (eu_ap_inbox_job_dead()). */
        char msg[EU_ERROR_MSG_MAX + 64];
        snprintf(msg, sizeof(msg), "cannot fetch the object it names: %s", err->message);
        eu_proc_finish(p, msg);
        return false;
    }
    if (err) {
        eu_proc_skip(p, "the object it names cannot be fetched");
        return false;
    }
    const char *type = json_string_value(json_object_get(doc, "type"));
    const char *id = json_string_value(json_object_get(doc, "id"));
    if (!eu_ap_is_note_type(type) || !id || strcmp(id, p->object_id) != 0) {
        eu_proc_skip(p, "the object it names is not that note");
        return false;
    }
    p->object = json_incref(doc);
    eu_arena_on_free(p->arena, decref_doc, doc);
    p->object_type = eu_arena_strdup(p->arena, type);
    return true;
}

static void
on_create_fetched(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct eu_proc *p = arg;
    (void)final_url;
    if (take_fetched_note(p, doc, err))
        eu_proc_parse_note(p, on_create_parsed);
}

void
eu_proc_create(struct eu_proc *p)
{
    if (!json_is_object(p->object)) {
        /* By reference, as Mastodon takes it: fetched from its origin
         * (signed), and still the actor's own note or nothing. */
        if (!p->object_id) {
            eu_proc_skip(p, "creates nothing");
            return;
        }
        /* Detached while it waits: the host may be slow on purpose. */
        eu_proc_fetch_signed(p, p->object_id, on_create_fetched);
        return;
    }
    if (eu_proc_is_vote(p)) {
        eu_proc_poll_vote(p);
        return;
    }
    if (!eu_ap_is_note_type(p->object_type)) {
        eu_proc_skip(p, "not a note");
        return;
    }
    eu_proc_parse_note(p, on_create_parsed);
}

/* -------------------------------------------------------------- Update */

/* The local rebloggers get "update" about the status, and the local
 * authors of accepted quotes of it Mastodon 4.5's "quoted_update" about
 * their own quote (its FanOutOnWriteService#notify_about_update!). */
static void
on_rebloggers(struct eu_proc *p, PGresult *res)
{
    int64_t from = strtoll(p->actor_id, NULL, 10);
    for (int i = 0; i < PQntuples(res); i++)
        eu_notify(p->app->registry, p->t, strtoll(PQgetvalue(res, i, 0), NULL, 10), from,
                  PQgetvalue(res, i, 1), strtoll(PQgetvalue(res, i, 2), NULL, 10));
    eu_stream_status_edited(p->app, p->t, strtoll(p->s1, NULL, 10));
    eu_proc_finish(p, NULL);
}

static void
on_edited(const char *id, int status, void *arg)
{
    struct eu_proc *p = arg;
    if (!on_stored_status(p, id, status))
        return;
    /* Its card follows its new text (src/social/cards.c). */
    eu_card_enqueue(p->app, p->t, p->s1, true);
    const char *params[] = {p->s1};
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_REBLOGGERS], 1, params, on_rebloggers);
}

static void
edit_store(struct eu_proc *p)
{
    eu_ingest_status_store(eu_proc_conn(p), &p->note, p->actor_id, p->base, on_edited, p);
}

/* Its quote policy and its quote (a new authorization, another quoted
 * post, or none any more after an explicit edit) are the Note's now,
 * whatever the text does: Mastodon 4.5 sends an Update for a changed
 * interaction policy without editing the post (src/ap/process_quote.c).
 * Before edit_store, which moves edited_at the removal is judged by.
 * p->s2 is the status. */
static void
update_quote(struct eu_proc *p)
{
    eu_proc_quote_update(p, p->s2, edit_store);
}

/* A Question's counts change without an edit (Mastodon's poll Updates):
 * its poll is stored first, whatever the text does. */
static void
on_mine(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) == 0) {
        eu_proc_skip(p, "updates a status we do not have");
        return;
    }
    p->s2 = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 0));
    eu_proc_poll_store(p, p->s2, update_quote);
}

static void
on_update_parsed(struct eu_proc *p)
{
    if (!parsed_ok(p))
        return;
    if (!p->note.attributed_to || strcmp(p->note.attributed_to, p->actor_uri) != 0) {
        eu_proc_skip(p, "the note is not the actor's");
        return;
    }
    const char *params[] = {p->note.id, p->actor_id};
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_MINE], 2, params, on_mine);
}

static void
on_actor_upserted(const char *id, int status, void *arg)
{
    struct eu_proc *p = arg;
    if (status == EU_DB_OK)
        wake_emoji_fetch(p, p->parsed_actor.n_emojis);
    eu_proc_finish(p, status == EU_DB_OK ? NULL : "cannot store the updated actor");
}

static void
on_actor_parsed(struct eu_proc *p)
{
    if (!parsed_ok(p))
        return;
    if (strcmp(p->parsed_actor.id, p->actor_uri) != 0) {
        eu_proc_skip(p, "updates another actor");
        return;
    }
    eu_ingest_account_upsert(eu_proc_conn(p), &p->parsed_actor, on_actor_upserted, p);
}

void
eu_proc_update(struct eu_proc *p)
{
    if (!json_is_object(p->object)) {
        eu_proc_skip(p, "object by reference");
        return;
    }
    if (eu_ap_is_note_type(p->object_type)) {
        eu_proc_parse_note(p, on_update_parsed);
    } else if (is_actor_type(p->object_type)) {
        if (!p->object_id || strcmp(p->object_id, p->actor_uri) != 0) {
            eu_proc_skip(p, "updates another actor");
            return;
        }
        eu_proc_parse_actor(p, on_actor_parsed);
    } else {
        eu_proc_skip(p, "updates an unknown type");
    }
}

/* -------------------------------------------------------------- Delete */

static void
on_deleted(const char *id, int status, void *arg)
{
    struct eu_proc *p = arg;
    if (!on_stored_status(p, id, status))
        return;
    eu_feed_status_fanout(p->app, p->t, strtoll(p->s1, NULL, 10), true);
    eu_proc_finish(p, NULL);
}

void
eu_proc_delete(struct eu_proc *p)
{
    if (!p->object_id) {
        eu_proc_skip(p, "deletes nothing");
        return;
    }
    if (strcmp(p->object_id, p->actor_uri) == 0) {
        eu_proc_delete_actor(p);
        return;
    }
    /* Only the author's own: the statement matches the actor's uri. */
    eu_ingest_status_delete(eu_proc_conn(p), p->object_id, p->actor_uri, on_deleted, p);
}

/* ---------------------------------------------------------------- Like */

static void
on_liked(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) > 0 && PQgetvalue(res, 0, 2)[0] == 't') {
        eu_notify(p->app->registry, p->t, strtoll(PQgetvalue(res, 0, 1), NULL, 10),
                  strtoll(p->actor_id, NULL, 10), "favourite",
                  strtoll(PQgetvalue(res, 0, 0), NULL, 10));
        eu_trends_touch(p->app, p->t);
    }
    eu_proc_finish(p, NULL);
}

void
eu_proc_like(struct eu_proc *p)
{
    if (!p->object_id) {
        eu_proc_skip(p, "likes nothing");
        return;
    }
    const char *params[] = {p->actor_id, p->object_id, eu_proc_local_status_id(p, p->object_id),
                            p->id};
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_LIKE], 4, params, on_liked);
}

/* ------------------------------------------------------------ Announce */

/* Whether the Public collection is in v (a string or an array). */
static bool
has_public(json_t *v)
{
    if (json_is_string(v))
        return strcmp(json_string_value(v), EU_AP_PUBLIC) == 0 ||
               strcmp(json_string_value(v), "as:Public") == 0 ||
               strcmp(json_string_value(v), "Public") == 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        if (i >= EU_AP_MAX_RECIPIENTS)
            break;
        if (json_is_string(e) && has_public(e))
            return true;
    }
    return false;
}

static void announce_run(struct eu_proc *p);

/*
 * A boost of a remote status this tenant does not have, by someone a local
 * account follows: the status is fetched from its origin (signed by the
 * tenant's instance actor), its author resolved, the status stored, and the
 * boost tried again, as Mastodon does. p->n1 marks that this was done, so
 * a status that still does not fit is dropped, not fetched again.
 */
static void
on_boosted_stored(const char *id, int status, void *arg)
{
    struct eu_proc *p = arg;
    if (status != EU_DB_OK) {
        eu_proc_finish(p, "cannot store the boosted status");
        return;
    }
    wake_emoji_fetch(p, p->note.n_emojis);
    announce_run(p);
}

/* p->s3: the boosted status's author. */
static void
store_boosted(struct eu_proc *p)
{
    eu_ingest_status_store(eu_proc_conn(p), &p->note, p->s3, p->base, on_boosted_stored, p);
}

static void
on_boosted_author(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct eu_proc *p = arg;
    if (err || r->local) {
        eu_proc_skip(p, "the boosted status's author cannot be resolved");
        return;
    }
    p->s3 = eu_arena_strdup(p->arena, r->account_id);
    /* The job waited detached: a connection first. */
    eu_proc_with_conn(p, store_boosted);
}

static void
on_boosted_parsed(struct eu_proc *p)
{
    if (!parsed_ok(p))
        return;
    if (!p->note.attributed_to) {
        eu_proc_skip(p, "the boosted status has no author");
        return;
    }
    eu_proc_resolve_actor(p, p->note.attributed_to, false, on_boosted_author);
}

static void
on_boosted_fetched(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct eu_proc *p = arg;
    (void)final_url;
    char host[300];
    if (!take_fetched_note(p, doc, err))
        return;
    if (eu_fetch_host_of(p->object_id, host, sizeof(host)) < 0) {
        eu_proc_skip(p, "the boosted status has no host");
        return;
    }
    /* The note is its host's to describe (not the booster's): it is
     * parsed as coming from there. */
    p->actor_host = eu_arena_strdup(p->arena, host);
    p->actor_followers = NULL;
    eu_proc_parse_note(p, on_boosted_parsed);
}

static void
on_announce_unknown(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) != 1 || PQgetvalue(res, 0, 0)[0] != 't') {
        eu_proc_skip(p, "boosts nothing this tenant keeps");
        return;
    }
    p->n1 = 1;
    eu_proc_fetch_signed(p, p->object_id, on_boosted_fetched);
}

static void
on_announced(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) > 0) {
        eu_feed_status_fanout(p->app, p->t, strtoll(PQgetvalue(res, 0, 0), NULL, 10), false);
        if (PQgetvalue(res, 0, 3)[0] == 't')
            eu_notify(p->app->registry, p->t, strtoll(PQgetvalue(res, 0, 2), NULL, 10),
                      strtoll(p->actor_id, NULL, 10), "reblog",
                      strtoll(PQgetvalue(res, 0, 1), NULL, 10));
    } else if (!p->n1 && !eu_proc_local_status_id(p, p->object_id) &&
               strncmp(p->object_id, p->base, strlen(p->base)) != 0) {
        const char *params[] = {p->actor_id, p->object_id};
        eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_ANNOUNCE_UNKNOWN], 2, params,
                     on_announce_unknown);
        return;
    }
    eu_proc_finish(p, NULL);
}

static void
announce_run(struct eu_proc *p)
{
    const char *vis = has_public(json_object_get(p->activity, "to"))   ? "0"
                      : has_public(json_object_get(p->activity, "cc")) ? "1"
                                                                       : "2";
    const char *params[] = {p->actor_id, p->object_id, eu_proc_local_status_id(p, p->object_id),
                            p->id, vis};
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_ANNOUNCE], 5, params, on_announced);
}

void
eu_proc_announce(struct eu_proc *p)
{
    if (!p->object_id || !p->id) {
        eu_proc_skip(p, "announces nothing, or has no id");
        return;
    }
    announce_run(p);
}

/* ---------------------------------------------------------------- Flag */

static void
on_flagged(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) > 0)
        eu_log_info("ap", "report %s from '%s'", PQgetvalue(res, 0, 0), p->actor_uri);
    eu_proc_finish(p, NULL);
}

/* s cut to at most max bytes on a character boundary (the comment is plain
 * text; a longer one is cut rather than refused), in p's arena. */
static const char *
cut_text(struct eu_proc *p, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return s;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return eu_arena_strndup(p->arena, s, n);
}

void
eu_proc_flag(struct eu_proc *p)
{
    json_t *objs = p->object;
    json_t *names = json_array(), *ids = json_array();
    size_t n = json_is_array(objs) ? json_array_size(objs) : 1;
    for (size_t i = 0; i < n && i < EU_PROC_MAX_FLAG_OBJECTS; i++) {
        const char *uri = eu_proc_json_id(json_is_array(objs) ? json_array_get(objs, i) : objs);
        const char *name = eu_proc_local_name(p, uri);
        const char *sid = eu_proc_local_status_id(p, uri);
        if (name)
            json_array_append_new(names, json_string(name));
        if (sid)
            json_array_append_new(ids, json_string(sid));
    }
    const char *content = json_string_value(json_object_get(p->activity, "content"));
    char *tn = json_dumps(names, JSON_COMPACT), *ti = json_dumps(ids, JSON_COMPACT);
    json_decref(names);
    json_decref(ids);
    const char *params[] = {p->actor_id, eu_arena_strdup(p->arena, tn),
                            eu_arena_strdup(p->arena, ti),
                            cut_text(p, content ? content : "", EU_AP_MAX_TEXT), p->id};
    free(tn);
    free(ti);
    eu_proc_stmt(p, &eu_ap_process_status_sql[STATUS_FLAG], 5, params, on_flagged);
}

/* ------------------------------------------------------- Add / Remove */

static void
on_featured(struct eu_proc *p, PGresult *res)
{
    (void)res;
    eu_proc_finish(p, NULL);
}

void
eu_proc_featured(struct eu_proc *p, bool add)
{
    if (p->object_type && strcmp(p->object_type, "Hashtag") == 0) {
        eu_proc_featured_tag(p, add);
        return;
    }
    const char *target = eu_proc_json_id(json_object_get(p->activity, "target"));
    if (!target || !p->actor_featured || strcmp(target, p->actor_featured) != 0 || !p->object_id) {
        eu_proc_skip(p, "not about the actor's featured collection");
        return;
    }
    /* TODO(resolve): a status we do not have is not fetched yet. */
    const char *params[] = {p->actor_id, p->object_id};
    eu_proc_stmt(p, &eu_ap_process_status_sql[add ? STATUS_PIN : STATUS_UNPIN], 2, params,
                 on_featured);
}
