/*
 * The S3 file store (eunha/mediastore.h): objects PUT and DELETEd in an
 * S3-compatible bucket (AWS, MinIO, Garage, s3rver) through the process's
 * libcurl client (eunha/fetch.h), signed with AWS Signature V4 by libcurl.
 *
 * S3 wants the body's SHA-256 in x-amz-content-sha256 (libcurl 7.88 signs
 * the body but does not send that header), and an upload may be tens of
 * megabytes, so the hash runs on the CPU pool and the request starts from
 * its completion: nothing here costs the loop more than a copy.
 *
 * The endpoint is the operator's configuration, not a URL from the
 * network, so its requests are marked trusted: loopback and plain http are
 * allowed whatever [federation] says. Each request is queued under the
 * tenant whose id starts the key, so one tenant's uploads wait behind its
 * own.
 */
#include "eunha/mediastore.h"

#include <event2/event.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/cpupool.h"
#include "eunha/fetch.h"
#include "eunha/log.h"
#include "eunha/mem.h"

/* An S3 error document is a few hundred bytes. */
#define S3_MAX_RESPONSE (64 * 1024)
/* SHA-256 of nothing: a DELETE's payload hash. */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct s3 {
    struct eu_app *app;
    char *base;       /* where objects are: "http://h:p/bucket" or "https://bucket.h" */
    char *public_url; /* base of public URLs, no trailing slash */
    char *sigv4;      /* "aws:amz:REGION:s3" */
    char *userpwd;    /* "access:secret" */
    int refs;         /* the store's, plus one per operation in flight */
};

struct s3_op {
    struct s3 *s3;
    enum eu_fetch_method method;
    char *key;
    const unsigned char *data; /* the caller's, alive until cb */
    size_t len;
    const char *content_type; /* the caller's */
    char sha256[65];
    bool bad_key;
    bool hash_failed;
    eu_store_done_cb cb;
    void *arg;
};

static void
s3_unref(struct s3 *s3)
{
    if (--s3->refs > 0)
        return;
    free(s3->base);
    free(s3->public_url);
    free(s3->sigv4);
    if (s3->userpwd)
        explicit_bzero(s3->userpwd, strlen(s3->userpwd));
    free(s3->userpwd);
    free(s3);
}

static void
op_finish(struct s3_op *op, int rc)
{
    if (op->cb)
        op->cb(rc, op->arg);
    s3_unref(op->s3);
    free(op->key);
    free(op);
}

/* The <Code> of an S3 error document, for the log; "" when there is none. */
static void
s3_error_code(const char *body, char *out, size_t outlen)
{
    const char *a = body ? strstr(body, "<Code>") : NULL;
    const char *b = a ? strstr(a, "</Code>") : NULL;
    if (!a || !b)
        snprintf(out, outlen, "%s", "");
    else
        snprintf(out, outlen, "%.*s", (int)(b - a - 6), a + 6);
}

static void
on_s3_response(struct eu_fetch_resp *resp, void *arg)
{
    struct s3_op *op = arg;
    const char *verb = op->method == EU_FETCH_PUT ? "put" : "delete";
    /* Deleting a missing key succeeds (S3 itself answers 204 for that). */
    bool ok =
        resp->error == EU_FETCH_OK && ((resp->status >= 200 && resp->status < 300) ||
                                       (op->method == EU_FETCH_DELETE && resp->status == 404));
    if (!ok) {
        char code[64];
        s3_error_code(resp->body, code, sizeof code);
        if (resp->error != EU_FETCH_OK)
            eu_log_error("media", "s3 %s of '%s' failed: %s (%s)", verb, op->key,
                         eu_fetch_error_str(resp->error), resp->message ? resp->message : "");
        else
            eu_log_error("media", "s3 %s of '%s' failed: HTTP %ld %s", verb, op->key, resp->status,
                         code);
    }
    op_finish(op, ok ? 0 : -1);
}

static void
op_start(struct s3_op *op)
{
    struct s3 *s3 = op->s3;
    if (op->bad_key) {
        eu_log_error("media", "s3: refusing key '%s' (not a relative path of safe characters)",
                     op->key);
        op_finish(op, -1);
        return;
    }
    if (op->hash_failed) {
        eu_log_error("media", "s3: cannot hash the body of '%s'", op->key);
        op_finish(op, -1);
        return;
    }
    char *url = eu_xasprintf("%s/%s", s3->base, op->key);
    char *sha = eu_xasprintf("x-amz-content-sha256: %s", op->sha256);
    char *ctype = op->content_type ? eu_xasprintf("Content-Type: %s", op->content_type) : NULL;
    /* Keys never change content (a new upload is a new key), so caches
     * may keep them for good, as Mastodon asks too. */
    const char *headers[] = {sha, "Cache-Control: public, max-age=315576000, immutable", ctype,
                             NULL};
    if (op->method == EU_FETCH_DELETE)
        headers[1] = NULL;
    struct eu_fetch_req req = {
        .method = op->method,
        .url = url,
        .headers = headers,
        .body = op->method == EU_FETCH_PUT ? (const char *)op->data : NULL,
        .body_len = op->method == EU_FETCH_PUT ? op->len : 0,
        .body_borrowed = true, /* mediastore.h: data lives until the callback */
        .owner = strtoull(op->key, NULL, 10),
        .max_redirects = 0,
        .max_bytes = S3_MAX_RESPONSE,
        .trusted = true,
        .aws_sigv4 = s3->sigv4,
        .userpwd = s3->userpwd,
    };
    /* The client copies everything; its callback never runs from here. */
    eu_fetch_start(s3->app->fetch, &req, on_s3_response, op);
    free(url);
    free(sha);
    free(ctype);
}

static void
hash_work(void *arg)
{
    struct s3_op *op = arg;
    unsigned char h[EVP_MAX_MD_SIZE];
    unsigned hlen = 0;
    if (EVP_Digest(op->data ? op->data : (const unsigned char *)"", op->data ? op->len : 0, h,
                   &hlen, EVP_sha256(), NULL) != 1 ||
        hlen != 32) {
        op->hash_failed = true;
        return;
    }
    for (unsigned i = 0; i < hlen; i++)
        snprintf(op->sha256 + 2 * i, 3, "%02x", h[i]);
}

static void
hash_done(void *arg)
{
    op_start(arg);
}

static struct s3_op *
op_new(struct s3 *s3, enum eu_fetch_method method, const char *key, eu_store_done_cb cb, void *arg)
{
    struct s3_op *op = eu_xcalloc(1, sizeof *op);
    op->s3 = s3;
    s3->refs++;
    op->method = method;
    op->key = eu_xstrdup(key ? key : "");
    /* A valid key needs no escaping in a URL or a signature. */
    op->bad_key = !eu_store_key_is_valid(key);
    op->cb = cb;
    op->arg = arg;
    return op;
}

static void
s3_put(void *impl, const char *key, const unsigned char *data, size_t len, const char *content_type,
       eu_store_done_cb cb, void *arg)
{
    struct s3 *s3 = impl;
    struct s3_op *op = op_new(s3, EU_FETCH_PUT, key, cb, arg);
    op->data = data;
    op->len = len;
    op->content_type = content_type;
    eu_cpupool_submit(s3->app->cpu, hash_work, hash_done, op);
}

static void
on_del_deferred(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    op_start(arg);
}

static void
s3_del(void *impl, const char *key, eu_store_done_cb cb, void *arg)
{
    struct s3 *s3 = impl;
    struct s3_op *op = op_new(s3, EU_FETCH_DELETE, key, cb, arg);
    memcpy(op->sha256, EMPTY_SHA256, sizeof op->sha256);
    if (op->bad_key) {
        /* cb must not run from inside del. */
        struct timeval zero = {0, 0};
        event_base_once(s3->app->base, -1, EV_TIMEOUT, on_del_deferred, op, &zero);
        return;
    }
    op_start(op);
}

static char *
s3_url(void *impl, const char *base_url, const char *key)
{
    struct s3 *s3 = impl;
    (void)base_url;
    return eu_xasprintf("%s/%s", s3->public_url, key);
}

static void
s3_free(void *impl)
{
    if (impl)
        s3_unref(impl);
}

const struct eu_store_ops eu_store_s3_ops = {
    .name = "s3",
    .put = s3_put,
    .del = s3_del,
    .url = s3_url,
    .free = s3_free,
};

static bool
is_set(const char *s)
{
    return s && s[0];
}

/* endpoint without its trailing slashes; the caller frees. */
static char *
trim_slashes(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/')
        n--;
    return eu_xstrndup(s, n);
}

void *
eu_store_s3_new(struct eu_app *app, const struct eu_s3_config *cfg)
{
    const char *missing = !is_set(cfg->endpoint)     ? "endpoint"
                          : !is_set(cfg->bucket)     ? "bucket"
                          : !is_set(cfg->region)     ? "region"
                          : !is_set(cfg->access_key) ? "access_key"
                          : !is_set(cfg->secret_key) ? "secret_key"
                                                     : NULL;
    if (missing) {
        eu_log_error("media", "[media.s3] %s is not set", missing);
        return NULL;
    }
    const char *scheme_end = strstr(cfg->endpoint, "://");
    if (!scheme_end ||
        (strncmp(cfg->endpoint, "http://", 7) != 0 && strncmp(cfg->endpoint, "https://", 8) != 0)) {
        eu_log_error("media", "[media.s3] endpoint '%s' is not an http(s) URL", cfg->endpoint);
        return NULL;
    }
    if (!eu_store_key_is_valid(cfg->bucket) || strchr(cfg->bucket, '/') ||
        strchr(cfg->access_key, ':')) {
        eu_log_error("media", "[media.s3] bucket '%s' or access_key is not usable", cfg->bucket);
        return NULL;
    }
    struct s3 *s3 = eu_xcalloc(1, sizeof *s3);
    s3->app = app;
    s3->refs = 1;
    char *endpoint = trim_slashes(cfg->endpoint);
    if (cfg->path_style) {
        s3->base = eu_xasprintf("%s/%s", endpoint, cfg->bucket);
    } else {
        /* Virtual-hosted style: the bucket becomes the first label. */
        size_t scheme_len = (size_t)(strstr(endpoint, "://") + 3 - endpoint);
        s3->base = eu_xasprintf("%.*s%s.%s", (int)scheme_len, endpoint, cfg->bucket,
                                endpoint + scheme_len);
    }
    s3->public_url = is_set(cfg->public_url) ? trim_slashes(cfg->public_url) : eu_xstrdup(s3->base);
    s3->sigv4 = eu_xasprintf("aws:amz:%s:s3", cfg->region);
    s3->userpwd = eu_xasprintf("%s:%s", cfg->access_key, cfg->secret_key);
    free(endpoint);
    return s3;
}
