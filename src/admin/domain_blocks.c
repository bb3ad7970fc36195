/*
 * A tenant's domain blocks, set by the operator: /admin/v1/tenants/
 * {domain}/domain_blocks (list, create, show, delete), with the fields of
 * Mastodon's admin DomainBlock. What a block does is applied elsewhere
 * (include/eunha/domainblock.h); here, in the statement that makes or
 * lifts it, the domain's known accounts (and its subdomains') are marked
 * as Mastodon's BlockDomainService marks them: suspended_at for
 * 'suspend', silenced_at for 'silence', each set to the block's
 * created_at so that lifting it clears exactly those marks (accounts
 * suspended by hand keep theirs). Accounts seen later get the mark from a
 * trigger (tenant migration 0029).
 *
 * Also here: the delivery refusals src/ap/deliver.c records (a host that
 * answered 401/403 to the tenant, and the deliveries held back since),
 * listed and cleared by the operator.
 */
#include "eunha/admin.h"
#include "eunha/domainblock.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* Mastodon's limit on the comments' length. */
#define COMMENT_MAX 1000

enum {
    ADMIN_DOMAIN_BLOCKS_LIST,
    ADMIN_DOMAIN_BLOCKS_SHOW,
    ADMIN_DOMAIN_BLOCKS_CREATE,
    ADMIN_DOMAIN_BLOCKS_DELETE,
    ADMIN_DELIVERY_REFUSALS_LIST,
    ADMIN_DELIVERY_REFUSALS_DELETE,
};

/* A block's columns are eunha_domain_block(b) (tenant migration 0041), and
 * the accounts it marks those eunha_in_domain(a.domain, b.domain) finds. */
const struct eu_sql eu_admin_domain_blocks_sql[] = {
    /* $2 max_id or NULL, $3 limit. */
    [ADMIN_DOMAIN_BLOCKS_LIST] =
        {"admin_domain_blocks.list",
         "SELECT (eunha_domain_block(b)).* FROM domain_blocks b WHERE b.tenant_id = $1"
         " AND ($2::bigint IS NULL OR b.id < $2::bigint) ORDER BY b.id DESC LIMIT $3::int"},
    [ADMIN_DOMAIN_BLOCKS_SHOW] =
        {"admin_domain_blocks.show",
         "SELECT (eunha_domain_block(b)).* FROM domain_blocks b WHERE b.tenant_id = $1"
         " AND b.id = $2::bigint"},
    /* $2 domain, $3 severity, $4 reject_media, $5 reject_reports, $6 and
     * $7 the comments, $8 obfuscate. No row when the domain has a block
     * already; the last column counts the accounts marked. One UPDATE of
     * accounts (a row may be both marked and lose its images: two UPDATEs
     * of one row in one statement would keep only one). reject_media drops
     * what the domain's rows point clients at, as Mastodon's clear_media
     * drops its files (migration 0033 does it for rows written later);
     * the statuses are touched so cached renders of them are remade. */
    [ADMIN_DOMAIN_BLOCKS_CREATE] =
        {"admin_domain_blocks.create",
         "WITH b AS (INSERT INTO domain_blocks (tenant_id, domain, severity, reject_media,"
         "  reject_reports, private_comment, public_comment, obfuscate)"
         "  VALUES ($1, $2, $3, $4::bool, $5::bool, $6, $7, $8::bool)"
         "  ON CONFLICT (tenant_id, domain) DO NOTHING RETURNING *),"
         " u AS (UPDATE accounts a SET"
         "  suspended_at = CASE WHEN b.severity = 'suspend'"
         "   THEN coalesce(a.suspended_at, b.created_at) ELSE a.suspended_at END,"
         "  silenced_at = CASE WHEN b.severity = 'silence'"
         "   THEN coalesce(a.silenced_at, b.created_at) ELSE a.silenced_at END,"
         "  avatar_url = CASE WHEN b.reject_media THEN NULL ELSE a.avatar_url END,"
         "  header_url = CASE WHEN b.reject_media THEN NULL ELSE a.header_url END"
         "  FROM b WHERE a.tenant_id = $1 AND eunha_in_domain(a.domain, b.domain)"
         "  AND ((b.severity = 'suspend' AND a.suspended_at IS NULL)"
         "  OR (b.severity = 'silence' AND a.silenced_at IS NULL)"
         "  OR (b.reject_media AND (a.avatar_url IS NOT NULL OR a.header_url IS NOT NULL)))"
         "  RETURNING (b.severity = 'suspend' AND a.suspended_at = b.created_at)"
         "  OR (b.severity = 'silence' AND a.silenced_at = b.created_at) AS marked),"
         " m AS (UPDATE media_attachments m SET type = 'unknown', updated_at = now()"
         "  FROM b, accounts a WHERE m.tenant_id = $1 AND a.tenant_id = $1 AND b.reject_media"
         "  AND a.id = m.account_id AND eunha_in_domain(a.domain, b.domain)"
         "  AND m.remote_url IS NOT NULL"
         "  AND m.type <> 'unknown' RETURNING m.status_id),"
         " t AS (UPDATE statuses s SET updated_at = now() WHERE s.tenant_id = $1"
         "  AND s.id IN (SELECT status_id FROM m))"
         " SELECT (eunha_domain_block(b::domain_blocks)).*,"
         " (SELECT count(*) FROM u WHERE marked) AS marked"
         " FROM b"},
    /* $2 id. The marks it set go with it; returns its domain and how many
     * accounts it gave back. */
    [ADMIN_DOMAIN_BLOCKS_DELETE] =
        {"admin_domain_blocks.delete",
         "WITH d AS (DELETE FROM domain_blocks WHERE tenant_id = $1 AND id = $2::bigint"
         "  RETURNING domain, severity, created_at),"
         " s AS (UPDATE accounts a SET suspended_at = NULL FROM d WHERE a.tenant_id = $1"
         "  AND d.severity = 'suspend' AND a.suspended_at = d.created_at"
         "  AND eunha_in_domain(a.domain, d.domain)"
         "  RETURNING a.id),"
         " l AS (UPDATE accounts a SET silenced_at = NULL FROM d WHERE a.tenant_id = $1"
         "  AND d.severity = 'silence' AND a.silenced_at = d.created_at"
         "  AND eunha_in_domain(a.domain, d.domain)"
         "  RETURNING a.id)"
         " SELECT d.domain, (SELECT count(*) FROM s) + (SELECT count(*) FROM l) FROM d"},
    /* The refusals, the most recent first (at most $2). */
    [ADMIN_DELIVERY_REFUSALS_LIST] =
        {"admin_delivery_refusals.list",
         "SELECT r.host, r.status, r.refusals, r.skipped, eunha_ts(r.first_at),"
         " eunha_ts(r.last_at), CASE WHEN r.last_skipped_at IS NULL THEN NULL ELSE"
         " eunha_ts(r.last_skipped_at) END,"
         " CASE WHEN r.last_at > now() - eunha_refusal_hold() THEN"
         " eunha_ts(r.last_at + eunha_refusal_hold()) END"
         " FROM delivery_refusals r WHERE r.tenant_id = $1 ORDER BY r.last_at DESC"
         " LIMIT $2::int"},
    /* $2 host: deliveries there start again at once. */
    [ADMIN_DELIVERY_REFUSALS_DELETE] =
        {"admin_delivery_refusals.delete",
         "DELETE FROM delivery_refusals WHERE tenant_id = $1 AND host = $2 RETURNING host"},
    {0},
};

static json_t *
text_or_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

static bool
col_bool(const PGresult *res, int row, int col)
{
    return PQgetvalue(res, row, col)[0] == 't';
}

/* The fields of eunha_domain_block_entity, each the member of the same
 * name in Mastodon's Admin::DomainBlock entity. */
enum {
    B_ID,
    B_DOMAIN,
    B_DIGEST,
    B_CREATED_AT,
    B_SEVERITY,
    B_REJECT_MEDIA,
    B_REJECT_REPORTS,
    B_PRIVATE_COMMENT,
    B_PUBLIC_COMMENT,
    B_OBFUSCATE,
    B_NFIELDS
};

static const char *const block_fields[B_NFIELDS] = {
    [B_ID] = "id",
    [B_DOMAIN] = "domain",
    [B_DIGEST] = "digest",
    [B_CREATED_AT] = "created_at",
    [B_SEVERITY] = "severity",
    [B_REJECT_MEDIA] = "reject_media",
    [B_REJECT_REPORTS] = "reject_reports",
    [B_PRIVATE_COMMENT] = "private_comment",
    [B_PUBLIC_COMMENT] = "public_comment",
    [B_OBFUSCATE] = "obfuscate",
};

/* Where res has each field, found once a result. */
static void
block_cols_find(const PGresult *res, int c[B_NFIELDS])
{
    for (int i = 0; i < B_NFIELDS; i++)
        c[i] = PQfnumber(res, block_fields[i]);
}

/* Mastodon's Admin::DomainBlock entity at row, its fields where c says. */
static json_t *
block_json(const PGresult *res, int row, const int c[B_NFIELDS])
{
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:o, s:o, s:b}", "id", PQgetvalue(res, row, c[B_ID]),
        "domain", PQgetvalue(res, row, c[B_DOMAIN]), "digest", PQgetvalue(res, row, c[B_DIGEST]),
        "created_at", PQgetvalue(res, row, c[B_CREATED_AT]), "severity",
        PQgetvalue(res, row, c[B_SEVERITY]), "reject_media", col_bool(res, row, c[B_REJECT_MEDIA]),
        "reject_reports", col_bool(res, row, c[B_REJECT_REPORTS]), "private_comment",
        text_or_null(res, row, c[B_PRIVATE_COMMENT]), "public_comment",
        text_or_null(res, row, c[B_PUBLIC_COMMENT]), "obfuscate",
        col_bool(res, row, c[B_OBFUSCATE]));
}

/* ---- GET /admin/v1/tenants/:domain/domain_blocks?max_id=&limit= ---- */

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    int c[B_NFIELDS];
    block_cols_find(res, c);
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(arr, block_json(res, i, c));
    eu_req_reply_json(req, 200, arr);
}

void
eu_admin_domain_blocks_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *max_id, *limit;
    if (eu_admin_list_page(req, "domain block", 500, &max_id, &limit) < 0)
        return;
    const char *params[] = {max_id, limit};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DOMAIN_BLOCKS_LIST], 2, params, on_list,
                NULL);
}

/* ---- GET /admin/v1/tenants/:domain/domain_blocks/:id ---- */

static void
on_show(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    int c[B_NFIELDS];
    block_cols_find(res, c);
    eu_req_reply_json(req, 200, block_json(res, 0, c));
}

/* The block id of the path; NULL after answering 404. */
static const char *
block_id(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

void
eu_admin_domain_blocks_show(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = block_id(req);
    if (!id)
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DOMAIN_BLOCKS_SHOW], 1, params, on_show,
                NULL);
}

/* ---- POST /admin/v1/tenants/:domain/domain_blocks ---- */

static void
on_created(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 422, "Validation failed: Domain is already blocked");
        return;
    }
    int c[B_NFIELDS];
    block_cols_find(res, c);
    eu_log_info("admin", "domain block on '%s' (%s): %s accounts marked",
                PQgetvalue(res, 0, c[B_DOMAIN]), PQgetvalue(res, 0, c[B_SEVERITY]),
                PQgetvalue(res, 0, PQfnumber(res, "marked")));
    eu_req_reply_json(req, 200, block_json(res, 0, c));
}

/* "true"/"false" for optional boolean member key (default false); NULL
 * after answering 422. */
static const char *
bool_member(struct eu_req *req, json_t *body, const char *key)
{
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v))
        return "false";
    if (!json_is_boolean(v)) {
        eu_req_reply_error(req, 422, "Validation failed: %s must be a boolean", key);
        return NULL;
    }
    return json_is_true(v) ? "true" : "false";
}

/* Optional string member key of at most COMMENT_MAX bytes; *out NULL when
 * absent. -1 after answering 422. */
static int
comment_member(struct eu_req *req, json_t *body, const char *key, const char **out)
{
    json_t *v = json_object_get(body, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || json_string_length(v) > COMMENT_MAX) {
        eu_req_reply_error(req, 422, "Validation failed: %s must be a string of at most %d bytes",
                           key, COMMENT_MAX);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

void
eu_admin_domain_blocks_create(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *in = json_string_value(json_object_get(body, "domain"));
    char *domain = eu_arena_alloc(req->arena, EU_DOMAIN_BLOCK_MAX + 1);
    if (!in || eu_domain_block_normalize(in, domain, EU_DOMAIN_BLOCK_MAX + 1) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: domain must be a valid domain name");
        return;
    }
    /* Mastodon's default severity is silence. */
    json_t *sv = json_object_get(body, "severity");
    const char *severity = sv ? json_string_value(sv) : "silence";
    if (!severity || (strcmp(severity, "noop") != 0 && strcmp(severity, "silence") != 0 &&
                      strcmp(severity, "suspend") != 0)) {
        eu_req_reply_error(req, 422,
                           "Validation failed: severity must be noop, silence or suspend");
        return;
    }
    const char *media = bool_member(req, body, "reject_media");
    const char *reports = media ? bool_member(req, body, "reject_reports") : NULL;
    const char *obfuscate = reports ? bool_member(req, body, "obfuscate") : NULL;
    if (!obfuscate)
        return;
    const char *priv, *pub;
    if (comment_member(req, body, "private_comment", &priv) < 0 ||
        comment_member(req, body, "public_comment", &pub) < 0)
        return;
    const char *params[] = {domain, severity, media, reports, priv, pub, obfuscate};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DOMAIN_BLOCKS_CREATE], 7, params, on_created,
                NULL);
}

/* ---- DELETE /admin/v1/tenants/:domain/domain_blocks/:id ---- */

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_log_info("admin", "domain block on '%s' lifted: %s accounts unmarked", PQgetvalue(res, 0, 0),
                PQgetvalue(res, 0, 1));
    eu_req_reply_json(req, 200, json_object());
}

void
eu_admin_domain_blocks_delete(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = block_id(req);
    if (!id)
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DOMAIN_BLOCKS_DELETE], 1, params, on_deleted,
                NULL);
}

/* ---- GET /admin/v1/tenants/:domain/delivery_refusals?limit= ---- */

static void
on_refusals(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(
            arr,
            json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:o, s:o}", "host", PQgetvalue(res, i, 0),
                      "status", atoi(PQgetvalue(res, i, 1)), "refusals",
                      (json_int_t)atoll(PQgetvalue(res, i, 2)), "skipped",
                      (json_int_t)atoll(PQgetvalue(res, i, 3)), "first_at", PQgetvalue(res, i, 4),
                      "last_at", PQgetvalue(res, i, 5), "last_skipped_at", text_or_null(res, i, 6),
                      "held_until", text_or_null(res, i, 7)));
    eu_req_reply_json(req, 200, arr);
}

void
eu_admin_delivery_refusals_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *max_id, *limit;
    if (eu_admin_list_page(req, "refusal", 1000, &max_id, &limit) < 0)
        return;
    const char *params[] = {limit};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DELIVERY_REFUSALS_LIST], 1, params,
                on_refusals, NULL);
}

/* ---- DELETE /admin/v1/tenants/:domain/delivery_refusals/:host ---- */

static void
on_refusal_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, json_object());
}

void
eu_admin_delivery_refusals_delete(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *host = eu_req_param(req, "host");
    if (!host || !*host) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *params[] = {host};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DELIVERY_REFUSALS_DELETE], 1, params,
                on_refusal_deleted, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_domain_blocks_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/domain_blocks", eu_admin_domain_blocks_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/domain_blocks", eu_admin_domain_blocks_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_delete,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/delivery_refusals", eu_admin_delivery_refusals_list,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/delivery_refusals/:host",
     eu_admin_delivery_refusals_delete, NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
