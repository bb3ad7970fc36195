/*
 * A tenant's domain blocks (Mastodon's admin DomainBlock), made, changed
 * and lifted by its staff (/api/v1/admin/domain_blocks, src/api/
 * staff_domain_blocks.c) and by the operator (/admin/v1/tenants/{domain}/
 * domain_blocks, src/admin/domain_blocks.c): one set of statements, input
 * rules and entity for both, so the two APIs cannot drift apart. The staff
 * pass their account, and each change then writes its admin_action_logs
 * row in the statement that makes it; the operator passes none.
 *
 * What a block does is applied elsewhere (include/eunha/domainblock.h);
 * here, in the statement that makes, changes or lifts it, the domain's
 * known accounts (and its subdomains') are marked as Mastodon's
 * BlockDomainService marks them: suspended_at for 'suspend', silenced_at
 * for 'silence', each set to the block's created_at so that lifting it
 * clears exactly those marks (accounts suspended by hand keep theirs).
 * Accounts seen later get the mark from a trigger (tenant migration 0029).
 */
#include "eunha/domainblock.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/sql.h"

static void
drop_json(void *p)
{
    json_decref(p);
}

/* Mastodon's limit on the comments' length. */
#define COMMENT_MAX 1000

enum {
    DOMAIN_BLOCKS_LIST,
    DOMAIN_BLOCKS_SHOW,
    DOMAIN_BLOCKS_CREATE,
    DOMAIN_BLOCKS_UPDATE,
    DOMAIN_BLOCKS_DELETE,
};

/* The audit row of a change, by the staff account $n; none for the
 * operator ($n NULL). */
#define AUDIT(action, n, from)                                                                     \
    "INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id,"        \
    " human_identifier) SELECT $1, $" n "::bigint, '" action "', 'DomainBlock', " from ".id,"      \
    " " from ".domain FROM " from " WHERE $" n "::bigint IS NOT NULL"

/*
 * Marking the domain's accounts for block n (a CTE with the block's row):
 * one UPDATE of accounts (a row may be both marked and lose its images: two
 * UPDATEs of one row in one statement would keep only one). A mark this
 * block set and its severity no longer asks for is cleared. reject_media
 * drops what the domain's rows point clients at, as Mastodon's clear_media
 * drops its files (migration 0033 does it for rows written later); the
 * statuses are touched so cached renders of them are remade. The last
 * column of the statement counts the accounts marked.
 */
#define MARK(n)                                                                                    \
    " u AS (UPDATE accounts a SET"                                                                 \
    "  suspended_at = CASE WHEN " n ".severity = 'suspend'"                                        \
    "   THEN coalesce(a.suspended_at, " n ".created_at)"                                           \
    "   WHEN a.suspended_at = " n ".created_at THEN NULL ELSE a.suspended_at END,"                 \
    "  silenced_at = CASE WHEN " n ".severity = 'silence'"                                         \
    "   THEN coalesce(a.silenced_at, " n ".created_at)"                                            \
    "   WHEN a.silenced_at = " n ".created_at THEN NULL ELSE a.silenced_at END,"                   \
    "  avatar_url = CASE WHEN " n ".reject_media THEN NULL ELSE a.avatar_url END,"                 \
    "  header_url = CASE WHEN " n ".reject_media THEN NULL ELSE a.header_url END"                  \
    "  FROM " n " WHERE a.tenant_id = $1 AND eunha_in_domain(a.domain, " n ".domain)"              \
    "  AND ((" n ".severity = 'suspend' AND a.suspended_at IS NULL)"                               \
    "  OR (" n ".severity <> 'suspend' AND a.suspended_at = " n ".created_at)"                     \
    "  OR (" n ".severity = 'silence' AND a.silenced_at IS NULL)"                                  \
    "  OR (" n ".severity <> 'silence' AND a.silenced_at = " n ".created_at)"                      \
    "  OR (" n ".reject_media AND (a.avatar_url IS NOT NULL OR a.header_url IS NOT NULL)))"        \
    "  RETURNING (" n ".severity = 'suspend' AND a.suspended_at = " n ".created_at)"               \
    "  OR (" n ".severity = 'silence' AND a.silenced_at = " n ".created_at) AS marked),"           \
    " m AS (UPDATE media_attachments m SET type = 'unknown', updated_at = now()"                   \
    "  FROM " n ", accounts a WHERE m.tenant_id = $1 AND a.tenant_id = $1 AND " n ".reject_media"  \
    "  AND a.id = m.account_id AND eunha_in_domain(a.domain, " n ".domain)"                        \
    "  AND m.remote_url IS NOT NULL"                                                               \
    "  AND m.type <> 'unknown' RETURNING m.status_id),"                                            \
    " t AS (UPDATE statuses s SET updated_at = now() WHERE s.tenant_id = $1"                       \
    "  AND s.id IN (SELECT status_id FROM m)),"

/* A block's columns are eunha_domain_block(b) (tenant migration 0041). */
const struct eu_sql eu_tenant_domain_blocks_sql[] = {
    /* The page's four from $2. */
    [DOMAIN_BLOCKS_LIST] = {"tenant_domain_blocks.list",
                            "SELECT (eunha_domain_block(b)).* FROM domain_blocks b"
                            " WHERE b.tenant_id = $1",
                            "b.id", 2},
    [DOMAIN_BLOCKS_SHOW] = {"tenant_domain_blocks.show",
                            "SELECT (eunha_domain_block(b)).* FROM domain_blocks b"
                            " WHERE b.tenant_id = $1 AND b.id = $2::bigint"},
    /*
     * $2 domain, $3 severity, $4 reject_media, $5 reject_reports, $6 and $7
     * the comments, $8 obfuscate, $9 the staff account or NULL. As
     * Mastodon's create, a block of the domain itself, or one above it that
     * the new block is not stricter than (DomainBlock#stricter_than?), is
     * answered instead of a new one: its row comes back with created
     * false. A row of neither kind: another create won a race.
     */
    [DOMAIN_BLOCKS_CREATE] =
        {"tenant_domain_blocks.create",
         "WITH e AS (SELECT x.* FROM domain_blocks x WHERE x.tenant_id = $1"
         "  AND x.domain = ANY(eunha_domain_suffixes($2)) ORDER BY length(x.domain) DESC LIMIT 1),"
         " c AS (SELECT e.* FROM e WHERE e.domain = $2 OR NOT ($3 = 'suspend'"
         "  OR (e.severity <> 'suspend' AND NOT (e.severity = 'silence' AND $3 = 'noop')"
         "  AND ($4::bool OR NOT e.reject_media) AND ($5::bool OR NOT e.reject_reports)))),"
         " b AS (INSERT INTO domain_blocks (tenant_id, domain, severity, reject_media,"
         "  reject_reports, private_comment, public_comment, obfuscate)"
         "  SELECT $1, $2, $3, $4::bool, $5::bool, $6, $7, $8::bool"
         "  WHERE NOT EXISTS (SELECT 1 FROM c)"
         "  ON CONFLICT (tenant_id, domain) DO NOTHING RETURNING *)," MARK("b") " l AS (" AUDIT(
             "create", "9",
             "b") ")"
                  " SELECT true AS created, (eunha_domain_block(b::domain_blocks)).*,"
                  " (SELECT count(*) FROM u WHERE marked) AS marked FROM b"
                  " UNION ALL SELECT false, (eunha_domain_block(c::domain_blocks)).*, 0 FROM c"},
    /*
     * $2 id; $3 severity, $4 reject_media, $5 reject_reports, $6 and $7 the
     * comments ('' clears one), $8 obfuscate, each NULL to keep it; $9 the
     * staff account or NULL. The marks follow the new severity.
     */
    [DOMAIN_BLOCKS_UPDATE] =
        {"tenant_domain_blocks.update",
         "WITH b AS (UPDATE domain_blocks SET severity = coalesce($3, severity),"
         "  reject_media = coalesce($4::bool, reject_media),"
         "  reject_reports = coalesce($5::bool, reject_reports),"
         "  private_comment = CASE WHEN $6::text IS NULL THEN private_comment"
         "   ELSE nullif($6, '') END,"
         "  public_comment = CASE WHEN $7::text IS NULL THEN public_comment"
         "   ELSE nullif($7, '') END,"
         "  obfuscate = coalesce($8::bool, obfuscate), updated_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint RETURNING *)," MARK("b") " l AS (" AUDIT(
             "update", "9", "b") ")"
                                 " SELECT (eunha_domain_block(b::domain_blocks)).*,"
                                 " (SELECT count(*) FROM u WHERE marked) AS marked FROM b"},
    /* $2 id, $3 the staff account or NULL. The marks it set go with it;
     * returns its domain and how many accounts it gave back. */
    [DOMAIN_BLOCKS_DELETE] =
        {"tenant_domain_blocks.delete",
         "WITH d AS (DELETE FROM domain_blocks WHERE tenant_id = $1 AND id = $2::bigint"
         "  RETURNING id, domain, severity, created_at),"
         " s AS (UPDATE accounts a SET suspended_at = NULL FROM d WHERE a.tenant_id = $1"
         "  AND d.severity = 'suspend' AND a.suspended_at = d.created_at"
         "  AND eunha_in_domain(a.domain, d.domain)"
         "  RETURNING a.id),"
         " l AS (UPDATE accounts a SET silenced_at = NULL FROM d WHERE a.tenant_id = $1"
         "  AND d.severity = 'silence' AND a.silenced_at = d.created_at"
         "  AND eunha_in_domain(a.domain, d.domain)"
         "  RETURNING a.id),"
         " g AS (" AUDIT(
             "destroy", "3",
             "d") ")"
                  " SELECT d.domain, (SELECT count(*) FROM s) + (SELECT count(*) FROM l) FROM d"},
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

/* Mastodon's Admin::DomainBlock entity at row, its fields where c says.
 * The caller owns it. */
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

/* ------------------------------------------------------------ input */

/* "true"/"false" for boolean parameter key (a JSON boolean, or a form's
 * "true"/"false"/"1"/"0"), NULL when absent; -1 with err's 422. The
 * parameters' reader (eunha/params.h) belongs to a higher room. */
static int
bool_param(json_t *params, const char *key, const char **out, struct eu_error *err)
{
    json_t *v = json_object_get(params, key);
    const char *s = json_string_value(v);
    int rc = !v || json_is_null(v) ? 0 : -1;
    bool b = false;
    if (json_is_boolean(v)) {
        b = json_is_true(v);
        rc = 1;
    } else if (s && (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)) {
        b = true;
        rc = 1;
    } else if (s && (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)) {
        rc = 1;
    }
    *out = rc == 1 ? (b ? "true" : "false") : NULL;
    if (rc < 0)
        return eu_error_set(err, 422, "Validation failed: %s must be a boolean", key);
    return 0;
}

/* String parameter key of at most COMMENT_MAX bytes, NULL when absent;
 * -1 with err's 422. */
static int
comment_param(json_t *params, const char *key, const char **out, struct eu_error *err)
{
    json_t *v = json_object_get(params, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || json_string_length(v) > COMMENT_MAX)
        return eu_error_set(err, 422, "Validation failed: %s must be a string of at most %d bytes",
                            key, COMMENT_MAX);
    *out = json_string_value(v);
    return 0;
}

int
eu_domain_block_input_read(struct eu_req *req, json_t *params, bool creating,
                           struct eu_domain_block_input *in, struct eu_error *err)
{
    memset(in, 0, sizeof(*in));
    if (creating) {
        const char *raw = json_string_value(json_object_get(params, "domain"));
        char *domain = eu_arena_alloc(req->arena, EU_DOMAIN_BLOCK_MAX + 1);
        if (!raw || eu_domain_block_normalize(raw, domain, EU_DOMAIN_BLOCK_MAX + 1) < 0)
            return eu_error_set(err, 422, "Validation failed: domain must be a valid domain name");
        in->domain = domain;
    }
    in->severity = json_string_value(json_object_get(params, "severity"));
    if (in->severity && strcmp(in->severity, "noop") != 0 && strcmp(in->severity, "silence") != 0 &&
        strcmp(in->severity, "suspend") != 0)
        return eu_error_set(err, 422,
                            "Validation failed: severity must be noop, silence or suspend");
    if (bool_param(params, "reject_media", &in->reject_media, err) < 0 ||
        bool_param(params, "reject_reports", &in->reject_reports, err) < 0 ||
        bool_param(params, "obfuscate", &in->obfuscate, err) < 0 ||
        comment_param(params, "private_comment", &in->private_comment, err) < 0 ||
        comment_param(params, "public_comment", &in->public_comment, err) < 0)
        return -1;
    if (creating) {
        /* Mastodon's defaults: silence, nothing rejected, not obfuscated. */
        if (!in->severity)
            in->severity = "silence";
        in->reject_media = in->reject_media ? in->reject_media : "false";
        in->reject_reports = in->reject_reports ? in->reject_reports : "false";
        in->obfuscate = in->obfuscate ? in->obfuscate : "false";
    }
    return 0;
}

/* ------------------------------------------------------------ list, show */

struct list {
    struct eu_page page;
    bool link;
    eu_domain_block_cb cb; /* a page's: called instead of answering */
    void *arg;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    bool asc = eu_page_is_ascending(&l->page);
    int n = PQntuples(res), c[B_NFIELDS];
    block_cols_find(res, c);
    json_t *arr = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(arr, block_json(res, asc ? n - 1 - k : k, c));
    if (l->cb) {
        eu_arena_on_free(req->arena, drop_json, arr);
        l->cb(req, 200, arr, l->arg);
        return;
    }
    if (l->link && n > 0)
        eu_page_link(req, PQgetvalue(res, asc ? n - 1 : 0, c[B_ID]),
                     PQgetvalue(res, asc ? 0 : n - 1, c[B_ID]));
    eu_req_reply_json(req, 200, arr);
}

static void
list_start(struct eu_req *req, const struct eu_page *page, bool link, eu_domain_block_cb cb,
           void *arg)
{
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->page = *page;
    l->link = link;
    l->cb = cb;
    l->arg = arg;
    const char *params[4];
    eu_page_params(&l->page, params);
    eu_req_stmt_page(req, &eu_tenant_domain_blocks_sql[DOMAIN_BLOCKS_LIST], &l->page, 4, params,
                     on_list, l);
}

void
eu_domain_block_list(struct eu_req *req, const struct eu_page *page, bool link)
{
    list_start(req, page, link, NULL, NULL);
}

void
eu_domain_block_list_to(struct eu_req *req, const struct eu_page *page, eu_domain_block_cb cb,
                        void *arg)
{
    list_start(req, page, false, cb, arg);
}

static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    int c[B_NFIELDS];
    block_cols_find(res, c);
    if (arg)
        eu_log_info("moderation", "domain block on '%s' (%s) %s: %s accounts marked",
                    PQgetvalue(res, 0, c[B_DOMAIN]), PQgetvalue(res, 0, c[B_SEVERITY]),
                    (const char *)arg, PQgetvalue(res, 0, PQfnumber(res, "marked")));
    eu_req_reply_json(req, 200, block_json(res, 0, c));
}

void
eu_domain_block_show(struct eu_req *req, const char *id)
{
    const char *params[] = {id};
    eu_req_stmt(req, &eu_tenant_domain_blocks_sql[DOMAIN_BLOCKS_SHOW], 1, params, on_one, NULL);
}

/* ------------------------------------------------------------ changes */

static unsigned policy_generation;

unsigned
eu_domain_policy_generation(void)
{
    return policy_generation;
}

void
eu_domain_policy_changed(void)
{
    policy_generation++;
}

/* A page's ending (eu_domain_block_*_to), or NULL for an answer. */
struct ending {
    eu_domain_block_cb cb;
    void *arg;
};

/* Ends a change: the page's callback with status and body (freed with the
 * request), or the answer. */
static void
finish(struct eu_req *req, const struct ending *e, int status, json_t *body)
{
    if (!e) {
        eu_req_reply_json(req, status, body);
        return;
    }
    eu_arena_on_free(req->arena, drop_json, body);
    e->cb(req, status, body, e->arg);
}

static void
on_created(struct eu_req *req, PGresult *res, void *arg)
{
    const struct ending *e = arg;
    eu_domain_policy_changed();
    if (PQntuples(res) == 0) {
        finish(req, e, 422,
               json_pack("{s:s}", "error", "Validation failed: Domain has already been taken"));
        return;
    }
    int c[B_NFIELDS];
    block_cols_find(res, c);
    if (col_bool(res, 0, PQfnumber(res, "created"))) {
        if (!e) {
            on_one(req, res, "made");
            return;
        }
        eu_log_info("moderation", "domain block on '%s' (%s) made: %s accounts marked",
                    PQgetvalue(res, 0, c[B_DOMAIN]), PQgetvalue(res, 0, c[B_SEVERITY]),
                    PQgetvalue(res, 0, PQfnumber(res, "marked")));
        finish(req, e, 200, block_json(res, 0, c));
        return;
    }
    /* Mastodon's ExistingDomainBlockErrorSerializer. */
    const char *msg =
        eu_arena_sprintf(req->arena, "You have already imposed stricter limits on %s.",
                         PQgetvalue(res, 0, c[B_DOMAIN]));
    finish(req, e, 422,
           json_pack("{s:s, s:o}", "error", msg, "existing_domain_block", block_json(res, 0, c)));
}

static void
create_start(struct eu_req *req, const struct eu_domain_block_input *in, const char *moderator,
             struct ending *e)
{
    const char *params[] = {
        in->domain,          in->severity,       in->reject_media, in->reject_reports,
        in->private_comment, in->public_comment, in->obfuscate,    moderator};
    eu_req_stmt(req, &eu_tenant_domain_blocks_sql[DOMAIN_BLOCKS_CREATE], 8, params, on_created, e);
}

void
eu_domain_block_create(struct eu_req *req, const struct eu_domain_block_input *in,
                       const char *moderator)
{
    create_start(req, in, moderator, NULL);
}

void
eu_domain_block_create_to(struct eu_req *req, const struct eu_domain_block_input *in,
                          const char *moderator, eu_domain_block_cb cb, void *arg)
{
    struct ending *e = eu_arena_calloc(req->arena, sizeof(*e));
    e->cb = cb;
    e->arg = arg;
    create_start(req, in, moderator, e);
}

static void
on_updated(struct eu_req *req, PGresult *res, void *arg)
{
    eu_domain_policy_changed();
    on_one(req, res, arg);
}

void
eu_domain_block_update(struct eu_req *req, const char *id, const struct eu_domain_block_input *in,
                       const char *moderator)
{
    const char *params[] = {id,
                            in->severity,
                            in->reject_media,
                            in->reject_reports,
                            in->private_comment,
                            in->public_comment,
                            in->obfuscate,
                            moderator};
    eu_req_stmt(req, &eu_tenant_domain_blocks_sql[DOMAIN_BLOCKS_UPDATE], 8, params, on_updated,
                "changed");
}

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    const struct ending *e = arg;
    eu_domain_policy_changed();
    if (PQntuples(res) == 0) {
        if (e)
            finish(req, e, 404, json_pack("{s:s}", "error", "Record not found"));
        else
            eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_log_info("moderation", "domain block on '%s' lifted: %s accounts unmarked",
                PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1));
    finish(req, e, 200, json_object());
}

static void
delete_start(struct eu_req *req, const char *id, const char *moderator, struct ending *e)
{
    const char *params[] = {id, moderator};
    eu_req_stmt(req, &eu_tenant_domain_blocks_sql[DOMAIN_BLOCKS_DELETE], 2, params, on_deleted, e);
}

void
eu_domain_block_delete(struct eu_req *req, const char *id, const char *moderator)
{
    delete_start(req, id, moderator, NULL);
}

void
eu_domain_block_delete_to(struct eu_req *req, const char *id, const char *moderator,
                          eu_domain_block_cb cb, void *arg)
{
    struct ending *e = eu_arena_calloc(req->arena, sizeof(*e));
    e->cb = cb;
    e->arg = arg;
    delete_start(req, id, moderator, e);
}
