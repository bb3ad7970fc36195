/*
 * GET /api/v1/instance and /api/v2/instance: Mastodon's Instance entities,
 * with the tenant's own title, counts and description (docs/instance.md).
 * All of it comes from one statement on the tenant's database, the monthly
 * active users included: they are the users who signed in, recorded by day
 * (tenant migration 0050), which a HyperLogLog in Redis used to be meant
 * for but nothing filled.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/mediaapi.h"
#include "eunha/polls.h"
#include "eunha/push.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

#define EU_MASTODON_VERSION "4.3.0 (compatible; Eunha " EUNHA_VERSION ")"

enum {
    INSTANCE_STATS,
};

const struct eu_sql eu_instance_sql[] = {
    /*
     * Counts, the registrations mode, the users active in the last four
     * weeks (those who signed in, as Mastodon's active_user_count(4)
     * counts logins), the settings row 'instance' (texts
     * and contact, src/admin/instance.c), the rules, and the contact
     * account (a local username in the settings) as Account columns, NULL
     * without one.
     */
    [INSTANCE_STATS] =
        {"instance.stats",
         "SELECT coalesce((SELECT c.user_count FROM instance_counters c"
         "  WHERE c.tenant_id = $1), 0) AS user_count,"
         " (SELECT greatest(coalesce(sum(c.n), 0), 0) FROM instance_status_counts c"
         "  WHERE c.tenant_id = $1) AS status_count,"
         " (SELECT count(DISTINCT domain) FROM accounts WHERE tenant_id = $1"
         "  AND domain IS NOT NULL) AS domain_count,"
         " coalesce((SELECT value #>> '{}' FROM settings WHERE tenant_id = $1"
         "  AND key = 'registrations_mode'), 'open') AS registrations_mode,"
         " (SELECT count(DISTINCT d.user_id) FROM user_sign_in_days d WHERE d.tenant_id = $1"
         "  AND d.day > current_date - 28) AS active_month,"
         " coalesce(st.value::text, '{}') AS settings,"
         " (SELECT coalesce(json_agg(json_build_object('id', r.id::text, 'text', r.text,"
         "  'hint', r.hint, 'translations', '{}'::json) ORDER BY r.priority, r.id), '[]')"
         "  FROM instance_rules r"
         "  WHERE r.tenant_id = $1 AND r.deleted_at IS NULL)::text AS rules,"
         " a.id IS NOT NULL AS has_contact, (eunha_account(a)).*"
         " FROM (SELECT 1) one"
         " LEFT JOIN settings st ON st.tenant_id = $1 AND st.key = 'instance'"
         " LEFT JOIN accounts a ON a.tenant_id = $1 AND coalesce(lower(a.domain), '') = ''"
         "  AND lower(a.username) = lower(st.value ->> 'contact_username')"},
    {0},
};

struct stats {
    json_int_t users, statuses, domains, active_month;
    bool registrations, approval_required; /* settings 'registrations_mode' */
    json_t *settings;                      /* the settings row 'instance' */
    json_t *rules;                         /* Rule entities */
    json_t *contact;                       /* the contact Account, or null */
    const char *vapid_key;                 /* Web Push's public key (v2 only), or NULL */
};

typedef void (*stats_cb)(struct eu_req *req, struct stats *st);

struct stats_call {
    stats_cb done;
    const char *vapid_key; /* arena */
};

static void
drop_json(void *v)
{
    json_decref(v);
}

/* Hands v's reference to the request's arena, which drops it when the
 * request ends; returns v, borrowed from then on. */
static json_t *
keep(struct eu_req *req, json_t *v)
{
    eu_arena_on_free(req->arena, drop_json, v);
    return v;
}

/* The value of column name in res's one row: each is read once, so no
 * table of column numbers pays. */
static const char *
field(const PGresult *res, const char *name)
{
    return PQgetvalue(res, 0, PQfnumber(res, name));
}

/* The JSON in column name, or an empty object or array; on the request's
 * cleanup list, so the callbacks only borrow it. */
static json_t *
json_column(struct eu_req *req, const PGresult *res, const char *name, bool array)
{
    json_t *v = json_loads(field(res, name), 0, NULL);
    if (!v || (array ? !json_is_array(v) : !json_is_object(v))) {
        json_decref(v);
        v = array ? json_array() : json_object();
    }
    return keep(req, v);
}

static void
on_stats(struct eu_req *req, PGresult *res, void *arg)
{
    struct stats_call *c = arg;
    struct stats st = {0};
    st.users = strtoll(field(res, "user_count"), NULL, 10);
    st.statuses = strtoll(field(res, "status_count"), NULL, 10);
    st.domains = strtoll(field(res, "domain_count"), NULL, 10);
    const char *mode = field(res, "registrations_mode");
    st.registrations = strcmp(mode, "closed") != 0;
    st.approval_required = strcmp(mode, "approval") == 0;
    st.active_month = strtoll(field(res, "active_month"), NULL, 10);
    st.settings = json_column(req, res, "settings", false);
    st.rules = json_column(req, res, "rules", true);
    if (field(res, "has_contact")[0] == 't') {
        struct eu_account_cols ac;
        eu_account_cols_find(&ac, res);
        st.contact = eu_account_json(req, res, 0, &ac);
    } else {
        st.contact = json_null();
    }
    keep(req, st.contact);
    st.vapid_key = c->vapid_key;
    c->done(req, &st);
}

/* Reads the tenant's counts and description, then calls done; a failure
 * is answered without calling it. */
static void
load_stats(struct eu_req *req, stats_cb done)
{
    /* On the arena (not the heap): nothing has to free it when the
     * statement fails. */
    struct stats_call *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->done = done;
    eu_req_stmt(req, &eu_instance_sql[INSTANCE_STATS], 0, NULL, on_stats, c);
}

/* A string member of the settings, or dflt. Borrowed. */
static const char *
setting(const struct stats *st, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(st->settings, key));
    return v ? v : dflt;
}

/* The languages the operator named, or English. A new reference. */
static json_t *
languages(const struct stats *st)
{
    json_t *l = json_object_get(st->settings, "languages");
    return json_is_array(l) && json_array_size(l) ? json_deep_copy(l) : json_pack("[s]", "en");
}

static json_t *
configuration(const struct eu_config *cfg)
{
    json_t *c = json_pack(
        "{s:{s:i,s:i,s:i,s:i,s:i,s:i}, s:{s:i,s:i,s:i}, s:{s:i,s:i,s:i,s:i}, s:{s:b}}", "accounts",
        "max_featured_tags", 10, "max_pinned_statuses", 5, "max_note_length", 500,
        "max_profile_fields", 4, "profile_field_name_limit", 255, "profile_field_value_limit", 255,
        "statuses", "max_characters", 500, "max_media_attachments", 4,
        "characters_reserved_per_url", 23, "polls", "max_options", EU_POLL_MAX_OPTIONS,
        "max_characters_per_option", EU_POLL_MAX_OPTION_CHARS, "min_expiration", 300,
        "max_expiration", EU_POLL_MAX_EXPIRATION, "translation", "enabled", 0);
    /* From [media], as uploads are held to them (src/api/media.c). */
    json_object_set_new(c, "media_attachments", eu_media_config_json(cfg));
    return c;
}

/* The streaming API on the tenant's own host: wss:// behind https. */
static json_t *
streaming_url(struct eu_req *req)
{
    const char *base = eu_req_base_url(req);
    /* The port the client came to, when it named one (a tenant reached
     * directly, as in tests); not behind a proxy, whose Host is its own. */
    const char *raw = eu_req_header(req, "Host");
    size_t n = strlen(req->host);
    const char *port = raw && strncasecmp(raw, req->host, n) == 0 && raw[n] == ':' &&
                               strspn(raw + n + 1, "0123456789") == strlen(raw + n + 1)
                           ? raw + n
                           : "";
    char url[600];
    snprintf(url, sizeof(url), "%s%s%s", strncmp(base, "https:", 6) == 0 ? "wss" : "ws",
             strchr(base, ':'), port);
    return json_string(url);
}

/* The thumbnail the operator uploaded or named by URL (url, and blurhash
 * and versions when known), else the site's icon, as Mastodon falls back
 * to its preview. */
static json_t *
thumbnail(struct eu_req *req, const struct stats *st)
{
    const char *url = setting(st, "thumbnail_url", NULL);
    const char *key = setting(st, "thumbnail_key", NULL);
    if (key) {
        /* Uploaded (src/admin/instance.c): the store's URL of its key. */
        char *stored = eu_profile_image_url(req->app, eu_req_base_url(req), key);
        url = eu_arena_strdup(req->arena, stored);
        free(stored);
    }
    if (!url)
        return json_pack("{s:s}", "url",
                         eu_arena_sprintf(req->arena, "%s/favicon.ico", eu_req_base_url(req)));
    json_t *t = json_pack("{s:s, s:{s:s}}", "url", url, "versions", "@1x", url);
    const char *hash = setting(st, "thumbnail_blurhash", NULL);
    if (hash)
        json_object_set_new(t, "blurhash", json_string(hash));
    return t;
}

/* Mastodon's closed_registrations_message, shown while sign-up is closed;
 * the operator writes plain text. */
static json_t *
registrations_message(struct eu_req *req, const struct stats *st)
{
    const char *m = setting(st, "registrations_message", NULL);
    if (st->registrations || !m || !*m)
        return json_null();
    return json_string(eu_text_to_simple_html(req, m));
}

static void
reply_v1(struct eu_req *req, struct stats *st)
{
    const struct eu_tenant *t = req->tenant;
    const char *desc = setting(st, "description", "");
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:{}, s:{s:I,s:I,s:I}, s:s, s:o, s:b, s:b, s:b,"
        " s:o, s:O, s:O}",
        "uri", t->domain, "title", t->title, "short_description", desc, "description", desc,
        "email", setting(st, "contact_email", ""), "version", EU_MASTODON_VERSION, "urls", "stats",
        "user_count", st->users, "status_count", st->statuses, "domain_count", st->domains,
        "thumbnail", json_string_value(json_object_get(keep(req, thumbnail(req, st)), "url")),
        "languages", languages(st), "registrations", st->registrations, "approval_required",
        st->approval_required, "invites_enabled", 0, "configuration", configuration(req->app->cfg),
        "contact_account", st->contact, "rules", st->rules);
    json_object_set_new(json_object_get(body, "urls"), "streaming_api", streaming_url(req));
    eu_req_reply_json(req, 200, body);
}

void
eu_api_instance_v1(struct eu_req *req)
{
    load_stats(req, reply_v1);
}

static void
reply_v2(struct eu_req *req, struct stats *st)
{
    const struct eu_tenant *t = req->tenant;
    json_t *conf = configuration(req->app->cfg);
    /* Only the streaming URL: Mastodon's about, privacy_policy and
     * terms_of_service are web pages, which do not exist yet (the texts
     * are served under /api/v1/instance/); status waits for a status-page
     * setting. */
    json_object_set_new(conf, "urls", json_pack("{s:o}", "streaming", streaming_url(req)));
    json_object_set_new(conf, "vapid",
                        json_pack("{s:s}", "public_key", st->vapid_key ? st->vapid_key : ""));
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:{s:{s:I}}, s:o, s:[], s:o, s:o,"
        " s:{s:b,s:b,s:b,s:o,s:o,s:n}, s:{s:i}, s:{s:s,s:O}, s:O}",
        "domain", t->domain, "title", t->title, "version", EU_MASTODON_VERSION, "source_url",
        "https://eunha.invalid/source", "description", setting(st, "description", ""), "usage",
        "users", "active_month", st->active_month, "thumbnail", thumbnail(req, st), "icon",
        "languages", languages(st), "configuration", conf, "registrations", "enabled",
        st->registrations, "approval_required", st->approval_required, "reason_required",
        st->approval_required, "message", registrations_message(req, st), "min_age",
        json_incref(json_is_integer(json_object_get(st->settings, "min_age"))
                        ? json_object_get(st->settings, "min_age")
                        : json_null()),
        "url", "api_versions", "mastodon", 2, "contact", "email", setting(st, "contact_email", ""),
        "account", st->contact, "rules", st->rules);
    eu_req_reply_json(req, 200, body);
}

/* With the tenant's VAPID key (made on first need, src/api/push.c). */
static void
v2_with_key(struct eu_req *req, const char *key, void *arg)
{
    (void)arg;
    struct stats_call *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->done = reply_v2;
    c->vapid_key = eu_arena_strdup(req->arena, key);
    eu_req_stmt(req, &eu_instance_sql[INSTANCE_STATS], 0, NULL, on_stats, c);
}

void
eu_api_instance_v2(struct eu_req *req)
{
    eu_push_server_key(req, v2_with_key, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_instance_routes[] = {
    {EU_HTTP_GET, "/api/v1/instance", eu_api_instance_v1, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v2/instance", eu_api_instance_v2, NULL, EU_ROUTE_API},
    {0},
};
