/*
 * Received activities about the social graph: Follow (and our Accept or
 * Reject of it), Accept and Reject of follows we sent (and Undo of such an
 * Accept), Undo of a follow, like, boost or block, Block, Move, and an
 * actor deleting itself.
 *
 * Follows keep the Follow activity's id in their uri, the remote one for a
 * remote follower and ours for a local follower of a remote account, so an
 * Undo, Accept or Reject naming only that id finds the row. Each change is
 * one statement; the triggers of migration 0013 keep follower counts. Home
 * feeds that a change alters are dropped, to be rebuilt on their next read.
 */
#include "process_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/feeds.h"
#include "eunha/log.h"
#include "eunha/notify.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum {
    FOLLOW_TARGET,
    FOLLOW_CREATE,
    FOLLOW_REQUEST,
    FOLLOW_ACCEPTED,
    FOLLOW_REJECTED,
    FOLLOW_UNDO,
    FOLLOW_BLOCK,
    FOLLOW_MOVE_TARGET,
    FOLLOW_MOVE,
    FOLLOW_ACTOR_DELETE,
    FOLLOW_UNACCEPT,
};

/* The local account ($4: a username) a remote follow or block names. */
#define LOCAL_BY_NAME                                                                              \
    "SELECT id FROM accounts WHERE tenant_id = $1 AND domain IS NULL"                              \
    " AND lower(username) = lower($4) AND username <> 'instance.actor'"

const struct eu_sql eu_ap_process_follow_sql[] = {
    /* $2 the remote actor, $3 the local username: the account, whether it
     * refuses (it blocks the actor or its domain, or moved away: Mastodon
     * rejects all three), whether the actor follows it already. */
    [FOLLOW_TARGET] = {"ap_process.follow_target",
                       "SELECT a.id::text, a.locked, a.username,"
                       " a.moved_to_account_id IS NOT NULL OR EXISTS (SELECT 1 FROM blocks b"
                       "  WHERE b.tenant_id = $1 AND b.account_id = a.id"
                       "  AND b.target_account_id = $2::bigint)"
                       /* or blocks the actor's domain, as Mastodon's Follow does */
                       " OR EXISTS (SELECT 1 FROM accounts r JOIN account_domain_blocks d"
                       "  ON d.tenant_id = $1 AND d.account_id = a.id AND d.domain = r.domain"
                       "  WHERE r.tenant_id = $1 AND r.id = $2::bigint),"
                       " EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
                       "  AND f.account_id = $2::bigint AND f.target_account_id = a.id)"
                       " FROM accounts a WHERE a.tenant_id = $1 AND a.domain IS NULL"
                       " AND lower(a.username) = lower($3) AND a.suspended_at IS NULL"
                       " AND a.username <> 'instance.actor'"},
    /* $2 follower, $3 followed, $4 the Follow's id. A pending request
     * becomes the follow (the account was unlocked meanwhile). */
    [FOLLOW_CREATE] = {"ap_process.follow_create",
                       "WITH dr AS (DELETE FROM follow_requests WHERE tenant_id = $1"
                       " AND account_id = $2::bigint AND target_account_id = $3::bigint)"
                       " INSERT INTO follows (tenant_id, account_id, target_account_id, uri)"
                       " VALUES ($1, $2::bigint, $3::bigint, $4)"
                       " ON CONFLICT (tenant_id, account_id, target_account_id)"
                       " DO UPDATE SET uri = coalesce(excluded.uri, follows.uri)"
                       " RETURNING id::text, xmax = 0"},
    [FOLLOW_REQUEST] = {"ap_process.follow_request",
                        "INSERT INTO follow_requests (tenant_id, account_id, target_account_id,"
                        " uri) VALUES ($1, $2::bigint, $3::bigint, $4)"
                        " ON CONFLICT (tenant_id, account_id, target_account_id)"
                        " DO UPDATE SET uri = coalesce(excluded.uri, follow_requests.uri)"
                        " RETURNING id::text, xmax = 0"},
    /* Accept of our follow: $2 the remote actor (followed), $3 our Follow's
     * id, $4 the local follower's username when the Follow was embedded.
     * Returns the local follower. */
    [FOLLOW_ACCEPTED] = {"ap_process.follow_accepted",
                         "WITH r AS (DELETE FROM follow_requests WHERE tenant_id = $1"
                         " AND target_account_id = $2::bigint AND (uri = $3 OR account_id IN"
                         " (" LOCAL_BY_NAME ")) RETURNING account_id, show_reblogs, notify,"
                         " languages, uri)"
                         " INSERT INTO follows (tenant_id, account_id, target_account_id,"
                         " show_reblogs, notify, languages, uri) SELECT $1, account_id,"
                         " $2::bigint, show_reblogs, notify, languages, uri FROM r"
                         " ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING"
                         " RETURNING account_id::text"},
    /* Reject of our follow, pending or accepted before: as above. */
    [FOLLOW_REJECTED] = {"ap_process.follow_rejected",
                         "WITH r AS (DELETE FROM follow_requests WHERE tenant_id = $1"
                         " AND target_account_id = $2::bigint AND (uri = $3 OR account_id IN"
                         " (" LOCAL_BY_NAME ")) RETURNING account_id),"
                         " f AS (DELETE FROM follows WHERE tenant_id = $1"
                         " AND target_account_id = $2::bigint AND (uri = $3 OR account_id IN"
                         " (" LOCAL_BY_NAME ")) RETURNING account_id)"
                         " SELECT account_id::text FROM r UNION SELECT account_id::text FROM f"},
    /*
     * Undo: $2 the actor, $3 the undone activity's id, $4 the local
     * username and $5/$6 the status (uri, local id) its object names, $7
     * its type or NULL when only its id is known (then only the id
     * matches). Returns what changed: ('reblog', status id) for boosts
     * withdrawn, whose feeds must drop them.
     */
    [FOLLOW_UNDO] =
        {"ap_process.undo",
         "WITH la AS (" LOCAL_BY_NAME "),"
         " st AS (SELECT id FROM statuses WHERE tenant_id = $1 AND ((uri = $5)"
         "  OR (local AND id = $6::bigint))),"
         " df AS (DELETE FROM follows WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND coalesce($7::text, 'Follow') = 'Follow' AND (uri = $3 OR ($7::text IS NOT NULL"
         "  AND target_account_id IN (SELECT id FROM la))) RETURNING target_account_id),"
         " dr AS (DELETE FROM follow_requests WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND coalesce($7::text, 'Follow') = 'Follow' AND (uri = $3 OR ($7::text IS NOT NULL"
         "  AND target_account_id IN (SELECT id FROM la))) RETURNING target_account_id),"
         " db AS (DELETE FROM blocks WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND coalesce($7::text, 'Block') = 'Block' AND (uri = $3 OR ($7::text IS NOT NULL"
         "  AND target_account_id IN (SELECT id FROM la))) RETURNING target_account_id),"
         " dv AS (DELETE FROM favourites WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND coalesce($7::text, 'Like') = 'Like' AND (uri = $3 OR ($7::text IS NOT NULL"
         "  AND status_id IN (SELECT id FROM st))) RETURNING status_id),"
         " dn AS (UPDATE statuses SET deleted_at = now() WHERE tenant_id = $1"
         "  AND account_id = $2::bigint AND reblog_of_id IS NOT NULL AND deleted_at IS NULL"
         "  AND NOT local AND coalesce($7::text, 'Announce') = 'Announce' AND (uri = $3"
         "  OR ($7::text IS NOT NULL AND reblog_of_id IN (SELECT id FROM st))) RETURNING id)"
         " SELECT 'reblog', id::text FROM dn UNION ALL SELECT 'follow', target_account_id::text"
         " FROM df UNION ALL SELECT 'request', target_account_id::text FROM dr"
         " UNION ALL SELECT 'block', target_account_id::text FROM db"
         " UNION ALL SELECT 'favourite', status_id::text FROM dv"},
    /* A remote account blocks a local one ($4): follows both ways end.
     * Returns the local account. */
    [FOLLOW_BLOCK] = {"ap_process.block",
                      "WITH la AS (" LOCAL_BY_NAME "),"
                      " b AS (INSERT INTO blocks (tenant_id, account_id, target_account_id, uri)"
                      "  SELECT $1, $2::bigint, id, $3 FROM la ON CONFLICT DO NOTHING),"
                      " f AS (DELETE FROM follows WHERE tenant_id = $1 AND ((account_id ="
                      "  $2::bigint AND target_account_id IN (SELECT id FROM la)) OR (account_id"
                      "  IN (SELECT id FROM la) AND target_account_id = $2::bigint))),"
                      " r AS (DELETE FROM follow_requests WHERE tenant_id = $1 AND ((account_id ="
                      "  $2::bigint AND target_account_id IN (SELECT id FROM la)) OR (account_id"
                      "  IN (SELECT id FROM la) AND target_account_id = $2::bigint)))"
                      " SELECT id::text FROM la"},
    /* $2 the new account's uri, $3 the old one's, $4 the username when $2
     * is one of this tenant's own actor URIs: is it known, does it say it
     * is also the old one, is it local. */
    [FOLLOW_MOVE_TARGET] = {"ap_process.move_target",
                            "SELECT id::text, coalesce(inbox_url, shared_inbox_url),"
                            " $3 = ANY (also_known_as), domain IS NULL FROM accounts"
                            " WHERE tenant_id = $1 AND suspended_at IS NULL"
                            " AND ((domain IS NOT NULL AND uri = $2) OR ($4::text IS NOT NULL"
                            " AND domain IS NULL AND lower(username) = lower($4)"
                            " AND username <> 'instance.actor'))"},
    /*
     * What Mastodon's MoveWorker carries from the old account ($2) to the
     * new one ($3, its uri $4; $5 BASE), in one statement:
     *
     * - Local followers of the old account follow the new one instead. A
     *   remote one gets a request that keeps its Follow's id, to be sent;
     *   a local one (its alias is this tenant's own account) a follow even
     *   if it is locked (Mastodon's MoveWorker bypasses the lock for a
     *   local target: it asked for these followers by naming the old
     *   account), and no Follow goes anywhere. Those who
     *   follow or asked already only drop the old follow; those who block
     *   the new account or are blocked by it keep the old one (Mastodon's
     *   FollowService refuses them and the unfollow never runs), as does
     *   the new account itself.
     * - The old account's places in those followers' lists go to the new
     *   one (list members must be followed or asked).
     * - Local accounts blocking the old account block the new one (follows
     *   and requests between them end), and those muting it mute it alike
     *   (for good, as Mastodon's carried mute is, whatever the old one's
     *   expiry), unless they already do or follow it; nobody is notified.
     *
     * Returns (what, local account, username, Follow id): 'request' for a
     * Follow to send, 'follow' and 'follow_request' for a notification,
     * 'block' for a Block to send to a remote account, and 'unfollow' and
     * 'mute' for feeds that changed.
     */
    [FOLLOW_MOVE] =
        {"ap_process.move",
         "WITH tg AS (SELECT domain IS NULL AS local FROM accounts WHERE tenant_id = $1"
         "  AND id = $3::bigint),"
         " mv AS (UPDATE accounts SET moved_to_account_id = $3::bigint, moved_to_uri = $4,"
         "  updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint),"
         " lf AS (DELETE FROM follows f USING accounts la WHERE f.tenant_id = $1"
         "  AND la.tenant_id = $1 AND la.id = f.account_id AND la.domain IS NULL"
         "  AND f.target_account_id = $2::bigint AND f.account_id <> $3::bigint"
         "  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1"
         "  AND ((b.account_id = f.account_id AND b.target_account_id IN ($2::bigint, $3::bigint))"
         "  OR (b.account_id = $3::bigint AND b.target_account_id = f.account_id)))"
         "  RETURNING f.account_id, la.username, f.show_reblogs, f.notify, f.languages),"
         " nr AS (SELECT lf.*, eunha_next_id() AS nid FROM lf WHERE NOT EXISTS (SELECT 1"
         "  FROM follows x WHERE x.tenant_id = $1 AND x.account_id = lf.account_id"
         "  AND x.target_account_id = $3::bigint)),"
         " rq AS (INSERT INTO follow_requests (tenant_id, id, account_id, target_account_id,"
         "  show_reblogs, notify, languages, uri) SELECT $1, nid, account_id, $3::bigint,"
         "  show_reblogs, notify, languages, CASE WHEN NOT tg.local THEN $5::text || '/users/'"
         "  || username || '#follows/' || nid END FROM nr, tg WHERE NOT tg.local"
         "  ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING"
         "  RETURNING account_id, uri),"
         " fo AS (INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs,"
         "  notify, languages) SELECT $1, account_id, $3::bigint, show_reblogs, notify, languages"
         "  FROM nr, tg WHERE tg.local AND NOT EXISTS (SELECT 1"
         "  FROM follow_requests y WHERE y.tenant_id = $1 AND y.account_id = nr.account_id"
         "  AND y.target_account_id = $3::bigint)"
         "  ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING"
         "  RETURNING account_id),"
         " li AS (INSERT INTO list_accounts (tenant_id, list_id, account_id)"
         "  SELECT $1, m.list_id, $3::bigint FROM list_accounts m JOIN lists l"
         "  ON l.tenant_id = $1 AND l.id = m.list_id WHERE m.tenant_id = $1"
         "  AND m.account_id = $2::bigint AND l.account_id IN (SELECT account_id FROM lf)"
         "  ON CONFLICT DO NOTHING),"
         " lo AS (DELETE FROM list_accounts m USING lists l WHERE m.tenant_id = $1"
         "  AND l.tenant_id = $1 AND l.id = m.list_id AND m.account_id = $2::bigint"
         "  AND l.account_id IN (SELECT account_id FROM lf))," EU_MOVE_CARRY_SQL
         " SELECT 'request', rq.account_id::text, la.username, rq.uri FROM rq JOIN accounts la"
         " ON la.tenant_id = $1 AND la.id = rq.account_id WHERE rq.uri IS NOT NULL"
         " UNION ALL SELECT 'follow_request', account_id::text, NULL, NULL FROM rq"
         " WHERE uri IS NULL"
         " UNION ALL SELECT 'follow', account_id::text, NULL, NULL FROM fo"
         " UNION ALL SELECT 'unfollow', account_id::text, NULL, NULL FROM lf"
         " UNION ALL SELECT 'block', account_id::text, NULL, NULL FROM nb"
         " UNION ALL SELECT 'mute', account_id::text, NULL, NULL FROM nm"},
    /* The actor deleted itself: suspended (its data goes with the
     * suspended-account cleanup), its follows gone. Returns its local
     * followers, whose feeds change. */
    [FOLLOW_ACTOR_DELETE] =
        {"ap_process.actor_delete",
         "WITH a AS (UPDATE accounts SET suspended_at = coalesce(suspended_at, now()),"
         "  updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint AND domain IS NOT NULL),"
         " f AS (DELETE FROM follows WHERE tenant_id = $1 AND (account_id = $2::bigint"
         "  OR target_account_id = $2::bigint) RETURNING account_id, target_account_id),"
         " r AS (DELETE FROM follow_requests WHERE tenant_id = $1 AND (account_id = $2::bigint"
         "  OR target_account_id = $2::bigint))"
         " SELECT account_id::text FROM f WHERE target_account_id = $2::bigint"},
    /* Undo of the Accept of our follow: $2 the remote actor (followed), $3
     * our Follow's id, $4 the local follower's username when the Follow
     * was embedded. The follow becomes a request again, its settings and
     * id kept (Mastodon's Follow#revoke_request!). Returns the local
     * follower, whose feed changes. */
    [FOLLOW_UNACCEPT] = {"ap_process.follow_unaccepted",
                         "WITH f AS (DELETE FROM follows WHERE tenant_id = $1"
                         " AND target_account_id = $2::bigint AND (uri = $3 OR account_id IN"
                         " (" LOCAL_BY_NAME ")) RETURNING account_id, show_reblogs, notify,"
                         " languages, uri)"
                         " INSERT INTO follow_requests (tenant_id, account_id, target_account_id,"
                         " show_reblogs, notify, languages, uri) SELECT $1, account_id,"
                         " $2::bigint, show_reblogs, notify, languages, uri FROM f"
                         " ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING"
                         " RETURNING account_id::text"},
    {0},
};

static void
invalidate_rows(struct eu_proc *p, PGresult *res, int c)
{
    for (int i = 0; i < PQntuples(res); i++)
        eu_feed_home_invalidate(p->app, p->t, strtoll(PQgetvalue(res, i, c), NULL, 10));
}

static void
done(struct eu_proc *p)
{
    eu_proc_finish(p, NULL);
}

/* ------------------------------------------------------------- Follow */

/* The Follow as Accept and Reject name it. */
static json_t *
follow_object(struct eu_proc *p)
{
    json_t *o = json_pack("{s:s, s:s, s:s}", "type", "Follow", "actor", p->actor_uri, "object",
                          p->object_id);
    if (p->id)
        json_object_set_new(o, "id", json_string(p->id));
    return o;
}

static void
send_answer(struct eu_proc *p, const char *type, const char *local_id, const char *username,
            const char *suffix)
{
    const char *actor = eu_proc_local_uri(p, username);
    const char *id = eu_arena_sprintf(p->arena, "%s#%s", actor, suffix);
    json_t *act = json_pack("{s:s, s:s, s:s, s:o}", "id", id, "type", type, "actor", actor,
                            "object", follow_object(p));
    eu_ap_process_send(p, p->actor_inbox, act, local_id, id, done);
}

static void
on_follow_created(struct eu_proc *p, PGresult *res)
{
    const char *row = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 0));
    if (PQgetvalue(res, 0, 1)[0] == 't')
        eu_notify(p->app->registry, p->t, strtoll(p->s1, NULL, 10), strtoll(p->actor_id, NULL, 10),
                  "follow", 0);
    /* Sent again for a redelivered Follow (the peer may have missed it),
     * but never twice while the first still waits. */
    send_answer(p, "Accept", p->s1, p->s2, eu_arena_sprintf(p->arena, "accepts/follows/%s", row));
}

static void
on_follow_requested(struct eu_proc *p, PGresult *res)
{
    if (PQgetvalue(res, 0, 1)[0] == 't')
        eu_notify(p->app->registry, p->t, strtoll(p->s1, NULL, 10), strtoll(p->actor_id, NULL, 10),
                  "follow_request", 0);
    eu_proc_finish(p, NULL);
}

static void
on_follow_target(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) == 0) {
        eu_proc_skip(p, "no such local account");
        return;
    }
    p->s1 = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 0)); /* local id */
    p->s2 = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 2)); /* username */
    bool locked = PQgetvalue(res, 0, 1)[0] == 't';
    bool blocked = PQgetvalue(res, 0, 3)[0] == 't';
    bool following = PQgetvalue(res, 0, 4)[0] == 't';
    if (blocked) {
        send_answer(p, "Reject", p->s1, p->s2,
                    eu_arena_sprintf(p->arena, "rejects/follows/%s", eu_job_id(p->job)));
        return;
    }
    const char *params[] = {p->actor_id, p->s1, p->id};
    if (locked && !following)
        eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_REQUEST], 3, params, on_follow_requested);
    else
        eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_CREATE], 3, params, on_follow_created);
}

void
eu_proc_follow(struct eu_proc *p)
{
    const char *name = eu_proc_local_name(p, p->object_id);
    if (!name) {
        eu_proc_skip(p, "not a follow of a local account");
        return;
    }
    const char *params[] = {p->actor_id, name};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_TARGET], 2, params, on_follow_target);
}

/* ------------------------------------------------------ Accept, Reject */

static void
on_answered(struct eu_proc *p, PGresult *res)
{
    invalidate_rows(p, res, 0);
    eu_proc_finish(p, NULL);
}

/* Our follow that an Accept or Reject names: by our Follow's id, or by the
 * embedded Follow's actor when it also names the answering actor. */
static void
answer(struct eu_proc *p, int stmt)
{
    const char *name = NULL;
    if (json_is_object(p->object)) {
        if (p->object_type && strcmp(p->object_type, "Follow") != 0) {
            eu_proc_skip(p, "not an answer to a Follow");
            return;
        }
        const char *target = eu_proc_json_id(json_object_get(p->object, "object"));
        if (target && strcmp(target, p->actor_uri) == 0)
            name = eu_proc_local_name(p, eu_proc_json_id(json_object_get(p->object, "actor")));
    }
    if (!p->object_id && !name) {
        eu_proc_skip(p, "names no follow");
        return;
    }
    const char *params[] = {p->actor_id, p->object_id, name};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[stmt], 3, params, on_answered);
}

void
eu_proc_accept(struct eu_proc *p)
{
    answer(p, FOLLOW_ACCEPTED);
}

void
eu_proc_reject(struct eu_proc *p)
{
    answer(p, FOLLOW_REJECTED);
}

/* ---------------------------------------------------------------- Undo */

static void
on_undone(struct eu_proc *p, PGresult *res)
{
    for (int i = 0; i < PQntuples(res); i++)
        if (strcmp(PQgetvalue(res, i, 0), "reblog") == 0)
            eu_feed_status_fanout(p->app, p->t, strtoll(PQgetvalue(res, i, 1), NULL, 10), true);
    eu_proc_finish(p, NULL);
}

/* Undo of an Accept the actor sent for our Follow (Mastodon's
 * undo_accept): the Accept's object names the Follow, by id or embedded. */
static void
undo_accept(struct eu_proc *p)
{
    json_t *follow = json_object_get(p->object, "object");
    const char *follow_id = eu_proc_json_id(follow);
    const char *name = NULL;
    if (json_is_object(follow)) {
        const char *ft = json_string_value(json_object_get(follow, "type"));
        const char *target = eu_proc_json_id(json_object_get(follow, "object"));
        if (ft && strcmp(ft, "Follow") != 0) {
            eu_proc_skip(p, "undoes an Accept of something else");
            return;
        }
        if (target && strcmp(target, p->actor_uri) == 0)
            name = eu_proc_local_name(p, eu_proc_json_id(json_object_get(follow, "actor")));
    }
    if (!follow_id && !name) {
        eu_proc_skip(p, "undoes an Accept that names no follow");
        return;
    }
    const char *params[] = {p->actor_id, follow_id, name};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_UNACCEPT], 3, params, on_answered);
}

void
eu_proc_undo(struct eu_proc *p)
{
    const char *type = NULL, *name = NULL, *status_uri = NULL, *status_id = NULL;
    if (json_is_object(p->object)) {
        type = p->object_type;
        if (type && strcmp(type, "Accept") == 0) {
            const char *by = eu_proc_json_id(json_object_get(p->object, "actor"));
            if (by && strcmp(by, p->actor_uri) != 0) {
                eu_proc_skip(p, "undoes someone else's activity");
                return;
            }
            undo_accept(p);
            return;
        }
        if (!type || (strcmp(type, "Follow") != 0 && strcmp(type, "Like") != 0 &&
                      strcmp(type, "Announce") != 0 && strcmp(type, "Block") != 0)) {
            eu_proc_skip(p, "undoes nothing known");
            return;
        }
        /* An embedded activity is the actor's own or nothing. */
        const char *by = eu_proc_json_id(json_object_get(p->object, "actor"));
        if (by && strcmp(by, p->actor_uri) != 0) {
            eu_proc_skip(p, "undoes someone else's activity");
            return;
        }
        const char *inner = eu_proc_json_id(json_object_get(p->object, "object"));
        name = eu_proc_local_name(p, inner);
        status_uri = inner;
        status_id = eu_proc_local_status_id(p, inner);
    }
    if (!p->object_id && !type) {
        eu_proc_skip(p, "names nothing to undo");
        return;
    }
    const char *params[] = {p->actor_id, p->object_id, name, status_uri, status_id, type};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_UNDO], 6, params, on_undone);
}

/* --------------------------------------------------------------- Block */

void
eu_proc_block(struct eu_proc *p)
{
    const char *name = eu_proc_local_name(p, p->object_id);
    if (!name) {
        eu_proc_skip(p, "not a block of a local account");
        return;
    }
    const char *params[] = {p->actor_id, p->id, name};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_BLOCK], 3, params, on_answered);
}

/* ---------------------------------------------------------------- Move */

static void send_next_follow(struct eu_proc *p);

/* The Follows of FOLLOW_MOVE's 'request' rows, one after the other. */
static void
send_next_follow(struct eu_proc *p)
{
    while (p->row < p->nrows && strcmp(PQgetvalue(p->rows, p->row, 0), "request") != 0)
        p->row++;
    if (p->row >= p->nrows) {
        eu_proc_finish(p, NULL);
        return;
    }
    int i = p->row++;
    const char *local_id = eu_arena_strdup(p->arena, PQgetvalue(p->rows, i, 1));
    const char *id = eu_arena_strdup(p->arena, PQgetvalue(p->rows, i, 3));
    json_t *act = json_pack("{s:s, s:s, s:s, s:s}", "id", id, "type", "Follow", "actor",
                            eu_proc_local_uri(p, PQgetvalue(p->rows, i, 2)), "object", p->s2);
    eu_ap_process_send(p, p->s3, act, local_id, id, send_next_follow);
}

/* Everything but the Follows: notifications of a local new account, the
 * Blocks a remote one must hear of (Mastodon's BlockService sends them),
 * and the feeds that changed. */
static void
on_moved(struct eu_proc *p, PGresult *res)
{
    int64_t target = strtoll(p->s1, NULL, 10);
    for (int i = 0; i < PQntuples(res); i++) {
        const char *what = PQgetvalue(res, i, 0);
        int64_t who = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        eu_feed_home_invalidate(p->app, p->t, who);
        if (strcmp(what, "follow") == 0 || strcmp(what, "follow_request") == 0)
            eu_notify(p->app->registry, p->t, target, who, what, 0);
        else if (strcmp(what, "block") == 0 && p->n1 != 2)
            eu_ap_outbox_account(p->app, p->t, who, p->s1, EU_AP_BLOCK, NULL);
    }
    eu_proc_keep(p, res);
    send_next_follow(p);
}

static void on_move_target(struct eu_proc *p, PGresult *res);

static void
on_move_target_fetched(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct eu_proc *p = arg;
    if (!r) {
        /* The Move cannot be checked: dropped, as Mastodon drops it (a
         * retry would only wait on the same host again). */
        eu_proc_skip(p, err && err->status == 404 ? "the new account does not exist"
                                                  : "the new account cannot be fetched");
        return;
    }
    const char *params[] = {p->s2, p->actor_uri, NULL};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_MOVE_TARGET], 3, params, on_move_target);
}

/* p->n1: 0 before the target was fetched, 1 after, 2 for a local target
 * (never fetched: its row is the truth). */
static void
on_move_target(struct eu_proc *p, PGresult *res)
{
    bool ok = PQntuples(res) == 1 && PQgetvalue(res, 0, 2)[0] == 't';
    if (!ok && !p->n1) {
        /* The target is usually new to us, or its row predates the alias
         * it added just before moving (Mastodon fetches it again too):
         * fetch it once, then look again. */
        p->n1 = 1;
        eu_proc_resolve_actor(p, p->s2, true, on_move_target_fetched);
        return;
    }
    if (PQntuples(res) == 0) {
        eu_proc_skip(p, "the new account is unknown");
        return;
    }
    if (!ok) {
        eu_proc_skip(p, "the new account does not name the old one in alsoKnownAs");
        return;
    }
    p->s1 = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 0));
    p->s3 = PQgetisnull(res, 0, 1) ? NULL : eu_arena_strdup(p->arena, PQgetvalue(res, 0, 1));
    const char *params[] = {p->actor_id, p->s1, p->s2, p->base};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_MOVE], 4, params, on_moved);
}

void
eu_proc_move(struct eu_proc *p)
{
    if (!p->object_id || strcmp(p->object_id, p->actor_uri) != 0) {
        eu_proc_skip(p, "moves someone else");
        return;
    }
    p->s2 = eu_proc_json_id(json_object_get(p->activity, "target"));
    if (!p->s2 || strcmp(p->s2, p->actor_uri) == 0) {
        eu_proc_skip(p, "no target");
        return;
    }
    /* A remote account moving to one of ours (which named it in its
     * aliases): its followers here follow ours directly. */
    const char *name = eu_proc_local_name(p, p->s2);
    if (name)
        p->n1 = 2;
    const char *params[] = {p->s2, p->actor_uri, name};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_MOVE_TARGET], 3, params, on_move_target);
}

/* ----------------------------------------------- the actor deletes itself */

static void
on_actor_deleted(struct eu_proc *p, PGresult *res)
{
    invalidate_rows(p, res, 0);
    /* Its statuses are hidden from now on (a suspended author's are) and
     * go with the account when the suspended-account cleanup purges it. */
    eu_queue_task_wake(p->t, EU_TASK_ACCOUNT_CLEANUP, -1);
    eu_proc_finish(p, NULL);
}

void
eu_proc_delete_actor(struct eu_proc *p)
{
    const char *params[] = {p->actor_id};
    eu_proc_stmt(p, &eu_ap_process_follow_sql[FOLLOW_ACTOR_DELETE], 1, params, on_actor_deleted);
}
