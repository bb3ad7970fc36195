/*
 * The instance's public description beside /api/v2/instance, as Mastodon
 * 4.4 serves it under /api/v1/instance/: rules, the about text (extended
 * description), privacy policy, dated terms of service, peers, weekly
 * activity, the tenant's blocked domains and translation languages.
 *
 * What the tenant's staff and the operator write (src/admin/instance.c,
 * src/api/admin_rules.c) is rows of the tenant: instance_rules,
 * terms_of_service, and the settings row 'instance', one jsonb object whose
 * members are listed in docs/instance.md. Each answer is one statement on
 * the tenant's pool. The switches Mastodon has (peers and activity may be
 * hidden, blocked domains shown to all, to signed-in users or to nobody)
 * answer 404 when off, as Mastodon's `head 404` does, so a client cannot
 * tell a hidden list from an absent one.
 */
#include "eunha/api.h"
#include "eunha/isotime.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "instance_internal.h"

enum {
    INFO_RULES,
    INFO_SETTINGS,
    INFO_TERMS,
    INFO_PEERS,
    INFO_ACTIVITY,
    INFO_DOMAIN_BLOCKS,
    INFO_PEERS_SEARCH,
};

/* The settings row 'instance' as text, '{}' when the tenant has none: the
 * column settings of the statements that read a switch from it. */
#define SETTINGS_COLUMN                                                                            \
    "coalesce((SELECT st.value::text FROM settings st WHERE st.tenant_id = $1"                     \
    " AND st.key = 'instance'), '{}') AS settings"

/* Each statement names its columns; the callbacks read them by name. */
const struct eu_sql eu_instance_info_sql[] = {
    [INFO_RULES] = {"instance_info.rules",
                    "SELECT r.id::text AS id, r.text, r.hint FROM instance_rules r"
                    " WHERE r.tenant_id = $1 AND r.deleted_at IS NULL ORDER BY r.priority, r.id"},
    [INFO_SETTINGS] = {"instance_info.settings", "SELECT " SETTINGS_COLUMN},
    /* $2 a date, or NULL for the version in force (the latest whose date
     * has come) or, before any has, the latest announced, as Mastodon's
     * TermsOfServicesController picks. */
    [INFO_TERMS] =
        {"instance_info.terms",
         "SELECT to_char(t.effective_date, 'YYYY-MM-DD') AS effective_date,"
         " t.effective_date <= current_date AS effective, t.text,"
         " (SELECT to_char(min(n.effective_date), 'YYYY-MM-DD') FROM terms_of_service n"
         "  WHERE n.tenant_id = $1 AND n.effective_date > t.effective_date) AS succeeded_by"
         " FROM terms_of_service t WHERE t.tenant_id = $1"
         " AND ($2::date IS NULL OR t.effective_date = $2::date)"
         " ORDER BY t.effective_date <= current_date DESC, t.effective_date DESC LIMIT 1"},
    /* The domains of the remote accounts the tenant stores, less those it
     * suspended (Mastodon's Instance.searchable). First the switch. */
    [INFO_PEERS] = {"instance_info.peers",
                    "SELECT " SETTINGS_COLUMN
                    ", (SELECT coalesce(json_agg(p.domain ORDER BY p.domain), '[]')"
                    "  FROM (SELECT DISTINCT a.domain FROM accounts a WHERE a.tenant_id = $1"
                    "  AND a.domain IS NOT NULL AND NOT EXISTS (SELECT 1 FROM domain_blocks b"
                    "  WHERE b.tenant_id = $1 AND b.severity = 'suspend'"
                    "  AND b.domain = ANY(eunha_domain_suffixes(a.domain)))) p)::text AS list"},
    /*
     * Twelve weeks, this one first; a week starts at 00:00 UTC of the day
     * 7i days ago and runs seven days, as Mastodon's ActivityTracker sums
     * days from i.weeks.ago. Statuses and registrations count what was
     * created (local statuses, local users), logins the distinct users
     * who signed in (user_sign_in_days, tenant migration 0050). A week's
     * first and next week's first snowflake ids, lo and hi (ids are
     * milliseconds << 16, tenant migration 0001), make its statuses and
     * users a range of the primary key rather than a scan by time.
     */
    [INFO_ACTIVITY] =
        {"instance_info.activity",
         "SELECT " SETTINGS_COLUMN ", (SELECT json_agg(json_build_object("
         "  'week', extract(epoch FROM w.s)::bigint::text,"
         "  'statuses', (SELECT count(*) FROM statuses s WHERE s.tenant_id = $1 AND s.local"
         "   AND s.id >= w.lo AND s.id < w.hi)::text,"
         "  'logins', (SELECT count(DISTINCT d.user_id) FROM user_sign_in_days d"
         "   WHERE d.tenant_id = $1 AND d.day >= (w.s AT TIME ZONE 'UTC')::date"
         "   AND d.day < (w.s AT TIME ZONE 'UTC')::date + 7)::text,"
         "  'registrations', (SELECT count(*) FROM users u WHERE u.tenant_id = $1"
         "   AND u.id >= w.lo AND u.id < w.hi)::text)"
         "  ORDER BY w.s DESC)"
         "  FROM (SELECT g.s, (extract(epoch FROM g.s) * 1000)::bigint << 16 AS lo,"
         "   (extract(epoch FROM g.s + interval '7 days') * 1000)::bigint << 16 AS hi"
         "   FROM (SELECT (date_trunc('day', now() AT TIME ZONE 'UTC')"
         "    - i * interval '7 days') AT TIME ZONE 'UTC' AS s"
         "    FROM generate_series(0, 11) i) g) w)::text AS list"},
    /*
     * Mastodon's DomainBlock entity for the blocks users notice (silence,
     * suspend), silenced first then by domain as its by_severity orders;
     * an obfuscated domain has its middle half starred, as
     * DomainBlock#public_domain does, and the digest is of the real one.
     */
    [INFO_DOMAIN_BLOCKS] =
        {"instance_info.domain_blocks",
         "SELECT " SETTINGS_COLUMN ", (SELECT coalesce(json_agg(json_build_object("
         "  'domain', " EU_SQL_BLOCK_PUBLIC_DOMAIN ","
         "  'digest', encode(sha256(convert_to(b.domain, 'UTF8')), 'hex'),"
         "  'severity', b.severity, 'comment', coalesce(b.public_comment, ''))"
         "  ORDER BY b.severity = 'suspend', b.domain), '[]') FROM domain_blocks b"
         "  WHERE b.tenant_id = $1 AND b.severity IN ('silence', 'suspend'))::text AS blocks"},
    /* The peers whose domain starts with $2 (normalised), those with the
     * most accounts first, $3 at most. First the switch. */
    [INFO_PEERS_SEARCH] =
        {"instance_info.peers_search",
         "SELECT " SETTINGS_COLUMN
         ", (SELECT coalesce(json_agg(p.domain ORDER BY p.n DESC, p.domain), '[]')"
         "  FROM (SELECT a.domain, count(*) AS n FROM accounts a WHERE a.tenant_id = $1"
         "  AND a.domain IS NOT NULL AND starts_with(a.domain, $2)"
         "  AND NOT EXISTS (SELECT 1 FROM domain_blocks b"
         "  WHERE b.tenant_id = $1 AND b.severity = 'suspend'"
         "  AND b.domain = ANY(eunha_domain_suffixes(a.domain)))"
         "  GROUP BY a.domain ORDER BY n DESC, a.domain LIMIT $3::int) p)::text AS list"},
    {0},
};

/* The value of column name in res's first row: these answers are one row,
 * each column read once, so no table of column numbers pays. */
static const char *
field(const PGresult *res, const char *name)
{
    return PQgetvalue(res, 0, PQfnumber(res, name));
}

/* The settings object of column settings, a new reference ({} when
 * unreadable). */
static json_t *
settings_of(const PGresult *res)
{
    json_t *o = json_loads(field(res, "settings"), 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_object();
    }
    return o;
}

/* A switch of the settings row: its boolean member, or dflt when unset. */
static bool
setting_bool(json_t *settings, const char *key, bool dflt)
{
    json_t *v = json_object_get(settings, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* ------------------------------------------------------------------ rules */

/* Mastodon 4.4's Rule has translations by language; a tenant's rules are
 * written in one, so the map is empty. */

static void
on_rules(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    int c_id = PQfnumber(res, "id"), c_text = PQfnumber(res, "text");
    int c_hint = PQfnumber(res, "hint");
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out,
                              json_pack("{s:s, s:s, s:s, s:{}}", "id", PQgetvalue(res, i, c_id),
                                        "text", PQgetvalue(res, i, c_text), "hint",
                                        PQgetvalue(res, i, c_hint), "translations"));
    eu_req_reply_json(req, 200, out);
}

static void
rules(struct eu_req *req)
{
    eu_req_stmt(req, &eu_instance_info_sql[INFO_RULES], 0, NULL, on_rules, NULL);
}

/* ------------------------------------------ extended description, policy */

/* arg names the member: "extended_description" or "privacy_policy". Both
 * are HTML as the operator wrote it (Mastodon renders its admins'
 * Markdown without sanitizing either: the text is the instance's own).
 * An unset about text has no date; an unset policy is empty. */
static void
on_text(struct eu_req *req, PGresult *res, void *arg)
{
    const char *key = arg;
    json_t *settings = settings_of(res);
    const char *content = json_string_value(json_object_get(settings, key));
    const char *stamp = json_string_value(
        json_object_get(settings, eu_arena_sprintf(req->arena, "%s_updated_at", key)));
    json_t *body = json_pack("{s:o, s:s}", "updated_at", stamp ? json_string(stamp) : json_null(),
                             "content", content ? content : "");
    json_decref(settings);
    eu_req_reply_json(req, 200, body);
}

static void
extended_description(struct eu_req *req)
{
    eu_req_stmt(req, &eu_instance_info_sql[INFO_SETTINGS], 0, NULL, on_text,
                (void *)"extended_description");
}

static void
privacy_policy(struct eu_req *req)
{
    eu_req_stmt(req, &eu_instance_info_sql[INFO_SETTINGS], 0, NULL, on_text,
                (void *)"privacy_policy");
}

/* ------------------------------------------------------- terms of service */

const char *
eu_instance_terms_text(struct eu_req *req, const char *text)
{
    size_t len = strlen(text), dlen = strlen(req->tenant->domain);
    char *sub = eu_arena_alloc(req->arena, len * (dlen > 9 ? dlen / 9 + 1 : 1) + 1), *o = sub;
    for (const char *p = text; *p;) {
        if (strncmp(p, "%{domain}", 9) == 0) {
            memcpy(o, req->tenant->domain, dlen);
            o += dlen;
            p += 9;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return sub;
}

static void
on_terms(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The text is plain, paragraphs on blank lines. */
    const char *sub = eu_instance_terms_text(req, field(res, "text"));
    int next = PQfnumber(res, "succeeded_by");
    json_t *body =
        json_pack("{s:s, s:b, s:s, s:o}", "effective_date", field(res, "effective_date"),
                  "effective", field(res, "effective")[0] == 't', "content",
                  eu_text_to_simple_html(req, sub), "succeeded_by",
                  PQgetisnull(res, 0, next) ? json_null() : json_string(PQgetvalue(res, 0, next)));
    eu_req_reply_json(req, 200, body);
}

static bool
is_date(const char *s)
{
    return eu_time_day_prefix(s) && strlen(s) == 10;
}

static void
terms_of_service(struct eu_req *req)
{
    const char *date = eu_req_param(req, "date");
    /* A malformed date names no version; PostgreSQL would refuse it 500. */
    if (date && !is_date(date)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {date};
    eu_req_stmt(req, &eu_instance_info_sql[INFO_TERMS], 1, p, on_terms, NULL);
}

/* ------------------------------------------------------ peers and activity */

/* arg is the switch's name in the settings row; on by default, as
 * Mastodon's peers_api_enabled and activity_api_enabled are. Column list
 * is the answer as JSON text. */
static void
on_switched_list(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *settings = settings_of(res);
    bool on = setting_bool(settings, arg, true);
    json_decref(settings);
    if (!on) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *list = json_loads(field(res, "list"), 0, NULL);
    eu_req_reply_json(req, 200, list ? list : json_array());
}

static void
peers(struct eu_req *req)
{
    eu_req_stmt(req, &eu_instance_info_sql[INFO_PEERS], 0, NULL, on_switched_list,
                (void *)"peers_api_enabled");
}

/* Mastodon's Api::V1::Peers::SearchController: 10 at most. */
#define PEERS_SEARCH_LIMIT "10"

/* GET /api/v1/peers/search?q=: known domains starting with q, for the
 * clients' domain pickers; [] for no q, and 404 when peers are not shown,
 * as Mastodon. */
static void
peers_search(struct eu_req *req)
{
    const char *q = eu_req_query(req, "q");
    char *norm = eu_arena_strdup(req->arena, q ? q : "");
    char *s = norm;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    for (char *c = s; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    if (!*s) {
        eu_req_reply_json(req, 200, json_array());
        return;
    }
    const char *p[] = {s, PEERS_SEARCH_LIMIT};
    eu_req_stmt(req, &eu_instance_info_sql[INFO_PEERS_SEARCH], 2, p, on_switched_list,
                (void *)"peers_api_enabled");
}

static void
activity(struct eu_req *req)
{
    eu_req_stmt(req, &eu_instance_info_sql[INFO_ACTIVITY], 0, NULL, on_switched_list,
                (void *)"activity_api_enabled");
}

/* --------------------------------------------------------- domain blocks */

/* "all", "users" or "disabled" (the default, as Mastodon's). */
static bool
visible_to(struct eu_req *req, json_t *settings, const char *key)
{
    const char *v = json_string_value(json_object_get(settings, key));
    if (v && strcmp(v, "all") == 0)
        return true;
    return v && strcmp(v, "users") == 0 && req->auth.present && req->auth.user_id != 0;
}

static void
on_domain_blocks(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *settings = settings_of(res);
    bool shown = visible_to(req, settings, "show_domain_blocks");
    bool why = visible_to(req, settings, "show_domain_blocks_rationale");
    json_decref(settings);
    if (!shown) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *list = json_loads(field(res, "blocks"), 0, NULL);
    if (!list)
        list = json_array();
    size_t i;
    json_t *b;
    json_array_foreach(list, i, b)
    {
        if (!why)
            json_object_set_new(b, "comment", json_null());
    }
    eu_req_reply_json(req, 200, list);
}

static void
domain_blocks(struct eu_req *req)
{
    eu_req_stmt(req, &eu_instance_info_sql[INFO_DOMAIN_BLOCKS], 0, NULL, on_domain_blocks, NULL);
}

/* ------------------------------------------------- translation languages */

/* No translation service is configured, so no pair of languages: Mastodon
 * answers {} then, and configuration.translation.enabled is false. */
static void
translation_languages(struct eu_req *req)
{
    eu_req_reply_json(req, 200, json_object());
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_instance_info_routes[] = {
    {EU_HTTP_GET, "/api/v1/instance/rules", rules, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/instance/extended_description", extended_description, NULL,
     EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/instance/privacy_policy", privacy_policy, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/instance/terms_of_service", terms_of_service, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/instance/terms_of_service/:date", terms_of_service, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/instance/peers", peers, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/instance/activity", activity, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/peers/search", peers_search, NULL, EU_ROUTE_API},
    /* Signed-in users may see what "users" shows them: the token is read
     * when one is sent. */
    {EU_HTTP_GET, "/api/v1/instance/domain_blocks", domain_blocks, NULL,
     EU_ROUTE_API | EU_ROUTE_AUTH_OPT},
    {EU_HTTP_GET, "/api/v1/instance/translation_languages", translation_languages, NULL,
     EU_ROUTE_API},
    {0},
};
