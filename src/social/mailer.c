/*
 * A tenant's mail as durable jobs (include/eunha/mailer.h): eu_mail_enqueue()
 * stores the finished message (recipient, subject, both bodies) as a job of
 * kind "mail"; the job adds the tenant's name and contact address and
 * hands the message to the SMTP client (src/outbound/mail.c).
 *
 * A mail server that is down or slow delays mail and nothing else: the
 * request that caused the mail answered when the job was stored, and the
 * job is detached from the tenant's turn while it talks to the server, so
 * the tenant's other background work goes on. A failed send is retried
 * with the queue's backoff ([workers] job_backoff_*) and, after the last
 * attempt, stays dead with the server's answer for the admin API. Without
 * [mail] the message is written to the log at info and the job is done;
 * with [mail] confirm_without_mail = "operator" a sign-up's confirmation
 * link is in it, for the operator to pass on or to confirm the account
 * through the admin API (src/admin/accounts.c).
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/log.h"
#include "eunha/mail.h"
#include "eunha/mailer.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum {
    MAILER_CONTACT,
};

const struct eu_sql eu_mailer_sql[] = {
    /* The tenant's contact address (the instance description, settings
     * row 'instance', src/admin/instance.c), for Reply-To. */
    [MAILER_CONTACT] = {"mailer.contact",
                        "SELECT coalesce((SELECT value ->> 'contact_email' FROM settings"
                        " WHERE tenant_id = $1 AND key = 'instance'), '')"},
    {0},
};

int
eu_mail_enqueue(struct eu_app *app, struct eu_tenant *t, const char *to, const char *subject,
                const char *text, const char *html, const char *list_unsubscribe)
{
    if (!eu_mail_header_ok(to) || !eu_mail_header_ok(subject) ||
        (list_unsubscribe && !eu_mail_header_ok(list_unsubscribe))) {
        eu_log_warn("mail", "tenant %s: a mail with CR or LF in a header was not queued",
                    t->domain);
        return -1;
    }
    json_t *p =
        json_pack("{s:s, s:s, s:s, s:s}", "to", to, "subject", subject, "text", text, "html", html);
    if (list_unsubscribe)
        json_object_set_new(p, "unsubscribe", json_string(list_unsubscribe));
    char *payload = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    int rc = eu_queue_enqueue(app, t, "mail", payload, 0, NULL, NULL, NULL);
    free(payload);
    return rc;
}

bool
eu_mail_confirmation_needed(const struct eu_app *app)
{
    return app->mail || strcmp(app->cfg->mail_confirm_without_mail, "operator") == 0;
}

struct mail_job {
    struct eu_job *job;
};

static const char *
pstr(json_t *payload, const char *key)
{
    const char *s = json_string_value(json_object_get(payload, key));
    return s ? s : "";
}

static void
on_sent(bool ok, const char *error, void *arg)
{
    struct eu_job *job = arg;
    if (ok) {
        eu_log_info("mail", "tenant %s: mail sent (job %s)", eu_job_tenant(job)->domain,
                    eu_job_id(job));
        eu_job_done(job, NULL);
        return;
    }
    eu_log_warn("mail", "tenant %s: mail not sent, will retry (job %s): %s",
                eu_job_tenant(job)->domain, eu_job_id(job), error);
    eu_job_done(job, error ? error : "the mail server did not take the message");
}

static void
on_contact(struct pg_result *res, enum eu_db_status st, void *arg)
{
    struct eu_job *job = arg;
    if (st != EU_DB_OK) {
        eu_job_done(job, "cannot read the tenant's contact address");
        return;
    }
    struct eu_app *app = eu_job_app(job);
    struct eu_tenant *t = eu_job_tenant(job);
    json_t *p = eu_job_payload(job);
    char *contact = eu_xstrdup(PQgetvalue(res, 0, 0));
    char *from = app->cfg->mail_from ? eu_xstrdup(app->cfg->mail_from)
                                     : eu_xasprintf("notifications@%s", t->domain);
    const char *unsub = json_string_value(json_object_get(p, "unsubscribe"));
    struct eu_mail_msg m = {
        .from_name = t->title,
        .from_addr = from,
        /* A contact address that would not make a valid header is left out
         * rather than failing every mail of the tenant. */
        .reply_to = eu_mail_header_ok(contact) && strchr(contact, '@') ? contact : NULL,
        .to = pstr(p, "to"),
        .subject = pstr(p, "subject"),
        .text = pstr(p, "text"),
        .html = pstr(p, "html"),
        .list_unsubscribe = unsub,
        .domain = t->domain,
    };
    size_t len = 0;
    char *msg = eu_mail_compose(&m, &len);
    if (!msg && m.reply_to) {
        m.reply_to = NULL;
        msg = eu_mail_compose(&m, &len);
    }
    if (!msg) {
        free(contact);
        free(from);
        /* Nothing a retry would change. */
        eu_job_retry_in(job, "the message's headers are invalid", 0, true);
        return;
    }
    if (!app->mail) {
        eu_log_info("mail", "tenant %s: no [mail] smtp_url; this mail to %s was not sent:\n%s",
                    t->domain, m.to, m.text);
        free(msg);
        free(contact);
        free(from);
        eu_job_done(job, NULL);
        return;
    }
    /* The connection goes back to the turn while the server talks. */
    eu_job_detach(job);
    eu_mail_send(app->mail, from, m.to, msg, len, on_sent, job);
    free(msg);
    free(contact);
    free(from);
}

void
eu_mail_job_run(struct eu_job *job)
{
    eu_job_stmt(job, &eu_mailer_sql[MAILER_CONTACT], 0, NULL, on_contact, job);
}
