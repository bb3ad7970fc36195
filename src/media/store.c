/*
 * The process's file store (include/eunha/mediastore.h) and its local
 * backend: files under [media] root, one path per key, so the tree is what
 * a front proxy serves from as well as what src/media/serve.c serves.
 *
 * Every file operation runs on the I/O pool (app->io), never on the loop
 * and never behind image work on the CPU pool, in the queue of the tenant
 * the key belongs to: a write is
 * a temporary file in the key's folder, fsync, then rename over the key,
 * so a reader (or a crash) sees the old file or the whole new one, never a
 * part. Each operation carries its own copy of the path, so the store may
 * be freed while operations are still queued (their callbacks still run,
 * from eu_cpupool_free at the latest).
 */
#include "eunha/mediastore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/log.h"
#include "eunha/mem.h"

struct local {
    struct eu_app *app;
    char *root;
};

enum op_kind { OP_PUT, OP_DEL, OP_GET };

struct op {
    enum op_kind kind;
    char *key;
    char *path; /* NULL: the key was refused */
    const unsigned char *data;
    size_t len, max_len;
    unsigned char *got;
    int rc;
    char err[200];
    eu_store_done_cb done;
    eu_store_got_cb got_cb;
    void *arg;
};

bool
eu_store_key_is_valid(const char *key)
{
    if (!key || !*key || strlen(key) > 512)
        return false;
    const char *seg = key;
    for (const char *p = key;; p++) {
        if (*p == '/' || *p == '\0') {
            size_t n = (size_t)(p - seg);
            if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                return false;
            if (*p == '\0')
                return true;
            seg = p + 1;
            continue;
        }
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return false;
    }
}

/* The tenant a key is filed under (its leading number), 0 when none. */
static int64_t
key_tenant(const char *key)
{
    int64_t id = 0;
    for (const char *p = key; *p >= '0' && *p <= '9'; p++) {
        if (id > (INT64_MAX - 9) / 10)
            return 0;
        id = id * 10 + (*p - '0');
    }
    return id;
}

bool
eu_store_key_is_tenants(const char *key, int64_t tenant_id)
{
    char prefix[24];
    int n = snprintf(prefix, sizeof(prefix), "%lld/", (long long)tenant_id);
    return tenant_id > 0 && eu_store_key_is_valid(key) && strncmp(key, prefix, (size_t)n) == 0;
}

char *
eu_store_local_path(const char *root, const char *key)
{
    if (!eu_store_key_is_valid(key))
        return NULL;
    return eu_xasprintf("%s/%s", root, key);
}

/* mkdir -p of path's parent folders. Returns 0, or -1 with errno set. */
static int
make_parents(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        *p = '/';
        if (rc < 0 && e != EEXIST) {
            errno = e;
            return -1;
        }
    }
    return 0;
}

static int
write_all(int fd, const unsigned char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void
put_work(struct op *op)
{
    if (make_parents(op->path) < 0) {
        snprintf(op->err, sizeof(op->err), "cannot make its folder: %s", strerror(errno));
        return;
    }
    /* The op's address is unique among writes in flight in this process,
     * the pid among processes sharing the folder. */
    char *tmp =
        eu_xasprintf("%s.tmp-%ld-%lx", op->path, (long)getpid(), (unsigned long)(uintptr_t)op);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(op->err, sizeof(op->err), "cannot create it: %s", strerror(errno));
        free(tmp);
        return;
    }
    if (write_all(fd, op->data, op->len) < 0 || fsync(fd) < 0) {
        snprintf(op->err, sizeof(op->err), "cannot write it: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return;
    }
    close(fd);
    if (rename(tmp, op->path) < 0) {
        snprintf(op->err, sizeof(op->err), "cannot rename it: %s", strerror(errno));
        unlink(tmp);
        free(tmp);
        return;
    }
    free(tmp);
    /* The rename is durable once its folder is. */
    char *slash = strrchr(op->path, '/');
    *slash = '\0';
    int dfd = open(op->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    *slash = '/';
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    op->rc = 0;
}

static void
del_work(struct op *op)
{
    if (unlink(op->path) < 0 && errno != ENOENT) {
        snprintf(op->err, sizeof(op->err), "cannot delete it: %s", strerror(errno));
        return;
    }
    /* The media's own folder goes with its last file; a folder still in
     * use refuses, which is fine. */
    char *slash = strrchr(op->path, '/');
    *slash = '\0';
    rmdir(op->path);
    *slash = '/';
    op->rc = 0;
}

static void
get_work(struct op *op)
{
    int fd = open(op->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(op->err, sizeof(op->err), "cannot open it: %s", strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > op->max_len) {
        snprintf(op->err, sizeof(op->err), "not a file of at most %zu bytes", op->max_len);
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *buf = eu_xmalloc(len ? len : 1);
    size_t off = 0;
    while (off < len) {
        ssize_t n = read(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(op->err, sizeof(op->err), "cannot read it: %s",
                     n < 0 ? strerror(errno) : "short file");
            close(fd);
            free(buf);
            return;
        }
        off += (size_t)n;
    }
    close(fd);
    op->got = buf;
    op->len = len;
    op->rc = 0;
}

static void
op_work(void *arg)
{
    struct op *op = arg;
    op->rc = -1;
    if (!op->path) {
        snprintf(op->err, sizeof(op->err), "invalid key");
        return;
    }
    switch (op->kind) {
    case OP_PUT:
        put_work(op);
        break;
    case OP_DEL:
        del_work(op);
        break;
    case OP_GET:
        get_work(op);
        break;
    }
}

static void
op_done(void *arg)
{
    struct op *op = arg;
    if (op->rc < 0)
        eu_log_warn("media", "local store: '%s': %s", op->key, op->err);
    if (op->kind == OP_GET)
        op->got_cb(op->rc, op->got, op->rc == 0 ? op->len : 0, op->arg);
    else if (op->done)
        op->done(op->rc, op->arg);
    free(op->key);
    free(op->path);
    free(op);
}

static struct op *
op_new(struct local *l, enum op_kind kind, const char *key)
{
    struct op *op = eu_xcalloc(1, sizeof(*op));
    op->kind = kind;
    op->key = eu_xstrdup(key ? key : "");
    op->path = eu_store_local_path(l->root, op->key);
    return op;
}

static void
local_put(void *impl, const char *key, const unsigned char *data, size_t len,
          const char *content_type, eu_store_done_cb cb, void *arg)
{
    struct local *l = impl;
    (void)content_type; /* served by extension */
    struct op *op = op_new(l, OP_PUT, key);
    op->data = data;
    op->len = len;
    op->done = cb;
    op->arg = arg;
    eu_cpupool_submit_for(l->app->io, key_tenant(op->key), op_work, op_done, op);
}

static void
local_del(void *impl, const char *key, eu_store_done_cb cb, void *arg)
{
    struct local *l = impl;
    struct op *op = op_new(l, OP_DEL, key);
    op->done = cb;
    op->arg = arg;
    eu_cpupool_submit_for(l->app->io, key_tenant(op->key), op_work, op_done, op);
}

static void
local_get(void *impl, const char *key, size_t max_len, eu_store_got_cb cb, void *arg)
{
    struct local *l = impl;
    struct op *op = op_new(l, OP_GET, key);
    op->max_len = max_len;
    op->got_cb = cb;
    op->arg = arg;
    eu_cpupool_submit_for(l->app->io, key_tenant(op->key), op_work, op_done, op);
}

static char *
local_url(void *impl, const char *base_url, const char *key)
{
    (void)impl;
    return eu_xasprintf("%s/system/%s", base_url, key);
}

static void
local_free(void *impl)
{
    struct local *l = impl;
    free(l->root);
    free(l);
}

static const struct eu_store_ops local_ops = {
    .name = "local",
    .put = local_put,
    .del = local_del,
    .url = local_url,
    .free = local_free,
    .get = local_get,
};

int
eu_store_get(struct eu_store *s, const char *key, size_t max_len, eu_store_got_cb cb, void *arg)
{
    if (!s->ops->get)
        return -1;
    s->ops->get(s->impl, key, max_len, cb, arg);
    return 0;
}

struct eu_store *
eu_store_new(struct eu_app *app)
{
    const struct eu_config *cfg = app->cfg;
    if (strcmp(cfg->media_storage, "s3") == 0) {
        struct eu_s3_config s3 = {
            .endpoint = cfg->s3_endpoint,
            .bucket = cfg->s3_bucket,
            .region = cfg->s3_region,
            .access_key = cfg->s3_access_key,
            .secret_key = cfg->s3_secret_key,
            .public_url = cfg->s3_public_url,
            .path_style = cfg->s3_path_style,
        };
        void *impl = eu_store_s3_new(app, &s3);
        if (!impl)
            return NULL;
        struct eu_store *s = eu_xcalloc(1, sizeof(*s));
        s->ops = &eu_store_s3_ops;
        s->impl = impl;
        eu_log_info("media", "storing media files in S3 bucket '%s' at %s", cfg->s3_bucket,
                    cfg->s3_endpoint);
        return s;
    }
    if (strcmp(cfg->media_storage, "local") != 0) {
        eu_log_error("media", "[media] storage = \"%s\" is not available in this build",
                     cfg->media_storage);
        return NULL;
    }
    /* At start, before the loop serves anyone: blocking is fine here, and
     * a root that cannot be made should stop the start, not the first
     * upload. */
    char *probe = eu_xasprintf("%s/.probe", cfg->media_root);
    int rc = make_parents(probe);
    free(probe);
    if (rc < 0) {
        eu_log_error("media", "cannot make [media] root '%s': %s", cfg->media_root,
                     strerror(errno));
        return NULL;
    }
    struct local *l = eu_xcalloc(1, sizeof(*l));
    l->app = app;
    l->root = eu_xstrdup(cfg->media_root);
    struct eu_store *s = eu_xcalloc(1, sizeof(*s));
    s->ops = &local_ops;
    s->impl = l;
    eu_log_info("media", "storing media files under '%s'", l->root);
    return s;
}

void
eu_store_free(struct eu_store *s)
{
    if (!s)
        return;
    s->ops->free(s->impl);
    free(s);
}
