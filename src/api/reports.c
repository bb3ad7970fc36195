/*
 * POST /api/v1/reports, as Mastodon's ReportsController and ReportService:
 * the viewer reports an account, optionally some of its statuses the
 * viewer can see (deleted ones too), with a comment and a category. One
 * statement checks and inserts; an account or status that does not fit
 * answers 404, as Mastodon's find does. With forward=true and a remote
 * target the report goes on to the target's server as a Flag from the
 * tenant's instance actor (src/ap/outbox.c); the tenant's operator reads
 * reports through the admin API (src/admin/reports.c).
 *
 * rule_ids cite the tenant's instance rules (src/api/admin_rules.c) and
 * make the report a violation one, as Mastodon's ReportService does; an
 * id that names no rule of the tenant is 422, checked by a statement of
 * its own before the insert, only when rules are cited.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/utf8.h"
#include "social_internal.h"

/* Mastodon's Report validates a local report's comment to 1000 characters. */
#define COMMENT_MAX 1000
/* More statuses than this are not a report a moderator reads; the params
 * cap bounds the request anyway. */
#define STATUS_IDS_MAX 100

enum { REPORTS_CREATE, REPORTS_RULES };

const struct eu_sql eu_reports_sql[] = {
    /*
     * $2 the reporter, $3 the reported account, $4 its statuses (bigint[]
     * text, each the target's and one the reporter may see), $5 comment,
     * $6 category, $7 forward (kept only for a remote target), $8 the
     * cited rules (bigint[] text, checked before). No row when the account
     * or a status does not fit.
     */
    [REPORTS_CREATE] =
        {"reports.create",
         "WITH t AS (SELECT a.id, a.domain IS NOT NULL AS remote FROM accounts a"
         "  WHERE a.tenant_id = $1 AND a.id = $3::bigint AND a.username <> 'instance.actor'),"
         " s AS (SELECT s.id FROM statuses s JOIN t ON s.account_id = t.id"
         "  CROSS JOIN LATERAL eunha_is_in_audience($1, s.id, s.account_id, s.visibility,"
         "  $2::bigint) au"
         "  WHERE s.tenant_id = $1 AND s.id = ANY($4::bigint[]) AND au.ok),"
         " i AS (INSERT INTO reports (tenant_id, account_id, target_account_id, status_ids,"
         "  comment, category, forwarded, rule_ids) SELECT $1, $2::bigint, t.id,"
         "  ARRAY(SELECT id FROM s ORDER BY id), $5, $6, $7::bool AND t.remote,"
         "  ARRAY(SELECT DISTINCT x FROM unnest($8::bigint[]) x ORDER BY x) FROM t"
         "  WHERE (SELECT count(*) FROM s) = (SELECT count(DISTINCT x) FROM unnest($4::bigint[]) x)"
         "  RETURNING id, status_ids, comment, category, forwarded, created_at, rule_ids)"
         " SELECT i.id::text AS id, array_to_json(i.status_ids::text[])::text AS status_ids,"
         " array_to_json(i.rule_ids::text[])::text AS rule_ids,"
         " i.comment, i.category, i.forwarded, eunha_ts(i.created_at) AS created_at,"
         " (eunha_account(a)).*"
         " FROM i JOIN accounts a ON a.tenant_id = $1 AND a.id = $3::bigint"},
    /* Whether every id of $2 (bigint[] text) names a rule of the tenant;
     * deleted ones count, as Mastodon's Rule.with_discarded in its check. */
    [REPORTS_RULES] = {"reports.rules",
                       "SELECT count(*) = (SELECT count(DISTINCT x) FROM unnest($2::bigint[]) x)"
                       " AS ok FROM instance_rules r WHERE r.tenant_id = $1"
                       " AND r.id = ANY($2::bigint[])"},
    {0},
};

static bool
is_category(const char *c)
{
    static const char *const known[] = {"spam", "legal", "violation", "other"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(c, known[i]) == 0)
            return true;
    return false;
}

/* The value of column name in res's one row. */
static const char *
field(const PGresult *res, const char *name)
{
    return PQgetvalue(res, 0, PQfnumber(res, name));
}

/* A report on its way in: the insert's parameters, kept while the cited
 * rules are checked. Arena-owned. */
struct create {
    const char *params[7];
};

/* The ids as a bigint[] literal in the arena, or NULL when one is not an
 * id. Integers and strings are both ids, as a form or JSON body sends
 * them. */
static const char *
id_array(struct eu_req *req, json_t *ids)
{
    size_t n = json_array_size(ids), cap = n * 21 + 3;
    char *arr = eu_arena_alloc(req->arena, cap), *w = arr, *end = arr + cap;
    *w++ = '{';
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(ids, i);
        char num[24];
        const char *id = json_string_value(v);
        if (json_is_integer(v)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            id = num;
        }
        if (!id || !eu_id_is_valid(id))
            return NULL;
        w += snprintf(w, (size_t)(end - w), "%s%s", i ? "," : "", id);
    }
    *w++ = '}';
    *w = '\0';
    return arr;
}

static void
on_reported(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    bool forwarded = field(res, "forwarded")[0] == 't';
    if (forwarded)
        eu_ap_outbox_flag(req->app, req->tenant, field(res, "id"));
    json_t *ids = json_loads(field(res, "status_ids"), 0, NULL);
    if (!json_is_array(ids)) {
        json_decref(ids);
        ids = json_array();
    }
    /* Mastodon's rule_ids is null on a report that cites none. */
    json_t *rules = json_loads(field(res, "rule_ids"), 0, NULL);
    if (!json_is_array(rules) || json_array_size(rules) == 0) {
        json_decref(rules);
        rules = json_null();
    }
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    json_t *o = json_pack("{s:s, s:b, s:n, s:s, s:s, s:b, s:s, s:o, s:o, s:o}", "id",
                          field(res, "id"), "action_taken", 0, "action_taken_at", "category",
                          field(res, "category"), "comment", field(res, "comment"), "forwarded",
                          forwarded, "created_at", field(res, "created_at"), "status_ids", ids,
                          "rule_ids", rules, "target_account", eu_account_json(req, res, 0, &ac));
    eu_req_reply_json(req, 200, o);
}

static void
insert(struct eu_req *req, struct create *c)
{
    eu_req_stmt(req, &eu_reports_sql[REPORTS_CREATE], 7, c->params, on_reported, NULL);
}

static void
on_rules(struct eu_req *req, PGresult *res, void *arg)
{
    struct create *c = arg;
    if (PQgetvalue(res, 0, 0)[0] != 't') {
        eu_req_reply_error(req, 422, "Validation failed: Rule ids does not reference valid rules");
        return;
    }
    insert(req, c);
}

void
eu_reports_create(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *account = eu_param_str(p, "account_id");
    if (!account || !*account) {
        eu_req_reply_error(req, 422, "Validation failed: Target account must exist");
        return;
    }
    if (!eu_id_is_valid(account)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *comment = eu_param_str(p, "comment");
    if (!comment)
        comment = "";
    if (eu_utf8_chars(comment) > COMMENT_MAX) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Comment is too long (maximum is %d characters)",
                           COMMENT_MAX);
        return;
    }
    struct create *c = eu_arena_calloc(req->arena, sizeof(*c));
    const char *category = eu_param_str(p, "category");
    json_t *rules = eu_param_array(p, "rule_ids");
    size_t nrules = json_array_size(rules);
    const char *rule_arr = nrules <= STATUS_IDS_MAX ? id_array(req, rules) : NULL;
    json_decref(rules);
    if (!rule_arr) {
        eu_req_reply_error(req, 422, "Validation failed: Rule ids does not reference valid rules");
        return;
    }
    /* Mastodon: rules named make it a violation report, whatever was said. */
    if (nrules > 0)
        category = "violation";
    if (!category || !*category)
        category = "other";
    if (!is_category(category)) {
        eu_req_reply_error(req, 422, "Validation failed: Category is not included in the list");
        return;
    }
    bool forward = false;
    if (eu_param_bool(p, "forward", &forward) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: forward is not a boolean");
        return;
    }
    /* A malformed status id cannot be a status of the account, so it is
     * not found. */
    json_t *sids = eu_param_array(p, "status_ids");
    size_t n = json_array_size(sids);
    if (n > STATUS_IDS_MAX) {
        json_decref(sids);
        eu_req_reply_error(req, 422, "Validation failed: too many statuses");
        return;
    }
    const char *arr = id_array(req, sids);
    json_decref(sids);
    if (!arr) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *params[] = {eu_req_viewer(req),         account, arr, comment, category,
                            forward ? "true" : "false", rule_arr};
    memcpy(c->params, params, sizeof(params));
    if (nrules == 0) {
        insert(req, c);
        return;
    }
    const char *check[] = {rule_arr};
    eu_req_stmt(req, &eu_reports_sql[REPORTS_RULES], 1, check, on_rules, c);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_reports_routes[] = {
    {EU_HTTP_POST, "/api/v1/reports", eu_reports_create, "write:reports",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
