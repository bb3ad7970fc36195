/*
 * An account's own domain blocks, as Mastodon's /api/v1/domain_blocks:
 * the list (domain strings, paged by the blocks' ids with a Link header),
 * blocking and unblocking. Blocking does what Mastodon's
 * AfterBlockDomainFromAccountService does, in the statement that makes
 * the block: the follows and follow requests between the account and that
 * domain end both ways (an Undo Follow goes to those it followed, a Reject
 * to its followers there), the domain's accounts leave its lists, and the
 * notifications they caused go.
 *
 * What the block hides is applied where statuses and notifications are
 * read: the public and hashtag timeline statements (timelines.c), the
 * render statement for every timeline, list and stream (status_render.c)
 * and the notification insert (notify.c) each make one primary-key probe
 * of account_domain_blocks for a remote author, so the cost does not grow
 * with the number of blocks.
 */
#include "eunha/api.h"
#include "eunha/domainblock.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/net.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* Mastodon's DomainBlocksController: 100 a page by default, 200 at most. */
#define PAGE_DEFAULT 100
#define PAGE_MAX 200

enum {
    DOMAIN_BLOCKS_LIST,
    DOMAIN_BLOCKS_CREATE,
    DOMAIN_BLOCKS_DELETE,
    DOMAIN_BLOCKS_PREVIEW,
};

const struct eu_sql eu_domain_blocks_sql[] = {
    /* $2 the viewer. */
    [DOMAIN_BLOCKS_LIST] = {"domain_blocks.list",
                            "SELECT x.id::text, x.domain FROM account_domain_blocks x"
                            " WHERE x.tenant_id = $1 AND x.account_id = $2::bigint",
                            "x.id", 3},
    /*
     * $2 the viewer, $3 the domain. Rows: what to federate, ('undo',
     * account, Follow id) for each follow or request of the viewer's that
     * ended, ('reject', account, Follow id) for each of theirs. The cap
     * trigger's EU003 fails it whole.
     */
    [DOMAIN_BLOCKS_CREATE] =
        {"domain_blocks.create",
         "WITH ins AS (INSERT INTO account_domain_blocks (tenant_id, account_id, domain)"
         "  VALUES ($1, $2::bigint, $3) ON CONFLICT DO NOTHING),"
         " uf AS (DELETE FROM follows f USING accounts a WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint AND a.id = f.target_account_id"
         "  AND a.tenant_id = $1 AND a.domain = $3 RETURNING f.target_account_id AS id, f.uri),"
         " ur AS (DELETE FROM follow_requests r USING accounts a WHERE r.tenant_id = $1"
         "  AND r.account_id = $2::bigint AND a.id = r.target_account_id"
         "  AND a.tenant_id = $1 AND a.domain = $3 RETURNING r.target_account_id AS id, r.uri),"
         " rf AS (DELETE FROM follows f USING accounts a WHERE f.tenant_id = $1"
         "  AND f.target_account_id = $2::bigint AND a.id = f.account_id"
         "  AND a.tenant_id = $1 AND a.domain = $3 RETURNING f.account_id AS id, f.uri),"
         " rr AS (DELETE FROM follow_requests r USING accounts a WHERE r.tenant_id = $1"
         "  AND r.target_account_id = $2::bigint AND a.id = r.account_id"
         "  AND a.tenant_id = $1 AND a.domain = $3 RETURNING r.account_id AS id, r.uri),"
         " dl AS (DELETE FROM list_accounts la USING lists l, accounts a WHERE la.tenant_id = $1"
         "  AND l.tenant_id = $1 AND la.list_id = l.id AND l.account_id = $2::bigint"
         "  AND a.id = la.account_id"
         "  AND a.tenant_id = $1 AND a.domain = $3),"
         " dn AS (DELETE FROM notifications n USING accounts a WHERE n.tenant_id = $1"
         "  AND n.account_id = $2::bigint AND a.id = n.from_account_id"
         "  AND a.tenant_id = $1 AND a.domain = $3)"
         " SELECT 'undo', id::text, uri FROM uf UNION ALL SELECT 'undo', id::text, uri FROM ur"
         " UNION ALL SELECT 'reject', id::text, uri FROM rf"
         " UNION ALL SELECT 'reject', id::text, uri FROM rr"},
    [DOMAIN_BLOCKS_DELETE] = {"domain_blocks.delete",
                              "DELETE FROM account_domain_blocks WHERE tenant_id = $1"
                              " AND account_id = $2::bigint AND domain = $3"},
    /* $2 the viewer, $3 the domain: the follows a block would end. */
    [DOMAIN_BLOCKS_PREVIEW] = {"domain_blocks.preview",
                               "SELECT (SELECT count(*) FROM follows f JOIN accounts a"
                               "  ON a.tenant_id = $1 AND a.id = f.target_account_id"
                               "  WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
                               "  AND a.domain = $3),"
                               " (SELECT count(*) FROM follows f JOIN accounts a"
                               "  ON a.tenant_id = $1 AND a.id = f.account_id"
                               "  WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint"
                               "  AND a.domain = $3)"},
    {0},
};

/* ------------------------------------------------------------ the domain */

int
eu_domain_block_normalize(const char *in, char *out, size_t outlen)
{
    if (!in || outlen < 2)
        return -1;
    while (isspace((unsigned char)*in))
        in++;
    size_t n = strlen(in);
    while (n > 0 && isspace((unsigned char)in[n - 1]))
        n--;
    if (n == 0 || n > EU_DOMAIN_BLOCK_MAX || n >= outlen)
        return -1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)in[i]);
    out[n] = '\0';
    char *colon = strchr(out, ':');
    size_t name = colon ? (size_t)(colon - out) : n;
    if (colon) {
        /* A port: 1 to 65535, digits only. */
        const char *p = colon + 1;
        size_t digits = strlen(p);
        if (digits == 0 || digits > 5 || strspn(p, "0123456789") != digits || atol(p) < 1 ||
            atol(p) > 65535)
            return -1;
    }
    if (name > 0 && out[name - 1] == '.') {
        memmove(out + name - 1, out + name, n - name + 1);
        name--;
    }
    if (name == 0 || name > 253)
        return -1;
    /* Labels of letters, digits, '-' and '_' ('_' is not in host names, but
     * real DNS records have it and Mastodon's validator lets it through). */
    size_t label = 0;
    for (size_t i = 0; i <= name; i++) {
        char c = i < name ? out[i] : '.';
        if (c == '.') {
            if (label == 0 || label > 63 || out[i - 1] == '-')
                return -1;
            label = 0;
            continue;
        }
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok || (label == 0 && c == '-'))
            return -1;
        label++;
    }
    return 0;
}

/* The request's "domain" normalised, arena-owned; NULL after answering
 * 422 (Mastodon's "Validation failed" for a missing or invalid one). */
static const char *
domain_param(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return NULL;
    }
    const char *in = eu_param_str(params, "domain");
    if (!in || !*in) {
        eu_req_reply_error(req, 422, "Validation failed: Domain can't be blank");
        return NULL;
    }
    char *out = eu_arena_alloc(req->arena, EU_DOMAIN_BLOCK_MAX + 1);
    if (eu_domain_block_normalize(in, out, EU_DOMAIN_BLOCK_MAX + 1) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Domain is not a valid domain name");
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------ list */

struct list {
    struct eu_page page;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    int n = PQntuples(res);
    bool asc = eu_page_is_ascending(&l->page);
    json_t *out = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(out, json_string(PQgetvalue(res, asc ? n - 1 - i : i, 1)));
    if (n > 0)
        eu_page_link(req, PQgetvalue(res, asc ? n - 1 : 0, 0), PQgetvalue(res, asc ? 0 : n - 1, 0));
    eu_req_reply_json(req, 200, out);
}

void
eu_domain_blocks_index(struct eu_req *req)
{
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    if (eu_page_parse(req, &l->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *params[5] = {eu_req_viewer(req)};
    eu_page_params(&l->page, params + 1);
    eu_req_stmt_page(req, &eu_domain_blocks_sql[DOMAIN_BLOCKS_LIST], &l->page, 5, params, on_list,
                     l);
}

/* ------------------------------------------------------------ block */

const struct eu_sql *const eu_domain_blocks_create_sql =
    &eu_domain_blocks_sql[DOMAIN_BLOCKS_CREATE];

void
eu_domain_blocks_after_create(struct eu_app *app, struct eu_tenant *t, int64_t me,
                              const PGresult *res)
{
    /* The ended follows and requests, told to their servers as Mastodon's
     * UnfollowService and reject_follow! do (each is queued after this
     * commit and never fails the block). */
    for (int i = 0; i < PQntuples(res); i++) {
        bool undo = strcmp(PQgetvalue(res, i, 0), "undo") == 0;
        const char *uri = PQgetisnull(res, i, 2) ? NULL : PQgetvalue(res, i, 2);
        eu_ap_outbox_account(app, t, me, PQgetvalue(res, i, 1),
                             undo ? EU_AP_UNFOLLOW : EU_AP_REJECT, uri);
    }
    eu_feed_home_invalidate(app, t, me);
}

static void
on_blocked(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    eu_domain_blocks_after_create(req->app, req->tenant, req->auth.account_id, res);
    eu_req_reply_json(req, 200, json_object());
}

void
eu_domain_blocks_create(struct eu_req *req)
{
    const char *domain = domain_param(req);
    if (!domain)
        return;
    const char *params[] = {eu_req_viewer(req), domain};
    eu_req_stmt(req, eu_domain_blocks_create_sql, 2, params, on_blocked, NULL);
}

/* ------------------------------------------------------------ unblock */

static void
on_unblocked(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    (void)arg;
    eu_req_reply_json(req, 200, json_object());
}

void
eu_domain_blocks_destroy(struct eu_req *req)
{
    const char *domain = domain_param(req);
    if (!domain)
        return;
    const char *params[] = {eu_req_viewer(req), domain};
    eu_req_stmt(req, &eu_domain_blocks_sql[DOMAIN_BLOCKS_DELETE], 2, params, on_unblocked, NULL);
}

/* ------------------------------------------------------------ preview */

static void
on_preview(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    eu_req_reply_json(req, 200,
                      json_pack("{s:I, s:I}", "following_count",
                                (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10),
                                "followers_count",
                                (json_int_t)strtoll(PQgetvalue(res, 0, 1), NULL, 10)));
}

/* GET /api/v1/domain_blocks/preview?domain= (Mastodon 4.3): how many of
 * the viewer's follows and followers a block of the domain would end, for
 * the client's confirmation. */
static void
domain_blocks_preview(struct eu_req *req)
{
    const char *domain = domain_param(req);
    if (!domain)
        return;
    const char *params[] = {eu_req_viewer(req), domain};
    eu_req_stmt(req, &eu_domain_blocks_sql[DOMAIN_BLOCKS_PREVIEW], 2, params, on_preview, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_domain_blocks_routes[] = {
    {EU_HTTP_GET, "/api/v1/domain_blocks", eu_domain_blocks_index, "read:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/domain_blocks", eu_domain_blocks_create, "write:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v1/domain_blocks", eu_domain_blocks_destroy, "write:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/domain_blocks/preview", domain_blocks_preview, "write:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
