/*
 * /api/v1/push/subscription, as Mastodon's Api::V1::Push::SubscriptionsController
 * (scope "push"): one Web Push subscription per access token. POST replaces
 * the token's subscription (a new id), PUT changes only its data (alerts
 * and policy, replaced whole as Mastodon's update!(data:) does), GET shows
 * it, DELETE removes it; GET and PUT answer 404 "Record not found" when the
 * token has none. Every answer is the WebPushSubscription entity, whose
 * server_key is the tenant's VAPID public key, made here on first need
 * (eu_push_server_key, also used by /api/v2/instance and app
 * registration).
 *
 * Alerts are read for every type in eu_push_alert_types, from form keys
 * (data[alerts][admin.sign_up]) or JSON, where masto.js nests the admin
 * types ({"admin": {"sign_up": true}}); a type not given is off, as
 * Mastodon's pushable? treats a missing alert.
 */
#include "eunha/push.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/params.h"
#include "eunha/router.h"
#include "eunha/secrets.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/webpush.h"

/* Mastodon's Notification::TYPES that a push subscription's alerts name
 * (the web client's and masto.js's list, with 4.5's quotes). */
const char *const eu_push_alert_types[] = {
    "mention", "status", "reblog",        "follow",        "follow_request", "favourite", "poll",
    "update",  "quote",  "quoted_update", "admin.sign_up", "admin.report",   NULL,
};

enum {
    PUSH_KEY_GET,
    PUSH_KEY_CREATE,
    PUSH_GET,
    PUSH_CREATE,
    PUSH_UPDATE,
    PUSH_DELETE,
};

#define ENTITY_COLS "w.id::text, w.endpoint, w.standard, w.alerts::text, w.policy"

const struct eu_sql eu_push_sql[] = {
    [PUSH_KEY_GET] = {"push.key_get",
                      "SELECT k.public_key FROM web_push_keys k WHERE k.tenant_id = $1"},
    /* $2 public, $3 private. A pair made by another request first wins. */
    [PUSH_KEY_CREATE] = {"push.key_create",
                         "INSERT INTO web_push_keys (tenant_id, public_key, private_key)"
                         " VALUES ($1, $2, $3) ON CONFLICT (tenant_id) DO NOTHING"},
    /* $2 the token. */
    [PUSH_GET] = {"push.get", "SELECT " ENTITY_COLS " FROM web_push_subscriptions w"
                              " WHERE w.tenant_id = $1 AND w.access_token_id = $2::bigint"},
    /* $2 token id, $3 user, $4 account, $5 the token, $6 endpoint, $7
     * p256dh, $8 auth, $9 alerts, $10 policy, $11 standard. A new id, as
     * Mastodon destroys and creates: pushes queued for the old one find
     * nothing. */
    [PUSH_CREATE] =
        {"push.create",
         "INSERT INTO web_push_subscriptions AS w (tenant_id, access_token_id, user_id,"
         " account_id, access_token, endpoint, key_p256dh, key_auth, alerts, policy, standard)"
         " VALUES ($1, $2::bigint, $3::bigint, $4::bigint, $5, $6, $7, $8, $9::jsonb, $10,"
         " $11::boolean)"
         " ON CONFLICT (tenant_id, access_token_id) DO UPDATE SET id = eunha_next_id(),"
         " access_token = excluded.access_token, endpoint = excluded.endpoint,"
         " key_p256dh = excluded.key_p256dh, key_auth = excluded.key_auth,"
         " alerts = excluded.alerts, policy = excluded.policy, standard = excluded.standard,"
         " created_at = now()"
         " RETURNING " ENTITY_COLS},
    /* $2 token, $3 alerts, $4 policy. */
    [PUSH_UPDATE] = {"push.update", "UPDATE web_push_subscriptions w SET alerts = $3::jsonb,"
                                    " policy = $4 WHERE w.tenant_id = $1"
                                    " AND w.access_token_id = $2::bigint RETURNING " ENTITY_COLS},
    [PUSH_DELETE] = {"push.delete", "DELETE FROM web_push_subscriptions"
                                    " WHERE tenant_id = $1 AND access_token_id = $2::bigint"},
    {0},
};

/* ------------------------------------------------------------ the key */

struct keyop {
    struct eu_req *req;
    eu_push_key_cb cb;
    void *arg;
    bool made; /* this request already tried to make the pair */
    char *pub, *priv;
    int rc;
};

static void key_read(struct eu_req *req, struct keyop *k);

static void
on_key_made(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    key_read(req, arg);
}

static void
keygen_work(void *arg)
{
    struct keyop *k = arg;
    k->rc = eu_webpush_vapid_generate(&k->priv, &k->pub);
}

static void
keygen_done(void *arg)
{
    struct keyop *k = arg;
    struct eu_req *req = k->req;
    eu_req_enter(req);
    if (k->rc < 0) {
        eu_log_error("push", "cannot generate the VAPID key");
        k->cb(req, "", k->arg);
        return;
    }
    /* Copied onto the arena so nothing is left to free on any path. */
    const char *p[] = {eu_arena_strdup(req->arena, k->pub), eu_arena_strdup(req->arena, k->priv)};
    free(k->pub);
    free(k->priv);
    k->pub = k->priv = NULL;
    eu_req_stmt(req, &eu_push_sql[PUSH_KEY_CREATE], 2, p, on_key_made, k);
}

static void
on_key(struct eu_req *req, PGresult *res, void *arg)
{
    struct keyop *k = arg;
    if (PQntuples(res) == 1) {
        k->cb(req, PQgetvalue(res, 0, 0), k->arg);
        return;
    }
    if (k->made) {
        eu_log_error("push", "the VAPID key was made but cannot be read");
        k->cb(req, "", k->arg);
        return;
    }
    k->made = true;
    const struct eu_config *cfg = req->app->cfg;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, keygen_work,
                              keygen_done, k) < 0) {
        eu_req_add_header(req, "Retry-After", "1");
        eu_req_reply_error(req, 503, "Too much work is waiting; try again shortly");
    }
}

static void
key_read(struct eu_req *req, struct keyop *k)
{
    eu_req_stmt(req, &eu_push_sql[PUSH_KEY_GET], 0, NULL, on_key, k);
}

void
eu_push_server_key(struct eu_req *req, eu_push_key_cb cb, void *arg)
{
    struct keyop *k = eu_arena_calloc(req->arena, sizeof(*k));
    k->req = req;
    k->cb = cb;
    k->arg = arg;
    key_read(req, k);
}

/* ------------------------------------------------------------ the entity */

/* The WebPushSubscription of res's row 0 (ENTITY_COLS) with server_key. */
static void
reply_entity(struct eu_req *req, const char *key, void *arg)
{
    PGresult *res = arg;
    json_t *stored = json_loads(PQgetvalue(res, 0, 3), 0, NULL);
    json_t *alerts = json_object();
    for (int i = 0; eu_push_alert_types[i]; i++) {
        json_t *v = json_object_get(stored, eu_push_alert_types[i]);
        json_object_set_new(alerts, eu_push_alert_types[i], json_boolean(json_is_true(v)));
    }
    json_decref(stored);
    json_t *o = json_pack("{s:s, s:s, s:b, s:o, s:s, s:s}", "id", PQgetvalue(res, 0, 0), "endpoint",
                          PQgetvalue(res, 0, 1), "standard", PQgetvalue(res, 0, 2)[0] == 't',
                          "alerts", alerts, "policy", PQgetvalue(res, 0, 4), "server_key", key);
    eu_req_reply_json(req, 200, o);
}

static void
clear_result(void *res)
{
    PQclear(res);
}

/* The statement's row, answered with the key; 404 when there is none. */
static void
on_row(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* Kept past the callback for the key's lookup, until the request
     * ends however it ends. */
    PGresult *copy = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    eu_arena_on_free(req->arena, clear_result, copy);
    eu_push_server_key(req, reply_entity, copy);
}

/* ------------------------------------------------------------ params */

/* The alerts of params' data as stored JSON text (arena), every known
 * type true or false. */
static const char *
alerts_json(struct eu_req *req, json_t *data)
{
    json_t *given = data ? eu_param_object(data, "alerts") : NULL;
    json_t *out = json_object();
    for (int i = 0; eu_push_alert_types[i]; i++) {
        const char *type = eu_push_alert_types[i];
        bool on = false;
        if (given && eu_param_bool(given, type, &on) < 0)
            on = false;
        if (!on && given && strncmp(type, "admin.", 6) == 0) {
            json_t *admin = eu_param_object(given, "admin");
            if (admin && eu_param_bool(admin, type + 6, &on) < 0)
                on = false;
        }
        json_object_set_new(out, type, json_boolean(on));
    }
    char *text = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    const char *copy = eu_arena_strdup(req->arena, text);
    free(text);
    return copy;
}

/* data[policy] (or a top-level policy, as masto.js sends it): "all" when
 * absent; NULL after answering 422 for another word. */
static const char *
policy_param(struct eu_req *req, json_t *params, json_t *data)
{
    const char *p = data ? eu_param_str(data, "policy") : NULL;
    if (!p)
        p = eu_param_str(params, "policy");
    if (!p || !*p)
        return "all";
    if (strcmp(p, "all") && strcmp(p, "followed") && strcmp(p, "follower") && strcmp(p, "none")) {
        eu_req_reply_error(req, 422, "Validation failed: Policy is not included in the list");
        return NULL;
    }
    return p;
}

static json_t *
params_of(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params)
        eu_req_reply_eu_error(req, &err);
    return params;
}

/* The bearer token as sent (the payload hands it back to the app), as the
 * row keeps it: sealed under the host key (include/eunha/secrets.h), so
 * the database alone holds no usable token. In the request's arena. */
static const char *
bearer_stored(struct eu_req *req)
{
    const char *h = eu_req_header(req, "Authorization");
    const char *t =
        h && strncasecmp(h, "Bearer ", 7) == 0 ? h + 7 : eu_req_query(req, "access_token");
    while (t && *t == ' ')
        t++;
    char *sealed = eu_secret_seal(t ? t : "");
    if (!sealed)
        return t ? t : ""; /* no key loaded: a tool, not the server */
    const char *out = eu_arena_strdup(req->arena, sealed);
    free(sealed);
    return out;
}

static bool
is_http_url(const char *s)
{
    const char *rest = strncmp(s, "https://", 8) == 0  ? s + 8
                       : strncmp(s, "http://", 7) == 0 ? s + 7
                                                       : NULL;
    if (!rest || !*rest || *rest == '/' || strlen(s) > 2048)
        return false;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p <= ' ')
            return false;
    return true;
}

/* ------------------------------------------------------------ handlers */

static void
show(struct eu_req *req)
{
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.token_id)};
    eu_req_stmt(req, &eu_push_sql[PUSH_GET], 1, p, on_row, NULL);
}

static void
create(struct eu_req *req)
{
    json_t *params = params_of(req);
    if (!params)
        return;
    json_t *sub = eu_param_object(params, "subscription");
    if (!sub) {
        eu_req_reply_error(req, 400, "param is missing or the value is empty: subscription");
        return;
    }
    const char *endpoint = eu_param_str(sub, "endpoint");
    json_t *keys = eu_param_object(sub, "keys");
    const char *p256dh = keys ? eu_param_str(keys, "p256dh") : NULL;
    const char *auth = keys ? eu_param_str(keys, "auth") : NULL;
    if (!endpoint || !*endpoint) {
        eu_req_reply_error(req, 422, "Validation failed: Endpoint can't be blank");
        return;
    }
    if (!is_http_url(endpoint)) {
        eu_req_reply_error(req, 422, "Validation failed: Endpoint is invalid");
        return;
    }
    if (!p256dh || !*p256dh || !auth || !*auth) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Key p256dh can't be blank, Key auth "
                           "can't be blank");
        return;
    }
    if (!eu_webpush_keys_valid(p256dh, auth)) {
        eu_req_reply_error(req, 422, "Validation failed: Keys are invalid");
        return;
    }
    bool standard = false;
    if (eu_param_bool(sub, "standard", &standard) < 0)
        standard = false;
    json_t *data = eu_param_object(params, "data");
    const char *policy = policy_param(req, params, data);
    if (!policy)
        return;
    const char *p[] = {
        eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.token_id),
        eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.user_id),
        eu_req_viewer(req),
        bearer_stored(req),
        endpoint,
        p256dh,
        auth,
        alerts_json(req, data),
        policy,
        standard ? "true" : "false",
    };
    eu_req_stmt(req, &eu_push_sql[PUSH_CREATE], 10, p, on_row, NULL);
}

static void
update(struct eu_req *req)
{
    json_t *params = params_of(req);
    if (!params)
        return;
    json_t *data = eu_param_object(params, "data");
    const char *policy = policy_param(req, params, data);
    if (!policy)
        return;
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.token_id),
                       alerts_json(req, data), policy};
    eu_req_stmt(req, &eu_push_sql[PUSH_UPDATE], 3, p, on_row, NULL);
}

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    (void)arg;
    eu_req_reply_json(req, 200, json_object());
}

static void
destroy(struct eu_req *req)
{
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.token_id)};
    eu_req_stmt(req, &eu_push_sql[PUSH_DELETE], 1, p, on_deleted, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_push_routes[] = {
    {EU_HTTP_GET, "/api/v1/push/subscription", show, "push", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/push/subscription", create, "push", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_PUT, "/api/v1/push/subscription", update, "push", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v1/push/subscription", destroy, "push", EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
