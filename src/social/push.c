/*
 * The "web_push" job: one notification to one Web Push subscription, as
 * Mastodon's Web::PushNotificationWorker. The notification's statement
 * (src/social/notify.c) queued it with the subscription's and the
 * notification's ids, having applied the alerts and the policy; here one
 * statement reads what the message needs (both rows, the sender, the
 * status, the tenant's VAPID key), the payload is Mastodon's
 * Web::NotificationSerializer, and the encryption and signing
 * (eunha/webpush.h) run on the CPU pool. The POST goes through the shared
 * outbound client, so the private-address guard applies to endpoints.
 *
 * What the push service answers decides the rest, as in Mastodon: 2xx is
 * done; any other 4xx but 408 and 429 means the subscription is dead, and
 * it is deleted; the rest (5xx, 408, 429, no answer) retries with the
 * queue's backoff. A subscription or notification gone before the job ran
 * ends it quietly.
 */
#include "eunha/push.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/entities.h"
#include "eunha/fetch.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/secrets.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/webpush.h"

/* Mastodon's Web::PushNotificationWorker TTL (48 hours) and URGENCY. */
#define PUSH_TTL_S (48 * 3600)
#define PUSH_URGENCY "normal"
/* A push service's answer is a few bytes; nothing of it is read. */
#define RESPONSE_MAX 4096
/* Mastodon's body: truncate(..., length: 140). */
#define BODY_CHARS 140

enum {
    PUSH_LOAD,
    PUSH_GONE,
};

enum {
    L_ENDPOINT,
    L_P256DH,
    L_AUTH,
    L_STANDARD,
    L_TOKEN,
    L_LOCALE,
    L_TYPE,
    L_NID,
    L_USERNAME,
    L_DISPLAY_NAME,
    L_AVATAR,
    L_TEXT,
    L_VAPID_PUBLIC,
    L_VAPID_PRIVATE,
    L_CONTACT,
};

const struct eu_sql eu_push_deliver_sql[] = {
    /* $2 subscription, $3 notification. The body's source as Mastodon's
     * serializer picks it: the status's content warning, else its text,
     * else the sender's note; tags stripped here, entities in C. */
    [PUSH_LOAD] =
        {"push.load",
         "SELECT w.endpoint, w.key_p256dh, w.key_auth, w.standard, w.access_token,"
         " coalesce(u.locale, ''), n.type, n.id::text, fa.username, fa.display_name,"
         " fa.avatar_url,"
         " regexp_replace(coalesce(nullif(s.spoiler_text, ''), nullif(s.text, ''), s.content,"
         "  fa.note), '<[^>]*>', '', 'g'),"
         " k.public_key, k.private_key,"
         " (SELECT st.value #>> '{}' FROM settings st WHERE st.tenant_id = $1"
         "  AND st.key = 'contact_email')"
         " FROM web_push_subscriptions w"
         " JOIN notifications n ON n.tenant_id = $1 AND n.id = $3::bigint"
         "  AND n.account_id = w.account_id"
         " JOIN accounts fa ON fa.tenant_id = $1 AND fa.id = n.from_account_id"
         " JOIN users u ON u.tenant_id = $1 AND u.id = w.user_id"
         " JOIN web_push_keys k ON k.tenant_id = $1"
         " LEFT JOIN statuses s ON s.tenant_id = $1 AND s.id = n.status_id"
         " WHERE w.tenant_id = $1 AND w.id = $2::bigint"},
    [PUSH_GONE] = {"push.gone", "DELETE FROM web_push_subscriptions"
                                " WHERE tenant_id = $1 AND id = $2::bigint"},
    {0},
};

/* One job under way; heap-owned, freed by finish(). */
struct run {
    struct eu_job *job;
    struct eu_app *app;
    char sub_id[24];
    struct eu_webpush_target target; /* strings below are the run's */
    char *endpoint, *p256dh, *auth, *vapid_public, *vapid_private, *subject;
    char *payload;
    struct eu_webpush_msg msg;
    int rc;
    bool encrypting;
    bool abandoned;
    struct eu_fetch *f;
};

static void
run_free(struct run *r)
{
    eu_webpush_msg_clear(&r->msg);
    free(r->endpoint);
    free(r->p256dh);
    free(r->auth);
    free(r->vapid_public);
    if (r->vapid_private)
        memset(r->vapid_private, 0, strlen(r->vapid_private));
    free(r->vapid_private);
    free(r->subject);
    free(r->payload);
    free(r);
}

/* Ends the job: error NULL as done, else retried with the queue's backoff. */
static void
finish(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    run_free(r);
    eu_job_done(job, error);
}

/* ------------------------------------------------------------ the payload */

/* Title of Mastodon's notification_mailer.<type>.subject (English). */
static const char *
title_format(const char *type)
{
    static const struct {
        const char *type, *fmt;
    } titles[] = {
        {"mention", "You were mentioned by %s"},
        {"status", "%s just posted"},
        {"reblog", "%s boosted your post"},
        {"follow", "%s is now following you"},
        {"follow_request", "Pending follower: %s"},
        {"favourite", "%s favorited your post"},
        {"poll", "A poll by %s has ended"},
        {"update", "%s edited a post"},
        {"quote", "%s quoted your post"},
        {"quoted_update", "%s edited a post you have quoted"},
        {"admin.sign_up", "%s signed up"},
        {"admin.report", "%s submitted a report"},
    };
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
        if (strcmp(titles[i].type, type) == 0)
            return titles[i].fmt;
    return "New notification from %s";
}

/* The few entities tags leave behind, decoded in place (what Mastodon's
 * HTMLEntities.decode does for text written by our own formatter). */
static void
decode_entities(char *s)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'},  {"&lt;", '<'},   {"&gt;", '>'},
                {"&quot;", '"'}, {"&#39;", '\''}, {"&apos;", '\''}};
    char *o = s;
    for (const char *p = s; *p;) {
        bool hit = false;
        for (size_t i = 0; *p == '&' && i < sizeof ents / sizeof ents[0]; i++) {
            size_t n = strlen(ents[i].ent);
            if (strncmp(p, ents[i].ent, n) == 0) {
                *o++ = ents[i].c;
                p += n;
                hit = true;
                break;
            }
        }
        if (!hit)
            *o++ = *p++;
    }
    *o = '\0';
}

/* Rails' truncate(s, length: 140): past 140 characters, the first 137
 * and "...". In place; s must have room for 3 more bytes past the cut. */
static void
truncate_chars(char *s)
{
    size_t chars = 0, cut = 0;
    for (size_t i = 0; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) == 0x80)
            continue;
        if (chars == BODY_CHARS - 3)
            cut = i;
        if (++chars > BODY_CHARS) {
            memcpy(s + cut, "...", 4);
            return;
        }
    }
}

/* Mastodon's Web::NotificationSerializer, as JSON text (malloc'd). */
static char *
payload_json(struct run *r, PGresult *res)
{
    struct eu_tenant *t = eu_job_tenant(r->job);
    const struct eu_config *cfg = r->app->cfg;
    const char *display = PQgetvalue(res, 0, L_DISPLAY_NAME);
    const char *name = *display ? display : PQgetvalue(res, 0, L_USERNAME);
    char *title = eu_xasprintf(title_format(PQgetvalue(res, 0, L_TYPE)), name);
    char *body = eu_xasprintf("%s   ", PQgetvalue(res, 0, L_TEXT));
    body[strlen(body) - 3] = '\0';
    decode_entities(body);
    truncate_chars(body);
    char *base = eu_xasprintf("%s://%s", cfg->scheme, t->domain);
    char *icon = PQgetisnull(res, 0, L_AVATAR)
                     ? eu_xasprintf("%s/avatars/original/missing.png", base)
                     : eu_profile_image_url(r->app, base, PQgetvalue(res, 0, L_AVATAR));
    const char *locale = PQgetvalue(res, 0, L_LOCALE);
    /* The token is sealed in the row (src/api/push.c); older rows hold it
     * in clear, which eu_secret_open() passes through. */
    char *token = eu_secret_open(PQgetvalue(res, 0, L_TOKEN));
    json_t *o = !token ? NULL
                       : json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "access_token", token,
                                   "preferred_locale", *locale ? locale : "en", "notification_id",
                                   PQgetvalue(res, 0, L_NID), "notification_type",
                                   PQgetvalue(res, 0, L_TYPE), "icon", icon ? icon : "", "title",
                                   title, "body", body);
    if (!token)
        eu_log_warn("push",
                    "tenant %s: a push subscription's token cannot be opened with this"
                    " host's [secrets] key_file; nothing is sent until the app subscribes again",
                    t->domain);
    eu_secret_free(token);
    char *out = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    free(title);
    free(body);
    free(base);
    free(icon);
    return out;
}

/* ------------------------------------------------------------ the POST */

static void
on_gone(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        finish(r, res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    finish(r, NULL);
}

static void
on_sent(struct eu_fetch_resp *resp, void *arg)
{
    struct run *r = arg;
    r->f = NULL;
    eu_log_set_context(eu_job_tenant(r->job)->domain, NULL);
    if (resp->error == EU_FETCH_OK && resp->status >= 200 && resp->status < 300) {
        finish(r, NULL);
        return;
    }
    if (resp->error == EU_FETCH_OK && resp->status >= 400 && resp->status < 500 &&
        resp->status != 408 && resp->status != 429) {
        /* The push service no longer knows it: Mastodon destroys it. */
        eu_log_info("push", "subscription %s gone (HTTP %ld)", r->sub_id, resp->status);
        const char *p[] = {r->sub_id};
        eu_job_stmt(r->job, &eu_push_deliver_sql[PUSH_GONE], 1, p, on_gone, r);
        return;
    }
    if (resp->error == EU_FETCH_REFUSED_ADDRESS || resp->error == EU_FETCH_BAD_URL) {
        /* Trying again cannot help. */
        eu_log_info("push", "push to subscription %s dropped: %s", r->sub_id,
                    eu_fetch_error_str(resp->error));
        finish(r, NULL);
        return;
    }
    char msg[512];
    if (resp->error == EU_FETCH_OK)
        snprintf(msg, sizeof msg, "push service answered HTTP %ld", resp->status);
    else
        snprintf(msg, sizeof msg, "push failed: %s", resp->message ? resp->message : "?");
    finish(r, msg);
}

static void
encrypt_work(void *arg)
{
    struct run *r = arg;
    r->rc = eu_webpush_build(&r->target, (const unsigned char *)r->payload, strlen(r->payload),
                             &r->msg);
}

/* The process stops with the run detached (eu_queues_abandon()). */
static void
on_abandon(void *arg)
{
    struct run *r = arg;
    if (r->f) {
        eu_fetch_cancel(r->f);
        r->f = NULL;
    }
    r->job = NULL;
    if (r->encrypting)
        r->abandoned = true;
    else
        run_free(r);
}

static void
encrypt_done(void *arg)
{
    struct run *r = arg;
    r->encrypting = false;
    if (r->abandoned) {
        run_free(r);
        return;
    }
    if (r->rc < 0) {
        eu_log_warn("push", "cannot encrypt for subscription %s", r->sub_id);
        finish(r, NULL);
        return;
    }
    struct eu_tenant *t = eu_job_tenant(r->job);
    char *ua = eu_xasprintf("%s://%s/", r->app->cfg->scheme, t->domain);
    struct eu_fetch_req req = {
        .method = EU_FETCH_POST,
        .url = r->endpoint,
        .headers = (const char *const *)r->msg.headers,
        .body = (const char *)r->msg.body,
        .body_len = r->msg.body_len,
        .body_borrowed = true,
        .owner = (uint64_t)t->id,
        .max_redirects = 0,
        .max_bytes = RESPONSE_MAX,
        .ua_base = ua,
    };
    r->f = eu_fetch_start(r->app->fetch, &req, on_sent, r);
    free(ua);
}

static void
on_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        finish(r, res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    if (PQntuples(res) != 1) {
        /* The subscription, the notification or its sender went first. */
        finish(r, NULL);
        return;
    }
    r->endpoint = eu_xstrdup(PQgetvalue(res, 0, L_ENDPOINT));
    r->p256dh = eu_xstrdup(PQgetvalue(res, 0, L_P256DH));
    r->auth = eu_xstrdup(PQgetvalue(res, 0, L_AUTH));
    r->vapid_public = eu_xstrdup(PQgetvalue(res, 0, L_VAPID_PUBLIC));
    r->vapid_private = eu_xstrdup(PQgetvalue(res, 0, L_VAPID_PRIVATE));
    const char *contact = PQgetisnull(res, 0, L_CONTACT) ? "" : PQgetvalue(res, 0, L_CONTACT);
    /* Mastodon's sub is mailto: the contact address; without one, the
     * tenant's URL (RFC 8292 allows either). */
    r->subject = *contact
                     ? eu_xasprintf("mailto:%s", contact)
                     : eu_xasprintf("%s://%s/", r->app->cfg->scheme, eu_job_tenant(r->job)->domain);
    r->payload = payload_json(r, res);
    if (!r->payload) {
        finish(r, NULL);
        return;
    }
    r->target = (struct eu_webpush_target){
        .endpoint = r->endpoint,
        .p256dh = r->p256dh,
        .auth = r->auth,
        .encoding =
            PQgetvalue(res, 0, L_STANDARD)[0] == 't' ? EU_WEBPUSH_AES128GCM : EU_WEBPUSH_AESGCM,
        .vapid_private_pem = r->vapid_private,
        .vapid_public = r->vapid_public,
        .subject = r->subject,
        .now = (int64_t)time(NULL),
        .ttl = PUSH_TTL_S,
        .urgency = PUSH_URGENCY,
    };
    /* The encryption and the POST need no connection: the tenant's other
     * jobs go on meanwhile. */
    if (eu_job_detach(r->job))
        eu_job_on_abandon(r->job, on_abandon, r);
    r->encrypting = true;
    eu_cpupool_submit(r->app->cpu, encrypt_work, encrypt_done, r);
}

void
eu_push_deliver_run(struct eu_job *job)
{
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    r->app = eu_job_app(job);
    json_t *p = eu_job_payload(job);
    const char *sub = json_string_value(json_object_get(p, "subscription_id"));
    const char *nid = json_string_value(json_object_get(p, "notification_id"));
    if (!sub || !nid || strlen(sub) >= sizeof r->sub_id) {
        /* Nothing to retry: a payload no version of this code writes. */
        eu_log_warn("push", "web_push job %s: bad payload", eu_job_id(job));
        finish(r, NULL);
        return;
    }
    snprintf(r->sub_id, sizeof r->sub_id, "%s", sub);
    const char *params[] = {sub, nid};
    eu_job_stmt(job, &eu_push_deliver_sql[PUSH_LOAD], 2, params, on_loaded, r);
}
