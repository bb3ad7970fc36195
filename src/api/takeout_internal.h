/*
 * Taking one's data out and bringing it in, as Mastodon's settings pages
 * do (docs/takeout.md): takeout.c serves the pages and the CSV exports and
 * takes an uploaded import; takeout_import.c parses the CSV and runs the
 * "bulk_import" job that applies it a few rows a turn.
 */
#ifndef EUNHA_API_TAKEOUT_INTERNAL_H
#define EUNHA_API_TAKEOUT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct eu_req;
struct eu_web_session;
struct json_t;

/* Mastodon's Form::Import caps: the file's size and its rows. */
#define EU_TAKEOUT_IMPORT_MAX_BYTES (20u * 1024 * 1024)
#define EU_TAKEOUT_IMPORT_MAX_ROWS 20000

/* What an upload's parse yields. */
struct eu_takeout_parsed {
    struct json_t *rows;    /* array of row objects (Mastodon's attribute names); owned */
    bool likely_mismatched; /* the headers say another type (Mastodon's guess) */
    const char *error;      /* static message; NULL when the file is usable */
};

/*
 * Parses a CSV file of import type (following, blocking, muting,
 * domain_blocking, bookmarks, lists) as Mastodon's Form::Import does:
 * the first row is a header row when it starts with a header Mastodon
 * writes, else the type's default columns apply; blank lines are skipped;
 * values are converted (booleans, languages, an acct without its leading
 * '@' or its "@local_domain"). Pure: it runs on the CPU pool. out->rows is
 * set (possibly empty) unless out->error says why the file is refused.
 */
void eu_takeout_parse_csv(const char *type, const char *local_domain, const char *data, size_t len,
                          struct eu_takeout_parsed *out);

/* The i-th column of an import type's file: its header as Mastodon
 * writes it, and (*attr) the attribute a row keeps it under; NULL past
 * the last one. */
const char *eu_takeout_import_column(const char *type, int i, const char **attr);

/* Whether type is one of the import types above. */
bool eu_takeout_import_type_ok(const char *type);

/*
 * Finishes the export page (takeout_archive.c): before (arena HTML, the
 * counts and CSV links) followed by the archives the account may download
 * and the form that asks for one.
 */
void eu_takeout_archive_page(struct eu_req *req, const struct eu_web_session *s,
                             const char *before);

#endif
