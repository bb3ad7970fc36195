/*
 * The settings pages where a signed-in browser takes its data out and
 * brings it in, as on Mastodon (docs/takeout.md):
 *
 *   GET  /settings/export             counts, and links to the CSV files
 *   GET  /settings/exports/NAME.csv   follows, blocks, mutes, lists,
 *                                     domain_blocks, bookmarks: Mastodon's
 *                                     Export columns, headers and order
 *   GET  /settings/imports            the account's imports with progress
 *   GET  /settings/imports/:id        one of them
 *   POST /settings/imports            multipart type, mode, data (a CSV)
 *
 * Each CSV is made by one statement that writes the whole text in the
 * database (quoting as Ruby's CSV does), so the loop only copies bytes;
 * each file holds at most TAKEOUT_EXPORT_MAX_ROWS rows. An upload is
 * parsed on the CPU pool (takeout_import.c), stored with its rows in one
 * statement, and applied by the "bulk_import" job.
 */
#include "takeout_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/cpupool.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "web_internal.h"
#include "websession_internal.h"

/* Rows in one exported file; the rest is left out (documented). */
#define TAKEOUT_EXPORT_MAX_ROWS "100000"
/* Imports the settings page lists. */
#define TAKEOUT_IMPORTS_PAGE "50"

/* An account as Mastodon's Export#acct writes it: local ones with the
 * local domain ($3). */
#define ACCT(a)                                                                                    \
    "CASE WHEN " a ".domain IS NULL THEN " a ".username || '@' || $3 ELSE " a                      \
    ".username || '@' || " a ".domain END"
/* A field as Ruby's CSV writes it: quoted when it holds a quote, a comma
 * or a line break, an empty string as "". */
#define CSV(x)                                                                                     \
    "CASE WHEN (" x ") = '' OR (" x ") ~ '[\",\\r\\n]' THEN '\"' || replace((" x                   \
    "), '\"', '\"\"') || '\"' ELSE (" x ") END"
/* The rows' lines joined in order, capped. */
#define JOINED(body)                                                                               \
    "SELECT coalesce(string_agg(x.line, '' ORDER BY x.ord), '') FROM (" body                       \
    " LIMIT " TAKEOUT_EXPORT_MAX_ROWS ") x"

enum {
    TAKEOUT_COUNTS,
    TAKEOUT_FOLLOWS,
    TAKEOUT_BLOCKS,
    TAKEOUT_MUTES,
    TAKEOUT_LISTS,
    TAKEOUT_DOMAIN_BLOCKS,
    TAKEOUT_BOOKMARKS,
    TAKEOUT_IMPORTS,
    TAKEOUT_IMPORT_SHOW,
    TAKEOUT_IMPORT_CREATE,
};

const struct eu_sql eu_takeout_sql[] = {
    /* $2 the account: what each export would hold. */
    [TAKEOUT_COUNTS] = {"takeout.counts",
                        "SELECT (SELECT count(*) FROM follows WHERE tenant_id = $1"
                        "  AND account_id = $2::bigint),"
                        " (SELECT count(*) FROM lists WHERE tenant_id = $1"
                        "  AND account_id = $2::bigint),"
                        " (SELECT count(*) FROM blocks WHERE tenant_id = $1"
                        "  AND account_id = $2::bigint),"
                        " (SELECT count(*) FROM mutes WHERE tenant_id = $1"
                        "  AND account_id = $2::bigint),"
                        " (SELECT count(*) FROM account_domain_blocks WHERE tenant_id = $1"
                        "  AND account_id = $2::bigint),"
                        " (SELECT count(*) FROM bookmarks WHERE tenant_id = $1"
                        "  AND account_id = $2::bigint)"},
    /* $2 the account, $3 the local domain; newest first, as Mastodon. */
    [TAKEOUT_FOLLOWS] =
        {"takeout.follows",
         JOINED("SELECT -f.id AS ord, " CSV(
             ACCT("a")) " || ',' ||"
                        " f.show_reblogs::text || ',' || f.notify::text || ',' ||"
                        " coalesce(" CSV(
                            "array_to_string(f.languages, ', ')") ", '')"
                                                                  " || chr(10) AS line FROM "
                                                                  "follows f JOIN accounts a"
                                                                  " ON a.tenant_id = $1 AND a.id = "
                                                                  "f.target_account_id"
                                                                  " WHERE f.tenant_id = $1 AND "
                                                                  "f.account_id = $2::bigint"
                                                                  " ORDER BY f.id DESC")},
    [TAKEOUT_BLOCKS] = {"takeout.blocks",
                        JOINED("SELECT -b.id AS ord, " CSV(
                            ACCT("a")) " || chr(10) AS line"
                                       " FROM blocks b JOIN accounts a ON a.tenant_id = $1"
                                       " AND a.id = b.target_account_id WHERE b.tenant_id = $1"
                                       " AND b.account_id = $2::bigint ORDER BY b.id DESC")},
    [TAKEOUT_MUTES] = {"takeout.mutes",
                       JOINED("SELECT -m.id AS ord, " CSV(
                           ACCT("a")) " || ',' ||"
                                      " m.hide_notifications::text || chr(10) AS line FROM mutes m"
                                      " JOIN accounts a ON a.tenant_id = $1"
                                      " AND a.id = m.target_account_id WHERE m.tenant_id = $1"
                                      " AND m.account_id = $2::bigint ORDER BY m.id DESC")},
    /* A list's members one per line, lists in the order they were made. */
    [TAKEOUT_LISTS] =
        {"takeout.lists",
         JOINED("SELECT row_number() OVER (ORDER BY l.id, a.id) AS ord, " CSV(
             "l.title") " || ',' || " CSV(ACCT("a")) " || chr(10) AS line"
                                                     " FROM lists l JOIN list_accounts la ON "
                                                     "la.tenant_id = $1"
                                                     " AND la.list_id = l.id JOIN accounts a ON "
                                                     "a.tenant_id = $1"
                                                     " AND a.id = la.account_id WHERE l.tenant_id "
                                                     "= $1"
                                                     " AND l.account_id = $2::bigint ORDER BY "
                                                     "l.id, a.id")},
    [TAKEOUT_DOMAIN_BLOCKS] =
        {"takeout.domain_blocks",
         JOINED("SELECT d.id AS ord, " CSV(
             "d.domain") " || chr(10) AS line"
                         " FROM account_domain_blocks d WHERE d.tenant_id = $1"
                         " AND d.account_id = $2::bigint ORDER BY d.id")},
    /* $3 the base URL: a local status by the URI it is served at. */
    [TAKEOUT_BOOKMARKS] =
        {"takeout.bookmarks",
         JOINED("SELECT -b.id AS ord, " CSV(
             "coalesce(s.uri, $3 || '/users/' || sa.username || '/statuses/' ||"
             " s.id)") " || chr(10) AS line FROM bookmarks b JOIN statuses s"
                       " ON s.tenant_id = $1 AND s.id = b.status_id"
                       " JOIN accounts sa ON sa.tenant_id = $1 AND sa.id = s.account_id"
                       " WHERE b.tenant_id = $1 AND b.account_id = $2::bigint"
                       " ORDER BY b.id DESC")},
    /* $2 the account: its imports, newest first. */
    [TAKEOUT_IMPORTS] = {"takeout.imports",
                         "SELECT id::text, type, state, overwrite, total_items, processed_items,"
                         " imported_items, to_char(created_at AT TIME ZONE 'UTC',"
                         " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM bulk_imports"
                         " WHERE tenant_id = $1 AND account_id = $2::bigint"
                         " ORDER BY id DESC LIMIT " TAKEOUT_IMPORTS_PAGE},
    /* $3 the import, when it is $2's. */
    [TAKEOUT_IMPORT_SHOW] = {"takeout.import_show",
                             "SELECT id::text, type, state, overwrite, total_items,"
                             " processed_items, imported_items, to_char(created_at AT TIME ZONE"
                             " 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM bulk_imports"
                             " WHERE tenant_id = $1 AND account_id = $2::bigint"
                             " AND id = $3::bigint"},
    /* $2 the account, $3 the type, $4 overwrite, $5 the file's name, $6
     * likely mismatched, $7 the rows (a JSON array): the import and its
     * rows in one statement, finished at once when there is none. */
    [TAKEOUT_IMPORT_CREATE] = {"takeout.import_create",
                               "WITH i AS (INSERT INTO bulk_imports (tenant_id, account_id, type,"
                               " overwrite, original_filename, likely_mismatched, total_items,"
                               " state, finished_at) VALUES ($1, $2::bigint, $3, $4::boolean, $5,"
                               " $6::boolean, jsonb_array_length($7::jsonb),"
                               " CASE WHEN jsonb_array_length($7::jsonb) = 0 THEN 'finished'"
                               " ELSE 'scheduled' END, CASE WHEN jsonb_array_length($7::jsonb) = 0"
                               " THEN now() END) RETURNING id),"
                               " r AS (INSERT INTO bulk_import_rows (tenant_id, bulk_import_id,"
                               " data) SELECT $1, i.id, e.value FROM i,"
                               " jsonb_array_elements($7::jsonb) WITH ORDINALITY e"
                               " ORDER BY e.ordinality)"
                               " SELECT id::text, jsonb_array_length($7::jsonb) FROM i"},
    {0},
};

/* ---------------------------------------------------------------- exports */

/* One CSV export: the statement, Mastodon's header line and file name. */
struct csv_export {
    int stmt;
    int nparams;        /* the account, then the local domain or the base URL */
    const char *header; /* "" for none */
    const char *filename;
};

static const struct csv_export EXPORT_FOLLOWS = {
    TAKEOUT_FOLLOWS, 2, "Account address,Show boosts,Notify on new posts,Languages\n",
    "following_accounts.csv"};
static const struct csv_export EXPORT_BLOCKS = {TAKEOUT_BLOCKS, 2, "", "blocked_accounts.csv"};
static const struct csv_export EXPORT_MUTES = {
    TAKEOUT_MUTES, 2, "Account address,Hide notifications\n", "muted_accounts.csv"};
static const struct csv_export EXPORT_LISTS = {TAKEOUT_LISTS, 2, "", "lists.csv"};
static const struct csv_export EXPORT_DOMAIN_BLOCKS = {TAKEOUT_DOMAIN_BLOCKS, 1, "",
                                                       "blocked_domains.csv"};
static const struct csv_export EXPORT_BOOKMARKS = {TAKEOUT_BOOKMARKS, 2, "", "bookmarks.csv"};

static void
on_csv(struct eu_req *req, PGresult *res, void *arg)
{
    const struct csv_export *e = arg;
    const char *rows = PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "";
    size_t hl = strlen(e->header), rl = strlen(rows);
    char *body = eu_arena_alloc(req->arena, hl + rl + 1);
    memcpy(body, e->header, hl);
    memcpy(body + hl, rows, rl + 1);
    /* What Rails' send_data writes for a file name. */
    eu_req_add_header(req, "Content-Disposition",
                      eu_arena_sprintf(req->arena,
                                       "attachment; filename=\"%s\"; filename*=UTF-8''%s",
                                       e->filename, e->filename));
    eu_req_add_header(req, "Cache-Control", "private, no-store");
    eu_req_reply_raw(req, 200, "text/csv", body, hl + rl);
}

static void
csv_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    const struct csv_export *e = arg;
    const char *acct = eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id);
    const char *p[] = {acct,
                       e->stmt == TAKEOUT_BOOKMARKS ? eu_req_base_url(req) : req->tenant->domain};
    eu_req_stmt(req, &eu_takeout_sql[e->stmt], e->nparams, p, on_csv, (void *)e);
}

#define CSV_HANDLER(fn, export)                                                                    \
    static void fn(struct eu_req *req)                                                             \
    {                                                                                              \
        eu_web_session_require(req, csv_signed_in, (void *)&(export));                             \
    }

CSV_HANDLER(export_follows, EXPORT_FOLLOWS)
CSV_HANDLER(export_blocks, EXPORT_BLOCKS)
CSV_HANDLER(export_mutes, EXPORT_MUTES)
CSV_HANDLER(export_lists, EXPORT_LISTS)
CSV_HANDLER(export_domain_blocks, EXPORT_DOMAIN_BLOCKS)
CSV_HANDLER(export_bookmarks, EXPORT_BOOKMARKS)

static void
on_counts(struct eu_req *req, PGresult *res, void *arg)
{
    static const char *const names[] = {"Follows",  "Lists",         "You block",
                                        "You mute", "Domain blocks", "Bookmarks"};
    static const char *const files[] = {"follows", "lists",         "blocks",
                                        "mutes",   "domain_blocks", "bookmarks"};
    const char *rows = "";
    for (int i = 0; i < 6; i++)
        rows = eu_arena_sprintf(req->arena,
                                "%s<tr><th>%s</th><td id=\"count-%s\">%s</td><td><a "
                                "href=\"/settings/exports/%s.csv\">CSV</a></td></tr>",
                                rows, names[i], files[i], PQgetvalue(res, 0, i), files[i]);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>Export</h1><p>You can request an archive of your posts and uploaded media, or "
        "download what you follow, block and keep as CSV files to import elsewhere.</p>"
        "<table>%s</table><p><a href=\"/settings/imports\">Import</a></p>",
        rows);
    eu_takeout_archive_page(req, arg, body);
}

static void
export_page_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id)};
    eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_COUNTS], 1, p, on_counts, (void *)s);
}

static void
export_page(struct eu_req *req)
{
    eu_web_session_require(req, export_page_signed_in, NULL);
}

/* ---------------------------------------------------------------- imports */

/* One import as a table row: state and progress. */
static const char *
import_row_html(struct eu_req *req, PGresult *res, int i)
{
    long total = atol(PQgetvalue(res, i, 4)), processed = atol(PQgetvalue(res, i, 5));
    long imported = atol(PQgetvalue(res, i, 6));
    return eu_arena_sprintf(
        req->arena,
        "<tr id=\"import-%s\" data-state=\"%s\" data-total=\"%ld\" data-processed=\"%ld\""
        " data-imported=\"%ld\" data-failures=\"%ld\"><td><a href=\"/settings/imports/%s\">%s</a>"
        "</td><td>%s</td><td>%s</td><td>%ld/%ld</td><td>%ld failed</td><td>%s</td></tr>",
        PQgetvalue(res, i, 0), PQgetvalue(res, i, 2), total, processed, imported,
        processed - imported, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
        strcmp(PQgetvalue(res, i, 3), "t") == 0 ? "overwrite" : "merge", PQgetvalue(res, i, 2),
        processed, total, processed - imported, PQgetvalue(res, i, 7));
}

static const char *
imports_table(struct eu_req *req, PGresult *res)
{
    const char *rows = "";
    for (int i = 0; i < PQntuples(res); i++)
        rows = eu_arena_sprintf(req->arena, "%s%s", rows, import_row_html(req, res, i));
    return eu_arena_sprintf(req->arena,
                            "<table><tr><th>Type</th><th>Mode</th><th>State</th>"
                            "<th>Progress</th><th>Failures</th><th>Created</th></tr>%s</table>",
                            rows);
}

/* The upload form, with the session's CSRF token. */
static const char *
import_form(struct eu_req *req, const struct eu_web_session *s)
{
    return eu_arena_sprintf(
        req->arena,
        "<form method=\"post\" action=\"/settings/imports\" enctype=\"multipart/form-data\">"
        "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">"
        "<label>Import type <select name=\"type\"><option value=\"following\">Following list"
        "</option><option value=\"blocking\">Blocking list</option><option value=\"muting\">"
        "Muting list</option><option value=\"domain_blocking\">Domain blocking list</option>"
        "<option value=\"bookmarks\">Bookmarks</option><option value=\"lists\">Lists</option>"
        "</select></label><label><input type=\"radio\" name=\"mode\" value=\"merge\" checked>"
        " Merge</label><label><input type=\"radio\" name=\"mode\" value=\"overwrite\">"
        " Overwrite</label><label>Data <input type=\"file\" name=\"data\" accept=\".csv\">"
        "</label><button type=\"submit\">Upload</button></form>",
        eu_html_escape(req, s->csrf));
}

static void
on_imports(struct eu_req *req, PGresult *res, void *arg)
{
    const struct eu_web_session *s = arg;
    const char *body = eu_arena_sprintf(req->arena, "<h1>Import</h1>%s<h2>Recent imports</h2>%s",
                                        import_form(req, s), imports_table(req, res));
    eu_web_reply_page(req, 200, "Import", body);
}

static void
imports_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id)};
    eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_IMPORTS], 1, p, on_imports, (void *)s);
}

static void
imports_index(struct eu_req *req)
{
    eu_web_session_require(req, imports_signed_in, NULL);
}

static void
on_import_shown(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) != 1) {
        eu_web_reply_page(req, 404, "Not found",
                          "<h1>Not found</h1><p>The page you are looking for isn't here.</p>");
        return;
    }
    eu_web_reply_page(req, 200, "Import",
                      eu_arena_sprintf(req->arena, "<h1>Import</h1>%s", imports_table(req, res)));
}

static void
import_show_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        on_import_shown(req, NULL, NULL);
        return;
    }
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id), id};
    eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_IMPORT_SHOW], 2, p, on_import_shown, NULL);
}

static void
import_show(struct eu_req *req)
{
    eu_web_session_require(req, import_show_signed_in, NULL);
}

/* A refused upload: the form again with Mastodon's message. */
static void
reply_import_error(struct eu_req *req, const struct eu_web_session *s, int status, const char *msg)
{
    const char *body =
        eu_arena_sprintf(req->arena, "<h1>Import</h1><p class=\"error\" id=\"error\">%s</p>%s",
                         eu_html_escape(req, msg), s ? import_form(req, s) : "");
    eu_web_reply_page(req, status, "Import", body);
}

/* An upload on its way through the CPU pool and the database. */
struct upload {
    struct eu_req *req;
    const struct eu_web_session *s;
    const char *type, *filename, *domain;
    bool overwrite;
    const char *data; /* the file's bytes, owned by the request's params */
    size_t len;
    struct eu_takeout_parsed parsed;
};

static void
parse_work(void *arg)
{
    struct upload *u = arg;
    eu_takeout_parse_csv(u->type, u->domain, u->data, u->len, &u->parsed);
}

static void
on_import_created(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 1 && atol(PQgetvalue(res, 0, 1)) > 0) {
        char payload[64];
        snprintf(payload, sizeof payload, "{\"import_id\": \"%s\"}", PQgetvalue(res, 0, 0));
        eu_queue_enqueue(req->app, req->tenant, "bulk_import", payload, 0, NULL, NULL, NULL);
    }
    eu_req_add_header(req, "Location",
                      eu_arena_sprintf(req->arena, "/settings/imports/%s",
                                       PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : ""));
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
parse_done(void *arg)
{
    struct upload *u = arg;
    struct eu_req *req = u->req;
    eu_req_enter(req);
    if (u->parsed.error) {
        json_decref(u->parsed.rows);
        reply_import_error(req, u->s, 422, u->parsed.error);
        return;
    }
    char *rows = json_dumps(u->parsed.rows, JSON_COMPACT);
    json_decref(u->parsed.rows);
    if (!rows) {
        eu_req_reply_error(req, 500, "Internal server error");
        return;
    }
    const char *rows_a = eu_arena_strdup(req->arena, rows);
    free(rows);
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)u->s->account_id),
                       u->type,
                       u->overwrite ? "true" : "false",
                       u->filename,
                       u->parsed.likely_mismatched ? "true" : "false",
                       rows_a};
    eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_IMPORT_CREATE], 6, p, on_import_created, NULL);
}

static void
import_create_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        reply_import_error(req, s, err.status ? err.status : 400, err.message);
        return;
    }
    if (!eu_web_session_csrf_ok(s, params)) {
        reply_import_error(req, NULL, 422, "Can't verify CSRF token authenticity.");
        return;
    }
    const char *type = eu_param_str(params, "type");
    if (!type || !eu_takeout_import_type_ok(type)) {
        reply_import_error(req, s, 422, "Type is not included in the list");
        return;
    }
    const char *mode = eu_param_str(params, "mode");
    if (mode && strcmp(mode, "merge") != 0 && strcmp(mode, "overwrite") != 0) {
        reply_import_error(req, s, 422, "Mode is not included in the list");
        return;
    }
    json_t *file = json_object_get(params, "data");
    json_t *data = json_is_object(file) ? json_object_get(file, "data") : NULL;
    if (!json_is_string(data)) {
        reply_import_error(req, s, 422, "Data can't be blank");
        return;
    }
    if (json_string_length(data) > EU_TAKEOUT_IMPORT_MAX_BYTES) {
        reply_import_error(req, s, 422, "Data File is too large");
        return;
    }
    struct upload *u = eu_arena_calloc(req->arena, sizeof(*u));
    u->req = req;
    u->s = s;
    u->type = type;
    u->overwrite = mode && strcmp(mode, "overwrite") == 0;
    const char *fname = json_string_value(json_object_get(file, "filename"));
    u->filename = eu_arena_strndup(req->arena, fname ? fname : "", 255);
    u->domain = req->tenant->domain;
    u->data = json_string_value(data);
    u->len = json_string_length(data);
    eu_cpupool_submit_for(req->app->cpu, req->tenant->id, parse_work, parse_done, u);
}

static void
import_create(struct eu_req *req)
{
    eu_web_session_require(req, import_create_signed_in, NULL);
}

/* ------------------------------------------------------------ route table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST

/* Pages of the browser's session: no token, no CORS, as Mastodon's. */
const struct eu_route eu_takeout_routes[] = {
    {GET, "/settings/export", export_page, NULL, 0},
    {GET, "/settings/exports/follows.csv", export_follows, NULL, 0},
    {GET, "/settings/exports/blocks.csv", export_blocks, NULL, 0},
    {GET, "/settings/exports/mutes.csv", export_mutes, NULL, 0},
    {GET, "/settings/exports/lists.csv", export_lists, NULL, 0},
    {GET, "/settings/exports/domain_blocks.csv", export_domain_blocks, NULL, 0},
    {GET, "/settings/exports/bookmarks.csv", export_bookmarks, NULL, 0},
    {GET, "/settings/imports", imports_index, NULL, 0},
    {POST, "/settings/imports", import_create, NULL, EU_ROUTE_UPLOAD},
    {GET, "/settings/imports/:id", import_show, NULL, 0},
    {0},
};
