/*
 * The streaming API's publishing end: which channels an event goes to. What
 * one listener gets of it is rendered by the REST handlers
 * (src/api/stream_render.c); this half is the social core's, called by
 * both protocols.
 *
 * Publishing sends "<event> <id>" only. Whether a tenant has a listener
 * anywhere is kept in Redis ("<prefix>stream:live", refreshed by the hubs
 * that have one, see src/http/streaming.c), so a tenant nobody streams
 * costs one EXISTS per status and nothing else. When it does, one
 * statement finds the status's public facts and its home recipients (the
 * same eunha_is_home_feed_status() the home feed fans out with), and one EVAL
 * publishes on every channel (home recipients, the lists the author is on,
 * public and hashtag channels).
 */
#include "eunha/stream.h"

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum {
    STREAM_STATUS,
};

/* The process, for the publishers called without one; set by the wiring
 * (eu_stream_publish_start()). */
static struct eu_app *publish_app;

void
eu_stream_publish_start(struct eu_app *app)
{
    publish_app = app;
}

void
eu_stream_publish_stop(void)
{
    publish_app = NULL;
}

const struct eu_sql eu_stream_sql[] = {
    /* $2 status, $3 removed (every candidate then, but a direct status's
     * participants only: its id is nobody else's business). Public: what the public
     * timeline admits regardless of viewer (timelines.public). The tags, home
     * recipients and lists are JSON arrays of strings. */
    [STREAM_STATUS] =
        {"stream.status",
         "SELECT s.local, s.visibility = 0 AND s.reblog_of_id IS NULL"
         "  AND (s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id = s.account_id),"
         " (SELECT coalesce(json_agg(DISTINCT lower(t.name)), '[]') FROM statuses_tags st"
         "  JOIN tags t ON t.tenant_id = $1 AND t.id = st.tag_id"
         "  WHERE st.tenant_id = $1 AND st.status_id = s.id),"
         " (SELECT coalesce(json_agg(v.id::text), '[]') FROM (SELECT s.account_id AS id UNION"
         "  SELECT f.account_id FROM follows f JOIN accounts fa ON fa.tenant_id = $1"
         "  AND fa.id = f.account_id AND fa.domain IS NULL WHERE f.tenant_id = $1"
         "  AND f.target_account_id = s.account_id) v"
         "  CROSS JOIN LATERAL eunha_is_home_feed_status($1, s.id, s.account_id, s.reblog_of_id,"
         "  s.visibility, s.deleted_at, s.in_reply_to_account_id, v.id) hft"
         "  WHERE ($3::bool AND (s.visibility < 3 OR v.id = s.account_id OR EXISTS (SELECT 1"
         "  FROM mentions rm WHERE rm.tenant_id = $1 AND rm.status_id = s.id"
         "  AND rm.account_id = v.id))) OR hft.ok),"
         /* The lists the author is on: their owners' renders decide. */
         " (SELECT coalesce(json_agg(la.list_id::text), '[]') FROM list_accounts la"
         "  WHERE la.tenant_id = $1 AND la.account_id = s.account_id),"
         /* A direct status's local participants: their direct streams. Who may
          * hear of it is each one's render (eu_conversations_stream). */
         " (SELECT coalesce(json_agg(dp.id::text), '[]') FROM (SELECT s.account_id AS id"
         "  WHERE s.local UNION SELECT dm.account_id FROM mentions dm JOIN accounts da"
         "  ON da.tenant_id = $1 AND da.id = dm.account_id AND da.domain IS NULL"
         "  WHERE dm.tenant_id = $1 AND dm.status_id = s.id) dp"
         "  WHERE s.visibility = 3 AND s.reblog_of_id IS NULL)"
         " FROM statuses s WHERE s.tenant_id = $1 AND s.id = $2::bigint"},
    {0},
};

/* KEYS: channels; ARGV[1]: the message. */
static const char PUBLISH_LUA[] = "for _, k in ipairs(KEYS) do redis.call('PUBLISH', k, ARGV[1]) "
                                  "end return 0";

/* ------------------------------------------------------------- publishing */

struct pub {
    struct eu_app *app;
    struct eu_tenant *t; /* holds a ref */
    char id[24];
    bool removed;
    int64_t account;   /* filters_changed: whose */
    const char *event; /* "update", "delete", "status.update" */
    /* channels, each "<prefix>stream:<name>" */
    char **chans;
    size_t n, cap;
};

static void
pub_free(struct pub *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->chans[i]);
    free(p->chans);
    eu_tenant_unref(p->t);
    free(p);
}

static void
pub_add(struct pub *p, const char *fmt, const char *a)
{
    char name[512];
    snprintf(name, sizeof(name), fmt, a);
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->chans = eu_xrealloc(p->chans, p->cap * sizeof(*p->chans));
    }
    size_t len = strlen(p->t->key_prefix) + sizeof("stream:") + strlen(name);
    p->chans[p->n] = eu_xmalloc(len);
    snprintf(p->chans[p->n], len, "%sstream:%s", p->t->key_prefix, name);
    p->n++;
}

static void
on_published(redisReply *reply, void *arg)
{
    if (!reply || reply->type == REDIS_REPLY_ERROR)
        eu_log_warn("stream", "cannot publish: %s", reply ? reply->str : "redis unavailable");
}

static void
pub_send(struct pub *p, const char *event)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "%s %s", event, p->id);
    const char **argv = eu_xcalloc(p->n + 4, sizeof(char *));
    char numkeys[16];
    snprintf(numkeys, sizeof(numkeys), "%zu", p->n);
    int argc = 0;
    argv[argc++] = "EVAL";
    argv[argc++] = PUBLISH_LUA;
    argv[argc++] = numkeys;
    for (size_t i = 0; i < p->n; i++)
        argv[argc++] = p->chans[i];
    argv[argc++] = msg;
    eu_redis_command(eu_tenant_redis(p->app, p->t), on_published, NULL, argc, argv, NULL);
    free(argv);
}

/* Adds the channel fmt names for each string of the JSON array text json;
 * with also_fmt, that one as well (a tag's local channel). */
static void
add_each(struct pub *p, const char *json, const char *fmt, const char *also_fmt)
{
    json_t *arr = json_loads(json, 0, NULL);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *name = json_string_value(v);
        if (!name)
            continue;
        pub_add(p, fmt, name);
        if (also_fmt)
            pub_add(p, also_fmt, name);
    }
    json_decref(arr);
}

static struct pub *pub_new(struct eu_app *app, struct eu_tenant *t, int64_t id);

/*
 * The direct streams of a direct status's local participants (json, a JSON
 * array of account ids): "conversation" when it was posted, "delete" when
 * removed, as Mastodon sends them. An edit changes no conversation, so it
 * sends nothing there (Mastodon's fan-out skips conversations on update).
 */
static void
publish_direct(const struct pub *p, const char *json)
{
    if (strcmp(json, "[]") == 0 || strcmp(p->event, "status.update") == 0)
        return;
    struct pub *d = pub_new(p->app, p->t, 0);
    snprintf(d->id, sizeof(d->id), "%s", p->id);
    add_each(d, json, "direct:%s", NULL);
    if (d->n)
        pub_send(d, p->removed ? "delete" : "conversation");
    pub_free(d);
}

static void
on_status_facts(PGresult *res, enum eu_db_status st, void *arg)
{
    struct pub *p = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        if (st != EU_DB_OK)
            eu_log_warn("stream", "cannot read status %s: %s", p->id,
                        res ? PQresultErrorMessage(res) : "database unavailable");
        pub_free(p);
        return;
    }
    bool local = PQgetvalue(res, 0, 0)[0] == 't';
    bool public = PQgetvalue(res, 0, 1)[0] == 't';
    add_each(p, PQgetvalue(res, 0, 3), "user:%s", NULL);
    add_each(p, PQgetvalue(res, 0, 4), "list:%s", NULL);
    if (public) {
        pub_add(p, "%s", "public");
        pub_add(p, "%s", local ? "public:local" : "public:remote");
        add_each(p, PQgetvalue(res, 0, 2), "hashtag:%s", local ? "hashtag:local:%s" : NULL);
    }
    if (p->n)
        pub_send(p, p->event);
    publish_direct(p, PQgetvalue(res, 0, 5));
    pub_free(p);
}

static void
on_live(redisReply *reply, void *arg)
{
    struct pub *p = arg;
    if (!reply || reply->type != REDIS_REPLY_INTEGER || reply->integer == 0) {
        pub_free(p);
        return;
    }
    const char *params[] = {p->id, p->removed ? "true" : "false"};
    eu_db_pool_stmt(eu_tenant_pool(p->app->registry, p->t), &eu_stream_sql[STREAM_STATUS], 2,
                    params, on_status_facts, p);
}

/* Asks whether p's tenant has a listener anywhere; then runs (reply, p),
 * which owns p. */
static void
when_live(struct pub *p, eu_redis_reply_cb then)
{
    char key[EU_TENANT_KEY_PREFIX_SIZE + 16];
    snprintf(key, sizeof(key), "%sstream:live", p->t->key_prefix);
    const char *argv[] = {"EXISTS", key};
    eu_redis_command(eu_tenant_redis(p->app, p->t), then, p, 2, argv, NULL);
}

static struct pub *
pub_new(struct eu_app *app, struct eu_tenant *t, int64_t id)
{
    struct pub *p = eu_xcalloc(1, sizeof(*p));
    p->app = app;
    p->t = t;
    eu_tenant_ref(t);
    snprintf(p->id, sizeof(p->id), "%lld", (long long)id);
    return p;
}

void
eu_stream_status(struct eu_app *app, struct eu_tenant *t, int64_t status_id, bool removed)
{
    struct pub *p = pub_new(app, t, status_id);
    p->removed = removed;
    p->event = removed ? "delete" : "update";
    when_live(p, on_live);
}

void
eu_stream_status_edited(struct eu_app *app, struct eu_tenant *t, int64_t status_id)
{
    struct pub *p = pub_new(app, t, status_id);
    p->event = "status.update";
    when_live(p, on_live);
}

static void
on_request_end(void *arg)
{
    struct pub *p = arg;
    pub_send(p, "filters_changed");
    eu_stream_viewer_changed(p->app, p->t, p->account);
    pub_free(p);
}

void
eu_stream_filters_changed(struct eu_req *req)
{
    struct eu_app *app = req->app;
    struct pub *p = pub_new(app, req->tenant, 0);
    p->id[0] = '\0';
    p->account = req->auth.account_id;
    pub_add(p, "user:%s", eu_req_viewer(req));
    eu_arena_on_free(req->arena, on_request_end, p);
}

void
eu_stream_viewer_changed(struct eu_app *app, const struct eu_tenant *t, int64_t account_id)
{
    /* The close channel: every process with a stream of t hears it. */
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)account_id);
    eu_stream_publish(app, t, "close", "viewer", id);
}

static void
on_note_live(redisReply *reply, void *arg)
{
    struct pub *p = arg;
    if (reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1)
        pub_send(p, "notification");
    pub_free(p);
}

void
eu_stream_notification(struct eu_tenant *t, int64_t account_id, int64_t notification_id)
{
    struct eu_app *app = publish_app;
    if (!app)
        return;
    struct pub *p = pub_new(app, t, notification_id);
    char acct[24];
    snprintf(acct, sizeof(acct), "%lld", (long long)account_id);
    pub_add(p, "user:%s", acct);
    when_live(p, on_note_live);
}

void
eu_stream_publish(struct eu_app *app, const struct eu_tenant *t, const char *channel,
                  const char *event, const char *payload)
{
    char chan[EU_TENANT_KEY_PREFIX_SIZE + 300];
    snprintf(chan, sizeof(chan), "%sstream:%s", t->key_prefix, channel);
    size_t n = strlen(event) + 1 + strlen(payload) + 1;
    char *msg = eu_xmalloc(n);
    snprintf(msg, n, "%s %s", event, payload);
    const char *argv[] = {"PUBLISH", chan, msg};
    eu_redis_command(eu_tenant_redis(app, t), on_published, NULL, 3, argv, NULL);
    free(msg);
}

/* ---------------------------------------------------------- announcements */

/* Announcements go to every listener of the tenant, as Mastodon publishes
 * them on each active account's timeline channel. Which user channels have
 * listeners, in any process, is what Redis itself knows: the script
 * publishes on each channel matching ARGV[1] (the tenant's user channels).
 * ARGV[2]: the message. */
static const char PUBLISH_USERS_LUA[] =
    "for _, c in ipairs(redis.call('PUBSUB', 'CHANNELS', ARGV[1])) do "
    "redis.call('PUBLISH', c, ARGV[2]) end return 0";

static void
publish_to_users(struct eu_app *app, const struct eu_tenant *t, const char *msg)
{
    char pattern[EU_TENANT_KEY_PREFIX_SIZE + 32];
    snprintf(pattern, sizeof(pattern), "%sstream:user:*", t->key_prefix);
    const char *argv[] = {"EVAL", PUBLISH_USERS_LUA, "0", pattern, msg};
    eu_redis_command(eu_tenant_redis(app, t), on_published, NULL, 5, argv, NULL);
}

void
eu_stream_announcement(struct eu_app *app, const struct eu_tenant *t, int64_t announcement_id,
                       bool removed)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "%s %lld", removed ? "announcement.delete" : "announcement",
             (long long)announcement_id);
    publish_to_users(app, t, msg);
}

void
eu_stream_announcement_reaction(struct eu_app *app, const struct eu_tenant *t,
                                int64_t announcement_id, const char *name, long long count)
{
    /* The payload travels whole: it is the same for every listener. */
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)announcement_id);
    json_t *payload = json_pack("{s:s, s:I, s:s}", "name", name, "count", (json_int_t)count,
                                "announcement_id", id);
    char *text = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    if (!text)
        return;
    char *msg = eu_xasprintf("announcement.reaction %s", text);
    free(text);
    publish_to_users(app, t, msg);
    free(msg);
}
