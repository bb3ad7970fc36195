/*
 * /api/v1/accounts: the signed-in account's own profile (verify_credentials,
 * update_credentials), reading other accounts (by id, lookup, search,
 * followers, following, familiar followers), and the accounts group's route
 * table, which also lists the handlers of relationships.c (follows, blocks,
 * mutes, notes, follow requests) and lists.c. Profiles are stored as their
 * owner typed them; the HTML Mastodon clients expect is made on the way out
 * (note) or when saved (field values).
 */

#include <jansson.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "accounts_internal.h"
#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/db.h"
#include "eunha/domainblock.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"

/* Mastodon's defaults for local profiles. */
#define DISPLAY_NAME_MAX 30
#define NOTE_MAX 500
#define FIELDS_MAX 4
#define FIELD_TEXT_MAX 255
/* Offset paging (search, directory) reads the offset as an SQL int. No
 * tenant has that many accounts, so a larger offset reads the same empty
 * page as this one instead of failing the cast. */
#define OFFSET_MAX INT_MAX

enum {
    ACCOUNTS_CREDENTIALS,
    ACCOUNTS_UPDATE_CREDENTIALS,
    ACCOUNTS_SHOW,
    ACCOUNTS_LOOKUP,
    ACCOUNTS_MOVED,
    ACCOUNTS_EXISTS,
    ACCOUNTS_FOLLOWERS,
    ACCOUNTS_FOLLOWING,
    ACCOUNTS_SEARCH,
    ACCOUNTS_FAMILIAR_FOLLOWERS,
    ACCOUNTS_DIRECTORY,
    ACCOUNTS_PROFILE_IMAGE_DELETE,
    ACCOUNTS_MANY,
};

/* Mastodon's DEFAULT_ACCOUNTS_LIMIT: the most ids GET /api/v1/accounts takes. */
#define ACCOUNTS_MANY_MAX 40

const struct eu_sql eu_accounts_sql[] = {
    [ACCOUNTS_CREDENTIALS] = {"accounts.credentials",
                              "SELECT (eunha_account(a)).*, a.note AS source_note,"
                              " coalesce(a.fields_source, a.fields)::text AS source_fields,"
                              " u.default_privacy, u.default_sensitive,"
                              " coalesce(u.default_language, '') AS default_language,"
                              " (SELECT j::text FROM eunha_role_json($1, u.role_id) j) AS role,"
                              " (SELECT count(*) FROM follow_requests r"
                              " WHERE r.tenant_id = $1 AND r.target_account_id = a.id)"
                              " AS follow_requests_count, a.moved_to_account_id"
                              " FROM accounts a JOIN users u"
                              " ON u.tenant_id = $1 AND u.account_id = a.id"
                              " WHERE a.tenant_id = $1 AND a.id = $2::bigint"},
    /* Unlocking an account accepts its pending requests, as Mastodon does.
     * $13 and $14, new avatar and header store keys, replace the old ones,
     * returned for their files to go. */
    [ACCOUNTS_UPDATE_CREDENTIALS] =
        {"accounts.update_credentials",
         "WITH old AS (SELECT id, avatar_url, header_url FROM accounts WHERE tenant_id = $1"
         "  AND id = $2::bigint FOR UPDATE),"
         " u AS (UPDATE users SET default_privacy = coalesce($9, default_privacy),"
         "  default_sensitive = coalesce($10::boolean, default_sensitive),"
         "  default_language = CASE WHEN $11::text IS NULL THEN default_language"
         "   ELSE nullif($11::text, '') END, updated_at = now()"
         "  WHERE tenant_id = $1 AND account_id = $2::bigint RETURNING 1),"
         " acc AS (INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs,"
         "  notify, languages) SELECT $1, account_id, target_account_id, show_reblogs, notify,"
         "  languages FROM follow_requests WHERE tenant_id = $1 AND target_account_id = $2::bigint"
         "  AND $5::boolean IS FALSE ON CONFLICT DO NOTHING RETURNING account_id),"
         " dreq AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         "  AND target_account_id = $2::bigint AND $5::boolean IS FALSE)"
         " UPDATE accounts SET display_name = coalesce($3, display_name),"
         "  note = coalesce($4, note), locked = coalesce($5::boolean, locked),"
         "  bot = coalesce($6::boolean, bot), discoverable = coalesce($7::boolean, discoverable),"
         "  fields = coalesce($8::jsonb, fields),"
         " fields_source = coalesce($12::jsonb, fields_source),"
         "  avatar_url = coalesce($13::text, avatar_url),"
         "  header_url = coalesce($14::text, header_url),"
         /* Through old, so its row is read (and locked) before the update:
          * a lock taken after would skip the row this statement changed. */
         "  updated_at = now() WHERE tenant_id = $1 AND id = (SELECT id FROM old)"
         " RETURNING (SELECT string_agg(account_id::text, ',') FROM acc),"
         "  CASE WHEN $13::text IS NOT NULL THEN (SELECT avatar_url FROM old) END,"
         "  CASE WHEN $14::text IS NOT NULL THEN (SELECT header_url FROM old) END"},
    [ACCOUNTS_SHOW] = {"accounts.show",
                       "SELECT (eunha_account(a)).*, a.moved_to_account_id FROM accounts a"
                       " WHERE a.tenant_id = $1"
                       " AND a.id = $2::bigint"},
    [ACCOUNTS_LOOKUP] = {"accounts.lookup",
                         "SELECT (eunha_account(a)).*, a.moved_to_account_id FROM accounts a"
                         " WHERE a.tenant_id = $1"
                         " AND lower(a.username) = lower($2)"
                         " AND coalesce(lower(a.domain), '')"
                         " = lower($3)"},
    [ACCOUNTS_MOVED] = {"accounts.moved", "SELECT (eunha_account(a)).* FROM accounts a"
                                          " WHERE a.tenant_id = $1 AND a.id = $2::bigint"},
    [ACCOUNTS_EXISTS] = {"accounts.exists",
                         "SELECT 1 FROM accounts WHERE tenant_id = $1 AND id = $2::bigint"},
    /* Paged by the follow's id: the order in which the follows happened.
     * An account that blocks the viewer shows them nobody, as Mastodon. */
    [ACCOUNTS_FOLLOWERS] = {"accounts.followers",
                            "SELECT f.id, (eunha_account(a)).* FROM follows f JOIN accounts a"
                            " ON a.tenant_id = $1 AND a.id = f.account_id"
                            " WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint"
                            " AND a.suspended_at IS NULL AND NOT EXISTS (SELECT 1"
                            " FROM blocks b WHERE b.tenant_id = $1"
                            " AND b.account_id = $2::bigint"
                            " AND b.target_account_id = $3::bigint)",
                            "f.id", 4},
    [ACCOUNTS_FOLLOWING] = {"accounts.following",
                            "SELECT f.id, (eunha_account(a)).* FROM follows f JOIN accounts a"
                            " ON a.tenant_id = $1 AND a.id = f.target_account_id"
                            " WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
                            " AND a.suspended_at IS NULL AND NOT EXISTS (SELECT 1"
                            " FROM blocks b WHERE b.tenant_id = $1"
                            " AND b.account_id = $2::bigint"
                            " AND b.target_account_id = $3::bigint)",
                            "f.id", 4},
    [ACCOUNTS_SEARCH] =
        {"accounts.search",
         "SELECT (eunha_account(a)).* FROM accounts a"
         " WHERE a.tenant_id = $1 AND a.suspended_at IS NULL"
         /* the instance actor (src/ap/instance_actor.c) is nobody to find */
         " AND NOT (a.domain IS NULL AND a.username = 'instance.actor')"
         " AND (lower(a.username) LIKE lower($3) || '%'"
         "  OR ($4::text IS NULL AND a.display_name ILIKE '%' || $3 || '%'))"
         " AND ($4::text IS NULL OR coalesce(lower(a.domain), '') = lower($4))"
         " AND (NOT $5::boolean OR EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint AND f.target_account_id = a.id))"
         " AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1"
         "  AND ((b.account_id = $2::bigint AND b.target_account_id = a.id)"
         "  OR (b.account_id = a.id AND b.target_account_id = $2::bigint)))"
         " ORDER BY lower(a.username) = lower($8) DESC, a.domain IS NULL DESC,"
         "  EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint"
         "  AND f.target_account_id = a.id) DESC, lower(a.username), a.id"
         " LIMIT $6::int OFFSET $7::int"},
    /* For each asked account, the accounts the viewer follows that follow
     * it, in the order the ids were given. */
    [ACCOUNTS_FAMILIAR_FOLLOWERS] =
        {"accounts.familiar_followers",
         "SELECT x.id::text, (eunha_account(a::accounts)).* FROM (SELECT DISTINCT ON (id) id, ord "
         "FROM unnest($3::bigint[]) WITH ORDINALITY"
         "  AS u(id, ord) ORDER BY id, ord) x"
         " LEFT JOIN LATERAL (SELECT ac.* FROM follows mf JOIN follows tf"
         "  ON tf.tenant_id = $1 AND tf.account_id = mf.target_account_id"
         "  JOIN accounts ac ON ac.tenant_id = $1 AND ac.id = mf.target_account_id"
         "  WHERE mf.tenant_id = $1 AND mf.account_id = $2::bigint"
         "  AND tf.target_account_id = x.id"
         "  AND ac.suspended_at IS NULL ORDER BY mf.id DESC LIMIT 40) a ON true"
         " ORDER BY x.ord, a.id"},
    [ACCOUNTS_DIRECTORY] =
        {"accounts.directory",
         "SELECT (eunha_account(a)).* FROM accounts a"
         " WHERE a.tenant_id = $1 AND a.discoverable AND a.suspended_at IS NULL"
         " AND (NOT $3::boolean OR a.domain IS NULL)"
         /* Mastodon's directory leaves out the domains the viewer blocks */
         " AND (a.domain IS NULL OR NOT EXISTS (SELECT 1 FROM account_domain_blocks d"
         "  WHERE d.tenant_id = $1 AND d.account_id = $2::bigint AND d.domain = a.domain))"
         " AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1"
         "  AND ((b.account_id = $2::bigint AND b.target_account_id = a.id)"
         "  OR (b.account_id = a.id AND b.target_account_id = $2::bigint)))"
         " ORDER BY CASE WHEN $4::boolean THEN a.id END DESC NULLS LAST,"
         "  (SELECT max(s.id) FROM statuses s"
         " WHERE s.tenant_id = $1 AND s.account_id = a.id"
         "  AND s.deleted_at IS NULL)"
         "  DESC NULLS LAST, a.id DESC"
         " LIMIT $5::int OFFSET $6::int"},
    /* $2 account, $3 'avatar' or 'header': back to the default; returns the
     * old value (a store key) for its file to go. */
    [ACCOUNTS_PROFILE_IMAGE_DELETE] =
        {"accounts.profile_image_delete",
         "WITH old AS (SELECT id, avatar_url, header_url FROM accounts WHERE tenant_id = $1"
         "  AND id = $2::bigint FOR UPDATE)"
         " UPDATE accounts a SET avatar_url = CASE WHEN $3::text = 'avatar' THEN NULL"
         "  ELSE a.avatar_url END, header_url = CASE WHEN $3::text = 'header' THEN NULL"
         "  ELSE a.header_url END, updated_at = now() FROM old WHERE a.tenant_id = $1"
         "  AND a.id = old.id RETURNING CASE WHEN $3::text = 'avatar' THEN old.avatar_url"
         "  ELSE old.header_url END"},
    /* $2 ids as a bigint[] literal: those that exist, in the order asked,
     * without local accounts awaiting approval (Mastodon's
     * without_unapproved); suspended ones render as suspended, as alone. */
    [ACCOUNTS_MANY] = {"accounts.many",
                       "SELECT (eunha_account(a)).* FROM unnest($2::bigint[]) WITH ORDINALITY"
                       " AS x(id, n) JOIN accounts a ON a.tenant_id = $1 AND a.id = x.id"
                       " LEFT JOIN users u ON u.tenant_id = $1 AND u.account_id = a.id"
                       " WHERE u.approved IS NOT FALSE ORDER BY x.n"},
    {0},
};

json_t *
eu_accounts_render(struct eu_req *req, const PGresult *res, int row,
                   const struct eu_account_cols *ac)
{
    json_t *o = eu_account_json(req, res, row, ac);
    if (!json_is_true(json_object_get(o, "suspended")))
        return o;
    /* Mastodon keeps the identity of a suspended account and hides the
     * profile (REST::AccountSerializer for an unavailable account). */
    const char *base = eu_req_base_url(req);
    const char *avatar = eu_arena_sprintf(req->arena, "%s/avatars/original/missing.png", base);
    const char *header = eu_arena_sprintf(req->arena, "%s/headers/original/missing.png", base);
    json_object_set_new(o, "display_name", json_string(""));
    json_object_set_new(o, "note", json_string(""));
    json_object_set_new(o, "locked", json_false());
    json_object_set_new(o, "bot", json_false());
    json_object_set_new(o, "discoverable", json_false());
    json_object_set_new(o, "indexable", json_false());
    json_object_set_new(o, "avatar", json_string(avatar));
    json_object_set_new(o, "avatar_static", json_string(avatar));
    json_object_set_new(o, "header", json_string(header));
    json_object_set_new(o, "header_static", json_string(header));
    json_object_set_new(o, "fields", json_array());
    json_object_set_new(o, "emojis", json_array());
    json_object_set_new(o, "roles", json_array());
    json_object_set_new(o, "followers_count", json_integer(0));
    json_object_set_new(o, "following_count", json_integer(0));
    json_object_set_new(o, "statuses_count", json_integer(0));
    json_object_set_new(o, "last_status_at", json_null());
    return o;
}

/* ------------------------------------------------------------- page reply */

struct account_page {
    bool ascending;
};

static void
on_account_page(struct eu_req *req, PGresult *res, void *arg)
{
    struct account_page *ap = arg;
    int n = PQntuples(res), ncols = PQnfields(res);
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    /* The extras: every column but the page id and the Account's. */
    bool *extra = eu_arena_calloc(req->arena, (size_t)ncols + 1);
    for (int c = 1; c < ncols; c++)
        extra[c] = true;
    for (int f = 0; f < EU_ACCOUNT_NFIELDS; f++)
        extra[ac.col[f]] = false;
    json_t *out = json_array();
    for (int k = 0; k < n; k++) {
        int row = ap->ascending ? n - 1 - k : k;
        json_t *o = eu_accounts_render(req, res, row, &ac);
        for (int c = 1; c < ncols; c++)
            if (extra[c])
                json_object_set_new(
                    o, PQfname(res, c),
                    PQgetisnull(res, row, c) ? json_null() : json_string(PQgetvalue(res, row, c)));
        json_array_append_new(out, o);
    }
    if (n > 0) {
        /* Newest first on the page, whatever order the rows came in. */
        const char *newest = PQgetvalue(res, ap->ascending ? n - 1 : 0, 0);
        const char *oldest = PQgetvalue(res, ap->ascending ? 0 : n - 1, 0);
        eu_page_link(req, newest, oldest);
    }
    eu_req_reply_json(req, 200, out);
}

void
eu_accounts_reply_page(struct eu_req *req, const struct eu_sql *s, int nparams,
                       const char *const *params, const struct eu_page *page)
{
    struct account_page *ap = eu_arena_calloc(req->arena, sizeof(*ap));
    ap->ascending = eu_page_is_ascending(page);
    eu_req_stmt_page(req, s, page, nparams, params, on_account_page, ap);
}

/* ---------------------------------------------------- verify_credentials */

static void
drop_json(void *data)
{
    json_decref(data);
}

static void
on_moved(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *o = arg;
    if (PQntuples(res) > 0) {
        struct eu_account_cols ac;
        eu_account_cols_find(&ac, res);
        json_object_set_new(o, "moved", eu_accounts_render(req, res, 0, &ac));
    }
    eu_req_reply_json(req, 200, json_incref(o)); /* the arena keeps its own */
}

/* Answers 200 with o (taking it), with Mastodon's `moved` (the Account it
 * moved to, not nested further, as Mastodon does) when res's column
 * moved_to_account_id names one; accounts.moved reads it then. (Its
 * columns by a join cost every read of an account their executor set-up,
 * a third more PostgreSQL CPU for verify_credentials, for the rare account
 * that moved.) */
static void
reply_with_moved(struct eu_req *req, json_t *o, const PGresult *res)
{
    int col = PQfnumber(res, "moved_to_account_id");
    if (PQgetisnull(res, 0, col)) {
        eu_req_reply_json(req, 200, o);
        return;
    }
    /* Held by the arena: a failed statement answers without calling back. */
    eu_arena_on_free(req->arena, drop_json, o);
    const char *params[] = {PQgetvalue(res, 0, col)};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_MOVED], 1, params, on_moved, o);
}

/* The value of column name in res's first row: a one-row result reads
 * each once, so no lookup table pays. */
static const char *
field(const PGresult *res, const char *name)
{
    return PQgetvalue(res, 0, PQfnumber(res, name));
}

/* A page's wish for the CredentialAccount (eu_accounts_credentials_load). */
struct cred_load {
    eu_accounts_json_cb cb;
    void *arg;
};

static void
on_credentials(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    json_t *o = eu_account_json(req, res, 0, &ac);
    json_t *fields = json_loads(PQgetvalue(res, 0, PQfnumber(res, "source_fields")), 0, NULL);
    json_t *plain = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
    {
        json_t *name = json_object_get(f, "name"), *value = json_object_get(f, "value");
        json_array_append_new(
            plain, json_pack("{s:s, s:s, s:n}", "name",
                             json_is_string(name) ? json_string_value(name) : "", "value",
                             json_is_string(value) ? json_string_value(value) : "", "verified_at"));
    }
    json_decref(fields);
    json_object_set_new(
        o, "source",
        json_pack("{s:s, s:b, s:s, s:s, s:o, s:I}", "privacy", field(res, "default_privacy"),
                  "sensitive", field(res, "default_sensitive")[0] == 't', "language",
                  field(res, "default_language"), "note", field(res, "source_note"), "fields",
                  plain, "follow_requests_count",
                  (json_int_t)strtoll(field(res, "follow_requests_count"), NULL, 10)));
    json_t *role = json_loads(field(res, "role"), 0, NULL);
    json_object_set_new(o, "role", role ? role : json_null());
    const struct cred_load *l = arg;
    if (l) {
        l->cb(req, o, l->arg);
        json_decref(o);
        return;
    }
    reply_with_moved(req, o, res);
}

void
eu_accounts_credentials_load(struct eu_req *req, eu_accounts_json_cb cb, void *arg)
{
    struct cred_load *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->cb = cb;
    l->arg = arg;
    const char *params[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_CREDENTIALS], 1, params, on_credentials, l);
}

void
eu_accounts_reply_credentials(struct eu_req *req)
{
    const char *params[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_CREDENTIALS], 1, params, on_credentials, NULL);
}

static void
on_profile_image_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
        eu_profile_image_delete(req->app, PQgetvalue(res, 0, 0));
    eu_ap_outbox_profile(req->app, req->tenant, req->auth.account_id);
    eu_accounts_reply_credentials(req);
}

/* DELETE /api/v1/profile/avatar and /header (Mastodon 4.2): back to the
 * default image; answers the CredentialAccount. */
static void
profile_image_delete(struct eu_req *req, const char *which)
{
    const char *params[] = {eu_req_viewer(req), which};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_PROFILE_IMAGE_DELETE], 2, params,
                on_profile_image_deleted, NULL);
}

static void
profile_avatar_delete(struct eu_req *req)
{
    profile_image_delete(req, "avatar");
}

static void
profile_header_delete(struct eu_req *req)
{
    profile_image_delete(req, "header");
}

static void
verify_credentials(struct eu_req *req)
{
    /* Two scopes grant this one route (Mastodon 4.3 added "profile"), so the
     * route table leaves the check to us. */
    if (!eu_auth_scope_allows(req->auth.scopes, "read:accounts") &&
        !eu_auth_scope_allows(req->auth.scopes, "profile")) {
        eu_req_reply_error(req, 403, "This action is outside the authorized scopes");
        return;
    }
    eu_accounts_reply_credentials(req);
}

/* ---------------------------------------------------- update_credentials */

/* Field values that are a bare http(s) URL become a link as Mastodon makes
 * them; anything else is escaped text. Arena-owned. */
static const char *
field_value_html(struct eu_req *req, const char *value)
{
    const char *rest = NULL;
    if (strncmp(value, "https://", 8) == 0)
        rest = value + 8;
    else if (strncmp(value, "http://", 7) == 0)
        rest = value + 7;
    if (!rest || !*rest || strpbrk(value, " \t\r\n<>\"'"))
        return eu_html_escape(req, value);
    return eu_arena_sprintf(req->arena,
                            "<a href=\"%s\" target=\"_blank\" rel=\"nofollow noopener noreferrer "
                            "me\" translate=\"no\"><span class=\"invisible\">%.*s</span><span "
                            "class=\"\">%s</span><span class=\"invisible\"></span></a>",
                            eu_html_escape(req, value), (int)(rest - value), value,
                            eu_html_escape(req, rest));
}

/*
 * fields_attributes as clients send it: a hash keyed by index (form or
 * JSON) or a JSON array, of {name, value}. Fills *rendered and *plain with
 * JSON texts (arena) for the fields and fields_source columns. Returns 0, or
 * -1 with err set.
 */
static int
parse_fields(struct eu_req *req, json_t *attrs, const char **rendered, const char **plain,
             struct eu_error *err)
{
    json_t *list = json_array();
    if (json_is_array(attrs)) {
        json_array_extend(list, attrs);
    } else if (json_is_object(attrs)) {
        /* The index only orders the fields (Mastodon: "the exact integer
         * does not matter"): keep the order they were sent in. */
        const char *k;
        json_t *v;
        json_object_foreach(attrs, k, v)
        {
            json_array_append(list, v);
        }
    } else {
        json_decref(list);
        return eu_error_set(err, 422, "Validation failed: Fields is invalid");
    }
    json_t *html = json_array(), *src = json_array();
    size_t i;
    json_t *f;
    int rc = 0;
    json_array_foreach(list, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *value = json_string_value(json_object_get(f, "value"));
        name = name ? name : "";
        value = value ? value : "";
        if (!*name && !*value)
            continue; /* Mastodon drops blank rows, which is how a field is removed */
        if (eu_utf8_chars(name) > FIELD_TEXT_MAX || eu_utf8_chars(value) > FIELD_TEXT_MAX) {
            rc = eu_error_set(err, 422,
                              "Validation failed: Fields is too long (maximum is %d "
                              "characters per name or value)",
                              FIELD_TEXT_MAX);
            break;
        }
        if (json_array_size(src) == FIELDS_MAX) {
            rc = eu_error_set(err, 422, "Validation failed: Fields is too big (maximum is %d)",
                              FIELDS_MAX);
            break;
        }
        json_array_append_new(src, json_pack("{s:s, s:s}", "name", name, "value", value));
        json_array_append_new(html, json_pack("{s:s, s:s, s:n}", "name", name, "value",
                                              field_value_html(req, value), "verified_at"));
    }
    if (rc == 0) {
        char *a = json_dumps(html, JSON_COMPACT), *b = json_dumps(src, JSON_COMPACT);
        *rendered = eu_arena_strdup(req->arena, a);
        *plain = eu_arena_strdup(req->arena, b);
        free(a);
        free(b);
    }
    json_decref(html);
    json_decref(src);
    json_decref(list);
    return rc;
}

/* The statement's parameters while the avatar and header are stored, and
 * who is told the end. */
struct credentials {
    const char *params[13];
    eu_accounts_done_cb done;
    void *arg;
};

static void
on_credentials_updated(struct eu_req *req, PGresult *res, void *arg)
{
    /* Replaced images' files go once the row no longer names them. */
    if (PQntuples(res) > 0) {
        eu_profile_image_delete(req->app, PQgetisnull(res, 0, 1) ? NULL : PQgetvalue(res, 0, 1));
        eu_profile_image_delete(req->app, PQgetisnull(res, 0, 2) ? NULL : PQgetvalue(res, 0, 2));
    }
    /* Requests accepted by unlocking are new follows: their followers' home
     * feeds must take this account's statuses in. */
    if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0)) {
        size_t n;
        int64_t *ids = eu_db_bigint_array(PQgetvalue(res, 0, 0), &n);
        for (size_t i = 0; i < n; i++)
            eu_feed_home_invalidate(req->app, req->tenant, ids[i]);
        free(ids);
    }
    if (PQntuples(res) > 0)
        eu_ap_outbox_profile(req->app, req->tenant, req->auth.account_id);
    const struct credentials *c = arg;
    c->done(req, 200, NULL, c->arg);
}

/* Reads an optional boolean parameter into text for SQL ("true"/"false", or
 * NULL when absent). Returns -1 with err set when it is not one. */
static int
bool_param(struct eu_req *req, json_t *params, const char *key, const char **out,
           struct eu_error *err)
{
    bool b;
    int rc = eu_param_bool(params, key, &b);
    if (rc < 0)
        return eu_error_set(err, 422, "Validation failed: %s is not a boolean", key);
    (void)req;
    *out = rc == 0 ? NULL : b ? "true" : "false";
    return 0;
}

static void
on_images_stored(struct eu_req *req, int status, const char *error, const char *avatar,
                 const char *header, void *arg)
{
    struct credentials *c = arg;
    if (status) {
        c->done(req, status, error, c->arg);
        return;
    }
    c->params[11] = avatar;
    c->params[12] = header;
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_UPDATE_CREDENTIALS], 13, c->params,
                on_credentials_updated, c);
}

/* The API's end of an update: the CredentialAccount, or the error. */
static void
api_updated(struct eu_req *req, int status, const char *error, void *arg)
{
    (void)arg;
    if (status == 200)
        eu_accounts_reply_credentials(req);
    else
        eu_req_reply_error(req, status, "%s", error);
}

static void
update_credentials(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    eu_accounts_update(req, params, api_updated, NULL);
}

/* Fails an update with err's status and message. */
static void
update_failed(struct eu_req *req, const struct eu_error *err, eu_accounts_done_cb done, void *arg)
{
    done(req, err->status, eu_arena_strdup(req->arena, err->message), arg);
}

void
eu_accounts_update(struct eu_req *req, json_t *params, eu_accounts_done_cb done, void *arg)
{
    struct eu_error err = {0};
    const char *display_name = eu_param_str(params, "display_name");
    const char *note = eu_param_str(params, "note");
    if (display_name && eu_utf8_chars(display_name) > DISPLAY_NAME_MAX) {
        eu_error_set(&err, 422,
                     "Validation failed: Display name is too long (maximum is %d characters)",
                     DISPLAY_NAME_MAX);
        update_failed(req, &err, done, arg);
        return;
    }
    if (note && eu_utf8_chars(note) > NOTE_MAX) {
        eu_error_set(&err, 422, "Validation failed: Note is too long (maximum is %d characters)",
                     NOTE_MAX);
        update_failed(req, &err, done, arg);
        return;
    }
    const char *locked, *bot, *discoverable, *sensitive = NULL;
    if (bool_param(req, params, "locked", &locked, &err) < 0 ||
        bool_param(req, params, "bot", &bot, &err) < 0 ||
        bool_param(req, params, "discoverable", &discoverable, &err) < 0) {
        update_failed(req, &err, done, arg);
        return;
    }
    const char *privacy = NULL, *language = NULL;
    json_t *source = eu_param_object(params, "source");
    if (source) {
        privacy = eu_param_str(source, "privacy");
        if (privacy && strcmp(privacy, "public") != 0 && strcmp(privacy, "unlisted") != 0 &&
            strcmp(privacy, "private") != 0) {
            eu_error_set(&err, 422,
                         "Validation failed: Setting default privacy is not included in the list");
            update_failed(req, &err, done, arg);
            return;
        }
        if (bool_param(req, source, "sensitive", &sensitive, &err) < 0) {
            update_failed(req, &err, done, arg);
            return;
        }
        language = eu_param_str(source, "language");
        if (language) {
            size_t n = strlen(language);
            bool ok = n <= 10;
            for (size_t i = 0; ok && i < n; i++)
                ok = (language[i] >= 'a' && language[i] <= 'z') ||
                     (language[i] >= 'A' && language[i] <= 'Z') || language[i] == '-';
            if (!ok) {
                eu_error_set(&err, 422,
                             "Validation failed: Setting default language is not included in "
                             "the list");
                update_failed(req, &err, done, arg);
                return;
            }
        }
    }
    const char *fields = NULL, *fields_source = NULL;
    /* The form's "fields_attributes[][name]=..." arrives as an array of
     * hashes, as Rack reads it (params.c). */
    json_t *attrs = json_object_get(params, "fields_attributes");
    if (attrs && !json_is_null(attrs) &&
        parse_fields(req, attrs, &fields, &fields_source, &err) < 0) {
        update_failed(req, &err, done, arg);
        return;
    }
    struct credentials *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->done = done;
    c->arg = arg;
    const char *p[] = {eu_req_viewer(req), display_name, note,    locked,    bot,
                       discoverable,       fields,       privacy, sensitive, language,
                       fields_source,      NULL,         NULL};
    memcpy(c->params, p, sizeof(p));
    /* avatar and header files are made into images and stored first. */
    int rc = eu_profile_images_store(req, params, on_images_stored, c, &err);
    if (rc < 0)
        update_failed(req, &err, done, arg);
    else if (rc == 0)
        on_images_stored(req, 0, NULL, NULL, NULL, c);
}

/* ----------------------------------------------------------- one account */

static void
on_account(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    json_t *o = eu_accounts_render(req, res, 0, &ac);
    reply_with_moved(req, o, res);
}

static void
account_show(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *params[] = {id};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_SHOW], 1, params, on_account, NULL);
}

static void
account_lookup(struct eu_req *req)
{
    const char *acct = eu_req_query(req, "acct");
    if (!acct || !*acct) {
        eu_req_reply_error(req, 400, "param is missing or the value is empty: acct");
        return;
    }
    if (acct[0] == '@')
        acct++;
    const char *at = strchr(acct, '@');
    const char *username = at ? eu_arena_strndup(req->arena, acct, (size_t)(at - acct)) : acct;
    const char *domain = at ? at + 1 : "";
    if (strcasecmp(domain, req->tenant->domain) == 0)
        domain = "";
    const char *params[] = {username, domain};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_LOOKUP], 2, params, on_account, NULL);
}

/* ---------------------------------------------------- followers/following */

struct follow_page {
    bool followers;
    struct eu_page page;
};

static void
on_follow_target(struct eu_req *req, PGresult *res, void *arg)
{
    struct follow_page *fp = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *params[6] = {eu_req_param(req, "id"), eu_req_viewer(req)};
    eu_page_params(&fp->page, params + 2);
    eu_accounts_reply_page(
        req, &eu_accounts_sql[fp->followers ? ACCOUNTS_FOLLOWERS : ACCOUNTS_FOLLOWING], 6, params,
        &fp->page);
}

static void
follow_page(struct eu_req *req, bool followers)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct follow_page *fp = eu_arena_calloc(req->arena, sizeof(*fp));
    fp->followers = followers;
    if (eu_page_parse(req, &fp->page, 40, 80) < 0)
        return;
    const char *params[] = {id};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_EXISTS], 1, params, on_follow_target, fp);
}

static void
account_followers(struct eu_req *req)
{
    follow_page(req, true);
}

static void
account_following(struct eu_req *req)
{
    follow_page(req, false);
}

/* --------------------------------------------------------------- search */

/* s with LIKE's wildcards escaped (backslash is PostgreSQL's default
 * escape). Arena-owned. */
static const char *
like_escape(struct eu_req *req, const char *s)
{
    char *out = eu_arena_alloc(req->arena, strlen(s) * 2 + 1), *o = out;
    for (; *s; s++) {
        if (*s == '%' || *s == '_' || *s == '\\')
            *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

static void
on_accounts(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *out = json_array();
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, eu_accounts_render(req, res, i, &ac));
    eu_req_reply_json(req, 200, out);
}

/* GET /api/v1/accounts?id[]=...: several accounts at once (Mastodon 4.3).
 * Duplicates count once; more than ACCOUNTS_MANY_MAX, or an id that is no
 * id, is refused (422) as Mastodon refuses it. */
static void
accounts_many(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *ids = eu_param_array(params, "id");
    size_t n = ids ? json_array_size(ids) : 0;
    const char *lit = "{";
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_array_get(ids, i));
        if (!id || !eu_id_is_valid(id)) {
            json_decref(ids);
            eu_req_reply_error(req, 422, "Validation failed: id is invalid");
            return;
        }
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = strcmp(json_string_value(json_array_get(ids, k)), id) == 0;
        if (dup)
            continue;
        if (++kept > ACCOUNTS_MANY_MAX) {
            json_decref(ids);
            eu_req_reply_error(req, 422, "Validation failed: too many ids (at most %d)",
                               ACCOUNTS_MANY_MAX);
            return;
        }
        lit = eu_arena_sprintf(req->arena, "%s%s%s", lit, kept > 1 ? "," : "", id);
    }
    json_decref(ids);
    lit = eu_arena_sprintf(req->arena, "%s}", lit);
    const char *p[] = {lit};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_MANY], 1, p, on_accounts, NULL);
}

static void
account_search(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *q = eu_param_str(params, "q");
    if (!q || !*q) {
        eu_req_reply_error(req, 400, "param is missing or the value is empty: q");
        return;
    }
    long long limit = 40, offset = 0;
    if (eu_param_int(params, "limit", &limit) < 0 || eu_param_int(params, "offset", &offset) < 0) {
        eu_req_reply_error(req, 400, "limit and offset must be integers");
        return;
    }
    limit = limit < 1 ? 1 : limit > 80 ? 80 : limit;
    offset = offset < 0 ? 0 : offset > OFFSET_MAX ? OFFSET_MAX : offset;
    bool following = false;
    if (eu_param_bool(params, "following", &following) < 0)
        following = false;
    while (*q == ' ' || *q == '@')
        q++;
    const char *at = strchr(q, '@');
    const char *username = at ? eu_arena_strndup(req->arena, q, (size_t)(at - q)) : q;
    const char *domain = NULL;
    if (at) {
        domain = at + 1;
        if (strcasecmp(domain, req->tenant->domain) == 0)
            domain = "";
    }
    const char *p[] = {eu_req_viewer(req),
                       like_escape(req, username),
                       domain,
                       following ? "true" : "false",
                       eu_arena_sprintf(req->arena, "%lld", limit),
                       eu_arena_sprintf(req->arena, "%lld", offset),
                       username};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_SEARCH], 7, p, on_accounts, NULL);
}

/* --------------------------------------------------- familiar_followers */

static void
on_familiar(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *out = json_array(), *cur = NULL;
    const char *cur_id = NULL;
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    for (int i = 0; i < PQntuples(res); i++) {
        const char *id = PQgetvalue(res, i, 0);
        if (!cur_id || strcmp(cur_id, id) != 0) {
            cur = json_pack("{s:s, s:[]}", "id", id, "accounts");
            json_array_append_new(out, cur);
            cur_id = id;
        }
        /* No account: the asked one has no familiar followers. */
        if (!PQgetisnull(res, i, ac.col[0]))
            json_array_append_new(json_object_get(cur, "accounts"),
                                  eu_accounts_render(req, res, i, &ac));
    }
    eu_req_reply_json(req, 200, out);
}

const char *
eu_accounts_ids_param(struct eu_req *req, json_t *params, const char *key)
{
    json_t *ids = eu_param_array(params, key);
    if (json_array_size(ids) > EU_ACCOUNT_IDS_MAX) {
        json_decref(ids);
        eu_req_reply_error(req, 422, "Validation failed: too many ids in %s (at most %d)", key,
                           EU_ACCOUNT_IDS_MAX);
        return NULL;
    }
    size_t i, cap = json_array_size(ids) * 20 + 3;
    char *out = eu_arena_alloc(req->arena, cap), *o = out;
    *o++ = '{';
    json_t *v;
    json_array_foreach(ids, i, v)
    {
        const char *s = json_string_value(v);
        char num[24];
        if (json_is_integer(v)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            s = num;
        }
        if (!eu_id_is_valid(s))
            continue;
        if (o[-1] != '{')
            *o++ = ',';
        size_t l = strlen(s);
        memcpy(o, s, l);
        o += l;
    }
    *o++ = '}';
    *o = '\0';
    json_decref(ids);
    return out;
}

static void
familiar_followers(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *ids = eu_accounts_ids_param(req, params, "id");
    if (!ids)
        return;
    const char *p[] = {eu_req_viewer(req), ids};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_FAMILIAR_FOLLOWERS], 2, p, on_familiar, NULL);
}

/* ------------------------------------------------------------ directory */

/* GET /api/v1/directory: discoverable accounts, recently active first
 * (order=active) or newest first (order=new); local=true keeps local ones. */
static void
directory(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    long long limit = 40, offset = 0;
    if (eu_param_int(params, "limit", &limit) < 0 || eu_param_int(params, "offset", &offset) < 0) {
        eu_req_reply_error(req, 400, "limit and offset must be integers");
        return;
    }
    limit = limit < 1 ? 1 : limit > 80 ? 80 : limit;
    offset = offset < 0 ? 0 : offset > OFFSET_MAX ? OFFSET_MAX : offset;
    bool local = false;
    if (eu_param_bool(params, "local", &local) < 0)
        local = false;
    const char *order = eu_param_str(params, "order");
    bool by_new = order && strcmp(order, "new") == 0;
    const char *p[] = {eu_req_viewer(req), local ? "true" : "false", by_new ? "true" : "false",
                       eu_arena_sprintf(req->arena, "%lld", limit),
                       eu_arena_sprintf(req->arena, "%lld", offset)};
    eu_req_stmt(req, &eu_accounts_sql[ACCOUNTS_DIRECTORY], 5, p, on_accounts, NULL);
}

/* ----------------------------------------------------- empty collections */

/* Identity proofs are gone from Mastodon; old clients still ask for them on every profile and
 * crash on a 404. Featured tags and endorsements are featured.c's. */
static void
empty_list(struct eu_req *req)
{
    eu_req_reply_json(req, 200, json_array());
}

/* ------------------------------------------------------------ route table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PUT EU_HTTP_PUT
#define PATCH EU_HTTP_PATCH
#define DELETE EU_HTTP_DELETE
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)
#define OPT (EU_ROUTE_AUTH_OPT | EU_ROUTE_API)

const struct eu_route eu_accounts_routes[] = {
    {GET, "/api/v1/accounts/verify_credentials", verify_credentials, NULL, AUTH},
    /* avatar and header come as files here */
    {PATCH | PUT, "/api/v1/accounts/update_credentials", update_credentials, "write:accounts",
     AUTH | EU_ROUTE_UPLOAD},
    {DELETE, "/api/v1/profile/avatar", profile_avatar_delete, "write:accounts", AUTH},
    {DELETE, "/api/v1/profile/header", profile_header_delete, "write:accounts", AUTH},
    {GET, "/api/v1/accounts", accounts_many, NULL, OPT},
    {GET, "/api/v1/accounts/lookup", account_lookup, NULL, OPT},
    {GET, "/api/v1/accounts/search", account_search, "read:accounts", AUTH},
    {GET, "/api/v1/accounts/familiar_followers", familiar_followers, "read:follows", AUTH},
    {GET, "/api/v1/accounts/:id", account_show, NULL, OPT},
    {GET, "/api/v1/accounts/:id/followers", account_followers, NULL, OPT},
    {GET, "/api/v1/accounts/:id/following", account_following, NULL, OPT},
    {GET, "/api/v1/accounts/:id/identity_proofs", empty_list, "read:accounts", AUTH},
    {GET, "/api/v1/directory", directory, NULL, OPT},
    {0},
};
