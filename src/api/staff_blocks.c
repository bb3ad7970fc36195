/*
 * What a tenant's staff block, through Mastodon's admin API:
 *
 *   /api/v1/admin/domain_blocks          other servers (manage_federation)
 *   /api/v1/admin/domain_allows          the servers limited-federation
 *                                        mode lets in (manage_federation)
 *   /api/v1/admin/email_domain_blocks    sign-ups by e-mail domain
 *   /api/v1/admin/canonical_email_blocks sign-ups by e-mail address
 *   /api/v1/admin/ip_blocks              sign-ups and sign-ins by address
 *                                        (the last three manage_blocks)
 *
 * Each route needs its admin:read:X or admin:write:X scope (admin:read and
 * admin:write cover them) and the role's permission; every change writes
 * its admin_action_logs row, with Mastodon's action and target type, in
 * the statement that makes it. The domain blocks' statements and rules are
 * the operator's too (src/social/domain_blocks.c). The other four share
 * one shape (a row whose columns are the entity's members, listed by id
 * with Mastodon's paging), so they share the handlers below, each resource
 * described by a struct resource; one file keeps that shape in one place.
 *
 * Where the blocks act: EU_DOMAIN_REFUSED (include/eunha/domainblock.h,
 * the inbox, authorized fetch and delivery) for domain allows, the sign-up
 * check (src/api/oauth_signup.c) for e-mail and IP blocks, the sign-in
 * lookup (src/api/oauth.c) for no_access IP blocks. docs/blocks.md says
 * what each does.
 */
#include "eunha/api.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/db.h"
#include "eunha/domainblock.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 200
/* Mastodon's IpBlock comment has no limit; this one keeps rows small. */
#define COMMENT_MAX 1000
/* expires_in's bound: a year, in seconds. */
#define EXPIRES_MAX (366LL * 24 * 3600)

enum {
    ALLOWS_LIST,
    ALLOWS_SHOW,
    ALLOWS_CREATE,
    ALLOWS_DELETE,
    EMAIL_LIST,
    EMAIL_SHOW,
    EMAIL_CREATE,
    EMAIL_DELETE,
    CANON_LIST,
    CANON_SHOW,
    CANON_CREATE,
    CANON_TEST,
    CANON_DELETE,
    IP_LIST,
    IP_SHOW,
    IP_CREATE,
    IP_UPDATE,
    IP_DELETE,
};

/* Each entity's members, as columns of the same names. */
#define ALLOW_COLS "w.id::text AS id, w.domain, eunha_ts(w.created_at) AS created_at"
#define EMAIL_COLS "e.id::text AS id, e.domain, eunha_ts(e.created_at) AS created_at"
#define CANON_COLS "c.id::text AS id, c.canonical_email_hash"
#define IP_COLS                                                                                    \
    "i.id::text AS id, host(i.ip) || '/' || masklen(i.ip) AS ip, i.severity, i.comment,"           \
    " eunha_ts(i.created_at) AS created_at,"                                                       \
    " CASE WHEN i.expires_at IS NULL THEN NULL ELSE eunha_ts(i.expires_at) END AS expires_at"

/* The audit row of a change to the rows of CTE from, by the staff account
 * $n. */
#define AUDIT(action, type, n, from, human)                                                        \
    "INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id,"        \
    " human_identifier) SELECT $1, $" n "::bigint, '" action "', '" type "', " from ".id, " human  \
    " FROM " from

/* A live block: one past its expires_at does nothing and is not listed. */
#define IP_LIVE "(i.expires_at IS NULL OR i.expires_at > now())"

const struct eu_sql eu_staff_blocks_sql[] = {
    /* Lists: the page's four from $2. */
    [ALLOWS_LIST] = {"staff_blocks.allows_list",
                     "SELECT " ALLOW_COLS " FROM domain_allows w WHERE w.tenant_id = $1", "w.id",
                     2},
    [ALLOWS_SHOW] = {"staff_blocks.allows_show",
                     "SELECT " ALLOW_COLS " FROM domain_allows w WHERE w.tenant_id = $1"
                     " AND w.id = $2::bigint"},
    /* $2 domain, $3 the staff account. As Mastodon's, an allow that
     * exists is answered as it is, and nothing is logged. */
    [ALLOWS_CREATE] =
        {"staff_blocks.allows_create",
         "WITH x AS (SELECT * FROM domain_allows d WHERE d.tenant_id = $1 AND d.domain = $2),"
         " w AS (INSERT INTO domain_allows (tenant_id, domain) SELECT $1, $2"
         "  WHERE NOT EXISTS (SELECT 1 FROM x) RETURNING *),"
         " l AS (" AUDIT("create", "DomainAllow", "3", "w",
                         "w.domain") ")"
                                     " SELECT " ALLOW_COLS " FROM w UNION ALL SELECT " ALLOW_COLS
                                     " FROM x w"},
    /* $2 id, $3 the staff account; Mastodon answers with the allow. */
    [ALLOWS_DELETE] =
        {"staff_blocks.allows_delete",
         "WITH w AS (DELETE FROM domain_allows WHERE tenant_id = $1 AND id = $2::bigint"
         " RETURNING *), l AS (" AUDIT("destroy", "DomainAllow", "3", "w",
                                       "w.domain") ")"
                                                   " SELECT " ALLOW_COLS " FROM w"},

    [EMAIL_LIST] = {"staff_blocks.email_list",
                    "SELECT " EMAIL_COLS " FROM email_domain_blocks e WHERE e.tenant_id = $1",
                    "e.id", 2},
    [EMAIL_SHOW] = {"staff_blocks.email_show",
                    "SELECT " EMAIL_COLS " FROM email_domain_blocks e WHERE e.tenant_id = $1"
                    " AND e.id = $2::bigint"},
    /* $2 domain, $3 the staff account; a domain taken is a unique
     * violation. */
    [EMAIL_CREATE] =
        {"staff_blocks.email_create",
         "WITH e AS (INSERT INTO email_domain_blocks (tenant_id, domain) VALUES ($1, $2)"
         " RETURNING *), l AS (" AUDIT("create", "EmailDomainBlock", "3", "e",
                                       "e.domain") ")"
                                                   " SELECT " EMAIL_COLS " FROM e"},
    [EMAIL_DELETE] =
        {"staff_blocks.email_delete",
         "WITH e AS (DELETE FROM email_domain_blocks WHERE tenant_id = $1 AND id = $2::bigint"
         " RETURNING *), l AS (" AUDIT("destroy", "EmailDomainBlock", "3", "e",
                                       "e.domain") ")"
                                                   " SELECT " EMAIL_COLS " FROM e"},

    [CANON_LIST] = {"staff_blocks.canonical_list",
                    "SELECT " CANON_COLS " FROM canonical_email_blocks c WHERE c.tenant_id = $1",
                    "c.id", 2},
    [CANON_SHOW] = {"staff_blocks.canonical_show",
                    "SELECT " CANON_COLS " FROM canonical_email_blocks c WHERE c.tenant_id = $1"
                    " AND c.id = $2::bigint"},
    /* $2 an address or NULL, $3 a hash (when no address), $4 the staff
     * account; a hash taken is a unique violation. */
    [CANON_CREATE] = {"staff_blocks.canonical_create",
                      "WITH c AS (INSERT INTO canonical_email_blocks (tenant_id,"
                      " canonical_email_hash) VALUES ($1, coalesce(eunha_canonical_email_hash($2),"
                      " $3)) RETURNING *),"
                      " l AS (" AUDIT("create", "CanonicalEmailBlock", "4", "c",
                                      "c.canonical_email_hash") ")"
                                                                " SELECT " CANON_COLS " FROM c"},
    /* $2 an address: the blocks it matches. */
    [CANON_TEST] = {"staff_blocks.canonical_test",
                    "SELECT " CANON_COLS " FROM canonical_email_blocks c WHERE c.tenant_id = $1"
                    " AND c.canonical_email_hash = eunha_canonical_email_hash($2)"},
    [CANON_DELETE] = {"staff_blocks.canonical_delete",
                      "WITH c AS (DELETE FROM canonical_email_blocks WHERE tenant_id = $1"
                      " AND id = $2::bigint RETURNING *),"
                      " l AS (" AUDIT("destroy", "CanonicalEmailBlock", "3", "c",
                                      "c.canonical_email_hash") ")"
                                                                " SELECT " CANON_COLS " FROM c"},

    [IP_LIST] = {"staff_blocks.ip_list",
                 "SELECT " IP_COLS " FROM ip_blocks i WHERE i.tenant_id = $1 AND " IP_LIVE, "i.id",
                 2},
    [IP_SHOW] = {"staff_blocks.ip_show",
                 "SELECT " IP_COLS " FROM ip_blocks i WHERE i.tenant_id = $1"
                 " AND i.id = $2::bigint"},
    /* $2 ip (kept as its network), $3 severity, $4 comment or NULL, $5
     * expires_in seconds or NULL, $6 the staff account; an address taken
     * is a unique violation. */
    [IP_CREATE] = {"staff_blocks.ip_create",
                   "WITH i AS (INSERT INTO ip_blocks (tenant_id, ip, severity, comment, expires_at)"
                   " VALUES ($1, network($2::inet)::inet, $3, coalesce($4, ''),"
                   " now() + $5::int * interval '1 second') RETURNING *),"
                   " l AS (" AUDIT("create", "IpBlock", "6", "i",
                                   "host(i.ip) || '/' || masklen(i.ip)") ")"
                                                                         " SELECT " IP_COLS
                                                                         " FROM i"},
    /* $2 id; $3 ip, $4 severity, $5 comment, $6 expires_in, each NULL to
     * keep it; $7 the staff account. */
    [IP_UPDATE] = {"staff_blocks.ip_update",
                   "WITH i AS (UPDATE ip_blocks SET ip = coalesce(network($3::inet)::inet, ip),"
                   " severity = coalesce($4, severity), comment = coalesce($5, comment),"
                   " expires_at = CASE WHEN $6::int IS NULL THEN expires_at"
                   "  ELSE now() + $6::int * interval '1 second' END, updated_at = now()"
                   " WHERE tenant_id = $1 AND id = $2::bigint RETURNING *),"
                   " l AS (" AUDIT("update", "IpBlock", "7", "i",
                                   "host(i.ip) || '/' || masklen(i.ip)") ")"
                                                                         " SELECT " IP_COLS
                                                                         " FROM i"},
    [IP_DELETE] = {"staff_blocks.ip_delete",
                   "WITH i AS (DELETE FROM ip_blocks WHERE tenant_id = $1 AND id = $2::bigint"
                   " RETURNING *), l AS (" AUDIT(
                       "destroy", "IpBlock", "3", "i",
                       "host(i.ip) || '/' || masklen(i.ip)") ")"
                                                             " SELECT " IP_COLS " FROM i"},
    {0},
};

/* ------------------------------------------------------ the resources */

/* One of the four resources with one shape. */
struct resource {
    int64_t permission;
    int list, show, destroy; /* statements */
    /* A DELETE answers the entity (Mastodon's domain allows) rather than {}. */
    bool destroy_renders;
    /* Adds the EmailDomainBlock's history. */
    bool history;
    /* The 422 of a create whose row exists. */
    const char *taken;
};

static const struct resource ALLOWS = {EU_PERM_MANAGE_FEDERATION,
                                       ALLOWS_LIST,
                                       ALLOWS_SHOW,
                                       ALLOWS_DELETE,
                                       true,
                                       false,
                                       "Validation failed: Domain has already been taken"};
static const struct resource EMAILS = {EU_PERM_MANAGE_BLOCKS,
                                       EMAIL_LIST,
                                       EMAIL_SHOW,
                                       EMAIL_DELETE,
                                       false,
                                       true,
                                       "Validation failed: Domain has already been taken"};
static const struct resource CANONICALS = {
    EU_PERM_MANAGE_BLOCKS,
    CANON_LIST,
    CANON_SHOW,
    CANON_DELETE,
    false,
    false,
    "Validation failed: Canonical email hash has already been taken"};
static const struct resource IPS = {EU_PERM_MANAGE_BLOCKS,
                                    IP_LIST,
                                    IP_SHOW,
                                    IP_DELETE,
                                    false,
                                    false,
                                    "Validation failed: Ip has already been taken"};

/* The entity of row: each column a member of its name, a string or null;
 * an EmailDomainBlock gets its history. Caller owns it. */
static json_t *
row_json(const PGresult *res, int row, const struct resource *r)
{
    json_t *o = json_object();
    for (int c = 0; c < PQnfields(res); c++)
        json_object_set_new(o, PQfname(res, c),
                            PQgetisnull(res, row, c) ? json_null()
                                                     : json_string(PQgetvalue(res, row, c)));
    if (r->history) {
        /*
         * Mastodon's history: the last seven days, today first, each day
         * its midnight (UTC) in epoch seconds. Eunha does not count the
         * sign-ups a block refused (uses) or let through (accounts), so
         * both are "0".
         */
        json_t *days = json_array();
        time_t today = time(NULL) / 86400 * 86400;
        for (int d = 0; d < 7; d++) {
            char day[24];
            snprintf(day, sizeof(day), "%lld", (long long)(today - (time_t)d * 86400));
            json_array_append_new(
                days, json_pack("{s:s, s:s, s:s}", "day", day, "accounts", "0", "uses", "0"));
        }
        json_object_set_new(o, "history", days);
    }
    return o;
}

struct list {
    struct eu_page page;
    const struct resource *r;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    bool asc = eu_page_is_ascending(&l->page);
    int n = PQntuples(res), id = PQfnumber(res, "id");
    json_t *arr = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(arr, row_json(res, asc ? n - 1 - k : k, l->r));
    if (n > 0)
        eu_page_link(req, PQgetvalue(res, asc ? n - 1 : 0, id),
                     PQgetvalue(res, asc ? 0 : n - 1, id));
    eu_req_reply_json(req, 200, arr);
}

static void
list(struct eu_req *req, const struct resource *r)
{
    if (!eu_auth_permit(req, r->permission))
        return;
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->r = r;
    if (eu_page_parse(req, &l->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *params[4];
    eu_page_params(&l->page, params);
    eu_req_stmt_page(req, &eu_staff_blocks_sql[r->list], &l->page, 4, params, on_list, l);
}

/* Answers the statement's one row, or 404 without one. */
static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, row_json(res, 0, arg));
}

static void
show(struct eu_req *req, const struct resource *r)
{
    if (!eu_auth_permit(req, r->permission))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_staff_blocks_sql[r->show], 1, params, on_one, (void *)r);
}

static void
on_destroyed(struct eu_req *req, PGresult *res, void *arg)
{
    const struct resource *r = arg;
    /* A domain allow gone changes what delivery may send (the others too
     * rarely to tell them apart). */
    eu_domain_policy_changed();
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, r->destroy_renders ? row_json(res, 0, r) : json_object());
}

static void
destroy(struct eu_req *req, const struct resource *r)
{
    if (!eu_auth_permit(req, r->permission))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_staff_blocks_sql[r->destroy], 2, params, on_destroyed, (void *)r);
}

/* A create's or update's answer: the row, or the resource's 422 when a
 * unique index refused it. */
static void
on_written(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    const struct resource *r = arg;
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        eu_req_reply_error(req, 422, "%s", r->taken);
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    eu_domain_policy_changed();
    on_one(req, res, arg);
}

/* The request's parameters; NULL after answering a malformed body. */
static json_t *
params_or_reply(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p)
        eu_req_reply_eu_error(req, &err);
    return p;
}

/* Parameter key as a normalised domain (arena); NULL after answering 422. */
static const char *
domain_param(struct eu_req *req, json_t *p, const char *key)
{
    const char *raw = eu_param_str(p, key);
    char *domain = eu_arena_alloc(req->arena, EU_DOMAIN_BLOCK_MAX + 1);
    if (!raw || eu_domain_block_normalize(raw, domain, EU_DOMAIN_BLOCK_MAX + 1) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Domain is invalid");
        return NULL;
    }
    return domain;
}

/* ------------------------------------------------ domain blocks */

static void
domain_blocks_list(struct eu_req *req)
{
    struct eu_page page;
    if (eu_auth_permit(req, EU_PERM_MANAGE_FEDERATION) &&
        eu_page_parse(req, &page, PAGE_DEFAULT, PAGE_MAX) == 0)
        eu_domain_block_list(req, &page, true);
}

static void
domain_blocks_show(struct eu_req *req)
{
    const char *id;
    if (eu_auth_permit(req, EU_PERM_MANAGE_FEDERATION) && (id = eu_req_id_param(req, "id")))
        eu_domain_block_show(req, id);
}

static void
domain_blocks_create(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_FEDERATION))
        return;
    json_t *p = params_or_reply(req);
    struct eu_domain_block_input in;
    struct eu_error err = {0};
    if (!p)
        return;
    if (eu_domain_block_input_read(req, p, true, &in, &err) < 0)
        eu_req_reply_eu_error(req, &err);
    else
        eu_domain_block_create(req, &in, eu_req_viewer(req));
}

static void
domain_blocks_update(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_FEDERATION))
        return;
    const char *id = eu_req_id_param(req, "id");
    json_t *p = id ? params_or_reply(req) : NULL;
    struct eu_domain_block_input in;
    struct eu_error err = {0};
    if (!p)
        return;
    if (eu_domain_block_input_read(req, p, false, &in, &err) < 0)
        eu_req_reply_eu_error(req, &err);
    else
        eu_domain_block_update(req, id, &in, eu_req_viewer(req));
}

static void
domain_blocks_destroy(struct eu_req *req)
{
    const char *id;
    if (eu_auth_permit(req, EU_PERM_MANAGE_FEDERATION) && (id = eu_req_id_param(req, "id")))
        eu_domain_block_delete(req, id, eu_req_viewer(req));
}

/* ------------------------------------------------ domain allows */

static void
allows_list(struct eu_req *req)
{
    list(req, &ALLOWS);
}

static void
allows_show(struct eu_req *req)
{
    show(req, &ALLOWS);
}

/* A domain allow or an e-mail domain block: both are a domain and who
 * made it, written by statement stmt. */
static void
create_for_domain(struct eu_req *req, const struct resource *r, int stmt)
{
    if (!eu_auth_permit(req, r->permission))
        return;
    json_t *p = params_or_reply(req);
    const char *domain = p ? domain_param(req, p, "domain") : NULL;
    if (!domain)
        return;
    const char *params[] = {domain, eu_req_viewer(req)};
    eu_req_stmt_or_error(req, &eu_staff_blocks_sql[stmt], 2, params, on_written, (void *)r);
}

static void
allows_create(struct eu_req *req)
{
    create_for_domain(req, &ALLOWS, ALLOWS_CREATE);
}

static void
allows_destroy(struct eu_req *req)
{
    destroy(req, &ALLOWS);
}

/* ------------------------------------------------ e-mail domain blocks */

static void
emails_list(struct eu_req *req)
{
    list(req, &EMAILS);
}

static void
emails_show(struct eu_req *req)
{
    show(req, &EMAILS);
}

static void
emails_create(struct eu_req *req)
{
    create_for_domain(req, &EMAILS, EMAIL_CREATE);
}

static void
emails_destroy(struct eu_req *req)
{
    destroy(req, &EMAILS);
}

/* ------------------------------------------------ canonical e-mail blocks */

static void
canonicals_list(struct eu_req *req)
{
    list(req, &CANONICALS);
}

static void
canonicals_show(struct eu_req *req)
{
    show(req, &CANONICALS);
}

/* An address worth hashing: something, an '@', something; at most 320
 * bytes. */
static bool
email_is_plausible(const char *s)
{
    const char *at = s ? strchr(s, '@') : NULL;
    return at && at != s && at[1] && strlen(s) <= 320;
}

/* A SHA-256 in lower-case hex. */
static bool
hash_is_valid(const char *s)
{
    return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static void
canonicals_create(struct eu_req *req)
{
    if (!eu_auth_permit(req, CANONICALS.permission))
        return;
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    const char *email = eu_param_str(p, "email");
    const char *hash = eu_param_str(p, "canonical_email_hash");
    if (email && *email ? !email_is_plausible(email) : !hash_is_valid(hash)) {
        eu_req_reply_error(req, 422, "Validation failed: Canonical email hash %s",
                           email && *email ? "needs a valid e-mail address"
                                           : "must be a SHA-256 in hex, or email given");
        return;
    }
    const char *params[] = {email && *email ? email : NULL, hash, eu_req_viewer(req)};
    eu_req_stmt_or_error(req, &eu_staff_blocks_sql[CANON_CREATE], 3, params, on_written,
                         (void *)&CANONICALS);
}

static void
on_tested(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(arr, row_json(res, i, arg));
    eu_req_reply_json(req, 200, arr);
}

/* POST /api/v1/admin/canonical_email_blocks/test: the blocks email
 * matches. */
static void
canonicals_test(struct eu_req *req)
{
    if (!eu_auth_permit(req, CANONICALS.permission))
        return;
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    const char *email = eu_param_str(p, "email");
    if (!email_is_plausible(email)) {
        eu_req_reply_error(req, 400, "Missing or invalid parameter: email");
        return;
    }
    const char *params[] = {email};
    eu_req_stmt(req, &eu_staff_blocks_sql[CANON_TEST], 1, params, on_tested, (void *)&CANONICALS);
}

static void
canonicals_destroy(struct eu_req *req)
{
    destroy(req, &CANONICALS);
}

/* ------------------------------------------------ IP blocks */

static void
ips_list(struct eu_req *req)
{
    list(req, &IPS);
}

static void
ips_show(struct eu_req *req)
{
    show(req, &IPS);
}

/* An IPv4 or IPv6 address with an optional /prefix, as PostgreSQL's inet
 * reads it. */
static bool
ip_is_valid(struct eu_arena *a, const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return false;
    char *addr = eu_arena_strdup(a, s);
    char *slash = strchr(addr, '/');
    if (slash)
        *slash = '\0';
    unsigned char buf[16];
    int max;
    if (inet_pton(AF_INET, addr, buf) == 1)
        max = 32;
    else if (inet_pton(AF_INET6, addr, buf) == 1)
        max = 128;
    else
        return false;
    if (!slash)
        return true;
    const char *pfx = slash + 1;
    if (!*pfx || strlen(pfx) > 3 || strspn(pfx, "0123456789") != strlen(pfx))
        return false;
    return atoi(pfx) <= max;
}

static bool
severity_is_valid(const char *s)
{
    return s && (strcmp(s, "sign_up_requires_approval") == 0 || strcmp(s, "sign_up_block") == 0 ||
                 strcmp(s, "no_access") == 0);
}

/* What an IP block's create or update says; NULL members are not given. */
struct ip_input {
    const char *ip, *severity, *comment, *expires_in;
};

/* Reads the parameters; a create needs ip and severity. -1 after answering
 * 422. */
static int
ip_input_read(struct eu_req *req, json_t *p, bool creating, struct ip_input *in)
{
    in->ip = eu_param_str(p, "ip");
    in->severity = eu_param_str(p, "severity");
    in->comment = eu_param_str(p, "comment");
    const char *problem = NULL;
    long long exp = 0;
    int rc = eu_param_int(p, "expires_in", &exp);
    if ((creating || in->ip) && !ip_is_valid(req->arena, in->ip))
        problem = "Ip is invalid";
    else if ((creating || in->severity) && !severity_is_valid(in->severity))
        problem = "Severity must be sign_up_requires_approval, sign_up_block or no_access";
    else if (in->comment && strlen(in->comment) > COMMENT_MAX)
        problem = "Comment is too long (maximum is 1000 characters)";
    else if (rc < 0 || (rc == 1 && (exp < 1 || exp > EXPIRES_MAX)))
        problem = "Expires in must be a number of seconds up to a year";
    if (problem) {
        eu_req_reply_error(req, 422, "Validation failed: %s", problem);
        return -1;
    }
    in->expires_in = rc == 1 ? eu_arena_sprintf(req->arena, "%lld", exp) : NULL;
    return 0;
}

static void
ips_create(struct eu_req *req)
{
    if (!eu_auth_permit(req, IPS.permission))
        return;
    json_t *p = params_or_reply(req);
    struct ip_input in;
    if (!p || ip_input_read(req, p, true, &in) < 0)
        return;
    const char *params[] = {in.ip, in.severity, in.comment, in.expires_in, eu_req_viewer(req)};
    eu_req_stmt_or_error(req, &eu_staff_blocks_sql[IP_CREATE], 5, params, on_written, (void *)&IPS);
}

static void
ips_update(struct eu_req *req)
{
    if (!eu_auth_permit(req, IPS.permission))
        return;
    const char *id = eu_req_id_param(req, "id");
    json_t *p = id ? params_or_reply(req) : NULL;
    struct ip_input in;
    if (!p || ip_input_read(req, p, false, &in) < 0)
        return;
    const char *params[] = {id, in.ip, in.severity, in.comment, in.expires_in, eu_req_viewer(req)};
    eu_req_stmt_or_error(req, &eu_staff_blocks_sql[IP_UPDATE], 6, params, on_written, (void *)&IPS);
}

static void
ips_destroy(struct eu_req *req)
{
    destroy(req, &IPS);
}

/* ------------------------------------------------------------ route table */

#define STAFF (EU_ROUTE_AUTH | EU_ROUTE_API)
#define R(x) "admin:read:" x
#define W(x) "admin:write:" x

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_staff_blocks_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/domain_blocks", domain_blocks_list, R("domain_blocks"), STAFF},
    {EU_HTTP_POST, "/api/v1/admin/domain_blocks", domain_blocks_create, W("domain_blocks"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/domain_blocks/:id", domain_blocks_show, R("domain_blocks"), STAFF},
    {EU_HTTP_PUT, "/api/v1/admin/domain_blocks/:id", domain_blocks_update, W("domain_blocks"),
     STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/domain_blocks/:id", domain_blocks_destroy, W("domain_blocks"),
     STAFF},
    {EU_HTTP_GET, "/api/v1/admin/domain_allows", allows_list, R("domain_allows"), STAFF},
    {EU_HTTP_POST, "/api/v1/admin/domain_allows", allows_create, W("domain_allows"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/domain_allows/:id", allows_show, R("domain_allows"), STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/domain_allows/:id", allows_destroy, W("domain_allows"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/email_domain_blocks", emails_list, R("email_domain_blocks"),
     STAFF},
    {EU_HTTP_POST, "/api/v1/admin/email_domain_blocks", emails_create, W("email_domain_blocks"),
     STAFF},
    {EU_HTTP_GET, "/api/v1/admin/email_domain_blocks/:id", emails_show, R("email_domain_blocks"),
     STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/email_domain_blocks/:id", emails_destroy,
     W("email_domain_blocks"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/canonical_email_blocks", canonicals_list,
     R("canonical_email_blocks"), STAFF},
    {EU_HTTP_POST, "/api/v1/admin/canonical_email_blocks", canonicals_create,
     W("canonical_email_blocks"), STAFF},
    {EU_HTTP_POST, "/api/v1/admin/canonical_email_blocks/test", canonicals_test,
     R("canonical_email_blocks"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/canonical_email_blocks/:id", canonicals_show,
     R("canonical_email_blocks"), STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/canonical_email_blocks/:id", canonicals_destroy,
     W("canonical_email_blocks"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/ip_blocks", ips_list, R("ip_blocks"), STAFF},
    {EU_HTTP_POST, "/api/v1/admin/ip_blocks", ips_create, W("ip_blocks"), STAFF},
    {EU_HTTP_GET, "/api/v1/admin/ip_blocks/:id", ips_show, R("ip_blocks"), STAFF},
    {EU_HTTP_PUT, "/api/v1/admin/ip_blocks/:id", ips_update, W("ip_blocks"), STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/ip_blocks/:id", ips_destroy, W("ip_blocks"), STAFF},
    {0},
};
