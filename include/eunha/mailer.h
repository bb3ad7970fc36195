/*
 * A tenant's mail as durable jobs (src/social/mailer.c), over the SMTP
 * client of eunha/mail.h: a flow queues the finished message and answers
 * at once; the job adds the tenant's name and contact address and sends,
 * retrying while the mail server is unreachable.
 */
#ifndef EUNHA_MAILER_H
#define EUNHA_MAILER_H

#include <stdbool.h>

#include "eunha/sql.h"

struct eu_app;
struct eu_tenant;
struct eu_job;

/*
 * Queues a mail to `to` as a job of kind "mail" on t: subject, text and
 * html are the finished message (links absolute); list_unsubscribe may be
 * NULL. The job adds From (the tenant's title, [mail] from), Reply-To (the
 * tenant's contact address) and sends, retrying with the queue's backoff
 * while the mail server is unreachable. Returns -1 (nothing queued, logged)
 * when a header value holds CR or LF. Strings are copied.
 */
int eu_mail_enqueue(struct eu_app *app, struct eu_tenant *t, const char *to, const char *subject,
                    const char *text, const char *html, const char *list_unsubscribe);

/*
 * Whether a sign-up waits for its confirmation link: always with [mail]
 * smtp_url; without it only when [mail] confirm_without_mail is
 * "operator" (the mail, link included, then goes to the log, and the
 * operator may confirm through the admin API instead). With "auto" (the
 * default) an account made without mail is confirmed at once.
 */
bool eu_mail_confirmation_needed(const struct eu_app *app);

/* The "mail" job's handler (src/app/kinds.c). */
void eu_mail_job_run(struct eu_job *job);

/* The mailer's statements (src/app/statements.c). */
extern const struct eu_sql eu_mailer_sql[];

#endif
