/*
 * Imports of Mastodon 4.2's CSV files (docs/takeout.md): the parse an
 * upload goes through on the CPU pool, and the "bulk_import" job that
 * applies the stored rows.
 *
 * The job runs an import in turns of at most IMPORT_BATCH rows, then
 * queues its own continuation, so one big import does not hold its
 * tenant's default queue: other jobs run between its turns. It detaches
 * from the turn (eu_job_detach) because a row may wait on a remote
 * server (WebFinger, an actor or status fetched through src/ap/resolve.c).
 * Its first turn does what the whole file decides at once: overwrite
 * removes what the file does not list (with an Undo to remote accounts
 * unfollowed or unblocked), lists are made. Each row is then one account
 * or status found (locally or resolved) and one statement, or one domain
 * blocked through the API's own statement (so its follows and followers
 * there end as with POST /api/v1/domain_blocks), after which the row is
 * deleted and the counters moved in one statement: a row that fails
 * counts as processed, not imported, and the import is finished when
 * processed reaches total. A row done twice (a job that ran again)
 * changes nothing the second time.
 *
 * The job starts only for an import its owner confirmed (state
 * 'scheduled'; takeout.c shows an 'unconfirmed' one first).
 */
#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/apresolve.h"
#include "eunha/domainblock.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/notify.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "takeout_internal.h"

/* Rows one turn of the job takes. */
#define IMPORT_BATCH 25

/* ------------------------------------------------------------ the parse */

static const char *const TYPES[] = {"following",       "blocking",  "muting",
                                    "domain_blocking", "bookmarks", "lists"};

bool
eu_takeout_import_type_ok(const char *type)
{
    for (size_t i = 0; i < sizeof(TYPES) / sizeof(TYPES[0]); i++)
        if (strcmp(type, TYPES[i]) == 0)
            return true;
    return false;
}

/* The columns Mastodon reads for each type, and the attribute each
 * becomes; the first `required` of them make the default header row. */
struct column {
    const char *header, *attr;
};
struct type_columns {
    const char *type;
    int n, required;
    struct column c[4];
};
static const struct type_columns COLUMNS[] = {
    {"following",
     4,
     1,
     {{"Account address", "acct"},
      {"Show boosts", "show_reblogs"},
      {"Notify on new posts", "notify"},
      {"Languages", "languages"}}},
    {"blocking", 1, 1, {{"Account address", "acct"}}},
    {"muting", 2, 1, {{"Account address", "acct"}, {"Hide notifications", "hide_notifications"}}},
    {"domain_blocking", 1, 1, {{"#domain", "domain"}}},
    {"bookmarks", 1, 1, {{"#uri", "uri"}}},
    {"lists", 2, 2, {{"List name", "list_name"}, {"Account address", "acct"}}},
};

static const struct type_columns *
columns_of(const char *type)
{
    for (size_t i = 0; i < sizeof(COLUMNS) / sizeof(COLUMNS[0]); i++)
        if (strcmp(COLUMNS[i].type, type) == 0)
            return &COLUMNS[i];
    return NULL;
}

const char *
eu_takeout_import_column(const char *type, int i, const char **attr)
{
    const struct type_columns *tc = columns_of(type);
    if (!tc || i < 0 || i >= tc->n)
        return NULL;
    *attr = tc->c[i].attr;
    return tc->c[i].header;
}

/* Reads CSV records (RFC 4180, as Ruby's CSV reads them) into an array of
 * arrays of strings, blank lines skipped; NULL with *err on malformed
 * quoting, bytes that are not UTF-8, or more than max records. */
static json_t *
csv_records(const char *s, size_t len, size_t max, const char **err)
{
    json_t *out = json_array();
    json_t *rec = NULL;
    char *buf = eu_xmalloc(len + 1);
    size_t i = 0;
    if (len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* a byte-order mark */
    while (i < len) {
        /* A blank line. */
        if (!rec && (s[i] == '\n' || s[i] == '\r')) {
            i++;
            continue;
        }
        if (!rec)
            rec = json_array();
        size_t n = 0;
        if (s[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    *err = "Invalid CSV file. Error: Unclosed quoted field";
                    goto fail;
                }
                if (s[i] == '"') {
                    if (i + 1 < len && s[i + 1] == '"') {
                        buf[n++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                buf[n++] = s[i++];
            }
            if (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                *err = "Invalid CSV file. Error: Any value after quoted field isn't allowed";
                goto fail;
            }
        } else {
            while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                if (s[i] == '"') {
                    *err = "Invalid CSV file. Error: Illegal quoting";
                    goto fail;
                }
                buf[n++] = s[i++];
            }
        }
        json_t *v = json_stringn(buf, n);
        if (!v) {
            *err = "Invalid CSV file. Error: Invalid byte sequence in UTF-8";
            goto fail;
        }
        json_array_append_new(rec, v);
        if (i < len && s[i] == ',') {
            i++;
            if (i == len)
                json_array_append_new(rec, json_string(""));
            else
                continue;
        }
        /* The record ends here. */
        if (i < len && s[i] == '\r')
            i++;
        if (i < len && s[i] == '\n')
            i++;
        json_array_append_new(out, rec);
        rec = NULL;
        if (json_array_size(out) > max) {
            *err = "";
            goto fail;
        }
    }
    if (rec)
        json_array_append_new(out, rec);
    free(buf);
    return out;
fail:
    json_decref(rec);
    json_decref(out);
    free(buf);
    return NULL;
}

/* s without the spaces around it. */
static json_t *
stripped(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return json_stringn(s, n);
}

/* ActiveModel's Boolean cast of a value downcased: null for empty. */
static json_t *
boolean_of(const char *s)
{
    if (!*s)
        return json_null();
    static const char *const no[] = {"0", "f", "false", "off"};
    for (size_t i = 0; i < 4; i++)
        if (strcasecmp(s, no[i]) == 0)
            return json_false();
    return json_true();
}

/* A cell converted as Form::Import's converter does. */
static json_t *
convert(const char *attr, const char *cell, const char *local_domain)
{
    if (strcmp(attr, "show_reblogs") == 0 || strcmp(attr, "notify") == 0 ||
        strcmp(attr, "hide_notifications") == 0)
        return boolean_of(cell);
    if (strcmp(attr, "languages") == 0) {
        json_t *a = json_array();
        char *copy = eu_xstrdup(cell);
        char *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            json_t *v = stripped(t);
            if (v && json_string_length(v))
                json_array_append_new(a, v);
            else
                json_decref(v);
        }
        free(copy);
        if (json_array_size(a))
            return a;
        json_decref(a);
        return json_null();
    }
    json_t *v = stripped(cell);
    if (!v)
        return json_null();
    if (strcmp(attr, "acct") == 0) {
        const char *a = json_string_value(v);
        if (*a == '@')
            a++;
        /* BulkImportService matches local accounts without the domain. */
        size_t n = strlen(a), dl = strlen(local_domain);
        if (n > dl + 1 && a[n - dl - 1] == '@' && strcasecmp(a + n - dl, local_domain) == 0)
            n -= dl + 1;
        json_t *w = json_stringn(a, n);
        json_decref(v);
        return w;
    }
    if (strcmp(attr, "domain") == 0) {
        char *d = eu_xstrdup(json_string_value(v));
        for (char *p = d; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        json_decref(v);
        v = json_string(d);
        free(d);
    }
    return v;
}

void
eu_takeout_parse_csv(const char *type, const char *local_domain, const char *data, size_t len,
                     struct eu_takeout_parsed *out)
{
    memset(out, 0, sizeof(*out));
    const struct type_columns *tc = columns_of(type);
    if (!tc) {
        out->error = "Type is not included in the list";
        return;
    }
    const char *err = NULL;
    json_t *recs = csv_records(data, len, EU_TAKEOUT_IMPORT_MAX_ROWS + 1, &err);
    if (!recs) {
        out->error = *err ? err : "Data contains more than 20000 rows";
        return;
    }
    if (json_array_size(recs) == 0) {
        json_decref(recs);
        out->error = "Empty CSV file";
        return;
    }
    /* The header row, when the file starts with one Mastodon writes. */
    static const char *const known_first[] = {"Account address", "#domain", "#uri", "List name"};
    json_t *first = json_array_get(recs, 0);
    const char *h0 = json_string_value(json_array_get(first, 0));
    bool has_header = false;
    for (size_t i = 0; i < 4 && h0; i++)
        has_header |= strcmp(h0, known_first[i]) == 0;
    /* Which cell holds each of the type's columns (-1: none). */
    int at[4] = {-1, -1, -1, -1};
    if (has_header) {
        for (int c = 0; c < tc->n; c++)
            for (size_t k = 0; k < json_array_size(first); k++)
                if (strcmp(json_string_value(json_array_get(first, k)), tc->c[c].header) == 0) {
                    at[c] = (int)k;
                    break;
                }
        for (size_t k = 0; k < json_array_size(first); k++) {
            const char *h = json_string_value(json_array_get(first, k));
            const char *guess = NULL;
            if (strcmp(h, "Hide notifications") == 0)
                guess = "muting";
            else if (strcmp(h, "Show boosts") == 0 || strcmp(h, "Notify on new posts") == 0 ||
                     strcmp(h, "Languages") == 0)
                guess = "following";
            if (guess && strcmp(guess, type) != 0)
                out->likely_mismatched = true;
        }
    } else {
        for (int c = 0; c < tc->required; c++)
            at[c] = c;
    }
    for (int c = 0; c < tc->required; c++)
        if (at[c] < 0) {
            json_decref(recs);
            out->error = "Incompatible with the selected import type";
            return;
        }
    size_t start = has_header ? 1 : 0;
    if (json_array_size(recs) - start > EU_TAKEOUT_IMPORT_MAX_ROWS) {
        json_decref(recs);
        out->error = "Data contains more than 20000 rows";
        return;
    }
    out->rows = json_array();
    for (size_t r = start; r < json_array_size(recs); r++) {
        json_t *rec = json_array_get(recs, r), *row = json_object();
        for (int c = 0; c < tc->n; c++) {
            if (at[c] < 0)
                continue;
            json_t *cell = json_array_get(rec, (size_t)at[c]);
            json_object_set_new(row, tc->c[c].attr,
                                cell ? convert(tc->c[c].attr, json_string_value(cell), local_domain)
                                     : json_null());
        }
        json_array_append_new(out->rows, row);
    }
    json_decref(recs);
}

/* ------------------------------------------------------------ the job */

/* The local-or-remote acct's account: $2 username, $3 domain ("" local). */
#define FIND_ACCOUNT_SQL                                                                           \
    "SELECT a.id::text FROM accounts a WHERE a.tenant_id = $1"                                     \
    " AND lower(a.username) = lower($2) AND coalesce(lower(a.domain), '') = lower($3)"

/* An account's acct as the file names it (local ones bare). */
#define ACCT_OF(a)                                                                                 \
    "lower(CASE WHEN " a ".domain IS NULL THEN " a ".username ELSE " a ".username || '@' || " a    \
    ".domain END)"
/* The import's rows' values of key k, lowercased. */
#define LISTED(k)                                                                                  \
    "(SELECT lower(r.data ->> '" k "') FROM bulk_import_rows r WHERE r.tenant_id = $1"             \
    " AND r.bulk_import_id = $2::bigint AND r.data ->> '" k "' IS NOT NULL)"
/* Marks the import begun. */
#define BEGUN                                                                                      \
    "st AS (UPDATE bulk_imports SET state = 'in_progress', updated_at = now()"                     \
    " WHERE tenant_id = $1 AND id = $2::bigint AND state = 'scheduled')"

enum {
    IMPORT_LOAD,
    IMPORT_START_FOLLOWING,
    IMPORT_START_BLOCKING,
    IMPORT_START_MUTING,
    IMPORT_START_DOMAIN_BLOCKING,
    IMPORT_START_BOOKMARKS,
    IMPORT_START_LISTS,
    IMPORT_BATCH_ROWS,
    IMPORT_FIND_ACCOUNT,
    IMPORT_FIND_STATUS,
    IMPORT_FOLLOW,
    IMPORT_BLOCK,
    IMPORT_MUTE,
    IMPORT_LIST_ADD,
    IMPORT_BOOKMARK,
    IMPORT_ROW_DONE,
};

const struct eu_sql eu_takeout_import_sql[] = {
    [IMPORT_LOAD] = {"takeout_import.load",
                     "SELECT account_id::text, type, overwrite, state FROM bulk_imports"
                     " WHERE tenant_id = $1 AND id = $2::bigint"},
    /* $2 the import, $3 its account, $4 overwrite. Each start returns the
     * remote accounts an Undo goes to. */
    [IMPORT_START_FOLLOWING] =
        {"takeout_import.start_following",
         "WITH " BEGUN ", gone AS (SELECT f.target_account_id AS id, a.domain IS NOT NULL AS remote"
         " FROM follows f JOIN accounts a ON a.tenant_id = $1 AND a.id = f.target_account_id"
         " WHERE f.tenant_id = $1 AND f.account_id = $3::bigint AND $4::boolean"
         " AND " ACCT_OF("a") " NOT IN " LISTED(
             "acct") "),"
                     " df AS (DELETE FROM follows f USING gone g WHERE f.tenant_id = $1"
                     " AND f.account_id = $3::bigint AND f.target_account_id = g.id),"
                     " dl AS (DELETE FROM list_accounts la USING lists l, gone g WHERE "
                     "la.tenant_id = $1"
                     " AND l.tenant_id = $1 AND la.list_id = l.id AND l.account_id = $3::bigint"
                     " AND la.account_id = g.id)"
                     " SELECT id::text FROM gone WHERE remote"},
    [IMPORT_START_BLOCKING] =
        {"takeout_import.start_blocking",
         "WITH " BEGUN ", gone AS (DELETE FROM blocks b USING accounts a WHERE b.tenant_id = $1"
         " AND b.account_id = $3::bigint AND $4::boolean AND a.tenant_id = $1"
         " AND a.id = b.target_account_id AND " ACCT_OF("a") " NOT IN " LISTED(
             "acct") " RETURNING a.id, a.domain IS NOT NULL AS remote)"
                     " SELECT id::text FROM gone WHERE remote"},
    [IMPORT_START_MUTING] =
        {"takeout_import.start_muting",
         "WITH " BEGUN ", gone AS (DELETE FROM mutes m USING accounts a WHERE m.tenant_id = $1"
         " AND m.account_id = $3::bigint AND $4::boolean AND a.tenant_id = $1"
         " AND a.id = m.target_account_id AND " ACCT_OF("a") " NOT IN " LISTED(
             "acct") " RETURNING a.id)"
                     " SELECT id::text FROM gone WHERE false"},
    /* Overwrite lifts the blocks of domains the file does not list; each
     * listed domain is then a row, blocked as the API blocks it. */
    [IMPORT_START_DOMAIN_BLOCKING] =
        {"takeout_import.start_domain_blocking",
         "WITH " BEGUN ", d AS (DELETE FROM account_domain_blocks WHERE tenant_id = $1"
         " AND account_id = $3::bigint AND $4::boolean AND domain NOT IN " LISTED(
             "domain") ")"
                       " SELECT NULL::text WHERE false"},
    [IMPORT_START_BOOKMARKS] =
        {"takeout_import.start_bookmarks",
         "WITH " BEGUN ", d AS (DELETE FROM bookmarks b USING statuses s, accounts sa"
         " WHERE b.tenant_id = $1 AND b.account_id = $3::bigint AND $4::boolean"
         " AND s.tenant_id = $1 AND s.id = b.status_id AND sa.tenant_id = $1"
         " AND sa.id = s.account_id AND lower(coalesce(s.uri, $5 || '/users/' || sa.username"
         " || '/statuses/' || s.id)) NOT IN " LISTED("uri") ")"
                                                            " SELECT NULL::text WHERE false"},
    /* Overwrite drops the lists the file does not name and empties the
     * others; then every list it names exists. */
    [IMPORT_START_LISTS] =
        {"takeout_import.start_lists",
         "WITH " BEGUN ", dl AS (DELETE FROM lists WHERE tenant_id = $1"
         " AND account_id = $3::bigint AND $4::boolean AND lower(title) NOT IN " LISTED(
             "list_name") "),"
                          " dm AS (DELETE FROM list_accounts la USING lists l WHERE la.tenant_id = "
                          "$1"
                          " AND l.tenant_id = $1 AND la.list_id = l.id AND l.account_id = "
                          "$3::bigint"
                          " AND $4::boolean),"
                          " ins AS (INSERT INTO lists (tenant_id, account_id, title)"
                          " SELECT $1, $3::bigint, t.title FROM (SELECT DISTINCT r.data ->> "
                          "'list_name' AS title"
                          " FROM bulk_import_rows r WHERE r.tenant_id = $1 AND r.bulk_import_id = "
                          "$2::bigint"
                          " AND coalesce(r.data ->> 'list_name', '') <> '') t WHERE NOT EXISTS "
                          "(SELECT 1"
                          " FROM lists l WHERE l.tenant_id = $1 AND l.account_id = $3::bigint"
                          " AND l.title = t.title))"
                          " SELECT NULL::text WHERE false"},
    [IMPORT_BATCH_ROWS] = {"takeout_import.batch",
                           "SELECT id::text, data::text FROM bulk_import_rows WHERE tenant_id = $1"
                           " AND bulk_import_id = $2::bigint ORDER BY id LIMIT 25"},
    [IMPORT_FIND_ACCOUNT] = {"takeout_import.find_account", FIND_ACCOUNT_SQL},
    /* $2 the URI; $3 the id a local status URI names (0 for none). */
    [IMPORT_FIND_STATUS] = {"takeout_import.find_status",
                            "SELECT s.id::text FROM statuses s WHERE s.tenant_id = $1"
                            " AND s.uri = $2 UNION ALL SELECT s.id::text FROM statuses s"
                            " WHERE s.tenant_id = $1 AND s.id = $3::bigint AND s.uri IS NULL"
                            " LIMIT 1"},
    /* $2 follows $3 ($4 show_reblogs, $5 notify, $6 languages as JSON):
     * a follow of an unlocked local account, else a request (a remote
     * account answers with Accept); options only when already followed.
     * Refused for oneself, a suspended account or a block either way or
     * of its domain. Returns whether it was allowed, a follow made, a
     * request made, and whether the target is remote. */
    [IMPORT_FOLLOW] =
        {"takeout_import.follow",
         "WITH t AS (SELECT a.id, a.locked, a.domain IS NOT NULL AS remote FROM accounts a"
         " WHERE a.tenant_id = $1 AND a.id = $3::bigint AND a.id <> $2::bigint"
         " AND a.suspended_at IS NULL AND NOT EXISTS (SELECT 1 FROM blocks b"
         " WHERE b.tenant_id = $1 AND ((b.account_id = $2::bigint AND b.target_account_id = a.id)"
         " OR (b.account_id = a.id AND b.target_account_id = $2::bigint)))"
         " AND NOT (a.domain IS NOT NULL AND EXISTS (SELECT 1 FROM account_domain_blocks d"
         " WHERE d.tenant_id = $1 AND d.account_id = $2::bigint AND d.domain = a.domain))),"
         " already AS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
         " AND f.account_id = $2::bigint AND f.target_account_id = $3::bigint),"
         " upd AS (UPDATE follows SET show_reblogs = coalesce($4::boolean, show_reblogs),"
         " notify = coalesce($5::boolean, notify), languages = CASE WHEN $6::json IS NULL"
         " THEN languages ELSE nullif(ARRAY(SELECT json_array_elements_text($6::json)), '{}')"
         " END WHERE tenant_id = $1 AND account_id = $2::bigint"
         " AND target_account_id = $3::bigint AND EXISTS (SELECT 1 FROM t)),"
         " fol AS (INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs,"
         " notify, languages) SELECT $1, $2::bigint, t.id, coalesce($4::boolean, true),"
         " coalesce($5::boolean, false), nullif(ARRAY(SELECT"
         " json_array_elements_text(coalesce($6::json, '[]'))), '{}') FROM t"
         " WHERE NOT t.locked AND NOT t.remote AND NOT EXISTS (SELECT 1 FROM already)"
         " ON CONFLICT DO NOTHING RETURNING 1),"
         " req AS (INSERT INTO follow_requests (tenant_id, account_id, target_account_id,"
         " show_reblogs, notify, languages) SELECT $1, $2::bigint, t.id,"
         " coalesce($4::boolean, true), coalesce($5::boolean, false), nullif(ARRAY(SELECT"
         " json_array_elements_text(coalesce($6::json, '[]'))), '{}') FROM t"
         " WHERE (t.locked OR t.remote) AND NOT EXISTS (SELECT 1 FROM already)"
         " ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING RETURNING 1)"
         " SELECT EXISTS (SELECT 1 FROM t), EXISTS (SELECT 1 FROM fol),"
         " EXISTS (SELECT 1 FROM req), coalesce((SELECT remote FROM t), false)"},
    /* $2 blocks $3: every follow between them ends, as the API's block. */
    [IMPORT_BLOCK] =
        {"takeout_import.block",
         "WITH t AS (SELECT a.id, a.domain IS NOT NULL AS remote FROM accounts a"
         " WHERE a.tenant_id = $1 AND a.id = $3::bigint AND a.id <> $2::bigint),"
         " df AS (DELETE FROM follows WHERE tenant_id = $1 AND EXISTS (SELECT 1 FROM t)"
         " AND ((account_id = $2::bigint AND target_account_id = $3::bigint)"
         " OR (account_id = $3::bigint AND target_account_id = $2::bigint))),"
         " dr AS (DELETE FROM follow_requests WHERE tenant_id = $1 AND EXISTS (SELECT 1 FROM t)"
         " AND ((account_id = $2::bigint AND target_account_id = $3::bigint)"
         " OR (account_id = $3::bigint AND target_account_id = $2::bigint))),"
         " dl AS (DELETE FROM list_accounts la USING lists l WHERE la.tenant_id = $1"
         " AND l.tenant_id = $1 AND la.list_id = l.id AND EXISTS (SELECT 1 FROM t)"
         " AND ((l.account_id = $2::bigint AND la.account_id = $3::bigint)"
         " OR (l.account_id = $3::bigint AND la.account_id = $2::bigint))),"
         " ins AS (INSERT INTO blocks (tenant_id, account_id, target_account_id)"
         " SELECT $1, $2::bigint, t.id FROM t ON CONFLICT DO NOTHING RETURNING 1)"
         " SELECT EXISTS (SELECT 1 FROM t), false, EXISTS (SELECT 1 FROM ins),"
         " coalesce((SELECT remote FROM t), false)"},
    /* $2 mutes $3, hiding notifications unless $4 says not. */
    [IMPORT_MUTE] = {"takeout_import.mute",
                     "WITH t AS (SELECT a.id FROM accounts a WHERE a.tenant_id = $1"
                     " AND a.id = $3::bigint AND a.id <> $2::bigint),"
                     " ins AS (INSERT INTO mutes (tenant_id, account_id, target_account_id,"
                     " hide_notifications) SELECT $1, $2::bigint, t.id,"
                     " coalesce($4::boolean, true) FROM t ON CONFLICT (tenant_id, account_id,"
                     " target_account_id) DO UPDATE SET hide_notifications ="
                     " EXCLUDED.hide_notifications RETURNING 1)"
                     " SELECT EXISTS (SELECT 1 FROM t), false, false, false"},
    /* $2's list titled $4 gets $3, when $2 follows or asked to follow it. */
    [IMPORT_LIST_ADD] = {"takeout_import.list_add",
                         "INSERT INTO list_accounts (tenant_id, list_id, account_id)"
                         " SELECT $1, l.id, $3::bigint FROM lists l WHERE l.tenant_id = $1"
                         " AND l.account_id = $2::bigint AND l.title = $4"
                         " AND (EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
                         " AND f.account_id = $2::bigint AND f.target_account_id = $3::bigint)"
                         " OR EXISTS (SELECT 1 FROM follow_requests r WHERE r.tenant_id = $1"
                         " AND r.account_id = $2::bigint AND r.target_account_id = $3::bigint))"
                         " ON CONFLICT DO NOTHING RETURNING true"},
    /* $2 bookmarks status $3, one it may see (public, unlisted or its own). */
    [IMPORT_BOOKMARK] = {"takeout_import.bookmark",
                         "WITH s AS (SELECT s.id FROM statuses s WHERE s.tenant_id = $1"
                         " AND s.id = $3::bigint AND s.deleted_at IS NULL"
                         " AND (s.visibility IN (0, 1) OR s.account_id = $2::bigint)),"
                         " ins AS (INSERT INTO bookmarks (tenant_id, account_id, status_id)"
                         " SELECT $1, $2::bigint, s.id FROM s ON CONFLICT DO NOTHING)"
                         " SELECT EXISTS (SELECT 1 FROM s)"},
    /* $2 the row, $3 its import, $4 1 when imported: the row goes and the
     * counters move, once. */
    [IMPORT_ROW_DONE] = {"takeout_import.row_done",
                         "WITH d AS (DELETE FROM bulk_import_rows WHERE tenant_id = $1"
                         " AND id = $2::bigint RETURNING 1)"
                         " UPDATE bulk_imports SET processed_items = processed_items + 1,"
                         " imported_items = imported_items + $4::int, updated_at = now(),"
                         " state = CASE WHEN processed_items + 1 >= total_items THEN 'finished'"
                         " ELSE state END, finished_at = CASE WHEN processed_items + 1"
                         " >= total_items THEN now() END"
                         " WHERE tenant_id = $1 AND id = $3::bigint AND EXISTS (SELECT 1 FROM d)"},
    {0},
};

struct run {
    struct eu_job *job;
    struct eu_app *app;
    struct eu_tenant *t;
    char import_id[24], account_id[24];
    int64_t me;
    char type[24];
    bool overwrite;
    char *base;      /* "https://host" */
    json_t *rows;    /* [[id, data], ...] of this turn */
    size_t at;       /* the row under way */
    json_t *row;     /* its data (borrowed from rows) */
    char target[24]; /* the account or status it names */
};

static void
run_free(struct run *r)
{
    json_decref(r->row);
    json_decref(r->rows);
    free(r->base);
    free(r);
}

static void
finish(struct run *r, const char *error)
{
    eu_job_done(r->job, error);
    run_free(r);
}

static void next_row(struct run *r);

static void
on_row_done(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    (void)res;
    if (st != EU_DB_OK) {
        finish(r, "bulk import: recording a row failed");
        return;
    }
    r->at++;
    next_row(r);
}

/* The row under way is done: imported or counted as failed. */
static void
row_done(struct run *r, bool imported)
{
    const char *p[] = {json_string_value(json_array_get(json_array_get(r->rows, r->at), 0)),
                       r->import_id, imported ? "1" : "0"};
    eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_ROW_DONE], 3, p, on_row_done, r);
}

static const char *
row_str(const struct run *r, const char *key)
{
    return json_string_value(json_object_get(r->row, key));
}

static const char *
bool_param(json_t *v)
{
    return json_is_true(v) ? "true" : json_is_false(v) ? "false" : NULL;
}

static void
on_list_added(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    row_done(r, st == EU_DB_OK && PQntuples(res) > 0);
}

/* After the account's statement: (allowed, followed, requested, remote). */
static void
on_applied(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
        row_done(r, false);
        return;
    }
    bool followed = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
    bool made = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
    bool remote = strcmp(PQgetvalue(res, 0, 3), "t") == 0;
    int64_t target = strtoll(r->target, NULL, 10);
    bool blocking = strcmp(r->type, "blocking") == 0;
    if (strcmp(r->type, "following") == 0 || strcmp(r->type, "lists") == 0) {
        if (followed) {
            eu_notify(r->app->registry, r->t, target, r->me, "follow", 0);
            eu_feed_home_invalidate(r->app, r->t, r->me);
        } else if (made && remote) {
            eu_ap_outbox_account(r->app, r->t, r->me, r->target, EU_AP_FOLLOW, NULL);
        } else if (made) {
            eu_notify(r->app->registry, r->t, target, r->me, "follow_request", 0);
        }
    } else if (blocking && made) {
        eu_feed_home_invalidate(r->app, r->t, r->me);
        eu_feed_home_invalidate(r->app, r->t, target);
        if (remote)
            eu_ap_outbox_account(r->app, r->t, r->me, r->target, EU_AP_BLOCK, NULL);
    } else if (strcmp(r->type, "muting") == 0) {
        eu_feed_home_invalidate(r->app, r->t, r->me);
    }
    if (strcmp(r->type, "lists") == 0) {
        const char *p[] = {r->account_id, r->target, row_str(r, "list_name")};
        if (!p[2]) {
            row_done(r, false);
            return;
        }
        eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_LIST_ADD], 3, p, on_list_added, r);
        return;
    }
    row_done(r, true);
}

/* The row's account is known: apply the type's statement to it. */
static void
apply_to_account(struct run *r, const char *id)
{
    snprintf(r->target, sizeof r->target, "%s", id);
    if (strcmp(r->type, "following") == 0 || strcmp(r->type, "lists") == 0) {
        json_t *langs = json_object_get(r->row, "languages");
        char *lj = json_is_array(langs) ? json_dumps(langs, JSON_COMPACT) : NULL;
        const char *p[] = {r->account_id, r->target,
                           bool_param(json_object_get(r->row, "show_reblogs")),
                           bool_param(json_object_get(r->row, "notify")), lj};
        eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_FOLLOW], 5, p, on_applied, r);
        free(lj);
    } else if (strcmp(r->type, "blocking") == 0) {
        const char *p[] = {r->account_id, r->target};
        eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_BLOCK], 2, p, on_applied, r);
    } else {
        const char *p[] = {r->account_id, r->target,
                           bool_param(json_object_get(r->row, "hide_notifications"))};
        eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_MUTE], 3, p, on_applied, r);
    }
}

static void
on_resolved(const struct eu_ap_resolved *res, const struct eu_error *err, void *arg)
{
    struct run *r = arg;
    if (err || !res || !res->account_id) {
        row_done(r, false);
        return;
    }
    apply_to_account(r, res->account_id);
}

static void
on_account_found(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        row_done(r, false);
        return;
    }
    if (PQntuples(res) == 1) {
        apply_to_account(r, PQgetvalue(res, 0, 0));
        return;
    }
    const char *acct = row_str(r, "acct");
    if (!strchr(acct, '@')) {
        row_done(r, false); /* no such local account */
        return;
    }
    /* A remote account this tenant does not know yet. */
    eu_ap_webfinger_lookup(r->app, r->t, acct, on_resolved, r);
}

/* Whether s is a username or a domain as an acct may hold them. */
static bool
acct_part_ok(const char *s, size_t n, bool domain)
{
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '_' && !(domain && (c == '.' || c == '-' || c == ':')) &&
            !(!domain && (c == '.' || c == '-')))
            return false;
    }
    return true;
}

static void
row_account(struct run *r)
{
    const char *acct = row_str(r, "acct");
    if (!acct) {
        row_done(r, false);
        return;
    }
    const char *at = strchr(acct, '@');
    size_t ul = at ? (size_t)(at - acct) : strlen(acct);
    const char *domain = at ? at + 1 : "";
    if (!acct_part_ok(acct, ul, false) || (at && !acct_part_ok(domain, strlen(domain), true)) ||
        strchr(domain, '@')) {
        row_done(r, false);
        return;
    }
    if (strcasecmp(domain, r->t->domain) == 0)
        domain = "";
    char user[256];
    snprintf(user, sizeof user, "%.*s", (int)ul, acct);
    const char *p[] = {user, domain};
    eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_FIND_ACCOUNT], 2, p, on_account_found, r);
}

static void
on_bookmarked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    row_done(r, st == EU_DB_OK && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0);
}

static void
bookmark(struct run *r, const char *status_id)
{
    const char *p[] = {r->account_id, status_id};
    eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_BOOKMARK], 2, p, on_bookmarked, r);
}

static void
on_status_resolved(const char *id, const struct eu_error *err, void *arg)
{
    struct run *r = arg;
    if (err || !id) {
        row_done(r, false);
        return;
    }
    bookmark(r, id);
}

/* The id a local status URI (BASE/users/NAME/statuses/ID) names, or "0". */
static const char *
local_status_id(const struct run *r, const char *uri, char out[24])
{
    size_t bl = strlen(r->base);
    snprintf(out, 24, "0");
    if (strncmp(uri, r->base, bl) != 0 || strncmp(uri + bl, "/users/", 7) != 0)
        return out;
    const char *s = strstr(uri + bl + 7, "/statuses/");
    if (!s)
        return out;
    s += strlen("/statuses/");
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 18 || s[n])
        return out;
    snprintf(out, 24, "%s", s);
    return out;
}

static void
on_status_found(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        row_done(r, false);
        return;
    }
    if (PQntuples(res) > 0) {
        bookmark(r, PQgetvalue(res, 0, 0));
        return;
    }
    const char *uri = row_str(r, "uri");
    if (strncmp(uri, r->base, strlen(r->base)) == 0 ||
        (strncmp(uri, "https://", 8) != 0 && strncmp(uri, "http://", 7) != 0)) {
        row_done(r, false); /* a local status that is not there, or no URL */
        return;
    }
    eu_ap_resolve_status(r->app, r->t, uri, on_status_resolved, r);
}

static void
row_status(struct run *r)
{
    const char *uri = row_str(r, "uri");
    if (!uri || !*uri) {
        row_done(r, false);
        return;
    }
    char id[24];
    const char *p[] = {uri, local_status_id(r, uri, id)};
    eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_FIND_STATUS], 2, p, on_status_found, r);
}

static void
on_domain_blocked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        row_done(r, false); /* the cap on blocks, say */
        return;
    }
    eu_domain_blocks_after_create(r->app, r->t, r->me, res);
    row_done(r, true);
}

/* A domain row: blocked as POST /api/v1/domain_blocks blocks it, so the
 * follows and followers there end as they would through the API. */
static void
row_domain(struct run *r)
{
    const char *in = row_str(r, "domain");
    char domain[EU_DOMAIN_BLOCK_MAX + 1];
    if (!in || eu_domain_block_normalize(in, domain, sizeof domain) < 0) {
        row_done(r, false);
        return;
    }
    const char *p[] = {r->account_id, domain};
    eu_job_stmt(r->job, eu_domain_blocks_create_sql, 2, p, on_domain_blocked, r);
}

static void
next_row(struct run *r)
{
    if (r->at >= json_array_size(r->rows)) {
        /* A full turn: more may wait, in a turn of their own. */
        if (json_array_size(r->rows) == IMPORT_BATCH) {
            char payload[64];
            snprintf(payload, sizeof payload, "{\"import_id\": \"%s\"}", r->import_id);
            eu_queue_enqueue(r->app, r->t, "bulk_import", payload, 0, NULL, NULL, NULL);
        }
        finish(r, NULL);
        return;
    }
    json_t *pair = json_array_get(r->rows, r->at);
    json_decref(r->row);
    r->row = json_loads(json_string_value(json_array_get(pair, 1)), 0, NULL);
    if (!json_is_object(r->row)) {
        row_done(r, false);
        return;
    }
    if (strcmp(r->type, "bookmarks") == 0)
        row_status(r);
    else if (strcmp(r->type, "domain_blocking") == 0)
        row_domain(r);
    else
        row_account(r);
}

static void
on_batch(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        finish(r, "bulk import: reading rows failed");
        return;
    }
    r->rows = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(r->rows,
                              json_pack("[s, s]", PQgetvalue(res, i, 0), PQgetvalue(res, i, 1)));
    r->at = 0;
    next_row(r);
}

static void
take_batch(struct run *r)
{
    const char *p[] = {r->import_id};
    eu_job_stmt(r->job, &eu_takeout_import_sql[IMPORT_BATCH_ROWS], 1, p, on_batch, r);
}

static void
on_started(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        finish(r, "bulk import: starting failed");
        return;
    }
    /* Remote accounts the overwrite unfollowed or unblocked hear of it. */
    enum eu_ap_outbox_kind undo = strcmp(r->type, "blocking") == 0 ? EU_AP_UNBLOCK : EU_AP_UNFOLLOW;
    for (int i = 0; i < PQntuples(res); i++)
        if (!PQgetisnull(res, i, 0))
            eu_ap_outbox_account(r->app, r->t, r->me, PQgetvalue(res, i, 0), undo, NULL);
    if (r->overwrite)
        eu_feed_home_invalidate(r->app, r->t, r->me);
    take_batch(r);
}

static void
on_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        finish(r, "bulk import: loading failed");
        return;
    }
    if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 3), "finished") == 0 ||
        strcmp(PQgetvalue(res, 0, 3), "unconfirmed") == 0) {
        finish(r, NULL); /* gone with its account, done, or not confirmed */
        return;
    }
    snprintf(r->account_id, sizeof r->account_id, "%s", PQgetvalue(res, 0, 0));
    r->me = strtoll(r->account_id, NULL, 10);
    snprintf(r->type, sizeof r->type, "%s", PQgetvalue(res, 0, 1));
    r->overwrite = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
    if (strcmp(PQgetvalue(res, 0, 3), "scheduled") != 0) {
        take_batch(r);
        return;
    }
    static const struct {
        const char *type;
        int stmt;
    } starts[] = {
        {"following", IMPORT_START_FOLLOWING}, {"blocking", IMPORT_START_BLOCKING},
        {"muting", IMPORT_START_MUTING},       {"domain_blocking", IMPORT_START_DOMAIN_BLOCKING},
        {"bookmarks", IMPORT_START_BOOKMARKS}, {"lists", IMPORT_START_LISTS},
    };
    for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
        if (strcmp(starts[i].type, r->type) != 0)
            continue;
        const char *p[] = {r->import_id, r->account_id, r->overwrite ? "true" : "false", r->base};
        int n = starts[i].stmt == IMPORT_START_BOOKMARKS ? 4 : 3;
        eu_job_stmt(r->job, &eu_takeout_import_sql[starts[i].stmt], n, p, on_started, r);
        return;
    }
    finish(r, "bulk import: unknown type");
}

void
eu_takeout_import_run(struct eu_job *job)
{
    const char *id = json_string_value(json_object_get(eu_job_payload(job), "import_id"));
    if (!id || strspn(id, "0123456789") != strlen(id) || !*id || strlen(id) > 18) {
        eu_job_done(job, NULL); /* nothing this version can do */
        return;
    }
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    r->app = eu_job_app(job);
    r->t = eu_job_tenant(job);
    snprintf(r->import_id, sizeof r->import_id, "%s", id);
    r->base = eu_xasprintf("%s://%s", r->app->cfg->scheme, r->t->domain);
    /* Rows may wait on remote servers: let the tenant's other jobs on. */
    eu_job_detach(job);
    const char *p[] = {r->import_id};
    eu_job_stmt(job, &eu_takeout_import_sql[IMPORT_LOAD], 1, p, on_loaded, r);
}
