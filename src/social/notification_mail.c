/*
 * The "notification_mail" job: one notification told by mail, as
 * Mastodon's NotificationMailer does for the kinds a user chose (tenant
 * migration 0062: follows, follow requests and mentions by default;
 * boosts and favourites when turned on). The notification's statement
 * (src/social/notify.c) queued it when [mail] is set; here one statement
 * checks the user still wants it (confirmed, the kind still on), gives the
 * user an unsubscribe token on the first such mail, and reads what the
 * mail says; the message itself is queued as a "mail" job
 * (eunha/mailer.h), which sends and retries.
 *
 * Each mail carries a one-click List-Unsubscribe link for its kind
 * (RFC 8058, served by src/api/notification_mail_prefs.c), so a reader
 * can stop them without signing in.
 */
#include "eunha/notify.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/log.h"
#include "eunha/mailer.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* How much of a post a mail quotes. */
#define QUOTE_CHARS 500

enum {
    NM_LOAD,
};

const struct eu_sql eu_notification_mail_sql[] = {
    /* $2 the notification, $3 a new unsubscribe token (kept only when the
     * user has none). No row when the user no longer wants it. */
    [NM_LOAD] = {"notification_mail.load",
                 "WITH n AS (SELECT n.account_id, n.from_account_id, n.type, n.status_id"
                 "  FROM notifications n WHERE n.tenant_id = $1 AND n.id = $2::bigint),"
                 " u AS (UPDATE users SET unsubscribe_token = coalesce(unsubscribe_token, $3)"
                 "  FROM n WHERE users.tenant_id = $1 AND users.account_id = n.account_id"
                 "  AND users.confirmed_at IS NOT NULL"
                 "  AND (users.notification_emails ->> n.type) = 'true'"
                 "  RETURNING users.email, users.unsubscribe_token)"
                 " SELECT n.type, u.email, u.unsubscribe_token, fa.username, fa.domain,"
                 " coalesce(nullif(fa.display_name, ''), fa.username), s.id::text,"
                 " coalesce(nullif(s.text, ''), s.content, ''), s.local, coalesce(s.url, s.uri),"
                 " ra.username"
                 " FROM n CROSS JOIN u"
                 " JOIN accounts fa ON fa.tenant_id = $1 AND fa.id = n.from_account_id"
                 " JOIN accounts ra ON ra.tenant_id = $1 AND ra.id = n.account_id"
                 " LEFT JOIN statuses s ON s.tenant_id = $1 AND s.id = n.status_id"
                 "  AND s.deleted_at IS NULL"},
    {0},
};

/* A post's text for a mail: a remote one's HTML without its tags, cut to
 * QUOTE_CHARS characters (arena). */
static const char *
quote(struct eu_arena *a, const char *text)
{
    char *out = eu_arena_alloc(a, strlen(text) + 4), *o = out;
    size_t chars = 0;
    bool in_tag = false;
    for (const char *p = text; *p && chars < QUOTE_CHARS; p++) {
        if (*p == '<') {
            if (strncmp(p, "</p>", 4) == 0 || strncmp(p, "<br", 3) == 0)
                *o++ = '\n';
            in_tag = true;
        } else if (*p == '>' && in_tag) {
            in_tag = false;
        } else if (!in_tag) {
            *o++ = *p;
            if (((unsigned char)*p & 0xC0) != 0x80)
                chars++;
        }
    }
    if (chars >= QUOTE_CHARS)
        o += sprintf(o, "...");
    *o = '\0';
    return out;
}

/* Mastodon's subjects (notification_mailer in its en.yml). */
static const char *
subject_of(struct eu_arena *a, const char *type, const char *name)
{
    if (strcmp(type, "mention") == 0)
        return eu_arena_sprintf(a, "You were mentioned by %s", name);
    if (strcmp(type, "follow") == 0)
        return eu_arena_sprintf(a, "%s is now following you", name);
    if (strcmp(type, "follow_request") == 0)
        return eu_arena_sprintf(a, "Pending follower: %s", name);
    if (strcmp(type, "reblog") == 0)
        return eu_arena_sprintf(a, "%s boosted your post", name);
    if (strcmp(type, "favourite") == 0)
        return eu_arena_sprintf(a, "%s favorited your post", name);
    return NULL;
}

struct run {
    struct eu_job *job;
    char token[65];
};

static void
on_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    struct eu_job *job = r->job;
    free(r);
    if (st != EU_DB_OK) {
        eu_job_done(job, "cannot read the notification");
        return;
    }
    if (PQntuples(res) != 1) {
        eu_job_done(job, NULL); /* gone, or no longer wanted by mail */
        return;
    }
    struct eu_app *app = eu_job_app(job);
    struct eu_tenant *t = eu_job_tenant(job);
    struct eu_arena *a = eu_arena_new();
    const char *type = PQgetvalue(res, 0, 0), *to = PQgetvalue(res, 0, 1);
    const char *utoken = PQgetvalue(res, 0, 2);
    const char *acct = PQgetisnull(res, 0, 4) ? PQgetvalue(res, 0, 3)
                                              : eu_arena_sprintf(a, "%s@%s", PQgetvalue(res, 0, 3),
                                                                 PQgetvalue(res, 0, 4));
    const char *name = PQgetvalue(res, 0, 5);
    const char *who = eu_arena_sprintf(a, "%s (@%s)", name, acct);
    const char *base = eu_arena_sprintf(a, "%s://%s", app->cfg->scheme, t->domain);
    const char *title = t->title && *t->title ? t->title : t->domain;
    const char *subject = subject_of(a, type, name);
    if (!subject) {
        eu_arena_free(a);
        eu_job_done(job, NULL);
        return;
    }
    /* Where the mail leads: the post, or the sender's profile. */
    const char *url, *post = "";
    if (!PQgetisnull(res, 0, 6)) {
        url = PQgetvalue(res, 0, 8)[0] == 't' || PQgetisnull(res, 0, 9)
                  ? eu_arena_sprintf(a, "%s/@%s/%s", base,
                                     PQgetvalue(res, 0, 8)[0] == 't' ? PQgetvalue(res, 0, 3)
                                                                     : PQgetvalue(res, 0, 10),
                                     PQgetvalue(res, 0, 6))
                  : PQgetvalue(res, 0, 9);
        post = quote(a, PQgetvalue(res, 0, 7));
    } else {
        url = eu_arena_sprintf(a, "%s/@%s", base, acct);
    }
    const char *unsubscribe =
        eu_arena_sprintf(a, "%s/unsubscribe?token=%s&type=%s", base, utoken, type);
    const char *text = eu_arena_sprintf(
        a,
        "%s\n\n%s%s%s\n\n-- \nYou get this mail because you chose e-mails about %s "
        "notifications on %s. To stop them: %s\nYour preferences: %s/settings/preferences/"
        "notifications\n",
        subject, *post ? post : "", *post ? "\n\n" : "", url, type, title, unsubscribe, base);
    const char *html = eu_arena_sprintf(
        a,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>"
        "<p><strong>%s</strong></p>%s%s%s<p><a href=\"%s\">%s</a></p><hr>"
        "<p>You get this mail because you chose e-mails about %s notifications on "
        "<a href=\"%s\">%s</a>. <a href=\"%s\">Stop these e-mails</a> or change "
        "<a href=\"%s/settings/preferences/notifications\">your preferences</a>.</p>"
        "</body></html>",
        eu_html_escape_in(a, who), *post ? "<blockquote>" : "", eu_html_escape_in(a, post),
        *post ? "</blockquote>" : "", eu_html_escape_in(a, url),
        *post ? "View the post" : "View the profile", eu_html_escape_in(a, type),
        eu_html_escape_in(a, base), eu_html_escape_in(a, title), eu_html_escape_in(a, unsubscribe),
        eu_html_escape_in(a, base));
    int rc = eu_mail_enqueue(app, t, to, subject, text, html, unsubscribe);
    eu_arena_free(a);
    /* A refused header (a name with a line break) is the mail's fault:
     * not retried. */
    if (rc < 0)
        eu_log_info("mail", "notification %s not mailed: a header was refused", eu_job_id(job));
    eu_job_done(job, NULL);
}

void
eu_notification_mail_run(struct eu_job *job)
{
    const char *nid = json_string_value(json_object_get(eu_job_payload(job), "notification_id"));
    if (!nid) {
        eu_job_done(job, "payload without notification_id");
        return;
    }
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    unsigned char raw[32];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2hex(r->token, sizeof r->token, raw, sizeof raw);
    const char *p[] = {nid, r->token};
    eu_job_stmt(job, &eu_notification_mail_sql[NM_LOAD], 2, p, on_loaded, r);
}
