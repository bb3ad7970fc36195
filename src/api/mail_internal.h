/*
 * The account mails the API sends (oauth_mail.c), shared by the e-mail
 * flows there and the staff's actions (staff_accounts.c). Each queues a job
 * (src/social/mailer.c): the request never waits on the mail server.
 */
#ifndef EUNHA_API_MAIL_INTERNAL_H
#define EUNHA_API_MAIL_INTERNAL_H

#include <stdbool.h>

struct eu_req;

/*
 * Queues a mail of one action to `to` on req's tenant: heading, body (plain
 * text; escaped for the HTML part), an optional link (link_label and url,
 * or NULL/NULL) and a footer saying why the reader got it. Links are
 * absolute. Strings are copied.
 */
void eu_api_mail(struct eu_req *req, const char *to, const char *subject, const char *heading,
                 const char *body, const char *link_label, const char *url, const char *footer);

/* The staff's decisions, as Mastodon's user mailer tells them: a sign-up
 * approved (kind "approve") or rejected ("reject"), or a strike (kind one
 * of Mastodon's AccountAction types: "none", "sensitive", "disable",
 * "silence", "suspend") with the moderator's text (may be empty). */
void eu_api_mail_staff(struct eu_req *req, const char *to, const char *username, const char *kind,
                       const char *text);

#endif
