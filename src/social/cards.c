/*
 * The "preview_card" job (include/eunha/cards.h, docs/cards.md): a
 * status's first link made into a preview card, as Mastodon's
 * LinkCrawlWorker and FetchLinkCardService do.
 *
 * Steps, each ending the job quietly when there is nothing to do:
 *   1. the status (not deleted, no media, no poll, no card yet) and its
 *      first eligible link (eu_card_first_link()); an edited status
 *      (payload "edited") may have a card, which its new link replaces,
 *      and loses it when it has no link left;
 *   2. the tenant's card for that URL, attached at once when there is one;
 *      nothing for a host the tenant refuses to federate with;
 *   3. the page, through the shared outbound client (its private-address
 *      guard, per-host limits, and our 1 MB and 10 s caps), read on the
 *      CPU pool (eu_card_page_parse()); a page that asks not to be indexed
 *      gets no card;
 *   4. oEmbed when the page names an endpoint (link, photo and video as
 *      Mastodon takes them; rich ones fall back to the page's tags), else
 *      OpenGraph and Twitter tags;
 *   5. the image, unless the tenant rejects media from its host: fetched,
 *      decoded on the CPU pool, kept as a WebP of at most 640 pixels a side
 *      with its blurhash, stored under the tenant's files;
 *   6. one statement that keeps the card (once per URL: a card another job
 *      kept first wins), charges the image to the tenant's media quota only
 *      when it fits (else the card is kept without it), attaches the card
 *      and touches the status row, whose new version is what makes the
 *      render cache (src/social/render_cache.c) build the status again;
 *      streams that showed the status get it again as "status.update".
 *
 * A remote failure (no answer, refused address, too big, too slow, not
 * HTML, not 200) ends the job with no card and no retry, as Mastodon's
 * worker has none; only a database failure is retried by the queue.
 */
#include "eunha/cards.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/domainblock.h"
#include "eunha/fetch.h"
#include "eunha/isotime.h"
#include "eunha/log.h"
#include "eunha/media.h"
#include "eunha/mediaapi.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "eunha/trends.h"

#define FETCH_TIMEOUT_MS 10000
#define FETCH_REDIRECTS 3
/* The stored image's box, as Mastodon's 640x640 card images. */
#define IMAGE_SIDE 640

const struct eu_sql eu_cards_sql[] = {
    /* $2 the status: its content, whether it may have a card (no media,
     * no poll: Mastodon shows those instead) and whether it has one. */
    [EU_CARDS_LOAD] = {"cards.load",
                       "SELECT s.content, s.has_poll OR EXISTS (SELECT 1 FROM media_attachments m"
                       "  WHERE m.tenant_id = $1 AND m.status_id = s.id) AS skip,"
                       " EXISTS (SELECT 1 FROM preview_cards_statuses p WHERE p.tenant_id = $1"
                       "  AND p.status_id = s.id) AS has_card"
                       " FROM statuses s WHERE s.tenant_id = $1 AND s.id = $2::bigint"
                       " AND s.deleted_at IS NULL AND s.reblog_of_id IS NULL"},
    /* $2 the link, $3 its host: the tenant's card for it, and whether the
     * tenant refuses the host. */
    [EU_CARDS_FIND] = {"cards.find",
                       "SELECT (SELECT c.id::text FROM preview_cards c WHERE c.tenant_id = $1"
                       " AND c.url = $2) AS card_id, " EU_DOMAIN_REFUSED("$3") " AS refused"},
    /* $2 an image's host: false when the tenant rejects its media. */
    [EU_CARDS_MEDIA_OK] = {"cards.media_ok",
                           "SELECT NOT EXISTS (SELECT 1 FROM domain_blocks b WHERE b.tenant_id = $1"
                           " AND b.domain = ANY(eunha_domain_suffixes($2))"
                           " AND (b.reject_media OR b.severity = 'suspend')) AS ok"},
    /* $2 the status, $3 the card: attached, or replacing an edited
     * status's card. */
    [EU_CARDS_ATTACH] =
        {"cards.attach",
         "WITH l AS (INSERT INTO preview_cards_statuses (tenant_id, status_id, preview_card_id)"
         "  SELECT $1, s.id, $3::bigint FROM statuses s WHERE s.tenant_id = $1"
         "  AND s.id = $2::bigint AND s.deleted_at IS NULL"
         "  ON CONFLICT (tenant_id, status_id) DO UPDATE"
         "  SET preview_card_id = excluded.preview_card_id"
         "  WHERE preview_cards_statuses.preview_card_id <> excluded.preview_card_id"
         "  RETURNING status_id)"
         " UPDATE statuses SET updated_at = now() WHERE tenant_id = $1"
         " AND id IN (SELECT status_id FROM l) RETURNING id::text"},
    /*
     * $2 the status, $3 the card's URL, $4 its host, $5..$17 its fields,
     * $18 the image's key (or NULL), $19 its bytes, $20 its description,
     * $21 its blurhash, $22 the tenant's quota (0: none). The image is
     * kept only when it fits the quota, with the counter row locked as
     * uploads lock it. Answers the key kept (NULL: the caller deletes its
     * file) and whether the status took the card.
     */
    [EU_CARDS_SAVE] =
        {"cards.save",
         "WITH q AS (SELECT $18::text IS NOT NULL AND ($22::bigint = 0"
         "  OR coalesce((SELECT c.media_bytes FROM instance_counters c WHERE c.tenant_id = $1"
         "  FOR UPDATE), 0) + $19::bigint <= $22::bigint) AS fits),"
         " ins AS (INSERT INTO preview_cards (tenant_id, url, domain, type, title, description,"
         "  author_name, author_url, provider_name, provider_url, html, width, height,"
         "  embed_url, language, published_at, image_key, image_size, image_description,"
         "  blurhash)"
         "  SELECT $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::int, $14::int, $15, $16,"
         "  $17::timestamptz, CASE WHEN q.fits THEN $18 END,"
         "  CASE WHEN q.fits THEN $19::bigint ELSE 0 END, $20, CASE WHEN q.fits THEN $21 END"
         "  FROM q ON CONFLICT (tenant_id, url) DO NOTHING RETURNING id, image_key, image_size),"
         " ch AS (INSERT INTO instance_counters (tenant_id, media_bytes)"
         "  SELECT $1, ins.image_size FROM ins WHERE ins.image_size > 0"
         "  ON CONFLICT (tenant_id) DO UPDATE"
         "  SET media_bytes = instance_counters.media_bytes + excluded.media_bytes),"
         " card AS (SELECT ins.id FROM ins UNION ALL SELECT o.id FROM preview_cards o"
         "  WHERE o.tenant_id = $1 AND o.url = $3 AND NOT EXISTS (SELECT 1 FROM ins)),"
         " l AS (INSERT INTO preview_cards_statuses (tenant_id, status_id, preview_card_id)"
         "  SELECT $1, s.id, card.id FROM card, statuses s WHERE s.tenant_id = $1"
         "  AND s.id = $2::bigint AND s.deleted_at IS NULL"
         "  ON CONFLICT (tenant_id, status_id) DO UPDATE"
         "  SET preview_card_id = excluded.preview_card_id"
         "  WHERE preview_cards_statuses.preview_card_id <> excluded.preview_card_id"
         "  RETURNING status_id),"
         " up AS (UPDATE statuses SET updated_at = now() WHERE tenant_id = $1"
         "  AND id IN (SELECT status_id FROM l) RETURNING id),"
         /* Its publisher, for the staff's review of trending links. */
         " pv AS (INSERT INTO preview_card_providers (tenant_id, domain) SELECT $1, $4"
         "  FROM ins ON CONFLICT (tenant_id, domain) DO NOTHING)"
         " SELECT (SELECT ins.image_key FROM ins) AS kept_key,"
         " (SELECT count(*) FROM up) AS attached"},
    /* $2 the status, $3 the viewer (0: anonymous): its card, when the
     * viewer may see the status (GET /api/v1/statuses/:id/card). */
    [EU_CARDS_STATUS_CARD] =
        {"cards.status_card",
         "SELECT (SELECT eunha_card_json(c)::text FROM preview_cards_statuses p"
         "  JOIN preview_cards c ON c.tenant_id = $1 AND c.id = p.preview_card_id"
         "  WHERE p.tenant_id = $1 AND p.status_id = s.id) AS card"
         " FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         " CROSS JOIN LATERAL eunha_is_in_audience($1, s.id, s.account_id, s.visibility,"
         "  $3::bigint) au"
         " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND s.deleted_at IS NULL"
         " AND a.suspended_at IS NULL AND au.ok"},
    /* $2 an edited status that no longer has a link for a card. */
    [EU_CARDS_DETACH] = {"cards.detach",
                         "WITH l AS (DELETE FROM preview_cards_statuses WHERE tenant_id = $1"
                         "  AND status_id = $2::bigint RETURNING status_id)"
                         " UPDATE statuses SET updated_at = now() WHERE tenant_id = $1"
                         " AND id IN (SELECT status_id FROM l) RETURNING id::text"},
    {0},
};

/* ------------------------------------------------------------ the entity */

json_t *
eu_card_json(struct eu_app *app, const char *base_url, const char *text)
{
    json_t *c = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(c)) {
        json_decref(c);
        return NULL;
    }
    const char *key = json_string_value(json_object_get(c, "image_key"));
    char *url = key && app->store ? eu_store_url(app->store, base_url, key) : NULL;
    json_object_set_new(c, "image", url ? json_string(url) : json_null());
    free(url);
    json_object_del(c, "image_key");
    json_object_del(c, "id");
    json_object_del(c, "domain");
    /* Mastodon 4.3's authors: the author the page names, with no account
     * (no fediverse:creator is read). */
    json_t *authors = json_array();
    const char *an = json_string_value(json_object_get(c, "author_name"));
    if (an && *an)
        json_array_append_new(authors, json_pack("{s:s, s:O, s:n}", "name", an, "url",
                                                 json_object_get(c, "author_url"), "account"));
    json_object_set_new(c, "authors", authors);
    return c;
}

/* ------------------------------------------------------------ queueing */

bool
eu_card_candidate(const char *content)
{
    return content && (strstr(content, "href=\"http://") || strstr(content, "href=\"https://"));
}

void
eu_card_enqueue(struct eu_app *app, struct eu_tenant *t, const char *status_id, bool edited)
{
    if (!status_id)
        return;
    json_t *p = json_pack("{s:s}", "status_id", status_id);
    if (edited)
        json_object_set_new(p, "edited", json_true());
    char *payload = json_dumps(p, JSON_COMPACT);
    /* An edit's job is its own: a job of the first version still waiting
     * must not swallow it. */
    char *key = edited ? NULL : eu_xasprintf("preview_card:%s", status_id);
    eu_queue_enqueue(app, t, "preview_card", payload, 0, key, NULL, NULL);
    free(key);
    free(payload);
    json_decref(p);
}

/* ------------------------------------------------------------ the job */

struct run {
    struct eu_job *job;
    struct eu_fetch *f; /* while fetching */
    char *status_id;
    bool edited;
    char *link, *host;
    char *page_url; /* where the page came from, after redirects */
    char *body;
    size_t len;
    int parse_rc;
    struct eu_card_page page;
    /* the card */
    const char *type;
    char *title, *description, *author_name, *author_url, *provider_name, *provider_url;
    char *html, *embed_url, *image_url, *image_alt;
    int width, height;
    /* its image */
    struct eu_image_result img;
    int img_rc;
    char err[256];
    char *image_key;
};

static void
run_free(struct run *r)
{
    eu_card_page_free(&r->page);
    eu_image_result_free(&r->img);
    char *all[] = {r->status_id,  r->link,          r->host,         r->page_url,
                   r->body,       r->title,         r->description,  r->author_name,
                   r->author_url, r->provider_name, r->provider_url, r->html,
                   r->embed_url,  r->image_url,     r->image_alt,    r->image_key};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
    free(r);
}

static void
run_finish(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    run_free(r);
    eu_job_done(job, error);
}

/* The page or its server gave no card: done, not retried. */
static void
give_up(struct run *r, const char *why)
{
    eu_log_info("cards", "no card for status %s (%s): %s", r->status_id,
                r->link ? r->link : "no link", why);
    run_finish(r, NULL);
}

static void
on_abandon(void *arg)
{
    struct run *r = arg;
    eu_fetch_cancel(r->f);
    run_free(r);
}

/* Starts a GET through the shared client; cb runs later. */
static void
fetch(struct run *r, const char *url, const char *accept, size_t max_bytes, eu_fetch_cb cb)
{
    struct eu_app *app = eu_job_app(r->job);
    struct eu_tenant *t = eu_job_tenant(r->job);
    char *ua = eu_xasprintf("%s://%s/", app->cfg->scheme, t->domain);
    char *accept_line = eu_xasprintf("Accept: %s", accept);
    const char *headers[] = {accept_line, NULL};
    struct eu_fetch_req req = {
        .method = EU_FETCH_GET,
        .url = url,
        .headers = headers,
        .owner = (uint64_t)t->id,
        .max_redirects = FETCH_REDIRECTS,
        .max_bytes = max_bytes,
        .timeout_ms = FETCH_TIMEOUT_MS,
        .ua_base = ua,
    };
    r->f = eu_fetch_start(app->fetch, &req, cb, r);
    if (r->f && !eu_job_conn(r->job))
        eu_job_on_abandon(r->job, on_abandon, r);
    free(ua);
    free(accept_line);
}

/* Why a fetch gave nothing usable, or NULL when it gave a 200. */
static const char *
fetch_failed(struct run *r, const struct eu_fetch_resp *resp)
{
    r->f = NULL;
    /* What is left ends by itself (CPU work, a statement): the drain waits. */
    eu_job_on_abandon(r->job, NULL, NULL);
    if (resp->error != EU_FETCH_OK) {
        snprintf(r->err, sizeof(r->err), "%s: %s", eu_fetch_error_str(resp->error),
                 resp->message ? resp->message : "");
        return r->err;
    }
    if (resp->status != 200) {
        snprintf(r->err, sizeof(r->err), "HTTP %ld", resp->status);
        return r->err;
    }
    return NULL;
}

/* Whether a Content-Type names type (before any parameters). */
static bool
content_type_is(const char *ct, const char *type)
{
    size_t n = strlen(type);
    return ct && strncasecmp(ct, type, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static void
set(char **field, const char *value)
{
    free(*field);
    *field = value && *value ? eu_xstrdup(value) : NULL;
}

/* ------------------------------------------------------------ saving */

/* The status's card changed after it was stored: streams that showed it
 * get it again ("status.update", as an edit is sent). */
static void
announce(struct run *r)
{
    eu_stream_status_edited(eu_job_app(r->job), eu_job_tenant(r->job),
                            strtoll(r->status_id, NULL, 10));
    /* A link may trend now (src/social/trends_task.c). */
    eu_trends_touch(eu_job_app(r->job), eu_job_tenant(r->job));
}

static void
on_saved(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    struct eu_app *app = eu_job_app(r->job);
    if (st != EU_DB_OK) {
        if (r->image_key)
            eu_store_del(app->store, r->image_key, NULL, NULL);
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot keep the card of status %s: %s", r->status_id,
                 res ? PQresultErrorMessage(res) : "database unavailable");
        run_finish(r, msg);
        return;
    }
    if (r->image_key && PQgetisnull(res, 0, 0))
        eu_store_del(app->store, r->image_key, NULL, NULL);
    if (strcmp(PQgetvalue(res, 0, 1), "0") != 0)
        announce(r);
    run_finish(r, NULL);
}

/* A page's article:published_time as our own ISO 8601 text into out, or
 * NULL: only a time we parsed reaches the statement, since a value
 * PostgreSQL refused (or read as "now" or "epoch") would fail the job into
 * retries that fetch the page again. */
static const char *
published(const char *s, char out[EU_ISOTIME_SIZE])
{
    int64_t ms;
    if (!s || eu_time_parse_iso8601(s, &ms) != 0)
        return NULL;
    eu_time_format_iso8601(ms, out);
    return out;
}

static void
save(struct run *r)
{
    struct eu_app *app = eu_job_app(r->job);
    struct eu_tenant *t = eu_job_tenant(r->job);
    const char *url = r->page.canonical ? r->page.canonical : r->page_url;
    if (strlen(url) > 2048) {
        /* Past what the URL index takes (and no link anyone reads). */
        if (r->image_key)
            eu_store_del(app->store, r->image_key, NULL, NULL);
        give_up(r, "the page's URL is too long");
        return;
    }
    char host[300];
    if (eu_fetch_host_of(url, host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "%s", r->host);
    char width[16], height[16], size[24], quota[24], when[EU_ISOTIME_SIZE];
    bool img = r->image_key != NULL;
    snprintf(width, sizeof(width), "%d",
             img && !strcmp(r->type, "link") ? r->img.small_width : r->width);
    snprintf(height, sizeof(height), "%d",
             img && !strcmp(r->type, "link") ? r->img.small_height : r->height);
    snprintf(size, sizeof(size), "%zu", img ? r->img.small_len : 0);
    snprintf(quota, sizeof(quota), "%lld", eu_media_quota(app->cfg, t));
    const char *p[] = {
        r->status_id,
        url,
        host,
        r->type,
        r->title ? r->title : "",
        r->description ? r->description : "",
        r->author_name ? r->author_name : "",
        r->author_url ? r->author_url : "",
        r->provider_name ? r->provider_name : "",
        r->provider_url ? r->provider_url : "",
        r->html ? r->html : "",
        width,
        height,
        r->embed_url ? r->embed_url : "",
        r->page.language,
        published(r->page.published, when),
        r->image_key,
        size,
        r->image_alt ? r->image_alt : "",
        img ? r->img.blurhash : NULL,
        quota,
    };
    eu_job_stmt(r->job, &eu_cards_sql[EU_CARDS_SAVE], 21, p, on_saved, r);
}

/* ------------------------------------------------------------ the image */

static void
on_image_stored(int rc, void *arg)
{
    struct run *r = arg;
    if (rc != 0) {
        free(r->image_key);
        r->image_key = NULL;
    }
    save(r);
}

/* On a pool thread. */
static void
image_work(void *arg)
{
    struct run *r = arg;
    struct eu_image_limits lim = eu_media_image_limits(eu_job_app(r->job)->cfg, IMAGE_SIDE);
    r->img_rc = eu_image_process((const unsigned char *)r->body, r->len, &lim, &r->img, r->err,
                                 sizeof(r->err));
}

static void
image_done(void *arg)
{
    struct run *r = arg;
    struct eu_app *app = eu_job_app(r->job);
    free(r->body);
    r->body = NULL;
    if (r->img_rc != 0 || !app->store || !r->img.small) {
        save(r);
        return;
    }
    uint32_t r1 = randombytes_random(), r2 = randombytes_random();
    r->image_key = eu_xasprintf("%lld/preview_cards/%08x%08x/original.webp",
                                (long long)eu_job_tenant(r->job)->id, r1, r2);
    eu_store_put(app->store, r->image_key, r->img.small, r->img.small_len, "image/webp",
                 on_image_stored, r);
}

static void
on_image(struct eu_fetch_resp *resp, void *arg)
{
    struct run *r = arg;
    const char *why = fetch_failed(r, resp);
    if (why) {
        eu_log_info("cards", "no image for the card of %s: %s", r->link, why);
        save(r);
        return;
    }
    r->body = eu_fetch_resp_take_body(resp, &r->len);
    struct eu_media_sniff sn;
    if (eu_media_sniff((const unsigned char *)r->body, r->len, &sn) != 0 ||
        (sn.type != EU_MEDIA_TYPE_IMAGE && sn.type != EU_MEDIA_TYPE_GIFV)) {
        free(r->body);
        r->body = NULL;
        save(r);
        return;
    }
    eu_cpupool_submit_for(eu_job_app(r->job)->cpu, eu_job_tenant(r->job)->id, image_work,
                          image_done, r);
}

static void
on_media_ok(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        run_finish(r, "cannot read the tenant's media rules");
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] != 't') {
        save(r);
        return;
    }
    fetch(r, r->image_url, "image/png, image/jpeg, image/gif, image/webp, image/*;q=0.5",
          EU_CARD_IMAGE_LIMIT, on_image);
}

/* The card is read: its image, then the row. */
static void
card_read(struct run *r)
{
    if (!r->title && !r->html) {
        give_up(r, "the page has no title");
        return;
    }
    char host[300];
    if (!r->image_url || eu_fetch_host_of(r->image_url, host, sizeof(host)) < 0) {
        save(r);
        return;
    }
    const char *p[] = {host};
    eu_job_stmt(r->job, &eu_cards_sql[EU_CARDS_MEDIA_OK], 1, p, on_media_ok, r);
}

/* ------------------------------------------------------------ the page */

static void
from_page(struct run *r)
{
    const struct eu_card_page *pg = &r->page;
    if (pg->player) {
        r->type = "video";
        r->width = pg->player_w;
        r->height = pg->player_h;
        char *esc = eu_xstrdup(pg->player);
        /* The URL went through libcurl's parser: no quote or angle bracket
         * survives unescaped, but escape anyway. */
        for (char *c = esc; *c; c++)
            if (*c == '"' || *c == '<' || *c == '>')
                *c = '_';
        r->html = eu_xasprintf("<iframe src=\"%s\" width=\"%d\" height=\"%d\" "
                               "allowfullscreen=\"true\" allowtransparency=\"true\" "
                               "scrolling=\"no\" frameborder=\"0\"></iframe>",
                               esc, r->width, r->height);
        free(esc);
    } else {
        r->type = "link";
    }
    set(&r->title, pg->title);
    set(&r->description, pg->description);
    set(&r->provider_name, pg->site_name);
    set(&r->author_name, pg->author);
    set(&r->image_url, pg->image);
    set(&r->image_alt, pg->image_alt);
}

/* oEmbed's answer as Mastodon reads it; false to fall back to the page. */
static bool
from_oembed(struct run *r, json_t *e, const char *endpoint)
{
    const char *type = json_string_value(json_object_get(e, "type"));
    if (!type)
        return false;
#define S(k) json_string_value(json_object_get(e, k))
    long long w = json_integer_value(json_object_get(e, "width"));
    long long h = json_integer_value(json_object_get(e, "height"));
    if (strcmp(type, "link") == 0) {
        r->type = "link";
    } else if (strcmp(type, "photo") == 0) {
        if (!S("url"))
            return false;
        r->type = "photo";
    } else if (strcmp(type, "video") == 0) {
        r->type = "video";
        r->html = eu_card_oembed_html(S("html"));
        if (!r->html)
            return false;
    } else {
        return false; /* rich: most rely on scripts, as Mastodon says */
    }
    (void)endpoint;
    set(&r->title, S("title"));
    set(&r->author_name, S("author_name"));
    set(&r->author_url, S("author_url"));
    set(&r->provider_name, S("provider_name"));
    set(&r->provider_url, S("provider_url"));
    if (strcmp(r->type, "link") != 0) {
        r->width = w > 0 && w < 100000 ? (int)w : 0;
        r->height = h > 0 && h < 100000 ? (int)h : 0;
    }
    if (strcmp(r->type, "photo") == 0) {
        set(&r->embed_url, S("url"));
        set(&r->image_url, S("url"));
    } else {
        set(&r->image_url, S("thumbnail_url"));
    }
#undef S
    return true;
}

static void
on_oembed(struct eu_fetch_resp *resp, void *arg)
{
    struct run *r = arg;
    const char *why = fetch_failed(r, resp);
    json_t *e = NULL;
    if (!why && resp->body_len <= EU_CARD_OEMBED_LIMIT)
        e = json_loadb(resp->body, resp->body_len, 0, NULL);
    /* Only http(s) URLs may come out of an oEmbed answer. */
    bool ok = json_is_object(e) && from_oembed(r, e, r->page.oembed);
    json_decref(e);
    if (ok) {
        char **urls[] = {&r->author_url, &r->provider_url, &r->embed_url, &r->image_url};
        for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
            if (*urls[i] && strncmp(*urls[i], "https://", 8) != 0 &&
                strncmp(*urls[i], "http://", 7) != 0)
                set(urls[i], NULL);
        card_read(r);
        return;
    }
    from_page(r);
    card_read(r);
}

/* On a pool thread. */
static void
parse_work(void *arg)
{
    struct run *r = arg;
    r->parse_rc = eu_card_page_parse(r->body, r->len, r->page_url, &r->page);
}

static void
parse_done(void *arg)
{
    struct run *r = arg;
    free(r->body);
    r->body = NULL;
    if (r->parse_rc != 0) {
        give_up(r, "the page could not be read");
        return;
    }
    if (r->page.noindex) {
        give_up(r, "the page asks not to be indexed");
        return;
    }
    if (r->page.oembed) {
        fetch(r, r->page.oembed, "application/json", EU_CARD_OEMBED_LIMIT, on_oembed);
        return;
    }
    from_page(r);
    card_read(r);
}

static void
on_page(struct eu_fetch_resp *resp, void *arg)
{
    struct run *r = arg;
    const char *why = fetch_failed(r, resp);
    if (why) {
        give_up(r, why);
        return;
    }
    if (!content_type_is(resp->content_type, "text/html")) {
        give_up(r, "not an HTML page");
        return;
    }
    r->page_url = eu_xstrdup(resp->effective_url ? resp->effective_url : r->link);
    r->body = eu_fetch_resp_take_body(resp, &r->len);
    eu_cpupool_submit_for(eu_job_app(r->job)->cpu, eu_job_tenant(r->job)->id, parse_work,
                          parse_done, r);
}

static void
on_attached(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st == EU_DB_OK && PQntuples(res) > 0)
        announce(r);
    run_finish(r, st == EU_DB_OK ? NULL : "cannot attach the card");
}

static void
on_found(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        run_finish(r, "cannot look the card up");
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] == 't') {
        give_up(r, "the tenant refuses the host");
        return;
    }
    if (!PQgetisnull(res, 0, 0)) {
        const char *p[] = {r->status_id, PQgetvalue(res, 0, 0)};
        eu_job_stmt(r->job, &eu_cards_sql[EU_CARDS_ATTACH], 2, p, on_attached, r);
        return;
    }
    /* The fetches need no connection: the tenant's other jobs go on. */
    eu_job_detach(r->job);
    fetch(r, r->link, "text/html", EU_CARD_PAGE_LIMIT, on_page);
}

static void
on_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        run_finish(r, "cannot read the status");
        return;
    }
    if (PQntuples(res) == 0 || (!r->edited && PQgetvalue(res, 0, 2)[0] == 't')) {
        run_finish(r, NULL);
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] != 't')
        r->link = eu_card_first_link(PQgetvalue(res, 0, 0), eu_job_tenant(r->job)->domain);
    char host[300];
    if (!r->link || strlen(r->link) > 2048 || eu_fetch_host_of(r->link, host, sizeof(host)) < 0) {
        if (r->edited && PQgetvalue(res, 0, 2)[0] == 't') {
            /* Edited to no link (or to media or a poll): no card. */
            const char *p[] = {r->status_id};
            eu_job_stmt(r->job, &eu_cards_sql[EU_CARDS_DETACH], 1, p, on_attached, r);
            return;
        }
        run_finish(r, NULL);
        return;
    }
    r->host = eu_xstrdup(host);
    const char *p[] = {r->link, r->host};
    eu_job_stmt(r->job, &eu_cards_sql[EU_CARDS_FIND], 2, p, on_found, r);
}

void
eu_card_run(struct eu_job *job)
{
    const char *id = json_string_value(json_object_get(eu_job_payload(job), "status_id"));
    if (!id || !*id || strspn(id, "0123456789") != strlen(id) || strlen(id) > 18) {
        eu_job_done(job, NULL); /* nothing to do with it, and nothing to retry */
        return;
    }
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    r->status_id = eu_xstrdup(id);
    r->edited = json_is_true(json_object_get(eu_job_payload(job), "edited"));
    const char *p[] = {r->status_id};
    eu_job_stmt(job, &eu_cards_sql[EU_CARDS_LOAD], 1, p, on_loaded, r);
}
