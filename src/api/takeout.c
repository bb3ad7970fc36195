/*
 * The settings pages where a signed-in browser takes its data out and
 * brings it in, as on Mastodon (docs/takeout.md):
 *
 *   GET  /settings/export             counts, and links to the CSV files
 *   GET  /settings/exports/NAME.csv   follows, blocks, mutes, lists,
 *                                     domain_blocks, bookmarks: Mastodon's
 *                                     Export columns, headers and order
 *   GET  /settings/imports            the account's imports with progress
 *   GET  /settings/imports/:id        one of them; an unconfirmed one shows
 *                                     what it will do, with Confirm and Cancel
 *   POST /settings/imports            multipart type, mode, data (a CSV)
 *   POST /settings/imports/:id/confirm  schedules an unconfirmed import
 *   POST /settings/imports/:id/cancel   drops an unconfirmed import
 *
 * Each CSV is made by one statement that writes the whole text in the
 * database (quoting as Ruby's CSV does), so the loop only copies bytes;
 * each file holds at most TAKEOUT_EXPORT_MAX_ROWS rows. An upload is
 * parsed on the CPU pool (takeout_import.c) and stored with its rows in
 * one statement as 'unconfirmed', as Mastodon 4.2 does: only its owner's
 * Confirm schedules the "bulk_import" job that applies it. An import
 * whose job the queue gave up on (a dead job) shows as 'failed' with the
 * rows it got through.
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
#include "web_text.h"
#include "websession_internal.h"

/* Rows in one exported file; the rest is left out (documented). */
#define TAKEOUT_EXPORT_MAX_ROWS "100000"
/* Imports the settings page lists. */
#define TAKEOUT_IMPORTS_PAGE "50"
/* Rows an unconfirmed import shows as a sample. */
#define TAKEOUT_IMPORT_SAMPLE "10"

/* An import's state as the pages show it: one whose job the queue gave up
 * on (dead, kept in jobs with its error) is 'failed', not under way. */
#define SHOWN_STATE                                                                                \
    "CASE WHEN b.state IN ('scheduled', 'in_progress') AND EXISTS (SELECT 1 FROM jobs j"           \
    " WHERE j.tenant_id = $1 AND j.state = 'dead' AND j.kind = 'bulk_import'"                      \
    " AND j.payload ->> 'import_id' = b.id::text) THEN 'failed' ELSE b.state END"
/* The columns both import statements return. */
#define IMPORT_COLS                                                                                \
    "b.id::text, b.type, " SHOWN_STATE ", b.overwrite, b.total_items, b.processed_items,"          \
    " b.imported_items, to_char(b.created_at AT TIME ZONE 'UTC',"                                  \
    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

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
    TAKEOUT_IMPORT_CONFIRM,
    TAKEOUT_IMPORT_CANCEL,
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
    [TAKEOUT_IMPORTS] = {"takeout.imports", "SELECT " IMPORT_COLS " FROM bulk_imports b"
                                            " WHERE b.tenant_id = $1 AND b.account_id = $2::bigint"
                                            " ORDER BY b.id DESC LIMIT " TAKEOUT_IMPORTS_PAGE},
    /* $3 the import, when it is $2's; then its file's name and the first
     * rows still waiting (a JSON array of row objects). */
    [TAKEOUT_IMPORT_SHOW] = {"takeout.import_show",
                             "SELECT " IMPORT_COLS ", b.original_filename,"
                             " (SELECT coalesce(json_agg(x.data ORDER BY x.id), '[]')::text"
                             " FROM (SELECT r.id, r.data FROM bulk_import_rows r"
                             " WHERE r.tenant_id = $1 AND r.bulk_import_id = b.id"
                             " ORDER BY r.id LIMIT " TAKEOUT_IMPORT_SAMPLE ") x)"
                             " FROM bulk_imports b WHERE b.tenant_id = $1"
                             " AND b.account_id = $2::bigint AND b.id = $3::bigint"},
    /* $2 the account, $3 the type, $4 overwrite, $5 the file's name, $6
     * likely mismatched, $7 the rows (a JSON array): the import and its
     * rows in one statement, unconfirmed (finished at once when there is
     * no row). */
    [TAKEOUT_IMPORT_CREATE] = {"takeout.import_create",
                               "WITH i AS (INSERT INTO bulk_imports (tenant_id, account_id, type,"
                               " overwrite, original_filename, likely_mismatched, total_items,"
                               " state, finished_at) VALUES ($1, $2::bigint, $3, $4::boolean, $5,"
                               " $6::boolean, jsonb_array_length($7::jsonb),"
                               " CASE WHEN jsonb_array_length($7::jsonb) = 0 THEN 'finished'"
                               " ELSE 'unconfirmed' END, CASE WHEN jsonb_array_length($7::jsonb)"
                               " = 0 THEN now() END) RETURNING id),"
                               " r AS (INSERT INTO bulk_import_rows (tenant_id, bulk_import_id,"
                               " data) SELECT $1, i.id, e.value FROM i,"
                               " jsonb_array_elements($7::jsonb) WITH ORDINALITY e"
                               " ORDER BY e.ordinality)"
                               " SELECT id::text FROM i"},
    /* $2's unconfirmed import $3 is scheduled. */
    [TAKEOUT_IMPORT_CONFIRM] =
        {"takeout.import_confirm",
         "UPDATE bulk_imports SET state = 'scheduled', updated_at = now()"
         " WHERE tenant_id = $1 AND account_id = $2::bigint"
         " AND id = $3::bigint AND state = 'unconfirmed' RETURNING id::text"},
    /* $2's unconfirmed import $3 goes, with its rows. */
    [TAKEOUT_IMPORT_CANCEL] = {"takeout.import_cancel",
                               "DELETE FROM bulk_imports WHERE tenant_id = $1"
                               " AND account_id = $2::bigint AND id = $3::bigint"
                               " AND state = 'unconfirmed' RETURNING id::text"},
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

/* The label of an import type, as on Mastodon's form. */
static const char *
type_label(struct eu_req *req, const char *type)
{
    static const char *const labels[][2] = {
        {"following", "Following list"}, {"blocking", "Blocking list"},
        {"muting", "Muting list"},       {"domain_blocking", "Domain blocking list"},
        {"bookmarks", "Bookmarks"},      {"lists", "Lists"},
    };
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
        if (strcmp(labels[i][0], type) == 0)
            return eu_web_t(req, labels[i][1]);
    return type;
}

/* An import's state in words. */
static const char *
state_label(struct eu_req *req, const char *state)
{
    if (strcmp(state, "unconfirmed") == 0)
        return eu_web_t(req, "Waiting for your confirmation");
    if (strcmp(state, "scheduled") == 0)
        return eu_web_t(req, "Scheduled");
    if (strcmp(state, "in_progress") == 0)
        return eu_web_t(req, "In progress");
    if (strcmp(state, "failed") == 0)
        return eu_web_t(req, "Failed");
    return eu_web_t(req, "Finished");
}

static const char *
mode_label(struct eu_req *req, bool overwrite)
{
    return overwrite ? eu_web_t(req, "Overwrite") : eu_web_t(req, "Merge");
}

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
        "</td><td>%s</td><td>%s</td><td>%ld/%ld</td><td>%ld</td><td>%s</td></tr>",
        PQgetvalue(res, i, 0), PQgetvalue(res, i, 2), total, processed, imported,
        processed - imported, PQgetvalue(res, i, 0), type_label(req, PQgetvalue(res, i, 1)),
        mode_label(req, strcmp(PQgetvalue(res, i, 3), "t") == 0),
        state_label(req, PQgetvalue(res, i, 2)), processed, total, processed - imported,
        PQgetvalue(res, i, 7));
}

static const char *
imports_table(struct eu_req *req, PGresult *res, const char *caption)
{
    const char *rows = "";
    for (int i = 0; i < PQntuples(res); i++)
        rows = eu_arena_sprintf(req->arena, "%s%s", rows, import_row_html(req, res, i));
    return eu_arena_sprintf(
        req->arena,
        "<table><caption>%s</caption><tr><th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
        "<th scope=\"col\">%s</th><th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
        "<th scope=\"col\">%s</th></tr>%s</table>",
        caption, eu_web_t(req, "Type"), eu_web_t(req, "Mode"), eu_web_t(req, "State"),
        eu_web_t(req, "Rows done"), eu_web_t(req, "Failures"), eu_web_t(req, "Created"), rows);
}

/* The upload form, with the session's CSRF token. */
static const char *
import_form(struct eu_req *req, const struct eu_web_session *s)
{
    static const char *const types[] = {"following",       "blocking",  "muting",
                                        "domain_blocking", "bookmarks", "lists"};
    const char *options = "";
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        options = eu_arena_sprintf(req->arena, "%s<option value=\"%s\">%s</option>", options,
                                   types[i], type_label(req, types[i]));
    return eu_arena_sprintf(
        req->arena,
        "<form method=\"post\" action=\"/settings/imports\" enctype=\"multipart/form-data\">"
        "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">"
        "<p><label for=\"import-type\">%s</label> <select id=\"import-type\" name=\"type\">%s"
        "</select></p><fieldset><legend>%s</legend><label><input type=\"radio\" name=\"mode\""
        " value=\"merge\" checked> %s</label> <label><input type=\"radio\" name=\"mode\""
        " value=\"overwrite\"> %s</label></fieldset><p><label for=\"import-data\">%s</label>"
        " <input type=\"file\" id=\"import-data\" name=\"data\" accept=\".csv\"></p>"
        "<p><button type=\"submit\">%s</button></p></form>",
        eu_html_escape(req, s->csrf), eu_web_t(req, "Import type"), options, eu_web_t(req, "Mode"),
        eu_web_t(req, "Merge"), eu_web_t(req, "Overwrite"), eu_web_t(req, "Data (a CSV file)"),
        eu_web_t(req, "Upload"));
}

static void
on_imports(struct eu_req *req, PGresult *res, void *arg)
{
    const struct eu_web_session *s = arg;
    const char *body =
        eu_arena_sprintf(req->arena, "<h1>%s</h1>%s<h2>%s</h2>%s", eu_web_t(req, "Import"),
                         import_form(req, s), eu_web_t(req, "Recent imports"),
                         imports_table(req, res, eu_web_t(req, "Your imports, newest first")));
    eu_web_reply_page(req, 200, eu_web_t(req, "Import"), body);
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
reply_not_found(struct eu_req *req)
{
    eu_web_reply_page(req, 404, eu_web_t(req, "Not found"),
                      eu_arena_sprintf(req->arena, "<h1>%s</h1><p>%s</p>",
                                       eu_web_t(req, "Not found"),
                                       eu_web_t(req, "The page you are looking for isn't here.")));
}

/* The first rows of an unconfirmed import (JSON text of row objects) as a
 * table with the type's columns. */
static const char *
sample_table(struct eu_req *req, const char *type, const char *rows_json)
{
    json_t *rows = json_loads(rows_json, 0, NULL);
    const char *head = "", *attrs[4], *h;
    int n = 0;
    for (; n < 4 && (h = eu_takeout_import_column(type, n, &attrs[n])); n++)
        head = eu_arena_sprintf(req->arena, "%s<th scope=\"col\">%s</th>", head,
                                eu_html_escape(req, eu_web_t(req, h)));
    const char *body = "";
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i);
        const char *cells = "";
        for (int c = 0; c < n; c++) {
            json_t *v = json_object_get(row, attrs[c]);
            const char *shown = "";
            if (json_is_string(v))
                shown = json_string_value(v);
            else if (json_is_boolean(v))
                shown = json_is_true(v) ? "true" : "false";
            for (size_t k = 0; json_is_array(v) && k < json_array_size(v); k++)
                shown = eu_arena_sprintf(req->arena, "%s%s%s", shown, k ? ", " : "",
                                         json_string_value(json_array_get(v, k)));
            cells =
                eu_arena_sprintf(req->arena, "%s<td>%s</td>", cells, eu_html_escape(req, shown));
        }
        body = eu_arena_sprintf(req->arena, "%s<tr>%s</tr>", body, cells);
    }
    json_decref(rows);
    return eu_arena_sprintf(req->arena, "<table><caption>%s</caption><tr>%s</tr>%s</table>",
                            eu_web_t(req, "The first rows of the file"), head, body);
}

/* A form that POSTs to action with the session's CSRF token: one button. */
static const char *
button_form(struct eu_req *req, const struct eu_web_session *s, const char *action,
            const char *label)
{
    return eu_arena_sprintf(req->arena,
                            "<form method=\"post\" action=\"%s\"><input type=\"hidden\""
                            " name=\"authenticity_token\" value=\"%s\"><button type=\"submit\">"
                            "%s</button></form>",
                            action, eu_html_escape(req, s->csrf), label);
}

/* An unconfirmed import: what it will do, and whether to. */
static void
reply_confirm_page(struct eu_req *req, const struct eu_web_session *s, PGresult *res)
{
    const char *id = PQgetvalue(res, 0, 0), *type = PQgetvalue(res, 0, 1);
    bool overwrite = strcmp(PQgetvalue(res, 0, 3), "t") == 0;
    const char *what =
        overwrite ? eu_web_t(req, "Overwrite replaces what you have with what the file lists: "
                                  "anything of this kind the file does not list is removed.")
                  : eu_web_t(req, "Merge adds what the file lists to what you have.");
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>%s</h1><p>%s</p><dl id=\"import-summary\" data-state=\"unconfirmed\"><dt>%s</dt>"
        "<dd id=\"import-type\">%s</dd><dt>%s</dt><dd id=\"import-mode\">%s</dd><dt>%s</dt>"
        "<dd id=\"import-rows\">%s</dd><dt>%s</dt><dd>%s</dd></dl><p>%s</p>%s%s%s",
        eu_web_t(req, "Confirm the import"),
        eu_web_t(req, "Nothing is imported until you confirm."), eu_web_t(req, "Type"),
        type_label(req, type), eu_web_t(req, "Mode"), mode_label(req, overwrite),
        eu_web_t(req, "Rows"), PQgetvalue(res, 0, 4), eu_web_t(req, "File"),
        eu_html_escape(req, PQgetvalue(res, 0, 8)), what,
        sample_table(req, type, PQgetvalue(res, 0, 9)),
        button_form(req, s, eu_arena_sprintf(req->arena, "/settings/imports/%s/confirm", id),
                    eu_web_t(req, "Confirm")),
        button_form(req, s, eu_arena_sprintf(req->arena, "/settings/imports/%s/cancel", id),
                    eu_web_t(req, "Cancel")));
    eu_web_reply_page(req, 200, eu_web_t(req, "Confirm the import"), body);
}

static void
on_import_shown(struct eu_req *req, PGresult *res, void *arg)
{
    const struct eu_web_session *s = arg;
    if (PQntuples(res) != 1) {
        reply_not_found(req);
        return;
    }
    const char *state = PQgetvalue(res, 0, 2);
    if (strcmp(state, "unconfirmed") == 0) {
        reply_confirm_page(req, s, res);
        return;
    }
    const char *note = "";
    if (strcmp(state, "failed") == 0)
        note = eu_arena_sprintf(req->arena, "<p id=\"import-failed\">%s</p>",
                                eu_web_t(req, "This import stopped before the end: the rows "
                                              "done are kept, the others were not imported."));
    eu_web_reply_page(req, 200, eu_web_t(req, "Import"),
                      eu_arena_sprintf(req->arena, "<h1>%s</h1>%s%s", eu_web_t(req, "Import"), note,
                                       imports_table(req, res, eu_web_t(req, "This import"))));
}

static void
import_show_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        reply_not_found(req);
        return;
    }
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id), id};
    eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_IMPORT_SHOW], 2, p, on_import_shown, (void *)s);
}

static void
import_show(struct eu_req *req)
{
    eu_web_session_require(req, import_show_signed_in, NULL);
}

static void
on_import_confirmed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) != 1) {
        reply_not_found(req); /* not the account's, or not unconfirmed */
        return;
    }
    const char *id = PQgetvalue(res, 0, 0);
    eu_queue_enqueue(req->app, req->tenant, "bulk_import",
                     eu_arena_sprintf(req->arena, "{\"import_id\": \"%s\"}", id), 0, NULL, NULL,
                     NULL);
    eu_req_add_header(req, "Location", eu_arena_sprintf(req->arena, "/settings/imports/%s", id));
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
on_import_cancelled(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) != 1) {
        reply_not_found(req);
        return;
    }
    eu_req_add_header(req, "Location", "/settings/imports");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

/* Confirm (arg non-NULL) or cancel an unconfirmed import: the form's CSRF
 * token must be the session's. */
static void
import_decide_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    if (!eu_web_session_csrf_ok(s, params)) {
        eu_web_reply_page(req, 422, eu_web_t(req, "Import"),
                          eu_arena_sprintf(req->arena, "<h1>%s</h1><p class=\"error\">%s</p>",
                                           eu_web_t(req, "Import"),
                                           eu_web_t(req, "Can't verify CSRF token authenticity.")));
        return;
    }
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        reply_not_found(req);
        return;
    }
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id), id};
    if (arg)
        eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_IMPORT_CONFIRM], 2, p, on_import_confirmed, NULL);
    else
        eu_req_stmt(req, &eu_takeout_sql[TAKEOUT_IMPORT_CANCEL], 2, p, on_import_cancelled, NULL);
}

static void
import_confirm(struct eu_req *req)
{
    static const char yes = 1;
    eu_web_session_require(req, import_decide_signed_in, (void *)&yes);
}

static void
import_cancel(struct eu_req *req)
{
    eu_web_session_require(req, import_decide_signed_in, NULL);
}

/* A refused upload: the form again with Mastodon's message. */
static void
reply_import_error(struct eu_req *req, const struct eu_web_session *s, int status, const char *msg)
{
    const char *body = eu_arena_sprintf(
        req->arena, "<h1>%s</h1><p class=\"error\" id=\"error\" role=\"alert\">%s</p>%s",
        eu_web_t(req, "Import"), eu_html_escape(req, eu_web_t(req, msg)),
        s ? import_form(req, s) : "");
    eu_web_reply_page(req, status, eu_web_t(req, "Import"), body);
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

/* Stored unconfirmed: its page asks for the confirmation. */
static void
on_import_created(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
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
    {POST, "/settings/imports/:id/confirm", import_confirm, NULL, 0},
    {POST, "/settings/imports/:id/cancel", import_cancel, NULL, 0},
    {0},
};
