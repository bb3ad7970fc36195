/*
 * GET/HEAD /system/<key>: the local store's files (src/media/store.c),
 * for when no front proxy serves the folder itself.
 *
 * A tenant's host serves only keys under its own id, so one tenant's host
 * is never a window onto another's files: anything else is 404, as is a
 * name whose extension we do not store (which also keeps the store's
 * temporary files out of reach). The file is opened, measured and its
 * first bytes sniffed on the I/O pool (app->io), in the tenant's queue, so
 * a read never waits behind image work; its bytes go from the page cache
 * to the socket through evbuffer_add_file() (sendfile), so the loop
 * neither blocks on the disk nor copies the file. Files are immutable (a
 * new upload is a new key), so they are cached for a year; single byte
 * ranges are served (206), since players seek in video and audio.
 *
 * Some files are kept as uploaded (animated GIF, video, audio), and a file
 * can be two formats at once (a GIF that is also a script), so nothing
 * here lets a browser treat one as anything but media: the type is the
 * one the file's own bytes and its name agree on, never guessed
 * (nosniff), and the answer may run nothing, load nothing and is its own
 * sandboxed origin (CSP "default-src 'none'; sandbox"). A file whose bytes
 * are not the media its name says is served as an attachment of
 * application/octet-stream.
 */
#include "eunha/mediaapi.h"

#include <errno.h>
#include <event2/buffer.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/http.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/tenant.h"

static const struct {
    const char *ext, *type;
} types[] = {
    {"jpg", "image/jpeg"},  {"jpeg", "image/jpeg"},     {"png", "image/png"},
    {"webp", "image/webp"}, {"gif", "image/gif"},       {"mp4", "video/mp4"},
    {"m4v", "video/mp4"},   {"mov", "video/quicktime"}, {"webm", "video/webm"},
    {"mp3", "audio/mpeg"},  {"ogg", "audio/ogg"},       {"oga", "audio/ogg"},
    {"wav", "audio/wav"},   {"flac", "audio/flac"},     {"m4a", "audio/mp4"},
};

static const char *
type_of_ext(const char *ext)
{
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(ext, types[i].ext) == 0)
            return types[i].type;
    return NULL;
}

static const char *
type_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? type_of_ext(dot + 1) : NULL;
}

/* Bytes read to tell what a file is: as many as eu_media_sniff() looks at
 * (an MP4's brands can run to 4 KiB), so it says here what it said when the
 * file was uploaded. */
#define SNIFF_BYTES 4096

struct serve {
    struct eu_req *req;
    char *path; /* heap */
    size_t max;
    int fd;
    off_t size;
    time_t mtime;
    unsigned char head[SNIFF_BYTES]; /* the file's first bytes */
    size_t head_len;
};

/* On a pool thread: nothing but the path. */
static void
open_work(void *arg)
{
    struct serve *s = arg;
    s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0)
        return;
    struct stat st;
    if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > s->max) {
        close(s->fd);
        s->fd = -1;
        return;
    }
    s->size = st.st_size;
    s->mtime = st.st_mtime;
    ssize_t n = pread(s->fd, s->head, sizeof(s->head), 0);
    s->head_len = n > 0 ? (size_t)n : 0;
}

/*
 * The Content-Type to send for file: the type its name says when its first
 * bytes say the same, else NULL (serve it as an attachment of bytes).
 */
static const char *
type_checked(const struct serve *s, const char *file)
{
    const char *named = type_of(file);
    struct eu_media_sniff sn;
    if (!named || eu_media_sniff(s->head, s->head_len, &sn) < 0)
        return NULL;
    const char *sniffed = type_of_ext(sn.ext);
    return sniffed && strcmp(sniffed, named) == 0 ? named : NULL;
}

/* Headers on every /system/ answer, errors included. */
static void
add_media_headers(struct eu_req *req)
{
    eu_req_add_header(req, "X-Content-Type-Options", "nosniff");
    eu_req_add_header(req, "Content-Security-Policy", "default-src 'none'; sandbox");
}

/*
 * Reads a Range header of one range against size. Returns 1 with
 * [*first, *last] set, 0 to serve the whole file (no header, several
 * ranges, not bytes), or -1 when unsatisfiable.
 */
static int
parse_range(const char *h, off_t size, off_t *first, off_t *last)
{
    if (!h || strncasecmp(h, "bytes=", 6) != 0 || strchr(h, ','))
        return 0;
    const char *p = h + 6;
    char *end;
    if (*p == '-') {
        long long n = strtoll(p + 1, &end, 10);
        if (end == p + 1 || *end || n <= 0)
            return n == 0 && end != p + 1 && !*end ? -1 : 0;
        if (size == 0)
            return -1;
        *first = n >= size ? 0 : size - n;
        *last = size - 1;
        return 1;
    }
    errno = 0;
    long long a = strtoll(p, &end, 10);
    if (end == p || *end != '-' || errno || a < 0)
        return 0;
    p = end + 1;
    long long b = size - 1;
    if (*p) {
        b = strtoll(p, &end, 10);
        if (*end || errno || b < a)
            return 0;
    }
    if (a >= size)
        return -1;
    *first = a;
    *last = b >= size ? size - 1 : b;
    return 1;
}

static void
open_done(void *arg)
{
    struct serve *s = arg;
    struct eu_req *req = s->req;
    eu_req_enter(req);
    free(s->path);
    if (s->fd < 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    char etag[64], lm[64], buf[96];
    snprintf(etag, sizeof(etag), "\"%llx-%llx\"", (unsigned long long)s->size,
             (unsigned long long)s->mtime);
    struct tm tm;
    gmtime_r(&s->mtime, &tm);
    strftime(lm, sizeof(lm), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    eu_req_add_header(req, "Accept-Ranges", "bytes");
    const char *inm = eu_req_header(req, "If-None-Match");
    bool fresh = inm && strcmp(inm, etag) == 0; /* a 304 goes before the Range */
    off_t first = 0, last = s->size - 1;
    int status = 200;
    int r = parse_range(eu_req_header(req, "Range"), s->size, &first, &last);
    if (r < 0 && !fresh) {
        /* Without the year-long caching below: a cache keyed on the URL
         * alone must not keep this answer for the whole file. */
        close(s->fd);
        snprintf(buf, sizeof(buf), "bytes */%lld", (long long)s->size);
        eu_req_add_header(req, "Content-Range", buf);
        eu_req_reply_error(req, 416, "Range not satisfiable");
        return;
    }
    eu_req_add_header(req, "Cache-Control", "public, max-age=31536000, immutable");
    eu_req_add_header(req, "ETag", etag);
    eu_req_add_header(req, "Last-Modified", lm);
    if (fresh) {
        close(s->fd);
        eu_req_reply_raw(req, 304, NULL, "", 0);
        return;
    }
    if (r == 1) {
        status = 206;
        snprintf(buf, sizeof(buf), "bytes %lld-%lld/%lld", (long long)first, (long long)last,
                 (long long)s->size);
        eu_req_add_header(req, "Content-Range", buf);
    }
    const char *ctype = type_checked(s, eu_req_param(req, "file"));
    if (!ctype) {
        ctype = "application/octet-stream";
        eu_req_add_header(req, "Content-Disposition", "attachment");
    }
    off_t len = s->size == 0 ? 0 : last - first + 1;
    struct evbuffer *body = evbuffer_new();
    if (req->method == EU_HTTP_HEAD) {
        /* evhttp sends no body for HEAD and so writes no length itself. */
        snprintf(buf, sizeof(buf), "%lld", (long long)len);
        eu_req_add_header(req, "Content-Length", buf);
        close(s->fd);
    } else if (len > 0) {
        evbuffer_add_file(body, s->fd, first, len); /* takes the fd */
    } else {
        close(s->fd);
    }
    eu_req_reply_buffer(req, status, ctype, body);
}

void
eu_media_serve(struct eu_req *req)
{
    const struct eu_config *cfg = req->app->cfg;
    const char *tenant = eu_req_param(req, "tenant");
    const char *file = eu_req_param(req, "file");
    add_media_headers(req);
    char own[24];
    snprintf(own, sizeof(own), "%lld", (long long)req->tenant->id);
    if (strcmp(cfg->media_storage, "local") != 0 || !tenant || strcmp(tenant, own) != 0 || !file ||
        !type_of(file)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *key = eu_arena_sprintf(req->arena, "%s/%s/%s/%s", tenant, eu_req_param(req, "kind"),
                                       eu_req_param(req, "owner"), file);
    struct serve *s = eu_arena_calloc(req->arena, sizeof(*s));
    s->req = req;
    s->fd = -1;
    s->path = eu_store_local_path(cfg->media_root, key);
    if (!s->path) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* What uploads allow, twice over: a re-encoded original may come out
     * larger than the file it was made from. */
    size_t img = cfg->media_image_size_limit, vid = cfg->media_video_size_limit;
    s->max = 2 * (img > vid ? img : vid);
    eu_cpupool_submit_for(req->app->io, req->tenant->id, open_work, open_done, s);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_media_serve_routes[] = {
    {EU_HTTP_GET, "/system/:tenant/:kind/:owner/:file", eu_media_serve, NULL, 0},
    {0},
};
