/*
 * The staff's dashboard, Mastodon's admin API for it: POST
 * /api/v1/admin/measures (daily counts over a range, with the total and
 * that of the range before), /api/v1/admin/dimensions (the top keys of a
 * breakdown) and /api/v1/admin/retention (cohorts of sign-ups and the
 * share of each still signing in, period by period). All need the role's
 * view_dashboard and a token with admin:read.
 *
 * Everything is counted from the tenant's own rows when asked, one
 * statement per key, each bounded by the primary key's snowflake range of
 * the days asked (or an index on the day), so a dashboard costs the rows
 * of its range, never a scan of the tenant. Logins are the days a user
 * signed in (user_sign_in_days, tenant migration 0050), the same rows
 * /api/v1/instance/activity counts. The keys a request names run one
 * after the other, and their answers are put together in the order asked;
 * unknown keys are left out, as Mastodon does. docs/dashboard.md says
 * what each key counts.
 */
#include "eunha/api.h"
#include "eunha/isotime.h"

#include <ctype.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* A range longer than this is refused: a year and a month of days is what
 * Mastodon's dashboard ever asks, and the cost of a measure grows with it. */
#define MAX_DAYS 400
/* Retention's grid is periods squared; Mastodon's dashboard asks for a
 * month of days or a year of months. */
#define MAX_PERIODS 62
/* The keys one request may name (Mastodon's dashboard asks for a few). */
#define MAX_KEYS 32
/* Dimensions: Mastodon's default limit and our cap. */
#define DIMENSION_LIMIT 10
#define DIMENSION_LIMIT_MAX 100

/* The series bounds as SQL text. */
#define STR_(x) #x
#define STR(x) STR_(x)

/* ------------------------------------------------------------- measures */

/*
 * A measure's statement: $2 the first day, $3 the last (dates, inclusive),
 * $4 the key's parameter (a tag id or a domain, '' when it has none). ROWS
 * selects the rows of the range and of the range before it (b.p to b.e),
 * each with its day and x, what AGG counts (count(*), a distinct count of
 * x, or a sum). The answer is one row: data, the days of the range as
 * Mastodon's [{date, value}] JSON; total and previous_total.
 *
 * The days are an offset series from a constant generate_series, so the
 * planner knows how many there can be (a series of computed bounds is
 * estimated at a thousand rows, which the plan check would price high).
 */
#define MEASURE(ROWS, AGG)                                                                         \
    "WITH b AS (SELECT $2::date AS s, $3::date AS e,"                                              \
    " $2::date - ($3::date - $2::date + 1) AS p, $4::text AS param),"                              \
    " r AS MATERIALIZED (" ROWS "),"                                                               \
    " c AS (SELECT r.day, " AGG " AS n FROM r GROUP BY r.day)"                                     \
    " SELECT (SELECT json_agg(json_build_object('date',"                                           \
    "  to_char((b.s + i)::timestamp, 'YYYY-MM-DD\"T00:00:00Z\"'), 'value', coalesce(c.n, "         \
    "0)::text) ORDER BY i)"                                                                        \
    "  FROM b CROSS JOIN generate_series(0, " STR(                                                 \
        MAX_DAYS) ") i"                                                                            \
                  "  LEFT JOIN c ON c.day = b.s + i WHERE b.s + i <= b.e)::text AS data,"          \
                  " (SELECT coalesce(" AGG ", 0) FROM r, b WHERE r.day >= b.s)::text AS total,"    \
                  " (SELECT coalesce(" AGG                                                         \
                  ", 0) FROM r, b WHERE r.day < b.s)::text AS previous_total"

/* The rows of a snowflake column col in the range and the one before. */
#define ID_RANGE(col) col " >= eunha_day_first_id(b.p) AND " col " < eunha_day_first_id(b.e + 1)"

#define COUNT "count(*)"
#define DISTINCT "count(DISTINCT r.x)"
#define SUM "sum(r.x)"

/* The statuses that carry tag $4 in the range, their account joined. */
#define TAG_ROWS(X)                                                                                \
    "SELECT eunha_id_day(t.status_id) AS day, " X " AS x FROM b, statuses_tags t"                  \
    " JOIN statuses s ON s.tenant_id = t.tenant_id AND s.id = t.status_id"                         \
    " JOIN accounts a ON a.tenant_id = s.tenant_id AND a.id = s.account_id"                        \
    " WHERE t.tenant_id = $1 AND t.tag_id = nullif(b.param, '')::bigint AND " ID_RANGE(            \
        "t.status_id") " AND s.deleted_at IS NULL"

/* The accounts of domain $4, the start of every instance_* measure. */
#define DOMAIN_ACCOUNTS "a.tenant_id = $1 AND a.domain = b.param"

enum {
    M_ACTIVE_USERS,
    M_NEW_USERS,
    M_INTERACTIONS,
    M_OPENED_REPORTS,
    M_RESOLVED_REPORTS,
    M_TAG_ACCOUNTS,
    M_TAG_USES,
    M_TAG_SERVERS,
    M_INSTANCE_ACCOUNTS,
    M_INSTANCE_MEDIA,
    M_INSTANCE_REPORTS,
    M_INSTANCE_STATUSES,
    M_INSTANCE_FOLLOWS,
    M_INSTANCE_FOLLOWERS,
    M_COUNT
};

const struct eu_sql eu_admin_dashboard_sql[] = {
    /* Distinct users who signed in, as /api/v1/instance/activity's logins. */
    [M_ACTIVE_USERS] = {"admin_dashboard.active_users",
                        MEASURE("SELECT d.day, d.user_id AS x FROM b, user_sign_in_days d"
                                " WHERE d.tenant_id = $1 AND d.day >= b.p AND d.day <= b.e",
                                DISTINCT)},
    [M_NEW_USERS] = {"admin_dashboard.new_users",
                     MEASURE("SELECT eunha_id_day(u.id) AS day, u.id AS x FROM b, users u"
                             " WHERE u.tenant_id = $1 AND " ID_RANGE("u.id"),
                             COUNT)},
    /* Favourites, reblogs and replies that local statuses received. */
    [M_INTERACTIONS] =
        {"admin_dashboard.interactions",
         MEASURE(
             "SELECT eunha_id_day(f.id) AS day, f.id AS x FROM b, favourites f"
             " JOIN statuses o ON o.tenant_id = f.tenant_id AND o.id = f.status_id"
             " WHERE f.tenant_id = $1 AND " ID_RANGE(
                 "f.id") " AND o.local"
                         " UNION ALL SELECT eunha_id_day(s.id), s.id FROM b, statuses s"
                         " JOIN statuses o ON o.tenant_id = s.tenant_id"
                         "  AND o.id = coalesce(s.reblog_of_id, s.in_reply_to_id)"
                         " WHERE s.tenant_id = $1 AND " ID_RANGE("s.id") " AND s.deleted_at IS NULL"
                                                                         " AND o.local",
             COUNT)},
    [M_OPENED_REPORTS] = {"admin_dashboard.opened_reports",
                          MEASURE("SELECT eunha_id_day(p.id) AS day, p.id AS x FROM b, reports p"
                                  " WHERE p.tenant_id = $1 AND " ID_RANGE("p.id"),
                                  COUNT)},
    [M_RESOLVED_REPORTS] = {"admin_dashboard.resolved_reports",
                            MEASURE("SELECT (p.action_taken_at AT TIME ZONE 'UTC')::date AS day,"
                                    " p.id AS x FROM b, reports p WHERE p.tenant_id = $1"
                                    " AND p.action_taken_at >= b.p::timestamp AT TIME ZONE 'UTC'"
                                    " AND p.action_taken_at < (b.e + 1)::timestamp AT TIME ZONE "
                                    "'UTC'",
                                    COUNT)},
    [M_TAG_ACCOUNTS] = {"admin_dashboard.tag_accounts", MEASURE(TAG_ROWS("a.id"), DISTINCT)},
    [M_TAG_USES] = {"admin_dashboard.tag_uses", MEASURE(TAG_ROWS("s.id"), COUNT)},
    /* The instance itself is one of the servers ('' for its own accounts). */
    [M_TAG_SERVERS] = {"admin_dashboard.tag_servers",
                       MEASURE(TAG_ROWS("coalesce(a.domain, '')"), DISTINCT)},
    [M_INSTANCE_ACCOUNTS] = {"admin_dashboard.instance_accounts",
                             MEASURE("SELECT eunha_id_day(a.id) AS day, a.id AS x FROM b,"
                                     " accounts a WHERE " DOMAIN_ACCOUNTS " AND " ID_RANGE("a.id"),
                                     COUNT)},
    [M_INSTANCE_MEDIA] = {"admin_dashboard.instance_media_attachments",
                          MEASURE("SELECT eunha_id_day(m.id) AS day,"
                                  " m.file_size + m.preview_size AS x FROM b, media_attachments m"
                                  " JOIN accounts a ON a.tenant_id = m.tenant_id"
                                  " AND a.id = m.account_id WHERE m.tenant_id = $1"
                                  " AND " ID_RANGE("m.id") " AND " DOMAIN_ACCOUNTS,
                                  SUM)},
    [M_INSTANCE_REPORTS] = {"admin_dashboard.instance_reports",
                            MEASURE("SELECT eunha_id_day(p.id) AS day, p.id AS x FROM b, reports p"
                                    " JOIN accounts a ON a.tenant_id = p.tenant_id"
                                    " AND a.id = p.target_account_id WHERE p.tenant_id = $1"
                                    " AND " ID_RANGE("p.id") " AND " DOMAIN_ACCOUNTS,
                                    COUNT)},
    [M_INSTANCE_STATUSES] = {"admin_dashboard.instance_statuses",
                             MEASURE("SELECT eunha_id_day(s.id) AS day, s.id AS x FROM b,"
                                     " accounts a JOIN statuses s ON s.tenant_id = a.tenant_id"
                                     " AND s.account_id = a.id WHERE " DOMAIN_ACCOUNTS
                                     " AND " ID_RANGE("s.id") " AND s.deleted_at IS NULL",
                                     COUNT)},
    /* Accounts of the domain following the tenant's own. */
    [M_INSTANCE_FOLLOWS] = {"admin_dashboard.instance_follows",
                            MEASURE("SELECT eunha_id_day(f.id) AS day, f.id AS x FROM b,"
                                    " accounts a JOIN follows f ON f.tenant_id = a.tenant_id"
                                    " AND f.account_id = a.id JOIN accounts t"
                                    " ON t.tenant_id = f.tenant_id AND t.id = f.target_account_id"
                                    " WHERE " DOMAIN_ACCOUNTS
                                    " AND " ID_RANGE("f.id") " AND t.domain IS NULL",
                                    COUNT)},
    /* The tenant's own accounts following accounts of the domain. */
    [M_INSTANCE_FOLLOWERS] = {"admin_dashboard.instance_followers",
                              MEASURE("SELECT eunha_id_day(f.id) AS day, f.id AS x FROM b,"
                                      " accounts a JOIN follows f ON f.tenant_id = a.tenant_id"
                                      " AND f.target_account_id = a.id JOIN accounts o"
                                      " ON o.tenant_id = f.tenant_id AND o.id = f.account_id"
                                      " WHERE " DOMAIN_ACCOUNTS
                                      " AND " ID_RANGE("f.id") " AND o.domain IS NULL",
                                      COUNT)},
    {0},
};

/* Mastodon's measure keys, in the order of the statements above; unit is
 * the Measure's (only bytes have one); param names the key's parameter
 * object member ("id" of a tag, "domain" of a server) or NULL. */
static const struct measure_key {
    const char *key, *unit, *param;
} measure_keys[M_COUNT] = {
    [M_ACTIVE_USERS] = {"active_users", NULL, NULL},
    [M_NEW_USERS] = {"new_users", NULL, NULL},
    [M_INTERACTIONS] = {"interactions", NULL, NULL},
    [M_OPENED_REPORTS] = {"opened_reports", NULL, NULL},
    [M_RESOLVED_REPORTS] = {"resolved_reports", NULL, NULL},
    [M_TAG_ACCOUNTS] = {"tag_accounts", NULL, "id"},
    [M_TAG_USES] = {"tag_uses", NULL, "id"},
    [M_TAG_SERVERS] = {"tag_servers", NULL, "id"},
    [M_INSTANCE_ACCOUNTS] = {"instance_accounts", NULL, "domain"},
    [M_INSTANCE_MEDIA] = {"instance_media_attachments", "bytes", "domain"},
    [M_INSTANCE_REPORTS] = {"instance_reports", NULL, "domain"},
    [M_INSTANCE_STATUSES] = {"instance_statuses", NULL, "domain"},
    [M_INSTANCE_FOLLOWS] = {"instance_follows", NULL, "domain"},
    [M_INSTANCE_FOLLOWERS] = {"instance_followers", NULL, "domain"},
};

/* ----------------------------------------------------------- dimensions */

/*
 * A dimension's statement: $2 the first day, $3 the last, $4 the limit,
 * $5 the key's parameter ('' when none). Rows key, human_key, value,
 * largest value first.
 */
#define DIM_RANGE                                                                                  \
    "WITH b AS (SELECT $2::date AS s, $3::date AS e, $4::int AS lim, $5::text AS param) "
#define DIM_ID_RANGE(col)                                                                          \
    col " >= eunha_day_first_id(b.s) AND " col " < eunha_day_first_id(b.e + 1)"
#define DIM_TOP " ORDER BY value DESC, key LIMIT (SELECT lim FROM b)"

enum {
    D_LANGUAGES,
    D_SOURCES,
    D_SERVERS,
    D_SPACE_USAGE,
    D_SOFTWARE_VERSIONS,
    D_TAG_SERVERS,
    D_TAG_LANGUAGES,
    D_INSTANCE_ACCOUNTS,
    D_INSTANCE_LANGUAGES,
    D_COUNT
};

const struct eu_sql eu_admin_dimensions_sql[] = {
    /* The locales of the users who signed in during the range. */
    [D_LANGUAGES] = {"admin_dimensions.languages",
                     DIM_RANGE "SELECT coalesce(u.locale, 'en') AS key, count(*) AS value"
                               " FROM users u WHERE u.tenant_id = $1 AND u.id IN"
                               " (SELECT d.user_id FROM b, user_sign_in_days d"
                               "  WHERE d.tenant_id = $1 AND d.day >= b.s AND d.day <= b.e)"
                               " GROUP BY 1" DIM_TOP},
    /* Sign-ups of the range by the application of their first token
     * ("Website" for the web form, which makes none). */
    [D_SOURCES] = {"admin_dimensions.sources",
                   DIM_RANGE "SELECT coalesce((SELECT o.name FROM oauth_access_tokens t"
                             "  JOIN oauth_applications o ON o.tenant_id = t.tenant_id"
                             "  AND o.id = t.application_id WHERE t.tenant_id = $1"
                             "  AND t.user_id = u.id ORDER BY t.id LIMIT 1), 'Website') AS key,"
                             " count(*) AS value FROM b, users u WHERE u.tenant_id = $1"
                             " AND " DIM_ID_RANGE("u.id") " GROUP BY 1" DIM_TOP},
    /* The remote servers whose statuses arrived in the range. */
    [D_SERVERS] = {"admin_dimensions.servers", DIM_RANGE
                   "SELECT a.domain AS key, count(*) AS value FROM b, statuses s"
                   " JOIN accounts a ON a.tenant_id = s.tenant_id AND a.id = s.account_id"
                   " WHERE s.tenant_id = $1 AND " DIM_ID_RANGE(
                       "s.id") " AND NOT s.local AND s.deleted_at IS NULL AND a.domain IS NOT NULL"
                               " GROUP BY 1" DIM_TOP},
    /* The tenant's stored media (instance_counters, migration 0025); the
     * database and Redis are shared with other tenants, so not its own. */
    [D_SPACE_USAGE] = {"admin_dimensions.space_usage",
                       "SELECT 'media' AS key, coalesce((SELECT c.media_bytes FROM"
                       " instance_counters c WHERE c.tenant_id = $1), 0) AS value"},
    [D_SOFTWARE_VERSIONS] = {"admin_dimensions.software_versions",
                             "SELECT 'postgresql' AS key, current_setting('server_version')"
                             " AS value WHERE $1::bigint IS NOT NULL"},
    [D_TAG_SERVERS] = {"admin_dimensions.tag_servers",
                       DIM_RANGE "SELECT coalesce(a.domain, '') AS key, count(*) AS value"
                                 " FROM b, statuses_tags t JOIN statuses s"
                                 " ON s.tenant_id = t.tenant_id AND s.id = t.status_id"
                                 " JOIN accounts a ON a.tenant_id = s.tenant_id"
                                 " AND a.id = s.account_id WHERE t.tenant_id = $1"
                                 " AND t.tag_id = nullif(b.param, '')::bigint"
                                 " AND " DIM_ID_RANGE("t.status_id") " AND s.deleted_at IS NULL"
                                                                     " GROUP BY 1" DIM_TOP},
    [D_TAG_LANGUAGES] = {"admin_dimensions.tag_languages", DIM_RANGE
                         "SELECT coalesce(s.language, 'und') AS key, count(*) AS value"
                         " FROM b, statuses_tags t JOIN statuses s"
                         " ON s.tenant_id = t.tenant_id AND s.id = t.status_id"
                         " WHERE t.tenant_id = $1 AND t.tag_id = nullif(b.param, '')::bigint"
                         " AND " DIM_ID_RANGE("t.status_id") " AND s.deleted_at IS NULL"
                                                             " GROUP BY 1" DIM_TOP},
    /* The domain's accounts with the most followers here. */
    [D_INSTANCE_ACCOUNTS] = {"admin_dimensions.instance_accounts",
                             DIM_RANGE "SELECT a.username AS key, count(*) AS value FROM b,"
                                       " accounts a JOIN follows f ON f.tenant_id = a.tenant_id"
                                       " AND f.target_account_id = a.id WHERE a.tenant_id = $1"
                                       " AND a.domain = b.param GROUP BY 1" DIM_TOP},
    [D_INSTANCE_LANGUAGES] = {"admin_dimensions.instance_languages",
                              DIM_RANGE "SELECT coalesce(s.language, 'und') AS key, count(*)"
                                        " AS value FROM b, accounts a JOIN statuses s"
                                        " ON s.tenant_id = a.tenant_id AND s.account_id = a.id"
                                        " WHERE a.tenant_id = $1 AND a.domain = b.param"
                                        " AND " DIM_ID_RANGE("s.id") " AND s.deleted_at IS NULL"
                                                                     " GROUP BY 1" DIM_TOP},
    {0},
};

static const struct dimension_key {
    const char *key, *param;
} dimension_keys[D_COUNT] = {
    [D_LANGUAGES] = {"languages", NULL},
    [D_SOURCES] = {"sources", NULL},
    [D_SERVERS] = {"servers", NULL},
    [D_SPACE_USAGE] = {"space_usage", NULL},
    [D_SOFTWARE_VERSIONS] = {"software_versions", NULL},
    [D_TAG_SERVERS] = {"tag_servers", "id"},
    [D_TAG_LANGUAGES] = {"tag_languages", "id"},
    [D_INSTANCE_ACCOUNTS] = {"instance_accounts", "domain"},
    [D_INSTANCE_LANGUAGES] = {"instance_languages", "domain"},
};

/* ------------------------------------------------------------ retention */

/*
 * $2 the first day, $3 the last, $4 'day' or 'month'. The periods from
 * the one holding $2 to the one holding $3; a cohort is the users who
 * signed up in one period, and its data the share of them active in that
 * period and each later one: active is a sign-in day in the period, and
 * in the cohort's own period, signing up. One row: the answer as JSON.
 */
const struct eu_sql eu_admin_retention_sql[] = {
    [0] =
        {"admin_retention.cohorts",
         "WITH b AS (SELECT date_trunc($4::text, $2::date::timestamp)::date AS s, $3::date AS e,"
         "  ('1 ' || $4::text)::interval AS step),"
         " q AS (SELECT (b.s + i * b.step)::date AS p, (b.s + (i + 1) * b.step)::date AS n"
         "  FROM b CROSS JOIN generate_series(0, " STR(
             MAX_PERIODS) ") i"
                          "  WHERE b.s + i * b.step <= b.e),"
                          " u AS MATERIALIZED (SELECT u.id, date_trunc($4::text, "
                          "eunha_id_day(u.id)::timestamp)::date"
                          "  AS cohort FROM b, users u WHERE u.tenant_id = $1"
                          "  AND u.id >= eunha_day_first_id(b.s) AND u.id < eunha_day_first_id(b.e "
                          "+ "
                          "1)),"
                          " act AS MATERIALIZED (SELECT DISTINCT d.user_id, date_trunc($4::text, "
                          "d.day::timestamp)::date"
                          "  AS p FROM b, user_sign_in_days d WHERE d.tenant_id = $1 AND d.day >= "
                          "b.s"
                          "  AND d.day <= b.e),"
                          " cell AS (SELECT c.p AS cohort, x.p, (SELECT count(*) FROM u WHERE "
                          "u.cohort "
                          "= c.p) AS size,"
                          "  (SELECT count(*) FROM u WHERE u.cohort = c.p AND (x.p = c.p OR EXISTS "
                          "(SELECT 1"
                          "   FROM act WHERE act.user_id = u.id AND act.p = x.p))) AS value"
                          "  FROM q c JOIN q x ON x.p >= c.p)"
                          " SELECT coalesce(json_agg(json_build_object('period',"
                          "  to_char(k.cohort::timestamp, 'YYYY-MM-DD\"T00:00:00Z\"'), "
                          "'frequency', "
                          "$4::text, 'data', k.data)"
                          "  ORDER BY k.cohort), '[]')::text AS cohorts FROM (SELECT cell.cohort,"
                          "  json_agg(json_build_object('date', to_char(cell.p::timestamp, "
                          "'YYYY-MM-DD\"T00:00:00Z\"'),"
                          "  'rate', CASE WHEN cell.size = 0 THEN 0 ELSE cell.value::float8 / "
                          "cell.size END,"
                          "  'value', cell.value::text) ORDER BY cell.p) AS data FROM cell GROUP "
                          "BY "
                          "cell.cohort) k"},
    {0},
};

/* ------------------------------------------------------- reading params */

/* A day of "YYYY-MM-DD" or an ISO 8601 time starting with one, copied to
 * out (11 bytes) as the date. false when s is none. */
static bool
read_day(const char *s, char out[11])
{
    if (!eu_time_day_prefix(s) || (s[10] && s[10] != 'T' && s[10] != ' '))
        return false;
    memcpy(out, s, 10);
    out[10] = '\0';
    return true;
}

/* Days from the Unix epoch to y-m-d (civil calendar), to size a range
 * before PostgreSQL sees it. */
static long
day_number(const char d[11])
{
    long y = atol(d), m = atol(d + 5), day = atol(d + 8);
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* What every dashboard request names: its keys and range. */
struct range {
    json_t *params; /* borrowed from the request */
    json_t *keys;   /* a new reference */
    char start[11], end[11];
};

static void
keys_release(void *keys)
{
    json_decref(keys);
}

/* Reads keys[] (when want_keys), start_at and end_at; replies 400 or 422
 * and returns -1 when they are missing or wrong. Without start_at and
 * end_at (dimensions allow it) the range is the last 30 days. */
static int
read_range(struct eu_req *req, struct range *r, bool want_keys, bool dates_required)
{
    struct eu_error err;
    r->params = eu_req_params(req, &err);
    if (!r->params) {
        eu_req_reply_eu_error(req, &err);
        return -1;
    }
    if (want_keys) {
        r->keys = eu_param_array(r->params, "keys");
        if (!r->keys || json_array_size(r->keys) == 0) {
            json_decref(r->keys);
            eu_req_reply_error(req, 400, "param is missing or the value is empty: keys");
            return -1;
        }
        eu_arena_on_free(req->arena, keys_release, r->keys);
    }
    const char *start = eu_param_str(r->params, "start_at");
    const char *end = eu_param_str(r->params, "end_at");
    if (!start && !end && !dates_required) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(r->end, sizeof(r->end), "%Y-%m-%d", &tm);
        now -= 29 * 86400;
        gmtime_r(&now, &tm);
        strftime(r->start, sizeof(r->start), "%Y-%m-%d", &tm);
        return 0;
    }
    if (!start || !end) {
        eu_req_reply_error(req, 400, "param is missing or the value is empty: %s",
                           start ? "end_at" : "start_at");
        return -1;
    }
    if (!read_day(start, r->start) || !read_day(end, r->end)) {
        eu_req_reply_error(req, 422, "start_at and end_at must be dates (YYYY-MM-DD)");
        return -1;
    }
    long days = day_number(r->end) - day_number(r->start) + 1;
    if (days < 1 || days > MAX_DAYS) {
        eu_req_reply_error(req, 422, "end_at must not be before start_at, nor %d days after it",
                           MAX_DAYS);
        return -1;
    }
    return 0;
}

/* The key's parameter: params[key][member] ("tag_accounts[id]"), '' when
 * absent. A tag id must be a number and a domain is compared lower-case;
 * NULL when it is malformed. Owned by the request. */
static const char *
key_param(struct eu_req *req, json_t *params, const char *key, const char *member)
{
    if (!member)
        return "";
    json_t *obj = json_object_get(params, key);
    const char *v = json_is_object(obj) ? eu_param_str(obj, member) : NULL;
    if (!v || !*v)
        return "";
    size_t len = strlen(v);
    if (strcmp(member, "id") == 0)
        return strspn(v, "0123456789") == len && len <= 18 ? v : NULL;
    if (len > 253)
        return NULL;
    char *lower = eu_arena_strdup(req->arena, v);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return lower;
}

/* -------------------------------------------------- answering measures */

/* One request's walk over its keys: which statements remain, and the
 * answer so far (owned here until replied). */
struct walk {
    struct range range;
    int which[MAX_KEYS];
    const char *param[MAX_KEYS];
    size_t n, next;
    const char *limit;
    json_t *out;
};

static void measure_next(struct eu_req *req, struct walk *w);

static void
on_measure(struct eu_req *req, PGresult *res, void *arg)
{
    struct walk *w = arg;
    const struct measure_key *k = &measure_keys[w->which[w->next]];
    json_t *data = json_loads(PQgetvalue(res, 0, PQfnumber(res, "data")), 0, NULL);
    json_array_append_new(w->out,
                          json_pack("{s:s, s:o, s:s, s:s, s:o}", "key", k->key, "unit",
                                    k->unit ? json_string(k->unit) : json_null(), "total",
                                    PQgetvalue(res, 0, PQfnumber(res, "total")), "previous_total",
                                    PQgetvalue(res, 0, PQfnumber(res, "previous_total")), "data",
                                    json_is_array(data) ? data : json_array()));
    if (!json_is_array(data))
        json_decref(data);
    w->next++;
    measure_next(req, w);
}

static void
measure_next(struct eu_req *req, struct walk *w)
{
    if (w->next == w->n) {
        json_t *out = w->out;
        w->out = NULL;
        eu_req_reply_json(req, 200, out);
        return;
    }
    const char *p[] = {w->range.start, w->range.end, w->param[w->next]};
    eu_req_stmt(req, &eu_admin_dashboard_sql[w->which[w->next]], 3, p, on_measure, w);
}

/* Frees a walk's answer when the request ends before it is replied. */
static void
walk_release(void *arg)
{
    struct walk *w = arg;
    json_decref(w->out);
}

static struct walk *
walk_new(struct eu_req *req)
{
    struct walk *w = eu_arena_calloc(req->arena, sizeof(*w));
    w->out = json_array();
    eu_arena_on_free(req->arena, walk_release, w);
    return w;
}

/* Finds key among names (n of them, stride apart); -1 when unknown. */
static int
key_index(const char *key, const char *const *names, size_t n, size_t stride)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = *(const char *const *)((const char *)names + i * stride);
        if (key && strcmp(key, name) == 0)
            return (int)i;
    }
    return -1;
}

/* Queues the statements of the keys asked: their index and parameter.
 * Unknown keys are skipped; a malformed parameter is a 422. */
static int
plan_keys(struct eu_req *req, struct walk *w, const char *const *names, const char *const *params,
          size_t n, size_t stride)
{
    size_t i;
    json_t *v;
    json_array_foreach(w->range.keys, i, v)
    {
        const char *key = json_string_value(v);
        int k = key_index(key, names, n, stride);
        if (k < 0 || w->n == MAX_KEYS)
            continue;
        const char *member = *(const char *const *)((const char *)params + (size_t)k * stride);
        const char *param = key_param(req, w->range.params, key, member);
        if (!param) {
            eu_req_reply_error(req, 422, "%s[%s] is malformed", key, member);
            return -1;
        }
        w->which[w->n] = k;
        w->param[w->n++] = param;
    }
    return 0;
}

static void
measures(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_VIEW_DASHBOARD))
        return;
    struct walk *w = walk_new(req);
    if (read_range(req, &w->range, true, true) < 0)
        return;
    if (plan_keys(req, w, &measure_keys[0].key, &measure_keys[0].param, M_COUNT,
                  sizeof(measure_keys[0])) < 0)
        return;
    measure_next(req, w);
}

/* ------------------------------------------------ answering dimensions */

static void dimension_next(struct eu_req *req, struct walk *w);

/* The rows key, value of a dimension as Mastodon's data; unit "bytes" for
 * space usage. An empty key is the tenant's own server (local is '' in
 * tag_servers), named by its domain. */
static json_t *
dimension_data(struct eu_req *req, const PGresult *res, const char *unit)
{
    json_t *data = json_array();
    int c_key = PQfnumber(res, "key"), c_value = PQfnumber(res, "value");
    for (int i = 0; i < PQntuples(res); i++) {
        const char *key = PQgetvalue(res, i, c_key);
        if (!*key)
            key = req->tenant->domain;
        json_t *d = json_pack("{s:s, s:s, s:s}", "key", key, "human_key", key, "value",
                              PQgetvalue(res, i, c_value));
        if (unit)
            json_object_set_new(d, "unit", json_string(unit));
        json_array_append_new(data, d);
    }
    return data;
}

static void
append_dimension(struct walk *w, const char *key, json_t *data)
{
    json_array_append_new(w->out, json_pack("{s:s, s:o}", "key", key, "data", data));
}

/* software_versions: Redis's version from INFO, after PostgreSQL's. */
struct versions {
    struct eu_req *req;
    struct walk *w;
    json_t *data;
};

static void
on_redis_info(struct redisReply *reply, void *arg)
{
    struct versions *v = arg;
    struct eu_req *req = v->req;
    eu_req_enter(req);
    /* Redis down (NULL reply): the version is simply not listed. */
    bool text = reply && reply->type == REDIS_REPLY_STRING;
    const char *at = text ? strstr(reply->str, "redis_version:") : NULL;
    if (at) {
        at += strlen("redis_version:");
        size_t len = strcspn(at, "\r\n");
        char *ver = eu_arena_sprintf(req->arena, "%.*s", (int)len, at);
        json_array_append_new(v->data, json_pack("{s:s, s:s, s:s}", "key", "redis", "human_key",
                                                 "Redis", "value", ver));
    }
    append_dimension(v->w, "software_versions", v->data);
    v->w->next++;
    dimension_next(req, v->w);
}

static void
on_dimension(struct eu_req *req, PGresult *res, void *arg)
{
    struct walk *w = arg;
    int k = w->which[w->next];
    if (k == D_SOFTWARE_VERSIONS) {
        struct versions *v = eu_arena_calloc(req->arena, sizeof(*v));
        v->req = req;
        v->w = w;
        v->data = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "key", "eunha", "human_key",
                            "Eunha", "value", EUNHA_VERSION, "key", "postgresql", "human_key",
                            "PostgreSQL", "value", PQgetvalue(res, 0, PQfnumber(res, "value")));
        const char *argv[] = {"INFO", "server"};
        eu_redis_command(eu_tenant_redis(req->app, req->tenant), on_redis_info, v, 2, argv, NULL);
        return;
    }
    append_dimension(w, dimension_keys[k].key,
                     dimension_data(req, res, k == D_SPACE_USAGE ? "bytes" : NULL));
    w->next++;
    dimension_next(req, w);
}

static void
dimension_next(struct eu_req *req, struct walk *w)
{
    if (w->next == w->n) {
        json_t *out = w->out;
        w->out = NULL;
        eu_req_reply_json(req, 200, out);
        return;
    }
    int k = w->which[w->next];
    /* Space usage and versions are of no range. */
    int n = k == D_SPACE_USAGE || k == D_SOFTWARE_VERSIONS ? 0 : 4;
    const char *p[] = {w->range.start, w->range.end, w->limit, w->param[w->next]};
    eu_req_stmt(req, &eu_admin_dimensions_sql[k], n, p, on_dimension, w);
}

static void
dimensions(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_VIEW_DASHBOARD))
        return;
    struct walk *w = walk_new(req);
    if (read_range(req, &w->range, true, false) < 0)
        return;
    long long limit = DIMENSION_LIMIT;
    if (eu_param_int(w->range.params, "limit", &limit) < 0 || limit < 1) {
        eu_req_reply_error(req, 422, "limit must be a positive integer");
        return;
    }
    w->limit = eu_arena_sprintf(req->arena, "%lld",
                                limit > DIMENSION_LIMIT_MAX ? DIMENSION_LIMIT_MAX : limit);
    if (plan_keys(req, w, &dimension_keys[0].key, &dimension_keys[0].param, D_COUNT,
                  sizeof(dimension_keys[0])) < 0)
        return;
    dimension_next(req, w);
}

/* ------------------------------------------------- answering retention */

static void
on_retention(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *out = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
    eu_req_reply_json(req, 200, out ? out : json_array());
}

static void
retention(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_VIEW_DASHBOARD))
        return;
    struct range r = {0};
    if (read_range(req, &r, false, true) < 0)
        return;
    const char *freq = eu_param_str(r.params, "frequency");
    if (!freq)
        freq = "day";
    bool monthly = strcmp(freq, "month") == 0;
    if (!monthly && strcmp(freq, "day") != 0) {
        eu_req_reply_error(req, 422, "frequency must be day or month");
        return;
    }
    long days = day_number(r.end) - day_number(r.start) + 1;
    long periods =
        monthly ? (atol(r.end) - atol(r.start)) * 12 + atol(r.end + 5) - atol(r.start + 5) + 1
                : days;
    if (periods > MAX_PERIODS) {
        eu_req_reply_error(req, 422, "at most %d periods of retention at once", MAX_PERIODS);
        return;
    }
    const char *p[] = {r.start, r.end, monthly ? "month" : "day"};
    eu_req_stmt(req, &eu_admin_retention_sql[0], 3, p, on_retention, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_dashboard_routes[] = {
    {EU_HTTP_POST, "/api/v1/admin/measures", measures, "admin:read", EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_POST, "/api/v1/admin/dimensions", dimensions, "admin:read",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_POST, "/api/v1/admin/retention", retention, "admin:read",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {0},
};
