/*
 * A tenant as an archive: POST /admin/v1/tenants/:domain/export writes a
 * snapshot of its rows as one JSON file in [admin] archive_dir, and POST
 * /admin/v1/tenants/import makes a tenant from such a file. Files are
 * written, read and checked on the CPU pool. An archive is untrusted: its
 * tables and columns are checked against the real ones before they are
 * named in SQL; then a tenant is made as POST /admin/v1/tenants does and
 * the rows are restored into it (lifecycle.c).
 */
#include "lifecycle_internal.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admin_internal.h"
#include "eunha/admin.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/migrate.h"
#include "eunha/queue.h"
#include "eunha/tenant.h"

#define ARCHIVE_FORMAT "eunha-tenant-archive"
#define ARCHIVE_VERSION 1
/* An import holds an archive several times over while it checks it (the
 * file, jansson's tree, one JSON text per table), so the cap is far below
 * what PostgreSQL could take. */
#define ARCHIVE_MAX_BYTES (256L * 1024 * 1024)
/* Distinct keys an archive's rows of one table may have; the widest table
 * has fewer than 30 columns. */
#define MAX_COLUMNS 64

/* ---- POST /admin/v1/tenants/:domain/export ---- */

struct export_call {
    struct eu_req *req;
    struct eu_admin_tables *rows;
    /* Read by the pool thread: copies, since a SIGHUP may replace the
     * config and a PATCH rename the tenant meanwhile. */
    char *dir, *domain, *manifest;
    char *path; /* the archive written */
    struct eu_error err;
};

/* Writes the manifest with the tables after it; returns 0 or -1 (errno). */
static int
write_archive(FILE *f, const struct export_call *e)
{
    /* The manifest is an object; the tables go in before its closing brace,
     * so a reader finds the schema version first. */
    size_t mlen = strlen(e->manifest);
    if (fwrite(e->manifest, 1, mlen - 1, f) != mlen - 1 || fputs(",\"tables\":{", f) < 0)
        return -1;
    /* Parents first, the order an importer inserts in. */
    bool first = true;
    for (int i = e->rows->n - 1; i >= 0; i--) {
        const char *json = e->rows->t[i].json ? e->rows->t[i].json : "[]";
        if (fprintf(f, "%s\"%s\":", first ? "" : ",", eu_db_tenant_tables[i]) < 0 ||
            fputs(json, f) < 0)
            return -1;
        first = false;
    }
    return fputs("}}\n", f) < 0 ? -1 : 0;
}

/* Runs on a CPU pool thread: the archive goes to a hidden temporary file,
 * then is linked under its name, so no reader sees half an archive and no
 * archive is overwritten. */
static void
export_work(void *arg)
{
    struct export_call *e = arg;
    char why[128];
    if (mkdir(e->dir, 0700) < 0 && errno != EEXIST) {
        eu_error_set(&e->err, 500, "Cannot create the archive directory '%s': %s", e->dir,
                     strerror_r(errno, why, sizeof(why)));
        return;
    }
    char *tmp = eu_xasprintf("%s/.export-XXXXXX", e->dir);
    int fd = mkstemp(tmp); /* 0600: archives hold password hashes and keys */
    if (fd < 0) {
        eu_error_set(&e->err, 500, "Cannot write to the archive directory '%s': %s", e->dir,
                     strerror_r(errno, why, sizeof(why)));
        free(tmp);
        return;
    }
    FILE *f = fdopen(fd, "w");
    int rc = f ? write_archive(f, e) : -1;
    if (rc == 0 && (fflush(f) != 0 || fsync(fd) < 0))
        rc = -1;
    int saved = errno;
    if (f)
        fclose(f);
    else
        close(fd);
    if (rc < 0) {
        eu_error_set(&e->err, 500, "Cannot write the archive: %s",
                     strerror_r(saved, why, sizeof(why)));
        goto out_unlink;
    }
    long long now = (long long)time(NULL);
    for (int n = 1; n < 100 && !e->path; n++) {
        char *path = n == 1 ? eu_xasprintf("%s/%s-%lld.json", e->dir, e->domain, now)
                            : eu_xasprintf("%s/%s-%lld-%d.json", e->dir, e->domain, now, n);
        if (link(tmp, path) == 0) {
            e->path = path;
            break;
        }
        saved = errno;
        free(path);
        if (saved != EEXIST) {
            eu_error_set(&e->err, 500, "Cannot name the archive: %s",
                         strerror_r(saved, why, sizeof(why)));
            break;
        }
    }
    if (!e->path && !e->err.status)
        eu_error_set(&e->err, 500, "Cannot name the archive: too many in one second");
out_unlink:
    unlink(tmp);
    free(tmp);
}

static void
export_done(void *arg)
{
    struct export_call *e = arg;
    struct eu_req *req = e->req;
    eu_req_enter(req);
    if (e->err.status) {
        eu_log_error("admin", "cannot export tenant '%s': %s", e->domain, e->err.message);
        eu_admin_reply_eu_error(req, &e->err);
        return;
    }
    json_t *counts = json_object();
    for (int i = e->rows->n - 1; i >= 0; i--)
        json_object_set_new(counts, eu_db_tenant_tables[i], json_integer(e->rows->t[i].count));
    long long rows = eu_admin_tables_rows(e->rows);
    eu_log_info("admin", "exported tenant '%s' (%lld rows) to '%s'", e->domain, rows, e->path);
    eu_req_reply_json(
        req, 201,
        json_pack("{s:s, s:I, s:o}", "path", e->path, "rows", (json_int_t)rows, "tables", counts));
}

/* Returns the manifest: what the archive is, of which schema, of whom. The
 * caller frees it. */
static char *
manifest_new(const struct eu_tenant *t)
{
    char id[24], at[32];
    snprintf(id, sizeof(id), "%lld", (long long)t->id);
    time_t now = time(NULL);
    struct tm tm;
    strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    json_t *m = json_pack("{s:s, s:i, s:i, s:{s:s, s:s, s:s, s:s, s:s}, s:s}", "format",
                          ARCHIVE_FORMAT, "version", ARCHIVE_VERSION, "schema_version",
                          eu_migrate_tenant_latest(), "tenant", "id", id, "domain", t->domain,
                          "title", t->title, "placement", t->placement ? t->placement : "",
                          "created_at", t->created_at ? t->created_at : "", "exported_at", at);
    char *text = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(m);
    return text;
}

static void
on_export_snapshot(struct eu_admin_tables *rows, enum eu_db_status st, void *arg)
{
    struct export_call *e = arg;
    struct eu_req *req = e->req;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    e->rows = rows;
    e->manifest = manifest_new(req->tenant);
    e->dir = eu_xstrdup(req->app->cfg->archive_dir);
    e->domain = eu_xstrdup(req->tenant->domain);
    eu_cpupool_submit(req->app->cpu, export_work, export_done, e);
}

static void
export_cleanup(void *p)
{
    struct export_call *e = p;
    eu_admin_tables_free(e->rows);
    free(e->dir);
    free(e->domain);
    free(e->manifest);
    free(e->path);
}

void
eu_admin_tenants_export(struct eu_req *req)
{
    struct eu_tenant *t = eu_admin_tenant_writable(req);
    if (!t)
        return;
    struct export_call *e = eu_arena_calloc(req->arena, sizeof(*e));
    e->req = req;
    eu_arena_on_free(req->arena, export_cleanup, e);
    eu_admin_snapshot_start(eu_tenant_pool(req->app->registry, t), on_export_snapshot, e);
}

/* ---- POST /admin/v1/tenants/import ---- */

struct import {
    struct eu_req *req;
    /* For the pool thread: copies, since a SIGHUP may replace the config. */
    char *dir, *path;
    /* From the pool thread. */
    struct eu_admin_tables *rows;
    char *domain, *title; /* the archive's tenant */
    struct eu_error err;
    /* On the loop. */
    const char *want_domain, *placement; /* from the body, or NULL */
    struct eu_tenant *t;
};

/* Returns the real path of path (absolute, or relative to dir) in *out (the
 * caller frees it), or -1 with err set when it cannot be read or is not
 * inside dir (symbolic links are followed before that is decided). */
static int
archive_resolve(const char *dir, const char *path, char **out, struct eu_error *err)
{
    char real_dir[PATH_MAX], real[PATH_MAX], why[128];
    if (!realpath(dir, real_dir))
        return eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                            strerror_r(errno, why, sizeof(why)));
    char *full = path[0] == '/' ? eu_xstrdup(path) : eu_xasprintf("%s/%s", real_dir, path);
    bool found = realpath(full, real) != NULL;
    int saved = errno;
    free(full);
    if (!found)
        return eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                            strerror_r(saved, why, sizeof(why)));
    size_t n = strlen(real_dir);
    if (strncmp(real, real_dir, n) != 0 || real[n] != '/')
        return eu_error_set(
            err, 422, "Validation failed: archive '%s' is not in the archive directory", path);
    *out = eu_xstrdup(real);
    return 0;
}

/* Returns the file's bytes (the caller frees them) and their count in *len,
 * or NULL with err set. */
static char *
archive_read(const char *file, const char *path, size_t *len, struct eu_error *err)
{
    char why[128];
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                     strerror_r(errno, why, sizeof(why)));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > ARCHIVE_MAX_BYTES) {
        eu_error_set(err, 422, "Validation failed: archive '%s' is not a file of at most %ld MiB",
                     path, ARCHIVE_MAX_BYTES / (1024 * 1024));
        close(fd);
        return NULL;
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *buf = eu_xmalloc(cap + 1);
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                         strerror_r(errno, why, sizeof(why)));
            free(buf);
            close(fd);
            return NULL;
        }
        n += (size_t)got;
        if (got == 0 || n == cap)
            break; /* a file still growing is read as far as it was */
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Takes one table of the archive into im->rows; -1 with im->err set when it
 * is not an array of row objects. */
static int
archive_take_table(struct import *im, const char *name, json_t *rows)
{
    int i = eu_admin_table_index(name);
    if (i < 0)
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's table '%.64s' is not a tenant table",
                            name);
    if (!json_is_array(rows))
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's table '%s' is not "
                            "an array of rows",
                            name);
    struct eu_admin_table_rows *tr = &im->rows->t[i];
    int ncols = 0;
    size_t k;
    json_t *row;
    json_array_foreach(rows, k, row)
    {
        if (!json_is_object(row))
            return eu_error_set(&im->err, 422,
                                "Validation failed: row %zu of the archive's table '%s' is not "
                                "an object",
                                k, name);
        const char *key;
        json_t *v;
        json_object_foreach(row, key, v)
        {
            if (eu_admin_strv_has(tr->columns, key))
                continue;
            if (ncols == MAX_COLUMNS)
                return eu_error_set(&im->err, 422,
                                    "Validation failed: the archive's table '%s' has more than "
                                    "%d columns",
                                    name, MAX_COLUMNS);
            tr->columns = eu_admin_strv_add(tr->columns, ncols++, key);
        }
    }
    tr->count = (long long)json_array_size(rows);
    if (tr->count > 0 && !(tr->json = json_dumps(rows, JSON_COMPACT)))
        return eu_error_set(&im->err, 500, "Cannot re-encode the archive's table '%s'", name);
    return 0;
}

/* Checks what the archive says it is and takes its tables; -1 with im->err
 * set when it is not an archive this server can import. */
static int
archive_check(struct import *im, json_t *root)
{
    const char *format = json_string_value(json_object_get(root, "format"));
    if (!format || strcmp(format, ARCHIVE_FORMAT) != 0)
        return eu_error_set(&im->err, 422, "Validation failed: '%s' is not a tenant archive",
                            im->path);
    json_t *v = json_object_get(root, "version");
    if (!json_is_integer(v) || json_integer_value(v) != ARCHIVE_VERSION)
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's format version is not %d",
                            ARCHIVE_VERSION);
    json_t *sv = json_object_get(root, "schema_version");
    if (!json_is_integer(sv) || json_integer_value(sv) < 1)
        return eu_error_set(&im->err, 422, "Validation failed: the archive has no schema version");
    /* Its rows may have columns, or mean things, that this server does not
     * know: refuse rather than drop them. */
    if (json_integer_value(sv) > eu_migrate_tenant_latest())
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's schema version %lld is newer than "
                            "this server's %d",
                            (long long)json_integer_value(sv), eu_migrate_tenant_latest());
    json_t *tenant = json_object_get(root, "tenant");
    const char *domain = json_string_value(json_object_get(tenant, "domain"));
    if (!domain)
        return eu_error_set(&im->err, 422, "Validation failed: the archive names no domain");
    im->domain = eu_xstrdup(domain);
    im->title = eu_xstrdup(json_string_value(json_object_get(tenant, "title")));
    json_t *tables = json_object_get(root, "tables");
    if (!json_is_object(tables))
        return eu_error_set(&im->err, 422, "Validation failed: the archive has no tables");
    const char *name;
    json_t *rows;
    json_object_foreach(tables, name, rows)
    {
        if (archive_take_table(im, name, rows) < 0)
            return -1;
    }
    return 0;
}

/* Runs on a CPU pool thread: reads, parses and checks the archive. */
static void
import_work(void *arg)
{
    struct import *im = arg;
    char *file;
    size_t len;
    if (archive_resolve(im->dir, im->path, &file, &im->err) < 0)
        return;
    char *text = archive_read(file, im->path, &len, &im->err);
    free(file);
    if (!text)
        return;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root) {
        eu_error_set(&im->err, 422, "Validation failed: archive '%s' is not JSON: %s (line %d)",
                     im->path, jerr.text, jerr.line);
        return;
    }
    if (!json_is_object(root)) {
        eu_error_set(&im->err, 422, "Validation failed: '%s' is not a tenant archive", im->path);
        json_decref(root);
        return;
    }
    im->rows = eu_admin_tables_new();
    archive_check(im, root);
    json_decref(root);
}

static void
on_import_undone(PGresult *res, enum eu_db_status st, void *arg)
{
    struct import *im = arg;
    struct eu_req *req = im->req;
    struct eu_tenant *t = im->t;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        /* An empty tenant is left; it can be deleted like any other. */
        eu_log_error("admin", "cannot remove tenant '%s' after its import failed: %s", t->domain,
                     eu_admin_db_message(res, "control database unavailable"));
        t->moving = false;
    } else {
        if (t->dedicated)
            eu_admin_placement_drop(req->app, t->placement, t->database, NULL, NULL);
        eu_registry_remove(req->app->registry, t); /* req still holds a ref */
    }
    eu_admin_reply_eu_error(req, &im->err);
}

static void
on_imported(const struct eu_error *err, void *arg)
{
    struct import *im = arg;
    struct eu_req *req = im->req;
    struct eu_tenant *t = im->t;
    eu_req_enter(req);
    if (err->status) {
        /* The restore rolled back: the tenant has no rows, only its row in
         * the control database (and a dedicated placement) to undo. */
        eu_log_warn("admin", "import into tenant '%s' failed: %s", t->domain, err->message);
        im->err = *err;
        char id[24];
        snprintf(id, sizeof(id), "%lld", (long long)t->id);
        const char *params[] = {id};
        eu_db_pool_query(req->app->control, "DELETE FROM tenants WHERE id = $1", 1, params,
                         on_import_undone, im);
        return;
    }
    t->moving = false;
    eu_log_info("admin", "imported tenant '%s' (%lld rows)", t->domain,
                eu_admin_tables_rows(im->rows));
    eu_req_reply_json(req, 201, eu_admin_tenant_json(req->app->registry, t, false));
}

static void
on_import_tenant(struct eu_req *req, struct eu_tenant *t, void *arg)
{
    struct import *im = arg;
    eu_tenant_ref(t);
    req->tenant = t; /* released with the request */
    im->t = t;
    /* Nobody uses it before its rows are in. */
    t->moving = true;
    eu_admin_restore_start(req->app,
                           t->database_url ? t->database_url : req->app->cfg->database_url,
                           t->database, t->id, im->rows, on_imported, im);
}

static void
import_done(void *arg)
{
    struct import *im = arg;
    struct eu_req *req = im->req;
    eu_req_enter(req);
    if (im->err.status) {
        eu_admin_reply_eu_error(req, &im->err);
        return;
    }
    const char *domain = im->want_domain ? im->want_domain : eu_admin_domain_check(req, im->domain);
    if (!domain)
        return;
    const char *title = im->title && strlen(im->title) <= 200 ? im->title : domain;
    if (eu_registry_find(req->app->registry, domain)) {
        eu_req_reply_error(req, 409, "Domain has already been taken");
        return;
    }
    eu_admin_tenant_make(req, domain, eu_arena_strdup(req->arena, title), im->placement,
                         on_import_tenant, im);
}

static void
import_cleanup(void *p)
{
    struct import *im = p;
    eu_admin_tables_free(im->rows);
    free(im->dir);
    free(im->path);
    free(im->domain);
    free(im->title);
}

void
eu_admin_tenants_import(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *path = json_string_value(json_object_get(body, "path"));
    json_t *domain_j = json_object_get(body, "domain");
    json_t *placement_j = json_object_get(body, "placement");
    if (!path || !path[0]) {
        eu_req_reply_error(req, 422, "Validation failed: path is required");
        return;
    }
    if (domain_j && !json_is_null(domain_j) && !json_is_string(domain_j)) {
        eu_req_reply_error(req, 422, "Validation failed: domain must be a string");
        return;
    }
    if (placement_j && !json_is_null(placement_j) && !json_is_string(placement_j)) {
        eu_req_reply_error(req, 422, "Validation failed: placement must be a string");
        return;
    }
    struct import *im = eu_arena_calloc(req->arena, sizeof(*im));
    im->req = req;
    /* Before reading what may be a large file. */
    if (json_string_value(domain_j) &&
        !(im->want_domain = eu_admin_domain_check(req, json_string_value(domain_j))))
        return;
    im->placement = json_string_value(placement_j);
    im->dir = eu_xstrdup(req->app->cfg->archive_dir);
    im->path = eu_xstrdup(path);
    eu_arena_on_free(req->arena, import_cleanup, im);
    eu_cpupool_submit(req->app->cpu, import_work, import_done, im);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_admin_lifecycle_archive_routes[] = {
    {EU_HTTP_POST, "/admin/v1/tenants/import", eu_admin_tenants_import, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/export", eu_admin_tenants_export, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
