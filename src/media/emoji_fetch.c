/*
 * The "emoji_fetch" job (queue "media"): a remote custom emoji's image,
 * fetched from its server and cached through the emoji pipeline
 * (include/eunha/mediaemoji.h), so that a tenant's readers load it from
 * the tenant rather than from every server whose emoji they see, as
 * Mastodon caches them. Payload {"id": the emoji, "url": its
 * image_remote_url when the job was queued}.
 *
 * The ingest statements (src/ap/ingest_store.c) queue one for every remote
 * emoji they add or whose image URL changed; until it has run, the row's
 * image is the remote URL (or the previous cached image, kept until the
 * new one replaces it), which the renderer shows as it is. The job does
 * nothing when the row is gone or names another URL by then. The fetch
 * goes through the shared outbound client with Mastodon's 256 KB cap; a
 * file that is refused (too big, not PNG/GIF/WebP, not an image, 4xx, an
 * address we may not reach) is not retried and the remote URL stays; a
 * server or store that fails is retried with the queue's backoff.
 */
#include "eunha/mediaemoji.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/fetch.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* A remote server that answers slowly only delays its own emoji. */
#define FETCH_TIMEOUT_MS 20000
#define FETCH_REDIRECTS 3

enum {
    EMOJI_FETCH_LOAD,
    EMOJI_FETCH_SAVE,
};

const struct eu_sql eu_emoji_fetch_sql[] = {
    /* $2 the emoji, $3 the URL the job was queued for. */
    [EMOJI_FETCH_LOAD] = {"emoji_fetch.load",
                          "SELECT 1 FROM custom_emojis WHERE tenant_id = $1 AND id = $2::bigint"
                          " AND domain IS NOT NULL AND image_remote_url = $3"},
    /* $4, $5 the new files' keys, $6 the type, $7 the size. Answers the
     * files it replaced (a remote URL, or an earlier cached image's keys)
     * for the job to delete; no row when the emoji went or its URL
     * changed meanwhile, whose new files the job then deletes. */
    [EMOJI_FETCH_SAVE] = {"emoji_fetch.save",
                          "WITH old AS (SELECT image, static_image FROM custom_emojis"
                          "  WHERE tenant_id = $1 AND id = $2::bigint AND image_remote_url = $3"
                          "  FOR UPDATE),"
                          " up AS (UPDATE custom_emojis SET image = $4, static_image = $5,"
                          "  content_type = $6, file_size = $7::integer, updated_at = now()"
                          "  WHERE tenant_id = $1 AND id = $2::bigint AND image_remote_url = $3"
                          "  RETURNING id)"
                          " SELECT old.image, old.static_image FROM old, up"},
    {0},
};

struct run {
    struct eu_fetch *f; /* while fetching */
    struct eu_job *job;
    char *id, *url;
    char *body;
    size_t len;
    struct eu_emoji_image *e;
};

static void
run_free(struct run *r)
{
    eu_emoji_image_free(r->e);
    free(r->body);
    free(r->id);
    free(r->url);
    free(r);
}

static void
run_finish(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    run_free(r);
    eu_job_done(job, error);
}

/* The process stops during the fetch (eu_queues_abandon()). */
static void
on_abandon(void *arg)
{
    struct run *r = arg;
    eu_fetch_cancel(r->f);
    run_free(r);
}

/* A file we will not cache: the remote URL stays, and the job is done. */
static void
give_up(struct run *r, const char *why)
{
    eu_log_info("media", "remote emoji %s not cached (%s): %s", r->id, r->url, why);
    run_finish(r, NULL);
}

/* Deletes an old image column's file when it was one of ours. */
static void
drop_old(struct run *r, const char *key)
{
    struct eu_tenant *t = eu_job_tenant(r->job);
    if (*key && !strstr(key, "://") && eu_store_key_is_tenants(key, t->id))
        eu_store_del(eu_job_app(r->job)->store, key, NULL, NULL);
}

static void
on_saved(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        /* The next attempt stores afresh; these files would be orphans. */
        eu_emoji_image_unstore(r->e);
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot record emoji %s: %s", r->id,
                 res ? PQresultErrorMessage(res) : "database unavailable");
        run_finish(r, msg);
        return;
    }
    if (PQntuples(res) == 0) {
        eu_emoji_image_unstore(r->e);
        run_finish(r, NULL);
        return;
    }
    drop_old(r, PQgetvalue(res, 0, 0));
    if (strcmp(PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 0)) != 0)
        drop_old(r, PQgetvalue(res, 0, 1));
    run_finish(r, NULL);
}

static void
on_stored(struct eu_emoji_image *e)
{
    struct run *r = e->arg;
    free(r->body); /* the pipeline is done with it */
    r->body = NULL;
    if (e->rc == -1) {
        give_up(r, e->err);
        return;
    }
    if (e->rc != 0) {
        run_finish(r, "the emoji's files could not be stored");
        return;
    }
    char size[24];
    snprintf(size, sizeof(size), "%zu", e->size);
    const char *p[] = {r->id, r->url, e->image_key, e->static_key, e->mime, size};
    eu_job_stmt(r->job, &eu_emoji_fetch_sql[EMOJI_FETCH_SAVE], 6, p, on_saved, r);
}

/* Whether a failed fetch may succeed later (the server, not the file). */
static bool
retryable(const struct eu_fetch_resp *resp)
{
    switch (resp->error) {
    case EU_FETCH_OK:
        return resp->status >= 500 || resp->status == 429;
    case EU_FETCH_TOO_LARGE:
    case EU_FETCH_REFUSED_ADDRESS:
    case EU_FETCH_BAD_URL:
    case EU_FETCH_TOO_MANY_REDIRECTS:
        return false;
    default:
        return true;
    }
}

static void
on_fetched(struct eu_fetch_resp *resp, void *arg)
{
    struct run *r = arg;
    r->f = NULL;
    /* What is left ends by itself (CPU work, a statement): the drain waits. */
    eu_job_on_abandon(r->job, NULL, NULL);
    if (resp->error != EU_FETCH_OK || resp->status < 200 || resp->status > 299) {
        char why[300];
        if (resp->error != EU_FETCH_OK)
            snprintf(why, sizeof(why), "%s: %s", eu_fetch_error_str(resp->error),
                     resp->message ? resp->message : "");
        else
            snprintf(why, sizeof(why), "HTTP %ld", resp->status);
        if (retryable(resp)) {
            char msg[400];
            snprintf(msg, sizeof(msg), "fetching emoji %s: %s", r->id, why);
            run_finish(r, msg);
        } else {
            give_up(r, why);
        }
        return;
    }
    r->body = eu_fetch_resp_take_body(resp, &r->len);
    if (!eu_emoji_image_acceptable((const unsigned char *)r->body, r->len)) {
        give_up(r, "not a PNG, GIF or WebP image");
        return;
    }
    struct eu_tenant *t = eu_job_tenant(r->job);
    r->e = eu_emoji_image_new(eu_job_app(r->job), t->id, (const unsigned char *)r->body, r->len,
                              on_stored, r);
    eu_emoji_image_start(r->e);
}

static void
on_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        run_finish(r, "cannot read the emoji");
        return;
    }
    if (PQntuples(res) == 0) {
        run_finish(r, NULL); /* gone, or another URL queued its own job */
        return;
    }
    struct eu_app *app = eu_job_app(r->job);
    struct eu_tenant *t = eu_job_tenant(r->job);
    /* The fetch needs no connection: the tenant's other media jobs go on. */
    bool detached = eu_job_detach(r->job);
    char *ua = eu_xasprintf("%s://%s/", app->cfg->scheme, t->domain);
    const char *headers[] = {"Accept: image/png, image/gif, image/webp, image/*;q=0.5", NULL};
    struct eu_fetch_req req = {
        .method = EU_FETCH_GET,
        .url = r->url,
        .headers = headers,
        .owner = (uint64_t)t->id,
        .max_redirects = FETCH_REDIRECTS,
        .max_bytes = EU_EMOJI_FILE_LIMIT,
        .timeout_ms = FETCH_TIMEOUT_MS,
        .ua_base = ua,
    };
    r->f = eu_fetch_start(app->fetch, &req, on_fetched, r);
    if (detached && r->f)
        eu_job_on_abandon(r->job, on_abandon, r);
    free(ua);
}

void
eu_emoji_fetch_run(struct eu_job *job)
{
    json_t *payload = eu_job_payload(job);
    const char *id = json_string_value(json_object_get(payload, "id"));
    const char *url = json_string_value(json_object_get(payload, "url"));
    if (!id || !url) {
        eu_job_done(job, "payload without id or url");
        return;
    }
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    r->id = eu_xstrdup(id);
    r->url = eu_xstrdup(url);
    const char *p[] = {r->id, r->url};
    eu_job_stmt(job, &eu_emoji_fetch_sql[EMOJI_FETCH_LOAD], 2, p, on_row, r);
}
