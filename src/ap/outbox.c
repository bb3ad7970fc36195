/*
 * The activities of local actions, as Mastodon sends them: a status posted,
 * edited or deleted (Create, Update, Delete with a Tombstone), reblogged
 * and withdrawn (Announce, Undo), liked and unliked, an account followed,
 * unfollowed, blocked, unblocked, a remote follower's request accepted
 * or rejected, a profile changed (Update of the actor), an account moved
 * (Move), a vote on a remote poll, a status pinned or unpinned (Add,
 * Remove) and a report forwarded to the reported account's server (Flag).
 * Each hook runs after its action's statement, reads what the activity
 * names in one statement (two for a status: its note columns; a Flag also
 * looks up the instance actor), builds the activity and hands it to
 * eu_ap_deliver(), which fans it out in one more. Actions on local
 * accounts only send nothing.
 *
 * A hook never answers anything: the action already succeeded, and a
 * failure here is logged, as Mastodon's delivery workers fail apart from
 * the request.
 */
#include "eunha/apdeliver.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

#define AS_CONTEXT "https://www.w3.org/ns/activitystreams"

enum { OUTBOX_CONTEXT, OUTBOX_VOTE, OUTBOX_FLAG };

/* Columns of outbox.context. */
enum {
    X_USERNAME,
    X_TARGET_URI,
    X_TARGET_REMOTE,
    X_FOLLOW_URI,
    X_STATUS_URI,
    X_STATUS_AUTHOR,
    X_STATUS_VISIBILITY,
    X_REBLOG_OF,
    X_ORIGINAL_URI,
    X_ORIGINAL_AUTHOR,
};

const struct eu_sql eu_ap_outbox_sql[] = {
    /*
     * What an activity of local account $2 names: $3 a target account, $4 a
     * status (deleted ones too), $5 the base URL. With $6 the pending
     * follow request of $2 for $3 gets its Follow's id (BASE/users/NAME#
     * follows/REQUEST_ID) unless it has one, so Undo and the Accept that
     * comes back can name it. No row when $2 is not a local account.
     */
    [OUTBOX_CONTEXT] =
        {"ap_outbox.context",
         "WITH me AS (SELECT a.id, a.username FROM accounts a WHERE a.tenant_id = $1"
         "  AND a.id = $2::bigint AND a.domain IS NULL),"
         " fr AS (UPDATE follow_requests r SET uri = $5 || '/users/' || me.username"
         "  || '#follows/' || r.id FROM me WHERE r.tenant_id = $1 AND r.account_id = me.id"
         "  AND r.target_account_id = $3::bigint AND $6::bool AND r.uri IS NULL RETURNING r.uri)"
         " SELECT me.username, eunha_actor_uri(tg.domain, tg.username, tg.uri, $5), tg.domain IS"
         " NOT NULL,"
         " coalesce((SELECT uri FROM fr), (SELECT r.uri FROM follow_requests r"
         "  WHERE r.tenant_id = $1 AND r.account_id = me.id AND r.target_account_id = tg.id),"
         "  (SELECT f.uri FROM follows f WHERE f.tenant_id = $1 AND f.account_id = me.id"
         "  AND f.target_account_id = tg.id)),"
         " eunha_status_uri(st.local, st.id, st.uri, sa.username, $5), st.account_id,"
         " st.visibility, st.reblog_of_id,"
         " (SELECT eunha_status_uri(o.local, o.id, o.uri, oa.username, $5) FROM statuses o JOIN"
         " accounts oa"
         "  ON oa.tenant_id = $1 AND oa.id = o.account_id"
         "  WHERE o.tenant_id = $1 AND o.id = st.reblog_of_id),"
         " (SELECT o.account_id FROM statuses o WHERE o.tenant_id = $1 AND o.id = st.reblog_of_id)"
         " FROM me LEFT JOIN accounts tg ON tg.tenant_id = $1 AND tg.id = $3::bigint"
         " LEFT JOIN statuses st ON st.tenant_id = $1 AND st.id = $4::bigint"
         " LEFT JOIN accounts sa ON sa.tenant_id = $1 AND sa.id = st.account_id"},
    /*
     * Local account $2's vote on remote poll $3: the voter's username, the
     * Question's uri, its author's id and uri, and the choices as a JSON
     * array of [index, title]. No row when the poll is local or there is no
     * such vote.
     */
    [OUTBOX_VOTE] =
        {"ap_outbox.vote",
         "SELECT me.username, s.uri, p.account_id::text, au.uri,"
         " (SELECT json_agg(json_build_array(c, p.options[c + 1]) ORDER BY c)"
         "  FROM unnest(pv.choices) c)::text"
         " FROM poll_votes pv JOIN polls p ON p.tenant_id = $1 AND p.id = pv.poll_id"
         " JOIN statuses s ON s.tenant_id = $1 AND s.id = p.status_id AND NOT s.local"
         " JOIN accounts au ON au.tenant_id = $1 AND au.id = p.account_id AND au.domain IS NOT NULL"
         " JOIN accounts me ON me.tenant_id = $1 AND me.id = pv.account_id AND me.domain IS NULL"
         " WHERE pv.tenant_id = $1 AND pv.poll_id = $3::bigint AND pv.account_id = $2::bigint"},
    /*
     * Report $2 to forward: its remote target's uri and inbox (shared
     * first), the reported statuses' uris as a JSON array, the comment.
     * No row when the target is local.
     */
    [OUTBOX_FLAG] =
        {"ap_outbox.flag",
         "SELECT a.uri, coalesce(a.shared_inbox_url, a.inbox_url),"
         " coalesce((SELECT json_agg(s.uri ORDER BY s.id) FROM statuses s WHERE s.tenant_id = $1"
         "  AND s.id = ANY(r.status_ids) AND s.uri IS NOT NULL), '[]')::text, r.comment"
         " FROM reports r JOIN accounts a ON a.tenant_id = $1 AND a.id = r.target_account_id"
         "  AND a.domain IS NOT NULL"
         " WHERE r.tenant_id = $1 AND r.id = $2::bigint"},
    {0},
};

/* One hook in flight: what it was asked, until its statements return. */
struct hook {
    struct eu_app *app;
    struct eu_tenant *t; /* a reference */
    int64_t actor;
    char *status_id, *target, *follow_uri, *also_to;
    char *move_to; /* a Move's target actor */
    char *inboxes; /* a new status's followers' inboxes, known (text[]) */
    enum eu_ap_outbox_kind kind;
    enum eu_ap_outbox_status_event ev;
    bool pinned;      /* a pin's Add, else its Remove */
    char *tag;        /* a featured hashtag's name */
    json_t *activity; /* a Flag waiting for its signer */
    char *base;
};

static struct hook *
hook_new(struct eu_app *app, struct eu_tenant *t, int64_t actor)
{
    struct hook *h = eu_xcalloc(1, sizeof(*h));
    h->app = app;
    h->t = t;
    eu_tenant_ref(t);
    h->actor = actor;
    h->base = eu_xasprintf("%s://%s", app->cfg->scheme, t->domain);
    return h;
}

static void
hook_free(struct hook *h)
{
    eu_tenant_unref(h->t);
    free(h->status_id);
    free(h->target);
    free(h->follow_uri);
    free(h->also_to);
    free(h->move_to);
    free(h->inboxes);
    free(h->tag);
    free(h->base);
    json_decref(h->activity);
    free(h);
}

static struct eu_db_pool *
pool_of(struct hook *h)
{
    return eu_tenant_pool(h->app->registry, h->t);
}

/* A URI no other activity has: what it is about, and when. Caller frees. */
static char *
unique_id(const char *prefix)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return eu_xasprintf("%s/%lld%03ld%04u", prefix, (long long)ts.tv_sec, ts.tv_nsec / 1000000,
                        randombytes_uniform(10000));
}

static json_t *
activity_new(const char *type, char *id, const char *actor)
{
    json_t *a = json_pack("{s:s, s:s, s:s, s:s}", "@context", AS_CONTEXT, "id", id, "type", type,
                          "actor", actor);
    free(id);
    return a;
}

/* Undo of inner (taken), by actor. */
static json_t *
undo_of(json_t *inner, const char *actor)
{
    const char *inner_id = json_string_value(json_object_get(inner, "id"));
    char *id = inner_id ? eu_xasprintf("%s/undo", inner_id) : unique_id("undo");
    json_t *u = activity_new("Undo", unique_id(id), actor);
    free(id);
    json_object_del(inner, "@context");
    json_object_set_new(u, "object", inner);
    return u;
}

static bool
col_true(const PGresult *res, int col)
{
    return !PQgetisnull(res, 0, col) && PQgetvalue(res, 0, col)[0] == 't';
}

static const char *
col(const PGresult *res, int c)
{
    return PQgetisnull(res, 0, c) ? NULL : PQgetvalue(res, 0, c);
}

/* ------------------------------------------------------- statuses */

static void
on_note(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read status %s to deliver it: %s", h->status_id,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    int vis = eu_ap_note_row_visibility(res, 0);
    bool reblog = eu_ap_note_row_is_reblog(res, 0);
    json_t *activity;
    if (h->ev == EU_AP_STATUS_UPDATE && !reblog) {
        json_t *note = eu_ap_note_json(h->app, h->base, h->t->domain, res, 0);
        const char *note_id = json_string_value(json_object_get(note, "id"));
        char *prefix = eu_xasprintf("%s#updates", note_id);
        activity = json_object();
        char *id = unique_id(prefix);
        json_object_set_new(activity, "id", json_string(id));
        free(id);
        free(prefix);
        json_object_set_new(activity, "type", json_string("Update"));
        json_object_set(activity, "actor", json_object_get(note, "attributedTo"));
        json_object_set(activity, "to", json_object_get(note, "to"));
        json_object_set(activity, "cc", json_object_get(note, "cc"));
        json_object_set_new(activity, "object", note);
    } else if (h->ev == EU_AP_STATUS_CREATE) {
        activity = eu_ap_activity_json(h->app, h->base, h->t->domain, res, 0);
    } else {
        hook_free(h);
        return;
    }
    struct eu_ap_audience to = {
        .followers = vis < 3 && !h->inboxes,
        .mentioned_in = reblog ? NULL : h->status_id,
        .account = reblog ? h->also_to : NULL,
        .follower_inboxes = vis < 3 ? h->inboxes : NULL,
    };
    int64_t author = h->actor;
    eu_ap_deliver(h->app, h->t, NULL, author, eu_ap_note_with_context(activity), &to);
    hook_free(h);
}

static void
context_query(struct hook *h, eu_db_result_cb cb, bool mark_follow)
{
    char actor[24];
    snprintf(actor, sizeof(actor), "%lld", (long long)h->actor);
    const char *params[] = {actor, h->target, h->status_id, h->base,
                            mark_follow ? "true" : "false"};
    eu_db_pool_stmt(pool_of(h), &eu_ap_outbox_sql[OUTBOX_CONTEXT], 5, params, cb, h);
}

/* The hook of a status's Create or Update; strings copied, NULL for none. */
static void
status_hook(struct eu_app *app, struct eu_tenant *t, int64_t author, const char *status_id,
            enum eu_ap_outbox_status_event ev, const char *original_author, const char *inboxes)
{
    struct hook *h = hook_new(app, t, author);
    h->status_id = eu_xstrdup(status_id);
    h->ev = ev;
    h->also_to = original_author ? eu_xstrdup(original_author) : NULL;
    h->inboxes = inboxes ? eu_xstrdup(inboxes) : NULL;
    char ids[32];
    snprintf(ids, sizeof(ids), "{%s}", status_id);
    const char *params[] = {ids, h->base};
    /* Known inboxes: someone remote receives it, so the render need not
     * ask whether anyone would. */
    eu_db_pool_stmt(pool_of(h), inboxes ? eu_ap_notes_by_ids_stmt() : eu_ap_note_stmt(), 2, params,
                    on_note, h);
}

void
eu_ap_outbox_status(struct eu_app *app, struct eu_tenant *t, int64_t author, const char *status_id,
                    enum eu_ap_outbox_status_event ev, const char *original_author)
{
    status_hook(app, t, author, status_id, ev, original_author, NULL);
}

void
eu_ap_outbox_status_to(struct eu_app *app, struct eu_tenant *t, int64_t author,
                       const char *status_id, const char *follower_inboxes)
{
    status_hook(app, t, author, status_id, EU_AP_STATUS_CREATE, NULL, follower_inboxes);
}

static void
on_deleted_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1 || !col(res, X_STATUS_AUTHOR) ||
        strtoll(col(res, X_STATUS_AUTHOR), NULL, 10) != h->actor) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read status %s to deliver its deletion: %s", h->status_id,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, X_USERNAME));
    int vis = atoi(PQgetvalue(res, 0, X_STATUS_VISIBILITY));
    struct eu_ap_audience to = {.followers = vis < 3};
    json_t *activity;
    if (col(res, X_REBLOG_OF)) {
        /* A reblog: its Announce is withdrawn. */
        if (!col(res, X_ORIGINAL_URI)) {
            free(actor);
            hook_free(h);
            return;
        }
        char *announce = eu_xasprintf("%s/statuses/%s/activity", actor, h->status_id);
        json_t *inner = activity_new("Announce", announce, actor);
        json_object_set_new(inner, "object", json_string(col(res, X_ORIGINAL_URI)));
        activity = undo_of(inner, actor);
        json_object_set_new(activity, "to", json_pack("[s]", EU_AP_PUBLIC));
        to.account = col(res, X_ORIGINAL_AUTHOR);
    } else {
        const char *uri = PQgetvalue(res, 0, X_STATUS_URI);
        activity = activity_new("Delete", eu_xasprintf("%s#delete", uri), actor);
        json_object_set_new(activity, "to", json_pack("[s]", EU_AP_PUBLIC));
        json_object_set_new(
            activity, "object",
            json_pack("{s:s, s:s, s:s}", "id", uri, "type", "Tombstone", "atomUri", uri));
        to.mentioned_in = h->status_id;
    }
    eu_ap_deliver(h->app, h->t, NULL, h->actor, activity, &to);
    free(actor);
    hook_free(h);
}

void
eu_ap_outbox_status_deleted(struct eu_app *app, struct eu_tenant *t, int64_t actor,
                            const char *status_id)
{
    struct hook *h = hook_new(app, t, actor);
    h->status_id = eu_xstrdup(status_id);
    context_query(h, on_deleted_context, false);
}

/* ------------------------------------------------- accounts and likes */

static void
on_account_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read what an activity names: %s",
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    bool like = h->kind == EU_AP_LIKE || h->kind == EU_AP_UNLIKE;
    /* Only remote targets hear of it; for a like, the status's author. */
    const char *object = like ? col(res, X_STATUS_URI) : col(res, X_TARGET_URI);
    const char *to_account = like ? col(res, X_STATUS_AUTHOR) : h->target;
    if (!object || !to_account || (!like && !col_true(res, X_TARGET_REMOTE))) {
        hook_free(h);
        return;
    }
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, X_USERNAME));
    const char *follow_uri = h->follow_uri ? h->follow_uri : col(res, X_FOLLOW_URI);
    json_t *a = NULL;
    switch (h->kind) {
    case EU_AP_FOLLOW:
    case EU_AP_UNFOLLOW:
        a = activity_new("Follow",
                         follow_uri ? eu_xstrdup(follow_uri)
                                    : eu_xasprintf("%s#follows/%s", actor, h->target),
                         actor);
        json_object_set_new(a, "object", json_string(object));
        if (h->kind == EU_AP_UNFOLLOW)
            a = undo_of(a, actor);
        break;
    case EU_AP_BLOCK:
    case EU_AP_UNBLOCK:
        a = activity_new("Block", eu_xasprintf("%s#blocks/%s", actor, h->target), actor);
        json_object_set_new(a, "object", json_string(object));
        if (h->kind == EU_AP_UNBLOCK)
            a = undo_of(a, actor);
        break;
    case EU_AP_LIKE:
    case EU_AP_UNLIKE:
        a = activity_new("Like", eu_xasprintf("%s#likes/%s", actor, h->status_id), actor);
        json_object_set_new(a, "object", json_string(object));
        if (h->kind == EU_AP_UNLIKE)
            a = undo_of(a, actor);
        break;
    case EU_AP_ACCEPT:
    case EU_AP_REJECT: {
        /* Their Follow, named by its id when the inbox kept it. */
        json_t *follow =
            json_pack("{s:s, s:s, s:s}", "type", "Follow", "actor", object, "object", actor);
        if (follow_uri)
            json_object_set_new(follow, "id", json_string(follow_uri));
        char *prefix = eu_xasprintf("%s#%s/follows/%s", actor,
                                    h->kind == EU_AP_ACCEPT ? "accepts" : "rejects", h->target);
        a = activity_new(h->kind == EU_AP_ACCEPT ? "Accept" : "Reject", unique_id(prefix), actor);
        free(prefix);
        json_object_set_new(a, "object", follow);
        break;
    }
    }
    struct eu_ap_audience to = {.account = to_account};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    free(actor);
    hook_free(h);
}

void
eu_ap_outbox_account(struct eu_app *app, struct eu_tenant *t, int64_t actor, const char *target,
                     enum eu_ap_outbox_kind kind, const char *follow_uri)
{
    struct hook *h = hook_new(app, t, actor);
    h->kind = kind;
    h->follow_uri = follow_uri ? eu_xstrdup(follow_uri) : NULL;
    if (kind == EU_AP_LIKE || kind == EU_AP_UNLIKE)
        h->status_id = eu_xstrdup(target);
    else
        h->target = eu_xstrdup(target);
    context_query(h, on_account_context, kind == EU_AP_FOLLOW);
}

/* ------------------------------------------------------- the profile */

/* The actor document comes from the handler that serves it (a request no
 * client sent), so the Update carries exactly what a peer fetching the
 * actor would get. */
static void
on_actor_document(int status, const char *body, size_t len, void *arg)
{
    struct hook *h = arg;
    json_t *doc = status == 200 ? json_loadb(body, len, 0, NULL) : NULL;
    const char *id = json_string_value(json_object_get(doc, "id"));
    if (!id) {
        eu_log_warn("ap", "cannot render actor %lld for its Update (HTTP %d)", (long long)h->actor,
                    status);
        json_decref(doc);
        hook_free(h);
        return;
    }
    json_t *context = json_incref(json_object_get(doc, "@context"));
    json_object_del(doc, "@context");
    char *prefix = eu_xasprintf("%s#updates", id);
    json_t *a = activity_new("Update", unique_id(prefix), id);
    free(prefix);
    json_object_set_new(a, "@context", context);
    json_object_set_new(a, "to", json_pack("[s]", "https://www.w3.org/ns/activitystreams#Public"));
    json_object_set_new(a, "object", doc);
    struct eu_ap_audience to = {.followers = true};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    hook_free(h);
}

static void
on_profile_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        hook_free(h);
        return;
    }
    struct eu_req *req = eu_req_new_detached(h->app, h->t, NULL, on_actor_document, h);
    eu_ap_actor_document(req, PQgetvalue(res, 0, X_USERNAME));
}

void
eu_ap_outbox_profile(struct eu_app *app, struct eu_tenant *t, int64_t actor)
{
    context_query(hook_new(app, t, actor), on_profile_context, false);
}

/* ------------------------------------------------------------ pins */

/* Mastodon's pin and unpin: Add or Remove of the status's URI to or from
 * the actor's featured collection, to its followers whatever the status's
 * visibility (a follower that cannot see it has no row to pin). The id
 * names the status and the moment, as Mastodon's carry none. */
static void
on_pin_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1 || !col(res, X_STATUS_URI) ||
        !col(res, X_STATUS_AUTHOR) || strtoll(col(res, X_STATUS_AUTHOR), NULL, 10) != h->actor) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read status %s to deliver its pin: %s", h->status_id,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, X_USERNAME));
    char *prefix = eu_xasprintf("%s#%s/%s", actor, h->pinned ? "pins" : "unpins", h->status_id);
    json_t *a = activity_new(h->pinned ? "Add" : "Remove", unique_id(prefix), actor);
    free(prefix);
    json_object_set_new(a, "object", json_string(col(res, X_STATUS_URI)));
    json_object_set_new(a, "target", json_sprintf("%s/collections/featured", actor));
    struct eu_ap_audience to = {.followers = true};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    free(actor);
    hook_free(h);
}

void
eu_ap_outbox_pin(struct eu_app *app, struct eu_tenant *t, int64_t actor, const char *status_id,
                 bool pinned)
{
    struct hook *h = hook_new(app, t, actor);
    h->status_id = eu_xstrdup(status_id);
    h->pinned = pinned;
    context_query(h, on_pin_context, false);
}

/* ---------------------------------------------------- featured hashtags */

/* Add or Remove of a Hashtag object, which peers match by name, to or
 * from the featuredTags collection; the href is the account's page of the
 * tag, as in the collection (src/ap/collections.c). */
static void
on_featured_tag_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read account %lld to deliver its featured tag: %s",
                        (long long)h->actor,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, X_USERNAME));
    char *prefix =
        eu_xasprintf("%s#%s/%s", actor, h->pinned ? "featured_tags" : "unfeatured_tags", h->tag);
    json_t *a = activity_new(h->pinned ? "Add" : "Remove", unique_id(prefix), actor);
    free(prefix);
    char *lower = eu_xstrdup(h->tag);
    for (char *c = lower; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    json_object_set_new(
        a, "object",
        json_pack("{s:s, s:o, s:o}", "type", "Hashtag", "href",
                  json_sprintf("%s/@%s/tagged/%s", h->base, PQgetvalue(res, 0, X_USERNAME), lower),
                  "name", json_sprintf("#%s", h->tag)));
    free(lower);
    json_object_set_new(a, "target", json_sprintf("%s/collections/tags", actor));
    struct eu_ap_audience to = {.followers = true};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    free(actor);
    hook_free(h);
}

void
eu_ap_outbox_featured_tag(struct eu_app *app, struct eu_tenant *t, int64_t actor, const char *name,
                          bool featured)
{
    struct hook *h = hook_new(app, t, actor);
    h->tag = eu_xstrdup(name);
    h->pinned = featured;
    context_query(h, on_featured_tag_context, false);
}

/* ------------------------------------------------------------ reports */

/* The Flag goes out as the instance actor, as Mastodon's ReportService
 * sends it as its representative account: the reported server learns
 * which server complains, not who. */
static void
on_flag_signer(const struct eu_ap_instance_actor *ia, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (!ia) {
        eu_log_warn("ap", "no instance actor to forward report %s (status %d)", h->target, (int)st);
        hook_free(h);
        return;
    }
    struct eu_ap_audience to = {.inbox = h->also_to};
    eu_ap_deliver(h->app, h->t, NULL, ia->account_id, h->activity, &to);
    h->activity = NULL;
    hook_free(h);
}

static void
on_flag_report(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1 || !col(res, 0) || !col(res, 1)) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read report %s to forward it: %s", h->target,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    json_t *object = json_loads(PQgetvalue(res, 0, 2), 0, NULL);
    if (!json_is_array(object)) {
        json_decref(object);
        object = json_array();
    }
    json_array_insert_new(object, 0, json_string(col(res, 0)));
    char *actor = eu_xasprintf("%s/actor", h->base);
    h->activity = activity_new("Flag", eu_xasprintf("%s#reports/%s", actor, h->target), actor);
    free(actor);
    json_object_set_new(h->activity, "object", object);
    json_object_set_new(h->activity, "content", json_string(PQgetvalue(res, 0, 3)));
    h->also_to = eu_xstrdup(col(res, 1));
    eu_ap_instance_actor(h->app, h->t, on_flag_signer, h);
}

void
eu_ap_outbox_flag(struct eu_app *app, struct eu_tenant *t, const char *report_id)
{
    struct hook *h = hook_new(app, t, 0);
    h->target = eu_xstrdup(report_id);
    const char *params[] = {report_id};
    eu_db_pool_stmt(pool_of(h), &eu_ap_outbox_sql[OUTBOX_FLAG], 1, params, on_flag_report, h);
}

/* ------------------------------------------------------- poll votes */

/* A vote goes to the poll's author only, one Create per chosen option, as
 * Mastodon sends it: a Note with the option's title as its name, replying
 * to the Question, with no content. Its ids name the poll and the option,
 * so a redelivery is recognisably the same vote. */
static void
on_vote_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read a poll vote to deliver it: %s",
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, 0));
    const char *question = PQgetvalue(res, 0, 1), *author = PQgetvalue(res, 0, 3);
    json_t *choices = json_loads(PQgetvalue(res, 0, 4), 0, NULL), *c;
    size_t i;
    json_array_foreach(choices, i, c)
    {
        const char *title = json_string_value(json_array_get(c, 1));
        if (!title)
            continue;
        char *note_id = eu_xasprintf("%s#votes/%s/%lld", actor, h->target,
                                     (long long)json_integer_value(json_array_get(c, 0)));
        json_t *a = activity_new("Create", eu_xasprintf("%s/activity", note_id), actor);
        json_object_set_new(a, "to", json_string(author));
        json_object_set_new(a, "object",
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", note_id, "type",
                                      "Note", "name", title, "attributedTo", actor, "inReplyTo",
                                      question, "to", author));
        free(note_id);
        struct eu_ap_audience to = {.account = PQgetvalue(res, 0, 2)};
        eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    }
    json_decref(choices);
    free(actor);
    hook_free(h);
}

void
eu_ap_outbox_poll_vote(struct eu_app *app, struct eu_tenant *t, int64_t voter, const char *poll_id)
{
    struct hook *h = hook_new(app, t, voter);
    h->target = eu_xstrdup(poll_id);
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)voter);
    const char *params[] = {id, poll_id};
    eu_db_pool_stmt(pool_of(h), &eu_ap_outbox_sql[OUTBOX_VOTE], 2, params, on_vote_context, h);
}

/* ------------------------------------------------------- the move */

/* Mastodon's Move: actor and object the account that moved, target where
 * it went, to every follower's inbox (no to: the followers are who it is
 * for). Its receivers check target's alsoKnownAs themselves. */
static void
on_move_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook *h = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        if (st != EU_DB_OK)
            eu_log_warn("ap", "cannot read account %lld to send its Move: %s", (long long)h->actor,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        hook_free(h);
        return;
    }
    char *actor = eu_xasprintf("%s/users/%s", h->base, PQgetvalue(res, 0, X_USERNAME));
    char *prefix = eu_xasprintf("%s#moves", actor);
    json_t *a = activity_new("Move", unique_id(prefix), actor);
    free(prefix);
    json_object_set_new(a, "object", json_string(actor));
    json_object_set_new(a, "target", json_string(h->move_to));
    struct eu_ap_audience to = {.followers = true};
    eu_ap_deliver(h->app, h->t, NULL, h->actor, a, &to);
    free(actor);
    hook_free(h);
}

void
eu_ap_outbox_move(struct eu_app *app, struct eu_tenant *t, int64_t actor, const char *target_uri)
{
    struct hook *h = hook_new(app, t, actor);
    h->move_to = eu_xstrdup(target_uri);
    context_query(h, on_move_context, false);
}
