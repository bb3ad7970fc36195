/*
 * Where media files live: the local filesystem (default) or an
 * S3-compatible bucket. One store per process, made from [media] in the
 * config; every tenant's files are under keys starting with its id, so a
 * tenant's files are one prefix.
 *
 * Keys: "<tenant_id>/media_attachments/<media_id>/<style>.<ext>" where style
 * is "original" or "small"; avatars and headers use
 * "<tenant_id>/accounts/<account_id>/avatar-<media_id>.<ext>" and
 * "header-<...>". A key is a relative path: no "..", no leading "/".
 *
 * Everything here is called on the loop thread and never blocks it: the
 * local backend does its file I/O on the I/O pool (app->io), the S3 backend
 * its HTTP on the process's libcurl multi (eunha/fetch.h).
 *
 * A key comes from a tenant's rows, jobs or archive, which a tenant's
 * import can fill with anything: whoever reads or deletes a key on a
 * tenant's behalf checks eu_store_key_is_tenants() first.
 */
#ifndef EUNHA_MEDIASTORE_H
#define EUNHA_MEDIASTORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_app;

/* rc 0: done; -1: failed (already logged with the key). A delete's cb may
 * be NULL: a file a failed delete leaves costs disk, not correctness, and
 * the store has logged it. */
typedef void (*eu_store_done_cb)(int rc, void *arg);
/* rc 0: data (heap memory the callback now owns and frees; NULL when rc is
 * -1) holds the len bytes of the file; -1: missing, too large or failed
 * (logged). */
typedef void (*eu_store_got_cb)(int rc, unsigned char *data, size_t len, void *arg);

/*
 * A backend. impl is its own state. put must not take data: the caller
 * keeps data (and content_type) alive until cb runs. cb runs later on the
 * loop, never from inside put/del. Deleting a missing key succeeds.
 */
struct eu_store_ops {
    const char *name; /* "local", "s3" */
    void (*put)(void *impl, const char *key, const unsigned char *data, size_t len,
                const char *content_type, eu_store_done_cb cb, void *arg);
    void (*del)(void *impl, const char *key, eu_store_done_cb cb, void *arg);
    /*
     * The public URL of key, for a tenant whose base URL is base_url
     * ("https://a.example"). The local backend answers base_url +
     * "/system/" + key (eunha serves it, or a front proxy from the same
     * folder); S3 answers its public URL + "/" + key. Returns heap memory
     * the caller frees.
     */
    char *(*url)(void *impl, const char *base_url, const char *key);
    void (*free)(void *impl);
    /*
     * Reads key back whole (a raw upload, for the media_process job), at
     * most max_len bytes. Added after the contract: a backend may leave it
     * NULL, and eu_store_get() then fails. cb runs later on the loop.
     */
    void (*get)(void *impl, const char *key, size_t max_len, eu_store_got_cb cb, void *arg);
};

struct eu_store {
    const struct eu_store_ops *ops;
    void *impl;
};

/* The process's store (app->store), made by eu_store_new from the config at
 * start; NULL only if [media] is unusable, which fails the start. */
struct eu_store *eu_store_new(struct eu_app *app);
void eu_store_free(struct eu_store *s);

static inline void
eu_store_put(struct eu_store *s, const char *key, const unsigned char *data, size_t len,
             const char *content_type, eu_store_done_cb cb, void *arg)
{
    s->ops->put(s->impl, key, data, len, content_type, cb, arg);
}
static inline void
eu_store_del(struct eu_store *s, const char *key, eu_store_done_cb cb, void *arg)
{
    s->ops->del(s->impl, key, cb, arg);
}
/* Heap memory the caller frees. */
static inline char *
eu_store_url(struct eu_store *s, const char *base_url, const char *key)
{
    return s->ops->url(s->impl, base_url, key);
}

/* eu_store_ops.get: returns 0 (cb runs later), or -1 at once, calling
 * nothing, for a backend without one. */
int eu_store_get(struct eu_store *s, const char *key, size_t max_len, eu_store_got_cb cb,
                 void *arg);

/* Whether key is one a store accepts: relative, made of [A-Za-z0-9._-]
 * segments split by single '/', no "." or ".." segment. Every backend
 * refuses others (the callback gets -1). */
bool eu_store_key_is_valid(const char *key);

/* Whether key is valid and filed under tenant_id ("<tenant_id>/..."): the
 * only keys tenant_id's rows may make the store read or delete. */
bool eu_store_key_is_tenants(const char *key, int64_t tenant_id);

/*
 * The local backend's file for key under root ([media] root), or NULL for
 * an invalid key. Heap memory the caller frees. For serving /system/
 * (src/media/serve.c).
 */
char *eu_store_local_path(const char *root, const char *key);

/*
 * The S3 backend (src/media/store_s3.c), used by eu_store_new when
 * [media] storage = "s3". Returns impl for eu_store_s3_ops, or NULL (logged)
 * when [media.s3] is incomplete.
 */
struct eu_s3_config {
    const char *endpoint; /* "https://s3.example.com" or "http://127.0.0.1:4568" */
    const char *bucket;
    const char *region; /* "us-east-1" */
    const char *access_key;
    const char *secret_key;
    const char *public_url; /* base of public URLs; default endpoint + "/" + bucket */
    int path_style;         /* 1: endpoint/bucket/key (s3rver, MinIO); 0: bucket.endpoint/key */
};
extern const struct eu_store_ops eu_store_s3_ops;
void *eu_store_s3_new(struct eu_app *app, const struct eu_s3_config *cfg);

#endif
